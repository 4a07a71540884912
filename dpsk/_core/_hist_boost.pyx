# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
# cython: boundscheck=False, wraparound=False, cdivision=True
"""Histogram gradient boosting: binning, exact integer node histograms, routing, prediction.

The boosted trees are *complete* binary trees of a fixed depth ``h`` in heap order (node
``i`` has children ``2i + 1`` and ``2i + 2``; level ``l`` holds nodes ``2**l - 1 ..
2**(l+1) - 2``). Every internal node has a feature and a *left mask* over the bins of
that feature: a row goes left when ``mask[node, bin(x[feature])]`` is non-zero. Ordered
(numeric) splits are masks ``bin <= threshold``; categorical splits any set of bins.

``bin_features(X, lower, upper, n_bins, categorical) -> binned``
    uint8 array of shape ``(n_samples, n_features)``. A numeric feature j (``categorical[j]
    == 0``) is cut into ``n_bins`` equal-width bins of the public range ``[lower[j],
    upper[j]]``: bin ``floor((clip(x) - lower) / (upper - lower) * n_bins)``, the top
    value in the last bin; a constant range puts every value in bin 0. A categorical
    feature's bin is its value rounded down and clipped to ``[0, n_bins - 1]``. Only the
    public bounds and ``n_bins`` decide the bins. NaN raises ``ValueError``.

``node_histograms(binned, node, node_features, grad, hess, n_bins, *, n_threads=None) -> (hist_g, hist_h)``
    int64 arrays of shape ``(n_nodes, k, n_bins, n_outputs)``: for each node of one level
    and each of its ``k`` features ``node_features[node, j]``, the sums of the integer
    gradients ``grad[i, c]`` and hessians ``hess[i, c]`` (int64, shape ``(n_samples,
    n_outputs)``) of the rows with ``node[i] == node`` (intp, level-local indices in
    ``[0, n_nodes)``; ``-1`` skips a row) by bin. Integer sums are exact: the result does
    not depend on the order of the rows or on ``n_threads``, and one row moves cell
    ``(node[i], j, bin, c)`` by exactly its own ``grad[i, c]``, for one node only.

``route(binned, node, feature, mask)``
    In place: ``node[i] <- 2 node[i] + (0 if mask[node[i], binned[i, feature[node[i]]]]
    else 1)`` for every row with ``node[i] >= 0``: level-local node indices one level down.

``raw_predictions(binned, feature, mask, values, depth, *, n_threads=None) -> raw``
    float64 ``(n_samples, n_outputs)``: ``Σ_t values[t, leaf_t(row)]``, trees summed in
    index order for each row (results do not depend on ``n_threads``); ``feature`` intp
    ``(n_trees, 2**depth - 1)``, ``mask`` uint8 ``(n_trees, 2**depth - 1, n_bins)``,
    ``values`` float64 ``(n_trees, 2**depth, n_outputs)``.

These functions loop; they draw no random numbers and calibrate nothing. Shapes and
dtypes are checked before the loops; messages name arguments, never data values.
"""

import numpy as np

from libc.math cimport floor, isnan
from libc.stdint cimport int64_t, uint8_t

from dpsk._core._common import _check_array, _map_chunks

ctypedef Py_ssize_t intp_t

#: Largest number of bins (bins are stored in uint8).
MAX_BINS = 256


def _check_dtype(a, name, dtype, ndim):
    if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim or not a.flags.c_contiguous:
        raise TypeError(f"{name} must be a C-contiguous {ndim}-d {np.dtype(dtype).name} array")
    return a


def _check_n_bins(n_bins):
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or not 1 <= n_bins <= MAX_BINS:
        raise ValueError(f"n_bins must be an int in [1, {MAX_BINS}], got {n_bins!r}")
    return int(n_bins)


