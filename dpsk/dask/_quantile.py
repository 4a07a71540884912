# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""``dpsk.stats`` quantiles of Dask input: the in-memory selections from counts per block.

The exponential mechanism of the in-memory release (``dpsk.stats._quantile``) reads the
2n + 1 groups of tied bins that a column's bin indices make, in practice only those in a
window of ranks around the target (the argument below; the in-memory unweighted path
finds the window from the same counts per block, without sorting). Here the data stay on
the workers and the client fetches only what the mechanism reads, in two passes:

1. counts per public block of 2**s consecutive bins (at most 2**16 blocks per column;
   NaN and infinity raise here, before the spend);
2. for each column and level q, the counts per occupied bin of the blocks that hold the
   ranks in a window [a, c] around the target qN (a handful of blocks).

**Why the selection is the in-memory one, draw for draw.** Write C(b) for the number of
values in bins <= b. In memory, bin b's rank interval is [C(b−1), C(b)], its score
−dist(qN, [C(b−1), C(b)]), and ``randomise_groups`` (i) puts each group at the proposal
level ℓ(d) = min(64, ⌊lower bound of γ / ln 2⌋) of its distance d to qN, non-decreasing
in d; (ii) draws a level from the integer totals of candidates per level; (iii) draws a
uniform position u among the candidates of that level, in bin order, and finds the
group and offset there; (iv) accepts by an exact Bernoulli draw that depends only on
the candidate's exact score. Choose a = ⌊qN⌋ − W and c = ⌈qN⌉ + W, with W ranks so large
that every distance >= W is at the last level 64 (four levels of margin,
:func:`rank_margin`). Let L be the bin of the value of rank a + 1 and H that of rank c.
Every bin b < L has C(b) <= a, so its distance is >= qN − a >= W: level 64; likewise
every bin b > H has C(b−1) >= c. L and H are occupied, so [0, L−1] and [H+1, end] are
unions of whole groups. The client builds the groups of [L, H] exactly as in memory
(from the fetched counts and C(L−1)), and replaces each outer region by one group with
the region's bin count and its nearest rank interval (so it lands at level 64 too).
Then (ii) sees the same totals per level (integers, exact in any order); at every level
below 64 the same groups in the same order; at level 64 the same candidates in the same
bin order ([0, L−1], the window's level-64 groups, [H+1, end]), so (iii) maps u to the
same bin; and (iv) uses that bin's exact score — for a bin of an outer region its
C(b−1), C(b) are counted by one more Dask pass (``candidate_score``; it happens with
probability about bins·2⁻⁶⁴ per proposal). Every call on the Generator is the same, so
the release is the in-memory release with the same Generator; in particular its law is
the in-memory exponential mechanism's, and so is the privacy guarantee. (ε = ∞: the
selection reads only the groups at distance 0, all inside the window.)

