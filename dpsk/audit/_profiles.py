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

The curve itself is never derived here: it is :func:`dpsk.accounting.get_delta`, the
accountant's own δ(ε') for the event (exact for single Laplace, Gaussian, discrete,
randomized-response and exponential-mechanism releases; the accountant's tightest
composition otherwise), so that the audit tests exactly what the accountant charges. A
bare (ε, δ) claim is the event :class:`~dpsk.accounting.ApproxDPEvent` (its curve is
randomized response's, shifted by δ: Kairouz, Oh & Viswanath 2015). What stays here is
the choice of the ε' at which the audit checks the curve.
"""

import math
import numbers

import numpy as np

from dpsk.accounting import ApproxDPEvent, PrivacyEvent, PureDPEvent, get_delta, get_epsilon

__all__ = ["privacy_profile"]

# Profiles are evaluated on a uniform grid of ε' with this many points. The violation
# P_low − e^ε' Q_up − δ(ε') is smooth in ε', so a finer grid gains nothing measurable (the
# validity configurations of privacy_testing.rst gave the same margins with 513 points),
# while every point costs one accountant evaluation (milliseconds for PLD compositions).
_GRID_POINTS = 129
# Beyond the ε' where the claimed δ(ε') is within this of its floor δ(∞), no affordable
# sample can see anything: the grid ends there.
_NEGLIGIBLE_DELTA = 1e-12


def _grid_end(event):
    """The ε' where the event's δ(ε') comes within ``_NEGLIGIBLE_DELTA`` of its floor δ(∞)."""
    floor = get_delta(event, math.inf)
    end = get_epsilon(event, min(1.0, floor + _NEGLIGIBLE_DELTA))
    if not math.isfinite(end):  # pragma: no cover - get_delta and get_epsilon disagree
        raise ValueError(f"cannot find where the privacy profile of {event!r} becomes negligible")
    return end


def privacy_profile(claim):
    """The privacy profile δ(ε') implied by a claim, on a grid of ε'.

    Parameters
    ----------
    claim : PrivacyEvent or tuple (epsilon, delta)
        A dpsk privacy event, whose profile is :func:`dpsk.accounting.get_delta` (exact
        for single Laplace, Gaussian, discrete, randomized-response and
        exponential-mechanism releases; the accountant's tightest valid bound for
        compositions), or a bare (ε, δ) guarantee.

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

    **Privacy.** A function of the claim only (public parameters): no data, no
    budget.
    """
    if isinstance(claim, PrivacyEvent):
        if math.isinf(get_epsilon(claim, 0.5)):
            # No finite ε' even at δ = 1/2: a non-private release (epsilon=inf), whose claim
            # δ(ε') = 1 says nothing any function could violate.
            return np.zeros(1), np.ones(1)
        grid = np.linspace(0.0, max(_grid_end(claim), 1e-6), _GRID_POINTS)
        return grid, get_delta(claim, grid)
    if not (isinstance(claim, tuple) and len(claim) == 2):
        raise TypeError("claim must be a PrivacyEvent or a tuple (epsilon, delta)")
    epsilon, delta = claim
    if not isinstance(epsilon, numbers.Real) or not (0.0 <= epsilon < math.inf):
        raise ValueError("epsilon must be a finite real number >= 0")
    if not isinstance(delta, numbers.Real) or not (0.0 <= delta < 1.0):
        raise ValueError("delta must be in [0, 1)")
    event = ApproxDPEvent(float(epsilon), float(delta)) if delta > 0.0 else PureDPEvent(float(epsilon))
    if epsilon == 0.0:
        grid = np.zeros(1)
    else:
        grid = np.linspace(0.0, float(epsilon), _GRID_POINTS)
        grid[-1] = float(epsilon)  # the claimed point itself, exactly (no rounding)
    return grid, get_delta(event, grid)
