# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.ensemble.RandomForestClassifier: random trees on disjoint parts of the rows, one budget."""

import pickle
import sys
import types

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from dpsk.accounting import get_epsilon
from dpsk.datasets import load_adult
from dpsk.ensemble import RandomForestClassifier, RandomForestRegressor


def _data(n=4000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    return X, (X[:, 0] + X[:, 1] > 1.0).astype(int)


def _forest(**params):
    return RandomForestClassifier(**{"bounds": (0.0, 1.0), "classes": [0, 1], "random_state": 0, **params})


def test_structure_does_not_depend_on_the_data():
    X1, y1 = _data(seed=1)
    X2 = np.random.default_rng(2).normal(size=(50, 4))
    y2 = np.arange(50) % 2
    # One stream for both: two fresh PCG64(0) (an int seed derives one per dataset).
    a = _forest(n_estimators=5, random_state=np.random.PCG64(0)).fit(X1, y1)
    b = _forest(n_estimators=5, random_state=np.random.PCG64(0)).fit(X2, y2)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.tree_.feature, tb.tree_.feature)
        np.testing.assert_array_equal(ta.tree_.threshold, tb.tree_.threshold)


def test_each_row_feeds_exactly_one_tree():
    X, y = _data()
    forest = _forest(n_estimators=7, epsilon=1e6).fit(X, y)  # integer noise is 0 at this ε
    per_tree = np.array([tree.tree_.value[0] for tree in forest.estimators_])  # root = Σ leaves
    np.testing.assert_array_equal(per_tree.sum(axis=0), np.bincount(y))
    assert np.all(per_tree.sum(axis=1) > 0)  # every tree got rows (7 parts of 4000)


def test_total_cost_is_epsilon_whatever_the_number_of_trees():
    X, y = _data(n=500)
    for n_estimators in (1, 3, 50):
        forest = _forest(n_estimators=n_estimators, epsilon=0.5).fit(X, y)
        assert get_epsilon(forest.privacy_spent_, 0.0) <= 0.5 + 1e-12


def test_n_jobs_changes_nothing():
    X, y = _data(n=150_000, d=3)  # several chunks of rows
    a = _forest(n_jobs=1).fit(X, y)
    b = _forest(n_jobs=2).fit(X, y)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.tree_.value, tb.tree_.value)
    np.testing.assert_array_equal(a.predict_proba(X[:5000]), b.predict_proba(X[:5000]))
    np.testing.assert_array_equal(a.apply(X[:100]), b.apply(X[:100]))


def test_apply_and_trees_agree_with_the_forest():
    X, y = _data()
    forest = _forest(n_estimators=4, max_depth=3).fit(X, y)
    leaves = forest.apply(X[:20])
    assert leaves.shape == (20, 4) and np.all((leaves >= 7) & (leaves < 15))
    for t, tree in enumerate(forest.estimators_):
        np.testing.assert_array_equal(tree.apply(X[:20]), leaves[:, t])
        assert tree.predict_proba(X[:20]).shape == (20, 2)


def test_evidence_weight_is_post_processing():
    X, y = _data()
    forest = _forest().fit(X, y)
    spent = forest.privacy_spent_
    one = forest.set_params(evidence_weight=1.0).predict_proba(X)
    many = forest.set_params(evidence_weight=20.0).predict_proba(X)
    assert not np.allclose(one, many)
    assert forest.privacy_spent_ is spent
    # Weights above n_estimators are capped: naive Bayes over the trees.
    np.testing.assert_array_equal(many, forest.set_params(evidence_weight=1e6).predict_proba(X))


def test_accurate_when_epsilon_is_large_and_pickles():
    X, y = _data(n=20_000)
    forest = _forest(epsilon=100.0, max_depth=8).fit(X, y)
    assert forest.score(X, y) > 0.9
    restored = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(restored.predict(X), forest.predict(X))


def test_float32_input():
    X, y = _data()
    forest = _forest().fit(X.astype(np.float32), y)
    assert forest.predict(X.astype(np.float32)).shape == (X.shape[0],)


def test_rows_outside_the_bounds_are_routed_as_if_clipped():
    X, y = _data()
    X_out = X * 10.0 - 5.0
    # One stream for both: two fresh PCG64(0) (an int seed derives one per dataset).
    a = _forest(n_estimators=3, random_state=np.random.PCG64(0)).fit(X_out, y)
    b = _forest(n_estimators=3, random_state=np.random.PCG64(0)).fit(np.clip(X_out, 0.0, 1.0), y)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.tree_.value, tb.tree_.value)


@pytest.mark.slow
def test_adult_accuracy_at_epsilon_one():
    """Check the measured utility (doc/user_guide/trees.rst) on fixed seeds: above the majority rate 0.764."""
    X, y = load_adult(return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    scores = [_forest(random_state=seed).fit(X, y).score(X_test, y_test) for seed in range(3)]
    assert np.mean(scores) >= 0.80


@pytest.mark.slow
def test_breast_cancer_accuracy_at_epsilon_one():
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    scores = []
    for seed in range(5):
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=seed)
        scores.append(_forest(random_state=seed).fit(X_train, y_train).score(X_test, y_test))
    assert np.mean(scores) >= 0.85


