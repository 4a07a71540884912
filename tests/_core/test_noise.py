# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Noise kernels: numpy oracles, goodness of fit with power checks, lattice exactness, errors."""

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpsk._core._noise import (
    _lattice_point_py,
    add_exponential,
    add_gaussian,
    add_gaussian_lattice,
    add_laplace,
    add_laplace_lattice,
    gamma_norm_vector,
    lattice_granularity,
    lattice_sensitivity,
)
from dpsk._core._random import SecureBitGenerator
from dpsk.utils._testing import ALPHA, assert_fit_with_power, chisquare_pvalue, ks_pvalue

TEXTBOOK = {
    # kernel -> the numpy expression it must reproduce for the same seed
    add_laplace: lambda rng, x, s: x + rng.laplace(0.0, s, x.size),
    add_gaussian: lambda rng, x, s: x + s * rng.standard_normal(x.size),
    add_exponential: lambda rng, x, s: x + rng.exponential(s, x.size),
}
CONTINUOUS_LAW = {
    add_laplace: lambda s: stats.laplace(scale=s).cdf,
    add_gaussian: lambda s: stats.norm(scale=s).cdf,
    add_exponential: lambda s: stats.expon(scale=s).cdf,
}
LATTICE = [add_laplace_lattice, add_gaussian_lattice]
ALL_KERNELS = [*TEXTBOOK, *LATTICE]


def _call(kernel, x, scale, rng):
    if kernel is add_laplace_lattice:
        return kernel(x, scale, lattice_granularity(scale), rng)
    if kernel is add_gaussian_lattice:
        return kernel(x, scale, lattice_granularity(scale, "gaussian"), rng)
    return kernel(x, scale, rng)


@pytest.mark.parametrize("kernel", list(TEXTBOOK), ids=lambda k: k.__name__)
def test_textbook_noise_equals_numpy(kernel, global_dtype, global_random_seed):
    x = np.linspace(-3, 3, 1001).astype(global_dtype)
    expected = TEXTBOOK[kernel](np.random.default_rng(global_random_seed), x.astype(np.float64), 2.5)
    kernel(x, 2.5, np.random.default_rng(global_random_seed))
    np.testing.assert_array_equal(x, expected.astype(global_dtype))


