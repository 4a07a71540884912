# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of dpsk.stats histogram and histogramdd (item level)."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from dpsk import stats
from dpsk.exceptions import PrivacyLeakWarning


def test_large_epsilon_matches_numpy():
    """Check that a huge ε gives numpy's histogram and edges."""
    x = np.random.default_rng(0).normal(size=1000)
    hist, edges = stats.histogram(x, epsilon=1e9, bins=7, range=(-2, 2), random_state=0)
    expected, expected_edges = np.histogram(x, bins=7, range=(-2, 2))
    np.testing.assert_array_equal(hist, expected)
    np.testing.assert_array_equal(edges, expected_edges)
    X = np.random.default_rng(1).normal(size=(500, 2))
    hist, edges = stats.histogramdd(X, epsilon=1e9, bins=(3, [-1, 0, 2]), range=[(-2, 2), None], random_state=0)
    expected, _ = np.histogramdd(X, bins=(3, [-1, 0, 2]), range=[(-2, 2), None])
    np.testing.assert_array_equal(hist, expected)
    density, _ = stats.histogram(x, epsilon=1e9, bins=7, range=(-2, 2), density=True, random_state=0)
    np.testing.assert_allclose(density, np.histogram(x, bins=7, range=(-2, 2), density=True)[0])


def test_counts_get_integer_discrete_laplace_noise():
    """Check that the noise per bin is discrete Laplace with scale 1/ε (chi-square, with power)."""
    rng = np.random.default_rng(2)
    x = np.full(20, 0.5)
    noise = np.concatenate(
        [stats.histogram(x, epsilon=0.7, bins=2, range=(0, 1), random_state=rng)[0] - [0, 20] for _ in range(3000)]
    )
    assert noise.dtype.kind == "i"
    support = np.arange(-25, 26)

    def pvalue(eps):
        p = np.exp(-eps * np.abs(support))
        from dpsk.utils._testing import chisquare_pvalue

        return chisquare_pvalue(noise, support, p)

    assert pvalue(0.7) > 1e-6
    assert pvalue(0.7 * 1.25) < 1e-6


def test_records_with_several_values_scale_the_noise():
    """Check that a record of k values gets noise for sensitivity k."""
    x = np.zeros((10, 4))
    r, _ = stats.histogram(x, epsilon=1.0, bins=2, range=(0, 1), random_state=0, return_error=True)
    r1, _ = stats.histogram(x[:, 0], epsilon=1.0, bins=2, range=(0, 1), random_state=0, return_error=True)
    # discrete Laplace P(k) ∝ r^|k|, r = exp(-ε/Δ): variance 2r/(1 - r)²
    for result, sensitivity in ((r, 4), (r1, 1)):
        q = np.exp(-1.0 / sensitivity)
        assert result.noise_std[0] == pytest.approx(np.sqrt(2 * q) / (1 - q), rel=1e-9)


def test_interval_coverage():
    """Check that the interval of every bin covers the true count with the stated confidence."""
    rng = np.random.default_rng(3)
    x = np.random.default_rng(4).uniform(0, 1, 100)
    truth = np.histogram(x, bins=5, range=(0, 1))[0]
    hits = 0
    for _ in range(1000):
        r, _ = stats.histogram(x, epsilon=1.0, bins=5, range=(0, 1), random_state=rng, return_error=True)
        lo, hi = r.confidence_interval(0.9)
        hits += int(np.sum((lo <= truth) & (truth <= hi)))
    assert scipy_stats.binomtest(hits, 5000, 0.9, alternative="less").pvalue > 1e-6


def test_data_driven_bins_are_refused_and_missing_range_warns():
    """Check that bins chosen from the data are refused, and a missing range warns."""
    with pytest.raises(ValueError, match="not private"):
        stats.histogram(np.zeros(5), epsilon=1.0, bins="auto")
    with pytest.warns(PrivacyLeakWarning, match="range"):
        stats.histogram(np.arange(5.0), epsilon=1.0, bins=3)
    with pytest.raises(ValueError, match="shape"):
        stats.histogramdd(np.zeros(5), epsilon=1.0, bins=3, range=[(0, 1)])
    with pytest.raises(ValueError, match="bins"):
        stats.histogram(np.zeros(5), epsilon=1.0, bins=0, range=(0, 1))
    with pytest.raises(ValueError, match="NaN"):
        stats.histogram(np.array([np.nan]), epsilon=1.0, bins=2, range=(0, 1))
