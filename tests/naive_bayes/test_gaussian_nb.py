# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP Gaussian naive Bayes: the ε → ∞ limit, noise as documented, post-processing, inputs."""

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_iris
from sklearn.naive_bayes import GaussianNB as SkGaussianNB

from dpsk.accounting import BudgetAccountant, CalibratedEvent, GaussianEvent, PureDPEvent, ZCDPEvent, record_releases
from dpsk.audit import audit, estimator_sampler
from dpsk.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpsk.mechanisms._joint import Box
from dpsk.naive_bayes import GaussianNB
from dpsk.naive_bayes._gaussian import BUDGET_SHARES
from dpsk.utils._testing import assert_fit_with_power, ks_pvalue
from dpsk.utils._testing.family import AUDITS, GaussianNBEpsilonX2


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y, (np.floor(X.min(axis=0)) - 1, np.ceil(X.max(axis=0)) + 1)


def test_huge_epsilon_matches_scikit_learn(iris):
    X, y, bounds = iris
    ours = GaussianNB(epsilon=1e9, bounds=bounds, classes=[0, 1, 2], random_state=0).fit(X, y)
    reference = SkGaussianNB().fit(X, y)
    np.testing.assert_allclose(ours.theta_, reference.theta_, rtol=1e-6)
    np.testing.assert_allclose(ours.var_, reference.var_, rtol=1e-4)
    np.testing.assert_allclose(ours.class_prior_, reference.class_prior_, rtol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), reference.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), reference.predict_proba(X), atol=1e-4)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_accurate_on_iris(iris, delta):
    """150 rows at ε = 5 (non-private: 0.96; breast_cancer at ε = 1 is in the benchmark)."""
    X, y, bounds = iris
    scores = [
        GaussianNB(epsilon=5.0, delta=delta, bounds=bounds, classes=[0, 1, 2], random_state=s).fit(X, y).score(X, y)
        for s in range(5)
    ]
    assert np.mean(scores) > 0.85, scores


@pytest.mark.slow
def test_sums_get_laplace_noise_of_the_stated_scale():
    """Check Σz's noise: Laplace of scale d/(0.8 ε) (KS test at α = 1e-6 with a power check).

    With all rows at the box's midpoint (0), Σz = 0 and a released class mean is pure
    noise divided by the noisy count, which ``class_count_`` gives back.
    """
    epsilon, d = 0.5, 3
    X = np.zeros((2_000, d))
    y = np.arange(X.shape[0]) % 2
    noise = []
    for seed in range(8_000):  # enough for the KS test to see a scale 1.2x off
        clf = GaussianNB(epsilon=epsilon, bounds=(-1.0, 1.0), classes=[0, 1], random_state=seed).fit(X, y)
        noise.append(clf.theta_[0, 0] * max(clf.class_count_[0], 1.0))
    scale = d / (BUDGET_SHARES[1] * epsilon)
    assert_fit_with_power(lambda b: ks_pvalue(noise, stats.laplace(scale=b).cdf), scale)


def test_released_statistics_are_clipped_to_the_bounds():
    X = np.array([[100.0], [-100.0], [0.5], [0.5]])
    clf = GaussianNB(epsilon=1e9, bounds=(0.0, 1.0), classes=[0, 1], random_state=0).fit(X, [0, 0, 1, 1])
    np.testing.assert_allclose(clf.theta_[:, 0], [0.5, 0.5], atol=1e-6)  # (1 + 0)/2 after clipping
    assert np.all(clf.var_ <= 0.25 + 1e-6)


def test_constant_features_are_exact_and_free():
    """Check that a feature with lower == upper is released exactly and not counted in d′."""
    X = np.column_stack([np.linspace(-1, 1, 20), np.full(20, 3.0)])
    y = np.arange(20) % 2
    clf = GaussianNB(epsilon=1.0, bounds=([-1.0, 3.0], [1.0, 3.0]), classes=[0, 1], random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.theta_[:, 1], 3.0)
    rng = np.random.default_rng(0)
    with_constant = clf._release(Box(np.array([-1.0, 3.0]), np.array([1.0, 3.0])), rng)
    one_feature = clf._release(Box(np.array([-1.0]), np.array([1.0])), rng)
    np.testing.assert_array_equal(with_constant.weights, one_feature.weights)


