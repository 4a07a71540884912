# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The paper's unit tests for the mean (Epasto et al. 2020; spec-user-contrib.md §4.1).

Exact checks of the threshold, the weights and the variance formulas (Lemma 2, Claims 1
and 2, Theorems 2 and 3), and of the implementation against them.
"""

import numpy as np
import pytest

from dpsk import stats
from dpsk._core._exact_sums import ROUNDING_MARGIN
from dpsk._core._groups import group_codes, limit_weights
from dpsk.stats._contribution import (
    best_limit_threshold,
    group_index,
    limit_variance,
    select_threshold,
    smooth_threshold,
    smooth_variance,
)


def _zipf_counts(rng, m, alpha=1.5, cap=100):
    k = np.arange(1, cap + 1)
    p = k**-alpha
    return rng.choice(k, size=m, p=p / p.sum())


def _instance(rng):
    counts = _zipf_counts(rng, int(rng.integers(5, 200)), alpha=float(rng.uniform(0.5, 3.0)))
    return counts, float(10 ** rng.uniform(-2, 1)), float(10 ** rng.uniform(-4, 2))


def test_closed_form_threshold_minimises_v():
    """Check that smooth_threshold's h has v(h) <= min of v on a fine grid (random Zipf instances)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        counts, var_w, noise_w = _instance(rng)
        h = smooth_threshold(counts, var_w, noise_w)
        assert counts.min() <= h <= counts.max()
        grid = np.linspace(counts.min(), counts.max(), 20001)
        best = min(smooth_variance(counts, g, var_w, noise_w) for g in grid[:: max(1, grid.size // 4000)])
        assert smooth_variance(counts, h, var_w, noise_w) <= best * (1 + 1e-9)
        # and it is a local minimum
        for step in (1e-3, -1e-3):
            other = np.clip(h + step, counts.min(), counts.max())
            assert smooth_variance(counts, h, var_w, noise_w) <= smooth_variance(counts, other, var_w, noise_w) * (
                1 + 1e-12
            )


def test_weighted_dominates_limiting_pointwise():
    """Check v(h) <= v'(h) for every integer h, with equality once no user exceeds h."""
    rng = np.random.default_rng(1)
    for _ in range(50):
        counts, var_w, noise_w = _instance(rng)
        for h in range(int(counts.min()), int(counts.max()) + 1):
            v, v_limit = smooth_variance(counts, h, var_w, noise_w), limit_variance(counts, h, var_w, noise_w)
            assert v <= v_limit * (1 + 1e-12)
            if h >= counts.max():
                assert v == pytest.approx(v_limit, rel=1e-12)


def test_theorem_3_limiting_is_at_most_four_times_worse():
    """Check 1 <= min v' / min v <= 4 on random instances (Theorem 3)."""
    rng = np.random.default_rng(2)
    ratios = []
    for _ in range(300):
        counts, var_w, noise_w = _instance(rng)
        v = smooth_variance(counts, smooth_threshold(counts, var_w, noise_w), var_w, noise_w)
        v_limit = limit_variance(counts, best_limit_threshold(counts, var_w, noise_w), var_w, noise_w)
        ratios.append(v_limit / v)
    assert 1 - 1e-12 <= min(ratios) and max(ratios) <= 4
    assert max(ratios) > 1.1  # the comparison is not vacuous


@pytest.mark.parametrize("g, expected", [(10, 1.4925), (100, 1.4993), (1000, 1.4999)])
def test_theorem_2_instance(g, expected):
    """Check Theorem 2's instance: min v < (2g+1)/(4g²), min v' >= 3/(4g), ratio -> 3/2."""
    counts = np.array([1] * g + [10 * g] * g)
    var_w, noise_w = 1.0, float(g)  # σ² = 1, 2(B/ε)² = g
    v = smooth_variance(counts, smooth_threshold(counts, var_w, noise_w), var_w, noise_w)
    v_limit = limit_variance(counts, best_limit_threshold(counts, var_w, noise_w), var_w, noise_w)
    assert v < (2 * g + 1) / (4 * g * g)
    assert v_limit >= 3 / (4 * g) * (1 - 1e-12)
    assert v_limit / v == pytest.approx(expected, abs=1e-4)


def test_limits_of_the_threshold():
    """Check σ = 0: equal weight per user, v = 2B²/(ε²m²); ε -> ∞: uniform weights 1/n."""
    counts = np.array([1, 1, 2, 5, 20, 100])
    m, n = counts.size, counts.sum()
    noise_w = 2.0  # 2B²/ε² with B = ε = 1
    h = smooth_threshold(counts, 0.0, noise_w)
    assert h == counts.min()
    weights = np.minimum(h, counts) / (counts * np.minimum(h, counts).sum())
    np.testing.assert_allclose(weights, 1.0 / (m * counts))
    assert smooth_variance(counts, h, 0.0, noise_w) == pytest.approx(noise_w / m**2)
    h = smooth_threshold(counts, 1.0, 1e-12)
    assert h == pytest.approx(counts.max(), rel=1e-6)
    assert smooth_variance(counts, counts.max(), 1.0, 0.0) == pytest.approx(1.0 / n)


def test_lemma_2_variance_of_the_implementation():
    """Check that the library's user-level mean (public counts) has Lemma 2's variance.

    s = [1, 1, 2, 5, 20, 100], y = 0.5 + U(-0.5, 0.5) (σ² = 1/12), B = 1: the variance
    of repeated releases (fresh data, fresh noise) equals σ²Σc² + 2(B·max_l t_l/ε)², and
    the same test rejects 1.2 times that variance (power). ε = 5 rather than the spec's 1:
    dpsk clips a released mean to the bounds, which at ε = 1 (noise std ≈ 0.24 for 6
    users) would shrink the variance below Lemma 2's.
    """
    counts = np.array([1, 1, 2, 5, 20, 100])
    groups = np.repeat(np.arange(counts.size), counts)
    rng = np.random.default_rng(3)

    def release(**kwargs):  # fresh data, fresh noise
        return stats.mean(
            rng.uniform(0, 1, groups.size),
            epsilon=5.0,
            bounds=(0, 1),
            groups=groups,
            public_user_counts=True,
            random_state=rng,
            **kwargs,
        )

    first = release(return_error=True)
    h = first.threshold
    expected = smooth_variance(counts, h, 1 / 12, 2.0 / 25)
    # the reported noise std is the Laplace part: sqrt(2)·B·h/(ε·n_h), larger by the
    # rounding margin of the exact sums (dpsk._core._exact_sums.ROUNDING_MARGIN)
    n_h = np.minimum(h, counts).sum()
    assert first.noise_std == pytest.approx(np.sqrt(2) * h / (5 * n_h) / (1 - ROUNDING_MARGIN), rel=1e-6)
    values = np.array([release(threshold=h) for _ in range(6000)])
    centred = values - 0.5
    second, fourth = np.mean(centred**2), np.mean(centred**4)
    se = np.sqrt((fourth - second**2) / values.size)
    assert abs(second - expected) < 5 * se
    assert abs(second - 1.2 * expected) > 5 * se


def test_sensitivity_of_the_weighted_mean():
    """Check |β̂ - β̂'| = B·t_l <= Δ for each user switched from 0 to B, with equality at the max."""
    counts = np.array([1, 1, 2, 5, 20, 100])
    groups = np.repeat(np.arange(counts.size), counts)
    h = smooth_threshold(counts, 1 / 12, 2.0)
    n_h = np.minimum(h, counts).sum()
    c = (np.minimum(h, counts) / (counts * n_h))[groups]
    delta = h / n_h  # B·max_l t_l with B = 1
    gaps = []
    for user in range(counts.size):
        y0 = np.zeros(groups.size)
        y1 = np.where(groups == user, 1.0, 0.0)
        gaps.append(abs(c @ y1 - c @ y0))
    assert max(gaps) == pytest.approx(delta, rel=1e-12)
    assert all(g <= delta * (1 + 1e-12) for g in gaps)
    # the library's weights are the same: a huge ε reproduces c·y (up to the exact sums'
    # grids: weights rounded down to 2**-28, values to 2**-31 of the half-width)
    y = np.random.default_rng(4).uniform(0, 1, groups.size)
    released = stats.mean(
        y, epsilon=1e12, bounds=(0, 1), groups=groups, public_user_counts=True, threshold=h, random_state=0
    )
    assert released == pytest.approx(c @ y, abs=1e-7)


def test_private_threshold_concentrates_near_the_optimum():
    """Check that with many users the private h is close to the public-count optimum."""
    rng = np.random.default_rng(5)
    counts = _zipf_counts(rng, 5000)
    kappa = 4.0
    best = smooth_threshold(counts, 1.0, kappa)
    picks = [select_threshold(counts, 1.0, rng, kappa=kappa) for _ in range(50)]
    assert all(best / 2 <= h <= best * 2 for h in picks)
    v_best = smooth_variance(counts, best, 1.0, kappa)
    assert np.median([smooth_variance(counts, h, 1.0, kappa) for h in picks]) < 1.1 * v_best


def test_group_codes_match_numpy_unique():
    """Check the hash grouping against np.unique (ids, counts, first-appearance order)."""
    rng = np.random.default_rng(6)
    labels = rng.integers(-(2**62), 2**62, 50)[rng.integers(0, 50, 20000)]
    codes, counts = group_codes(labels)
    uniq, first, inverse, expected = np.unique(labels, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first)  # codes follow first appearance
    np.testing.assert_array_equal(counts, expected[order])
    np.testing.assert_array_equal(uniq[order][codes], labels)
    empty_codes, empty_counts = group_codes(np.zeros(0, dtype=np.int64))
    assert empty_codes.size == 0 and empty_counts.size == 0


def test_limit_weights_keep_threshold_rows_per_user():
    """Check sample limiting keeps min(h, s) rows per user, chosen by the order."""
    codes = np.array([0, 0, 0, 1, 2, 2], dtype=np.intp)
    order = np.array([5, 4, 3, 2, 1, 0], dtype=np.intp)
    np.testing.assert_array_equal(limit_weights(codes, 3, 2, order), [0, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(limit_weights(codes, 3, 1, order), [0, 0, 1, 1, 0, 1])
    with pytest.raises(ValueError, match="permutation"):
        limit_weights(codes, 3, 1, np.full(6, 9, dtype=np.intp))
    with pytest.raises(ValueError, match="codes"):
        limit_weights(codes, 2, 1, order)


@pytest.mark.parametrize(
    "groups, error, match",
    [
        (np.array([0.0, np.nan, 1.0]), ValueError, "NaN"),
        (np.array([0, 1]), ValueError, "2 entries but the data has 3 rows"),
        (np.array([{}, {}, {}], dtype=object), TypeError, "hashable"),
        (np.array([[0, 1], [1, 0], [0, 0]]), ValueError, "1-dimensional"),
        (np.array(["a", None, "b"], dtype=object), ValueError, "missing"),
    ],
)
def test_bad_groups(groups, error, match):
    """Check clear errors for NaN, wrong length, unhashable or missing ids (ids outside their domain)."""
    with pytest.raises(error, match=match):
        group_index(groups, 3)
    with pytest.raises(error, match=match):
        stats.mean(np.zeros(3), epsilon=1.0, bounds=(0, 1), groups=groups)


def test_ids_of_any_hashable_type():
    """Check that string, float and object ids give the same users as integers."""
    ints = np.array([3, 1, 3, 2, 1, 3])
    for ids in (ints.astype(str), ints.astype(float), np.array([("u", i) for i in ints] + [None], dtype=object)[:-1]):
        codes, counts = group_index(ids, 6)
        assert sorted(counts) == [1, 2, 3]
        assert len(set(zip(codes, ints))) == 3


def test_threshold_scores_of_neighbours_differ_by_at_most_one(monkeypatch):
    """The float scores handed to the exponential mechanism (not only the real-number ones)
    move by <= 1 when one user is added, also with millions of users (issue 14, finding 6)."""
    from dpsk.mechanisms import ExponentialMechanism
    from dpsk.stats._contribution import select_threshold

    seen = []
    original = ExponentialMechanism.randomise
    monkeypatch.setattr(
        ExponentialMechanism,
        "randomise",
        lambda self, scores: seen.append(np.array(scores, dtype=np.float64)) or original(self, scores),
    )
    counts = np.random.default_rng(5).integers(1, 50, 3_000_000)
    for kwargs in (dict(kappa=0.37), dict(level=0.9)):
        for extra in (1, 7, 49):
            seen.clear()
            select_threshold(counts, 1.0, np.random.default_rng(0), **kwargs)
            select_threshold(np.append(counts, extra), 1.0, np.random.default_rng(0), **kwargs)
            assert np.max(np.abs(seen[1] - seen[0])) <= 1.0
