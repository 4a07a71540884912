# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the test suite (tests cannot import each other).

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

__all__ = ["ToyDPMeanClassifier"]


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
