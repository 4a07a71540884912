# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Box-centred sums, weighted budget splits and joint releases (dpsk/mechanisms/_joint.py).

The joint release carries the budget split of GaussianNB, PCA and KMeans, so its split is
settled here by privacy audits *per statistic*: each statistic, moved by its largest
per-coordinate change, must satisfy its share of ε, and a release whose shares exceed
the budget is rejected.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from dpsk._core._exact_sums import ROUNDING_MARGIN
from dpsk.accounting import (
    ApproxDPEvent,
    CalibratedEvent,
    GaussianEvent,
    LaplaceEvent,
    PureDPEvent,
    ZCDPEvent,
    record_releases,
)
from dpsk.accounting._calibration import split_epsilon
from dpsk.accounting._events import budget_event
from dpsk.audit import audit
from dpsk.mechanisms._joint import Box, JointRelease
from dpsk.utils._testing import assert_fit_with_power, ks_pvalue


def test_box_centre_and_half_width():
    box = Box(np.array([-1.0, 0.0, 2.0, -1e308]), np.array([3.0, 1.0, 2.0, 1e308]))
    np.testing.assert_array_equal(box.centre, [1.0, 0.5, 2.0, 0.0])
    np.testing.assert_array_equal(box.half_width, [2.0, 0.5, 0.0, 1e308])  # no overflow
    assert box.n_active == 3


@pytest.mark.parametrize("per_class", [False, True])
def test_standardised_sums_match_direct_computation(per_class):
    rng = np.random.default_rng(0)
    lower, upper = np.array([-2.0, 10.0, 5.0]), np.array([4.0, 11.0, 5.0])
    box = Box(lower, upper)
    X = np.clip(rng.uniform(-3, 12, (50, 3)), lower, upper)
    z = np.where(box.half_width > 0, (X - box.centre) / np.where(box.half_width > 0, box.half_width, 1), 0.0)
    if per_class:
        y_index = np.repeat(np.arange(2), [20, 30]).astype(np.intp)
        moments = box.exact_sums(X, y_index, 2)
        expected_count = np.array([20.0, 30.0])
        expected_z = np.array([z[:20].sum(axis=0), z[20:].sum(axis=0)])
        expected_sq = np.array([(z[:20] ** 2 - 0.5).sum(axis=0), (z[20:] ** 2 - 0.5).sum(axis=0)])
    else:
        moments = box.exact_sums(X)
        expected_count = np.array([50.0])
        expected_z, expected_sq = z.sum(axis=0)[None], (z**2 - 0.5).sum(axis=0)[None]
    count, sum_z, sum_sq = box.standardised_sums(moments)
    np.testing.assert_array_equal(count, expected_count)
    # Values are quantised on a grid of 2**-30 half-widths: the sums agree to ~50·2**-30.
    np.testing.assert_allclose(sum_z, expected_z, atol=1e-7)
    np.testing.assert_allclose(sum_sq, expected_sq, atol=1e-7)
    # Every row contributes to Σz in [-1, 1] and to Σ(z² − 1/2) in [-1/2, 1/2].
    assert np.all(np.abs(z) <= 1) and np.all(np.abs(z**2 - 0.5) <= 0.5)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("squares", [False, True])
def test_standardised_sums_by_integers_are_the_fraction_path(weighted, squares):
    """The integer arithmetic of ``ExactMoments.standardised`` rounds every entry as the
    Fractions do: boxes near the origin, far from it, tiny and huge, constant features."""
    rng = np.random.default_rng(5)
    boxes = [
        ([-2.0, 10.0, 5.0], [4.0, 11.0, 5.0]),
        ([1.7e9, -1e-9, -1e150], [1.7e9 + 3600.0, 3e-9, 1e150]),
        ([-0.1, 0.0, 2.0**-400], [0.3, 7.0, 2.0**-399]),
        # Half-widths whose float squares overflow or underflow (the sums are exact).
        ([-1e155, -1e300, 0.0], [1e155, 1e300, 1e-170]),
        ([-1e-300, 0.0, -5e-324], [1e-300, 1e-170, 5e-324]),
    ]
    for lower, upper in boxes:
        box = Box(np.array(lower), np.array(upper))
        X = rng.uniform(-1.0, 1.0, (400, 3)) * np.maximum(box.half_width, 1.0) * 1.3 + box.centre
        y_index = rng.integers(0, 4, size=400).astype(np.intp)
        w = rng.uniform(size=400) if weighted else None
        moments = box.exact_sums(X, y_index, 4, sample_weight=w, squares=squares)
        fast = box.standardised_sums(moments, squares=squares)
        for got, want in zip(fast, box._standardised_by_fractions(moments, squares)):
            if want is None:
                assert got is None
            else:
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("half_width", [1e-320, 1e-300, 1e-170, 1e155, 1e300])
def test_standardised_sums_stay_within_their_sensitivities_at_any_scale(half_width):
    """Rows on the box's faces contribute ±1 to Σz and exactly 1/2 to Σ(z² − 1/2) each,
    whatever the box's scale (a float square of the half-width overflows above ~1.3e154
    and is 0 below ~1.5e-162; these raised after the budget was spent)."""
    box = Box(np.array([-half_width]), np.array([half_width]))
    X = np.array([[-half_width], [half_width], [0.0]] * 10)
    count, sum_z, sum_sq = box.standardised_sums(box.exact_sums(X))
    assert count[0] == 30.0
    assert abs(sum_z[0, 0]) <= 30.0 and abs(sum_sq[0, 0]) <= 15.0
    if half_width >= 1e-300:  # a grid fine enough for the faces (within 2**-30 of them)
        assert sum_z[0, 0] == 0.0
        assert sum_sq[0, 0] == pytest.approx(20 * 0.5 - 10 * 0.5, rel=1e-6)


