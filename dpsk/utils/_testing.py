# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the test suite (tests cannot import each other).

:func:`assert_fit_with_power`, :func:`ks_pvalue` and :func:`chisquare_pvalue` are the
goodness-of-fit protocol of every sampler test: the sample must fit the intended
distribution at level ``ALPHA`` and the same test must reject it when the hypothesised
scale is off by a factor 1.2 (a power check, so the test can fail).

:class:`ToyDPMeanClassifier` is a small but genuinely differentially private estimator
(nearest noisy class mean) that exercises the whole fit protocol without depending on
any real estimator. It lives in the package, not in tests/, so that process-parallel
tests (loky workers) can unpickle it.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from dpsk.accounting import ComposedEvent, LaplaceEvent, note_release
from dpsk.base import DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.utils._sklearn_compat import _fit_context, check_is_fitted, validate_data
from dpsk.utils.validation import check_random_state, resolve_bounds, resolve_classes

__all__ = ["ALPHA", "ToyDPMeanClassifier", "assert_fit_with_power", "chisquare_pvalue", "ks_pvalue"]

# Significance level of every statistical test: a correct sampler fails one in a million.
ALPHA = 1e-6


def ks_pvalue(sample, cdf):
    """Kolmogorov-Smirnov p-value of a continuous ``sample`` against the callable ``cdf``."""
    from scipy import stats

    return stats.kstest(np.asarray(sample, dtype=np.float64), cdf).pvalue


def chisquare_pvalue(sample, support, probs):
    """Chi-square p-value of an integer ``sample`` against ``probs`` on the integers ``support``.

    ``support`` must be consecutive integers carrying (almost) all the mass. Cells with an
    expected count below 5 are merged into the two tail cells (all k <= lo, all k >= hi).
    """
    from scipy import stats

    sample = np.asarray(sample)
    support = np.asarray(support)
    probs = np.asarray(probs, dtype=np.float64)
    probs = probs / probs.sum()
    n = sample.size
    central = np.flatnonzero(probs * n >= 5)
    if central.size < 3:
        raise ValueError("chisquare_pvalue needs at least 3 cells with an expected count >= 5")
    lo, hi = support[central[0]], support[central[-1]]
    inner = np.arange(lo + 1, hi)
    observed = np.concatenate(
        [[np.sum(sample <= lo)], np.bincount(sample[(sample > lo) & (sample < hi)] - lo - 1, minlength=inner.size), [np.sum(sample >= hi)]]
    )
    cdf = np.cumsum(probs)
    expected = np.concatenate(
        [[cdf[central[0]]], probs[central[0] + 1 : central[-1]], [1.0 - cdf[central[-1] - 1]]]
    ) * n
    return stats.chisquare(observed, expected * (n / expected.sum())).pvalue


def assert_fit_with_power(pvalue_at, scale, *, factor=1.2, alpha=ALPHA):
    """Assert ``pvalue_at(scale) > alpha`` and ``pvalue_at(scale * factor) < alpha``.

    ``pvalue_at(s)`` tests a fixed sample against the hypothesised distribution with scale
    ``s``: the first assertion is the goodness of fit, the second the power check.
    """
    p_fit = pvalue_at(scale)
    assert p_fit > alpha, f"sample does not fit scale {scale}: p = {p_fit:.3g}"
    p_wrong = pvalue_at(scale * factor)
    assert p_wrong < alpha, f"test has no power against scale {scale * factor}: p = {p_wrong:.3g}"


class ToyDPMeanClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Nearest-class-mean classifier with Laplace noise on class counts and sums.

    Test helper only (the noise is the textbook Laplace, not floating-point safe).

    Parameters
    ----------
    epsilon : float, default=1.0
    bounds : tuple or None, default=None
    classes : array-like or None, default=None
    accountant : BudgetAccountant or None, default=None
    random_state : None, int or Generator, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    bounds_ : tuple of ndarray
    privacy_spent_ : PrivacyEvent

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row: a row changes one class count by 1 and
    one class sum by at most ``sum(max(|lower|, |upper|))`` in L1 norm, so each of the
    two Laplace releases (counts, sums) costs ε/2.
    """

    _parameter_constraints = {
        **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
        "bounds": [tuple, None],
        "classes": ["array-like", None],
    }

    def __init__(self, *, epsilon=1.0, bounds=None, classes=None, accountant=None, random_state=None):
        self.epsilon = epsilon
        self.bounds = bounds
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    def _privacy_cost(self):
        half = LaplaceEvent(noise_multiplier=2.0 / float(self.epsilon))
        return ComposedEvent((half, half))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        cost = self._privacy_cost()
        self._check_privacy_budget(cost)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C")
        lower, upper = resolve_bounds(self, self.bounds, X)
        classes, y_index = resolve_classes(self, self.classes, y)
        rng = check_random_state(self.random_state)
        self._spend_privacy_budget(cost)

        clipped = np.clip(X, lower, upper)
        counts = np.bincount(y_index, minlength=classes.size).astype(np.float64)
        sums = np.zeros((classes.size, X.shape[1]))
        np.add.at(sums, y_index, clipped)
        count_event, sum_event = cost.events
        sensitivity = float(np.sum(np.maximum(np.abs(lower), np.abs(upper))))
        counts += rng.laplace(0.0, count_event.noise_multiplier * 1.0, counts.shape)
        note_release(count_event)
        sums += rng.laplace(0.0, sum_event.noise_multiplier * sensitivity, sums.shape)
        note_release(sum_event)

        self.classes_ = classes
        self.bounds_ = (lower, upper)
        self.means_ = (sums / np.maximum(counts, 1.0)[:, None]).astype(X.dtype)
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        distances = ((X[:, None, :] - self.means_[None, :, :]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(distances, axis=1)]
