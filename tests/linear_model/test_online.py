# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private online learning: the tree aggregation, the stream protocol, regret and audits."""

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification

import dpsk.linear_model._online as online
from dpsk.accounting import BudgetAccountant, GaussianEvent
from dpsk.accounting._calibration import gaussian_sigma
from dpsk.audit import audit
from dpsk.exceptions import BudgetExceededError
from dpsk.linear_model import OnlineSGDClassifier, OnlineSGDRegressor
from dpsk.linear_model._online import TreeAggregator, tree_levels

# ------------------------------------------------------------------ tree aggregation


@pytest.mark.parametrize("horizon", [1, 2, 7, 8, 37])
def test_tree_prefix_sums_are_exact_without_noise(horizon):
    """Check that the prefix sum after any split of the stream into rounds is the running sum."""
    rng = np.random.default_rng(horizon)
    values = rng.normal(size=(horizon, 2, 3))
    cuts = np.unique(np.concatenate([[0, horizon], rng.integers(0, horizon + 1, size=5)]))
    tree = TreeAggregator(horizon, (2, 3), 0.0)
    for a, c in zip(cuts[:-1], cuts[1:]):
        tree.add(lambda s, e, a=a: values[a + s : a + e].sum(axis=0), c - a, rng)
        np.testing.assert_allclose(tree.prefix(), values[:c].sum(axis=0), atol=1e-12)


