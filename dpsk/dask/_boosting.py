# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Histogram gradient boosting on Dask input: the in-memory fit, bitwise, for any chunking.

What the in-memory fit (``dpsk.ensemble._gradient_boosting``) reads of the rows, and
where it is computed here:

* validation (NaN or infinity in X, labels outside ``classes``, non-finite targets,
  bad weights): a first pass, before the spend; its exact statistics (fixed-point
  moments, :mod:`dpsk.dask._reduce`) and the row count key an integer seed;
* the quantile bin edges (``bin_strategy="quantile"``): each recursive median is
  ``dpsk.stats``'s exponential-mechanism selection among 2**32 bins of its sub-range,
  made from counts per block of bins and per bin in a window around the median
  (:mod:`dpsk.dask._quantile`): draw for draw the in-memory selection. A level's
  sub-ranges are cut by the edges released before it; the selections use the Generator
  level by level (every feature's level before the next level) as in memory, so each
  level takes two passes for all the features;
* the binned rows and the targets: per chunk (``map_blocks``), persisted once and kept
  on the cluster; the raw predictions likewise, updated per chunk and persisted once
  per round (``raw + values[leaf]``, the in-memory float operation row by row);
* every histogram release (a level's sums by node, feature and bin; the leaves' sums):
  the rows' clipped, weighted gradients and hessians as integers on the public
  fixed-point grid, summed per chunk by the in-memory kernel and added up by a tree
  reduction (:func:`BoostingRows.sums`). Integers: the sum is the in-memory one in any
  order and for any chunking, and one row moves it by its own integers only (the
  in-memory sensitivity). The noise is drawn once, on the client, by the in-memory
  release code (``_Noise.release``).

With the same Generator the released model is bitwise the in-memory one; its privacy
is the in-memory fit's. Refused before any spend (a clear error, nothing computed):
``bounds`` (with numeric features), ``bounds_y`` or ``classes`` left out, ``"private"``
or ``"data"`` (not computed on a cluster yet), and ``epsilon=inf`` with quantile bins
(the exact median is not a selection from counts).

What leaves the workers: the validating pass's exact moments, the quantile passes'
counts, and each round's exact integer histograms (as every Dask fit's statistics).
"""

import functools
import math

import numpy as np

from dpsk.dask._data import as_rows, as_vector, require_public, worker_view
from dpsk.dask._quantile import (
    _merge_windows,
    block_counts,
    rank_margin,
    rank_window,
    select_in_window,
    window_counts,
)
from dpsk.dask._reduce import fingerprint, map_reduce
from dpsk.ensemble._boosting_rows import grid_gradients, node_sums, route_rows

__all__ = ["BoostingRows", "fit_boosting", "node_sums", "release_edges"]

#: Quantile edges: at most 2**BLOCK_BITS blocks of bins per sub-range in the first pass of level 0,
#: half as many per level below (the sub-ranges double), at least 2**MIN_BLOCK_BITS.
BLOCK_BITS, MIN_BLOCK_BITS = 16, 10


def _weights(sample_weight, X):
    from dpsk.utils.validation import _check_sample_weight_dp

    return _check_sample_weight_dp(sample_weight, X)


def _targets(view, y):
    """A chunk's targets as the in-memory fit encodes them (labels checked against ``classes``)."""
    return view._encode_y(view._check_y(y), ())  # () stands for a plan without private releases


# -- the validating pass ---------------------------------------------------------------------


def _validate_chunk(view, lower, upper, target_range, X, y, sample_weight):
    from dpsk._core._exact_sums import exact_moments

    if not np.all(np.isfinite(X)):
        raise ValueError("Input X contains NaN or infinity.")
    if view._y_numeric and not np.all(np.isfinite(y)):
        raise ValueError("Input y contains NaN or infinity.")
    target = _targets(view, y)
    w = _weights(sample_weight, X)
    t_lower, t_upper = (np.full(target.shape[1], v) for v in target_range)
    return exact_moments(X, lower, upper, sample_weight=w), exact_moments(target, t_lower, t_upper, sample_weight=w)


