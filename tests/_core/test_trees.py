# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The random-tree kernels: structure from uniforms, routing, leaf counts, votes."""

import numpy as np
import pytest

from dpsk._core._clip import clip_bounds
from dpsk._core._trees import apply_trees, draw_structure, leaf_counts, tree_votes


def _forest(n_trees, depth, lower, upper, seed=0):
    rng = np.random.default_rng(seed)
    shape = (n_trees, 2**depth - 1)
    return draw_structure(rng.random(shape), rng.random(shape), lower, upper, depth)


def _route(X, feature, threshold, depth):
    """Reference routing in numpy: leaf index of every row in every tree."""
    X = np.asarray(X, dtype=np.float64)
    rows = np.arange(X.shape[0])
    out = np.empty((X.shape[0], feature.shape[0]), dtype=np.intp)
    for t in range(feature.shape[0]):
        node = np.zeros(X.shape[0], dtype=np.intp)
        for _ in range(depth):
            node = 2 * node + 1 + (X[rows, feature[t, node]] > threshold[t, node])
        out[:, t] = node - (2**depth - 1)
    return out


def _paths(depth):
    """Internal nodes on the path to each leaf, root first."""
    n_leaves = 2**depth
    paths = []
    for leaf in range(n_leaves):
        node, path = leaf + n_leaves - 1, []
        while node > 0:
            node = (node - 1) // 2
            path.append(node)
        paths.append(path[::-1])
    return paths


def test_features_drawn_without_replacement_along_paths():
    lower, upper = np.zeros(5), np.ones(5)
    feature, _ = _forest(20, 4, lower, upper)
    for t in range(20):
        for path in _paths(4):
            assert len(set(feature[t, path])) == 4
    # Deeper than n_features: rounds of all features, each used once per round.
    feature, _ = _forest(10, 7, lower[:3], upper[:3])
    for t in range(10):
        for path in _paths(7):
            f = feature[t, path]
            assert sorted(f[:3]) == [0, 1, 2] and sorted(f[3:6]) == [0, 1, 2]


def test_thresholds_lie_in_the_cell_of_their_node():
    lower, upper = np.array([-1.0, 0.0]), np.array([1.0, 10.0])
    depth = 6
    feature, threshold = _forest(30, depth, lower, upper, seed=1)
    for t in range(30):
        for path in _paths(depth):
            lo, hi = lower.copy(), upper.copy()
            for node, child in zip(path, [*path[1:], None]):
                f, thr = feature[t, node], threshold[t, node]
                if np.isfinite(thr):
                    assert lo[f] <= thr < hi[f] and lower[f] <= thr < upper[f]
                else:
                    assert hi[f] >= upper[f]  # +inf only where the cell reaches the top
                if child is not None:
                    if child == 2 * node + 1:
                        hi[f] = min(hi[f], thr)
                    else:
                        lo[f] = max(lo[f], thr)


