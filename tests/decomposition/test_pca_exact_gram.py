# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""PCA's one-pass exact Gram (clip to the box and the ball inside the kernel) gives
bitwise the statistic of the reference path: rows clipped by ``clip_bounds`` then
``clip_rows_l2`` (copies), quantised on the public grid, summed as exact integers and
rounded once (issue 16, slow paths)."""

import math
from fractions import Fraction

import numpy as np
import pytest

from dpsk._core import _exact_sums as exact_sums
from dpsk._core._clip import clip_bounds, clip_rows_l2
from dpsk._core._exact_sums import (
    GRAM_BITS,
    GRAM_WEIGHT_BITS,
    ExactGram,
    clipped_l1_norms,
    exact_gram,
    exact_gram_sums,
    fixed_point_grid,
    gram_floats,
)
from dpsk.decomposition import PCA
from dpsk.decomposition._pca import _Geometry


@pytest.fixture(params=["tiles", "blas"])
def gram_kernel(request):
    """Both paths of the blocks' Gram: the tiles (``src/block_gram.c``, on CPUs with AVX2
    and FMA) and the BLAS path other CPUs take, which otherwise no test here would run."""
    previous = exact_sums._use_tiled_gram(request.param == "tiles")
    yield request.param
    exact_sums._use_tiled_gram(previous)


def _reference_sums(X, geometry, sample_weight=None):
    """The old path, independently: copies clipped in X's dtype, numpy quantisation,
    exact integer sums in Python ints (no kernel of _exact_sums involved)."""
    radius = geometry._radius()
    step, inverse, qmax = fixed_point_grid(radius, GRAM_BITS)
    rows = X
    if geometry.lower is not None:
        rows = clip_bounds(rows, geometry.lower, geometry.upper)
    if geometry.data_norm is not None:
        rows = clip_rows_l2(rows, geometry._ball_radius(radius))
    if geometry.l1_norm is not None:  # y scaled towards the centre, quantised as it is
        t = _l1_scaled(rows, geometry.centre, _l1_radius(geometry.l1_norm, step)) * inverse
    else:
        if geometry.data_norm is None:  # the box only: the kernel clamps to it in float64
            rows = np.minimum(np.maximum(rows.astype(np.float64), geometry.lower), geometry.upper)
        t = (rows.astype(np.float64) - geometry.centre) * inverse
    t = np.minimum(np.maximum(t, -qmax), qmax)
    q = (np.floor(t + (qmax + 0.5)) - qmax).astype(np.int64).astype(object)
    if sample_weight is None:
        units, scale = np.ones(X.shape[0], dtype=np.int64), 1
    else:
        units, scale = np.floor(np.ldexp(sample_weight, GRAM_WEIGHT_BITS)).astype(np.int64), 1 << GRAM_WEIGHT_BITS
    units = units.astype(object)
    total = (units[:, None] * q).sum(axis=0)
    gram = (q * units[:, None]).T @ q
    return ExactGram(int(units.sum()), total, gram, step, scale)


def _l1_radius(l1_norm, step):
    """The kernel's documented L1 radius: max(L − Σstep·(1 + 2**-40), L/2)·(1 − 2**-28)."""
    return max(l1_norm - math.fsum(step.tolist()) * (1.0 + 2.0**-40), l1_norm / 2) * (1.0 - 2.0**-28)


def _lane_l1(a):
    """Σ|a_j| per row in the kernel's documented order: four lanes (j mod 4, the tail in
    lane 0), then (lane 0 + lane 1) + (lane 2 + lane 3)."""
    a = np.abs(a)
    d = a.shape[1]
    m = d - d % 4
    lanes = np.zeros((a.shape[0], 4))
    for j in range(0, m, 4):
        lanes += a[:, j : j + 4]
    for j in range(m, d):
        lanes[:, 0] += a[:, j]
    return (lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])


def _l1_scaled(rows, centre, radius):
    """y = rows − centre (float64) times min(1, radius/‖y‖₁); scales below 2**-1000 zero the row."""
    y = rows.astype(np.float64) - centre
    s = _lane_l1(y)
    over = s > radius
    scale = np.ones_like(s)
    scale[over] = radius / s[over]
    scale[scale < 2.0**-1000] = 0.0
    y[over] = y[over] * scale[over, None]
    return y


