# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The row loop of private online learning (``dpsk.linear_model._online``), one row per round.

``ftrl_tree_rows(rows, targets, weights, loss, huber, target, lam, radius, coef, open_, closed, position, noise)``
    For each row i in order, at position t = position + i + 1 of the stream:

    1. margins z = coef · rows[i] (k outputs), loss derivative r = ∂ℓ/∂z (the losses of
       ``dpsk.linear_model._sgd.LOSSES``, codes ``LOSS_CODES``), the row's gradient
       G = r rows[i]ᵀ scaled by w_i·min(1, target/(‖r‖·‖rows[i]‖)) (0 if not finite);
    2. the binary tree: with h the number of trailing zero bits of t, the node of
       level h closes: ``closed[h] = open_[h] + G + noise[i]`` (the only node closing at
       t that a prefix can use); ``open_[:h] = 0`` and ``open_[h+1:] += G`` (level h
       restarts at 0);
    3. the noisy prefix sum P = Σ closed[j] over the bits j of t, and the leader
       coef = Π_R(−P/λ) (scaled into the L2 ball of radius ``radius``).

    ``noise`` (m, k, p) holds the node noise, already scaled (one vector per row: each
    row closes exactly one usable node), drawn by the caller from the release's
    generator. Updates ``coef``, ``open_`` and ``closed`` in place. Python decides
    everything else (calibration, validation, the horizon).
"""

from libc.math cimport exp, isfinite, sqrt

import numpy as np

__all__ = ["LOSS_CODES", "ftrl_tree_rows"]

#: Codes of the losses (the formulas of ``dpsk.linear_model._sgd``).
LOSS_CODES = {"log_loss": 0, "hinge": 1, "modified_huber": 2, "squared_error": 3, "huber": 4}


cdef inline double _dloss(int loss, double z, double t, double huber) noexcept nogil:
    cdef double m
    if loss == 0:
        m = t * z
        if m >= 0:
            return -t * exp(-m) / (1.0 + exp(-m))
        return -t / (1.0 + exp(m))
    if loss == 1:
        return -t if t * z < 1.0 else 0.0
    if loss == 2:
        m = t * z
        if m < -1.0:
            return -4.0 * t
        return -2.0 * t * (1.0 - m) if m < 1.0 else 0.0
    if loss == 3:
        return z - t
    m = z - t
    return huber if m > huber else (-huber if m < -huber else m)


def ftrl_tree_rows(
    const double[:, ::1] rows,
    const double[:, ::1] targets,
    const double[::1] weights,
    int loss,
    double huber,
    double target,
    double lam,
    double radius,
    double[:, ::1] coef,
    double[:, :, ::1] open_,
    double[:, :, ::1] closed,
    long position,
    const double[:, :, ::1] noise,
):
    """See the module docstring. ``weights`` may be empty (all 1). Returns the new position."""
    cdef Py_ssize_t m = rows.shape[0], p = rows.shape[1], k = coef.shape[0], levels = open_.shape[0]
    if targets.shape[0] != m or targets.shape[1] != k or coef.shape[1] != p:
        raise ValueError("shapes of rows, targets and coef do not match")
    if open_.shape[1] != k or open_.shape[2] != p or closed.shape[0] != levels:
        raise ValueError("the tree's shape does not match coef")
    if noise.shape[0] != m or noise.shape[1] != k or noise.shape[2] != p:
        raise ValueError("noise must have one (k, p) block per row")
    if weights.shape[0] != 0 and weights.shape[0] != m:
        raise ValueError("weights must be empty or have one entry per row")
    if position + m >= (<long> 1) << levels:
        raise ValueError("the rows would pass the tree's horizon")
    r_arr = np.empty(k)
    cdef double[::1] r = r_arr
    cdef Py_ssize_t i, a, j, h, level
    cdef long t
    cdef double z, rr, xx, norm, factor, g, total
    with nogil:
        for i in range(m):
            rr = 0.0
            xx = 0.0
            for j in range(p):
                xx += rows[i, j] * rows[i, j]
            for a in range(k):
                z = 0.0
                for j in range(p):
                    z += coef[a, j] * rows[i, j]
                r[a] = _dloss(loss, z, targets[i, a], huber)
                rr += r[a] * r[a]
            norm = sqrt(rr) * sqrt(xx)
            if not isfinite(norm):
                factor = 0.0
            elif norm > target:
                factor = target / norm
            else:
                factor = 1.0
            if weights.shape[0] != 0:
                factor = factor * weights[i]
            t = position + i + 1
            h = 0
            while (t >> h) & 1 == 0:
                h += 1
            for a in range(k):
                for j in range(p):
                    g = (r[a] * factor) * rows[i, j]
                    closed[h, a, j] = open_[h, a, j] + g + noise[i, a, j]
                    for level in range(h + 1):
                        open_[level, a, j] = 0.0
                    for level in range(h + 1, levels):
                        open_[level, a, j] += g
            total = 0.0
            for a in range(k):
                for j in range(p):
                    z = 0.0
                    for level in range(levels):
                        if (t >> level) & 1:
                            z += closed[level, a, j]
                    coef[a, j] = -z / lam
                    total += coef[a, j] * coef[a, j]
            total = sqrt(total)
            if total > radius:
                factor = radius / total
                for a in range(k):
                    for j in range(p):
                        coef[a, j] *= factor
    return position + m
