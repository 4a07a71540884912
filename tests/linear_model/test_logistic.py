# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of LogisticRegression (and the classifier shell it shares with LinearSVC)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression

from dpsk.accounting import ApproxDPEvent, BudgetAccountant, PureDPEvent, record_releases
from dpsk.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpsk.linear_model import LogisticRegression
from dpsk.svm import LinearSVC


def _data(n=400, d=3, n_classes=2, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1) / 3.0)[:, None]  # norm <= 3
    scores = X @ rng.normal(size=(d, n_classes)) + 0.3 * rng.normal(size=(n, n_classes))
    y = np.argmax(scores, axis=1) if n_classes > 2 else (scores[:, 0] > 0).astype(int)
    return X.astype(dtype), y


@pytest.mark.parametrize("C", [0.05, 1.0])
def test_large_epsilon_reproduces_sklearn_liblinear(C):
    """Check that ε → ∞ gives scikit-learn's coefficients (liblinear: regularised intercept)."""
    X, y = _data()
    for kappa in (1.0, 2.5):
        ours = LogisticRegression(
            epsilon=1e9, data_norm=3.0, C=C, intercept_scaling=kappa, classes=[0, 1], random_state=0
        ).fit(X, y)
        ref = SklearnLogisticRegression(
            solver="liblinear", C=C, intercept_scaling=kappa, tol=1e-12, max_iter=10_000
        ).fit(X, y)
        np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)
        assert ours.C_ == pytest.approx(C)


def test_large_epsilon_reproduces_sklearn_without_intercept():
    X, y = _data(seed=3)
    ours = LogisticRegression(
        epsilon=1e9, data_norm=3.0, C=0.3, fit_intercept=False, classes=[0, 1], random_state=0
    ).fit(X, y)
    ref = SklearnLogisticRegression(solver="newton-cholesky", C=0.3, fit_intercept=False, tol=1e-12).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-7)
    np.testing.assert_array_equal(ours.intercept_, [0.0])


def test_large_epsilon_multiclass_is_one_vs_rest():
    X, y = _data(n_classes=3, seed=1)
    ours = LogisticRegression(epsilon=1e9, data_norm=3.0, C=0.5, classes=[0, 1, 2], random_state=0).fit(X, y)
    for k in range(3):
        ref = SklearnLogisticRegression(solver="liblinear", C=0.5, tol=1e-12, max_iter=10_000).fit(X, y == k)
        np.testing.assert_allclose(ours.coef_[k], ref.coef_[0], atol=1e-5)
    proba = ours.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(ours.predict(X) == y) > 0.8
    np.testing.assert_allclose(np.exp(ours.predict_log_proba(X)), proba)


@pytest.mark.parametrize("method", ["objective", "output"])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_budget_split_over_classes_and_steps(method, delta):
    """Check the declared cost: K one-vs-rest problems of ε/K, each objective (99%) + AMP (1%)."""
    X, y = _data(n_classes=3, seed=2)
    clf = LogisticRegression(epsilon=0.9, delta=delta, data_norm=3.0, method=method, classes=[0, 1, 2], random_state=0)
    with record_releases() as drawn:
        clf.fit(X, y)
    leaves = clf.privacy_spent_.flatten()
    assert sorted(map(repr, drawn)) == sorted(map(repr, leaves))
    if method == "objective":
        assert len(leaves) == 6
        objective, output = leaves[0], leaves[1]
        assert objective.epsilon == pytest.approx(0.3 * 0.99)
        assert output == PureDPEvent(output.epsilon) and output.epsilon == pytest.approx(0.003)
        if delta:
            assert isinstance(objective, ApproxDPEvent) and objective.delta == pytest.approx(delta / 3)
    else:
        assert len(leaves) == 3
    if delta == 0:
        assert sum(Fraction(e.epsilon) for e in leaves) <= Fraction(0.9)


def test_binary_is_one_problem_with_the_whole_budget():
    X, y = _data()
    clf = LogisticRegression(epsilon=2.0, data_norm=3.0, classes=[0, 1], random_state=0).fit(X, y)
    objective, output = clf.privacy_spent_.flatten()
    assert objective.epsilon + output.epsilon <= 2.0
    assert objective.epsilon == pytest.approx(1.98)
    assert clf.coef_.shape == (1, 3) and clf.intercept_.shape == (1,)
    assert clf.decision_function(X).shape == (400,)


