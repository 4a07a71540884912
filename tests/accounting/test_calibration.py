# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Single-release formulas against independent computations."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import optimize, stats

from dpsk.accounting import (
    amplified_epsilon,
    classic_gaussian_sigma,
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    discrete_gaussian_sigma,
    discrete_laplace_epsilon,
    discrete_laplace_scale,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_sigma,
    laplace_epsilon,
    laplace_noise_multiplier,
    randomized_response_keep_probability,
    split_epsilon,
)


def _balle_wang_delta(sigma, epsilon, sensitivity=1.0):
    """Balle & Wang (2018) Thm 8, written out directly with scipy.stats (independent code)."""
    a = sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    return stats.norm.cdf(a) - math.exp(epsilon) * stats.norm.cdf(b)


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-5), (0.1, 1e-6), (5.0, 1e-5), (20.0, 1e-10), (0.5, 0.01)])
@pytest.mark.parametrize("sensitivity", [1.0, 3.5])
def test_analytic_gaussian_sigma_solves_the_balle_wang_condition(epsilon, delta, sensitivity):
    sigma = gaussian_sigma(epsilon, delta, sensitivity)
    reference = optimize.brentq(lambda s: _balle_wang_delta(s, epsilon, sensitivity) - delta, 1e-3, 1e4, xtol=1e-14)
    # Calibrated just inside the target (never outside it): at most 1e-8 more noise.
    assert reference <= sigma <= reference * (1 + 1e-8)
    assert _balle_wang_delta(sigma, epsilon, sensitivity) <= delta


def test_analytic_gaussian_reference_value():
    # peers.md §2.5 E (computed independently there): ε=1, δ=1e-5, Δ₂=1 -> σ = 3.7306316.
    assert gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306316, abs=1e-6)


def test_analytic_gaussian_matches_dp_accounting():
    gm = pytest.importorskip("dp_accounting.gaussian_mechanism")
    for epsilon, delta in [(1.0, 1e-5), (3.0, 1e-7), (0.2, 1e-3)]:
        assert gaussian_sigma(epsilon, delta) == pytest.approx(gm.get_sigma_gaussian(epsilon, delta), rel=1e-7)
        mu = 1 / 2.5
        assert gaussian_epsilon(delta, mu) == pytest.approx(gm.get_epsilon_gaussian(2.5, delta), rel=1e-8)


@pytest.mark.parametrize("mu, delta", [(0.3, 1e-5), (1.0, 1e-5), (math.sqrt(1000), 1e-5), (5.0, 1e-12)])
def test_gaussian_epsilon_is_the_smallest_valid_epsilon(mu, delta):
    eps = gaussian_epsilon(delta, mu)
    sigma = 1 / mu
    assert _balle_wang_delta(sigma, eps) <= delta * (1 + 1e-9)
    assert _balle_wang_delta(sigma, eps * (1 - 1e-6)) > delta


def test_gaussian_delta_edge_cases():
    assert gaussian_delta(0.0, 1.0) == pytest.approx(stats.norm.cdf(0.5) - stats.norm.cdf(-0.5))
    assert gaussian_epsilon(1.0, 1.0) == 0.0
    assert gaussian_epsilon(0.0, 1.0) == math.inf
    assert gaussian_epsilon(1e-5, 0.0) == 0.0


def test_classic_gaussian_is_noisier_and_only_for_small_epsilon():
    assert classic_gaussian_sigma(0.5, 1e-5) == pytest.approx(math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5)
    assert classic_gaussian_sigma(0.5, 1e-5) > gaussian_sigma(0.5, 1e-5)
    with pytest.raises(ValueError, match="epsilon < 1"):
        classic_gaussian_sigma(1.0, 1e-5)


@pytest.mark.parametrize("epsilon", [0.1, 0.3, 1 / 3, 0.7, 1e-3, 7.0])
def test_laplace_rounding_never_understates_epsilon(epsilon):
    b = laplace_noise_multiplier(epsilon)
    assert Fraction(1) / Fraction(b) <= Fraction(epsilon)  # the real guarantee fits
    assert laplace_epsilon(b) <= epsilon  # and so does the accountant's figure
    assert Fraction(laplace_epsilon(b)) >= Fraction(1) / Fraction(b)  # which is an upper bound


