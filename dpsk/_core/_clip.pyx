# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clipping and fused clip + accumulate kernels: the one clipping implementation of dpsk.

Every estimator bounds the contribution of a row through these functions, so that the
sensitivity it declares holds for what is actually computed. Python decides (which bound,
which dtype, who allocates); these functions loop. Import them from ``dpsk._core._clip``.

Conventions: see ``dpsk._core._common`` (the argument checks that enforce them live
there).

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

Fused clip + accumulate (read X once, never copy it)
====================================================

``c(x)`` is the clipped row, ``w_i`` the weight (1 without ``sample_weight``); sums run
over rows.

``clipped_sums(X, lower, upper, sample_weight=None, *, n_threads=None) -> (count, sum, sum_sq)``
    ``c(x) = clip(x, lower, upper)``; ``count = Σ w_i`` (float), ``sum[j] = Σ w_i
    c(x_i)[j]``, ``sum_sq[j] = Σ w_i c(x_i)[j]²`` (shape ``(n_features,)``). DP means,
    variances, scalers.

``clipped_class_sums(X, y_index, n_classes, lower, upper, sample_weight=None, *, n_threads=None) -> (count, sum, sum_sq)``
    The same per class. ``y_index``: ``intp`` array of shape ``(n_samples,)``, values in
    ``[0, n_classes)`` (else ``ValueError``, raised after the loop). ``count`` has shape
    ``(n_classes,)``, ``sum`` and ``sum_sq`` ``(n_classes, n_features)``; classes
    without rows give zeros. GaussianNB.

``clipped_gram(X, *, lower=None, upper=None, max_norm=None, sample_weight=None, n_threads=None) -> (count, sum, gram)``
    Exactly one clipping rule: ``lower`` and ``upper`` (bounds), or ``max_norm`` (L2 row
    clipping with the guarantee of ``clip_rows_l2``, done in float64). ``gram = Σ w_i
    c(x_i) c(x_i)ᵀ`` of shape ``(n_features, n_features)``, exactly symmetric; ``sum``,
    ``count`` as above. BLAS ``dgemm`` on blocks of rows clipped into a small reusable
    buffer (about 160 KiB). PCA, linear models.

``clipped_linear_stats(X, y, y_lower, y_upper, *, lower=None, upper=None, max_norm=None, sample_weight=None, n_threads=None) -> (count, sum_x, sum_y, xtx, xty, yty)``
    Least-squares statistics in one pass: X clipped as in ``clipped_gram``, ``c(y) =
    clip(y, y_lower, y_upper)``; ``xtx = Σ w c(x) c(x)ᵀ``, ``xty = Σ w c(x) c(y)``
    (shape ``(n_features,)``), ``yty = Σ w c(y)²`` (float), ``sum_x``, ``sum_y = Σ w
    c(y)`` (float), ``count``.

``clipped_kmeans_sums(X, centers, lower, upper, *, n_threads=None) -> (count, sum, inertia)``
    One Lloyd step on ``c(x) = clip(x, lower, upper)``: each row goes to its nearest
    center (``centers``: shape ``(n_clusters, n_features)``, finite, converted to
    float64; squared Euclidean distance via BLAS as ``‖c‖² − 2 c(x)·c``; ties to the
    lowest index). ``count[k]`` (float64, shape ``(n_clusters,)``), ``sum[k] = Σ_{a(i)=k}
    c(x_i)`` (shape ``(n_clusters, n_features)``), ``inertia = Σ ‖c(x_i) − centers[a(i)]‖²``
    (float; distances recomputed directly, not from the expansion). Each row adds to
    exactly one cluster, whatever the assignment.

Histograms
==========

``clipped_histogram(X, lower, upper, n_bins, *, n_threads=None) -> counts``
    Per-feature counts of the clipped values in ``n_bins`` equal bins of ``[lower[j],
    upper[j]]``: ``counts[j, k]`` (int64, shape ``(n_features, n_bins)``) is the number of
    rows whose ``c(x)[j]`` has ``floor((c(x)[j] − lower[j]) · n_bins / (upper[j] −
    lower[j])) = k`` (computed in float64, the last bin closed: ``upper[j]`` falls in bin
    ``n_bins − 1``; a feature with ``lower[j] == upper[j]`` puts every row in bin 0). A
    value at a bin edge may fall on either side after rounding, but **every row adds
    exactly 1 to exactly one bin of each feature**. DP quantiles, min/max scaling.

Exact sums (fixed point; the kernels behind every centred release)
===================================================================

``exact_moments(X, lower, upper, y_index=None, n_classes=1, sample_weight=None, *, n_threads=None) -> ExactMoments``
    Per class, ``Σ W_i``, ``Σ W_i q_ij``, ``Σ W_i q_ij²`` as exact Python integers, where
    ``q_ij`` quantises ``clip(x_ij) − mid_j`` on the grid ``step_j``. ``sample_weight``
    in [0, 1] (else ``ValueError``), rounded *down* to ``W_i/2**28``. stats, scalers,
    GaussianNB, KMeans; :class:`ExactMoments` converts (``about``, ``round``).
``exact_gram(X, lower, upper, centre, radius, *, n_threads=None) -> (n, total, gram)``
    ``Σ y`` and ``Σ y yᵀ`` (float64, each the correctly rounded exact sum) of the rows
    ``y = q·step``, ``q`` quantising ``clip(x) − centre`` on a grid of about
    ``radius·2**-20``, to nearest, clamped to ``|q_j| <= Q_j``. PCA.
``fixed_point_grid(radius, bits) -> (step, inverse, Q)``
    The public grid: ``step = 2**(e − bits)`` for ``radius = f·2**e``, f in [0.5, 1);
    ``Q = floor(radius/step)`` in [2**(bits−1), 2**bits), so ``Q·step <= radius``.

Constants: ``MAX_EXACT_ROWS = 2**36`` (more rows: ``ValueError``; the number of rows is
the public shape, so this error is no release), ``MOMENT_BITS = 31``, ``GRAM_BITS = 20``,
``WEIGHT_BITS = 28``, ``ROUNDING_MARGIN = 2**-14``.

**What holds.** Let a release declare that one privacy unit (total weight <= ``unit``)
moves statistic i by at most Δᵢ (per entry, or in L1/L2 over entries), and let n <=
``MAX_EXACT_ROWS`` rows be summed. Then the float vectors that reach the noise on two
add/remove-neighbouring datasets differ by at most the declared sensitivity, for any
data inside or outside the bounds (values are clipped), float32 or float64, with or
without weights, and for every n_threads and chunking. The argument:

1. *Per-row values are bounded exactly.* ``t = (clip(x) − mid)·(1/step)`` is computed in
   float64 with whatever rounding; it is clamped to [−Q, Q] *as a float*, then converted
   to an integer q in [−Q, Q] (round half up via ``floor(t + Q + 1/2) − Q``, an exact
   truncation of a value in [1/2, 2Q + 1/2]; PCA's ball path first clips rows to a
   radius smaller by ‖step‖ so that rounding to nearest keeps ‖y‖ <= ``data_norm``). So
   the row's value ``y = q·step`` satisfies ``|y_j| <= Q_j·step_j <= half_width_j`` as a
   real number, whatever the float errors before the clamp. NaN is flagged and raises.
