# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Released values follow the calibrated distribution (α = 1e-6), with a power check at × 1.2."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpsk.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    Laplace,
    RandomizedResponse,
    ReportNoisyMax,
    UnsafeGaussian,
    UnsafeLaplace,
)
from dpsk.utils._testing import ALPHA, assert_fit_with_power, chisquare_pvalue, ks_pvalue

N = 20_000


@pytest.mark.parametrize("cls", [Laplace, UnsafeLaplace])
@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1.0), (0.1, 3.0), (4.0, 0.5)])
def test_laplace_noise_scale(cls, epsilon, sensitivity, global_random_seed):
    mech = cls(epsilon=epsilon, sensitivity=sensitivity, random_state=global_random_seed)
    noise = mech.randomise(np.full(N, 10.0)) - 10.0
    scale = sensitivity / epsilon
    assert_fit_with_power(lambda b: ks_pvalue(noise, stats.laplace(scale=b).cdf), scale)
    # The lattice adds one step (2⁻⁴⁰ scale) of sensitivity per coordinate: 20,000 here.
    assert mech.variance(np.zeros(N)) == pytest.approx(2 * scale**2, rel=1e-6)


def test_laplace_outputs_lie_on_the_lattice():
    mech = Laplace(epsilon=1.0, sensitivity=1.0, random_state=0)
    out = mech.randomise(np.linspace(-3, 3, 1000) + 1e-9)
    _, g = mech._calibration(1000).params
    np.testing.assert_array_equal(out / g, np.round(out / g))
    assert np.all(np.abs(mech.bias(np.linspace(-3, 3, 11) + 1e-9)) <= g / 2)


@pytest.mark.parametrize("cls", [Gaussian, UnsafeGaussian])
@pytest.mark.parametrize("epsilon, delta, sensitivity", [(1.0, 1e-5, 1.0), (0.3, 1e-6, 2.0)])
def test_gaussian_noise_scale_for_vectors(cls, epsilon, delta, sensitivity, global_random_seed):
    mech = cls(epsilon=epsilon, delta=delta, sensitivity=sensitivity, random_state=global_random_seed)
    noise = mech.randomise(np.full(N, -5.0)) + 5.0
    sigma = math.sqrt(mech.variance(np.zeros(N)))
    assert_fit_with_power(lambda s: ks_pvalue(noise, stats.norm(scale=s).cdf), sigma)


@pytest.mark.slow
def test_gaussian_noise_scale_for_scalars(global_random_seed):
    mech = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, random_state=global_random_seed)
    noise = np.array([mech.randomise(0.0) for _ in range(5000)])
    assert mech.sigma() == pytest.approx(3.7306316, abs=1e-6)
    assert_fit_with_power(lambda s: ks_pvalue(noise, stats.norm(scale=s).cdf), mech.sigma())


def _discrete_laplace_pmf(support, scale):
    return np.exp(-np.abs(support) / scale)


def _discrete_gaussian_pmf(support, sigma):
    return np.exp(-(support.astype(float) ** 2) / (2 * sigma**2))


@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1), (0.25, 2), (2.0, 5)])
def test_discrete_laplace_pmf(epsilon, sensitivity, global_random_seed):
    mech = DiscreteLaplace(epsilon=epsilon, sensitivity=sensitivity, random_state=global_random_seed)
    noise = mech.randomise(np.zeros(N, dtype=np.int64))
    scale = sensitivity / epsilon
    support = np.arange(-int(30 * scale) - 5, int(30 * scale) + 6)
    assert_fit_with_power(lambda t: chisquare_pvalue(noise, support, _discrete_laplace_pmf(support, t)), scale)
    pmf = _discrete_laplace_pmf(support, scale)
    pmf /= pmf.sum()
    assert mech.variance(0) == pytest.approx(np.sum(support.astype(float) ** 2 * pmf), rel=1e-6)


@pytest.mark.parametrize("epsilon, delta, sensitivity", [(1.0, 1e-5, 1), (0.5, 1e-3, 2)])
def test_discrete_gaussian_pmf(epsilon, delta, sensitivity, global_random_seed):
    mech = DiscreteGaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity, random_state=global_random_seed)
    sigma = mech.privacy_event().event.sigma
    noise = np.array([mech.randomise(0) for _ in range(4000)] + list(mech.randomise(np.zeros(0, dtype=int))))
    support = np.arange(-int(12 * sigma) - 2, int(12 * sigma) + 3)
    assert_fit_with_power(lambda s: chisquare_pvalue(noise, support, _discrete_gaussian_pmf(support, s)), sigma)
    pmf = _discrete_gaussian_pmf(support, sigma)
    assert mech.variance(0) == pytest.approx(np.sum(support.astype(float) ** 2 * pmf / pmf.sum()), rel=1e-9)


