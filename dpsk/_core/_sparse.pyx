# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sparse rows: clipping and accumulation of CSR matrices without a dense copy.

A sparse row is a row: the kernels here compute, from a CSR matrix's ``data``,
``indices`` and ``indptr``, **bitwise** what the dense kernels compute on the densified
matrix, so every guarantee of ``_clip``, ``_accumulate`` and ``_exact_sums`` (exact
bounds, exact sums, the rounding margins of the releases, independence of
``n_threads``) carries over unchanged. Work and memory are O(nnz + n_features · n_classes),
never O(n_samples · n_features) (the exact Gram is the exception: see below). Import
these functions from ``dpsk._core._sparse``.

Input: ``X`` a ``scipy.sparse`` matrix or array of dtype float32 or float64 (other
formats are converted to CSR, a sparse copy; unsorted or duplicate indices are put in
canonical form on a copy, as ``toarray()`` would sum them). Other conventions (bounds,
``sample_weight``, NaN/inf, ``n_threads``, chunks) are those of ``dpsk._core._common``;
non-finite stored values raise ``ValueError("X contains NaN or infinity")``.

Why the results are bitwise the dense ones
==========================================

* *Norm clipping* (``csr_clip_rows_l2``): ``_clip.clip_row_norm_plan`` runs the dense
  clipping code on the stored entries. Every step of it is entrywise (zeros stay zero),
  order-free (maximum, exact comparison) or a float64 sum with four accumulators; each
  stored entry is added to the accumulator its column uses in the dense loop, and the
  missing terms are zeros, which add nothing exactly. The thresholds are those of
  ``n_features`` columns. The clipped values are not stored: what the clip did to a row
  (kept it; scaled it by r, possibly after a power-of-two rescaling; nudged it k times;
  zeroed it) is recorded in a ``RowClip`` and replayed entry by entry by
  ``_clip.clip_entry`` inside the products, which repeats the same float operations on
  each entry. The replay is checked bitwise against the clipped row when it is recorded.
* *Box clipping* (``csr_clip_bounds``): ``min(max(v, lower), upper)`` of the stored
  values; it needs ``lower[j] <= 0 <= upper[j]`` (else the implicit zeros would move and
  the result would not be sparse: ``ValueError``).
