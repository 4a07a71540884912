# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""``sample_weight`` clipped to [0, 1]: a row never counts more than once (issue 14, finding 3).

scikit-learn's ``BaggingClassifier(bootstrap=True)`` passes bootstrap counts as
``sample_weight`` to estimators whose ``fit`` takes it. A row drawn k times must cost ε,
not kε: every weight above 1 counts as 1, fractional weights scale the row's
contribution, and the declared privacy cost does not change.
"""

import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.ensemble import BaggingClassifier
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.linear_model import Ridge as SkRidge

from dpsk.accounting import record_releases
from dpsk.cluster import KMeans
from dpsk.decomposition import PCA
from dpsk.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from dpsk.linear_model import LinearRegression, LogisticRegression, Ridge
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB
from dpsk.preprocessing import MinMaxScaler, StandardScaler
from dpsk.svm import LinearSVC
from dpsk.tree import DecisionTreeClassifier, DecisionTreeRegressor
from dpsk.utils._testing.registry import ESTIMATOR_AUDITS, SPARSE_AUDITS, SPARSE_WEIGHTED_AUDITS, WEIGHTED_AUDITS
from dpsk.utils._testing.weighted import CANARY_WEIGHT, weighted_audit, weights_unclipped

N, D = 120, 3
CLASSES = dict(classes=[0, 1])

#: name -> (factory of an estimator at a given ε, kind of data: "real", "positive",
#: "categorical"; target: None, "class" or "real").
ESTIMATORS = {
    "StandardScaler": (lambda e: StandardScaler(epsilon=e, bounds=(-1, 1)), "real", None),
    "MinMaxScaler": (lambda e: MinMaxScaler(epsilon=e, bounds=(-1, 1), bins=8), "real", None),
    "GaussianNB": (lambda e: GaussianNB(epsilon=e, bounds=(-1, 1), **CLASSES), "real", "class"),
    "MultinomialNB": (lambda e: MultinomialNB(epsilon=e, data_norm=3.0, **CLASSES), "positive", "class"),
    "BernoulliNB": (lambda e: BernoulliNB(epsilon=e, binarize=0.5, **CLASSES), "positive", "class"),
    "CategoricalNB": (lambda e: CategoricalNB(epsilon=e, n_categories=3, **CLASSES), "categorical", "class"),
    "LogisticRegression": (lambda e: LogisticRegression(epsilon=e, data_norm=2.0, C=1.0, **CLASSES), "real", "class"),
    "LogisticRegressionGaussian": (
        lambda e: LogisticRegression(epsilon=e, delta=1e-5, data_norm=2.0, C=1.0, **CLASSES),
        "real",
        "class",
    ),
    "LogisticRegressionOutput": (
        lambda e: LogisticRegression(epsilon=e, data_norm=2.0, C=1.0, method="output", **CLASSES),
        "real",
        "class",
    ),
    "LinearSVC": (lambda e: LinearSVC(epsilon=e, bounds=(-1, 1), C=1.0, **CLASSES), "real", "class"),
    "LinearRegression": (lambda e: LinearRegression(epsilon=e, bounds_X=(-1, 1), bounds_y=(-3, 3)), "real", "real"),
    "Ridge": (lambda e: Ridge(epsilon=e, delta=1e-5, bounds_X=(-1, 1), bounds_y=(-3, 3)), "real", "real"),
    "KMeans": (lambda e: KMeans(2, epsilon=e, bounds=(-1, 1), init=[[-0.5] * D, [0.5] * D], max_iter=1), "real", None),
    "KMeansSummary": (lambda e: KMeans(2, epsilon=e, bounds=(-1, 1), max_iter=2), "real", None),
    "PCA": (lambda e: PCA(2, epsilon=e, bounds=(-1, 1)), "real", None),
    "PCANorm": (lambda e: PCA(2, epsilon=e, delta=1e-5, data_norm=1.5, bounds=(-1, 1)), "real", None),
    "DecisionTreeClassifier": (
        lambda e: DecisionTreeClassifier(epsilon=e, bounds=(-1, 1), max_depth=3, **CLASSES),
        "real",
        "class",
    ),
    "RandomForestClassifier": (
        lambda e: RandomForestClassifier(n_estimators=4, epsilon=e, bounds=(-1, 1), max_depth=3, **CLASSES),
        "real",
        "class",
    ),
    "DecisionTreeRegressor": (
        lambda e: DecisionTreeRegressor(epsilon=e, bounds=(-1, 1), bounds_y=(-3, 3), max_depth=3),
        "real",
        "real",
    ),
    "RandomForestRegressor": (
        lambda e: RandomForestRegressor(n_estimators=4, epsilon=e, bounds=(-1, 1), bounds_y=(-3, 3), max_depth=3),
        "real",
        "real",
    ),
    "HistGradientBoostingClassifier": (
        lambda e: HistGradientBoostingClassifier(max_iter=3, epsilon=e, bounds=(-1, 1), **CLASSES),
        "real",
        "class",
    ),
    "HistGradientBoostingRegressor": (
        lambda e: HistGradientBoostingRegressor(max_iter=3, epsilon=e, bounds=(-1, 1), bounds_y=(-3, 3)),
        "real",
        "real",
    ),
}

#: The forests draw each row's tree from the fit's generator: dropping the rows of weight
#: 0 changes that draw, so only fits on the same rows can share their noise.
SAME_ROWS_ONLY = {"RandomForestClassifier", "RandomForestRegressor"}


def _data(kind, target, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (N, D))
    y = None
    if target == "class":
        y = (X @ [1.0, -1.0, 0.5] + rng.normal(0, 0.3, N) > 0).astype(int)
    elif target == "real":
        y = X @ [1.0, -1.0, 0.5] + rng.normal(0, 0.1, N)
    if kind == "positive":
        X = np.abs(X)
    elif kind == "categorical":
        X = np.floor((X + 1.0) / 2.0 * 3.0)
    return X, y


def _bootstrap_counts(seed=1):
    """Bootstrap counts as scikit-learn's Bagging passes them: how often each row was drawn."""
    indices = np.random.default_rng(seed).integers(0, N, N)
    counts = np.bincount(indices, minlength=N)
    assert counts.max() >= 3  # rows drawn several times: the case under test
    return counts


