# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP StandardScaler and MinMaxScaler: limits, noise, post-processing, pandas output."""

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.preprocessing import MinMaxScaler as SkMinMaxScaler
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from dpsk.accounting import CalibratedEvent, ComposedEvent, PureDPEvent, record_releases
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.preprocessing import MinMaxScaler, StandardScaler
from dpsk.preprocessing._data import BUDGET_SHARES
from dpsk.utils._testing import assert_fit_with_power, ks_pvalue


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(0).normal([1.0, -2.0, 5.0], [1.0, 0.5, 3.0], size=(20_000, 3))


BOUNDS = ([-10.0, -10.0, -20.0], [10.0, 10.0, 30.0])


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_standard_scaler_huge_epsilon_matches_scikit_learn(data, delta):
    ours = StandardScaler(epsilon=1e9, delta=delta, bounds=BOUNDS, random_state=0).fit(data)
    reference = SkStandardScaler().fit(data)
    np.testing.assert_allclose(ours.mean_, reference.mean_, rtol=1e-6)
    np.testing.assert_allclose(ours.var_, reference.var_, rtol=1e-5)
    np.testing.assert_allclose(ours.transform(data), reference.transform(data), atol=1e-4)
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(data)), data, atol=1e-9)
    assert ours.n_samples_seen_ == pytest.approx(20_000, abs=1e-3)


def test_standard_scaler_is_accurate_at_epsilon_one(data):
    """20,000 rows, bounds about 3 to 5 standard deviations wide: errors well below 5%.

    (With BOUNDS, feature 1's box is 20 standard deviations wide and its scale is off by
    up to ~30%: the price of loose bounds, since the noise is relative to the box.)
    """
    bounds = ([-4.0, -4.0, -10.0], [6.0, 0.0, 20.0])
    for seed in range(3):
        ours = StandardScaler(epsilon=1.0, bounds=bounds, random_state=seed).fit(data)
        np.testing.assert_allclose(ours.mean_, data.mean(axis=0), atol=0.05)
        np.testing.assert_allclose(ours.scale_, data.std(axis=0), rtol=0.05)


@pytest.mark.slow
def test_standard_scaler_sums_get_laplace_noise_of_the_stated_scale():
    """Σz's noise is Laplace of scale d/(0.45 ε): KS test at α = 1e-6 with a power check."""
    epsilon, d = 0.5, 2
    X = np.zeros((2_000, d))  # at the midpoint: Σz = 0, and the mean is noise / count
    noise = [
        (lambda s: s.mean_[0] * max(s.n_samples_seen_, 1.0))(
            StandardScaler(epsilon=epsilon, bounds=(-1.0, 1.0), random_state=seed).fit(X)
        )
        for seed in range(8_000)
    ]
    scale = d / (BUDGET_SHARES[1] * epsilon)
    assert_fit_with_power(lambda b: ks_pvalue(noise, stats.laplace(scale=b).cdf), scale)


@pytest.mark.parametrize(
    "with_mean, with_std, n_releases", [(True, True, 1), (True, False, 1), (False, True, 1), (False, False, 0)]
)
def test_standard_scaler_options(data, with_mean, with_std, n_releases):
    with record_releases() as drawn:
        scaler = StandardScaler(epsilon=1e9, bounds=BOUNDS, with_mean=with_mean, with_std=with_std, random_state=0)
        scaler.fit(data)
    assert len(drawn) == n_releases
    reference = SkStandardScaler(with_mean=with_mean, with_std=with_std).fit(data)
    np.testing.assert_allclose(scaler.transform(data), reference.transform(data), atol=1e-4)
    if not (with_mean or with_std):
        assert scaler.privacy_spent_ == ComposedEvent(()) and scaler.mean_ is None


@pytest.mark.parametrize("delta, event_type", [(0.0, PureDPEvent), (1e-5, CalibratedEvent)])
def test_standard_scaler_releases_once(data, delta, event_type):
    with record_releases() as drawn:
        scaler = StandardScaler(epsilon=1.0, delta=delta, bounds=BOUNDS, random_state=0).fit(data)
    assert drawn == [scaler.privacy_spent_] and isinstance(drawn[0], event_type)


def test_standard_scaler_variance_floor_and_bounds():
    X = np.full((100, 1), 0.5)
    scaler = StandardScaler(epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X)
    assert 0 < scaler.var_[0] <= 0.25 and np.all(scaler.scale_ > 0)
    assert 0.0 <= scaler.mean_[0] <= 1.0


