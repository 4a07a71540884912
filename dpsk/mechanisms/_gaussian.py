# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The Gaussian mechanism: analytic calibration, floating-point safe on a lattice (default)."""

import math
from fractions import Fraction

from dpsk._core._noise import add_gaussian, add_gaussian_lattice, lattice_granularity, lattice_sensitivity
from dpsk.accounting import DiscreteGaussianEvent, GaussianEvent, ZCDPEvent, get_epsilon
from dpsk.accounting._calibration import (
    classic_gaussian_sigma,
    discrete_gaussian_sigma,
    gaussian_sigma,
    round_up,
    zcdp_rho,
)
from dpsk.mechanisms._base import MECHANISM_DOCS, Calibration, DPMechanism
from dpsk.utils._docstring import Substitution

__all__ = ["Gaussian", "UnsafeGaussian"]

_CALIBRATIONS = ("analytic", "classic")


def _check_gaussian_params(delta, calibration, epsilon):
    if delta <= 0.0:
        raise ValueError("delta must be > 0 for the Gaussian mechanism (it is not ε-DP for any finite ε)")
    if calibration not in _CALIBRATIONS:
        raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}")
    if calibration == "classic" and epsilon >= 1.0:
        raise ValueError(f"calibration='classic' is only valid for epsilon < 1, got {epsilon}")


@Substitution(**MECHANISM_DOCS)
class Gaussian(DPMechanism):
    """The Gaussian mechanism, floating-point safe: exact discrete Gaussian noise on a lattice.

    Releases ``g · (round(value / g) + K)`` with K exact discrete Gaussian noise (Canonne,
    Kamath & Steinke 2020) drawn in integer arithmetic, g a power of two about 2⁻²⁴
    times σ. σ is calibrated exactly for (ε, δ): for a scalar with the discrete
    Gaussian's exact privacy profile (ε=1, δ=1e-5, Δ₂=1 gives σ ≈ 3.7306, the analytic
    Gaussian value of Balle & Wang 2018); for a vector with its zCDP guarantee.

    Parameters
    ----------
    {epsilon}
        Any value: the analytic calibration has no ε < 1 limit.
    {delta}
    sensitivity : float, default=1.0
        L2 sensitivity of the query (for an array: of the whole vector), >= 0.
    calibration : {{"analytic", "classic"}}, default="analytic"
        ``"classic"``: σ = sqrt(2 ln(1.25/δ)) Δ₂/ε (Dwork & Roth), only for ε < 1 and
        always noisier; offered to reproduce other work.
    {random_state}

    See Also
    --------
    UnsafeGaussian : continuous (textbook) Gaussian noise.

    Notes
    -----
    **Privacy.** (ε, δ)-DP for a query of L2 sensitivity ``sensitivity``. Rounding onto
    the lattice can add up to one step per coordinate to the sensitivity; the noise is
    calibrated to the rounded sensitivity. A scalar release is recorded as a
    :class:`~dpsk.accounting.DiscreteGaussianEvent` (its exact (ε, δ) profile, CKS20
    Thm 7); a vector release as a :class:`~dpsk.accounting.ZCDPEvent`
    (Δ₂²/(2σ²)-zCDP, CKS20), whose conversion to (ε, δ) needs about 8% more noise than
    the continuous analytic Gaussian: the price of floating-point safety for vectors.
    Released: the noisy value. Floating-point safe.

    Examples
    --------
    >>> from dpsk.mechanisms import Gaussian
    >>> mech = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, random_state=0)
    >>> round(mech.sigma(), 4)
    3.7306
    """

    def __init__(self, *, epsilon, delta, sensitivity=1.0, calibration="analytic", random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity, random_state=random_state)
        _check_gaussian_params(self.delta, calibration, self.epsilon)
        self.calibration = calibration

    def sigma(self, shape=()):
        """The standard deviation parameter σ of the noise for a value of this shape."""
        from dpsk.mechanisms._base import _size

        params = self._calibration(_size(shape)).params
        return params[0] if params else 0.0

    def _calibrate(self, size):
        eps, delta, sens = self.epsilon, self.delta, self.sensitivity
        # The lattice step g is chosen from the σ the calibration will give (about 2⁻²⁴σ):
        # from the analytic σ when calibration="classic" asks for a larger one, σ/g grew
        # past the exact sampler's range (σ² <= 2⁴⁹ steps²) and randomise raised.
        classic = classic_gaussian_sigma(eps, delta, sens) if self.calibration == "classic" else 0.0
        if size <= 1:
            first_guess = max(gaussian_sigma(eps, delta, sens), classic)
            g = lattice_granularity(first_guess, "gaussian")
            steps = math.ceil(Fraction(sens) / Fraction(g))  # the rounded sensitivity, in steps
            if self.calibration == "classic":
                sigma_steps = classic_gaussian_sigma(eps, delta, steps)
            else:
                sigma_steps = discrete_gaussian_sigma(eps, delta, steps)
            event = DiscreteGaussianEvent(sigma_steps, sensitivity=steps)
        else:
            rho = zcdp_rho(eps, delta)
            g = lattice_granularity(max(sens / math.sqrt(2.0 * rho), classic), "gaussian")
            rounded = lattice_sensitivity(sens, g, size, "l2")
            sigma = round_up(rounded / math.sqrt(2.0 * rho))
            if self.calibration == "classic":
                sigma = max(sigma, classic_gaussian_sigma(eps, delta, rounded))
            sigma_steps = sigma / g  # exact: g is a power of two
            event = ZCDPEvent(round_up(rounded * rounded / (2.0 * sigma * sigma)))
        if self.calibration == "classic" and get_epsilon(event, delta) > eps:
            raise ValueError(
                "the classic Gaussian bound does not give (epsilon, delta)-DP for this lattice "
                "release; use calibration='analytic'"
            )
        return Calibration(event, (sigma_steps * g, g))

    def _add_noise(self, flat, params):
        sigma, g = params
        add_gaussian_lattice(flat, sigma, g, self._rng)

    def _variance(self, params):
        # The discrete Gaussian's variance is σ² up to exp(-2π²(σ/g)²): nothing, as σ/g ≈ 2²⁴.
        return params[0] ** 2


