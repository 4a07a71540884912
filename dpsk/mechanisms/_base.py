# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What every mechanism shares: parameter validation, value handling, calibration cache.

A mechanism is constructed with keyword-only privacy parameters (``epsilon``, ``delta``,
``sensitivity``, ``random_state``, as in diffprivlib) and releases values with
``randomise(value)``: a scalar, or an array treated as **one vector-valued query** whose
sensitivity (L1 or L2, per mechanism) is ``sensitivity``. Each call is one release: it
calls :func:`dpsk.accounting.note_release` once, with the event
``privacy_event(value.shape)``. The noise calibration may depend on the number of
coordinates (rounding onto a lattice adds to the sensitivity per coordinate), so it is
computed per size and cached.

Mechanisms are immutable after construction (:class:`ImmutableMechanism`): the noise is
calibrated from the parameters given to the constructor, so assigning ``m.epsilon``
afterwards would change what the object reports and records, not the noise.

With an integer ``random_state`` every release draws from its own stream, derived from
the seed, the mechanism's class and parameters, the value released and the release's
index on this object (:class:`_NoiseSource`, ``dpsk.utils.validation.release_generator``):
two mechanisms with the same seed on different values do not share noise, and successive
calls of one mechanism differ.
"""

import inspect
import math
import numbers
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from dpsk.accounting import CalibratedEvent, PureDPEvent, note_release
from dpsk.accounting._events import NON_PRIVATE_EVENT
from dpsk.utils._random import check_random_state, is_seed, release_generator
from dpsk.utils.validation import check_privacy_params, is_non_private

__all__ = ["DPMechanism", "ImmutableMechanism"]

#: Parameter text shared by the mechanisms' docstrings (``dpsk.utils._docstring.Substitution``).
MECHANISM_DOCS = {
    "epsilon": """epsilon : float
        Privacy parameter ε > 0. Smaller is more private and noisier. ``float("inf")``
        releases the exact value (no noise, no privacy), recorded as an infinite spend.""",
    "delta": """delta : float
        Privacy parameter δ in (0, 1).""",
    "random_state": """random_state : None, int, SeedSequence, BitGenerator or Generator, default=None
        ``None`` (recommended): dpsk's cryptographically secure generator, seeded by the
        operating system. An int or a SeedSequence: reproducible noise, for tests and
        research only (whoever knows the seed can remove the noise); each release draws
        from a stream derived from the seed, the mechanism's class and parameters, the
        value and the call's index, so successive calls, and mechanisms with the same
        seed on different values, get independent noise. A Generator or BitGenerator is
        used as is, for every call: the explicit way to share a stream.""",
}


class _FrozenAfterInit(type):
    """Metaclass: the instance is frozen once the outermost ``__init__`` has returned."""

    def __call__(cls, *args, **kwargs):
        instance = super().__call__(*args, **kwargs)
        object.__setattr__(instance, "_frozen", True)
        return instance

    @property
    def __signature__(cls):
        # The class's signature is its __init__'s, not this generic __call__'s (numpydoc,
        # help() and IDEs read it).
        signature = inspect.signature(cls.__init__)
        return signature.replace(parameters=list(signature.parameters.values())[1:])


class _NoiseSource:
    """Where a mechanism's draws come from, per release.

    ``None``, a Generator or a BitGenerator: one Generator for every release (fresh noise
    from call to call; a Generator passed in is the caller's stream, used as is). An
    integer or a SeedSequence: each release gets the Generator
    ``release_generator(seed, context=(class, parameters, call index), data=(value,))``.
    """

    def __init__(self, random_state):
        self.random_state = random_state
        self.seeded = is_seed(random_state)
        self.current = None if self.seeded else check_random_state(random_state)
        self.calls = 0

    def begin(self, mechanism, data):
        """Select the Generator of the release of ``data`` that starts now."""
        if self.seeded:
            params = {k: v for k, v in vars(mechanism).items() if not k.startswith("_") and k != "random_state"}
            context = (f"{type(mechanism).__module__}.{type(mechanism).__qualname__}", params, self.calls)
            self.calls += 1
            self.current = release_generator(self.random_state, context=context, data=data)
        return self.current


class ImmutableMechanism(metaclass=_FrozenAfterInit):
    """Base of every mechanism: immutable after construction, with a per-release noise source.

    Assigning or deleting an attribute after ``__init__`` raises AttributeError: the
    calibration (and the recorded privacy event) was computed from the constructor's
    parameters, and a reassigned ``epsilon`` would be reported but not used. Construct a
    new mechanism instead.
    """

    def __setattr__(self, name, value):
        if self.__dict__.get("_frozen", False):
            raise AttributeError(
                f"{type(self).__name__} is immutable: its noise is calibrated when it is "
                f"constructed, so {name!r} cannot be changed afterwards. Construct a new "
                f"{type(self).__name__} with the parameters you want."
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if self.__dict__.get("_frozen", False):
            raise AttributeError(f"{type(self).__name__} is immutable: {name!r} cannot be deleted")
        object.__delattr__(self, name)

    @property
    def _rng(self):
        """The Generator of the current release (see ``_NoiseSource``)."""
        return self._noise.current


class Calibration(NamedTuple):
    """The noise parameters for one size of value, and the event of one release."""

    event: object
    params: tuple


def check_sensitivity(sensitivity, *, positive=False):
    """A finite sensitivity >= 0 (> 0 with ``positive=True``), as a float."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, numbers.Real):
        raise TypeError(f"sensitivity must be a real number, got {type(sensitivity).__name__}")
    if math.isnan(sensitivity) or not math.isfinite(sensitivity) or sensitivity < 0:
        raise ValueError(f"sensitivity must be finite and >= 0, got {sensitivity}")
    if positive and sensitivity == 0:
        raise ValueError("sensitivity must be > 0")
    return float(sensitivity)


def _size(shape):
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return int(np.prod(shape, dtype=np.int64))


class DPMechanism(ImmutableMechanism):
    """Base class of value-perturbing mechanisms (not an estimator: parameters are validated here).

    Subclasses define ``_calibrate(size) -> Calibration`` and ``_add_noise(flat, params)``
    (in place on a private copy of the value, flattened).
    """

    #: Whether values must be integers (discrete noise) rather than floats.
    _integer_values = False

    def __init__(self, *, epsilon, delta=0.0, sensitivity=1.0, random_state=None):
        self.epsilon, self.delta = check_privacy_params(epsilon, delta)
        self.sensitivity = check_sensitivity(sensitivity)
        self.random_state = random_state
        # Successive releases use fresh noise even with an integer seed (a mechanism is a
        # sampler, not an estimator): see _NoiseSource.
        self._noise = _NoiseSource(random_state)
        self._calibrations = {}

    def __repr__(self):
        return (
            f"{type(self).__name__}(epsilon={self.epsilon!r}, delta={self.delta!r}, sensitivity={self.sensitivity!r})"
        )

    # -- calibration --------------------------------------------------------------------

    def _calibration(self, size):
        if size not in self._calibrations:
            if self.sensitivity == 0:
                calibration = Calibration(PureDPEvent(0.0), ())
            elif is_non_private(self.epsilon):  # no noise: the exact value, an infinite spend
                calibration = Calibration(NON_PRIVATE_EVENT, ())
            else:
                calibration = self._calibrate(size)
                if self.delta > 0:
                    # Record the δ this release was calibrated for: an accountant without a
                    # δ ceiling reports its ledger there (see CalibratedEvent).
                    calibration = calibration._replace(event=CalibratedEvent(calibration.event, self.delta))
            self._calibrations[size] = calibration
        return self._calibrations[size]

    def privacy_event(self, shape=()):
        """The privacy event of one :meth:`randomise` call on a value of this shape.

        Parameters
        ----------
        shape : tuple of int or int, default=()
            Shape of the released value; ``()`` for a scalar.

        Returns
        -------
        PrivacyEvent
        """
        return self._calibration(_size(shape)).event

    # -- release ------------------------------------------------------------------------

    def _values(self, value):
        """A private C-contiguous copy of ``value`` with the output dtype, and how to return it."""
        arr = np.asarray(value)
        if self._integer_values:
            if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
                raise TypeError(f"value must be numeric, got dtype {arr.dtype}")
            if np.issubdtype(arr.dtype, np.floating):
                if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
                    raise ValueError("value must hold integers (this mechanism adds integer noise)")
            work = np.array(arr, dtype=np.int64, order="C", copy=True)
        else:
            if not (np.issubdtype(arr.dtype, np.number) and not np.issubdtype(arr.dtype, np.complexfloating)):
                raise TypeError(f"value must be real-valued, got dtype {arr.dtype}")
            dtype = np.float32 if arr.dtype == np.float32 else np.float64
            work = np.array(arr, dtype=dtype, order="C", copy=True)
            if not np.all(np.isfinite(work)):
                raise ValueError("value must be finite (NaN and inf cannot be released privately)")
        return arr, work

    def _restore(self, value, arr, out):
        """Return ``out`` in the form of the input: same dtype, a scalar for a scalar."""
        if self._integer_values and arr.dtype != out.dtype:
            if np.issubdtype(arr.dtype, np.integer):
                info = np.iinfo(arr.dtype)
                if out.size and (out.min() < info.min or out.max() > info.max):
                    raise OverflowError(f"the noisy value does not fit the input dtype {arr.dtype}")
            out = out.astype(arr.dtype)
        if out.ndim == 0:
            python_number = isinstance(value, numbers.Number) and not isinstance(value, np.generic)
            return out.item() if python_number else out[()]
        return out

    def randomise(self, value):
        """Release ``value`` with noise: one private release, recorded with ``note_release``.

        Parameters
        ----------
        value : float, int or array-like
            A scalar, or an array treated as one vector-valued query whose sensitivity is
            ``self.sensitivity`` (see the class docstring for the norm).

        Returns
        -------
        float, int or ndarray
            The noisy value, with the input's shape and dtype (float32 stays float32;
            integer input to a continuous mechanism gives float64).
        """
        arr, work = self._values(value)
        calibration = self._calibration(work.size)
        self._noise.begin(self, (work,))
        if calibration.params and work.size:  # no parameters: nothing to hide (Δ = 0)
            self._add_noise(work.reshape(-1), calibration.params)
        note_release(calibration.event)
        return self._restore(value, arr, work)

    def bias(self, value):
        """Expected output minus ``value`` (0 unless stated otherwise)."""
        return np.zeros_like(np.asarray(value, dtype=np.float64))[()]

    def variance(self, value):
        """Variance of each coordinate of the output."""
        params = self._calibration(np.asarray(value).size).params
        return self._variance(params) if params else 0.0


def exact_rational(value, max_num, max_den, *, rounding):
    """(num, den) with num <= max_num, den <= max_den, equal to ``value`` when it fits.

    Otherwise den is a power of two and num/den is ``value`` rounded ``"up"`` or ``"down"``
    (as the privacy argument of the caller requires: never less noise, never a larger γ).
    """
    exact = Fraction(value)
    if exact.numerator <= max_num and exact.denominator <= max_den:
        return exact.numerator, exact.denominator
    for bits in range(max_den.bit_length() - 1, -1, -1):
        den = 1 << bits
        num = exact.numerator * den // exact.denominator  # floor
        if rounding == "up" and num * exact.denominator != exact.numerator * den:
            num += 1
        if num <= max_num:
            return num, den
    raise ValueError(f"{float(value)!r} is too large for the exact sampler")
