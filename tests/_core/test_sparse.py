# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sparse kernels (dpsk._core._sparse): bitwise the dense kernels on the densified data.

Every comparison is on the bytes of the results (or on exact Python integers): a sparse
path that rounds differently, skips implicit zeros wrongly or leaves a row unclipped
fails. `test_compact_clipping_is_not_bitwise` shows that the comparison has the power
to see the summation order of the norm.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpsk._core import _clip as K
from dpsk._core import _exact_sums as E
from dpsk._core import _sparse as S

DTYPES = [np.float32, np.float64]


def sparse_rows(dtype, max_rows=8, max_features=23):
    """Dense arrays with many exact zeros (the implicit entries once made sparse)."""
    width = 32 if dtype == np.float32 else 64
    values = st.one_of(
        st.just(0.0),
        st.just(0.0),
        st.floats(allow_nan=False, allow_infinity=False, width=width),
        st.floats(-1e3, 1e3, width=width),
    )
    shape = st.tuples(st.integers(1, max_rows), st.integers(1, max_features))
    return arrays(dtype, shape, elements=values)


def adversarial(dtype, seed=0, n=400, d=37):
    """Random sparse rows plus rows built to expose order and zero handling: cancelling
    huge entries, a lone tiny entry, rows exactly at and one ulp above the bound, rows
    whose stored values are explicit zeros, and empty rows."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.exp(rng.uniform(-5, 5, (n, 1)))
    X[rng.random((n, d)) < 0.8] = 0.0
    big = 1e30 if dtype == np.float32 else 1e200
    X[0, [1, 7, 30]] = [big, 1.0, -big]  # cancellation
    X[1, 5] = 1e-30 if dtype == np.float32 else 1e-300
    X[2, [0, 3]] = [3.0, 4.0]  # L2 norm exactly 5
    X[3, [0, 3]] = [3.0, np.nextafter(dtype(4.0), dtype(np.inf))]
    X[4] = 0.0  # empty row
    X[5, [2, 36]] = [1e6, -1e6]
    return X.astype(dtype)


def as_sparse(D, fmt="csr"):
    M = sp.csr_matrix(D)
    M.eliminate_zeros()
    return M.asformat(fmt)


def densified(D):
    """D as the sparse matrix holds it (a stored −0.0 is an implicit +0.0)."""
    return D + D.dtype.type(0.0)


def same_as_dense(M, dense):
    """The stored entries of M are bitwise those of ``dense`` (signed zeros included) and
    every other entry of ``dense`` is +0.0."""
    M = M.tocsr()
    rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
    rest = dense.copy()
    rest[rows, M.indices] = 0
    return same_bytes(M.data, dense[rows, M.indices]) and same_bytes(rest, np.zeros_like(dense))


def same_bytes(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# --------------------------------------------------------------------------------------
# Norm clipping
# --------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_clip_rows_is_bitwise_the_dense_clip(data):
    """Check that the lazily clipped sparse rows (their recorded clips replayed entry by
    entry) equal dense clipping of the densified rows, bit for bit, in every product."""
    D = densified(data.draw(sparse_rows(np.float64)))
    max_norm = data.draw(st.one_of(st.floats(1e-6, 1e6), st.floats(min_value=5e-324, max_value=1.7e308)))
    dense = K.clip_rows_l2(D, max_norm)
    clipped = S.csr_clip_rows_l2(as_sparse(D), max_norm)
    assert same_as_dense(clipped, dense)
    w = np.arange(1.0, D.shape[1] + 1)
    s = np.arange(1.0, D.shape[0] + 1)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(clipped @ w, clipped.tocsr() @ w)
        np.testing.assert_array_equal(s @ clipped, s @ clipped.tocsr())
        np.testing.assert_array_equal(S.csr_block_sums(clipped, s, 3), S.csr_block_sums(clipped.tocsr(), s, 3))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("max_norm", [1e-3, 1.0, 5.0, 1e4])
def test_clip_rows_adversarial_rows(fmt, dtype, max_norm):
    """Check cancelling, tiny, at-the-bound and empty rows in every input format (float32
    X is clipped as float64, as the linear models use it)."""
    D = adversarial(dtype).astype(np.float64)
    dense = K.clip_rows_l2(D, max_norm)
    assert same_as_dense(S.csr_clip_rows_l2(as_sparse(D, fmt).astype(dtype), max_norm), dense)


def test_clipped_rows_share_the_values_of_x():
    """Check that clipping keeps no copy of the stored values: the clipped rows are X's
    values plus one recorded clip per row (the memory of the sparse linear models)."""
    M = as_sparse(adversarial(np.float64, n=300))
    clipped = S.csr_clip_rows_l2(M, 1e-3)  # clips nearly every row
    assert clipped.X.data is M.data
    assert clipped.plans.nbytes <= 32 * M.shape[0] < M.data.nbytes


def test_clipped_rows_in_blocks_and_products():
    """Check rows(start, stop), the sparse weighted Gram and the products against the clipped copy."""
    D = adversarial(np.float64, seed=9, n=500)
    M = as_sparse(D)
    clipped = S.csr_clip_rows_l2(M, 0.5)
    full = clipped.tocsr()
    assert same_as_dense(full, K.clip_rows_l2(D, 0.5))
    part = clipped.rows(37, 401)
    assert same_bytes(part.toarray(), full[37:401].toarray())
    second = np.random.default_rng(9).random(500)
    expected = (full.T @ full.multiply(second[:, None]).tocsr()).toarray()
    np.testing.assert_allclose(S.sparse_weighted_gram(clipped, second, block=64), expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(S.sparse_weighted_gram(full, second, block=64), expected, rtol=1e-12, atol=0)


def test_compact_clipping_is_not_bitwise():
    """Check the power of the bitwise comparison: clipping the stored entries as a short
    dense row (the summation order of a compacted row, the bound of nnz features) does
    not reproduce the dense clip, which the lanes of the sparse kernel do."""
    D = adversarial(np.float64, seed=3, n=2000, d=41)
    dense = K.clip_rows_l2(D, 1.0)
    M = as_sparse(D)
    compact = np.zeros_like(D)
    for i in range(D.shape[0]):
        cols = M.indices[M.indptr[i] : M.indptr[i + 1]]
        if cols.size:
            compact[i, cols] = K.clip_rows_l2(np.ascontiguousarray(D[i, cols][None, :]), 1.0)[0]
    assert not same_bytes(compact, dense)
    assert same_as_dense(S.csr_clip_rows_l2(M, 1.0), dense)


def test_unsorted_and_duplicate_indices_are_canonicalised():
    """Check that duplicates are summed and unsorted indices sorted (on a copy), as toarray does."""
    data = np.array([3.0, 1.0, 2.0, 5.0])
    indices = np.array([4, 0, 4, 1], dtype=np.int32)
    indptr = np.array([0, 3, 4], dtype=np.int32)
    M = sp.csr_matrix((data, indices, indptr), shape=(2, 6))
    before = M.data.copy(), M.indices.copy()
    dense = K.clip_rows_l2(M.toarray(), 2.0)
    assert same_as_dense(S.csr_clip_rows_l2(M, 2.0), dense)
    assert same_bytes(M.data, before[0]) and same_bytes(M.indices, before[1])  # input untouched


def test_int64_indices():
    D = adversarial(np.float64, n=50)
    M = as_sparse(D)
    M64 = sp.csr_matrix((M.data, M.indices.astype(np.int64), M.indptr.astype(np.int64)), shape=M.shape)
    assert same_as_dense(S.csr_clip_rows_l2(M64, 2.0), K.clip_rows_l2(D, 2.0))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_stored_values_raise(bad):
    D = adversarial(np.float64, n=20)
    D[7, 3] = bad
    M = as_sparse(D)
    for call in (
        lambda: S.csr_clip_rows_l2(M, 1.0),
        lambda: S.csr_clip_bounds(M, np.full(37, -1.0), np.full(37, 1.0)),
        lambda: S.csr_exact_moments(M, np.full(37, -1.0), np.full(37, 1.0)),
    ):
        with pytest.raises(ValueError, match="NaN or infinity"):
            call()


# --------------------------------------------------------------------------------------
# Box clipping
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_clip_bounds_is_the_dense_clip(dtype):
    D = adversarial(dtype)
    rng = np.random.default_rng(1)
    lower, upper = -rng.uniform(0, 3, D.shape[1]), rng.uniform(0, 3, D.shape[1])
    assert same_as_dense(S.csr_clip_bounds(as_sparse(D), lower, upper), K.clip_bounds(D, lower, upper))


def test_clip_bounds_must_contain_zero():
    D = adversarial(np.float64, n=10)
    with pytest.raises(ValueError, match="implicit zeros"):
        S.csr_clip_bounds(as_sparse(D), np.full(37, 0.5), np.full(37, 1.0))


# --------------------------------------------------------------------------------------
# Accumulation
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("bounds", ["around_zero", "offset", "excluding_zero"])
def test_exact_moments_equal_the_dense_integers(dtype, weighted, bounds):
    """Check the exact moments (integers) per class, including bounds that exclude 0
    (implicit zeros are clipped to the bound and quantised like stored values)."""
    D = adversarial(dtype, seed=2)
    n, d = D.shape
    rng = np.random.default_rng(2)
    if bounds == "around_zero":
        lower, upper = -rng.uniform(0, 5, d), rng.uniform(0, 5, d)
    elif bounds == "offset":
        lower, upper = np.full(d, -1e9 - 3), np.full(d, 1e9 + 1)
    else:
        lower, upper = np.full(d, 0.25), np.full(d, 7.0)
    y = rng.integers(0, 4, n).astype(np.intp)
    w = rng.random(n) if weighted else None
    dense = E.exact_moments(D, lower, upper, y, 4, w)
    sparse = S.csr_exact_moments(as_sparse(D, "csc"), lower, upper, y, 4, w)
    for name in ("count", "sum_q", "sum_q2"):
        assert np.array_equal(getattr(sparse, name), getattr(dense, name)), name
    assert sparse.weight_scale == dense.weight_scale
    assert same_bytes(sparse.step, dense.step) and same_bytes(sparse.centre, dense.centre)


def test_empty_inputs():
    M = sp.csr_matrix((0, 5))
    assert S.csr_clip_rows_l2(M, 1.0).shape == (0, 5)
    table = S.multinomial_table(M, np.zeros(0, dtype=np.intp), 2, 3, 100, None, 31)
    assert same_bytes(table, np.zeros((2, 6), dtype=np.int64))
    m = S.csr_exact_moments(M, np.zeros(5), np.ones(5))
    assert m.count[0] == 0
    N = sp.csr_matrix((4, 0))
    assert S.multinomial_table(N, np.zeros(4, dtype=np.intp), 1, 3, 100, None, 31)[0, 0] == 4 << 3


def test_dense_input_is_refused():
    with pytest.raises(TypeError, match="scipy.sparse"):
        S.csr_clip_rows_l2(np.ones((2, 2)), 1.0)
    with pytest.raises(TypeError, match="float32 or float64"):
        S.csr_clip_rows_l2(sp.csr_matrix(np.ones((2, 2), dtype=np.int64)), 1.0)


def test_block_sums_are_within_the_sum2_bound():
    """Check csr_block_sums against the exact sum (Fractions) of its rounded block sums: within
    u·|S| + γ²·Σ|p| (Ogita, Rump & Oishi, Prop. 4.5), on cancelling rows; and against the dense
    path's per-block products added exactly (math.fsum)."""
    import math
    from fractions import Fraction

    rng = np.random.default_rng(7)
    n, d, block = 5000, 6, 64
    D = adversarial(np.float64, seed=7, n=n)[:, :d].copy()
    D *= np.exp(rng.uniform(-30, 30, (n, 1)))
    s = rng.standard_normal(n) * np.exp(rng.uniform(-5, 5, n))
    got = S.csr_block_sums(as_sparse(D), s, block)
    parts = [s[i : i + block] @ D[i : i + block] for i in range(0, n, block)]
    m = len(parts)
    u = 2.0**-53
    gamma = (m - 1) * u / (1 - (m - 1) * u)
    for j in range(d):
        p = [Fraction(float(part[j])) for part in parts]
        exact = sum(p)
        bound = u * abs(exact) + Fraction(gamma) ** 2 * sum(abs(v) for v in p)
        # The kernel's own block sums may differ from numpy's in the last bits: compare both
        # with the exact sum of the stored products, with the blocks' γ_64 allowance.
        terms = sum(abs(Fraction(float(s[i])) * Fraction(float(D[i, j]))) for i in range(n))
        allowance = Fraction((block + 1) * u) * terms
        assert abs(Fraction(float(got[j])) - exact) <= bound + 2 * allowance
        assert abs(math.fsum(float(part[j]) for part in parts) - float(got[j])) <= float(bound + 2 * allowance)


