# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-chunk sufficient statistics, combined exactly by a tree reduction.

The statistics of the in-memory fits are exact integers on a public grid
(``dpsk._core._exact_sums``: :class:`ExactMoments`, :class:`ExactGram`; histogram
counts): a chunk's statistic is the same kernel run on the chunk's rows, and the sum of
the chunks' integers *is* the whole data's, in any order and for any chunking. The
merged statistic is therefore bitwise the in-memory one; it is rounded to floats once,
on the client, by the same release code.
"""

import functools

import numpy as np

from dpsk._core._exact_sums import ExactGram, ExactMoments

__all__ = ["fingerprint", "map_reduce", "merge", "tree_reduce"]

#: Partial statistics merged per task of the tree reduction.
FAN_IN = 8


def merge(*parts):
    """The exact sum of partial statistics of the same kind (and the same public grid)."""
    first = parts[0]
    if len(parts) == 1:
        return first
    if isinstance(first, ExactMoments):
        return ExactMoments(
            functools.reduce(np.add, (p.count for p in parts)),
            functools.reduce(np.add, (p.sum_q for p in parts)),
            None  # computed without the squares (``exact_moments(squares=False)``)
            if any(p.sum_q2 is None for p in parts)
            else functools.reduce(np.add, (p.sum_q2 for p in parts)),
            first.weight_scale,
            first.centre,
            first.half_width,
            first.step,
        )
    if isinstance(first, ExactGram):
        return ExactGram(
            sum(p.count for p in parts),
            functools.reduce(np.add, (p.total for p in parts)),
            functools.reduce(np.add, (p.gram for p in parts)),
            first.step,
            first.weight_scale,
        )
    if isinstance(first, tuple):
        return tuple(merge(*items) for items in zip(*parts))
    if isinstance(first, np.ndarray) and first.dtype.kind in "iuO":
        return functools.reduce(np.add, parts)
    if isinstance(first, int):
        return sum(parts)
    raise TypeError(f"cannot merge partial statistics of type {type(first).__name__}")


def _blocks(array, n_blocks):
    if array is None:
        return [None] * n_blocks
    # Unoptimised: y and weights derived from X (one graph) then share X's chunks, which
    # each array's own optimisation would fuse and compute twice.
    blocks = array.to_delayed(optimize_graph=False).ravel()
    if len(blocks) != n_blocks:  # as_rows / as_vector chunk every array like X
        raise ValueError("the arrays must be chunked alike along their rows")
    return list(blocks)


def _apply(function, *blocks):
    return function(*[None if b is None else np.ascontiguousarray(b) for b in blocks])


def tree_reduce(parts, combine=merge):
    """The Delayed ``combine`` of Delayed ``parts`` by a tree of fan-in ``FAN_IN``."""
    from dask import delayed

    combine = delayed(combine, pure=True)
    level = list(parts)
    while len(level) > 1:
        level = [combine(*level[i : i + FAN_IN]) for i in range(0, len(level), FAN_IN)]
    return level[0]


def map_reduce(function, rows, *others, combine=merge, shared=None, lazy=False):
    """``merge`` of ``function(rows_chunk, *other_chunks)`` over the row chunks, computed now.

    Parameters
    ----------
    function : callable
        A picklable function of numpy chunks returning a mergeable statistic (it runs on
        the workers: data never leaves them except as its result).
    rows : dask.array.Array of shape (n_samples, n_features), chunked by rows only
    *others : dask.array.Array chunked like ``rows`` along axis 0, or None
    combine : callable, default=merge
        The exact merge of several partial statistics into one.
    shared : dask.delayed.Delayed or None, default=None
        A value every chunk's call needs (e.g. the users' row counts), computed once on
        the cluster and passed first: ``function(shared, rows_chunk, ...)``.
    lazy : bool, default=False
        Return the Delayed result instead of computing it (to compute several at once).

    Returns
    -------
    The merged statistic (on the client), or its Delayed.
    """
    import dask
    from dask import delayed

    n_blocks = len(rows.chunks[0])
    columns = [_blocks(rows, n_blocks), *(_blocks(other, n_blocks) for other in others)]
    apply = delayed(_apply, pure=True)
    # Empty chunks add nothing (and some statistics cannot be shaped from no rows): skipped.
    sizes = rows.chunks[0]
    if shared is None:
        level = [apply(function, *chunk) for size, chunk in zip(sizes, zip(*columns)) if size > 0]
    else:
        level = [
            delayed(_apply_shared, pure=True)(function, shared, *chunk)
            for size, chunk in zip(sizes, zip(*columns))
            if size > 0
        ]
    result = tree_reduce(level, combine)
    if lazy:
        return result
    (result,) = dask.compute(result)
    return result


def _apply_shared(function, shared, *blocks):
    return _apply(functools.partial(function, shared), *blocks)


def fingerprint(statistic):
    """The statistic as arrays, for keying an integer seed's stream (``release_generator``).

    With an integer ``random_state`` a Dask fit's noise stream is derived from the exact
    sufficient statistics (chunking-invariant) instead of the raw rows: neighbouring
    datasets with different statistics get independent noise; with equal statistics
    their noise-free outputs are equal too, so a shared stream reveals nothing.
    """
    if isinstance(statistic, ExactMoments):
        sums = (statistic.count, statistic.sum_q, statistic.sum_q2)
        return tuple(a for a in sums if a is not None)  # what the release reads
    if isinstance(statistic, ExactGram):
        return (np.array([statistic.count], dtype=object), statistic.total, statistic.gram)
    if isinstance(statistic, tuple):
        return tuple(a for item in statistic for a in fingerprint(item))
    return (np.asarray(statistic),)
