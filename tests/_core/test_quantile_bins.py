# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The compiled bin indices of the private quantile are bitwise the numpy definition
(``dpsk.stats._quantile._bin_index``), and the windowed release built on them draws as
the one on the numpy indices."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsk._core._quantile import bin_index_counts
from dpsk.stats._quantile import _bin_index, _column_blocks, block_counts

RANGES = [
    (-3.0, 3.0),
    (0.0, 1.0),
    (1.7e9, 1.7e9 + 3600.0),  # far from the origin
    (-1e308, 1e308),  # the halves keep the width finite
    (0.0, 4e-323),  # a subnormal range: the factor overflows
    (-1e-310, 1e-310),
    (0.1, 0.1 + 2**-40),
]


def _edges_and_neighbours(lower, upper, bins, rng, n=2000):
    """Values at, next to and between bin edges, outside the range and at its ends."""
    k = rng.integers(0, bins + 1, size=n).astype(np.float64)
    edges = lower + k * (upper / bins - lower / bins)
    values = np.concatenate(
        [
            edges,
            np.nextafter(edges, -np.inf),
            np.nextafter(edges, np.inf),
            rng.uniform(lower / 2, upper / 2, size=n) * 2,
            [lower, upper, -0.0, 0.0, np.nextafter(lower, -np.inf), np.nextafter(upper, np.inf)],
            [-1e308, 1e308, -np.finfo(np.float64).max, np.finfo(np.float64).max],
        ]
    )
    return values[np.isfinite(values)]


def _check(values, lower, upper, bins):
    shift, n_blocks = _column_blocks(values.size, bins)
    index, counts = bin_index_counts(values, lower, upper, bins, shift, n_blocks)
    expected = _bin_index(values, lower, upper, bins)
    assert index.dtype == np.uint32
    np.testing.assert_array_equal(index, expected)
    np.testing.assert_array_equal(counts, block_counts([expected], shift, n_blocks)[0])


@pytest.mark.parametrize("lower, upper", RANGES)
@pytest.mark.parametrize("bins", [1, 2, 7, 4096, 2**31 + 1, 2**32])
def test_bin_indices_are_the_numpy_definition(lower, upper, bins):
    rng = np.random.default_rng(bins % 1000)
    with np.errstate(over="ignore", invalid="ignore"):
        values = _edges_and_neighbours(lower, upper, bins, rng)
    _check(values, lower, upper, bins)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=30),
    ends=st.tuples(st.floats(-1e300, 1e300), st.floats(-1e300, 1e300)),
    bins=st.integers(1, 2**32),
)
def test_bin_indices_are_the_numpy_definition_anywhere(values, ends, bins):
    lower, upper = min(ends), max(ends)
    if not upper / 2 - lower / 2 > 0:
        return
    _check(np.array(values), lower, upper, bins)


def test_strided_columns_and_refusals():
    X = np.random.default_rng(0).normal(size=(500, 3))
    shift, n_blocks = _column_blocks(500, 2**32)
    index, _ = bin_index_counts(X[:, 1], -2.0, 2.0, 2**32, shift, n_blocks)
    np.testing.assert_array_equal(index, _bin_index(X[:, 1], -2.0, 2.0, 2**32))
    with pytest.raises(ValueError, match="upper > lower"):
        bin_index_counts(X[:, 1], 1.0, 1.0, 16, 0, 16)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        bin_index_counts(X[:, 1], 0.0, 1.0, 2**32 + 1, 20, 2**16)
    with pytest.raises(ValueError, match="cover"):
        bin_index_counts(X[:, 1], 0.0, 1.0, 1024, 2, 16)


def test_release_draws_as_on_the_numpy_indices(monkeypatch):
    """The same seeded quantiles with the compiled pass and with the numpy definition."""
    import dpsk.stats._quantile as module
    from dpsk import stats

    x = np.random.default_rng(2).normal(size=(30_000, 2))
    kwargs = dict(epsilon=0.5, bounds=(-4.0, 4.0), random_state=11)
    compiled = stats.quantile(x, [0.1, 0.5, 0.97], axis=0, **kwargs)

    def numpy_only(column, lower, upper, bins):
        index = module._bin_index(np.asarray(column, dtype=np.float64), lower, upper, bins)
        return index, module._count_blocks(index, bins)

    monkeypatch.setattr(module, "_indexed_blocks", numpy_only)
    reference = stats.quantile(x, [0.1, 0.5, 0.97], axis=0, **kwargs)
    np.testing.assert_array_equal(compiled, reference)
    assert not math.isnan(float(compiled[0, 0]))
