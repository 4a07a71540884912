# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Row clipping: the one clipping implementation of dpsk.

Every estimator bounds the contribution of a row through these functions (or through
the fused kernels of ``_accumulate`` and ``_exact_sums``, which clip with the same code,
see ``_clip.pxd``), so that the sensitivity it declares holds for what is actually
computed. Python decides (which bound, which dtype, who allocates); these functions
loop. Import them from ``dpsk._core._clip``.

Conventions (input checks, NaN handling, ``n_threads``): see ``dpsk._core._common``.

Row clipping (into ``out``: allocated when None, else X's dtype and shape, writeable,
and either X itself (in place) or not overlapping X; returned)
=====================================================================================

``clip_rows_l2(X, max_norm, out=None, *, n_threads=None) -> out``
``clip_rows_l1(X, max_norm, out=None, *, n_threads=None) -> out``
    ``out[i] = X[i] · min(1, max_norm / ‖X[i]‖)``, L2 (resp. L1) norm, in X's dtype.
    **Guarantee**: for every finite input (huge, tiny, subnormal or zero rows, up to
    2**40 features), the exact real norm of every output row, computed from the stored
    float values, is <= ``max_norm``, in float32 and float64. Rows whose exact norm is
    <= ``max_norm`` are copied unchanged (the comparison is exact). Clipped rows keep
    their direction and end slightly below ``max_norm``: by a relative
    ``≈ (6d + 26)·2**-53`` in float64 (1.6e-14 at d = 20) and ``≈ 2**-23`` in float32.
    Only when the clipped row cannot be represented (``max_norm`` near or below the
    subnormal range of the dtype) may entries round to zero, down to an all-zero row.
    The argument is written out above ``make_norm_bound`` in the source. Cython
    kernels can clip rows the same way: see ``_clip.pxd``.

``clip_bounds(X, lower, upper, out=None, *, n_threads=None) -> out``
    ``out[i, j] = min(max(X[i, j], lower[j]), upper[j])``. For float32 the bounds are
    first rounded *inward* to float32, so stored values lie in ``[lower[j], upper[j]]``
    as real numbers; if an interval contains no float32 value, ``ValueError``.

``clip_bounds_1d(y, lower, upper, out=None) -> out``
    The same for a 1-D ``y`` with scalar bounds (``bounds_y`` of regression).