def test_accuracy_is_reasonable_at_moderate_epsilon():
    """Check that the private model is useful: separable-ish data, ε = 1, default C."""
    X, y = _data(n=20_000, d=5, seed=4)
    clf = LogisticRegression(epsilon=1.0, data_norm=3.0, classes=[0, 1], random_state=0).fit(X, y)
    ref = SklearnLogisticRegression().fit(X, y)
    assert clf.score(X, y) > ref.score(X, y) - 0.03


@pytest.mark.parametrize("Estimator", [LogisticRegression, LinearSVC])
def test_float32_is_preserved(Estimator):
    X, y = _data(dtype=np.float32)
    clf = Estimator(epsilon=1.0, data_norm=3.0, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.coef_.dtype == np.float32 and clf.intercept_.dtype == np.float32
    X64 = X.astype(np.float64)
    clf64 = Estimator(epsilon=1.0, data_norm=3.0, classes=[0, 1], random_state=0).fit(X64, y)
    np.testing.assert_allclose(clf.coef_, clf64.coef_, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("Estimator", [LogisticRegression, LinearSVC])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_is_rejected_before_any_release(Estimator, bad):
    X, y = _data()
    X[5, 1] = bad
    accountant = BudgetAccountant(epsilon=10.0)
    with record_releases() as drawn, pytest.raises(ValueError, match="NaN|infinity"):
        Estimator(data_norm=3.0, classes=[0, 1], accountant=accountant).fit(X, y)
    assert not drawn
    assert accountant.spent_budget == []


def test_single_class_is_rejected():
    X, y = _data()
    with warnings.catch_warnings(), pytest.raises(ValueError, match="one class"):
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        LogisticRegression(data_norm=3.0).fit(X, np.zeros_like(y))


def test_public_classes_allow_a_class_absent_from_y():
    """Check that with public classes, y holding one of them is a valid (if useless) fit."""
    X, y = _data()
    clf = LogisticRegression(epsilon=1.0, data_norm=3.0, classes=[0, 1], random_state=0).fit(X, np.zeros_like(y))
    assert clf.classes_.tolist() == [0, 1]
    with pytest.raises(ValueError, match="not in `classes`"):
        LogisticRegression(data_norm=3.0, classes=[0, 1]).fit(X, y + 1)


def test_data_derived_norm_warns_and_is_stored_apart():
    X, y = _data()
    clf = LogisticRegression(epsilon=1.0, data_norm="data", classes=[0, 1], random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="data_norm"):
        clf.fit(X, y)
    assert clf.data_norm == "data"
    assert clf.data_norm_ == pytest.approx(np.linalg.norm(X, axis=1).max())


def test_rows_beyond_data_norm_are_clipped_not_trusted():
    """Check that a huge row has the influence of a row of norm data_norm (ε large, same seed)."""
    X, y = _data()
    big = X.copy()
    big[0] *= 1e6 / np.linalg.norm(big[0])
    boundary = X.copy()
    boundary[0] *= 3.0 / np.linalg.norm(boundary[0])
    params = dict(epsilon=1e9, data_norm=3.0, C=10.0, classes=[0, 1])
    # The same stream on both datasets: fresh PCG64(0) objects (an int seed derives one
    # stream per dataset).
    a = LogisticRegression(**params, random_state=np.random.PCG64(0)).fit(big, y)
    b = LogisticRegression(**params, random_state=np.random.PCG64(0)).fit(boundary, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    assert np.linalg.norm(big[0]) == pytest.approx(1e6)  # the input itself is not clipped


@pytest.mark.parametrize("Estimator", [LogisticRegression, LinearSVC])
def test_public_bounds_clip_and_set_the_norm_bound(Estimator):
    """Check ``bounds``: values outside are clipped (the input is not), data_norm_ is the corner norm, no warning."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(300, 4))
    y = (X @ [1.0, -1.0, 0.5, 0.0] > 0).astype(int)
    wild = X.copy()
    wild[:5] *= 40.0
    params = dict(epsilon=1e9, bounds=(-0.5, 0.5), C=10.0, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        # The same stream on both datasets: fresh PCG64(0) objects (an int seed derives
        # one stream per dataset).
        a = Estimator(**{**params, "random_state": np.random.PCG64(0)}).fit(wild, y)
    b = Estimator(**{**params, "random_state": np.random.PCG64(0)}).fit(np.clip(wild, -0.5, 0.5), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    assert np.abs(wild).max() > 0.5  # the input itself is not clipped
    assert a.data_norm_ == pytest.approx(1.0)  # the corner (±0.5, ..., ±0.5) of 4 features
    assert Estimator(**{**params, "data_norm": 0.6}).fit(X, y).data_norm_ == 0.6
    assert Estimator(**{**params, "data_norm": 5.0}).fit(X, y).data_norm_ == pytest.approx(1.0)
    X32 = wild.astype(np.float32)
    copy = X32.copy()
    assert Estimator(**params).fit(X32, y).coef_.dtype == np.float32
    np.testing.assert_array_equal(X32, copy)
    with pytest.raises(ValueError, match="all zero"):
        Estimator(**{**params, "bounds": (0.0, 0.0)}).fit(X, y)


def test_public_bounds_lower_the_noise_of_pure_objective_perturbation():
    """Check that box-norm noise (centred bounds, 30 features) spreads the coefficients less than ball noise."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, size=(200, 30))
    y = (X[:, 0] > 0).astype(int)
    params = dict(epsilon=1.0, C=1.0, classes=[0, 1])
    corner = math.sqrt(30) / 2
    spread = {}
    for name, extra in (("ball", dict(data_norm=corner)), ("box", dict(bounds=(-0.5, 0.5)))):
        coefs = [LogisticRegression(**params, **extra, random_state=s).fit(X, y).coef_.ravel() for s in range(30)]
        spread[name] = np.mean(np.var(coefs, axis=0))
    assert spread["box"] < 0.6 * spread["ball"]


def test_budget_is_checked_before_reading_and_spent_once():
    X, y = _data()
    accountant = BudgetAccountant(epsilon=1.5)
    LogisticRegression(epsilon=1.0, data_norm=3.0, classes=[0, 1], accountant=accountant, random_state=0).fit(X, y)
    with pytest.raises(BudgetExceededError):
        LogisticRegression(epsilon=1.0, data_norm=3.0, classes=[0, 1], accountant=accountant).fit(X, y)
    assert accountant.total().epsilon == pytest.approx(1.0)


def test_too_small_tol_for_the_data_size_is_refused_before_spending():
    X, y = _data(n=100)
    accountant = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="tol"):
        LogisticRegression(data_norm=3.0, classes=[0, 1], tol=1e-14, accountant=accountant).fit(X, y)
    assert accountant.spent_budget == []


def test_default_regularisation_rule():
    """Check C_ follows the documented rule: Λ = 0.05·p/ε per binary problem (ε-DP)."""
    X, y = _data(n_classes=3)
    clf = LogisticRegression(epsilon=1.5, data_norm=3.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    scale_sq = 3.0**2 + 1.0
    lam = 1.0 / (clf.C_ * scale_sq)
    assert lam == pytest.approx(0.05 * 4 / 0.5, rel=1e-6)
    clf = LogisticRegression(epsilon=1.5, data_norm=3.0, method="output", classes=[0, 1, 2], random_state=0).fit(X, y)
    assert 1.0 / (clf.C_ * scale_sq) == pytest.approx(math.sqrt(4 / 0.5), rel=1e-6)


def test_noise_shrinks_with_epsilon_for_each_method():
    X, y = _data()
    for method in ("objective", "output"):
        for delta in (0.0, 1e-5):
            spread = []
            for eps in (0.5, 50.0):
                coefs = [
                    LogisticRegression(
                        epsilon=eps, delta=delta, data_norm=3.0, C=1.0, method=method, classes=[0, 1], random_state=s
                    )
                    .fit(X, y)
                    .coef_
                    for s in range(8)
                ]
                spread.append(np.var(coefs, axis=0).sum())
            assert spread[1] < 0.01 * spread[0]


def test_uncertified_solution_is_never_returned():
    """Check that a fit whose solver cannot certify tol raises instead of releasing an uncovered model."""
    X, y = _data()
    clf = LogisticRegression(epsilon=1.0, data_norm=3.0, classes=[0, 1], max_iter=1, random_state=0)
    with record_releases() as drawn, pytest.raises(RuntimeError, match="did not certify"):
        clf.fit(X, y)
    # The objective noise was drawn (and the budget spent), but no output noise, no model.
    assert len(drawn) == 1
    assert not hasattr(clf, "coef_")
