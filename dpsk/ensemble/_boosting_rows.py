# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a boosting round reads of the rows: exact integer sums, and the raw predictions.

The rounds of :class:`~dpsk.ensemble.HistGradientBoostingClassifier`/``Regressor``
(``BaseHistGradientBoosting._boost``) see the rows only through an object with three
methods, so one loop serves the in-memory fit (:class:`MemoryRows`) and the Dask fit
(``dpsk.dask._boosting.BoostingRows``, per chunk on the cluster):

* ``reset(baseline)``: the raw predictions, ``baseline`` on every row;
* ``sums(kernel, *args)``: the exact int64 sums of ``kernel(binned, grad, hess, *args)``
  over the rows, ``grad``/``hess`` each row's clipped, weighted gradient and hessian as
  integers on the public grid (:func:`grid_gradients`); integers, so the sums are the
  same in any order and for any chunking, and one row moves them by its own integers;
* ``update(tree, depth, values)``: the raw predictions plus ``values`` of each row's leaf.
"""

import numpy as np

from dpsk._core._hist_boost import node_histograms, route

__all__ = ["MemoryRows", "grid_gradients", "node_sums", "route_rows"]


def route_rows(binned, tree, levels):
    """Every row's node after ``levels`` levels of the tree ``(feature, mask)`` (internal nodes in level order)."""
    feature, mask = tree
    node = np.zeros(binned.shape[0], dtype=np.intp)
    for level in range(levels):
        first, last = 2**level - 1, 2 ** (level + 1) - 1
        route(binned, node, np.ascontiguousarray(feature[first:last]), np.ascontiguousarray(mask[first:last]))
    return node


def node_sums(binned, grad, hess, tree, levels, features, n_bins, n_threads=None):
    """Exact histograms of the nodes after ``levels`` levels of ``tree`` by ``features`` and bin;
    ``features=None``: the nodes' (leaves') sums, one bin each (sensitivity of one row)."""
    node = route_rows(binned, tree, levels)
    if features is None:
        binned, features, n_bins = np.zeros((binned.shape[0], 1), dtype=np.uint8), np.zeros((2**levels, 1), np.intp), 1
    return node_histograms(binned, node, features, grad, hess, n_bins, n_threads=n_threads)


def grid_gradients(estimator, raw, target, sample_weight, grid):
    """Each row's gradient and hessian of the loss at ``raw``, times its weight (in [0, 1]),
    clipped and as integers on the public grid: ``grid = (clip, hessian bound, steps)``."""
    clip, hess_bound, steps = grid
    g, h = estimator._gradients(raw, target)
    if sample_weight is not None:
        g, h = g * sample_weight[:, None], h * sample_weight[:, None]
    return estimator._to_grid(g, clip, steps), estimator._to_grid(h, hess_bound, steps)


class MemoryRows:
    """The rows of an in-memory fit (the interface in the module docstring): binned X, the
    encoded targets and the checked weights; the gradients are computed once per state of
    the raw predictions."""

    def __init__(self, estimator, binned, target, sample_weight, grid):
        self.estimator, self.binned, self.target = estimator, binned, target
        self.weight, self.grid = sample_weight, grid
        self.raw = self._gradients = None

    def reset(self, baseline):
        self.raw, self._gradients = np.tile(baseline, (self.binned.shape[0], 1)), None

    def sums(self, kernel, *args):
        if self._gradients is None:
            self._gradients = grid_gradients(self.estimator, self.raw, self.target, self.weight, self.grid)
        return kernel(self.binned, *self._gradients, *args)

    def update(self, tree, depth, values):
        self.raw, self._gradients = self.raw + values[route_rows(self.binned, tree, depth)], None