SCORES = np.array([0.0, 1.0, 2.5, 3.0, 5.0])


def _exponential_probabilities(scores, epsilon, sensitivity):
    w = np.exp(epsilon * (scores - scores.max()) / (2 * sensitivity))
    return w / w.sum()


def test_exponential_mechanism_distribution(global_random_seed):
    mech = ExponentialMechanism(epsilon=1.0, sensitivity=1.0, random_state=global_random_seed)
    ideal = _exponential_probabilities(SCORES, 1.0, 1.0)
    np.testing.assert_allclose(mech.probabilities(SCORES), ideal, rtol=1e-9)
    picks = np.array([mech.randomise(SCORES) for _ in range(N)])
    support = np.arange(SCORES.size)
    assert chisquare_pvalue(picks, support, ideal) > ALPHA
    wrong = _exponential_probabilities(SCORES, 1.2, 1.0)  # the power check: ε × 1.2
    assert chisquare_pvalue(picks, support, wrong) < ALPHA


def test_report_noisy_max_probabilities_by_enumerating_permutations():
    mech = ReportNoisyMax(epsilon=1.0, sensitivity=1.0, random_state=0)
    scores = SCORES[:4]
    accept = np.exp((scores - scores.max()) / 2)
    exact = np.zeros(4)
    for order in itertools.permutations(range(4)):
        reject_before = 1.0
        for r in order:
            exact[r] += reject_before * accept[r] / 24
            reject_before *= 1 - accept[r]
    np.testing.assert_allclose(mech.probabilities(scores), exact, rtol=1e-9)


def test_report_noisy_max_distribution(global_random_seed):
    mech = ReportNoisyMax(epsilon=1.0, sensitivity=1.0, random_state=global_random_seed)
    picks = np.array([mech.randomise(SCORES) for _ in range(N)])
    support = np.arange(SCORES.size)
    assert chisquare_pvalue(picks, support, mech.probabilities(SCORES)) > ALPHA
    wrong = ReportNoisyMax(epsilon=1.2, sensitivity=1.0).probabilities(SCORES)
    assert chisquare_pvalue(picks, support, wrong) < ALPHA
    # Never worse than the exponential mechanism in expected score (McKenna & Sheldon).
    em = ExponentialMechanism(epsilon=1.0).probabilities(SCORES)
    assert mech.probabilities(SCORES) @ SCORES >= em @ SCORES


@pytest.mark.parametrize("cls", [ExponentialMechanism, ReportNoisyMax])
def test_selection_probabilities_are_epsilon_dp_on_neighbours(cls):
    """For scores that move by at most Δ, every selection probability moves by at most e^ε."""
    rng = np.random.default_rng(0)
    mech = cls(epsilon=0.7, sensitivity=2.0, random_state=0)
    for _ in range(200):
        scores = rng.uniform(-10, 10, size=6)
        neighbour = scores + rng.uniform(-2.0, 2.0, size=6)
        p, q = mech.probabilities(scores), mech.probabilities(neighbour)
        assert np.all(p <= math.exp(0.7) * q * (1 + 1e-12))


def test_selection_with_huge_score_gaps_terminates():
    mech = ExponentialMechanism(epsilon=1.0, random_state=0)
    assert mech.randomise([0.0, 1e12, -1e300]) == 1
    assert ReportNoisyMax(epsilon=1.0, random_state=0).randomise([1e300, 0.0]) == 0


@pytest.mark.parametrize("k, epsilon", [(2, 1.0), (5, 0.5), (3, 3.0)])
def test_randomized_response_distribution(k, epsilon, global_random_seed):
    mech = RandomizedResponse(epsilon=epsilon, categories=np.arange(k), random_state=global_random_seed)
    out = mech.randomise(np.zeros(10 * N, dtype=int))  # vectorised: a large sample is cheap
    support = np.arange(k)

    def probs(eps):
        keep = math.exp(eps) / (math.exp(eps) + k - 1)
        return np.array([keep] + [(1 - keep) / (k - 1)] * (k - 1))

    def pvalue(eps):
        if k == 2:  # a single proportion: exact binomial test
            return stats.binomtest(int(np.sum(out == 0)), out.size, probs(eps)[0]).pvalue
        return chisquare_pvalue(out, support, probs(eps))

    assert pvalue(epsilon) > ALPHA
    assert pvalue(epsilon * 1.2) < ALPHA
    estimate = mech.debias_frequencies(out)
    assert estimate[0] == pytest.approx(1.0, abs=0.05) and estimate.sum() == pytest.approx(1.0)


