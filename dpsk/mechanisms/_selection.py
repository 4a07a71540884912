# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private selection: the exponential mechanism and report-noisy-max, sampled exactly.

Both select a candidate index from a vector of scores (higher is better) with score
sensitivity Δ. Floats cannot represent exp(ε s / 2Δ) exactly, and sampling from
rounded weights changes the privacy guarantee, so the scores are first mapped to
integers, z = floor(m s / Δ) with m = 2⁴⁰ ε / 2 (minus one step), which changes by at
most m between neighbouring datasets; weights are then exp(-(z_max - z)/2⁴⁰) for the
integer differences, whose Bernoulli(exp(-γ)) draws are exact (``dpsk._core._exact``).
The guarantee holds exactly for these integer scores, with ε' <= ε; the selection
probabilities differ from the real-number ones by a relative 2⁻⁴⁰·|s|/Δ.
"""

from fractions import Fraction

import numpy as np

from dpsk._core._exact import bernoulli_exp
from dpsk.accounting import ExponentialEvent, PureDPEvent, note_release
from dpsk.mechanisms._base import MECHANISM_DOCS, check_sensitivity
from dpsk.utils._docstring import Substitution
from dpsk.utils.validation import check_privacy_params, check_random_state

__all__ = ["ExponentialMechanism", "ReportNoisyMax"]

_BITS = 40
_DEN = 1 << _BITS
# γ is clamped at 2**20 (acceptance probability exp(-2**20)): clamping the integer scores
# from below at z_max - M changes each by at most as much as z_max does, so it keeps the
# sensitivity, and it keeps the numerators of γ within the exact sampler's 64 bits.
_MAX_GAMMA_NUM = 1 << (_BITS + 20)


class _Selection:
    """Shared parameters and score quantisation of the selection mechanisms."""

    def __init__(self, *, epsilon, sensitivity=1.0, random_state=None):
        self.epsilon, _ = check_privacy_params(epsilon, 0.0)
        self.sensitivity = check_sensitivity(sensitivity, positive=True)
        self.random_state = random_state
        self._rng = check_random_state(random_state)
        # m/2**40 <= ε/2 with m an integer, one step below, so floor() keeps the bound.
        self._m = int(Fraction(self.epsilon) * _DEN / 2) - 1
        if self._m < 1:
            raise ValueError(f"epsilon={self.epsilon} is too small for exact selection (minimum 2**-38)")

    def __repr__(self):
        return f"{type(self).__name__}(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r})"

    def _gamma_numerators(self, scores):
        """Integer numerators of γ_r = (z_max - z_r) / 2⁴⁰ for the scores (a list of ints)."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 1 or scores.size == 0:
            raise ValueError(f"scores must be a non-empty 1-d array, got shape {scores.shape}")
        if not np.all(np.isfinite(scores)):
            raise ValueError("scores must be finite")
        factor = Fraction(self._m) / Fraction(self.sensitivity)
        z = [(Fraction(float(s)) * factor).__floor__() for s in scores]
        top = max(z)
        return [min(top - zr, _MAX_GAMMA_NUM) for zr in z]

    def probabilities(self, scores):
        """The exact selection probabilities for these scores (for tests and utility analysis)."""
        gammas = np.array(self._gamma_numerators(scores), dtype=np.float64) / _DEN
        return self._probabilities(gammas)

    def randomise(self, scores):
        """Select a candidate: one private release, recorded with ``note_release``.

        Parameters
        ----------
        scores : array-like of shape (n_candidates,)
            Score of each candidate (higher is better), of sensitivity ``sensitivity``.

        Returns
        -------
        int
            The index of the selected candidate.
        """
        numerators = self._gamma_numerators(scores)
        index = self._select(numerators)
        note_release(self.privacy_event())
        return index


