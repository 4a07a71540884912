# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.ensemble.RandomForestRegressor and dpsk.tree.DecisionTreeRegressor: random trees,
noisy leaf counts and sums of the centred target, one budget for the whole forest."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.metrics import r2_score

from dpsk.accounting import get_epsilon, record_releases
from dpsk.ensemble import RandomForestRegressor
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.tree import DecisionTreeRegressor
from dpsk.tree._regressor import smoothed_leaf_means

# Friedman #1: X uniform on [0, 1]^d; y = 10 sin(π x0 x1) + 20 (x2 − ½)² + 10 x3 + 5 x4 + noise
# lies in [0, 30] without noise; (−5, 35) leaves room for the noise of standard deviation 1.
BOUNDS_Y = (-5.0, 35.0)


def _data(n=4000, d=5, seed=0):
    return make_friedman1(n_samples=n, n_features=d, noise=1.0, random_state=seed)


def _forest(**params):
    return RandomForestRegressor(**{"bounds": (0.0, 1.0), "bounds_y": BOUNDS_Y, "random_state": 0, **params})


def _tree(**params):
    return DecisionTreeRegressor(**{"bounds": (0.0, 1.0), "bounds_y": BOUNDS_Y, "random_state": 0, **params})


def test_structure_does_not_depend_on_the_data():
    X1, y1 = _data(seed=1)
    rng = np.random.default_rng(2)
    X2, y2 = rng.normal(size=(50, 5)), rng.normal(size=50) * 100
    # One stream for both: two fresh PCG64(0) (an int seed derives one per dataset).
    a = _forest(n_estimators=5, random_state=np.random.PCG64(0)).fit(X1, y1)
    b = _forest(n_estimators=5, random_state=np.random.PCG64(0)).fit(X2, y2)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.tree_.feature, tb.tree_.feature)
        np.testing.assert_array_equal(ta.tree_.threshold, tb.tree_.threshold)
    ta = _tree(random_state=np.random.PCG64(0)).fit(X1, y1)
    tb = _tree(random_state=np.random.PCG64(0)).fit(X2, y2)
    np.testing.assert_array_equal(ta.tree_.threshold, tb.tree_.threshold)


def test_each_row_feeds_exactly_one_tree():
    X, y = _data()
    forest = _forest(n_estimators=7, epsilon=1e9).fit(X, y)
    roots = np.array([tree.tree_.value[0] for tree in forest.estimators_])  # root = Σ leaves
    np.testing.assert_allclose(roots[:, 0].sum(), X.shape[0], atol=1e-3)
    centre = sum(BOUNDS_Y) / 2
    np.testing.assert_allclose(roots[:, 1].sum(), np.sum(y - centre), atol=1e-3)
    np.testing.assert_allclose(forest.totals_, [X.shape[0], np.sum(y - centre)], atol=1e-3)
    assert np.all(roots[:, 0] > 0)


def test_total_cost_is_epsilon_whatever_the_number_of_trees():
    X, y = _data(n=500)
    for n_estimators in (1, 3, 50):
        with record_releases() as drawn:
            forest = _forest(n_estimators=n_estimators, epsilon=0.5).fit(X, y)
        assert len(drawn) == 1  # counts, sums and totals: one joint release
        assert get_epsilon(forest.privacy_spent_, 0.0) <= 0.5


def test_large_epsilon_gives_the_non_private_random_tree():
    """At ε → ∞ a leaf with enough rows predicts the mean of its training targets."""
    X, y = _data(n=20_000)
    tree = _tree(max_depth=4, epsilon=1e9).fit(X, y)
    leaves = tree.apply(X)
    counts = np.bincount(leaves, minlength=tree.tree_.node_count)
    means = np.bincount(leaves, weights=y, minlength=tree.tree_.node_count) / np.maximum(counts, 1)
    pred = tree.predict(X)
    full = counts[leaves] >= 100
    assert full.mean() > 0.9
    np.testing.assert_allclose(pred[full], means[leaves][full], rtol=1e-3)
    # The forest's prediction is the average of its trees'.
    forest = _forest(n_estimators=4, max_depth=4, epsilon=1e9).fit(X, y)
    per_tree = np.mean([t.predict(X[:100]) for t in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict(X[:100]), per_tree, rtol=1e-12)


def test_utility_on_friedman_and_noise_shrinks_with_epsilon():
    X, y = _data(n=20_000, d=10)
    X_test, y_test = _data(n=5000, d=10, seed=1)
    scores = {}
    for epsilon in (0.05, 1.0, 1e4):
        scores[epsilon] = np.mean(
            [
                r2_score(
                    y_test,
                    _forest(n_estimators=10, max_depth=8, epsilon=epsilon, random_state=seed).fit(X, y).predict(X_test),
                )
                for seed in range(3)
            ]
        )
    assert scores[1e4] > 0.4
    assert scores[1.0] > 0.25
    assert scores[0.05] < scores[1.0] < scores[1e4]
    # The noise shrinks as 1/ε: the spread over seeds of the released totals (the
    # structure, and so the leaves, change with the seed).
    spread = {
        epsilon: np.std(
            [_tree(max_depth=3, epsilon=epsilon, random_state=seed).fit(X, y).totals_ for seed in range(20)], axis=0
        )
        for epsilon in (0.1, 10.0)
    }
    assert np.all(spread[10.0] < 0.05 * spread[0.1])


def test_targets_outside_bounds_y_are_clipped():
    X, y = _data(n=1000)
    y_wild = y.copy()
    y_wild[::7] = 1e6
    y_wild[1::7] = -1e6
    # One stream for both: two fresh PCG64(0) (an int seed derives one per dataset).
    a = _forest(n_estimators=3, random_state=np.random.PCG64(0)).fit(X, y_wild)
    b = _forest(n_estimators=3, random_state=np.random.PCG64(0)).fit(X, np.clip(y_wild, *BOUNDS_Y))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.totals_, b.totals_)
    pred = a.predict(X)
    assert np.all((pred >= BOUNDS_Y[0]) & (pred <= BOUNDS_Y[1]))


