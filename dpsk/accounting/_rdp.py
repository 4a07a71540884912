# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Rényi-DP curves of single releases, and the conversion from RDP to (ε, δ).

Every curve is evaluated on one fixed grid of orders, :data:`ORDERS`, so curves of
different releases add elementwise (RDP composes additively, Mironov 2017). Curves are
upper bounds: a value may be ``inf`` where nothing is known.

References
----------
.. [M17] I. Mironov. "Rényi differential privacy." CSF 2017.
.. [MTZ19] I. Mironov, K. Talwar and L. Zhang. "Rényi differential privacy of the sampled
   Gaussian mechanism." 2019.
.. [ZW19] Y. Zhu and Y.-X. Wang. "Poisson subsampled Rényi differential privacy." ICML 2019.
.. [CKS20] C. Canonne, G. Kamath and T. Steinke. "The discrete Gaussian for differential
   privacy." NeurIPS 2020 (Prop. 12: the RDP → (ε, δ) conversion used here).
.. [S24] T. Steinke. "Tight RDP & zCDP bounds from pure DP." DifferentialPrivacy.org, 2024.
.. [CR21] M. Cesar and R. Rogers. "Bounding, concentrating, and truncating: unifying
   privacy loss composition for data analytics." ALT 2021.
"""

import math

import numpy as np
from scipy.special import gammaln, log_ndtr

__all__ = [
    "ORDERS",
    "log_binom",
    "rdp_bounded_range",
    "rdp_discrete_laplace",
    "rdp_from_points",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_poisson_gaussian",
    "rdp_poisson_subsampled",
    "rdp_pure",
    "rdp_randomized_response",
    "rdp_to_delta",
    "rdp_to_epsilon",
    "rdp_zcdp",
]

#: The Rényi orders every curve is evaluated on: fine near 1 (large compositions), the
#: integers up to 64 (subsampled mechanisms), then sparse up to 4096 (small compositions).
ORDERS = np.concatenate(
    [
        1.0 + np.arange(1, 10) / 100.0,
        1.0 + np.arange(1, 100) / 10.0,
        np.arange(11.0, 65.0),
        np.array([72, 80, 96, 112, 128, 160, 192, 256, 384, 512, 768, 1024, 2048, 4096], dtype=float),
    ]
)
ORDERS.setflags(write=False)

_INTEGER_ORDERS = ORDERS[ORDERS == np.floor(ORDERS)].astype(np.int64)
#: Largest order at which the generic subsampling bound is evaluated (its cost is quadratic).
_MAX_GENERIC_ORDER = 256


def rdp_gaussian(noise_multiplier, orders=ORDERS):
    """Gaussian noise with σ = noise_multiplier × Δ₂: ε(α) = α / (2 σ²) [M17]."""
    return np.asarray(orders, dtype=float) / (2.0 * float(noise_multiplier) ** 2)


def rdp_zcdp(rho, orders=ORDERS):
    """ρ-zCDP: ε(α) = ρ α."""
    return float(rho) * np.asarray(orders, dtype=float)


def rdp_laplace(noise_multiplier, orders=ORDERS):
    """Laplace noise with scale b = noise_multiplier × Δ₁, exactly [M17, Prop. 6].

    ε(α) = 1/(α-1) log(α/(2α-1) e^{(α-1)/b} + (α-1)/(2α-1) e^{-α/b}), written as
    1/b + log1p((α-1)/(2α-1) · expm1((1-2α)/b)) / (α-1) for accuracy.
    """
    a = np.asarray(orders, dtype=float)
    inv_b = 1.0 / float(noise_multiplier)
    return inv_b + np.log1p((a - 1.0) / (2.0 * a - 1.0) * np.expm1((1.0 - 2.0 * a) * inv_b)) / (a - 1.0)


def rdp_discrete_laplace(scale, sensitivity, orders=ORDERS):
    """Discrete Laplace noise P(k) ∝ r^|k|, r = e^{-1/scale}, on an integer query of sensitivity s.

    Exactly, by summing the three geometric series of E_Q[(P/Q)^α] (outputs below 0,
    between 0 and s, above s), with ρ = r^{2α-1}:

    ε(α) = 1/(α-1) log((1-r)/(1+r) · [(r^{(1-α)s} + r^{αs})/(1-r) + r^{(1-α)s} ρ (1-ρ^{s-1})/(1-ρ)]).

    O(1) whatever s: lattice Laplace releases have s near 2⁴⁰. Tends to the continuous
    Laplace curve as s and scale grow with s/scale fixed.
    """
    a = np.asarray(orders, dtype=float)
    s = float(sensitivity)
    lam = 1.0 / float(scale)  # -log r
    log_1mr = math.log(-math.expm1(-lam))
    log_1pr = math.log1p(math.exp(-lam))
    head = (a - 1.0) * s * lam  # log r^{(1-α)s}
    tails = np.logaddexp(head, -a * s * lam) - log_1mr
    if s > 1.0:
        log_rho = -(2.0 * a - 1.0) * lam
        middle = head + log_rho + np.log(-np.expm1((s - 1.0) * log_rho)) - np.log(-np.expm1(log_rho))
        tails = np.logaddexp(tails, middle)
    return np.maximum((tails + log_1mr - log_1pr) / (a - 1.0), 0.0)


def rdp_randomized_response(epsilon, num_categories=2, orders=ORDERS):
    """ε-DP k-ary randomized response, exactly (change of one respondent's category).

    With p = e^ε/(e^ε+k-1) and q = 1/(e^ε+k-1):
    ε(α) = 1/(α-1) log(p^α q^{1-α} + q^α p^{1-α} + (k-2) q).
    """
    a = np.asarray(orders, dtype=float)
    eps = float(epsilon)
    log_norm = eps + math.log1p((num_categories - 1) * math.exp(-eps))  # log(e^ε + k - 1)
    terms = [a * eps, (1.0 - a) * eps]
    if num_categories > 2:
        terms.append(np.full_like(a, math.log(num_categories - 2)))
    return (np.logaddexp.reduce(np.stack(terms), axis=0) - log_norm) / (a - 1.0)


def rdp_pure(epsilon, orders=ORDERS):
    """Any ε-DP release: the tight bound, attained by binary randomized response [S24, Thm 4]."""
    return rdp_randomized_response(epsilon, 2, orders)


def rdp_bounded_range(epsilon, orders=ORDERS):
    """The exponential mechanism (ε-bounded range): min(pure-DP curve, α ε²/8) [CR21]."""
    return np.minimum(rdp_pure(epsilon, orders), rdp_zcdp(float(epsilon) ** 2 / 8.0, orders))


def rdp_from_points(given_orders, given_epsilons, orders=ORDERS):
    """A user-given RDP curve moved onto ``orders`` using only monotonicity of ε(α) in α.

    At order α the bound is the given ε at the smallest given order >= α (inf above the
    largest given order).
    """
    given_orders = np.asarray(given_orders, dtype=float)
    given_eps = np.asarray(given_epsilons, dtype=float)
    # Monotone upper envelope: ε at a larger order also bounds every smaller order.
    envelope = np.minimum.accumulate(given_eps[::-1])[::-1]
    idx = np.searchsorted(given_orders, np.asarray(orders, dtype=float), side="left")
    out = np.full(len(idx), np.inf)
    inside = idx < len(given_orders)
    out[inside] = envelope[idx[inside]]
    return out


# ----------------------------------------------------------------------------------------
# Poisson subsampling
# ----------------------------------------------------------------------------------------


def log_binom(n, k):
    """log |C(n, k)| for real n >= 0 and integer k >= 0 (generalised binomial coefficient)."""
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _sgm_log_moment_integer(q, sigma, alpha):
    """log A_α of the sampled Gaussian mechanism for integer α, exactly [MTZ19, Sec. 3.2].

    A_α = Σ_k C(α,k) (1-q)^{α-k} q^k exp((k²-k)/(2σ²)).
    """
    k = np.arange(alpha + 1, dtype=float)
    logs = log_binom(float(alpha), k) + k * math.log(q) + (alpha - k) * math.log1p(-q) + (k * k - k) / (2.0 * sigma**2)
    return float(np.logaddexp.reduce(logs))


def _sgm_log_moment_fractional(q, sigma, alpha, max_terms=2000):
    """An upper bound on log A_α for fractional α [MTZ19, Sec. 3.3].

    The integral defining A_α is split at z0 = σ² log(1/q - 1) + 1/2, where the binomial
    series of each half converges; summing the absolute values of the (eventually
    alternating) generalised binomial terms gives an upper bound. Returns inf when the
    series has not converged within ``max_terms`` terms.
    """
    z0 = sigma**2 * math.log(1.0 / q - 1.0) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    total = -math.inf
    last0 = last1 = -math.inf
    for i in range(max_terms):
        j = alpha - i
        log_coef = log_binom(alpha, float(i))
        s0 = log_coef + i * log_q + j * log_1mq + (i * i - i) / (2.0 * sigma**2) + log_ndtr((z0 - i) / sigma)
        s1 = log_coef + j * log_q + i * log_1mq + (j * j - j) / (2.0 * sigma**2) + log_ndtr((j - z0) / sigma)
        total = float(np.logaddexp(total, np.logaddexp(s0, s1)))
        # Terms decrease geometrically once past the peak: stop when negligible (e^-50).
        if s0 < last0 and s1 < last1 and max(s0, s1) < total - 50.0:
            return total
        last0, last1 = s0, s1
    return math.inf


def _chord_bound(orders, integer_rdp):
    """Upper bounds at (possibly fractional) orders from values at the integers 2, 3, ...

    The cumulant K(α) = (α-1) ε(α) of the privacy loss is convex in α with K(1) = 0, so
    between consecutive integers it lies below the chord. ``integer_rdp[k]`` is ε(k + 2).
    Orders above the last integer get inf.
    """
    orders = np.asarray(orders, dtype=float)
    n_int = len(integer_rdp)
    k_int = np.concatenate([[0.0], integer_rdp * np.arange(1, n_int + 1)])  # K(1), K(2), ...
    lo = np.floor(orders).astype(np.int64)
    out = np.full(len(orders), np.inf)
    # K(lo) is k_int[lo - 1]; a fractional order also needs K(lo + 1) = k_int[lo].
    ok = (lo <= n_int + 1) & ((orders == lo) | (lo <= n_int))
    lo_ok = lo[ok]
    frac = orders[ok] - lo_ok
    k_lo = k_int[lo_ok - 1]
    k_hi = k_int[np.minimum(lo_ok, n_int)]
    with np.errstate(invalid="ignore"):
        k = np.where(frac == 0.0, k_lo, k_lo + frac * (k_hi - k_lo))
    out[ok] = k / (orders[ok] - 1.0)
    return out


def rdp_poisson_gaussian(sampling_probability, noise_multiplier, orders=ORDERS):
    """The sampled Gaussian mechanism (Poisson rate q, noise σ·Δ₂), add/remove relation [MTZ19].

    Exact at integer orders. At fractional orders, the smaller of the [MTZ19] series
    (when it converges) and the chord bound between the neighbouring integer orders.
    """
    q, sigma = float(sampling_probability), float(noise_multiplier)
    orders = np.asarray(orders, dtype=float)
    if q >= 1.0:
        return rdp_gaussian(sigma, orders)
    top = int(math.ceil(orders.max()))
    needed = sorted(({int(math.floor(a)) for a in orders} | {int(math.ceil(a)) for a in orders}) - {1})
    exact = {alpha: _sgm_log_moment_integer(q, sigma, alpha) / (alpha - 1.0) for alpha in needed}
    integer_rdp = np.full(top - 1, np.inf)
    for alpha, value in exact.items():
        integer_rdp[alpha - 2] = value
    out = _chord_bound(orders, integer_rdp)
    for i, alpha in enumerate(orders):
        if alpha != math.floor(alpha):
            out[i] = min(out[i], _sgm_log_moment_fractional(q, sigma, float(alpha)) / (alpha - 1.0))
    # Never above the unsampled Gaussian (subsampling is a pre-processing).
    return np.minimum(np.maximum(out, 0.0), rdp_gaussian(sigma, orders))


def rdp_poisson_subsampled(sampling_probability, inner_rdp, orders=ORDERS):
    """Any mechanism with RDP curve ``inner_rdp(orders)`` on a Poisson subsample of rate q.

    The general upper bound of [ZW19, Thm 6], for integer α >= 2:

    ε'(α) <= 1/(α-1) log((1-q)^{α-1}(αq - q + 1) + C(α,2) q² (1-q)^{α-2} e^{ε(2)}
                          + 3 Σ_{l=3}^{α} C(α,l) (1-q)^{α-l} q^l e^{(l-1) ε(l)}),

    used up to order 256, with the chord bound at fractional orders. Never above the
    inner curve.
    """
    q = float(sampling_probability)
    orders = np.asarray(orders, dtype=float)
    base = np.asarray(inner_rdp(orders), dtype=float)
    if q >= 1.0:
        return base
    int_orders = np.arange(2, _MAX_GENERIC_ORDER + 1)
    inner_int = np.asarray(inner_rdp(int_orders.astype(float)), dtype=float)
    log_q, log_1mq = math.log(q), math.log1p(-q)
    bound = np.full(len(int_orders), np.inf)
    for idx, alpha in enumerate(int_orders):
        l = np.arange(2, alpha + 1, dtype=float)
        logs = log_binom(float(alpha), l) + (alpha - l) * log_1mq + l * log_q + (l - 1.0) * inner_int[: alpha - 1]
        logs[1:] += math.log(3.0)
        head = (alpha - 1) * log_1mq + math.log1p((alpha - 1) * q)
        bound[idx] = float(np.logaddexp(head, np.logaddexp.reduce(logs))) / (alpha - 1.0)
    return np.maximum(np.minimum(base, _chord_bound(orders, bound)), 0.0)


# ----------------------------------------------------------------------------------------
# Conversion
# ----------------------------------------------------------------------------------------


def rdp_to_epsilon(rdp, delta, orders=ORDERS):
    """The smallest ε over ``orders`` such that the RDP curve implies (ε, δ)-DP [CKS20, Prop. 12].

    ε = min_α ε(α) + log((α-1)/α) - (log δ + log α)/(α-1). Not rounded.
    """
    rdp = np.asarray(rdp, dtype=float)
    if delta >= 1.0:
        return 0.0
    if delta <= 0.0:
        return 0.0 if np.all(rdp == 0.0) else math.inf
    a = np.asarray(orders, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        eps = rdp + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    eps = eps[np.isfinite(eps)]
    if eps.size == 0:
        return math.inf
    return max(0.0, float(eps.min()))


def rdp_to_delta(rdp, epsilon, orders=ORDERS):
    """The smallest δ over ``orders`` such that the RDP curve implies (ε, δ)-DP: the inverse of
    :func:`rdp_to_epsilon` [CKS20, Prop. 12].

    δ = min_α exp((α-1)(ε(α) + log(1 - 1/α) - ε) - log α), at most 1. Not rounded.
    """
    rdp = np.asarray(rdp, dtype=float)
    if np.all(rdp == 0.0):
        return 0.0
    if math.isinf(epsilon):
        return 0.0 if np.any(np.isfinite(rdp)) else 1.0
    a = np.asarray(orders, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        log_delta = (a - 1.0) * (rdp + np.log1p(-1.0 / a) - float(epsilon)) - np.log(a)
    log_delta = log_delta[~np.isnan(log_delta)]
    if log_delta.size == 0:
        return 1.0
    return min(1.0, math.exp(min(0.0, float(log_delta.min()))))