2. *Weights never grow.* ``W_i = floor(w_i·2**28)``, so ``W_i/2**28 <= w_i`` and a unit's
   total weight stays <= ``unit`` (``dpsk.stats._contribution.capped_weights`` builds
   the user-level weights on this grid exactly).
3. *Sums are exact.* ``|W q| < 2**59`` and ``W q² < 2**90`` per row, so over at most 2**36
   rows every partial sum is below 2**126: 128-bit integer additions never overflow
   and are exact, in any order (chunks are combined as Python integers). For the Gram,
   |q| < 2**20 and a dgemm over at most 4096 rows only forms integers below 2**52, which
   float64 represents exactly in any summation order (with or without FMA); block
   results are added in 128-bit integers. Hence the exact statistic E (a rational
   computed from these integers and the public grid, centre and normalisation) is a
   sum of per-row terms, each bounded by Δ per unit weight by step 1 — the real-number
   sensitivity argument applies verbatim to E: ``‖E(D) − E(D')‖ <= Δ``.
4. *One rounding to float.* Releases compute ``v = fl(E·c)`` (``ExactMoments.round``:
   Fraction arithmetic, one correctly rounded conversion), so ``|v − E c| <= u|E c|``
   entrywise, u = 2**-53. Each entry of E is a sum of at most n per-row terms bounded
   by its per-row bound, so ``‖E‖ <= n·Δ`` in the norm of the release, and
   ``‖v(D) − v(D')‖ <= c·Δ·(1 + 2u·n)``.
5. *The margin.* Releases use ``c = (1 − η)/Δ`` with η = ``ROUNDING_MARGIN`` = 2**-14:
   ``stats`` directly (``MomentsQuery.normalised``), estimators through
   ``dpsk.utils._bounded.JointRelease``, whose weights are ``(1 − η)·share/Δ`` and which
   multiplies the values once more (one more relative error u, and a few u in the
   weight itself). Altogether ``‖v(D) − v(D')‖ <= (1 − η)(1 + 4u·n)(1 + 8u) <= 1`` for
   n <= 2**36, since 4u·2**36 = 2**-15 and (1 − 2**-14)(1 + 2**-15 + 2**-49) < 1. The
   noise is therefore calibrated for the computed values; the cost is noise larger by
   1/(1 − η), about 0.006 %.

What is guaranteed for the float kernels, and what is not
=========================================================

The per-row bound is exact: every row that enters a sum lies in the box, or has an
exact L2 norm <= ``max_norm``, as real numbers. The float sums (``clipped_sums``,
``clipped_class_sums``, ``clipped_gram``, ``clipped_linear_stats``,
``clipped_kmeans_sums``) are float64 sums: each entry carries the usual rounding error,
at most ``γ_n · Σ|terms|`` with ``γ_n = n·u/(1 − n·u)``, ``u = 2**-53`` (the kernels add
in blocks of rows and chunks, so the typical error is far smaller). That error is *not*
bounded by the per-row sensitivity in general: a release that centres after summing
(``Σc² − 2mΣc + m²n``) must use the exact kernels above. ``clipped_linear_stats`` and
``clipped_gram(max_norm=...)`` (linear models) sum rows that are already centred or
norm-bounded; their remaining error, about ``(block + n/block)·u·n`` per-row bounds, is
documented in doc/limitations.rst and not yet folded into the calibration.
"""

from cython cimport floating
from libc.float cimport DBL_MAX
from libc.math cimport fabs, fma, frexp, ldexp, nextafter, nextafterf, sqrt
from libc.stdlib cimport calloc, free
from scipy.linalg.cython_blas cimport dgemm

import numbers
from fractions import Fraction

import numpy as np

from dpsk._core._common cimport _mat, _out_row, _prefetch, _row, _vec, _weights_from
from dpsk._core._common import (
    _add_in_order,
    _check_array,
    _check_bounds,
    _check_like,
    _check_sample_weight,
    _check_scalar_bounds,
    _check_shape,
    _map_chunks,
    _raise_nonfinite,
)

__all__ = [
    "clip_bounds",
    "clip_bounds_1d",
    "clip_rows_l1",
    "clip_rows_l2",
    "clipped_class_sums",
    "clipped_gram",
    "clipped_histogram",
    "clipped_kmeans_sums",
    "clipped_linear_stats",
    "clipped_sums",
    "exact_gram",
    "exact_moments",
    "ExactMoments",
    "fixed_point_grid",
    "MAX_EXACT_ROWS",
    "ROUNDING_MARGIN",
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

# Rows per block in the fused kernels: partial sums are flushed into the totals every
# block (two-level summation), and the BLAS kernels work on one block at a time.
cdef Py_ssize_t _BLOCK = 256

cdef enum:
    _INSIDE = 0     # the fast estimate proves norm <= max_norm
    _BAND = 1       # too close to call: decide with exact arithmetic
    _OUTSIDE = 2    # certainly (or, close to the bound, possibly) above: clip
    _NONFINITE = 3  # NaN or ±inf in the row

cdef enum:
    _CLIP_BOUNDS = 0
    _CLIP_L2 = 1


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
                               bint l2) noexcept nogil:
    """t_j = fl(x_j·r) in X's dtype, stored in y unless y is NULL; returns fl(Σ t_j²) (L2)
    or fl(Σ |t_j|) (L1) in float64, from registers (four accumulators, no re-read of y)."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef floating t0, t1, t2, t3
    cdef Py_ssize_t j = 0
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


cdef inline double _sum_terms(const floating* v, Py_ssize_t d, double s, bint l2) noexcept nogil:
    """fl(Σ (v_j s)²) or fl(Σ |v_j s|) in float64 (s = 1, or a power of two for float64)."""
    return _scaled_sum(v, <floating*> NULL, d, s, l2)


cdef inline int _classify(const floating* v, Py_ssize_t d, const NormBound* b,
                          double* total, int* exponent) noexcept nogil:
    """Tier 1: place the norm of v against the bound, from ``total``, the float64 sum of
    squares (L2) or of |entries| (L1) of ``v * 2**-exponent``."""
    return _place(v, d, b, _sum_terms(v, d, 1.0, b.l2), total, exponent)


cdef int _place(const floating* v, Py_ssize_t d, const NormBound* b, double s,
                double* total, int* exponent) noexcept nogil:
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
        s = _sum_terms(v, d, ldexp(1.0, -e), b.l2)
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
                           double* total, int* exponent, int* status) noexcept nogil:
    status[0] = _classify(v, d, b, total, exponent)
    return status[0] == _INSIDE or (
        status[0] == _BAND and _exact_norm_le(v, d, b.max_norm, b.l2))


cdef int clip_row_norm(const floating* x, floating* y, Py_ssize_t d,
                       const NormBound* b) noexcept nogil:
    """y = x·min(1, C/‖x‖), verified (see the argument above); y may alias x. 1 if non-finite."""
    cdef double total, r, t, s
    cdef int e, status, attempt
    cdef Py_ssize_t j
    if _verified(x, d, b, &total, &e, &status):
        if y != x:
            for j in range(d):
                y[j] = x[j]
        return 0
    if status == _NONFINITE:
        return 1
    # y = x·C_t/‖x‖ = x'·(C_t/N') with x' = x·2**-e and N' = ‖x'‖ (the 2**e cancel).
    r = b.target / (sqrt(total) if b.l2 else total)
    if e == 0:
        s = _scaled_sum(x, y, d, r, b.l2)
    else:
        if r <= DBL_MAX:
            for j in range(d):
                y[j] = <floating> (ldexp(<double> x[j], -e) * r)
        else:                        # max_norm near DBL_MAX and N' < 1: halve, then double
            r = (0.5 * b.target) / (sqrt(total) if b.l2 else total)
            for j in range(d):
                y[j] = <floating> (ldexp(<double> x[j], -e) * r * 2.0)
        s = _sum_terms(<const floating*> y, d, 1.0, b.l2)
    for attempt in range(_MAX_NUDGES):
        status = _place(<const floating*> y, d, b, s, &total, &e)
        if status == _INSIDE or (
                status == _BAND and _exact_norm_le(<const floating*> y, d, b.max_norm, b.l2)):
            return 0
        for j in range(d):   # strictly towards zero, also for subnormals
            t = y[j] * b.shrink
            if <floating> t == y[j] and y[j] != 0:
                if floating is float:
                    y[j] = nextafterf(y[j], 0.0)
                else:
                    y[j] = nextafter(y[j], 0.0)
            else:
                y[j] = <floating> t
        s = _sum_terms(<const floating*> y, d, 1.0, b.l2)
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


# ---------------------------------------------------------------------------------------
# Fused clip + accumulate
# ---------------------------------------------------------------------------------------

cdef inline void _prefetch_row(const char* p, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t offset
    for offset in range(0, size, 64):
        _prefetch(p + offset)


cdef inline void _flush(double* total, double* partial, Py_ssize_t size) noexcept nogil:
    """total += partial; partial = 0 (the second level of blocked summation)."""
    cdef Py_ssize_t j
    for j in range(size):
        total[j] += partial[j]
        partial[j] = 0.0


cdef inline double _clip_value(double v, double lo, double hi) noexcept nogil:
    v = lo if v < lo else v
    return hi if v > hi else v


cdef double _sum(const double* v, Py_ssize_t size) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(size):
        s += v[j]
    return s


cdef int _moments_pass(const floating* X, Py_ssize_t n, Py_ssize_t d,
                       const Py_ssize_t* y_index, Py_ssize_t n_classes,
                       const double* lo, const double* hi, const double* w,
                       double* count, double* total, double* total_sq,
                       double* part_count, double* part, double* part_sq,
                       double* flag) noexcept nogil:
    """Per-class Σw, Σw·c(x), Σw·c(x)² (one class when y_index is NULL). 1: bad y_index."""
    cdef Py_ssize_t block = max(_BLOCK, 16 * n_classes), i, j, k = 0
    cdef double wi = 1.0, v
    cdef double* row
    cdef double* row_sq
    cdef const floating* x
    for i in range(n):
        if y_index != NULL:
            k = y_index[i]
            if k < 0 or k >= n_classes:
                return 1
        if w != NULL:
            wi = w[i]
        part_count[k] += wi
        row = part + k * d
        row_sq = part_sq + k * d
        x = X + i * d
        for j in range(d):
            v = x[j]
            flag[j] += v * 0.0
            v = _clip_value(v, lo[j], hi[j])
            row[j] += wi * v
            row_sq[j] += wi * v * v
        if (i + 1) % block == 0 or i + 1 == n:
            _flush(count, part_count, n_classes)
            _flush(total, part, n_classes * d)
            _flush(total_sq, part_sq, n_classes * d)
    return 0


def _moments_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop, y_index,
                   Py_ssize_t n_classes, double[::1] lo, double[::1] hi, w_arr):
    cdef Py_ssize_t d = X.shape[1]
    cdef const Py_ssize_t[::1] yi
    cdef const Py_ssize_t* yp = NULL
    cdef const double* wp = _weights_from(w_arr, start)
    if y_index is not None:
        yi = y_index
        yp = &yi[start]
    count, total, total_sq = np.zeros(n_classes), np.zeros((n_classes, d)), np.zeros((n_classes, d))
    cdef double[::1] c = count, pc = np.zeros(n_classes), flag = np.zeros(d)
    cdef double[:, ::1] t = total, tq = total_sq
    cdef double[:, ::1] p = np.zeros((n_classes, d)), pq = np.zeros((n_classes, d))
    cdef const floating* x = _row(X, start)
    cdef double* lop = _vec(lo)
    cdef double* hip = _vec(hi)
    cdef double* cp = &c[0]
    cdef double* tp = _mat(t)
    cdef double* tqp = _mat(tq)
    cdef double* pcp = &pc[0]
    cdef double* pp = _mat(p)
    cdef double* pqp = _mat(pq)
    cdef double* fp = _vec(flag)
    cdef int status
    cdef double bad
    with nogil:
        status = _moments_pass(x, stop - start, d, yp, n_classes, lop, hip, wp, cp, tp, tqp,
                               pcp, pp, pqp, fp)
        bad = _sum(fp, d)
    return status, bad, count, total, total_sq


def _moments(X, y_index, Py_ssize_t n_classes, lower, upper, sample_weight, n_threads):
    n, d = X.shape
    lower, upper = _check_bounds(lower, upper, d)
    w = _check_sample_weight(sample_weight, n)
    parts = _map_chunks(
        lambda start, stop: _moments_chunk(X, start, stop, y_index, n_classes, lower, upper, w),
        n, n_threads)
    if any(part[0] for part in parts):
        raise ValueError("y_index must hold integers in [0, n_classes)")
    if any(part[1] != 0 for part in parts):
        _raise_nonfinite()
    if not parts:
        return np.zeros(n_classes), np.zeros((n_classes, d)), np.zeros((n_classes, d))
    return tuple(_add_in_order([part[i] for part in parts]) for i in (2, 3, 4))


def clipped_sums(X, lower, upper, sample_weight=None, *, n_threads=None):
    """(Σw, Σw·clip(x), Σw·clip(x)²) over the rows of X; see the module docstring."""
    X = _check_array(X, "X", 2)
    count, total, total_sq = _moments(X, None, 1, lower, upper, sample_weight, n_threads)
    return float(count[0]), total[0], total_sq[0]


def clipped_class_sums(X, y_index, n_classes, lower, upper, sample_weight=None, *,
                       n_threads=None):
    """Per-class (Σw, Σw·clip(x), Σw·clip(x)²); see the module docstring."""
    X = _check_array(X, "X", 2)
    if (isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral)
            or n_classes < 1):
        raise ValueError(f"n_classes must be an int >= 1, got {n_classes!r}")
    if not isinstance(y_index, np.ndarray) or y_index.dtype != np.intp:
        raise TypeError("y_index must be a numpy array of dtype intp")
    _check_shape("y_index", y_index, (X.shape[0],))
    y_index = np.ascontiguousarray(y_index)
    return _moments(X, y_index, int(n_classes), lower, upper, sample_weight, n_threads)


cdef int _gram_pass(const floating* X, Py_ssize_t n, Py_ssize_t d,
                    const floating* y, double y_lo, double y_hi,
                    int mode, const double* lo, const double* hi, const NormBound* nb,
                    const double* w, double* buf, Py_ssize_t block,
                    double* gram, double* total, double* part, double* count,
                    double* flag) noexcept nogil:
    """Σ w b bᵀ, Σ w b, Σ w for b = [c(x), c(y)] (y optional), via dgemm on row blocks."""
    cdef int m = <int> (d + (y != NULL)), rows
    cdef char* trans = b"N"
    cdef char* trans_t = b"T"
    cdef double one = 1.0, wi = 1.0, v, s
    cdef Py_ssize_t start = 0, r, i, j
    cdef double* b
    cdef const floating* x
    while start < n:
        rows = <int> min(block, n - start)
        for r in range(rows):
            i = start + r
            b = buf + r * m
            x = X + i * d
            if mode == _CLIP_BOUNDS:
                for j in range(d):
                    v = x[j]
                    flag[j] += v * 0.0
                    b[j] = _clip_value(v, lo[j], hi[j])
            else:
                for j in range(d):
                    b[j] = x[j]
                if clip_row_norm(b, b, d, nb):   # in place, in float64
                    return 1
            if y != NULL:
                v = y[i]
                flag[d] += v * 0.0
                b[d] = _clip_value(v, y_lo, y_hi)
            if w != NULL:
                wi = w[i]
            count[0] += wi
            for j in range(m):
                part[j] += wi * b[j]
            if w != NULL:                          # rows enter the product as √w·b
                s = sqrt(wi)
                for j in range(m):
                    b[j] *= s
        # Column-major view: buf is the m x rows matrix A; gram += A Aᵀ. (dgemm, not
        # dsyrk: OpenBLAS's gemm is ~1.4x faster here despite twice the flops.)
        dgemm(trans, trans_t, &m, &m, &rows, &one, buf, &m, buf, &m, &one, gram, &m)
        _flush(total, part, m)
        start += rows
    return 0


def _gram_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop, y,
                double y_lo, double y_hi, int mode, double[::1] lo, double[::1] hi,
                double max_norm, w_arr):
    cdef Py_ssize_t d = X.shape[1], n = stop - start
    cdef Py_ssize_t m = d + (y is not None)
    cdef Py_ssize_t block = min(n, max(_BLOCK, (160 * 1024) // (8 * max(m, 1))))  # ~L2
    cdef const floating[::1] yv
    cdef const floating* yp = NULL
    cdef const double* wp = _weights_from(w_arr, start)
    cdef NormBound nb
    if mode == _CLIP_L2:
        nb = make_norm_bound(max_norm, d, True, False)   # rows are clipped in float64
    if y is not None:
        yv = y
        yp = &yv[start]
    gram, total = np.zeros((m, m)), np.zeros(m)
    cdef double[:, ::1] g = gram, buf = np.empty((block, max(m, 1)))
    cdef double[::1] t = total, part = np.zeros(m), flag = np.zeros(m)
    cdef const floating* x = _row(X, start)
    cdef double* lop = _vec(lo)
    cdef double* hip = _vec(hi)
    cdef double* gp = _mat(g)
    cdef double* tp = _vec(t)
    cdef double* pp = _vec(part)
    cdef double* fp = _vec(flag)
    cdef double count = 0.0, bad
    cdef int status
    with nogil:
        status = _gram_pass(x, n, d, yp, y_lo, y_hi, mode, lop, hip, &nb, wp, &buf[0, 0],
                            block, gp, tp, pp, &count, fp)
        bad = _sum(fp, m)
    return status, bad, count, total, gram


def _gram(X, y, y_bounds, lower, upper, max_norm, sample_weight, n_threads):
    n, d = X.shape
    if (max_norm is None) == (lower is None and upper is None):
        raise ValueError("pass exactly one clipping rule: (lower, upper) or max_norm")
    if max_norm is None:
        if lower is None or upper is None:
            raise ValueError("lower and upper must be given together")
        mode = _CLIP_BOUNDS
        lower, upper = _check_bounds(lower, upper, d)
    else:
        mode = _CLIP_L2
        max_norm = float(max_norm)
        make_norm_bound(max_norm, d, True, False)   # checks
        lower = upper = np.zeros(0)
    y_lo, y_hi = _check_scalar_bounds(*y_bounds) if y is not None else (0.0, 0.0)
    w = _check_sample_weight(sample_weight, n)
    m = d + (y is not None)
    if m > 2 ** 31 - 1:
        raise ValueError(f"too many features for BLAS: {m}")
    parts = _map_chunks(
        lambda start, stop: _gram_chunk(X, start, stop, y, y_lo, y_hi, mode, lower, upper,
                                        max_norm or 0.0, w),
        n, n_threads)
    if any(part[0] or part[1] != 0 for part in parts):
        _raise_nonfinite("X or y" if y is not None else "X")
    if not parts:
        return 0.0, np.zeros(m), np.zeros((m, m))
    count, total, gram = (_add_in_order([part[i] for part in parts]) for i in (2, 3, 4))
    # Exact symmetry (the two triangles may differ in the last bit): mirror one of them.
    gram = np.tril(gram) + np.tril(gram, -1).T
    return float(count), total, gram


def clipped_gram(X, *, lower=None, upper=None, max_norm=None, sample_weight=None,
                 n_threads=None):
    """(Σw, Σw·c(x), Σw·c(x)c(x)ᵀ) for rows clipped to bounds or to an L2 norm; see the module docstring."""
    X = _check_array(X, "X", 2)
    return _gram(X, None, None, lower, upper, max_norm, sample_weight, n_threads)


def clipped_linear_stats(X, y, y_lower, y_upper, *, lower=None, upper=None, max_norm=None,
                         sample_weight=None, n_threads=None):
    """(count, sum_x, sum_y, xtx, xty, yty) of clipped X and y in one pass; see the module docstring."""
    X = _check_array(X, "X", 2)
    y = _check_like(y, X, "y", (X.shape[0],))
    count, total, gram = _gram(X, y, (y_lower, y_upper), lower, upper, max_norm,
                               sample_weight, n_threads)
    d = X.shape[1]
    return (count, total[:d].copy(), float(total[d]), gram[:d, :d].copy(),
            gram[:d, d].copy(), float(gram[d, d]))


cdef void _kmeans_pass(const floating* X, Py_ssize_t n, Py_ssize_t d,
                       const double* centers, const double* center_sq, Py_ssize_t k,
                       const double* lo, const double* hi, double* buf, double* dots,
                       Py_ssize_t block, double* count, double* total, double* part,
                       double* dist_sq, double* flag) noexcept nogil:
    """Assign clipped rows to the nearest center; accumulate counts, sums, squared distances."""
    cdef int kk = <int> k, dd = <int> d, rows
    cdef char* trans_a = b"T"
    cdef char* trans_b = b"N"
    cdef double one = 1.0, zero = 0.0, v, best_value, t
    cdef Py_ssize_t start = 0, r, j, c, best, ahead
    cdef Py_ssize_t row_bytes = d * sizeof(floating)
    cdef double* b
    cdef double* row
    cdef const double* center
    cdef const floating* x
    cdef const floating* x_next
    while start < n:
        rows = <int> min(block, n - start)
        for r in range(rows):
            b = buf + r * d
            x = X + (start + r) * d
            for j in range(d):
                v = x[j]
                flag[j] += v * 0.0
                b[j] = _clip_value(v, lo[j], hi[j])
        # dots (rows x k, row-major) = buf · centersᵀ; in column-major terms
        # (k x rows) = (centers viewed d x k)ᵀ · (buf viewed d x rows).
        dgemm(trans_a, trans_b, &kk, &rows, &dd, &one, <double*> centers, &dd, buf, &dd,
              &zero, dots, &kk)
        x_next = X + (start + rows) * d
        ahead = min(block, n - start - rows)
        for r in range(rows):
            if r < ahead:   # fetch the next block while this one is computed
                _prefetch_row(<const char*> (x_next + r * d), row_bytes)
            best = 0
            best_value = center_sq[0] - 2.0 * dots[r * k]
            for c in range(1, k):
                v = center_sq[c] - 2.0 * dots[r * k + c]
                if v < best_value:
                    best_value = v
                    best = c
            count[best] += 1.0
            b = buf + r * d
            row = part + best * d
            center = centers + best * d
            for j in range(d):   # elementwise updates (vectorize); summed after the pass
                row[j] += b[j]
                t = b[j] - center[j]
                dist_sq[j] += t * t
        _flush(total, part, k * d)
        start += rows


def _kmeans_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop,
                  const double[:, ::1] centers, const double[::1] center_sq,
                  const double[::1] lo, const double[::1] hi):
    cdef Py_ssize_t d = X.shape[1], k = centers.shape[0], n = stop - start
    cdef Py_ssize_t block = min(n, _BLOCK)
    count, total = np.zeros(k), np.zeros((k, d))
    cdef double[::1] cnt = count, dist_sq = np.zeros(max(d, 1)), flag = np.zeros(max(d, 1))
    cdef double[:, ::1] t = total, part = np.zeros((k, d))
    cdef double[:, ::1] buf = np.empty((block, max(d, 1))), dots = np.empty((block, k))
    cdef const floating* x = _row(X, start)
    cdef double* tp = _mat(t)
    cdef double* pp = _mat(part)
    # With no features, centers/lo/hi are empty: BLAS and the loops never read them.
    cdef const double* cp = &centers[0, 0] if d > 0 else NULL
    cdef const double* lop = &lo[0] if d > 0 else NULL
    cdef const double* hip = &hi[0] if d > 0 else NULL
    cdef double bad
    with nogil:
        _kmeans_pass(x, n, d, cp, &center_sq[0], k, lop, hip, &buf[0, 0], &dots[0, 0],
                     block, &cnt[0], tp, pp, &dist_sq[0], &flag[0])
        bad = _sum(&flag[0], d)
    return bad, count, total, _sum(&dist_sq[0], d)


def clipped_kmeans_sums(X, centers, lower, upper, *, n_threads=None):
    """Per-cluster counts and sums of bounds-clipped rows, and the inertia; see the module docstring."""
    X = _check_array(X, "X", 2)
    n, d = X.shape
    lower, upper = _check_bounds(lower, upper, d)
    centers = np.ascontiguousarray(centers, dtype=np.float64)
    if centers.ndim != 2 or centers.shape[1] != d or centers.shape[0] < 1:
        raise ValueError(
            f"centers must have shape (n_clusters >= 1, {d}), got {tuple(centers.shape)}")
    if not np.all(np.isfinite(centers)):
        raise ValueError("centers must be finite")
    if max(d, centers.shape[0]) > 2 ** 31 - 1:
        raise ValueError("too many features or clusters for BLAS")
    center_sq = np.einsum("ij,ij->i", centers, centers)
    parts = _map_chunks(
        lambda start, stop: _kmeans_chunk(X, start, stop, centers, center_sq, lower, upper),
        n, n_threads)
    if any(part[0] != 0 for part in parts):
        _raise_nonfinite()
    if not parts:
        return np.zeros(centers.shape[0]), np.zeros(centers.shape), 0.0
    count, total = (_add_in_order([part[i] for part in parts]) for i in (1, 2))
    return count, total, float(_add_in_order([part[3] for part in parts]))


# ---------------------------------------------------------------------------------------
# Exact fixed-point accumulation (see "Exact sums" in the module docstring for the proof)
# ---------------------------------------------------------------------------------------

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

#: Largest number of rows (of X, one value per record and feature) that the exact
#: kernels accept, and for which the rounding margins of the releases are proven.
MAX_EXACT_ROWS = 2 ** 36
#: Releases multiply statistics that are one correctly rounded conversion away from
#: exact sums by (1 − ROUNDING_MARGIN) (see "Exact sums" in the module docstring).
ROUNDING_MARGIN = 2.0 ** -14
#: Moments: quantised values have |q| <= Q < 2**MOMENT_BITS.
MOMENT_BITS = 31
#: Weights are rounded down to multiples of 2**-WEIGHT_BITS (then |w_q·q| < 2**59 and
#: Σ w_q·q² < 2**36 · 2**28 · 2**62 = 2**126 over MAX_EXACT_ROWS rows).
WEIGHT_BITS = 28
#: Gram: |q| < 2**GRAM_BITS, so a dgemm over at most _GRAM_BLOCK rows only sees
#: integers below 2**(2*20 + 12) = 2**52 and is exact in any summation order.
GRAM_BITS = 20
cdef Py_ssize_t _GRAM_BLOCK = 4096


def fixed_point_grid(radius, bits):
    """Public grid of the exact kernels: (step, inverse step, Q) per feature.

    ``step`` is the power of two 2**(e − bits) for ``radius = f·2**e`` (f in [0.5, 1)),
    so ``radius / step`` lies in [2**(bits−1), 2**bits); ``Q = floor(radius / step)``,
    hence ``Q·step <= radius`` exactly. A zero radius gives step 1 and Q 0. Radii in
    (0, 2**-990) are refused (``ValueError``): their inverse step would not be finite.
    """
    radius = np.ascontiguousarray(radius, dtype=np.float64)
    if not np.all(np.isfinite(radius)) or np.any(radius < 0):
        raise ValueError("radius must be finite and >= 0")
    if np.any((radius > 0) & (radius < 2.0 ** -990)):
        raise ValueError("bounds narrower than 2**-990 cannot be accumulated exactly")
    mantissa, exponent = np.frexp(radius)
    positive = radius > 0
    step = np.where(positive, np.ldexp(1.0, exponent - bits), 1.0)
    inverse = np.where(positive, np.ldexp(1.0, bits - exponent), 1.0)
    qmax = np.where(positive, np.floor(np.ldexp(mantissa, bits)), 0.0)
    return step, inverse, qmax


cdef object _to_ints(const i128* values, Py_ssize_t size):
    """The 128-bit integers as a numpy object array of exact Python ints."""
    hi = np.empty(size, dtype=np.int64)
    lo = np.empty(size, dtype=np.uint64)
    cdef long long[::1] h = hi
    cdef unsigned long long[::1] l = lo
    cdef Py_ssize_t i
    for i in range(size):
        h[i] = _i128_hi(values[i])
        l[i] = _i128_lo(values[i])
    return hi.astype(object) * (1 << 64) + lo.astype(object)


cdef inline long long _quantise(double v, double lo, double hi, double centre, double inverse,
                                double qmax, double offset, bint toward_zero) noexcept nogil:
    """q = round((clip(v) − centre)/step), clamped to [−qmax, qmax] *before* the integer
    conversion: whatever the float rounding of the subtraction, |q| <= qmax."""
    cdef double t = (_clip_value(v, lo, hi) - centre) * inverse
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


cdef int _exact_moments_pass(const floating* X, Py_ssize_t n, Py_ssize_t d,
                             const Py_ssize_t* y_index, Py_ssize_t n_classes,
                             const double* lo, const double* hi, const double* centre,
                             const double* inverse, const double* qmax, const double* offset,
                             const long long* w, i128* count, i128* s1, i128* s2,
                             double* flag) noexcept nogil:
    """Per-class Σw_q, Σw_q·q, Σw_q·q² in 128-bit integers (w_q = 1 without weights)."""
    cdef Py_ssize_t i, j, k = 0
    cdef long long wi = 1, q
    cdef double v
    cdef i128* r1
    cdef i128* r2
    cdef const floating* x
    for i in range(n):
        if y_index != NULL:
            k = y_index[i]
            if k < 0 or k >= n_classes:
                return 1
        if w != NULL:
            wi = w[i]
        count[k] += wi
        r1 = s1 + k * d
        r2 = s2 + k * d
        x = X + i * d
        for j in range(d):
            v = x[j]
            flag[j] += v * 0.0
            q = _quantise(v, lo[j], hi[j], centre[j], inverse[j], qmax[j], offset[j], False)
            r1[j] += <i128> (wi * q)          # |w q| < 2**59
            r2[j] += (<i128> wi) * (q * q)    # q² < 2**62, times w_q <= 2**28
    return 0


def _exact_moments_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop, y_index,
                         Py_ssize_t n_classes, double[::1] lo, double[::1] hi,
                         double[::1] centre, double[::1] inverse, double[::1] qmax,
                         double[::1] offset, w_arr):
    cdef Py_ssize_t d = X.shape[1], size = n_classes * d, i
    cdef const Py_ssize_t[::1] yi
    cdef const Py_ssize_t* yp = NULL
    cdef const long long[::1] wv
    cdef const long long* wp = NULL
    if y_index is not None:
        yi = y_index
        yp = &yi[start]
    if w_arr is not None:
        wv = w_arr
        wp = &wv[start]
    cdef double[::1] flag = np.zeros(max(d, 1))
    cdef const floating* x = _row(X, start)
    cdef i128* cnt = <i128*> calloc(n_classes, sizeof(i128))
    cdef i128* s1 = <i128*> calloc(max(size, 1), sizeof(i128))
    cdef i128* s2 = <i128*> calloc(max(size, 1), sizeof(i128))
    cdef int status
    cdef double bad
    cdef double* lop = _vec(lo)
    cdef double* hip = _vec(hi)
    cdef double* cp = _vec(centre)
    cdef double* ip = _vec(inverse)
    cdef double* qp = _vec(qmax)
    cdef double* op = _vec(offset)
    try:
        if cnt == NULL or s1 == NULL or s2 == NULL:
            raise MemoryError()
        with nogil:
            status = _exact_moments_pass(x, stop - start, d, yp, n_classes, lop, hip, cp, ip, qp,
                                         op, wp, cnt, s1, s2, &flag[0])
            bad = _sum(&flag[0], d)
        return status, bad, _to_ints(cnt, n_classes), _to_ints(s1, size), _to_ints(s2, size)
    finally:
        free(cnt)
        free(s1)
        free(s2)


