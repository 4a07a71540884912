# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy formulas of single releases, in both directions: noise → guarantee → noise.

This is the one place where each formula is written. Mechanisms call the *calibration*
direction (ε, δ, sensitivity → noise scale); the accountant calls the *guarantee*
direction (noise scale → ε at a given δ). Composition theorems live in
``_composition``, Rényi-DP curves in ``_rdp``.

Rounding policy (so that a mechanism calibrated to a budget always fits that budget, and
no reported figure is ever below the true guarantee):

* guarantees are rounded **up**: exactly where the formula is exact in rationals
  (``laplace_epsilon``), otherwise by a relative margin ``NUMERIC_MARGIN`` (2⁻⁴⁰) that is
  far larger than the numerical error of the evaluation;
* calibrations aim ``CALIBRATION_MARGIN`` (2⁻³⁰, about 1e-9 relative) *inside* the target,
  and round noise scales up, so the accountant's rounded-up figure still fits;
* budget splits are rounded **down** (``split_epsilon``).

References
----------
.. [BW18] B. Balle and Y.-X. Wang. "Improving the Gaussian mechanism for differential
   privacy: analytical calibration and optimal denoising." ICML 2018.
.. [CKS20] C. Canonne, G. Kamath and T. Steinke. "The discrete Gaussian for differential
   privacy." NeurIPS 2020.
.. [DRS19] J. Dong, A. Roth and W. Su. "Gaussian differential privacy." 2019.
.. [BBG18] B. Balle, G. Barthe and M. Gaboardi. "Privacy amplification by subsampling:
   tight analyses via couplings and divergences." NeurIPS 2018.
.. [DDR20] J. Dong, D. Durfee and R. Rogers. "Optimal differential privacy composition
   for exponential mechanisms." ICML 2020.
"""

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

__all__ = [
    "CALIBRATION_MARGIN",
    "NUMERIC_MARGIN",
    "amplified_epsilon",
    "bounded_range_delta",
    "classic_gaussian_sigma",
    "deamplified_epsilon",
    "delta_compose",
    "delta_remove",
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "discrete_gaussian_sigma",
    "discrete_laplace_delta",
    "discrete_laplace_epsilon",
    "discrete_laplace_scale",
    "epsilon_from_delta",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_sigma",
    "laplace_delta",
    "laplace_epsilon",
    "laplace_noise_multiplier",
    "randomized_response_delta",
    "randomized_response_keep_probability",
    "round_down",
    "round_up",
    "split_epsilon",
    "zcdp_rho",
]

#: Relative margin by which numerically evaluated guarantees are rounded up.
NUMERIC_MARGIN = 2.0**-40
#: Relative margin by which calibrations aim inside their target (>> NUMERIC_MARGIN).
CALIBRATION_MARGIN = 2.0**-30


def round_up(value: float) -> float:
    """``value`` rounded up by the numeric margin (0 and inf are kept)."""
    value = float(value)
    if value == 0.0 or not math.isfinite(value):
        return value
    return math.nextafter(value + abs(value) * NUMERIC_MARGIN, math.inf)


def round_down(value: float) -> float:
    """``value`` rounded down by the numeric margin, never below 0."""
    value = float(value)
    if value == 0.0 or not math.isfinite(value):
        return value
    return max(0.0, math.nextafter(value - abs(value) * NUMERIC_MARGIN, -math.inf))


def _reciprocal_up(value):
    """The smallest float r with r >= 1/value exactly."""
    r = 1.0 / value
    if Fraction(r) * Fraction(value) < 1:
        r = math.nextafter(r, math.inf)
    return r


def _ratio_up(numerator, denominator):
    """The smallest float >= numerator / denominator exactly."""
    r = numerator / denominator
    if Fraction(r) * Fraction(denominator) < Fraction(numerator):
        r = math.nextafter(r, math.inf)
    return r


def delta_compose(a: float, b: float) -> float:
    """a ⊕ b = 1 - (1 - a)(1 - b): the δ of two releases with δ's a and b (rounded up)."""
    if a == 0.0 or b == 0.0:
        return max(a, b)
    return min(1.0, round_up(a + b - a * b))