def test_bad_input():
    X, y = _data(n=200)
    forest = _forest(n_estimators=3)
    with pytest.raises(ValueError):
        forest.fit(X, y[:-1])  # lengths differ
    with pytest.raises(ValueError, match="not in `classes`"):
        forest.fit(X, y + 5)  # labels outside the public classes
    with pytest.raises(TypeError):
        forest.fit(X, y, groups=np.arange(200))  # user-level privacy is not supported
    forest.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        forest.predict(X[:, :2])
    bad = X[:5].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        forest.predict(bad)
    bad[0, 0] = np.inf  # rejected like NaN by the input validation
    with pytest.raises(ValueError):
        forest.apply(bad)
    with pytest.raises(ValueError, match="bounds"):
        _forest(bounds=(1.0, 0.0)).fit(X, y)


# ----------------------------------------------------------------- scikit-learn's ensemble interface


def _small_forest(cls_name="classifier", **params):
    X = np.random.default_rng(0).uniform(0, 1, (60, 3))
    if cls_name == "classifier":
        forest = RandomForestClassifier(n_estimators=4, max_depth=3, bounds=(0, 1), classes=[0, 1], **params)
        return forest.fit(X, np.arange(60) % 2), X
    forest = RandomForestRegressor(n_estimators=4, max_depth=3, bounds=(0, 1), bounds_y=(0, 1), **params)
    return forest.fit(X, X[:, 0]), X


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_forest_is_a_sequence_of_its_trees(kind):
    forest, X = _small_forest(kind, random_state=0)
    assert len(forest) == 4
    assert list(forest) == forest.estimators_
    assert forest[1] is forest.estimators_[1] and forest[-1] is forest.estimators_[3]
    # Each tree predicts from its own leaves: its apply is the forest's column.
    np.testing.assert_array_equal(np.column_stack([tree.apply(X) for tree in forest]), forest.apply(X))


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_each_tree_carries_its_own_random_state(kind):
    """Check scikit-learn's convention: distinct int seeds derived from the forest's seed (reproducible),
    None when the forest's randomness is fresh entropy."""
    seeded, _ = _small_forest(kind, random_state=7)
    seeds = [tree.random_state for tree in seeded]
    assert all(isinstance(s, int) for s in seeds) and len(set(seeds)) == len(seeds)
    assert seeds == [tree.random_state for tree in _small_forest(kind, random_state=7)[0]]
    assert seeds != [tree.random_state for tree in _small_forest(kind, random_state=8)[0]]
    fresh, _ = _small_forest(kind)
    assert [tree.random_state for tree in fresh] == [None] * 4


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_forest_decision_path_matches_apply(kind):
    forest, X = _small_forest(kind, random_state=0)
    indicator, ptr = forest.decision_path(X[:5])
    n_nodes = forest[0].tree_.node_count
    np.testing.assert_array_equal(ptr, np.arange(5) * n_nodes)
    assert indicator.shape == (5, 4 * n_nodes)
    dense = indicator.toarray()
    leaves = forest.apply(X[:5])
    for t, tree in enumerate(forest):
        block = dense[:, ptr[t] : ptr[t + 1]]
        np.testing.assert_array_equal(block, tree.decision_path(X[:5]).toarray())
        assert np.all(block.sum(axis=1) == tree.get_depth() + 1)
        assert np.all(block[np.arange(5), leaves[:, t]] == 1) and np.all(block[:, 0] == 1)


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_verbose_draws_progress_over_trees_and_changes_nothing(kind, monkeypatch, capsys):
    """Check that verbose=1 prints a progress bar over the trees (plain lines without tqdm)
    and that the fit is the same as without it: same trees, same noise, same spend."""
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    quiet, X = _small_forest(kind, random_state=0)
    assert capsys.readouterr().err == ""
    loud, _ = _small_forest(kind, random_state=0, verbose=1)
    lines = capsys.readouterr().err.splitlines()
    name = type(loud).__name__
    assert lines and lines[-1] == f"{name}: 4/4 trees done"
    assert all(line.startswith(f"{name}: ") and line.endswith(" trees done") for line in lines)
    for tq, tl in zip(quiet, loud):
        np.testing.assert_array_equal(tq.tree_.value, tl.tree_.value)
        assert tq.random_state == tl.random_state
    np.testing.assert_array_equal(quiet.predict(X), loud.predict(X))
    assert quiet.privacy_spent_ == loud.privacy_spent_


def test_verbose_uses_tqdm_when_installed(monkeypatch):
    seen = []

    def fake_tqdm(iterable, total, desc, unit, file):
        seen.append((total, desc, unit))
        return iterable

    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = fake_tqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    _small_forest("regressor", random_state=0, verbose=1)
    assert seen == [(4, "RandomForestRegressor", "tree")]
