# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private histograms over public bins (numpy's ``histogram`` and ``histogramdd`` interface).

The bin edges must be public: given explicitly, or built from a public ``range``. A
record adds its values to at most that many bins (each value to one bin; values outside
the range are dropped, as numpy does), so the vector of counts has L1 sensitivity equal
to the number of values per record. Item-level counts get exact integer noise (discrete
Laplace); with ``groups`` the counts are weighted (a user's rows weigh at most h) and
get Laplace noise on a lattice.

Sparse X (scipy.sparse) is counted without a dense copy: the stored values as numpy
counts them, the implicit zeros in the bin of 0 (``histogram``) or through the bin index
of 0 on each coordinate (``histogramdd``). The counts, and so the release under the same
noise, are those of the densified data.
"""

import math
import numbers

import numpy as np
import scipy.sparse as sp

from dpsk._core._sparse import as_csr
from dpsk.dask._data import is_dask
from dpsk.mechanisms import DiscreteLaplace, Laplace
from dpsk.stats._common import STATS_DOCS, as_array
from dpsk.stats._protocol import StatCall
from dpsk.stats._result import DPResult, noise_halfwidth
from dpsk.utils._docstring import Substitution
from dpsk.utils.validation import _warn_leak

__all__ = ["histogram", "histogramdd"]


def _per_dimension(bins, n_dims):
    """``bins`` as a list with one entry (a count or edges) per dimension; rejects data-driven bins."""
    if isinstance(bins, str):
        raise ValueError(
            f"bins={bins!r} chooses the bins from the data, which is not private: pass a number of "
            "bins with a public range, or the bin edges"
        )
    if isinstance(bins, (numbers.Number, np.number)):
        bins = [bins] * n_dims
    elif n_dims == 1 and not _is_nested(bins):
        bins = [bins]
    bins = list(bins)
    if len(bins) != n_dims:
        raise ValueError(f"bins must give {n_dims} dimension(s), got {len(bins)}")
    for b in bins:
        if np.ndim(b) == 0:
            if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
                raise ValueError(f"the number of bins must be an integer >= 1, got {b!r}")
        else:
            e = np.asarray(b, dtype=np.float64)
            if e.ndim != 1 or e.size < 2 or not np.all(np.isfinite(e)) or np.any(np.diff(e) < 0):
                raise ValueError("bin edges must be a finite, non-decreasing 1-d array of at least 2 values")
    return bins


def _is_nested(seq):
    """Whether ``seq`` is a sequence of per-dimension entries (its first entry a sequence or None)."""
    items = list(seq)
    return bool(items) and (items[0] is None or np.ndim(items[0]) > 0)


def _bin_shape(bins):
    return tuple(int(b) if np.ndim(b) == 0 else len(b) - 1 for b in bins)


def _edges(bins, value_range, points, function):
    """Public bin edges per dimension; data-derived ranges (with a warning) where none is given."""
    n_dims = len(bins)
    if value_range is None:
        if any(np.ndim(b) == 0 for b in bins):
            _warn_leak(
                f"{function}: `range` (or the bin edges) was not given, so the data's own minimum and "
                "maximum are used for the bin edges",
                "range",
                stacklevel=4,
            )
        value_range = [(points[:, k].min(), points[:, k].max()) for k in range(n_dims)]
    elif n_dims == 1 and not _is_nested(value_range):
        value_range = [value_range]
    if len(value_range) != n_dims:
        raise ValueError(f"range must give {n_dims} dimension(s), got {len(value_range)}")
    edges = []
    for b, r in zip(bins, value_range):
        if np.ndim(b) != 0:
            edges.append(np.asarray(b, dtype=np.float64))
            continue
        lo, hi = (float(v) for v in r)
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
            raise ValueError("range must be finite with lower <= upper")
        if lo == hi:  # numpy's convention for an empty range
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(np.linspace(lo, hi, int(b) + 1))
    return edges


def _histogram(call, arr, n_dims, per_record, bins, value_range, density, return_error, function):
    bins = _per_dimension(bins, n_dims)
    shape = _bin_shape(bins)
    # Adding or removing a record moves per_record unit counts (a user: weight <= h per
    # row); replacing one user's values moves that weight between bins: twice as much.
    factor = 2.0 if call.relation == "replace" else 1.0
    integer = not call.user_level
    if integer:  # counts of values, exact integer noise
        mechanism = DiscreteLaplace(epsilon=call.release_epsilon, sensitivity=per_record, random_state=call.rng)
    else:  # weighted counts, normalised by the largest weight of one user's values
        mechanism = Laplace(epsilon=call.release_epsilon, sensitivity=factor, random_state=call.rng)
    call.require_public(value_range if any(np.ndim(b) == 0 for b in bins) else "edges", "range")
    call.check(mechanism.privacy_event(shape))
    if is_dask(arr):  # per-chunk exact counts on the cluster, the same release (dpsk.dask)
        from dpsk.dask._fit import histogram_counts

        counts, edges, contribution = histogram_counts(call, arr, n_dims, bins, value_range, density, function)
        return _histogram_release(call, mechanism, counts, edges, shape, 1.0, density, return_error, contribution)
    arr = call.screen(arr)
    if sp.issparse(arr):  # the stored values and the implicit zeros, counted apart (no dense copy)
        arr = as_csr(arr.astype(np.float64))
        if not np.all(np.isfinite(arr.data)):
            raise ValueError("sample contains NaN or infinity")
        edges = _edges(bins, value_range, _SparseRange(arr, n_dims), function)
    else:
        if not np.all(np.isfinite(arr)):
            raise ValueError("sample contains NaN or infinity")
        points = np.asarray(arr, dtype=np.float64).reshape(-1, n_dims)
        edges = _edges(bins, value_range, points, function)
    call.spend(arr.shape[0], function=function, params=(bins, value_range, density), data=(arr,))
    contribution = call.contribution(kappa=None)
    norm = 1.0 if integer else contribution.unit * per_record
    if sp.issparse(arr):
        counts = _sparse_counts(arr, n_dims, bins, edges, contribution.weights)
    else:
        weights = (
            None
            if contribution.weights is None
            else np.repeat(contribution.weights, points.shape[0] // max(arr.shape[0], 1))
        )
        counts = _dense_counts(points, bins, edges, weights)
    return _histogram_release(call, mechanism, counts, edges, shape, norm, density, return_error, contribution)


def _dense_counts(points, bins, edges, weights):
    """Exact (weighted) counts of the rows of ``points`` in the bins, numpy's way."""
    if len(edges) == 1 and np.ndim(bins[0]) == 0:
        # Equal-width bins given as (count, range): numpy's linear-index path, ~4x faster
        # than its sorted-edges path and with the same counts (it corrects the computed
        # index against the same linspace edges).
        return np.histogram(points[:, 0], bins=edges[0].size - 1, range=(edges[0][0], edges[0][-1]), weights=weights)[0]
    if len(edges) == 1:  # numpy's 1-d histogram is several times faster than histogramdd
        return np.histogram(points[:, 0], bins=edges[0], weights=weights)[0]
    return np.histogramdd(points, bins=edges, weights=weights)[0]


class _SparseRange:
    """Per-dimension minimum and maximum of sparse records, implicit zeros included
    (``points[:, k].min()`` for :func:`_edges`, without densifying)."""

    def __init__(self, X, n_dims):
        self.X, self.n_dims = X, n_dims

    def __getitem__(self, key):
        _, k = key
        X = self.X
        if self.n_dims == 1:  # every value of every record
            values = X.data
            zeros = X.nnz < X.shape[0] * X.shape[1]
        else:
            column = X[:, [k]]
            values, zeros = column.data, column.nnz < X.shape[0]
        return np.concatenate([values, [0.0] if zeros else []])


def _sparse_counts(X, n_dims, bins, edges, weights):
    """The counts :func:`_dense_counts` gives on ``X`` densified, without densifying it.

    ``histogram`` (one dimension, every value of a record): the stored values are counted
    as numpy counts them, and the implicit zeros all fall in the bin numpy puts 0 in, so
    they add their number (or total weight) to that bin. ``histogramdd`` (a record is a
    point): numpy's bin index per coordinate (``searchsorted`` with the last edge closed),
    where a coordinate not stored takes the index of 0, then numpy's bincount. Item-level
    counts are integers: equal to the dense ones exactly.
    """
    n, d = X.shape
    if n_dims == 1:
        row_nnz = np.diff(X.indptr)
        stored_weights = None if weights is None else np.repeat(weights, row_nnz)
        stored = _dense_counts(X.data[:, None], bins, edges, stored_weights)
        zeros = n * d - X.nnz if weights is None else math.fsum(weights * (d - row_nnz))
        return stored + _dense_counts(np.zeros((1, 1)), bins, edges, None if weights is None else [1.0]) * zeros
    X = X.tocsc()
    n_bins = np.array([len(e) + 1 for e in edges])  # an outlier bin at each end, as numpy
    index = []
    for k, e in enumerate(edges):
        column = np.full(n, _bin_index(e, np.zeros(1))[0], dtype=np.intp)
        rows = X.indices[X.indptr[k] : X.indptr[k + 1]]
        column[rows] = _bin_index(e, X.data[X.indptr[k] : X.indptr[k + 1]])
        index.append(column)
    flat = np.ravel_multi_index(index, n_bins)
    counts = np.bincount(flat, weights, minlength=int(np.prod(n_bins))).reshape(n_bins).astype(np.float64)
    return counts[(slice(1, -1),) * n_dims]


def _bin_index(edges, values):
    """numpy's ``histogramdd`` bin of each value: 0 below, ``len(edges)`` above, the last edge in the last bin."""
    index = np.searchsorted(edges, values, side="right")
    index[values == edges[-1]] -= 1
    return index


def _histogram_release(call, mechanism, counts, edges, shape, norm, density, return_error, contribution):
    """The noisy counts (or density) of exact ``counts`` and the result (in memory and Dask)."""
    n_dims = len(edges)
    integer = not call.user_level
    if integer:
        noisy = mechanism.randomise(np.rint(counts).astype(np.int64))
    else:
        noisy = mechanism.randomise(counts / norm) * norm
    if density:  # post-processing: negative noisy counts count as empty bins
        mass = np.clip(noisy, 0, None).astype(np.float64)
        volume = np.ones(shape)
        for k, e in enumerate(edges):
            volume = volume * np.diff(e).reshape([-1 if i == k else 1 for i in range(n_dims)])
        total = mass.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            values = mass / (total * volume) if total > 0 else np.zeros(shape)
    else:
        values = noisy
    if not return_error:
        return values, edges
    size = int(np.prod(shape, dtype=np.int64))
    result = DPResult(
        values,
        noise_std=None if density else np.full(shape, np.sqrt(mechanism.variance(np.zeros(size))) * norm),
        privacy_spent=call.cost,
        mechanism=f"{type(mechanism).__name__} (floating-point safe)",
        interval=None if density else _count_interval(values, mechanism, size, norm),
        threshold=contribution.threshold,
    )
    return result, edges


def _count_interval(values, mechanism, size, norm):
    def interval(alpha):
        t = noise_halfwidth(mechanism, size, alpha) * norm
        return values - t, values + t

    return interval


@Substitution(**STATS_DOCS)
def histogram(
    a,
    epsilon=1.0,
    bins=10,
    range=None,
    *,
    density=False,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
    """Differentially private histogram of the values of ``a`` (numpy's ``histogram``).

    Parameters
    ----------
    {a}
        All values of a record are counted (as numpy flattens ``a``). A scipy.sparse
        matrix is counted without a dense copy: its implicit zeros are values too.
    {epsilon}
    bins : int or array-like, default=10
        Number of equal bins over ``range``, or the bin edges. Must be public: strings
        such as ``"auto"`` (bins chosen from the data) are refused.
    range : tuple (lower, upper) or None, default=None
        Public range of the bins. ``None`` with a number of bins uses the data's minimum
        and maximum with a :class:`~dpsk.exceptions.PrivacyLeakWarning`, which breaks the
        guarantee. Values outside the bins are not counted.
    density : bool, default=False
        Normalise to a density (post-processing: negative noisy counts count as empty).
    {user_level}
    {call}
    {on_invalid}
    {return_error}

    Returns
    -------
    hist : ndarray or DPResult
        Item level: noisy integer counts (possibly negative). With ``groups``: weighted
        counts (each user's rows weigh at most h rows in total), floats.
    bin_edges : ndarray
        The public bin edges.

    Notes
    -----
    **Privacy.** ε-DP. Item level: add/remove one record changes the counts by at most
    the record's number of values in L1 norm; exact discrete Laplace noise of that
    sensitivity on every bin. {user_level_privacy} For histograms h is, unless given,
    the 0.9-quantile of the users' row counts (chosen privately). Released: the noisy
    counts. Floating-point safe.
    {domain}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import stats
    >>> x = np.random.default_rng(0).uniform(0, 1, 1000)
    >>> hist, edges = stats.histogram(x, epsilon=1.0, bins=4, range=(0, 1), random_state=0)
    >>> edges
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    arr = a if is_dask(a) else as_array(a)
    per_record = int(np.prod(arr.shape[1:], dtype=np.int64))
    if per_record == 0:
        raise ValueError(f"a of shape {arr.shape} has no values")
    call = StatCall.of("dpsk.stats.histogram", locals())
    hist, edges = _histogram(call, arr, 1, per_record, bins, range, density, return_error, "dpsk.stats.histogram")
    return hist, edges[0]


@Substitution(**STATS_DOCS)
def histogramdd(
    sample,
    epsilon=1.0,
    bins=10,
    range=None,
    *,
    density=False,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
    """Differentially private multidimensional histogram (numpy's ``histogramdd``).

    Parameters
    ----------
    sample : array-like of shape (n_records, n_dims), or sequence of n_dims arrays
        One point per record (the privacy unit). As in numpy, an object with a
        ``shape`` (an ndarray, a DataFrame) holds one row per record, and a list or
        tuple without one holds the coordinate arrays ``(x, y, ...)``, one per
        dimension, each of length n_records. A scipy.sparse matrix holds one point
        per row (coordinates not stored are 0), counted without a dense copy.
    {epsilon}
    bins : int, sequence of ints or sequence of arrays, default=10
        Per dimension: a number of equal bins over ``range``, or the bin edges (public).
    range : sequence of (lower, upper) or None, default=None
        Public range per dimension. ``None`` with numbers of bins uses the data's
        minimum and maximum with a :class:`~dpsk.exceptions.PrivacyLeakWarning`.
    density : bool, default=False
        Normalise to a density (post-processing).
    {user_level}
    {call}
    {on_invalid}
    {return_error}

    Returns
    -------
    hist : ndarray or DPResult
        Noisy counts of shape ``(n_bins_1, ..., n_bins_D)``.
    edges : list of ndarray
        The public bin edges of each dimension.

    Notes
    -----
    **Privacy.** ε-DP. Item level: one record is one point, in one bin: L1 sensitivity
    1, exact discrete Laplace noise on every bin. {user_level_privacy} For histograms h
    is, unless given, the 0.9-quantile of the users' row counts (chosen privately).
    Floating-point safe.
    {domain}
    """
    if not hasattr(sample, "shape"):  # numpy's rule: a sequence of coordinate arrays
        sample = np.atleast_2d(np.asarray(sample)).T
    arr = sample if is_dask(sample) else as_array(sample, name="sample")
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"sample must have shape (n_records, n_dims), got {arr.shape}")
    call = StatCall.of("dpsk.stats.histogramdd", locals())
    return _histogram(call, arr, arr.shape[1], 1, bins, range, density, return_error, "dpsk.stats.histogramdd")
