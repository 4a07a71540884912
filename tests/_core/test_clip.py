# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clipping and fused clip + accumulate kernels (dpsk._core._clip, dpsk._core._accumulate).

The norm bound is checked *exactly*: every output value is turned into a Fraction and
the squared (or absolute) norm is compared with max_norm as rationals, so a one-ulp
overshoot fails the test. `test_exact_check_rejects_naive_clipping` shows that this
check does catch the naive formula.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal

from dpsk._core import _accumulate as A
from dpsk._core import _clip as K
from dpsk._core import _common

DTYPES = [np.float32, np.float64]
# Relative tolerance of float64 accumulations against numpy's (also float64) reference.
RTOL = 1e-10

# More rows than one chunk (65,536), so that the threaded path runs.
N_CHUNKED = 140_000


def exact_norm_sq(row):
    return sum(Fraction(float(v)) ** 2 for v in row)


def exact_norm_l1(row):
    return sum(abs(Fraction(float(v))) for v in row)


def exact_within(row, max_norm, norm):
    if norm == "l2":
        return exact_norm_sq(row) <= Fraction(max_norm) ** 2
    return exact_norm_l1(row) <= Fraction(max_norm)


def achieved_fraction(y, max_norm, norm):
    """Exact norm of y divided by max_norm, as a float."""
    if norm == "l2":
        return float(exact_norm_sq(y) / Fraction(max_norm) ** 2) ** 0.5
    return float(exact_norm_l1(y) / Fraction(max_norm))


def check_reaches_bound(X, Y, max_norm, norm):
    """Clipped rows end just below max_norm (documented gap: ~2**-23 / ~1e-14), not far below."""
    gap = 2.0**-21 if X.dtype == np.float32 else 1e-13
    for x, y in zip(X, Y):
        if not exact_within(x, max_norm, norm):
            assert achieved_fraction(y, max_norm, norm) >= 1 - gap


def clip_rows(X, max_norm, norm, **kwargs):
    func = K.clip_rows_l2 if norm == "l2" else K.clip_rows_l1
    return func(X, max_norm, **kwargs)


def check_norm_clipping(X, Y, max_norm, norm):
    """The exact invariants of norm clipping, row by row."""
    assert Y.dtype == X.dtype and Y.shape == X.shape
    for x, y in zip(X, Y):
        assert exact_within(y, max_norm, norm)
        if exact_within(x, max_norm, norm):
            assert_array_equal(y, x)  # within the bound: unchanged
        else:  # scaled towards zero, direction kept
            assert np.all(np.abs(y) <= np.abs(x))
            assert np.all((np.sign(y) == np.sign(x)) | (y == 0))


# --------------------------------------------------------------------------------------
# Row norm clipping: the exact bound
# --------------------------------------------------------------------------------------


def finite_rows(dtype, max_rows=6, max_features=24):
    width = 32 if dtype == np.float32 else 64
    elements = st.floats(allow_nan=False, allow_infinity=False, width=width)
    shape = st.tuples(st.integers(1, max_rows), st.integers(1, max_features))
    return arrays(dtype, shape, elements=elements)


def max_norms(dtype):
    # Any positive finite double; for float32 also values around and below its range.
    hi = 1e300 if dtype == np.float64 else 1e40
    return st.one_of(
        st.floats(min_value=5e-324, max_value=1.7e308),
        st.floats(min_value=1e-6, max_value=1e6),
        st.floats(min_value=1e-45, max_value=hi),
    )