def _boundary_rows(rng, n, d, radius, lower, upper, dtype):
    """Random rows plus rows on, just inside and just outside the ball and the box."""
    X = rng.normal(scale=radius / np.sqrt(d) * 1.5, size=(n, d))
    direction = rng.normal(size=(n // 4, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    on_ball = direction * radius
    X[: n // 4] = on_ball
    X[n // 4 : n // 2] = np.nextafter(on_ball, 2 * on_ball)  # just outside
    X[n // 2 : n // 2 + n // 8] = np.nextafter(on_ball[: n // 8], 0 * on_ball[: n // 8])  # just inside
    corner = n // 2 + n // 8
    X[corner : corner + 8] = lower  # on the box
    X[corner + 8 : corner + 16] = upper
    X[corner + 16 : corner + 24] = np.nextafter(upper, np.inf)
    X[corner + 24] = 0.0
    return np.ascontiguousarray(X.astype(dtype))


def _l1_boundary_rows(rng, X, geometry):
    """The last rows of X (random ones, see _boundary_rows) replaced by rows on, just
    inside and just outside the L1 ball about the centre (the public ``l1_norm`` and the
    kernel's radius below it)."""
    n, d = X.shape
    step = fixed_point_grid(geometry._radius(), GRAM_BITS)[0]
    direction = rng.normal(size=(n // 4, d))
    direction /= np.abs(direction).sum(axis=1, keepdims=True)
    part = n // 20
    for k, norm in enumerate([geometry.l1_norm, _l1_radius(geometry.l1_norm, step)]):
        on = geometry.centre + direction[k * part : (k + 1) * part] * norm
        start = n - (k + 1) * 3 * part
        X[start : start + part] = on
        X[start + part : start + 2 * part] = np.nextafter(on, 2 * on)
        X[start + 2 * part : start + 3 * part] = np.nextafter(on, 0 * on)
    return X


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rule", ["ball", "box", "both", "ball_l1", "box_l1"])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_pass_gram_is_bitwise_the_clipped_copy_path(dtype, rule, weighted, gram_kernel):
    rng = np.random.default_rng(16)
    n, d, norm = 1500, 7, 3.0
    lower, upper = np.linspace(-2.0, -0.5, d), np.linspace(0.3, 2.5, d)
    box = (None, None) if rule.startswith("ball") else (lower, upper)
    l1_norm = 4.0 if rule.endswith("l1") else None
    geometry = _Geometry(*box, None if rule.startswith("box") else norm, d, l1_norm=l1_norm)
    # Rows on the radius the kernel clips to (data_norm less the rounding margin)
    clip = norm if rule.startswith("box") else geometry._ball_radius(geometry._radius())
    X = _boundary_rows(rng, n, d, clip, lower, upper, dtype)
    if l1_norm is not None:  # 30 % of the rows about the L1 ball (in place of random ones)
        X = np.ascontiguousarray(_l1_boundary_rows(rng, X.astype(np.float64), geometry).astype(dtype))
    weights = None
    if weighted:
        weights = rng.uniform(size=n)
        weights[:40] = 1.0
        weights[40:80] = 0.0
        weights[80:120] = np.ldexp(rng.integers(0, 1 << GRAM_WEIGHT_BITS, size=40), -GRAM_WEIGHT_BITS)
    expected = gram_floats(_reference_sums(X, geometry, weights))
    sums = geometry.exact_sums(X, weights)
    reference = _reference_sums(X, geometry, weights)
    assert sums.count == reference.count
    assert np.array_equal(sums.total, reference.total)
    assert np.array_equal(sums.gram, reference.gram)
    count, total, gram = geometry.statistics(X, weights)
    assert count == expected[0]
    # Bitwise (and the same float64 bits)
    assert total.tobytes() == expected[1].tobytes()
    assert gram.tobytes() == expected[2].tobytes()


def test_exact_gram_floats_round_large_integers_as_python_does():
    """Entries above 2**53 (many rows at the grid's largest |q|) are correctly rounded
    (ties to even), bitwise ``gram_floats`` of the Python integers; more rows than one
    dsyrk block and two chunks of rows."""
    rng = np.random.default_rng(3)
    n, d = 70_000, 3
    X = np.where(rng.uniform(size=(n, d)) < 0.5, -1.0, 1.0) * rng.uniform(0.999, 1.0, size=(n, d))
    X[::7] = 1.0
    lower, upper = np.full(d, -1.0), np.full(d, 1.0)
    centre = np.zeros(d)
    radius = np.full(d, 1.0 - 2.0**-30)
    sums = exact_gram_sums(X, lower, upper, centre, radius, n_threads=2)
    assert max(abs(int(v)) for v in sums.gram.ravel()) > 2**53
    expected = gram_floats(sums)
    got = exact_gram(X, lower, upper, centre, radius, n_threads=1)
    assert got[0] == expected[0]
    assert got[1].tobytes() == expected[1].tobytes()
    assert got[2].tobytes() == expected[2].tobytes()


def test_one_pass_gram_flags_non_finite_rows():
    X = np.ones((10, 3))
    X[4, 1] = np.nan
    big = np.full(3, np.finfo(np.float64).max)
    with pytest.raises(ValueError):
        exact_gram(X, -big, big, np.zeros(3), np.ones(3), clip_norm=1.0)
    with pytest.raises(ValueError):
        exact_gram(X, -big, big, np.zeros(3), np.ones(3), clip_box=(-np.ones(3), np.ones(3)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rule", ["ball", "box", "both"])
def test_clipped_l1_norms_are_bitwise_the_reference(dtype, rule):
    """The rows' L1 norms for the private ``l1_norm`` (PCA's one pass, ``l1_gram_pass``,
    and ``clipped_l1_norms``) are bitwise those of clipped copies (``clip_bounds``,
    ``clip_rows_l2``) summed in the kernel's lane order."""
    rng = np.random.default_rng(5)
    n, d, norm = 900, 11, 3.0
    lower, upper = np.linspace(-2.0, -0.5, d), np.linspace(0.3, 2.5, d)
    box = (None, None) if rule == "ball" else (lower, upper)
    geometry = _Geometry(*box, None if rule == "box" else norm, d)
    X = _boundary_rows(rng, n, d, norm, lower, upper, dtype)
    rows = X
    if geometry.lower is not None:
        rows = clip_bounds(rows, geometry.lower, geometry.upper)
    if geometry.data_norm is not None:
        rows = clip_rows_l2(rows, geometry.data_norm)
    expected = _lane_l1(rows.astype(np.float64) - geometry.centre)
    got = geometry.l1_pass(X)[0].norms
    box = None if geometry.lower is None else (geometry.lower, geometry.upper)
    assert clipped_l1_norms(X, geometry.centre, clip_box=box, clip_norm=geometry.data_norm).tobytes() == got.tobytes()
    assert got.dtype == np.float64 and got.shape == (n,)
    assert got.tobytes() == expected.tobytes()
    assert clipped_l1_norms(X, geometry.centre, n_threads=2).tobytes() == _lane_l1(X - geometry.centre).tobytes()
    X[7, 3] = np.nan
    with pytest.raises(ValueError):
        geometry.l1_pass(X)


def _quantised_l1(X, centre, radius, l1_norm):
    """‖q·step‖₁ of each row of X after the kernel's L1 clip, as exact Fractions."""
    big = np.full(X.shape[1], np.finfo(np.float64).max)
    norms = []
    for row in X:
        sums = exact_gram_sums(row[None, :], -big, big, centre, radius, clip_l1=l1_norm)
        norms.append(sum(abs(Fraction(int(q))) * Fraction(float(s)) for q, s in zip(sums.total, sums.step)))
    return norms


def _rows_at_half_steps(rng, n, d, step, centre, l1_norm):
    """Rows whose L1 scaling lands many coordinates near half a grid step (where rounding
    to nearest adds the most), for L1 radii both well above and below the grid's Σstep."""
    halves = rng.integers(0, 8, size=(n, d)) + 0.5 - rng.uniform(0, 2.0**-20, size=(n, d))
    halves[rng.uniform(size=(n, d)) < 0.7] = 0.0  # sparse rows: few coordinates share the L1 norm
    halves[:, 0] += 0.5
    y = halves * step * rng.choice([-1.0, 1.0], size=(n, d))
    y *= (l1_norm / np.abs(y).sum(axis=1))[:, None] * rng.uniform(1.0, 1.0 + 2.0**-24, size=(n, 1))
    return centre + y


@pytest.mark.parametrize("l1_norm", [3.0 * 2.0**-21, 2.0**-16, 0.75])
def test_l1_clip_bounds_every_quantised_row(l1_norm, monkeypatch):
    """Privacy: after rounding onto the grid, no row's ‖q·step‖₁ exceeds ``clip_l1``
    (exact arithmetic), whether the margin's L − Σstep (0.75) or L/2 (the smaller
    bounds, below the grid's Σstep) is used; without the margin it fails."""
    rng = np.random.default_rng(11)
    d, radius = 9, np.full(9, 1.0)
    centre = rng.uniform(-0.5, 0.5, size=d)
    step = fixed_point_grid(radius, GRAM_BITS)[0]
    X = _rows_at_half_steps(rng, 300, d, step, centre, l1_norm)
    assert max(_quantised_l1(X, centre, radius, l1_norm)) <= Fraction(l1_norm)
    # The check itself: with the radius L itself (no margin), rounding takes rows above it.
    monkeypatch.setattr(exact_sums, "_l1_margin", lambda norm, step: float(norm))
    assert max(_quantised_l1(X, centre, radius, l1_norm)) > Fraction(l1_norm)


def test_l1_clip_holds_far_from_the_origin():
    """Regression (privacy): with a box far from the origin (timestamps, 10¹²), the old
    path scaled y, added the centre back and subtracted it again in the kernel, which
    rounds by an ulp of 10¹² (2**-13), far above the grid's steps: rows came out with
    ‖q·step‖₁ = 0.50012 > l1_norm = 0.5. The kernel now scales the centred y itself."""
    d, l1_norm = 4, 0.5
    lower, upper = np.full(d, 1e12), np.full(d, 1e12 + 1.0)
    geometry = _Geometry(lower, upper, None, d, l1_norm=l1_norm)
    rng = np.random.default_rng(0)
    X = geometry.centre + rng.uniform(-0.5, 0.5, size=(200, d))
    worst = 0
    for row in X:
        sums = geometry.exact_sums(row[None, :])
        worst = max(worst, sum(abs(Fraction(int(q))) * Fraction(float(s)) for q, s in zip(sums.total, sums.step)))
    assert worst <= Fraction(l1_norm)


def test_tiny_l1_clip_collapses_rows_to_the_centre():
    """A private ``l1_norm`` may come out as the smallest positive float: below the
    float analysis' range (2**-900) every row goes to the centre instead of an error."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 5))
    big = np.full(5, np.finfo(np.float64).max)
    count, total, gram = exact_gram(X, -big, big, np.zeros(5), np.ones(5), clip_l1=np.finfo(np.float64).tiny)
    assert count == 50
    assert not total.any() and not gram.any()
    pca = PCA(2, epsilon=1.0, data_norm=3.0, l1_norm=1e-300, random_state=0).fit(X)
    assert pca.l1_norm_ == 1e-300
    with pytest.raises(ValueError):
        exact_gram(X, -big, big, np.zeros(5), np.ones(5), clip_l1=0.0)


def test_l1_clip_of_finite_rows_whose_centring_overflows_raises_nothing():
    """Finite X never raises (only non-finite X is outside the declared domain): a
    centred value or an L1 norm that overflows to inf scales the row to the centre."""
    big = np.finfo(np.float64).max
    X = np.array([[big, big, -big, big], [1.0, 2.0, 3.0, 4.0]])
    bound = np.full(4, big)
    count, total, gram = exact_gram(X, -bound, bound, np.full(4, -big / 2), np.ones(4), clip_l1=2.0)
    assert count == 2 and not total.any() and not gram.any()
    # The one pass too (its first pass quantises the overflowed y unscaled, clamped)
    first = exact_sums.l1_gram_pass(X, -bound, bound, np.full(4, -big / 2), np.ones(4))
    assert np.isinf(first.norms).all()
    count, total, gram = first.exact_gram(2.0)
    assert count == 2 and not total.any() and not gram.any()


def _l1_pass_case(rule, dtype, rng):
    """(X, geometry without l1_norm) for the one-pass tests: rows on and about the ball
    and the box (``_boundary_rows``), the box far from the origin for "far"."""
    n, d, norm = 1200, 7, 3.0
    lower, upper = np.linspace(-2.0, -0.5, d), np.linspace(0.3, 2.5, d)
    if rule.startswith("far"):  # the regression test's 10¹² box (float32: a box it can hold)
        width = 1.0 if dtype == np.float64 else 2.0**20
        lower, upper = np.full(d, 1e12 - width), np.full(d, 1e12 + width)
        norm = float(np.linalg.norm(upper)) * (1.0 - 1e-7)
    box = (None, None) if rule == "ball" else (lower, upper)
    data_norm = None if rule in ("box", "far") else norm
    geometry = _Geometry(*box, data_norm, d)
    clip = norm if data_norm is None else geometry._ball_radius(geometry._radius())
    X = _boundary_rows(rng, n, d, clip, lower, upper, np.float64)
    if rule.startswith("far"):
        X = geometry.centre + rng.uniform(-1.5, 1.5, size=(n, d)) * (upper - lower) / 2
    return np.ascontiguousarray(X.astype(dtype)), geometry


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rule", ["ball", "box", "both", "far", "far_ball"])
@pytest.mark.parametrize("weighted", [False, True])
def test_l1_gram_pass_is_bitwise_the_two_pass_path(dtype, rule, weighted, gram_kernel):
    """The one pass for a private ``l1_norm`` (``l1_gram_pass``: the rows' L1 norms and
    the unscaled exact sums, then a correction of the rows that the released clip scales)
    gives bitwise the norms of ``clipped_l1_norms`` and the integers and floats of the
    full pass with that clip, for clips that scale almost every row, some rows (the rows
    on the clip's own radius included) or none, and the smallest float."""
    rng = np.random.default_rng(17)
    X, geometry = _l1_pass_case(rule, dtype, rng)
    weights = None
    if weighted:
        weights = rng.uniform(size=X.shape[0])
        weights[:40], weights[40:80] = 1.0, 0.0
    first, key = geometry.l1_pass(X, weights)
    box = None if geometry.lower is None else (geometry.lower, geometry.upper)
    norms = clipped_l1_norms(X, geometry.centre, clip_box=box, clip_norm=geometry.data_norm)
    assert first.norms.tobytes() == norms.tobytes()
    step = fixed_point_grid(geometry._radius(), GRAM_BITS)[0]
    picks = [float(np.quantile(norms, q)) for q in (0.05, 0.5, 0.9)]
    picks += [float(np.sort(norms)[-3]), float(norms.max()) * 2, np.finfo(np.float64).tiny]
    # Clips whose radius (_l1_margin) is exactly some rows' norm: rows on the boundary
    on = np.sort(norms)[len(norms) // 3]
    picks.append(on / _l1_radius(1.0, step) if _l1_radius(1.0, step) > 0 else on)
    clipped = 0
    for l1_norm in picks:
        full = _Geometry(geometry.lower, geometry.upper, geometry.data_norm, X.shape[1], l1_norm=l1_norm)
        if full.l1_norm is None:
            continue
        reference = full.exact_sums(X, weights)  # the full pass (no first pass taken)
        sums = first.exact_gram_sums(full.l1_norm)
        assert sums.count == reference.count
        assert np.array_equal(sums.total, reference.total)
        assert np.array_equal(sums.gram, reference.gram)
        expected = full.statistics(X, weights)
        full.use_pass((first, key))
        got = full.statistics(X, weights)
        assert got[0] == expected[0]
        assert got[1].tobytes() == expected[1].tobytes()
        assert got[2].tobytes() == expected[2].tobytes()
        clipped += int(np.sum(norms > _l1_radius(full.l1_norm, step)))
    assert clipped > 0  # the correction ran


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "params", [{"data_norm": 2.5}, {"bounds": (-1.0, 1.5)}, {"data_norm": 2.5, "bounds": (-1.0, 1.5)}]
)
def test_private_l1_norm_fit_is_bitwise_the_two_pass_fit(dtype, params, monkeypatch):
    """A seeded pure-ε fit with the default ``l1_norm="auto"`` (a private clip) gives the
    same bits with the one pass as with the two passes it replaces (norms, then the
    full Gram with the released clip), with weights."""
    rng = np.random.default_rng(5)
    X = (rng.normal(size=(800, 6)) * [1.0, 0.5, 2.0, 1.0, 0.2, 1.0]).astype(dtype)
    weights = rng.uniform(size=800)

    def fit():
        return PCA(3, random_state=4, **params).fit(X, sample_weight=weights)

    used = []
    finish = exact_sums.L1GramPass.exact_gram
    monkeypatch.setattr(exact_sums.L1GramPass, "exact_gram", lambda self, l1: used.append(l1) or finish(self, l1))
    one = fit()
    assert one.l1_norm_ is not None and used == [one.l1_norm_]  # the one pass was taken
    monkeypatch.setattr(_Geometry, "use_pass", lambda self, first: None)  # the two passes
    two = fit()
    for name in ("components_", "explained_variance_", "mean_", "singular_values_"):
        assert getattr(one, name).tobytes() == getattr(two, name).tobytes(), name
    assert (one.l1_norm_, one.noise_variance_, one.n_samples_) == (two.l1_norm_, two.noise_variance_, two.n_samples_)


def test_l1_gram_pass_decides_from_the_norm_the_clip_compares():
    """About the box's midpoint, the Gram's ball (``data_norm`` less the rounding margin)
    can move a row *away* from the centre: its L1 norm there exceeds the one the private
    quantile reads (rows clipped to ``data_norm``). With the clip's radius between the
    two, the full pass scales the row, and so must the one pass (it decides by the
    Gram's own norm, not the quantile's). Rows are drawn until the scaling changes the
    row's quantised values (the two norms differ by about 2**-18)."""
    d, data_norm = 20, 6.75
    lower, upper = np.full(d, -0.5), np.full(d, 2.5)
    box = (lower, upper)
    geometry = _Geometry(lower, upper, data_norm, d)
    assert geometry.centre[0] == 1.0  # about the midpoint: the ball (6.75) exceeds ‖half‖ = 6.7
    step = fixed_point_grid(geometry._radius(), GRAM_BITS)[0]
    inner = geometry._ball_radius(geometry._radius())
    rng = np.random.default_rng(3)
    for _ in range(500):
        row = np.r_[np.full(5, 2.5) - rng.uniform(0, 1e-3, 5), np.ones(15) + rng.uniform(-1e-3, 1e-3, 15)][None, :]
        quantile_norm = clipped_l1_norms(row, geometry.centre, clip_box=box, clip_norm=data_norm)[0]
        gram_norm = clipped_l1_norms(row, geometry.centre, clip_box=box, clip_norm=inner)[0]
        assert gram_norm > quantile_norm
        radius = (quantile_norm + gram_norm) / 2
        l1_norm = radius / (1.0 - 2.0**-28) + math.fsum(step.tolist()) * (1.0 + 2.0**-40)
        assert quantile_norm < _l1_radius(l1_norm, step) < gram_norm
        full = _Geometry(lower, upper, data_norm, d, l1_norm=l1_norm)
        scaled, unscaled = full.exact_sums(row), _Geometry(lower, upper, data_norm, d, l1_norm=1e3).exact_sums(row)
        if not np.array_equal(scaled.total, unscaled.total):
            break
    else:
        pytest.fail("no row whose scaling changes its quantised values")
    X = np.vstack([row, rng.uniform(-0.5, 2.5, size=(50, d))])
    first, key = geometry.l1_pass(X)
    reference = full.exact_sums(X)
    sums = first.exact_gram_sums(full.l1_norm)
    assert np.array_equal(sums.total, reference.total)
    assert np.array_equal(sums.gram, reference.gram)


def _mostly_zero_rows(rng, n, d):
    """One-hot-like rows about the origin (8 nonzero values each, some with 40), whose
    quantised values are nonzero where x is: a stretch of dense rows at the start (BLAS
    blocks) and, further on, a few rows with every value nonzero (more than the sparse
    path takes in a row: BLAS for their blocks)."""
    X = np.zeros((n, d))
    for i in range(n):
        k = 40 if i % 37 == 0 else 8
        X[i, rng.choice(d, size=k, replace=False)] = rng.choice([1.0, -0.75, 0.5], size=k) * rng.uniform(0.5, 1, k)
    X[:300] = rng.normal(size=(300, d))
    X[1500:1510] = rng.normal(size=(10, d))
    return X


@pytest.mark.parametrize("weighted", [False, True])
def test_mostly_zero_blocks_are_bitwise_the_reference(weighted):
    """Wide blocks whose quantised rows are mostly zeros (one-hot data about the origin,
    as Adult) add the products of their nonzero values one by one (``_sparse_rows``)
    instead of a dsyrk: the same exact integers as the reference, with blocks of either
    kind between two flushes, rows of many nonzero values, weights, and the private L1
    clip's correction pass (which subtracts rows)."""
    rng = np.random.default_rng(61)
    n, d = 3000, 70
    X = _mostly_zero_rows(rng, n, d)
    rows = exact_sums._gram_rows(d)
    assert not exact_sums._sparse_gram_block(X[:rows])  # BLAS
    assert exact_sums._sparse_gram_block(X[400 : 400 + rows])  # one product at a time
    assert not exact_sums._sparse_gram_block(X[1500 : 1500 + rows])  # a row of d nonzero values
    assert not exact_sums._sparse_gram_block(X[400 : 400 + rows, :40])  # narrow blocks: BLAS
    weights = rng.uniform(size=n) if weighted else None
    geometry = _Geometry(None, None, 4.0 * np.sqrt(d), d)
    reference = _reference_sums(X, geometry, weights)
    sums = geometry.exact_sums(X, weights)
    assert sums.count == reference.count
    assert np.array_equal(sums.total, reference.total)
    assert np.array_equal(sums.gram, reference.gram)
    first, key = geometry.l1_pass(X, weights)
    l1_norm = float(np.quantile(first.norms[300:], 0.5))  # scales half of the sparse rows
    clipped = _Geometry(None, None, geometry.data_norm, d, l1_norm=l1_norm)
    reference = _reference_sums(X, clipped, weights)
    sums = first.exact_gram_sums(clipped.l1_norm)
    assert np.array_equal(sums.total, reference.total)
    assert np.array_equal(sums.gram, reference.gram)


@pytest.mark.parametrize("data_norm", [2.0**-1005, 2.0**-1000, 3e-300, 1e-160, 0.75])
def test_ball_clip_bounds_every_quantised_row_at_any_scale(data_norm):
    """The ball's radius is data_norm less the rounding margin ‖step‖, so that rounding
    cannot take a quantised row past data_norm. Below ~1e-148 the steps' squares vanish
    and the margin was computed as 0 (rows reached data_norm·(1 + 6e-6)); below 2**-990
    the grid is coarser than data_norm·2**-20 (``fixed_point_grid``), and the margin may
    exceed half of data_norm (here with 100 features). Every quantised row, summed
    exactly, stays within data_norm."""
    d = 100
    geometry = _Geometry(None, None, data_norm, d)
    radius = geometry._radius()
    clip = geometry._ball_radius(radius)
    step = fixed_point_grid(radius, GRAM_BITS)[0]
    rng = np.random.default_rng(3)
    # Rows just outside the clip: random directions, and spread evenly over k coordinates,
    # each just above half a step when k is large (rounded up: the worst case).
    rows = [rng.normal(size=d) for _ in range(20)]
    for k in (1, 4, 16, 64, 100):
        row = np.zeros(d)
        row[:k] = 1.0
        rows.append(row)
    for row in rows:
        X = (row / np.linalg.norm(row) * max(clip, data_norm / 2) * 1.01)[None, :]
        args, kwargs = geometry._kernel(X)
        assert kwargs["clip_norm"] == clip
        sums = exact_gram_sums(X, *args, **kwargs)
        norm_sq = sum(Fraction(int(sums.gram[j, j])) * Fraction(float(step[j])) ** 2 for j in range(d))
        assert norm_sq <= Fraction(data_norm) ** 2
