# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The computed, pre-noise statistics of neighbouring datasets differ by at most the
declared sensitivity, also for data with a large common offset (issue 14, finding 1).

Data: timestamps inside a public one-hour window far from the origin; D′ adds one record
at the offset where the centred-after-summing computation moves most. Each test computes
the normalised statistic that the mechanism receives (sensitivity 1 per entry) on D and
D′ and checks the discrepancy; ``test_broken_variant_is_caught`` runs the same check on
the old formula (centre after summing) to show that the check can fail.
"""

import numpy as np
import pytest

from dpsk._core._accumulate import clipped_sums
from dpsk._core._exact_sums import ROUNDING_MARGIN, exact_gram, exact_moments, fixed_point_grid
from dpsk.decomposition import PCA
from dpsk.mechanisms._joint import Box
from dpsk.naive_bayes import GaussianNB
from dpsk.preprocessing import StandardScaler
from dpsk.stats._common import as_records
from dpsk.stats._moments import MomentsQuery

N = 200_000
LOWER, UPPER = 1.7e9, 1.7e9 + 3600.0
RECORD = LOWER + 1440.0


def offset_data(dtype, n=N, d=1, seed=0):
    rng = np.random.default_rng(seed)
    X = (LOWER + rng.uniform(0, 3600, (n, d))).astype(dtype)
    return np.ascontiguousarray(X), np.ascontiguousarray(np.vstack([X, np.full((1, d), RECORD, dtype=dtype)]))


def weights(n, seed=1):
    return np.random.default_rng(seed).uniform(0, 1, n)


def broken_csq(X, lower, upper, w=None):
    """The old formula: Σc² − 2mΣc + m²n, normalised by B²/8 (what main released)."""
    count, total, total_sq = clipped_sums(X, lower, upper, sample_weight=w)
    mid, half = (lower + upper) / 2, (upper - lower) / 2
    csq = np.clip(total_sq - 2 * mid * total + mid * mid * count, 0, count * half * half)
    return (csq - count * half * half / 2) / (half * half / 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["count", "sum", "mean", "var"])
@pytest.mark.parametrize("weighted", [False, True])
def test_stats_pre_noise_discrepancy_within_sensitivity(dtype, kind, weighted):
    D, D1 = offset_data(dtype)
    lower, upper = np.array([LOWER]), np.array([UPPER])
    query = MomentsQuery(kind, epsilon=1.0, n_outputs=1, rng=np.random.default_rng(0))
    w = w1 = None
    if weighted:  # user-level weights: the added record has the largest weight, 1
        w = weights(N)
        w1 = np.append(w, 1.0)
    raw, _, _ = query.normalised(as_records(D, 0), lower, upper, w, 1.0)
    raw1, _, _ = query.normalised(as_records(D1, 0), lower, upper, w1, 1.0)
    for part in query.parts:
        assert np.all(np.abs(np.asarray(raw1[part]) - np.asarray(raw[part])) <= 1.0), part


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_broken_variant_is_caught(dtype):
    """The check above fails for the formula dpsk used before (centre after summing).

    Its error depends on how the float sums round, hence on the data and on the kernel's
    chunks of rows: as an attacker would, take the worst of a few such datasets."""
    lower, upper = np.array([LOWER]), np.array([UPPER])
    worst = 0.0
    for seed in range(4):
        D, D1 = offset_data(dtype, seed=seed)
        worst = max(worst, np.max(np.abs(broken_csq(D1, lower, upper) - broken_csq(D, lower, upper))))
    assert worst > 1.0


def _standardised(X, box, y_index=None, n_classes=1):
    return box.standardised_sums(box.exact_sums(X, y_index, n_classes))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_standard_scaler_and_gaussian_nb_statistics(dtype):
    D, D1 = offset_data(dtype, d=2)
    box = Box(np.full(2, LOWER), np.full(2, UPPER))
    # StandardScaler's hook, GaussianNB's hook (two classes, the record in class 1)
    for est, args, args1 in [
        (StandardScaler(bounds=(LOWER, UPPER)), (D, box), (D1, box)),
    ]:
        a, b = box.standardised_sums(est._sums(*args)), box.standardised_sums(est._sums(*args1))
        for x, y, bound in zip(a, b, (1.0, 1.0, 0.5)):
            assert np.all(np.abs(y - x) <= bound)
    y = (np.arange(N) % 2).astype(np.intp)
    y1 = np.append(y, 1).astype(np.intp)
    nb = GaussianNB(bounds=(LOWER, UPPER))
    a = box.standardised_sums(nb._class_sums(D, y, 2, box))
    b = box.standardised_sums(nb._class_sums(D1, y1, 2, box))
    for x, z, bound in zip(a, b, (1.0, 1.0, 0.5)):
        assert np.all(np.abs(z - x) <= bound)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pca_box_centre_statistics(dtype):
    D, D1 = offset_data(dtype, d=2)
    pca = PCA(bounds=(LOWER, UPPER))
    lower, upper = np.full(2, LOWER), np.full(2, UPPER)
    from dpsk.decomposition._pca import _Geometry

    geometry = _Geometry(lower, upper, None, 2)
    (n, s, g), (n1, s1, g1) = pca._statistics(geometry, D), pca._statistics(geometry, D1)
    half = upper / 2 - lower / 2
    assert n1 - n == 1
    assert np.all(np.abs(s1 - s) <= half)
    # one row y changes the upper triangle of Σyyᵀ by y yᵀ: |y_i y_j| <= h_i h_j
    assert np.all(np.abs(g1 - g) <= np.outer(half, half))


def test_exact_sums_independent_of_threads_and_chunks():
    X, _ = offset_data(np.float64, n=300_000, d=3)
    lower, upper = np.full(3, LOWER), np.full(3, UPPER)
    w = weights(X.shape[0])
    a = exact_moments(X, lower, upper, sample_weight=w, n_threads=1)
    b = exact_moments(X, lower, upper, sample_weight=w, n_threads=2)
    assert np.array_equal(a.count, b.count) and np.array_equal(a.sum_q, b.sum_q)
    assert np.array_equal(a.sum_q2, b.sum_q2)
    # the sums of two halves add up exactly to the sums of the whole
    c = exact_moments(X[:100_000], lower, upper, sample_weight=w[:100_000])
    e = exact_moments(X[100_000:], lower, upper, sample_weight=w[100_000:])
    assert np.array_equal(c.sum_q2 + e.sum_q2, a.sum_q2)
    g1 = exact_gram(X, lower, upper, lower / 2 + upper / 2, upper / 2 - lower / 2, n_threads=1)
    g2 = exact_gram(X, lower, upper, lower / 2 + upper / 2, upper / 2 - lower / 2, n_threads=2)
    assert all(np.array_equal(x, y) for x, y in zip(g1[1:], g2[1:]))


def test_quantised_values_never_exceed_the_box():
    """Clamping in integer space: extreme values and values outside the box stay within h."""
    lower, upper = np.array([-1e300, 1.7e9, 0.0]), np.array([1e300, 1.7e9 + 1e-3, 0.0])
    X = np.array([[1e308, 1e300, 5.0], [-1e308, -1e300, -5.0], [0.0, 1.7e9 + 5e-4, 0.0]])
    m = exact_moments(X, lower, upper)
    count, s1, s2 = m.about(m.centre)
    half = upper / 2 - lower / 2
    from fractions import Fraction

    for j in range(3):
        assert abs(s1[0, j]) <= 3 * Fraction(half[j])
        assert s2[0, j] <= 3 * Fraction(half[j]) ** 2


def test_weights_are_rounded_down():
    X = np.zeros((3, 1))
    m = exact_moments(X, np.array([-1.0]), np.array([1.0]), sample_weight=np.array([0.1, 1 / 3, 1.0]))
    assert m.about(m.centre)[0][0] <= 0.1 + 1 / 3 + 1.0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        exact_moments(X, np.array([-1.0]), np.array([1.0]), sample_weight=np.array([2.0, 0, 0]))


def test_margin_covers_one_rounding_at_the_row_limit():
    """2 · 2**-53 · MAX_EXACT_ROWS (one rounding of each of two statistics of magnitude
    <= rows) is below the margin, with room for the product with JointRelease's weights."""
    from dpsk._core._exact_sums import MAX_EXACT_ROWS

    assert 4 * 2.0**-53 * MAX_EXACT_ROWS <= ROUNDING_MARGIN / 2


