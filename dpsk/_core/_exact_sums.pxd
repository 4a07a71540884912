# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""C-level pieces of the exact sums shared with the sparse kernels (``_sparse.pyx``).

One quantisation (``_quantise``), one grid (``_Grid``), one 128-bit accumulator type:
the sparse kernels quantise stored entries with exactly the code the dense kernels use,
so that their exact integer sums are the dense ones.
"""

from dpsk._core._clip cimport clip_value

cdef extern from *:
    """
    #if !defined(__SIZEOF_INT128__)
    #error "dpsk's exact accumulators need a 64-bit GCC or Clang (__int128)"
    #endif
    typedef __int128 _dpsk_i128;
    static inline long long _dpsk_i128_hi(__int128 v) { return (long long) (v >> 64); }
    static inline unsigned long long _dpsk_i128_lo(__int128 v) { return (unsigned long long) v; }
    """
    # Cython sees a 64-bit integer; the C code declares, adds and multiplies 128 bits.
    ctypedef long long i128 "_dpsk_i128"
    long long _i128_hi "_dpsk_i128_hi"(i128) noexcept nogil
    unsigned long long _i128_lo "_dpsk_i128_lo"(i128) noexcept nogil

cdef struct _Grid:
    # The public quantisation grid of every feature (arrays of n_features): clipping
    # bounds, centre, 1/step, the largest |q| and the offset of the rounding.
    const double* lo
    const double* hi
    const double* centre
    const double* inverse
    const double* qmax
    const double* offset


cdef _Grid _grid(double[::1] lo, double[::1] hi, double[::1] centre, double[::1] inverse,
                 double[::1] qmax, double[::1] offset)
cdef object _to_ints(const i128* values, Py_ssize_t size)


cdef inline long long _quantise(double v, double lo, double hi, double centre, double inverse,
                                double qmax, double offset, bint toward_zero) noexcept nogil:
    """q = round((clip(v) − centre)/step), clamped to [−qmax, qmax] *before* the integer
    conversion: whatever the float rounding of the subtraction, |q| <= qmax."""
    cdef double t = (clip_value(v, lo, hi) - centre) * inverse
    if t > qmax:
        t = qmax
    elif t < -qmax:
        t = -qmax
    if toward_zero:
        return <long long> t
    # round half up as floor(t + qmax + 1/2) − qmax: the argument is >= 1/2, so the
    # truncating conversion is a floor (a rounding of the addition only changes which
    # integer in [−qmax, qmax] comes out, never the bound).
    return <long long> (t + offset) - <long long> qmax