@pytest.mark.parametrize("kernel", list(TEXTBOOK), ids=lambda k: k.__name__)
def test_textbook_noise_stream_continuity(kernel, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    first, second = np.zeros(300), np.zeros(700)
    kernel(first, 1.5, rng)
    kernel(second, 1.5, rng)
    whole = np.zeros(1000)
    kernel(whole, 1.5, np.random.default_rng(global_random_seed))
    np.testing.assert_array_equal(np.concatenate([first, second]), whole)


@pytest.mark.parametrize("kernel", [*CONTINUOUS_LAW, *LATTICE], ids=lambda k: k.__name__)
@pytest.mark.parametrize("scale", [0.3, 7.0])
def test_continuous_noise_fits(kernel, scale, global_random_seed):
    # The default lattices are 2**24 to 2**40 steps per unit of scale: indistinguishable
    # from the continuous law at this sample size.
    x = np.zeros(30_000)
    _call(kernel, x, scale, np.random.default_rng(global_random_seed))
    if kernel is add_laplace_lattice:
        law = lambda s: stats.laplace(scale=s).cdf  # noqa: E731
    elif kernel is add_gaussian_lattice:
        law = lambda s: stats.norm(scale=s).cdf  # noqa: E731
    else:
        law = CONTINUOUS_LAW[kernel]
    assert_fit_with_power(lambda s: ks_pvalue(x, law(s)), scale)


def test_kernels_run_on_the_secure_generator():
    rng = np.random.Generator(SecureBitGenerator())
    for kernel in ALL_KERNELS:
        x = np.zeros(20_000)
        _call(kernel, x, 2.0, rng)
        assert np.unique(x).size > 19_000
    x = np.zeros(30_000)
    add_laplace(x, 2.0, rng)
    assert ks_pvalue(x, stats.laplace(scale=2.0).cdf) > ALPHA


def test_gamma_norm_vector_equals_numpy(global_dtype, global_random_seed):
    out = np.empty(7, dtype=global_dtype)
    gamma_norm_vector(out, 1.7, np.random.default_rng(global_random_seed))
    rng = np.random.default_rng(global_random_seed)
    z = rng.standard_normal(7)
    expected = z / np.linalg.norm(z) * (1.7 * rng.standard_gamma(7))
    rtol = 1e-6 if global_dtype == np.float32 else 1e-13
    np.testing.assert_allclose(out, expected, rtol=rtol)


@pytest.mark.slow
@pytest.mark.parametrize("d, scale", [(1, 2.0), (3, 0.5), (10, 4.0)])
def test_gamma_norm_vector_norm_and_direction(d, scale, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    samples = np.empty((20_000, d))
    for row in samples:
        gamma_norm_vector(row, scale, rng)
    norms = np.linalg.norm(samples, axis=1)
    assert_fit_with_power(lambda s: ks_pvalue(norms, stats.gamma(d, scale=s).cdf), scale)
    if d == 3:
        # Archimedes: each coordinate of a uniform direction on the 2-sphere is U(-1, 1).
        first = samples[:, 0] / norms
        assert ks_pvalue(first, stats.uniform(-1, 2).cdf) > ALPHA
        # Power check: directions of a uniform point in the cube are not uniform.
        cube = rng.uniform(-1, 1, (20_000, 3))
        assert ks_pvalue(cube[:, 0] / np.linalg.norm(cube, axis=1), stats.uniform(-1, 2).cdf) < ALPHA
    else:
        signs = np.sign(samples[:, 0])
        assert stats.binomtest(int(np.sum(signs > 0)), signs.size).pvalue > ALPHA


@pytest.mark.parametrize("kernel", LATTICE, ids=lambda k: k.__name__)
def test_lattice_outputs_are_exact_multiples(kernel, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    x = rng.normal(0, 50, 5_000)
    scale = 3.0
    noise = "laplace" if kernel is add_laplace_lattice else "gaussian"
    g = lattice_granularity(scale, noise)
    kernel(x, scale, g, rng)
    steps = x / g
    np.testing.assert_array_equal(steps, np.round(steps))


@pytest.mark.parametrize("kernel", LATTICE, ids=lambda k: k.__name__)
def test_lattice_float32_is_the_cast_of_float64(kernel, global_random_seed):
    x32 = np.linspace(-100, 100, 2001, dtype=np.float32)
    x64 = x32.astype(np.float64)
    _call(kernel, x32, 0.7, np.random.default_rng(global_random_seed))
    _call(kernel, x64, 0.7, np.random.default_rng(global_random_seed))
    np.testing.assert_array_equal(x32, x64.astype(np.float32))


@pytest.mark.parametrize("kernel", LATTICE, ids=lambda k: k.__name__)
def test_lattice_rounding_commutes_with_lattice_shifts(kernel, global_random_seed):
    """Check round(x/g) = floor(x/g + 1/2) exactly: ties go up and shifts by g·m carry over."""
    g = 0.25
    x = np.array([0.5, -0.5, 1.5, -1.5, 0.49999999999999994, 0.3, -0.3, 2.0]) * g
    shifted = x + 3 * g
    out, out_shifted = x.copy(), shifted.copy()
    kernel(out, 1.0, g, np.random.default_rng(global_random_seed))
    kernel(out_shifted, 1.0, g, np.random.default_rng(global_random_seed))
    exact = shifted - 3 * g == x  # the float shift itself may round (0.3 g, 0.49999999999999994 g)
    assert exact.sum() >= 5
    np.testing.assert_array_equal((out_shifted - out)[exact], 3 * g)
    zero = np.zeros(x.size)
    kernel(zero, 1.0, g, np.random.default_rng(global_random_seed))
    np.testing.assert_array_equal(out - zero, np.array([1, 0, 2, -1, 0, 0, 0, 2]) * g)


@pytest.mark.parametrize("kernel, noise", [(add_laplace_lattice, "laplace"), (add_gaussian_lattice, "gaussian")])
@pytest.mark.parametrize("steps_per_scale", [1.5, 4.0])
def test_coarse_lattice_noise_is_the_discrete_law(kernel, noise, steps_per_scale, global_random_seed):
    """With a coarse lattice, (out - x)/g must follow the discrete Laplace / Gaussian pmf."""
    g = 0.5
    scale = steps_per_scale * g
    x = np.zeros(40_000)
    kernel(x, scale, g, np.random.default_rng(global_random_seed))
    k = (x / g).astype(np.int64)
    support = np.arange(-200, 201)

    def pvalue(t):
        logp = -np.abs(support) / t if noise == "laplace" else -(support**2) / (2 * t * t)
        return chisquare_pvalue(k, support, np.exp(logp))

    assert_fit_with_power(pvalue, steps_per_scale)


def test_lattice_point_is_the_correctly_rounded_exact_sum():
    ks = [0, 1, -1, 2**53 + 1, -(2**53) - 1, 2**61 + 12345, -(2**62)]
    for m in [
        0,
        5,
        -7,
        2**52 + 1,
        2**61,
        2**62,
        -(2**62),
        2**63 + 2**20,
        2**80 + 2**30,
        -(2**100),
        2**116 * 3,
        2**117,
        2**120,
    ]:
        for k in ks:
            assert _lattice_point_py(float(m), k) == float(m + k), (m, k)
    # Ties at large magnitude: round half to even of the exact sum.
    m = 2**70
    for k in (2**17, 2**17 + 1, 3 * 2**17, -(2**16)):
        assert _lattice_point_py(float(m), k) == float(m + k)


def test_lattice_large_values_use_the_exact_sum(global_random_seed):
    g = lattice_granularity(1.0)
    base = np.array([1e7 + 0.3, -1e9, 2.0**80, 1e30])
    noise = np.zeros(base.size)
    add_laplace_lattice(noise, 1.0, g, np.random.default_rng(global_random_seed))
    k = [int(v) for v in (noise / g)]  # |K| << 2**53: exact
    out = base.copy()
    add_laplace_lattice(out, 1.0, g, np.random.default_rng(global_random_seed))
    for value, ki, got in zip(base, k, out):
        steps = Fraction(value) / Fraction(g)
        m = int(np.floor(steps + Fraction(1, 2)))
        assert got == float((m + ki) * Fraction(g))


def test_lattice_granularity():
    for scale in (1e-6, 0.3, 1.0, 3.0, 1234.5):
        for noise, bits in (("laplace", 40), ("gaussian", 24)):
            g = lattice_granularity(scale, noise)
            assert np.frexp(g)[0] == 0.5
            assert scale * 2.0**-bits <= g < scale * 2.0 ** (1 - bits)
    assert lattice_granularity(1.0) == 2.0**-40
    with pytest.raises(ValueError, match="noise"):
        lattice_granularity(1.0, "cauchy")


def test_lattice_sensitivity():
    g = 2.0**-4
    assert lattice_sensitivity(1.0, g) == 1.0
    assert lattice_sensitivity(1.01, g) == 17 * g
    assert lattice_sensitivity(1.0, g, n_coordinates=10) == 1.0 + 9 * g
    l2 = lattice_sensitivity(1.0, g, n_coordinates=9, norm="l2")
    assert 1.0 + 3 * g <= l2 <= 1.0 + 3 * g + 1e-12
    with pytest.raises(ValueError):
        lattice_sensitivity(-1.0, g)
    with pytest.raises(ValueError):
        lattice_sensitivity(1.0, 0.3)
    with pytest.raises(ValueError):
        lattice_sensitivity(1.0, g, norm="linf")


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=lambda k: k.__name__)
def test_empty_buffers_are_a_no_op(kernel, global_dtype):
    rng = np.random.default_rng(0)
    _call(kernel, np.empty(0, dtype=global_dtype), 1.0, rng)
    assert rng.bit_generator.random_raw() == np.random.default_rng(0).bit_generator.random_raw()
    gamma_norm_vector(np.empty(0, dtype=global_dtype), 1.0, rng)


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=lambda k: k.__name__)
def test_bad_buffers_raise_clear_errors(kernel):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="x must be C-contiguous"):
        _call(kernel, np.zeros(10)[::2], 1.0, rng)
    readonly = np.zeros(4)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="x is read-only"):
        _call(kernel, readonly, 1.0, rng)
    with pytest.raises(TypeError, match="x must have dtype"):
        _call(kernel, np.zeros(4, dtype=np.int64), 1.0, rng)
    with pytest.raises(ValueError, match="1-dimensional"):
        _call(kernel, np.zeros((2, 2)), 1.0, rng)
    with pytest.raises(TypeError, match="Generator"):
        _call(kernel, np.zeros(4), 1.0, np.random.RandomState(0))


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("scale", [0.0, -1.0, np.nan, np.inf])
def test_invalid_scales_raise(kernel, scale):
    x = np.zeros(3)
    with pytest.raises(ValueError, match="finite and > 0"):
        if kernel in LATTICE:
            kernel(x, scale, 2.0**-20, np.random.default_rng(0))
        else:
            kernel(x, scale, np.random.default_rng(0))
    with pytest.raises(ValueError, match="finite and > 0"):
        gamma_norm_vector(x, scale, np.random.default_rng(0))
    np.testing.assert_array_equal(x, 0.0)


@pytest.mark.parametrize("kernel", LATTICE, ids=lambda k: k.__name__)
def test_invalid_lattice_inputs_raise(kernel):
    rng = np.random.default_rng(0)
    for g in (0.3, 0.0, -0.5, np.nan):
        with pytest.raises(ValueError, match="granularity"):
            kernel(np.zeros(3), 1.0, g, rng)
    with pytest.raises(ValueError, match="range"):
        kernel(np.zeros(3), 1.0, 2.0**-70, rng)
    x = np.array([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="finite"):
        kernel(x, 1.0, 2.0**-20, rng)
    np.testing.assert_array_equal(x[[0, 2]], [1.0, 2.0])  # nothing written
    with pytest.raises(ValueError, match="finite"):
        kernel(np.array([1.7e308]), 1.0, 2.0**-20, rng)
