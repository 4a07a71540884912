# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sparse X (scipy.sparse) in the estimators and in dpsk.stats (issue 16).

A sparse row is a row: fitted on the same data with the same noise (a fresh
``np.random.PCG64(0)`` per fit), the sparse fit equals the dense fit **bitwise** wherever
the released statistics are exact sums (the exact moments, the exact Gram, integer
counts), and up to the float rounding of the solver or of a float sum elsewhere. Text
and one-hot pipelines run without densifying X. Estimators without a sparse path say so.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import dpsk.stats
from dpsk.cluster import KMeans
from dpsk.decomposition import PCA
from dpsk.linear_model import LinearRegression, LogisticRegression, Ridge
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB
from dpsk.preprocessing import MinMaxScaler, StandardScaler
from dpsk.svm import LinearSVC

FORMATS = ["csr", "csc", "coo"]


def data(n=400, d=7, seed=0, scale=3.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, scale, (n, d))
    X[rng.random((n, d)) < 0.7] = 0.0
    X[0] = 0.0  # an empty row
    y = (X @ rng.normal(size=d) + rng.normal(size=n) > 0).astype(int)
    return X.astype(dtype), y


def fit_both(make, X, y=None, fmt="csr", **fit_params):
    """(sparse fit, dense fit) with the same noise."""
    M = sp.csr_matrix(X).asformat(fmt)
    args = () if y is None else (y,)
    sparse = make().set_params(random_state=np.random.PCG64(0)).fit(M, *args, **fit_params)
    dense = make().set_params(random_state=np.random.PCG64(0)).fit(X, *args, **fit_params)
    return sparse, dense


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


BITWISE = {
    "StandardScaler": (
        lambda: StandardScaler(epsilon=1.0, bounds=(0.0, 3.0), with_mean=False),
        False,
        ("mean_", "var_", "scale_", "n_samples_seen_"),
    ),
    "KMeans": (
        lambda: KMeans(3, epsilon=2.0, bounds=(-1.0, 3.0), max_iter=2),
        False,
        ("cluster_centers_", "cluster_sizes_"),
    ),
    "LinearRegression": (
        lambda: LinearRegression(epsilon=1.0, bounds_X=(0.0, 3.0), bounds_y=(0.0, 1.0)),
        True,
        ("coef_", "intercept_"),
    ),
    "LinearRegression-row_norm": (
        lambda: LinearRegression(epsilon=1.0, bounds_X=(-1.0, 3.0), bounds_y=(0.0, 1.0), row_norm=2.5),
        True,
        ("coef_", "intercept_"),
    ),
    "Ridge": (lambda: Ridge(epsilon=1.0, bounds_X=(0.0, 3.0), bounds_y=(0.0, 1.0)), True, ("coef_", "intercept_")),
    "BernoulliNB": (
        lambda: BernoulliNB(epsilon=1.0, binarize=1.0, classes=[0, 1]),
        True,
        ("class_count_", "feature_count_", "feature_log_prob_"),
    ),
    # Integer counts within data_norm: no clipping, sums of integers are exact in any order.
    "MultinomialNB-counts": (
        lambda: MultinomialNB(epsilon=1.0, data_norm=100.0, classes=[0, 1]),
        True,
        ("class_count_", "feature_count_", "feature_log_prob_"),
    ),
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(BITWISE))
def test_sparse_fit_is_bitwise_the_dense_fit(name, weighted, fmt):
    make, supervised, attributes = BITWISE[name]
    X, y = data()
    if name == "MultinomialNB-counts":
        X = np.round(X * 3)
    w = np.random.default_rng(1).random(X.shape[0]) if weighted else None
    sparse, dense = fit_both(make, X, y if supervised else None, fmt, sample_weight=w)
    for attribute in attributes:
        assert same(getattr(sparse, attribute), getattr(dense, attribute)), attribute