def test_exact_gram_sums_round_is_one_correct_rounding():
    """ExactGram.round: float(exact·factor) of the integers behind exact_gram, one rounding."""
    from fractions import Fraction

    from dpsk._core._exact_sums import exact_gram_sums

    rng = np.random.default_rng(3)
    X = 1.7e9 + rng.uniform(0, 3600, (5000, 3))
    lower, upper = np.full(3, 1.7e9), np.full(3, 1.7e9 + 3600)
    centre, radius = lower / 2 + upper / 2, np.full(3, 1800.0)
    w = rng.uniform(0, 1, 5000)
    for weights in (None, w):
        sums = exact_gram_sums(X, lower, upper, centre, radius, sample_weight=weights)
        count, total, gram = exact_gram(X, lower, upper, centre, radius, sample_weight=weights)
        step = [Fraction(float(s)) for s in sums.step]
        assert float(Fraction(sums.count, sums.weight_scale)) == count
        assert np.array_equal(sums.round([sums.total[j] * step[j] for j in range(3)]), total)
        assert sums.round(sums.gram[0, 1] * step[0] * step[1]) == gram[0, 1]
        # An arbitrary factor (here 1/3600, not a power of two) is applied exactly.
        exact = Fraction(int(sums.gram[1, 2])) * step[1] * step[2] / sums.weight_scale / 3600
        assert sums.round(sums.gram[1, 2] * step[1] * step[2], Fraction(1, 3600)) == float(exact)


