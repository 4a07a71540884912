# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The Laplace mechanism: floating-point safe on a lattice (default), or textbook (unsafe)."""

import functools
from fractions import Fraction

import numpy as np

from dpsk._core._noise import add_laplace, add_laplace_lattice, lattice_granularity, lattice_sensitivity
from dpsk.accounting import DiscreteLaplaceEvent, LaplaceEvent, PureDPEvent
from dpsk.accounting._calibration import (
    discrete_laplace_epsilon,
    discrete_laplace_scale,
    laplace_epsilon,
    laplace_noise_multiplier,
)
from dpsk.mechanisms._base import MECHANISM_DOCS, Calibration, DPMechanism
from dpsk.utils._docstring import Substitution

__all__ = ["Laplace", "UnsafeLaplace"]


@Substitution(**MECHANISM_DOCS)
class Laplace(DPMechanism):
    """The Laplace mechanism, floating-point safe: noise on a power-of-two lattice.

    Releases ``g · (round(value / g) + K)`` where K is exact discrete Laplace noise (drawn
    in integer arithmetic by ``dpsk._core``) and g a power of two about 2⁻⁴⁰ times the
    noise scale, so the output's low-order bits carry no information about ``value``
    (Mironov 2012's attack on textbook Laplace does not apply).

    Parameters
    ----------
    {epsilon}
    sensitivity : float, default=1.0
        L1 sensitivity of the query (for an array: of the whole vector), >= 0.
    {random_state}

    Attributes
    ----------
    epsilon, delta, sensitivity : float
        The validated parameters (``delta`` is 0).

    See Also
    --------
    UnsafeLaplace : the textbook sampler, for comparison only.

    Notes
    -----
    **Privacy.** ε-DP for a query of L1 sensitivity ``sensitivity`` under dpsk's
    add/remove relation (or whatever relation the sensitivity was computed for). The
    value is first rounded to the lattice, which can increase the sensitivity by up to
    one lattice step per coordinate: the noise is calibrated to the rounded sensitivity
    (``dpsk._core._noise.lattice_sensitivity``), a relative increase of about 2⁻⁴⁰ per
    coordinate. Released: the noisy value. Floating-point safe. A scalar release is
    recorded as a :class:`~dpsk.accounting.DiscreteLaplaceEvent` (exact privacy loss);
    a vector release as a :class:`~dpsk.accounting.PureDPEvent` of its ε.

    Examples
    --------
    >>> from dpsk.mechanisms import Laplace
    >>> mech = Laplace(epsilon=1.0, sensitivity=1.0, random_state=0)
    >>> noisy = mech.randomise(3.0)
    >>> mech.privacy_event()
    DiscreteLaplaceEvent(scale=1099511627776.0, sensitivity=1099511627776)
    """

    def __init__(self, *, epsilon, sensitivity=1.0, random_state=None):
        super().__init__(epsilon=epsilon, delta=0.0, sensitivity=sensitivity, random_state=random_state)

    def _calibrate(self, size):
        return _lattice_calibration(self.epsilon, self.sensitivity, size)

    def _add_noise(self, flat, params):
        scale, g = params
        add_laplace_lattice(flat, scale, g, self._rng)

    def _variance(self, params):
        scale, g = params
        r = np.exp(-g / scale)
        return float(g * g * 2.0 * r / np.expm1(-g / scale) ** 2)

    def bias(self, value):
        """The deterministic rounding onto the lattice: ``round(value/g)·g - value`` (at most g/2 in absolute value)."""
        arr = np.asarray(value, dtype=np.float64)
        if self.sensitivity == 0:
            return np.zeros_like(arr)[()]
        _, g = self._calibration(arr.size).params
        q = arr / g  # exact: g is a power of two
        k = np.floor(q)
        return ((k + (q - k >= 0.5)) * g - arr)[()]


@functools.lru_cache(maxsize=1024, typed=True)
def _lattice_calibration(epsilon, sensitivity, size):
    """:class:`Laplace`'s calibration for (ε, sensitivity, size): public values only.

    Computed once per process for each triple (in exact rational arithmetic, about
    50 µs, which a fit paid for every mechanism it built); the events are frozen, so the
    mechanisms can share them.
    """
    # Granularity from the unrounded scale; then the noise is recalibrated to the
    # sensitivity of the *rounded* query, in lattice units (an integer).
    g = lattice_granularity(sensitivity / epsilon)
    steps = Fraction(lattice_sensitivity(sensitivity, g, max(size, 1), "l1")) / Fraction(g)
    assert steps.denominator == 1  # the rounded sensitivity is a multiple of g
    steps = int(steps)
    scale = discrete_laplace_scale(epsilon, steps)  # lattice units: steps / scale <= ε
    if size <= 1:
        event = DiscreteLaplaceEvent(scale, sensitivity=steps)
    else:
        event = PureDPEvent(discrete_laplace_epsilon(scale, steps))
    return Calibration(event, (scale * g, g))


@Substitution(**MECHANISM_DOCS)
class UnsafeLaplace(DPMechanism):
    """The textbook Laplace mechanism (inverse-CDF floats): **not floating-point safe**.

    The set of doubles it can output depends on the value, so the low-order bits of a
    release can reveal it (Mironov 2012). Use :class:`Laplace` for releases; this class
    exists for comparison (benchmarks, tests, reproducing other libraries).

    Parameters
    ----------
    {epsilon}
    sensitivity : float, default=1.0
        L1 sensitivity of the query (for an array: of the whole vector), >= 0.
    {random_state}

    Notes
    -----
    **Privacy.** ε-DP in the idealised real-number model only: adds Laplace noise of scale
    ``sensitivity / epsilon`` (rounded up) to every coordinate. Not floating-point safe.
    Recorded as a :class:`~dpsk.accounting.LaplaceEvent` (scalar) or a
    :class:`~dpsk.accounting.PureDPEvent` (vector).
    """

    def __init__(self, *, epsilon, sensitivity=1.0, random_state=None):
        super().__init__(epsilon=epsilon, delta=0.0, sensitivity=sensitivity, random_state=random_state)

    def _calibrate(self, size):
        multiplier = laplace_noise_multiplier(self.epsilon)  # 1/multiplier <= ε
        scale = float(Fraction(multiplier) * Fraction(self.sensitivity))
        if Fraction(scale) < Fraction(multiplier) * Fraction(self.sensitivity):
            scale = np.nextafter(scale, np.inf)  # never less noise than the event states
        event = LaplaceEvent(multiplier) if size <= 1 else PureDPEvent(laplace_epsilon(multiplier))
        return Calibration(event, (float(scale),))

    def _add_noise(self, flat, params):
        add_laplace(flat, params[0], self._rng)

    def _variance(self, params):
        return 2.0 * params[0] ** 2
