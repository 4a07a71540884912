# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of LinearSVC (the Huberized-hinge classifier)."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.svm import LinearSVC as SklearnLinearSVC

from dpsk.linear_model import LogisticRegression
from dpsk.svm import LinearSVC


def _data(n=500, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1) / 3.0)[:, None]
    y = (X @ np.array([1.0, -2.0, 0.5][:d]) + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _huber(z, h=0.5):
    return np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_large_epsilon_minimises_the_huberized_hinge_objective(fit_intercept):
    """Check ε → ∞ against an independent minimiser of C Σ huber(y(w·x + b)) + ½(‖w‖² + (b/κ)²)."""
    X, y = _data()
    C, kappa = 0.7, 1.5
    clf = LinearSVC(
        epsilon=1e9,
        data_norm=3.0,
        C=C,
        intercept_scaling=kappa,
        fit_intercept=fit_intercept,
        classes=[0, 1],
        random_state=0,
    ).fit(X, y)
    sign = np.where(y == 1, 1.0, -1.0)
    Z = np.hstack([X, np.full((len(X), 1), kappa)]) if fit_intercept else X

    def objective(v):
        return C * np.sum(_huber(sign * (Z @ v))) + 0.5 * v @ v

    v = minimize(
        objective, np.zeros(Z.shape[1]), method="Powell", options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 10**5}
    ).x
    np.testing.assert_allclose(clf.coef_[0], v[: X.shape[1]], atol=2e-4)
    expected_intercept = v[-1] * kappa if fit_intercept else 0.0
    assert clf.intercept_[0] == pytest.approx(expected_intercept, abs=2e-4)


def test_large_epsilon_agrees_with_sklearn_on_predictions():
    """Check that the Huberized hinge is close to the hinge: same predictions as sklearn's LinearSVC on most rows."""
    X, y = _data(n=2000, seed=1)
    ours = LinearSVC(epsilon=1e9, data_norm=3.0, C=1.0, classes=[0, 1], random_state=0).fit(X, y)
    ref = SklearnLinearSVC(C=1.0, loss="hinge", dual=True, max_iter=100_000).fit(X, y)
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.98


def test_same_budget_as_logistic_regression_and_no_probabilities():
    """Check the declared cost matches LogisticRegression's (the loss changes the noise, not the budget)."""
    X, y = _data()
    svc = LinearSVC(epsilon=1.0, data_norm=3.0, C=1.0, classes=[0, 1], random_state=0).fit(X, y)
    lr = LogisticRegression(epsilon=1.0, data_norm=3.0, C=1.0, classes=[0, 1], random_state=0).fit(X, y)
    assert svc.privacy_spent_ == lr.privacy_spent_
    assert svc.score(X, y) > 0.8 and lr.score(X, y) > 0.8
    assert not hasattr(svc, "predict_proba")


def test_multiclass_and_float32():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 2)).astype(np.float32)
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    clf = LinearSVC(epsilon=1e6, data_norm=4.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, 2) and clf.coef_.dtype == np.float32
    assert clf.decision_function(X).shape == (600, 3)
    assert np.mean(clf.predict(X) == y) > 0.75
