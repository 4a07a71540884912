# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Plumbing shared by the row kernels (``_clip``, ``_accumulate``, ``_exact_sums``, ``_trees``).

Like ``numpy/random/_common``, helpers and no public API: the argument checks that
enforce the conventions below (with the GIL, before any loop), and the chunked thread
map that makes every result independent of ``n_threads``. C-level helpers (pointers into
possibly empty arrays, a prefetch hint) are inline functions in ``_common.pxd``.

Conventions (every row kernel)
==============================

* ``X`` is a C-contiguous 2-D numpy array of dtype ``float32`` or ``float64``, shape
  ``(n_samples, n_features)``; ``y`` a C-contiguous 1-D array of X's dtype. Anything
  else (a list, an integer or Fortran-ordered array, y of another dtype) raises
  ``TypeError`` or ``ValueError``: nothing is converted silently. Inputs are only read
  (read-only arrays and memmaps work) and never modified.
* ``lower``, ``upper``: array-likes of shape ``(n_features,)`` (float64 after
  conversion), finite, ``lower <= upper``; scalars for ``y``. ``max_norm``: a finite
  float > 0. Invalid values raise ``ValueError``.
* ``sample_weight`` (where accepted): None or shape ``(n_samples,)``, finite, >= 0
  (converted to float64). Row i then enters every sum with weight ``w_i`` (Σw, Σw·x,
  XᵀWX, XᵀWy, ...). The row is clipped first; the weight scales its clipped
  contribution. For user-level privacy (per-user contribution weights).
* NaN or ±inf anywhere in ``X`` or ``y`` raises ``ValueError("X contains NaN or
  infinity")``, checked inside the loops with a cheap flag and raised after them (so
  ``out`` may have been partly written). Bounds clipping alone would pass NaN through
  (``NaN > upper`` is false) and norm clipping would turn ±inf into NaN: the kernels
  refuse both. Callers should still validate finiteness first (sklearn's
  ``validate_data`` does) for a friendlier message.
* Shape mismatches raise ``ValueError`` before any work. Empty inputs work: no rows give
  zero counts and sums; no features give empty sums (counts still count the rows).
* Error messages name arguments and shapes, never data values.
* Accumulators add in float64 whatever X's dtype (float32 values convert exactly) and
  return fresh float64 arrays (counts as floats: they are weighted sums).
* ``n_threads`` (keyword, default None = the CPUs this process may use, capped by
  ``OMP_NUM_THREADS`` when set, as joblib workers do): rows are cut
  into chunks that depend on ``n_samples`` alone (the fewest of 1, 2, 4, 8 or 16 equal
  chunks with at most 65536 rows each, or 16), each chunk is processed by one thread
  without the GIL, and partial
  results are added in chunk order. **Results are bitwise identical for every
  n_threads.**
"""

import numbers
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np


# ---------------------------------------------------------------------------------------
# Argument checking (with the GIL, before any loop)
# ---------------------------------------------------------------------------------------

def _check_array(X, name, ndim):
    """A C-contiguous float32/float64 ndarray with ``ndim`` dimensions (never converted)."""
    if not isinstance(X, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(X).__name__}")
    if X.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name} must have dtype float32 or float64, got {X.dtype}")
    if X.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {X.shape}")
    if not X.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous")
    return X


def _check_like(y, X, name, shape):
    """y: an array of X's dtype and the given shape."""
    y = _check_array(y, name, len(shape))
    if y.dtype != X.dtype:
        raise TypeError(f"{name} must have the dtype of X ({X.dtype}), got {y.dtype}")
    _check_shape(name, y, shape)
    return y


def _check_shape(name, array, expected):
    if tuple(array.shape) != tuple(expected):
        raise ValueError(f"{name} must have shape {tuple(expected)}, got {tuple(array.shape)}")


