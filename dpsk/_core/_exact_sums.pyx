# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact sums: fixed-point moments and Gram matrices of clipped rows, the kernels
behind every centred release.

Values are clipped (``_clip.pxd``), quantised onto a public power-of-two grid and summed
as integers (128-bit in C, Python ints across chunks), so the sums are exact in any
order and the only rounding is one correctly rounded conversion at the end; the
argument below turns that into a bound on what one record can change in the computed
float values. Import these functions from ``dpsk._core._exact_sums``.

Conventions (input checks, NaN handling, ``n_threads``): see ``dpsk._core._common``.

Exact sums (fixed point; the kernels behind every centred release)
===================================================================

``exact_moments(X, lower, upper, y_index=None, n_classes=1, sample_weight=None, *, n_threads=None) -> ExactMoments``
    Per class, ``Σ W_i``, ``Σ W_i q_ij``, ``Σ W_i q_ij²`` as exact Python integers, where
    ``q_ij`` quantises ``clip(x_ij) − mid_j`` on the grid ``step_j``. ``sample_weight``
    in [0, 1] (else ``ValueError``), rounded *down* to ``W_i/2**28``. stats, scalers,
    GaussianNB, KMeans; :class:`ExactMoments` converts (``about``, ``round``).
``exact_gram(X, lower, upper, centre, radius, *, sample_weight=None, clip_box=None, clip_norm=None, clip_l1=None, ...)``
    ``(count, Σ y, Σ y yᵀ)`` (float64, each the correctly rounded exact sum) of the rows
    ``y = q·step``, ``q`` quantising ``clip(x) − centre`` on a grid of about
    ``radius·2**-20``, to nearest, clamped to ``|q_j| <= Q_j``. ``clip_box``/``clip_norm``
    first clip each row, in X's dtype, to a box and then into an L2 ball, bitwise as
    ``clip_bounds`` then ``clip_rows_l2`` (no copy of X); ``clip_l1`` then scales
    ``x − centre`` towards the centre so that the *quantised* row has ``‖y‖₁ <= clip_l1``
    exactly (``_l1_margin``). One pass; no Python integers (a correctly rounded
    128-bit → float64 conversion in C). PCA.
``clipped_l1_norms(X, centre, *, clip_box=None, clip_norm=None) -> ndarray``
    ``‖c(x) − centre‖₁`` of every row, clipped as ``exact_gram`` clips (one pass, no copy):
    the input of PCA's private ``l1_norm``.
``l1_gram_pass(X, lower, upper, centre, radius, *, sample_weight=None, ..., norm_clip=None) -> L1GramPass``
    One pass for a release whose L1 clip is chosen from the rows' L1 norms: ``.norms``
    (bitwise ``clipped_l1_norms(X, centre, clip_box=, clip_norm=norm_clip)``), then
    ``.exact_gram(L)`` / ``.exact_gram_sums(L)``, bitwise ``exact_gram(..., clip_l1=L)``:
    the first pass sums every row's quantised y unscaled; the second reads only the rows
    the clip scales and swaps their integers for the scaled rows'. PCA's private
    ``l1_norm``.
``exact_gram_sums(X, lower, upper, centre, radius, *, sample_weight=None, ...) -> ExactGram``
    The exact integers behind ``exact_gram`` (count, Σq, Σqqᵀ, the grid and the weight
    scale), for releases that rescale the rows before their one rounding
    (``ExactGram.round``: Fraction arithmetic). LinearRegression, Ridge.
``gram_floats(sums) -> (count, total, gram)``
    ``exact_gram``'s one rounding of an :class:`ExactGram` (``dpsk.dask`` merges the
    chunks' integers first).
``fixed_point_grid(radius, bits) -> (step, inverse, Q)``
    The public grid: ``step = 2**(e − bits)`` for ``radius = f·2**e``, f in [0.5, 1);
    ``Q = floor(radius/step)`` in [2**(bits−1), 2**bits), so ``Q·step <= radius`` (below
    2**-990, the step of 2**-990 and a smaller Q).
``ball_clip_radius(norm, step) -> float``
    The ball rows are clipped to before rounding on that grid, so that the quantised rows
    stay within ``norm`` (PCA's ``data_norm``, LinearRegression's ``row_norm``).

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
   radius smaller by ‖step‖ so that rounding to nearest keeps ‖y‖ <= ``data_norm``, and
   its L1 clip scales them to an L1 radius below ``l1_norm`` such that rounding keeps
   ‖y‖₁ <= ``l1_norm``, whatever the float errors of the scaling: ``_l1_margin``). So
   the row's value ``y = q·step`` satisfies ``|y_j| <= Q_j·step_j <= half_width_j`` as a
   real number, whatever the float errors before the clamp. NaN is flagged and raises.
2. *Weights never grow.* ``W_i = floor(w_i·2**28)``, so ``W_i/2**28 <= w_i`` and a unit's
   total weight stays <= ``unit`` (``dpsk.stats._contribution.capped_weights`` builds
   the user-level weights on this grid exactly).
