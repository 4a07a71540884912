# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.audit.audit: statistical validity, power on several output types, determinism, errors."""

import doctest
import math

import numpy as np
import pytest
from scipy import stats

import dpsk.audit
from dpsk.accounting import LaplaceEvent
from dpsk.audit import AuditResult, audit
from dpsk.audit._audit import _clopper_pearson

EPS = math.log(3)


def laplace_count(value, size, rng):
    """The exact boundary case: Laplace(1/ε) on a sensitivity-1 count, ε = ln 3."""
    return value + rng.laplace(0.0, 1.0 / EPS, size)


def test_clopper_pearson_matches_scipy_exact_interval():
    """Check that one-sided bounds at α equal the two-sided exact interval at 1 − 2α."""
    for k, n in [(0, 50), (3, 50), (25, 50), (50, 50), (7, 10_000)]:
        lower, upper = _clopper_pearson(np.array([k]), n, 0.01)
        interval = stats.binomtest(k, n).proportion_ci(confidence_level=0.98, method="exact")
        assert lower[0] == pytest.approx(interval.low, abs=1e-12)
        assert upper[0] == pytest.approx(interval.high, abs=1e-12)


@pytest.mark.audit
def test_false_rejection_rate_is_at_most_alpha():
    """Check validity at a loose α on a mechanism exactly at its claim (Laplace tails have ratio e^ε).

    Also checks that the ε lower bound covers the true ε as often as it claims.
    """
    alpha, runs = 0.2, 200
    results = [
        audit(laplace_count, (0.0, 1.0), epsilon=EPS, n_samples=2_000, alpha=alpha, random_state=seed)
        for seed in range(runs)
    ]
    rejected = sum(not r.passed for r in results)
    above = sum(r.epsilon_lower_bound > EPS for r in results)
    # Binomial(200, 0.2) exceeds 70 with probability < 1e-6.
    assert rejected <= 70 and above <= 70
    assert rejected < runs  # and the test is not trivially passing: see test_power_* below


def test_same_seed_same_result_and_seeds_matter():
    first = audit(laplace_count, (0.0, 1.0), epsilon=EPS, n_samples=5_000, random_state=3)
    second = audit(laplace_count, (0.0, 1.0), epsilon=EPS, n_samples=5_000, random_state=3)
    other = audit(laplace_count, (0.0, 1.0), epsilon=EPS, n_samples=5_000, random_state=4)
    assert first == second
    assert first.counts != other.counts


def test_power_on_vector_outputs():
    """A 2-d Laplace release with the shift split over both coordinates (L1 sensitivity 1)."""

    def release(shift):
        def sampler(value, size, rng):
            return value * np.asarray(shift) + rng.laplace(0.0, 1.0 / EPS, (size, 2))

        return sampler

    assert audit(release([0.5, 0.5]), (0.0, 1.0), epsilon=EPS, random_state=0).passed
    broken = audit(release([1.0, 1.0]), (0.0, 1.0), epsilon=EPS, random_state=0)  # L1 sensitivity 2
    assert not broken.passed
    assert broken.epsilon_lower_bound > EPS


def randomized_response(true_epsilon):
    def sampler(bit, size, rng):
        keep = rng.random(size) < math.exp(true_epsilon) / (1 + math.exp(true_epsilon))
        return np.where(keep, bit, 1 - bit)

    return sampler


def test_discrete_outputs():
    assert audit(randomized_response(1.0), (0, 1), epsilon=1.0, random_state=0).passed
    broken = audit(randomized_response(1.3), (0, 1), epsilon=1.0, random_state=0)
    assert not broken.passed
    assert "==" in broken.event or "<" in broken.event or ">" in broken.event


def leaky(delta_true):
    """ε-DP Laplace, except that with probability delta_true it releases the input in the clear."""

    def sampler(value, size, rng):
        out = value + rng.laplace(0.0, 1.0 / EPS, size)
        clear = rng.random(size) < delta_true
        return np.where(clear, 100.0 + value, out)

    return sampler


def test_approximate_dp_claims():
    assert audit(leaky(0.0), (0.0, 1.0), epsilon=EPS, delta=0.01, random_state=0).passed
    assert audit(leaky(0.01), (0.0, 1.0), epsilon=EPS, delta=0.01, random_state=0).passed
    broken = audit(leaky(0.05), (0.0, 1.0), epsilon=EPS, delta=0.01, random_state=0)
    assert not broken.passed
    assert broken.statistic > broken.threshold


def test_event_claim_is_stronger_than_bare_epsilon():
    """Laplace claimed as an event is tested along its exact profile (TV at ε' = 0 included)."""
    result = audit(laplace_count, (0.0, 1.0), event=LaplaceEvent(1 / EPS), random_state=0)
    assert result.passed and result.claim == LaplaceEvent(1 / EPS)


def test_result_reports_verdict_bound_and_statistic():
    result = audit(leaky(0.05), (0.0, 1.0), epsilon=EPS, delta=0.01, n_samples=20_000, random_state=1)
    assert isinstance(result, AuditResult)
    assert result.verdict == "fail" and not result.passed
    assert result.confidence == pytest.approx(1 - 1e-6)
    assert result.n_test == 10_000 and result.delta == 0.01
    text = str(result)
    assert "fail" in text and "epsilon >=" in text and result.event in text


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(), "exactly one"),
        (dict(epsilon=1.0, event=LaplaceEvent(1.0)), "exactly one"),
        (dict(epsilon=1.0, alpha=0.0), "alpha"),
        (dict(epsilon=1.0, selection_fraction=1.0), "selection_fraction"),
        (dict(epsilon=1.0, n_samples=15), "too small"),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit(laplace_count, (0.0, 1.0), **kwargs)


def test_invalid_samplers_and_neighbours():
    with pytest.raises(ValueError, match="pair"):
        audit(laplace_count, (0.0,), epsilon=1.0)
    with pytest.raises(ValueError, match="shape"):
        audit(lambda v, n, rng: np.zeros(n + 1), (0.0, 1.0), epsilon=1.0, n_samples=100)
    with pytest.raises(ValueError, match="NaN"):
        audit(lambda v, n, rng: np.full(n, np.nan), (0.0, 1.0), epsilon=1.0, n_samples=100)
    with pytest.raises(ValueError, match="small vector"):
        audit(lambda v, n, rng: np.zeros((n, 100)), (0.0, 1.0), epsilon=1.0, n_samples=100)
    with pytest.raises(TypeError, match="PrivacyEvent"):
        audit(laplace_count, (0.0, 1.0), event=(1.0, 0.0))


def test_docstring_examples():
    for module in (dpsk.audit, dpsk.audit._audit):
        failures, _ = doctest.testmod(module, raise_on_error=False)
        assert failures == 0
