# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy claims as privacy profiles: the curve ε' ↦ δ(ε') a claim implies.

A mechanism M is (ε', δ)-DP on a pair of neighbours (D, D') iff for every event S,
``P[M(D) ∈ S] − e^ε' P[M(D') ∈ S] ≤ δ`` (and the same with D, D' swapped). A claim such as
"ε-DP" or "Gaussian noise with multiplier σ" implies a whole curve of such pairs, its
*privacy profile* δ(ε') (the hockey-stick divergence of its worst-case pair). The audit
checks an event against the whole curve at once: once the confidence bounds on
``P[M(D) ∈ S]`` and ``P[M(D') ∈ S]`` hold, they hold for every ε', so testing the curve
costs no extra multiple-comparison correction, and it finds violations of (ε, δ)
claims at the points of the curve where they are large enough to see (with tiny δ, the
claimed point itself is out of reach of any sample size one can afford).

Closed forms used (ε' ≥ 0; profiles are non-increasing in ε'):

* generic (ε, δ)-DP (Kairouz, Oh & Viswanath 2015, the worst-case mechanism is randomized
  response): δ(ε') = δ + (1 − δ)(e^ε − e^ε')/(1 + e^ε) for ε' < ε, and δ beyond;
* Laplace noise of scale b·Δ₁ (ε = 1/b): δ(ε') = 1 − e^{(ε' − ε)/2} for ε' < ε, 0 beyond;
* Gaussian noise of std σ·Δ₂ (μ = 1/σ; Balle & Wang 2018):
  δ(ε') = Φ(μ/2 − ε'/μ) − e^ε' Φ(−μ/2 − ε'/μ);
* Gaussian events compose exactly (μ² adds up); pure events compose by adding ε; other
  compositions use basic composition (ε₁ + ε₂, δ₁ + δ₂), minimised over the split of ε'
  on the evaluation grid; parallel parts take the pointwise maximum.
"""

import math
import numbers

import numpy as np
from scipy.special import log_ndtr, ndtr

from dpsk.accounting import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    PrivacyEvent,
    PureDPEvent,
    SelfComposedEvent,
)

__all__ = ["privacy_profile"]

# Profiles are evaluated on a uniform grid of ε' with this many points.
_GRID_POINTS = 513
# Beyond the ε' where the claimed δ(ε') falls below this, no affordable sample can see anything.
_NEGLIGIBLE_DELTA = 1e-12


def _generic(epsilon, delta, grid):
    """Profile implied by a bare (ε, δ)-DP guarantee (randomized response is the worst case)."""
    # (e^ε − e^ε')/(1 + e^ε), written to avoid overflow for large ε.
    rr = (1.0 - np.exp(np.minimum(grid - epsilon, 0.0))) / (1.0 + math.exp(-epsilon))
    return delta + (1.0 - delta) * rr


def _laplace(noise_multiplier, grid):
    epsilon = 1.0 / noise_multiplier
    return 1.0 - np.exp(np.minimum(grid - epsilon, 0.0) / 2.0)


def _gaussian(mu, grid):
    if mu == 0.0:
        return np.zeros_like(grid)
    first = ndtr(mu / 2.0 - grid / mu)
    second = np.exp(grid + log_ndtr(-mu / 2.0 - grid / mu))
    return np.clip(first - second, 0.0, 1.0)


def _gaussian_mu(event):
    """μ of a purely Gaussian event (Gaussians compose exactly), or None."""
    if isinstance(event, GaussianEvent):
        return 1.0 / event.noise_multiplier
    if isinstance(event, SelfComposedEvent):
        mu = _gaussian_mu(event.event)
        return None if mu is None else mu * math.sqrt(event.count)
    if isinstance(event, (ComposedEvent, ParallelEvent)):
        mus = [_gaussian_mu(e) for e in event.events]
        if any(mu is None for mu in mus):
            return None
        if isinstance(event, ParallelEvent):
            return max(mus, default=0.0)
        return math.sqrt(sum(mu * mu for mu in mus))
    return None


def _pure_epsilon(event):
    """Total ε of an event made only of pure-DP parts, or None."""
    if isinstance(event, PureDPEvent):
        return float(event.epsilon)
    if isinstance(event, LaplaceEvent):
        return 1.0 / event.noise_multiplier
    if isinstance(event, SelfComposedEvent):
        eps = _pure_epsilon(event.event)
        return None if eps is None else eps * event.count
    if isinstance(event, (ComposedEvent, ParallelEvent)):
        parts = [_pure_epsilon(e) for e in event.events]
        if any(eps is None for eps in parts):
            return None
        return max(parts, default=0.0) if isinstance(event, ParallelEvent) else sum(parts)
    return None


def _basic_composition(first, second):
    """min over splits a + b = ε' (on the grid) of δ₁(a) + δ₂(b): valid for any two profiles."""
    n = first.size
    # totals[i, j] = first[j] + second[i − j] for j ≤ i.
    i, j = np.tril_indices(n)
    totals = np.full((n, n), np.inf)
    totals[i, j] = first[j] + second[i - j]
    return np.minimum(totals.min(axis=1), 1.0)


def _event_profile(event, grid):
    """δ(ε') on ``grid`` (uniform, starting at 0) for a dpsk privacy event."""
    mu = _gaussian_mu(event)
    if mu is not None:
        return _gaussian(mu, grid)
    if isinstance(event, PureDPEvent):
        return _generic(float(event.epsilon), 0.0, grid)
    if isinstance(event, ApproxDPEvent):
        return _generic(float(event.epsilon), float(event.delta), grid)
    if isinstance(event, LaplaceEvent):
        return _laplace(event.noise_multiplier, grid)
    if isinstance(event, SelfComposedEvent):
        return _event_profile(ComposedEvent((event.event,) * int(event.count)), grid)
    if isinstance(event, ParallelEvent):
        profiles = [_event_profile(e, grid) for e in event.events]
        return np.max(profiles, axis=0) if profiles else np.zeros_like(grid)
    if isinstance(event, ComposedEvent):
        profile = np.zeros_like(grid)
        for part in event.events:
            profile = _basic_composition(profile, _event_profile(part, grid))
        pure = _pure_epsilon(event)
        if pure is not None:
            profile = np.minimum(profile, _generic(pure, 0.0, grid))
        return profile
    raise TypeError(
        f"cannot derive a privacy profile from a {type(event).__name__}; pass the claim "
        "as epsilon=..., delta=... instead"
    )


def _upper_epsilon(event):
    """An ε' beyond which the event's δ(ε') is negligible (the end of the evaluation grid)."""
    pure = _pure_epsilon(event)
    if pure is not None:
        return pure
    mu = _gaussian_mu(event)
    if mu is not None:
        # δ(ε') ≤ Φ(μ/2 − ε'/μ) < 1e-12 once μ/2 − ε'/μ < −7.1.
        return mu * (mu / 2.0 + 7.1)
    if isinstance(event, ApproxDPEvent):
        return float(event.epsilon)
    if isinstance(event, SelfComposedEvent):
        return _upper_epsilon(event.event) * event.count
    if isinstance(event, ComposedEvent):
        return sum(_upper_epsilon(e) for e in event.events)
    if isinstance(event, ParallelEvent):
        return max((_upper_epsilon(e) for e in event.events), default=0.0)
    return _event_profile(event, np.zeros(1))  # raises the TypeError above


def privacy_profile(claim):
    """The privacy profile δ(ε') implied by a claim, on a grid of ε'.

    Parameters
    ----------
    claim : PrivacyEvent or tuple (epsilon, delta)
        A dpsk privacy event (its exact profile is used where one is known: Laplace,
        Gaussian and compositions of Gaussians; valid upper bounds otherwise), or a bare
        (ε, δ) guarantee.

    Returns
    -------
    epsilons : ndarray of shape (n_points,)
        Increasing ε' ≥ 0, uniform from 0 and including the claimed ε of a bare claim.
    deltas : ndarray of shape (n_points,)
        δ(ε') implied by the claim at each ε' (non-increasing).

    Notes
    -----
    Every point (ε', δ(ε')) is implied by the claim, so a mechanism that truly satisfies
    the claim satisfies all of them: testing all of them loses no validity.
    """
    if isinstance(claim, PrivacyEvent):
        top = _upper_epsilon(claim)
        grid = np.linspace(0.0, max(top, 1e-6), _GRID_POINTS)
        deltas = np.clip(_event_profile(claim, grid), 0.0, 1.0)
        return grid, deltas
    if not (isinstance(claim, tuple) and len(claim) == 2):
        raise TypeError("claim must be a PrivacyEvent or a tuple (epsilon, delta)")
    epsilon, delta = claim
    if not isinstance(epsilon, numbers.Real) or not (0.0 <= epsilon < math.inf):
        raise ValueError("epsilon must be a finite real number >= 0")
    if not isinstance(delta, numbers.Real) or not (0.0 <= delta < 1.0):
        raise ValueError("delta must be in [0, 1)")
    if epsilon == 0.0:
        grid = np.zeros(1)
    else:
        grid = np.linspace(0.0, float(epsilon), _GRID_POINTS)
        grid[-1] = float(epsilon)  # the claimed point itself, exactly (no rounding)
    return grid, _generic(float(epsilon), float(delta), grid)
