# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of dpsk.stats count, sum, mean, var and std (item level)."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from dpsk import stats
from dpsk.accounting import BudgetAccountant, record_releases
from dpsk.accounting._calibration import split_epsilon
from dpsk.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpsk.utils._testing import assert_fit_with_power, ks_pvalue

FUNCTIONS = {
    "sum": (stats.sum, np.sum),
    "mean": (stats.mean, np.mean),
    "var": (stats.var, np.var),
    "std": (stats.std, np.std),
}


def _data(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize(
    "shape, axis",
    [((500,), None), ((500,), 0), ((500, 3), 0), ((500, 3), None), ((50, 4, 3), (0, 1)), ((50, 4, 3), 0)],
)
def test_large_epsilon_matches_numpy(name, shape, axis):
    """Check that with a huge ε the statistic equals numpy's, with numpy's output shape."""
    dp_func, np_func = FUNCTIONS[name]
    x = _data(shape)
    out = dp_func(x, epsilon=1e9, bounds=(-1, 1), axis=axis, random_state=0)
    expected = np_func(x, axis=axis)
    assert np.shape(out) == np.shape(expected)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)
    kept = dp_func(x, epsilon=1e9, bounds=(-1, 1), axis=axis, keepdims=True, random_state=0)
    assert np.shape(kept) == np.shape(np_func(x, axis=axis, keepdims=True))


def test_count_large_epsilon():
    """Check that the count is the number of values reduced, an integer at item level."""
    x = _data((40, 3))
    assert stats.count(x, epsilon=1e9, random_state=0) == 120
    np.testing.assert_array_equal(stats.count(x, epsilon=1e9, axis=0, random_state=0), [40, 40, 40])
    assert np.issubdtype(np.asarray(stats.count(x, epsilon=1.0, random_state=0)).dtype, np.integer)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_preserved(name):
    """Check that float32 data gives float32 results."""
    x = _data((100, 2)).astype(np.float32)
    assert FUNCTIONS[name][0](x, epsilon=1.0, bounds=(-1, 1), axis=0, random_state=0).dtype == np.float32
    assert FUNCTIONS[name][0](x.astype(np.float64), epsilon=1.0, bounds=(-1, 1), random_state=0).dtype == np.float64


def test_values_are_clipped_to_bounds():
    """Check that data outside the bounds is clipped, not trusted."""
    x = np.array([0.0, 0.0, 1000.0, -1000.0])
    assert stats.sum(x, epsilon=1e9, bounds=(-1, 1), random_state=0) == pytest.approx(0.0, abs=1e-6)
    assert stats.mean(np.full(10, 5.0), epsilon=1e9, bounds=(0, 1), random_state=0) == pytest.approx(1.0)
    assert stats.var(np.array([-5.0, 5.0]), epsilon=1e9, bounds=(-1, 1), random_state=0) == pytest.approx(1.0)


def test_mean_and_var_stay_in_their_range():
    """Check that tiny budgets still give results inside the possible range."""
    x = _data(5)
    for seed in range(20):
        assert -1 <= stats.mean(x, epsilon=1e-3, bounds=(-1, 1), random_state=seed) <= 1
        assert 0 <= stats.var(x, epsilon=1e-3, bounds=(-1, 1), random_state=seed) <= 1


def test_sum_noise_is_laplace_with_the_declared_scale():
    """Check that the noise of a sum is Laplace with scale max|bound|/ε (with power)."""
    x = np.full(10, 2.0)
    rng = np.random.default_rng(1)
    noise = np.array([stats.sum(x, epsilon=0.5, bounds=(-1, 3), random_state=rng) for _ in range(8000)]) - 20.0
    assert_fit_with_power(lambda b: ks_pvalue(noise, scipy_stats.laplace(scale=b).cdf), 3.0 / 0.5)