def delta_remove(a: float, b: float) -> float | None:
    """a ⊖ b: the δ x with b ⊕ x = a, i.e. (a - b)/(1 - b) (rounded down); None if a < b."""
    if a < b:
        return None
    if b == 0.0:
        return a
    if b >= 1.0:
        return 0.0
    return round_down((a - b) / (1.0 - b))


def split_epsilon(epsilon: float, parts: int | Sequence[float]) -> float | list[float]:
    """Divide ``epsilon`` between the steps of an algorithm, rounded down.

    Parameters
    ----------
    epsilon : float
        The budget to divide.
    parts : int or sequence of float
        An integer k: k equal steps. A sequence: one non-negative weight per step (not
        all zero), each step's share proportional to its weight.

    Returns
    -------
    share : float or list of float
        With an integer k: the largest float e such that k releases of e sum to at most
        ``epsilon`` exactly. With weights: the shares ``epsilon * w / Σw``, the largest
        lowered one ulp at a time until their exact sum is at most ``epsilon``.

    Notes
    -----
    **Privacy.** The shares sum to at most ``epsilon`` in exact arithmetic, so
    composing releases of the returned ε's never exceeds the budget. With k equal
    weights the smallest share is the integer form's e (one rule, computed in O(1) for
    an integer).

    An infinite ``epsilon`` (the non-private release) gives every step an infinite
    share (a step of weight 0 gets 0).
    """
    # A count is not iterable; weights (a sequence or an array) are.
    if math.isinf(epsilon):
        if not isinstance(parts, Iterable):
            return math.inf
        return [math.inf if float(w) > 0 else 0.0 for w in parts]
    if not isinstance(parts, Iterable):
        e = float(epsilon) / parts
        while Fraction(e) * parts > Fraction(epsilon):
            e = math.nextafter(e, 0.0)
        return e
    weights = [float(w) for w in parts]
    total = math.fsum(weights)
    shares = [float(epsilon) * w / total for w in weights]
    while sum(Fraction(e) for e in shares) > Fraction(epsilon):  # the exact sum of the floats
        k = max(range(len(shares)), key=shares.__getitem__)
        shares[k] = math.nextafter(shares[k], 0.0)
    return shares


# ----------------------------------------------------------------------------------------
# Laplace and discrete Laplace
# ----------------------------------------------------------------------------------------


def laplace_epsilon(noise_multiplier: float) -> float:
    """ε of Laplace noise with scale ``noise_multiplier × Δ₁``: ε = 1 / noise_multiplier (rounded up).

    Notes
    -----
    **Privacy.** Rounded up: Laplace noise of this multiplier is never less private
    than the returned ε says (real-number model; see
    :class:`~dpsk.mechanisms.Laplace` for floating-point-safe noise).
    """
    return _reciprocal_up(float(noise_multiplier))


def laplace_noise_multiplier(epsilon: float) -> float:
    """The noise multiplier b = 1/ε, rounded up so that ``laplace_epsilon(b) <= epsilon``.

    Notes
    -----
    **Privacy.** Rounded up: Laplace noise with scale ``multiplier × Δ₁`` on a query
    of L1 sensitivity Δ₁ is ε-DP (real-number model).
    """
    return _reciprocal_up(float(epsilon))


def discrete_laplace_epsilon(scale: float, sensitivity: int = 1) -> float:
    """ε of discrete Laplace noise ``P(k) ∝ exp(-|k|/scale)`` on an integer query: Δ/scale (rounded up).

    Notes
    -----
    **Privacy.** Rounded up: discrete Laplace noise of this scale on an integer
    query of L1 sensitivity Δ is ε-DP for the returned ε.
    """
    return _ratio_up(float(sensitivity), float(scale))


def discrete_laplace_scale(epsilon: float, sensitivity: int = 1) -> float:
    """The scale Δ/ε, rounded up so that ``discrete_laplace_epsilon(scale, Δ) <= epsilon``.

    Notes
    -----
    **Privacy.** Rounded up: discrete Laplace noise of the returned scale on an
    integer query of L1 sensitivity Δ is ε-DP.
    """
    return _ratio_up(float(sensitivity), float(epsilon))