"""

from cython cimport floating
from libc.float cimport DBL_MAX
from libc.math cimport fabs, fma, frexp, ldexp, nextafter, nextafterf, sqrt

import numpy as np

from dpsk._core._common cimport _out_row, _prefetch, _row
from dpsk._core._common import (
    _check_array,
    _check_bounds,
    _check_like,
    _check_scalar_bounds,
    _map_chunks,
    _raise_nonfinite,
)

__all__ = [
    "clip_bounds",
    "clip_bounds_1d",
    "clip_rows_l1",
    "clip_rows_l2",
]

# Unit roundoff of float64 (2**-53) and float32 (2**-24): the largest relative error of
# one correctly rounded operation.
cdef double _U64 = 2.0 ** -53
cdef double _U32 = 2.0 ** -24

# A row whose float64 sum of squares (or of |entries|) lies in [2**-800, 2**800] is normed
# as is: nothing overflowed, and underflow cost less than 2d·2**-1075 absolute, i.e.
# < d·2**-274 relative. Other rows (float64 only, never float32) are first rescaled by
# a power of two that brings their largest entry into [0.5, 1).
cdef double _FAST_LO = 2.0 ** -800
cdef double _FAST_HI = 2.0 ** 800
cdef double _TINY_NORM = 2.0 ** -1000   # max_norm below this: every row is rescaled
cdef Py_ssize_t _MAX_FEATURES = 2 ** 40

# Exact comparison: entries below _TINY (after scaling the bound into [0.5, 1)) are
# replaced by an upper bound on them; at or above it, a*a and its fma error term are
# exact (product exponent >= -960 >= emin + p - 1 = -970).
cdef double _TINY = 2.0 ** -480
cdef double _TINY_SQ = 2.0 ** -960
cdef double _BIG = 2.0 ** 400
cdef enum:
    # Components of the exact expansion: its terms span 2**-960 .. 2**45 and each
    # non-overlapping component covers >= 53 bits, so about 20 suffice.
    _N_PARTIALS = 64
    # Verification retries before a clipped row falls back to zeros.
    _MAX_NUDGES = 64

cdef enum:
    _INSIDE = 0     # the fast estimate proves norm <= max_norm
    _BAND = 1       # too close to call: decide with exact arithmetic
    _OUTSIDE = 2    # certainly (or, close to the bound, possibly) above: clip
    _NONFINITE = 3  # NaN or ±inf in the row


# Why the L1/L2 row clipping cannot overshoot (the argument the tests check)
# ---------------------------------------------------------------------------
# A row is left in ``out`` only after it has been *verified* (or zeroed); the scaling step
# only has to make verification succeed almost always. Verification of a vector v
# (float32 or float64 values) against C = max_norm has two tiers. Below u = 2**-53.
#
# 1. Fast estimate. S = fl(Σ (v_j s)²) (L2) or fl(Σ |v_j s|) (L1) in float64, in any
#    order, where s = 1 ("fast path", used when S lands in [2**-800, 2**800]) or s = 2**-e
#    with 2**e the binade of max|v_j| ("rescaled"). Squares of float32 values are exact
#    in float64; for float64 each square is within a factor (1 ± u); a d-term sum is
#    within γ_d Σ terms (Higham, Accuracy and Stability, §3.1); an L1 sum that underflows
#    is exact, and squares that underflow lose < 2d·2**-1075 in total, negligible next
#    to S >= 2**-800 (fast path) or S >= 1/4 (rescaled). For d·u <= 2**-13 (d <= 2**40):
#        ‖v s‖² ∈ S·[1 − 1.01 d u, 1 + 1.01 d u]  (L2),   ‖v s‖₁ likewise  (L1).
#    Let η = (d + 4) u. The thresholds are
#        inside = fl(C · fl(1 − 2η)),   band = fl(C · fl(1 + 2η))        (compare √S or S)
#        inside_sq = fl(fl(C²) · fl(1 − 4η)), band_sq = ... (1 + 4η)   (compare S, L2)
#    each within (1 ± u)³ of the exact product: C >= 2**-1000 keeps them normal, and the
#    squared pair is only used when C² is in [2**-800, 2**800]. For a rescaled row they
#    are rebuilt from the mantissa of C as ldexp(f·(1 ∓ 2η), E − e): exact, or
#    overflowing to +inf only when C 2**-e > DBL_MAX >> 2√d >= N (row far inside), or
#    underflowing only when C 2**-e < 2**-1021 << 1/2 <= N (row far outside). For
#    C < 2**-1000 every row is rescaled. With sqrt correctly rounded, this gives
#        estimate <= inside  =>  ‖v‖ <= C (1 − 2η)(1 + 3.1u)(1 + 0.51 d u + u) < C
#    (and the same with inside_sq, using 4η against 1.01 d u + 3.1u): accepted rows are
#    within the bound; and ‖v‖ <= C  =>  estimate < band, so no row that satisfies the
#    bound is clipped without going through tier 2.
# 2. Exact comparison (band only, rare). Scale v and C by 2**-e with C 2**-e in [0.5, 1)
#    (exact); write each v_j² (resp. |v_j|) and C² (resp. C) as exact float64 pairs
#    (p, fma(a, a, −p)); add all terms exactly into a non-overlapping expansion
#    (Shewchuk 1997, the algorithm of Python's math.fsum) and read the sign of
#    Σ v_j² − C² from its largest component. Entries below _TINY, where these steps could
#    round, are replaced by the upper bound _TINY (squared); if the expansion would
#    overflow its buffer the answer is "no". The comparison is therefore exact or errs
#    towards "above the bound", never the other way.
#
# Clipping: y = x·C_t/‖x‖ computed as y_j = fl_out(x'_j · r) with x' = x·2**-e,
# r = fl(C_t / N'), N' the estimate of ‖x'‖ (the powers of two cancel), and the target
# C_t = C (1 − 6η − 2 u_out) (u_out: unit roundoff of the output dtype). Each y_j is
# within (1 + u)²(1 + u_out) of x_j C_t/N', so the estimate of ‖y‖ is at most
# C (1 − 6η − 2u_out)(1 + η)²(1 + u)³(1 + u_out) < inside: verification succeeds at the
# first try unless entries underflow. If it fails, every nonzero entry is moved strictly
# towards zero (times 1 − 4η − 4u_out, or one ulp if that rounds back) and the row is
# verified again, at most _MAX_NUDGES times; then it is set to zero, which is within any
# bound.

cdef NormBound make_norm_bound(double max_norm, Py_ssize_t n_features, bint l2,
                               bint single) except *:
    """Thresholds for clipping rows of ``n_features`` entries to ``max_norm`` (checked here)."""
    if not (0.0 < max_norm <= DBL_MAX):
        raise ValueError("max_norm must be finite and > 0")
    if n_features > _MAX_FEATURES:
        raise ValueError(f"norm clipping supports at most 2**40 features, got {n_features}")
    cdef double u_out = _U32 if single else _U64
    cdef double eta = (n_features + 4) * _U64
    cdef NormBound b
    b.max_norm = max_norm
    b.inside = max_norm * (1.0 - 2.0 * eta)
    b.band = max_norm * (1.0 + 2.0 * eta)
    b.inside_m = frexp(max_norm, &b.exponent) * (1.0 - 2.0 * eta)
    b.band_m = ldexp(max_norm, -b.exponent) * (1.0 + 2.0 * eta)
    b.tiny = max_norm < _TINY_NORM
    b.squared = _FAST_LO <= max_norm * max_norm <= _FAST_HI
    b.inside_sq = (max_norm * max_norm) * (1.0 - 4.0 * eta)
    b.band_sq = (max_norm * max_norm) * (1.0 + 4.0 * eta)
    b.target = max_norm * (1.0 - 6.0 * eta - 2.0 * u_out)
    b.shrink = 1.0 - 4.0 * eta - 4.0 * u_out
    b.l2 = l2
    return b


cdef inline double _scaled_sum(const floating* x, floating* y, Py_ssize_t d, double r,
                               bint l2, const unsigned char* lanes) noexcept nogil:
    """t_j = fl(x_j·r) in X's dtype, stored in y unless y is NULL; returns fl(Σ t_j²) (L2)
    or fl(Σ |t_j|) (L1) in float64, from registers (four accumulators, no re-read of y).

    ``lanes`` (NULL for a dense row): x holds the stored entries of a sparse row and
    lanes[k] the accumulator entry k goes to in the dense loop, so that the sum is
    bitwise the dense row's (the missing terms are zeros, and adding 0.0 is exact)."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef double acc[4]
    cdef floating t0, t1, t2, t3
    cdef Py_ssize_t j = 0
    if lanes != NULL:
        acc[0] = acc[1] = acc[2] = acc[3] = 0.0
        for j in range(d):
            t0 = <floating> (x[j] * r)
            if y != NULL:
                y[j] = t0
            acc[lanes[j]] += <double> t0 * t0 if l2 else fabs(t0)
        return (acc[0] + acc[1]) + (acc[2] + acc[3])
    while j + 4 <= d:
        t0 = <floating> (x[j] * r)
        t1 = <floating> (x[j + 1] * r)
        t2 = <floating> (x[j + 2] * r)
        t3 = <floating> (x[j + 3] * r)
        if y != NULL:
            y[j] = t0
            y[j + 1] = t1
            y[j + 2] = t2
            y[j + 3] = t3
        if l2:
            a0 += <double> t0 * t0
            a1 += <double> t1 * t1
            a2 += <double> t2 * t2
            a3 += <double> t3 * t3
        else:
            a0 += fabs(t0)
            a1 += fabs(t1)
            a2 += fabs(t2)
            a3 += fabs(t3)
        j += 4
    while j < d:
        t0 = <floating> (x[j] * r)
        if y != NULL:
            y[j] = t0
        a0 += <double> t0 * t0 if l2 else fabs(t0)
        j += 1
    return (a0 + a1) + (a2 + a3)