def test_mean_noise_matches_reported_std():
    """Check that the reported noise_std matches the spread of repeated releases (with power)."""
    x = _data(2000, seed=3)
    rng = np.random.default_rng(2)
    results = [stats.mean(x, epsilon=0.05, bounds=(-1, 1), random_state=rng, return_error=True) for _ in range(3000)]
    values = np.array([r.value for r in results])
    reported = np.median([r.noise_std for r in results])

    # chi-square test of the sample variance against the reported one
    def pvalue(std):
        statistic = (values.size - 1) * values.var(ddof=1) / std**2
        cdf = scipy_stats.chi2.cdf(statistic, values.size - 1)
        return 2 * min(cdf, 1 - cdf)

    assert pvalue(reported) > 1e-6
    assert pvalue(1.2 * reported) < 1e-6


@pytest.mark.parametrize("name", ["sum", "mean", "var", "std"])
def test_confidence_interval_coverage(name):
    """Check that a 90% interval covers the noise-free value at least 90% of the time, and a
    shrunk one does not (power)."""
    x = _data(300, seed=4)
    truth = FUNCTIONS[name][1](x)
    rng = np.random.default_rng(5)
    covered, covered_shrunk = 0, 0
    n = 3000
    for _ in range(n):
        r = FUNCTIONS[name][0](x, epsilon=0.5, bounds=(-1, 1), random_state=rng, return_error=True)
        lo, hi = r.confidence_interval(0.9)
        covered += lo <= truth <= hi
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        covered_shrunk += mid - 0.3 * half <= truth <= mid + 0.3 * half
    assert scipy_stats.binomtest(covered, n, 0.9, alternative="less").pvalue > 1e-6
    assert scipy_stats.binomtest(covered_shrunk, n, 0.9, alternative="less").pvalue < 1e-6


def test_count_interval_is_exact_for_discrete_laplace():
    """Check that the count's interval has coverage at least the confidence."""
    rng = np.random.default_rng(6)
    x = np.zeros(50)
    hits = 0
    for _ in range(2000):
        r = stats.count(x, epsilon=1.0, random_state=rng, return_error=True)
        lo, hi = r.confidence_interval(0.8)
        hits += lo <= 50 <= hi
    assert scipy_stats.binomtest(hits, 2000, 0.8, alternative="less").pvalue > 1e-6


def test_result_object_reports_the_noise():
    """Check that a DPResult says that noise was added, how much, and what it cost."""
    x = _data(100)
    r = stats.mean(x, epsilon=1.0, bounds=(-1, 1), random_state=0, return_error=True)
    assert r.noise_std > 0
    assert "floating-point safe" in r.mechanism
    assert "noise_std" in repr(r)
    assert r.privacy_spent is not None
    assert r.value == stats.mean(x, epsilon=1.0, bounds=(-1, 1), random_state=0)
    with pytest.raises(NotImplementedError, match="quantile"):
        r.rank_error()
    with pytest.raises(ValueError, match="confidence"):
        r.confidence_interval(1.5)


def test_accountant_is_charged_what_is_released():
    """Check that the accountant records exactly the events the releases noted."""
    x = _data((200, 3))
    acc = BudgetAccountant(epsilon=10.0)
    with record_releases() as drawn:
        r = stats.var(x, epsilon=1.0, bounds=(-1, 1), axis=0, accountant=acc, random_state=0, return_error=True)
    assert sorted(map(repr, drawn)) == sorted(map(repr, r.privacy_spent.events))
    assert acc.total().epsilon == pytest.approx(1.0, rel=1e-6)
    with acc:
        stats.mean(x, epsilon=2.0, bounds=(-1, 1), random_state=0)
    assert acc.total().epsilon == pytest.approx(3.0, rel=1e-6)


def test_budget_is_checked_before_the_data_is_read():
    """Check that an exhausted budget raises BudgetExceededError, not a data error."""
    acc = BudgetAccountant(epsilon=0.5)
    bad = np.array([np.nan, 1.0])
    for func in (stats.mean, stats.var, stats.sum, stats.median):
        with pytest.raises(BudgetExceededError):
            func(bad, epsilon=1.0, bounds=(0, 1), accountant=acc)
    with pytest.raises(BudgetExceededError):
        stats.count(bad, epsilon=1.0, accountant=acc)
    with pytest.raises(BudgetExceededError):
        stats.histogram(bad, epsilon=1.0, bins=3, range=(0, 1), accountant=acc)
    assert acc.total().epsilon == 0