def _check_rows(Py_ssize_t n):
    if n > MAX_EXACT_ROWS:
        # The number of rows is public (the shape), not a value: this error is no release.
        raise ValueError(
            f"exact accumulation supports at most 2**36 rows, got {n}: split the data "
            "and compose the releases")


def _quantised_weights(sample_weight, Py_ssize_t n):
    """w_q = floor(w·2**WEIGHT_BITS) (int64), for weights in [0, 1]: a unit's total never grows."""
    if sample_weight is None:
        return None
    w = _check_sample_weight(sample_weight, n)
    if np.any(w > 1.0):
        raise ValueError("sample_weight must lie in [0, 1] for exact accumulation")
    return np.ascontiguousarray(np.floor(np.ldexp(w, WEIGHT_BITS)).astype(np.int64))


class ExactMoments:
    """Exact per-class weighted sums of quantised, centred, clipped values.

    Row i of class k contributes the weight ``w_i = W_i / weight_scale`` (``W_i`` an
    integer) and the values ``y_ij = q_ij·step_j`` with integers ``q_ij`` in
    ``[−Q_j, Q_j]``, ``Q_j·step_j <= half_width_j``, where ``q_ij`` is
    ``(clip(x_ij) − centre_j) / step_j`` rounded. ``count[k] = Σ W_i``,
    ``sum_q[k, j] = Σ W_i q_ij`` and ``sum_q2[k, j] = Σ W_i q_ij²`` are exact Python
    integers (object arrays). The methods return float64 arrays of shape
    ``(n_classes,)`` or ``(n_classes, n_features)`` whose entries are the correctly
    rounded values of exact rationals: one rounding each, relative error <= 2**-53.
    ``divisor``, ``shift`` and ``factor`` are floats or arrays over the features,
    taken as exact rationals.
    """

    def __init__(self, count, sum_q, sum_q2, weight_scale, centre, half_width, step):
        self.count, self.sum_q, self.sum_q2 = count, sum_q, sum_q2
        self.weight_scale = int(weight_scale)
        self.centre, self.half_width, self.step = centre, half_width, step

    def _exact(self, values):
        """Per-feature floats as exact Fractions (object array of shape (n_features,))."""
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), self.step.shape)
        return np.array([Fraction(float(v)) for v in values], dtype=object)

    def about(self, point):
        """Exact ``(Σw, Σw·v, Σw·v²)`` for ``v = centre + y − point`` (Fractions).

        Shapes ``(n_classes,)``, ``(n_classes, n_features)`` twice. With ``point`` the
        kernel's centre, ``v = y``: every row contributes ``|v_j| <= half_width_j``.
        """
        delta = self._exact(self.centre) - self._exact(point)
        step = self._exact(self.step)
        scale = Fraction(1, self.weight_scale)
        count = self.count[:, None]
        s1 = count * delta + self.sum_q * step
        s2 = count * (delta * delta) + self.sum_q * (2 * delta * step) + self.sum_q2 * (step * step)
        return self.count * scale, s1 * scale, s2 * scale

    def round(self, exact, divisor=1.0, factor=1.0):
        """``float(exact · factor / divisor)`` entrywise, each correctly rounded (one rounding).

        ``divisor``: a float, or an array over the features (the last axis of ``exact``).
        """
        exact = np.asarray(exact, dtype=object)
        divisor = np.asarray(divisor, dtype=np.float64)
        factor = Fraction(float(factor))
        if divisor.ndim == 0:
            per = factor / Fraction(float(divisor))
        else:
            per = np.array([factor / Fraction(float(v)) for v in divisor.ravel()], dtype=object)
        return np.array([float(v) for v in np.ravel(exact * per)], dtype=np.float64).reshape(exact.shape)