* *Exact moments* (``csr_exact_moments``): stored entries are quantised with the dense
  code (``_exact_sums.pxd``); an implicit zero of column j contributes the integer
  ``q0_j``, the quantised 0, so the exact sums are completed in Python integers by
  ``(Σ W over the class's rows without an entry in column j)·q0_j`` (and ``q0_j²``).
* *MultinomialNB's table* (``multinomial_table``): the integer steps of
  ``naive_bayes._discrete._row_units`` (exact scaling by powers of two, floors, integer
  row sums, one float64 product and division per entry, integer clipping) in one pass
  per row; integer sums are exact and order-free.
* *Exact Gram* (``dense_row_blocks``, ``add_exact_grams``): blocks of rows are densified
  (at most about 32 MiB at a time); exact integer sums of the blocks add up to the whole
  matrix's. O(n_samples · n_features) work (the released matrix is n_features² anyway),
  bounded memory.

Functions
=========

``as_csr(X) -> csr_matrix``: canonical CSR (see above), data float32/float64.
``csr_clip_rows_l2(X, max_norm, *, n_threads=None) -> ClippedCSR``: the rows (as
    float64) scaled to L2 norm <= ``max_norm``, exactly (``_clip.clip_rows_l2``), kept
    lazily: X's values and 24 bytes per row. ``C @ w``, ``s @ C`` (vectors),
    ``C.rows(start, stop)`` and ``C.tocsr()`` (materialised CSR) and
    :func:`csr_block_sums` see the clipped values.
``csr_clip_bounds(X, lower, upper) -> csr``: stored values clipped per column.
``csr_exact_moments(X, lower, upper, y_index=None, n_classes=1, sample_weight=None, *, n_threads=None)``
    ``-> ExactMoments``, equal to ``exact_moments`` on the densified X.
``multinomial_table(X, y_index, n_classes, k, top, weights, row_bits) -> int64 table``:
    ``_exact_class_table`` of the densified X, O(nnz) work and no per-entry arrays.
``csr_block_sums(X, s, block) -> sums``: ``Σ_i s_i x_i`` (float64 X or a ``ClippedCSR``,
    float64 s), formed as
    float64 sums of ``block`` consecutive rows (each entry a sum of at most ``block``
    rounded products), the blocks added per column by Ogita, Rump & Oishi's Sum2
    (cascaded TwoSum, 2005, Prop. 4.5): each entry is within ``u·|S_j| + γ²_(m−1)·Σ_b
    |p_bj|`` of the exact sum S_j of its m block sums p_bj (u = 2**-53). O(n_features)
    memory. The certified gradient of the linear classifiers on sparse X.
``sparse_weighted_gram(X, second, block=4096)``: ``Σ_i second_i x_i x_iᵀ`` of CSR or
    ``ClippedCSR`` X, materialising ``block`` rows at a time (the linear models' Hessian
    for few features).
``dense_row_blocks(X)``, ``add_exact_grams(parts)``: the block scheme of the exact Gram,
    for releases that transform the dense rows before their exact Gram (the linear
    models' row-norm path): any exact integer statistic of the blocks adds up to the
    whole matrix's.
"""

from cython cimport floating
from libc.float cimport DBL_MAX
from libc.math cimport INFINITY, frexp, ldexp
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp

import numpy as np
import scipy.sparse as sp

from dpsk._core._clip cimport NormBound, RowClip, clip_entry, clip_row_norm_plan, make_norm_bound
from dpsk._core._common cimport _classes_from, _row_class, _units_from
from dpsk._core._exact_sums cimport _Grid, _grid, _quantise, _to_ints, i128
from dpsk._core._clip import _bounds_in_dtype
from dpsk._core._common import (
    _check_bounds,
    _check_shape,
    _map_chunks,
    _raise_nonfinite,
)
from dpsk._core._exact_sums import (
    ExactGram,
    _combine_moments,
    _moments_setup,
    exact_moments,
)

__all__ = [
    "ClippedCSR",
    "add_exact_grams",
    "csr_block_sums",
    "as_csr",
    "csr_clip_bounds",
    "csr_clip_rows_l2",
    "csr_exact_moments",
    "multinomial_table",
    "dense_row_blocks",
    "sparse_weighted_gram",
]

ctypedef fused index_t:
    int
    long long

# Densified rows per block of the exact Gram: about 32 MiB of float64.
_GRAM_BYTES = 32 * 1024 * 1024


def as_csr(X):
    """X as a canonical CSR matrix of float32/float64 (sparse copies only when needed)."""
    if not sp.issparse(X):
        raise TypeError(f"X must be a scipy.sparse matrix, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
    X = sp.csr_matrix(X) if X.format != "csr" or not isinstance(X, sp.csr_matrix) else X
    if X.dtype not in (np.float32, np.float64):
        raise TypeError(f"X must have dtype float32 or float64, got {X.dtype}")
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.indices.dtype != X.indptr.dtype:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)), shape=X.shape)
    return X


def _parts(X):
    """(data, indices, indptr) as C-contiguous arrays (indices/indptr of one dtype)."""
    return np.ascontiguousarray(X.data), np.ascontiguousarray(X.indices), np.ascontiguousarray(X.indptr)


def _max_row_nnz(indptr):
    return int(np.max(np.diff(indptr), initial=0))


cdef inline const floating* _data_ptr(const floating[::1] data) noexcept:
    return &data[0] if data.shape[0] > 0 else NULL


cdef inline const index_t* _index_ptr(const index_t[::1] indices) noexcept:
    return &indices[0] if indices.shape[0] > 0 else NULL


cdef inline void _lanes_of(const index_t* cols, Py_ssize_t m, Py_ssize_t d4,
                           unsigned char* lanes) noexcept nogil:
    """The dense clipping loop's accumulator of each column (see _clip.pxd)."""
    cdef Py_ssize_t p
    for p in range(m):
        lanes[p] = <unsigned char> (cols[p] & 3) if cols[p] < d4 else 0


# ---------------------------------------------------------------------------------------
# Clipping
# ---------------------------------------------------------------------------------------

cdef inline const RowClip* _plans_ptr(const unsigned char[::1] plans) noexcept:
    return <const RowClip*> &plans[0] if plans.shape[0] > 0 else NULL


def _plan_chunk(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                unsigned char[::1] plans, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t n_features,
                double max_norm, Py_ssize_t max_nnz):
    """Clip rows [start, stop) into a scratch row and record their RowClip; check the replay.

    Returns 0, 1 (a non-finite value) or 2 (clip_entry did not replay an entry bitwise)."""
    cdef NormBound nb = make_norm_bound(max_norm, n_features, True, False)
    cdef unsigned char[::1] lanes = np.empty(max(max_nnz, 1), dtype=np.uint8)
    cdef double[::1] buf = np.empty(max(max_nnz, 1))
    cdef const double* x = _data_ptr(data)
    cdef const index_t* cols = _index_ptr(indices)
    cdef RowClip* plan = <RowClip*> &plans[0] if plans.shape[0] > 0 else NULL
    cdef Py_ssize_t d4 = (n_features // 4) * 4, i, a, m, t
    cdef double v
    cdef int bad = 0
    with nogil:
        for i in range(start, stop):
            a = indptr[i]
            m = indptr[i + 1] - a
            _lanes_of(cols + a, m, d4, &lanes[0])
            if clip_row_norm_plan(x + a, &buf[0], m, &lanes[0], &nb, &plan[i]):
                bad = 1
                break
            for t in range(m):
                v = clip_entry(x[a + t], &plan[i], nb.shrink)
                if memcmp(&v, &buf[t], sizeof(double)) != 0:
                    bad = 2
            if bad:
                break
    return bad


def _replay(const double[::1] data, const index_t[::1] indptr, const unsigned char[::1] plans, double shrink,
            Py_ssize_t start, Py_ssize_t stop, double[::1] out):
    """The clipped stored values of rows [start, stop) into ``out``."""
    cdef const RowClip* plan = _plans_ptr(plans)
    cdef Py_ssize_t i, p, base = indptr[start]
    with nogil:
        for i in range(start, stop):
            for p in range(indptr[i], indptr[i + 1]):
                out[p - base] = clip_entry(data[p], &plan[i], shrink)


def _matvec(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
            const unsigned char[::1] plans, double shrink, const double[::1] w, double[::1] out):
    """out = C w, C the clipped rows (each row's products added in index order)."""
    cdef const RowClip* plan = _plans_ptr(plans)
    cdef Py_ssize_t n = out.shape[0], i, p
    cdef double acc
    with nogil:
        for i in range(n):
            acc = 0.0
            if plan[i].mode == 0:
                for p in range(indptr[i], indptr[i + 1]):
                    acc += data[p] * w[indices[p]]
            else:
                for p in range(indptr[i], indptr[i + 1]):
                    acc += clip_entry(data[p], &plan[i], shrink) * w[indices[p]]
            out[i] = acc


def _rmatvec(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
             const unsigned char[::1] plans, double shrink, const double[::1] s, double[::1] out):
    """out = sᵀC, C the clipped rows (rows added in order)."""
    cdef const RowClip* plan = _plans_ptr(plans)
    cdef Py_ssize_t n = s.shape[0], i, p
    cdef double si
    with nogil:
        for i in range(n):
            si = s[i]
            if plan[i].mode == 0:
                for p in range(indptr[i], indptr[i + 1]):
                    out[indices[p]] += si * data[p]
            else:
                for p in range(indptr[i], indptr[i + 1]):
                    out[indices[p]] += si * clip_entry(data[p], &plan[i], shrink)


class ClippedCSR:
    """The rows of a float64 CSR matrix clipped to L2 norm <= ``max_norm``, without a copy of its values.

    Each row's clip is recorded once (a ``RowClip`` of 24 bytes: how ``_clip_row`` changed
    it, checked at construction by replaying every entry bitwise) and replayed entry by
    entry inside the products, so every stored value the products see is bitwise the
    dense clip's (the exact norm bound holds as for dense rows). Memory O(n_samples) on
    top of X. Supports ``C @ w`` and ``s @ C`` for vectors, :meth:`rows` (the clipped rows
    ``[start, stop)`` as CSR), :meth:`tocsr` and :func:`csr_block_sums`.
    """

    __array_ufunc__ = None   # ``s @ C`` with an ndarray s calls __rmatmul__

    def __init__(self, X, plans, shrink):
        self.X, self.plans, self.shrink = X, plans, shrink
        self.shape, self.dtype, self.nnz = X.shape, X.dtype, X.nnz

    def __matmul__(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        _check_shape("w", w, (self.shape[1],))
        out = np.empty(self.shape[0])
        _matvec(self.X.data, self.X.indices, self.X.indptr, self.plans, self.shrink, w, out)
        return out

    def __rmatmul__(self, s):
        s = np.ascontiguousarray(s, dtype=np.float64)
        _check_shape("s", s, (self.shape[0],))
        out = np.zeros(self.shape[1])
        _rmatvec(self.X.data, self.X.indices, self.X.indptr, self.plans, self.shrink, s, out)
        return out

    def rows(self, start, stop):
        """The clipped rows [start, stop) as a CSR matrix (a copy of their values only)."""
        X = self.X
        a, b = X.indptr[start], X.indptr[stop]
        out = np.empty(b - a)
        _replay(X.data, X.indptr, self.plans, self.shrink, start, stop, out)
        return sp.csr_matrix((out, X.indices[a:b], X.indptr[start : stop + 1] - a), shape=(stop - start, X.shape[1]))

    def tocsr(self):
        return self.rows(0, self.shape[0])


def csr_clip_rows_l2(X, max_norm, *, n_threads=None):
    """The rows of CSR X scaled to L2 norm <= max_norm (exactly), as a :class:`ClippedCSR`."""
    X = as_csr(X)
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    n, d = X.shape
    max_norm = float(max_norm)
    nb = make_norm_bound(max_norm, d, True, False)   # checks
    data, indices, indptr = _parts(X)
    plans = np.zeros(n * sizeof(RowClip), dtype=np.uint8)
    max_nnz = _max_row_nnz(indptr)
    bad = _map_chunks(
        lambda start, stop: _plan_chunk(data, indices, indptr, plans, start, stop, d, max_norm, max_nnz),
        n, n_threads)
    if 1 in bad:
        _raise_nonfinite()
    if 2 in bad:
        raise RuntimeError("the recorded clip did not replay bitwise (a build problem): please report it")
    return ClippedCSR(X, plans, nb.shrink)


def sparse_weighted_gram(X, second, Py_ssize_t block=4096):
    """Σ_i second_i x_i x_iᵀ (dense n_features²) of a CSR or :class:`ClippedCSR` X, by blocks of rows."""
    n, d = X.shape
    gram = np.zeros((d, d))
    for start in range(0, n, block):
        stop = min(start + block, n)
        rows = X.rows(start, stop) if isinstance(X, ClippedCSR) else sp.csr_matrix(X[start:stop])
        gram += (rows.T @ rows.multiply(second[start:stop, None]).tocsr()).toarray()
    return gram


def csr_clip_bounds(X, lower, upper):
    """Stored values of CSR X clipped to [lower[j], upper[j]] (which must contain 0)."""
    X = as_csr(X)
    lower, upper = _check_bounds(lower, upper, X.shape[1])
    if np.any(lower > 0) or np.any(upper < 0):
        raise ValueError(
            "clipping sparse X to bounds that exclude 0 would change its implicit zeros "
            "(the result would be dense): pass bounds with lower <= 0 <= upper, or dense X")
    lo, hi = _bounds_in_dtype(lower, upper, X.dtype)
    data, indices, indptr = _parts(X)
    if not np.all(np.isfinite(data)):
        _raise_nonfinite()
    out = np.minimum(np.maximum(data, lo[indices]), hi[indices]).astype(X.dtype, copy=False)
    return sp.csr_matrix((out, indices, indptr), shape=X.shape)


# ---------------------------------------------------------------------------------------
# Exact moments and Gram
# ---------------------------------------------------------------------------------------

def _exact_moments_chunk(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                         Py_ssize_t n_features, Py_ssize_t start, Py_ssize_t stop, y_index,
                         Py_ssize_t n_classes, double[::1] lo, double[::1] hi, double[::1] centre,
                         double[::1] inverse, double[::1] qmax, double[::1] offset, w_arr):
    cdef Py_ssize_t d = n_features, size = n_classes * n_features, i, row, p, j, idx, k = 0
    cdef const Py_ssize_t* yp = _classes_from(y_index, start)
    cdef const long long* wp = _units_from(w_arr, start)
    cdef const floating* x = _data_ptr(data)
    cdef const index_t* cols = _index_ptr(indices)
    cdef i128* cnt = <i128*> calloc(n_classes, sizeof(i128))
    cdef i128* s1 = <i128*> calloc(max(size, 1), sizeof(i128))
    cdef i128* s2 = <i128*> calloc(max(size, 1), sizeof(i128))
    cdef i128* stored = <i128*> calloc(max(size, 1), sizeof(i128))   # Σ w of rows with an entry
    cdef long long wi = 1, q
    cdef double v, flag = 0.0
    cdef int status = 0
    cdef _Grid g = _grid(lo, hi, centre, inverse, qmax, offset)
    try:
        if cnt == NULL or s1 == NULL or s2 == NULL or stored == NULL:
            raise MemoryError()
        with nogil:
            for i in range(stop - start):
                row = start + i
                if not _row_class(i, yp, n_classes, wp, &k, &wi):
                    status = 1
                    break
                cnt[k] += wi
                for p in range(indptr[row], indptr[row + 1]):
                    j = cols[p]
                    v = x[p]
                    flag += v * 0.0
                    q = _quantise(v, g.lo[j], g.hi[j], g.centre[j], g.inverse[j], g.qmax[j], g.offset[j], False)
                    idx = k * d + j
                    s1[idx] += <i128> (wi * q)
                    s2[idx] += (<i128> wi) * (q * q)
                    stored[idx] += wi
        return status, flag, _to_ints(cnt, n_classes), _to_ints(s1, size), _to_ints(s2, size), _to_ints(stored, size)
    finally:
        free(cnt)
        free(s1)
        free(s2)
        free(stored)


def csr_exact_moments(X, lower, upper, y_index=None, n_classes=1, sample_weight=None, *, n_threads=None):
    """``exact_moments`` of the densified CSR X, from the stored entries; see the module docstring."""
    X = as_csr(X)
    n, d = X.shape
    lower, upper, y_index, n_classes, w, centre, half, step, inverse, qmax, offset = _moments_setup(
        n, d, lower, upper, y_index, n_classes, sample_weight)
    data, indices, indptr = _parts(X)
    parts = _map_chunks(
        lambda start, stop: _exact_moments_chunk(data, indices, indptr, d, start, stop, y_index, n_classes,
                                                 lower, upper, centre, inverse, qmax, offset, w),
        n, n_threads)
    # The quantised zero of each column, by the dense kernel itself (one zero row).
    q0 = exact_moments(np.zeros((1, d)), lower, upper).sum_q[0]
    completed = []
    for status, flag, count, s1, s2, stored in parts:
        missing = (count[:, None] - stored.reshape(n_classes, d)).ravel() if d else stored
        q0_rows = np.tile(q0, n_classes)
        completed.append((status, flag, count, s1 + missing * q0_rows, s2 + missing * q0_rows * q0_rows))
    return _combine_moments(completed, n_classes, d, w, centre, half, step)


def _block_sums(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                const double[::1] s, Py_ssize_t block, double[::1] hi, double[::1] lo,
                const unsigned char[::1] plans, double shrink):
    cdef Py_ssize_t n = s.shape[0], d = hi.shape[0], i, p, t, j, n_touched = 0
    cdef double[::1] part = np.zeros(max(d, 1))
    cdef unsigned char[::1] dirty = np.zeros(max(d, 1), dtype=np.uint8)
    cdef Py_ssize_t[::1] touched = np.empty(max(d, 1), dtype=np.intp)
    cdef const double* x = _data_ptr(data)
    cdef const index_t* cols = _index_ptr(indices)
    cdef const RowClip* plan = _plans_ptr(plans)
    cdef double si, a, b, total, err, v
    with nogil:
        for i in range(n):
            si = s[i]
            for p in range(indptr[i], indptr[i + 1]):
                j = cols[p]
                v = x[p] if plan == NULL else clip_entry(x[p], &plan[i], shrink)
                part[j] += si * v
                if not dirty[j]:
                    dirty[j] = 1
                    touched[n_touched] = j
                    n_touched += 1
            if (i + 1) % block == 0 or i + 1 == n:
                for t in range(n_touched):   # Sum2: hi + lo carries the running sum
                    j = touched[t]
                    a = hi[j]
                    b = part[j]
                    total = a + b
                    err = total - a
                    err = (a - (total - err)) + (b - err)   # TwoSum: a + b = total + err exactly
                    hi[j] = total
                    lo[j] += err
                    part[j] = 0.0
                    dirty[j] = 0
                n_touched = 0


def csr_block_sums(X, s, Py_ssize_t block):
    """Σ_i s_i x_i by blocks of rows, blocks added by Sum2; see the module docstring.

    X: a float64 CSR matrix or a :class:`ClippedCSR` (its clipped values)."""
    plans, shrink = np.zeros(0, dtype=np.uint8), 1.0
    if isinstance(X, ClippedCSR):
        X, plans, shrink = X.X, X.plans, X.shrink
    X = as_csr(X)
    if X.dtype != np.float64:
        raise TypeError("csr_block_sums needs float64 X")
    s = np.ascontiguousarray(s, dtype=np.float64)
    _check_shape("s", s, (X.shape[0],))
    if block < 1:
        raise ValueError("block must be >= 1")
    data, indices, indptr = _parts(X)
    hi, lo = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    _block_sums(data, indices, indptr, s, block, hi, lo, plans, shrink)
    return hi + lo


def dense_row_blocks(X):
    """(start, stop, rows): the rows of sparse X densified (float64 when X is), about 32 MiB at a time."""
    X = as_csr(X)
    n, d = X.shape
    size = max(1, _GRAM_BYTES // (8 * max(d, 1)))
    for start in range(0, n, size):
        stop = min(start + size, n)
        yield start, stop, np.ascontiguousarray(X[start:stop].toarray())


def add_exact_grams(parts):
    """The ExactGram of the union of the row blocks behind ``parts`` (exact integer sums)."""
    total = None
    for part in parts:
        if total is None:
            total = part
        else:
            if part.weight_scale != total.weight_scale or not np.array_equal(part.step, total.step):
                raise ValueError("the blocks' grids differ")
            total = ExactGram(total.count + part.count, total.total + part.total, total.gram + part.gram,
                              part.step, part.weight_scale)
    return total


# ---------------------------------------------------------------------------------------
# MultinomialNB's exact class table
# ---------------------------------------------------------------------------------------

cdef int _multinomial_row(const floating* x, const index_t* cols, Py_ssize_t m, long long* q,
                          long long* out, long long wi, int k, long long top, int row_bits) noexcept nogil:
    """Add W·u of one row (stored values x, in columns cols, or columns 0..m−1 for NULL) to
    ``out``; 1 if a value is negative or not finite (nothing added then).

    Non-negative values below 2**63: the truncating conversions are floors. x·2**p is
    exact (x <= row max < 2**(31 − p)) unless it underflows, and then below 1 (floor 0)
    like ldexp's result: the same q either way."""
    cdef Py_ssize_t t
    cdef long long s = 0, u_sum = 0
    cdef double row_max = 0.0, v, scale, limit, power   # non-negative: implicit zeros never win
    cdef int e, p
    for t in range(m):
        v = x[t]
        if not (v >= 0.0 and v <= DBL_MAX):
            return 1
        if v > row_max:
            row_max = v
    frexp(row_max, &e)
    p = row_bits - e
    if -1022 <= p <= 1023:
        power = ldexp(1.0, p)
        for t in range(m):
            q[t] = <long long> (x[t] * power)
            s += q[t]
    else:
        for t in range(m):
            q[t] = <long long> ldexp(<double> x[t], p)
            s += q[t]
    limit = ldexp(1.0, k - p)
    scale = <double> top / <double> s if s > 0 else INFINITY
    if limit < scale:
        scale = limit
    for t in range(m):
        q[t] = <long long> (<double> q[t] * scale)
        u_sum += q[t]
    if u_sum > top:
        for t in range(m):
            q[t] = q[t] * top // u_sum
    if cols == NULL:
        for t in range(m):
            out[t] += wi * q[t]
    else:
        for t in range(m):
            out[cols[t]] += wi * q[t]
    return 0


def _multinomial_chunk(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                       const Py_ssize_t[::1] y_index, const long long[::1] weights, long long[:, ::1] table,
                       int k, long long top, int row_bits, Py_ssize_t max_nnz):
    cdef long long[::1] q = np.empty(max(max_nnz, 1), dtype=np.int64)
    cdef const floating* x = _data_ptr(data)
    cdef const index_t* cols = _index_ptr(indices)
    cdef Py_ssize_t i, a, n = y_index.shape[0]
    cdef int bad = 0
    with nogil:
        for i in range(n):
            a = indptr[i]
            if _multinomial_row(x + a, cols + a, indptr[i + 1] - a, &q[0], &table[y_index[i], 1], weights[i],
                                k, top, row_bits):
                bad = 1
                break
    return bad


def _multinomial_dense(const floating[:, ::1] X, const Py_ssize_t[::1] y_index, const long long[::1] weights,
                       long long[:, ::1] table, int k, long long top, int row_bits):
    cdef Py_ssize_t d = X.shape[1], i, j, m
    cdef long long[::1] q = np.empty(max(d, 1), dtype=np.int64)
    # Each row's nonzero values and their columns (a row as CSR stores it): zeros add 0
    # and never are a row's maximum, so the kernel's integers are the same (bitwise: the
    # sparse path's), at O(nnz) for the row steps after one O(d) pass (one-hot data).
    cdef floating[::1] values = np.empty(max(d, 1), dtype=np.float32 if floating is float else np.float64)
    cdef int[::1] columns = np.empty(max(d, 1), dtype=np.intc)
    cdef const floating* x
    cdef floating v
    cdef int bad = 0
    if d == 0:
        return 0
    with nogil:
        for i in range(X.shape[0]):
            x = &X[i, 0]
            m = 0
            for j in range(d):   # branch-free; NaN, ±inf and negatives are kept (and refused)
                v = x[j]
                values[m] = v
                columns[m] = <int> j
                m += v != 0
            if _multinomial_row(&values[0], &columns[0], m, &q[0], &table[y_index[i], 1], weights[i],
                                k, top, row_bits):
                bad = 1
                break
    return bad


def multinomial_table(X, y_index, Py_ssize_t n_classes, int k, long long top, weights, int row_bits):
    """MultinomialNB's exact table (naive_bayes._discrete._exact_class_table) of X in one pass.

    Per class, ``Σ W_i·2**k`` (column 0) and ``Σ W_i·u_i`` (the other columns) as int64, ``u_i``
    row i L1-clipped and rounded down onto the grid 2**-k by the integer steps of
    ``_row_units`` (its ``_ROW_BITS`` is ``row_bits``), bitwise; ``weights`` int64 units or None (1).
    X non-negative and finite: a scipy.sparse matrix (its stored values) or a dense
    C-contiguous float32/float64 array (every value; zeros add 0). O(n·d) or O(nnz) work,
    O(n_classes · n_features) memory (no per-entry arrays).
    """
    dense = not sp.issparse(X)
    if dense:
        X = np.ascontiguousarray(X)
        if X.ndim != 2 or X.dtype not in (np.float32, np.float64):
            raise TypeError("dense X must be a 2-d float32 or float64 array")
    else:
        X = as_csr(X)
    n, d = X.shape
    if not isinstance(y_index, np.ndarray) or y_index.dtype != np.intp:
        raise TypeError("y_index must be a numpy array of dtype intp")
    _check_shape("y_index", y_index, (n,))
    if np.any((y_index < 0) | (y_index >= n_classes)):
        raise ValueError("y_index must hold integers in [0, n_classes)")
    w = np.ones(n, dtype=np.int64) if weights is None else np.ascontiguousarray(weights, dtype=np.int64)
    _check_shape("weights", w, (n,))
    table = np.zeros((n_classes, 1 + d), dtype=np.int64)
    table[:, 0] = np.bincount(y_index, weights=w, minlength=n_classes).astype(np.int64) << k
    y_index = np.ascontiguousarray(y_index)
    if dense:
        bad = _multinomial_dense(X, y_index, w, table, k, top, row_bits)
    else:
        data, indices, indptr = _parts(X)
        bad = _multinomial_chunk(data, indices, indptr, y_index, w, table, k, top, row_bits, _max_row_nnz(indptr))
    if bad:
        raise ValueError("X must be non-negative and finite")
    return table