def test_rows_outside_the_bounds_are_routed_as_if_clipped():
    X, y = _data(n=1000)
    X_wild = X.copy()
    X_wild[::5] *= 10.0
    X_wild[1::5] -= 5.0
    # One stream for both: two fresh PCG64(0) (an int seed derives one per dataset).
    a = _forest(n_estimators=3, random_state=np.random.PCG64(0)).fit(X_wild, y)
    b = _forest(n_estimators=3, random_state=np.random.PCG64(0)).fit(np.clip(X_wild, 0.0, 1.0), y)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.tree_.value, tb.tree_.value)
    np.testing.assert_array_equal(a.predict(X_wild), b.predict(np.clip(X_wild, 0.0, 1.0)))


def test_n_jobs_changes_nothing():
    X, y = make_friedman1(n_samples=150_000, n_features=5, random_state=0)  # several chunks
    a = _forest(n_jobs=1).fit(X, y)
    b = _forest(n_jobs=2).fit(X, y)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.tree_.value, tb.tree_.value)
    np.testing.assert_array_equal(a.predict(X[:5000]), b.predict(X[:5000]))


def test_apply_float32_and_pickle():
    X, y = _data(n=2000)
    forest = _forest(n_estimators=6, max_depth=3).fit(X, y)
    leaves = forest.apply(X[:10])
    assert leaves.shape == (10, 6)
    assert np.all((leaves >= 7) & (leaves < 15))
    for t, tree in enumerate(forest.estimators_):
        np.testing.assert_array_equal(tree.apply(X[:10]), leaves[:, t])
    pred32 = _forest(n_estimators=6, max_depth=3).fit(X.astype(np.float32), y).predict(X[:10].astype(np.float32))
    assert pred32.dtype == np.float32
    clone = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(clone.predict(X), forest.predict(X))
    tree = _tree(max_depth=3).fit(X, y)
    assert tree.get_depth() == 3 and tree.get_n_leaves() == 8 and tree.apply(X[:4]).shape == (4,)
    assert tree.tree_.value.shape == (15, 2)


def test_data_derived_bounds_y_warns_and_is_stored():
    X, y = _data(n=300)
    forest = _forest(bounds_y="data")
    with pytest.warns(PrivacyLeakWarning, match="bounds_y"):
        forest.fit(X, y)
    assert forest.bounds_y == "data"
    assert forest.bounds_y_ == (float(y.min()), float(y.max()))


def test_bad_input_raises_before_any_release():
    X, y = _data(n=200)
    bad_X = X.copy()
    bad_X[3, 1] = np.nan
    bad_y = y.copy()
    bad_y[4] = np.nan
    cases = [
        (_forest(), bad_X, y),
        (_forest(), X, bad_y),
        (_forest(), X, y[:-1]),
        (_forest(bounds_y=(3.0, 1.0)), X, y),
        (_forest(bounds_y=(0.0, np.nan)), X, y),
        (_forest(bounds_y=(0.0, np.inf)), X, y),
        (_forest(bounds_y=([0.0, 1.0], [2.0, 3.0])), X, y),
        (_forest(bounds=(1.0, 0.0)), X, y),
        (_tree(max_depth=30), X, y),  # too many leaves
    ]
    for est, X_, y_ in cases:
        with record_releases() as drawn, pytest.raises(ValueError):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                est.fit(X_, y_)
        assert not drawn, est
    forest = _forest(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        forest.predict(X[:, :2])
    with pytest.raises(TypeError):
        forest.fit(X, y, groups=np.arange(200))  # user-level privacy is not supported


def test_constant_bounds_y_predicts_the_constant():
    X, y = _data(n=300)
    forest = _forest(n_estimators=3, bounds_y=(2.0, 2.0)).fit(X, y)
    np.testing.assert_array_equal(forest.predict(X), 2.0)


def test_smoothing_falls_back_on_the_parent_when_counts_are_noise():
    # Leaves: 500 rows of mean 0.5, and a noisy count below 0 with a large noisy sum.
    counts = np.array([[500.0, -1.0, 20.0, 1.0]])
    sums = np.array([[250.0, 3.0, -10.0, 0.4]])
    means = smoothed_leaf_means(counts, sums, prior=0.0, count_std=2.0, sum_std=2.0)
    assert abs(means[0, 0] - 0.5) < 0.01
    # A count clamped to 0 gives its parent's mean (the pair's node, about 0.5), not 3/−1.
    assert abs(means[0, 1] - 0.5) < 0.02
    # A count of 1, below the noise (σ 2), mostly follows its parent (about −0.45), not 0.4.
    assert -0.5 < means[0, 3] < 0.0
    assert np.all(np.abs(smoothed_leaf_means(counts, -100 * sums, 0.0, 2.0, 2.0)) <= 1.0)
