# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public staggered cuts of histogram gradient boosting (``thresholds="grid"``): plan, fit, audit."""

import math

import numpy as np
import pytest

from dpsk import BudgetAccountant
from dpsk.accounting import ZCDPEvent, get_epsilon, zcdp_rho
from dpsk.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from dpsk.ensemble._boosting_plan import CLASSIFIER_CLIP, _Noise, auto_thresholds, grid_masks
from dpsk.utils.estimator_checks import check_releases_match_declared_cost


def _easy(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0.75).astype(int)


def test_grid_masks_are_staggered_complete_trees():
    """Check the public cuts: the root cuts near the middle, moved by the visit (4 offsets, then
    again), every leaf a run of consecutive bins, the leaves a partition of the used bins."""
    roots = [int(grid_masks(32, 32, 3, visit)[0].sum()) for visit in range(8)]
    assert roots == [14, 15, 16, 17] * 2
    for visit in range(4):
        masks = grid_masks(20, 32, 3, visit).astype(bool)
        leaf = np.zeros(20, dtype=int)
        for b in range(20):  # walk each bin down the tree (level order, level-local indices)
            m = 0
            for level in range(3):
                m = 2 * m + (0 if masks[2**level - 1 + m, b] else 1)
            leaf[b] = m
        assert np.all(np.diff(leaf) >= 0)  # runs of consecutive bins, in order
        assert len(np.unique(leaf)) == 8
    # A node of one bin sends it left; fewer used bins than leaves leave leaves empty.
    tiny = grid_masks(2, 4, 2, 0)
    assert tiny[0, :1].all() and not tiny[0, 1:].any() and tiny[1, 0] == 1 and tiny[2, 1] == 1


def test_grid_plan_gives_the_leaves_the_tree_weight():
    """Check the plan: a public-cut round releases its leaves once with the weight of the tree's two
    releases (noise std 1/√2 of a leaf release's), the event within ρ and ε."""
    noise = _Noise(1.0, 1e-6, 100, 1, 1, 1, 1.0, 60)
    leaves = noise.event.flatten()
    assert len(leaves) == 2 * (1 + 40 * 2 + 60)
    assert all(isinstance(leaf, ZCDPEvent) for leaf in leaves)
    assert sum(leaf.rho for leaf in leaves) <= zcdp_rho(1.0, 1e-6) * (1 + 1e-9)
    assert get_epsilon(noise.event, 1e-6) <= 1.0
    assert noise.std("g", "grid") == pytest.approx(noise.std("g", "leaf") / math.sqrt(2), rel=1e-3)
    laplace = _Noise(1.0, 0.0, 10, 1, 1, 1, 1.0, 10).event.flatten()
    assert len(laplace) == 2 * (1 + 10) and sum(leaf.epsilon for leaf in laplace) <= 1.0 * (1 + 1e-9)


def test_grid_fit_releases_leaves_only_on_numeric_rounds():
    """Check a fit with public cuts: numeric rounds release their leaves only, categorical rounds
    still their root histogram and leaves; one spend within ε; the cuts are ``grid_masks``'."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.random(3000), rng.integers(0, 4, 3000)]).astype(float)
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] == 2)).astype(int)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    clf = HistGradientBoostingClassifier(
        max_iter=6, thresholds="grid", categorical_features=[1], bounds=(0, 1), classes=[0, 1], accountant=acc
    )
    clf.set_params(random_state=0, bin_strategy="uniform").fit(X, y)
    assert clf.thresholds_ == "grid"
    assert len(clf._released) == 1 + 3 * 1 + 3 * 2
    assert len(acc.spent_budget) == 1 and get_epsilon(clf.privacy_spent_, 1e-6) <= 1.0
    for t in (0, 2, 4):
        np.testing.assert_array_equal(clf._mask[t], grid_masks(32, 32, 3, t // 2))
    gain = HistGradientBoostingClassifier(
        max_iter=6, thresholds="gain", categorical_features=[1], bounds=(0, 1), classes=[0, 1]
    )
    assert len(gain.set_params(random_state=0).fit(X, y)._released) == 1 + 6 * 2 and gain.thresholds_ == "gain"


def test_grid_quantile_bins_cut_the_used_bins():
    """Check that the cuts run over the bins the released quantile edges make (post-processing)."""
    X, y = _easy(4000)
    X[:, 2] = np.round(X[:, 2] * 3)  # 4 distinct values: few distinct edges
    clf = HistGradientBoostingClassifier(max_iter=3, thresholds="grid", bounds=(0, 3), classes=[0, 1], random_state=0)
    clf.fit(X, y)
    used = min(32, len(clf.bin_edges_[2]) + 1)
    np.testing.assert_array_equal(clf._mask[2], grid_masks(used, 32, 3, 0))


def test_grid_learns_and_infinite_epsilon_is_exact():
    """Check the public cuts learn at ε = 1 (classifier and regressor) and that at ε = ∞ the leaf
    sums are the exact sums of the leaves' clipped gradients (no noise; up to the grid's truncation)."""
    X, y = _easy(20000)
    clf = HistGradientBoostingClassifier(max_iter=20, thresholds="grid", bounds=(0, 1), classes=[0, 1], random_state=0)
    assert clf.fit(X, y).score(X, y) > 0.9
    reg = HistGradientBoostingRegressor(max_iter=30, thresholds="grid", bounds=(0, 1), bounds_y=(0, 2), random_state=0)
    assert reg.fit(X, X[:, 0] + X[:, 1]).score(X, X[:, 0] + X[:, 1]) > 0.9
    exact = HistGradientBoostingClassifier(
        max_iter=1, thresholds="grid", bounds=(0, 1), classes=[0, 1], epsilon=math.inf, bin_strategy="uniform"
    ).fit(X[:500], y[:500])
    assert exact.feature_schedule_ == "cyclic"
    bins = np.minimum((X[:500, 0] * 32).astype(int), 31)
    leaf = np.zeros(500, dtype=int)
    for level in range(3):
        leaf = 2 * leaf + 1 - exact._mask[0, 2**level - 1 + leaf, bins]
    p = 1 / (1 + np.exp(-exact.baseline_[0]))
    np.testing.assert_allclose(
        exact.leaf_sums_[0, :, 0, 0], np.bincount(leaf, p - y[:500], 8), atol=500 / 4096
    )  # truncation


@pytest.mark.parametrize("n_features", [1, 5])
@pytest.mark.parametrize(
    "estimator",
    [
        HistGradientBoostingClassifier(thresholds="grid", max_iter=7, categorical_features=[0]),
        HistGradientBoostingRegressor(thresholds="grid", max_iter=7),
        HistGradientBoostingClassifier(thresholds="grid", max_iter=7, delta=0.0),
    ],
    ids=["classifier-categorical", "regressor", "classifier-laplace"],
)
def test_grid_releases_match_declared_cost(estimator, n_features):
    """Check the recording harness on the public-cut path: the releases made are the event's leaves."""
    check_releases_match_declared_cost(type(estimator).__name__, estimator, n_features=n_features)