def test_structure_depends_on_the_uniforms_and_bounds_only():
    lower, upper = np.zeros(4), np.ones(4)
    a = _forest(5, 5, lower, upper, seed=3)
    b = _forest(5, 5, lower, upper, seed=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    c = _forest(5, 5, lower, upper * 2, seed=3)
    assert not np.array_equal(a[1], c[1])


def test_constant_feature_sends_everything_left():
    feature, threshold = _forest(3, 3, np.array([2.0]), np.array([2.0]))
    assert np.all(np.isposinf(threshold))
    X = np.array([[-5.0], [2.0], [7.0]])
    np.testing.assert_array_equal(apply_trees(X, feature, threshold, 3), 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_routing_matches_reference_and_clipped_values(dtype):
    lower, upper = np.array([-1.0, 0.0, 5.0]), np.array([1.0, 2.0, 5.0])
    feature, threshold = _forest(7, 6, lower, upper, seed=2)
    X = np.random.default_rng(0).normal(0.0, 3.0, (2000, 3)).astype(dtype)
    leaves = apply_trees(X, feature, threshold, 6)
    np.testing.assert_array_equal(leaves, _route(X, feature, threshold, 6))
    # Rows outside the bounds go where their clipped copies go.
    clipped = clip_bounds(X, lower, upper)
    np.testing.assert_array_equal(leaves, apply_trees(clipped, feature, threshold, 6))


def test_leaf_counts_one_tree_per_row_or_every_tree():
    rng = np.random.default_rng(0)
    lower, upper = np.zeros(4), np.ones(4)
    feature, threshold = _forest(5, 4, lower, upper)
    X = rng.random((3000, 4))
    y = rng.integers(0, 3, 3000).astype(np.intp)
    part = rng.integers(0, 5, 3000).astype(np.intp)
    leaves = _route(X, feature, threshold, 4)
    counts = leaf_counts(X, y, 3, part, feature, threshold, 4)
    expected = np.zeros((5, 16, 3), dtype=np.int64)
    np.add.at(expected, (part, leaves[np.arange(3000), part], y), 1)
    np.testing.assert_array_equal(counts, expected)
    assert counts.sum() == 3000
    every = leaf_counts(X, y, 3, None, feature, threshold, 4)
    expected = np.zeros((5, 16, 3), dtype=np.int64)
    for t in range(5):
        np.add.at(expected[t], (leaves[:, t], y), 1)
    np.testing.assert_array_equal(every, expected)
    np.testing.assert_array_equal(every.sum(axis=(1, 2)), 3000)


def test_results_do_not_depend_on_n_threads():
    rng = np.random.default_rng(1)
    feature, threshold = _forest(4, 5, np.zeros(2), np.ones(2))
    X = rng.random((200_000, 2))  # several chunks
    y = rng.integers(0, 2, X.shape[0]).astype(np.intp)
    part = rng.integers(0, 4, X.shape[0]).astype(np.intp)
    values = rng.normal(size=(4, 32, 2))
    one = leaf_counts(X, y, 2, part, feature, threshold, 5, n_threads=1)
    two = leaf_counts(X, y, 2, part, feature, threshold, 5, n_threads=2)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(
        apply_trees(X, feature, threshold, 5, n_threads=1), apply_trees(X, feature, threshold, 5, n_threads=2)
    )
    np.testing.assert_array_equal(
        tree_votes(X, feature, threshold, 5, values, n_threads=1),
        tree_votes(X, feature, threshold, 5, values, n_threads=2),
    )


def test_votes_sum_the_leaf_values():
    rng = np.random.default_rng(2)
    feature, threshold = _forest(6, 3, np.zeros(3), np.ones(3))
    X = rng.random((500, 3)).astype(np.float32)
    values = rng.normal(size=(6, 8, 4))
    leaves = _route(X, feature, threshold, 3)
    expected = sum(values[t, leaves[:, t]] for t in range(6))
    np.testing.assert_allclose(tree_votes(X, feature, threshold, 3, values), expected, rtol=1e-12)


def test_nan_and_bad_arguments_raise():
    feature, threshold = _forest(2, 2, np.zeros(2), np.ones(2))
    X = np.full((3, 2), 0.5)
    X[1, :] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        apply_trees(X, feature, threshold, 2)
    y = np.zeros(3, dtype=np.intp)
    with pytest.raises(ValueError, match="NaN"):
        leaf_counts(X, y, 2, None, feature, threshold, 2)
    good = np.full((3, 2), 0.5)
    with pytest.raises(TypeError):
        apply_trees(good.tolist(), feature, threshold, 2)
    with pytest.raises(ValueError, match="C-contiguous"):
        apply_trees(np.asfortranarray(np.full((3, 2), 0.5)), feature, threshold, 2)
    with pytest.raises(ValueError, match="shape"):
        apply_trees(good, feature, threshold, 3)
    with pytest.raises(ValueError, match="outside"):
        apply_trees(np.ascontiguousarray(good[:, :1]), feature, threshold, 2)  # features beyond X
    with pytest.raises(ValueError, match="y_index"):
        leaf_counts(good, np.array([0, 1, 2], dtype=np.intp), 2, None, feature, threshold, 2)
    with pytest.raises(ValueError, match="part"):
        leaf_counts(good, y, 2, np.array([0, 0, 2], dtype=np.intp), feature, threshold, 2)
    with pytest.raises(ValueError, match="uniforms"):
        draw_structure(np.ones((1, 3)), np.zeros((1, 3)), np.zeros(2), np.ones(2), 2)


def test_empty_inputs():
    feature, threshold = _forest(2, 2, np.zeros(2), np.ones(2))
    X = np.empty((0, 2))
    assert apply_trees(X, feature, threshold, 2).shape == (0, 2)
    assert leaf_counts(X, np.empty(0, dtype=np.intp), 2, None, feature, threshold, 2).sum() == 0
    assert tree_votes(X, feature, threshold, 2, np.zeros((2, 4, 3))).shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_apply_trees_with_part_routes_each_row_through_its_own_tree(dtype):
    rng = np.random.default_rng(3)
    feature, threshold = _forest(5, 4, np.zeros(3), np.ones(3))
    X = rng.random((200_000, 3)).astype(dtype)  # several chunks
    part = rng.integers(0, 5, X.shape[0]).astype(np.intp)
    leaves = apply_trees(X, feature, threshold, 4, part=part)
    assert leaves.shape == (X.shape[0],) and leaves.dtype == np.intp
    np.testing.assert_array_equal(leaves, _route(X, feature, threshold, 4)[np.arange(X.shape[0]), part])
    np.testing.assert_array_equal(leaves, apply_trees(X, feature, threshold, 4, part=part, n_threads=2))
    # The counts of leaf_counts are the bincount of (tree, leaf).
    counts = leaf_counts(X, np.zeros(X.shape[0], dtype=np.intp), 1, part, feature, threshold, 4)
    np.testing.assert_array_equal(np.bincount(part * 16 + leaves, minlength=80).reshape(5, 16), counts[:, :, 0])
    with pytest.raises(ValueError, match="part"):
        apply_trees(X[:3], feature, threshold, 4, part=np.array([0, 5, 1], dtype=np.intp))
    with pytest.raises(ValueError, match="part"):
        apply_trees(X[:3], feature, threshold, 4, part=part[:2].copy())
    bad = np.array(X[:3], dtype=np.float64)
    bad[1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        apply_trees(bad, feature, threshold, 4, part=part[:3].copy())
    assert apply_trees(X[:0], feature, threshold, 4, part=part[:0].copy()).shape == (0,)
