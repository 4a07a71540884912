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

* *Norm clipping* (``csr_clip_rows_l1``/``_l2``, ``csr_class_sums(max_norm=...)``):
  ``_clip.clip_row_norm_lanes`` runs the dense clipping code on the stored entries.
  Every step of it is entrywise (zeros stay zero), order-free (maximum, exact
  comparison) or a float64 sum with four accumulators; each stored entry is added to
  the accumulator its column uses in the dense loop, and the missing terms are zeros,
  which add nothing exactly. The thresholds are those of ``n_features`` columns.
* *Box clipping* (``csr_clip_bounds``): ``min(max(v, lower), upper)`` of the stored
  values; it needs ``lower[j] <= 0 <= upper[j]`` (else the implicit zeros would move and
  the result would not be sparse: ``ValueError``).
* *Float class sums* (``csr_class_sums``): the rows' values are added per class into
  partial sums that are flushed into the totals every ``max(256, 16·n_classes)`` rows
  of each chunk, as ``_accumulate.clipped_class_sums`` does; only the entries touched in
  the block are flushed (the others would add 0.0: no change). The chunks are the
  dense ones (they depend on n_samples only) and are added in order.
* *Exact moments* (``csr_exact_moments``): stored entries are quantised with the dense
  code (``_exact_sums.pxd``); an implicit zero of column j contributes the integer
  ``q0_j``, the quantised 0, so the exact sums are completed in Python integers by
  ``(Σ W over the class's rows without an entry in column j)·q0_j`` (and ``q0_j²``).
* *Exact Gram* (``csr_exact_gram_sums``): blocks of rows are densified (at most about
  32 MiB at a time) and passed to ``_exact_sums.exact_gram_sums``; its integer sums are
  exact, so adding the blocks' integers gives the whole matrix's. O(n_samples ·
  n_features) work (the released matrix is n_features² anyway), bounded memory.

Functions
=========

``as_csr(X) -> csr_matrix``: canonical CSR (see above), data float32/float64.
``csr_clip_rows_l1(X, max_norm, *, n_threads=None)``, ``csr_clip_rows_l2(...)`` ``-> csr``:
    rows scaled to L1 (L2) norm <= ``max_norm``, exactly (``_clip.clip_rows_l1``); the
    result shares X's ``indices`` and ``indptr`` (new ``data``).
``csr_clip_bounds(X, lower, upper) -> csr``: stored values clipped per column.
``csr_class_sums(X, y_index, n_classes, *, max_norm=None, l2=False, sample_weight=None, n_threads=None)``
    ``-> (count, sums)``: per class ``Σ w`` (n_classes,) and ``Σ w·c(x)``
    (n_classes, n_features), ``c`` the L1 (L2) norm clip fused into the pass (no copy
    of the clipped rows) or the identity for ``max_norm=None``; bitwise the first two
    outputs of ``clipped_class_sums`` on the densified clipped rows (bounds that do not
    clip).
``csr_exact_moments(X, lower, upper, y_index=None, n_classes=1, sample_weight=None, *, n_threads=None)``
    ``-> ExactMoments``, equal to ``exact_moments`` on the densified X.
``csr_exact_gram_sums(X, lower, upper, centre, radius, *, sample_weight=None, toward_zero=False, n_threads=None)``
    ``-> ExactGram``, equal to ``exact_gram_sums`` on the densified X.
``csr_block_sums(X, s, block) -> sums``: ``Σ_i s_i x_i`` (float64 X and s), formed as
    float64 sums of ``block`` consecutive rows (each entry a sum of at most ``block``
    rounded products), the blocks added per column by Ogita, Rump & Oishi's Sum2
    (cascaded TwoSum, 2005, Prop. 4.5): each entry is within ``u·|S_j| + γ²_(m−1)·Σ_b
    |p_bj|`` of the exact sum S_j of its m block sums p_bj (u = 2**-53). O(n_features)
    memory. The certified gradient of the linear classifiers on sparse X.
``dense_row_blocks(X)``, ``add_exact_grams(parts)``: the block scheme of the exact Gram,
    for releases that transform the dense rows before their exact Gram (the linear
    models' row-norm path): any exact integer statistic of the blocks adds up to the
    whole matrix's.
"""

from cython cimport floating
from libc.stdlib cimport calloc, free

import numpy as np
import scipy.sparse as sp

from dpsk._core._clip cimport NormBound, clip_row_norm_lanes, make_norm_bound
from dpsk._core._common cimport _classes_from, _row_class, _units_from, _weights_from
from dpsk._core._exact_sums cimport _Grid, _grid, _quantise, _to_ints, i128
from dpsk._core._clip import _bounds_in_dtype
from dpsk._core._common import (
    _add_in_order,
    _check_bounds,
    _check_sample_weight,
    _check_shape,
    _map_chunks,
    _raise_nonfinite,
)
from dpsk._core._exact_sums import (
    ExactGram,
    _combine_moments,
    _check_rows,
    _moments_setup,
    exact_gram_sums,
    exact_moments,
)

__all__ = [
    "add_exact_grams",
    "csr_block_sums",
    "as_csr",
    "csr_class_sums",
    "csr_clip_bounds",
    "csr_clip_rows_l1",
    "csr_clip_rows_l2",
    "csr_exact_gram_sums",
    "csr_exact_moments",
    "dense_row_blocks",
]

ctypedef fused index_t:
    int
    long long

# Rows per block of the float class sums: _accumulate's _BLOCK (the flush schedule must
# be the dense one for bitwise equal sums).
cdef Py_ssize_t _BLOCK = 256
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

def _clip_chunk(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                floating[::1] out, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t n_features,
                double max_norm, bint l2, Py_ssize_t max_nnz):
    cdef NormBound nb = make_norm_bound(max_norm, n_features, l2, floating is float)
    cdef unsigned char[::1] lanes = np.empty(max(max_nnz, 1), dtype=np.uint8)
    cdef const floating* x = _data_ptr(data)
    cdef floating* y = &out[0] if out.shape[0] > 0 else NULL
    cdef const index_t* cols = _index_ptr(indices)
    cdef Py_ssize_t d4 = (n_features // 4) * 4, i, a, m
    cdef int bad = 0
    with nogil:
        for i in range(start, stop):
            a = indptr[i]
            m = indptr[i + 1] - a
            _lanes_of(cols + a, m, d4, &lanes[0])
            if clip_row_norm_lanes(x + a, y + a, m, &lanes[0], &nb):
                bad = 1
                break
    return bad


def _csr_clip_rows(X, max_norm, n_threads, bint l2):
    X = as_csr(X)
    n, d = X.shape
    max_norm = float(max_norm)
    make_norm_bound(max_norm, d, l2, X.dtype == np.float32)   # checks
    data, indices, indptr = _parts(X)
    out = np.empty_like(data)
    max_nnz = _max_row_nnz(indptr)
    bad = _map_chunks(
        lambda start, stop: _clip_chunk(data, indices, indptr, out, start, stop, d, max_norm, l2, max_nnz),
        n, n_threads)
    if any(bad):
        _raise_nonfinite()
    return sp.csr_matrix((out, indices, indptr), shape=X.shape)


def csr_clip_rows_l2(X, max_norm, *, n_threads=None):
    """Rows of CSR X scaled to L2 norm <= max_norm (exactly); see the module docstring."""
    return _csr_clip_rows(X, max_norm, n_threads, True)


def csr_clip_rows_l1(X, max_norm, *, n_threads=None):
    """Rows of CSR X scaled to L1 norm <= max_norm (exactly); see the module docstring."""
    return _csr_clip_rows(X, max_norm, n_threads, False)


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
# Float class sums (norm clip fused)
# ---------------------------------------------------------------------------------------

def _class_sums_chunk(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                      Py_ssize_t n_features, Py_ssize_t start, Py_ssize_t stop, y_index,
                      Py_ssize_t n_classes, w_arr, double max_norm, bint l2, Py_ssize_t max_nnz):
    cdef Py_ssize_t d = n_features, size = n_classes * n_features, n = stop - start
    cdef Py_ssize_t block = max(_BLOCK, 16 * n_classes), d4 = (d // 4) * 4
    cdef Py_ssize_t i, row, a, m, p, t, idx, k = 0, n_touched = 0
    cdef bint clip = max_norm > 0
    cdef NormBound nb
    if clip:
        nb = make_norm_bound(max_norm, d, l2, floating is float)
    cdef const Py_ssize_t* yp = _classes_from(y_index, start)
    cdef const double* wp = _weights_from(w_arr, start)
    count, total = np.zeros(n_classes), np.zeros(max(size, 1))
    cdef double[::1] c = count, tot = total, pc = np.zeros(n_classes), part = np.zeros(max(size, 1))
    cdef unsigned char[::1] dirty = np.zeros(max(size, 1), dtype=np.uint8)
    cdef Py_ssize_t[::1] touched = np.empty(max(size, 1), dtype=np.intp)
    cdef unsigned char[::1] lanes = np.empty(max(max_nnz, 1), dtype=np.uint8)
    cdef floating[::1] buf = np.empty(max(max_nnz, 1), dtype=np.float32 if floating is float else np.float64)
    cdef const floating* x0 = _data_ptr(data)
    cdef const floating* x
    cdef const index_t* cols = _index_ptr(indices)
    cdef double wi = 1.0, v, flag = 0.0
    cdef int status = 0, bad = 0
    with nogil:
        for i in range(n):
            row = start + i
            if not _row_class(i, yp, n_classes, wp, &k, &wi):
                status = 1
                break
            pc[k] += wi
            a = indptr[row]
            m = indptr[row + 1] - a
            x = x0 + a
            if clip:
                _lanes_of(cols + a, m, d4, &lanes[0])
                if clip_row_norm_lanes(x, &buf[0], m, &lanes[0], &nb):
                    bad = 1
                    break
                x = &buf[0]
            for p in range(m):
                v = x[p]
                flag += v * 0.0
                idx = k * d + cols[a + p]
                part[idx] += wi * v
                if not dirty[idx]:
                    dirty[idx] = 1
                    touched[n_touched] = idx
                    n_touched += 1
            if (i + 1) % block == 0 or i + 1 == n:
                for p in range(n_classes):
                    c[p] += pc[p]
                    pc[p] = 0.0
                for t in range(n_touched):
                    idx = touched[t]
                    tot[idx] += part[idx]
                    part[idx] = 0.0
                    dirty[idx] = 0
                n_touched = 0
    return status, bad or flag != 0, count, total[:size].reshape(n_classes, d)


def csr_class_sums(X, y_index, n_classes, *, max_norm=None, l2=False, sample_weight=None, n_threads=None):
    """Per-class (Σw, Σw·c(x)) of CSR rows, c the fused norm clip; see the module docstring."""
    X = as_csr(X)
    n, d = X.shape
    n_classes = int(n_classes)
    if n_classes < 1:
        raise ValueError(f"n_classes must be an int >= 1, got {n_classes!r}")
    if not isinstance(y_index, np.ndarray) or y_index.dtype != np.intp:
        raise TypeError("y_index must be a numpy array of dtype intp")
    _check_shape("y_index", y_index, (n,))
    y_index = np.ascontiguousarray(y_index)
    if max_norm is not None:
        max_norm = float(max_norm)
        make_norm_bound(max_norm, d, l2, X.dtype == np.float32)   # checks
    w = _check_sample_weight(sample_weight, n)
    data, indices, indptr = _parts(X)
    max_nnz = _max_row_nnz(indptr)
    parts = _map_chunks(
        lambda start, stop: _class_sums_chunk(data, indices, indptr, d, start, stop, y_index, n_classes, w,
                                              max_norm or 0.0, l2, max_nnz),
        n, n_threads)
    if any(part[0] for part in parts):
        raise ValueError("y_index must hold integers in [0, n_classes)")
    if any(part[1] for part in parts):
        _raise_nonfinite()
    if not parts:
        return np.zeros(n_classes), np.zeros((n_classes, d))
    return tuple(_add_in_order([part[i] for part in parts]) for i in (2, 3))


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
                const double[::1] s, Py_ssize_t block, double[::1] hi, double[::1] lo):
    cdef Py_ssize_t n = s.shape[0], d = hi.shape[0], i, p, t, j, n_touched = 0
    cdef double[::1] part = np.zeros(max(d, 1))
    cdef unsigned char[::1] dirty = np.zeros(max(d, 1), dtype=np.uint8)
    cdef Py_ssize_t[::1] touched = np.empty(max(d, 1), dtype=np.intp)
    cdef const double* x = _data_ptr(data)
    cdef const index_t* cols = _index_ptr(indices)
    cdef double si, a, b, total, err
    with nogil:
        for i in range(n):
            si = s[i]
            for p in range(indptr[i], indptr[i + 1]):
                j = cols[p]
                part[j] += si * x[p]
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
    """Σ_i s_i x_i by blocks of rows, blocks added by Sum2; see the module docstring."""
    X = as_csr(X)
    if X.dtype != np.float64:
        raise TypeError("csr_block_sums needs float64 X")
    s = np.ascontiguousarray(s, dtype=np.float64)
    _check_shape("s", s, (X.shape[0],))
    if block < 1:
        raise ValueError("block must be >= 1")
    data, indices, indptr = _parts(X)
    hi, lo = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    _block_sums(data, indices, indptr, s, block, hi, lo)
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


def csr_exact_gram_sums(X, lower, upper, centre, radius, *, sample_weight=None, toward_zero=False,
                        n_threads=None):
    """``exact_gram_sums`` of the densified CSR X, block by block; see the module docstring."""
    X = as_csr(X)
    n, d = X.shape
    _check_rows(n)
    w = _check_sample_weight(sample_weight, n)
    if n == 0:
        return exact_gram_sums(np.zeros((0, d), dtype=X.dtype), lower, upper, centre, radius,
                               toward_zero=toward_zero, n_threads=n_threads)
    return add_exact_grams(
        exact_gram_sums(rows, lower, upper, centre, radius, sample_weight=None if w is None else w[start:stop],
                        toward_zero=toward_zero, n_threads=n_threads)
        for start, stop, rows in dense_row_blocks(X))