What leaves the workers: the per-block counts and the window's per-bin counts (integers
of the data, as every Dask fit's statistics; the noise is drawn on the client).
"""

import functools

import numpy as np

from dpsk.dask._data import as_rows, require_public
from dpsk.dask._reduce import fingerprint, map_reduce
from dpsk.stats._quantile import (
    block_counts,
    block_grid,
    rank_margin,
    rank_window,
    select_in_window,
    window_counts,
)

__all__ = ["block_counts", "dask_quantiles", "rank_margin", "rank_window", "select_in_window", "window_counts"]


def _bin_columns(lower, upper, bins, X):
    from dpsk.stats._quantile import _bin_index

    if not np.all(np.isfinite(X)):
        raise ValueError("a contains NaN or infinity")
    return [_bin_index(X[:, j], lower[j], upper[j], bins) for j in range(X.shape[1])]


def _block_counts_chunk(lower, upper, bins, shift, n_blocks, X):
    return block_counts(_bin_columns(lower, upper, bins, X), shift, n_blocks)


def _window_chunk(lower, upper, bins, requests, X):
    return window_counts(_bin_columns(lower, upper, bins, X), requests)


def _merge_counts(*parts):
    occupied = np.concatenate([p[0] for p in parts])
    counts = np.concatenate([p[1] for p in parts])
    merged, where = np.unique(occupied, return_inverse=True)
    total = np.zeros(merged.size, dtype=np.int64)
    np.add.at(total, where, counts)
    return merged, total


def _merge_windows(*parts):
    return tuple(_merge_counts(*items) for items in zip(*parts))


def _rank_chunk(lower, upper, bins, j, b, X):
    from dpsk.stats._quantile import _bin_index

    index = _bin_index(X[:, j], lower[j], upper[j], bins)
    return np.array([np.count_nonzero(index < b), np.count_nonzero(index <= b)], dtype=np.int64)


def dask_quantiles(call, query, arr, names, bounds, axis, function, params):
    """``dpsk.stats`` quantiles of a Dask array ``arr`` (a DataFrame's, with its column
    ``names``), after the budget check.

    Item level, ``on_invalid="raise"``, public bounds, reductions over the records;
    returns ``(records, lower, upper, contribution, values)`` for the in-memory result.
    """
    from dpsk.stats._common import Records, layout, resolve_stat_bounds
    from dpsk.stats._contribution import Contribution
    from dpsk.stats._quantile import _bin_middle

    if call.user_level or call.on_invalid != "raise":
        raise ValueError(f"{function} on Dask input supports item-level releases with on_invalid='raise' only")
    if arr.ndim not in (1, 2):
        raise ValueError(f"{function} on Dask input takes 1-d or 2-d data, got {arr.ndim} dimensions")
    _, _, per_record, out_shape, keep_shape = layout(arr, axis)
    if per_record != 1:
        raise ValueError(f"{function} on Dask input reduces over the records only (axis=0)")
    bins = query.bins
    if bins > 2**32:
        raise ValueError(f"{function} on Dask input takes at most 2**32 bins, got {bins}")
    names = list(names) if names is not None and arr.ndim == 2 else None
    rows = as_rows(None, arr if arr.ndim == 2 else arr[:, None], name="a")
    records = Records(rows, rows.shape[0], 1, out_shape, keep_shape)
    lower, upper = resolve_stat_bounds(
        require_public(bounds, "bounds", function), records, function, feature_names=names
    )
    n = int(rows.shape[0])
    unit, _ = query.score_unit(Contribution(), 1)
    margin = rank_margin(query.mechanism, unit, n)

    shift, n_blocks = block_grid(bins)
    blocks = map_reduce(functools.partial(_block_counts_chunk, lower, upper, bins, shift, n_blocks), rows)
    cumulative = np.cumsum(blocks, axis=1)
    plans, requests = [], []
    for j in range(rows.shape[1]):
        for k, level in enumerate(query.q):
            a_rank, c_rank, first, last = rank_window(cumulative[j], n, level * n, margin)
            base = 0 if first == 0 else int(cumulative[j, first - 1])
            plans.append((j, k, level, a_rank, c_rank, base))
            requests.append((j, first << shift, min(bins - 1, ((last + 1) << shift) - 1)))
    windows = map_reduce(functools.partial(_window_chunk, lower, upper, bins, requests), rows, combine=_merge_windows)

    call.spend(n, function=function, params=params, data=(*fingerprint(blocks), *fingerprint(windows)))
    contribution = call.contribution(kappa=query.kappa(1))
    if contribution.weights is not None or query.score_unit(contribution, 1)[0] != unit:
        raise RuntimeError("item-level quantiles expected")  # guarded by call.user_level above
    out = np.empty((query.q.size, query.n_outputs))
    for (j, k, level, a_rank, c_rank, base), window in zip(plans, windows):

        def count_ranks(b, j=j):
            below, through = map_reduce(functools.partial(_rank_chunk, lower, upper, bins, j, b), rows)
            return int(below), int(through)

        index = select_in_window(query.mechanism, window, base, a_rank, c_rank, n, bins, level, unit, count_ranks)
        out[k, j] = _bin_middle(index, lower[j], upper[j], bins)
    return records, lower, upper, contribution, out