def test_discrete_laplace_rounding():
    scale = discrete_laplace_scale(0.3, sensitivity=3)
    assert Fraction(3) / Fraction(scale) <= Fraction(0.3)
    assert discrete_laplace_epsilon(scale, 3) <= 0.3


@pytest.mark.parametrize("parts", [2, 3, 7, 10, 1000])
@pytest.mark.parametrize("epsilon", [1.0, 0.3, 2.7])
def test_split_epsilon_rounds_down(parts, epsilon):
    each = split_epsilon(epsilon, parts)
    assert Fraction(each) * parts <= Fraction(epsilon)
    assert Fraction(math.nextafter(each, math.inf)) * parts > Fraction(epsilon) or each == epsilon / parts


@pytest.mark.parametrize("sigma, epsilon", [(0.7, 1.0), (1.5, 0.5), (3.0, 1.0), (2.0, 0.1), (10.0, 0.05)])
def test_discrete_gaussian_delta_is_bracketed_by_dp_accounting(sigma, epsilon):
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    upper = pld.from_discrete_gaussian_mechanism(sigma, value_discretization_interval=1e-5).get_delta_for_epsilon(
        epsilon
    )
    lower = pld.from_discrete_gaussian_mechanism(
        sigma, value_discretization_interval=1e-5, pessimistic_estimate=False
    ).get_delta_for_epsilon(epsilon)
    ours = discrete_gaussian_delta(epsilon, sigma)
    assert lower * (1 - 1e-9) <= ours <= upper * (1 + 1e-9)


def test_discrete_gaussian_delta_exact_sum():
    # Direct evaluation of CKS20 Thm 7 with an explicit pmf (independent code).
    sigma, eps = 1.3, 0.8
    k = np.arange(-200, 201)
    pmf = np.exp(-(k**2) / (2 * sigma**2))
    pmf /= pmf.sum()
    delta = pmf[k > eps * sigma**2 - 0.5].sum() - math.exp(eps) * pmf[k > eps * sigma**2 + 0.5].sum()
    assert discrete_gaussian_delta(eps, sigma) == pytest.approx(delta, rel=1e-12)


def test_discrete_gaussian_large_sigma_bounds_are_valid_and_tight():
    # Above 25k the tails are bounded by integrals instead of summed: compare both paths.
    import dpsk.accounting._calibration as cal

    sigma = 2.0e4
    for eps in (1e-4, 3e-4):
        summed = discrete_gaussian_delta(eps, sigma)
        old = cal._DIRECT_SUM_MAX_TERMS
        try:
            cal._DIRECT_SUM_MAX_TERMS = 10
            bounded = discrete_gaussian_delta(eps, sigma)
        finally:
            cal._DIRECT_SUM_MAX_TERMS = old
        assert summed <= bounded <= summed * 1.01


def test_discrete_gaussian_calibration_round_trip():
    sigma = discrete_gaussian_sigma(1.0, 1e-5, sensitivity=2)
    assert discrete_gaussian_delta(1.0, sigma, 2) <= 1e-5
    assert discrete_gaussian_delta(1.0, sigma * 0.999, 2) > 1e-5
    assert discrete_gaussian_epsilon(1e-5, sigma, 2) <= 1.0


def test_randomized_response_and_amplification():
    p = randomized_response_keep_probability(1.0, 4)
    assert p == pytest.approx(math.e / (math.e + 3))
    assert randomized_response_keep_probability(800.0, 3) == 1.0  # no overflow
    assert amplified_epsilon(1.0, 0.01) == pytest.approx(math.log(1 + 0.01 * (math.e - 1)))
    assert amplified_epsilon(1.0, 0.01) >= math.log(1 + 0.01 * (math.e - 1))
    assert amplified_epsilon(2.0, 1.0) == 2.0
    assert amplified_epsilon(1000.0, 0.5) == pytest.approx(1000 + math.log(0.5))
