# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Black-box privacy audits of dpsk.stats, item level and user level.

Each statistic is run thousands of times on two neighbouring datasets (a canary record
four times beyond the bounds added or removed; with ``groups``, a whole canary user of
several rows; with public user counts, the canary user's values replaced) and
:func:`dpsk.audit.audit` tests the outputs against the cost the call itself declares
(``DPResult.privacy_spent``). Deliberately broken variants — user weights that ignore the
user bound, noise calibrated for one row — must be rejected (power).
"""

import numpy as np
import pytest

from dpsk import stats
from dpsk.accounting import ComposedEvent, ExponentialEvent, PureDPEvent, get_epsilon
from dpsk.audit import audit, canary_neighbours
from dpsk.mechanisms import ExponentialMechanism
from dpsk.stats import _contribution


class StatSampler:
    """``sampler(data, size, rng)`` running a dpsk.stats function ``size`` times."""

    def __init__(self, function, **kwargs):
        self.function = function
        self.kwargs = kwargs

    def __call__(self, data, size, rng):
        return np.array([np.ravel(self.function(**data, **self.kwargs, random_state=rng)) for _ in range(size)])

    def declared_cost(self, neighbours):
        costs = [self.function(**data, **self.kwargs, random_state=0, return_error=True) for data in neighbours]
        costs = [c[0] if isinstance(c, tuple) else c for c in costs]
        assert costs[0].privacy_spent == costs[1].privacy_spent, "the declared cost depends on the data"
        return costs[0].privacy_spent


def _item_neighbours(n=50, low=0.0, canary=4.0, high=None):
    """``n`` records at ``low`` (half of them at ``high`` if given: a canary then moves a median)."""
    X = np.full((n, 1), low)
    if high is not None:
        X[n // 2 :] = high
    without, with_canary = canary_neighbours(X, canary_X=[canary])
    return {"a": without["X"][:, 0]}, {"a": with_canary["X"][:, 0]}


def _quantile_neighbours():
    """For q = 0.1 on the default fine grid: 50 records (4 at 0.05, 2 at 0.65, 44 at
    0.85), so that the gaps (0.05, 0.65) and (0.65, 0.85) each lie one rank from the
    target 5, and a canary below the range, which moves their distances by −0.9 and +0.9
    (the score's full range)."""
    X = np.concatenate([np.full(4, 0.05), np.full(2, 0.65), np.full(44, 0.85)])[:, None]
    without, with_canary = canary_neighbours(X, canary_X=[-4.0])
    return {"a": without["X"][:, 0]}, {"a": with_canary["X"][:, 0]}


def _user_neighbours(n_users=20, rows=5, low=0.0, canary=4.0, high=None, canary_rows=5):
    X = np.full((n_users * rows, 1), low)
    if high is not None:
        X[X.shape[0] // 2 :] = high
    groups = np.repeat(np.arange(n_users), rows)
    without, with_canary = canary_neighbours(X, canary_X=np.full((canary_rows, 1), canary), groups=groups)
    return ({"a": d["X"][:, 0], "groups": d["groups"]} for d in (without, with_canary))


def _replaced_user_neighbours(n_users=20, rows=5, low=0.0, canary=4.0):
    groups = np.repeat(np.arange(n_users), rows)
    a = np.full(groups.size, low)
    b = a.copy()
    b[groups == n_users - 1] = canary
    return {"a": a, "groups": groups}, {"a": b, "groups": groups}


AUDITS = {
    "mean": (StatSampler(stats.mean, epsilon=1.0, bounds=(0, 1)), _item_neighbours()),
    "var": (StatSampler(stats.var, epsilon=1.0, bounds=(0, 1)), _item_neighbours()),
    "sum": (StatSampler(stats.sum, epsilon=1.0, bounds=(-1, 1)), _item_neighbours()),
    "count": (StatSampler(stats.count, epsilon=1.0), _item_neighbours()),
    "median": (StatSampler(stats.median, epsilon=1.0, bounds=(0, 1), bins=4), _item_neighbours(low=0.1, high=0.9)),
    "quantile, fine grid": (StatSampler(stats.quantile, q=0.1, epsilon=1.0, bounds=(0, 1)), _quantile_neighbours()),
    "histogram": (
        StatSampler(lambda **kw: stats.histogram(**kw)[0], epsilon=1.0, bins=2, range=(0, 1)),
        _item_neighbours(low=0.25, canary=0.75),
    ),
    "user mean": (StatSampler(stats.mean, epsilon=1.0, bounds=(0, 1)), tuple(_user_neighbours())),
    "user mean, limit": (
        StatSampler(stats.mean, epsilon=1.0, bounds=(0, 1), contribution_bound="limit"),
        tuple(_user_neighbours()),
    ),
    "user median": (
        StatSampler(stats.median, epsilon=1.0, bounds=(0, 1), bins=4),
        # a heavy canary user: ignoring the user bound then moves the target rank far
        tuple(_user_neighbours(low=0.1, high=0.9, canary_rows=20)),
    ),
    "user mean, public counts": (
        StatSampler(stats.mean, epsilon=1.0, bounds=(0, 1), public_user_counts=True),
        _replaced_user_neighbours(),
    ),
}


def _as_pure(event):
    """The claim as a composition of pure-ε events (the audit's profiles do not cover every
    event type; the pure ε of each release is implied by it, so no validity is lost)."""
    leaves = event.events if isinstance(event, ComposedEvent) else (event,)
    return ComposedEvent(tuple(PureDPEvent(get_epsilon(leaf, 0.0)) for leaf in leaves))


def _audit(name, n_samples):
    sampler, neighbours = AUDITS[name]
    claim = _as_pure(sampler.declared_cost(neighbours))
    return audit(sampler, neighbours, event=claim, n_samples=n_samples, random_state=0)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AUDITS))
def test_stats_privacy_audit(name):
    """Check each statistic against its declared cost on worst-case neighbours (α = 1e-6)."""
    result = _audit(name, 4_000)
    assert result.passed, str(result)


class _IgnoringUserBound(_contribution.ContributionPlan):
    """Broken: every row keeps weight 1 and the noise is calibrated for one row per user."""

    def resolve(self, rng, **target):
        honest = super().resolve(rng, **target)
        return _contribution.Contribution(np.ones(self.n_records), 1.0, honest.threshold, honest.relation)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["user mean", "user median"])