def exact_moments(X, lower, upper, y_index=None, n_classes=1, sample_weight=None, *, n_threads=None):
    """Exact (fixed-point) per-class moments of clipped values; see the module docstring."""
    X = _check_array(X, "X", 2)
    n, d = X.shape
    _check_rows(n)
    lower, upper = _check_bounds(lower, upper, d)
    if (isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral)
            or n_classes < 1):
        raise ValueError(f"n_classes must be an int >= 1, got {n_classes!r}")
    n_classes = int(n_classes)
    if y_index is not None:
        if not isinstance(y_index, np.ndarray) or y_index.dtype != np.intp:
            raise TypeError("y_index must be a numpy array of dtype intp")
        _check_shape("y_index", y_index, (n,))
        y_index = np.ascontiguousarray(y_index)
    elif n_classes != 1:
        raise ValueError("n_classes > 1 needs y_index")
    w = _quantised_weights(sample_weight, n)
    # Halves first, as dpsk.utils._bounded.Box: (upper − lower) may overflow.
    centre = lower / 2 + upper / 2
    half = upper / 2 - lower / 2
    step, inverse, qmax = fixed_point_grid(half, MOMENT_BITS)
    offset = qmax + 0.5
    parts = _map_chunks(
        lambda start, stop: _exact_moments_chunk(X, start, stop, y_index, n_classes, lower, upper,
                                                 centre, inverse, qmax, offset, w),
        n, n_threads)
    if any(part[0] for part in parts):
        raise ValueError("y_index must hold integers in [0, n_classes)")
    if any(part[1] != 0 for part in parts):
        _raise_nonfinite()
    count = np.zeros(n_classes, dtype=object)
    s1 = np.zeros(n_classes * d, dtype=object)
    s2 = np.zeros(n_classes * d, dtype=object)
    for part in parts:   # Python integer additions: exact, in any order
        count, s1, s2 = count + part[2], s1 + part[3], s2 + part[4]
    return ExactMoments(count, s1.reshape(n_classes, d), s2.reshape(n_classes, d),
                        1 if w is None else 2 ** WEIGHT_BITS,
                        centre, half, step)