@Substitution(**MECHANISM_DOCS)
class ExponentialMechanism(_Selection):
    """The exponential mechanism: P(r) ∝ exp(ε · score_r / (2Δ)), sampled exactly.

    Parameters
    ----------
    {epsilon}
    sensitivity : float, default=1.0
        Sensitivity Δ of every score (max over candidates of ``|score(D) - score(D')|``), > 0.
    {random_state}

    Notes
    -----
    **Privacy.** ε-DP (McSherry & Talwar 2007), and more precisely ε-bounded range, hence
    ε²/8-zCDP (Cesar & Rogers 2021): recorded as an :class:`~dpsk.accounting.ExponentialEvent`,
    which the accountant composes accordingly. Released: one index. Sampled exactly by
    rejection: a uniform candidate is accepted with probability exp(-γ_r) (exact
    Bernoulli draws), about ``n_candidates`` draws at most on average. Floating-point
    safe for the integer scores described in the module docstring.
    """

    def privacy_event(self):
        """The privacy event of one selection."""
        return ExponentialEvent(self.epsilon)

    @staticmethod
    def _probabilities(gammas):
        weights = np.exp(-gammas)
        return weights / weights.sum()

    def _select(self, numerators):
        n = len(numerators)
        while True:
            r = int(self._rng.integers(n))
            if numerators[r] == 0 or bernoulli_exp(numerators[r], _DEN, self._rng):
                return r


@Substitution(**MECHANISM_DOCS)
class ReportNoisyMax(_Selection):
    """Report-noisy-max with exponential noise, as permute-and-flip, sampled exactly.

    Candidates are visited in a uniformly random order and each is accepted with
    probability exp(-ε (score_max - score_r) / (2Δ)); the first accepted is returned (the
    best always is). This is the same distribution as the argmax of scores plus
    exponential noise (Ding et al. 2021) and never worse in expected score than the
    exponential mechanism (McKenna & Sheldon 2020).

    Parameters
    ----------
    {epsilon}
    sensitivity : float, default=1.0
        Sensitivity Δ of every score, > 0.
    {random_state}

    Notes
    -----
    **Privacy.** ε-DP (McKenna & Sheldon 2020), recorded as a
    :class:`~dpsk.accounting.PureDPEvent` (it is not bounded-range, so it does not get the
    exponential mechanism's better composition). Released: one index. Exact Bernoulli
    draws on the integer scores of the module docstring: floating-point safe.
    """

    def privacy_event(self):
        """The privacy event of one selection."""
        return PureDPEvent(self.epsilon)

    @staticmethod
    def _probabilities(gammas):
        # r is visited at position k+1 (probability 1/n) after a uniform k-subset S of the
        # others, all rejected: P(r) = p_r Σ_k e_k(1 - p_others) k!(n-1-k)!/n!, with e_k the
        # elementary symmetric polynomials (built by dynamic programming).
        accept = np.exp(-gammas)
        n = accept.size
        probs = np.empty(n)
        for r in range(n):
            others = np.delete(1.0 - accept, r)
            # coefficients of prod_j (1 + x (1 - p_j)): c[k] = e_k(rejections of others)
            coef = np.zeros(n)
            coef[0] = 1.0
            for q in others:
                coef[1:] = coef[1:] + q * coef[:-1]
            # r at position k+1 after k given others all rejected: k!(n-1-k)!/n! · e_k
            k = np.arange(n)
            weights = np.exp(
                _log_factorial(k) + _log_factorial(n - 1 - k) - _log_factorial(np.full(n, n))
            )
            probs[r] = accept[r] * np.sum(weights * coef)
        return probs

    def _select(self, numerators):
        for r in self._rng.permutation(len(numerators)):
            r = int(r)
            if numerators[r] == 0 or bernoulli_exp(numerators[r], _DEN, self._rng):
                return r
        raise AssertionError("unreachable: the best candidate is always accepted")  # pragma: no cover


def _log_factorial(k):
    from scipy.special import gammaln

    return gammaln(np.asarray(k, dtype=np.float64) + 1.0)