cdef inline double _sum_terms(const floating* v, Py_ssize_t d, double s, bint l2,
                              const unsigned char* lanes) noexcept nogil:
    """fl(Σ (v_j s)²) or fl(Σ |v_j s|) in float64 (s = 1, or a power of two for float64)."""
    return _scaled_sum(v, <floating*> NULL, d, s, l2, lanes)


cdef inline int _classify(const floating* v, Py_ssize_t d, const NormBound* b,
                          double* total, int* exponent, const unsigned char* lanes) noexcept nogil:
    """Tier 1: place the norm of v against the bound, from ``total``, the float64 sum of
    squares (L2) or of |entries| (L1) of ``v * 2**-exponent``."""
    return _place(v, d, b, _sum_terms(v, d, 1.0, b.l2, lanes), total, exponent, lanes)


cdef int _place(const floating* v, Py_ssize_t d, const NormBound* b, double s,
                double* total, int* exponent, const unsigned char* lanes) noexcept nogil:
    """_classify given s = _sum_terms(v, d, 1.0, b.l2)."""
    cdef double m = 0.0, a, inside, band
    cdef Py_ssize_t j
    cdef int e = 0
    if s != s:                       # NaN (±inf gives +inf and takes the slow path)
        return _NONFINITE
    # Fast path: no rescaling needed. float32 values cannot overflow or underflow here,
    # and an L1 sum never loses relative accuracy to underflow (a sum that underflows
    # is exact).
    if s <= _FAST_HI and (floating is float or not b.l2 or s >= _FAST_LO) and not b.tiny:
        exponent[0] = 0
        total[0] = s
        if b.l2 and b.squared:       # compare squares: no sqrt on the common path
            if s <= b.inside_sq:
                return _INSIDE
            return _BAND if s < b.band_sq else _OUTSIDE
        if b.l2:
            s = sqrt(s)
        if s <= b.inside:
            return _INSIDE
        return _BAND if s < b.band else _OUTSIDE
    for j in range(d):
        a = fabs(v[j])
        if a > m:
            m = a
    if m > DBL_MAX:
        return _NONFINITE
    if m == 0.0:                     # a zero row
        exponent[0] = 0
        total[0] = 0.0
        return _INSIDE
    frexp(m, &e)                     # m = f 2**e, f in [0.5, 1)
    if e > 0:                        # 2**-e is representable for e <= 1074
        s = _sum_terms(v, d, ldexp(1.0, -e), b.l2, lanes)
    else:                            # 2**-e may overflow: scale entry by entry
        s = _sum_terms_scaled(v, d, e, b.l2)
    exponent[0] = e
    total[0] = s
    if b.l2:
        s = sqrt(s)
    # Thresholds scaled by 2**-e from their mantissas: exact unless they overflow (then
    # the row is far inside) or underflow (then it is far outside: s >= 0.5).
    inside = ldexp(b.inside_m, b.exponent - e)
    band = ldexp(b.band_m, b.exponent - e)
    if s <= inside:
        return _INSIDE
    return _BAND if s < band else _OUTSIDE


