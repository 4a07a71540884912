# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Histogram gradient boosting with differential privacy: kernel, estimators, budget, audits."""

import math

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier as SkHGB
from threadpoolctl import threadpool_limits

from dpsk import BudgetAccountant
from dpsk._core._hist_boost import bin_features, node_histograms, raw_predictions, route
from dpsk.accounting import PureDPEvent, ZCDPEvent, get_epsilon, zcdp_rho
from dpsk.accounting._events import DiscreteLaplaceEvent
from dpsk.audit import audit_estimator, canary_neighbours
from dpsk.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from dpsk.ensemble._boosting_plan import auto_schedule
from dpsk.ensemble._gradient_boosting import _Noise, _quantise
from dpsk.exceptions import BudgetExceededError
from dpsk.utils._testing.registry import ESTIMATOR_AUDITS

# -- kernel ------------------------------------------------------------------------------


def test_bin_features_public_bounds_and_categories():
    """Check equal-width bins of the bounds (values outside clipped) and clipped category codes."""
    X = np.array([[-5.0, 0.0], [0.0, 2.7], [0.49, 9.0], [0.5, -1.0], [1.0, 3.0], [7.0, 1.0]])
    binned = bin_features(X, [0.0, 0.0], [1.0, 0.0], 4, [0, 1])
    np.testing.assert_array_equal(binned[:, 0], [0, 0, 1, 2, 3, 3])
    np.testing.assert_array_equal(binned[:, 1], [0, 2, 3, 0, 3, 1])
    with pytest.raises(ValueError, match="NaN"):
        bin_features(np.array([[np.nan]]), [0.0], [1.0], 4, [0])


def test_node_histograms_are_exact_integer_sums():
    """Check the kernel against np.add.at, for any row order and number of threads."""
    rng = np.random.default_rng(0)
    n, d, n_bins, K = 5000, 4, 7, 2
    binned = rng.integers(0, n_bins, (n, d)).astype(np.uint8)
    node = rng.integers(-1, 3, n).astype(np.intp)
    features = np.array([[0, 2], [3, 1], [1, 1]], dtype=np.intp)
    grad = rng.integers(-(2**12), 2**12, (n, K)).astype(np.int64)
    hess = rng.integers(0, 2**12, (n, K)).astype(np.int64)
    hg, hh = node_histograms(binned, node, features, grad, hess, n_bins, n_threads=2)
    want_g = np.zeros_like(hg)
    want_h = np.zeros_like(hh)
    for i in np.flatnonzero(node >= 0):
        for j in range(features.shape[1]):
            want_g[node[i], j, binned[i, features[node[i], j]]] += grad[i]
            want_h[node[i], j, binned[i, features[node[i], j]]] += hess[i]
    np.testing.assert_array_equal(hg, want_g)
    np.testing.assert_array_equal(hh, want_h)
    perm = rng.permutation(n)
    again = node_histograms(binned[perm], node[perm], features, grad[perm], hess[perm], n_bins, n_threads=1)
    np.testing.assert_array_equal(again[0], hg)


def test_route_and_raw_predictions_agree():
    """Check that routing level by level reaches the leaf whose value raw_predictions adds."""
    rng = np.random.default_rng(1)
    binned = rng.integers(0, 4, (300, 3)).astype(np.uint8)
    depth = 2
    feature = rng.integers(0, 3, (1, 3)).astype(np.intp)
    mask = rng.integers(0, 2, (1, 3, 4)).astype(np.uint8)
    values = rng.normal(size=(1, 4, 1))
    node = np.zeros(300, dtype=np.intp)
    for level in range(depth):
        first = 2**level - 1
        route(binned, node, np.ascontiguousarray(feature[0, first : 2 * first + 1]), mask[0, first : 2 * first + 1])
    np.testing.assert_array_equal(raw_predictions(binned, feature, mask, values, depth)[:, 0], values[0, node, 0])


def test_quantise_keeps_every_row_within_the_grid_norm():
    """Check that clipped, truncated integer rows never exceed the grid in L2 norm (sensitivity)."""
    rng = np.random.default_rng(2)
    values = np.concatenate([rng.normal(size=(2000, 3)) * 10.0, np.full((1, 3), 1 / math.sqrt(3)), np.eye(3)])
    steps = _quantise(values, 1.0, 2**12)
    assert (np.einsum("ij,ij->i", steps, steps) <= 2**24).all()
    assert np.abs(steps).max() <= 2**12