def test_priors_are_used_as_given(iris):
    X, y, bounds = iris
    clf = GaussianNB(epsilon=1.0, bounds=bounds, priors=[0.2, 0.3, 0.5], classes=[0, 1, 2], random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.class_prior_, [0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="priors must have shape"):
        GaussianNB(bounds=bounds, priors=[0.5, 0.5], classes=[0, 1, 2]).fit(X, y)
    with pytest.raises(ValueError, match="sum of priors"):
        GaussianNB(bounds=bounds, priors=[0.5, 0.5, 0.5], classes=[0, 1, 2]).fit(X, y)


@pytest.mark.parametrize("delta, event_type", [(0.0, PureDPEvent), (1e-5, CalibratedEvent)])
def test_one_release_within_the_budget(iris, delta, event_type):
    X, y, bounds = iris
    accountant = BudgetAccountant(epsilon=1.0, delta=delta)
    with record_releases() as drawn:
        clf = GaussianNB(epsilon=1.0, delta=delta, bounds=bounds, classes=[0, 1, 2], accountant=accountant).fit(X, y)
    assert drawn == [clf.privacy_spent_] and isinstance(clf.privacy_spent_, event_type)
    if delta:  # zCDP noise, calibrated for the δ asked for
        assert isinstance(clf.privacy_spent_.event, ZCDPEvent) and clf.privacy_spent_.delta == delta
    assert accountant.total().epsilon <= 1.0 + 1e-12
    with pytest.raises(BudgetExceededError):
        GaussianNB(epsilon=0.01, bounds=bounds, classes=[0, 1, 2], accountant=accountant).fit(X, y)


def test_float32_is_kept(iris):
    X, y, bounds = iris
    clf = GaussianNB(epsilon=1.0, bounds=bounds, classes=[0, 1, 2], random_state=0).fit(X.astype(np.float32), y)
    assert clf.theta_.dtype == np.float32 and clf.var_.dtype == np.float32
    assert clf.predict_proba(X.astype(np.float32)).shape == (150, 3)


def test_variances_are_never_below_their_noise():
    """Check the post-processing floor: a tiny true variance is not reported below the noise level."""
    X = np.repeat([[0.0], [0.001]], 500, axis=0)
    y = np.tile([0, 1], 500)
    clf = GaussianNB(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1], random_state=0).fit(X, y)
    # Noise of the pooled second moment: std √2·(d/2)/(0.15 ε)/n with n = 1000 rows.
    floor = math.sqrt(2) * 0.5 / (BUDGET_SHARES[2] * 1.0) / 1000
    assert np.all(clf.var_ >= floor * 0.95)


def test_classes_derived_from_y_warn():
    X = np.zeros((4, 1))
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        GaussianNB(bounds=(-1, 1)).fit(X, [0, 1, 0, 1])


@pytest.mark.parametrize(
    "cls",
    [GaussianNB, pytest.param(GaussianNBEpsilonX2, marks=[pytest.mark.slow, pytest.mark.extended])],
    ids=["correct", "epsilon_x2"],
)
@pytest.mark.audit
def test_gaussian_noise_audit(cls):
    """Audit of ``delta > 0`` (zCDP-calibrated lattice Gaussian noise) against its Gaussian profile.

    dpsk.audit has no zCDP profile; the noise is Gaussian with σ = Δ₂/√(2ρ), whose exact
    profile (multiplier 1/√(2ρ)) the audit tests along the whole curve.
    """
    config = AUDITS["GaussianNB"]
    # ε = 8: a larger μ than at ε = 2, so that 3000 fits separate μ from 2μ.
    params = {**config.params, "epsilon": 8.0, "delta": 1e-5}
    neighbours = config.neighbours()
    rho = GaussianNB(random_state=0, **params).fit(**neighbours[0]).privacy_spent_.event.rho
    claim = GaussianEvent(1.0 / math.sqrt(2.0 * rho))
    result = audit(
        estimator_sampler(cls(**params), config.projection), neighbours, event=claim, n_samples=3_000, random_state=0
    )
    assert result.passed == (cls is GaussianNB), str(result)
