# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-user grouping, contribution limiting and segment reductions (user-level privacy).

With ``groups=`` (one user id per row) the privacy unit is the user: the estimators and
statistics bound each user's total contribution. These loops do the per-row work in
single passes, with no Python loop over users; Python decides the thresholds and
weights (``dpsk.stats._contribution``). Import them from ``dpsk._core._groups``.

``group_codes(labels) -> (codes, counts)``
    One hash pass over ``labels`` (a 1-D C-contiguous ``int64`` array): ``codes[i]`` is
    the index of row i's user, numbered ``0..n_users-1`` in order of first appearance
    (``intp``); ``counts[u]`` its number of rows (``int64``). Open addressing with a
    table that doubles at half load, so memory follows the number of users, not rows.

``limit_weights(codes, n_users, threshold, order) -> weights``
    Sample limiting: ``weights[i]`` is 1.0 for the first ``threshold`` rows of each user
    met in the order ``order`` (a permutation of ``range(n_samples)``, ``intp``; a
    uniformly random one keeps a uniformly random subset of each user's rows) and 0.0
    for the others (``float64``).

The per-user weights then enter the fused clip + accumulate reductions of
``dpsk._core._accumulate`` and ``dpsk._core._exact_sums`` as ``sample_weight`` (one more
pass, no copy of the data).

All functions check shapes and that every code lies in ``[0, n_users)`` (``ValueError``
otherwise, naming arguments and shapes only), never modify their inputs and release the
GIL in their loops.
"""

from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

import numpy as np

__all__ = ["group_codes", "limit_weights"]


cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    # splitmix64's finaliser: consecutive ids (the common case) spread over the table.
    x ^= x >> 30
    x *= 0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= 0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef struct _Table:
    int64_t* keys
    Py_ssize_t* values   # user code + 1; 0 marks an empty slot
    Py_ssize_t capacity  # a power of two
    Py_ssize_t size


cdef int _table_init(_Table* t, Py_ssize_t capacity) noexcept nogil:
    t.capacity = capacity
    t.size = 0
    t.keys = <int64_t*> malloc(capacity * sizeof(int64_t))
    t.values = <Py_ssize_t*> calloc(capacity, sizeof(Py_ssize_t))
    if t.keys == NULL or t.values == NULL:
        free(t.keys)
        free(t.values)
        return -1
    return 0


cdef void _table_free(_Table* t) noexcept nogil:
    free(t.keys)
    free(t.values)
    t.keys = NULL
    t.values = NULL


cdef inline Py_ssize_t _slot(const _Table* t, int64_t key) noexcept nogil:
    """The slot holding ``key``, or the empty slot where it belongs (linear probing)."""
    cdef Py_ssize_t mask = t.capacity - 1
    cdef Py_ssize_t s = <Py_ssize_t> (_mix(<uint64_t> key) & <uint64_t> mask)
    while t.values[s] != 0 and t.keys[s] != key:
        s = (s + 1) & mask
    return s


cdef int _table_grow(_Table* t) noexcept nogil:
    cdef _Table bigger
    cdef Py_ssize_t s, slot
    if _table_init(&bigger, 2 * t.capacity):
        return -1
    for s in range(t.capacity):
        if t.values[s] != 0:
            slot = _slot(&bigger, t.keys[s])
            bigger.keys[slot] = t.keys[s]
            bigger.values[slot] = t.values[s]
    bigger.size = t.size
    _table_free(t)
    t[0] = bigger
    return 0


def group_codes(labels):
    """User codes (first-appearance order) and row counts of int64 ``labels``; see the module docstring."""
    labels = _check_1d(labels, "labels", np.int64)
    cdef const int64_t[::1] lab = labels
    cdef Py_ssize_t n = lab.shape[0], i, s
    codes = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] out = codes
    cdef int64_t* counts_buf = NULL
    cdef Py_ssize_t counts_cap = 1024
    cdef int64_t* grown
    cdef _Table table
    cdef int failed = 0
    if _table_init(&table, 2048):
        raise MemoryError()
    counts_buf = <int64_t*> malloc(counts_cap * sizeof(int64_t))
    if counts_buf == NULL:
        _table_free(&table)
        raise MemoryError()
    with nogil:
        for i in range(n):
            s = _slot(&table, lab[i])
            if table.values[s] == 0:
                if table.size == counts_cap:
                    grown = <int64_t*> malloc(2 * counts_cap * sizeof(int64_t))
                    if grown == NULL:
                        failed = 1
                        break
                    for s in range(counts_cap):
                        grown[s] = counts_buf[s]
                    free(counts_buf)
                    counts_buf = grown
                    counts_cap *= 2
                    s = _slot(&table, lab[i])
                table.keys[s] = lab[i]
                table.size += 1
                table.values[s] = table.size
                counts_buf[table.size - 1] = 0
                if 2 * table.size > table.capacity and _table_grow(&table):
                    failed = 1
                    break
                s = _slot(&table, lab[i])
            out[i] = table.values[s] - 1
            counts_buf[out[i]] += 1
    n_users = table.size
    counts = np.empty(n_users, dtype=np.int64)
    cdef int64_t[::1] cnt = counts
    if not failed:
        for i in range(n_users):
            cnt[i] = counts_buf[i]
    free(counts_buf)
    _table_free(&table)
    if failed:
        raise MemoryError()
    return codes, counts


def limit_weights(codes, Py_ssize_t n_users, Py_ssize_t threshold, order):
    """0/1 weights keeping ``threshold`` rows per user, in ``order``; see the module docstring."""
    codes = _check_1d(codes, "codes", np.intp)
    order = _check_1d(order, "order", np.intp)
    cdef Py_ssize_t n = codes.shape[0], i, r
    if order.shape[0] != n:
        raise ValueError(f"order must have shape ({n},), got {order.shape}")
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    _check_codes(codes, n_users)
    cdef const Py_ssize_t[::1] c = codes
    cdef const Py_ssize_t[::1] o = order
    weights = np.zeros(n, dtype=np.float64)
    cdef double[::1] w = weights
    cdef Py_ssize_t* kept = <Py_ssize_t*> calloc(max(n_users, 1), sizeof(Py_ssize_t))
    cdef int bad = 0
    if kept == NULL:
        raise MemoryError()
    with nogil:
        for i in range(n):
            r = o[i]
            if r < 0 or r >= n:
                bad = 1
                break
            if kept[c[r]] < threshold:
                kept[c[r]] += 1
                w[r] = 1.0
    free(kept)
    if bad:
        raise ValueError("order must be a permutation of range(n_samples)")
    return weights


def _check_1d(array, name, dtype):
    if not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != 1:
        raise TypeError(f"{name} must be a 1-D numpy array of dtype {np.dtype(dtype).name}")
    if not array.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous")
    return array


def _check_codes(codes, Py_ssize_t n_users):
    if n_users < 0:
        raise ValueError(f"n_users must be >= 0, got {n_users}")
    if codes.shape[0] and (codes.min() < 0 or codes.max() >= n_users):
        raise ValueError(f"codes must lie in [0, n_users) with n_users={n_users}")
