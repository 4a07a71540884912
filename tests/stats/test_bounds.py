# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.stats.bounds: private per-column bounds and row-norm bounds (issue 19)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpsk import stats
from dpsk.accounting import BudgetAccountant, ComposedEvent, PureDPEvent, get_epsilon
from dpsk.accounting._recording import record_releases
from dpsk.audit import audit, canary_neighbours
from dpsk.exceptions import BudgetExceededError
from dpsk.stats import _bounds
from dpsk.stats._bounds import LOG_BINS_PER_COLUMN, _bin_edges, _log_bin_index, histogram_threshold
from dpsk.utils._testing.bounds import NoiselessQuantileQuery, NoNoiseDiscreteLaplace


def _normal(n=20_000, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def test_columns_in_a_domain_are_close_to_the_quantiles():
    """Check that with a public domain the bounds are DP quantiles close to the 1% and 99% quantiles."""
    X = _normal()
    lower, upper = stats.bounds(X, epsilon=1.0, domain=(-100, 100), random_state=0)
    np.testing.assert_allclose(lower, np.quantile(X, 0.01, axis=0), atol=0.15)
    np.testing.assert_allclose(upper, np.quantile(X, 0.99, axis=0), atol=0.15)


def test_columns_without_a_domain_cover_the_data_within_an_octave():
    """Check that the log histogram gives powers of two around the data's extent."""
    X = _normal() * np.array([1.0, 1e-6, 1e6]) + np.array([0.0, 0.0, 5e6])
    lower, upper = stats.bounds(X, epsilon=1.0, random_state=0)
    assert np.all(lower < upper)
    assert lower[0] in (-8.0, -4.0, -2.0) and upper[0] in (2.0, 4.0, 8.0)
    assert 2e-6 <= upper[1] <= 8e-6 and -8e-6 <= lower[1] <= -2e-6
    assert 2**20 <= lower[2] <= 2**22 and upper[2] in (2.0**23, 2.0**24)
    for value in (*lower, *upper):  # edges of bins: powers of two (or 0)
        assert value == 0 or math.log2(abs(value)).is_integer()


def test_log_bins_cover_every_float():
    """Check that every finite float up to ±2²⁵⁶ lies inside the edges of its logarithmic bin."""
    tiny, huge = np.finfo(np.float64).tiny, np.finfo(np.float64).max
    values = np.array([0.0, 5e-324, -5e-324, tiny, -tiny, 1.0, -1.0, 1.5, 0.75, huge, -huge, 3e300, -2.0])
    index = _log_bin_index(values)
    assert np.all((index >= 0) & (index < LOG_BINS_PER_COLUMN))
    for value, k in zip(values, index):
        low, high = _bin_edges(int(k))
        if abs(value) <= _bounds.MAX_BOUND:
            assert low <= value <= high
        else:  # beyond the cap: the cap's last bin
            assert (low, high) in ((2.0**255, 2.0**256), (-(2.0**256), -(2.0**255)))
        assert value == 0 or low < high
    assert np.all(np.diff(_log_bin_index(np.sort(values))) >= 0)  # monotone


def test_row_norm_is_an_upper_quantile_of_the_norms():
    """Check the row-norm bound with and without a public domain."""
    X = _normal(d=20)
    target = np.quantile(np.linalg.norm(X, axis=1), 0.9)
    free = stats.bounds(X, epsilon=1.0, which="row_norm", random_state=0)
    inside = stats.bounds(X, epsilon=1.0, which="row_norm", domain=40.0, random_state=0)
    assert abs(free - target) < 0.15 * target
    assert abs(inside - target) < 0.05 * target


def test_threshold_formula():
    """Check the threshold: τ = (d/ε)·ln(m/β)."""
    assert histogram_threshold(3, 0.5, 1e-3) == pytest.approx(6.0 * math.log(LOG_BINS_PER_COLUMN / 1e-3))


def test_a_histogram_threshold_empty_bin_false_positive_rate():
    """Check the threshold's failure probability on empty bins: far below β per column."""
    X = np.full((50, 1), 1.5)
    widths = [stats.bounds(X, epsilon=1.0, random_state=s) for s in range(200)]
    assert all(lo == 1.0 and hi == 2.0 for lo, hi in ((w[0][0], w[1][0]) for w in widths))


def test_cost_is_checked_before_the_data_is_read_and_recorded_once():
    """Check the protocol: BudgetExceededError before reading (even on invalid data), one spend."""
    bad = np.full((10, 2), np.nan)
    with pytest.raises(BudgetExceededError):
        stats.bounds(bad, epsilon=1.0, accountant=BudgetAccountant(epsilon=0.5))
    acc = BudgetAccountant(epsilon=2.0)
    X = _normal(n=500)
    with record_releases() as drawn:
        result = stats.bounds(X, epsilon=1.0, accountant=acc, domain=(-5, 5), random_state=0, return_error=True)
    assert len(acc.to_frame()) == 1
    assert acc.total()[0] == pytest.approx(1.0)
    leaves = result.privacy_spent.events
    assert len(leaves) == 6 and sorted(map(repr, drawn)) == sorted(map(repr, leaves))
    with pytest.raises(ValueError, match="finite"):
        stats.bounds(bad, epsilon=1.0)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"which": "rows"}, "which"),
        ({"quantiles": (0.9, 0.1), "domain": (0, 1)}, "pair"),
        ({"which": "row_norm", "quantiles": (0.5, 0.9)}, "one level"),
        ({"which": "row_norm", "domain": -1.0}, "upper bound"),
        ({"failure_probability": 0.0}, "failure_probability"),
    ],
)
def test_invalid_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        stats.bounds(_normal(n=10), epsilon=1.0, **params)