# --------------------------------------------------------------------------------------
# MultinomialNB's exact table
# --------------------------------------------------------------------------------------


def counts(max_rows=12, max_features=9):
    """Non-negative rows: mostly zeros and small counts, with huge, tiny and subnormal values."""
    values = st.one_of(
        st.just(0.0),
        st.just(0.0),
        st.integers(0, 50).map(float),
        st.floats(0.0, 1e300),
        st.floats(0.0, 1e-300),
        st.floats(0.0, 10.0),
    )
    shape = st.tuples(st.integers(1, max_rows), st.integers(1, max_features))
    return arrays(np.float64, shape, elements=values)


def _reference_table(D, y, n_classes, k, top, units):
    """The table from _row_units (the numpy reference of the steps) on dense rows."""
    from dpsk.naive_bayes._discrete import _dense_row_sums, _row_units

    weights = np.ones(D.shape[0], dtype=np.int64) if units is None else units
    table = np.zeros((n_classes, 1 + D.shape[1]), dtype=np.int64)
    q = _row_units(D, D.max(axis=1, initial=0.0), np.arange(D.shape[0])[:, None], _dense_row_sums, k, top)
    for i in range(D.shape[0]):
        table[y[i], 0] += weights[i] << k
        table[y[i], 1:] += weights[i] * q[i]
    return table


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_multinomial_table_equals_the_dense_integers(data):
    """Check the one-pass kernel (on CSR, CSC and dense rows through MultinomialNB's table)
    against _row_units, the numpy reference of its integer steps, on the densified rows,
    with and without weights, for data_norm that clips some rows and none."""
    from dpsk.naive_bayes._discrete import _ROW_BITS, _exact_class_table, _multinomial_grid

    D = data.draw(counts())
    if data.draw(st.booleans()):
        D = np.minimum(D, 3e38).astype(np.float32).astype(np.float64)  # float32 values, finite
    n = D.shape[0]
    y = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.intp)
    units = data.draw(st.one_of(st.none(), arrays(np.int64, n, elements=st.integers(0, 1024))))
    k, top = _multinomial_grid(data.draw(st.sampled_from([1e-3, 1.0, 7.5, 200.0, 1e6])))
    with np.errstate(all="ignore"):
        expected = _reference_table(D, y, 3, k, top, units)
    fmt = data.draw(st.sampled_from(["csr", "csc"]))
    assert same_bytes(S.multinomial_table(as_sparse(D, fmt), y, 3, k, top, units, _ROW_BITS), expected)
    assert same_bytes(_exact_class_table(D, y, 3, k, top, units), expected)


