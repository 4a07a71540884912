# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""PCA's one-pass exact Gram (clip to the box and the ball inside the kernel) gives
bitwise the statistic of the reference path: rows clipped by ``clip_bounds`` then
``clip_rows_l2`` (copies), quantised on the public grid, summed as exact integers and
rounded once (issue 16, slow paths)."""

import numpy as np
import pytest

from dpsk._core._clip import clip_bounds, clip_rows_l2
from dpsk._core._exact_sums import (
    GRAM_BITS,
    GRAM_WEIGHT_BITS,
    ExactGram,
    exact_gram,
    exact_gram_sums,
    fixed_point_grid,
    gram_floats,
)
from dpsk.decomposition._pca import _Geometry


def _reference_sums(X, geometry, sample_weight=None):
    """The old path, independently: copies clipped in X's dtype, numpy quantisation,
    exact integer sums in Python ints (no kernel of _exact_sums involved)."""
    radius = geometry._radius()
    step, inverse, qmax = fixed_point_grid(radius, GRAM_BITS)
    rows = X
    if geometry.lower is not None:
        rows = clip_bounds(rows, geometry.lower, geometry.upper)
    if geometry.data_norm is not None:
        rows = clip_rows_l2(rows, geometry._ball_radius(radius))
    if geometry.l1_norm is not None:  # scaled towards the centre (the old numpy steps)
        l1 = max(geometry.l1_norm - float(step.sum()) * (1.0 + 2.0**-40), geometry.l1_norm / 2)
        y = rows - geometry.centre
        scale = np.minimum(1.0, l1 / np.maximum(np.abs(y).sum(axis=1), np.finfo(np.float64).tiny))
        rows = geometry.centre + y * scale[:, None]
    if geometry.data_norm is None:  # the box only: the kernel clamps to it in float64
        rows = np.minimum(np.maximum(rows.astype(np.float64), geometry.lower), geometry.upper)
    t = (rows.astype(np.float64) - geometry.centre) * inverse
    t = np.minimum(np.maximum(t, -qmax), qmax)
    q = (np.floor(t + (qmax + 0.5)) - qmax).astype(np.int64).astype(object)
    if sample_weight is None:
        units, scale = np.ones(X.shape[0], dtype=np.int64), 1
    else:
        units, scale = np.floor(np.ldexp(sample_weight, GRAM_WEIGHT_BITS)).astype(np.int64), 1 << GRAM_WEIGHT_BITS
    units = units.astype(object)
    total = (units[:, None] * q).sum(axis=0)
    gram = (q * units[:, None]).T @ q
    return ExactGram(int(units.sum()), total, gram, step, scale)


def _boundary_rows(rng, n, d, radius, lower, upper, dtype):
    """Random rows plus rows on, just inside and just outside the ball and the box."""
    X = rng.normal(scale=radius / np.sqrt(d) * 1.5, size=(n, d))
    direction = rng.normal(size=(n // 4, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    on_ball = direction * radius
    X[: n // 4] = on_ball
    X[n // 4 : n // 2] = np.nextafter(on_ball, 2 * on_ball)  # just outside
    X[n // 2 : n // 2 + n // 8] = np.nextafter(on_ball[: n // 8], 0 * on_ball[: n // 8])  # just inside
    corner = n // 2 + n // 8
    X[corner : corner + 8] = lower  # on the box
    X[corner + 8 : corner + 16] = upper
    X[corner + 16 : corner + 24] = np.nextafter(upper, np.inf)
    X[corner + 24] = 0.0
    return np.ascontiguousarray(X.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rule", ["ball", "box", "both", "ball_l1", "box_l1"])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_pass_gram_is_bitwise_the_clipped_copy_path(dtype, rule, weighted):
    rng = np.random.default_rng(16)
    n, d, norm = 1500, 7, 3.0
    lower, upper = np.linspace(-2.0, -0.5, d), np.linspace(0.3, 2.5, d)
    box = (None, None) if rule.startswith("ball") else (lower, upper)
    l1_norm = 4.0 if rule.endswith("l1") else None
    geometry = _Geometry(*box, None if rule.startswith("box") else norm, d, l1_norm=l1_norm)
    # Rows on the radius the kernel clips to (data_norm less the rounding margin)
    clip = norm if rule.startswith("box") else geometry._ball_radius(geometry._radius())
    X = _boundary_rows(rng, n, d, clip, lower, upper, dtype)
    weights = None
    if weighted:
        weights = rng.uniform(size=n)
        weights[:40] = 1.0
        weights[40:80] = 0.0
        weights[80:120] = np.ldexp(rng.integers(0, 1 << GRAM_WEIGHT_BITS, size=40), -GRAM_WEIGHT_BITS)
    expected = gram_floats(_reference_sums(X, geometry, weights))
    sums = geometry.exact_sums(X, weights)
    reference = _reference_sums(X, geometry, weights)
    assert sums.count == reference.count
    assert np.array_equal(sums.total, reference.total)
    assert np.array_equal(sums.gram, reference.gram)
    count, total, gram = geometry.statistics(X, weights)
    assert count == expected[0]
    # Bitwise (and the same float64 bits)
    assert total.tobytes() == expected[1].tobytes()
    assert gram.tobytes() == expected[2].tobytes()


def test_exact_gram_floats_round_large_integers_as_python_does():
    """Entries above 2**53 (many rows at the grid's largest |q|) are correctly rounded
    (ties to even), bitwise ``gram_floats`` of the Python integers; more rows than one
    dsyrk block and two chunks of rows."""
    rng = np.random.default_rng(3)
    n, d = 70_000, 3
    X = np.where(rng.uniform(size=(n, d)) < 0.5, -1.0, 1.0) * rng.uniform(0.999, 1.0, size=(n, d))
    X[::7] = 1.0
    lower, upper = np.full(d, -1.0), np.full(d, 1.0)
    centre = np.zeros(d)
    radius = np.full(d, 1.0 - 2.0**-30)
    sums = exact_gram_sums(X, lower, upper, centre, radius, n_threads=2)
    assert max(abs(int(v)) for v in sums.gram.ravel()) > 2**53
    expected = gram_floats(sums)
    got = exact_gram(X, lower, upper, centre, radius, n_threads=1)
    assert got[0] == expected[0]
    assert got[1].tobytes() == expected[1].tobytes()
    assert got[2].tobytes() == expected[2].tobytes()


def test_one_pass_gram_flags_non_finite_rows():
    X = np.ones((10, 3))
    X[4, 1] = np.nan
    big = np.full(3, np.finfo(np.float64).max)
    with pytest.raises(ValueError):
        exact_gram(X, -big, big, np.zeros(3), np.ones(3), clip_norm=1.0)
    with pytest.raises(ValueError):
        exact_gram(X, -big, big, np.zeros(3), np.ones(3), clip_box=(-np.ones(3), np.ones(3)))