@pytest.mark.extended
def test_user_level_audit_rejects_weights_that_ignore_the_user_bound(name, monkeypatch):
    """Check the audit's power: a user-level statistic that ignores the user bound is rejected."""
    monkeypatch.setattr("dpsk.stats._protocol.ContributionPlan", _IgnoringUserBound)
    result = _audit(name, 6_000)
    assert not result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_item_level_audit_rejects_a_missing_clip(monkeypatch):
    """Check the audit's power on an item-level statistic whose values are not clipped."""
    from dpsk.stats import _moments

    real = _moments.exact_moments_of

    def unclipped(X, lower, upper, *args, **kwargs):
        return real(X, np.full_like(lower, -1e9), np.full_like(upper, 1e9), *args, **kwargs)

    monkeypatch.setattr(_moments, "exact_moments_of", unclipped)
    assert not _audit("mean", 6_000).passed


class _DoubledEpsilon(ExponentialMechanism):
    """Broken: selects with 2ε but declares ε."""

    def __init__(self, *, epsilon, **kwargs):
        super().__init__(epsilon=2 * epsilon, **kwargs)
        self._declared = epsilon

    def privacy_event(self):
        return ExponentialEvent(self._declared)


@pytest.mark.slow
@pytest.mark.extended
def test_quantile_audit_rejects_a_doubled_epsilon(monkeypatch):
    """Check the audit's power on the fine-grid quantile: selecting with 2ε is rejected."""
    monkeypatch.setattr("dpsk.stats._quantile.ExponentialMechanism", _DoubledEpsilon)
    assert not _audit("quantile, fine grid", 6_000).passed
