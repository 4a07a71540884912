# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""numpy/pandas interfaces of dpsk.stats: epsilon=inf, coordinate sequences, DataFrames."""

import math

import numpy as np
import pytest

from dpsk import stats
from dpsk.accounting import BudgetAccountant, get_epsilon
from dpsk.exceptions import BudgetExceededError

X = np.random.default_rng(0).uniform(0.0, 10.0, (200, 3))
GROUPS = np.arange(200) // 4


@pytest.mark.parametrize(
    "function, reference",
    [
        (stats.mean, np.mean),
        (stats.sum, np.sum),
        (stats.var, np.var),
        (stats.std, np.std),
    ],
)
@pytest.mark.parametrize("extra", [{}, {"delta": 1e-6}], ids=["pure", "gaussian"])
def test_infinite_epsilon_gives_the_exact_statistic(function, reference, extra):
    """Check that epsilon=inf releases the non-private statistic (the ceiling of a privacy-utility curve)."""
    acc = BudgetAccountant()
    result = function(
        X, epsilon=math.inf, bounds=(0.0, 10.0), axis=0, accountant=acc, return_error=True, random_state=0, **extra
    )
    np.testing.assert_allclose(result.value, reference(X, axis=0), rtol=1e-9)
    np.testing.assert_array_equal(result.noise_std, 0.0)
    assert math.isinf(get_epsilon(result.privacy_spent, 0.5))
    assert math.isinf(acc.total().epsilon)


def test_infinite_epsilon_count_and_histogram_are_exact():
    assert stats.count(X, epsilon=math.inf) == X.size
    hist, edges = stats.histogram(X[:, 0], epsilon=math.inf, bins=5, range=(0, 10))
    np.testing.assert_array_equal(hist, np.histogram(X[:, 0], bins=5, range=(0, 10))[0])


def test_infinite_epsilon_user_level_mean_needs_no_noise():
    value = stats.mean(X[:, 0], epsilon=math.inf, bounds=(0, 10), groups=GROUPS, random_state=0)
    again = stats.mean(X[:, 0], epsilon=math.inf, bounds=(0, 10), groups=GROUPS, random_state=1)
    assert value == again


def test_infinite_epsilon_is_refused_by_a_finite_budget():
    acc = BudgetAccountant(epsilon=100.0)
    with pytest.raises(BudgetExceededError):
        stats.mean(X, epsilon=math.inf, bounds=(0, 10), accountant=acc)
    assert len(acc) == 0


def test_histogramdd_reads_a_sequence_as_coordinate_arrays():
    """Check numpy's rule: histogramdd((x, y)) is two coordinates per record, not two records."""
    x, y = X[:, 0], X[:, 1]
    expected, _ = np.histogramdd((x, y), bins=3, range=[(0, 10), (0, 10)])
    for sample in ((x, y), [x, y], [list(x), list(y)]):
        hist, edges = stats.histogramdd(sample, epsilon=math.inf, bins=3, range=[(0, 10), (0, 10)])
        assert hist.shape == (3, 3) and len(edges) == 2
        np.testing.assert_array_equal(hist, expected)
    rows, _ = stats.histogramdd(np.column_stack([x, y]), epsilon=math.inf, bins=3, range=[(0, 10), (0, 10)])
    np.testing.assert_array_equal(rows, expected)


def test_statistics_of_a_dataframe_are_series_with_its_columns():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["age", "hours", "income"])
    mean = stats.mean(df, epsilon=math.inf, bounds=(0, 10), axis=0)
    assert isinstance(mean, pd.Series)
    assert list(mean.index) == ["age", "hours", "income"]
    pd.testing.assert_series_equal(mean, df.mean(), check_names=False, rtol=1e-9)
    assert isinstance(stats.count(df, epsilon=1.0, axis=0, random_state=0), pd.Series)
    result = stats.std(df, epsilon=1.0, bounds=(0, 10), axis=0, random_state=0, return_error=True)
    assert list(result.value.index) == list(df.columns)
    assert list(stats.median(df, epsilon=1.0, bounds=(0, 10), axis=0, random_state=0).index) == list(df.columns)
    quantiles = stats.quantile(df, [0.25, 0.75], epsilon=1.0, bounds=(0, 10), axis=0, random_state=0)
    assert isinstance(quantiles, pd.DataFrame) and list(quantiles.index) == [0.25, 0.75]
    assert list(quantiles.columns) == list(df.columns)
    # axis=None reduces everything, as numpy does: a scalar.
    assert np.ndim(stats.mean(df, epsilon=1.0, bounds=(0, 10), random_state=0)) == 0


@pytest.mark.parametrize("function", [stats.mean, stats.var, stats.median])
def test_bounds_by_column_name_on_a_dataframe(function):
    """Check that bounds={"column": (low, high)} are matched to a DataFrame's columns as the
    estimators' bounds by name: the same release as the arrays in column order."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["age", "hours", "income"])
    by_name = {"income": (0.0, 5.0), "age": (1.0, 10.0), "hours": (0.0, 8.0)}
    arrays = (np.array([1.0, 0.0, 0.0]), np.array([10.0, 8.0, 5.0]))
    got = function(df, epsilon=1.0, bounds=by_name, axis=0, random_state=np.random.PCG64(0))
    expected = function(df, epsilon=1.0, bounds=arrays, axis=0, random_state=np.random.PCG64(0))
    pd.testing.assert_series_equal(got, expected)
    # Column indices work as keys too, on arrays as on frames.
    by_index = dict(enumerate(zip(*arrays)))
    np.testing.assert_array_equal(
        function(X, epsilon=1.0, bounds=by_index, axis=0, random_state=np.random.PCG64(0)), expected.to_numpy()
    )


def test_bounds_by_name_refused_before_any_spend():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["age", "hours", "income"])
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="income"):
        stats.mean(df, epsilon=1.0, bounds={"age": (0, 10), "hours": (0, 10)}, axis=0, accountant=acc)
    with pytest.raises(ValueError, match="axis=0"):
        stats.mean(df, epsilon=1.0, bounds={"age": (0, 10)}, accountant=acc)  # axis=None: one output
    assert len(acc) == 0
