# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The slow-path fixes of issue 16: one BLAS thread inside fits, and block-wise clipping
(no copy of X) giving the same statistics as one block."""

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from dpsk.decomposition import PCA
from dpsk.linear_model import LogisticRegression, _solver
from dpsk.utils._threads import single_blas_thread


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_single_blas_thread_limits_and_restores():
    before = _blas_threads()
    with single_blas_thread():
        assert set(_blas_threads()) <= {1}
    assert _blas_threads() == before


def test_single_blas_thread_is_a_decorator_too():
    @single_blas_thread()
    def inside():
        return _blas_threads()

    assert set(inside()) <= {1}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("bounds", [None, (-2.0, 2.0)])
@pytest.mark.parametrize("l1_norm", [None, 5.0])
def test_pca_blocks_give_the_exact_sums_of_one_block(monkeypatch, weighted, bounds, l1_norm):
    """The blocks' exact integer sums add exactly: bit-identical to one block (the
    kernel's dsyrk blocks, with and without the L1 clip)."""
    from dpsk._core import _exact_sums

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)) * 2
    weights = rng.random(3000) if weighted else None
    kw = dict(n_components=2, epsilon=math.inf, data_norm=3.0, bounds=bounds, l1_norm=l1_norm)
    monkeypatch.setattr(_exact_sums, "_GRAM_BUFFER_BYTES", 1)  # 64-row dsyrk blocks
    blocks = PCA(**kw).fit(X, sample_weight=weights)
    monkeypatch.setattr(_exact_sums, "_GRAM_BUFFER_BYTES", 10**12)  # one 4096-row block
    whole = PCA(**kw).fit(X, sample_weight=weights)
    for attr in ("components_", "mean_", "explained_variance_", "n_samples_"):
        np.testing.assert_array_equal(getattr(blocks, attr), getattr(whole, attr), err_msg=attr)


def test_newton_hessian_blocks_match_one_block(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=math.inf, data_norm=3.0, classes=[0, 1], C=1.0)
    monkeypatch.setattr(_solver, "_BLOCK_ROWS", 700)
    blocks = LogisticRegression(**kw).fit(X, y)
    monkeypatch.setattr(_solver, "_BLOCK_ROWS", 10**9)
    whole = LogisticRegression(**kw).fit(X, y)
    np.testing.assert_allclose(blocks.coef_, whole.coef_, rtol=1e-9)


def test_in_place_logistic_loss_is_the_textbook_expression_bit_for_bit():
    """The in-place evaluation (fewer n-sized temporaries) computes exactly what it replaced."""
    z = np.random.default_rng(0).normal(size=10_000) * 30
    z[:5] = [0.0, -0.0, 700.0, -700.0, 1e-300]
    e = np.exp(-np.abs(z))
    inverse = 1.0 / (1.0 + e)
    expected = (np.log1p(e) + np.maximum(-z, 0.0), -np.where(z >= 0, e * inverse, inverse), e * inverse * inverse)
    loss = _solver.LogisticLoss()
    for got, want in zip(loss.evaluate(z.copy()), expected):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(loss.first_derivative(z), expected[1])
    hinge = _solver.HuberizedHinge()
    np.testing.assert_array_equal(hinge.first_derivative(z), hinge.evaluate(z)[1])
