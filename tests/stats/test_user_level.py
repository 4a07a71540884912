# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of dpsk.stats with groups= (user-level privacy)."""

import numpy as np
import pytest

from dpsk import stats
from dpsk.accounting import ExponentialEvent, get_epsilon, record_releases
from dpsk.stats._contribution import smooth_threshold


def _users(seed=0, n_users=200, alpha=1.5):
    rng = np.random.default_rng(seed)
    k = np.arange(1, 51)
    p = k**-alpha
    counts = rng.choice(k, size=n_users, p=p / p.sum())
    groups = np.repeat(np.arange(n_users), counts)
    return rng, groups, counts


def test_public_threshold_gives_the_smooth_weighted_mean():
    """Check that with a public h the release (huge ε) is Σ w y / Σ w with w = min(1, h/s)."""
    rng, groups, counts = _users()
    y = rng.uniform(0, 1, groups.size)
    w = np.minimum(1.0, 3.0 / counts)[groups]
    out = stats.mean(y, epsilon=1e9, bounds=(0, 1), groups=groups, threshold=3.0, random_state=0)
    assert out == pytest.approx(w @ y / w.sum(), abs=1e-6)
    total = stats.sum(y, epsilon=1e9, bounds=(0, 1), groups=groups, threshold=3.0, random_state=0)
    assert total == pytest.approx(w @ y, rel=1e-6)
    assert stats.count(y, epsilon=1e9, groups=groups, threshold=3.0, random_state=0) == pytest.approx(w.sum(), rel=1e-6)
    variance = stats.var(y, epsilon=1e9, bounds=(0, 1), groups=groups, threshold=3.0, random_state=0)
    mean = w @ y / w.sum()
    assert variance == pytest.approx(w @ (y - mean) ** 2 / w.sum(), abs=1e-6)


def test_sample_limiting_keeps_at_most_h_rows_per_user():
    """Check that "limit" releases (huge ε) the mean of a subset with at most h rows per user."""
    rng, groups, counts = _users(1)
    y = np.arange(groups.size, dtype=float)  # row i has value i: the mean identifies the subset size
    out = stats.sum(
        np.ones(groups.size),
        epsilon=1e9,
        bounds=(0, 1),
        groups=groups,
        contribution_bound="limit",
        threshold=2,
        random_state=0,
    )
    assert out == pytest.approx(np.minimum(2, counts).sum(), rel=1e-9)
    a = stats.mean(
        y, epsilon=1e9, bounds=(0, groups.size), groups=groups, contribution_bound="limit", threshold=2, random_state=0
    )
    b = stats.mean(
        y, epsilon=1e9, bounds=(0, groups.size), groups=groups, contribution_bound="limit", threshold=2, random_state=1
    )
    assert a != pytest.approx(b)  # a random subset, not always the same rows
    with pytest.raises(ValueError, match="integer threshold"):
        stats.mean(y, epsilon=1.0, bounds=(0, 1), groups=groups, contribution_bound="limit", threshold=2.5)


def test_noise_scales_with_the_threshold():
    """Check that the sensitivity is multiplied by h: the sum's noise std is proportional to h."""
    rng, groups, _ = _users(2)
    y = rng.uniform(0, 1, groups.size)
    std = [
        stats.sum(
            y, epsilon=1.0, bounds=(0, 1), groups=groups, threshold=h, random_state=0, return_error=True
        ).noise_std
        for h in (1.0, 4.0)
    ]
    assert std[1] == pytest.approx(4 * std[0], rel=1e-6)


def test_private_threshold_is_charged():
    """Check that choosing h privately costs 10% of ε, recorded, and the total stays <= ε."""
    rng, groups, _ = _users(3)
    y = rng.uniform(0, 1, groups.size)
    with record_releases() as drawn:
        r = stats.mean(y, epsilon=2.0, bounds=(0, 1), groups=groups, random_state=0, return_error=True)
    assert r.privacy_spent.events[0] == ExponentialEvent(0.2)
    assert sorted(map(repr, drawn)) == sorted(map(repr, r.privacy_spent.events))
    assert get_epsilon(r.privacy_spent, 0.0) <= 2.0 * (1 + 1e-9)
    given = stats.mean(y, epsilon=2.0, bounds=(0, 1), groups=groups, threshold=4, random_state=0, return_error=True)
    assert all(not isinstance(e, ExponentialEvent) for e in given.privacy_spent.events)


def test_public_user_counts_release_no_count_and_use_the_closed_form():
    """Check that declared-public counts skip the count release and use the paper's h."""
    rng, groups, counts = _users(4)
    y = rng.uniform(0, 1, groups.size)
    with record_releases() as drawn:
        r = stats.mean(
            y, epsilon=1.0, bounds=(0, 1), groups=groups, public_user_counts=True, random_state=0, return_error=True
        )
    assert len(drawn) == 1  # the sums only
    kappa = 4 * 2.0  # per_record 1, Laplace variance 2/ε², sensitivity B = 2·(B/2)
    assert r.threshold == pytest.approx(smooth_threshold(counts, 1.0, kappa))
    from dpsk.stats._moments import MomentsQuery

    with pytest.raises(ValueError, match="count is public"):
        MomentsQuery("count", epsilon=1.0, n_outputs=1, relation="replace", rng=np.random.default_rng(0))