def test_one_feature_nodes_histograms_are_the_roots_restricted():
    """Check what the cyclic trees rely on: when every node splits one feature, a node's exact
    histogram of that feature is the root's restricted to the bins the node holds."""
    rng = np.random.default_rng(8)
    n, n_bins = 3000, 6
    binned = rng.integers(0, n_bins, (n, 2)).astype(np.uint8)
    grad = rng.integers(-50, 50, (n, 1)).astype(np.int64)
    hess = rng.integers(0, 50, (n, 1)).astype(np.int64)
    node = np.zeros(n, dtype=np.intp)
    root = node_histograms(binned, node, np.zeros((1, 1), dtype=np.intp), grad, hess, n_bins)
    node_bins = np.ones((1, n_bins), dtype=bool)
    for level in range(3):
        n_nodes = 2**level
        masks = rng.integers(0, 2, (n_nodes, n_bins)).astype(np.uint8)
        route(binned, node, np.zeros(n_nodes, dtype=np.intp), masks)
        node_bins = np.stack([node_bins & masks.astype(bool), node_bins & ~masks.astype(bool)], 1).reshape(-1, n_bins)
        exact = node_histograms(binned, node, np.zeros((2 * n_nodes, 1), dtype=np.intp), grad, hess, n_bins)
        for got, whole in zip(exact, root):
            np.testing.assert_array_equal(got, whole[0][None] * node_bins[:, None, :, None])


def test_cyclic_trees_release_once_per_level_zero():
    """Check the releases per tree: 2 under the cyclic schedule (root histogram, leaves), depth + 1
    with features drawn per node."""
    X, y = _easy(2000)
    params = dict(max_iter=4, max_depth=3, bounds=(0, 1), bin_strategy="uniform", classes=[0, 1], random_state=0)
    cyclic = HistGradientBoostingClassifier(thresholds="gain", **params).fit(X, y)
    drawn = HistGradientBoostingClassifier(max_features=1, **params).fit(X, y)
    assert len(cyclic._released) == 1 + 4 * 2
    assert len(drawn._released) == 1 + 4 * 4
    assert len(cyclic.privacy_spent_.flatten()) == 2 * (1 + 4 * 2)


# -- privacy plan ------------------------------------------------------------------------


def test_one_event_within_the_budget():
    """Check the fit's one event: per-release zCDP costs summing to at most zcdp_rho(ε, δ) (so at
    most ε at δ), per-release ε's summing to at most ε with delta=0, and ∞ at ε = ∞."""
    noise = _Noise(1.0, 1e-6, 100, 3, 1, 1)
    leaves = noise.event.flatten()
    assert len(leaves) == 2 * (1 + 100 * 4)
    assert all(isinstance(leaf, ZCDPEvent) for leaf in leaves)
    assert sum(leaf.rho for leaf in leaves) <= zcdp_rho(1.0, 1e-6) * (1 + 1e-9)
    assert get_epsilon(noise.event, 1e-6) <= 1.0
    laplace = _Noise(1.0, 0.0, 10, 2, 3, 2).event.flatten()
    assert all(isinstance(leaf, PureDPEvent) for leaf in laplace)
    assert sum(leaf.epsilon for leaf in laplace) <= 1.0 * (1 + 1e-9)
    assert math.isinf(get_epsilon(_Noise(math.inf, 0.0, 10, 2, 3, 1).event, 0.5))


def test_auto_schedule_is_a_public_rule():
    """Check the "auto" rounds: more with ε and n, within [max(10, min(d, 50)), 200], 200 at ε = ∞,
    and a learning rate of 3 d / T (at most 1)."""
    rounds = [auto_schedule(e, 1e-6, 32561, 13, 3)[0] for e in (0.1, 0.5, 1.0, 2.0, 5.0)]
    assert rounds == sorted(rounds) and rounds[0] == 13 and rounds[-1] == 200 and 13 < rounds[2] < 200
    assert auto_schedule(1.0, 1e-6, 5000, 13, 3)[0] < rounds[2]
    assert auto_schedule(0.1, 0.0, 1000, 3, 3) == (10, 0.9)
    assert auto_schedule(math.inf, 0.0, 10, 100, 3)[0] == 200
    n_iter, lr = auto_schedule(1.0, 1e-6, 32561, 13, 3)
    assert lr == pytest.approx(min(1.0, 39 / n_iter))