3. *Sums are exact.* ``|W q| < 2**59`` and ``W q² < 2**90`` per row, so over at most 2**36
   rows every partial sum is below 2**126: 128-bit integer additions never overflow
   and are exact, in any order (chunks are combined as Python integers). For the Gram,
   |q| < 2**20 and the float64 sums (accumulating over at most 4096 rows between two
   flushes: for at most 48 features register tiles with FMA, ``src/block_gram.c``, where
   the CPU has AVX2, else dgemm; above, dsyrk, or for blocks of mostly zero values the
   products of the nonzero ones added one by one) only form
   integers below 2**52, which float64 represents exactly in any summation order (with
   or without FMA); each flush adds them to 128-bit integers. ``l1_gram_pass`` forms
   the same sums in two steps: the first pass adds every row's quantised y *unscaled*
   (what the L1 clip leaves of the rows it does not scale); the second, for exactly the
   rows whose computed ‖y‖₁ (the value the clip compares with its radius, recomputed
   from the row as the full pass computes it) exceeds the radius, subtracts W·q and
   W·qqᵀ of the unscaled row and adds those of the scaled one (its float blocks add and
   subtract at most 2**12 such rows between flushes: partial sums of magnitude below
   2**52, exact).
   Every row therefore contributes, in exact integers, exactly its term of the one-pass
   kernel, and integer addition is exact in any order: the integers, and all that
   follows from them, are bitwise the same. Hence the exact statistic E (a rational
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
   ``dpsk.mechanisms._joint.JointRelease``, whose weights are ``(1 − η)·share/Δ`` and which
   multiplies the values once more (one more relative error u, and a few u in the
   weight itself). Altogether ``‖v(D) − v(D')‖ <= (1 − η)(1 + 4u·n)(1 + 8u) <= 1`` for
   n <= 2**36, since 4u·2**36 = 2**-15 and (1 − 2**-14)(1 + 2**-15 + 2**-49) < 1. The
   noise is therefore calibrated for the computed values; the cost is noise larger by
   1/(1 − η), about 0.006 %.
"""

from cython cimport floating
from libc.math cimport INFINITY
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dgemm, dsyrk

# The tiled Gram of a block (AVX2 + FMA; 0 where the CPU or d does not allow it).
cdef extern from "src/block_gram.h":
    int dpsk_block_gram(const double* buf, int rows, Py_ssize_t d, double* gram, double* colsum,
                        double alpha, int fresh) noexcept nogil

import math
import numbers
from fractions import Fraction

import numpy as np

from dpsk._core._clip cimport NormBound, RowClip, clip_row_norm, clip_row_norm_two, make_norm_bound
from dpsk._core._common cimport _prefetch, _row, _row_class, _sum, _vec

from dpsk._core._clip import _bounds_in_dtype
from dpsk._core._common import (
    _check_array,
    _check_bounds,
    _check_sample_weight,
    _check_shape,
    _map_chunks,
    _raise_nonfinite,
)

__all__ = [
    "clipped_l1_norms",
    "L1GramPass",
    "l1_gram_pass",
    "exact_gram",
    "exact_gram_sums",
    "exact_moments",
    "ExactGram",
    "ExactMoments",
    "ball_clip_radius",
    "fixed_point_grid",
    "gram_floats",
    "GRAM_BITS",
    "MAX_EXACT_ROWS",
    "MOMENT_BITS",
    "ROUNDING_MARGIN",
    "WEIGHT_BITS",
]

#: Largest number of rows (of X, one value per record and feature) that the exact
#: kernels accept, and for which the rounding margins of the releases are proven.
MAX_EXACT_ROWS = 2 ** 36
#: Releases multiply statistics that are one correctly rounded conversion away from
#: exact sums by (1 − ROUNDING_MARGIN) (see the module docstring).
ROUNDING_MARGIN = 2.0 ** -14
#: Moments: quantised values have |q| <= Q < 2**MOMENT_BITS.
MOMENT_BITS = 31
#: Weights are rounded down to multiples of 2**-WEIGHT_BITS (then |w_q·q| < 2**59 and
#: Σ w_q·q² < 2**36 · 2**28 · 2**62 = 2**126 over MAX_EXACT_ROWS rows).
WEIGHT_BITS = 28
#: Gram: |q| < 2**GRAM_BITS, so a dsyrk over at most _GRAM_BLOCK rows only sees
#: integers below 2**(2*20 + 12) = 2**52 and is exact in any summation order.
GRAM_BITS = 20
cdef Py_ssize_t _GRAM_BLOCK = 4096
#: Up to this many features the blocks' Gram is the tiled kernel (``src/block_gram.c``;
#: dgemm on CPUs without AVX2 and FMA), above a dsyrk (all exact; dgemm's kernels are
#: faster than dsyrk's for narrow blocks, measured with OpenBLAS: 1.4-2.3× for d in 8..48
#: on one machine, slower at 64 and above).
cdef Py_ssize_t _GEMM_FEATURES = 48
#: Whether ``_syrk_signed`` may use the tiles: False only in tests (``_use_tiled_gram``),
#: to run the BLAS path that CPUs without AVX2 and FMA take.
cdef bint _TILES = True
#: Above _GEMM_FEATURES, a block whose rows have at most _SPARSE_MAX nonzero quantised
#: values each, and fewer than 1/_SPARSE_RATIO of the dense triangle's products between
#: nonzero ones, adds those products one by one (``_sparse_rows``) instead of a dsyrk:
#: one-hot data (Adult: about 11 of 107 values per row) costs a few pairs per row.
DEF _SPARSE_MAX = 64
cdef Py_ssize_t _SPARSE_RATIO = 16
#: The L1 correction pass prefetches this many scattered candidate rows at a time.
DEF _FIX_AHEAD = 32
#: An L1 scale below this zeroes the row (``_l1_scale``): the division stays accurate above.
cdef double _TINY_SCALE = 2.0 ** -1000
#: Most features of the exact Gram's L1 clip: its float error (d + 3)·2**-53 stays
#: below 2**-29, within the margin of ``_l1_margin``.
_MAX_L1_FEATURES = 2 ** 23


#: The exponent (frexp's) of 2**-990: the grid's step is never finer than for that radius.
_MIN_GRID_EXPONENT = -989


def fixed_point_grid(radius, bits):
    """Public grid of the exact kernels: (step, inverse step, Q) per feature.

    ``step`` is the power of two 2**(e − bits) for ``radius = f·2**e`` (f in [0.5, 1)),
    so ``radius / step`` lies in [2**(bits−1), 2**bits); ``Q = floor(radius / step)``,
    hence ``Q·step <= radius`` exactly. A zero radius gives step 1 and Q 0. Below
    2**-990 the step stays that of 2**-990, so that the inverse step stays finite: Q is
    then smaller (0 below one step, every value on the centre), and still ``Q·step <=
    radius``. (Such radii were refused; the refusal came after the budget was spent, and
    for private bounds it depended on the data.)
    """
    radius = np.ascontiguousarray(radius, dtype=np.float64)
    if not np.all(np.isfinite(radius)) or np.any(radius < 0):
        raise ValueError("radius must be finite and >= 0")
    positive = radius > 0
    exponent = np.maximum(np.frexp(radius)[1], _MIN_GRID_EXPONENT)
    step = np.where(positive, np.ldexp(1.0, exponent - bits), 1.0)
    inverse = np.where(positive, np.ldexp(1.0, bits - exponent), 1.0)
    # radius·2**(bits − exponent) is exact: a power-of-two scaling that stays below 2**bits.
    qmax = np.where(positive, np.floor(np.ldexp(radius, bits - exponent)), 0.0)
    return step, inverse, qmax


def ball_clip_radius(norm, step):
    """The radius to clip rows to so that, quantised on a grid of ``step`` (per feature,
    to nearest), they stay within the ball of radius ``norm``: smaller by the most
    rounding can add, ‖step‖/2, with a margin of ‖step‖·(1 + 2**-40) (``math.hypot``: the
    squares of steps below ~1e-154 vanish). The triangle inequality then bounds every
    quantised row. The margin is below ``norm / 2`` unless the grid is coarser than
    ``norm·2**-20`` (radii below 2**-990, ``fixed_point_grid``); above ``norm`` the radius
    is the least float, far below half of any step: every row quantises to 0."""
    margin = math.hypot(*np.asarray(step, dtype=np.float64).tolist()) * (1.0 + 2.0 ** -40)
    return max(float(norm) - margin, _LEAST_FLOAT)


#: The least positive float: a clip radius under which every value quantises to 0.
_LEAST_FLOAT = float(np.nextafter(0.0, 1.0))


cdef object _to_ints(const i128* values, Py_ssize_t size):
    """The 128-bit integers as a numpy object array of exact Python ints."""
    hi = np.empty(size, dtype=np.int64)
    lo = np.empty(size, dtype=np.uint64)
    cdef long long[::1] hv = hi
    cdef unsigned long long[::1] lv = lo
    cdef Py_ssize_t i
    for i in range(size):
        hv[i] = _i128_hi(values[i])
        lv[i] = _i128_lo(values[i])
    return hi.astype(object) * (1 << 64) + lo.astype(object)


cdef _Grid _grid(double[::1] lo, double[::1] hi, double[::1] centre, double[::1] inverse,
                 double[::1] qmax, double[::1] offset):
    """The grid's pointers (valid while the arrays live; NULL for zero features)."""
    cdef _Grid g
    g.lo, g.hi, g.centre = _vec(lo), _vec(hi), _vec(centre)
    g.inverse, g.qmax, g.offset = _vec(inverse), _vec(qmax), _vec(offset)
    return g


cdef inline void _add_quantised_row(const floating* x, Py_ssize_t d, const _Grid* g, long long wi,
                                    i128* r1, i128* r2, double* flag) noexcept nogil:
    """r1 += wi·q(x), r2 += wi·q(x)²; flag[j] turns NaN where x[j] is not finite."""
    cdef Py_ssize_t j
    cdef long long q
    cdef double v
    for j in range(d):
        v = x[j]
        flag[j] += v * 0.0
        q = _quantise(v, g.lo[j], g.hi[j], g.centre[j], g.inverse[j], g.qmax[j], g.offset[j], False)
        r1[j] += <i128> (wi * q)          # |w q| < 2**59
        r2[j] += (<i128> wi) * (q * q)    # q² < 2**62, times w_q <= 2**28


cdef int _exact_moments_pass(const floating* X, Py_ssize_t n, Py_ssize_t d,
                             const Py_ssize_t* y_index, Py_ssize_t n_classes,
                             const _Grid* g, const long long* w, i128* count, i128* s1, i128* s2,
                             double* flag) noexcept nogil:
    """Per-class Σw_q, Σw_q·q, Σw_q·q² in 128-bit integers (w_q = 1 without weights)."""
    cdef Py_ssize_t i, k = 0
    cdef long long wi = 1
    for i in range(n):
        if not _row_class(i, y_index, n_classes, w, &k, &wi):
            return 1
        count[k] += wi
        _add_quantised_row(X + i * d, d, g, wi, s1 + k * d, s2 + k * d, flag)
    return 0


def _exact_moments_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop, y_index,
                         Py_ssize_t n_classes, double[::1] lo, double[::1] hi,
                         double[::1] centre, double[::1] inverse, double[::1] qmax,
                         double[::1] offset, w_arr, bint squares=True):
    """(status, flag, count, Σq, Σq² or None) of rows [start, stop); without ``squares``
    (unweighted rows only) the float-accumulating ``_exact_sums_pass``."""
    cdef Py_ssize_t d = X.shape[1], size = n_classes * d
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
    cdef double[::1] work = np.zeros(0 if squares else max(size, 1) + 2 * max(d, 1))
    cdef const floating* x = _row(X, start)
    cdef i128* cnt = <i128*> calloc(n_classes, sizeof(i128))
    cdef i128* s1 = <i128*> calloc(max(size, 1), sizeof(i128))
    cdef i128* s2 = <i128*> calloc(max(size, 1), sizeof(i128)) if squares else NULL
    cdef int status
    cdef double bad
    cdef _Grid g = _grid(lo, hi, centre, inverse, qmax, offset)
    try:
        if cnt == NULL or s1 == NULL or (squares and s2 == NULL):
            raise MemoryError()
        with nogil:
            if squares:
                status = _exact_moments_pass(x, stop - start, d, yp, n_classes, &g, wp, cnt, s1, s2,
                                             &flag[0])
            else:
                status = _exact_sums_pass(x, stop - start, d, yp, n_classes, &g, cnt, s1, &work[0],
                                          &work[max(size, 1)], &work[max(size, 1) + max(d, 1)],
                                          &flag[0])
            bad = _sum(&flag[0], d)
        return (status, bad, _to_ints(cnt, n_classes), _to_ints(s1, size),
                _to_ints(s2, size) if squares else None)
    finally:
        free(cnt)
        free(s1)
        free(s2)


#: Rows whose quantised values (|q| < 2**MOMENT_BITS) a float64 sum adds exactly:
#: partial sums stay below 2**(MOMENT_BITS + 21) = 2**52.
cdef Py_ssize_t _SUM_FLUSH_ROWS = 1 << 21


cdef int _exact_sums_pass(const floating* X, Py_ssize_t n, Py_ssize_t d, const Py_ssize_t* y_index,
                          Py_ssize_t n_classes, const _Grid* g, i128* count, i128* s1, double* acc,
                          double* drow, double* b, double* flag) noexcept nogil:
    """Per-class Σ1 and Σq of unweighted rows, the integers of ``_exact_moments_pass``
    without the squares: each row quantised in float arithmetic (``_quantise_row``, the
    doubles of ``_quantise``), the q added in float64 (exact: integers below 2**52),
    flushed to 128-bit integers every _SUM_FLUSH_ROWS rows."""
    cdef Py_ssize_t i, j, k = 0, pending = 0, size = n_classes * d
    cdef const double* xd
    cdef double* a
    for i in range(n):
        if y_index != NULL:
            k = y_index[i]
            if k < 0 or k >= n_classes:
                return 1
        count[k] += 1
        if floating is float:   # exact; the quantisation reads doubles
            for j in range(d):
                drow[j] = X[i * d + j]
            xd = drow
        else:
            xd = X + i * d
        _quantise_row(xd, d, g.lo, g.hi, g.centre, g.inverse, g.qmax, g.offset, b, flag)
        a = acc + k * d
        for j in range(d):
            a[j] += b[j]
        pending += 1
        if pending == _SUM_FLUSH_ROWS or i == n - 1:
            for j in range(size):
                s1[j] += <i128> (<long long> acc[j])   # an integer below 2**52: exact
                acc[j] = 0.0
            pending = 0
    return 0


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
        if self.sum_q2 is None:  # computed without the squares
            return self.count * scale, s1 * scale, None
        s2 = count * (delta * delta) + self.sum_q * (2 * delta * step) + self.sum_q2 * (step * step)
        return self.count * scale, s1 * scale, s2 * scale

    def standardised(self, scale, squares=True):
        """``(Σw, Σ y/scale, Σ (y²/scale² − 1/2))`` per class, y about this grid's centre, each
        entry correctly rounded: bitwise ``round`` of the exact values that ``about(centre)``
        gives (``dpsk.mechanisms._joint.Box.standardised_sums``), computed with Python
        integers instead of Fractions. Every input is a dyadic rational (integers, floats,
        a power-of-two weight scale), so each entry is one exact ratio of integers, and
        Python's integer true division rounds it correctly, as ``float(Fraction)`` does.
        ``scale``: floats over the features; the third entry is None without squares (or
        when ``squares`` is False).
        """
        scale = np.broadcast_to(np.asarray(scale, dtype=np.float64), self.step.shape)
        ws = self.weight_scale
        count = np.array([int(c) / ws for c in self.count], dtype=np.float64)
        d = self.step.size
        steps = [float(v).as_integer_ratio() for v in self.step]
        scales = [float(v).as_integer_ratio() for v in scale]
        per = [(a * e, ws * b * c) for (a, b), (c, e) in zip(steps, scales)]  # step / (ws · scale)
        sum_z = np.array(
            [[int(v) * num / den for v, (num, den) in zip(row, per)] for row in self.sum_q], dtype=np.float64
        ).reshape(-1, d)
        if not squares or self.sum_q2 is None:
            return count, sum_z, None
        # Σ w·(y²/scale² − 1/2) = (Σw·q²·step²/scale² − Σw/2), with step = a/b and scale =
        # s/e exactly (a float scale² overflows above 2**512 and underflows below 2**-511).
        sum_sq = np.empty((self.count.shape[0], d))
        for k in range(self.count.shape[0]):
            c = int(self.count[k])
            for j in range(d):
                (a, b), (s, e) = steps[j], scales[j]
                numerator = 2 * int(self.sum_q2[k, j]) * a * a * e * e - c * b * b * s * s
                sum_sq[k, j] = numerator / (2 * b * b * s * s * ws)
        return count, sum_z, sum_sq

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


def _moments_setup(n, d, lower, upper, y_index, n_classes, sample_weight):
    """Checked arguments and the public grid of the exact moments (dense or sparse X):
    (lower, upper, y_index, n_classes, quantised weights, centre, half, step, inverse,
    qmax, offset)."""
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
    # Halves first, as dpsk.mechanisms._joint.Box: (upper − lower) may overflow.
    centre = lower / 2 + upper / 2
    half = upper / 2 - lower / 2
    step, inverse, qmax = fixed_point_grid(half, MOMENT_BITS)
    offset = qmax + 0.5
    return lower, upper, y_index, n_classes, w, centre, half, step, inverse, qmax, offset


def _combine_moments(parts, n_classes, d, w, centre, half, step):
    """ExactMoments from the chunks' (status, flag, count, s1, s2), added exactly in order."""
    if any(part[0] for part in parts):
        raise ValueError("y_index must hold integers in [0, n_classes)")
    if any(part[1] != 0 for part in parts):
        _raise_nonfinite()
    count = np.zeros(n_classes, dtype=object)
    s1 = np.zeros(n_classes * d, dtype=object)
    squares = all(part[4] is not None for part in parts)
    s2 = np.zeros(n_classes * d, dtype=object) if squares else None
    for part in parts:   # Python integer additions: exact, in any order
        count, s1 = count + part[2], s1 + part[3]
        if squares:
            s2 = s2 + part[4]
    return ExactMoments(count, s1.reshape(n_classes, d), None if s2 is None else s2.reshape(n_classes, d),
                        1 if w is None else 2 ** WEIGHT_BITS,
                        centre, half, step)


def exact_moments(X, lower, upper, y_index=None, n_classes=1, sample_weight=None, *, n_threads=None,
                  squares=True):
    """Exact (fixed-point) per-class moments of clipped values; see the module docstring.
    ``squares=False``: without the sums of squares (``sum_q2`` None), faster without weights."""
    X = _check_array(X, "X", 2)
    n, d = X.shape
    lower, upper, y_index, n_classes, w, centre, half, step, inverse, qmax, offset = _moments_setup(
        n, d, lower, upper, y_index, n_classes, sample_weight)
    squares = squares or w is not None   # weighted rows: the 128-bit path, squares included
    parts = _map_chunks(
        lambda start, stop: _exact_moments_chunk(X, start, stop, y_index, n_classes, lower, upper,
                                                 centre, inverse, qmax, offset, w, squares),
        n, n_threads)
    return _combine_moments(parts, n_classes, d, w, centre, half, step)


cdef extern from *:
    """
    /* Correctly rounded (to nearest, ties to even) double of a 128-bit integer, as
       Python's int.__float__: exact below 2**53, else the top 53 bits rounded on the
       rest. |v| < 2**127 here, so the result is finite. */
    static double _dpsk_i128_to_double(__int128 v) {
        unsigned __int128 u = v < 0 ? -(unsigned __int128) v : (unsigned __int128) v;
        unsigned long long hi = (unsigned long long) (u >> 64), lo = (unsigned long long) u;
        int bits, shift;
        unsigned __int128 mant, rest, half;
        double r;
        if (hi == 0 && lo < (1ULL << 53)) {
            r = (double) lo;
        } else {
            bits = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll(lo);
            shift = bits - 53;
            mant = u >> shift;
            rest = u & ((((unsigned __int128) 1) << shift) - 1);
            half = ((unsigned __int128) 1) << (shift - 1);
            if (rest > half || (rest == half && (mant & 1)))
                mant += 1;   /* 2**53 at most: still exact */
            r = ldexp((double) (unsigned long long) mant, shift);
        }
        return v < 0 ? -r : r;
    }
    """
    double _i128_to_double "_dpsk_i128_to_double"(i128) noexcept nogil


cdef extern from *:
    """
    /* _quantise(x[j], ..., toward_zero=0) of a row, as doubles, in float arithmetic only,
       so that the loop vectorises (the integer conversions of _quantise do not; AVX2 where
       the CPU has it, without FMA: no contraction changes a rounding).
       _quantise returns trunc(s) - qmax with s = t + offset in [1/2, 2 qmax + 1/2]
       (t clamped to [-qmax, qmax], qmax < 2**20): there trunc is floor, and for
       0 <= s < 2**52, r = (s + 2**52) - 2**52 is s rounded to an integer exactly, so
       floor(s) = r - (r > s); both results are integers below 2**21, exact in float64.
       flag[j] turns NaN where x[j] is not finite. */
    #if defined(__GNUC__) && !defined(__clang__)
    /* The selects below are if-converted (vectorised) only when comparisons may not trap;
       values and roundings are IEEE's either way (no reassociation, no contraction). */
    #pragma GCC push_options
    #pragma GCC optimize ("no-trapping-math")
    #endif
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static void _dpsk_quantise_row(const double* __restrict x, Py_ssize_t d,
                                   const double* __restrict lo, const double* __restrict hi,
                                   const double* __restrict centre, const double* __restrict inverse,
                                   const double* __restrict qmax, const double* __restrict offset,
                                   double* __restrict b, double* __restrict flag) {
        const double magic = 4503599627370496.0;
        Py_ssize_t j;
        for (j = 0; j < d; j++) {
            double v = x[j], t, s, r;
            flag[j] += v * 0.0;
            v = v < lo[j] ? lo[j] : v;
            v = v > hi[j] ? hi[j] : v;
            t = (v - centre[j]) * inverse[j];
            t = t > qmax[j] ? qmax[j] : t;
            t = t < -qmax[j] ? -qmax[j] : t;
            s = t + offset[j];
            r = (s + magic) - magic;
            r = r - (double) (r > s);
            b[j] = r - qmax[j];
        }
    }
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC pop_options
    #endif
    """
    void _quantise_row "_dpsk_quantise_row"(const double* x, Py_ssize_t d, const double* lo,
                                            const double* hi, const double* centre,
                                            const double* inverse, const double* qmax,
                                            const double* offset, double* b,
                                            double* flag) noexcept nogil


cdef inline bint _sparse_block(Py_ssize_t rows, Py_ssize_t d, Py_ssize_t most, Py_ssize_t pairs) noexcept nogil:
    """Whether a block of ``rows`` quantised rows, at most ``most`` nonzero values in a
    row and ``pairs`` products between nonzero values (i <= j) in all, goes to
    ``_sparse_rows`` rather than BLAS."""
    return (d > _GEMM_FEATURES and rows > 0 and most <= _SPARSE_MAX
            and pairs * _SPARSE_RATIO < rows * (d * (d + 1) // 2))


def _sparse_gram_block(block):
    """Whether ``_syrk_signed`` adds this block of quantised rows (float64, shape (rows,
    d)) by ``_sparse_rows``; for tests."""
    nonzero = np.count_nonzero(np.asarray(block), axis=1)
    most = int(nonzero.max(initial=0))
    pairs = int((nonzero * (nonzero + 1) // 2).sum())
    return bool(_sparse_block(block.shape[0], block.shape[1], most, pairs))


def _tiled_block_gram(block, gram, colsum, double alpha=1.0, bint fresh=True):
    """``dpsk_block_gram`` on a float64 block (rows, d) into the float64 arrays ``gram``
    (d, d; its upper triangle) and ``colsum`` (d); False, and both untouched, where the
    kernel does not run (CPU or d). For tests."""
    cdef const double[:, ::1] b = np.ascontiguousarray(block, dtype=np.float64)
    cdef double[:, ::1] g = gram
    cdef double empty = 0.0
    if g.shape[0] != b.shape[1] or g.shape[1] != b.shape[1]:
        raise ValueError("gram must be (d, d) for a block of d columns")
    cdef double[::1] c = colsum
    if g.shape[0] != c.shape[0]:
        raise ValueError("colsum must have d entries")
    return bool(dpsk_block_gram(&b[0, 0] if b.shape[0] > 0 else &empty, <int> b.shape[0],
                                b.shape[1], &g[0, 0], &c[0], alpha, fresh))


def _use_tiled_gram(bint use):
    """Let the exact Gram use the tiled kernel (True, the default) or only BLAS (False,
    what a CPU without AVX2 and FMA runs); returns the previous setting. For tests: not
    thread-safe, and a fit running meanwhile may see either."""
    global _TILES
    previous = _TILES
    _TILES = use
    return bool(previous)


cdef inline void _sparse_rows(const double* buf, int rows, Py_ssize_t d, double* block_gram,
                              double alpha) noexcept nogil:
    """block_gram[i·d + j] += alpha·q_i·q_j for i <= j, the nonzero values of each row
    (at most _SPARSE_MAX per row): the upper triangle row-major, where dsyrk's lower
    triangle column-major lies (and what ``_flush`` reads). Each product is an exact
    integer below 2**40; the partial sums are those of ``_syrk_signed``."""
    cdef Py_ssize_t r, j, a, c, k
    cdef Py_ssize_t nz[_SPARSE_MAX]
    cdef double val[_SPARSE_MAX]
    cdef double v
    cdef double* g
    cdef const double* b
    for r in range(rows):
        b = buf + r * d
        k = 0
        for j in range(d):
            if b[j] != 0.0:
                nz[k] = j
                val[k] = b[j]
                k += 1
        for a in range(k):
            v = alpha * val[a]
            g = block_gram + nz[a] * d
            for c in range(a, k):
                g[nz[c]] += v * val[c]


cdef inline void _syrk_block(const double* buf, int rows, Py_ssize_t d, double* block_gram,
                             double* colsum, bint fresh) noexcept nogil:
    _syrk_signed(buf, rows, d, block_gram, colsum, fresh, 1.0)


cdef inline void _syrk_signed(const double* buf, int rows, Py_ssize_t d, double* block_gram,
                              double* colsum, bint fresh, double alpha) noexcept nogil:
    """colsum (+)= alpha·Σq and block_gram (+)= alpha·Σqqᵀ (lower triangle, column-major =
    the upper triangle row-major) over ``rows`` quantised rows in ``buf``; ``fresh``
    starts anew; alpha is 1 or −1 (``_syrk_block``: 1).

    Between two flushes (``_flush``) at most _GRAM_BLOCK rows are added (or subtracted):
    integers below 2**20 over at most 2**12 rows, so every partial sum is an integer of
    magnitude below 2**32 (Σq) and 2**52 (Σqqᵀ), whatever the signs, exact in float64
    whatever the order, blocking or FMA use (a negation is exact), and whether the block
    goes to BLAS or, mostly zeros, to ``_sparse_rows`` (which skips only zero terms).
    """
    cdef int m = <int> d
    cdef char* trans = b"N"
    cdef char* trans_t = b"T"
    cdef char* lower = b"L"
    cdef double one = alpha, beta = 0.0 if fresh else 1.0
    cdef Py_ssize_t r, j, k, most = 0, pairs = 0
    cdef const double* b
    if _TILES and d <= _GEMM_FEATURES and dpsk_block_gram(buf, rows, d, block_gram, colsum, alpha, fresh):
        # The upper triangle by register tiles and the column sums (src/block_gram.c): the
        # same exact integers as BLAS, without packing the block, 240 products a row for
        # d = 20 against dgemm's 400.
        return
    if fresh:
        for j in range(d):
            colsum[j] = 0.0
    for r in range(rows):
        b = buf + r * d
        for j in range(d):
            colsum[j] += alpha * b[j]
        if d > _GEMM_FEATURES:   # a candidate for _sparse_rows: count its nonzero values
            k = 0
            for j in range(d):
                k += b[j] != 0.0
            most = k if k > most else most
            pairs += k * (k + 1) // 2
    if _sparse_block(rows, d, most, pairs):
        # The same exact integers (zeros add nothing), one product at a time.
        if fresh:
            for j in range(d * d):
                block_gram[j] = 0.0
        _sparse_rows(buf, rows, d, block_gram, alpha)
    elif d > 0 and rows > 0 and d <= _GEMM_FEATURES:
        # Both triangles (dgemm: twice dsyrk's arithmetic, but 1.4-2.3× faster for these
        # narrow blocks, measured; the same exact integers, the upper triangle is read).
        dgemm(trans, trans_t, &m, &m, &rows, &one, <double*> buf, &m, <double*> buf, &m, &beta,
              block_gram, &m)
    elif d > 0 and rows > 0:
        # One triangle (dsyrk: half dgemm's work).
        dsyrk(lower, trans, &m, &rows, &one, <double*> buf, &m, &beta, block_gram, &m)
    elif d > 0 and fresh:
        for j in range(d * d):
            block_gram[j] = 0.0


cdef inline void _flush(Py_ssize_t d, const double* block_gram, const double* colsum, i128* gram,
                        i128* total, int shift) noexcept nogil:
    """total += colsum·2**shift, and the packed upper triangle of the Gram += the block's
    ·2**shift, in exact 128-bit integers (the floats are exact integers, see _syrk_block)."""
    cdef Py_ssize_t i, j, p = 0
    for j in range(d):
        total[j] += (<i128> (<long long> colsum[j])) << shift
    for i in range(d):
        for j in range(i, d):
            gram[p] += (<i128> (<long long> block_gram[i * d + j])) << shift
            p += 1


cdef bint _clip_setup(clip_box, clip_norm, Py_ssize_t d, const floating** box_lo, const floating** box_hi,
                      NormBound* ball) except -1:
    """The row clip's box pointers (into ``clip_box``'s arrays, which the caller keeps
    alive; NULL without a box) and ``ball`` (``make_norm_bound``); True with a ball."""
    cdef const floating[::1] lo
    cdef const floating[::1] hi
    if clip_box is not None and d > 0:
        lo, hi = clip_box
        box_lo[0], box_hi[0] = &lo[0], &hi[0]
    if clip_norm is None:
        return False
    ball[0] = make_norm_bound(clip_norm, d, True, floating is float)
    return True


cdef inline int _clip_row_into(const floating* x, Py_ssize_t d, const floating* box_lo,
                               const floating* box_hi, const NormBound* ball, floating* row,
                               double* flag) noexcept nogil:
    """row = x clipped to the box (if ``box_lo``), in X's dtype, then into the ball (if
    ``ball``): bitwise ``clip_bounds`` then ``clip_rows_l2``. flag[j] turns NaN where x[j]
    is not finite; returns 1 if the ball clip met a non-finite row."""
    cdef Py_ssize_t j
    cdef floating v
    for j in range(d):
        v = x[j]
        flag[j] += v * 0.0
        if box_lo != NULL:
            v = box_lo[j] if v < box_lo[j] else v
            v = box_hi[j] if v > box_hi[j] else v
        row[j] = v
    if ball != NULL and clip_row_norm(row, row, d, ball):
        return 1
    return 0


cdef extern from *:
    """
    /* y = x - centre (each difference correctly rounded) and s = ||y||_1 summed in four
       lanes: lane k adds |y_j| for j = k (mod 4) below 4 (d / 4) in order, lane 0 then the
       rest in order; s = (lane 0 + lane 1) + (lane 2 + lane 3). The lanes are independent
       sums (no reassociation), which GCC may put in one vector; no FMA is involved. If
       s > l1, y *= l1 / s (a factor below tiny zeroes the row; NaN rows stay, flagged).
       flag[j] turns NaN where x[j] is not finite. Returns s. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static double _dpsk_l1_scale_row(const double* __restrict x, Py_ssize_t d,
                                     const double* __restrict centre, double l1, double tiny,
                                     double* __restrict y, double* __restrict flag) {
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0, s, scale;
        Py_ssize_t j, m = d - d % 4;
        for (j = 0; j < d; j++) {
            flag[j] += x[j] * 0.0;
            y[j] = x[j] - centre[j];
        }
        for (j = 0; j < m; j += 4) {
            a0 += fabs(y[j]);
            a1 += fabs(y[j + 1]);
            a2 += fabs(y[j + 2]);
            a3 += fabs(y[j + 3]);
        }
        for (j = m; j < d; j++)
            a0 += fabs(y[j]);
        s = (a0 + a1) + (a2 + a3);
        if (s > l1) {
            scale = l1 / s;
            if (scale < tiny)   /* zeroed, not multiplied: an overflowed y_j (inf) gives 0 too */
                scale = 0.0;
            for (j = 0; j < d; j++)
                y[j] = scale == 0.0 ? 0.0 : y[j] * scale;
        }
        return s;
    }
    """
    double _l1_scale_row "_dpsk_l1_scale_row"(const double* x, Py_ssize_t d, const double* centre,
                                              double l1, double tiny, double* y,
                                              double* flag) noexcept nogil


cdef extern from *:
    """
    /* The unscaled row of the L1 clip, quantised: y = x - centre (each difference
       correctly rounded), s = ||y||_1 in _dpsk_l1_scale_row's four lanes and order, and
       b[j] = _dpsk_quantise_row's value of y[j] on the centred grid (no clamping bounds,
       centre 0: its v - 0 is v exactly, so t = y[j] * inverse[j]), the same operations
       without the store and reload of y (AVX2 where the CPU has it, no FMA). flag[j]
       turns NaN where x[j] is not finite; a finite x whose y overflows is not flagged:
       t = +-inf is clamped to +-qmax, and the clip scales such a row to the centre
       (s = inf). Returns s. */
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC push_options
    #pragma GCC optimize ("no-trapping-math")
    #endif
    static inline double _dpsk_centred_q(double y, double inverse, double qmax, double offset) {
        const double magic = 4503599627370496.0;
        double t = y * inverse, s, r;
        t = t > qmax ? qmax : t;
        t = t < -qmax ? -qmax : t;
        s = t + offset;
        r = (s + magic) - magic;
        r = r - (double) (r > s);
        return r - qmax;
    }
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static double _dpsk_centred_quantise_row(const double* __restrict x, Py_ssize_t d,
                                             const double* __restrict centre,
                                             const double* __restrict inverse,
                                             const double* __restrict qmax,
                                             const double* __restrict offset,
                                             double* __restrict b, double* __restrict flag) {
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0, y0, y1, y2, y3, y;
        Py_ssize_t j, m = d - d % 4;
        for (j = 0; j < d; j++)
            flag[j] += x[j] * 0.0;
        for (j = 0; j < m; j += 4) {
            y0 = x[j] - centre[j];
            y1 = x[j + 1] - centre[j + 1];
            y2 = x[j + 2] - centre[j + 2];
            y3 = x[j + 3] - centre[j + 3];
            a0 += fabs(y0);
            a1 += fabs(y1);
            a2 += fabs(y2);
            a3 += fabs(y3);
            b[j] = _dpsk_centred_q(y0, inverse[j], qmax[j], offset[j]);
            b[j + 1] = _dpsk_centred_q(y1, inverse[j + 1], qmax[j + 1], offset[j + 1]);
            b[j + 2] = _dpsk_centred_q(y2, inverse[j + 2], qmax[j + 2], offset[j + 2]);
            b[j + 3] = _dpsk_centred_q(y3, inverse[j + 3], qmax[j + 3], offset[j + 3]);
        }
        for (j = m; j < d; j++) {
            y = x[j] - centre[j];
            a0 += fabs(y);
            b[j] = _dpsk_centred_q(y, inverse[j], qmax[j], offset[j]);
        }
        return (a0 + a1) + (a2 + a3);
    }
    /* The scaled row of the L1 clip, quantised, for a row whose s = ||y||_1 (as above)
       exceeds l1: bitwise _dpsk_l1_scale_row's scaling (scale = l1 / s, zero below tiny,
       y * scale) then _dpsk_quantise_row on the centred grid, without the store and
       reload of y. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static void _dpsk_scaled_quantise_row(const double* __restrict x, Py_ssize_t d,
                                          const double* __restrict centre, double s, double l1,
                                          double tiny, const double* __restrict inverse,
                                          const double* __restrict qmax,
                                          const double* __restrict offset, double* __restrict b) {
        double scale = l1 / s, y;
        Py_ssize_t j;
        if (scale < tiny)
            scale = 0.0;
        for (j = 0; j < d; j++) {
            y = x[j] - centre[j];
            y = scale == 0.0 ? 0.0 : y * scale;
            b[j] = _dpsk_centred_q(y, inverse[j], qmax[j], offset[j]);
        }
    }
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC pop_options
    #endif
    """
    void _scaled_quantise_row "_dpsk_scaled_quantise_row"(const double* x, Py_ssize_t d, const double* centre,
                                                          double s, double l1, double tiny,
                                                          const double* inverse, const double* qmax,
                                                          const double* offset, double* b) noexcept nogil
    double _centred_quantise_row "_dpsk_centred_quantise_row"(const double* x, Py_ssize_t d,
                                                              const double* centre, const double* inverse,
                                                              const double* qmax, const double* offset,
                                                              double* b, double* flag) noexcept nogil


cdef inline double _unscaled_row(const floating* x, Py_ssize_t d, const double* centre, const _Grid* gc,
                                 double* b, double* spare, double* flag) noexcept nogil:
    """b = the quantised unscaled y = x − centre on the centred grid ``gc``, bitwise what
    ``_l1_scale`` (no scaling) then ``_quantise_row`` write; returns ‖y‖₁ as ``_l1_scale``
    does. ``spare`` (d doubles, not ``b``) holds a float32 row as doubles. Only x is
    flagged (see ``_dpsk_centred_quantise_row``)."""
    cdef Py_ssize_t j
    if floating is float:   # exact
        for j in range(d):
            spare[j] = x[j]
        return _centred_quantise_row(spare, d, centre, gc.inverse, gc.qmax, gc.offset, b, flag)
    else:
        return _centred_quantise_row(x, d, centre, gc.inverse, gc.qmax, gc.offset, b, flag)


cdef inline void _scaled_row(const floating* x, Py_ssize_t d, const double* centre, const _Grid* gc, double s,
                             double l1, double* b, const double* spare) noexcept nogil:
    """b = the quantised y = (x − centre)·l1/s on the centred grid ``gc``, for a row whose
    ``_unscaled_row`` returned s > l1, bitwise what ``_l1_scale`` then ``_quantise_row``
    write. ``spare``: the float32 row as doubles that ``_unscaled_row`` left there."""
    if floating is float:
        _scaled_quantise_row(spare, d, centre, s, l1, _TINY_SCALE, gc.inverse, gc.qmax, gc.offset, b)
    else:
        _scaled_quantise_row(x, d, centre, s, l1, _TINY_SCALE, gc.inverse, gc.qmax, gc.offset, b)


cdef inline double _l1_scale(const floating* x, Py_ssize_t d, const double* centre, double l1, double* y,
                             double* spare, double* flag) noexcept nogil:
    """y = (x − centre)·min(1, l1/s) for s = ‖x − centre‖₁ (``_dpsk_l1_scale_row``'s
    order; l1 = inf: no scaling), returns s. ``spare`` (d doubles, not ``y``) holds a
    float32 row as doubles. Every |y_j| is at most |x_j − centre_j| (the scale is <= 1)
    and Σ|y_j| <= l1·(1 + (d + 3)·2**-53); see ``_l1_margin`` for what this gives after
    the rounding onto the grid."""
    cdef Py_ssize_t j
    if floating is float:   # exact
        for j in range(d):
            spare[j] = x[j]
        return _l1_scale_row(spare, d, centre, l1, _TINY_SCALE, y, flag)
    else:
        return _l1_scale_row(x, d, centre, l1, _TINY_SCALE, y, flag)


cdef int _exact_gram_pass(const floating* X, Py_ssize_t n, Py_ssize_t d, const _Grid* g,
                          bint toward_zero, const floating* box_lo, const floating* box_hi,
                          const NormBound* ball, const _Grid* centred, double l1, floating* row,
                          double* drow, const long long* units, double* buf, double* picked,
                          double* block_gram, Py_ssize_t block, i128* gram, i128* total, double* flag,
                          double* colsum, double* norms=NULL, unsigned char* diverge=NULL,
                          const NormBound* outer=NULL, floating* qrow=NULL) noexcept nogil:
    """Σ W q and the packed upper triangle of Σ W qqᵀ exactly (W = 1 without ``units``).

    With ``box_lo``/``box_hi`` and/or ``ball``, each row is first clipped into ``row``:
    to the box in X's dtype, then into the ball (``clip_row_norm``), bitwise as
    ``clip_bounds`` then ``clip_rows_l2`` would write it; no copy of X is made. With
    ``units`` (integer weights below 2**(GRAM_WEIGHT_BITS + 1)) the block's quantised
    rows are summed once per binary digit k of the weights, over the rows whose weight
    has digit k, times 2**k: Σ_k 2**k Σ_{i: digit k} qqᵀ = Σ W qqᵀ, exactly. Returns 1 if
    the ball clip met a non-finite row (the flags catch the rest).

    With ``centred`` (the grid about the origin, without clamping bounds) each clipped row
    is then scaled towards ``g.centre`` into the L1 ball of radius ``l1`` (``_l1_scale``)
    and quantised as it is, already centred.

    With ``norms`` (and ``centred``; the first pass of ``l1_gram_pass``, l1 = inf) row i's
    ‖c'(x) − centre‖₁ goes to norms[i], where c' clips to the box and into the ball
    ``outer`` (``clipped_l1_norms``'s value), or into ``ball`` when ``outer`` is NULL: the
    L1 norm the row's own y has (the value the L1 clip of ``_l1_scale`` compares), read
    from that computation, unless a ball clip changed the row (then the two clipped rows
    may differ: diverge[i] = 1 and the norm of the ``outer``-clipped row, ``qrow``).
    """
    cdef Py_ssize_t start = 0, r, j, k, m, pending = 0
    cdef int rows, bad = 0
    cdef double* b
    cdef const floating* x
    cdef const double* xd
    cdef double dv, s
    cdef bint clip = box_lo != NULL or ball != NULL
    cdef bint inner_scaled = False, outer_scaled = False
    cdef RowClip plan_in, plan_out
    cdef long long any_units
    while start < n:
        rows = <int> min(block, n - start)
        any_units = 0
        for r in range(rows):
            b = buf + r * d
            x = X + (start + r) * d
            if norms != NULL:   # the first pass of l1_gram_pass (l1 = inf)
                if outer != NULL:   # the box, then both balls from one sum of squares
                    if box_lo != NULL:
                        _clip_row_into(x, d, box_lo, box_hi, NULL, qrow, flag)
                        x = qrow
                    # (a non-finite row returns 1 here, flagged or not; a row neither
                    # ball changes is not copied: it is x)
                    bad |= clip_row_norm_two(x, row, qrow, d, ball, outer, &plan_in, &plan_out)
                    inner_scaled, outer_scaled = plan_in.mode != 0, plan_out.mode != 0
                    if inner_scaled or outer_scaled:
                        x = row
                elif clip:
                    bad |= _clip_row_into(x, d, box_lo, box_hi, ball, row, flag)
                    x = row
                if outer != NULL and (outer_scaled or inner_scaled):
                    diverge[start + r] = 1
                    norms[start + r] = _l1_scale(qrow, d, g.centre, INFINITY, drow, b, flag)
                    _unscaled_row(x, d, g.centre, centred, b, drow, flag)
                else:
                    norms[start + r] = _unscaled_row(x, d, g.centre, centred, b, drow, flag)
                if units != NULL:
                    any_units |= units[start + r]
                continue
            if clip:
                bad |= _clip_row_into(x, d, box_lo, box_hi, ball, row, flag)
                x = row
            if centred != NULL:   # y = x − centre scaled into the L1 ball, then quantised
                # Bitwise _l1_scale then _quantise_row on the centred grid (which has no
                # clamping bounds): the unscaled row and its L1 norm in one loop, the
                # scaled row only for the rows the clip scales.
                s = _unscaled_row(x, d, g.centre, centred, b, drow, flag)
                if s > l1:
                    _scaled_row(x, d, g.centre, centred, s, l1, b, drow)
                if units != NULL:
                    any_units |= units[start + r]
                continue
            if floating is float:   # exact; the quantisation reads doubles
                for j in range(d):
                    drow[j] = x[j]
                xd = drow
            else:
                xd = x
            if toward_zero:
                for j in range(d):
                    dv = xd[j]
                    flag[j] += dv * 0.0
                    b[j] = <double> _quantise(dv, g.lo[j], g.hi[j], g.centre[j], g.inverse[j], g.qmax[j],
                                              g.offset[j], True)
            else:
                _quantise_row(xd, d, g.lo, g.hi, g.centre, g.inverse, g.qmax, g.offset, b, flag)
            if units != NULL:
                any_units |= units[start + r]
        if units == NULL:
            # Float accumulation across blocks, flushed to integers every _GRAM_BLOCK rows.
            if pending + rows > _GRAM_BLOCK:
                _flush(d, block_gram, colsum, gram, total, 0)
                pending = 0
            _syrk_block(buf, rows, d, block_gram, colsum, pending == 0)
            pending += rows
        else:
            k = 0
            while any_units >> k:
                m = 0
                for r in range(rows):
                    if (units[start + r] >> k) & 1:
                        memcpy(picked + m * d, buf + r * d, d * sizeof(double))
                        m += 1
                if m > 0:
                    _syrk_block(picked, <int> m, d, block_gram, colsum, True)
                    _flush(d, block_gram, colsum, gram, total, <int> k)
                k += 1
        start += rows
    if pending > 0:
        _flush(d, block_gram, colsum, gram, total, 0)
    return bad


cdef object _raw(const i128* values, Py_ssize_t size):
    """The 128-bit integers as an int64 array of shape (size, 2): high (signed), low words."""
    out = np.empty((size, 2), dtype=np.int64)
    cdef long long[:, ::1] o = out
    cdef Py_ssize_t i
    for i in range(size):
        o[i, 0] = _i128_hi(values[i])
        o[i, 1] = <long long> _i128_lo(values[i])
    return out


cdef inline i128 _from_raw(const long long[:, ::1] raw, Py_ssize_t i) noexcept nogil:
    return ((<i128> raw[i, 0]) << 64) | (<i128> (<unsigned long long> raw[i, 1]))


def _raw_add(const long long[:, ::1] a, const long long[:, ::1] b):
    """Entrywise sum of two raw 128-bit arrays (exact: every sum stays below 2**126)."""
    cdef Py_ssize_t i, size = a.shape[0]
    cdef i128* s = <i128*> calloc(max(size, 1), sizeof(i128))
    if s == NULL:
        raise MemoryError()
    try:
        for i in range(size):
            s[i] = _from_raw(a, i) + _from_raw(b, i)
        return _raw(s, size)
    finally:
        free(s)


def _raw_ints(raw):
    """Raw 128-bit integers as an object array of exact Python ints."""
    raw = np.asarray(raw)
    return raw[:, 0].astype(object) * (1 << 64) + raw[:, 1].view(np.uint64).astype(object)


def _raw_floats(const long long[:, ::1] raw):
    """Raw 128-bit integers as float64, each correctly rounded (as ``float(int)``)."""
    cdef Py_ssize_t i, size = raw.shape[0]
    out = np.empty(size)
    cdef double[::1] o = out
    with nogil:
        for i in range(size):
            o[i] = _i128_to_double(_from_raw(raw, i))
    return out


def _raw_gram_floats(const long long[:, ::1] raw, Py_ssize_t d, double[::1] scale):
    """The symmetric d × d float64 Gram of a raw packed upper triangle, entry (i, j) the
    correctly rounded integer times ``scale[i]·scale[j]`` (powers of two whose products
    stay in the normal range: every product, and the scaling, is exact), bitwise
    ``_scaled_floats(ints, np.outer(scale, scale))``."""
    out = np.empty((d, d))
    cdef double[:, ::1] o = out
    cdef Py_ssize_t i, j, p = 0
    with nogil:
        for i in range(d):
            for j in range(i, d):
                o[i, j] = _i128_to_double(_from_raw(raw, p)) * (scale[i] * scale[j])
                o[j, i] = o[i, j]
                p += 1
    return out


def _symmetric(packed, d, dtype):
    """The symmetric d × d matrix of a packed upper triangle (row-major)."""
    full = np.zeros((d, d), dtype=dtype)
    upper = np.triu_indices(d)
    full[upper] = packed
    full.T[upper] = packed
    return full


def _exact_gram_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop,
                      double[::1] lo, double[::1] hi, double[::1] centre, double[::1] inverse,
                      double[::1] qmax, double[::1] offset, bint toward_zero, clip_box,
                      clip_norm, clip_l1, units, norms=None, diverge=None, norm_clip=None):
    """(non-finite flag, raw Σq, raw packed triangle of Σqqᵀ) of rows [start, stop); with
    ``norms`` (float64, n) the first pass of ``l1_gram_pass`` (``_exact_gram_pass``)."""
    cdef Py_ssize_t d = X.shape[1], n = stop - start
    cdef Py_ssize_t block = max(1, min(n, _GRAM_BLOCK, _gram_rows(d)))
    cdef Py_ssize_t size = d * (d + 1) // 2
    cdef double[:, ::1] buf = np.empty((block, max(d, 1)))
    cdef double[:, ::1] picked = np.empty((block if units is not None else 1, max(d, 1)))
    cdef double[:, ::1] bg = np.empty((max(d, 1), max(d, 1)))
    cdef double[::1] flag = np.zeros(max(d, 1))
    cdef double[::1] colsum = np.zeros(max(d, 1))
    cdef const floating* x = _row(X, start)
    cdef const floating* blo = NULL
    cdef const floating* bhi = NULL
    cdef floating[::1] row
    cdef NormBound ball
    cdef const NormBound* pball = NULL
    cdef const long long[::1] uv
    cdef const long long* up = NULL
    if _clip_setup(clip_box, clip_norm, d, &blo, &bhi, &ball):
        pball = &ball
    if units is not None:
        uv = units
        up = &uv[start] if n > 0 else NULL
    row = np.empty(max(d, 1), dtype=np.float32 if floating is float else np.float64)
    cdef double[::1] drow = np.empty(max(d, 1))
    cdef i128* gram = <i128*> calloc(max(size, 1), sizeof(i128))
    cdef i128* total = <i128*> calloc(max(d, 1), sizeof(i128))
    cdef double bad
    cdef int clip_bad
    cdef _Grid g = _grid(lo, hi, centre, inverse, qmax, offset)
    cdef _Grid gc
    cdef const _Grid* pc = NULL
    cdef double l1 = 0.0
    cdef double[::1] below, above, zero
    if clip_l1 is not None:   # the grid about the origin, no clamping bounds: rows come centred
        l1 = clip_l1
        below, above, zero = np.full(max(d, 1), -np.inf), np.full(max(d, 1), np.inf), np.zeros(max(d, 1))
        gc = _grid(below, above, zero, inverse, qmax, offset)
        pc = &gc
    cdef double[::1] nv
    cdef unsigned char[::1] dv
    cdef double* np_ = NULL
    cdef unsigned char* dp = NULL
    cdef NormBound outer
    cdef const NormBound* pouter = NULL
    cdef floating[::1] qrow = np.empty(max(d, 1), dtype=np.float32 if floating is float else np.float64)
    if norms is not None and n > 0:
        nv = norms
        np_ = &nv[start]
        if norm_clip is not None:
            dv = diverge
            dp = &dv[start]
            outer = make_norm_bound(norm_clip, d, True, floating is float)
            pouter = &outer
    try:
        if gram == NULL or total == NULL:
            raise MemoryError()
        with nogil:
            clip_bad = _exact_gram_pass(x, n, d, &g, toward_zero, blo, bhi, pball, pc, l1, &row[0], &drow[0],
                                        up, &buf[0, 0], &picked[0, 0], &bg[0, 0], block, gram, total,
                                        &flag[0], &colsum[0], np_, dp, pouter, &qrow[0])
            bad = _sum(&flag[0], d)
        return bad + clip_bad, _raw(total, d), _raw(gram, size)
    finally:
        free(gram)
        free(total)


#: Rows per dsyrk call of the exact Gram: about 64 kB of quantised rows (at most
#: _GRAM_BLOCK, the bound of the exactness argument; at least 64). A small buffer keeps
#: the pass's memory low; the block's triangle costs d²/2 additions, the rows d²/2·rows.
_GRAM_BUFFER_BYTES = 2 ** 16


def _gram_rows(d):
    return max(64, _GRAM_BUFFER_BYTES // (8 * max(d, 1)))


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


def _exact_gram_raw(X, lower, upper, centre, inverse, qmax, offset, toward_zero, n_threads,
                    clip_box, clip_norm, clip_l1, units):
    """Exact raw Σ W q and packed triangle of Σ W qqᵀ of the quantised rows of X."""
    d = X.shape[1]
    parts = _map_chunks(
        lambda start, stop: _exact_gram_chunk(X, start, stop, lower, upper, centre, inverse, qmax,
                                              offset, toward_zero, clip_box, clip_norm, clip_l1, units),
        X.shape[0], n_threads)
    return _add_gram_parts(parts, d)


def _add_gram_parts(parts, d, total=None, gram=None):
    """The chunks' raw Σq and packed Σqqᵀ (``(flag, total, gram)`` each) added exactly to
    ``total`` and ``gram`` (zero when None); a non-finite flag raises."""
    if any(part[0] != 0 for part in parts):
        _raise_nonfinite()
    if total is None:
        total, gram = np.zeros((d, 2), dtype=np.int64), np.zeros((d * (d + 1) // 2, 2), dtype=np.int64)
    for part in parts:   # exact 128-bit additions
        total, gram = _raw_add(total, part[1]), _raw_add(gram, part[2])
    return total, gram


def _weighted_count(n, units):
    """(count, weight scale) of the exact Gram: n rows, or the integer weights' sum."""
    return (n, 1) if units is None else (int(units.sum()), 1 << GRAM_WEIGHT_BITS)


def _l1_margin(l1_norm, step):
    """The L1 radius the rows are scaled to (``_l1_scale``) so that every *quantised* row
    has ``‖q·step‖₁ <= l1_norm`` exactly: ``max(L − S·(1 + 2**-40), L/2)·(1 − 2**-28)``,
    S = Σ step_j (``math.fsum``: within a relative 2**-53).

    Why. Before rounding, Σ|t_j|·step_j <= r·(1 + (d + 3)u) for the radius r (u = 2**-53,
    ``_l1_scale``; t_j·step_j is the scaled y_j, the power-of-two scaling is exact where
    it matters: |t_j| >= 1/2 − 2**-32 needs a normal y_j). The quantisation's addition
    t + Q + 1/2 (below 2**21) is rounded by at most 2**-33, so q_j = 0 when |t_j| < 1/2 −
    2**-32 and otherwise |q_j| <= |t_j| + 1/2 + 2**-33 <= 2|t_j|·(1 + 2**-30). With the
    first radius (computed with two more relative errors u): ‖q·step‖₁ <= (L − S) +
    S·(1/2 + 2**-33) <= L, since (1 − 2**-28)(1 + u)²(1 + (d + 3)u) <= 1 for d <= 2**23.
    With the second: ‖q·step‖₁ <= 2·(L/2)·(1 − 2**-28)(1 + u)(1 + 2**-30)(1 + (d + 3)u)
    <= L. Either way, whichever is larger. The clamp |q_j| <= Q_j only shrinks |q_j|.
    Below 2**-900 (a private ``l1_norm`` may come out as the smallest float) the radius
    is 0: every row is scaled to the centre, q = 0.
    """
    l1_norm = float(l1_norm)
    if not (math.isfinite(l1_norm) and l1_norm > 0):
        raise ValueError(f"clip_l1 must be finite and > 0, got {l1_norm!r}")
    if step.shape[0] > _MAX_L1_FEATURES:
        raise ValueError("the exact Gram's L1 clip supports at most 2**23 features")
    if l1_norm < 2.0 ** -900:   # below the float analysis' range: every row to the centre (q = 0)
        return 0.0
    margin = math.fsum(step.tolist()) * (1.0 + 2.0 ** -40)
    return max(l1_norm - margin, l1_norm / 2) * (1.0 - 2.0 ** -28)


def _gram_setup(X, lower, upper, centre, radius, sample_weight, clip_box, clip_norm):
    """Checked arguments of the exact Gram: (X, lower, upper, centre, step, inverse, qmax,
    offset, clip box in X's dtype or None, clip norm or None, integer weights or None)."""
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
    if clip_box is not None:   # as clip_bounds: the bounds rounded inward to X's dtype
        clip_box = _bounds_in_dtype(*_check_bounds(*clip_box, d), X.dtype)
    if clip_norm is not None:
        clip_norm = float(clip_norm)
        make_norm_bound(clip_norm, d, True, X.dtype == np.float32)   # checks
    units = None
    if sample_weight is not None:
        w = _check_sample_weight(sample_weight, n)
        if np.any(w > 1.0):
            raise ValueError("sample_weight must lie in [0, 1] for the exact Gram")
        units = np.ascontiguousarray(np.floor(np.ldexp(w, GRAM_WEIGHT_BITS)).astype(np.int64))
    return X, lower, upper, centre, step, inverse, qmax, offset, clip_box, clip_norm, units


def _gram_raw(X, lower, upper, centre, radius, sample_weight, toward_zero, n_threads, clip_box, clip_norm,
              clip_l1=None):
    """(count, raw Σq, raw packed Σqqᵀ, step, weight scale) of the exact Gram."""
    X, lower, upper, centre, step, inverse, qmax, offset, clip_box, clip_norm, units = _gram_setup(
        X, lower, upper, centre, radius, sample_weight, clip_box, clip_norm)
    if clip_l1 is not None:
        if toward_zero:
            raise ValueError("clip_l1 rounds to nearest: toward_zero must be False")
        clip_l1 = _l1_margin(clip_l1, step)
    # The blocks' dsyrk calls are small (a few hundred rows × d): BLAS threads inside the
    # row chunks' own threads only contend (measured 10× slower on 2 cores at 10**6 × 21).
    # dpsk.utils._threads: a cached controller (threadpool_limits scans the loaded
    # libraries on every call, ~10 ms), free when nested in a fit's own limit.
    from dpsk.utils._threads import single_blas_thread

    with single_blas_thread():
        total, gram = _exact_gram_raw(X, lower, upper, centre, inverse, qmax, offset, bool(toward_zero),
                                      n_threads, clip_box, clip_norm, clip_l1, units)
    count, scale = _weighted_count(X.shape[0], units)
    return count, total, gram, step, scale


class ExactGram:
    """Exact weighted count, Σq and Σqqᵀ of quantised rows (:func:`exact_gram_sums`).

    ``count`` (a Python int), ``total`` (n_features,) and ``gram`` (n_features,
    n_features, symmetric) are exact Python integers (object arrays) in units of
    ``1/weight_scale`` weights; the row values are ``y_j = q_j·step_j``.
    :meth:`round` converts, once, to floats.
    """

    def __init__(self, count, total, gram, step, weight_scale):
        self.count, self.total, self.gram = count, total, gram
        self.step, self.weight_scale = step, int(weight_scale)

    def round(self, exact, factor=1.0):
        """``float(exact·factor)`` entrywise, correctly rounded (``exact``: integers or
        Fractions; ``factor``: a float or Fraction, taken exactly)."""
        factor = Fraction(factor) / self.weight_scale
        exact = np.asarray(exact, dtype=object)
        return np.array([float(Fraction(v) * factor) for v in exact.ravel()],
                        dtype=np.float64).reshape(exact.shape)


def exact_gram_sums(X, lower, upper, centre, radius, *, sample_weight=None, toward_zero=False,
                    n_threads=None, clip_box=None, clip_norm=None, clip_l1=None):
    """:class:`ExactGram` of the quantised clipped rows about ``centre`` (the integers
    behind :func:`exact_gram`, for releases that rescale before their one rounding)."""
    return _raw_exact(_gram_raw(X, lower, upper, centre, radius, sample_weight, toward_zero, n_threads,
                                clip_box, clip_norm, clip_l1))


def _raw_exact(raw):
    """The :class:`ExactGram` of ``_gram_raw``'s (count, raw Σq, raw packed Σqqᵀ, step, scale)."""
    count, total, gram, step, scale = raw
    d = total.shape[0]
    return ExactGram(count, _raw_ints(total), _symmetric(_raw_ints(gram), d, object), step, scale)


def _raw_merge(parts):
    """One ``_gram_raw`` result of several over disjoint rows on one grid (exact sums)."""
    count, total, gram, step, scale = parts[0]
    for part in parts[1:]:
        count, total, gram = count + part[0], _raw_add(total, part[1]), _raw_add(gram, part[2])
    return count, total, gram, step, scale


def exact_gram(X, lower, upper, centre, radius, *, sample_weight=None, toward_zero=False, n_threads=None,
               clip_box=None, clip_norm=None, clip_l1=None):
    """Exact count, Σy and Σyyᵀ of quantised clipped rows about ``centre``; see the module docstring.

    Returns ``(count, total, gram)``: ``count`` a Python int (a float with weights),
    ``total`` (n_features,) and ``gram`` (n_features, n_features, symmetric) float64
    arrays, each entry the correctly rounded value of the exact sum: bitwise
    ``gram_floats(exact_gram_sums(...))``, without Python integers.

    ``sample_weight`` (in [0, 1]) is rounded *down* to multiples of 2**-GRAM_WEIGHT_BITS,
    so no row weighs more than its weight; the weighted sums are the exact combination
    Σ_k 2**(k − GRAM_WEIGHT_BITS) · S_k of the exact sums S_k over the rows whose rounded
    weight has binary digit k set, rounded once at the end.

    ``clip_box=(lo, hi)`` and ``clip_norm`` clip the rows first, in X's dtype, to the box
    and then into the L2 ball (bitwise ``clip_rows_l2(clip_bounds(X, lo, hi), clip_norm)``,
    without the copy); ``lower``/``upper`` then clamp the clipped values as always.

    ``clip_l1=L`` then scales each clipped row's ``y = x − centre`` towards ``centre``,
    ``y·min(1, r/‖y‖₁)`` (‖y‖₁ in the order of ``_l1_scale``), and quantises it without
    clamping to ``lower``/``upper`` (clip with ``clip_box`` instead), for a radius r just
    below L (``_l1_margin``) such that every quantised row has ``‖q·step‖₁ <= L`` exactly;
    every |q_j| is at most what it is without ``clip_l1`` (with ``lower``/``upper`` not
    binding, e.g. ±the largest float), so the bounds of ``clip_norm`` and the grid hold.
    """
    return _raw_floats_of(_gram_raw(X, lower, upper, centre, radius, sample_weight, toward_zero, n_threads,
                                    clip_box, clip_norm, clip_l1))


cdef inline void _signed_rows(const double* minus, const double* plus, Py_ssize_t m, Py_ssize_t d,
                              const long long* wrow, double* picked_m, double* picked_p, double* block_gram,
                              double* colsum, i128* gram, i128* total, Py_ssize_t* pending) noexcept nogil:
    """Σ W (q'q'ᵀ − qqᵀ) and Σ W (q' − q) of m pairs of quantised rows (q in ``minus``, q'
    in ``plus``) added to the exact sums: as ``_exact_gram_pass``'s blocks, with the rows
    of ``minus`` subtracted (alpha = −1) in the same float block, whose partial sums stay
    exact integers below 2**52 in magnitude (at most _GRAM_BLOCK rows between flushes)."""
    cdef Py_ssize_t r, c, k = 0
    cdef long long any_units = 0
    if wrow == NULL:
        if pending[0] + 2 * m > _GRAM_BLOCK:
            _flush(d, block_gram, colsum, gram, total, 0)
            pending[0] = 0
        _syrk_signed(minus, <int> m, d, block_gram, colsum, pending[0] == 0, -1.0)
        _syrk_signed(plus, <int> m, d, block_gram, colsum, False, 1.0)
        pending[0] += 2 * m
        return
    for r in range(m):
        any_units |= wrow[r]
    while any_units >> k:
        c = 0
        for r in range(m):
            if (wrow[r] >> k) & 1:
                memcpy(picked_m + c * d, minus + r * d, d * sizeof(double))
                memcpy(picked_p + c * d, plus + r * d, d * sizeof(double))
                c += 1
        if c > 0:
            _syrk_signed(picked_m, <int> c, d, block_gram, colsum, True, -1.0)
            _syrk_signed(picked_p, <int> c, d, block_gram, colsum, False, 1.0)
            _flush(d, block_gram, colsum, gram, total, <int> k)
        k += 1


cdef int _l1_fix_pass(const floating* X, Py_ssize_t n, Py_ssize_t d, const double* centre, const _Grid* gc,
                      const floating* box_lo, const floating* box_hi, const NormBound* ball, double r1,
                      const double* norms, const unsigned char* diverge, const long long* units,
                      floating* row, double* drow, double* minus, double* plus, long long* wrow,
                      double* picked_m, double* picked_p, Py_ssize_t block, double* block_gram,
                      double* colsum, i128* gram, i128* total, double* flag) noexcept nogil:
    """The second pass of ``l1_gram_pass``: for every row the L1 clip to radius ``r1``
    scales (``_l1_scale``: its y has ‖y‖₁ > r1 in the clip's own order), the exact sums
    lose its unscaled quantised row q (what the first pass added) and gain the scaled one
    q', both computed here exactly as ``_exact_gram_pass`` computes them. Only rows with
    norms[i] > r1 or diverge[i] are read: for the others norms[i] is that same ‖y‖₁
    (``_exact_gram_pass``). A row with diverge[i] = 0 (``diverge`` given) is one that the
    ball clip kept: its clipped row is the box's. Returns 1 if the ball clip met a
    non-finite row."""
    cdef Py_ssize_t i, m = 0, pending = 0, next_row = 0, k, a, c, line = 64 // sizeof(floating)
    cdef Py_ssize_t[_FIX_AHEAD] ahead
    cdef double s
    cdef const floating* x
    cdef bint clip = box_lo != NULL or ball != NULL
    cdef int bad = 0
    while True:
        # The candidates are scattered: find the next few and prefetch their rows first
        # (a hint; the rows are read below in the same order, row by row).
        c = 0
        while next_row < n and c < _FIX_AHEAD:
            if norms[next_row] > r1 or (diverge != NULL and diverge[next_row]):
                ahead[c] = next_row
                c += 1
                a = 0
                while a < d:
                    _prefetch(X + next_row * d + a)
                    a += line
                _prefetch(X + next_row * d + d - 1)
            next_row += 1
        if c == 0:
            break
        for k in range(c):
            i = ahead[k]
            x = X + i * d
            if diverge != NULL and not diverge[i]:   # no ball clip changed it: the box's row
                if box_lo != NULL:
                    _clip_row_into(x, d, box_lo, box_hi, NULL, row, flag)
                    x = row
            elif clip:
                bad |= _clip_row_into(x, d, box_lo, box_hi, ball, row, flag)
                x = row
            s = _unscaled_row(x, d, centre, gc, minus + m * d, drow, flag)
            if not (s > r1):
                continue   # left as the first pass added it
            _scaled_row(x, d, centre, gc, s, r1, plus + m * d, drow)
            if units != NULL:
                wrow[m] = units[i]
            m += 1
            if m == block:
                _signed_rows(minus, plus, m, d, wrow if units != NULL else NULL, picked_m, picked_p, block_gram,
                             colsum, gram, total, &pending)
                m = 0
    if m > 0:
        _signed_rows(minus, plus, m, d, wrow if units != NULL else NULL, picked_m, picked_p, block_gram,
                     colsum, gram, total, &pending)
    if pending > 0:
        _flush(d, block_gram, colsum, gram, total, 0)
    return bad


cdef const long long* _int64_at(values, Py_ssize_t i):
    """&values[i] of an int64 array (NULL for None); valid while the caller holds ``values``."""
    if values is None:
        return NULL
    cdef const long long[::1] v = values
    return &v[i]


cdef const unsigned char* _uint8_at(values, Py_ssize_t i):
    """&values[i] of a uint8 array (NULL for None); valid while the caller holds ``values``."""
    if values is None:
        return NULL
    cdef const unsigned char[::1] v = values
    return &v[i]


def _l1_fix_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop, double[::1] centre,
                  double[::1] inverse, double[::1] qmax, double[::1] offset, clip_box, clip_norm,
                  double r1, double[::1] norms, diverge, units):
    """(non-finite flag, raw Σ(q' − q), raw packed triangle of Σ(q'q'ᵀ − qqᵀ)) of rows [start, stop)."""
    cdef Py_ssize_t d = X.shape[1], n = stop - start
    cdef Py_ssize_t block = max(1, min(n, _GRAM_BLOCK // 2, _gram_rows(d)))
    cdef Py_ssize_t size = d * (d + 1) // 2
    cdef Py_ssize_t width = max(d, 1)
    cdef double[:, ::1] minus = np.empty((block, width))
    cdef double[:, ::1] plus = np.empty((block, width))
    cdef Py_ssize_t extra = block if units is not None else 1
    cdef double[:, ::1] picked_m = np.empty((extra, width))
    cdef double[:, ::1] picked_p = np.empty((extra, width))
    cdef long long[::1] wrow = np.zeros(extra, dtype=np.int64)
    cdef double[:, ::1] bg = np.empty((width, width))
    cdef double[::1] flag = np.zeros(width)
    cdef double[::1] colsum = np.zeros(width)
    cdef double[::1] drow = np.empty(width)
    cdef floating[::1] row = np.empty(width, dtype=np.float32 if floating is float else np.float64)
    cdef double[::1] below = np.full(width, -np.inf), above = np.full(width, np.inf), zero = np.zeros(width)
    cdef _Grid gc = _grid(below, above, zero, inverse, qmax, offset)
    cdef const floating* blo = NULL
    cdef const floating* bhi = NULL
    cdef NormBound ball
    cdef const NormBound* pball = NULL
    cdef const long long* up = _int64_at(units, start) if n > 0 else NULL
    cdef const unsigned char* dp = _uint8_at(diverge, start) if n > 0 else NULL
    cdef int clip_bad = 0
    cdef double bad = 0.0
    cdef const floating* x = _row(X, start) if n > 0 else NULL
    if _clip_setup(clip_box, clip_norm, d, &blo, &bhi, &ball):
        pball = &ball
    cdef i128* gram = <i128*> calloc(max(size, 1), sizeof(i128))
    cdef i128* total = <i128*> calloc(width, sizeof(i128))
    try:
        if gram == NULL or total == NULL:
            raise MemoryError()
        if n > 0:
            with nogil:
                clip_bad = _l1_fix_pass(x, n, d, &centre[0], &gc, blo, bhi, pball, r1, &norms[start],
                                        dp, up, &row[0], &drow[0], &minus[0, 0], &plus[0, 0], &wrow[0],
                                        &picked_m[0, 0], &picked_p[0, 0], block, &bg[0, 0], &colsum[0], gram,
                                        total, &flag[0])
                bad = _sum(&flag[0], d)
        return bad + clip_bad, _raw(total, d), _raw(gram, size)
    finally:
        free(gram)
        free(total)


class L1GramPass:
    """The exact Gram of ``exact_gram(..., clip_l1=L)`` for an L chosen after reading the
    rows' L1 norms, in one pass over X plus a pass over the rows L scales
    (:func:`l1_gram_pass`).

    ``norms``: ``‖c'(x) − centre‖₁`` of every row (``clipped_l1_norms(X, centre,
    clip_box=clip_box, clip_norm=norm_clip)``, bitwise). The first pass also summed the
    rows' quantised y = c(x) − centre *unscaled* (``exact_gram`` with ``clip_l1 = inf``).
    :meth:`sums` then replaces, for every row whose ‖y‖₁ exceeds the L1 clip's radius
    r = ``_l1_margin(L, step)`` (the same computed value ``exact_gram``'s clip compares to
    r), its unscaled quantised row by the scaled one, in exact integers: the result is
    bitwise ``exact_gram``'s, row for row the same per-row terms (only their order of
    addition differs, and integer addition is exact in any order).
    """

    def __init__(self, X, norms, diverge, first, args):
        self.norms = norms
        self._X, self._diverge, self._first, self._args = X, diverge, first, args

    def _raw(self, clip_l1):
        """``_gram_raw``'s (count, raw Σq, raw packed Σqqᵀ, step, weight scale) with the L1 clip."""
        X = self._X
        centre, step, inverse, qmax, offset, clip_box, clip_norm, units, n_threads = self._args
        r1 = _l1_margin(clip_l1, step)
        from dpsk.utils._threads import single_blas_thread

        with single_blas_thread():   # as _gram_raw
            parts = _map_chunks(
                lambda start, stop: _l1_fix_chunk(X, start, stop, centre, inverse, qmax, offset, clip_box,
                                                  clip_norm, r1, self.norms, self._diverge, units),
                X.shape[0], n_threads)
        count, total, gram, step, scale = self._first
        total, gram = _add_gram_parts(parts, X.shape[1], total, gram)
        return count, total, gram, step, scale

    def exact_gram(self, clip_l1):
        """Bitwise ``exact_gram(X, ..., clip_l1=clip_l1)`` (``(count, total, gram)``)."""
        return _raw_floats_of(self._raw(clip_l1))

    def exact_gram_sums(self, clip_l1):
        """Bitwise ``exact_gram_sums(X, ..., clip_l1=clip_l1)`` (an :class:`ExactGram`)."""
        return _raw_exact(self._raw(clip_l1))


def l1_gram_pass(X, lower, upper, centre, radius, *, sample_weight=None, n_threads=None, clip_box=None,
                 clip_norm=None, norm_clip=None):
    """One pass over X for a release that first chooses an L1 clip from the rows' L1
    norms and then sums the clipped rows: an :class:`L1GramPass` (its ``norms``, then
    ``exact_gram(L)``), bitwise ``clipped_l1_norms(X, centre, clip_box=clip_box,
    clip_norm=norm_clip or clip_norm)`` and ``exact_gram(X, lower, upper, centre, radius,
    sample_weight=..., clip_box=clip_box, clip_norm=clip_norm, clip_l1=L)``."""
    X, lower, upper, centre, step, inverse, qmax, offset, clip_box, clip_norm, units = _gram_setup(
        X, lower, upper, centre, radius, sample_weight, None if clip_box is None else clip_box, clip_norm)
    n, d = X.shape
    if norm_clip is not None:
        if clip_norm is None:
            raise ValueError("norm_clip needs clip_norm (the rows' own ball)")
        norm_clip = float(norm_clip)
        make_norm_bound(norm_clip, d, True, X.dtype == np.float32)   # checks
    norms = np.empty(n)
    diverge = np.zeros(n, dtype=np.uint8) if norm_clip is not None else None
    from dpsk.utils._threads import single_blas_thread

    with single_blas_thread():   # as _gram_raw
        parts = _map_chunks(
            lambda start, stop: _exact_gram_chunk(X, start, stop, lower, upper, centre, inverse, qmax, offset,
                                                  False, clip_box, clip_norm, INFINITY, units, norms, diverge,
                                                  norm_clip),
            n, n_threads)
    total, gram = _add_gram_parts(parts, d)
    if d == 0:
        norms[:] = 0.0
    count, scale = _weighted_count(n, units)
    first = (count, total, gram, step, scale)
    return L1GramPass(X, norms, diverge, first, (centre, step, inverse, qmax, offset, clip_box, clip_norm, units,
                                                 n_threads))


def _clipped_l1_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop, double[::1] centre,
                      clip_box, clip_norm, double[::1] out):
    """Rows [start, stop) of ``clipped_l1_norms`` into ``out``; the non-finite flag."""
    cdef Py_ssize_t d = X.shape[1], i
    cdef double[::1] flag = np.zeros(max(d, 1))
    cdef double[::1] y = np.empty(max(d, 1))
    cdef double[::1] spare = np.empty(max(d, 1))
    cdef floating[::1] row = np.empty(max(d, 1), dtype=np.float32 if floating is float else np.float64)
    cdef const floating* blo = NULL
    cdef const floating* bhi = NULL
    cdef NormBound ball
    cdef const NormBound* pball = NULL
    cdef const floating* x
    cdef const floating* first = _row(X, start)
    cdef int bad = 0
    if _clip_setup(clip_box, clip_norm, d, &blo, &bhi, &ball):
        pball = &ball
    with nogil:
        for i in range(start, stop):
            x = first + (i - start) * d
            if blo != NULL or pball != NULL:
                bad |= _clip_row_into(x, d, blo, bhi, pball, &row[0], &flag[0])
                x = &row[0]
            out[i] = _l1_scale(x, d, &centre[0], INFINITY, &y[0], &spare[0], &flag[0])
    return bad + _sum(&flag[0], d)


def clipped_l1_norms(X, centre, *, clip_box=None, clip_norm=None, n_threads=None):
    """‖c(x) − centre‖₁ of every row of X (float64, shape (n_samples,)), where c clips the
    row to ``clip_box`` and then into the L2 ball ``clip_norm`` in X's dtype, as
    :func:`exact_gram` does (no copy of X); each norm is summed in the order of the Gram's
    L1 clip. One value per row: the input of a private quantile of the rows' L1 norms
    (PCA's ``l1_norm="private"``). Non-finite values raise ``ValueError``."""
    X = _check_array(X, "X", 2)
    n, d = X.shape
    centre = np.ascontiguousarray(centre, dtype=np.float64)
    _check_shape("centre", centre, (d,))
    if clip_box is not None:   # as clip_bounds: the bounds rounded inward to X's dtype
        clip_box = _bounds_in_dtype(*_check_bounds(*clip_box, d), X.dtype)
    if clip_norm is not None:
        clip_norm = float(clip_norm)
        make_norm_bound(clip_norm, d, True, X.dtype == np.float32)   # checks
    out = np.empty(n)
    if d == 0:
        out[:] = 0.0
        return out
    parts = _map_chunks(lambda start, stop: _clipped_l1_chunk(X, start, stop, centre, clip_box, clip_norm, out),
                        n, n_threads)
    if any(part != 0 for part in parts):
        _raise_nonfinite()
    return out


def _raw_floats_of(raw):
    """``exact_gram``'s (count, total, gram) of a ``_gram_raw`` result (one rounding each)."""
    count, total, gram, step, scale = raw
    d = total.shape[0]
    unit = 1.0 / scale   # a power of two: the scaling stays exact
    # Positive steps: every step_i·step_j·unit and step_i·unit lies in [2**-900, 2**100]
    # iff the extremes do (an underflow of the test only sends rare grids to Fractions).
    small, large = float(step.min(initial=1.0)), float(step.max(initial=1.0))
    if not (small * small * unit >= 2.0 ** -900 and large * large * unit <= 2.0 ** 100
            and small * unit >= 2.0 ** -900 and large * unit <= 2.0 ** 100):
        # Extreme grids: Fraction arithmetic (gram_floats)
        return gram_floats(ExactGram(count, _raw_ints(total), _symmetric(_raw_ints(gram), d, object), step, scale))
    # The correctly rounded float of each integer times a power of two in range: exact,
    # as in _scaled_floats.
    total = _raw_floats(total) * (step * unit)
    # Powers of two in range (checked above): each scaling is exact, in any order.
    gram = _raw_gram_floats(gram, d, np.ascontiguousarray(step))
    if scale != 1:
        gram *= unit
    return (count if scale == 1 else float(Fraction(count, scale))), total, gram


def gram_floats(sums):
    """``(count, total, gram)`` of an :class:`ExactGram` as :func:`exact_gram` returns them
    (each entry correctly rounded once; for sums merged from several chunks too)."""
    step = sums.step
    if sums.weight_scale == 1:
        return sums.count, _scaled_floats(sums.total, step), _scaled_floats(sums.gram, np.outer(step, step))
    unit = 1.0 / sums.weight_scale   # a power of two: the scaling stays exact
    return (float(Fraction(sums.count, sums.weight_scale)), _scaled_floats(sums.total, step * unit),
            _scaled_floats(sums.gram, np.outer(step, step) * unit))