@Substitution(**MECHANISM_DOCS)
class UnsafeGaussian(DPMechanism):
    """The Gaussian mechanism with continuous (textbook) noise: **not floating-point safe**.

    Parameters
    ----------
    {epsilon}
    {delta}
    sensitivity : float, default=1.0
        L2 sensitivity of the query (for an array: of the whole vector), >= 0.
    calibration : {{"analytic", "classic"}}, default="analytic"
        As for :class:`Gaussian`.
    {random_state}

    Notes
    -----
    **Privacy.** (ε, δ)-DP in the idealised real-number model only, with σ from the
    analytic calibration of Balle & Wang (2018); recorded as a
    :class:`~dpsk.accounting.GaussianEvent`, which composes exactly. Not floating-point
    safe: use :class:`Gaussian` for releases.
    """

    def __init__(self, *, epsilon, delta, sensitivity=1.0, calibration="analytic", random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity, random_state=random_state)
        _check_gaussian_params(self.delta, calibration, self.epsilon)
        self.calibration = calibration

    def _calibrate(self, size):
        if self.calibration == "classic":
            multiplier = classic_gaussian_sigma(self.epsilon, self.delta)
        else:
            multiplier = gaussian_sigma(self.epsilon, self.delta)
        sigma = float(Fraction(multiplier) * Fraction(self.sensitivity))
        if Fraction(sigma) < Fraction(multiplier) * Fraction(self.sensitivity):
            sigma = math.nextafter(sigma, math.inf)  # never less noise than the event states
        return Calibration(GaussianEvent(multiplier), (sigma,))

    def _add_noise(self, flat, params):
        add_gaussian(flat, params[0], self._rng)

    def _variance(self, params):
        return params[0] ** 2