def test_auto_rounds_count_rows_inside_the_one_event():
    """Check max_iter="auto": a noisy row count (discrete Laplace event) composed into the one spend,
    the fit within ε; explicit max_iter (and ε = ∞) release no count."""
    X, y = _easy(3000)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    clf = HistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1], accountant=acc, random_state=0).fit(X, y)
    leaves = clf.privacy_spent_.flatten()
    assert sum(isinstance(leaf, DiscreteLaplaceEvent) for leaf in leaves) == 1
    assert len(acc.spent_budget) == 1 and get_epsilon(clf.privacy_spent_, 1e-6) <= 1.0
    assert clf.n_rows_ != 3000 and abs(clf.n_rows_ - 3000) < 3000
    assert clf.n_iter_ == auto_schedule(0.99, 1e-6, clf.n_rows_, 3, 3)[0]
    fixed = HistGradientBoostingClassifier(max_iter=7, bounds=(0, 1), classes=[0, 1], random_state=0).fit(X, y)
    assert fixed.n_rows_ == 3000 and fixed.n_iter_ == 7 and fixed.learning_rate_ == 1.0  # min(1, 3 · 3 / 7)
    assert not any(isinstance(leaf, DiscreteLaplaceEvent) for leaf in fixed.privacy_spent_.flatten())


# -- estimators --------------------------------------------------------------------------


def _easy(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0.75).astype(int)


def test_classifier_learns_and_records_one_spend():
    """Check accuracy on easy data at ε = 1 and one spend on the accountant, equal to privacy_spent_."""
    X, y = _easy(20000)
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    clf = HistGradientBoostingClassifier(
        max_iter=20, bounds=(0, 1), classes=[0, 1], accountant=acc, random_state=0, delta=1e-6
    )
    clf.fit(X, y)
    assert clf.score(X, y) > 0.9
    assert len(acc.spent_budget) == 1
    assert get_epsilon(clf.privacy_spent_, 1e-6) <= 1.0
    proba = clf.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-clf.decision_function(X[:5]))))


def test_multiclass_and_categorical():
    """Check the softmax loss and categorical splits (any set of categories) at ε = ∞."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 6, 3000), rng.random(3000)]).astype(float)
    y = np.where(np.isin(X[:, 0], [1, 4]), 2, (X[:, 1] > 0.5).astype(int))
    clf = HistGradientBoostingClassifier(
        max_iter=30,
        max_bins=8,
        max_features=1.0,
        categorical_features=[0],
        bounds=(0, 1),
        classes=[0, 1, 2],
        epsilon=math.inf,
        random_state=0,
    )
    assert clf.fit(X, y).score(X, y) > 0.97
    assert clf.decision_function(X[:3]).shape == (3, 3)


def test_regressor_learns():
    """Check R² on a smooth target at ε = 1 and predictions inside bounds_y."""
    rng = np.random.default_rng(4)
    X = rng.random((20000, 2))
    y = 10 * X[:, 0] + 2 * X[:, 1]
    reg = HistGradientBoostingRegressor(max_iter=30, bounds=(0, 1), bounds_y=(0, 12), random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.9
    pred = reg.predict(X)
    assert pred.min() >= 0 and pred.max() <= 12


def test_infinite_epsilon_close_to_sklearn():
    """Check that ε = ∞ (no noise) learns as well as scikit-learn's boosting on the same data, within 2 points."""
    X, y = _easy(3000, seed=5)
    X_test, y_test = _easy(3000, seed=6)
    ours = HistGradientBoostingClassifier(
        max_iter=30, max_features=1.0, bounds=(0, 1), classes=[0, 1], epsilon=math.inf, random_state=0
    )
    sk = SkHGB(max_iter=30, learning_rate=0.3, max_depth=3, max_bins=32, early_stopping=False, random_state=0)
    with threadpool_limits(1):  # OpenMP threads on a shared machine: slower, not faster
        sk.fit(X, y)
    assert ours.fit(X, y).score(X_test, y_test) >= sk.score(X_test, y_test) - 0.02


def test_budget_checked_before_data_is_read():
    """Check that a fit beyond the budget raises before X is validated (NaN in X not reported)."""
    X = np.full((10, 2), np.nan)
    acc = BudgetAccountant(epsilon=0.5, delta=1e-5)
    with pytest.raises(BudgetExceededError):
        HistGradientBoostingClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1], accountant=acc).fit(X, [0, 1] * 5)


def test_bad_input_refused_before_any_spend():
    """Check that NaN in X raises before anything is spent."""
    X = np.zeros((10, 2))
    X[3, 1] = np.nan
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5)
    with pytest.raises(ValueError):
        HistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1], accountant=acc).fit(X, [0, 1] * 5)
    assert len(acc.spent_budget) == 0