def _fit(name, X, y, *, epsilon=1.0, seed=7, **fit_params):
    est = ESTIMATORS[name][0](epsilon).set_params(random_state=np.random.PCG64(seed))
    return est.fit(X, y, **fit_params)


def _released(est, X):
    """Everything a fit released, as arrays: float fitted attributes and the outputs on X."""
    out = {}
    for key, value in vars(est).items():
        if key.endswith("_") and not key.startswith("_") and key != "privacy_spent_":
            if isinstance(value, list):
                value = (
                    np.concatenate([np.ravel(v) for v in value]) if value and isinstance(value[0], np.ndarray) else None
                )
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                out[key] = value
    for method in ("predict_proba", "transform", "predict"):
        if hasattr(est, method):
            out[method] = np.asarray(getattr(est, method)(X), dtype=np.float64)
    assert out
    return out


def _assert_same(a, b, **tolerance):
    assert a.keys() == b.keys()
    for key in a:
        if tolerance:
            np.testing.assert_allclose(a[key], b[key], err_msg=key, **tolerance)
        else:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


# ------------------------------------------------------------------ duplicates count once


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_bootstrap_counts_count_each_row_once(name):
    """Check that weights k >= 1 (bootstrap counts) give the fit of weight 1, with the same noise."""
    _, kind, target = ESTIMATORS[name]
    X, y = _data(kind, target)
    counts = _bootstrap_counts()
    drawn = (counts > 0).astype(np.float64)
    with_counts = _released(_fit(name, X, y, sample_weight=counts), X)
    once = _released(_fit(name, X, y, sample_weight=drawn), X)
    _assert_same(with_counts, once)
    if name not in SAME_ROWS_ONLY:
        # Rows of weight 0 contribute nothing: the fit on the drawn rows alone, with weight 1.
        unique = _released(
            _fit(name, X[counts > 0], None if y is None else y[counts > 0], sample_weight=np.ones(int(drawn.sum()))), X
        )
        _assert_same(with_counts, unique, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["LogisticRegression", "LinearSVC", "LinearRegression", "Ridge"])
def test_user_level_fit_counts_each_row_once(name):
    """Check that with groups= the sample weights (clipped) multiply the user weights."""
    _, kind, target = ESTIMATORS[name]
    X, y = _data(kind, target)
    groups = np.arange(N) // 3
    counts = _bootstrap_counts()
    a = _fit(name, X, y, groups=groups, sample_weight=counts)
    b = _fit(name, X, y, groups=groups, sample_weight=(counts > 0).astype(np.float64))
    _assert_same(_released(a, X), _released(b, X))
    assert a.threshold_ == b.threshold_


# ------------------------------------------------------------- fractional weights scale


def _weights(seed=2):
    """Weights in {0.25, 0.5, 1}: on the 1/1024 grid of the integer-count estimators."""
    return np.random.default_rng(seed).choice([0.25, 0.5, 1.0], N)