cdef double _sum_terms_scaled(const floating* v, Py_ssize_t d, int e, bint l2) noexcept nogil:
    """Like _sum_terms with s = 2**-e for e < 0 (tiny rows), where 2**-e itself may overflow."""
    cdef double acc = 0.0, t
    cdef Py_ssize_t j
    for j in range(d):
        t = ldexp(<double> v[j], -e)
        acc += t * t if l2 else fabs(t)
    return acc


cdef inline bint _grow(double* partials, int* n_partials, double x) noexcept nogil:
    """Add x exactly to a non-overlapping expansion (increasing magnitude); False if full."""
    cdef int i = 0, k
    cdef double y, hi, lo
    for k in range(n_partials[0]):
        y = partials[k]
        if fabs(x) < fabs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[i] = lo
            i += 1
        x = hi
    if i >= _N_PARTIALS:
        return False
    partials[i] = x
    n_partials[0] = i + 1
    return True


cdef bint _exact_norm_le(const floating* v, Py_ssize_t d, double bound, bint l2) noexcept nogil:
    """Tier 2: True only if the exact norm of v is <= bound (conservative when unsure)."""
    cdef double partials[_N_PARTIALS]
    cdef int n_partials = 0, e, k
    cdef double a, p, c
    cdef Py_ssize_t j
    frexp(bound, &e)
    c = ldexp(bound, -e)             # in [0.5, 1), exact
    for j in range(d):
        if v[j] == 0:
            continue
        a = ldexp(fabs(<double> v[j]), -e)
        if a < _TINY:                # may have rounded: use an upper bound instead
            if not _grow(partials, &n_partials, _TINY_SQ if l2 else _TINY):
                return False
        elif a > _BIG:               # cannot happen in the band; stay conservative
            return False
        elif l2:
            p = a * a
            if not (_grow(partials, &n_partials, p)
                    and _grow(partials, &n_partials, fma(a, a, -p))):
                return False
        elif not _grow(partials, &n_partials, a):
            return False
    if l2:
        p = c * c
        if not (_grow(partials, &n_partials, -p) and _grow(partials, &n_partials, -fma(c, c, -p))):
            return False
    elif not _grow(partials, &n_partials, -c):
        return False
    for k in range(n_partials - 1, -1, -1):   # the largest nonzero component has the sign
        if partials[k] != 0.0:
            return partials[k] < 0.0
    return True


