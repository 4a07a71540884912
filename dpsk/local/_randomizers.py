# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Client-side randomizers of local differential privacy: each user runs one on their own value.

Frequency oracles of Wang, Blocki, Li & Jha (USENIX Security 2017, "Locally Differentially
Private Protocols for Frequency Estimation"; WBLJ17 below), for a public domain of d
categories {0, ..., d-1}:

=====================  ==========================================  ==========================
randomizer             report                                      support probabilities
=====================  ==========================================  ==========================
``DirectEncoding``     one category (generalized randomized        p = e^ε/(e^ε+d-1),
(GRR)                  response)                                   q = 1/(e^ε+d-1)
``UnaryEncoding``      d bits; the true one is 1 w.p. p, each      SUE: p = e^(ε/2)/(e^(ε/2)+1),
(SUE, OUE)             other w.p. q                                q = 1-p; OUE: p = 1/2,
                                                                   q = 1/(e^ε+1)
``LocalHashing``       (hash seed, GRR of the hashed value on      p = e^ε/(e^ε+g-1), q = 1/g;
(OLH, BLH)             g buckets)                                  OLH: g = round(e^ε+1),
                                                                   BLH: g = 2
=====================  ==========================================  ==========================

A report *supports* category v when it could have come from v with the "likely" outcome
(GRR: the report is v; UE: bit v is 1; LH: the report's bucket is v's hash). v is
supported with probability p by a user holding v and q by any other user, so with
C(v) supports among n reports, ``(C(v) - n q) / (p - q)`` is an unbiased count, of
variance ``n q(1-q)/(p-q)^2 + c(v)(1-p-q)/(p-q)`` (WBLJ17 Eq. (2); the first term is
their Var*, the one the protocols are compared by).

Exact sampling. Every random choice is made from uniform integers and exact Bernoulli
draws (``dpsk._core._exact``), never from a float compared with a probability:

* "keep" with probability 1/(1 + (k-1) e^-γ) is a uniform proposal among k accepted
  always if it is the first, else with an exact Bernoulli(e^-γ) draw, repeated until
  one is accepted; kept iff the accepted proposal is the first (k = 2 gives the
  Bernoulli(e^γ/(e^γ+1)) of a randomized-response bit, γ = 0 a fair coin);
* the other categories and buckets, and the hash seeds, are uniform integers.

The probabilities are therefore exactly the formulas' at the float ε given (an exact
rational: γ is rounded *down* only when it does not fit 64-bit integers, which only adds
privacy). The privacy loss of each protocol is the sum of the γ's it uses, never more
than ε.

