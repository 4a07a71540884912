# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Histogram gradient boosting on Dask: the in-memory release, bitwise, for any chunking.

The histograms are exact int64 sums of the rows' gradients and hessians on the public
fixed-point grid: a chunk's histogram is the in-memory kernel on the chunk's rows, and
the chunks' integers add up to the whole data's. The quantile bin edges are the
``dpsk.stats`` Dask selections, draw for draw. Both fits draw from fresh copies of the
same bit generator, so any difference would come from the statistics.
"""

import numpy as np
import pytest

from dpsk.accounting import record_releases
from dpsk.dask._testing import CHUNKINGS, N, _dask, _rng
from dpsk.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from dpsk.utils.estimator_checks import _leaves, _RecordingAccountant

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

BOUNDS = (-2.0, 2.0)
BOUNDS_Y = (-3.0, 3.0)


def _data(dtype=np.float64):
    rng = np.random.default_rng(5)
    X = np.column_stack(
        [
            rng.normal(size=N),
            rng.uniform(-2.5, 2.5, size=N),  # beyond the bounds: clipped
            rng.integers(0, 6, size=N),  # category codes
        ]
    ).astype(dtype)
    X[::9, 0] = 0.0  # a mass at one value
    score = X[:, 0] + np.sin(X[:, 1]) + (X[:, 2] == 3) + rng.normal(scale=0.3, size=N)
    y = score / 3.0 + rng.normal(scale=1e-3, size=N)  # many bits
    y[::37] = 50.0  # beyond bounds_y: clipped
    labels = np.digitize(score, [-0.5, 0.8])  # three classes
    weights = rng.uniform(0.0, 1.5, size=N)  # above 1: clipped to 1
    weights[::11] = 0.0  # left out of the quantile ranks
    return X, y, labels, weights


MODELS = {
    # binary, cyclic, quantile edges, a categorical feature
    "binary": (
        lambda: HistGradientBoostingClassifier(
            max_iter=4, bounds=BOUNDS, classes=[0, 1], categorical_features=[2], epsilon=2.0
        ),
        lambda labels, y: (labels == 2).astype(int),
    ),
    # multiclass, random features per node (every level released), uniform bins
    "multiclass": (
        lambda: HistGradientBoostingClassifier(
            max_iter=3, max_depth=2, max_features=2, bounds=BOUNDS, classes=[0, 1, 2], bin_strategy="uniform"
        ),
        lambda labels, y: labels,
    ),
    # binary, cyclic with public cuts of the numeric features (grid rounds), a categorical feature;
    # learning rate below 1 and rounds after the first cycle: the adaptive feature schedule
    "grid": (
        lambda: HistGradientBoostingClassifier(
            max_iter=8, learning_rate=0.3, bounds=BOUNDS, classes=[0, 1], categorical_features=[2], thresholds="grid"
        ),
        lambda labels, y: (labels == 2).astype(int),
    ),
    # regression, cyclic, quantile edges, pure ε
    "regressor": (
        lambda: HistGradientBoostingRegressor(max_iter=4, bounds=BOUNDS, bounds_y=BOUNDS_Y, delta=0.0, max_bins=16),
        lambda labels, y: y,
    ),
}


def _same(u, v):
    if isinstance(u, (list, tuple)):
        return len(u) == len(v) and all(_same(a, b) for a, b in zip(u, v))
    if u is None or v is None:
        return u is v
    if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
        return np.array_equal(u, v)
    return u == v


def _assert_same_model(a, b):
    """Every fitted attribute (public or private: the trees, the released sums, the
    ledger's event) is the same: a model attribute added to the in-memory fit and not to
    the Dask fit fails here."""
    params = set(a.get_params(deep=False))
    fitted = sorted(name for name in vars(a) if name not in params)
    assert fitted == sorted(name for name in vars(b) if name not in params)
    for name in fitted:
        assert _same(getattr(a, name), getattr(b, name)), name


def _fit_both(name, chunks, weighted, dtype=np.float64):
    make, target = MODELS[name]
    X, y, labels, w = _data(dtype)
    y = target(labels, y)
    weights = w if weighted else None
    a = make().set_params(random_state=_rng()).fit(X, y, sample_weight=weights)
    b = make().set_params(random_state=_rng())
    b.fit(_dask(X, chunks), _dask(y, chunks), sample_weight=_dask(w, chunks) if weighted else None)
    return a, b, X


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=len)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", list(MODELS))
def test_boosting_equal_in_memory(chunks, weighted, name):
    a, b, X = _fit_both(name, chunks, weighted)
    _assert_same_model(a, b)
    assert np.array_equal(b.predict(_dask(X, chunks)).compute(), a.predict(X))  # lazy, per chunk


@pytest.mark.parametrize("name", ["binary", "regressor"])
def test_float32(name):
    a, b, _ = _fit_both(name, CHUNKINGS[3], weighted=True, dtype=np.float32)
    _assert_same_model(a, b)


def test_data_frames_with_categorical_features_by_name():
    pd = pytest.importorskip("pandas")
    X, y, _, w = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "code"])
    make = lambda: HistGradientBoostingRegressor(  # noqa: E731
        max_iter=3, bounds=BOUNDS, bounds_y=BOUNDS_Y, categorical_features=["code"], random_state=_rng()
    )
    a = make().fit(frame, y, sample_weight=w)
    b = make().fit(
        dd.from_pandas(frame, npartitions=5),
        dd.from_pandas(pd.Series(y), npartitions=5),
        sample_weight=dd.from_pandas(pd.Series(w), npartitions=5),
    )
    _assert_same_model(a, b)
    assert list(b.feature_names_in_) == ["a", "b", "code"]
    assert b.is_categorical_.tolist() == [False, False, True]


@pytest.mark.parametrize(
    "params",
    [
        dict(max_iter="auto", learning_rate="auto"),
        dict(epsilon=np.inf, bin_strategy="uniform", max_iter=3),
        dict(epsilon=np.inf, bin_strategy="uniform", max_iter=3, thresholds="grid"),
    ],
    ids=["auto-rounds", "infinite-epsilon", "infinite-epsilon-grid"],
)
def test_auto_rounds_and_infinite_epsilon(params):
    X, _, labels, w = _data()
    y = (labels == 2).astype(int)
    make = lambda: HistGradientBoostingClassifier(bounds=BOUNDS, classes=[0, 1], random_state=_rng(), **params)  # noqa: E731
    a = make().fit(X, y, sample_weight=w)
    b = make().fit(_dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1]), sample_weight=_dask(w, CHUNKINGS[1]))
    _assert_same_model(a, b)


def test_one_spend_and_the_declared_releases():
    X, _, labels, _ = _data()
    accountant = _RecordingAccountant()
    est = MODELS["binary"][0]().set_params(accountant=accountant, random_state=0)
    with record_releases() as drawn:
        est.fit(_dask(X, CHUNKINGS[1]), _dask((labels == 2).astype(int), CHUNKINGS[1]))
    assert [call for call, _ in accountant.calls] == ["check", "record"]
    assert _leaves(drawn) == _leaves([est.privacy_spent_])


@pytest.mark.parametrize("bad", ["X", "y", "label", "weight"])
def test_bad_values_in_one_chunk_raise_before_the_spend(bad):
    X, y, labels, w = _data()
    {"X": X[N - 4], "y": y[N - 4 :], "label": labels[N - 4 :], "weight": w[N - 4 :]}[bad][:1] = (
        np.nan if bad in ("X", "y") else -1
    )
    make, target = (MODELS["binary"][0], labels) if bad == "label" else (MODELS["regressor"][0], y)
    accountant = _RecordingAccountant()
    with pytest.raises(ValueError):
        make().set_params(accountant=accountant).fit(
            _dask(X, CHUNKINGS[2]), _dask(target, CHUNKINGS[2]), sample_weight=_dask(w, CHUNKINGS[2])
        )
    assert [call for call, _ in accountant.calls] == ["check"]


def test_refusals_before_any_compute(computes):
    X, y, labels, _ = _data()
    Xd, yd, ld = _dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1]), _dask(labels, CHUNKINGS[1])
    R, C = HistGradientBoostingRegressor, HistGradientBoostingClassifier
    cases = [
        (R(bounds_y=BOUNDS_Y), yd, "public `bounds`"),
        (R(bounds="private", bounds_y=BOUNDS_Y), yd, "public `bounds`"),
        (R(bounds="data", bounds_y=BOUNDS_Y), yd, "public `bounds`"),
        (R(bounds=BOUNDS), yd, "public `bounds_y`"),
        (C(bounds=BOUNDS), ld, "public `classes`"),
        (C(bounds=BOUNDS, classes=[0, 1, 2], epsilon=np.inf), ld, "bin_strategy"),
        (R(bounds=BOUNDS, bounds_y=BOUNDS_Y), da.stack([yd, yd], axis=1), "1-d"),
    ]
    for est, target, message in cases:
        accountant = _RecordingAccountant()
        with pytest.raises(ValueError, match=message):
            est.set_params(accountant=accountant).fit(Xd, target)
        assert [call for call, _ in accountant.calls] == ["check"], message
    assert computes.computes == 0


def _first_histogram(X, y, w, chunks):
    """The first round's level-0 gradient histogram of a regressor, summed over ``chunks``
    by the Dask path's chunk function (all features at every node, as with ε = ∞)."""
    from dpsk.dask._boosting import _sums_chunk, node_sums
    from dpsk.dask._reduce import merge

    est = HistGradientBoostingRegressor(bounds=BOUNDS, bounds_y=BOUNDS_Y, bin_strategy="uniform", max_bins=8)
    est.bounds_, est.n_bins_, est.bin_edges_ = (np.full(3, -2.0), np.full(3, 2.0)), 8, None
    est.is_categorical_ = np.array([False, False, True])
    tree = (np.zeros(1, dtype=np.intp), np.ones((1, 8), dtype=np.uint8))
    features = np.arange(3, dtype=np.intp)[None]
    parts = []
    for s in chunks:
        binned = est._binned(np.ascontiguousarray(X[s]))
        raw = np.zeros((binned.shape[0], 1))
        target = np.clip(y[s], *BOUNDS_Y)[:, None]
        parts.append(_sums_chunk(est, (0.75, 1.0, 64), node_sums, (tree, 0, features, 8), binned, raw, target, w[s]))
    return merge(*parts)


def test_one_row_moves_a_level_histogram_by_one_rows_integers():
    """What one record can change in the computed statistic: added to either chunk (any
    target, any weight), it moves one bin of each feature's gradient histogram, by an
    integer vector of norm at most the grid (64 steps), whatever the other rows; so the
    level's L2 sensitivity is √k times the grid, as in memory."""
    X, y, _, w = _data()
    chunks = [slice(0, 700), slice(700, N + 1)]
    base_g, base_h = _first_histogram(X, y, w, chunks)
    for extra_y, extra_w in [(1e300, 1.5), (-1e300, 1.0), (0.3, 0.25), (BOUNDS_Y[1], 1.0)]:
        g, h = _first_histogram(np.r_[X, [[0.5, -9.0, 2.0]]], np.r_[y, extra_y], np.r_[w, extra_w], chunks)
        for diff, bound in ((g - base_g, 64), (h - base_h, 64)):
            per_feature = diff[0]  # (features, bins, K)
            assert all(np.count_nonzero(f) <= 1 for f in per_feature)
            assert np.sqrt((per_feature.astype(float) ** 2).sum(axis=(1, 2))).max() <= bound


def test_the_data_catch_float_histograms():
    """Check the equality tests have power: float64 gradient sums by bin merged from 64
    chunks are not bitwise the one-pass sums on these data; the exact sums are."""
    X, y, _, w = _data()
    bins = np.digitize(X[:, 1], np.linspace(-2, 2, 9))
    g = (np.clip(y, *BOUNDS_Y) - 0.1) * np.minimum(w, 1.0)
    whole = np.bincount(bins, weights=g, minlength=10)
    cuts = np.cumsum((0,) + CHUNKINGS[2])
    merged = sum(np.bincount(bins[i:j], weights=g[i:j], minlength=10) for i, j in zip(cuts[:-1], cuts[1:]))
    assert not np.array_equal(merged, whole)
    exact = _first_histogram(X, y, w, [slice(i, j) for i, j in zip(cuts[:-1], cuts[1:])])
    np.testing.assert_array_equal(exact[0], _first_histogram(X, y, w, [slice(0, N)])[0])


@pytest.mark.slow
def test_local_cluster_gives_the_same_fit():
    """The distributed scheduler (a LocalCluster of threads): the rows persisted on the
    workers, the same fit."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster):
            a, b, X = _fit_both("binary", CHUNKINGS[1], weighted=True)
            predicted = b.predict(_dask(X, CHUNKINGS[1])).compute()
    _assert_same_model(a, b)
    assert np.array_equal(predicted, a.predict(X))


def test_an_integer_seed_gives_the_same_fit_for_any_chunking():
    """With an int seed the stream is keyed by the exact moments and the row count, not by
    the chunks: the fit is reproducible and independent of the chunking."""
    X, y, _, w = _data()
    fits = [
        HistGradientBoostingRegressor(max_iter=2, bounds=BOUNDS, bounds_y=BOUNDS_Y, random_state=7).fit(
            _dask(X, chunks), _dask(y, chunks), sample_weight=_dask(w, chunks)
        )
        for chunks in CHUNKINGS[1:3]
    ]
    _assert_same_model(*fits)


def test_lazy_predict_and_score_on_the_cluster():
    a, b, X = _fit_both("regressor", CHUNKINGS[1], weighted=False)
    _, y, _, _ = _data()
    predicted = b.predict(_dask(X, CHUNKINGS[1]))
    assert isinstance(predicted, da.Array)
    np.testing.assert_allclose(b.score(_dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1])), a.score(X, y), rtol=1e-12)
    for name in ("binary", "multiclass"):
        c, d, _ = _fit_both(name, CHUNKINGS[1], weighted=False)
        for method in ("predict_proba", "decision_function"):
            out = getattr(d, method)(_dask(X, CHUNKINGS[1]))
            assert isinstance(out, da.Array), method
            assert np.array_equal(out.compute(), getattr(c, method)(X)), method


def test_categorical_features_only_need_no_bounds():
    X, _, labels, _ = _data()
    codes = np.ascontiguousarray(X[:, 2:])
    make = lambda: HistGradientBoostingClassifier(  # noqa: E731
        max_iter=3, classes=[0, 1, 2], categorical_features=[0], random_state=_rng()
    )
    a = make().fit(codes, labels)
    b = make().fit(_dask(codes, CHUNKINGS[3]), _dask(labels, CHUNKINGS[3]))
    _assert_same_model(a, b)
    assert b.bin_strategy_ == "uniform" and b.bin_edges_ is None


def test_outer_regions_of_the_edges_are_ranked_on_their_own_column(monkeypatch):
    """With the proposal's last level lowered, the quantile edges' selections propose bins
    of the merged outer regions: their exact ranks come from one more pass over that
    sub-range's column, and the fit still equals the in-memory one (every level of the three
    numeric columns is drawn from one pair of passes per level)."""
    import dpsk.dask._boosting as db
    import dpsk.mechanisms._selection as selection

    # 2**32 bins per sub-range, the last level 11: some tens of outer proposals at this ε
    monkeypatch.setattr(selection, "_TOP_LEVEL", 11)
    columns = []
    original = db._edge_ranks_chunk

    def counting(task, *args):
        columns.append(task[0])
        return original(task, *args)

    monkeypatch.setattr(db, "_edge_ranks_chunk", counting)
    X, y, _, _ = _data()
    make = MODELS["regressor"][0]
    a = make().set_params(epsilon=5.0, random_state=_rng()).fit(X, y)
    b = make().set_params(epsilon=5.0, random_state=_rng()).fit(_dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1]))
    _assert_same_model(a, b)
    assert columns and set(columns) <= {0, 1, 2}, "no outer bin was proposed"


def test_one_pair_of_edge_passes_per_level(monkeypatch):
    """The quantile edges read the data once per level for all the features (two passes
    each), not once per feature and level."""
    import dpsk.dask._boosting as db

    levels = []
    original = db._level_counts

    def counting(plan, X, w, tasks, level):
        levels.append((level, len(tasks)))
        return original(plan, X, w, tasks, level)

    monkeypatch.setattr(db, "_level_counts", counting)
    X, y, _, _ = _data()
    MODELS["regressor"][0]().set_params(random_state=0).fit(_dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1]))
    assert levels == [(level, 3) for level in range(4)]  # max_bins=16: 4 levels of 3 numeric columns
