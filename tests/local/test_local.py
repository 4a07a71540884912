# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.local: randomizers (exact probabilities, accounting, seeds) and unbiased aggregation.

The privacy audits of the randomizers are in tests/privacy/test_mechanism_privacy.py.
The statistical tests (``slow``) run R independent groups of n users in one batch at a
fixed seed and test, at α = 1e-6 (Bonferroni over categories), that the mean estimate
is the truth (z-test with the formula's variance) and that the spread across groups is
the formula's variance (χ² test); each test is shown to reject a wrong estimator.
"""

import math

import numpy as np
import pytest
from scipy.stats import chi2, norm

from dpsk.accounting import BudgetAccountant, PureDPEvent, RandomizedResponseEvent, record_releases
from dpsk.exceptions import BudgetExceededError
from dpsk.local import (
    DirectEncoding,
    FrequencyEstimator,
    LocalHashing,
    MeanEstimator,
    OneBitMean,
    UnaryEncoding,
    choose_protocol,
    make_randomizer,
)
from dpsk.local._randomizers import HASH_PRIME, _gamma, _keep_flags, hash_buckets

ALPHA = 1e-6
PROTOCOLS = ["grr", "oue", "sue", "olh", "blh"]
D = 16
# Category v is held by COUNTS[v] of the n users of a group; category 0 by no one.
COUNTS = np.array([0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 100, 20, 4, 1])
N_USERS = int(COUNTS.sum())  # 500


def grouped_estimates(protocol, epsilon, *, groups, seed, aggregate_epsilon=None):
    """Counts estimated from ``groups`` independent groups of the COUNTS users (groups, D)."""
    values = np.tile(np.repeat(np.arange(D), COUNTS), groups)
    reports = make_randomizer(protocol, epsilon=epsilon, n_categories=D, random_state=seed).randomise(values)
    reports = reports.reshape(groups, N_USERS, *reports.shape[1:])
    estimator = FrequencyEstimator(protocol=protocol, epsilon=aggregate_epsilon or epsilon, n_categories=D)
    return np.array([estimator.fit(group).counts_ for group in reports])


def unbiasedness_z(estimates, truth, variances):
    """Largest |z| of the mean over groups against the truth, and the Bonferroni critical value."""
    z = (estimates.mean(axis=0) - truth) / np.sqrt(variances / estimates.shape[0])
    return np.max(np.abs(z)), norm.isf(ALPHA / (2 * np.size(truth)))


def variance_in_bounds(estimates, variances):
    """Whether each column's sample variance is within the two-sided χ² bounds of ``variances``."""
    r = estimates.shape[0]
    ratio = (r - 1) * estimates.var(axis=0, ddof=1) / variances
    level = ALPHA / (2 * np.size(variances))
    return (chi2.ppf(level, r - 1) <= ratio) & (ratio <= chi2.isf(level, r - 1))


# ---------------------------------------------------------------- exact sampling


@pytest.mark.parametrize("k, gamma", [(2, 0.0), (2, math.log(3)), (5, 1.0), (64, 3.5)])
def test_keep_flags_have_the_exact_probability(k, gamma):
    """Check P(keep) = 1/(1 + (k-1) e^-γ) (binomial two-sided test at α = 1e-6, fixed seed)."""
    n = 200_000
    kept = _keep_flags(n, k, _gamma(gamma), np.random.default_rng(0)).sum()
    p = 1 / (1 + (k - 1) * math.exp(-gamma))
    assert abs(kept - n * p) <= norm.isf(ALPHA / 2) * math.sqrt(n * p * (1 - p))


def test_gamma_is_exact_for_float_epsilon():
    """Check that ε (a float) is used exactly, not rounded, for ordinary values."""
    for eps in (0.1, math.log(3), 1 / 3, 7.25):
        num, den = _gamma(eps)
        assert num / den == eps and float(num) / den == eps


@pytest.mark.parametrize(
    "randomizer, p, q",
    [
        (DirectEncoding(epsilon=1.0, n_categories=5), math.e / (math.e + 4), 1 / (math.e + 4)),
        (UnaryEncoding(epsilon=1.0, n_categories=5), 0.5, 1 / (math.e + 1)),
        (
            UnaryEncoding(epsilon=1.0, n_categories=5, variant="symmetric"),
            1 / (1 + math.exp(-0.5)),
            1 / (1 + 1.6487212707001282),
        ),
        (LocalHashing(epsilon=1.0, n_categories=5), math.e / (math.e + 3), 1 / 4),
        (LocalHashing(epsilon=1.0, n_categories=5, n_buckets=2), math.e / (math.e + 1), 1 / 2),
    ],
)
def test_support_probabilities_are_the_papers(randomizer, p, q):
    """Check (p, q) against WBLJ17's formulas, and that the odds ratio is at most e^ε."""
    np.testing.assert_allclose(randomizer.support_probabilities, (p, q), rtol=1e-12)


def test_olh_bucket_count_and_auto_rule():
    """Check g = round(e^ε + 1) and the rule GRR iff d < 3 e^ε + 2 (WBLJ17 §5)."""
    assert LocalHashing(epsilon=math.log(3), n_categories=10).n_buckets_ == 4
    assert LocalHashing(epsilon=0.1, n_categories=10).n_buckets_ == 2
    assert LocalHashing(epsilon=4.0, n_categories=10).n_buckets_ == round(math.exp(4) + 1)
    assert choose_protocol(1.0, 10) == "grr" and choose_protocol(1.0, 11) == "olh"  # 3e + 2 = 10.15
    assert choose_protocol(4.0, 165) == "grr" and choose_protocol(4.0, 166) == "olh"
    assert FrequencyEstimator(protocol="auto", epsilon=1.0, n_categories=11).fit(np.ones((5, 3))).protocol_ == "olh"
    assert isinstance(make_randomizer("auto", epsilon=1.0, n_categories=10), DirectEncoding)


def test_hash_family_collides_with_probability_one_over_g():
    """Check P(h(x) = h(y)) = 1/g for x != y and uniform buckets (α = 1e-6), and exact uint64 arithmetic."""
    rng = np.random.default_rng(1)
    n, g = 400_000, 7
    a = rng.integers(1, HASH_PRIME, size=n)
    b = rng.integers(0, HASH_PRIME, size=n)
    same = (hash_buckets(a, b, 3, g) == hash_buckets(a, b, 1_000_000, g)).sum()
    assert abs(same - n / g) <= norm.isf(ALPHA / 2) * math.sqrt(n / g * (1 - 1 / g))
    # The largest operands do not overflow: compare with Python's integers.
    big = np.array([HASH_PRIME - 1])
    assert hash_buckets(big, big, big, 1 << 31)[0] == ((HASH_PRIME - 1) ** 2 + HASH_PRIME - 1) % HASH_PRIME % (1 << 31)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_report_shapes_and_ranges(protocol):
    randomizer = make_randomizer(protocol, epsilon=1.0, n_categories=D, random_state=0)
    values = np.arange(D).reshape(4, 4)
    reports = randomizer.randomise(values)
    assert reports.shape[:2] == (4, 4)
    flat = reports.reshape(D, -1)
    assert randomizer.support_counts(flat).shape == (D,)
    scalar = randomizer.randomise(3)
    assert np.shape(scalar) == reports.shape[2:]


# ----------------------------------------------------------- privacy accounting


@pytest.mark.parametrize(
    "randomizer, event",
    [
        (DirectEncoding(epsilon=1.0, n_categories=5), RandomizedResponseEvent(1.0, 5)),
        (UnaryEncoding(epsilon=1.0, n_categories=5), PureDPEvent(1.0)),
        (LocalHashing(epsilon=1.0, n_categories=50), RandomizedResponseEvent(1.0, 4)),
        (OneBitMean(epsilon=1.0, bounds=(0, 1)), RandomizedResponseEvent(1.0, 2)),
    ],
)
def test_one_release_recorded_and_charged_per_call(randomizer, event):
    """Check one note_release and one spend on the user's accountant per call (a batch is one per user)."""
    accountant = BudgetAccountant(epsilon=1.5)
    with record_releases() as releases:
        randomizer.randomise([0, 1, 1, 0], accountant=accountant)
    assert releases == [event] and randomizer.privacy_event() == event
    assert accountant.spent_budget == [event]
    with pytest.raises(BudgetExceededError):
        randomizer.randomise([0], accountant=accountant)  # 2 x 1.0 > 1.5
    assert len(accountant.spent_budget) == 1
    with accountant, pytest.raises(BudgetExceededError):  # the active accountant is charged too
        randomizer.randomise([0])


def test_budget_is_checked_before_values_are_read():
    """Check that an exhausted budget refuses before the values are validated (no value-dependent error first)."""
    accountant = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        DirectEncoding(epsilon=1.0, n_categories=3).randomise([7], accountant=accountant)


@pytest.mark.parametrize("bad", [[3], [-1], [0.5], [np.nan]])
def test_values_outside_the_domain_are_rejected_without_echo(bad):
    with pytest.raises(ValueError, match="not shown"):
        DirectEncoding(epsilon=1.0, n_categories=3).randomise(bad)


def test_randomizers_are_immutable():
    randomizer = LocalHashing(epsilon=1.0, n_categories=8)
    with pytest.raises(AttributeError, match="immutable"):
        randomizer.epsilon = 2.0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_integer_seed_is_reproducible_and_calls_differ(protocol):
    values = np.arange(D)
    first = make_randomizer(protocol, epsilon=1.0, n_categories=D, random_state=3)
    again = make_randomizer(protocol, epsilon=1.0, n_categories=D, random_state=3)
    a = first.randomise(values)
    np.testing.assert_array_equal(a, again.randomise(values))
    assert not np.array_equal(a, first.randomise(values))  # the second release has its own stream


# ------------------------------------------------------------------ aggregation


@pytest.mark.parametrize(
    "protocol, reports, message",
    [
        ("grr", [[0, 1]], "1-d"),
        ("grr", [D], "outside"),
        ("oue", np.zeros((3, 4)), r"shape \(n, 16\)"),
        ("oue", np.full((3, D), 2), "outside"),
        ("olh", np.zeros((3, 2)), r"shape \(n, 3\)"),
        ("olh", [[0, 0, 0]], "a >= 1"),
        ("olh", [[1, 0, 9]], "outside"),
    ],
)
def test_frequency_estimator_rejects_invalid_reports(protocol, reports, message):
    with pytest.raises(ValueError, match=message):
        FrequencyEstimator(protocol=protocol, epsilon=1.0, n_categories=D).fit(reports)


def test_frequency_estimator_attributes():
    reports = make_randomizer("olh", epsilon=2.0, n_categories=D, random_state=0).randomise(np.arange(D))
    est = FrequencyEstimator(protocol="olh", epsilon=2.0, n_categories=D).fit(reports)
    p, q = est.support_probabilities_
    assert est.n_reports_ == D and est.protocol_ == "olh"
    np.testing.assert_allclose(est.frequencies_, est.counts_ / D)
    # WBLJ17: OLH's Var* = 4 e^ε / (e^ε - 1)^2 per user when g = e^ε + 1 exactly; here g = 8 ≈ e^2 + 1.
    assert est.variance_ == pytest.approx(q * (1 - q) / (D * (p - q) ** 2))
    assert est.variance_ * D == pytest.approx(4 * math.exp(2) / (math.exp(2) - 1) ** 2, rel=0.01)


def test_grr_matches_randomized_response_debiasing():
    """Check that GRR aggregation agrees with RandomizedResponse.debias_frequencies (same formula)."""
    from dpsk.mechanisms import RandomizedResponse

    reports = DirectEncoding(epsilon=1.0, n_categories=5, random_state=0).randomise(np.arange(1000) % 5)
    est = FrequencyEstimator(protocol="grr", epsilon=1.0, n_categories=5).fit(reports)
    expected = RandomizedResponse(epsilon=1.0, categories=range(5)).debias_frequencies(reports)
    np.testing.assert_allclose(est.frequencies_, expected)


def test_mean_estimator_rejects_non_bits_and_bad_bounds():
    with pytest.raises(ValueError, match="bits"):
        MeanEstimator().fit([0, 2])
    with pytest.raises(ValueError, match="lo < hi"):
        MeanEstimator(bounds=(1, 1)).fit([0, 1])


# ------------------------------------------------------ statistical tests (slow)

# The χ² bounds on each variance ratio are then about 1 ± 0.19.
GROUPS = 1500


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 3.0])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_frequency_estimates_are_unbiased_with_the_papers_variance(protocol, epsilon):
    """Check E[count] = truth and Var[count] = n q(1-q)/(p-q)^2 + c (1-p-q)/(p-q) (α = 1e-6, 1500 groups)."""
    estimates = grouped_estimates(protocol, epsilon, groups=GROUPS, seed=7)
    variances = make_randomizer(protocol, epsilon=epsilon, n_categories=D).count_variance(N_USERS, COUNTS)
    z, critical = unbiasedness_z(estimates, COUNTS, variances)
    assert z <= critical, f"{protocol}: largest |z| {z:.2f} > {critical:.2f}"
    assert np.all(variance_in_bounds(estimates, variances))