def test_nothing_is_spent_on_invalid_data():
    """Check that data errors are raised before the budget is spent."""
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match="NaN"):
        stats.mean(np.array([np.nan, 1.0]), epsilon=1.0, bounds=(0, 1), accountant=acc)
    assert acc.total().epsilon == 0


def test_data_derived_bounds_warn():
    """Check that data-derived bounds (``"data"``) raise a PrivacyLeakWarning."""
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        stats.mean(_data(10), epsilon=1.0, bounds="data", random_state=0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(a=np.array([1.0, np.inf])), ValueError, "NaN or infinity"),
        (dict(a=np.zeros((0,))), ValueError, "no records"),
        (dict(a=np.zeros((4, 2)), axis=1), ValueError, "axis 0"),
        (dict(a=np.zeros((4, 2)), axis=(0, 0)), ValueError, "repeated"),
        (dict(a=np.zeros((4, 2)), axis=5), ValueError, "out of bounds"),
        (dict(a=np.array(["a", "b"])), TypeError, "real numbers"),
        (dict(a=np.float64(1.0)), ValueError, "scalar"),
        (dict(a=np.zeros(4), epsilon=-1.0), ValueError, "epsilon"),
        (dict(a=np.zeros(4), bounds=(1, 0)), ValueError, "lower"),
        (dict(a=np.zeros((4, 2)), axis=0, bounds=([0, 0, 0], 1)), ValueError, "broadcastable"),
        (dict(a=np.zeros(4), bounds=1.0), ValueError, "tuple"),
        (dict(a=np.zeros(4), threshold=3), ValueError, "groups"),
        (dict(a=np.zeros(4), accountant=object()), TypeError, "accountant"),
    ],
)
def test_bad_input(kwargs, error, match):
    """Check that bad input gives a clear error."""
    kwargs = {"epsilon": 1.0, "bounds": (0, 1), **kwargs}
    with pytest.raises(error, match=match):
        stats.mean(**kwargs)


def test_random_state_reproducible_and_fresh_by_default():
    """Check that an int seed reproduces a release and None does not."""
    x = _data(100)
    assert stats.mean(x, epsilon=1.0, bounds=(-1, 1), random_state=3) == stats.mean(
        x, epsilon=1.0, bounds=(-1, 1), random_state=3
    )
    assert stats.mean(x, epsilon=1.0, bounds=(-1, 1)) != stats.mean(x, epsilon=1.0, bounds=(-1, 1))


def test_input_not_mutated():
    """Check that the input array is left untouched."""
    x = _data((50, 2)) * 10
    copy = x.copy()
    stats.var(x, epsilon=1.0, bounds=(-1, 1), axis=0, random_state=0)
    np.testing.assert_array_equal(x, copy)


def test_gaussian_noise_with_delta():
    """Check that delta > 0 switches the sums to Gaussian noise, less noisy for many columns."""
    x = _data((1000, 50))
    laplace = stats.mean(x, epsilon=1.0, bounds=(-1, 1), axis=0, random_state=0, return_error=True)
    gauss = stats.mean(x, epsilon=1.0, delta=1e-6, bounds=(-1, 1), axis=0, random_state=0, return_error=True)
    assert "Gaussian" in gauss.mechanism
    assert np.all(gauss.noise_std < laplace.noise_std)


def test_split_budget_never_exceeds_epsilon():
    """Check that budget shares sum to at most ε exactly."""
    from fractions import Fraction

    for eps in (0.1, 1.0, 0.3, 7.77):
        for weights in ([1, 2], [1, 3**0.5, 3**0.5], [0.1, 0.9], [1] * 7):
            shares = split_epsilon(eps, weights)
            assert sum(Fraction(s) for s in shares) <= Fraction(eps)
            assert sum(shares) == pytest.approx(eps, rel=1e-12)