def _sums_data(dtype, n=5000, d=7, k=5, seed=4):
    """Rows inside, on and outside a box far from the origin, and their classes."""
    rng = np.random.default_rng(seed)
    lower, upper = np.full(d, LOWER), np.full(d, UPPER)
    X = rng.uniform(LOWER - 900.0, UPPER + 900.0, size=(n, d))
    X[::7] = UPPER
    X[1::7] = LOWER
    X[2::11] = np.nextafter(UPPER, np.inf)
    return X.astype(dtype), lower, upper, rng.integers(0, k, size=n).astype(np.intp), k


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_sums_without_squares_are_the_moments_integers(dtype, n_threads):
    """``squares=False`` (float accumulation of the quantised values) gives the exact
    integers of the 128-bit path, per class and for one class."""
    X, lower, upper, y, k = _sums_data(dtype)
    for y_index, n_classes in ((y, k), (None, 1)):
        full = exact_moments(X, lower, upper, y_index, n_classes, n_threads=n_threads)
        fast = exact_moments(X, lower, upper, y_index, n_classes, n_threads=n_threads, squares=False)
        assert fast.sum_q2 is None
        assert (fast.count == full.count).all() and (fast.sum_q == full.sum_q).all()
        count, s1, s2 = fast.about(fast.centre)
        assert s2 is None and (s1 == full.about(full.centre)[1]).all()
    # Weights take the 128-bit path, squares included.
    w = np.random.default_rng(0).uniform(size=X.shape[0])
    assert exact_moments(X, lower, upper, y, k, sample_weight=w, squares=False).sum_q2 is not None


def test_sums_without_squares_refuse_bad_classes_and_non_finite_values():
    X, lower, upper, y, k = _sums_data(np.float64, n=100)
    with pytest.raises(ValueError, match="y_index"):
        exact_moments(X, lower, upper, y, k - 1, squares=False)
    X[50, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        exact_moments(X, lower, upper, y, k, squares=False)


@pytest.mark.parametrize("bits", [20, 31])
def test_grid_of_radii_below_2_to_the_minus_990(bits):
    """Radii below 2**-990 keep the step of 2**-990 (a finite inverse step) with a smaller
    Q, never above the radius; they were refused after the budget was spent."""
    radius = np.array([2.0**-990, 2.0**-991, 1e-300, 2.0**-1000 * 3, 5e-324, 0.0])
    step, inverse, qmax = fixed_point_grid(radius, bits)
    assert np.all(np.isfinite(inverse))
    np.testing.assert_array_equal(step[:-1], 2.0 ** (-989 - bits))
    np.testing.assert_array_equal(step * inverse, 1.0)
    assert np.all(qmax * step <= radius)
    assert qmax[0] >= 2 ** (bits - 1) and qmax[-1] == 0.0
    np.testing.assert_array_equal(qmax, np.floor(radius / step))
