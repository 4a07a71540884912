# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sparse X (scipy.sparse) in the random trees and forests (issue 16): routing in blocks of rows.

The trees' structure does not depend on the data and a row's leaf depends on that row
alone, so sparse X is routed a block of densified rows at a time
(``dpsk.tree._sparse_routing``). Fitted with the same noise (a fresh ``PCG64(0)``), the
sparse fit releases bitwise the dense fit's leaf counts and sums, and predicts the same.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from dpsk.accounting import BudgetAccountant
from dpsk.ensemble import RandomForestClassifier, RandomForestRegressor
from dpsk.tree import DecisionTreeClassifier, DecisionTreeRegressor, _sparse_routing

CLASSIFIERS = {
    "DecisionTreeClassifier": lambda **kw: DecisionTreeClassifier(epsilon=1.0, classes=[0, 1], max_depth=4, **kw),
    "RandomForestClassifier": lambda **kw: RandomForestClassifier(
        n_estimators=5, epsilon=1.0, classes=[0, 1], max_depth=3, **kw
    ),
}
REGRESSORS = {
    "DecisionTreeRegressor": lambda **kw: DecisionTreeRegressor(epsilon=1.0, max_depth=4, **kw),
    "RandomForestRegressor": lambda **kw: RandomForestRegressor(n_estimators=5, epsilon=1.0, max_depth=3, **kw),
}
ESTIMATORS = {**CLASSIFIERS, **REGRESSORS}
PUBLIC = {"bounds": (0.0, 3.0)}
PUBLIC_Y = {"bounds_y": (-3.0, 3.0)}


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 64 rows, so that the data of these tests spans several blocks."""
    monkeypatch.setattr(_sparse_routing, "BLOCK_ROWS", 64)


def data(n=400, d=7, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 3.0, (n, d))
    X[rng.random((n, d)) < 0.7] = 0.0
    X[0] = 0.0  # an empty row
    X[1, 0] = 5.0  # beyond the bounds: routed as if clipped
    score = X @ rng.normal(size=d) + rng.normal(size=n)
    return X.astype(dtype), score


def params(name, bounds=PUBLIC):
    return {**(PUBLIC_Y if name in REGRESSORS and bounds == PUBLIC else {}), **bounds}


def target(name, score):
    return (score > 0).astype(int) if name in CLASSIFIERS else score


def released(est):
    """Everything a fit releases, as arrays (the leaf values of every tree, the totals, the bounds)."""
    trees = getattr(est, "estimators_", [est])
    totals = est.class_count_ if hasattr(est, "class_count_") else est.totals_
    return [tree.tree_.value for tree in trees] + [totals, *est.bounds_]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def fit_both(name, X, y, fmt, bounds=PUBLIC, **fit_params):
    """(sparse fit, dense fit), each with a fresh PCG64(0)."""
    make = ESTIMATORS[name]
    M = sp.csr_matrix(X).asformat(fmt)
    sparse = make(**params(name, bounds), random_state=np.random.PCG64(0)).fit(M, y, **fit_params)
    dense = make(**params(name, bounds), random_state=np.random.PCG64(0)).fit(X, y, **fit_params)
    return M, sparse, dense


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sparse_fit_and_predictions_are_bitwise_the_dense_ones(name, weighted, dtype, fmt, small_blocks):
    X, score = data(dtype=dtype)
    y = target(name, score)
    w = np.random.default_rng(1).random(X.shape[0]) * 1.5 if weighted else None  # some weights clipped to 1
    M, sparse, dense = fit_both(name, X, y, fmt, sample_weight=w)
    assert all(same(a, b) for a, b in zip(released(sparse), released(dense), strict=True))
    # Predictions on sparse and on dense X, from either fit (the same model).
    assert same(sparse.predict(M), dense.predict(X))
    assert same(sparse.apply(M), dense.apply(X))
    path_sparse, path_dense = sparse.decision_path(M), dense.decision_path(X)
    if isinstance(path_sparse, tuple):  # forests: (indicator, n_nodes_ptr)
        assert same(path_sparse[1], path_dense[1])
        path_sparse, path_dense = path_sparse[0], path_dense[0]
    assert (path_sparse != path_dense).nnz == 0
    if name in CLASSIFIERS:
        assert same(sparse.predict_proba(M), dense.predict_proba(X))


@pytest.mark.filterwarnings("ignore::dpsk.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("bounds", [{}, {"bounds": "data", "bounds_y": "data"}], ids=["private", "data"])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_data_and_private_bounds_on_sparse_are_the_dense_ones(name, bounds, small_blocks):
    """Bounds left out (private, the default): released from the columns' histograms, implicit zeros counted;
    ``"data"``: the columns' minima and maxima, implicit zeros included."""
    X, score = data(n=600)
    if name in CLASSIFIERS:
        bounds = {k: v for k, v in bounds.items() if k == "bounds"}
    M, sparse, dense = fit_both(name, X, target(name, score), "csr", bounds=bounds)
    assert all(same(a, b) for a, b in zip(released(sparse), released(dense), strict=True))
    assert sparse.privacy_spent_ == dense.privacy_spent_
    assert same(sparse.predict(M), dense.predict(X))


