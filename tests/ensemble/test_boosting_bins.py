# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private quantile bin edges and private bounds_y of histogram gradient boosting: plan, budget, audits."""

import math
import warnings

import numpy as np
import pytest

from dpsk import BudgetAccountant
from dpsk.accounting import ExponentialEvent, ParallelEvent, get_epsilon
from dpsk.audit import audit_estimator, canary_neighbours
from dpsk.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, _gradient_boosting
from dpsk.ensemble._boosting_bins import QuantileEdges
from dpsk.ensemble._gradient_boosting import _combine_leaves
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.utils._sklearn_compat import InvalidParameterError
from dpsk.utils.estimator_checks import check_releases_match_declared_cost


def _skewed(n=4000, seed=0):
    """A feature with 90% zeros and a long tail (capital-gain like) and a uniform one."""
    rng = np.random.default_rng(seed)
    tail = np.where(rng.random(n) < 0.9, 0.0, rng.random(n) * 1000.0)
    X = np.column_stack([tail, rng.random(n)])
    y = ((tail > 300) | (X[:, 1] > 0.8)).astype(int)
    return X, y


def _parallel_levels(event):
    """The ParallelEvent parts of a fit's event (one per level and numeric feature)."""
    found = []

    def walk(e):
        if isinstance(e, ParallelEvent):
            found.append(e)
            return
        for part in getattr(e, "events", ()) or ((e.event,) if hasattr(e, "event") else ()):
            walk(part)

    walk(event)
    return found


def test_quantile_edges_inside_the_one_event():
    """Check bin_strategy="quantile": L levels of 2**l parallel selections per numeric feature inside
    the one spend, the whole fit within its budget, and the edges sorted inside the public range."""
    X, y = _skewed()
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    clf = HistGradientBoostingClassifier(
        bounds=(0.0, 1000.0), bin_strategy="quantile", max_bins=32, classes=[0, 1], accountant=acc, random_state=0
    ).fit(X, y)
    assert len(acc.spent_budget) == 1 and get_epsilon(clf.privacy_spent_, 1e-6) <= 1.0
    levels = _parallel_levels(clf.privacy_spent_)
    assert sorted(len(p.events) for p in levels) == sorted([1, 2, 4, 8, 16] * 2)
    assert all(isinstance(leaf, ExponentialEvent) for p in levels for leaf in p.flatten())
    assert clf.bin_strategy_ == "quantile" and len(clf.bin_edges_) == 2
    for edges in clf.bin_edges_:
        assert np.all(np.diff(edges) > 0) and 0.0 <= edges[0] and edges[-1] <= 1000.0 and edges.size <= 31


def test_skewed_feature_keeps_resolution_in_its_tail():
    """Check the point of recursive medians: a mass at 0 takes one sub-range; the tail gets most edges
    (equal-width bins of [0, 1000] would cut it in 32; exact 32-quantiles put 29 of 31 edges at 0 on such data)."""
    X, y = _skewed(20000)
    clf = HistGradientBoostingClassifier(bounds=(0.0, 1000.0), epsilon=2.0, classes=[0, 1], random_state=0)
    clf.fit(X, y)
    tail_edges = clf.bin_edges_[0][clf.bin_edges_[0] > 1.0]
    assert tail_edges.size >= 10
    assert clf.score(X, y) > 0.95


def test_exact_edges_are_the_recursive_medians():
    """Check the release against its definition at ε = ∞: medians of the sub-ranges, level by level."""
    x = np.arange(1.0, 17.0)[:, None]  # 16 values: 3 levels give the 7 octile-like medians
    edges = QuantileEdges(math.inf, 0.0, 1, 8).release(x, [0.0], [20.0], np.random.default_rng(0))[0]
    assert edges.tolist() == [2.5, 4.5, 6.5, 8.5, 10.5, 12.5, 14.5]


def test_uniform_strategy_and_auto_default():
    X, y = _skewed(1000)
    common = dict(bounds=(0.0, 1000.0), classes=[0, 1], max_iter=2, random_state=0)
    uniform = HistGradientBoostingClassifier(bin_strategy="uniform", **common).fit(X, y)
    auto = HistGradientBoostingClassifier(**common).fit(X, y)
    assert uniform.bin_edges_ is None and uniform.bin_strategy_ == "uniform"
    assert auto.bin_strategy_ == "quantile" and not _parallel_levels(uniform.privacy_spent_)
    # All-categorical X: nothing to cut, nothing spent on edges.
    cats = HistGradientBoostingClassifier(categorical_features=[0], classes=[0, 1], max_iter=2, random_state=0)
    cats.fit(np.repeat([[0.0], [1.0]], 50, axis=0), np.repeat([0, 1], 50))
    assert cats.bin_strategy_ == "uniform" and not _parallel_levels(cats.privacy_spent_)


