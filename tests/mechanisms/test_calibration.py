# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Noise calibration of the mechanisms against independent computations."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import optimize, stats

from dpsk.accounting import (
    BudgetAccountant,
    PureDPEvent,
    SelfComposedEvent,
    discrete_gaussian_delta,
    get_epsilon,
)
from dpsk.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, UnsafeGaussian, UnsafeLaplace


def _analytic_sigma(epsilon, delta, sensitivity=1.0):
    """Balle & Wang (2018) Thm 8 solved with scipy (independent of dpsk's implementation)."""

    def delta_of(sigma):
        a = sensitivity / (2 * sigma)
        b = epsilon * sigma / sensitivity
        return stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b)

    return optimize.brentq(lambda s: delta_of(s) - delta, 1e-3, 1e5, xtol=1e-13)


@pytest.mark.parametrize("epsilon, delta, sensitivity", [(1.0, 1e-5, 1.0), (0.5, 1e-6, 3.0), (8.0, 1e-5, 0.2)])
def test_scalar_gaussian_sigma_is_the_analytic_one(epsilon, delta, sensitivity):
    reference = _analytic_sigma(epsilon, delta, sensitivity)
    for mech in (
        Gaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity),
        UnsafeGaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity),
    ):
        sigma = math.sqrt(mech.variance(0.0))
        # The lattice Gaussian is exact discrete Gaussian noise: a hair more than analytic.
        assert reference <= sigma <= reference * (1 + 1e-6)
    assert Gaussian(epsilon=1.0, delta=1e-5).sigma() == pytest.approx(3.7306316, abs=1e-6)


def test_scalar_lattice_gaussian_meets_the_exact_discrete_profile():
    mech = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=2.0)
    calibrated = mech.privacy_event()
    assert calibrated.delta == 1e-5  # the calibration δ travels with the event
    event = calibrated.event
    assert discrete_gaussian_delta(1.0, event.sigma, event.sensitivity) <= 1e-5
    assert event.sensitivity * mech._calibration(1).params[1] >= 2.0  # rounded sensitivity


def test_vector_gaussian_is_calibrated_in_zcdp():
    mech = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    event = mech.privacy_event((50,))
    assert get_epsilon(event, 1e-5) <= 1.0
    ratio = mech.sigma((50,)) / mech.sigma()
    assert 1.0 < ratio < 1.1  # the documented price of floating-point safety for vectors


def test_classic_calibration_is_explicit_and_noisier():
    classic = Gaussian(epsilon=0.5, delta=1e-5, calibration="classic")
    analytic = Gaussian(epsilon=0.5, delta=1e-5)
    assert classic.sigma() == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-6)
    assert classic.sigma() > analytic.sigma()
    assert classic.sigma((10,)) >= analytic.sigma((10,))
    with pytest.raises(ValueError, match="epsilon < 1"):
        Gaussian(epsilon=1.0, delta=1e-5, calibration="classic")
    with pytest.raises(ValueError, match="calibration"):
        UnsafeGaussian(epsilon=0.5, delta=1e-5, calibration="tight")


@pytest.mark.parametrize("cls", [Laplace, UnsafeLaplace])
def test_laplace_scale_is_sensitivity_over_epsilon(cls):
    mech = cls(epsilon=0.3, sensitivity=2.0)
    assert math.sqrt(mech.variance(0.0) / 2) == pytest.approx(2.0 / 0.3, rel=1e-9)
    assert get_epsilon(mech.privacy_event(), 0.0) <= 0.3


def test_discrete_gaussian_meets_its_delta():
    mech = DiscreteGaussian(epsilon=1.0, delta=1e-6, sensitivity=3)
    event = mech.privacy_event().event
    assert discrete_gaussian_delta(1.0, event.sigma, 3) <= 1e-6
    assert discrete_gaussian_delta(1.0, event.sigma * 0.999, 3) > 1e-6


def test_lattice_laplace_releases_compose_like_laplace():
    """100 lattice Laplace releases of ε = 0.1 at δ = 1e-5: the exact discrete-Laplace RDP."""
    event = SelfComposedEvent(Laplace(epsilon=0.1).privacy_event(), 100)
    eps = get_epsilon(event, 1e-5)
    assert eps <= 4.54  # Laplace's RDP figure is 4.533 (vs 10 by basic composition)
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5)
    mech = Laplace(epsilon=0.1, random_state=0)
    for _ in range(100):
        acc.record(mech.privacy_event())
        mech.randomise(1.0)
    assert acc.total().epsilon == pytest.approx(eps)


