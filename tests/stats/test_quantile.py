# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of dpsk.stats quantile, percentile and median (item level)."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from dpsk import stats
from dpsk.accounting import ExponentialEvent, record_releases
from dpsk.utils._testing import ALPHA, chisquare_pvalue


def test_large_epsilon_matches_numpy_to_the_bin_width():
    """Check that a huge ε gives numpy's quantile up to the bin width, with numpy's shape."""
    x = np.random.default_rng(0).normal(size=(2000, 3))
    q = [0.1, 0.5, 0.9]
    out = stats.quantile(x, q, epsilon=1e6, bounds=(-4, 4), axis=0, random_state=0)
    expected = np.quantile(x, q, axis=0)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, atol=8 / 1024 + 0.01)
    assert stats.median(x, epsilon=1e6, bounds=(-4, 4), random_state=0) == pytest.approx(np.median(x), abs=0.02)
    p = stats.percentile(x, [10, 90], epsilon=1e6, bounds=(-4, 4), axis=0, keepdims=True, random_state=0)
    assert p.shape == np.percentile(x, [10, 90], axis=0, keepdims=True).shape


def test_quantile_is_a_bin_middle_inside_bounds():
    """Check that releases are bin middles within the bounds, float32 preserved."""
    x = np.random.default_rng(1).uniform(0, 1, 100).astype(np.float32)
    for seed in range(10):
        v = stats.median(x, epsilon=0.01, bounds=(0, 1), bins=8, random_state=seed)
        assert v.dtype == np.float32
        assert float(v) in set(np.arange(8) / 8 + 1 / 16)


def test_selection_probabilities_follow_the_exponential_mechanism():
    """Check the bin frequencies against exp(ε·score/2) (chi-square, with power)."""
    x = np.array([0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9])  # 7 values, median 0.6
    bins = 4
    rng = np.random.default_rng(2)
    draws = np.array([stats.median(x, epsilon=1.0, bounds=(0, 1), bins=bins, random_state=rng) for _ in range(20000)])
    index = np.floor(draws * bins).astype(int)
    observed = np.bincount(index, minlength=bins)
    # bin rank intervals [#below left edge, #below right edge]: [0,2], [2,3], [3,5], [5,7]
    start, stop = np.array([0, 2, 3, 5]), np.array([2, 3, 5, 7])

    def pvalue(eps):
        target = 0.5 * 7
        score = -np.maximum(np.maximum(start - target, target - stop), 0)
        p = np.exp(eps * score / 2)
        return scipy_stats.chisquare(observed, p / p.sum() * observed.sum()).pvalue

    assert pvalue(1.0) > 1e-6
    assert pvalue(1.5) < 1e-6


def test_rank_error_bound_holds():
    """Check that the released value's rank error stays within the reported bound."""
    x = np.sort(np.random.default_rng(3).uniform(0, 1, 500))
    rng = np.random.default_rng(4)
    misses = 0
    for _ in range(500):
        r = stats.median(x, epsilon=0.2, bounds=(0, 1), bins=64, random_state=rng, return_error=True)
        bound = r.rank_error(0.9)
        lo, hi = r.value - 1 / 128, r.value + 1 / 128  # the chosen bin
        rank_lo, rank_hi = np.searchsorted(x, lo), np.searchsorted(x, hi)
        distance = max(rank_lo - 250, 250 - rank_hi, 0)
        misses += distance > bound
    assert scipy_stats.binomtest(misses, 500, 0.1, alternative="greater").pvalue > 1e-6
    with pytest.raises(NotImplementedError, match="rank"):
        r.confidence_interval()


