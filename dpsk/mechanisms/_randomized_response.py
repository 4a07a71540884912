# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Randomized response (binary and k-ary), sampled exactly."""

import numpy as np

from dpsk._core._exact import bernoulli_exp_fill
from dpsk.accounting import RandomizedResponseEvent, note_release
from dpsk.accounting._calibration import randomized_response_keep_probability
from dpsk.accounting._events import NON_PRIVATE_EVENT
from dpsk.mechanisms._base import MECHANISM_DOCS, ImmutableMechanism, _NoiseSource, exact_rational
from dpsk.utils._docstring import Substitution
from dpsk.utils.validation import check_privacy_params, is_non_private

__all__ = ["RandomizedResponse"]


@Substitution(**MECHANISM_DOCS)
class RandomizedResponse(ImmutableMechanism):
    """k-ary randomized response: keep the true category with probability e^ε / (e^ε + k - 1).

    Otherwise one of the k - 1 other categories is reported, uniformly. With two
    categories this is Warner's binary randomized response.

    Parameters
    ----------
    {epsilon}
    categories : array-like, default=(0, 1)
        The k >= 2 distinct possible values.
    {random_state}

    Attributes
    ----------
    categories_ : ndarray of shape (k,)
        The sorted categories.
    keep_probability : float
        P(report the true category).

    Notes
    -----
    **Privacy.** ε-DP for *replacing* one respondent's value (local DP): each element of
    the released array is one respondent's answer, so one call releasing an array is one
    ε-DP release (parallel composition over respondents), recorded as a
    :class:`~dpsk.accounting.RandomizedResponseEvent`. Sampled exactly: a uniformly random
    category is proposed and accepted always if it is the true one, else with an exact
    Bernoulli(e^-ε) draw (ε rounded down to a rational if needed, which only adds privacy).
    Floating-point safe.
    """

    def __init__(self, *, epsilon, categories=(0, 1), random_state=None):
        self.epsilon, _ = check_privacy_params(epsilon, 0.0)
        categories = np.asarray(categories)
        if categories.ndim != 1 or categories.size < 2:
            raise ValueError("categories must be a 1-d array-like of at least two values")
        self.categories_ = np.unique(categories)
        if self.categories_.size != categories.size:
            raise ValueError("categories must not contain duplicates")
        self.categories = categories
        self.random_state = random_state
        self._noise = _NoiseSource(random_state)
        # ε = ∞ (no privacy): every answer is kept, and the release is an infinite spend.
        self._gamma = (
            None
            if is_non_private(self.epsilon)
            else exact_rational(self.epsilon, 2**64 - 1, 2**63 - 1, rounding="down")
        )

    def __repr__(self):
        return f"RandomizedResponse(epsilon={self.epsilon!r}, categories={self.categories_.tolist()!r})"

    @property
    def keep_probability(self):
        """P(report the true category) = e^ε / (e^ε + k - 1)."""
        return randomized_response_keep_probability(self.epsilon, self.categories_.size)

    def privacy_event(self, shape=()):
        """The privacy event of one :meth:`randomise` call (the same for any shape)."""
        if self._gamma is None:
            return NON_PRIVATE_EVENT
        return RandomizedResponseEvent(self.epsilon, int(self.categories_.size))

    def randomise(self, value):
        """Report each value truthfully or not: one private release, recorded with ``note_release``.

        Parameters
        ----------
        value : scalar or array-like
            Values among ``categories``; an array holds one value per respondent.

        Returns
        -------
        scalar or ndarray
            Reported categories, with the input's shape.
        """
        arr = np.asarray(value)
        truth = np.searchsorted(self.categories_, arr.reshape(-1))
        inside = truth < self.categories_.size
        inside[inside] = self.categories_[truth[inside]] == arr.reshape(-1)[inside]
        if not np.all(inside):
            raise ValueError("value holds entries that are not among `categories` (not shown, to avoid leaking data)")
        k = self.categories_.size
        self._noise.begin(self, (truth,))
        out = np.empty(truth.size, dtype=np.intp)
        pending = np.arange(truth.size)
        while pending.size:
            proposal = self._rng.integers(k, size=pending.size)
            accept = proposal == truth[pending]
            others = np.flatnonzero(~accept)
            if others.size and self._gamma is None:
                accept[others] = False
            elif others.size:
                coin = np.empty(others.size, dtype=np.bool_)
                bernoulli_exp_fill(coin, self._gamma[0], self._gamma[1], self._rng)
                accept[others] = coin
            out[pending[accept]] = proposal[accept]
            pending = pending[~accept]
        note_release(self.privacy_event())
        result = self.categories_[out].reshape(arr.shape)
        return result[()] if result.ndim == 0 else result

    def debias_frequencies(self, reported):
        """Unbiased estimates of the true category frequencies from reported values.

        Parameters
        ----------
        reported : array-like
            Values released by :meth:`randomise`.

        Returns
        -------
        ndarray of shape (k,)
            (observed frequency - q) / (p - q), with p the keep probability and
            q = (1 - p)/(k - 1); may fall outside [0, 1] (post-processing: free).
        """
        reported = np.asarray(reported).reshape(-1)
        k = self.categories_.size
        counts = np.array([np.sum(reported == c) for c in self.categories_], dtype=np.float64)
        observed = counts / max(reported.size, 1)
        p = self.keep_probability
        q = (1.0 - p) / (k - 1)
        return (observed - q) / (p - q)