# ----------------------------------------------------------------------------------------
# Gaussian: the exact (ε, δ) profile [BW18, Thm 8; DRS19, Cor 2.13]
# ----------------------------------------------------------------------------------------


def _log_gaussian_delta(epsilon, mu):
    """log δ(ε) of a Gaussian release with μ = Δ₂/σ; -inf if δ(ε) = 0 numerically."""
    a = -epsilon / mu + mu / 2.0
    b = -epsilon / mu - mu / 2.0
    log_pa = log_ndtr(a)
    gap = epsilon + log_ndtr(b) - log_pa  # log of e^ε Φ(b) / Φ(a), always < 0
    if gap >= 0.0:  # cancellation below float resolution
        return -math.inf
    return log_pa + math.log(-math.expm1(gap))


def gaussian_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of the Gaussian mechanism with μ = Δ₂/σ (equivalently of μ-GDP).

    δ(ε) = Φ(μ/2 - ε/μ) - e^ε Φ(-μ/2 - ε/μ), evaluated in log space (exact, not a bound).

    Notes
    -----
    **Privacy.** The exact privacy profile of continuous Gaussian noise (Balle &
    Wang 2018), in the real-number model: the release is (ε, δ(ε))-DP for every ε at
    once.
    """
    if math.isinf(epsilon) or mu == 0.0:
        return 0.0
    return math.exp(_log_gaussian_delta(float(epsilon), float(mu)))


def _smallest_root(fn, lo, hi):
    """The smallest x in [lo, hi] with fn(x) <= 0, for fn decreasing with fn(hi) <= 0 < fn(lo)."""
    x = brentq(fn, lo, hi, xtol=1e-14 * (1.0 + abs(hi)), rtol=8.9e-16, maxiter=300)
    step = 4e-14 * (1.0 + abs(x))
    while fn(x) > 0.0:
        x += step
        step *= 2.0
    return x


def _memoised(function):
    """Remember the results of a calibration of numbers (public values only).

    The root searches below cost from 0.05 to over 1 ms, and every fit that builds a
    mechanism calibrates it again with the same (ε, δ, sensitivity). The cache is keyed
    by the type and exact value of each argument (``-0.0`` and ``0.0`` apart, ``1.0``
    and ``np.float64(1.0)`` apart), holds numbers (immutable), and keeps at most 4096
    entries; errors are not remembered.
    """
    cache = {}

    @functools.wraps(function)
    def memoised(*args):
        key = tuple((type(a), repr(a)) for a in args)  # repr: a float's shortest exact text
        try:
            return cache[key]
        except KeyError:
            pass
        value = function(*args)
        if len(cache) < 4096:
            cache[key] = value
        return value

    memoised.cache_clear = cache.clear
    return memoised


def _largest_root(fn):
    """The largest x > 0 with fn(x) <= 0, for fn increasing and crossing 0 once."""
    hi = 1.0
    while fn(hi) <= 0.0:
        hi *= 2.0
    lo = hi / 2.0
    while fn(lo) > 0.0:
        lo /= 2.0
        if lo < 1e-300:  # fn(x) > 0 for every representable x > 0: there is no root to find
            raise ValueError("no x > 0 satisfies the condition")
    x = brentq(fn, lo, hi, xtol=1e-15 * hi, rtol=8.9e-16, maxiter=300)
    step = 4e-15 * x
    while fn(x) > 0.0:
        x -= step
        step *= 2.0
    return x


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The smallest ε >= 0 at which a Gaussian release with μ = Δ₂/σ is (ε, δ)-DP (rounded up).

    Parameters
    ----------
    delta : float
        In [0, 1].
    mu : float
        Δ₂/σ, >= 0. Gaussian releases compose exactly: use μ = sqrt(Σ μᵢ²).

    Notes
    -----
    **Privacy.** Rounded up: a Gaussian release with this μ is (ε, ``delta``)-DP for
    the returned ε (exact profile, real-number model).
    """
    delta, mu = float(delta), float(mu)
    if mu == 0.0 or delta >= 1.0:
        return 0.0
    if delta <= 0.0:
        return math.inf
    log_delta = math.log(delta)
    if _log_gaussian_delta(0.0, mu) <= log_delta:
        return 0.0
    # ρ-zCDP bound (ρ = μ²/2): a valid epsilon, so the root lies below it.
    rho = mu * mu / 2.0
    hi = rho + 2.0 * math.sqrt(rho * -log_delta) + 1.0
    while _log_gaussian_delta(hi, mu) > log_delta:
        hi *= 2.0
    eps = _smallest_root(lambda e: _log_gaussian_delta(e, mu) - log_delta, 0.0, hi)
    return round_up(eps)


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Analytic Gaussian calibration [BW18]: the smallest σ giving (ε, δ)-DP, rounded up.

    Valid for every ε > 0 (unlike the classic bound). ε=1, δ=1e-5, Δ₂=1 gives σ ≈ 3.7306.

    Notes
    -----
    **Privacy.** Rounded up: Gaussian noise of the returned σ on a query of L2
    sensitivity Δ₂ is (ε, δ)-DP for every ε > 0 (the analytic Gaussian mechanism,
    real-number model). :class:`~dpsk.mechanisms.Gaussian` gives floating-point-safe
    Gaussian noise.
    """
    return _gaussian_sigma(float(epsilon), float(delta), float(sensitivity))


@_memoised
def _gaussian_sigma(epsilon, delta, sensitivity):
    if sensitivity == 0.0:
        return 0.0
    target = epsilon * (1.0 - CALIBRATION_MARGIN)
    log_delta = math.log(delta)
    mu = _largest_root(lambda m: _log_gaussian_delta(target, m) - log_delta)
    return round_up(sensitivity / mu)


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The classic bound σ = sqrt(2 ln(1.25/δ)) Δ₂ / ε (Dwork & Roth 2014, Thm A.1), rounded up.

    Only valid for ε < 1, and noisier than :func:`gaussian_sigma` everywhere.

    Notes
    -----
    **Privacy.** Gaussian noise of the returned σ is (ε, δ)-DP only for ε < 1 (Dwork
    & Roth 2014, Theorem A.1; real-number model), and is always noisier than
    :func:`gaussian_sigma`. Offered to reproduce other work.
    """
    epsilon = float(epsilon)
    if not 0.0 < epsilon < 1.0:
        raise ValueError(f"the classic Gaussian bound requires 0 < epsilon < 1, got {epsilon}")
    return round_up(math.sqrt(2.0 * math.log(1.25 / float(delta))) * float(sensitivity) / epsilon)