cdef int _exact_gram_pass(const floating* X, Py_ssize_t n, Py_ssize_t d,
                          const double* lo, const double* hi, const double* centre,
                          const double* inverse, const double* qmax, const double* offset,
                          bint toward_zero, double* buf, double* block_gram, Py_ssize_t block,
                          i128* gram, i128* total, double* flag) noexcept nogil:
    """Σq and Σqqᵀ (lower triangle, column-major = upper triangle row-major) exactly."""
    cdef int m = <int> d, rows
    cdef char* trans = b"N"
    cdef char* trans_t = b"T"
    cdef double one = 1.0, zero = 0.0, v
    cdef Py_ssize_t start = 0, r, i, j
    cdef long long q
    cdef double* b
    cdef const floating* x
    while start < n:
        rows = <int> min(block, n - start)
        for r in range(rows):
            b = buf + r * d
            x = X + (start + r) * d
            for j in range(d):
                v = x[j]
                flag[j] += v * 0.0
                q = _quantise(v, lo[j], hi[j], centre[j], inverse[j], qmax[j], offset[j], toward_zero)
                total[j] += q
                b[j] = <double> q
        # Integers below 2**20, at most 2**12 rows: every partial sum of the product is
        # an integer below 2**52, exact in float64 whatever the order or FMA use.
        if d > 0:
            dgemm(trans, trans_t, &m, &m, &rows, &one, buf, &m, buf, &m, &zero, block_gram, &m)
        for i in range(d):
            for j in range(i, d):
                gram[i * d + j] += <long long> block_gram[i * d + j]
        start += rows
    return 0