def _class_sums(values, y, w):
    return np.array([(w[y == c, None] * values[y == c]).sum(axis=0) for c in (0, 1)])


def _expected(name, X, y, w):
    """Non-private weighted statistics the ε → ∞ fit must reproduce: {attribute: value}."""
    if name == "StandardScaler":
        mean = np.average(X, axis=0, weights=w)
        return {"mean_": mean, "var_": np.average((X - mean) ** 2, axis=0, weights=w)}
    if name == "MinMaxScaler":
        return {"histogram_": np.array([np.histogram(x, 8, (-1, 1), weights=w)[0] for x in X.T])}
    if name == "GaussianNB":
        counts = np.array([w[y == c].sum() for c in (0, 1)])
        return {"class_count_": counts, "theta_": _class_sums(X, y, w) / counts[:, None]}
    if name == "MultinomialNB":
        return {"class_count_": np.array([w[y == c].sum() for c in (0, 1)]), "feature_count_": _class_sums(X, y, w)}
    if name == "BernoulliNB":
        return {
            "class_count_": np.array([w[y == c].sum() for c in (0, 1)]),
            "feature_count_": _class_sums((X > 0.5).astype(float), y, w),
        }
    if name == "CategoricalNB":
        return {"category_count_": [_class_sums((x[:, None] == np.arange(3)).astype(float), y, w) for x in X.T]}
    if name in ("LinearRegression", "Ridge"):
        ref = (SkLinearRegression() if name == "LinearRegression" else SkRidge(alpha=1.0)).fit(X, y, sample_weight=w)
        return {"coef_": ref.coef_, "intercept_": ref.intercept_}
    if name == "LogisticRegression":
        # dpsk's objective is liblinear's on the same rows (C and intercept_scaling as given).
        ref = SkLogisticRegression(solver="liblinear", C=1.0, intercept_scaling=1.0, tol=1e-10, max_iter=1000)
        ref.fit(X, y, sample_weight=w)
        return {"coef_": ref.coef_, "intercept_": ref.intercept_}
    if name == "KMeans":
        labels = (X.sum(axis=1) > 0).astype(int)  # nearest of the public centres ±0.5·1
        return {
            "cluster_centers_": _class_sums(X, labels, w) / np.array([w[labels == c].sum() for c in (0, 1)])[:, None]
        }
    if name == "PCA":
        mean = np.average(X, axis=0, weights=w)
        covariance = ((X - mean).T * w) @ (X - mean) / w.sum()
        vectors = np.linalg.eigh(covariance)[1][:, ::-1][:, :2].T
        return {"components_": vectors * np.sign(vectors[:, :1])}
    if name == "DecisionTreeRegressor":
        return {"totals_": np.array([w.sum(), (w * np.clip(y, -3, 3)).sum()])}
    if name == "DecisionTreeClassifier":
        return {"class_count_": np.array([w[y == c].sum() for c in (0, 1)])}
    raise KeyError(name)


FRACTIONAL = [
    "StandardScaler",
    "MinMaxScaler",
    "GaussianNB",
    "MultinomialNB",
    "BernoulliNB",
    "CategoricalNB",
    "LinearRegression",
    "Ridge",
    "LogisticRegression",
    "KMeans",
    "PCA",
    "DecisionTreeRegressor",
    "DecisionTreeClassifier",
]


@pytest.mark.parametrize("name", FRACTIONAL)
def test_fractional_weights_scale_the_contribution(name):
    """Check that at a huge ε the fit with weights in (0, 1] is the weighted non-private computation."""
    _, kind, target = ESTIMATORS[name]
    X, y = _data(kind, target)
    w = _weights()
    est = _fit(name, X, y, epsilon=1e9 if name not in ("MinMaxScaler",) else 1e7, sample_weight=w)
    for key, value in _expected(name, X, y, w).items():
        got = getattr(est, key)
        if name == "PCA":
            got = got * np.sign(got[:, :1])
        if isinstance(value, list):
            got, value = np.concatenate([np.ravel(v) for v in got]), np.concatenate([np.ravel(v) for v in value])
        # Least squares keeps a ridge of half the noise's spectral norm, and the logistic
        # solver stops at its certified tolerance: agreement to a few 1e-4, not to rounding.
        np.testing.assert_allclose(np.ravel(got), np.ravel(value), rtol=2e-4, atol=2e-4, err_msg=f"{name}.{key}")