def test_multinomial_table_refuses_negative_and_non_finite():
    for bad in (-1.0, np.nan, np.inf):
        M = sp.csr_matrix(np.array([[1.0, 0.0, bad]]))
        with pytest.raises(ValueError, match="non-negative and finite"):
            S.multinomial_table(M, np.zeros(1, dtype=np.intp), 1, 3, 100, None, 31)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("data_norm", [1e-3, 1.0, 13.0, 1e6])
def test_dense_multinomial_table_reads_nonzeros_as_csr_does(dtype, data_norm):
    """The dense kernel runs the row steps on each row's nonzeros (issue 16, slow paths):
    the reference's and the CSR path's integers, with empty rows, negative zeros, a dense
    row and a tiny value at a row's end."""
    from dpsk.naive_bayes._discrete import _ROW_BITS, _multinomial_grid

    rng = np.random.default_rng(7)
    D = rng.exponential(size=(400, 37)) * (rng.uniform(size=(400, 37)) < 0.15)
    D[0] = 0.0
    D[1] = -0.0
    D[2, 5] = -0.0
    D[3] = rng.exponential(size=37)
    D[4, -1] = 1e-300
    D = D.astype(dtype)
    y = rng.integers(0, 3, size=400).astype(np.intp)
    units = rng.integers(0, 1025, size=400).astype(np.int64)
    k, top = _multinomial_grid(data_norm)
    with np.errstate(all="ignore"):
        expected = _reference_table(D.astype(np.float64), y, 3, k, top, units)
    got = S.multinomial_table(D, y, 3, k, top, units, _ROW_BITS)
    assert same_bytes(got, expected)
    assert same_bytes(got, S.multinomial_table(sp.csr_matrix(D), y, 3, k, top, units, _ROW_BITS))


@pytest.mark.parametrize("bad", [-1.0, -1e-300, np.nan, np.inf])
def test_dense_multinomial_table_refuses_negative_and_non_finite(bad):
    D = np.ones((3, 4))
    D[1, 2] = bad
    with pytest.raises(ValueError, match="non-negative and finite"):
        S.multinomial_table(D, np.zeros(3, dtype=np.intp), 1, 3, 100, None, 31)