def test_grid_needs_the_cyclic_schedule():
    """Check that thresholds="grid" with features drawn per node is refused before any spend."""
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5)
    X, y = _easy(100)
    with pytest.raises(ValueError, match="cyclic"):
        HistGradientBoostingClassifier(thresholds="grid", max_features=1, bounds=(0, 1), classes=[0, 1]).set_params(
            accountant=acc
        ).fit(X, y)
    assert len(acc.spent_budget) == 0


# -- thresholds="auto", the default ------------------------------------------------------


def test_auto_thresholds_is_a_public_rule():
    """Check the default's rule: public cuts under the cyclic schedule with a finite budget, cuts by
    gain with features drawn per node or at ε = ∞; a function of those public values only."""
    for epsilon in (1e-3, 0.1, 1.0, 5.0, 1e6):
        assert auto_thresholds(epsilon, cyclic=True) == "grid"
        assert auto_thresholds(epsilon, cyclic=False) == "gain"
    assert auto_thresholds(math.inf, cyclic=True) == "gain"


@pytest.mark.parametrize("delta", [1e-6, 0.0])
def test_default_fit_uses_public_cuts_and_the_clip(delta):
    """Check the defaults resolve as documented: thresholds_ "grid" (numeric rounds release their
    leaves only), the classifier's clip 0.7; features per node and ε = ∞ keep the cuts by gain."""
    X, y = _easy(3000)
    clf = HistGradientBoostingClassifier(max_iter=6, delta=delta, bounds=(0, 1), classes=[0, 1], random_state=0)
    clf.fit(X, y)
    assert clf.thresholds_ == "grid" and clf.clip_gradients_ == CLASSIFIER_CLIP == 0.7
    assert len(clf._released) == 1 + 6  # baseline, then one leaf release per (numeric) round
    drawn = HistGradientBoostingClassifier(max_iter=3, max_features=1, bounds=(0, 1), classes=[0, 1], random_state=0)
    assert drawn.fit(X, y).thresholds_ == "gain"
    exact = HistGradientBoostingClassifier(max_iter=3, epsilon=math.inf, bounds=(0, 1), classes=[0, 1])
    assert exact.fit(X, y).thresholds_ == "gain" and exact.feature_schedule_ == "all"
    reg = HistGradientBoostingRegressor(max_iter=3, bounds=(0, 1), bounds_y=(0, 2), random_state=0)
    assert reg.fit(X, X[:, 0]).thresholds_ == "grid"


@pytest.mark.parametrize(
    "estimator",
    [
        HistGradientBoostingClassifier(),
        HistGradientBoostingClassifier(categorical_features=[0]),
        HistGradientBoostingRegressor(),
        HistGradientBoostingClassifier(delta=0.0),
    ],
    ids=["classifier", "classifier-categorical", "regressor", "classifier-laplace"],
)
def test_default_fit_spends_what_it_declares(estimator):
    """Check the default fit (``max_iter="auto"``: the row count, the private box, the quantile edges
    and the public-cut rounds) against the recording harness: the releases made are the event's leaves."""
    check_releases_match_declared_cost(type(estimator).__name__, estimator, n_features=4)