def _exact_gram_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop,
                      double[::1] lo, double[::1] hi, double[::1] centre, double[::1] inverse,
                      double[::1] qmax, double[::1] offset, bint toward_zero):
    cdef Py_ssize_t d = X.shape[1], n = stop - start, i, j
    cdef Py_ssize_t block = min(n, _GRAM_BLOCK)
    cdef double[:, ::1] buf = np.empty((max(block, 1), max(d, 1)))
    cdef double[:, ::1] bg = np.empty((max(d, 1), max(d, 1)))
    cdef double[::1] flag = np.zeros(max(d, 1))
    cdef const floating* x = _row(X, start)
    cdef i128* gram = <i128*> calloc(max(d * d, 1), sizeof(i128))
    cdef i128* total = <i128*> calloc(max(d, 1), sizeof(i128))
    cdef double bad
    cdef double* lop = _vec(lo)
    cdef double* hip = _vec(hi)
    cdef double* cp = _vec(centre)
    cdef double* ip = _vec(inverse)
    cdef double* qp = _vec(qmax)
    cdef double* op = _vec(offset)
    try:
        if gram == NULL or total == NULL:
            raise MemoryError()
        with nogil:
            _exact_gram_pass(x, n, d, lop, hip, cp, ip, qp, op, toward_zero, &buf[0, 0], &bg[0, 0],
                             block, gram, total, &flag[0])
            bad = _sum(&flag[0], d)
        return bad, _to_ints(total, d), _to_ints(gram, d * d).reshape(d, d)
    finally:
        free(gram)
        free(total)


