# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Composition theorems: ε-DP releases [KOV15], and basic composition of groups of releases.

Pure functions of numbers and callables: the ledger state
(:mod:`dpsk.accounting._ledger_state`) supplies its running sums and per-family guarantee
functions, and these turn them into an ε at a given δ or a δ at a given ε.

References
----------
.. [KOV15] P. Kairouz, S. Oh and P. Viswanath. "The composition theorem for differential
   privacy." ICML 2015 / IEEE Trans. Inf. Theory 2017.
"""

import math
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize_scalar

from dpsk.accounting import _calibration as cal
from dpsk.accounting._rdp import log_binom
from dpsk.accounting._sums import fraction_up, sum_up

__all__ = [
    "basic_delta",
    "basic_epsilon",
    "homogeneous_epsilon",
    "homogeneous_log_delta",
    "kov_closed_form_delta",
    "kov_closed_form_epsilon",
    "smallest_delta",
]

#: Steps of the grid on which :func:`basic_delta` splits ε between groups.
_EPSILON_SPLITS = 32

#: Fractions of δ_c tried for each group in :func:`basic_epsilon`.
_SHARES = np.array([0.0, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0])


# ----------------------------------------------------------------------------------------
# ε-DP releases [KOV15]
# ----------------------------------------------------------------------------------------


def kov_closed_form_epsilon(sum_eps, sum_sq, sum_kov, delta):
    """Heterogeneous ε-DP releases, composed with slack δ [KOV15, Thm 3.5]."""
    if delta <= 0.0:
        return math.inf
    a = sum_kov + math.sqrt(2.0 * sum_sq * math.log(math.e + math.sqrt(sum_sq) / delta))
    b = sum_kov + math.sqrt(2.0 * sum_sq * math.log(1.0 / delta))
    return min(a, b, sum_eps)


def kov_closed_form_delta(sum_kov, sum_sq, epsilon):
    """The inverse of :func:`kov_closed_form_epsilon`: the smallest δ for which either of its
    two bounds is at most ε (1 if neither is)."""
    slack = epsilon - sum_kov
    if slack <= 0.0 or sum_sq <= 0.0:
        return 1.0
    exponent = slack * slack / (2.0 * sum_sq)
    best = math.exp(-exponent)  # ε = Σkov + sqrt(2 Σε² log(1/δ))
    if exponent > 1.0:  # ε = Σkov + sqrt(2 Σε² log(e + sqrt(Σε²)/δ))
        with np.errstate(over="ignore"):
            best = min(best, math.sqrt(sum_sq) / np.expm1(exponent - 1.0) / math.e)
    return min(1.0, float(best))


def homogeneous_log_delta(eps0, k, eps):
    """log δ(ε) of the optimal composition of k ε0-DP releases [KOV15, Thm 3.3].

    The k-fold composition of binary randomized response is the worst case, so
    δ(ε) = Σ_{j: (k-2j)ε0 > ε} C(k,j) (e^{(k-j)ε0} - e^{ε + jε0}) / (1 + e^{ε0})^k.
    Only j within 19·sqrt(k) of the binomial mean are summed; the rest is bounded by
    Hoeffding's inequality (below e^-700) and added.
    """
    # P(one RR release reports the "wrong" side) = 1/(1 + e^ε0), without overflow for ε0 > 709.
    p_other = math.exp(-eps0) / (1.0 + math.exp(-eps0))
    mean = k * p_other
    width = 19.0 * math.sqrt(k) + 2.0
    j_lo = max(0, int(math.floor(mean - width)))
    j_hi = min(k, int(math.ceil(mean + width)), int(math.ceil((k - eps / eps0) / 2.0)) - 1)
    if j_hi < j_lo:
        return math.log(2.0) - 2.0 * width * width / k
    j = np.arange(j_lo, j_hi + 1, dtype=float)
    gap = (k - 2.0 * j) * eps0 - eps
    j, gap = j[gap > 0], gap[gap > 0]
    if j.size == 0:
        return math.log(2.0) - 2.0 * width * width / k
    log_norm = k * (eps0 + math.log1p(math.exp(-eps0)))  # k log(1 + e^ε0)
    logs = log_binom(float(k), j) + (k - j) * eps0 - log_norm + np.log(-np.expm1(-gap))
    return float(np.logaddexp(np.logaddexp.reduce(logs), math.log(2.0) - 2.0 * width * width / k))


def homogeneous_epsilon(eps0, k, delta):
    """Smallest ε with the optimal k-fold composition of ε0-DP being (ε, δ)-DP (rounded up)."""
    if delta <= 0.0:
        return fraction_up(Fraction(eps0) * k)
    log_delta = math.log(delta)
    total = eps0 * k
    if homogeneous_log_delta(eps0, k, 0.0) <= log_delta:
        return 0.0
    if homogeneous_log_delta(eps0, k, total) > log_delta:
        return fraction_up(Fraction(eps0) * k)
    eps = cal._smallest_root(lambda e: homogeneous_log_delta(eps0, k, e) - log_delta, 0.0, total)
    return cal.round_up(eps)


def smallest_delta(epsilon_of, epsilon):
    """The smallest δ in [0, 1] with ``epsilon_of(δ) <= epsilon``, for a non-increasing ``epsilon_of``.

    Bisection in log δ; the result is a δ at which ``epsilon_of`` was evaluated and certified.
    """
    if epsilon_of(0.0) <= epsilon:
        return 0.0
    if epsilon_of(1.0) > epsilon:
        return 1.0
    lo, hi = math.log(5e-324), 0.0
    if epsilon_of(math.exp(lo)) <= epsilon:
        return math.exp(lo)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        if epsilon_of(math.exp(mid)) <= epsilon:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


# ----------------------------------------------------------------------------------------
# Basic composition of groups, at the best split of δ (or of ε)
# ----------------------------------------------------------------------------------------


def basic_epsilon(functions, delta_c):
    """Basic composition of groups, each at its share of δ_c: the best split on a fixed grid.

    ``functions`` holds one ε(δ) function per group present. The grid of shares is the
    same whatever the ledger holds, so the result can only grow when releases are added
    (each group's ε at a given share does).
    """
    if not functions:
        return 0.0
    if len(functions) == 1:
        return functions[0](delta_c)
    if delta_c <= 0.0:
        return sum_up([f(0.0) for f in functions])
    shares = [cal.round_down(w * delta_c) for w in _SHARES]
    table = np.array([[f(s) for s in shares] for f in functions])
    total = table[0]
    weight = _SHARES
    for row in table[1:]:
        total = np.add.outer(total, row).ravel()
        weight = np.add.outer(weight, _SHARES).ravel()
    # Additive split of δ_c is valid: basic composition adds the δ's.
    with np.errstate(invalid="ignore"):
        total = np.where(weight <= 1.0 + 1e-12, total, np.inf)
    best = int(np.argmin(total))
    if not np.isfinite(total[best]):
        return math.inf
    index = np.unravel_index(best, (len(_SHARES),) * len(functions))
    return sum_up([table[i, j] for i, j in enumerate(index)])


def basic_delta(groups, epsilon):
    """Basic composition of groups in the δ direction: Σ δᵢ(εᵢ), minimised over Σ εᵢ = ε.

    ``groups`` holds, for each group present, its δ function and the ε at which its δ
    is 0 (its pure ε, or inf). The split of ε is searched on a uniform grid of
    ``_EPSILON_SPLITS`` steps; for two groups, also where one group gets exactly its
    pure ε, and by a bounded scalar minimisation around the best grid point.
    (:func:`basic_epsilon` splits δ instead; an optimal split of ε is at least as tight,
    so the two directions agree up to the resolution of the searches.)
    """
    functions = [f for f, _ in groups]
    if not functions:
        return 0.0
    if len(functions) == 1 or math.isinf(epsilon):
        return min(1.0, math.fsum(f(epsilon) for f in functions))
    fractions = np.linspace(0.0, 1.0, _EPSILON_SPLITS + 1)
    table = np.array([[f(epsilon * x) for x in fractions] for f in functions])
    # Min-plus convolution: total[j] = smallest Σ δᵢ with the shares adding up to j steps.
    total = table[0]
    for row in table[1:]:
        total = np.array([np.min(total[: j + 1] + row[j::-1]) for j in range(fractions.size)])
    best = float(total[-1])
    if len(functions) > 2 or best == 0.0:
        return min(1.0, best)
    first, second = functions

    def split(a):
        return first(a) + second(max(epsilon - a, 0.0))

    candidates = [a for a in (groups[0][1], epsilon - groups[1][1]) if 0.0 <= a <= epsilon]
    j = int(np.argmin(table[0] + table[1][::-1]))
    found = minimize_scalar(
        split,
        bounds=(fractions[max(j - 1, 0)] * epsilon, fractions[min(j + 1, _EPSILON_SPLITS)] * epsilon),
        method="bounded",
        options={"xatol": 1e-12 * max(epsilon, 1e-300)},
    )
    if found.success:
        candidates.append(float(found.x))
    return min(1.0, best, *(split(a) for a in candidates))