# -- the quantile bin edges --------------------------------------------------------------------


def _subrange_bins(tasks, X, sample_weight):
    """For each task ``(j, edges, cuts)``: the bin (of 2**32 in its sub-range) of column j's
    values, one array per sub-range (``QuantileEdges._column``: rows of weight 0 left out,
    ``x <= edge`` goes left); all tasks' arrays in one flat list."""
    from dpsk.stats._quantile import FINE_BINS, _bin_index

    w = _weights(sample_weight, X)
    rows = X if w is None else X[w > 0]
    out = []
    for j, edges, cuts in tasks:
        x = rows[:, j]
        side = np.searchsorted(edges, x, side="left")
        with np.errstate(over="ignore"):  # a subnormal sub-range, as in memory
            out.extend(_bin_index(x[side == r], cuts[r], cuts[r + 1], FINE_BINS) for r in range(edges.size + 1))
    return out


def _edge_blocks_chunk(tasks, shift, n_blocks, X, sample_weight):
    return block_counts(_subrange_bins(tasks, X, sample_weight), shift, n_blocks)


def _edge_window_chunk(tasks, requests, X, sample_weight):
    return window_counts(_subrange_bins(tasks, X, sample_weight), requests)


def _edge_ranks_chunk(task, r, b, X, sample_weight):
    index = _subrange_bins([task], X, sample_weight)[r]
    return np.array([np.count_nonzero(index < b), np.count_nonzero(index <= b)], dtype=np.int64)


def _level_counts(plan, X, w, tasks, level):
    """What the selections of one level read, for every sub-range of the tasks (flat): two
    passes, the counts per block of bins, then per bin in the window around each median
    (:mod:`dpsk.dask._quantile`). Returns ``(n_r, a, c, base, window, count_ranks)`` each."""
    from dpsk.stats._quantile import FINE_BINS

    bins = FINE_BINS
    shift = (bins - 1).bit_length() - max(MIN_BLOCK_BITS, BLOCK_BITS - level)
    n_blocks = ((bins - 1) >> shift) + 1
    cumulative = np.cumsum(map_reduce(functools.partial(_edge_blocks_chunk, tasks, shift, n_blocks), X, w), axis=1)
    mechanism = plan._query(None).mechanism  # the margins depend on ε_q only
    plans, requests = [], []
    for r in range(cumulative.shape[0]):
        n_r = int(cumulative[r, -1])
        a, c, first, last = rank_window(cumulative[r], n_r, 0.5 * n_r, rank_margin(mechanism, 1, n_r))
        plans.append((n_r, a, c, 0 if first == 0 else int(cumulative[r, first - 1])))
        requests.append((r, first << shift, min(bins - 1, ((last + 1) << shift) - 1)))
    windows = map_reduce(functools.partial(_edge_window_chunk, tasks, requests), X, w, combine=_merge_windows)
    # the flat sub-ranges' tasks: a rare exact rank outside a window reads its own column only
    owners = [(task, r) for task in tasks for r in range(task[1].size + 1)]

    def count_ranks(r, b):
        task, local = owners[r]
        return tuple(int(v) for v in map_reduce(functools.partial(_edge_ranks_chunk, task, local, b), X, w))

    return [(*p, window, functools.partial(count_ranks, r)) for r, (p, window) in enumerate(zip(plans, windows))]