def _bin_typed(const double[:, ::1] X, const double[::1] lower, const double[::1] upper, int n_bins,
               const uint8_t[::1] categorical, uint8_t[:, ::1] out):
    cdef intp_t i, j, n = X.shape[0], d = X.shape[1]
    cdef double x, width, b
    cdef bint nan = False
    with nogil:
        for i in range(n):
            for j in range(d):
                x = X[i, j]
                if isnan(x):
                    nan = True
                    out[i, j] = 0
                    continue
                if categorical[j]:
                    b = floor(x)
                else:
                    width = upper[j] - lower[j]
                    if not width > 0:
                        b = 0
                    else:
                        if x < lower[j]:
                            x = lower[j]
                        elif x > upper[j]:
                            x = upper[j]
                        b = floor((x - lower[j]) / width * n_bins)
                if b < 0:
                    b = 0
                elif b > n_bins - 1:
                    b = n_bins - 1
                out[i, j] = <uint8_t>b
    return nan


def bin_features(X, lower, upper, n_bins, categorical):
    """Bin index of every value from public bounds and categories; see the module docstring."""
    X = _check_array(X, "X", 2)
    n_bins = _check_n_bins(n_bins)
    d = X.shape[1]
    lower = np.ascontiguousarray(lower, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    categorical = np.ascontiguousarray(categorical, dtype=np.uint8)
    for name, a in (("lower", lower), ("upper", upper), ("categorical", categorical)):
        if a.shape != (d,):
            raise ValueError(f"{name} must have shape ({d},), got {a.shape}")
    out = np.empty(X.shape, dtype=np.uint8)
    if _bin_typed(np.ascontiguousarray(X, dtype=np.float64), lower, upper, n_bins, categorical, out):
        raise ValueError("X contains NaN")
    return out


def _hist_chunk(const uint8_t[:, ::1] binned, intp_t start, intp_t stop, const intp_t[::1] node,
                const intp_t[:, ::1] node_features, const int64_t[:, ::1] grad, const int64_t[:, ::1] hess,
                int n_bins):
    cdef intp_t n_nodes = node_features.shape[0], k = node_features.shape[1], K = grad.shape[1]
    hist_g = np.zeros((n_nodes, k, n_bins, K), dtype=np.int64)
    hist_h = np.zeros((n_nodes, k, n_bins, K), dtype=np.int64)
    cdef int64_t[:, :, :, ::1] hg = hist_g
    cdef int64_t[:, :, :, ::1] hh = hist_h
    cdef intp_t i, j, c, m, b
    with nogil:
        for i in range(start, stop):
            m = node[i]
            if m < 0:
                continue
            for j in range(k):
                b = binned[i, node_features[m, j]]
                for c in range(K):
                    hg[m, j, b, c] += grad[i, c]
                    hh[m, j, b, c] += hess[i, c]
    return hist_g, hist_h


def node_histograms(binned, node, node_features, grad, hess, n_bins, *, n_threads=None):
    """Exact integer gradient and hessian histograms of one level's nodes; see the module docstring."""
    binned = _check_dtype(binned, "binned", np.uint8, 2)
    node = _check_dtype(node, "node", np.intp, 1)
    node_features = _check_dtype(node_features, "node_features", np.intp, 2)
    grad = _check_dtype(grad, "grad", np.int64, 2)
    hess = _check_dtype(hess, "hess", np.int64, 2)
    n_bins = _check_n_bins(n_bins)
    n, d = binned.shape[0], binned.shape[1]
    n_nodes = node_features.shape[0]
    if node.shape[0] != n or grad.shape[0] != n or hess.shape != grad.shape:
        raise ValueError("node, grad and hess must have one row per row of binned, grad and hess the same shape")
    if n and (node.max() >= n_nodes or node.min() < -1):
        raise ValueError(f"node must be in [-1, {n_nodes})")
    if node_features.size and (node_features.min() < 0 or node_features.max() >= d):
        raise ValueError(f"node_features must be in [0, {d})")
    if n and binned.max() >= n_bins:
        raise ValueError(f"binned must be in [0, {n_bins})")

    def work(start, stop):
        return _hist_chunk(binned, start, stop, node, node_features, grad, hess, n_bins)

    shape = (n_nodes, node_features.shape[1], n_bins, grad.shape[1])
    hist_g, hist_h = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    for g, h in (_map_chunks(work, n, n_threads) if n else []):
        hist_g += g  # integers: exact in any order
        hist_h += h
    return hist_g, hist_h


def _route_typed(const uint8_t[:, ::1] binned, intp_t[::1] node, const intp_t[::1] feature,
                 const uint8_t[:, ::1] mask):
    cdef intp_t i, m
    with nogil:
        for i in range(binned.shape[0]):
            m = node[i]
            if m < 0:
                continue
            node[i] = 2 * m + (0 if mask[m, binned[i, feature[m]]] else 1)


def route(binned, node, feature, mask):
    """Move every row one level down (level-local node indices); see the module docstring."""
    binned = _check_dtype(binned, "binned", np.uint8, 2)
    node = _check_dtype(node, "node", np.intp, 1)
    feature = _check_dtype(feature, "feature", np.intp, 1)
    mask = _check_dtype(mask, "mask", np.uint8, 2)
    n_nodes = feature.shape[0]
    if node.shape[0] != binned.shape[0] or mask.shape[0] != n_nodes:
        raise ValueError("node must have one entry per row of binned, mask one row per node")
    if binned.shape[0] and (node.max() >= n_nodes or node.min() < -1):
        raise ValueError(f"node must be in [-1, {n_nodes})")
    if n_nodes and (feature.min() < 0 or feature.max() >= binned.shape[1]):
        raise ValueError(f"feature must be in [0, {binned.shape[1]})")
    if binned.shape[0] and binned.max() >= mask.shape[1]:
        raise ValueError("binned has a bin beyond the masks")
    _route_typed(binned, node, feature, mask)


def _predict_chunk(const uint8_t[:, ::1] binned, intp_t start, intp_t stop, const intp_t[:, ::1] feature,
                   const uint8_t[:, :, ::1] mask, const double[:, :, ::1] values, int depth):
    cdef intp_t n_trees = feature.shape[0], K = values.shape[2], i, t, c, m, _level
    raw = np.zeros((stop - start, K), dtype=np.float64)
    cdef double[:, ::1] r = raw
    with nogil:
        for i in range(start, stop):
            for t in range(n_trees):
                m = 0
                for _level in range(depth):
                    if mask[t, m, binned[i, feature[t, m]]]:
                        m = 2 * m + 1
                    else:
                        m = 2 * m + 2
                m = m - ((1 << depth) - 1)
                for c in range(K):
                    r[i - start, c] += values[t, m, c]
    return raw


def raw_predictions(binned, feature, mask, values, depth, *, n_threads=None):
    """Sum over the trees of the leaf values each row reaches; see the module docstring."""
    binned = _check_dtype(binned, "binned", np.uint8, 2)
    feature = _check_dtype(feature, "feature", np.intp, 2)
    mask = _check_dtype(mask, "mask", np.uint8, 3)
    values = _check_dtype(values, "values", np.float64, 3)
    depth = int(depth)
    n_trees, n_internal = feature.shape[0], (1 << depth) - 1
    if feature.shape[1] != n_internal or mask.shape[:2] != (n_trees, n_internal):
        raise ValueError("feature and mask must have one row per internal node of every tree")
    if values.shape[:2] != (n_trees, 1 << depth):
        raise ValueError("values must have one row per leaf of every tree")
    if feature.size and (feature.min() < 0 or feature.max() >= binned.shape[1]):
        raise ValueError(f"feature must be in [0, {binned.shape[1]})")
    if binned.shape[0] and n_trees and depth and binned.max() >= mask.shape[2]:
        raise ValueError("binned has a bin beyond the masks")
    n = binned.shape[0]

    def work(start, stop):
        return _predict_chunk(binned, start, stop, feature, mask, values, depth)

    parts = _map_chunks(work, n, n_threads) if n else []
    if not parts:
        return np.zeros((0, values.shape[2]), dtype=np.float64)
    return np.concatenate(parts)