def test_minmax_scaler_huge_epsilon_finds_the_populated_bins():
    X = np.random.default_rng(0).uniform([2.0, -1.0], [6.0, 0.0], size=(10_000, 2))
    scaler = MinMaxScaler(epsilon=1e9, bounds=(-10.0, 10.0), bins=200, random_state=0).fit(X)
    np.testing.assert_allclose(scaler.data_min_, [2.0, -1.0], atol=0.1 + 1e-9)
    np.testing.assert_allclose(scaler.data_max_, [6.0, 0.0], atol=0.1 + 1e-9)
    reference = SkMinMaxScaler().fit(X)
    np.testing.assert_allclose(scaler.transform(X), reference.transform(X), atol=0.1)
    np.testing.assert_allclose(scaler.inverse_transform(scaler.transform(X)), X, atol=1e-9)
    assert scaler.n_samples_seen_ == 10_000


def test_minmax_scaler_ignores_a_few_outliers():
    """A handful of rows cannot move the noisy range: they do not stand out of the noise."""
    X = np.concatenate([np.random.default_rng(0).uniform(0.0, 1.0, (10_000, 1)), [[9.0], [9.5]]])
    scaler = MinMaxScaler(epsilon=1.0, bounds=(-10.0, 10.0), bins=40, random_state=0).fit(X)
    assert scaler.data_min_[0] == pytest.approx(0.0) and scaler.data_max_[0] == pytest.approx(1.0)


def test_minmax_scaler_without_signal_uses_the_bounds():
    scaler = MinMaxScaler(epsilon=1.0, bounds=(-3.0, 5.0), random_state=0).fit(np.zeros((5, 2)))
    np.testing.assert_array_equal(scaler.data_min_, -3.0)
    np.testing.assert_array_equal(scaler.data_max_, 5.0)


def test_minmax_scaler_release_and_threshold():
    """One release of the d × bins counts, sensitivity d; an empty bin rarely crosses the threshold."""
    X = np.zeros((10, 3))
    with record_releases() as drawn:
        scaler = MinMaxScaler(epsilon=0.5, bounds=(-1.0, 1.0), bins=16, random_state=0).fit(X)
    mechanism = scaler._mechanism(3, np.random.default_rng(0))
    assert drawn == [scaler.privacy_spent_] == [mechanism.privacy_event(48)]
    # P(one bin's discrete Laplace noise of scale b exceeds b·ln(2B/0.05)) <= 0.05/(2B).
    b, bins = 3 / 0.5, 16
    threshold = b * math.log(2 * bins / 0.05)
    tail = math.exp(-math.floor(threshold + 1) / b) / (1 + math.exp(-1 / b))
    assert tail * bins <= 0.05 / 2


def test_minmax_scaler_feature_range_and_clip():
    X = np.random.default_rng(0).uniform(0.0, 1.0, (5_000, 1))
    scaler = MinMaxScaler((-1, 1), epsilon=1e9, bounds=(0.0, 1.0), bins=10, clip=True, random_state=0).fit(X)
    Z = scaler.transform(np.array([[-5.0], [0.5], [5.0]]))
    np.testing.assert_allclose(Z[:, 0], [-1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="feature_range"):
        MinMaxScaler((1, 0), bounds=(0.0, 1.0)).fit(X)


@pytest.mark.parametrize("cls", [StandardScaler, MinMaxScaler])
def test_float32_and_warning(cls):
    X = np.random.default_rng(0).normal(size=(100, 2)).astype(np.float32)
    assert cls(epsilon=1.0, bounds=(-4, 4), random_state=0).fit(X).transform(X).dtype == np.float32
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        cls(epsilon=1.0, bounds="data").fit(X)


@pytest.mark.parametrize("cls", [StandardScaler, MinMaxScaler])
def test_set_output_pandas(cls):
    """``set_output(transform="pandas")`` returns a DataFrame with the input's column names."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(200, 2)), columns=["height", "weight"])
    scaler = cls(epsilon=1.0, bounds=(-4, 4), random_state=0).set_output(transform="pandas")
    out = scaler.fit_transform(frame)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["height", "weight"]
    np.testing.assert_allclose(out.to_numpy(), scaler.transform(frame.to_numpy()))
    assert list(scaler.get_feature_names_out()) == ["height", "weight"]