def _check_bounds(lower, upper, n_features):
    """Bounds as two float64 arrays of shape (n_features,), finite, lower <= upper."""
    lower = np.ascontiguousarray(lower, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    _check_shape("lower", lower, (n_features,))
    _check_shape("upper", upper, (n_features,))
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError("lower and upper must be finite")
    if np.any(lower > upper):
        raise ValueError("lower must not exceed upper")
    return lower, upper


def _check_scalar_bounds(lower, upper):
    lower, upper = float(lower), float(upper)
    if not (np.isfinite(lower) and np.isfinite(upper)):
        raise ValueError("the bounds of y must be finite")
    if lower > upper:
        raise ValueError("the lower bound of y must not exceed its upper bound")
    return lower, upper


def _check_sample_weight(sample_weight, n_samples):
    """None, or float64 weights of shape (n_samples,), finite and >= 0 (a scalar is broadcast).

    The one check of what a weight is, for the kernels and for the estimators
    (``dpsk.utils.validation._check_sample_weight_dp`` adds the clipping to [0, 1]). The
    messages never show a weight: they reveal only that one left its domain.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n_samples, w, dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be 1D array or scalar, got an array of shape {w.shape}")
    if w.shape != (n_samples,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected ({n_samples},)")
    if np.isnan(w).any():
        raise ValueError("Input sample_weight contains NaN.")
    if not np.isfinite(w).all():
        raise ValueError("Input sample_weight contains infinity.")
    if (w < 0).any():
        raise ValueError("Negative values in sample_weight: weights must be >= 0")
    return np.ascontiguousarray(w)


def _raise_nonfinite(name="X"):
    raise ValueError(f"{name} contains NaN or infinity")


# ---------------------------------------------------------------------------------------
# Chunks and threads
# ---------------------------------------------------------------------------------------
# Rows are cut into chunks that depend on n_samples only; each chunk is processed by one
# thread with its own accumulators, and partial results are added in chunk order. Results
# are therefore identical for every n_threads.

cdef Py_ssize_t _CHUNK_ROWS = 65536
cdef Py_ssize_t _MAX_CHUNKS = 16


def _chunks(Py_ssize_t n):
    """The fewest of 1, 2, 4, ... _MAX_CHUNKS equal chunks (to a row) of at most
    _CHUNK_ROWS rows each (or _MAX_CHUNKS larger ones): equal shares for 2 or 4 threads.
    (Chunks of 65536 rows and a remainder, 65536 and 34464 for 10⁵ rows, left one of two
    threads working alone for 47 % of the pass.)"""
    cdef Py_ssize_t count = 1
    while count < _MAX_CHUNKS and count * _CHUNK_ROWS < n:
        count *= 2
    cdef Py_ssize_t size = max(1, (n + count - 1) // count)
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def _effective_n_threads(n_threads):
    """n_threads, or for None the CPUs available, capped by OMP_NUM_THREADS if set (joblib
    workers set it to avoid oversubscription, as for scikit-learn's OpenMP loops)."""
    if n_threads is None:
        try:
            available = len(os.sched_getaffinity(0))
        except AttributeError:   # not Linux
            available = os.cpu_count() or 1
        limit = os.environ.get("OMP_NUM_THREADS", "")
        if limit.isdigit() and int(limit) > 0:
            available = min(available, int(limit))
        return max(1, available)
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) or n_threads < 1:
        raise ValueError(f"n_threads must be None or an int >= 1, got {n_threads!r}")
    return int(n_threads)


def _map_chunks(work, Py_ssize_t n, n_threads):
    """[work(start, stop) for each chunk], on up to n_threads threads (work releases the GIL)."""
    chunks = _chunks(n)
    n_threads = min(_effective_n_threads(n_threads), len(chunks))
    if n_threads <= 1:
        return [work(start, stop) for start, stop in chunks]
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        return list(pool.map(lambda chunk: work(*chunk), chunks))


def _add_in_order(parts):
    """Elementwise sum of equally shaped arrays (or floats), in the given order."""
    total = np.array(parts[0], dtype=np.float64, copy=True)
    for part in parts[1:]:
        total += part
    return total