# -- audits ------------------------------------------------------------------------------


class _Sampler:
    def __init__(self, project, **kwargs):
        self.project, self.kwargs = project, kwargs

    def __call__(self, data, size, rng):
        return np.array([self.project(stats.bounds(data["X"], **self.kwargs, random_state=rng)) for _ in range(size)])


def _claim(**kwargs):
    event = stats.bounds(np.zeros((3, 1)), **kwargs, random_state=0, return_error=True).privacy_spent
    leaves = event.events if isinstance(event, ComposedEvent) else (event,)
    return ComposedEvent(tuple(PureDPEvent(get_epsilon(leaf, 0.0)) for leaf in leaves))


def _histogram_neighbours():
    """15 rows in [2, 4) (the threshold at ε = 1 is 15.25) and 100 in [0.5, 1); the canary
    in [2, 4) lifts that bin across the threshold."""
    X = np.concatenate([np.full(15, 3.0), np.full(100, 0.75)])[:, None]
    without, with_canary = canary_neighbours(X, canary_X=[3.0])
    return {"X": without["X"]}, {"X": with_canary["X"]}


def _norm_neighbours():
    """Median of row norms: 25 rows of norm 1, 25 of norm 4; the canary (norm 4) moves it."""
    X = np.concatenate([np.full(25, 1.0), np.full(25, 4.0)])[:, None]
    without, with_canary = canary_neighbours(X, canary_X=[4.0])
    return {"X": without["X"]}, {"X": with_canary["X"]}


HISTOGRAM = dict(epsilon=1.0)
NORM = dict(epsilon=1.0, which="row_norm", quantiles=0.5, domain=8.0)


def _audit_histogram(n_samples):
    sampler = _Sampler(lambda b: math.log2(b[1][0]), **HISTOGRAM)
    return audit(sampler, _histogram_neighbours(), event=_claim(**HISTOGRAM), n_samples=n_samples, random_state=0)


def _audit_norm(n_samples):
    sampler = _Sampler(math.log2, **NORM)
    return audit(sampler, _norm_neighbours(), event=_claim(**NORM), n_samples=n_samples, random_state=0)


AUDITS = {
    "histogram": (_audit_histogram, "DiscreteLaplace", NoNoiseDiscreteLaplace),
    "row norm": (_audit_norm, "QuantileQuery", NoiselessQuantileQuery),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AUDITS))
def test_bounds_pass_the_audit(name):
    """Check the log-histogram bounds and the row-norm quantile against their declared cost (α = 1e-6)."""
    result = AUDITS[name][0](4_000)
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AUDITS))
@pytest.mark.extended
def test_audit_rejects_bounds_without_noise(name, monkeypatch):
    """Check the audit's power: the histogram without noise, the quantile (nearly) without noise, are rejected."""
    run, attribute, broken = AUDITS[name]
    monkeypatch.setattr(_bounds, attribute, broken)
    assert not run(4_000).passed


@pytest.mark.parametrize("function", [stats.mean, stats.var, stats.sum, stats.median])
def test_statistics_accept_private_bounds(function):
    """Check bounds="private" in dpsk.stats: one call, one event composing the bounds'
    release (10 % of ε) and the statistic's, the released bounds reported, a close value."""
    X = _normal(n=20_000, d=2) + 3.0
    acc = BudgetAccountant(epsilon=2.0)
    with record_releases() as drawn:
        result = function(X, 1.0, bounds="private", axis=0, accountant=acc, random_state=0, return_error=True)
    assert len(acc.to_frame()) == 1 and acc.total()[0] == pytest.approx(1.0)
    leaves = result.privacy_spent.flatten()
    assert sorted(map(repr, drawn)) == sorted(map(repr, leaves))
    assert get_epsilon(leaves[0], 0.0) == pytest.approx(0.1)
    lower, upper = result.bounds
    assert np.all(lower <= 1.0) and np.all(upper >= 4.0)
    exact = {stats.mean: np.mean, stats.var: np.var, stats.sum: np.sum, stats.median: np.median}[function]
    np.testing.assert_allclose(result.value, exact(X, axis=0), rtol=0.25)


def test_private_bounds_in_statistics_refuse_groups_and_several_values_per_record():
    X = _normal(n=20, d=2)
    with pytest.raises(ValueError, match="groups"):
        stats.mean(X[:, 0], 1.0, bounds="private", groups=np.arange(20) % 4)
    with pytest.raises(ValueError, match="one value per record"):
        stats.mean(X, 1.0, bounds="private", axis=None)


