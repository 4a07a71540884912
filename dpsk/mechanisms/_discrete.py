# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Integer-valued mechanisms: discrete Laplace (geometric) and discrete Gaussian noise."""

import math
from fractions import Fraction

import numpy as np

from dpsk._core._exact import MAX_T_DEN, MAX_T_NUM, discrete_gaussian, discrete_laplace, round_up_sigma2
from dpsk.accounting import DiscreteGaussianEvent, DiscreteLaplaceEvent, PureDPEvent, ZCDPEvent
from dpsk.accounting._calibration import (
    discrete_gaussian_sigma,
    discrete_laplace_epsilon,
    discrete_laplace_scale,
    round_up,
    zcdp_rho,
)
from dpsk.mechanisms._base import MECHANISM_DOCS, Calibration, DPMechanism, exact_rational
from dpsk.utils._docstring import Substitution

__all__ = ["DiscreteGaussian", "DiscreteLaplace", "Geometric"]


def _check_integer_sensitivity(sensitivity, what):
    """Refuse a fractional sensitivity where the mechanism needs an integer one (no silent floor)."""
    if sensitivity != math.floor(sensitivity):
        raise ValueError(
            f"sensitivity must be an integer here ({what}), got {sensitivity!r}: integer queries move "
            "by integers, so give the integer bound you computed"
        )


class _IntegerNoise(DPMechanism):
    """Integer values plus integer noise drawn by ``_draw(noise, params)``."""

    _integer_values = True

    def _add_noise(self, flat, params):
        noise = np.empty(flat.size, dtype=np.int64)
        self._draw(noise, params)
        flat += noise


@Substitution(**MECHANISM_DOCS)
class DiscreteLaplace(_IntegerNoise):
    """The geometric mechanism: exact discrete Laplace noise ``P(k) ∝ exp(-|k| ε / Δ)`` on integers.

    Parameters
    ----------
    {epsilon}
    sensitivity : float, default=1.0
        L1 sensitivity of the integer query (for an array: of the whole vector): an
        integer >= 0 (differences of integer queries are integers; a fractional value
        is refused rather than silently rounded).
    {random_state}

    Notes
    -----
    **Privacy.** ε-DP for an integer-valued query of L1 sensitivity ``sensitivity``
    (Ghosh, Roughgarden & Sundararajan 2009). The noise is sampled exactly in integer
    arithmetic (Canonne, Kamath & Steinke 2020), its scale rounded up: floating-point
    safe. Released: the noisy integers, in the input's dtype. Recorded as a
    :class:`~dpsk.accounting.DiscreteLaplaceEvent` (scalar) or a
    :class:`~dpsk.accounting.PureDPEvent` (vector).
    """

    def __init__(self, *, epsilon, sensitivity=1.0, random_state=None):
        super().__init__(epsilon=epsilon, delta=0.0, sensitivity=sensitivity, random_state=random_state)
        _check_integer_sensitivity(self.sensitivity, "the L1 sensitivity of an integer query")

    def _calibrate(self, size):
        steps = int(self.sensitivity)
        num, den = exact_rational(Fraction(steps) / Fraction(self.epsilon), MAX_T_NUM, MAX_T_DEN, rounding="up")
        # The event states a float scale, and num/den = Δ/ε exactly (the usual case) has
        # none: rounded down, its ε re-derived would exceed the requested one (0.7 became
        # 0.7000000000000001). So draw with the smallest float scale >= Δ/ε when it is
        # representable (at most one ulp more noise), and state that scale.
        need = discrete_laplace_scale(self.epsilon, steps)
        if Fraction(need) > Fraction(num, den):
            num, den = exact_rational(Fraction(need), MAX_T_NUM, MAX_T_DEN, rounding="up")
        scale = float(Fraction(num, den))
        if Fraction(scale) > Fraction(num, den):
            scale = math.nextafter(scale, 0.0)  # the event never states more noise than drawn
        if size <= 1:
            event = DiscreteLaplaceEvent(scale, steps)
        elif Fraction(scale) * Fraction(self.epsilon) >= steps:  # steps / scale <= ε exactly
            event = PureDPEvent(self.epsilon)
        else:
            event = PureDPEvent(discrete_laplace_epsilon(scale, steps))
        return Calibration(event, (num, den))

    def _draw(self, noise, params):
        discrete_laplace(noise, params[0], params[1], self._rng)

    def _variance(self, params):
        r = math.exp(-params[1] / params[0])
        return 2.0 * r / math.expm1(-params[1] / params[0]) ** 2


#: diffprivlib's name for the same mechanism.
Geometric = DiscreteLaplace


@Substitution(**MECHANISM_DOCS)
class DiscreteGaussian(_IntegerNoise):
    """Exact discrete Gaussian noise P(k) ∝ exp(-k²/(2σ²)) on integers (CKS 2020).

    Parameters
    ----------
    {epsilon}
    {delta}
    sensitivity : float, default=1.0
        L2 sensitivity of the integer query (for an array: of the whole vector), >= 0.
        For a scalar it is an integer (a fractional value is refused when a scalar is
        released, not rounded down); a vector's L2 sensitivity may be fractional.
    {random_state}

    Notes
    -----
    **Privacy.** (ε, δ)-DP for an integer-valued query of L2 sensitivity Δ. For a
    scalar, σ is calibrated with the exact (ε, δ) profile of the discrete Gaussian
    (Canonne, Kamath & Steinke 2020, Thm 7, with the integer Δ) and the release
    is recorded as a :class:`~dpsk.accounting.DiscreteGaussianEvent`; for a vector, with
    its Δ²/(2σ²)-zCDP guarantee, recorded as a :class:`~dpsk.accounting.ZCDPEvent`.
    Sampled exactly in integer arithmetic: floating-point safe. σ² must stay below 2⁴⁹
    (σ about 2.4e7); for larger scales use :class:`~dpsk.mechanisms.Gaussian`.
    """

    def __init__(self, *, epsilon, delta, sensitivity=1.0, random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity, random_state=random_state)
        if self.delta <= 0.0:
            raise ValueError("delta must be > 0 for the discrete Gaussian mechanism")

    def _calibrate(self, size):
        if size <= 1:
            _check_integer_sensitivity(self.sensitivity, "the sensitivity of a scalar integer query")
            steps = int(self.sensitivity)
            sigma = discrete_gaussian_sigma(self.epsilon, self.delta, steps)
            event = DiscreteGaussianEvent(sigma, steps)
        else:
            rho = zcdp_rho(self.epsilon, self.delta)
            sigma = round_up(self.sensitivity / math.sqrt(2.0 * rho))
            event = ZCDPEvent(round_up(self.sensitivity**2 / (2.0 * sigma * sigma)))
        try:
            params = round_up_sigma2(Fraction(sigma) ** 2)  # rounded up: never less noise
        except ValueError as exc:
            raise ValueError(
                f"the discrete Gaussian scale sigma={sigma:.6g} exceeds the exact sampler's range "
                "(sigma^2 <= 2**49); use dpsk.mechanisms.Gaussian, which rescales onto a lattice"
            ) from exc
        return Calibration(event, (sigma, *params))

    def _draw(self, noise, params):
        discrete_gaussian(noise, params[1], params[2], self._rng)

    def _variance(self, params):
        sigma = params[0]
        if sigma > 1e3:  # equal to σ² up to exp(-2π²σ²)
            return sigma * sigma
        k = np.arange(-math.ceil(40 * sigma) - 1, math.ceil(40 * sigma) + 2, dtype=np.float64)
        w = np.exp(-(k * k) / (2.0 * sigma * sigma))
        return float(np.sum(k * k * w) / np.sum(w))