cdef inline bint _verified(const floating* v, Py_ssize_t d, const NormBound* b,
                           double* total, int* exponent, int* status,
                           const unsigned char* lanes, double s) noexcept nogil:
    """Tiers 1 and 2, given s = _sum_terms(v, d, 1.0, b.l2, lanes) (as _classify)."""
    status[0] = _place(v, d, b, s, total, exponent, lanes)
    return status[0] == _INSIDE or (
        status[0] == _BAND and _exact_norm_le(v, d, b.max_norm, b.l2))


cdef int clip_row_norm(const floating* x, floating* y, Py_ssize_t d,
                       const NormBound* b) noexcept nogil:
    """y = x·min(1, C/‖x‖), verified (see the argument above); y may alias x. 1 if non-finite."""
    return _clip_row(x, y, d, b, NULL, NULL)


cdef int clip_row_norm_lanes(const floating* x, floating* y, Py_ssize_t nnz,
                             const unsigned char* lanes, const NormBound* b) noexcept nogil:
    """clip_row_norm for the nnz stored entries of a sparse row (see _clip.pxd)."""
    return _clip_row(x, y, nnz, b, lanes, NULL)


cdef int clip_row_norm_plan(const floating* x, floating* y, Py_ssize_t nnz,
                            const unsigned char* lanes, const NormBound* b,
                            RowClip* plan) noexcept nogil:
    """clip_row_norm_lanes that also records in ``plan`` how the row changed (see _clip.pxd)."""
    return _clip_row(x, y, nnz, b, lanes, plan)


cdef int clip_row_norm_two(const floating* x, floating* y, floating* z, Py_ssize_t d,
                           const NormBound* b, const NormBound* c, RowClip* plan_b,
                           RowClip* plan_c) noexcept nogil:
    """clip_row_norm(x, y, d, b) and clip_row_norm(x, z, d, c), bitwise, with the plans
    (see _clip.pxd); y must not alias x, z may. Both bounds of one norm (b.l2 == c.l2):
    the row's first sum is computed once. A row that neither bound changes (both plans'
    mode 0) is not copied: y and z are then left as they were (the rows are x)."""
    cdef double s = _sum_terms(x, d, 1.0, b.l2, NULL)
    cdef double total
    cdef int e, status
    if (_verified(x, d, b, &total, &e, &status, NULL, s)
            and _verified(x, d, c, &total, &e, &status, NULL, s)):
        plan_b.mode = plan_c.mode = 0
        plan_b.r = plan_c.r = 1.0
        plan_b.e = plan_c.e = 0
        plan_b.nudges = plan_c.nudges = 0
        return 0
    if _clip_row_from(x, y, d, b, NULL, plan_b, s):
        return 1
    return _clip_row_from(x, z, d, c, NULL, plan_c, s)


cdef int _clip_row(const floating* x, floating* y, Py_ssize_t d, const NormBound* b,
                   const unsigned char* lanes, RowClip* plan) noexcept nogil:
    """_clip_row_from with the row's first sum (what _classify computes)."""
    return _clip_row_from(x, y, d, b, lanes, plan, _sum_terms(x, d, 1.0, b.l2, lanes))