def test_noise_multiplier_of_the_textbook_gaussian_is_never_understated():
    mech = UnsafeGaussian(epsilon=1.0, delta=1e-5, sensitivity=0.3)
    event = mech.privacy_event(np.zeros(4).shape).event
    assert math.sqrt(mech.variance(np.zeros(4))) >= event.noise_multiplier * 0.3


def test_default_accountant_reports_gaussian_spends_at_their_calibration_delta():
    """Check that without a δ ceiling (diffprivlib's default) a Gaussian spend is reported at
    the δ it was calibrated for, not at δ = 0 where its ε is infinite."""
    mech = Gaussian(epsilon=1.0, delta=1e-6)
    acc = BudgetAccountant()
    acc.record(mech.privacy_event((20,)))
    total = acc.total()
    assert total.delta == pytest.approx(1e-6)
    assert 0.99 <= total.epsilon <= 1.0 + 1e-9
    acc.record(mech.privacy_event((20,)))
    acc.record(Laplace(epsilon=1.0).privacy_event((5,)))
    total = acc.total()
    assert total.delta == pytest.approx(2e-6)
    assert total.epsilon < 3.0  # tighter than basic composition (3, 2e-6)
    # a bare GaussianEvent carries no calibration δ: infinite ε at δ = 0 stays the honest answer
    bare = BudgetAccountant()
    bare.record(mech.privacy_event((20,)).event)
    assert bare.total().epsilon == math.inf


# The lattice step was chosen from the analytic σ, so the larger classic σ fell outside the
# exact sampler's range (σ² > 2⁴⁹ steps²) and randomise raised (issue 14, finding 6);
# doc/migration.rst recommends exactly Gaussian(ε=0.01, δ=1e-5, classic).
@pytest.mark.parametrize("epsilon, delta", [(0.01, 1e-5), (0.05, 1e-3), (0.1, 1e-2), (0.5, 0.1)])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_classic_calibration_releases_where_it_used_to_raise(epsilon, delta, shape):
    mech = Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0, calibration="classic", random_state=0)
    value = np.ones(shape) if shape else 1.0
    out = mech.randomise(value)
    assert np.shape(out) == shape and np.all(np.isfinite(out))
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert mech.sigma(shape) >= sigma * (1 - 1e-12)
    assert mech.sigma(shape) == pytest.approx(sigma, rel=1e-3)  # plus the lattice rounding


@pytest.mark.parametrize("calibration", ["classic", "analytic"])
def test_every_valid_gaussian_calibration_releases(calibration):
    """A grid over ε, δ, the sensitivity and the size: randomise never raises."""
    top = 0.99 if calibration == "classic" else 30.0
    # ε >= 0.01: zcdp_rho (the vector calibration) does not return for ε = 0.001, δ = 1e-9,
    # a separate defect of the accounting's root finder.
    for epsilon in np.geomspace(0.01, top, 6):
        for delta in (1e-9, 1e-5, 1e-2, 0.3):
            for sensitivity in (1e-6, 1.0, 1e6):
                mech = Gaussian(
                    epsilon=float(epsilon),
                    delta=delta,
                    sensitivity=sensitivity,
                    calibration=calibration,
                    random_state=0,
                )
                for shape in ((), (4,)):
                    out = mech.randomise(np.ones(shape) if shape else 1.0)
                    assert np.all(np.isfinite(out)), (epsilon, delta, sensitivity, shape)


@pytest.mark.parametrize("epsilon", [0.7, 0.1, 0.3, 0.123, 1.0, 2.5, 1e-3])
@pytest.mark.parametrize("sensitivity", [1, 3, 7])
def test_discrete_laplace_records_the_requested_epsilon(epsilon, sensitivity):
    """A vector release records ε as asked (not 0.7000000000000001, re-derived from a float
    scale), which holds because the drawn rational scale is at least Δ/ε exactly; the scalar
    event states a float scale no larger than the drawn one, so its ε is at most ε."""
    mech = DiscreteLaplace(epsilon=epsilon, sensitivity=sensitivity)
    num, den = mech._calibration(3).params
    assert Fraction(num, den) * Fraction(epsilon) >= sensitivity
    assert mech.privacy_event((3,)) == PureDPEvent(epsilon)
    scalar = mech.privacy_event()
    assert Fraction(scalar.scale) <= Fraction(num, den)
    assert get_epsilon(scalar, 0.0) <= epsilon
    if epsilon in (0.7, 0.1):
        assert get_epsilon(scalar, 0.0) == epsilon