@pytest.mark.parametrize("name", ["LinearSVC", "LogisticRegression"])
def test_weights_scale_the_loss_terms(name):
    """Check that weights w scale the loss: all weights 1/2 at C equals weight 1 at C/2 (ε → ∞)."""
    _, kind, target = ESTIMATORS[name]
    X, y = _data(kind, target)
    halved = _fit(name, X, y, epsilon=1e9, sample_weight=np.full(N, 0.5))
    est = ESTIMATORS[name][0](1e9).set_params(random_state=np.random.PCG64(7), C=0.5)
    reference = est.fit(X, y)
    np.testing.assert_allclose(halved.coef_, reference.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(halved.intercept_, reference.intercept_, rtol=1e-5, atol=1e-6)


def test_forest_weights_scale_the_counts():
    """Check that the forests' weighted totals are the weighted sums (ε → ∞)."""
    X, y = _data("real", "class")
    w = _weights()
    clf = _fit("RandomForestClassifier", X, y, epsilon=1e9, sample_weight=w)
    np.testing.assert_allclose(clf.class_count_, [w[y == c].sum() for c in (0, 1)], atol=2e-3)
    X, y = _data("real", "real")
    reg = _fit("RandomForestRegressor", X, y, epsilon=1e9, sample_weight=w)
    # exact sums: weights on the 1/WEIGHT_GRID grid (as the classifiers'), targets on 2**-SUM_BITS
    np.testing.assert_allclose(reg.totals_, [w.sum(), (w * y).sum()], rtol=1e-4, atol=2e-3)


# ---------------------------------------------------------------------- privacy cost


def _leaves(events):
    return Counter(leaf for event in events for leaf in event.flatten())


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_weights_do_not_change_the_cost(name):
    """Check that a weighted fit declares and makes exactly the releases of the unweighted fit."""
    _, kind, target = ESTIMATORS[name]
    X, y = _data(kind, target)
    with record_releases() as drawn:
        weighted = _fit(name, X, y, sample_weight=_bootstrap_counts())
    plain = _fit(name, X, y)
    assert weighted.privacy_spent_ == plain.privacy_spent_
    assert _leaves(drawn) == _leaves([weighted.privacy_spent_])


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda w: np.where(np.arange(N) == 3, np.nan, w), "NaN"),
        (lambda w: np.where(np.arange(N) == 3, np.inf, w), "infinity"),
        (lambda w: np.where(np.arange(N) == 3, -0.5, w), "Negative"),
        (lambda w: w[:-1], "shape"),
        (lambda w: w[:, None], "1D"),
    ],
)
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_bad_weights_raise_before_any_release(name, bad, match):
    """Check that weights outside [0, ∞) or of the wrong shape raise a clear error and release nothing."""
    _, kind, target = ESTIMATORS[name]
    X, y = _data(kind, target)
    est = ESTIMATORS[name][0](1.0)
    with record_releases() as drawn, pytest.raises(ValueError, match=match):
        est.fit(X, y, sample_weight=bad(np.ones(N)))
    assert drawn == [] and not hasattr(est, "privacy_spent_")


# --------------------------------------------------------------- scikit-learn's Bagging


class _SpyGaussianNB(GaussianNB):
    """GaussianNB that keeps the weights and statistics each fit computed (class-level log)."""

    log = []

    def _class_sums(self, X, y_index, n_classes, box, sample_weight=None):
        sums = super()._class_sums(X, y_index, n_classes, box, sample_weight)
        type(self).log.append((X, y_index, sample_weight, sums))
        return sums


def test_bagging_bootstrap_charges_epsilon_once_per_fit():
    """Check that Bagging(bootstrap=True) passes counts as weights, each fit costs its claimed ε,
    and the statistics of every fit equal those of its distinct rows taken once."""
    X, y = _data("real", "class")
    _SpyGaussianNB.log = []
    n_estimators, epsilon = 6, 0.5
    bagging = BaggingClassifier(
        _SpyGaussianNB(epsilon=epsilon, bounds=(-1, 1), **CLASSES),
        n_estimators=n_estimators,
        bootstrap=True,
        random_state=0,
    )
    with record_releases() as drawn:
        bagging.fit(X, y)
    assert len(_SpyGaussianNB.log) == n_estimators
    total = math.fsum(leaf.epsilon for leaf in _leaves(drawn).elements())
    assert total == pytest.approx(n_estimators * epsilon)
    for est in bagging.estimators_:
        assert math.fsum(leaf.epsilon for leaf in est.privacy_spent_.flatten()) == pytest.approx(epsilon)
    for (X_fit, y_index, weights, sums), rows in zip(_SpyGaussianNB.log, bagging.estimators_samples_):
        assert X_fit.shape[0] == N  # all rows, weighted: no row is repeated
        assert weights is not None and weights.max() <= 1.0
        distinct = np.unique(rows)
        np.testing.assert_array_equal(np.flatnonzero(weights), distinct)
        ones = GaussianNB()._class_sums(X[distinct], y_index[distinct], 2, _box(), None)
        # The exact sums of the weighted fit equal those of the distinct rows taken once.
        # (exact rationals: the weighted fit counts its weights on a finer integer grid)
        for got, once in zip(sums.about(sums.centre), ones.about(ones.centre)):
            np.testing.assert_array_equal(got, once)