def _scaled_floats(integers, scale):
    """float(integer·scale) entrywise, correctly rounded (scale: products of powers of two)."""
    scale = np.asarray(scale, dtype=np.float64)
    if np.all((scale >= 2.0 ** -900) & (scale <= 2.0 ** 100)):
        # int → float is correctly rounded; multiplying by a power of two is then exact
        # (no underflow: |integer| >= 1 or 0; no overflow: integers < 2**127).
        return np.asarray(integers, dtype=object).astype(np.float64) * scale
    flat = [float(Fraction(int(v)) * Fraction(float(s)))
            for v, s in zip(np.ravel(integers), np.ravel(np.broadcast_to(scale, np.shape(integers))))]
    return np.array(flat, dtype=np.float64).reshape(np.shape(integers))


#: Weights of the exact Gram are rounded down to multiples of 2**-GRAM_WEIGHT_BITS; the
#: weighted Gram is the sum over the weights' binary digits of exact Grams of row subsets.
GRAM_WEIGHT_BITS = 10


def _exact_gram_integers(X, lower, upper, centre, inverse, qmax, offset, toward_zero, n_threads):
    """Exact integer Σq and Σqqᵀ (object arrays) of the quantised rows of X."""
    d = X.shape[1]
    parts = _map_chunks(
        lambda start, stop: _exact_gram_chunk(X, start, stop, lower, upper, centre, inverse, qmax,
                                              offset, toward_zero),
        X.shape[0], n_threads)
    if any(part[0] != 0 for part in parts):
        _raise_nonfinite()
    total = np.zeros(d, dtype=object)
    gram = np.zeros((d, d), dtype=object)
    for part in parts:   # exact
        total, gram = total + part[1], gram + part[2]
    return total, np.triu(gram) + np.triu(gram, 1).T   # the kernel fills the upper triangle