@pytest.mark.slow
@pytest.mark.extended
def test_statistical_tests_reject_wrong_estimators():
    """Check the power of both tests: reports at ε = 1 aggregated at ε = 1.25 (biased); GRR's variance for OLH."""
    estimates = grouped_estimates("olh", 1.0, groups=GROUPS, seed=7, aggregate_epsilon=1.25)
    variances = make_randomizer("olh", epsilon=1.25, n_categories=D).count_variance(N_USERS, COUNTS)
    z, critical = unbiasedness_z(estimates, COUNTS, variances)
    assert z > critical
    right = grouped_estimates("olh", 1.0, groups=GROUPS, seed=7)
    grr = make_randomizer("grr", epsilon=1.0, n_categories=D).count_variance(N_USERS, COUNTS)  # 1.5x OLH's
    assert not np.any(variance_in_bounds(right, grr))


def _mean_estimates(values, epsilon, bounds, groups, seed, randomizer=OneBitMean):
    bits = randomizer(epsilon=epsilon, bounds=bounds, random_state=seed).randomise(np.tile(values, groups))
    est = MeanEstimator(epsilon=epsilon, bounds=bounds)
    return np.array([est.fit(group).mean_ for group in bits.reshape(groups, values.size)])


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_mean_estimate_is_unbiased_with_the_exact_variance(epsilon):
    """Check E[mean_] = mean of clipped values, the variance (c/n)^2 Σ π_i (1 - π_i), and the bound at the midpoint."""
    bounds = (-5.0, 15.0)
    values = np.concatenate([np.linspace(-8.0, 20.0, 1500), np.full(500, 5.0)])  # some outside the bounds
    clipped = np.clip(values, *bounds)
    p = math.exp(epsilon) / (math.exp(epsilon) + 1)
    one = (1 - p) + (clipped - bounds[0]) / (bounds[1] - bounds[0]) * (2 * p - 1)
    variance = (bounds[1] - bounds[0]) ** 2 * np.sum(one * (1 - one)) / (values.size * (2 * p - 1)) ** 2
    estimates = _mean_estimates(values, epsilon, bounds, GROUPS, seed=11)
    z, critical = unbiasedness_z(estimates[:, None], np.array([clipped.mean()]), np.array([variance]))
    assert z <= critical
    assert variance_in_bounds(estimates[:, None], np.array([variance])).all()
    midpoint = _mean_estimates(np.full(2000, 5.0), epsilon, bounds, GROUPS, seed=12)
    bound = MeanEstimator(epsilon=epsilon, bounds=bounds).fit(np.zeros(2000)).variance_
    assert variance_in_bounds(midpoint[:, None], np.array([bound])).all()