cdef int _clip_row_from(const floating* x, floating* y, Py_ssize_t d, const NormBound* b,
                        const unsigned char* lanes, RowClip* plan, double first) noexcept nogil:
    """clip_row_norm; with ``lanes`` the entries are those of a sparse row (_scaled_sum).

    Every step is entrywise (a zero entry stays zero: 0·r, 0·shrink, no nudge of a
    zero), order-free (the maximum, the exact comparison, the single-accumulator sum of
    tiny rows, where a zero term adds nothing exactly) or goes through _scaled_sum, so
    the stored entries come out bitwise as in the dense row. ``plan`` (or NULL) receives
    what was done (see RowClip in _clip.pxd)."""
    cdef double total, r, t, s
    cdef int e, status, _attempt
    cdef Py_ssize_t j
    if plan != NULL:
        plan.mode = 0
        plan.r = 1.0
        plan.e = 0
        plan.nudges = 0
    if _verified(x, d, b, &total, &e, &status, lanes, first):
        if y != x:
            for j in range(d):
                y[j] = x[j]
        return 0
    if status == _NONFINITE:
        return 1
    # y = x·C_t/‖x‖ = x'·(C_t/N') with x' = x·2**-e and N' = ‖x'‖ (the 2**e cancel).
    r = b.target / (sqrt(total) if b.l2 else total)
    if plan != NULL:
        plan.mode = 1 if e == 0 else 2
        plan.r = r
        plan.e = e
    if e == 0:
        s = _scaled_sum(x, y, d, r, b.l2, lanes)
    else:
        # A tiny entry of a huge row is subnormal after the 2**-e scaling, and its rounding
        # error is then multiplied back by r: never let an entry grow (shrinking one keeps
        # the norm bound; x[j] is read before y[j] is written, so y may alias x).
        if r <= DBL_MAX:
            for j in range(d):
                t = ldexp(<double> x[j], -e) * r
                y[j] = <floating> (t if fabs(t) <= fabs(<double> x[j]) else x[j])
        else:                        # max_norm near DBL_MAX and N' < 1: halve, then double
            r = (0.5 * b.target) / (sqrt(total) if b.l2 else total)
            if plan != NULL:
                plan.mode = 3
                plan.r = r
            for j in range(d):
                t = ldexp(<double> x[j], -e) * r * 2.0
                y[j] = <floating> (t if fabs(t) <= fabs(<double> x[j]) else x[j])
        s = _sum_terms(<const floating*> y, d, 1.0, b.l2, lanes)
    for _attempt in range(_MAX_NUDGES):
        status = _place(<const floating*> y, d, b, s, &total, &e, lanes)
        if status == _INSIDE or (
                status == _BAND and _exact_norm_le(<const floating*> y, d, b.max_norm, b.l2)):
            return 0
        if plan != NULL:
            plan.nudges += 1
        for j in range(d):   # strictly towards zero, also for subnormals
            t = y[j] * b.shrink
            if <floating> t == y[j] and y[j] != 0:
                if floating is float:
                    y[j] = nextafterf(y[j], 0.0)
                else:
                    y[j] = nextafter(y[j], 0.0)
            else:
                y[j] = <floating> t
        s = _sum_terms(<const floating*> y, d, 1.0, b.l2, lanes)
    if plan != NULL:
        plan.mode = 4
    for j in range(d):
        y[j] = 0
    return 0


# ---------------------------------------------------------------------------------------
# Clip-specific argument handling (the shared checks are in _common)
# ---------------------------------------------------------------------------------------


def _bounds_in_dtype(lower, upper, dtype):
    """Bounds rounded inward to ``dtype``, so that clipped values stay inside the real bounds."""
    if dtype == np.float64:
        return lower, upper
    with np.errstate(over="ignore"):
        lo = lower.astype(dtype)
        hi = upper.astype(dtype)
    lo = np.where(lo < lower, np.nextafter(lo, dtype.type(np.inf)), lo).astype(dtype)
    hi = np.where(hi > upper, np.nextafter(hi, dtype.type(-np.inf)), hi).astype(dtype)
    if np.any(lo > hi):
        raise ValueError(f"some [lower, upper] interval contains no {dtype.name} value")
    return np.ascontiguousarray(lo), np.ascontiguousarray(hi)


def _prepare_out(out, X):
    """``out``, checked (or allocated): X's dtype and shape, writeable, X itself or disjoint."""
    if out is None:
        return np.empty_like(X)
    out = _check_like(out, X, "out", X.shape)
    if not out.flags.writeable:
        raise ValueError("out must be writeable")
    same = (out.__array_interface__["data"][0] == X.__array_interface__["data"][0])
    if not same and np.may_share_memory(out, X):
        raise ValueError("out must be X itself or must not overlap X")
    return out


# ---------------------------------------------------------------------------------------
# Row clipping
# ---------------------------------------------------------------------------------------