# ----------------------------------------------------------------------------------------
# Discrete Gaussian [CKS20, Thm 7]
# ----------------------------------------------------------------------------------------

_DIRECT_SUM_MAX_TERMS = 2_000_000
_TAIL_SIGMAS = 40.0  # beyond 40 sigma the mass is below e^-800: nothing at double precision


def _log_tail_direct(threshold, sigma):
    """log Σ_{k > threshold} exp(-k²/(2σ²)) by direct summation (threshold may be negative)."""
    start = math.floor(threshold) + 1
    if start < 0:
        # Σ_{k >= start} = Σ_{k >= 0} + Σ_{k=start}^{-1}; both by symmetry over k >= 0 terms.
        ks = np.arange(0, math.ceil(_TAIL_SIGMAS * sigma) + 1 - start, dtype=np.float64)
        logs = -(ks * ks) / (2.0 * sigma * sigma)
        pos = np.logaddexp.reduce(logs)
        neg = np.logaddexp.reduce(logs[1 : -start + 1])
        return float(np.logaddexp(pos, neg))
    ks = np.arange(start, start + math.ceil(_TAIL_SIGMAS * sigma) + 1, dtype=np.float64)
    return float(np.logaddexp.reduce(-(ks * ks) / (2.0 * sigma * sigma)))


