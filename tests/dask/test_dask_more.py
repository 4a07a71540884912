# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""MultinomialNB and the quantiles of dpsk.stats on Dask: the in-memory release, draw for draw.

Both sides draw from fresh copies of the same bit generator; any difference comes from
the statistics (MultinomialNB: the exact integer class table) or from what the
quantile's exponential mechanism is handed (``dpsk.dask._quantile``: counts per block,
then the groups of a window of ranks, the outer regions merged).
"""

import numpy as np
import pytest

from dpsk import stats
from dpsk.dask._testing import CHUNKINGS, N, _dask, _rng
from dpsk.naive_bayes import MultinomialNB
from dpsk.utils.estimator_checks import _RecordingAccountant

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")


def _counts():
    rng = np.random.default_rng(7)
    X = rng.poisson(2.0, size=(N, 4)) * rng.uniform(0.3, 1.7, size=(N, 4))
    X[::50] *= 40.0  # rows beyond data_norm: L1-clipped
    labels = rng.integers(0, 3, size=N)
    weights = rng.uniform(0.0, 1.5, size=N)  # above 1 clipped to 1
    return X, labels, weights


# -- MultinomialNB -----------------------------------------------------------------------


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=len)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_multinomial_nb_equals_in_memory(chunks, weighted, dtype):
    X, labels, w = _counts()
    X = X.astype(dtype)
    params = dict(data_norm=12.5, classes=[0, 1, 2], epsilon=2.0)
    weights = w if weighted else None
    a = MultinomialNB(**params, random_state=_rng()).fit(X, labels, sample_weight=weights)
    b = MultinomialNB(**params, random_state=_rng())
    b.fit(_dask(X, chunks), _dask(labels, chunks), sample_weight=_dask(w, chunks) if weighted else None)
    for name in ("class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_", "data_norm_"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.privacy_spent_ == b.privacy_spent_
    tolerance = 1e-12 if dtype == np.float64 else 1e-5  # BLAS on blocks of other sizes
    np.testing.assert_allclose(b.predict_proba(_dask(X, chunks)).compute(), a.predict_proba(X), rtol=tolerance)


def test_multinomial_nb_table_is_the_in_memory_integers():
    """The merged table is the in-memory table, integer for integer, for every chunking."""
    import functools

    from dpsk.dask._fit import _multinomial_chunk
    from dpsk.dask._reduce import map_reduce
    from dpsk.naive_bayes._discrete import _exact_class_table, _multinomial_grid

    X, labels, _ = _counts()
    classes = np.array([0, 1, 2])
    k, top = _multinomial_grid(12.5)
    expected = _exact_class_table(X, labels, 3, k, top, None)
    est = MultinomialNB(data_norm=12.5, classes=classes)
    for chunks in CHUNKINGS:
        chunk = functools.partial(_multinomial_chunk, est, classes, k, top)
        got = map_reduce(chunk, _dask(X, chunks), _dask(labels, chunks), None)
        assert got.dtype == np.int64 and np.array_equal(got, expected)


@pytest.mark.parametrize("bad", ["nan", "inf", "negative"])
def test_multinomial_nb_bad_values_in_one_chunk_raise_before_the_spend(bad):
    X, labels, _ = _counts()
    X[N - 5, 2] = {"nan": np.nan, "inf": np.inf, "negative": -1.0}[bad]
    accountant = _RecordingAccountant()
    est = MultinomialNB(data_norm=12.5, classes=[0, 1, 2], accountant=accountant)
    with pytest.raises(ValueError, match="NaN|infinity|Negative"):
        est.fit(_dask(X, CHUNKINGS[1]), _dask(labels, CHUNKINGS[1]))
    assert [call for call, _ in accountant.calls] == ["check"]


def test_multinomial_nb_refusals_before_any_compute(computes):
    X, labels, _ = _counts()
    Xd, yd = _dask(X, CHUNKINGS[1]), _dask(labels, CHUNKINGS[1])
    with pytest.raises(ValueError, match="public `data_norm`"):
        MultinomialNB(classes=[0, 1, 2]).fit(Xd, yd)
    with pytest.raises(ValueError, match="public `classes`"):
        MultinomialNB(data_norm=1.0).fit(Xd, yd)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        MultinomialNB(data_norm=1.0, classes=[0, 1, 2]).fit(Xd[Xd[:, 0] > 1], yd)
    with pytest.raises(ValueError, match="rows"):
        MultinomialNB(data_norm=1.0, classes=[0, 1, 2]).fit(Xd, yd[:-1])
    assert computes.computes == 0


def test_multinomial_nb_data_frame():
    X, labels, _ = _counts()
    import pandas as pd

    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    params = dict(data_norm=12.5, classes=[0, 1, 2])
    a = MultinomialNB(**params, random_state=_rng()).fit(frame, labels)
    b = MultinomialNB(**params, random_state=_rng()).fit(dd.from_pandas(frame, npartitions=5), _dask(labels, (N,)))
    assert np.array_equal(a.feature_count_, b.feature_count_)
    assert list(b.feature_names_in_) == ["a", "b", "c", "d"]


# -- quantiles ---------------------------------------------------------------------------


def _values():
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.normal(size=N - 300), rng.integers(-3, 4, size=300).astype(np.float64)])  # ties
    rng.shuffle(x)
    x[::97] = 40.0  # beyond the bounds: clipped
    return x


QUANTILE_CASES = [
    (stats.quantile, dict(q=0.3, epsilon=1.0)),
    (stats.quantile, dict(q=[0.0, 0.1, 0.5, 0.9, 1.0], epsilon=4.0)),
    (stats.quantile, dict(q=0.5, epsilon=0.05)),  # a window wider than the data
    (stats.quantile, dict(q=0.7, epsilon=1.0, bins=50)),  # fewer bins than blocks
    (stats.quantile, dict(q=0.2, epsilon=1.0, bins=3 * 2**20 + 5)),
    (stats.quantile, dict(q=0.5, epsilon=float("inf"))),
    (stats.median, dict(epsilon=2.0)),
    (stats.percentile, dict(q=[25.0, 75.0], epsilon=2.0)),
]


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=len)
@pytest.mark.parametrize("function, params", QUANTILE_CASES, ids=lambda v: getattr(v, "__name__", None) or str(v))
def test_quantiles_equal_in_memory(chunks, function, params):
    x = _values()
    for seed in range(4):
        a = function(x, bounds=(-5.0, 5.0), random_state=_rng(seed), return_error=True, **params)
        b = function(_dask(x, chunks), bounds=(-5.0, 5.0), random_state=_rng(seed), return_error=True, **params)
        assert np.array_equal(a.value, b.value) and a.privacy_spent == b.privacy_spent
        assert a.rank_error(0.05) == b.rank_error(0.05)


@pytest.mark.parametrize("chunks", CHUNKINGS[1:3], ids=len)
def test_quantiles_of_columns_and_frames(chunks):
    rng = np.random.default_rng(5)
    X = np.column_stack([_values(), rng.uniform(0, 10, size=N), rng.integers(0, 3, size=N)]).astype(np.float32)
    bounds = [(-5.0, 5.0), (0.0, 10.0), (0.0, 2.0)]
    lower, upper = np.array(bounds).T
    a = stats.quantile(X, [0.25, 0.5], bounds=(lower, upper), axis=0, random_state=_rng())
    b = stats.quantile(_dask(X, chunks), [0.25, 0.5], bounds=(lower, upper), axis=0, random_state=_rng())
    assert a.dtype == b.dtype == np.float32 and np.array_equal(a, b)
    import pandas as pd

    frame = pd.DataFrame(X, columns=["u", "v", "w"])
    named = dict(zip(frame.columns, bounds))
    c = stats.median(dd.from_pandas(frame, npartitions=6), bounds=named, axis=0, random_state=_rng())
    d = stats.median(frame, bounds=named, axis=0, random_state=_rng())
    assert np.array_equal(np.asarray(c), np.asarray(d))


def test_outer_regions_are_scored_by_a_rank_pass(monkeypatch):
    """With the proposal's last level lowered to 10, bins of the merged outer regions are
    proposed often: their exact ranks come from one more Dask pass, and the selections
    still equal the in-memory ones."""
    import dpsk.dask._quantile as dq
    import dpsk.mechanisms._selection as selection

    # 2**16 bins, the last level 10: a quarter of the proposals or so fall far from qN
    monkeypatch.setattr(selection, "_TOP_LEVEL", 10)
    passes = []
    original = dq._rank_chunk

    def counting(*args):
        passes.append(args[4])
        return original(*args)

    monkeypatch.setattr(dq, "_rank_chunk", counting)
    x = _values()
    for seed in range(6):
        params = dict(bounds=(-5.0, 5.0), epsilon=0.5, bins=2**16)
        a = stats.quantile(x, 0.5, **params, random_state=_rng(seed))
        b = stats.quantile(_dask(x, CHUNKINGS[2]), 0.5, **params, random_state=_rng(seed))
        assert a == b
    assert passes, "no outer bin was proposed"


def test_too_narrow_a_window_is_caught(monkeypatch):
    """Validity of the equality test: a window whose outer regions are not all at the last
    proposal level changes the draws (the equality above would catch it)."""
    import dpsk.dask._quantile as dq

    monkeypatch.setattr(dq, "rank_margin", lambda mechanism, unit, n: 3)
    x = _values()
    params = dict(bounds=(-5.0, 5.0), bins=2**12)  # few bins: few rank passes
    for seed in range(20):
        a = stats.quantile(x, 0.5, **params, random_state=_rng(seed))
        if a != stats.quantile(_dask(x, CHUNKINGS[0]), 0.5, **params, random_state=_rng(seed)):
            return
    raise AssertionError("a window too narrow went unnoticed")


def test_quantile_fetches_a_window_not_the_data():
    """The client receives counts per block and per bin of a few blocks only."""
    import dpsk.dask._quantile as dq

    x = np.random.default_rng(0).normal(size=200_000)
    received = []
    original = dq._merge_windows

    def spy(*parts):
        out = original(*parts)
        received.append(sum(p[0].size for p in out))
        return out

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dq, "_merge_windows", spy)
        value = stats.median(da.from_array(x, chunks=20_000), bounds=(-8.0, 8.0), random_state=_rng())
    assert abs(value) < 0.05
    assert received and max(received) < 20_000  # occupied bins fetched: a few blocks, not 2·10⁵ values


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_quantile_bad_values_in_one_chunk_raise_before_the_spend(bad):
    x = _values()
    x[N - 2] = bad
    accountant = _RecordingAccountant()
    with pytest.raises(ValueError, match="NaN or infinity"):
        stats.quantile(_dask(x, CHUNKINGS[1]), 0.5, bounds=(-5.0, 5.0), accountant=accountant)
    assert [call for call, _ in accountant.calls] == ["check"]


def test_quantile_refusals_before_any_compute(computes):
    x = _dask(_values(), CHUNKINGS[1])
    accountant = _RecordingAccountant()
    with pytest.raises(ValueError, match="public `bounds`"):
        stats.median(x, accountant=accountant)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        stats.median(x[x > 0], bounds=(-5.0, 5.0))
    with pytest.raises(ValueError, match="item-level"):
        stats.median(x, bounds=(-5.0, 5.0), groups=np.arange(N) // 3)
    with pytest.raises(ValueError, match="item-level"):
        stats.median(x, bounds=(-5.0, 5.0), on_invalid="drop")
    with pytest.raises(ValueError, match="2\\*\\*32 bins"):
        stats.median(x, bounds=(-5.0, 5.0), bins=2**40)
    assert computes.computes == 0
    assert all(call == "check" for call, _ in accountant.calls)


def test_rank_error_of_an_infinite_epsilon_is_zero():
    """Regression: ``rank_error`` divided by the missing score multiplier at ε = ∞."""
    result = stats.median(_values(), epsilon=float("inf"), bounds=(-5.0, 5.0), random_state=0, return_error=True)
    assert result.rank_error(0.05) == 0.0


# -- random trees and forests ------------------------------------------------------------


def _tree_data(dtype=np.float64):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.2, 1.2, size=(N, 3)).astype(dtype)  # beyond the bounds: routed as clipped
    labels = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int) + (X[:, 2] > 0.8)
    return X, labels, rng.uniform(0.0, 1.5, size=N)


def _tree_models():
    from dpsk.ensemble import RandomForestClassifier
    from dpsk.tree import DecisionTreeClassifier

    params = dict(bounds=(-1.0, 1.0), classes=[0, 1, 2], epsilon=2.0)
    return [
        lambda: DecisionTreeClassifier(max_depth=3, **params),
        lambda: RandomForestClassifier(n_estimators=5, max_depth=2, **params),
    ]


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=len)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("make", _tree_models(), ids=["tree", "forest"])
def test_random_trees_equal_in_memory(chunks, weighted, make):
    X, labels, w = _tree_data()
    weights = w if weighted else None
    a = make().set_params(random_state=_rng()).fit(X, labels, sample_weight=weights)
    b = make().set_params(random_state=_rng())
    b.fit(_dask(X, chunks), _dask(labels, chunks), sample_weight=_dask(w, chunks) if weighted else None)
    for name in ("class_count_", "bounds_", "max_depth_", "_feature", "_threshold"):
        x, y = getattr(a, name), getattr(b, name)
        assert all(np.array_equal(u, v) for u, v in zip(np.atleast_1d(x), np.atleast_1d(y))), name
    trees_a = getattr(a, "estimators_", [a])
    trees_b = getattr(b, "estimators_", [b])
    for s, t in zip(trees_a, trees_b):
        assert np.array_equal(s.tree_.value, t.tree_.value)
    assert a.privacy_spent_ == b.privacy_spent_
    np.testing.assert_allclose(b.predict_proba(_dask(X, chunks)).compute(), a.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("make", _tree_models(), ids=["tree", "forest"])
def test_random_trees_nan_in_one_chunk_raises_before_the_spend(make):
    X, labels, _ = _tree_data()
    X[N - 4, 1] = np.nan
    accountant = _RecordingAccountant()
    with pytest.raises(ValueError, match="NaN"):
        make().set_params(accountant=accountant).fit(_dask(X, CHUNKINGS[2]), _dask(labels, CHUNKINGS[2]))
    assert [call for call, _ in accountant.calls] == ["check"]


def test_random_trees_refusals_before_any_compute(computes):
    from dpsk.tree import DecisionTreeClassifier

    X, labels, _ = _tree_data()
    Xd, yd = _dask(X, CHUNKINGS[1]), _dask(labels, CHUNKINGS[1])
    with pytest.raises(ValueError, match="public `bounds`"):
        DecisionTreeClassifier(classes=[0, 1, 2]).fit(Xd, yd)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        DecisionTreeClassifier(bounds=(-1, 1), classes=[0, 1, 2]).fit(Xd[Xd[:, 0] > 0], yd)
    assert computes.computes == 0


# -- privacy audit on Dask input ---------------------------------------------------------


def _dask_neighbours(neighbours, n_chunks=7):
    """The audit's neighbouring fit arguments with every array as a Dask array in chunks."""
    out = []
    for arguments in neighbours:
        converted = {}
        for key, value in arguments.items():
            if isinstance(value, np.ndarray) and value.ndim >= 1:
                size = -(-value.shape[0] // n_chunks)
                value = da.from_array(value, chunks=(size,) + value.shape[1:])
            converted[key] = value
        out.append(converted)
    return tuple(out)


def _audit_on_dask(cls, n_samples=None):
    from dpsk.audit import audit_estimator
    from dpsk.utils._testing.registry import FAMILY_AUDITS

    config = FAMILY_AUDITS["MultinomialNB"]
    return audit_estimator(
        cls(**config.params),
        _dask_neighbours(config.neighbours()),
        config.projection,
        n_samples=n_samples or config.n_samples,
        random_state=0,
    )


@pytest.mark.audit
@pytest.mark.extended
@pytest.mark.parametrize("broken", [False, True], ids=["MultinomialNB", "MultinomialNBNoClipping"])
def test_multinomial_nb_privacy_audit_on_dask(broken):
    """The family audit of MultinomialNB (tests/privacy) with the neighbours as Dask arrays in
    7 chunks: the Dask fit passes, and the same fit without the L1 clip fails (per-chunk
    tables of unclipped rows: the audit sees the canary's excess)."""
    from dpsk.utils._testing.family import MultinomialNBNoClipping

    # 2000 runs (the in-memory audit: 6000): a Dask fit costs ~0.1 s; the broken variant
    # spends ε = 5 (a canary 4 beyond data_norm = 1) and is rejected with these runs.
    result = _audit_on_dask(MultinomialNBNoClipping if broken else MultinomialNB, n_samples=2_000)
    assert result.passed != broken, str(result)


def test_labels_derived_from_x_do_not_recompute_its_chunks():
    """map_reduce hands Dask one graph: a chunk of X that y is derived from is made once."""
    made = []

    def make(block_info=None):
        made.append(block_info[None]["chunk-location"])
        return np.random.default_rng(len(made)).uniform(size=(100, 3))

    X = da.map_blocks(make, chunks=((100,) * 6, (3,)), dtype=np.float64, meta=np.empty((0, 0)))
    labels = (X[:, 0] > 0.5).astype(int)
    MultinomialNB(data_norm=3.0, classes=[0, 1], random_state=0).fit(X, labels)
    assert len(made) == 6


def test_a_column_of_parquet_files(tmp_path):
    """Regression: a column projection merges the partitions of small Parquet files, and
    ``to_dask_array(lengths=True)`` of the unoptimised column failed (2 lengths for 3
    partitions)."""
    import pandas as pd

    rng = np.random.default_rng(1)
    parts = [
        pd.DataFrame({"a": rng.uniform(size=500), "b": rng.uniform(size=500), "c": np.ones(500)}) for _ in range(3)
    ]
    for i, part in enumerate(parts):
        part.to_parquet(tmp_path / f"part-{i}.parquet", engine="pyarrow")
    frame = dd.read_parquet(tmp_path)
    values = pd.concat(parts)["a"].to_numpy()
    for function in (stats.mean, stats.median):
        expected = function(values, bounds=(0.0, 1.0), random_state=_rng())
        assert function(frame["a"], bounds=(0.0, 1.0), random_state=_rng()) == expected
