# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.tree.DecisionTreeClassifier: a random decision tree with noisy leaf counts."""

import pickle

import numpy as np
import pytest

from dpsk.accounting import get_epsilon, record_releases
from dpsk.tree import DecisionTreeClassifier
from dpsk.tree._classes import MAX_LEAF_COUNTS, default_depth, smoothed_leaf_probabilities


def _data(n=2000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    return X, (X[:, 0] > 0.5).astype(int)


def _tree(**params):
    return DecisionTreeClassifier(**{"bounds": (0.0, 1.0), "classes": [0, 1], "random_state": 0, **params})


def test_structure_does_not_depend_on_the_data():
    """Same stream, two unrelated datasets of the same width: the same tree.

    Two fresh PCG64(0) bit generators: an int seed would give each dataset its own stream
    (dpsk.utils.validation.release_generator)."""
    X1, y1 = _data(seed=1)
    X2 = np.random.default_rng(2).normal(size=(77, 3))
    y2 = np.arange(77) % 2
    a = _tree(max_depth=5, random_state=np.random.PCG64(0)).fit(X1, y1)
    b = _tree(max_depth=5, random_state=np.random.PCG64(0)).fit(X2, y2)
    np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    assert not np.array_equal(a.tree_.value, b.tree_.value)


def test_rows_outside_the_bounds_are_routed_as_if_clipped():
    X, y = _data()
    X_out = X.copy()
    X_out[::3] = X_out[::3] * 40.0 - 20.0  # far outside [0, 1]
    # The same stream for both (an int seed would derive one per dataset).
    a = _tree(max_depth=6, random_state=np.random.PCG64(0)).fit(X_out, y)
    b = _tree(max_depth=6, random_state=np.random.PCG64(0)).fit(np.clip(X_out, 0.0, 1.0), y)
    np.testing.assert_array_equal(a.tree_.value, b.tree_.value)
    np.testing.assert_array_equal(a.predict_proba(X_out), b.predict_proba(np.clip(X_out, 0.0, 1.0)))


def test_leaf_counts_are_the_release_and_internal_nodes_their_sums():
    X, y = _data()
    tree = _tree(max_depth=4, epsilon=1e6).fit(X, y)  # integer noise is 0 at this ε
    t = tree.tree_
    assert t.node_count == 31 and t.n_leaves == 16
    leaves = tree.apply(X)
    assert np.all(leaves >= 15)
    expected = np.zeros((16, 2))
    np.add.at(expected, (leaves - 15, y), 1)
    np.testing.assert_array_equal(t.value[15:], expected)
    np.testing.assert_array_equal(t.value[0], np.bincount(y))
    left, right = t.children_left, t.children_right
    internal = np.arange(15)
    np.testing.assert_array_equal(t.value[internal], t.value[left[internal]] + t.value[right[internal]])
    assert np.all(left[15:] == -1) and np.all(t.feature[15:] == -2)
    np.testing.assert_array_equal(tree.class_count_, np.bincount(y))


def test_privacy_cost_is_epsilon():
    X, y = _data()
    tree = _tree(epsilon=0.7).fit(X, y)
    assert get_epsilon(tree.privacy_spent_, 0.0) <= 0.7 + 1e-12
    with record_releases() as drawn:
        _tree(epsilon=0.7).fit(X, y)
    assert len(drawn) == 2  # leaf counts, class totals


def test_accurate_when_epsilon_is_large():
    X, y = _data(n=5000)
    tree = _tree(max_depth=8, epsilon=100.0).fit(X, y)
    # Random thresholds approximate the boundary: 0.77 to 0.98 over the seeds 0 to 29 (the
    # noise hardly matters at this ε; chance is 0.5).
    assert tree.score(X, y) > 0.75
    proba = tree.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(tree.classes_[proba.argmax(axis=1)], tree.predict(X))


def test_float32_and_pickle():
    X, y = _data()
    tree = _tree().fit(X.astype(np.float32), y)
    restored = pickle.loads(pickle.dumps(tree))
    np.testing.assert_array_equal(
        restored.predict_proba(X.astype(np.float32)), tree.predict_proba(X.astype(np.float32))
    )
    assert tree.get_depth() == default_depth(3) == 2
    assert tree.get_n_leaves() == 4


def test_default_depth_rule():
    assert [default_depth(d) for d in (1, 2, 3, 8, 19, 20, 107)] == [1, 1, 2, 4, 10, 10, 10]


def test_one_class_present_is_fine_with_public_classes():
    X, _ = _data(n=50)
    tree = _tree(classes=[0, 1, 2]).fit(X, np.zeros(50, dtype=int))
    assert tree.predict_proba(X).shape == (50, 3)


def test_too_many_leaf_counts_raise_before_spending():
    X, y = _data(n=10, d=40)
    with record_releases() as drawn, pytest.raises(ValueError, match="leaf counts"):
        _tree(max_depth=30).fit(X, y)
    assert not drawn and 2**30 * 2 > MAX_LEAF_COUNTS


def test_smoothing_falls_back_on_the_parent_when_counts_are_noise():
    # Two leaves: one with plenty of class-1 rows, one (almost) empty.
    noisy = np.array([[[0.0, 500.0], [1.0, 0.0]]])
    proba = smoothed_leaf_probabilities(noisy, np.array([0.5, 0.5]), noise_std=1.4)
    assert proba[0, 0, 1] > 0.99
    # The near-empty leaf follows its parent (dominated by class 1), not its single count.
    assert proba[0, 1, 1] > 0.7
    np.testing.assert_allclose(proba.sum(axis=2), 1.0)


def test_decision_path_follows_the_heap_ordered_tree():
    """Check decision_path against a walk down tree_ (feature, threshold, children) for each row."""
    from dpsk.tree import DecisionTreeRegressor

    X = np.random.default_rng(3).uniform(0, 1, (40, 2))
    for tree in (
        DecisionTreeClassifier(max_depth=4, bounds=(0, 1), classes=[0, 1], random_state=0).fit(X, np.arange(40) % 2),
        DecisionTreeRegressor(max_depth=4, bounds=(0, 1), bounds_y=(0, 1), random_state=0).fit(X, X[:, 1]),
    ):
        path = tree.decision_path(X).toarray()
        assert path.shape == (40, tree.tree_.node_count)
        structure = tree.tree_
        for i, row in enumerate(X):
            node, expected = 0, [0]
            while structure.children_left[node] != -1:
                go_left = row[structure.feature[node]] <= structure.threshold[node]
                node = structure.children_left[node] if go_left else structure.children_right[node]
                expected.append(node)
            np.testing.assert_array_equal(np.flatnonzero(path[i]), expected)
            assert expected[-1] == tree.apply(X[i : i + 1])[0]
        assert tree.get_depth() == 4 and tree.get_n_leaves() == 16