def test_budget_is_shared_by_levels_and_columns():
    """Check that q levels x columns selections each get ε/(levels·columns)."""
    x = np.random.default_rng(5).normal(size=(100, 2))
    with record_releases() as drawn:
        r = stats.quantile(x, [0.25, 0.75], epsilon=1.0, bounds=(-3, 3), axis=0, random_state=0, return_error=True)
    assert len(drawn) == 4
    assert all(e == ExponentialEvent(0.25) for e in drawn)
    assert r.privacy_spent.events == tuple(drawn)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(q=1.5), "quantiles"),
        (dict(q=-0.1), "quantiles"),
        (dict(q=0.5, bins=0), "bins"),
    ],
)
def test_bad_input(kwargs, match):
    """Check that bad levels and bins raise clear errors."""
    with pytest.raises(ValueError, match=match):
        stats.quantile(np.zeros(5), epsilon=1.0, bounds=(0, 1), **kwargs)
    with pytest.raises(ValueError, match="percentiles"):
        stats.percentile(np.zeros(5), 101, epsilon=1.0, bounds=(0, 1))


def _fine_grid_gap_probabilities(x, epsilon, level=0.5):
    """Exact probabilities of the gaps between the sorted values (and of the values' own
    bins) under the exponential mechanism over 2**32 bins of [0, 1], computed directly."""
    index = np.sort(np.floor(np.asarray(x) * 2**32).astype(np.int64))
    n = index.size
    target = level * n
    # groups in order: run before value 0, bin of value 0, run, ..., bin of value n-1, run
    edges = np.concatenate([[-1], index, [2**32]])
    runs = np.diff(edges) - 1
    counts = np.empty(2 * n + 1)
    counts[0::2], counts[1::2] = runs, 1
    low = np.empty(2 * n + 1)
    low[0::2], low[1::2] = np.arange(n + 1), np.arange(n)
    high = low.copy()
    high[1::2] += 1
    distance = np.maximum(np.maximum(low - target, target - high), 0)
    w = counts * np.exp(-epsilon * distance / 2)
    return edges, w / w.sum()


def test_fine_grid_follows_the_exponential_mechanism_over_gaps():
    """Check the default 2**32-bin grid: the released point's gap has probability ∝
    (bins in the gap) · exp(ε·score/2) (chi-square at α = 1e-6, with power against ε × 1.3),
    and releases are bin middles spread uniformly inside the gap."""
    x = np.array([0.05, 0.1, 0.3, 0.32, 0.6, 0.7, 0.9])
    rng = np.random.default_rng(6)
    draws = np.array([stats.median(x, epsilon=1.0, bounds=(0, 1), random_state=rng) for _ in range(20000)])
    bins = np.floor(draws * 2**32).astype(np.int64)
    np.testing.assert_array_equal(draws, (bins + 0.5) / 2**32)  # bin middles
    edges, probs = _fine_grid_gap_probabilities(x, 1.0)
    # group of a bin: 2i for the run after edge i, 2i + 1 for the bin of value i
    position = np.searchsorted(edges[1:-1], bins, side="left")
    on_value = (position < x.size) & (edges[1:-1][np.minimum(position, x.size - 1)] == bins)
    group = 2 * position + on_value
    support = np.arange(probs.size)
    assert chisquare_pvalue(group, support, probs) > ALPHA
    assert chisquare_pvalue(group, support, _fine_grid_gap_probabilities(x, 1.3)[1]) < ALPHA
    inside = draws[group == 6]  # the gap (0.3, 0.32) around rank 3
    assert inside.size > 300
    assert scipy_stats.kstest((inside - 0.3) / 0.02, "uniform").pvalue > ALPHA


def test_fine_grid_resolution_at_large_n():
    """Check that the default grid is not the error's floor: a huge ε recovers the median
    of 10⁵ values to about 1e-6 (4096 bins could not do better than 1.2e-4)."""
    x = np.random.default_rng(7).uniform(0, 1, 100_000)
    v = stats.median(x, epsilon=1e4, bounds=(0, 1), random_state=0)
    assert abs(v - np.median(x)) < 1e-6
    coarse = stats.median(x, epsilon=1e4, bounds=(0, 1), bins=4096, random_state=0)
    assert abs(coarse - np.median(x)) > 1e-6