@pytest.mark.parametrize("function", [dpsk.stats.sum, dpsk.stats.mean, dpsk.stats.var, dpsk.stats.std])
@pytest.mark.parametrize("bounds", [(0.0, 3.0), (0.5, 2.0)])  # the second clips the implicit zeros up
def test_stats_on_sparse_are_bitwise_the_dense_stats(function, bounds):
    X, _ = data()
    kwargs = dict(epsilon=1.0, bounds=bounds, axis=0)
    a = function(sp.csc_matrix(X), random_state=np.random.PCG64(0), **kwargs)
    b = function(X, random_state=np.random.PCG64(0), **kwargs)
    assert same(a, b)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "function, args",
    [
        (dpsk.stats.quantile, ([0.1, 0.5, 0.9],)),
        (dpsk.stats.percentile, (75.0,)),
        (dpsk.stats.median, ()),
    ],
    ids=["quantile", "percentile", "median"],
)
@pytest.mark.parametrize("bounds", [(0.0, 3.0), (0.5, 2.0), (-1.0, 4.0)])  # (0.5, 2.0) clips the zeros up
def test_quantiles_on_sparse_are_bitwise_the_dense_quantiles(function, args, bounds, fmt):
    """Sparse X along axis 0: each column densified alone, so the same bins and, with the
    same noise, the same released values (the cheapest proof that the release, hence its
    privacy, is the dense one); with return_error too, and with a float32 input."""
    X, _ = data()
    for dtype in (np.float64, np.float32):
        kwargs = dict(epsilon=1.0, bounds=bounds, axis=0, return_error=True)
        M = sp.csr_matrix(X.astype(dtype)).asformat(fmt)
        a = function(M, *args, random_state=np.random.PCG64(0), **kwargs)
        b = function(X.astype(dtype), *args, random_state=np.random.PCG64(0), **kwargs)
        assert same(a.value, b.value) and same(a.rank_error(0.05), b.rank_error(0.05))


@pytest.mark.parametrize("on_invalid", ["drop", "clip"])
@pytest.mark.parametrize(
    "function, args",
    [(dpsk.stats.mean, ()), (dpsk.stats.var, ()), (dpsk.stats.quantile, ([0.2, 0.7],)), (dpsk.stats.median, ())],
    ids=["mean", "var", "quantile", "median"],
)
def test_stats_screening_on_sparse_is_the_dense_screening(function, args, on_invalid):
    """on_invalid="drop"/"clip" on sparse X: rows judged by their stored values as dense rows
    by all of theirs (NaN, ±inf; an infinity clipped to the public bounds), so with the same
    noise the releases are bitwise the dense ones."""
    X, _ = data()
    X[[3, 10]] = np.nan  # whole rows, and single entries
    X[17, 2], X[25, 0], X[40, 5] = np.nan, np.inf, -np.inf
    M = sp.csr_matrix(X)
    assert np.isnan(M.data).any() and np.isinf(M.data).any()
    kwargs = dict(epsilon=1.0, bounds=(0.5, 2.0), axis=0, on_invalid=on_invalid)
    a = function(M, *args, random_state=np.random.PCG64(0), **kwargs)
    b = function(X, *args, random_state=np.random.PCG64(0), **kwargs)
    assert same(a, b)
    assert np.isnan(M.data).any()  # the input is not modified


@pytest.mark.parametrize("on_invalid", ["drop", "clip"])
@pytest.mark.parametrize("name", ["MultinomialNB", "BernoulliNB"])
def test_naive_bayes_screening_on_sparse_is_the_dense_screening(name, on_invalid):
    """on_invalid="drop"/"clip" on sparse X: NaN, ±inf and negative entries screened row by
    row as in the dense rows, so with the same noise the fits are bitwise the same."""
    X, y = data()
    X = np.round(X * 3)
    X[3, :] = np.nan
    X[17, 2], X[25, 0], X[40, 5], X[44, 1] = np.nan, np.inf, -np.inf, -2.0
    make = {
        "MultinomialNB": lambda: MultinomialNB(epsilon=1.0, data_norm=30.0, classes=[0, 1], on_invalid=on_invalid),
        "BernoulliNB": lambda: BernoulliNB(epsilon=1.0, binarize=1.0, classes=[0, 1], on_invalid=on_invalid),
    }[name]
    sparse, dense = fit_both(make, X, y)
    for attribute in ("class_count_", "feature_count_", "feature_log_prob_"):
        assert same(getattr(sparse, attribute), getattr(dense, attribute)), attribute


def test_quantiles_on_sparse_refuse_other_axes_before_spending():
    from dpsk.accounting import BudgetAccountant

    X, _ = data()
    accountant = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="sparse"):
        dpsk.stats.quantile(sp.csr_matrix(X), 0.5, epsilon=1.0, bounds=(0.0, 3.0), axis=None, accountant=accountant)
    assert not accountant.spent_budget  # refused before anything was spent