Privacy model
-------------
Local DP: no one is trusted with raw values. A user's report is ε-DP with respect to
*their own value*: whatever two values a and b, every report is at most e^ε times as
likely under a as under b (Kasiviswanathan et al. 2008). The server sees reports only;
aggregating them (:class:`~dpsk.local.FrequencyEstimator`) is post-processing and
costs nothing. The guarantee covers one report per user: a user who reports again
(another day, another question) spends ε again, which their own accountant records if
they give one to ``randomise``.
"""

import math
import numbers

import numpy as np

from dpsk._core._exact import bernoulli_exp_fill
from dpsk.accounting import PureDPEvent, RandomizedResponseEvent, note_release
from dpsk.mechanisms._base import MECHANISM_DOCS, ImmutableMechanism, _NoiseSource, exact_rational
from dpsk.mechanisms._sparse_vector import _charge
from dpsk.utils._docstring import Substitution
from dpsk.utils.validation import check_privacy_params

__all__ = [
    "DirectEncoding",
    "LocalHashing",
    "OneBitMean",
    "UnaryEncoding",
    "choose_protocol",
    "make_randomizer",
]

#: Prime modulus of the hash family h(x) = ((a x + b) mod P) mod g: the largest prime below
#: 2^32, so that a x + b < 2^64 is exact in unsigned 64-bit arithmetic.
HASH_PRIME = 4_294_967_291

#: Largest number of (report, category) pairs hashed at once by the server.
_HASH_BLOCK = 1 << 22

LOCAL_DOCS = {
    **MECHANISM_DOCS,
    "n_categories": """n_categories : int
        Size d >= 2 of the public domain: values are the category indices 0, ..., d - 1.""",
    "privacy": """**Privacy.** Local differential privacy: each report is ε-DP with respect to the value
    of the one user it comes from (replace relation), whoever receives it; no one needs
    to be trusted with raw values. One element of ``values`` is one user's value, and one
    call is one ε release per user (parallel composition over users), recorded once with
    :func:`~dpsk.accounting.note_release` and charged once on the accountant in play.
    Sampled exactly from uniform integers and exact Bernoulli(e^-γ) draws (see
    :mod:`dpsk.local`). The hash seeds, bucket counts and everything the server computes
    from reports are public.""",
}


def _gamma(value):
    """γ as an exact rational (num, den), rounded down if it does not fit (more privacy)."""
    return exact_rational(value, 2**64 - 1, 2**63 - 1, rounding="down")


def _keep_flags(size, k, gamma, rng):
    """``size`` exact Bernoulli(1 / (1 + (k - 1) e^-γ)) draws, γ = num/den.

    A uniform proposal among k is accepted always if it is 0, else with an exact
    Bernoulli(e^-γ) draw; rejected proposals are redrawn. The accepted proposal is 0 with
    probability 1 / (1 + (k - 1) e^-γ).
    """
    num, den = gamma
    out = np.empty(size, dtype=bool)
    pending = np.arange(size)
    while pending.size:
        proposal = rng.integers(k, size=pending.size)
        first = proposal == 0
        accept = first.copy()
        others = np.flatnonzero(~first)
        if others.size:
            coin = np.empty(others.size, dtype=np.bool_)
            bernoulli_exp_fill(coin, num, den, rng)
            accept[others] = coin
        out[pending[accept]] = first[accept]
        pending = pending[~accept]
    return out


def _other_than(truth, k, rng):
    """For each entry of ``truth`` (in [0, k)), a uniformly random other value of [0, k)."""
    other = rng.integers(k - 1, size=truth.size)
    return other + (other >= truth)


def _check_n_categories(n_categories, name="n_categories"):
    if isinstance(n_categories, bool) or not isinstance(n_categories, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(n_categories).__name__}")
    if not 2 <= n_categories < HASH_PRIME:
        raise ValueError(f"{name} must be in [2, {HASH_PRIME}), got {n_categories}")
    return int(n_categories)


def _integer_array(values, name, low, high):
    """``values`` as an int64 array, checking integrality and [low, high) without echoing values."""
    arr = np.asarray(values)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr)):
            raise ValueError(f"{name} must hold integers (not shown, to avoid leaking data)")
    if arr.size and (arr.min() < low or arr.max() >= high):
        raise ValueError(f"{name} holds entries outside [{low}, {high}) (not shown, to avoid leaking data)")
    return arr.astype(np.int64)


class _CategoryRandomizer(ImmutableMechanism):
    """What the frequency oracles share: validation, charging, the unbiased count."""

    def __init__(self, *, epsilon, n_categories, random_state=None):
        self.epsilon, _ = check_privacy_params(epsilon, 0.0)
        self.n_categories = _check_n_categories(n_categories)
        self.random_state = random_state
        self._noise = _NoiseSource(random_state)

    def __repr__(self):
        return f"{type(self).__name__}(epsilon={self.epsilon!r}, n_categories={self.n_categories!r})"

    def randomise(self, values, *, accountant=None):
        """Randomize each user's value: one ε-LDP report per element of ``values``.

        Parameters
        ----------
        values : int or array-like of int
            Category indices in [0, n_categories), one per user.
        accountant : BudgetAccountant, optional
            The user's accountant, charged ``privacy_event()`` once, before any value is
            read (``BudgetExceededError`` if it does not fit); default: the active
            accountant (``with accountant:``), if any.

        Returns
        -------
        reports : ndarray
            One report per value, with the input's shape (plus a trailing axis for
            reports that are vectors, see the class).
        """
        _charge(self.privacy_event(), 1, accountant)
        truth = _integer_array(values, "values", 0, self.n_categories)
        self._noise.begin(self, (truth,))
        reports = self._randomise(truth.reshape(-1), self._rng)
        note_release(self.privacy_event())
        return reports.reshape((*truth.shape, *reports.shape[1:]))

    # -- server side: post-processing of reports ---------------------------------------

    @property
    def support_probabilities(self):
        """(p, q): P(a report supports the user's own category), P(it supports another one)."""
        raise NotImplementedError

    def support_counts(self, reports):
        """How many reports support each category: ndarray of shape (n_categories,).

        Parameters
        ----------
        reports : array-like
            Reports made by :meth:`randomise` with these parameters.
        """
        return self._support_counts(self._check_reports(reports)).astype(np.float64)

    def count_variance(self, n_reports, count=0.0):
        """Variance of the unbiased count of a category held by ``count`` of ``n_reports`` users.

        ``n q(1 - q)/(p - q)^2 + count (1 - p - q)/(p - q)`` (WBLJ17 Eq. (2)); with
        ``count=0`` it is their approximate variance Var*.
        """
        p, q = self.support_probabilities
        return n_reports * q * (1 - q) / (p - q) ** 2 + np.asarray(count) * (1 - p - q) / (p - q)


@Substitution(**LOCAL_DOCS)
class DirectEncoding(_CategoryRandomizer):
    """Direct encoding / generalized randomized response (GRR): report a category.

    The true category with probability p = e^ε / (e^ε + d - 1), otherwise one of the
    d - 1 others uniformly (WBLJ17 §4.1). The best oracle for small domains
    (d < 3 e^ε + 2); its variance grows linearly with d.

    Parameters
    ----------
    {epsilon}
    {n_categories}
    {random_state}

    Notes
    -----
    Reports: int64 category indices, the shape of ``values``. Same distribution as
    :class:`~dpsk.mechanisms.RandomizedResponse` on categories ``range(d)``.

    {privacy} Recorded as a :class:`~dpsk.accounting.RandomizedResponseEvent` (ε, d).

    Examples
    --------
    >>> from dpsk.local import DirectEncoding
    >>> grr = DirectEncoding(epsilon=1.0, n_categories=4, random_state=0)
    >>> grr.randomise([0, 1, 2, 3]).shape
    (4,)
    """

    def privacy_event(self):
        """The privacy event of one report (a call reports once per user)."""
        return RandomizedResponseEvent(self.epsilon, self.n_categories)

    def _keep_parameters(self):
        """(k, γ): keep with probability 1/(1 + (k-1) e^-γ)."""
        return self.n_categories, self.epsilon

    def _randomise(self, truth, rng):
        k, gamma = self._keep_parameters()
        keep = _keep_flags(truth.size, k, _gamma(gamma), rng)
        return np.where(keep, truth, _other_than(truth, self.n_categories, rng))

    @property
    def support_probabilities(self):
        """(p, q) = (e^ε, 1) / (e^ε + d - 1)."""
        denominator = math.exp(self.epsilon) + self.n_categories - 1
        return math.exp(self.epsilon) / denominator, 1.0 / denominator

    def _check_reports(self, reports):
        arr = np.asarray(reports)
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1:
            raise ValueError(f"GRR reports must be a 1-d array of categories, got shape {arr.shape}")
        return _integer_array(arr, "reports", 0, self.n_categories)

    def _support_counts(self, reports):
        return np.bincount(reports, minlength=self.n_categories)


@Substitution(**LOCAL_DOCS)
class UnaryEncoding(_CategoryRandomizer):
    """Unary encoding: report d bits, the user's bit 1 with probability p, every other with q.

    ``variant="optimized"`` (OUE, WBLJ17 §4.3): p = 1/2, q = 1/(e^ε + 1), the variance
    4 e^ε / (e^ε - 1)^2 per user whatever d (the same as OLH, with d bits per report).
    ``variant="symmetric"`` (SUE, basic one-time RAPPOR): p = e^(ε/2)/(e^(ε/2) + 1),
    q = 1 - p.

    Parameters
    ----------
    {epsilon}
    {n_categories}
    variant : {{"optimized", "symmetric"}}, default="optimized"
    {random_state}

    Notes
    -----
    Reports: uint8 bit vectors, shape ``values.shape + (d,)``. Two values a, b change the
    distribution of bits a and b only, each by the odds ratio p(1-q)/((1-p)q) = e^ε in
    total: the true bit is drawn as Bernoulli(1/(1 + e^-γ₁)) and the others as
    1 - Bernoulli(1/(1 + e^-γ₀)) with γ₁ + γ₀ = ε (OUE: 0 + ε, SUE: ε/2 + ε/2).

    {privacy} Recorded as a :class:`~dpsk.accounting.PureDPEvent` (ε).

    Examples
    --------
    >>> from dpsk.local import UnaryEncoding
    >>> oue = UnaryEncoding(epsilon=1.0, n_categories=8, random_state=0)
    >>> oue.randomise([0, 5]).shape
    (2, 8)
    """

    def __init__(self, *, epsilon, n_categories, variant="optimized", random_state=None):
        if variant not in ("optimized", "symmetric"):
            raise ValueError(f"variant must be 'optimized' or 'symmetric', got {variant!r}")
        self.variant = variant
        super().__init__(epsilon=epsilon, n_categories=n_categories, random_state=random_state)

    def __repr__(self):
        return f"UnaryEncoding(epsilon={self.epsilon!r}, n_categories={self.n_categories!r}, variant={self.variant!r})"

    def privacy_event(self):
        """The privacy event of one report (a call reports once per user)."""
        return PureDPEvent(self.epsilon)

    def _bit_gammas(self):
        """(γ₁, γ₀): true bit 1 w.p. 1/(1 + e^-γ₁), other bits 1 w.p. 1/(1 + e^γ₀)."""
        if self.variant == "optimized":
            return 0.0, self.epsilon
        return self.epsilon / 2, self.epsilon / 2

    def _randomise(self, truth, rng):
        gamma_true, gamma_other = self._bit_gammas()
        d = self.n_categories
        bits = ~_keep_flags(truth.size * d, 2, _gamma(gamma_other), rng)
        rows = np.arange(truth.size)
        bits.reshape(truth.size, d)[rows, truth] = _keep_flags(truth.size, 2, _gamma(gamma_true), rng)
        return bits.reshape(truth.size, d).astype(np.uint8)

    @property
    def support_probabilities(self):
        """(p, q): OUE (1/2, 1/(e^ε + 1)); SUE (e^(ε/2), 1) / (e^(ε/2) + 1)."""
        if self.variant == "optimized":
            return 0.5, 1.0 / (math.exp(self.epsilon) + 1.0)
        half = math.exp(self.epsilon / 2)
        return half / (half + 1.0), 1.0 / (half + 1.0)

    def _check_reports(self, reports):
        arr = np.asarray(reports)
        if arr.ndim != 2 or arr.shape[1] != self.n_categories:
            raise ValueError(f"unary-encoding reports must have shape (n, {self.n_categories}), got {arr.shape}")
        return _integer_array(arr, "reports", 0, 2)

    def _support_counts(self, reports):
        return reports.sum(axis=0)


def hash_buckets(a, b, x, n_buckets):
    """h(x) = ((a x + b) mod P) mod g, elementwise with broadcasting (P = ``HASH_PRIME``).

    Parameters
    ----------
    a, b : array-like of int
        Hash seeds, 1 <= a < P and 0 <= b < P.
    x : array-like of int
        Values in [0, P).
    n_buckets : int
        g.

    Returns
    -------
    ndarray of int64, the broadcast shape
    """
    a, b, x = (np.asarray(v).astype(np.uint64) for v in (a, b, x))
    # a x + b <= (P-1)^2 + P - 1 < 2^64: exact in uint64.
    return ((a * x + b) % np.uint64(HASH_PRIME) % np.uint64(n_buckets)).astype(np.int64)


@Substitution(**LOCAL_DOCS)
class LocalHashing(_CategoryRandomizer):
    """Local hashing: hash the value to g buckets with a random hash, then GRR on the bucket.

    Each user draws a hash from the universal family h(x) = ((a x + b) mod P) mod g
    (P = 2^32 - 5, a uniform in [1, P), b uniform in [0, P): Carter & Wegman) and reports
    (a, b, y) with y the bucket h(value) with probability p = e^ε / (e^ε + g - 1), else
    one of the g - 1 others uniformly (WBLJ17 §4.4). A report supports every category
    that hashes to y. ``n_buckets=None`` is optimal local hashing (OLH),
    g = round(e^ε + 1): variance 4 e^ε / (e^ε - 1)^2 per user whatever d, with
    reports of three integers. ``n_buckets=2`` is binary local hashing (BLH).

    Parameters
    ----------
    {epsilon}
    {n_categories}
    n_buckets : int or None, default=None
        g >= 2; None for round(e^ε + 1) (at least 2).
    {random_state}

    Attributes
    ----------
    n_buckets_ : int
        g.

    Notes
    -----
    Reports: int64, shape ``values.shape + (3,)``: (a, b, y). For the unbiased
    estimator a category held by someone else must be supported with probability 1/g:
    this family gives 1/g up to less than 1/P (pairs of distinct values are mapped to
    uniformly random pairs of distinct residues mod P, which mod g collide with
    probability within 1/(P - 1) below 1/g), a relative bias of the counts below
    2.4e-10 / (p - q). The hash does not affect privacy: for every hash, the report is
    ε-LDP randomized response on the bucket.

    {privacy} Recorded as a :class:`~dpsk.accounting.RandomizedResponseEvent` (ε, g):
    given the public hash, two values are either in one bucket (same report
    distribution) or g-ary randomized response between two buckets.

    Examples
    --------
    >>> from dpsk.local import LocalHashing
    >>> olh = LocalHashing(epsilon=2.0, n_categories=1000, random_state=0)
    >>> olh.n_buckets_, olh.randomise([3, 999]).shape
    (8, (2, 3))
    """

    def __init__(self, *, epsilon, n_categories, n_buckets=None, random_state=None):
        super().__init__(epsilon=epsilon, n_categories=n_categories, random_state=random_state)
        self.n_buckets = n_buckets
        if n_buckets is None:
            self.n_buckets_ = max(2, int(round(math.exp(self.epsilon) + 1.0)))
        else:
            self.n_buckets_ = _check_n_categories(n_buckets, "n_buckets")
        if self.n_buckets_ > 2**31:
            raise ValueError("epsilon is too large for optimal local hashing (more than 2^31 buckets)")

    def __repr__(self):
        return (
            f"LocalHashing(epsilon={self.epsilon!r}, n_categories={self.n_categories!r}, n_buckets={self.n_buckets!r})"
        )

    def privacy_event(self):
        """The privacy event of one report (a call reports once per user)."""
        return RandomizedResponseEvent(self.epsilon, self.n_buckets_)

    def _keep_parameters(self):
        """(k, γ): keep the bucket with probability 1/(1 + (k-1) e^-γ)."""
        return self.n_buckets_, self.epsilon

    def _randomise(self, truth, rng):
        g = self.n_buckets_
        n = truth.size
        seeds = np.empty((n, 2), dtype=np.int64)
        seeds[:, 0] = rng.integers(1, HASH_PRIME, size=n)
        seeds[:, 1] = rng.integers(0, HASH_PRIME, size=n)
        bucket = hash_buckets(seeds[:, 0], seeds[:, 1], truth, g)
        k, gamma = self._keep_parameters()
        keep = _keep_flags(n, k, _gamma(gamma), rng)
        reported = np.where(keep, bucket, _other_than(bucket, g, rng))
        return np.column_stack([seeds, reported])

    @property
    def support_probabilities(self):
        """(p, q) = (e^ε / (e^ε + g - 1), 1/g)."""
        g = self.n_buckets_
        return math.exp(self.epsilon) / (math.exp(self.epsilon) + g - 1), 1.0 / g

    def _check_reports(self, reports):
        arr = np.asarray(reports)
        if arr.ndim != 2 or arr.shape[1] != 3:
            raise ValueError(f"local-hashing reports must have shape (n, 3), got {arr.shape}")
        seeds = _integer_array(arr[:, :2], "report seeds", 0, HASH_PRIME)
        if seeds.size and seeds[:, 0].min() < 1:
            raise ValueError("report seeds must have a >= 1")
        buckets = _integer_array(arr[:, 2], "reported buckets", 0, self.n_buckets_)
        return np.column_stack([seeds, buckets])

    def _support_counts(self, reports):
        counts = np.zeros(self.n_categories, dtype=np.int64)
        if not reports.shape[0]:
            return counts
        block = max(1, _HASH_BLOCK // reports.shape[0])
        for start in range(0, self.n_categories, block):
            values = np.arange(start, min(start + block, self.n_categories))
            hits = hash_buckets(reports[:, :1], reports[:, 1:2], values[None, :], self.n_buckets_) == reports[:, 2:3]
            counts[start : start + values.size] = hits.sum(axis=0)
        return counts


@Substitution(**LOCAL_DOCS)
class OneBitMean(ImmutableMechanism):
    """One bit per user for a private mean of bounded values (Duchi et al. 2018; Ding et al. 2017).

    The value x is clipped to ``bounds`` = (lo, hi) and scaled to s = (x - lo)/(hi - lo);
    the user reports 1 with probability 1/(e^ε + 1) + s (e^ε - 1)/(e^ε + 1), drawn as a
    stochastic rounding b ~ Bernoulli(s) followed by binary randomized response on b
    (kept with probability e^ε/(e^ε + 1)). This is Duchi, Jordan & Wainwright's
    one-dimensional mechanism (their outputs ±(e^ε + 1)/(e^ε - 1) are an affine map of
    the bit) and Microsoft's one-bit telemetry (Ding, Kulkarni & Yekhanin 2017).
    :class:`~dpsk.local.MeanEstimator` aggregates the bits.

    Parameters
    ----------
    {epsilon}
    bounds : tuple (lo, hi)
        Public range of the values, lo < hi; values outside are clipped.
    {random_state}

    Notes
    -----
    Reports: uint8 bits, the shape of ``values``. The rounding compares a 53-bit uniform
    with s, so P(b = 1) is s rounded up to a multiple of 2^-53: it biases the mean by at
    most (hi - lo) 2^-53 and does not affect privacy, which comes from the exact
    randomized-response step alone (any bit b, e^ε odds).

    **Privacy.** Local differential privacy: each bit is ε-DP with respect to the value
    of the one user it comes from, whoever receives it. One element of ``values`` is
    one user's value and one call is one ε release per user, recorded once with
    :func:`~dpsk.accounting.note_release` and charged once on the accountant in play, as
    a :class:`~dpsk.accounting.RandomizedResponseEvent` (ε, 2). ``bounds`` must be
    public (not derived from the values).

    Examples
    --------
    >>> from dpsk.local import OneBitMean
    >>> OneBitMean(epsilon=1.0, bounds=(0, 10), random_state=0).randomise([2.5, 7.0]).shape
    (2,)
    """

    def __init__(self, *, epsilon, bounds, random_state=None):
        self.epsilon, _ = check_privacy_params(epsilon, 0.0)
        try:
            lo, hi = (float(v) for v in bounds)
        except (TypeError, ValueError):
            raise ValueError("bounds must be a pair (lo, hi) of numbers") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError("bounds must be finite with lo < hi")
        self.bounds = (lo, hi)
        self.random_state = random_state
        self._noise = _NoiseSource(random_state)

    def __repr__(self):
        return f"OneBitMean(epsilon={self.epsilon!r}, bounds={self.bounds!r})"

    def privacy_event(self):
        """The privacy event of one report (a call reports once per user)."""
        return RandomizedResponseEvent(self.epsilon, 2)

    def _keep_gamma(self):
        return self.epsilon

    def randomise(self, values, *, accountant=None):
        """One ε-LDP bit per user.

        Parameters
        ----------
        values : float or array-like of float
            One value per user (clipped to ``bounds``).
        accountant : BudgetAccountant, optional
            The user's accountant, charged ``privacy_event()`` once before any value is
            read; default: the active accountant (``with accountant:``), if any.

        Returns
        -------
        reports : ndarray of uint8, the shape of ``values``
        """
        _charge(self.privacy_event(), 1, accountant)
        arr = np.asarray(values)
        if not (np.issubdtype(arr.dtype, np.number) and not np.issubdtype(arr.dtype, np.complexfloating)):
            raise TypeError(f"values must be real numbers, got dtype {arr.dtype}")
        x = arr.astype(np.float64).reshape(-1)
        if not np.all(np.isfinite(x)):
            raise ValueError("values must be finite")
        lo, hi = self.bounds
        s = (np.clip(x, lo, hi) - lo) / (hi - lo)
        self._noise.begin(self, (x,))
        rng = self._rng
        rounded = rng.random(x.size) < s
        keep = _keep_flags(x.size, 2, _gamma(self._keep_gamma()), rng)
        note_release(self.privacy_event())
        return (rounded == keep).astype(np.uint8).reshape(arr.shape)

    @property
    def one_probabilities(self):
        """(P(1 | value = hi), P(1 | value = lo)) = (e^ε, 1) / (e^ε + 1)."""
        return 1.0 / (1.0 + math.exp(-self.epsilon)), 1.0 / (math.exp(self.epsilon) + 1.0)


#: Frequency protocols: name -> (randomizer class, fixed keyword arguments).
PROTOCOLS = {
    "grr": (DirectEncoding, {}),
    "oue": (UnaryEncoding, {"variant": "optimized"}),
    "sue": (UnaryEncoding, {"variant": "symmetric"}),
    "olh": (LocalHashing, {}),
    "blh": (LocalHashing, {"n_buckets": 2}),
}


def choose_protocol(epsilon, n_categories):
    """The protocol of smaller variance for these public parameters (WBLJ17 §5).

    GRR when d < 3 e^ε + 2, else OLH (whose variance 4e^ε/(e^ε-1)^2 does not grow with d,
    and whose reports are smaller than OUE's for the same variance).

    Returns
    -------
    {"grr", "olh"}

    Notes
    -----
    **Privacy.** A function of public parameters only.
    """
    epsilon, _ = check_privacy_params(epsilon, 0.0)
    return "grr" if _check_n_categories(n_categories) < 3 * math.exp(epsilon) + 2 else "olh"


def make_randomizer(protocol, *, epsilon, n_categories, random_state=None):
    """The client-side randomizer of a frequency protocol.

    Parameters
    ----------
    protocol : {"auto", "grr", "oue", "sue", "olh", "blh"}
        "auto": :func:`choose_protocol`.
    epsilon : float
    n_categories : int
    random_state : None, int, SeedSequence, BitGenerator or Generator, default=None

    Returns
    -------
    DirectEncoding, UnaryEncoding or LocalHashing

    Notes
    -----
    **Privacy.** See the randomizer returned: ε-LDP per user and report.
    """
    if protocol == "auto":
        protocol = choose_protocol(epsilon, n_categories)
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be 'auto' or one of {sorted(PROTOCOLS)}, got {protocol!r}")
    cls, fixed = PROTOCOLS[protocol]
    return cls(epsilon=epsilon, n_categories=n_categories, random_state=random_state, **fixed)