def release_edges(plan, X, sample_weight, columns, lower, upper, rng):
    """The Dask counterpart of :meth:`QuantileEdges.release <dpsk.ensemble._boosting_bins.QuantileEdges.release>`:
    the edges of the given columns of Dask ``X`` in their ranges, drawn from ``rng`` as in memory.

    The draws go level by level, column by column, as in memory; a level of every column
    depends only on the edges drawn before it, so one pair of passes over the data reads
    what the whole level's selections need (``L`` pairs for ``2**L`` bins)."""
    from dpsk.stats._quantile import FINE_BINS, _bin_middle

    if plan.exact:
        raise RuntimeError("exact medians are refused on Dask before the spend")
    ranges = [(float(a), float(b)) for a, b in zip(lower, upper)]
    edges = [np.empty(0) for _ in ranges]
    for level in range(plan.levels):
        cuts = [np.concatenate([[low], e, [high]]) for (low, high), e in zip(ranges, edges)]
        stats = iter(_level_counts(plan, X, sample_weight, list(zip(map(int, columns), edges, cuts)), level))
        for i in range(len(ranges)):
            new = []
            for r in range(edges[i].size + 1):
                n_r, a, c, base, window, count_ranks = next(stats)
                query = plan._query(rng)  # one per median, as in memory
                with np.errstate(over="ignore"):
                    index = select_in_window(
                        query.mechanism, window, base, a, c, n_r, FINE_BINS, query.q[0], 1, count_ranks
                    )
                new.append(_bin_middle(index, cuts[i][r], cuts[i][r + 1], FINE_BINS))
            edges[i] = np.sort(np.concatenate([edges[i], new]))
    return [np.unique(e) for e in edges]


# -- the rounds ----------------------------------------------------------------------------------


def _sums_chunk(view, grid, kernel, args, binned, raw, target, sample_weight):
    grad, hess = grid_gradients(view, raw, target, _weights(sample_weight, binned), grid)
    return kernel(binned, grad, hess, *args, n_threads=1)


def _bin_chunk(view, X):
    return view._binned(np.ascontiguousarray(X))  # validate_data's order="C", as in memory


def _target_chunk(view, y):
    return np.ascontiguousarray(_targets(view, y), dtype=np.float64)


def _tile_chunk(baseline, binned):
    return np.tile(baseline, (binned.shape[0], 1))


def _update_chunk(tree, depth, values, raw, binned):
    return raw + values[route_rows(binned, tree, depth)]


class BoostingRows:
    """The rows of a boosting fit on the cluster, chunked alike: binned X (uint8), the
    encoded targets and the weights (persisted once), and the raw predictions (persisted
    once per update).

    :meth:`sums` is the one place a round reads the rows: the exact int64 sums over the
    chunks of ``kernel(binned, grad, hess, *args)``, where ``grad``/``hess`` are each
    row's clipped, weighted gradient and hessian on the public grid, computed in the
    chunk from its raw predictions by the estimator's own ``_gradients``/``_to_grid``.
    A new kind of per-round histogram is a new kernel (a picklable function returning
    int64 arrays or tuples of them, e.g. :func:`node_sums`).
    """

    def __init__(self, view, X, y, sample_weight, grid):
        binned = X.map_blocks(functools.partial(_bin_chunk, view), dtype=np.uint8)
        target = y.map_blocks(
            functools.partial(_target_chunk, view),
            dtype=np.float64,
            chunks=(y.chunks[0], (view._n_outputs,)),
            new_axis=1,
            meta=np.empty((0, 0)),
        )
        self.view, self.grid, self.weight = view, grid, sample_weight
        self.binned, self.target = (a.persist() for a in (binned, target))
        self.raw = None

    def reset(self, baseline):
        """Raw predictions: ``baseline`` on every row."""
        chunks = (self.binned.chunks[0], (baseline.size,))
        tile = functools.partial(_tile_chunk, np.asarray(baseline, dtype=np.float64))
        self.raw = self.binned.map_blocks(tile, dtype=np.float64, chunks=chunks, meta=np.empty((0, 0))).persist()

    def sums(self, kernel, *args):
        """The exact sums over the rows of ``kernel(binned, grad, hess, *args)`` (computed now)."""
        chunk = functools.partial(_sums_chunk, self.view, self.grid, kernel, args)
        return map_reduce(chunk, self.binned, self.raw, self.target, self.weight)

    def update(self, tree, depth, values):
        """Raw predictions plus ``values`` of each row's leaf of ``tree`` (the in-memory update)."""
        import dask.array as da

        update = functools.partial(_update_chunk, tree, depth, values)
        self.raw = da.map_blocks(update, self.raw, self.binned, dtype=np.float64, chunks=self.raw.chunks).persist()


