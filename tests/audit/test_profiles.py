# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy profiles of claims: the accountant's curve, on a grid that covers all that is visible.

The curves themselves are tested in tests/accounting/test_get_delta.py (exact values,
dp_accounting cross-checks); here, what the audit adds: the grid, bare (ε, δ) claims, and
that claims are never looser than the basic composition the audit used to derive itself.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpsk.accounting import (
    ApproxDPEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    ExponentialEvent,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    PrivacyEvent,
    PureDPEvent,
    SelfComposedEvent,
    ZCDPEvent,
    get_delta,
)
from dpsk.audit import privacy_profile

EVENTS = [
    LaplaceEvent(0.5),
    GaussianEvent(2.0),
    DiscreteGaussianEvent(3.0, 1),
    ExponentialEvent(1.0),
    ZCDPEvent(0.1),
    ApproxDPEvent(1.0, 1e-3),
    ComposedEvent((LaplaceEvent(1.0), LaplaceEvent(2.0))),
    ComposedEvent((LaplaceEvent(1.0), GaussianEvent(2.0))),
    SelfComposedEvent(LaplaceEvent(4.0), 5),
    ParallelEvent((LaplaceEvent(1.0), LaplaceEvent(0.5))),
]


@pytest.mark.parametrize("claim", EVENTS, ids=repr)
def test_event_profile_is_the_accountants_on_a_grid_covering_the_visible_curve(claim):
    grid, deltas = privacy_profile(claim)
    assert grid[0] == 0.0 and np.all(np.diff(grid) > 0)
    np.testing.assert_allclose(np.diff(grid), grid[1] - grid[0])
    np.testing.assert_array_equal(deltas, get_delta(claim, grid))
    assert np.all((deltas >= 0) & (deltas <= 1)) and np.all(np.diff(deltas) <= 1e-12)
    # Beyond the grid nothing is visible: δ is within 1e-12 of its floor; and the grid
    # is no longer than needed: δ at 90% of its end is still visibly above the floor.
    floor = get_delta(claim, math.inf)
    assert deltas[-1] <= floor + 1.1e-12
    assert get_delta(claim, 0.9 * grid[-1]) > floor + 1e-12


def test_bare_pure_claim_is_randomized_response():
    epsilon = 1.0
    grid, deltas = privacy_profile((epsilon, 0.0))
    assert grid[-1] == epsilon and deltas[-1] == 0.0
    p = math.exp(epsilon) / (1 + math.exp(epsilon))  # randomized response: P[truth]
    np.testing.assert_allclose(deltas, np.maximum(p - np.exp(grid) * (1 - p), 0.0), rtol=1e-11, atol=1e-15)
    assert privacy_profile((0.0, 0.0))[1].tolist() == [0.0]


def test_bare_approximate_claim_adds_delta():
    grid, deltas = privacy_profile((1.0, 0.01))
    assert grid[-1] == 1.0
    assert deltas[-1] == pytest.approx(0.01)
    assert deltas[0] == pytest.approx(0.01 + 0.99 * math.tanh(0.5))


def test_parallel_takes_the_worst_part():
    grid, deltas = privacy_profile(ParallelEvent((LaplaceEvent(1.0), LaplaceEvent(0.5))))
    worst_grid, worst_deltas = privacy_profile(LaplaceEvent(0.5))
    np.testing.assert_allclose(grid, worst_grid)
    np.testing.assert_allclose(deltas, worst_deltas, atol=1e-12)


@pytest.mark.parametrize("scales", [(1.0, 2.0), (2.0, 2.0), (0.5, 3.0, 4.0)])
def test_composed_claims_are_at_least_as_tight_as_basic_composition(scales, pld_switch):
    """The audit's own former curve: basic composition of exact Laplace curves (min over the
    split of ε' on the grid), or ε-DP's curve for the total ε; the accountant's is never looser,
    so auditing against it loses no power."""
    claim = ComposedEvent(tuple(LaplaceEvent(b) for b in scales))
    grid, deltas = privacy_profile(claim)
    basic = np.zeros_like(grid)
    for b in scales:
        # Laplace(b) on the grid: 1 − e^{(ε' − 1/b)/2}, 0 beyond 1/b.
        part = -np.expm1(np.minimum(grid - 1.0 / b, 0.0) / 2.0)
        basic = np.array([np.min(basic[: i + 1] + part[i::-1]) for i in range(grid.size)])
    total = sum(1.0 / b for b in scales)
    pure = np.maximum(-np.expm1(grid - total), 0.0) / (1.0 + math.exp(-total))
    old = np.minimum(basic, pure)
    assert np.all(deltas <= old * (1 + 1e-9) + 1e-12)


def test_gaussian_claim_matches_an_independent_formula():
    sigma = 3.7306
    grid, deltas = privacy_profile(GaussianEvent(sigma))
    expected = stats.norm.cdf(0.5 / sigma - grid * sigma) - np.exp(grid) * stats.norm.cdf(-0.5 / sigma - grid * sigma)
    np.testing.assert_allclose(deltas, expected, rtol=1e-9, atol=1e-15)


def test_bad_claims_are_rejected():
    with pytest.raises(ValueError, match="epsilon"):
        privacy_profile((-1.0, 0.0))
    with pytest.raises(ValueError, match="delta"):
        privacy_profile((1.0, 1.0))
    with pytest.raises(TypeError):
        privacy_profile(1.0)

    class Unknown(PrivacyEvent):
        pass

    with pytest.raises(TypeError, match="Unknown"):
        privacy_profile(Unknown())


def test_pure_event_zero():
    grid, deltas = privacy_profile(PureDPEvent(0.0))
    assert np.all(deltas == 0.0)
