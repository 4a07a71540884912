# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the noise is calibrated for must hold for the *computed* statistic (issue 14, 1).

Every Laplace release of a fit on D and on D′ = D plus one record is recorded (the value
handed to ``Laplace.randomise``, i.e. the normalised pre-noise statistic). The L1 distance
between the two must not exceed the mechanism's sensitivity. D: values with a large
common offset in a narrow public window (UNIX timestamps of one hour), where centring
after a float summation (Σc² − 2mΣc + m²n) moved the statistic by ~40 sensitivities
at this n. Runs on any version of dpsk: it only watches the mechanism's input.
"""

import numpy as np
import pytest

from dpsk import stats
from dpsk.decomposition import PCA
from dpsk.mechanisms import Laplace
from dpsk.naive_bayes import GaussianNB
from dpsk.preprocessing import StandardScaler

N = 200_000
LOWER, UPPER = 1.7e9, 1.7e9 + 3600.0
RECORD = 1440.0


@pytest.fixture
def recorded(monkeypatch):
    calls = []
    original = Laplace.randomise

    def randomise(self, value):
        calls.append((self.sensitivity, np.array(value, dtype=np.float64, copy=True)))
        return original(self, value)

    monkeypatch.setattr(Laplace, "randomise", randomise)
    return calls


def pair(dtype, d=1):
    rng = np.random.default_rng(0)
    X = (LOWER + rng.uniform(0, 3600, (N, d))).astype(dtype)
    return X, np.vstack([X, np.full((1, d), LOWER + RECORD, dtype=dtype)])


def discrepancies(recorded, fit, D, D1):
    fit(D)
    first = list(recorded)
    recorded.clear()
    fit(D1)
    assert len(first) == len(recorded) > 0
    return [(np.sum(np.abs(b - a)), sens) for (sens, a), (_, b) in zip(first, recorded)]


def assert_within(pairs):
    for distance, sensitivity in pairs:
        assert distance <= sensitivity, (distance, sensitivity)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("function", [stats.sum, stats.mean, stats.var, stats.std])
def test_stats_item_level(recorded, dtype, function):
    D, D1 = pair(dtype)
    fit = lambda X: function(X[:, 0], epsilon=1.0, bounds=(LOWER, UPPER), random_state=0)
    assert_within(discrepancies(recorded, fit, D, D1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("function", [stats.count, stats.sum, stats.mean, stats.var])
def test_stats_user_level_weights(recorded, dtype, function):
    """Users with 1-5 rows, capped at h = 3 rows' weight: fractional weights; D′ adds a user."""
    D, D1 = pair(dtype)
    groups = np.arange(N) // 3 + (np.arange(N) % 7 == 0)  # users of varying sizes
    groups1 = np.append(groups, groups.max() + 1)
    kwargs = {} if function is stats.count else {"bounds": (LOWER, UPPER)}

    def fit(X):
        g = groups if X.shape[0] == N else groups1
        return function(X[:, 0], epsilon=1.0, groups=g, threshold=3.0, random_state=0, **kwargs)

    assert_within(discrepancies(recorded, fit, D, D1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_standard_scaler(recorded, dtype):
    D, D1 = pair(dtype, d=2)
    fit = lambda X: StandardScaler(epsilon=1.0, bounds=(LOWER, UPPER), random_state=0).fit(X)
    assert_within(discrepancies(recorded, fit, D, D1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gaussian_nb(recorded, dtype):
    D, D1 = pair(dtype, d=2)
    y = np.arange(N) % 2
    fit = lambda X: GaussianNB(epsilon=1.0, bounds=(LOWER, UPPER), classes=[0, 1], random_state=0).fit(
        X, y if X.shape[0] == N else np.append(y, 1)
    )
    assert_within(discrepancies(recorded, fit, D, D1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pca_box_centre(recorded, dtype):
    D, D1 = pair(dtype, d=2)
    fit = lambda X: PCA(epsilon=1.0, bounds=(LOWER, UPPER), random_state=0).fit(X)
    assert_within(discrepancies(recorded, fit, D, D1))
