# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fused clip + accumulate kernels: sums, Gram matrices, linear statistics and
histograms of clipped rows, in one pass over X (read once, never copied).

Rows are clipped with ``_clip``'s code (``clip_value`` and ``clip_row_norm`` from
``_clip.pxd``), so every row that enters a sum satisfies the bound its release declares.
The sums are float64; releases that need exact sums (centred moments) use
``dpsk._core._exact_sums``. Import these functions from ``dpsk._core._accumulate``.

Conventions (input checks, ``sample_weight``, NaN handling, ``n_threads``): see
``dpsk._core._common``.

Fused clip + accumulate (read X once, never copy it)
====================================================

``c(x)`` is the clipped row, ``w_i`` the weight (1 without ``sample_weight``); sums run
over rows.

``clipped_sums(X, lower, upper, sample_weight=None, *, n_threads=None) -> (count, sum, sum_sq)``
    ``c(x) = clip(x, lower, upper)``; ``count = Σ w_i`` (float), ``sum[j] = Σ w_i
    c(x_i)[j]``, ``sum_sq[j] = Σ w_i c(x_i)[j]²`` (shape ``(n_features,)``). DP means,
    variances, scalers.

``clipped_class_sums(X, y_index, n_classes, lower, upper, sample_weight=None, *, n_threads=None)``
    ``-> (count, sum, sum_sq)``.
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

``clipped_linear_stats(X, y, y_lower, y_upper, *, lower=None, upper=None, max_norm=None,``
``sample_weight=None, n_threads=None) -> (count, sum_x, sum_y, xtx, xty, yty)``
    Least-squares statistics in one pass: X clipped as in ``clipped_gram``, ``c(y) =
    clip(y, y_lower, y_upper)``; ``xtx = Σ w c(x) c(x)ᵀ``, ``xty = Σ w c(x) c(y)``
    (shape ``(n_features,)``), ``yty = Σ w c(y)²`` (float), ``sum_x``, ``sum_y = Σ w
    c(y)`` (float), ``count``.

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

What is guaranteed for the float kernels, and what is not
=========================================================

The per-row bound is exact: every row that enters a sum lies in the box, or has an
exact L2 norm <= ``max_norm``, as real numbers. The float sums (``clipped_sums``,
``clipped_class_sums``, ``clipped_gram``, ``clipped_linear_stats``) are float64 sums:
each entry carries the usual rounding error, at most ``γ_n · Σ|terms|`` with
``γ_n = n·u/(1 − n·u)``, ``u = 2**-53`` (the kernels add in blocks of rows and chunks,
so the typical error is far smaller). That error is *not* bounded by the per-row
sensitivity in general: a release that centres after summing (``Σc² − 2mΣc + m²n``)
must use the exact kernels of ``dpsk._core._exact_sums``. ``clipped_linear_stats`` and
``clipped_gram(max_norm=...)`` (linear models) sum rows that are already centred or
norm-bounded; their remaining error, about ``(block + n/block)·u·n`` per-row bounds, is
documented in doc/limitations.rst and not yet folded into the calibration.

``clipped_sums``, ``clipped_class_sums`` and ``clipped_linear_stats`` are used by no
estimator (those release exact sums). They stay as the float baseline: the exact
kernels' tests compare against them, the shared argument, thread and chunk checks of
tests/_core/test_clip.py run through them, and benchmarks/bench_clip.py times them
against numpy. No release may use them where the sums are centred afterwards.
"""

from cython cimport floating
from libc.math cimport sqrt
from scipy.linalg.cython_blas cimport dgemm

import numbers

import numpy as np

from dpsk._core._clip cimport NormBound, clip_row_norm, clip_value, make_norm_bound
from dpsk._core._common cimport _mat, _prefetch, _row, _row_class, _sum, _vec, _weights_from
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
    "clipped_class_sums",
    "clipped_gram",
    "clipped_histogram",
    "clipped_linear_stats",
    "clipped_sums",
]

# Rows per block in the fused kernels: partial sums are flushed into the totals every
# block (two-level summation), and the BLAS kernels work on one block at a time.
cdef Py_ssize_t _BLOCK = 256

cdef enum:
    _CLIP_BOUNDS = 0
    _CLIP_L2 = 1


# ---------------------------------------------------------------------------------------
# Sums, Gram and linear statistics
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


cdef inline void _clip_row_into(const floating* x, Py_ssize_t d, const double* lo, const double* hi,
                                double* b, double* flag) noexcept nogil:
    """b = c(x) in float64; flag[j] turns NaN where x[j] is not finite."""
    cdef Py_ssize_t j
    cdef double v
    for j in range(d):
        v = x[j]
        flag[j] += v * 0.0
        b[j] = clip_value(v, lo[j], hi[j])


cdef inline void _add_clipped_row(const floating* x, Py_ssize_t d, const double* lo, const double* hi,
                                  double wi, double* row, double* row_sq, double* flag) noexcept nogil:
    """row += wi·c(x), row_sq += wi·c(x)²; flag[j] turns NaN where x[j] is not finite."""
    cdef Py_ssize_t j
    cdef double v
    for j in range(d):
        v = x[j]
        flag[j] += v * 0.0
        v = clip_value(v, lo[j], hi[j])
        row[j] += wi * v
        row_sq[j] += wi * v * v


cdef int _moments_pass(const floating* X, Py_ssize_t n, Py_ssize_t d,
                       const Py_ssize_t* y_index, Py_ssize_t n_classes,
                       const double* lo, const double* hi, const double* w,
                       double* count, double* total, double* total_sq,
                       double* part_count, double* part, double* part_sq,
                       double* flag) noexcept nogil:
    """Per-class Σw, Σw·c(x), Σw·c(x)² (one class when y_index is NULL). 1: bad y_index."""
    cdef Py_ssize_t block = max(_BLOCK, 16 * n_classes), i, k = 0
    cdef double wi = 1.0
    for i in range(n):
        if not _row_class(i, y_index, n_classes, w, &k, &wi):
            return 1
        part_count[k] += wi
        _add_clipped_row(X + i * d, d, lo, hi, wi, part + k * d, part_sq + k * d, flag)
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
                _clip_row_into(x, d, lo, hi, b, flag)
            else:
                for j in range(d):
                    b[j] = x[j]
                if clip_row_norm(b, b, d, nb):   # in place, in float64
                    return 1
            if y != NULL:
                v = y[i]
                flag[d] += v * 0.0
                b[d] = clip_value(v, y_lo, y_hi)
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
