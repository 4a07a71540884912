# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The adaptive feature schedule of cyclic boosting (``FeatureSchedule``): post-processing only."""

from unittest import mock

import numpy as np
import pytest

from dpsk.audit import audit_estimator, canary_neighbours
from dpsk.ensemble import HistGradientBoostingClassifier, _boosting_plan
from dpsk.ensemble._boosting_plan import FeatureSchedule, leaf_gain


def _run(schedule, n_iter, gains):
    """The features a schedule picks when feature j's trees always have estimated gain ``gains[j]``."""
    picked = []
    for t in range(n_iter):
        j = schedule.next(t)
        picked.append(j)
        schedule.observe(j, gains[j])
    return np.array(picked)


def test_schedule_cycles_first_then_shares_the_rounds_by_first_gain():
    """Check the rule: one cycle, then each kind's rounds shared in proportion to the first trees'
    gains above a floor of ``MIN_SHARE`` of the cyclic rounds, the kinds kept round by round; the
    cyclic schedule at learning rate 1 or with ``ADAPTIVE_SCHEDULE`` off."""
    d, n_iter = 4, 40
    picked = _run(FeatureSchedule(np.zeros(n_iter, dtype=bool), np.zeros(d, dtype=bool), 0.5), n_iter, [0, 3, -1, 1])
    np.testing.assert_array_equal(picked[:d], np.arange(d))
    floor = int(_boosting_plan.MIN_SHARE * n_iter / d)
    assert np.bincount(picked, minlength=d).tolist() == [floor, floor + 15, floor, floor + 5]
    # Public-cut rounds on features 0 and 2, rounds by gain on 1 and 3 (no gain: equal shares).
    feature_kinds = np.array([True, False, True, False])
    kinds = feature_kinds[np.arange(n_iter) % d]
    picked = _run(FeatureSchedule(kinds, feature_kinds, 0.5), n_iter, [3.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(feature_kinds[picked], kinds)
    counts = np.bincount(picked, minlength=d)
    assert abs(counts[0] - 12.5) <= 0.5 and abs(counts[2] - 7.5) <= 0.5 and counts[1] == counts[3] == 10
    for adaptive, lr in ((True, 1.0), (False, 0.5)):
        with mock.patch.object(_boosting_plan, "ADAPTIVE_SCHEDULE", adaptive):
            cyclic = _run(FeatureSchedule(kinds, feature_kinds, lr), n_iter, [3.0, 0.0, 1.0, 0.0])
        np.testing.assert_array_equal(cyclic, np.arange(n_iter) % d)


def test_leaf_gain_is_the_noise_corrected_newton_gain():
    """Check the estimate on hand sums: a split of the root's sums gains, no split gains nothing,
    and the gradients' noise variance is taken out."""
    G, H = np.array([[-2.0], [2.0]]), np.array([[1.0], [1.0]])
    assert leaf_gain(G, H, 0.0, 0.0, 1.0) == pytest.approx(4.0)
    assert leaf_gain(np.array([[1.0], [1.0]]), H, 0.0, 0.0, 0.0) == pytest.approx(0.0, abs=1e-9)
    assert leaf_gain(G, H, 1.0, 0.0, 1.0) == pytest.approx(4.0 - 1.0 + 2.0 / 3.0)


def test_fit_gives_informative_features_more_rounds_at_the_same_cost():
    """Check a fit: a feature the label depends on gets more rounds than noise features, the releases
    and the fit's event are those of the cyclic schedule, and the public cuts follow each feature's
    own visits."""
    rng = np.random.default_rng(0)
    X = rng.random((6000, 4))
    y = (X[:, 0] + 0.1 * rng.standard_normal(6000) > 0.5).astype(int)
    params = dict(
        epsilon=2.0,
        max_iter=24,
        learning_rate=0.5,
        bounds=(0, 1),
        classes=[0, 1],
        random_state=0,
        bin_strategy="uniform",
    )
    adaptive = HistGradientBoostingClassifier(**params).fit(X, y)
    with mock.patch.object(_boosting_plan, "ADAPTIVE_SCHEDULE", False):
        cyclic = HistGradientBoostingClassifier(**params).fit(X, y)
    counts = np.bincount(adaptive._feature[:, 0], minlength=4)
    assert counts[0] > max(counts[1:]) and counts.min() >= 3
    np.testing.assert_array_equal(cyclic._feature[:, 0], np.arange(24) % 4)
    assert adaptive.privacy_spent_ == cyclic.privacy_spent_
    assert len(adaptive._released) == len(cyclic._released)
    assert [g.shape for g, _ in adaptive._released] == [g.shape for g, _ in cyclic._released]
    visits = np.zeros(4, dtype=int)
    for t, j in enumerate(adaptive._feature[:, 0]):
        np.testing.assert_array_equal(adaptive._mask[t], adaptive._grid_masks(j, 3, visits[j]))
        visits[j] += 1


class _NoiseFreeSchedule(HistGradientBoostingClassifier):
    """Shares the rounds by the gains of the exact leaf sums (the releases unchanged)."""

    def _schedule_gain(self, noisy, exact, var_g, std_h, lam):
        return leaf_gain(exact[0][:, 0, 0], exact[1][:, 0, 0], 0.0, 0.0, lam)


def _schedule_neighbours(estimator=None, n=200):
    """Every row at (0, 0), labels balanced; a canary at (0, 1), labelled 1.

    Without the canary both features' first trees put every row in one leaf: both gains
    tie, and the third round goes to feature 0. With it, feature 1's tree sends the canary
    to a leaf of its own: its exact gain is positive, feature 0's still 0, and noise-free
    gains give the third round to feature 1 with certainty.
    """
    return canary_neighbours(np.zeros((n, 2)), np.repeat([0, 1], n // 2), canary_X=[0.0, 1.0], canary_y=1)


def _third_round_on_feature_1(est):
    return np.array([float(est._feature[2, 0] == 1)])


@pytest.mark.audit
def test_audit_schedule_reads_released_sums_only():
    """Check the schedule is post-processing: the feature of the first adaptive round passes the audit
    against the fit's claim, and is rejected when the rounds are shared by noise-free gains."""
    params = dict(
        epsilon=2.0,
        delta=0.0,
        max_iter=3,
        learning_rate=0.5,
        max_depth=1,
        bounds=(0.0, 1.0),
        bin_strategy="uniform",
        thresholds="grid",
        classes=[0, 1],
    )
    good = audit_estimator(
        HistGradientBoostingClassifier(**params),
        _schedule_neighbours(),
        _third_round_on_feature_1,
        n_samples=3000,
        random_state=0,
    )
    assert good.passed, str(good)
    bad = audit_estimator(
        _NoiseFreeSchedule(**params), _schedule_neighbours(), _third_round_on_feature_1, n_samples=3000, random_state=0
    )
    assert not bad.passed, str(bad)