def _log_normaliser_direct(sigma):
    """log Σ_{k ∈ Z} exp(-k²/(2σ²)) by direct summation."""
    ks = np.arange(1, math.ceil(_TAIL_SIGMAS * sigma) + 2, dtype=np.float64)
    return float(np.logaddexp(0.0, math.log(2.0) + np.logaddexp.reduce(-(ks * ks) / (2.0 * sigma * sigma))))


def _log_tail_bounds(threshold, sigma):
    """(lower, upper) bounds on log Σ_{k > threshold} exp(-k²/(2σ²)) by integral comparison.

    For f decreasing on [m, ∞): ∫_m^∞ f <= Σ_{k>=m} f(k) <= f(m) + ∫_m^∞ f. Where f is
    also convex (beyond σ), the trapezoid and midpoint rules give the much tighter
    ∫_m^∞ f + f(m)/2 <= Σ_{k>=m} f(k) <= ∫_{m-1/2}^∞ f.
    """
    log_norm = math.log(sigma) + 0.5 * math.log(2.0 * math.pi)
    m = math.floor(threshold) + 1
    if m >= 0:
        integral = log_norm + log_ndtr(-m / sigma)
        log_fm = -(m * m) / (2.0 * sigma * sigma)
        if m - 0.5 >= sigma:
            lower = float(np.logaddexp(integral, log_fm - math.log(2.0)))
            return lower, log_norm + log_ndtr(-(m - 0.5) / sigma)
        return integral, float(np.logaddexp(integral, log_fm))
    # Σ_{k>=m} = Z - Σ_{k >= 1-m} by symmetry (1-m >= 1), with Z within (1 ± 3e^{-2π²σ²}).
    lo_rest, hi_rest = _log_tail_bounds(-m, sigma)  # Σ_{k > -m} = Σ_{k >= 1-m}
    z_lo, z_hi = log_norm, log_norm + math.log1p(3.0 * math.exp(-2.0 * math.pi**2 * sigma**2))
    return (
        z_lo + math.log(-math.expm1(min(hi_rest - z_lo, -1e-300))),
        z_hi + math.log(-math.expm1(min(lo_rest - z_hi, -1e-300))),
    )


def _log_discrete_gaussian_delta(epsilon, sigma, sensitivity):
    """log of an upper bound on δ(ε) of the discrete Gaussian (exact up to rounding when summed)."""
    t1 = epsilon * sigma * sigma / sensitivity - sensitivity / 2.0
    t2 = epsilon * sigma * sigma / sensitivity + sensitivity / 2.0
    if 2.0 * _TAIL_SIGMAS * sigma < _DIRECT_SUM_MAX_TERMS:
        log_z = _log_normaliser_direct(sigma)
        plus = _log_tail_direct(t1, sigma) - log_z
        minus = epsilon + _log_tail_direct(t2, sigma) - log_z
    else:
        log_norm = math.log(sigma) + 0.5 * math.log(2.0 * math.pi)
        z_lo = log_norm
        z_hi = log_norm + math.log1p(3.0 * math.exp(-2.0 * math.pi**2 * sigma**2))
        plus = _log_tail_bounds(t1, sigma)[1] - z_lo
        minus = epsilon + _log_tail_bounds(t2, sigma)[0] - z_hi
    gap = minus - plus
    if gap >= 0.0:
        return -math.inf
    return plus + math.log(-math.expm1(gap))


def discrete_gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1) -> float:
    """δ(ε) of discrete Gaussian noise N_Z(0, σ²) on an integer query of L2 sensitivity Δ [CKS20].

    δ = P[X > εσ²/Δ - Δ/2] - e^ε P[X > εσ²/Δ + Δ/2] with X ~ N_Z(0, σ²); summed
    directly for moderate σ, bounded from above by integral comparison for large σ.

    Notes
    -----
    **Privacy.** Never below the true δ(ε): the sum is exact for moderate σ and
    bounded from above for large σ. Discrete Gaussian noise sampled exactly (as dpsk
    does) is floating-point safe.
    """
    if math.isinf(epsilon):
        return 0.0
    return math.exp(_log_discrete_gaussian_delta(float(epsilon), float(sigma), float(sensitivity)))