def test_seeded_fits_reproducible_and_noise_decreases_with_epsilon():
    """Check that the same seed gives the same model and a larger ε a closer one to ε = ∞."""
    X, y = _easy(3000)
    params = dict(max_iter=5, bounds=(0, 1), classes=[0, 1], random_state=0)
    a = HistGradientBoostingClassifier(**params).fit(X, y)
    b = HistGradientBoostingClassifier(**params).fit(X, y)
    np.testing.assert_array_equal(a.leaf_sums_, b.leaf_sums_)
    exact = HistGradientBoostingClassifier(**params, epsilon=math.inf).fit(X, y).baseline_
    far = [abs(HistGradientBoostingClassifier(**params, epsilon=e).fit(X, y).baseline_ - exact)[0] for e in (0.1, 100)]
    assert far[1] < far[0]


# -- privacy audits ----------------------------------------------------------------------


class _Unclipped(HistGradientBoostingClassifier):
    """Declares clip_gradients but puts gradients on the grid unclipped (sensitivity too small)."""

    def _to_grid(self, values, bound, grid):
        return np.ascontiguousarray(np.trunc(values * (grid / bound)), dtype=np.int64)


class _EpsilonX2(HistGradientBoostingClassifier):
    """Declares the event of ε but draws the noise of 2ε."""

    def _noise_plan(self, epsilon, delta, *args):
        honest = super()._noise_plan(epsilon, delta, *args)
        actual = super()._noise_plan(2 * epsilon, delta, *args)
        actual.event = honest.event
        return actual


class _NoiseFreeSplits(HistGradientBoostingClassifier):
    """Chooses splits from the exact histograms (the leaves still get noise)."""

    def _split_inputs(self, noisy, exact):
        return exact


class _NoiseFreeCount(HistGradientBoostingClassifier):
    """Releases the row count of max_iter="auto" without noise (declaring its cost)."""

    def _row_count(self, epsilon, n_rows, rng, *, needed):
        count = super()._row_count(epsilon, n_rows, rng, needed=needed)
        count.value = float(n_rows)
        return count


def _count_neighbours(estimator=None, n=50):
    return canary_neighbours(np.zeros((n, 1)), np.repeat([0, 1], n // 2), canary_X=[0.0], canary_y=0)


@pytest.mark.audit
def test_audit_auto_rounds_count():
    """Check the count behind max_iter="auto" against its claim; rejected when released noise-free."""
    params = dict(max_depth=1, max_bins=2, epsilon=2.0, delta=0.0, bounds=(-1.0, 1.0), classes=[0, 1])
    params["learning_rate"] = 1.0

    def project(est):
        return np.array([est.n_rows_])

    good = _audit(HistGradientBoostingClassifier(**params), _count_neighbours(), project, 3000)
    assert good.passed, str(good)
    bad = _audit(_NoiseFreeCount(**params), _count_neighbours(), project, 3000)
    assert not bad.passed, str(bad)


class _NoiseFreeBox(HistGradientBoostingClassifier):
    """bounds="private" declared, but the numeric columns' exact range used as the box."""

    def _released_box(self, plan, X):
        super()._released_box(plan, X)
        return X.min(axis=0), X.max(axis=0)


def test_private_bounds_box_inside_the_one_event():
    """Check bounds="private": the numeric columns' box released inside the one spend (its pure-ε
    share composed with the trees'), categorical columns untouched, the fit within ε."""
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.random(4000) * 50.0, rng.integers(0, 4, 4000)]).astype(float)
    y = (X[:, 0] > 25).astype(int)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    clf = HistGradientBoostingClassifier(
        bounds="private", categorical_features=[1], classes=[0, 1], accountant=acc, random_state=0
    ).fit(X, y)
    assert len(acc.spent_budget) == 1 and get_epsilon(clf.privacy_spent_, 1e-6) <= 1.0
    assert any(isinstance(leaf, PureDPEvent) for leaf in clf.privacy_spent_.flatten())
    lower, upper = clf.bounds_
    assert lower[0] < 25 < upper[0] and (lower[1], upper[1]) == (0.0, 32.0)
    assert clf.score(X, y) > 0.9


