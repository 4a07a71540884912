# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Test helpers for the accounting tests that must be importable by worker processes.

* :class:`ToyDPCenterer` — a small differentially private *transformer* (subtracts a noisy
  mean), so pipelines in tests have two DP steps.
* :func:`spend_repeatedly` — what each process of the concurrency test runs.
"""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from dpsk.accounting import ComposedEvent, LaplaceEvent, note_release
from dpsk.base import BOUNDS_CONSTRAINT, DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.exceptions import BudgetExceededError
from dpsk.utils._sklearn_compat import _fit_context, check_is_fitted, validate_data
from dpsk.utils.validation import release_generator, resolve_bounds

__all__ = ["ToyDPCenterer", "spend_repeatedly"]


class ToyDPCenterer(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Subtract a noisy per-feature mean (test helper; textbook Laplace noise).

    Parameters
    ----------
    epsilon : float, default=1.0
    bounds : tuple or None, default=None
    accountant : BudgetAccountant or None, default=None
    random_state : None, int or Generator, default=None

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
    bounds_ : tuple of ndarray
    privacy_spent_ : PrivacyEvent

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row: the noisy count (sensitivity 1) and the
    noisy clipped sums (L1 sensitivity ``sum(max(|lower|, |upper|))``) each cost ε/2.
    """

    _parameter_constraints = {
        **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
        "bounds": BOUNDS_CONSTRAINT,
    }

    def __init__(self, *, epsilon=1.0, bounds=None, accountant=None, random_state=None):
        self.epsilon = epsilon
        self.bounds = bounds
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        half = LaplaceEvent(noise_multiplier=2.0 / float(self.epsilon))
        cost = ComposedEvent((half, half))
        self._check_privacy_budget(cost)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C")
        lower, upper = resolve_bounds(self, self.bounds, X)
        rng = release_generator(self.random_state, context=self, data=(X,))
        self._spend_privacy_budget(cost)
        sensitivity = float(np.sum(np.maximum(np.abs(lower), np.abs(upper))))
        count = X.shape[0] + rng.laplace(0.0, half.noise_multiplier)
        note_release(half)
        sums = np.clip(X, lower, upper).sum(axis=0) + rng.laplace(0.0, half.noise_multiplier * sensitivity, X.shape[1])
        note_release(half)
        self.bounds_ = (lower, upper)
        self.mean_ = np.clip(sums / max(count, 1.0), lower, upper).astype(X.dtype)
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        return X - self.mean_


def spend_repeatedly(path, n_spends, epsilon_each, barrier=None):
    """Open the accountant at ``path`` and try ``n_spends`` spends; return (successes, failures)."""
    from dpsk.accounting import BudgetAccountant

    accountant = BudgetAccountant(path=path)
    if barrier is not None:
        barrier.wait()  # start together: maximise contention
    successes = failures = 0
    for _ in range(n_spends):
        try:
            accountant.spend(epsilon_each, 0.0)
        except BudgetExceededError:
            failures += 1
        else:
            successes += 1
    return successes, failures