def test_randomized_response_validates_categories():
    mech = RandomizedResponse(epsilon=1.0, categories=["no", "yes"], random_state=0)
    assert mech.randomise("yes") in ("no", "yes")
    with pytest.raises(ValueError, match="not among"):
        mech.randomise(["maybe"])
    with pytest.raises(ValueError):
        RandomizedResponse(epsilon=1.0, categories=[1])
    with pytest.raises(ValueError):
        RandomizedResponse(epsilon=1.0, categories=[1, 1])


# Groups of tied candidates: counts from 1 to 2**40, scores spread so that every group
# carries visible mass; one group far down (the proposal's last level) and one empty.
GROUP_COUNTS = np.array([1, 3, 2**40, 5, 2**33, 7, 0, 2**50])
GROUP_SCORES = np.array([0.0, -1.0, -52.0, -0.5, -44.0, -3.3, 0.0, -1e7])


def _group_probabilities(epsilon):
    log_w = np.log(np.maximum(GROUP_COUNTS, 1).astype(float)) + epsilon * GROUP_SCORES / 2
    w = np.where(GROUP_COUNTS > 0, np.exp(log_w - log_w[GROUP_COUNTS > 0].max()), 0.0)
    return w / w.sum()


def test_exponential_mechanism_groups_distribution(global_random_seed):
    """Check randomise_groups against count × exp(ε s / 2): groups and offsets (chi-square, power)."""
    mech = ExponentialMechanism(epsilon=1.0, sensitivity=1.0, random_state=global_random_seed)
    picks = [
        mech.randomise_groups(GROUP_COUNTS, -GROUP_SCORES, 1e-9, lambda g: float(GROUP_SCORES[g]), 0) for _ in range(N)
    ]
    groups = np.array([g for g, _ in picks])
    support = np.arange(GROUP_COUNTS.size)
    assert chisquare_pvalue(groups, support, _group_probabilities(1.0)) > ALPHA
    assert chisquare_pvalue(groups, support, _group_probabilities(1.2)) < ALPHA
    offsets = np.array([o for g, o in picks if g == 5])  # uniform among the group's 7 candidates
    assert chisquare_pvalue(offsets, np.arange(7), np.ones(7)) > ALPHA
    big = np.array([o for g, o in picks if g == 2])
    assert np.all((big >= 0) & (big < 2**40))
    assert ks_pvalue(big / 2**40, stats.uniform.cdf) > ALPHA


def test_exponential_mechanism_groups_record_one_release_each():
    from dpsk.accounting import ExponentialEvent, record_releases

    mech = ExponentialMechanism(epsilon=0.5, random_state=0)
    with record_releases() as drawn:
        mech.randomise_groups([2, 1], np.array([0.0, 1.0]), 0.0, lambda g: -float(g), 0)
    assert drawn == [ExponentialEvent(0.5)]


def test_exponential_mechanism_groups_detect_understated_gaps():
    """A proposal built from gaps larger than the true ones is refused, never used."""
    mech = ExponentialMechanism(epsilon=1.0, random_state=0)
    with pytest.raises(RuntimeError, match="understated"):
        for _ in range(50):  # the group with the wrong gap (level 10) is proposed with probability 4/5
            mech.randomise_groups([1, 2**12], np.array([0.0, 14.0]), 0.0, lambda g: -float(g), 0)
    with pytest.raises(ValueError, match="largest"):
        for _ in range(50):
            mech.randomise_groups([1, 1], np.array([0.0, 0.0]), 0.0, lambda g: float(g), 0)


def test_ln2_bounds_are_rigorous_and_nested():
    from fractions import Fraction

    from dpsk.mechanisms._selection import _ln2_bounds

    # ln 2 to 60 digits (an independent constant)
    ln2 = Fraction("0.693147180559945309417232121458176568075500134360255254120680")
    for bits in (64, 128, 256):
        lo, hi = _ln2_bounds(bits)
        assert hi - lo <= 2
        assert Fraction(lo, 2**bits) <= ln2 + Fraction(1, 10**59) and ln2 - Fraction(1, 10**59) <= Fraction(hi, 2**bits)
    lo64, hi64 = _ln2_bounds(64)
    lo256, hi256 = _ln2_bounds(256)
    assert lo64 << 192 <= hi256 and lo256 <= hi64 << 192
