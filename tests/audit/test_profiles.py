# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy profiles of claims, checked against direct numerical integration and dp_accounting."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

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
from dpsk.audit import privacy_profile


def hockey_stick(p, q, eps_prime):
    """∫ (p(x) − e^ε' q(x))₊ dx by quadrature."""
    value, _ = integrate.quad(lambda x: max(p(x) - math.exp(eps_prime) * q(x), 0.0), -60, 60, points=[0, 1], limit=400)
    return value


def at(claim, eps_prime):
    grid, deltas = privacy_profile(claim)
    return float(np.interp(eps_prime, grid, deltas))


@pytest.mark.parametrize("b", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.9])
def test_laplace_profile_matches_integral(b, fraction):
    eps_prime = fraction / b
    expected = hockey_stick(stats.laplace(0, b).pdf, stats.laplace(1, b).pdf, eps_prime)
    assert at(LaplaceEvent(b), eps_prime) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.7306])
@pytest.mark.parametrize("eps_prime", [0.0, 0.2, 1.0])
def test_gaussian_profile_matches_integral(sigma, eps_prime):
    grid, deltas = privacy_profile(GaussianEvent(sigma))
    eps_prime = min(eps_prime, grid[-1])
    expected = hockey_stick(stats.norm(0, sigma).pdf, stats.norm(1, sigma).pdf, eps_prime)
    assert float(np.interp(eps_prime, grid, deltas)) == pytest.approx(expected, abs=2e-5)


def test_gaussian_compositions_are_exact():
    composed = ComposedEvent((GaussianEvent(1.0), GaussianEvent(2.0)))
    single = GaussianEvent(1.0 / math.sqrt(1.0 + 0.25))
    for eps_prime in (0.0, 0.5, 1.5):
        assert at(composed, eps_prime) == pytest.approx(at(single, eps_prime), abs=1e-6)
    assert at(SelfComposedEvent(GaussianEvent(2.0), 4), 0.3) == pytest.approx(at(GaussianEvent(1.0), 0.3), abs=1e-6)


def test_pure_profile_is_randomized_response():
    epsilon = 1.0
    p = math.exp(epsilon) / (1 + math.exp(epsilon))  # randomized response: P[truth]
    for eps_prime in (0.0, 0.4):
        expected = max(p - math.exp(eps_prime) * (1 - p), 0.0)
        assert at(PureDPEvent(epsilon), eps_prime) == pytest.approx(expected, abs=1e-5)  # grid interpolation
    grid, deltas = privacy_profile((epsilon, 0.0))
    assert grid[-1] == epsilon and deltas[-1] == 0.0


def test_approximate_profile_adds_delta():
    assert at((1.0, 0.01), 1.0) == pytest.approx(0.01)
    assert at(ApproxDPEvent(1.0, 0.01), 0.0) == pytest.approx(0.01 + 0.99 * math.tanh(0.5))


def test_parallel_takes_the_worst_part():
    parallel = ParallelEvent((LaplaceEvent(1.0), LaplaceEvent(0.5)))
    grid, deltas = privacy_profile(parallel)
    worst_grid, worst_deltas = privacy_profile(LaplaceEvent(0.5))
    np.testing.assert_allclose(grid, worst_grid)
    np.testing.assert_allclose(deltas, worst_deltas, atol=1e-12)


@pytest.mark.parametrize(
    "claim",
    [
        LaplaceEvent(0.5),
        GaussianEvent(2.0),
        ComposedEvent((LaplaceEvent(1.0), LaplaceEvent(2.0))),
        ComposedEvent((LaplaceEvent(1.0), GaussianEvent(2.0))),
        SelfComposedEvent(LaplaceEvent(4.0), 5),
        (2.0, 1e-3),
    ],
    ids=repr,
)
def test_profiles_are_valid_curves(claim):
    grid, deltas = privacy_profile(claim)
    assert grid[0] == 0.0 and np.all(np.diff(grid) >= 0)
    assert np.all((deltas >= 0) & (deltas <= 1))
    assert np.all(np.diff(deltas) <= 1e-12)


def test_composed_laplace_profile_is_an_upper_bound_of_the_exact_one():
    """Check against an independent accountant: our profile is never below the optimistic PLD estimate."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    exact = pld.from_laplace_mechanism(1.0, sensitivity=1.0, pessimistic_estimate=False, value_discretization_interval=1e-4)
    exact = exact.compose(pld.from_laplace_mechanism(2.0, sensitivity=1.0, pessimistic_estimate=False, value_discretization_interval=1e-4))
    claim = ComposedEvent((LaplaceEvent(1.0), LaplaceEvent(2.0)))
    grid, deltas = privacy_profile(claim)
    for eps_prime, delta in zip(grid[::32], deltas[::32]):
        assert delta >= exact.get_delta_for_epsilon(eps_prime) - 1e-9


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
