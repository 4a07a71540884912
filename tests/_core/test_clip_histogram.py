# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The per-feature histogram kernel ``clipped_histogram`` (one bin per row and feature)."""

import numpy as np
import pytest

from dpsk._core._accumulate import clipped_histogram


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_numpy_on_clipped_values(dtype):
    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 2.0, (300_000, 3)).astype(dtype)  # several chunks
    lower, upper = np.array([-1.0, -5.0, 0.0]), np.array([1.0, 5.0, 10.0])
    counts = clipped_histogram(X, lower, upper, 17)
    for j in range(3):
        clipped = np.clip(X[:, j].astype(np.float64), lower[j], upper[j])
        expected, _ = np.histogram(clipped, bins=17, range=(lower[j], upper[j]))
        # Values at an edge may fall on either side: totals are exact, bins nearly so.
        assert np.abs(counts[j] - expected).max() <= 2
    np.testing.assert_array_equal(counts.sum(axis=1), 300_000)
    assert counts.dtype == np.int64


def test_extremes_and_constant_features():
    X = np.array([[-1e300, 3.0, 2.0], [1e300, 3.0, 2.0], [0.5, 3.0, 2.0], [1.0, 3.0, 2.0]])
    counts = clipped_histogram(X, [0.0, 3.0, 1.0], [1.0, 3.0, 1.0], 4)
    np.testing.assert_array_equal(counts[0], [1, 0, 1, 2])  # below -> bin 0, at/above upper -> last
    np.testing.assert_array_equal(counts[1], [4, 0, 0, 0])  # constant feature: bin 0
    np.testing.assert_array_equal(counts[2], [4, 0, 0, 0])


def test_thread_count_does_not_change_the_result():
    X = np.random.default_rng(1).uniform(-2, 2, (200_000, 2))
    a = clipped_histogram(X, [-1, -1], [1, 1], 64, n_threads=1)
    b = clipped_histogram(X, [-1, -1], [1, 1], 64, n_threads=4)
    np.testing.assert_array_equal(a, b)


def test_errors():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="NaN or infinity"):
        clipped_histogram(np.array([[0.0, np.nan]]), [0, 0], [1, 1], 2)
    with pytest.raises(ValueError, match="n_bins"):
        clipped_histogram(X, [0, 0], [1, 1], 0)
    with pytest.raises(ValueError, match="lower must not exceed upper"):
        clipped_histogram(X, [1, 0], [0, 1], 2)
    with pytest.raises(TypeError):
        clipped_histogram(X.tolist(), [0, 0], [1, 1], 2)
    np.testing.assert_array_equal(clipped_histogram(np.zeros((0, 2)), [0, 0], [1, 1], 3), np.zeros((2, 3)))
