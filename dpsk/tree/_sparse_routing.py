# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Routing sparse X (scipy.sparse) through the random trees: the kernels on blocks of rows.

The structure of a random tree does not depend on the data, and routing reads a row
alone: the leaf of a row, its count and its votes are functions of that row only. So
sparse X is routed a block of rows at a time: each block is densified (at most
``BLOCK_ROWS`` rows and about ``BLOCK_BYTES``, never the whole n × d matrix) and handed
to the dense kernels of ``dpsk._core._trees``. The integer leaf counts of the blocks add
up exactly, and the leaves and votes of a row do not depend on its block, so a sparse fit
releases bitwise what the dense fit releases on the densified data (the same noise).

``leaf_counts``, ``apply_trees`` and ``tree_votes`` here have the kernels' signatures and
call them directly on dense X.
"""

import numpy as np
import scipy.sparse as sp

from dpsk._core import _trees

__all__ = ["BLOCK_BYTES", "BLOCK_ROWS", "apply_trees", "as_csr", "leaf_counts", "row_blocks", "tree_votes"]

#: Most rows, and about the most bytes, of a densified block.
BLOCK_ROWS = 1024
BLOCK_BYTES = 8 * 2**20


def as_csr(X):
    """Validated X as the trees route it: sparse X (CSR, CSC or COO) as CSR, dense X unchanged."""
    return sp.csr_matrix(X) if sp.issparse(X) else X


def _densify(block):
    """The dense C-contiguous copy of a sparse block of rows (one home, for the memory test)."""
    return block.toarray(order="C")


def row_blocks(X):
    """``(rows, dense block)`` for consecutive blocks of rows of sparse X (``rows`` a slice).

    X with no rows gives one empty block, so that the kernels still return their empty
    results of the right shape.
    """
    X = sp.csr_matrix(X)
    n, d = X.shape
    step = int(max(1, min(BLOCK_ROWS, BLOCK_BYTES // max(1, d * X.dtype.itemsize))))
    if n == 0:
        yield slice(0, 0), np.zeros((0, d), dtype=X.dtype)
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        yield rows, _densify(X[rows])


def leaf_counts(X, y_index, n_classes, part, feature, threshold, depth, *, n_threads=None):
    """``dpsk._core._trees.leaf_counts``, for sparse X the sum of its blocks' (exact) counts."""
    if not sp.issparse(X):
        return _trees.leaf_counts(X, y_index, n_classes, part, feature, threshold, depth, n_threads=n_threads)
    total = 0
    for rows, block in row_blocks(X):
        subset = None if part is None else part[rows]
        total = total + _trees.leaf_counts(
            block, y_index[rows], n_classes, subset, feature, threshold, depth, n_threads=n_threads
        )
    return total


def apply_trees(X, feature, threshold, depth, *, part=None, n_threads=None):
    """``dpsk._core._trees.apply_trees``, for sparse X its blocks' leaves stacked."""
    if not sp.issparse(X):
        return _trees.apply_trees(X, feature, threshold, depth, part=part, n_threads=n_threads)
    return np.concatenate(
        [
            _trees.apply_trees(
                block, feature, threshold, depth, part=None if part is None else part[rows], n_threads=n_threads
            )
            for rows, block in row_blocks(X)
        ]
    )


def tree_votes(X, feature, threshold, depth, values, *, n_threads=None):
    """``dpsk._core._trees.tree_votes``, for sparse X its blocks' votes stacked."""
    if not sp.issparse(X):
        return _trees.tree_votes(X, feature, threshold, depth, values, n_threads=n_threads)
    return np.concatenate(
        [_trees.tree_votes(block, feature, threshold, depth, values, n_threads=n_threads) for _, block in row_blocks(X)]
    )
