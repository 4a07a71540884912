# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact discrete samplers: pmf (chi-square with power checks), moments, ranges, errors."""

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpsk._core._exact import (
    bernoulli_exp,
    bernoulli_exp_fill,
    discrete_gaussian,
    discrete_laplace,
    geometric,
    round_up_sigma2,
)
from dpsk._core._random import SecureBitGenerator, _ScriptedBitGenerator
from dpsk.utils._testing import ALPHA, assert_fit_with_power, chisquare_pvalue

N = 60_000


def _binomial_pvalue(sample, p):
    return stats.binomtest(int(sample.sum()), sample.size, p).pvalue


@pytest.mark.parametrize(
    "num, den",
    [(1, 3), (2, 3), (7, 8), (1, 2), (2, 2), (5, 2), (3, 1), (1, 288), (2**59, 2**60), (3 * 2**61, 2**61 + 1)],
)
def test_bernoulli_exp_probability(num, den, global_random_seed):
    sample = np.empty(N, dtype=bool)
    bernoulli_exp_fill(sample, num, den, np.random.default_rng(global_random_seed))
    gamma = num / den
    assert _binomial_pvalue(sample, np.exp(-gamma)) > ALPHA
    if 0.05 < gamma < 3:  # power check: the same test rejects exp(-1.2 gamma)
        assert _binomial_pvalue(sample, np.exp(-1.2 * gamma)) < ALPHA


def test_bernoulli_exp_edge_cases():
    rng = np.random.default_rng(0)
    assert bernoulli_exp(0, 1, rng) is True
    sample = np.empty(1000, dtype=bool)
    bernoulli_exp_fill(sample, 0, 5, rng)
    assert sample.all()
    bernoulli_exp_fill(sample, 2**63, 1, rng)  # exp(-2**63)
    assert not sample.any()
    assert isinstance(bernoulli_exp(3, 2, np.random.Generator(SecureBitGenerator())), bool)


def _laplace_pmf(support, t):
    return np.exp(-np.abs(support) / t)


def _gaussian_pmf(support, sigma):
    return np.exp(-(support.astype(np.float64) ** 2) / (2 * sigma * sigma))


@pytest.mark.parametrize("t_num, t_den", [(1, 2), (3, 1), (21, 2), (1, 1), (5, 3)])
def test_discrete_laplace_pmf(t_num, t_den, global_random_seed):
    out = np.empty(N, dtype=np.int64)
    discrete_laplace(out, t_num, t_den, np.random.default_rng(global_random_seed))
    t = t_num / t_den
    support = np.arange(-int(60 * t) - 30, int(60 * t) + 31)
    assert_fit_with_power(lambda s: chisquare_pvalue(out, support, _laplace_pmf(support, s)), t)
    # Moments: mean 0, variance 2q / (1 - q)^2 with q = exp(-1/t) (4-sigma bounds).
    q = np.exp(-1 / t)
    variance = 2 * q / (1 - q) ** 2
    assert abs(out.mean()) < 5 * np.sqrt(variance / N)
    fourth = np.sum(_laplace_pmf(support, t) * support.astype(float) ** 4) / np.sum(_laplace_pmf(support, t))
    assert abs(out.var() - variance) < 5 * np.sqrt((fourth - variance**2) / N)


@pytest.mark.parametrize("t_num, t_den", [(1, 2), (3, 1), (7, 2)])
def test_geometric_pmf(t_num, t_den, global_random_seed):
    out = np.empty(N, dtype=np.int64)
    geometric(out, t_num, t_den, np.random.default_rng(global_random_seed))
    t = t_num / t_den
    support = np.arange(0, int(60 * t) + 30)
    assert out.min() >= 0
    assert_fit_with_power(lambda s: chisquare_pvalue(out, support, np.exp(-support / s)), t)
    q = np.exp(-1 / t)
    assert abs(out.mean() - q / (1 - q)) < 5 * np.sqrt(q / (1 - q) ** 2 / N)


@pytest.mark.parametrize("sigma2_num, sigma2_den", [(1, 4), (9, 4), (2, 1), (9, 1), (100, 3), (1, 9)])
def test_discrete_gaussian_pmf(sigma2_num, sigma2_den, global_random_seed):
    out = np.empty(N, dtype=np.int64)
    discrete_gaussian(out, sigma2_num, sigma2_den, np.random.default_rng(global_random_seed))
    sigma = np.sqrt(sigma2_num / sigma2_den)
    support = np.arange(-int(12 * sigma) - 12, int(12 * sigma) + 13)
    if sigma > 0.3:  # for tiny sigma almost everything is 0: no power against 1.2 sigma
        assert_fit_with_power(lambda s: chisquare_pvalue(out, support, _gaussian_pmf(support, s)), sigma)
    else:
        assert chisquare_pvalue(out, support, _gaussian_pmf(support, sigma)) > ALPHA
    pmf = _gaussian_pmf(support, sigma)
    pmf /= pmf.sum()
    variance = np.sum(pmf * support.astype(float) ** 2)  # the discrete variance (< sigma^2)
    fourth = np.sum(pmf * support.astype(float) ** 4)
    assert abs(out.mean()) < 5 * np.sqrt(variance / N)
    assert abs(out.var() - variance) < 5 * np.sqrt((fourth - variance**2) / N)


def test_tiny_sigma_is_almost_surely_zero():
    out = np.ones(1000, dtype=np.int64)
    discrete_gaussian(out, 1, 100, np.random.default_rng(0))  # P(k != 0) ~ 4e-22
    assert not out.any()


