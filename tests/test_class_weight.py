# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""``class_weight`` of LogisticRegression, LinearSVC and RandomForestClassifier (issue 16)."""

import math
from collections import Counter

import numpy as np
import pytest

from dpsk.accounting import record_releases
from dpsk.ensemble import RandomForestClassifier
from dpsk.linear_model import LogisticRegression
from dpsk.svm import LinearSVC
from dpsk.utils._class_weight import BALANCED_SHARE, class_weights

LINEAR = [LogisticRegression, LinearSVC]


def _imbalanced(seed=0, n=4000):
    """One class in ten, shifted along the first feature."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    X = rng.normal(size=(n, 3)) * 0.5 + np.outer(y, [0.6, 0.0, 0.0])
    return np.clip(X, -2, 2), y


def _recall(est, X, y):
    return float(np.mean(est.predict(X[y == 1]) == 1))


@pytest.mark.parametrize("cls", LINEAR)
def test_balanced_spends_a_share_on_counts_inside_the_one_event(cls):
    X, y = _imbalanced()
    est = cls(epsilon=1.0, data_norm=3.5, classes=[0, 1], class_weight="balanced", random_state=0).fit(X, y)
    leaves = est.privacy_spent_.flatten()
    assert leaves[0].epsilon == pytest.approx(BALANCED_SHARE)  # the label histogram: ε/20, sensitivity 1
    assert math.fsum(e.epsilon for e in leaves) <= 1.0
    # The weights come from noisy counts: close to n_1/n_0 (about 1/9) for the majority class.
    # Laplace noise of scale 1 / (ε/20) = 20 on the minority's ~400 rows: 7 scales within 35 %.
    assert est.class_weight_[1] == 1.0
    assert est.class_weight_[0] == pytest.approx(np.sum(y == 1) / np.sum(y == 0), rel=0.35)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("cls", LINEAR)
def test_balanced_releases_match_the_declared_cost(cls, n_classes):
    """The recording harness: the count release is declared, and nothing else is added."""
    X, y = _imbalanced(5)
    y = y + (X[:, 1] > 0.5) * (n_classes - 2)
    est = cls(epsilon=1.0, data_norm=3.5, classes=list(range(n_classes)), class_weight="balanced", random_state=0)
    with record_releases() as drawn:
        est.fit(X, y)
    assert Counter(drawn) == Counter(est.privacy_spent_.flatten())


@pytest.mark.parametrize("cls", LINEAR)
def test_dict_weights_equal_sample_weights(cls):
    """Without noise, class weights are row weights (divided by the largest when above 1)."""
    X, y = _imbalanced(1, n=500)
    kw = dict(epsilon=math.inf, data_norm=3.5, classes=[0, 1], C=1.0)
    weighted = cls(class_weight={0: 1.0, 1: 3.0}, **kw).fit(X, y)
    reference = cls(**kw).fit(X, y, sample_weight=np.where(y == 1, 1.0, 1.0 / 3.0))
    np.testing.assert_allclose(weighted.class_weight_, [1 / 3, 1.0])
    np.testing.assert_allclose(weighted.coef_, reference.coef_, rtol=1e-10)
    np.testing.assert_allclose(weighted.intercept_, reference.intercept_, rtol=1e-10)


@pytest.mark.parametrize("cls", LINEAR + [RandomForestClassifier])
def test_balanced_raises_minority_recall(cls):
    X, y = _imbalanced(2)
    if cls is RandomForestClassifier:
        kw = dict(epsilon=1.0, bounds=(-2.0, 2.0), classes=[0, 1], random_state=0)
    else:
        kw = dict(epsilon=1.0, data_norm=3.5, classes=[0, 1], random_state=0)
    plain, balanced = cls(**kw).fit(X, y), cls(class_weight="balanced", **kw).fit(X, y)
    assert _recall(balanced, X, y) > _recall(plain, X, y) + 0.2


def test_forest_class_weight_is_free_post_processing():
    X, y = _imbalanced(3)
    kw = dict(epsilon=1.0, bounds=(-2.0, 2.0), classes=[0, 1], random_state=np.random.PCG64(0))
    plain = RandomForestClassifier(**kw).fit(X, y)
    kw["random_state"] = np.random.PCG64(0)
    balanced = RandomForestClassifier(class_weight="balanced", **kw).fit(X, y)
    assert balanced.privacy_spent_ == plain.privacy_spent_
    np.testing.assert_array_equal(balanced.class_count_, plain.class_count_)  # the same release
    counts = np.maximum(plain.class_count_, 1.0)
    np.testing.assert_allclose(balanced.class_weight_, counts.min() / counts)
    # The trees predict with the forest's weights too.
    np.testing.assert_allclose(balanced.estimators_[0]._log_prior, np.log([0.5, 0.5]))


def test_class_weights_validation():
    classes = np.array([0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        class_weights({2: 1.0}, classes)
    with pytest.raises(ValueError, match="non-negative"):
        class_weights({0: -1.0}, classes)
    with pytest.raises(ValueError, match="positive weight"):
        class_weights({0: 0.0, 1: 0.0}, classes)
    np.testing.assert_array_equal(class_weights({1: 0.5}, classes), [1.0, 0.5])  # <= 1: unchanged
    assert class_weights(None, classes) is None


def test_class_weight_refused_with_groups():
    X, y = _imbalanced(4, n=100)
    with pytest.raises(ValueError, match="groups"):
        LogisticRegression(data_norm=3.5, classes=[0, 1], class_weight="balanced").fit(X, y, groups=np.arange(100))


# -- privacy audit of class_weight="balanced" (counts release + weighted ERM) --------------------


def _audit_balanced():
    from sklearn.base import clone

    from dpsk.audit import audit_estimator
    from dpsk.utils._testing.registry import ESTIMATOR_AUDITS

    case = ESTIMATOR_AUDITS["LogisticRegression"]
    est = clone(case.estimator).set_params(class_weight="balanced")  # not the shared instance
    # The canary is the only row of class 1: "balanced" gives it the largest weight.
    return audit_estimator(est, case.neighbours(est), case.projection, n_samples=case.n_samples, random_state=0)


@pytest.mark.audit
def test_balanced_logistic_regression_privacy_audit():
    result = _audit_balanced()
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_balanced_audit_rejects_weights_above_one(monkeypatch):
    """Check the audit's power: "balanced" weights not divided by the largest (the lone
    minority row weighs about 100) must be rejected."""
    from dpsk.linear_model import _classifier

    def unnormalised(class_weight, classes, counts=None):
        counts = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
        return counts.sum() / (classes.size * counts)

    monkeypatch.setattr(_classifier, "class_weights", unnormalised)
    result = _audit_balanced()
    assert not result.passed, str(result)