def discrete_gaussian_epsilon(delta: float, sigma: float, sensitivity: float = 1) -> float:
    """The smallest ε at which discrete Gaussian noise is (ε, δ)-DP (rounded up).

    Notes
    -----
    **Privacy.** Rounded up: discrete Gaussian noise of this σ on an integer query
    of L2 sensitivity Δ is (ε, ``delta``)-DP for the returned ε.
    """
    delta, sigma, sensitivity = float(delta), float(sigma), float(sensitivity)
    if delta >= 1.0:
        return 0.0
    if delta <= 0.0:
        return math.inf
    log_delta = math.log(delta)

    def excess(eps):
        return _log_discrete_gaussian_delta(eps, sigma, sensitivity) - log_delta

    if excess(0.0) <= 0.0:
        return 0.0
    rho = sensitivity**2 / (2.0 * sigma**2)  # ρ-zCDP: a valid upper bracket
    hi = rho + 2.0 * math.sqrt(rho * -log_delta) + 1.0
    while excess(hi) > 0.0:
        hi *= 2.0
    return round_up(_smallest_root(excess, 0.0, hi))


def discrete_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1) -> float:
    """The smallest σ for which discrete Gaussian noise is (ε, δ)-DP [CKS20, Thm 7], rounded up.

    Notes
    -----
    **Privacy.** Rounded up: discrete Gaussian noise of the returned σ on an integer
    query of L2 sensitivity Δ is (ε, δ)-DP by its exact privacy profile (Canonne,
    Kamath & Steinke 2020, Theorem 7).
    """
    return _discrete_gaussian_sigma(float(epsilon), float(delta), float(sensitivity))


@_memoised
def _discrete_gaussian_sigma(epsilon, delta, sensitivity):
    target = epsilon * (1.0 - CALIBRATION_MARGIN)
    log_delta = math.log(delta)

    def excess(sigma):  # decreasing in sigma
        return _log_discrete_gaussian_delta(target, sigma, sensitivity) - log_delta

    guess = gaussian_sigma(epsilon, delta, sensitivity)
    lo, hi = guess / 1.5, guess * 1.5
    while excess(hi) > 0.0:
        hi *= 2.0
    while lo > 1e-3 and excess(lo) <= 0.0:
        lo /= 2.0
    if excess(lo) <= 0.0:
        return round_up(lo)
    return round_up(_smallest_root(excess, lo, hi))