def test_joint_release_refuses_sensitivities_beyond_float64():
    """A statistic of infinite sensitivity would get weight 0, the weight of a constant
    statistic: released without noise. Refused, as are sensitivities whose weights overflow."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="not finite"):
        JointRelease(((1.0, 1.0), (np.inf, np.inf)), (0.5, 0.5), epsilon=1.0, delta=0.0, random_state=rng)
    with pytest.raises(ValueError, match="too small"):
        JointRelease(((1.0, 1.0), (1e-320, 1e-320)), (0.5, 0.5), epsilon=1.0, delta=0.0, random_state=rng)


def test_to_original_clips_into_the_box():
    box = Box(np.array([0.0, -2.0]), np.array([2.0, 2.0]))
    np.testing.assert_array_equal(box.to_original(np.array([[0.5, -3.0]])), [[1.5, -2.0]])


@pytest.mark.parametrize("epsilon", [1.0, 0.3, 1e-3, 7.77])
@pytest.mark.parametrize("weights", [(1, 1, 1), (0.05, 0.8, 0.15), (1, 2**0.5, 3**0.5, 1e-9)])
def test_split_by_weights_never_exceeds_epsilon(epsilon, weights):
    shares = split_epsilon(epsilon, weights)
    assert sum(map(Fraction, shares)) <= Fraction(epsilon)
    total = sum(weights)
    np.testing.assert_allclose(shares, [epsilon * w / total for w in weights], rtol=1e-12)


def test_budget_event():
    assert budget_event(1.5) == PureDPEvent(1.5)
    assert budget_event(1.5, 1e-6) == ApproxDPEvent(1.5, 1e-6)


# ------------------------------------------------------------------------ joint release

SENSITIVITIES = ((1.0, 1.0), (4.0, 2.0), (2.0, 1.0))  # (L1, L2): a count, a sum over 4, squares over 4
SHARES = (0.1, 0.6, 0.3)
SIZES = (3, 12, 12)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_joint_release_is_one_release_of_the_declared_event(delta):
    release = JointRelease(SENSITIVITIES, SHARES, epsilon=1.0, delta=delta, random_state=np.random.default_rng(0))
    values = [np.zeros(3), np.ones((3, 4)), np.full((3, 4), 2.0)]
    with record_releases() as drawn:
        noisy = release.randomise(values)
    assert drawn == [release.privacy_event(SIZES)]
    if delta:  # zCDP noise, calibrated for the δ asked for
        assert isinstance(drawn[0], CalibratedEvent) and isinstance(drawn[0].event, ZCDPEvent)
    else:
        assert isinstance(drawn[0], PureDPEvent)
    assert [v.shape for v in noisy] == [(3,), (3, 4), (3, 4)]
    # The whole vector has sensitivity 1 after scaling: the budget split is in the weights.
    norm = 1 if delta else 0
    powers = np.sqrt(SHARES) if delta else np.asarray(SHARES)
    # less the margin that covers the float rounding of the values (dpsk._core._exact_sums)
    np.testing.assert_allclose(
        release.weights * [s[norm] for s in SENSITIVITIES], powers * (1.0 - ROUNDING_MARGIN), rtol=1e-12
    )
    if delta == 0:
        assert drawn[0].epsilon <= 1.0


def test_joint_release_of_a_constant_statistic_is_exact():
    release = JointRelease(
        ((1.0, 1.0), (0.0, 0.0)), (0.5, 0.5), epsilon=1.0, delta=0.0, random_state=np.random.default_rng(0)
    )
    noisy_count, constant = release.randomise([np.zeros(2), np.full(3, 7.0)])
    np.testing.assert_array_equal(constant, 7.0)
    assert release.noise_std(1, (2, 3)) == 0.0
    # The whole budget went to the count.
    np.testing.assert_allclose(release.weights[0], 1.0 - ROUNDING_MARGIN, rtol=1e-12)


@pytest.mark.parametrize("statistic", [0, 1, 2])
def test_joint_release_noise_is_laplace_at_the_stated_scale(statistic):
    """Check that statistic i gets Laplace noise of scale Δᵢ/(sᵢ ε) (KS test with power check)."""
    rng = np.random.default_rng(statistic)
    epsilon, n = 0.7, 20_000
    release = JointRelease(SENSITIVITIES, SHARES, epsilon=epsilon, delta=0.0, random_state=rng)
    values = [np.zeros((n, 3)), np.zeros((n, 12)), np.zeros((n, 12))]
    noise = release.randomise(values)[statistic][:, 0]
    scale = SENSITIVITIES[statistic][0] / (SHARES[statistic] * epsilon)
    from scipy import stats

    assert_fit_with_power(lambda b: ks_pvalue(noise, stats.laplace(scale=b).cdf), scale)
    np.testing.assert_allclose(
        release.noise_std(statistic, (3 * n, 12 * n, 12 * n)), scale * math.sqrt(2) / (1.0 - ROUNDING_MARGIN), rtol=1e-6
    )


# Per-statistic audits: each statistic's largest per-coordinate change must cost at most
# its share. Neighbouring values differ by that change in one coordinate of the batch.
def _sampler(shares, delta, statistic, change):
    def sampler(shift, size, rng):
        release = JointRelease(SENSITIVITIES, shares, epsilon=EPS, delta=delta, random_state=rng)
        values = [np.zeros((size, 3)), np.zeros((size, 12)), np.zeros((size, 12))]
        values[statistic][:, 0] = shift * change
        return release.randomise(values)[statistic][:, 0]

    return sampler


EPS = 3.0
PER_COORDINATE = (1.0, 1.0, 0.5)  # largest change of one coordinate: count 1, |z| <= 1, |z² − ½| <= ½


def _claim(statistic, delta):
    l1, l2 = SENSITIVITIES[statistic]
    change = PER_COORDINATE[statistic]
    if delta == 0:  # ε share of the statistic, times the coordinate's part of its L1 sensitivity
        return LaplaceEvent(1.0 / (EPS * SHARES[statistic] * change / l1))
    rho = _zcdp_rho(EPS, delta)  # the ρ share of the statistic, for the coordinate's change
    return GaussianEvent(l2 / change / math.sqrt(2.0 * rho * SHARES[statistic]))


def _zcdp_rho(epsilon, delta):
    from dpsk.accounting import zcdp_rho

    return zcdp_rho(epsilon, delta)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
@pytest.mark.parametrize("statistic", [0, 1, 2])
def test_joint_release_satisfies_each_share(statistic, delta):
    """Check that each statistic is no less noisy than its share of the budget allows."""
    sampler = _sampler(SHARES, delta, statistic, PER_COORDINATE[statistic])
    result = audit(sampler, (0.0, 1.0), event=_claim(statistic, delta), n_samples=200_000, random_state=0)
    assert result.passed, str(result)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_per_statistic_audit_rejects_shares_summing_above_one(delta):
    """Check that a release whose shares exceed the budget fails the audit of the overspent statistic.

    The shares (0.1, 1.2, 0.3) are normalised by JointRelease, so this release is made to
    lie: it claims the shares SHARES but weights the sums as if they had share 1.2.
    """

    class Overspending(JointRelease):
        def __init__(self, sensitivities, shares, **kwargs):
            super().__init__(sensitivities, shares, **kwargs)
            self.weights = self.weights * np.array([1.0, (1.2 / 0.6) ** (0.5 if delta else 1.0), 1.0])

    def sampler(shift, size, rng):
        release = Overspending(SENSITIVITIES, SHARES, epsilon=EPS, delta=delta, random_state=rng)
        values = [np.zeros((size, 3)), np.zeros((size, 12)), np.zeros((size, 12))]
        values[1][:, 0] = shift
        return release.randomise(values)[1][:, 0]

    result = audit(sampler, (0.0, 1.0), event=_claim(1, delta), n_samples=200_000, random_state=0)
    assert not result.passed, str(result)
