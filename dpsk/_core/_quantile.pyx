# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Bin indices of the private quantile's grid, in one pass (``dpsk.stats._quantile``).

The private quantile cuts a public range [lower, upper] into ``bins`` equal bins and
needs, for every value, its bin; then the number of values per block of ``2**shift``
consecutive bins, to find the window of ranks it reads (``_select_counted``). In numpy
that is seven full-size passes and two float64 temporaries per column (the clip, the
scaling, the floor, the cast, then a counting pass); here it is one pass and the uint32
indices only. Import these functions from ``dpsk._core._quantile``.

Bitwise the numpy definition
============================

``_bin_index`` in ``dpsk.stats._quantile`` is the definition: for each value x,
``p = clip(x, lower, upper); p /= 2; p -= lower / 2; p *= factor`` (``factor = bins /
half_width``, ``half_width = upper / 2 − lower / 2``; or ``p = p / half_width * bins``
when that factor is not finite, a subnormal range), ``floor(p)`` clipped to
``[0, bins − 1]``. The loop below performs the same IEEE-754 double operations in the
same order, one rounding each (no FMA), so each p is the same double; its floor is taken
exactly by the 2**52 trick described at the loop. The clip differs from numpy's only in
the sign of a zero, which the floor and the final clip to [0, bins − 1] erase. The tests
(``tests/_core/test_quantile_bins.py``) compare with the numpy definition on values at,
next to and between bin edges, ranges near the float limits and subnormal ranges.

Functions
=========

``bin_index_counts(column, lower, upper, bins, shift, n_blocks) -> (index, counts)``
    ``column``: finite values (float64; a strided or other-dtype column is copied); ``1 <= bins <= 2**32`` and
    ``half_width > 0`` (the caller handles the other cases). ``index``: uint32 bin of
    each value; ``counts``: int64 number of values per block of ``2**shift`` bins
    (``n_blocks`` blocks; ``((bins − 1) >> shift) < n_blocks`` required).
It releases the GIL in its loops and never modifies its inputs.
"""

from libc.math cimport isfinite
from libc.stdint cimport int64_t, uint32_t, uint64_t

import numpy as np

__all__ = ["bin_index_counts"]


cdef extern from *:
    """
    /* The bins of n values in float arithmetic only, so that the loop vectorises (AVX2
       where the CPU has it, without FMA: v*factor and the addition of 2**52 after it must
       round separately).
       After the clip, p = v/2 - lower/2 >= 0 (IEEE operations are monotone) and p*factor
       stays below 2**34, so r = (p + 2**52) - 2**52 is p rounded to an integer exactly and
       floor(p) = r - (r > p); the low 32 bits of the double floor(p) + 2**52 are then the
       integer itself (its ulp is 1), which the loop stores without a float-to-int
       conversion (AVX2 has none for 64-bit integers). */
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC push_options
    #pragma GCC optimize ("no-trapping-math")
    #endif
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static void _dpsk_bin_index(const double* __restrict x, Py_ssize_t n, double lower,
                                double upper, double half_lower, double factor,
                                double half_width, double bins, int scaled,
                                unsigned int* __restrict out) {
        const double magic = 4503599627370496.0;
        const double top = bins - 1.0;
        Py_ssize_t i;
        if (scaled) {
            for (i = 0; i < n; i++) {
                double v = x[i], r;
                union { double d; unsigned long long u; } bits;
                v = v > lower ? v : lower;
                v = v < upper ? v : upper;
                v = v / 2.0 - half_lower;
                v = v * factor;
                r = (v + magic) - magic;
                r = r - (double) (r > v);
                r = r < top ? r : top;
                bits.d = r + magic;
                out[i] = (unsigned int) bits.u;
            }
        } else {  /* a subnormal range: the factor overflows, divide first */
            for (i = 0; i < n; i++) {
                double v = x[i], r;
                union { double d; unsigned long long u; } bits;
                v = v > lower ? v : lower;
                v = v < upper ? v : upper;
                v = (v / 2.0 - half_lower) / half_width * bins;
                r = (v + magic) - magic;
                r = r - (double) (r > v);
                r = r < top ? r : top;
                bits.d = r + magic;
                out[i] = (unsigned int) bits.u;
            }
        }
    }
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC pop_options
    #endif
    """
    void _bin_index "_dpsk_bin_index"(const double* x, Py_ssize_t n, double lower, double upper,
                                      double half_lower, double factor, double half_width,
                                      double bins, int scaled, uint32_t* out) noexcept nogil


def bin_index_counts(column, double lower, double upper, uint64_t bins, int shift, Py_ssize_t n_blocks):
    cdef double half_width = upper / 2 - lower / 2
    cdef double factor = <double>bins / half_width
    if not (1 <= bins <= 2**32) or not half_width > 0:
        raise ValueError("bin_index_counts needs 1 <= bins <= 2**32 and upper > lower")
    if shift < 0 or n_blocks < 1 or ((bins - 1) >> shift) >= <uint64_t>n_blocks:
        raise ValueError("the blocks do not cover the bins")
    cdef const double[::1] x = np.ascontiguousarray(column, dtype=np.float64)
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t i
    index = np.empty(n, dtype=np.uint32)
    counts = np.zeros(n_blocks, dtype=np.int64)
    cdef uint32_t[::1] out = index
    cdef int64_t[::1] per_block = counts
    if n == 0:
        return index, counts
    with nogil:
        _bin_index(&x[0], n, lower, upper, lower / 2, factor, half_width, <double>bins,
                   isfinite(factor), &out[0])
        for i in range(n):
            per_block[out[i] >> shift] += 1
    return index, counts