@pytest.mark.parametrize("norm", ["l2", "l1"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_norm_clipping_bound_is_exact(norm, dtype, data):
    """Check that every clipped row's exact norm is <= max_norm, for any finite input."""
    X = data.draw(finite_rows(dtype))
    max_norm = data.draw(max_norms(dtype))
    Y = clip_rows(X, max_norm, norm)
    check_norm_clipping(X, Y, max_norm, norm)


@pytest.mark.parametrize("norm", ["l2", "l1"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_norm_clipping_reaches_the_bound(norm, dtype, data):
    """Check that clipped rows of ordinary magnitude end just below max_norm, not far below."""
    X = data.draw(
        arrays(dtype, st.tuples(st.integers(1, 4), st.integers(1, 30)), elements=st.floats(-1e3, 1e3, width=32))
    )
    max_norm = data.draw(st.floats(1e-2, 1e2))
    assume(np.all(np.abs(X) > 1e-3) or np.all(X == 0))  # no entry close to underflow
    Y = clip_rows(X, max_norm, norm)
    check_norm_clipping(X, Y, max_norm, norm)
    check_reaches_bound(X, Y, max_norm, norm)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_exact_check_rejects_naive_clipping(dtype):
    """Check that the exact test detects the overshoot of the naive formula (power check)."""
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((2000, 7)) * 10).astype(dtype)
    max_norm = 1.0
    norms = np.linalg.norm(X.astype(np.float64), axis=1)
    naive = (X * (max_norm / norms)[:, None]).astype(dtype)
    overshoots = sum(not exact_within(row, max_norm, "l2") for row in naive)
    assert overshoots > 20  # ~4% of float64 rows, ~50% of float32 rows
    ours = K.clip_rows_l2(X, max_norm)
    assert all(exact_within(row, max_norm, "l2") for row in ours)


@pytest.mark.parametrize("norm", ["l2", "l1"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_rows_at_the_bound_are_unchanged_and_one_ulp_above_are_clipped(norm, dtype):
    """Check rows whose exact norm equals max_norm, and the same rows nudged one ulp up."""
    # Integer rows with integer L2 norms, scaled by powers of two (all exact).
    rows = {(3, 4): 5, (1, 2, 2): 3, (2, 3, 6): 7, (1, 4, 8): 9, (0, 5): 5}
    for row, l2_norm in rows.items():
        for scale in (2.0**-60, 1.0, 2.0**60):
            x = np.array([row], dtype=dtype) * dtype(scale)
            max_norm = (l2_norm if norm == "l2" else sum(row)) * scale
            assert exact_within(x[0], max_norm, norm)
            assert_array_equal(clip_rows(x, max_norm, norm), x)
            above = x.copy()
            above[0, -1] = np.nextafter(above[0, -1], dtype(np.inf))
            assert not exact_within(above[0], max_norm, norm)
            y = clip_rows(above, max_norm, norm)
            assert exact_within(y[0], max_norm, norm)


@pytest.mark.parametrize("norm", ["l2", "l1"])
@pytest.mark.parametrize(
    "dtype, value, max_norm, representable",
    [
        (np.float64, 1e300, 1.0, True),  # the norm itself overflows float64
        (np.float64, 1e300, 1e300, True),
        (np.float64, 1.7e308, 1.7e308, True),  # scale factor near DBL_MAX
        (np.float64, 1e-200, 1e-300, True),  # squares underflow
        (np.float64, 5e-324, 1e-320, True),  # subnormal rows and bound
        (np.float64, 1e-310, 1e-100, True),  # tiny rows inside the bound
        (np.float64, 1e-300, 1e-322, False),  # clipped values would be subnormal
        (np.float32, 3e38, 1.0, True),
        (np.float32, 3e38, 1e38, True),
        (np.float32, 1e-45, 1e-44, False),  # float32 subnormals (L1 clips to them)
        (np.float32, 1e-30, 1e-32, True),
        (np.float32, 1e-30, 1e-300, False),  # bound below float32's range: rows -> 0
        (np.float32, 1.0, 1e300, True),  # bound above float32's range
    ],
)
def test_norm_clipping_extreme_magnitudes(norm, dtype, value, max_norm, representable):
    """Check huge, tiny and subnormal rows (mixed signs, with a zero row)."""
    X = np.full((4, 9), value, dtype=dtype)
    X[1, ::2] *= -1
    X[2] = 0
    X[3, 4] = dtype(value) / dtype(3)
    Y = clip_rows(X, max_norm, norm)
    check_norm_clipping(X, Y, max_norm, norm)
    assert_array_equal(Y[2], 0)
    if representable:
        check_reaches_bound(X, Y, max_norm, norm)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_norm_clipping_many_features(dtype):
    """Check the exact bound with 5,000 features (the error margin grows with d)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3, 5000)).astype(dtype)
    for max_norm in (1.0, 70.7, 100.0):
        check_norm_clipping(X, K.clip_rows_l2(X, max_norm), max_norm, "l2")
        check_norm_clipping(X, K.clip_rows_l1(X, max_norm), max_norm, "l1")


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_norm_clipping_matches_the_formula(dtype):
    """Check the values: x·min(1, C/‖x‖) up to the documented shortfall."""
    rng = np.random.default_rng(2)
    X = (rng.standard_normal((500, 13)) * rng.exponential(2, (500, 1))).astype(dtype)
    X64 = X.astype(np.float64)
    tol = 3e-7 if dtype == np.float32 else 1e-13
    for func, ord_ in ((K.clip_rows_l2, 2), (K.clip_rows_l1, 1)):
        norms = np.linalg.norm(X64, ord=ord_, axis=1)
        expected = X64 * np.minimum(1.0, 3.0 / norms)[:, None]
        assert_allclose(func(X, 3.0), expected, rtol=tol, atol=0)


# --------------------------------------------------------------------------------------
# Bounds clipping
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_clip_bounds_values_are_inside_the_real_bounds(dtype):
    """Check clip_bounds against np.clip, with float32 bounds rounded inward."""
    rng = np.random.default_rng(3)
    X = (rng.standard_normal((300, 6)) * 3).astype(dtype)
    lower = np.array([-0.3, -1.1, 0.1, -5.0, 0.7, -0.1])
    upper = np.array([0.7, 1.3, 0.1000001, 5.0, 0.9, 2.0 / 3.0])
    out = K.clip_bounds(X, lower, upper)
    assert out.dtype == dtype
    out64 = out.astype(np.float64)
    assert np.all(out64 >= lower) and np.all(out64 <= upper)
    # Identical to np.clip with the bounds rounded inward to the dtype.
    lo = (
        np.array(
            [np.float32(v) if np.float32(v) >= v else np.nextafter(np.float32(v), np.float32(1)) for v in lower],
            dtype=dtype,
        )
        if dtype == np.float32
        else lower
    )
    hi = (
        np.array(
            [np.float32(v) if np.float32(v) <= v else np.nextafter(np.float32(v), np.float32(-1)) for v in upper],
            dtype=dtype,
        )
        if dtype == np.float32
        else upper
    )
    assert_array_equal(out, np.clip(X, lo, hi))


def test_clip_bounds_float32_interval_without_a_float32_value():
    """Check that bounds no float32 value satisfies raise instead of overshooting."""
    X = np.zeros((2, 1), dtype=np.float32)
    with pytest.raises(ValueError, match="no float32 value"):
        K.clip_bounds(X, [0.1], [0.1])
    K.clip_bounds(X.astype(np.float64), [0.1], [0.1])  # fine in float64


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_clip_bounds_1d(dtype):
    rng = np.random.default_rng(4)
    y = (rng.standard_normal(1000) * 5).astype(dtype)
    out = K.clip_bounds_1d(y, -2.5, 3.25)
    assert out.dtype == dtype
    assert_array_equal(out, np.clip(y, dtype(-2.5), dtype(3.25)))
    out = np.empty_like(y)
    assert K.clip_bounds_1d(y, -2.5, 3.25, out=out) is out


# --------------------------------------------------------------------------------------
# Fused accumulators against numpy references
# --------------------------------------------------------------------------------------


def make_data(dtype, n=3000, d=7, seed=5):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d)) * 2 + 0.5).astype(dtype)
    lower = np.linspace(-2.0, -0.5, d)
    upper = np.linspace(0.5, 3.0, d)
    return X, lower, upper, rng


def weights_or_none(rng, n, weighted):
    return rng.uniform(0, 3, n) if weighted else None


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_clipped_sums(dtype, weighted):
    X, lower, upper, rng = make_data(dtype)
    w = weights_or_none(rng, X.shape[0], weighted)
    count, total, total_sq = A.clipped_sums(X, lower, upper, w)
    C = np.clip(X.astype(np.float64), lower, upper)
    ww = np.ones(X.shape[0]) if w is None else w
    assert isinstance(count, float)
    assert_allclose(count, ww.sum(), rtol=RTOL)
    assert_allclose(total, ww @ C, rtol=RTOL)
    assert_allclose(total_sq, ww @ C**2, rtol=RTOL)
    assert total.dtype == total_sq.dtype == np.float64


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_clipped_class_sums(dtype, weighted):
    X, lower, upper, rng = make_data(dtype)
    n_classes = 4  # class 3 never occurs
    y_index = rng.integers(0, 3, X.shape[0]).astype(np.intp)
    w = weights_or_none(rng, X.shape[0], weighted)
    count, total, total_sq = A.clipped_class_sums(X, y_index, n_classes, lower, upper, w)
    C = np.clip(X.astype(np.float64), lower, upper)
    ww = np.ones(X.shape[0]) if w is None else w
    assert_allclose(count, np.bincount(y_index, weights=ww, minlength=n_classes), rtol=RTOL)
    for k in range(n_classes):
        rows = y_index == k
        assert_allclose(total[k], ww[rows] @ C[rows], rtol=RTOL, atol=1e-12)
        assert_allclose(total_sq[k], ww[rows] @ C[rows] ** 2, rtol=RTOL, atol=1e-12)
    assert_array_equal(total[3], 0)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("rule", ["bounds", "max_norm"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_clipped_gram(dtype, rule, weighted):
    X, lower, upper, rng = make_data(dtype)
    w = weights_or_none(rng, X.shape[0], weighted)
    if rule == "bounds":
        count, total, gram = A.clipped_gram(X, lower=lower, upper=upper, sample_weight=w)
        C = np.clip(X.astype(np.float64), lower, upper)
    else:
        count, total, gram = A.clipped_gram(X, max_norm=2.5, sample_weight=w)
        C = K.clip_rows_l2(X.astype(np.float64), 2.5)  # rows are clipped in float64
        assert all(exact_within(row, 2.5, "l2") for row in C[:200])
    ww = np.ones(X.shape[0]) if w is None else w
    assert_allclose(count, ww.sum(), rtol=RTOL)
    assert_allclose(total, ww @ C, rtol=RTOL)
    assert_allclose(gram, (C * ww[:, None]).T @ C, rtol=RTOL)
    assert_array_equal(gram, gram.T)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("rule", ["bounds", "max_norm"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_clipped_linear_stats(dtype, rule, weighted):
    X, lower, upper, rng = make_data(dtype)
    y = (X.astype(np.float64) @ rng.standard_normal(X.shape[1]) + rng.standard_normal(X.shape[0])).astype(dtype)
    w = weights_or_none(rng, X.shape[0], weighted)
    clip = dict(lower=lower, upper=upper) if rule == "bounds" else dict(max_norm=2.5)
    count, sum_x, sum_y, xtx, xty, yty = A.clipped_linear_stats(X, y, -1.5, 2.0, sample_weight=w, **clip)
    if rule == "bounds":
        C = np.clip(X.astype(np.float64), lower, upper)
    else:
        C = K.clip_rows_l2(X.astype(np.float64), 2.5)
    c = np.clip(y.astype(np.float64), -1.5, 2.0)
    ww = np.ones(X.shape[0]) if w is None else w
    assert_allclose(count, ww.sum(), rtol=RTOL)
    assert_allclose(sum_x, ww @ C, rtol=RTOL)
    assert_allclose(sum_y, ww @ c, rtol=RTOL)
    assert_allclose(xtx, (C * ww[:, None]).T @ C, rtol=RTOL)
    assert_allclose(xty, (C * ww[:, None]).T @ c, rtol=RTOL)
    assert_allclose(yty, ww @ c**2, rtol=RTOL)
    assert isinstance(sum_y, float) and isinstance(yty, float)


# --------------------------------------------------------------------------------------
# Chunks, threads, read-only inputs, no mutation
# --------------------------------------------------------------------------------------


def all_kernels(X, y, lower, upper):
    """One call of every public kernel on X (and y); returns their outputs."""
    y_index = (np.arange(X.shape[0]) % 3).astype(np.intp)
    w = np.linspace(0, 2, X.shape[0])
    return [
        K.clip_rows_l2(X, 1.5),
        K.clip_rows_l1(X, 1.5),
        K.clip_bounds(X, lower, upper),
        K.clip_bounds_1d(y, -1.0, 1.0),
        A.clipped_sums(X, lower, upper, w),
        A.clipped_class_sums(X, y_index, 3, lower, upper, w),
        A.clipped_gram(X, lower=lower, upper=upper, sample_weight=w),
        A.clipped_gram(X, max_norm=1.5),
        A.clipped_linear_stats(X, y, -1.0, 1.0, lower=lower, upper=upper),
        A.clipped_linear_stats(X, y, -1.0, 1.0, max_norm=1.5, sample_weight=w),
    ]


def assert_same_outputs(a, b):
    for left, right in zip(a, b):
        if isinstance(left, tuple):
            assert_same_outputs(left, right)
        else:
            assert_array_equal(left, right)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_results_do_not_depend_on_n_threads(dtype, monkeypatch):
    """Check bitwise-identical results for 1 and 3 threads over several chunks."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((N_CHUNKED, 3)).astype(dtype)
    y = rng.standard_normal(N_CHUNKED).astype(dtype)
    lower, upper = -np.ones(3), np.ones(3)
    outputs = {}
    for n_threads in (1, 3):
        monkeypatch.setattr(_common, "_effective_n_threads", lambda _, n=n_threads: n)
        outputs[n_threads] = all_kernels(X, y, lower, upper)
    assert_same_outputs(outputs[1], outputs[3])
    count, total, _ = outputs[3][4]
    assert_allclose(total, np.linspace(0, 2, N_CHUNKED) @ np.clip(X.astype(float), -1, 1), rtol=RTOL)


def test_default_threads_respect_omp_num_threads(monkeypatch):
    """Check that n_threads=None follows OMP_NUM_THREADS (set by joblib workers)."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert _common._effective_n_threads(None) == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert _common._effective_n_threads(None) >= 1
    assert _common._effective_n_threads(5) == 5


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_inputs_are_not_mutated_and_read_only_inputs_work(dtype, tmp_path):
    """Check every kernel on read-only arrays and on a read-only memmap."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((500, 4)).astype(dtype) * 3
    y = rng.standard_normal(500).astype(dtype) * 3
    lower, upper = -np.ones(4), 2 * np.ones(4)
    X_copy, y_copy = X.copy(), y.copy()
    expected = all_kernels(X, y, lower, upper)
    assert_array_equal(X, X_copy)
    assert_array_equal(y, y_copy)
    X.flags.writeable = False
    y.flags.writeable = False
    assert_same_outputs(all_kernels(X, y, lower, upper), expected)
    path = tmp_path / "X.npy"
    np.save(path, X_copy)
    X_map = np.load(path, mmap_mode="r")
    assert_same_outputs(all_kernels(X_map, y, lower, upper), expected)


@pytest.mark.parametrize("func", [K.clip_rows_l2, K.clip_rows_l1])
def test_norm_clipping_in_place(func):
    X = np.random.default_rng(8).standard_normal((50, 5)) * 3
    expected = func(X, 2.0)
    out = func(X, 2.0, out=X)
    assert out is X
    assert_array_equal(X, expected)


def test_clip_out_argument_is_checked():
    X = np.ones((4, 3))
    with pytest.raises(TypeError, match="dtype"):
        K.clip_rows_l2(X, 1.0, out=np.empty((4, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        K.clip_bounds(X, [0, 0, 0], [1, 1, 1], out=np.empty((4, 2)))
    with pytest.raises(ValueError, match="overlap"):
        big = np.ones((5, 3))
        K.clip_rows_l2(big[:4], 1.0, out=big[1:])
    readonly = np.empty((4, 3))
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        K.clip_rows_l1(X, 1.0, out=readonly)


# --------------------------------------------------------------------------------------
# Bad input: non-finite values, shapes, parameters, empty arrays
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("n", [10, N_CHUNKED])
def test_non_finite_values_raise(bad, dtype, n):
    """Check that NaN/inf anywhere in X or y is rejected by every kernel."""
    X = np.zeros((n, 3), dtype=dtype)
    y = np.zeros(n, dtype=dtype)
    lower, upper = -np.ones(3), np.ones(3)
    X_bad = X.copy()
    X_bad[-1, 1] = bad
    for call in (
        lambda: K.clip_rows_l2(X_bad, 1.0),
        lambda: K.clip_rows_l1(X_bad, 1.0),
        lambda: K.clip_bounds(X_bad, lower, upper),
        lambda: A.clipped_sums(X_bad, lower, upper),
        lambda: A.clipped_class_sums(X_bad, np.zeros(n, np.intp), 1, lower, upper),
        lambda: A.clipped_gram(X_bad, lower=lower, upper=upper),
        lambda: A.clipped_gram(X_bad, max_norm=1.0),
        lambda: A.clipped_linear_stats(X_bad, y, -1, 1, lower=lower, upper=upper),
    ):
        with pytest.raises(ValueError, match="NaN or infinity"):
            call()
    y_bad = y.copy()
    y_bad[-1] = bad
    with pytest.raises(ValueError, match="NaN or infinity"):
        K.clip_bounds_1d(y_bad, -1, 1)
    with pytest.raises(ValueError, match="NaN or infinity"):
        A.clipped_linear_stats(X, y_bad, -1, 1, max_norm=1.0)


def test_shape_and_parameter_errors():
    X = np.ones((6, 3))
    y = np.ones(6)
    lo, hi = -np.ones(3), np.ones(3)
    cases = [
        (lambda: K.clip_rows_l2(X, 0.0), ValueError, "max_norm"),
        (lambda: K.clip_rows_l2(X, np.inf), ValueError, "max_norm"),
        (lambda: K.clip_rows_l1(X, np.nan), ValueError, "max_norm"),
        (lambda: K.clip_bounds(X, lo[:2], hi[:2]), ValueError, r"shape \(3,\)"),
        (lambda: K.clip_bounds(X, hi, lo), ValueError, "exceed"),
        (lambda: K.clip_bounds(X, [np.nan] * 3, hi), ValueError, "finite"),
        (lambda: K.clip_bounds_1d(y, 1.0, -1.0), ValueError, "exceed"),
        (lambda: A.clipped_sums(X, lo, hi, np.ones(5)), ValueError, "sample_weight"),
        (lambda: A.clipped_sums(X, lo, hi, -np.ones(6)), ValueError, ">= 0"),
        (lambda: A.clipped_class_sums(X, np.array([0, 1, 2, 0, 1, 3]), 3, lo, hi), ValueError, r"\[0, n_classes\)"),
        (lambda: A.clipped_class_sums(X, np.array([0, -1, 0, 0, 0, 0]), 3, lo, hi), ValueError, r"\[0, n_classes\)"),
        (lambda: A.clipped_class_sums(X, np.zeros(6, np.int32), 3, lo, hi), TypeError, "intp"),
        (lambda: A.clipped_class_sums(X, np.zeros(5, np.intp), 3, lo, hi), ValueError, "y_index"),
        (lambda: A.clipped_class_sums(X, np.zeros(6, np.intp), 0, lo, hi), ValueError, "n_classes"),
        (lambda: A.clipped_gram(X), ValueError, "exactly one"),
        (lambda: A.clipped_gram(X, lower=lo, upper=hi, max_norm=1.0), ValueError, "exactly one"),
        (lambda: A.clipped_gram(X, lower=lo), ValueError, "together"),
        (lambda: A.clipped_linear_stats(X, y[:5], 0, 1, max_norm=1.0), ValueError, "y must"),
        (lambda: A.clipped_linear_stats(X, y.astype(np.float32), 0, 1, max_norm=1.0), TypeError, "dtype"),
        (lambda: K.clip_rows_l2(X.astype(np.int64), 1.0), TypeError, "float32 or float64"),
        (lambda: K.clip_rows_l2(np.asfortranarray(np.ones((3, 4))), 1.0), ValueError, "C-contiguous"),
        (lambda: K.clip_rows_l2(y, 1.0), ValueError, "2-dimensional"),
        (lambda: K.clip_rows_l2(X.tolist(), 1.0), TypeError, "numpy array"),
        (lambda: A.clipped_sums(X, lo, hi, n_threads=0), ValueError, "n_threads"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_empty_inputs(dtype):
    """Check no rows (zero sums) and no features (empty sums, counts still right)."""
    for n, d in ((0, 3), (4, 0), (0, 0)):
        X = np.zeros((n, d), dtype=dtype)
        y = np.zeros(n, dtype=dtype)
        lo, hi = -np.ones(d), np.ones(d)
        assert K.clip_rows_l2(X, 1.0).shape == (n, d)
        assert K.clip_rows_l1(X, 1.0).shape == (n, d)
        assert K.clip_bounds(X, lo, hi).shape == (n, d)
        assert K.clip_bounds_1d(y, 0, 1).shape == (n,)
        count, total, total_sq = A.clipped_sums(X, lo, hi)
        assert count == n and total.shape == total_sq.shape == (d,)
        count, total, _ = A.clipped_class_sums(X, np.zeros(n, np.intp), 2, lo, hi)
        assert_array_equal(count, [n, 0])
        assert total.shape == (2, d)
        for clip in (dict(lower=lo, upper=hi), dict(max_norm=1.0)):
            count, total, gram = A.clipped_gram(X, **clip)
            assert count == n and total.shape == (d,) and gram.shape == (d, d)
            stats = A.clipped_linear_stats(X, y, -1, 1, **clip)
            assert stats[0] == n and stats[3].shape == (d, d) and stats[5] == 0.0
