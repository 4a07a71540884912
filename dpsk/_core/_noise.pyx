# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Bulk noise kernels: add noise in place to caller-allocated float32/float64 buffers.

Every function takes a writable, C-contiguous 1-d ``x`` (float32 or float64), scalar
parameters and a :class:`numpy.random.Generator` ``rng``. Parameters are validated in
the wrapper before the GIL is released (a scale <= 0, NaN or inf raises ``ValueError``;
a bad buffer raises ``TypeError``/``ValueError`` naming ``x``), the draws happen with the
GIL released while holding ``rng.bit_generator.lock``, noise is drawn in double and the
sum is cast on store, and empty buffers are a no-op.

Textbook continuous noise (same stream as numpy)
------------------------------------------------
``add_laplace(x, scale, rng)``
    ``x += Laplace(0, scale)``: numpy's ``random_laplace`` (inverse CDF of one uniform).
    Equals ``x + rng.laplace(0, scale, n)`` for the same seed (float64; float32 after the
    cast), and two calls consume the stream of one call of size 2n. **Not floating-point
    safe**: the set of doubles it can output depends on ``x`` and leaks it through the
    low-order bits (Mironov 2012). Use :func:`add_laplace_lattice` for releases.
``add_gaussian(x, sigma, rng)``
    ``x += sigma * N(0, 1)``; equals ``x + sigma * rng.standard_normal(n)``. Not
    floating-point safe either.
``add_exponential(x, scale, rng)``
    ``x += Exponential(scale)``; the stream of ``rng.exponential(scale, n)``.
``gamma_norm_vector(out, scale, rng)``
    Overwrites ``out`` (length d) with one sample of density proportional to
    exp(-||z||_2 / scale): a uniform direction (d standard normals, normalised) times a
    norm ~ Gamma(shape=d, scale=scale). Draw order: the d normals, then the gamma variate,
    i.e. ``z = rng.standard_normal(d); r = scale * rng.standard_gamma(d)``. Used by
    objective perturbation. (Continuous; not floating-point safe.)

Floating-point-safe noise on a lattice
--------------------------------------
``add_laplace_lattice(x, scale, granularity, rng)``
    ``x[i] <- g * (round(x[i] / g) + K_i)`` with K_i exact discrete Laplace,
    P(k) proportional to exp(-|k| g / scale), drawn by ``_exact``'s integer-only sampler
    with t = scale / g as an exact rational. ``g`` must be a power of two (normally
    :func:`lattice_granularity` ``(scale)``).
``add_gaussian_lattice(x, sigma, granularity, rng)``
    The same with K_i exact discrete Gaussian of scale sigma / g (CKS20 Algorithm 3).
    (sigma/g)^2 is used exactly when it fits the exact range of ``_exact``, otherwise it
    is rounded *up* to a rational within a relative 2**-47 (more noise, never less).
``lattice_granularity(scale, noise="laplace")``
    The default power-of-two granularity for a noise scale.
``lattice_sensitivity(sensitivity, granularity, n_coordinates=1, norm="l1")``
    The sensitivity to calibrate to after rounding onto the lattice.

How the lattice release works, and what callers must know:

* Rounding is ``round(y) = floor(y + 1/2)`` computed exactly (ties upward). It is
  monotone and commutes with shifts by integers, so two inputs whose difference is at
  most Δ, with Δ a multiple of g, round to values whose difference is still at most Δ:
  **rounding preserves a sensitivity that is a multiple of g.** Otherwise calibrate to Δ
  rounded up to a multiple of g, and for vectors to the bounds of
  :func:`lattice_sensitivity` (L1 over d coordinates: at most Δ + d·g, exactly
  ``ceil(Δ/g)·g + (d - 1)·g``; L2: at most Δ + sqrt(d)·g).
* The released value (round(x/g) + K)·g is computed from the exact integer
  round(x/g) + K (128-bit arithmetic) and rounded once to the nearest double, so it is a
  function of that integer only: exact post-processing of the discrete mechanism, which
  carries the privacy guarantee of the discrete Laplace (geometric) or discrete Gaussian
  mechanism on the integers x/g. For float64 the output lies exactly on gℤ whenever
  representable; the cast to float32 for float32 buffers is further post-processing.
