# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Rényi-DP curves against closed forms, numerical integration and dp_accounting."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpsk.accounting._rdp import (
    ORDERS,
    rdp_bounded_range,
    rdp_discrete_laplace,
    rdp_from_points,
    rdp_gaussian,
    rdp_laplace,
    rdp_poisson_gaussian,
    rdp_poisson_subsampled,
    rdp_pure,
    rdp_randomized_response,
    rdp_to_epsilon,
)


def _renyi(p, q, alpha, lo=-60, hi=60):
    """D_α(P‖Q) of two distributions by numerical integration (independent of the closed forms)."""

    def integrand(x):
        return math.exp(alpha * p.logpdf(x) + (1 - alpha) * q.logpdf(x))

    value, _ = integrate.quad(integrand, lo, hi, limit=400, points=[0, 1])
    return math.log(value) / (alpha - 1)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.7, 10.0])
@pytest.mark.parametrize("b", [0.5, 2.0])
def test_laplace_curve_matches_numerical_integration(alpha, b):
    p = stats.laplace(loc=0, scale=b)
    q = stats.laplace(loc=1, scale=b)
    assert rdp_laplace(b, [alpha])[0] == pytest.approx(_renyi(p, q, alpha), rel=1e-7)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 7.0])
def test_gaussian_curve_matches_numerical_integration(alpha):
    p, q = stats.norm(0, 1.3), stats.norm(1, 1.3)
    assert rdp_gaussian(1.3, [alpha])[0] == pytest.approx(_renyi(p, q, alpha), rel=1e-7)


@pytest.mark.parametrize("k", [2, 3, 10])
def test_randomized_response_curve_matches_direct_sum(k):
    eps = 0.8
    keep = math.exp(eps) / (math.exp(eps) + k - 1)
    other = 1 / (math.exp(eps) + k - 1)
    p = np.array([keep, other] + [other] * (k - 2))  # true category 0
    q = np.array([other, keep] + [other] * (k - 2))  # true category 1
    for alpha in (1.5, 4.0):
        direct = math.log(np.sum(p**alpha * q ** (1 - alpha))) / (alpha - 1)
        assert rdp_randomized_response(eps, k, [alpha])[0] == pytest.approx(direct, rel=1e-12)


def test_pure_curve_is_the_tight_bound_and_below_the_generic_ones():
    eps = 0.7
    curve = rdp_pure(eps)
    assert np.all(curve <= eps + 1e-15)
    assert np.all(curve <= ORDERS * eps**2 / 2 + 1e-15)  # Bun & Steinke's ε²/2 zCDP
    assert np.all(np.diff(curve) >= -1e-15)  # non-decreasing in α
    # The exponential mechanism's bounded-range bound (ε²/8-zCDP) is 4x better for small α.
    br = rdp_bounded_range(eps)
    assert np.all(br <= curve + 1e-15) and br[0] < curve[0] / 3


def test_curves_agree_with_dp_accounting():
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    rdp_lib = pytest.importorskip("dp_accounting.rdp")

    def theirs(event, relation=None):
        kwargs = {} if relation is None else {"neighboring_relation": relation}
        acc = rdp_lib.RdpAccountant(orders=list(ORDERS), **kwargs)
        acc.compose(event)
        return acc._rdp

    np.testing.assert_allclose(rdp_laplace(3.0), theirs(dp_event.LaplaceDpEvent(3.0)), rtol=1e-12)
    np.testing.assert_allclose(rdp_gaussian(1.7), theirs(dp_event.GaussianDpEvent(1.7)), rtol=1e-12)
    rr = dp_event.RandomizedResponseDpEvent(5 / (math.e + 4), 5)
    replace_one = rdp_lib.rdp_privacy_accountant.NeighborRel.REPLACE_ONE
    np.testing.assert_allclose(rdp_randomized_response(1.0, 5), theirs(rr, replace_one), rtol=1e-9)


