# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""C-level row-norm clipping for other Cython kernels (one clipping implementation).

Usage, e.g. to clip per-example gradients inside another kernel::

    from dpsk._core._clip cimport NormBound, clip_row_norm, make_norm_bound

    cdef NormBound bound = make_norm_bound(max_norm, n_features, True, floating is float)
    with nogil:
        if clip_row_norm(row, out_row, n_features, &bound):   # may alias (in place)
            ...  # the row holds NaN or ±inf: raise ValueError after the nogil section

``make_norm_bound`` checks its arguments (``ValueError``: max_norm not finite and > 0,
more than 2**40 features) and needs the GIL; ``clip_row_norm`` writes
``x · min(1, max_norm / ‖x‖)`` (L2 when ``l2``, else L1) with the exact guarantee of
``clip_rows_l2`` / ``clip_rows_l1``, and returns 1 for a non-finite row (0 otherwise).
``single`` must be true when the output is float32. See _clip.pyx for the argument.

``clip_row_norm_lanes(x, y, nnz, lanes, b)`` clips a *sparse* row given by its ``nnz``
stored entries ``x`` (columns increasing; the other entries are zero) with ``b`` made
for the full ``n_features``: ``lanes[k]`` is the accumulator that column ``c_k`` uses in
the dense loop, ``c_k % 4`` for ``c_k < 4·(n_features // 4)`` and 0 above. The stored
entries come out bitwise as ``clip_row_norm`` writes them on the densified row (the
guarantee is the same); see dpsk/_core/_sparse.pyx.

``clip_row_norm_two(x, y, z, d, b, c, plan_b, plan_c)`` writes ``clip_row_norm(x, y, d, b)``
and ``clip_row_norm(x, z, d, c)`` bitwise (plans as ``clip_row_norm_plan``; ``y`` must not
alias ``x``), reading the row's sum of squares (or of |entries|) once; a row that neither
bound changes (both plans' mode 0) is not copied (y and z unwritten: the rows are x).

``clip_value(v, lo, hi)`` is the per-value bounds clip, ``min(max(v, lo), hi)`` in
float64 (NaN passes through: callers flag non-finite input themselves).
"""

from cython cimport floating
from libc.math cimport fabs, ldexp, nextafter, nextafterf


cdef struct NormBound:
    double max_norm
    double inside   # fast estimate <= inside  =>  exact norm <= max_norm
    double band     # fast estimate < band  =>  exact norm may be <= max_norm (exact check)
    double inside_sq  # the same two thresholds for the sum of squares (L2, unscaled rows)
    double band_sq
    bint squared    # inside_sq and band_sq are usable (max_norm in [2**-400, 2**400])
    double inside_m  # inside and band divided by 2**exponent, for rescaled rows
    double band_m
    int exponent    # max_norm = f 2**exponent with f in [0.5, 1)
    # tiny: max_norm < 2**-1000: thresholds near the subnormal range would round by more
    # than 1 ulp, so every row is rescaled
    bint tiny
    double target   # clipped rows are scaled to this norm
    double shrink   # factor applied if a clipped row fails verification
    bint l2         # L2 (True) or L1 (False) norm


cdef NormBound make_norm_bound(double max_norm, Py_ssize_t n_features, bint l2,
                               bint single) except *
cdef int clip_row_norm(const floating* x, floating* y, Py_ssize_t d,
                       const NormBound* b) noexcept nogil
cdef int clip_row_norm_lanes(const floating* x, floating* y, Py_ssize_t nnz,
                             const unsigned char* lanes, const NormBound* b) noexcept nogil


# How _clip_row changed a row, entry by entry (``clip_entry`` replays it on one entry):
# mode 0 kept, 1 y = x·r, 2 y = x·2**-e·r (never growing), 3 the same with r halved and
# the product doubled, 4 zeroed; then ``nudges`` steps of y·shrink (nextafter towards 0
# when that does not move y).
cdef struct RowClip:
    double r
    int e
    int mode
    int nudges


cdef int clip_row_norm_plan(const floating* x, floating* y, Py_ssize_t nnz,
                            const unsigned char* lanes, const NormBound* b,
                            RowClip* plan) noexcept nogil


cdef int clip_row_norm_two(const floating* x, floating* y, floating* z, Py_ssize_t d,
                           const NormBound* b, const NormBound* c, RowClip* plan_b,
                           RowClip* plan_c) noexcept nogil


cdef inline floating clip_entry(floating x, const RowClip* p, double shrink) noexcept nogil:
    """The entry x of a row after the clip that ``p`` describes: bitwise what _clip_row
    writes (the same operations on this entry; every step of the clip is entrywise)."""
    cdef double t
    cdef floating v
    cdef int _step
    if p.mode == 0:
        return x
    if p.mode == 4:
        return 0
    if p.mode == 1:
        v = <floating> (x * p.r)
    else:
        t = ldexp(<double> x, -p.e) * p.r
        if p.mode == 3:
            t = t * 2.0
        v = <floating> (t if fabs(t) <= fabs(<double> x) else x)
    for _step in range(p.nudges):
        t = v * shrink
        if <floating> t == v and v != 0:
            if floating is float:
                v = nextafterf(v, 0.0)
            else:
                v = nextafter(v, 0.0)
        else:
            v = <floating> t
    return v


cdef inline double clip_value(double v, double lo, double hi) noexcept nogil:
    v = lo if v < lo else v
    return hi if v > hi else v