* ``x`` must be finite and |x|/g must not overflow (checked before any write; ValueError).
* The noise K is exact (``_exact``'s samplers): its only deviations from the ideal laws
  are the truncations documented there (relative error below 2e-28 for Laplace; total
  variation below exp(-2**27) for the Gaussian).
* Why these granularities: for Laplace g is the smallest power of two >= scale·2**-40
  (as in Google's differential-privacy library), so the lattice is 2**39-2**40 steps per
  unit of scale: rounding moves a value by at most 2**-40·scale, and the L1 sensitivity
  grows by at most d·2**-39·scale, negligible unless d is astronomically large. For the
  Gaussian g is the smallest power of two >= sigma·2**-24: sigma/g <= 2**24 keeps the exact
  discrete Gaussian within 128-bit integer arithmetic, and the L2 sensitivity grows by at
  most sqrt(d)·2**-23·sigma (1e-4·sigma for a million coordinates).

Notes
-----
**Privacy.** Only the lattice functions are floating-point safe. The textbook functions
reproduce numpy's streams and are for tests, benchmarks and non-release noise.
"""

from fractions import Fraction
from math import ceil, frexp, ldexp, nextafter, sqrt

from cython cimport floating
from libc.math cimport floor, fabs, frexp as c_frexp, ldexp as c_ldexp, sqrt as c_sqrt
from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_exponential,
    random_laplace,
    random_standard_gamma,
    random_standard_normal,
)

import numpy as np

from dpsk._core._exact cimport (
    BitPool,
    GaussianParams,
    U128,
    bit_pool_init,
    fill_discrete_gaussian,
    fill_discrete_laplace,
    fill_gaussian_params,
    u128_add,
    u128_sub,
)
from dpsk._core._exact import MAX_T_DEN, MAX_T_NUM, round_up_sigma2
from dpsk._core._random cimport get_bitgen
from dpsk._core._random import check_out_buffer

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# Lattice resolution: the granularity is the smallest power of two >= scale * 2**-bits.
LAPLACE_LATTICE_BITS = 40
GAUSSIAN_LATTICE_BITS = 24


# ---------------------------------------------------------------------------------------
# Checks before nogil


def _check_positive(value, str name):
    value = float(value)
    if not (0.0 < value < float("inf")):  # also rejects NaN
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def _check_power_of_two(value, str name):
    value = _check_positive(value, name)
    if frexp(value)[0] != 0.5:
        raise ValueError(f"{name} must be a power of two (see lattice_granularity), got {value}")
    return value


def _check_x(x):
    check_out_buffer(x, "x", _FLOAT_DTYPES)


# ---------------------------------------------------------------------------------------
# Textbook continuous noise


# One loop for every textbook sampler, as numpy's ``cont()`` (numpy/random/_common.pyx):
# a sampler is a C function of the bit generator and one parameter, and the loop adds
# its draws to the buffer, in index order (so the stream is numpy's).
ctypedef double (*sampler_t)(bitgen_t* state, double param) noexcept nogil


cdef double _laplace(bitgen_t* state, double scale) noexcept nogil:
    return random_laplace(state, 0.0, scale)


cdef double _gaussian(bitgen_t* state, double sigma) noexcept nogil:
    return sigma * random_standard_normal(state)


cdef double _exponential(bitgen_t* state, double scale) noexcept nogil:
    return random_exponential(state, scale)


cdef void _add_draws(floating* x, Py_ssize_t n, sampler_t draw, double param,
                     bitgen_t* state) noexcept nogil:
    """x[i] += draw(state, param) for i in order; the sum is in double, cast on store."""
    cdef Py_ssize_t i
    for i in range(n):
        x[i] = <floating> (x[i] + draw(state, param))


cdef object _add_noise(object x, sampler_t draw, double param, object rng):
    """Add ``draw``'s variates to ``x`` (checked by the caller) under ``rng``'s lock."""
    cdef bitgen_t* state = get_bitgen(rng)
    cdef float[::1] x32
    cdef double[::1] x64
    if x.shape[0] == 0:
        return
    if x.dtype == np.float32:
        x32 = x
        with rng.bit_generator.lock, nogil:
            _add_draws(&x32[0], x32.shape[0], draw, param, state)
    else:
        x64 = x
        with rng.bit_generator.lock, nogil:
            _add_draws(&x64[0], x64.shape[0], draw, param, state)


def add_laplace(x, scale, rng):
    """Add textbook Laplace(0, scale) noise to ``x`` in place (not floating-point safe).

    Parameters
    ----------
    x : ndarray of shape (n,), dtype float32 or float64
        Writable, C-contiguous; modified in place.
    scale : float
        Finite and > 0.
    rng : numpy.random.Generator
    """
    _check_x(x)
    _add_noise(x, _laplace, _check_positive(scale, "scale"), rng)


def add_gaussian(x, sigma, rng):
    """Add ``sigma * N(0, 1)`` noise to ``x`` in place (not floating-point safe).

    Parameters
    ----------
    x : ndarray of shape (n,), dtype float32 or float64
        Writable, C-contiguous; modified in place.
    sigma : float
        Finite and > 0.
    rng : numpy.random.Generator
    """
    _check_x(x)
    _add_noise(x, _gaussian, _check_positive(sigma, "sigma"), rng)


def add_exponential(x, scale, rng):
    """Add Exponential(scale) noise (mean ``scale``) to ``x`` in place.

    Parameters
    ----------
    x : ndarray of shape (n,), dtype float32 or float64
        Writable, C-contiguous; modified in place.
    scale : float
        Finite and > 0.
    rng : numpy.random.Generator
    """
    _check_x(x)
    _add_noise(x, _exponential, _check_positive(scale, "scale"), rng)


def _gamma_norm_typed(floating[::1] out, double scale, rng):
    cdef bitgen_t* state = get_bitgen(rng)
    cdef Py_ssize_t i, d = out.shape[0]
    if d == 0:
        return
    direction = np.empty(d, dtype=np.float64)  # drawn in double, cast on store
    cdef double[::1] z = direction
    cdef double norm2, radius, factor
    with rng.bit_generator.lock, nogil:
        while True:
            norm2 = 0.0
            for i in range(d):
                z[i] = random_standard_normal(state)
                norm2 += z[i] * z[i]
            if norm2 > 0.0:  # a zero vector has no direction (probability 0): redraw
                break
        radius = scale * random_standard_gamma(state, <double> d)
        factor = radius / c_sqrt(norm2)
        for i in range(d):
            out[i] = <floating> (z[i] * factor)


def gamma_norm_vector(out, scale, rng):
    """Overwrite ``out`` with one vector of density proportional to exp(-||z||_2 / scale).

    Parameters
    ----------
    out : ndarray of shape (d,), dtype float32 or float64
        Writable, C-contiguous; overwritten.
    scale : float
        Finite and > 0.
    rng : numpy.random.Generator

    Notes
    -----
    Uniform direction (d standard normals, normalised) times a norm drawn from
    Gamma(shape=d, scale=scale), in that order.
    """
    check_out_buffer(out, "out", _FLOAT_DTYPES)
    _gamma_norm_typed(out, _check_positive(scale, "scale"), rng)


# ---------------------------------------------------------------------------------------
# Lattice noise


def lattice_granularity(scale, noise="laplace"):
    """Default power-of-two granularity g for lattice noise of the given scale.

    Parameters
    ----------
    scale : float
        The Laplace scale b, or the Gaussian sigma. Finite and > 0.
    noise : {"laplace", "gaussian"}, default="laplace"

    Returns
    -------
    granularity : float
        The smallest power of two >= ``scale * 2**-40`` (Laplace) or
        ``scale * 2**-24`` (Gaussian); see the module docstring for why.
    """
    scale = _check_positive(scale, "scale")
    if noise == "laplace":
        bits = LAPLACE_LATTICE_BITS
    elif noise == "gaussian":
        bits = GAUSSIAN_LATTICE_BITS
    else:
        raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
    target = ldexp(scale, -bits)
    mantissa, exponent = frexp(target)  # target = mantissa * 2**exponent, mantissa in [0.5, 1)
    granularity = ldexp(1.0, exponent - 1 if mantissa == 0.5 else exponent)
    if granularity == 0.0:
        raise ValueError(f"scale={scale} is too small for a lattice granularity")
    return granularity


def lattice_sensitivity(sensitivity, granularity, n_coordinates=1, norm="l1"):
    """Sensitivity to calibrate lattice noise to, after rounding values onto g·ℤ.

    Parameters
    ----------
    sensitivity : float
        The sensitivity Δ of the unrounded query (>= 0), in the given norm.
    granularity : float
        The lattice granularity g (a power of two).
    n_coordinates : int, default=1
        Number of coordinates d that may differ between neighbouring inputs.
    norm : {"l1", "l2"}, default="l1"

    Returns
    -------
    float
        L1: ``ceil(Δ/g)·g + (d - 1)·g`` (equal to Δ when d = 1 and Δ is a multiple of g;
        at most Δ + d·g). L2: Δ + sqrt(d)·g, rounded up. Every coordinate's rounded
        difference is below its unrounded difference plus g, and a multiple of g.
    """
    sensitivity = float(sensitivity)
    if not (0.0 <= sensitivity < float("inf")):
        raise ValueError(f"sensitivity must be finite and >= 0, got {sensitivity}")
    granularity = _check_power_of_two(granularity, "granularity")
    if int(n_coordinates) != n_coordinates or n_coordinates < 1:
        raise ValueError(f"n_coordinates must be a positive integer, got {n_coordinates}")
    d = int(n_coordinates)
    if norm == "l1":
        steps = Fraction(sensitivity) / Fraction(granularity)
        bound = (ceil(steps) + d - 1) * Fraction(granularity)
        result = float(bound)
        return result if result >= bound else nextafter(result, float("inf"))
    if norm == "l2":
        result = sensitivity + sqrt(d) * granularity
        # sqrt and the sum each round to nearest: two ulps up covers both.
        return nextafter(nextafter(result, float("inf")), float("inf"))
    raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}")


cdef inline double _round_half_up(double y) noexcept nogil:
    """floor(y + 1/2) computed exactly (y + 0.5 itself may round)."""
    cdef double f = floor(y)
    return f + 1.0 if y - f >= 0.5 else f


cdef inline double _lattice_point(double m, int64_t k) noexcept nogil:
    """The double nearest to the exact integer m + k (m integer-valued, |k| <= 2**62).

    The result depends on the exact sum only (one rounding), so releasing it is
    post-processing of the integer m + k.
    """
    cdef U128 mag, kk
    cdef int neg, kneg, e, shift
    cdef double frac, top
    cdef uint64_t mant, lost
    if fabs(m) < 4611686018427387904.0:  # |m| < 2**62: the int64 sum is exact
        return <double> (<int64_t> m + k)
    frac = c_frexp(fabs(m), &e)  # |m| = frac * 2**e, 2**62 <= |m|
    if e > 117:
        # ulp(m) >= 2**65 > 2|k|: m + k rounds to m.
        return m
    mant = <uint64_t> c_ldexp(frac, 53)
    shift = e - 53  # in [10, 64]
    if shift == 64:
        mag.hi = mant
        mag.lo = 0
    else:
        mag.hi = mant >> (64 - shift)
        mag.lo = mant << shift
    neg = m < 0
    kneg = k < 0
    kk.hi = 0
    kk.lo = <uint64_t> (-k if kneg else k)
    if neg == kneg:
        mag = u128_add(mag, kk)
    else:
        mag = u128_sub(mag, kk)  # |m| >= 2**62 >= |k|
    # Correctly rounded conversion: keep the top 64 bits, with any lost bit as sticky.
    shift = 0
    while (mag.hi >> shift) != 0:
        shift += 1
    if shift == 0:
        top = <double> mag.lo
    else:
        lost = mag.lo & ((<uint64_t> 1 << shift) - 1) if shift < 64 else mag.lo
        mant = (mag.lo >> shift) | (mag.hi << (64 - shift)) if shift < 64 else mag.hi
        top = c_ldexp(<double> (mant | (lost != 0)), shift)
    return -top if neg else top


cdef int _check_lattice_input(floating* x, Py_ssize_t n, double granularity) noexcept nogil:
    cdef Py_ssize_t i
    cdef double y
    for i in range(n):
        y = (<double> x[i]) / granularity
        if not (fabs(y) <= 1.7976931348623157e308):  # NaN or inf (also an overflow of x/g)
            return -1
    return 0


# Noise is drawn in chunks into a stack buffer by _exact's bulk samplers, so that the
# sampling loop is compiled (and inlined) inside _exact.
DEF _CHUNK = 1024


cdef void _snap_chunk(floating* x, const int64_t* k, Py_ssize_t n, double g,
                      double inv_g) noexcept nogil:
    """x <- g * (round(x/g) + k) for one chunk (x * inv_g is exactly x / g: g is 2**j)."""
    cdef Py_ssize_t i
    for i in range(n):
        x[i] = <floating> (g * _lattice_point(_round_half_up(x[i] * inv_g), k[i]))


def _lattice_typed(floating[::1] x, double g, rng, laplace_params, gaussian_params):
    """Shared body of the lattice kernels: one of laplace_params / gaussian_params is None."""
    cdef bitgen_t* state = get_bitgen(rng)
    cdef Py_ssize_t start, m, n = x.shape[0]
    cdef GaussianParams params
    cdef BitPool pool
    cdef int64_t noise[_CHUNK]
    cdef uint64_t t_num = 0, t_den = 0
    cdef bint laplace = laplace_params is not None
    cdef double inv_g = 1.0 / g
    cdef int bad
    if laplace:
        t_num, t_den = laplace_params
    else:
        fill_gaussian_params(&params, gaussian_params[0], gaussian_params[1])
    bit_pool_init(&pool, state)
    if n == 0:
        return
    if inv_g * g != 1.0:  # 1/g overflows for the very smallest powers of two
        raise ValueError("granularity is too small")
    with nogil:
        bad = _check_lattice_input(&x[0], n, g)
    if bad:
        raise ValueError("x must be finite, with |x| / granularity finite")
    with rng.bit_generator.lock, nogil:
        for start in range(0, n, _CHUNK):
            m = min(_CHUNK, n - start)
            if laplace:
                fill_discrete_laplace(&pool, noise, m, t_num, t_den)
            else:
                fill_discrete_gaussian(&pool, noise, m, &params)
            _snap_chunk(&x[start], noise, m, g, inv_g)


def add_laplace_lattice(x, scale, granularity, rng):
    """Floating-point-safe Laplace: ``x <- g * (round(x/g) + K)``, K exact discrete Laplace.

    Parameters
    ----------
    x : ndarray of shape (n,), dtype float32 or float64
        Writable, C-contiguous, finite; modified in place.
    scale : float
        Laplace scale b > 0: P(K = k) is proportional to exp(-|k| g / b).
    granularity : float
        The lattice step g, a power of two; normally ``lattice_granularity(scale)``.
        Raises ``ValueError`` if scale / g is outside the exact sampler's range
        (t = b/g as a reduced fraction needs numerator <= 2**56, denominator <= 2**62).
    rng : numpy.random.Generator

    Notes
    -----
    **Privacy.** ε-DP for a query whose values, after rounding to g·ℤ, have L1
    sensitivity Δ when b = Δ/ε (see :func:`lattice_sensitivity`); floating-point safe:
    the output is a function of the exact integer round(x/g) + K only.
    """
    _check_x(x)
    scale = _check_positive(scale, "scale")
    g = _check_power_of_two(granularity, "granularity")
    t = Fraction(scale) / Fraction(g)
    if t.numerator > MAX_T_NUM or t.denominator > MAX_T_DEN:
        raise ValueError(
            f"scale / granularity = {float(t)!r} is outside the exact discrete Laplace range; "
            "use granularity=lattice_granularity(scale)"
        )
    _lattice_typed(x, g, rng, (t.numerator, t.denominator), None)


def add_gaussian_lattice(x, sigma, granularity, rng):
    """Floating-point-safe Gaussian: ``x <- g * (round(x/g) + K)``, K exact discrete Gaussian.

    Parameters
    ----------
    x : ndarray of shape (n,), dtype float32 or float64
        Writable, C-contiguous, finite; modified in place.
    sigma : float
        Standard-deviation parameter > 0: P(K = k) is proportional to
        exp(-k^2 g^2 / (2 sigma^2)).
    granularity : float
        The lattice step g, a power of two; normally
        ``lattice_granularity(sigma, "gaussian")``. Raises ``ValueError`` if
        (sigma/g)^2 exceeds 2**49 (the exact 128-bit range).
    rng : numpy.random.Generator

    Notes
    -----
    **Privacy.** For a query whose rounded values have L2 sensitivity Δ, this is
    Δ²/(2σ²)-zCDP (Canonne, Kamath & Steinke 2020), with the (ε, δ) guarantees that follow;
    σ is used exactly or rounded up (never down). Floating-point safe.
    """
    _check_x(x)
    sigma = _check_positive(sigma, "sigma")
    g = _check_power_of_two(granularity, "granularity")
    num, den = round_up_sigma2((Fraction(sigma) / Fraction(g)) ** 2)
    _lattice_typed(x, g, rng, None, (num, den))


def _lattice_point_py(double m, int64_t k):
    """Test wrapper: the double nearest to the exact integer ``m + k``."""
    return _lattice_point(m, k)
