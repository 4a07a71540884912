# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""User-level fits on Dask (``groups=``): per-user row counts by a distributed group-by.

The in-memory user-level release (``dpsk.stats._contribution``) needs, of the user ids,
only (1) the multiset of the users' row counts, from which the threshold h is chosen,
and (2) for every row, its user's row count ``s``, from which its weight
``min(1, h/s)`` (rounded down, :func:`~dpsk.stats._contribution.capped_weights`) is
made. On Dask:

* every chunk counts its ids (``pandas.Series.value_counts``); the per-chunk tables are
  added up by a tree reduction into the table of every user's row count (a group-by
  that stays on the cluster: it is handed to the tasks that need it, never to the
  client);
* the client receives only the *histogram* of the counts (how many users have s rows,
  for each s): the multiset the threshold selection reads, nothing about which user;
* after the spend, each chunk looks its rows' users up in the table and weights its
  rows exactly as in memory; the weighted exact statistics are merged as usual.

So the release is the in-memory one, bitwise: the same multiset gives the same h from
the same Generator, each row the same weight, the exact sums the same integers.

What one user changes: one entry of the count table (its count s, in every chunk
holding its rows, added up exactly), one entry of the histogram, and the weights of its
own rows only (a row's weight depends on its own user's count and the public h). Its
rows weigh at most h in total, wherever they lie, and the merged statistic is the sum
of the chunks': the in-memory sensitivity (h) holds unchanged.
"""

import math

import numpy as np

from dpsk.dask._reduce import tree_reduce

__all__ = ["count_histogram", "row_counts", "user_counts", "user_weights"]


def _checked_ids(ids):
    """A chunk of ids, missing ones refused as ``group_index`` does (before any spend)."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"groups must be 1-dimensional, got shape {ids.shape}")
    if ids.dtype.kind == "f":
        if not np.all(np.isfinite(ids)):
            raise ValueError("groups contains NaN or infinity; every row needs a user id")
        if np.all(ids == np.round(ids)) and np.all(np.abs(ids) < 2.0**63):
            ids = ids.astype(np.int64)  # as in memory: 3.0 and 3 are one user
    elif ids.dtype.kind == "O":
        if any(g is None or (isinstance(g, float) and math.isnan(g)) for g in ids):
            raise ValueError("groups contains missing values (None or NaN); every row needs a user id")
    return ids


def _chunk_counts(ids):
    import pandas as pd

    return pd.Series(_checked_ids(ids)).value_counts(sort=False)


def _merge_counts(*tables):
    import pandas as pd

    if len(tables) == 1:
        return tables[0]
    return pd.concat(tables).groupby(level=0, sort=False).sum()  # int64: exact


def user_counts(groups):
    """The Delayed table of every user's row count (a pandas Series indexed by user id).

    Parameters
    ----------
    groups : dask.array.Array of shape (n_samples,), chunked like X
    """
    from dask import delayed

    blocks = groups.to_delayed(optimize_graph=False).ravel()
    parts = [delayed(_chunk_counts, pure=True)(block) for block, size in zip(blocks, groups.chunks[0]) if size > 0]
    return tree_reduce(parts, _merge_counts)


def _histogram(table):
    sizes, users = np.unique(table.to_numpy(dtype=np.int64), return_counts=True)
    return sizes.astype(np.int64), users.astype(np.int64)


def count_histogram(table):
    """The Delayed histogram ``(sizes, users)`` of a :func:`user_counts` table: ``users[k]``
    users have ``sizes[k]`` rows each (sorted). All the client ever gets of the ids."""
    from dask import delayed

    return delayed(_histogram, pure=True)(table)


def row_counts(histogram):
    """The users' row counts (sorted) from their histogram: the multiset ``bind_counts`` takes."""
    sizes, users = histogram
    return np.repeat(sizes, users)


def user_weights(table, h, ids):
    """The in-memory user-level weights of a chunk's rows: ``capped_weights(h, s)`` with
    ``s`` each row's user's count, looked up in the table."""
    from dpsk.stats._contribution import capped_weights

    counts = table.reindex(_checked_ids(ids)).to_numpy(dtype=np.int64)
    return capped_weights(h, counts)
