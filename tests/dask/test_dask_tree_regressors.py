# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The random tree regressors on Dask: the in-memory release, bitwise, for any chunking.

The leaf counts and sums are exact int64 sums (``dpsk.tree._regressor.exact_leaf_sums``):
a chunk's statistic is the same function of its rows, and the chunks' integers add up
to the whole data's. Both fits draw from fresh copies of the same bit generator, so any
difference would come from the statistics; the targets are chosen so that float sums
of the leaves would depend on the chunking (:func:`test_the_data_catch_float_leaf_sums`).
"""

import numpy as np
import pytest

from dpsk.accounting import record_releases
from dpsk.dask._testing import CHUNKINGS, N, _dask, _rng
from dpsk.ensemble import RandomForestRegressor
from dpsk.tree import DecisionTreeRegressor
from dpsk.tree._regressor import SUM_BITS, exact_leaf_sums
from dpsk.tree._sparse_routing import apply_trees
from dpsk.utils.estimator_checks import _leaves, _RecordingAccountant
from dpsk.utils.validation import WEIGHT_GRID

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

BOUNDS_Y = (-4.0, 4.0)


def _data(dtype=np.float64):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.2, 1.2, size=(N, 3)).astype(dtype)  # beyond the bounds: routed as clipped
    # targets with many bits (thirds, tiny noise) and beyond bounds_y (clipped)
    y = 3.0 * X[:, 0] + X[:, 1] / 3.0 + rng.normal(scale=1e-3, size=N)
    y[::41] = 40.0
    return X, y, rng.uniform(0.0, 1.5, size=N)  # weights above 1 clipped to 1


def _models():
    params = dict(bounds=(-1.0, 1.0), bounds_y=BOUNDS_Y, epsilon=2.0)
    return [
        lambda: DecisionTreeRegressor(max_depth=3, **params),
        lambda: RandomForestRegressor(n_estimators=5, **params),  # max_depth=None: a noisy row count
    ]


def _fit_both(make, chunks, weighted, dtype=np.float64):
    X, y, w = _data(dtype)
    weights = w if weighted else None
    a = make().set_params(random_state=_rng()).fit(X, y, sample_weight=weights)
    b = make().set_params(random_state=_rng())
    b.fit(_dask(X, chunks), _dask(y, chunks), sample_weight=_dask(w, chunks) if weighted else None)
    return a, b, X


def _assert_same_model(a, b):
    for name in ("totals_", "bounds_", "bounds_y_", "max_depth_", "n_rows_", "_feature", "_threshold", "_leaf_values"):
        x, y = getattr(a, name), getattr(b, name)
        assert all(np.array_equal(u, v) for u, v in zip(np.atleast_1d(x), np.atleast_1d(y))), name
    for s, t in zip(getattr(a, "estimators_", [a]), getattr(b, "estimators_", [b])):
        assert np.array_equal(s.tree_.value, t.tree_.value)
    assert a.privacy_spent_ == b.privacy_spent_


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=len)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("make", _models(), ids=["tree", "forest"])
def test_random_tree_regressors_equal_in_memory(chunks, weighted, make):
    a, b, X = _fit_both(make, chunks, weighted)
    _assert_same_model(a, b)
    assert np.array_equal(b.predict(_dask(X, chunks)).compute(), a.predict(X))  # the same routing per row


@pytest.mark.parametrize("make", _models(), ids=["tree", "forest"])
def test_float32_and_data_frames(make):
    a, b, _ = _fit_both(make, CHUNKINGS[3], weighted=False, dtype=np.float32)
    _assert_same_model(a, b)
    pd = pytest.importorskip("pandas")
    X, y, _ = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    c = make().set_params(random_state=_rng()).fit(frame, y)
    d = (
        make()
        .set_params(random_state=_rng())
        .fit(dd.from_pandas(frame, npartitions=5), dd.from_pandas(pd.Series(y), 5))
    )
    _assert_same_model(c, d)
    assert list(d.feature_names_in_) == ["a", "b", "c"]


def test_the_data_catch_float_leaf_sums():
    """Check the equality tests have power: on these data, the float64 leaf sums of the fit
    before the exact sums (``np.bincount`` of t·w), merged from 64 chunks, are not bitwise
    the one-pass sums; the exact sums are."""
    from dpsk.mechanisms._joint import Box

    X, y, w = _data()
    est = RandomForestRegressor(n_estimators=5, bounds=(-1.0, 1.0), bounds_y=BOUNDS_Y)
    feature, threshold = est._structure(_rng(), 5, 4, np.full(3, -1.0), np.full(3, 1.0))
    part = est._parts(_rng(), 5, N)
    box_y = Box(np.array([BOUNDS_Y[0]]), np.array([BOUNDS_Y[1]]))
    units = np.floor(np.minimum(w, 1.0) * WEIGHT_GRID)
    exact = est._leaf_sums(X, y, units, part, feature, threshold, 4, box_y)
    cell = part * 16 + apply_trees(X, feature, threshold, 4, part=part)
    t = est._standardised_targets(y, box_y) * np.minimum(w, 1.0)
    whole = np.bincount(cell, weights=t, minlength=80)
    bounds = np.cumsum((0,) + CHUNKINGS[2])
    merged, exact_merged = 0.0, 0
    for i, j in zip(bounds[:-1], bounds[1:]):
        merged = merged + np.bincount(cell[i:j], weights=t[i:j], minlength=80)
        exact_merged = (
            exact_merged + est._leaf_sums(X[i:j], y[i:j], units[i:j], part[i:j], feature, threshold, 4, box_y)[1]
        )
    assert not np.array_equal(merged, whole)
    np.testing.assert_array_equal(exact_merged, exact[1])


def test_exact_leaf_sums_add_up_over_any_split():
    rng = np.random.default_rng(0)
    n, n_cells = 5000, 37
    cell = rng.integers(0, n_cells, size=n).astype(np.intp)
    t = np.clip(rng.normal(scale=0.6, size=n), -1.0, 1.0)
    units = np.floor(rng.uniform(0, 1, size=n) * WEIGHT_GRID)
    for u in (None, units):
        whole = exact_leaf_sums(cell, t, u, n_cells)
        cuts = np.sort(rng.integers(0, n, size=9))
        parts = [
            exact_leaf_sums(cell[i:j], t[i:j], None if u is None else u[i:j], n_cells)
            for i, j in zip(np.r_[0, cuts], np.r_[cuts, n])
        ]
        assert all(p.dtype == np.int64 for p in whole)
        np.testing.assert_array_equal(sum(p[0] for p in parts), whole[0])
        np.testing.assert_array_equal(sum(p[1] for p in parts), whole[1])
        # the exact values: rint(t·2**SUM_BITS) per row, times its units
        q = np.rint(t * 2.0**SUM_BITS) * (1 if u is None else u)
        np.testing.assert_array_equal(whole[1], [int(q[cell == c].sum()) for c in range(n_cells)])


def test_one_row_moves_one_chunk_statistic_by_its_bounds():
    """What one record can change in the computed statistic: added to one chunk (any
    target, any weight), it moves one cell's count by at most WEIGHT_GRID units and its
    sum by at most WEIGHT_GRID·2**SUM_BITS; the merged statistic moves by the same."""
    from dpsk.dask._fit import _regression_leaves_chunk
    from dpsk.dask._reduce import merge
    from dpsk.mechanisms._joint import Box

    X, y, w = _data()
    est = DecisionTreeRegressor(max_depth=3, bounds=(-1.0, 1.0), bounds_y=BOUNDS_Y)
    feature, threshold = est._structure(_rng(), 1, 3, np.full(3, -1.0), np.full(3, 1.0))
    box_y = Box(np.array([BOUNDS_Y[0]]), np.array([BOUNDS_Y[1]]))

    def statistic(X, y, w):
        chunks = [slice(0, 700), slice(700, N + 1)]
        parts = [_regression_leaves_chunk(est, feature, threshold, 3, box_y, X[s], y[s], w[s], None) for s in chunks]
        return merge(*parts)

    base = statistic(X, y, w)
    for extra_y, extra_w in [(1e300, 1.5), (-1e300, 1.0), (0.3, 0.25), (BOUNDS_Y[1], 1.0)]:
        counts, sums = statistic(np.r_[X, [[0.5, -2.0, 0.1]]], np.r_[y, extra_y], np.r_[w, extra_w])
        dc, ds = counts - base[0], sums - base[1]
        assert np.count_nonzero(dc) <= 1 and np.count_nonzero(ds) <= 1
        assert np.abs(dc).sum() <= WEIGHT_GRID and np.abs(ds).sum() <= WEIGHT_GRID * 2**SUM_BITS


@pytest.mark.parametrize("make", _models(), ids=["tree", "forest"])
def test_one_spend_two_passes_and_the_declared_releases(make, computes):
    X, y, _ = _data()
    accountant = _RecordingAccountant()
    est = make().set_params(accountant=accountant, random_state=0)
    with record_releases() as drawn:
        est.fit(_dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1]))
    assert [call for call, _ in accountant.calls] == ["check", "record"]
    assert _leaves(drawn) == _leaves([est.privacy_spent_])
    assert computes.computes == 2  # the validating totals, then the leaves


@pytest.mark.parametrize("bad", ["X", "y", "weight"])
@pytest.mark.parametrize("make", _models(), ids=["tree", "forest"])
def test_bad_values_in_one_chunk_raise_before_the_spend(make, bad):
    X, y, w = _data()
    {"X": X[N - 4], "y": y[N - 4 :], "weight": w[N - 4 :]}[bad][:1] = -1.0 if bad == "weight" else np.nan
    accountant = _RecordingAccountant()
    with pytest.raises(ValueError):
        make().set_params(accountant=accountant).fit(
            _dask(X, CHUNKINGS[2]), _dask(y, CHUNKINGS[2]), sample_weight=_dask(w, CHUNKINGS[2])
        )
    assert [call for call, _ in accountant.calls] == ["check"]


def test_refusals_before_any_compute(computes):
    X, y, _ = _data()
    Xd, yd = _dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1])
    params = dict(bounds=(-1.0, 1.0), bounds_y=BOUNDS_Y)
    cases = [
        (DecisionTreeRegressor(bounds=(-1.0, 1.0)), (Xd, yd), "public `bounds_y`"),
        (DecisionTreeRegressor(bounds_y=BOUNDS_Y), (Xd, yd), "public `bounds`"),
        (RandomForestRegressor(bounds="data", bounds_y=BOUNDS_Y), (Xd, yd), "public `bounds`"),
        (DecisionTreeRegressor(**params), (Xd[Xd[:, 0] > 0], yd), "unknown chunk sizes"),
        (DecisionTreeRegressor(**params), (Xd, _dask(y[:-1], (N - 1,))), "must match"),
        (DecisionTreeRegressor(**params), (Xd, da.stack([yd, yd], axis=1)), "1-d"),
        (RandomForestRegressor(**params, n_jobs=0), (Xd, yd), "n_jobs"),
    ]
    for est, args, message in cases:
        accountant = _RecordingAccountant()
        with pytest.raises(ValueError, match=message):
            est.set_params(accountant=accountant).fit(*args)
        assert [call for call, _ in accountant.calls] == ["check"], message
    assert computes.computes == 0


def test_an_integer_seed_keys_the_row_count_too():
    """With an int seed the stream is keyed by the exact totals and the number of rows: a
    neighbour with one more row of weight 0 (equal totals) must not get the same stream,
    or the noisy row count of ``max_depth=None`` would differ by exactly that row."""
    X, y, w = _data()
    X2, y2, w2 = np.r_[X, [[0.1, 0.2, 0.3]]], np.r_[y, 1.0], np.r_[w, 0.0]
    counts = []
    for data, weights in ((X, y), w), ((X2, y2), w2):
        est = RandomForestRegressor(n_estimators=3, bounds=(-1.0, 1.0), bounds_y=BOUNDS_Y, random_state=0)
        chunks = (len(weights) // 2, len(weights) - len(weights) // 2)
        est.fit(*(_dask(a, chunks) for a in data), sample_weight=_dask(weights, chunks))
        counts.append(est.n_rows_)
    assert counts[1] - counts[0] != 1.0