def test_low_budget_boxes_hold_the_data():
    """Check (regression) the boxes at a small per-column budget: 6 N(0, 1) columns at
    ε = 0.05 (a 5 % share of ε = 1). Only the fullest octave used to pass the pooled
    threshold, e.g. (-1, -0.5), holding 14 % of a column; grown by their neighbours and
    mirrored across 0, every box holds most of its column, and spans 0."""
    for n in (3_000, 3_500, 4_000):
        X = np.random.default_rng(n).normal(size=(n, 6))
        for seed in range(10):
            lower, upper = stats.bounds(X, epsilon=0.05, random_state=seed)
            inside = np.mean((X >= lower) & (X <= upper), axis=0)
            assert inside.min() > 0.6 and np.all(lower < 0) and np.all(upper > 0), (n, seed, lower, upper)


def test_one_signed_data_are_not_mirrored():
    """Check the mirror step keeps one-signed data one-signed (no box half empty)."""
    X = np.random.default_rng(0).uniform(0.1, 1.0, size=(20_000, 3))
    for seed in range(5):
        lower, upper = stats.bounds(X, epsilon=0.1, random_state=seed)
        assert np.all(lower >= 0) and np.all(upper <= 1)
        lower, upper = stats.bounds(-X, epsilon=0.1, random_state=seed)
        assert np.all(upper <= 0) and np.all(lower >= -1)


def test_second_chance_keeps_the_zeros():
    """Check (regression) a one-hot column whose ones pass only the second chance's lower
    threshold: its box holds 0 (its zeros), not (1, 2) (zeros clipped to 1, the column
    constant: GaussianNB on Adult's 107 columns lost 0.05 of median accuracy)."""
    scale, beta = 100.0, 1e-3
    main = _bounds.histogram_threshold(1, 1.0 / scale, beta)
    window = _bounds.sum_threshold(1, scale, _bounds._WINDOW.size, beta)
    noisy = np.zeros(LOG_BINS_PER_COLUMN)
    noisy[_bounds._N_EXP] = (main + window) / 2  # zeros
    noisy[_log_bin_index(np.array([1.0]))[0]] = (main + window) / 2  # ones
    assert window < main
    assert _bounds._grown_box(noisy, main, 1, scale, beta) == (0.0, 2.0)


def test_thresholds_at_a_huge_epsilon_do_not_overflow():
    """Check that the Chernoff thresholds work when the noise vanishes (q underflows to 0 and e^λ
    would overflow): a huge-ε fit of a sparse StandardScaler crashed in the grown pooled box."""
    from dpsk.stats._bounds import _log_mgf, sum_threshold

    assert _log_mgf(710.0, 0.0) == 0.0
    assert np.isclose(_log_mgf(0.5, 0.3), 0.16993067236476977)
    assert np.isfinite(sum_threshold(6, 1e-4, 16, 1e-9))


def _sparse_and_dense(n):
    rng = np.random.default_rng(5)
    dense = rng.normal(scale=10.0, size=(n, 4)) * (rng.random((n, 4)) < 0.3)
    return sp.csr_matrix(dense), dense


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"which": "row_norm"}, {"which": "row_norm", "domain": 100.0}],
    ids=["columns", "norm", "norm-domain"],
)
def test_sparse_bounds_are_the_dense_release(kwargs, no_densifying):
    """Check that sparse X gives bitwise the dense release under the same noise, without a dense copy
    (the log histograms and row norms count its implicit zeros)."""
    X, dense = _sparse_and_dense(800)
    got = stats.bounds(X, epsilon=1.0, random_state=np.random.PCG64(3), **kwargs)
    want = stats.bounds(dense, epsilon=1.0, random_state=np.random.PCG64(3), **kwargs)
    assert np.array_equal(np.asarray(got), np.asarray(want))


def test_sparse_bounds_with_a_domain_are_the_dense_release():
    """Check the exponential-mechanism path (a public domain) on sparse X against the dense release."""
    X, dense = _sparse_and_dense(300)
    got = stats.bounds(X, epsilon=1.0, domain=(-50, 50), random_state=np.random.PCG64(3))
    want = stats.bounds(dense, epsilon=1.0, domain=(-50, 50), random_state=np.random.PCG64(3))
    assert np.array_equal(np.asarray(got), np.asarray(want))


def test_sparse_bounds_refuse_nan_before_any_spend():
    """Check that a NaN stored in sparse X raises before the accountant is charged."""
    X, _ = _sparse_and_dense(300)
    X.data[0] = np.nan
    accountant = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match="NaN"):
        stats.bounds(X, epsilon=1.0, accountant=accountant)
    assert accountant.spent_budget == []


def test_sparse_bounds_leave_the_callers_matrix_as_it_is():
    """Check that a CSR matrix with duplicate entries is summed in a copy, not in place."""
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([1, 0, 1]), np.array([0, 3, 3])), shape=(2, 2))
    data, indices = X.data.copy(), X.indices.copy()
    stats.bounds(X, epsilon=1.0, random_state=0)
    assert np.array_equal(X.data, data) and np.array_equal(X.indices, indices)