def _box():
    from dpsk.mechanisms._joint import Box

    return Box(np.full(D, -1.0), np.full(D, 1.0))


# --------------------------------------------------------------- black-box privacy audits

#: The canary's bootstrap count would exceed these streams' public horizon (max_samples) in
#: the broken variant that repeats it: their weighted audits run, their broken variants do not.
_FIXED_HORIZON = ("OnlineSGDClassifier", "OnlineSGDRegressor")

WEIGHTED_CASES = [("dense", name) for name in sorted(WEIGHTED_AUDITS)] + [
    ("sparse", name) for name in sorted(SPARSE_WEIGHTED_AUDITS)
]
#: One weighted audit per family shows the audits' power on weights that are not clipped.
#: (Not LinearRegression: its worst-case rows all sit at one point, so the fitted slope is the
#: line through that point and the canary whatever the canary's multiplicity; its audit
#: cannot see a canary counted 4 times, and it passes that variant.)
BROKEN_WEIGHTED_CASES = [
    ("dense", "MultinomialNB"),
    ("dense", "StandardScaler"),
    ("dense", "LogisticRegression"),
    ("dense", "GaussianNB"),
    ("dense", "RandomForestClassifier"),
    ("dense", "HistGradientBoostingRegressor"),
    ("sparse", "MultinomialNB"),
    ("sparse", "RandomForestRegressor"),
]


def _weighted_case(kind, name, broken=False):
    """The weighted audit of ``name`` on dense or sparse X; ``broken``: of its variant that does not clip weights."""
    if not broken:
        return (WEIGHTED_AUDITS if kind == "dense" else SPARSE_WEIGHTED_AUDITS)[name]
    unweighted = (ESTIMATOR_AUDITS if kind == "dense" else SPARSE_AUDITS)[name]
    return weighted_audit(unweighted, cls=weights_unclipped(type(unweighted.estimator)))


def test_weighted_neighbours_weigh_the_canary_as_a_bootstrap_count():
    """Check that every weighted audit's neighbours are its unweighted audit's, with weights 1 and the canary's > 1."""
    for kind, name in WEIGHTED_CASES:
        case = _weighted_case(kind, name)
        without, with_canary = case.neighbours(case.estimator)
        assert np.all(without["sample_weight"] == 1.0), name
        assert with_canary["sample_weight"][-1] == CANARY_WEIGHT > 1.0, name
        assert sp.issparse(without["X"]) == (kind == "sparse"), name


@pytest.mark.audit
@pytest.mark.parametrize("kind, name", WEIGHTED_CASES)
@pytest.mark.extended
def test_weighted_privacy_audit(kind, name):
    """Check the weighted path's noise against its declared cost: the canary at a bootstrap count counts once."""
    result = _weighted_case(kind, name).run()
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("kind, name", BROKEN_WEIGHTED_CASES)
@pytest.mark.extended
def test_weighted_audit_rejects_unclipped_weights(kind, name):
    """Check the weighted audits' power: a weight counted ⌈w⌉ times (not clipped to 1) is rejected."""
    result = _weighted_case(kind, name, broken=True).run()
    assert not result.passed, str(result)


@pytest.mark.parametrize("kind, name", [case for case in WEIGHTED_CASES if case[1] not in _FIXED_HORIZON])
def test_unclipped_weights_variant_declares_the_correct_cost_and_differs(kind, name):
    """Check that the broken variant declares the cost of the correct fit, and that on the weighted canary
    neighbour its fit (same noise) differs: only its weights are wrong."""
    broken, correct = _weighted_case(kind, name, broken=True), _weighted_case(kind, name)
    _, with_canary = correct.neighbours(correct.estimator)
    fits = [
        clone(case.estimator).set_params(random_state=np.random.PCG64(0)).fit(**with_canary)
        for case in (broken, correct)
    ]
    assert fits[0].privacy_spent_ == fits[1].privacy_spent_
    assert not np.array_equal(correct.projection(fits[0]), correct.projection(fits[1]))