def test_bins_validation_and_weighted_ranks_on_the_fine_grid():
    x = np.random.default_rng(8).uniform(0, 1, 50)
    with pytest.raises(ValueError, match="bins"):
        stats.median(x, bounds=(0, 1), bins=0)
    with pytest.raises(ValueError, match="bins"):
        stats.median(x, bounds=(0, 1), bins=2**54)
    # user level: one user holds 10 rows at 0.95; with h = 1 it counts as one value
    y = np.concatenate([np.linspace(0.1, 0.5, 9), np.full(10, 0.95)])
    groups = np.concatenate([np.arange(9), np.full(10, 9)])
    med = stats.median(y, epsilon=1e6, bounds=(0, 1), groups=groups, threshold=1.0, random_state=0)
    assert 0.1 <= med <= 0.5


def _values_with_ties(n, rng):
    x = np.concatenate([rng.normal(size=n - n // 4), rng.integers(-2, 3, size=n // 4).astype(np.float64)])
    rng.shuffle(x)
    return x


def _full_and_windowed(x, *, epsilon, bins, level, unit, seed):
    """The bin selected from all 2n + 1 groups and from the window, with the same Generator,
    and whether the two Generators end in the same state."""
    from dpsk.mechanisms import ExponentialMechanism
    from dpsk.stats._quantile import _bin_groups, _bin_index, _select_bin, _select_counted

    full, windowed = (
        ExponentialMechanism(epsilon=epsilon, sensitivity=1.0, random_state=np.random.default_rng(seed))
        for _ in range(2)
    )
    a = _select_bin(full, _bin_groups(x, -3.0, 3.0, bins, None), level, unit)
    b = _select_counted(windowed, _bin_index(x, -3.0, 3.0, bins), bins, level, unit)
    return a, b, full._rng.bit_generator.state == windowed._rng.bit_generator.state


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 20.0, np.inf])
@pytest.mark.parametrize("bins", [1, 5, 4096, 2**32])
def test_windowed_selection_is_the_full_one_draw_for_draw(epsilon, bins):
    """The unweighted release reads only a window of ranks around qN: the same bin and the
    same use of the Generator as the selection over all groups (n up to 20,000, ties,
    values clipped at the bounds, extreme levels, a unit of 3 values per record)."""
    rng = np.random.default_rng(3)
    for n in (0, 1, 50, 20_000):
        x = _values_with_ties(n, rng) * 1.5 if n else np.empty(0)
        for level in (0.0, 0.1, 0.5, 1.0):
            for unit in (1, 3):
                a, b, same = _full_and_windowed(x, epsilon=epsilon, bins=bins, level=level, unit=unit, seed=n + unit)
                assert a == b and same, (n, level, unit)


def test_windowed_selection_scores_merged_regions_exactly(monkeypatch):
    """With the proposal's last level lowered to 10, bins of the merged regions outside the
    window are proposed often; their exact ranks (counted) keep every selection
    equal to the full one."""
    import dpsk.mechanisms._selection as selection
    import dpsk.stats._quantile as quantile

    monkeypatch.setattr(selection, "_TOP_LEVEL", 10)
    searched = []
    original = quantile._counted_ranks
    monkeypatch.setattr(quantile, "_counted_ranks", lambda index, b: searched.append(b) or original(index, b))
    x = _values_with_ties(20_000, np.random.default_rng(4))
    for seed in range(8):
        a, b, same = _full_and_windowed(x, epsilon=0.5, bins=2**16, level=0.5, unit=1, seed=seed)
        assert a == b and same
    assert searched, "no bin of a merged region was proposed"


def test_too_narrow_a_window_changes_the_draws(monkeypatch):
    """Power of the equality test: a window whose outer regions are not all at the last
    proposal level changes the selections."""
    import dpsk.stats._quantile as quantile

    monkeypatch.setattr(quantile, "rank_margin", lambda mechanism, unit, n: 3)
    x = np.random.default_rng(5).normal(size=20_000)  # no ties at the median: a narrow window bites
    outcomes = [_full_and_windowed(x, epsilon=0.5, bins=4096, level=0.5, unit=1, seed=seed) for seed in range(20)]
    assert any(a != b or not same for a, b, same in outcomes)