def test_large_parameters_at_the_range_limits(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    out = np.empty(20_000, dtype=np.int64)
    discrete_laplace(out, 2**56, 1, rng)
    scale = 2.0**56
    assert stats.kstest(out / scale, stats.laplace.cdf).pvalue > ALPHA
    discrete_gaussian(out, 2**48, 1, rng)
    assert stats.kstest(out / 2.0**24, stats.norm.cdf).pvalue > ALPHA
    assert stats.kstest(out / 2.0**24, stats.norm(scale=1.2).cdf).pvalue < ALPHA


def test_round_up_sigma2():
    assert round_up_sigma2(Fraction(9, 4)) == (9, 4)
    sigma2 = (Fraction(3.7) / Fraction(2.0**-22)) ** 2  # does not fit the range exactly
    num, den = round_up_sigma2(sigma2)
    assert Fraction(num, den) >= sigma2
    assert (Fraction(num, den) - sigma2) / sigma2 < Fraction(1, 2**47)
    out = np.empty(3, dtype=np.int64)
    discrete_gaussian(out, num, den, np.random.default_rng(0))  # within range
    with pytest.raises(ValueError, match="2\\*\\*49"):
        round_up_sigma2(Fraction(2**50))
    with pytest.raises(ValueError):
        round_up_sigma2(Fraction(0))


@pytest.mark.parametrize(
    "sampler, args, match",
    [
        (discrete_laplace, (0, 1), "t_num"),
        (discrete_laplace, (2**56 + 1, 1), "t_num"),
        (discrete_laplace, (1, 0), "t_den"),
        (geometric, (-1, 1), "t_num"),
        (discrete_gaussian, (0, 1), "sigma2_num"),
        (discrete_gaussian, (2**60, 1), "exact range"),
        (discrete_gaussian, (1, 2**70), "sigma2_den"),
    ],
)
def test_out_of_range_parameters_raise(sampler, args, match):
    with pytest.raises(ValueError, match=match):
        sampler(np.empty(2, dtype=np.int64), *args, np.random.default_rng(0))


def test_parameters_must_be_integers():
    rng = np.random.default_rng(0)
    out = np.empty(2, dtype=np.int64)
    for bad in (1.5, True, "3"):
        with pytest.raises(TypeError, match="integer"):
            discrete_laplace(out, bad, 1, rng)
    with pytest.raises(TypeError, match="integer"):
        bernoulli_exp(1.0, 2, rng)
    with pytest.raises(ValueError, match="den"):
        bernoulli_exp(1, 0, rng)
    discrete_laplace(out, np.int64(3), np.uint8(2), rng)  # numpy integers are fine


@pytest.mark.parametrize("sampler", [geometric, discrete_laplace, discrete_gaussian])
def test_output_buffers(sampler):
    rng = np.random.default_rng(0)
    sampler(np.empty(0, dtype=np.int64), 3, 1, rng)  # empty: no-op
    with pytest.raises(TypeError, match="dtype int64"):
        sampler(np.empty(3, dtype=np.float64), 3, 1, rng)
    with pytest.raises(ValueError, match="C-contiguous"):
        sampler(np.empty(6, dtype=np.int64)[::2], 3, 1, rng)
    readonly = np.zeros(3, dtype=np.int64)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        sampler(readonly, 3, 1, rng)
    with pytest.raises(TypeError, match="dtype bool"):
        bernoulli_exp_fill(np.empty(3, dtype=np.uint8), 1, 1, rng)


def test_samplers_run_on_the_secure_generator():
    rng = np.random.Generator(SecureBitGenerator())
    out = np.empty(N, dtype=np.int64)
    discrete_gaussian(out, 9, 1, rng)
    support = np.arange(-40, 41)
    assert chisquare_pvalue(out, support, _gaussian_pmf(support, 3.0)) > ALPHA


def _geometric_on_words(words, t_num=3):
    bit_generator = _ScriptedBitGenerator(words)
    out = np.empty(1, dtype=np.int64)
    geometric(out, t_num, 1, np.random.Generator(bit_generator))
    return int(out[0]), bit_generator.position


THIRD = 0x5555555555555555  # floor(2**64 / 3): 3 * THIRD = 2**64 - 1, so a carry is possible
TOP = 2**64 - 1
HALF = 2**63


@pytest.mark.parametrize(
    "words, expected",
    [
        # u1 = THIRD..., u2 = TOP > u1: run of length 1 (odd), accepted with V = 0.
        # floor(3 u1) is 1 iff u1's continuation r >= 1/3 = 0x55 0x55 ... (base 256).
        ([THIRD, TOP, 0x54], (0, 3)),
        ([THIRD, TOP, 0x56], (1, 3)),
        ([THIRD, TOP, 0x5455], (0, 3)),  # digits 0x55, 0x54: below 1/3
        ([THIRD, TOP, 0x5655], (1, 3)),  # digits 0x55, 0x56: above 1/3
        # u2 ties u1 on 64 bits: the continuations decide (cur digit 0x20 > prev 0x10:
        # the run stops at length 1, accepted, floor(3 * 2**-1) = 1).
        ([HALF, HALF, 0x1020], (1, 3)),
        # cur digit 0x10 < prev 0x20: the run goes on, u3 = TOP ends it at length 2 (even):
        # a failed trial (V = 1); the next trial u1 = 0 < u2 = 5 gives U = 0: X = 3.
        ([HALF, HALF, 0x2010, TOP, 0, 5], (3, 6)),
        # 32 equal continuation digits exhaust the lazy uniforms: the draw restarts.
        ([HALF, HALF] + [0] * 8 + [0, 5], (0, 12)),
    ],
)
def test_geometric_rare_branches_on_scripted_words(words, expected):
    """Check ties, carries and restarts of the von Neumann sampler against hand-computed results."""
    assert _geometric_on_words(words) == expected