def test_the_edges_share_leaves_the_trees_less_budget():
    """Check the budget split: the trees get 90% of ρ when the edges take their share (same event total)."""
    X, y = _skewed(1000)
    common = dict(bounds=(0.0, 1000.0), classes=[0, 1], max_iter=3, random_state=0, delta=1e-6)
    quantile = HistGradientBoostingClassifier(bin_strategy="quantile", **common).fit(X, y)
    uniform = HistGradientBoostingClassifier(bin_strategy="uniform", **common).fit(X, y)
    for est in (quantile, uniform):
        assert get_epsilon(est.privacy_spent_, 1e-6) <= 1.0
    assert get_epsilon(quantile.privacy_spent_, 1e-6) == pytest.approx(get_epsilon(uniform.privacy_spent_, 1e-6), 1e-3)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
@pytest.mark.parametrize("n_features", [1, 5])
def test_recording_harness_sees_every_edge_selection(delta, n_features):
    est = HistGradientBoostingClassifier(epsilon=1e4, delta=delta, max_iter=3, bin_strategy="quantile")
    check_releases_match_declared_cost("HistGradientBoostingClassifier", est, n_features=n_features)


@pytest.mark.parametrize("params", [dict(bin_strategy="deciles"), dict(bin_strategy=None)])
def test_bad_bin_strategy_refused_before_any_spend(params):
    acc = BudgetAccountant(epsilon=10.0)
    X, y = _skewed(200)
    with pytest.raises(InvalidParameterError):
        HistGradientBoostingClassifier(accountant=acc, classes=[0, 1], **params).fit(X, y)
    assert acc.spent_budget == []


@pytest.mark.parametrize(
    "params, y_bad",
    [(dict(bounds_y="bogus"), False), (dict(bounds_y="private"), True), (dict(bounds_y=None), True)],
)
def test_regressor_bad_input_refused_before_any_spend(params, y_bad):
    """Check the regressor: an unknown bounds_y, or a non-finite target with bounds_y to be released,
    raises before the accountant is charged."""
    acc = BudgetAccountant(epsilon=10.0)
    X, y = _skewed(200)
    y = y.astype(float)
    if y_bad:
        y[3] = np.nan
    with pytest.raises(ValueError):
        HistGradientBoostingRegressor(accountant=acc, bounds=(0.0, 1000.0), **params).fit(X, y)
    assert acc.spent_budget == []


# -- bounds_y ------------------------------------------------------------------------------


def test_bounds_y_left_out_is_private_inside_the_one_event():
    """Check bounds_y=None: released privately (no PrivacyLeakWarning), one spend within ε;
    "data" keeps the data's range with its warning."""
    rng = np.random.default_rng(3)
    X = rng.random((4000, 2))
    y = 10.0 * X[:, 0] + 5.0
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        reg = HistGradientBoostingRegressor(bounds=(0.0, 1.0), accountant=acc, random_state=0).fit(X, y)
    assert len(acc.spent_budget) == 1 and get_epsilon(reg.privacy_spent_, 1e-6) <= 1.0
    lower, upper = reg.bounds_y_
    assert lower <= 6.0 and upper >= 14.0 and upper - lower < 100.0
    assert reg.score(X, y) > 0.8
    with pytest.warns(PrivacyLeakWarning):
        data = HistGradientBoostingRegressor(bounds=(0.0, 1.0), bounds_y="data", max_iter=2, random_state=0).fit(X, y)
    assert data.bounds_y_ == (float(y.min()), float(y.max()))


# -- audits --------------------------------------------------------------------------------


class _NoiseFreeEdges(HistGradientBoostingClassifier):
    """Declares the quantile edges' cost but releases the exact recursive medians."""

    def _released_edges(self, edges, X, lower, upper, rng):
        super()._released_edges(edges, X, lower, upper, rng)
        return QuantileEdges(math.inf, 0.0, X.shape[1], self.max_bins).release(X, lower, upper, rng)


class _NoiseFreeBoundsY(HistGradientBoostingRegressor):
    """Declares the private bounds_y but uses the target's exact range."""

    def _released_bounds_y(self, plan, y):
        super()._released_bounds_y(plan, y)
        return y.min(axis=0), y.max(axis=0)


