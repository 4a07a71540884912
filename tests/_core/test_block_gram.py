# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The tiled Gram of a block of quantised rows (``src/block_gram.c``): exact integers,
the upper triangle only, ``fresh`` and ``alpha`` as ``_syrk_signed`` uses them."""

import numpy as np
import pytest

from dpsk._core import _exact_sums

LIMIT = 2**20 - 1  # |q| < 2**GRAM_BITS


def _runs(block, gram, colsum=None, alpha=1.0, fresh=True):
    colsum = np.zeros(gram.shape[0]) if colsum is None else colsum
    ran = _exact_sums._tiled_block_gram(block, gram, colsum, alpha, fresh)
    if not ran:
        pytest.skip("this CPU has no AVX2 + FMA: the BLAS path is used")


def _block(rng, rows, d, extreme=False):
    if extreme:  # every product at its largest: partial sums up to 4096 · 2**40
        return rng.choice([-LIMIT, LIMIT], size=(rows, d)).astype(np.float64)
    return rng.integers(-LIMIT, LIMIT + 1, size=(rows, d)).astype(np.float64)


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 7, 8, 11, 12, 13, 16, 20, 23, 24, 25, 48, 64])
@pytest.mark.parametrize("rows", [0, 1, 5, 409])
def test_upper_triangle_is_the_exact_gram(d, rows):
    rng = np.random.default_rng(d * 1000 + rows)
    block = _block(rng, rows, d)
    gram, colsum = np.full((d, d), 7.0), np.full(d, 5.0)  # below the diagonal: left alone
    _runs(block, gram, colsum)
    np.testing.assert_array_equal(colsum.astype(np.int64), block.astype(np.int64).sum(axis=0))
    exact = block.astype(np.int64).T @ block.astype(np.int64)
    upper = np.triu_indices(d)
    np.testing.assert_array_equal(gram[upper].astype(np.int64), exact[upper])
    lower = np.tril_indices(d, -1)
    np.testing.assert_array_equal(gram[lower], 7.0)


@pytest.mark.parametrize("d", [3, 20, 48])
def test_largest_partial_sums_stay_exact(d):
    """4096 rows of ±(2**20 − 1): sums of magnitude near 2**52, exact only if nothing
    rounds."""
    block = _block(np.random.default_rng(d), 4096, d, extreme=True)
    gram = np.zeros((d, d))
    _runs(block, gram)
    exact = block.astype(np.int64).T @ block.astype(np.int64)
    upper = np.triu_indices(d)
    assert np.abs(exact[upper]).max() > 2**51
    np.testing.assert_array_equal(gram[upper].astype(np.int64), exact[upper])


def test_accumulates_and_subtracts_when_not_fresh():
    rng = np.random.default_rng(3)
    first, second = _block(rng, 100, 20), _block(rng, 60, 20)
    gram, colsum = np.zeros((20, 20)), np.zeros(20)
    _runs(first, gram, colsum)
    _runs(second, gram, colsum, alpha=-1.0, fresh=False)
    as_int = [b.astype(np.int64) for b in (first, second)]
    exact = as_int[0].T @ as_int[0] - as_int[1].T @ as_int[1]
    np.testing.assert_array_equal(colsum.astype(np.int64), as_int[0].sum(0) - as_int[1].sum(0))
    upper = np.triu_indices(20)
    np.testing.assert_array_equal(gram[upper].astype(np.int64), exact[upper])


def test_wider_blocks_are_left_to_blas():
    gram, colsum = np.zeros((65, 65)), np.zeros(65)
    assert not _exact_sums._tiled_block_gram(np.ones((3, 65)), gram, colsum)
    assert not gram.any() and not colsum.any()


@pytest.mark.parametrize("d", [1, 5, 12, 20, 48])
def test_exact_gram_is_the_same_on_the_blas_path(d):
    """``exact_gram`` with the tiles and with BLAS only (what CPUs without AVX2 and FMA
    run): the same integers, so bitwise the same floats, weighted or not."""
    rng = np.random.default_rng(d)
    X = rng.normal(size=(9000, d)) * rng.uniform(0.1, 3.0, size=d)
    lower, upper = np.full(d, -2.0), np.full(d, 2.5)
    centre, radius = (lower + upper) / 2, (upper - lower) / 2
    weights = rng.uniform(0.0, 1.0, size=9000)
    results = {}
    for tiles in (True, False):
        previous = _exact_sums._use_tiled_gram(tiles)
        try:
            results[tiles] = [
                _exact_sums.exact_gram(X, lower, upper, centre, radius, sample_weight=w) for w in (None, weights)
            ]
        finally:
            _exact_sums._use_tiled_gram(previous)
    for with_tiles, with_blas in zip(results[True], results[False], strict=True):
        for a, b in zip(with_tiles, with_blas, strict=True):
            np.testing.assert_array_equal(a, b)