def exact_gram(X, lower, upper, centre, radius, *, sample_weight=None, toward_zero=False, n_threads=None):
    """Exact count, Σy and Σyyᵀ of quantised clipped rows about ``centre``; see the module docstring.

    Returns ``(count, total, gram)``: ``count`` a Python int (a float with weights),
    ``total`` (n_features,) and ``gram`` (n_features, n_features, symmetric) float64
    arrays, each entry the correctly rounded value of the exact sum.

    ``sample_weight`` (in [0, 1]) is rounded *down* to multiples of 2**-GRAM_WEIGHT_BITS,
    so no row weighs more than its weight; the weighted sums are the exact combination
    Σ_k 2**(k − GRAM_WEIGHT_BITS) · S_k of the exact sums S_k over the rows whose rounded
    weight has binary digit k set (one pass per digit in use), rounded once at the end.
    """
    X = _check_array(X, "X", 2)
    n, d = X.shape
    _check_rows(n)
    lower, upper = _check_bounds(lower, upper, d)
    centre = np.ascontiguousarray(centre, dtype=np.float64)
    _check_shape("centre", centre, (d,))
    if not np.all(np.isfinite(centre)):
        raise ValueError("centre must be finite")
    step, inverse, qmax = fixed_point_grid(np.broadcast_to(radius, (d,)), GRAM_BITS)
    offset = qmax + 0.5
    toward_zero = bool(toward_zero)

    def integers(rows):
        return _exact_gram_integers(rows, lower, upper, centre, inverse, qmax, offset, toward_zero, n_threads)

    if sample_weight is None:
        total, gram = integers(X)
        return n, _scaled_floats(total, step), _scaled_floats(gram, np.outer(step, step))
    w = _check_sample_weight(sample_weight, n)
    if np.any(w > 1.0):
        raise ValueError("sample_weight must lie in [0, 1] for the exact Gram")
    units = np.floor(np.ldexp(w, GRAM_WEIGHT_BITS)).astype(np.int64)
    count = 0
    total = np.zeros(d, dtype=object)
    gram = np.zeros((d, d), dtype=object)
    for k in range(GRAM_WEIGHT_BITS + 1):
        rows = ((units >> k) & 1).astype(bool)
        if not rows.any():
            continue
        part_total, part_gram = integers(np.ascontiguousarray(X[rows]))
        count += int(rows.sum()) << k
        total, gram = total + part_total * (1 << k), gram + part_gram * (1 << k)
    unit = 2.0 ** -GRAM_WEIGHT_BITS   # a power of two: the scaling stays exact
    return (float(Fraction(count, 1 << GRAM_WEIGHT_BITS)), _scaled_floats(total, step * unit),
            _scaled_floats(gram, np.outer(step, step) * unit))


# ---------------------------------------------------------------------------------------
# Histograms
# ---------------------------------------------------------------------------------------

cdef void _histogram_pass(const floating* X, Py_ssize_t n, Py_ssize_t d, const double* lo,
                          const double* scale, Py_ssize_t n_bins, long long* counts,
                          double* flag) noexcept nogil:
    """counts[j * n_bins + k] += 1 for the bin k of each clipped value (scale = n_bins / width)."""
    cdef Py_ssize_t i, j, k
    cdef double v, t
    cdef const floating* x
    for i in range(n):
        x = X + i * d
        for j in range(d):
            v = x[j]
            flag[j] += v * 0.0
            t = (v - lo[j]) * scale[j]   # the clip to [0, n_bins - 1] below is the clip to the bounds
            if t < 1.0:                  # also catches t < 0 and NaN (flagged above)
                k = 0
            elif t >= n_bins - 1:
                k = n_bins - 1
            else:
                k = <Py_ssize_t> t
            counts[j * n_bins + k] += 1


def _histogram_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop,
                     double[::1] lo, double[::1] scale, Py_ssize_t n_bins):
    cdef Py_ssize_t d = X.shape[1]
    counts = np.zeros((d, n_bins), dtype=np.int64)
    cdef long long[:, ::1] c = counts
    cdef double[::1] flag = np.zeros(max(d, 1))
    cdef const floating* x = _row(X, start)
    cdef long long* cp = &c[0, 0] if d > 0 else NULL
    cdef const double* lop = _vec(lo)
    cdef const double* sp = _vec(scale)
    cdef double bad
    with nogil:
        _histogram_pass(x, stop - start, d, lop, sp, n_bins, cp, &flag[0])
        bad = _sum(&flag[0], d)
    return bad, counts


def clipped_histogram(X, lower, upper, n_bins, *, n_threads=None):
    """Per-feature counts of the clipped values in equal bins; see the module docstring."""
    X = _check_array(X, "X", 2)
    n, d = X.shape
    lower, upper = _check_bounds(lower, upper, d)
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or not 1 <= n_bins <= 2 ** 31:
        raise ValueError(f"n_bins must be an int in [1, 2**31], got {n_bins!r}")
    n_bins = int(n_bins)
    width = upper - lower
    # Bins per unit; 0 for a constant feature (every value lands in bin 0). The width is
    # computed in float64 and may overflow to inf for huge bounds: the scale is then 0 too
    # and all rows fall in bin 0, which is still one bin per row.
    with np.errstate(over="ignore", divide="ignore"):
        scale = np.where((width > 0) & np.isfinite(width), n_bins / np.where(width > 0, width, 1.0), 0.0)
    scale = np.ascontiguousarray(scale, dtype=np.float64)
    parts = _map_chunks(lambda start, stop: _histogram_chunk(X, start, stop, lower, scale, n_bins), n, n_threads)
    if any(part[0] != 0 for part in parts):
        _raise_nonfinite()
    counts = np.zeros((d, n_bins), dtype=np.int64)
    for _, part in parts:
        counts += part
    return counts