@pytest.mark.parametrize("function", ["median", "mean"])
def test_private_bounds_on_sparse_are_the_dense_private_bounds(function):
    # The private bounds' log-histograms count a column's implicit zeros as its dense zeros.
    X, _ = data()
    call = getattr(dpsk.stats, function)
    kwargs = dict(epsilon=1.0, bounds="private", axis=0)
    sparse = call(sp.csr_matrix(X), random_state=np.random.PCG64(0), **kwargs)
    dense = call(X, random_state=np.random.PCG64(0), **kwargs)
    assert same(sparse, dense)


def test_stats_count_and_axis_on_sparse():
    X, _ = data()
    assert same(
        dpsk.stats.count(sp.csr_matrix(X), epsilon=1.0, axis=0, random_state=np.random.PCG64(0)),
        dpsk.stats.count(X, epsilon=1.0, axis=0, random_state=np.random.PCG64(0)),
    )
    with pytest.raises(ValueError, match="axis 0"):
        dpsk.stats.sum(sp.csr_matrix(X), epsilon=1.0, bounds=(0.0, 3.0), axis=1)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_multinomial_nb_with_clipping_is_bitwise_the_dense_fit(dtype, weighted):
    """Rows clipped to data_norm: exact integer sums on the public grid, each row's units a
    function of its own values, so sparse and dense tables are the same integers."""
    X, y = data(dtype=dtype)
    w = np.random.default_rng(1).random(X.shape[0]) if weighted else None
    sparse, dense = fit_both(lambda: MultinomialNB(epsilon=1.0, data_norm=2.0, classes=[0, 1]), X, y, sample_weight=w)
    for attribute in ("class_count_", "feature_count_", "feature_log_prob_"):
        assert same(getattr(sparse, attribute), getattr(dense, attribute)), attribute
    assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X), rtol=1e-9)


@pytest.mark.parametrize("cls", [LogisticRegression, LinearSVC])
@pytest.mark.parametrize(
    "params",
    [dict(), dict(bounds=(-1.0, 3.0)), dict(delta=1e-6), dict(method="output"), dict(classes=[0, 1, 2])],
    ids=["objective", "box", "gaussian", "output", "multiclass"],
)
def test_linear_classifiers_sparse_match_dense(cls, params):
    """Same clipped rows and noise; only the solver's float rounding differs (within its tolerance)."""
    X, y = data()
    if params.get("classes") == [0, 1, 2]:
        y = y + (X[:, 0] > 1.5)
    params = {"classes": [0, 1], "data_norm": 3.0, **params}
    w = np.random.default_rng(2).random(X.shape[0])
    sparse, dense = fit_both(lambda: cls(epsilon=1.0, **params), X, y, sample_weight=w)
    assert_allclose(sparse.coef_, dense.coef_, atol=1e-7)
    assert_allclose(sparse.intercept_, dense.intercept_, atol=1e-7)
    assert_allclose(sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X), atol=1e-6)


def test_logistic_regression_many_sparse_features_uses_no_dense_hessian(monkeypatch):
    """Check the conjugate-gradient Newton steps: with 3000 features no Hessian is formed,
    and the fit equals the dense fit (which solves with the Hessian) within the tolerance."""
    from dpsk.linear_model import _solver

    rng = np.random.default_rng(3)
    X = sp.random(600, 3000, density=0.003, random_state=3, format="csr") * 2
    y = (X @ rng.normal(size=3000) > 0).astype(int)
    make = lambda: LogisticRegression(epsilon=1.0, data_norm=2.0, classes=[0, 1])  # noqa: E731
    dense = make().set_params(random_state=np.random.PCG64(0)).fit(X.toarray(), y)

    def no_hessian(self, second):
        raise AssertionError("dense Hessian formed")

    monkeypatch.setattr(_solver._Objective, "hessian", no_hessian)
    sparse = make().set_params(random_state=np.random.PCG64(0)).fit(X, y)
    assert_allclose(sparse.coef_, dense.coef_, atol=1e-6)


def test_logistic_regression_sparse_keeps_no_copy_of_the_values(monkeypatch):
    """Check that the sparse fit solves on X's own stored values (the clip of each row is
    recorded and replayed inside the products), not on a clipped copy of nnz floats."""
    from dpsk.linear_model import _classifier

    X, y = data()
    M = sp.csr_matrix(X)
    seen = []
    original = _classifier.fit_private_linear
    monkeypatch.setattr(
        _classifier, "fit_private_linear", lambda rows, *a, **k: seen.append(rows) or original(rows, *a, **k)
    )
    LogisticRegression(epsilon=1.0, data_norm=0.5, classes=[0, 1], random_state=0).fit(M, y)
    assert seen and all(np.shares_memory(rows.X.data, M.data) for rows in seen)