def _median_neighbours(estimator=None, n=60):
    """Half the rows at 0.2, half at 0.8; the canary at 0.8 moves the exact median from 0.5 to 0.8."""
    X = np.repeat([[0.2], [0.8]], n // 2, axis=0)
    return canary_neighbours(X, np.arange(n) % 2, canary_X=[0.8], canary_y=0)


def _target_neighbours(estimator=None, n=60):
    return canary_neighbours(np.full((n, 1), 0.5), np.linspace(-1.0, 1.0, n), canary_X=[0.5], canary_y=1000.0)


_EDGE_PARAMS = dict(
    max_iter=1, max_depth=1, max_bins=2, epsilon=2.0, delta=0.0, bounds=(0.0, 1.0), bin_strategy="quantile"
)


@pytest.mark.audit
def test_audit_quantile_edges():
    """Check the edge release against the fit's claim; rejected when the exact medians are released."""

    def project(est):
        return np.array([est.bin_edges_[0][0]])

    good = audit_estimator(
        HistGradientBoostingClassifier(classes=[0, 1], **_EDGE_PARAMS),
        _median_neighbours(),
        project,
        n_samples=2000,
        random_state=0,
    )
    assert good.passed, str(good)
    bad = audit_estimator(
        _NoiseFreeEdges(classes=[0, 1], **_EDGE_PARAMS), _median_neighbours(), project, n_samples=2000, random_state=0
    )
    assert not bad.passed, str(bad)


@pytest.mark.audit
def test_audit_private_bounds_y():
    """Check the private bounds_y against the fit's claim; rejected when the exact range is used."""
    params = dict(max_iter=1, max_depth=1, max_bins=2, epsilon=2.0, delta=0.0, bounds=(0.0, 1.0))

    def project(est):
        return np.array([est.bounds_y_[1]])

    good = audit_estimator(
        HistGradientBoostingRegressor(**params), _target_neighbours(), project, n_samples=2000, random_state=0
    )
    assert good.passed, str(good)
    bad = audit_estimator(_NoiseFreeBoundsY(**params), _target_neighbours(), project, n_samples=2000, random_state=0)
    assert not bad.passed, str(bad)


# -- leaves of cyclic trees ------------------------------------------------------------------


class _FakeNoise:
    """The two noise std's ``_combine_leaves`` reads (grid steps)."""

    def __init__(self, leaf, level):
        self._std = {"leaf": leaf, "level": level}

    def std(self, part, kind):
        return self._std[kind]


def test_combined_leaves_weigh_both_estimates_by_their_variance():
    """Check the post-processing of cyclic leaves: a leaf of b bins mixes its released sum (variance
    σ_l²) and the root's cells over its bins (b σ_r²) by inverse variance; a leaf without bins is 0;
    without noise the released sums are kept."""
    leaf_bins = np.array([[1, 0, 0, 0], [0, 1, 1, 1], [0, 0, 0, 0]], dtype=bool)
    root_cells = np.arange(1.0, 5.0)[None, None, :, None]  # bins hold 1, 2, 3, 4
    root_h = root_cells + 10.0  # hessians well above their noise: every bin held
    leaves = np.array([[3.0], [6.0], [5.0]])
    G, H, std_h = _combine_leaves((leaves, leaves), (root_cells, root_h), leaf_bins, _FakeNoise(1.0, 1.0), (1, 1))
    # b = 1: (3 + 1) / 2; b = 3: (6 · 3 + 9 · 1) / 4; b = 0: 0. Hessians: (3 + 11) / 2, (6 · 3 + 39) / 4.
    np.testing.assert_allclose(G[:, 0], [2.0, 27.0 / 4.0, 0.0])
    np.testing.assert_allclose(H[:, 0], [7.0, 57.0 / 4.0, 0.0])
    np.testing.assert_allclose(std_h[:, 0], [math.sqrt(0.5), math.sqrt(0.75), 0.0])
    exact = _combine_leaves((leaves, leaves), (root_cells, root_h), leaf_bins, _FakeNoise(0.0, 0.0), (1, 1))
    np.testing.assert_allclose(exact[0], leaves)


def test_combined_leaves_leave_out_bins_within_their_noise():
    """Check that a bin whose noisy hessian sum is within MIN_SNR (2) noise std of 0 (an empty code)
    is left out of the root's estimate: it would add its noise, not its rows."""
    leaf_bins = np.array([[1, 1, 0, 0]], dtype=bool)
    root_g = np.arange(1.0, 5.0)[None, None, :, None]
    root_h = np.array([1.0, 20.0, 20.0, 20.0])[None, None, :, None]  # bin 0: below 2 σ
    leaves = np.array([[3.0]])
    G, _, std_h = _combine_leaves((leaves, leaves), (root_g, root_h), leaf_bins, _FakeNoise(1.0, 1.0), (1, 1))
    # b = 1 (bin 1 only): (3 + 2) / 2, not b = 2: (3 · 2 + 3 · 1) / 3.
    np.testing.assert_allclose(G[:, 0], [2.5])
    np.testing.assert_allclose(std_h[:, 0], [math.sqrt(0.5)])


def test_cyclic_leaf_sums_are_the_combined_estimates(monkeypatch):
    """Check the fit uses the combination: a leaf's stored sums lie between its release and the root's
    cells (ε small enough for both to differ), and ε = ∞ keeps the exact sums."""
    monkeypatch.setattr(_gradient_boosting, "EMPTY_BINS", False)  # every bin of the leaf in the root's estimate
    X, y = _skewed(2000)
    clf = HistGradientBoostingClassifier(
        bounds=(0.0, 1000.0),
        bin_strategy="uniform",
        thresholds="gain",
        epsilon=0.5,
        max_iter=1,
        max_depth=1,
        classes=[0, 1],
    )
    clf.fit(X, y)
    (G_root, _), (G_leaves, _) = clf._released[1], clf._released[2]
    left = clf._mask[0, 0].astype(bool)
    derived = np.array([G_root[0, 0, left, 0].sum(), G_root[0, 0, ~left, 0].sum()])
    released = G_leaves[:, 0, 0, 0]
    stored = clf.leaf_sums_[0, :, 0, 0]
    low, high = np.minimum(derived, released), np.maximum(derived, released)
    assert np.all((low - 1e-9 <= stored) & (stored <= high + 1e-9)) and not np.allclose(stored, released)
