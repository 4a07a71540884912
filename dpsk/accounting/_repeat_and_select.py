# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Repeat-and-select: the privacy of the best of a random number of private runs.

A private algorithm Q (one training run that also releases a private score) is run K
times on the same data, with K drawn independently of the data from a truncated
negative binomial distribution, and only the best run is released. The cost is a
small multiple of Q's, whatever the mean of K, whereas releasing the best of a *fixed*
number k of runs costs as much as k runs (Liu & Talwar 2019; Papernot & Steinke 2022).

The distribution D(η, γ) on {1, 2, ...}, for a shape η >= 0 and γ in (0, 1), has
P[K = k] ∝ (1 - γ)^k Π_{l<k} (l + η)/(l + 1): η = 0 is the logarithmic distribution,
η = 1 the geometric one, any η > 0 a negative binomial conditioned on K >= 1. Its mean
is η(1 - γ)/(γ(1 - γ^η)) (η > 0) or (1/γ - 1)/log(1/γ) (η = 0).

Bound used [PS22, Thm 2]: if Q is (λ, ε(λ))-RDP for every λ, the best of K ~ D(η, γ) runs
is (λ, ε'(λ))-RDP with

    ε'(λ) = ε(λ) + (1 + η) min_λ̂ [(1 - 1/λ̂) ε(λ̂) + log(1/γ)/λ̂] + log E[K] / (λ - 1).

The minimum is over λ̂ in [1, ∞): the grid of orders, λ̂ = 1 (where the first term
vanishes) and, when Q is ε₀-DP, the limit λ̂ → ∞ (which gives (1 + η) ε₀). As λ → ∞
the bound tends to ε₀ + (1 + η) min_λ̂[...] ≤ (2 + η) ε₀: a pure-DP guarantee (Liu and
Talwar's 3ε₀ for the geometric distribution).

References
----------
.. [LT19] J. Liu and K. Talwar. "Private selection from private candidates." STOC 2019.
.. [PS22] N. Papernot and T. Steinke. "Hyperparameter tuning with Renyi differential
   privacy." ICLR 2022.
"""

import math

import numpy as np

from dpsk.accounting import _calibration as cal
from dpsk.accounting._rdp import ORDERS

__all__ = ["best_of_random_runs_rdp", "stopping_gamma", "stopping_mean"]


def stopping_mean(gamma, shape):
    """E[K] for K ~ D(``shape``, ``gamma``) (see the module docstring)."""
    gamma, shape = float(gamma), float(shape)
    if shape == 0.0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    # η(1 - γ)/(γ(1 - γ^η)), with 1 - γ^η = -expm1(η log γ) computed accurately.
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


def stopping_gamma(mean, shape):
    """The γ for which D(``shape``, γ) has mean ``mean`` (> 1), by bisection.

    E[K] decreases in γ. The result is the bisection's upper end, so its mean is at most
    ``mean`` (to about 1e-15 relative); :func:`best_of_random_runs_rdp` charges for
    ``max(mean, E[K](γ))`` anyway.
    """
    mean, shape = float(mean), float(shape)
    if not mean > 1.0 or not math.isfinite(mean):
        raise ValueError(f"the mean number of runs must be finite and > 1, got {mean}")
    if not shape >= 0.0 or not math.isfinite(shape):
        raise ValueError(f"the shape must be finite and >= 0, got {shape}")
    lo, hi = 0.0, 1.0  # mean(lo) = inf > mean > 1 = mean(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if stopping_mean(mid, shape) > mean:
            lo = mid
        else:
            hi = mid
    return hi


def best_of_random_runs_rdp(rdp, mean, shape, *, pure_epsilon=None, orders=ORDERS):
    """RDP curve (and pure ε) of releasing the best of K ~ D(``shape``, γ) runs [PS22, Thm 2].

    Parameters
    ----------
    rdp : ndarray of shape (n_orders,)
        RDP curve of one run on ``orders`` (``inf`` where unknown).
    mean : float
        E[K] > 1; γ is :func:`stopping_gamma` of it (the γ the sampler must use).
    shape : float
        η >= 0.
    pure_epsilon : float or None, default=None
        ε₀ if one run is ε₀-DP (enables the λ̂ → ∞ term and the pure bound).
    orders : ndarray, default=ORDERS

    Returns
    -------
    curve : ndarray of shape (n_orders,)
        The RDP curve of the best run, rounded up, non-decreasing in the order.
    pure : float or None
        A pure-DP ε of the best run (``None`` without ``pure_epsilon``).
    """
    rdp = np.asarray(rdp, dtype=np.float64)
    orders = np.asarray(orders, dtype=np.float64)
    gamma = stopping_gamma(mean, shape)
    log_mean = math.log(max(float(mean), stopping_mean(gamma, shape)))
    log_inv_gamma = -math.log(gamma)
    with np.errstate(invalid="ignore"):
        terms = (1.0 - 1.0 / orders) * rdp + log_inv_gamma / orders
    candidates = [log_inv_gamma, float(np.nanmin(terms))]  # λ̂ = 1, and the grid
    if pure_epsilon is not None:
        candidates.append(float(pure_epsilon))  # λ̂ → ∞
    extra = cal.round_up((1.0 + float(shape)) * min(candidates))
    with np.errstate(invalid="ignore", divide="ignore"):
        curve = rdp + extra + log_mean / (orders - 1.0)
    curve = np.where(np.isnan(curve), np.inf, curve)
    # RDP is non-decreasing in the order: a bound at a larger order holds at every smaller one.
    curve = np.minimum.accumulate(curve[::-1])[::-1]
    curve = np.array([cal.round_up(c) for c in curve])
    pure = None
    if pure_epsilon is not None:
        pure = cal.round_up(float(pure_epsilon) + extra)
    return curve, pure