# ----------------------------------------------------------------------------------------
# zCDP
# ----------------------------------------------------------------------------------------


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ such that ρ-zCDP implies (ε, δ)-DP by the accountant's RDP conversion.

    Used to calibrate releases accounted in zCDP (e.g. vector-valued discrete Gaussian
    noise): σ = Δ₂ / sqrt(2ρ). Aims ``CALIBRATION_MARGIN`` inside ε, like every calibration.

    Notes
    -----
    **Privacy.** A release calibrated to ρ-zCDP with the returned ρ is (ε, δ)-DP by
    the accountant's own conversion, with a margin inside ε: calibration and
    accounting agree.
    """
    from dpsk.accounting._rdp import ORDERS, rdp_to_epsilon

    target = float(epsilon) * (1.0 - CALIBRATION_MARGIN)
    # At ρ -> 0 the conversion still costs min_α log(1 - 1/α) - (log δ + log α)/(α - 1) > 0
    # (the orders are finite): below that floor no ρ > 0 qualifies, and a search for the
    # root would halve ρ forever.
    floor = rdp_to_epsilon(np.zeros_like(ORDERS), delta)
    if floor >= target:
        raise ValueError(
            f"epsilon={epsilon} is too small for delta={delta} in zCDP: the accountant's RDP conversion "
            f"costs at least {floor:.3g} at this delta for any rho > 0; increase epsilon or delta"
        )
    return _zcdp_root(target, float(delta))


@_memoised
def _zcdp_root(target, delta):
    """The largest ρ whose zCDP converts to at most ``target`` at δ (see :func:`zcdp_rho`)."""
    from dpsk.accounting._rdp import ORDERS, rdp_to_epsilon

    return _largest_root(lambda r: rdp_to_epsilon(r * ORDERS, delta) - target)


# ----------------------------------------------------------------------------------------
# Randomized response and subsampling
# ----------------------------------------------------------------------------------------


def randomized_response_keep_probability(epsilon: float, num_categories: int = 2) -> float:
    """P(report the true category) of ε-DP k-ary randomized response: e^ε / (e^ε + k - 1).

    Notes
    -----
    **Privacy.** Keeping the true category with this probability, and otherwise
    reporting one of the k − 1 others uniformly, is ε-DP for replacing one
    respondent's category (local differential privacy).
    """
    # 1 / (1 + (k-1) e^{-ε}) avoids overflow for large ε.
    return 1.0 / (1.0 + (num_categories - 1) * math.exp(-float(epsilon)))


def amplified_epsilon(epsilon: float, sampling_probability: float) -> float:
    """ε after subsampling with probability q [BBG18]: log(1 + q(e^ε - 1)), rounded up.

    Holds for Poisson sampling under add/remove neighbours and for sampling without
    replacement under substitution (q = sample size / population size); δ becomes qδ.

    Notes
    -----
    **Privacy.** Rounded up. Valid only if the subsample is drawn with secure
    randomness and is not released: Poisson sampling under add/remove neighbours, or
    sampling without replacement under substitution (q = sample size / population
    size); δ becomes qδ.
    """
    epsilon, q = float(epsilon), float(sampling_probability)
    if q >= 1.0 or epsilon == 0.0:
        return epsilon
    if epsilon > 700.0:  # e^ε overflows; log(q e^ε (1 + (1-q)/(q e^ε))) <= ε + log q + 1e-300
        return round_up(epsilon + math.log(q) + math.log1p((1.0 - q) * math.exp(-epsilon) / q))
    return min(epsilon, round_up(math.log1p(q * math.expm1(epsilon))))


def deamplified_epsilon(epsilon: float, sampling_probability: float) -> float:
    """The inverse of :func:`amplified_epsilon`: log(1 + (e^ε - 1)/q), rounded down.

    The largest inner ε whose amplification by sampling with probability q is at most ``epsilon``.
    """
    epsilon, q = float(epsilon), float(sampling_probability)
    if q >= 1.0 or epsilon == 0.0 or math.isinf(epsilon):
        return epsilon
    if epsilon > 700.0:  # e^ε overflows: log((e^ε - 1 + q)/q) = ε - log q + log1p(-(1-q)e^-ε)
        return round_down(epsilon - math.log(q) + math.log1p(-(1.0 - q) * math.exp(-epsilon)))
    return round_down(math.log1p(math.expm1(epsilon) / q))


# ----------------------------------------------------------------------------------------
# Exact privacy profiles δ(ε) of single pure-DP releases
#
# δ(ε) is the hockey-stick divergence sup_S P[M(D) ∈ S] - e^ε P[M(D') ∈ S] of the
# worst-case pair of neighbours; it is non-increasing and 0 from the release's pure ε on.
# The accountant uses these curves for single releases (tighter than ε-DP alone, whose
# worst case is randomized response) and inverts them with epsilon_from_delta.
# ----------------------------------------------------------------------------------------


def laplace_delta(epsilon: float, noise_multiplier: float) -> float:
    """δ(ε) of Laplace noise of scale ``noise_multiplier × Δ₁``, exactly.

    With ε₀ = 1 / noise_multiplier: δ(ε) = 1 - exp((ε - ε₀)/2) for ε < ε₀, 0 beyond
    (Laplace(0, b) against Laplace(Δ₁, b)). ε - ε₀ is formed exactly, so δ keeps its
    relative accuracy near ε₀. Not rounded.
    """
    if math.isinf(epsilon):
        return 0.0
    gap = float(Fraction(epsilon) - 1 / Fraction(noise_multiplier))  # ε - ε₀
    return -math.expm1(gap / 2.0) if gap < 0.0 else 0.0


def discrete_laplace_delta(epsilon: float, scale: float, sensitivity: int = 1) -> float:
    """δ(ε) of discrete Laplace noise P(k) ∝ exp(-|k|/scale) on an integer query of sensitivity s, exactly.

    For neighbours at distance s the privacy loss of output k is ε₀ = s/scale for k <= 0,
    (s - 2k)/scale in between and -ε₀ for k >= s. Summing (P(k) - e^ε Q(k)) over the
    outputs whose loss exceeds ε, i.e. k <= K = ⌈(s - ε·scale)/2⌉ - 1, with r = e^{-1/scale}:

    δ(ε) = [1 - e^{ε - (s-K)/scale} + r (1 - e^{-K/scale})] / (1 + r)   for ε < ε₀, else 0.

    Both bracketed terms are >= 0 and computed with expm1 (exponents formed exactly), so
    δ is accurate relative to itself. For s = 1 this is randomized response's curve; as
    s and scale grow with s/scale fixed it tends to the Laplace curve. Not rounded.
    """
    if math.isinf(epsilon):
        return 0.0
    s, b = Fraction(int(sensitivity)), Fraction(scale)
    eps = Fraction(epsilon)
    if eps * b >= s:
        return 0.0
    k = math.ceil((s - eps * b) / 2) - 1  # >= 0 since ε < ε₀
    r = math.exp(-1.0 / float(b))
    upper = -math.expm1(float(eps - (s - k) / b))
    lower = -math.expm1(-float(k / b))
    return (upper + r * lower) / (1.0 + r)


def randomized_response_delta(epsilon: float, rr_epsilon: float, num_categories: int = 2) -> float:
    """δ(ε) of ε₀-DP k-ary randomized response (replace one respondent's category), exactly.

    Only the reported true category is more likely under one neighbour:
    δ(ε) = (e^ε₀ - e^ε) / (e^ε₀ + k - 1) for ε < ε₀, 0 beyond. Not rounded.
    """
    epsilon, rr_epsilon = float(epsilon), float(rr_epsilon)
    if epsilon >= rr_epsilon:
        return 0.0
    return -math.expm1(epsilon - rr_epsilon) / (1.0 + (num_categories - 1) * math.exp(-rr_epsilon))


def bounded_range_delta(epsilon: float, br_epsilon: float) -> float:
    """δ(ε) of an ε₀-bounded-range release (e.g. the exponential mechanism): a tight upper bound.

    For each pair of neighbours the privacy loss lies in [t - ε₀, t] for some t in
    [0, ε₀]; the hockey-stick divergence, convex in e^{-loss}, is largest for the
    two-point loss distribution, and maximising over t gives (cf. [DDR20])

    δ(ε) = (e^{ε₀/2} - e^{ε/2})² / (e^ε₀ - 1)   for ε < ε₀, 0 beyond,

    i.e. tanh(ε₀/4) at ε = 0, half-way to ε₀-DP's tanh(ε₀/2). Not rounded.
    """
    epsilon, br_epsilon = float(epsilon), float(br_epsilon)
    if epsilon >= br_epsilon:
        return 0.0
    return math.expm1((epsilon - br_epsilon) / 2.0) ** 2 / -math.expm1(-br_epsilon)


def epsilon_from_delta(delta_of: Callable[[float], float], delta: float, epsilon_max: float) -> float:
    """The smallest ε >= 0 with ``delta_of(ε) <= delta``, rounded up.

    Parameters
    ----------
    delta_of : callable
        A non-increasing privacy profile ε ↦ δ(ε) with ``delta_of(epsilon_max) == 0``.
    delta : float
    epsilon_max : float
        A finite ε at which the profile is 0 (the release's pure ε, rounded up).
    """
    delta = float(delta)
    if delta >= 1.0 or delta_of(0.0) <= delta:
        return 0.0
    if delta <= 0.0:
        return float(epsilon_max)
    return round_up(_smallest_root(lambda e: delta_of(e) - delta, 0.0, float(epsilon_max)))