def test_smooth_weighting_is_more_accurate_than_limiting():
    """Check the paper's claim for the thresholds the library picks: the smooth mean's exact
    variance (Lemma 2) is below sample limiting's (Claim 2), on a Zipf instance."""
    from dpsk.stats._contribution import limit_variance, smooth_variance

    rng, groups, counts = _users(5, n_users=2000)
    y = rng.uniform(0, 1, groups.size)
    h = {
        bound: stats.mean(
            y,
            epsilon=0.5,
            bounds=(0, 1),
            groups=groups,
            contribution_bound=bound,
            public_user_counts=True,
            random_state=0,
            return_error=True,
        ).threshold
        for bound in ("smooth", "limit")
    }
    assert h["limit"] == int(h["limit"])
    noise = 2.0 / 0.5**2  # 2B²/ε²: the replace-one-user sensitivity is B·h
    for variance in (1 / 12, 1 / 4):
        assert smooth_variance(counts, h["smooth"], variance, noise) < limit_variance(
            counts, h["limit"], variance, noise
        )


def test_user_level_quantile_and_histogram():
    """Check that the weighted quantile and histogram follow the users' weights (huge ε)."""
    groups = np.array([0] * 9 + [1, 2, 3])
    y = np.array([0.9] * 9 + [0.1, 0.1, 0.1])
    # h = 1: user 0's nine rows weigh one row in total, so 3 of 4 weight units sit at 0.1
    med = stats.median(y, epsilon=1e6, bounds=(0, 1), bins=10, groups=groups, threshold=1.0, random_state=0)
    assert med == pytest.approx(0.15)
    assert stats.median(y, epsilon=1e6, bounds=(0, 1), bins=10, random_state=0) == pytest.approx(0.95)
    hist, _ = stats.histogram(y, epsilon=1e9, bins=2, range=(0, 1), groups=groups, threshold=1.0, random_state=0)
    np.testing.assert_allclose(hist, [3.0, 1.0], atol=1e-6)


def test_groups_with_several_values_per_record():
    """Check that records holding several values are weighted as a whole."""
    groups = np.array([0, 0, 0, 1])
    X = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    out = stats.mean(X, epsilon=1e9, bounds=(0, 1), groups=groups, threshold=1.0, random_state=0)
    assert out == pytest.approx(0.5, abs=1e-6)  # user 0 weighs one record, like user 1
    np.testing.assert_allclose(
        stats.mean(X, epsilon=1e9, bounds=(0, 1), axis=0, groups=groups, threshold=1.0, random_state=0),
        [0.5, 0.5],
        atol=1e-6,
    )


def test_bad_groups_spend_nothing():
    """Check that invalid user ids raise before the budget is spent."""
    from dpsk.accounting import BudgetAccountant

    acc = BudgetAccountant(epsilon=5.0)
    for func in (stats.mean, stats.median):
        with pytest.raises(ValueError, match="NaN"):
            func(np.zeros(4), epsilon=1.0, bounds=(0, 1), groups=[1, 1, np.nan, 1], accountant=acc)
    assert acc.total().epsilon == 0


@pytest.mark.parametrize(
    "function", [stats.count, stats.sum, stats.mean, stats.var, stats.std, stats.median, stats.histogram]
)
@pytest.mark.parametrize("public_user_counts", [False, True])
def test_one_user_and_two_users_both_release(function, public_user_counts):
    """Neighbours (add/remove one user): one user and two users both release and both charge.

    The fit used to raise for a single user and release for two: the error itself told
    which neighbour the data was (issue 14, finding 4).
    """
    from dpsk.accounting import BudgetAccountant

    if public_user_counts and function in (stats.count, stats.median, stats.histogram):
        pytest.skip("public user counts apply to the sums' statistics")
    x = np.linspace(0.1, 0.9, 6)
    one_user, two_users = np.zeros(5, dtype=int), np.array([0, 0, 0, 0, 0, 1])
    kwargs = {"range": (0, 1)} if function is stats.histogram else {} if function is stats.count else {"bounds": (0, 1)}
    if public_user_counts:
        kwargs["public_user_counts"] = True
    spent = []
    for values, groups in ((x[:5], one_user), (x, two_users)):
        acc = BudgetAccountant(epsilon=10.0)
        out = function(values, epsilon=1.0, groups=groups, accountant=acc, random_state=0, **kwargs)
        assert np.all(np.isfinite(out[0] if function is stats.histogram else out))
        spent.append(acc.total())
    assert spent[0] == spent[1] and spent[0].epsilon > 0
