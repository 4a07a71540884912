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

Very many candidates with tied scores (``ExponentialMechanism.randomise_groups``: the
quantile's 2³² bins, tied between consecutive data values) are sampled without listing
them, by rejection from a proposal that is exact in integers: candidate r is proposed
with probability ∝ 2^(−ℓ_r), ℓ_r = ⌊γ_r / ln 2⌋ (capped at 64), and accepted with
probability exp(−γ_r)·2^ℓ_r = exp(−(γ_r − ℓ_r ln 2)) ∈ (1/2, 1], drawn exactly by
``_bernoulli_exp_shifted`` (Canonne, Kamath & Steinke 2020, Algorithm 1, with the
irrational γ_r − ℓ_r ln 2 compared to uniform bits lazily against rigorous bounds of
ln 2). The proposal picks a level ℓ with probability ∝ (candidates at level ℓ)·2^(−ℓ)
(integers), then a uniform candidate of that level; the expected number of proposals is
at most 2 + (candidates)·2⁻⁶⁴.
"""

import bisect
import itertools
import math
from fractions import Fraction

import numpy as np

from dpsk._core._exact import bernoulli_exp
from dpsk.accounting import ExponentialEvent, PureDPEvent, note_release
from dpsk.accounting._events import NON_PRIVATE_EVENT
from dpsk.mechanisms._base import MECHANISM_DOCS, ImmutableMechanism, _NoiseSource, check_sensitivity
from dpsk.utils._docstring import Substitution
from dpsk.utils.validation import check_privacy_params, is_non_private

__all__ = ["ExponentialMechanism", "ReportNoisyMax"]

_BITS = 40
_DEN = 1 << _BITS
# γ is clamped at 2**20 (acceptance probability exp(-2**20)): clamping the integer scores
# from below at z_max - M changes each by at most as much as z_max does, so it keeps the
# sensitivity, and it keeps the numerators of γ within the exact sampler's 64 bits.
_MAX_GAMMA_NUM = 1 << (_BITS + 20)
# Proposal levels of randomise_groups: candidates with γ >= 64 ln 2 share the last one.
_TOP_LEVEL = 64


def _check_scores(scores):
    """The scores as a non-empty, finite 1-d float64 array (or ValueError)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a non-empty 1-d array, got shape {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite")
    return scores


class _Selection(ImmutableMechanism):
    """Shared parameters and score quantisation of the selection mechanisms."""

    def __init__(self, *, epsilon, sensitivity=1.0, random_state=None):
        self.epsilon, _ = check_privacy_params(epsilon, 0.0)
        self.sensitivity = check_sensitivity(sensitivity, positive=True)
        self.random_state = random_state
        self._noise = _NoiseSource(random_state)
        if is_non_private(self.epsilon):
            # ε = ∞: the limit of both mechanisms, a uniform choice among the best scores
            # (compared exactly), recorded as an infinite spend.
            self._m = None
            return
        # m/2**40 <= ε/2 with m an integer, one step below, so floor() keeps the bound.
        self._m = int(Fraction(self.epsilon) * _DEN / 2) - 1
        if self._m < 1:
            raise ValueError(f"epsilon={self.epsilon} is too small for exact selection (minimum 2**-38)")

    def __repr__(self):
        return f"{type(self).__name__}(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r})"

    def _gamma_numerators(self, scores):
        """Integer numerators of γ_r = (z_max - z_r) / 2⁴⁰ for the scores (a list of ints)."""
        exact = isinstance(scores, np.ndarray) and scores.dtype == object
        if exact:  # exact scores (ints, Fractions): quantised without rounding to floats
            if scores.ndim != 1 or scores.size == 0:
                raise ValueError(f"scores must be a non-empty 1-d array, got shape {scores.shape}")
            if not all(isinstance(s, (int, Fraction)) for s in scores):
                raise TypeError("an object array of scores must hold ints or Fractions")
            z = [self._quantise(s) for s in scores]
            top = max(z)
            return [min(top - zr, _MAX_GAMMA_NUM) for zr in z]
        z = [self._quantise(float(s)) for s in _check_scores(scores)]
        top = max(z)
        return [min(top - zr, _MAX_GAMMA_NUM) for zr in z]

    def _quantise(self, score):
        """The integer score z = floor(m s / Δ) of an exact score s (int, Fraction or float)."""
        return math.floor(Fraction(score) * self._m / Fraction(self.sensitivity))

    def _best(self, scores):
        """Indices of the largest scores, compared exactly (the ε = ∞ selection)."""
        if isinstance(scores, np.ndarray) and scores.dtype == object:  # exact ints or Fractions
            if scores.ndim != 1 or scores.size == 0:
                raise ValueError(f"scores must be a non-empty 1-d array, got shape {scores.shape}")
            top = max(scores)
            return np.flatnonzero([s == top for s in scores])
        scores = _check_scores(scores)
        return np.flatnonzero(scores == scores.max())

    def probabilities(self, scores):
        """The exact selection probabilities for these scores (for tests and utility analysis)."""
        if self._m is None:
            best = self._best(scores)
            probs = np.zeros(np.asarray(scores).size)
            probs[best] = 1.0 / best.size
            return probs
        gammas = np.array(self._gamma_numerators(scores), dtype=np.float64) / _DEN
        return self._probabilities(gammas)

    def randomise(self, scores):
        """Select a candidate: one private release, recorded with ``note_release``.

        Parameters
        ----------
        scores : array-like of shape (n_candidates,)
            Score of each candidate (higher is better), of sensitivity ``sensitivity``.
            An object array of Python ints or Fractions is used exactly (no rounding
            to floats), for scores whose sensitivity holds for the exact values.

        Returns
        -------
        int
            The index of the selected candidate.
        """
        if self._m is None:
            best = self._best(scores)
            self._noise.begin(self, (best,))
            index = int(best[self._rng.integers(best.size)]) if best.size > 1 else int(best[0])
            note_release(self.privacy_event())
            return index
        numerators = self._gamma_numerators(scores)
        self._noise.begin(self, (np.asarray(numerators, dtype=object),))
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
        return NON_PRIVATE_EVENT if self._m is None else ExponentialEvent(self.epsilon)

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

    def randomise_groups(self, counts, gaps, gap_error, score, top, *, candidate_score=False):
        """Select a candidate among groups of tied candidates: one private release.

        The same mechanism as :meth:`randomise` over the list in which group ``j``
        appears ``counts[j]`` times with score ``score(j)``, without building the list:
        exact rejection sampling in time linear in the number of groups (module docstring).

        Parameters
        ----------
        counts : array-like of int, shape (n_groups,)
            Candidates in each group, >= 0, at most 2**53 in total and at least one in a
            group of score ``top``.
        gaps : ndarray of float64, shape (n_groups,)
            ``top - score(j)``, approximately (used only to build the proposal).
        gap_error : float or ndarray
            A bound on ``|gaps - (top - score(j))|``. A gap understated by more than this
            is detected and raises ``RuntimeError`` (never a silently wrong law).
        score : callable
            ``score(j)``: the exact score of group ``j`` (an int, Fraction or float),
            called for the proposed groups only.
        top : int, Fraction or float
            The exact largest score over all candidates.
        candidate_score : bool, default=False
            If True, the candidates of a group need not tie: ``score(j, offset)`` is the
            exact score of candidate ``offset`` of group ``j`` (the proposed one), and
            ``gaps[j] - gap_error`` must not exceed the gap of any of them. The law is
            unchanged (each candidate ∝ exp(ε s / 2Δ)), and so is the use of the
            Generator when the groups that are not ties are all at the last proposal
            level: it lets a caller merge candidates far from the top whose scores it
            has not computed (``dpsk.dask``'s quantiles).

        Returns
        -------
        group : int
        offset : int
            Uniform in ``range(counts[group])``: which of the group's tied candidates.
        """
        counts = np.asarray(counts, dtype=np.int64)
        if counts.ndim != 1 or counts.size == 0 or np.any(counts < 0) or counts.sum() < 1:
            raise ValueError("counts must be a non-empty 1-d array of non-negative integers, not all 0")
        if float(counts.sum()) > 2.0**53:
            raise ValueError("at most 2**53 candidates in total")
        if self._m is None:  # ε = ∞: uniform among the candidates of the top score
            return self._best_of_groups(counts, gaps, gap_error, score, top)
        # γ_j >= (m/Δ)(top - s_j)/2⁴⁰ - 2⁻⁴⁰ (the two floors), so this lower bound is safe.
        scale = self._m / (self.sensitivity * _DEN) * (1.0 - 2.0**-50)
        lower = np.subtract(gaps, gap_error, dtype=np.float64)
        lower *= scale / math.log(2) * (1.0 - 2.0**-50)
        lower -= 2.0**-40 / math.log(2)
        # level = floor(lower / ln 2) in [0, _TOP_LEVEL]: ℓ ln 2 <= γ
        np.clip(lower, 0.0, _TOP_LEVEL, out=lower)
        levels = lower.astype(np.intp)
        per_level = np.bincount(levels, weights=counts.astype(np.float64), minlength=_TOP_LEVEL + 1)
        weights = [int(c) << (_TOP_LEVEL - level) for level, c in enumerate(per_level)]
        cumulative = list(itertools.accumulate(weights))
        z_top = self._quantise(top)
        self._noise.begin(self, (counts, gaps, np.asarray([top], dtype=object)))
        members = {}
        while True:
            level = bisect.bisect_right(cumulative, _uniform_below(cumulative[-1], self._rng))
            if level not in members:
                index = np.flatnonzero(levels == level)
                members[level] = (index, np.cumsum(counts[index]))
            index, cum = members[level]
            u = _uniform_below(int(cum[-1]), self._rng)
            position = int(np.searchsorted(cum, u, side="right"))
            group = int(index[position])
            offset = u - int(cum[position] - counts[group])
            exact = score(group, offset) if candidate_score else score(group)
            numerator = min(z_top - self._quantise(exact), _MAX_GAMMA_NUM)
            if numerator < 0:
                raise ValueError("top is not the largest score")
            if _bernoulli_exp_shifted(numerator, level, self._rng):
                note_release(self.privacy_event())
                return group, offset

    def _best_of_groups(self, counts, gaps, gap_error, score, top):
        """The ε = ∞ case of :meth:`randomise_groups`: a uniform candidate among the best."""
        near = np.flatnonzero((np.asarray(gaps, dtype=np.float64) <= np.add(gap_error, 0.0)) & (counts > 0))
        exact_top = Fraction(top)
        best = [int(j) for j in near if Fraction(score(int(j))) == exact_top]
        if not best:
            raise ValueError("no group has the score top")
        weights = np.cumsum(counts[best])
        self._noise.begin(self, (counts, gaps, np.asarray([top], dtype=object)))
        u = _uniform_below(int(weights[-1]), self._rng)
        position = int(np.searchsorted(weights, u, side="right"))
        group = best[position]
        note_release(self.privacy_event())
        return group, u - int(weights[position] - counts[group])


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
        return NON_PRIVATE_EVENT if self._m is None else PureDPEvent(self.epsilon)

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
            weights = np.exp(_log_factorial(k) + _log_factorial(n - 1 - k) - _log_factorial(np.full(n, n)))
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


# ---------------------------------------------------------------------------------------
# Exact helpers of ExponentialMechanism.randomise_groups (Python integers: a few calls
# per selection)

_LN2_BOUNDS: dict[int, tuple[int, int]] = {}


def _ln2_bounds(bits):
    """Integers (lo, hi) with lo <= 2**bits · ln 2 <= hi and hi - lo <= 2.

    From ln 2 = Σ_{k>=1} 1/(k 2^k) with g = 16 guard bits: each of the bits + g floored
    terms loses less than 1 and the tail is below 1, so 2**(bits+g) ln 2 lies in
    [S, S + bits + g + 1] for S the sum of the floored terms.
    """
    if bits not in _LN2_BOUNDS:
        guard = 16
        total = bits + guard
        s = sum((1 << (total - k)) // k for k in range(1, total + 1))
        _LN2_BOUNDS[bits] = (s >> guard, (s + total + 1 + (1 << guard) - 1) >> guard)
    return _LN2_BOUNDS[bits]


def _random_bits(count, rng):
    """A uniform integer of ``count`` random bits (whole 64-bit words from ``rng``)."""
    value = 0
    for _ in range(0, count, 64):
        value = (value << 64) | int(rng.integers(0, 1 << 64, dtype=np.uint64))
    return value >> ((-count) % 64)


def _uniform_below(n, rng):
    """A uniform integer in range(n), n >= 1 (exact, any size)."""
    if n <= 1 << 62:
        return int(rng.integers(n))
    bits = n.bit_length()
    while True:
        value = _random_bits(bits, rng)
        if value < n:
            return value


def _shifted_bounds(numerator, level, bits):
    """Integers bracketing 2**bits · y, y = numerator/2⁴⁰ − level·ln 2 (bits >= 40)."""
    lo2, hi2 = _ln2_bounds(bits)
    base = numerator << (bits - _BITS)
    return base - level * hi2, base - level * lo2


def _bernoulli_exp_shifted(numerator, level, rng):
    """Bernoulli(exp(−y)) for y = numerator/2⁴⁰ − level·ln 2 >= 0, exactly.

    level 0: the kernel's exact Bernoulli(exp(−γ)). Otherwise y is irrational: its integer
    part n (found from bounds on ln 2 of growing precision) costs n Bernoulli(exp(−1))
    draws, and the fraction f = y − n goes through CKS20 Algorithm 1 (K = 1; while
    Bernoulli(f)·Bernoulli(1/K): K += 1; accept iff K is odd), where Bernoulli(f) compares
    a uniform V, revealed 64 bits at a time, with f through the bounds until they decide
    (ln 2 is irrational, so they do, with probability 1).
    """
    if level == 0:
        return numerator == 0 or bernoulli_exp(numerator, _DEN, rng)
    bits = 64
    while True:  # n = floor(y), deterministic
        low, high = _shifted_bounds(numerator, level, bits)
        if high < 0:
            raise RuntimeError("exponential mechanism: a proposal level exceeds γ (gaps understated)")
        if low >> bits == high >> bits:
            whole = low >> bits
            break
        bits *= 2
    if whole and not bernoulli_exp(whole, 1, rng):
        return False

    def below_fraction():
        # V < f  <=>  (V + n) 2^P < 2^P y; V in [v, v + 1) / 2^P.
        precision, v = 64, _random_bits(64, rng)
        while True:
            low, high = _shifted_bounds(numerator, level, precision)
            offset = whole << precision
            if v + 1 + offset <= low:
                return True
            if v + offset >= high:
                return False
            precision += 64
            v = (v << 64) | _random_bits(64, rng)

    k = 1
    while below_fraction() and int(rng.integers(k)) == 0:
        k += 1
    return bool(k & 1)