@pytest.mark.parametrize("loss", ["log_loss", "hinge", "modified_huber"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_one_row_kernel_matches_the_tree_in_python(loss, n_classes):
    """Check the kernel (batch_size=1) against rounds of one row through TreeAggregator.add and
    the losses of dpsk.linear_model._sgd, with the same generator (the same node noise)."""
    X, y = make_classification(
        n_samples=45, n_features=4, n_informative=3, n_redundant=0, n_classes=n_classes, random_state=1
    )
    w = np.random.default_rng(2).uniform(0, 1.5, size=45)
    clf = OnlineSGDClassifier(
        loss, max_samples=50, radius=0.8, classes=np.arange(n_classes), random_state=np.random.PCG64(7)
    )
    clf.partial_fit(X[:20], y[:20], sample_weight=w[:20]).partial_fit(X[20:], y[20:], sample_weight=w[20:])
    # The reference, in Python.
    rng = np.random.Generator(np.random.PCG64(7))
    rows = np.hstack([X, np.ones((45, 1))])
    k = 1 if n_classes == 2 else n_classes
    t = np.where(y == 1, 1.0, -1.0)[:, None] if k == 1 else np.where(y[:, None] == np.arange(k), 1.0, -1.0)
    tree = TreeAggregator(50, (k, 5), clf.noise_multiplier_ * clf.clip_norm)
    target = 1.0 - online.clip_margin(50, k + 5)
    coef = np.zeros((k, 5))
    for i in range(45):
        r = online.LOSSES[loss](rows[i : i + 1] @ coef.T, t[i : i + 1], None)
        norm = np.linalg.norm(r) * np.linalg.norm(rows[i])
        g = (r * min(1.0, target / norm) * min(1.0, w[i])).T @ rows[i : i + 1]
        tree.add(lambda a, c, g=g: g[None][a:c].sum(axis=0), 1, rng)
        coef = -tree.prefix() / clf.regularization_
        coef *= min(1.0, 0.8 / np.linalg.norm(coef))
    np.testing.assert_allclose(np.hstack([clf.coef_, clf.intercept_[:, None]]), coef, rtol=1e-9, atol=1e-12)


def test_each_position_is_in_one_node_per_level_and_a_prefix_uses_disjoint_nodes():
    """Check the sensitivity structure: a row's value reaches L = bit_length(T) nodes, each prefix once."""
    T = 21
    for pos in range(T):
        values = np.zeros((T, 1))
        values[pos] = 1.0
        tree = TreeAggregator(T, (1,), 0.0)
        touched = set()
        for t in range(T):
            tree.add(lambda a, c, row=values[t : t + 1]: row[a:c].sum(axis=0), 1, None)
            assert tree.prefix()[0] == (1.0 if t >= pos else 0.0)  # the row counted exactly once
            touched |= {(h, (t + 1) >> h) for h in range(tree.levels) if (t + 1) % (1 << h) == 0 and t >= pos}
        nodes = {(h, (pos >> h) + 1) for h in range(tree_levels(T)) if ((pos >> h) + 1) << h <= T}
        assert nodes <= touched and len(nodes) <= tree_levels(T)


def test_horizon_is_enforced():
    """Check that a tree refuses rows beyond its horizon."""
    tree = TreeAggregator(3, (1,), 0.0)
    tree.add(lambda a, c: np.full(1, float(c - a)), 3, None)
    with pytest.raises(ValueError, match="horizon"):
        tree.add(lambda a, c: np.full(1, float(c - a)), 1, None)


# ------------------------------------------------------------------ the stream protocol


def _data(n=400, seed=0):
    return make_classification(n_samples=n, n_features=4, random_state=seed)


def test_whole_stream_is_charged_once_at_the_first_call():
    """Check that the first partial_fit charges the stream's one Gaussian event and later calls nothing."""
    X, y = _data()
    acc = BudgetAccountant()
    clf = OnlineSGDClassifier(epsilon=1.0, delta=1e-5, max_samples=400, classes=[0, 1], accountant=acc, random_state=0)
    for chunk in np.array_split(np.arange(400), 4):
        clf.partial_fit(X[chunk], y[chunk])
    assert len(acc.spent_budget) == 1
    assert clf.privacy_spent_ == GaussianEvent(gaussian_sigma(1.0, 1e-5))
    assert clf.n_samples_seen_ == 400
    assert clf.noise_multiplier_ == pytest.approx(gaussian_sigma(1.0, 1e-5) * math.sqrt(tree_levels(400)))


def test_rows_beyond_the_horizon_are_refused_without_a_spend():
    """Check that the stream refuses more rows than max_samples, before anything is released."""
    X, y = _data()
    acc = BudgetAccountant()
    clf = OnlineSGDClassifier(max_samples=300, classes=[0, 1], accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="horizon"):
        clf.partial_fit(X, y)
    assert len(acc.spent_budget) == 0
    clf.partial_fit(X[:300], y[:300])
    coef = clf.coef_.copy()
    with pytest.raises(ValueError, match="horizon"):
        clf.partial_fit(X[300:301], y[300:301])
    np.testing.assert_array_equal(clf.coef_, coef)
    assert len(acc.spent_budget) == 1


def test_partial_fit_needs_the_public_horizon():
    """Check that partial_fit without max_samples is refused before the budget is touched."""
    X, y = _data()
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="max_samples"):
        OnlineSGDClassifier(classes=[0, 1], accountant=acc).partial_fit(X, y)
    assert len(acc.spent_budget) == 0


def test_budget_is_checked_before_the_data_is_read():
    """Check that a stream that does not fit the budget is refused with BudgetExceededError."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=0.5, delta=1e-5)
    with pytest.raises(BudgetExceededError):
        OnlineSGDClassifier(epsilon=1.0, max_samples=400, classes=[0, 1], accountant=acc).partial_fit(X, y)


def test_fit_is_one_pass_as_partial_fit_in_one_call():
    """Check that fit equals one partial_fit call over the same rows (same generator)."""
    X, y = _data()
    a = OnlineSGDClassifier(max_samples=400, classes=[0, 1], random_state=np.random.PCG64(3)).fit(X, y)
    b = OnlineSGDClassifier(max_samples=400, classes=[0, 1], random_state=np.random.PCG64(3)).partial_fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_infinite_epsilon_is_noise_free_ftrl():
    """Check epsilon=inf against follow-the-leader computed by hand (batch of all rows, no noise)."""
    X, y = _data(64)
    reg = OnlineSGDRegressor(epsilon=math.inf, max_samples=64, batch_size=64, alpha=100.0, clip_norm=1e6)
    reg.fit(X, y.astype(float))
    rows = np.hstack([X, np.ones((64, 1))])
    expected = -(rows.T @ (0.0 - y)) / 100.0  # gradients at w = 0: (z - y) x
    expected *= min(1.0, 20.0 / np.linalg.norm(expected))
    np.testing.assert_allclose(np.append(reg.coef_, reg.intercept_), expected, rtol=1e-10)


def test_model_stays_in_the_ball():
    """Check that the released model never leaves the ball of radius R."""
    X, y = _data()
    clf = OnlineSGDClassifier(max_samples=400, radius=0.5, alpha=1e-3, classes=[0, 1], random_state=0).fit(X, y)
    assert np.linalg.norm(np.append(clf.coef_, clf.intercept_)) <= 0.5 * (1 + 1e-12)


def test_online_classifier_learns_a_separable_stream():
    """Check the regret's consequence at epsilon=1: a long stream is learned well (seeded)."""
    X, y = make_classification(n_samples=20_000, n_features=5, class_sep=2.0, random_state=0)
    clf = OnlineSGDClassifier(epsilon=1.0, max_samples=20_000, batch_size=50, classes=[0, 1], random_state=0)
    clf.fit(X, y)
    assert clf.score(X, y) > 0.9


def test_regret_bound_formula_matches_the_default_regularization():
    """Check that the default λ is the minimiser of λR²/2 + (TC²/λ)(b + σ₁L√d')."""
    C, R, T, b, s, d = 1.0, 20.0, 1000, 4, 4.0, 10
    lam = online.default_regularization(C, R, T, b, s, d)
    bound = lambda lam: lam * R**2 / 2 + T * C**2 / lam * (b + s * tree_levels(T) * math.sqrt(d))  # noqa: E731
    assert bound(lam) <= min(bound(lam * 1.01), bound(lam / 1.01))


# ------------------------------------------------------------------ black-box audit of the stream

# Event-level neighbours: a canary at position 1 (its gradient, at w = 0, is clipped to C),
# or an empty slot (a row at x = 0: no gradient), then zero rows. Calls end at positions
# 1, 2, 4, 8 and 16: each prefix is one node [1, 2^j], all five hold the canary, with
# independent noise. The audit sees λ·(sum of the five released coefficients): signal
# 5C, noise of standard deviation √5·σ₁√L·C with L = 5 -- exactly the claimed multiplier
# σ₁. ε = 8 keeps the noise small next to C, so that 1,500 streams show a √5 error.
_CANARY = np.array([[100.0]])
_EPS, _DELTA = 8.0, 1e-5
_CALLS = ((0, 1), (1, 2), (2, 4), (4, 8), (8, 16))


def _stream_sampler(estimator_factory):
    def sampler(with_canary, size, rng):
        out = np.empty(size)
        X = np.zeros((16, 1))
        if with_canary:
            X[0] = _CANARY
        y = np.ones(16, dtype=int)
        for i in range(size):
            clf = estimator_factory(random_state=np.random.Generator(np.random.PCG64(rng.integers(2**63))))
            total = 0.0
            for a, c in _CALLS:
                clf.partial_fit(X[a:c], y[a:c])
                total += float(clf.coef_[0, 0])
            out[i] = -total * clf.regularization_
        return out

    return sampler


def _factory(**kwargs):
    return lambda **kw: OnlineSGDClassifier(
        epsilon=_EPS,
        delta=_DELTA,
        max_samples=16,
        alpha=1.0,
        radius=1e9,
        fit_intercept=False,
        classes=[0, 1],
        **kwargs,
        **kw,
    )


def _run_stream_audit(n_samples=1500):
    sampler = _stream_sampler(_factory())
    return audit(
        sampler,
        (False, True),
        n_samples=n_samples,
        random_state=0,
        event=GaussianEvent(gaussian_sigma(_EPS, _DELTA)),
    )


@pytest.mark.audit
def test_stream_audit_accepts_the_tree_mechanism():
    """Check that the continual release satisfies its one Gaussian event on event-level neighbours."""
    result = _run_stream_audit()
    assert result.passed, str(result)


@pytest.mark.audit
@pytest.mark.extended
def test_stream_audit_rejects_noise_that_ignores_the_tree_depth(monkeypatch):
    """Check the audit's power: node noise σ₁ instead of σ₁√L (sensitivity over L nodes ignored) fails."""
    monkeypatch.setattr(online, "stream_noise_multiplier", lambda eps, delta, levels: (gaussian_sigma(eps, delta),) * 2)
    result = _run_stream_audit()
    assert not result.passed, str(result)