def _box_neighbours(estimator=None, n=60):
    return canary_neighbours(np.full((n, 1), 0.5), np.repeat([0, 1], n // 2), canary_X=[1000.0], canary_y=0)


@pytest.mark.audit
def test_audit_private_bounds():
    """Check the private box against the fit's claim; rejected when the exact range is used."""
    params = dict(max_iter=1, max_depth=1, max_bins=2, epsilon=2.0, delta=0.0, bounds="private", classes=[0, 1])

    def project(est):
        return np.array([est.bounds_[1][0]])

    good = _audit(HistGradientBoostingClassifier(**params), _box_neighbours(), project, 3000)
    assert good.passed, str(good)
    bad = _audit(_NoiseFreeBox(**params), _box_neighbours(), project, 3000)
    assert not bad.passed, str(bad)


def _split_neighbours(estimator=None, n=200):
    """Rows at both ends (bins 0 and 2) labelled 0 and 1; a canary labelled 0 alone in the middle bin.

    Without the canary the middle bin is empty and both cuts tie; with it, the cut that
    puts it with the other 0s wins: noise-free gains move the split with certainty.
    """
    X = np.repeat([[-1.0], [1.0]], n // 2, axis=0)
    return canary_neighbours(X, np.repeat([0, 1], n // 2), canary_X=[0.0], canary_y=0)


def _middle_bin_goes_left(est):
    return np.array([float(est._mask[0, 0, 1])])


def _audit(estimator, neighbours, projection, n_samples):
    return audit_estimator(estimator, neighbours, projection, n_samples=n_samples, random_state=0)


@pytest.mark.audit
@pytest.mark.parametrize("broken", [_Unclipped, _EpsilonX2])
@pytest.mark.extended
def test_audit_rejects_broken_releases(broken):
    """Check the audit's power: unclipped gradients and noise for 2ε fail on the registry's canary."""
    case = ESTIMATOR_AUDITS["HistGradientBoostingClassifier"]
    estimator = broken(**case.estimator.get_params())
    result = _audit(estimator, case.neighbours(estimator), case.projection, case.n_samples)
    assert not result.passed, str(result)


@pytest.mark.audit
def test_audit_accepts_gaussian_path():
    """Check the discrete Gaussian path (delta > 0) on the registry's canary against its zCDP claim."""
    case = ESTIMATOR_AUDITS["HistGradientBoostingClassifier"]
    estimator = HistGradientBoostingClassifier(**{**case.estimator.get_params(), "delta": 1e-5})
    result = _audit(estimator, case.neighbours(estimator), case.projection, case.n_samples)
    assert result.passed, str(result)


@pytest.mark.audit
def test_audit_split_choice():
    """Check the split choice: private from the noisy histograms, rejected when chosen noise-free."""
    params = {
        **ESTIMATOR_AUDITS["HistGradientBoostingClassifier"].estimator.get_params(),
        "clip_gradients": 0.25,
        "thresholds": "gain",  # the split choice by noisy gain (public cuts choose nothing)
    }
    good = _audit(HistGradientBoostingClassifier(**params), _split_neighbours(), _middle_bin_goes_left, 3000)
    assert good.passed, str(good)
    bad = _audit(_NoiseFreeSplits(**params), _split_neighbours(), _middle_bin_goes_left, 3000)
    assert not bad.passed, str(bad)


class _GridNoiseFreeLeaves(HistGradientBoostingClassifier):
    """Public cuts whose leaf release is declared at the tree's weight but carries no noise."""

    def _noise_plan(self, *args):
        noise = super()._noise_plan(*args)
        release = noise.release

        def leaky(values, part, kind, rng):
            out = release(values, part, kind, rng)
            return np.array(values, dtype=np.float64) if kind == "grid" else out

        noise.release = leaky
        return noise


def _project_grid(est):
    """The noisy sums a canary in the top bin moves: baseline and the leaves' (G and H each)."""
    (G0, H0), (G1, H1) = est._released[0], est._released[1]
    return np.array([G0.ravel()[0], H0.ravel()[0], G1[0, 0, 0, 0], H1[0, 0, 0, 0], G1[1, 0, 0, 0], H1[1, 0, 0, 0]])


@pytest.mark.audit
@pytest.mark.parametrize(
    ("cls", "passes"),
    [
        (HistGradientBoostingClassifier, True),
        pytest.param(_EpsilonX2, False, marks=pytest.mark.extended),
        pytest.param(_GridNoiseFreeLeaves, False, marks=pytest.mark.extended),
    ],
)
def test_audit_grid_leaves(cls, passes):
    """Check the public-cut path (thresholds="grid") on the registry's canary at the gradient
    clip (top bin, right leaf): accepted at the claimed ε; noise for 2ε and noise-free leaves rejected."""
    case = ESTIMATOR_AUDITS["HistGradientBoostingClassifier"]
    estimator = cls(**{**case.estimator.get_params(), "thresholds": "grid"})
    result = _audit(estimator, case.neighbours(estimator), _project_grid, case.n_samples)
    assert result.passed == passes, str(result)