# -- the fit -------------------------------------------------------------------------------------


def _refuse(est, numeric, strategy):
    """Unsupported combinations, before anything is computed or spent."""
    if numeric.any():
        require_public(est.bounds, "bounds")
    if est._y_numeric:
        require_public(est.bounds_y, "bounds_y")
    else:
        require_public(est.classes, "classes")
    if math.isinf(float(est.epsilon)) and strategy == "quantile":
        raise ValueError(
            'epsilon=inf with quantile bins is not supported on Dask input (exact medians): pass bin_strategy="uniform"'
        )


def fit_boosting(est, X, y, sample_weight=None):
    """Fit a histogram gradient-boosting estimator (its budget already checked) on Dask input.

    The in-memory ``BaseHistGradientBoosting._fit`` step by step (see the module docstring):
    the same public plan, the same Generator calls in the same order, the rows' statistics
    computed per chunk; the rounds are the in-memory ones (``_boost``) on
    :class:`BoostingRows`. tests/dask/test_dask_boosting.py compares every fitted
    attribute of both fits. A new kind of per-round histogram is a kernel for
    :meth:`BoostingRows.sums`.
    """
    from dpsk.ensemble._boosting_plan import (
        _categorical_mask,
    )
    from dpsk.ensemble._gradient_boosting import _AUTO
    from dpsk.utils._private_bounds import PrivateSensitivity
    from dpsk.utils.validation import release_generator, resolve_bounds

    epsilon, delta = float(est.epsilon), float(est.delta)
    X = as_rows(est, X)
    y = as_vector(require_public(y, "y"), X, "y")
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d for {type(est).__name__}, got {y.ndim} dimensions")
    w = as_vector(sample_weight, X, "sample_weight", dtype=np.float64)
    n, d = (int(s) for s in X.shape)
    is_categorical = _categorical_mask(est.categorical_features, d, getattr(est, "feature_names_in_", None))
    numeric = ~is_categorical
    strategy = est._bin_strategy(numeric)
    _refuse(est, numeric, strategy)
    if est._y_numeric:
        est._check_y(np.empty(0))
        est._encode_y(np.empty(0), ())  # bounds_y_: public
        target_range = est.bounds_y_
    else:
        est._check_y(np.asarray(est.classes))  # classes_, n_classes_ and the outputs: public
        target_range = (0.0, 1.0)
    plan = PrivateSensitivity(est, epsilon, {})
    lower, upper = np.zeros(d), np.ones(d)
    if numeric.any():
        lower, upper = (np.array(b, dtype=np.float64) for b in resolve_bounds(est, est.bounds, X))
    lower[is_categorical], upper[is_categorical] = 0.0, float(est.max_bins)
    depth, k, cyclic, grid = est._schedule(epsilon, d)
    hess_bound = est._hessian_bound()
    view = worker_view(est)
    moments = map_reduce(functools.partial(_validate_chunk, view, lower, upper, target_range), X, y, w)
    rng = release_generator(est.random_state, context=est, data=(*fingerprint(moments), np.array([n])))
    count = est._row_count(plan.fit_epsilon, n, rng, needed=est.max_iter == _AUTO)
    edges, n_iter, lr, grid_rounds, noise, fit_event = est._round_plan(
        count, delta, numeric, strategy, depth, k, cyclic, grid
    )
    plan.spend(est, count.compose(fit_event), rng)
    released = None
    if strategy == "quantile":
        released = release_edges(edges, X, w, np.flatnonzero(numeric), lower[numeric], upper[numeric], rng)
    clip = est._settle(count, lr, noise, (lower, upper), is_categorical, (depth, k, cyclic, grid), strategy, released)
    rows = BoostingRows(worker_view(est), X, y, w, (clip, hess_bound, noise.grid))
    return est._boost(rows, rng, noise, n_iter=n_iter, lr=lr, features_per_node=k, grid_rounds=grid_rounds)