@pytest.mark.parametrize("bounds", [PUBLIC, {}], ids=["public", "private"])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sparse_routing_densifies_blocks_of_rows_only(name, bounds, monkeypatch, no_densifying):
    """No dense n × d copy (memory): the routing densifies blocks of at most BLOCK_ROWS rows,
    each row once per call, and nothing else densifies 500 rows or more (``no_densifying``)."""
    blocks = []
    densify = _sparse_routing._densify

    def counting(block):
        blocks.append(block.shape)
        return densify(block)

    monkeypatch.setattr(_sparse_routing, "_densify", counting)
    monkeypatch.setattr(_sparse_routing, "BLOCK_ROWS", 256)  # under the guard's 500 rows
    n, d = 3000, 40
    X, score = data(n=n, d=d)
    M = sp.csr_matrix(X)
    est = ESTIMATORS[name](**params(name, bounds), random_state=0).fit(M, target(name, score))
    calls = [est.predict, est.apply, lambda M: est.decision_path(M)]
    if name in CLASSIFIERS:
        calls.append(est.predict_proba)
    for call in [None, *calls]:
        if call is not None:
            blocks.clear()
            call(M)
        assert max(rows for rows, _ in blocks) <= 256
        assert sum(rows for rows, _ in blocks) == n and {cols for _, cols in blocks} == {d}


def test_block_rows_shrink_with_many_features(monkeypatch):
    """A block holds about BLOCK_BYTES: wide rows come fewer at a time."""
    monkeypatch.setattr(_sparse_routing, "BLOCK_BYTES", 8 * 1000 * 10)
    X = sp.random(95, 1000, density=0.01, format="csr", random_state=0)
    sizes = [block.shape[0] for _, block in _sparse_routing.row_blocks(X)]
    assert sizes == [10] * 9 + [5]
    assert [block.shape for _, block in _sparse_routing.row_blocks(X[:0])] == [(0, 1000)]


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sparse_nan_is_refused_before_any_spend(name):
    """Sparse X with NaN is refused before any spend, as dense X is."""
    acc = BudgetAccountant(epsilon=10.0)
    X, score = data()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ESTIMATORS[name](**params(name), accountant=acc).fit(sp.csr_matrix(X), target(name, score))
    assert acc.spent_budget == []


def test_one_hot_pipeline_random_forest_stays_sparse(monkeypatch, no_densifying):
    """OneHotEncoder's CSR output feeds the forest without a dense copy (blocks of 256 rows here)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    monkeypatch.setattr(_sparse_routing, "BLOCK_ROWS", 256)
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.integers(0, 30, 3000), rng.integers(0, 20, 3000)]).astype(str)
    y = (X[:, 0].astype(int) < 15).astype(int)
    model = make_pipeline(
        OneHotEncoder(handle_unknown="ignore"),
        RandomForestClassifier(n_estimators=20, epsilon=5.0, bounds=(0.0, 1.0), classes=[0, 1], random_state=0),
    ).fit(X, y)
    assert sp.issparse(model[0].transform(X))
    assert model.score(X, y) > 0.9  # half the rows in each class