def test_float32_sparse_keeps_float32():
    X, y = data(dtype=np.float32)
    M = sp.csr_matrix(X)
    assert LogisticRegression(epsilon=1.0, data_norm=3.0, classes=[0, 1]).fit(M, y).coef_.dtype == np.float32
    scaler = StandardScaler(epsilon=1.0, bounds=(0.0, 3.0), with_mean=False).fit(M)
    assert scaler.var_.dtype == np.float32 and scaler.transform(M).dtype == np.float32
    assert sp.issparse(scaler.transform(M))


def test_standard_scaler_sparse_transform_keeps_sparsity():
    X, _ = data()
    scaler = StandardScaler(epsilon=1.0, bounds=(0.0, 3.0), with_mean=False, random_state=0).fit(X)
    out = scaler.transform(sp.csr_matrix(X))
    assert sp.issparse(out) and out.nnz == sp.csr_matrix(X).nnz
    assert_allclose(out.toarray(), scaler.transform(X))
    assert_allclose(scaler.inverse_transform(out).toarray(), X)


@pytest.mark.parametrize(
    "estimator, error, match",
    [
        (StandardScaler(epsilon=1.0, bounds=(0.0, 3.0)), ValueError, "Cannot center sparse matrices"),
        (MinMaxScaler(epsilon=1.0, bounds=(0.0, 3.0)), TypeError, "does not support sparse input.*StandardScaler"),
        (PCA(2, epsilon=1.0, data_norm=3.0), TypeError, "does not support sparse input.*TruncatedSVD"),
        (BernoulliNB(epsilon=1.0, binarize=-1.0, classes=[0, 1]), ValueError, "threshold < 0"),
        (CategoricalNB(epsilon=1.0, n_categories=4, classes=[0, 1]), TypeError, "[Ss]parse data"),
        (GaussianNB(epsilon=1.0, bounds=(0.0, 3.0), classes=[0, 1]), TypeError, "[Ss]parse data"),
        (LogisticRegression(epsilon=1.0, bounds=(1.0, 3.0), classes=[0, 1]), ValueError, "implicit zeros"),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, (type, str)) else "",
)
def test_no_sparse_path_says_so(estimator, error, match):
    X, y = data()
    with pytest.raises(error, match=match):
        estimator.fit(sp.csr_matrix(X), y)


def test_refusals_spend_nothing():
    from dpsk.accounting import BudgetAccountant

    acc = BudgetAccountant(epsilon=10.0)
    X, _ = data()
    for est in (MinMaxScaler(epsilon=1.0, bounds=(0.0, 3.0)), PCA(2, epsilon=1.0, data_norm=3.0)):
        with pytest.raises(TypeError):
            est.set_params(accountant=acc).fit(sp.csr_matrix(X))
    assert len(acc) == 0 and acc.spent_budget == []


# --------------------------------------------------------------------------------------
# Pipelines: sparse all the way (no n_samples x n_features dense copy)
# --------------------------------------------------------------------------------------


def test_count_vectorizer_multinomial_nb_stays_sparse(no_densifying):
    rng = np.random.default_rng(4)
    words = np.array([f"w{i}" for i in range(300)])
    topics = [rng.choice(300, 40, replace=False) for _ in range(2)]
    y = rng.integers(0, 2, 2000)
    docs = [" ".join(words[rng.choice(topics[label], 12)]) for label in y]
    model = make_pipeline(CountVectorizer(), MultinomialNB(epsilon=1.0, data_norm=12.0, classes=[0, 1], random_state=0))
    model.fit(docs, y)
    assert model.score(docs, y) > 0.9


def test_one_hot_column_transformer_logistic_regression_stays_sparse(no_densifying):
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.integers(0, 30, 3000), rng.integers(0, 20, 3000)]).astype(str)
    y = (X[:, 0].astype(int) < 15).astype(int)
    encode = ColumnTransformer([("onehot", OneHotEncoder(handle_unknown="ignore"), [0, 1])])
    model = make_pipeline(
        encode, LogisticRegression(epsilon=5.0, data_norm=np.sqrt(2.0), classes=[0, 1], random_state=0)
    )
    model.fit(X, y)
    assert sp.issparse(encode.transform(X))
    assert model.score(X, y) > 0.8