def _clip_norm_chunk(const floating[:, ::1] X, floating[:, ::1] out, Py_ssize_t start,
                     Py_ssize_t stop, double max_norm, bint l2):
    """Clip rows [start, stop) of X into out; 1 if one of them is not finite."""
    cdef Py_ssize_t d = X.shape[1], i
    cdef NormBound b = make_norm_bound(max_norm, d, l2, floating is float)
    cdef const floating* x = _row(X, start)
    cdef floating* y = _out_row(out, start)
    cdef int bad = 0
    with nogil:
        for i in range(stop - start):
            # Measured: without it, float32 rows that all need clipping run ~1.4x slower.
            _prefetch(<const char*> (x + (i + 1) * d) + 256)
            if clip_row_norm(x + i * d, y + i * d, d, &b):
                bad = 1
                break
    return bad


def _clip_rows_norm(X, max_norm, out, n_threads, bint l2):
    X = _check_array(X, "X", 2)
    out = _prepare_out(out, X)
    make_norm_bound(float(max_norm), X.shape[1], l2, X.dtype == np.float32)   # checks
    bad = _map_chunks(
        lambda start, stop: _clip_norm_chunk(X, out, start, stop, max_norm, l2),
        X.shape[0], n_threads)
    if any(bad):
        _raise_nonfinite()
    return out


def clip_rows_l2(X, max_norm, out=None, *, n_threads=None):
    """Rows of X scaled to L2 norm <= max_norm (exactly); see the module docstring."""
    return _clip_rows_norm(X, max_norm, out, n_threads, True)


def clip_rows_l1(X, max_norm, out=None, *, n_threads=None):
    """Rows of X scaled to L1 norm <= max_norm (exactly); see the module docstring."""
    return _clip_rows_norm(X, max_norm, out, n_threads, False)


def _clip_bounds_chunk(const floating[:, ::1] X, floating[:, ::1] out, Py_ssize_t start,
                       Py_ssize_t stop, const floating[::1] lo, const floating[::1] hi):
    """Clip rows [start, stop) of X to [lo, hi] into out; the sum of X·0 (NaN if non-finite)."""
    cdef Py_ssize_t d = X.shape[1], i, j
    cdef const floating* x = _row(X, start)
    cdef floating* y = _out_row(out, start)
    cdef floating[::1] flag = np.zeros(d, dtype=np.asarray(lo).dtype)
    cdef floating v
    cdef double bad = 0.0
    with nogil:
        for i in range(stop - start):
            for j in range(d):
                v = x[i * d + j]
                flag[j] += v * 0   # NaN for NaN or ±inf; an elementwise update vectorizes
                v = lo[j] if v < lo[j] else v
                y[i * d + j] = hi[j] if v > hi[j] else v
        for j in range(d):
            bad += flag[j]
    return bad


def clip_bounds(X, lower, upper, out=None, *, n_threads=None):
    """out = min(max(X, lower), upper), per feature; see the module docstring."""
    X = _check_array(X, "X", 2)
    lower, upper = _check_bounds(lower, upper, X.shape[1])
    lo, hi = _bounds_in_dtype(lower, upper, X.dtype)
    out = _prepare_out(out, X)
    flags = _map_chunks(lambda start, stop: _clip_bounds_chunk(X, out, start, stop, lo, hi),
                        X.shape[0], n_threads)
    if any(flag != 0 for flag in flags):
        _raise_nonfinite()
    return out


def _clip_values(const floating[::1] y, floating[::1] out, double lower, double upper):
    cdef Py_ssize_t i
    cdef floating lo = <floating> lower, hi = <floating> upper, v, flag = 0
    with nogil:
        for i in range(y.shape[0]):
            v = y[i]
            flag += v * 0
            v = lo if v < lo else v
            out[i] = hi if v > hi else v
    return flag


def clip_bounds_1d(y, lower, upper, out=None):
    """out = min(max(y, lower), upper) for a 1-D y; see the module docstring."""
    y = _check_array(y, "y", 1)
    lower, upper = _check_scalar_bounds(lower, upper)
    lo, hi = _bounds_in_dtype(np.array([lower]), np.array([upper]), y.dtype)
    out = _prepare_out(out, y)
    if _clip_values(y, out, lo[0], hi[0]) != 0:   # lo, hi are exact in y's dtype
        _raise_nonfinite("y")
    return out
