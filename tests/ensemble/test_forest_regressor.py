# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.ensemble.RandomForestRegressor and dpsk.tree.DecisionTreeRegressor: random trees,
noisy leaf counts and sums of the centred target, one budget for the whole forest."""

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.metrics import r2_score

from dpsk import BudgetAccountant
from dpsk.accounting import DiscreteLaplaceEvent, get_epsilon, record_releases
from dpsk.audit import audit_estimator, canary_neighbours
from dpsk.ensemble import RandomForestRegressor
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.tree import DecisionTreeRegressor, _regressor
from dpsk.tree._regressor import regression_depth, smoothed_leaf_means
from dpsk.utils._noisy_count import RowCount

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
    # One stream for both: two fresh PCG64(0) (an int seed derives one per dataset). An explicit
    # depth: max_depth=None reads the noisy row count (test_default_depth_reads_only_the_noisy_count).
    a = _forest(n_estimators=5, max_depth=4, random_state=np.random.PCG64(0)).fit(X1, y1)
    b = _forest(n_estimators=5, max_depth=4, random_state=np.random.PCG64(0)).fit(X2, y2)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.tree_.feature, tb.tree_.feature)
        np.testing.assert_array_equal(ta.tree_.threshold, tb.tree_.threshold)
    ta = _tree(max_depth=4, random_state=np.random.PCG64(0)).fit(X1, y1)
    tb = _tree(max_depth=4, random_state=np.random.PCG64(0)).fit(X2, y2)
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
        # max_depth=None: the noisy row count, then counts, sums and totals in one joint release
        assert len(drawn) == 2 and isinstance(drawn[0], DiscreteLaplaceEvent)
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


def test_regression_depth_rule():
    """Check the default depth's rule: log2 of the rows per leaf over 4 / ε, clipped to [1, 10]."""
    assert regression_depth(2000, 1.0, 20) == 4  # 2000 / 80 = 25 rows per 4/ε
    assert regression_depth(20000, 1.0, 20) == 7
    assert regression_depth(20000, 0.1, 20) == 4
    assert regression_depth(10**9, 1.0, 20) == 10
    assert regression_depth(1.0, 0.01, 20) == regression_depth(0.0, 1.0, 1) == 1
    assert regression_depth(5, math.inf, 1) == 10
    assert regression_depth(10**12, 1.0, 2**15) == 10  # 2**15 trees · 2**10 leaves · 2 values = 2**26
    assert regression_depth(10**12, 1.0, 2**16) == 9  # the leaf-value cap


class _PatchedCount(RowCount):
    """The real release (event, ε split), but the count the test sets."""

    value_to_use = None

    def __init__(self, epsilon, n_rows, rng, *, needed):
        super().__init__(epsilon, n_rows, rng, needed=needed)
        if self.event is not None:
            self.value = float(self.value_to_use)


@pytest.mark.parametrize("estimator", [_forest, _tree], ids=["forest", "tree"])
def test_default_depth_reads_only_the_noisy_count(estimator, monkeypatch):
    """Check max_depth=None: the depth follows the released count (patched), not the data's rows
    nor the number of features; the classifiers' min(10, ceil(d / 2)) is gone."""
    monkeypatch.setattr(_regressor, "RowCount", _PatchedCount)
    X, y = _data(n=300, d=5)
    # floor(log2(count · 0.99 / (4 T))): 20 trees (forest) or 1 (tree), capped at 10
    expected = {"forest": {2000: 4, 20000: 7}, "tree": {2000: 8, 20000: 10}}
    for count in (2000, 20000):
        monkeypatch.setattr(_PatchedCount, "value_to_use", count)
        fitted = estimator(epsilon=1.0).fit(X, y)
        trees = getattr(fitted, "n_estimators", 1)
        assert fitted.n_rows_ == count
        assert fitted.max_depth_ == regression_depth(count, 0.99, trees)
        assert fitted.max_depth_ == expected["forest" if trees > 1 else "tree"][count]
        assert get_epsilon(fitted.privacy_spent_, 0.0) <= 1.0


def test_default_depth_count_inside_the_one_event():
    """Check max_depth=None: one spend, the count's discrete Laplace event composed into it, the fit
    within ε, the recording harness sees the count's release; an explicit depth releases no count."""
    X, y = _data(n=3000, d=10)
    acc = BudgetAccountant(epsilon=1.0)
    with record_releases() as drawn:
        forest = _forest(accountant=acc).fit(X, y)
    leaves = forest.privacy_spent_.flatten()
    assert len(acc.spent_budget) == 1 and get_epsilon(forest.privacy_spent_, 0.0) <= 1.0
    assert sum(isinstance(leaf, DiscreteLaplaceEvent) for leaf in leaves) == 1
    assert sorted(map(repr, drawn)) == sorted(map(repr, leaves))
    assert forest.n_rows_ != 3000 and abs(forest.n_rows_ - 3000) < 3000
    assert forest.max_depth_ == regression_depth(forest.n_rows_, 0.99, 20)
    assert all(tree.n_rows_ == forest.n_rows_ for tree in forest.estimators_)
    fixed = _forest(max_depth=5, accountant=BudgetAccountant(epsilon=1.0)).fit(X, y)
    assert fixed.n_rows_ == 3000 and fixed.max_depth_ == 5
    assert not any(isinstance(leaf, DiscreteLaplaceEvent) for leaf in fixed.privacy_spent_.flatten())
    infinite = _forest(epsilon=math.inf).fit(X, y)
    assert infinite.n_rows_ == 3000 and infinite.max_depth_ == 10


class _NoiseFreeCount(RandomForestRegressor):
    """Releases the row count of max_depth=None without noise (declaring its cost)."""

    def _row_count(self, epsilon, n_rows, rng, *, needed):
        count = super()._row_count(epsilon, n_rows, rng, needed=needed)
        count.value = float(n_rows)
        return count


@pytest.mark.audit
def test_audit_default_depth_count():
    """Check the count behind max_depth=None against its claim; rejected when released noise-free."""
    params = dict(n_estimators=1, epsilon=2.0, bounds=(-1.0, 1.0), bounds_y=(-1.0, 1.0))
    neighbours = canary_neighbours(np.zeros((50, 1)), np.zeros(50), canary_X=[0.0], canary_y=0.0)

    def project(est):
        return np.array([est.n_rows_])

    def audit(estimator):
        return audit_estimator(estimator, neighbours, project, n_samples=3000, random_state=0)

    good = audit(RandomForestRegressor(**params))
    assert good.passed, str(good)
    bad = audit(_NoiseFreeCount(**params))
    assert not bad.passed, str(bad)