@pytest.mark.parametrize("q, sigma", [(0.01, 1.1), (0.1, 0.8), (0.001, 2.0), (0.5, 1.0)])
def test_sampled_gaussian_is_exact_at_integers_and_never_below_dp_accounting(q, sigma):
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    rdp_lib = pytest.importorskip("dp_accounting.rdp")
    acc = rdp_lib.RdpAccountant(orders=list(ORDERS))
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)))
    ours = rdp_poisson_gaussian(q, sigma)
    integer = ORDERS == np.floor(ORDERS)
    np.testing.assert_allclose(ours[integer], acc._rdp[integer], rtol=1e-9)
    finite = np.isfinite(acc._rdp)
    assert np.all(ours[finite] >= acc._rdp[finite] * (1 - 1e-9))


def test_sampled_gaussian_integer_order_by_numerical_integration():
    # A_α = E_{z~N(0,σ²)}[((1-q) + q e^{(2z-1)/(2σ²)})^α] for the add/remove worst case.
    q, sigma, alpha = 0.05, 1.5, 3
    mix = lambda z: (1 - q) + q * math.exp((2 * z - 1) / (2 * sigma**2))  # noqa: E731
    value, _ = integrate.quad(lambda z: stats.norm(0, sigma).pdf(z) * mix(z) ** alpha, -40, 40, limit=400)
    assert rdp_poisson_gaussian(q, sigma, [float(alpha)])[0] == pytest.approx(math.log(value) / (alpha - 1), rel=1e-8)


def test_generic_subsampling_bound_is_valid_for_gaussian_and_amplifies():
    q, sigma = 0.01, 1.1
    exact = rdp_poisson_gaussian(q, sigma)
    generic = rdp_poisson_subsampled(q, lambda orders: rdp_gaussian(sigma, orders))
    assert np.all(generic >= exact * (1 - 1e-12))
    assert np.all(generic <= rdp_gaussian(sigma) + 1e-15)
    assert rdp_to_epsilon(10_000 * generic, 1e-5) < rdp_to_epsilon(10_000 * rdp_gaussian(sigma), 1e-5) / 10


def test_user_curve_uses_only_monotonicity():
    curve = rdp_from_points([2.0, 4.0], [0.2, 0.1], orders=[1.5, 2.0, 3.0, 4.0, 5.0])
    # ε(4) = 0.1 also bounds every order <= 4 (ε is non-decreasing in α).
    np.testing.assert_array_equal(curve, [0.1, 0.1, 0.1, 0.1, np.inf])


def test_conversion_matches_dp_accounting_and_edge_cases():
    rdp_lib = pytest.importorskip("dp_accounting.rdp")
    curve = 1000 * rdp_gaussian(1.0)
    theirs, _ = rdp_lib.rdp_privacy_accountant.compute_epsilon(ORDERS, curve, 1e-5)
    assert rdp_to_epsilon(curve, 1e-5) == pytest.approx(theirs, rel=1e-12)
    assert rdp_to_epsilon(curve, 1.0) == 0.0
    assert rdp_to_epsilon(curve, 0.0) == math.inf
    assert rdp_to_epsilon(np.zeros_like(curve), 0.0) == 0.0


@pytest.mark.parametrize("scale, sensitivity", [(2.5, 3), (0.7, 1), (10.0, 5)])
def test_discrete_laplace_curve_matches_direct_summation(scale, sensitivity):
    k = np.arange(-2000, 2001)
    log_p = -np.abs(k) / scale
    log_p -= np.logaddexp.reduce(log_p)
    log_q = -np.abs(k - sensitivity) / scale
    log_q -= np.logaddexp.reduce(log_q)
    for alpha in (1.5, 2.0, 5.0):
        direct = np.logaddexp.reduce(alpha * log_p + (1 - alpha) * log_q) / (alpha - 1)
        assert rdp_discrete_laplace(scale, sensitivity, [alpha])[0] == pytest.approx(direct, rel=1e-10)


def test_discrete_laplace_curve_limits():
    # Sensitivity 1 is binary randomized response in disguise; a fine lattice is Laplace.
    np.testing.assert_allclose(rdp_discrete_laplace(10.0, 1), rdp_pure(0.1), rtol=1e-9)
    np.testing.assert_allclose(rdp_discrete_laplace(2.0**40 * 10, 2**40), rdp_laplace(10.0), rtol=1e-6)
