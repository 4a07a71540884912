# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""User-level ``groups=`` on Dask: the in-memory user-level release, bitwise.

The users' row counts come from a distributed group-by (``dpsk.dask._groups``); the
client receives only their histogram, chooses h from it with the same Generator as in
memory, and every chunk weights its rows by its users' counts. Users straddle chunks
here (ids are drawn independently of the row order), so per-chunk counts must be
merged before any weight is right.
"""

import numpy as np
import pytest

from dpsk.accounting import record_releases
from dpsk.dask._groups import _chunk_counts, _merge_counts, user_weights
from dpsk.dask._testing import CHUNKINGS, N, _dask, _rng
from dpsk.linear_model import LinearRegression, Ridge
from dpsk.utils.estimator_checks import _leaves, _RecordingAccountant

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

PARAMS = dict(bounds_X=(-1.0, 1.0), bounds_y=(-4.0, 4.0))


def _data():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.2, 1.2, size=(N, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=N)
    users = rng.zipf(1.6, size=N) % 113  # heavy users (hundreds of rows) and many light ones
    return X, y, users, rng.uniform(0.0, 1.5, size=N)


def _models():
    return [lambda: LinearRegression(**PARAMS), lambda: Ridge(**PARAMS, delta=1e-5)]


def _assert_same(a, b):
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    assert a.threshold_ == b.threshold_
    assert a.privacy_spent_ == b.privacy_spent_


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=len)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("make", _models(), ids=["LinearRegression", "Ridge"])
def test_user_level_least_squares_equal_in_memory(chunks, weighted, make):
    X, y, users, w = _data()
    weights = w if weighted else None
    a = make().set_params(random_state=_rng()).fit(X, y, groups=users, sample_weight=weights)
    b = make().set_params(random_state=_rng())
    b.fit(
        _dask(X, chunks),
        _dask(y, chunks),
        groups=_dask(users, CHUNKINGS[1]),  # chunked unlike X: aligned by position
        sample_weight=_dask(w, chunks) if weighted else None,
    )
    _assert_same(a, b)
    assert a.threshold_ > 1.0  # heavy users are capped: the weights matter


def test_string_ids_and_a_data_frame():
    X, y, users, _ = _data()
    names = np.array([f"user-{u}" for u in users], dtype=object)
    a = LinearRegression(**PARAMS, random_state=_rng()).fit(X, y, groups=names)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y, "user": names})
    ddf = dd.from_pandas(frame, npartitions=6)
    b = LinearRegression(**PARAMS, random_state=_rng()).fit(ddf[["a", "b", "c"]], ddf["y"], groups=ddf["user"])
    _assert_same(a, b)


def test_two_passes_one_spend_and_the_declared_releases(computes):
    X, y, users, _ = _data()
    accountant = _RecordingAccountant()
    est = LinearRegression(**PARAMS, accountant=accountant, random_state=0)
    with record_releases() as drawn:
        est.fit(_dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1]), groups=_dask(users, CHUNKINGS[1]))
    assert [call for call, _ in accountant.calls] == ["check", "record"]
    assert _leaves(drawn) == _leaves([est.privacy_spent_])  # the threshold's selection among them
    assert computes.computes == 2  # validate + count the users, then the weighted sums


@pytest.mark.parametrize("bad", [np.nan, None])
def test_a_missing_id_in_one_chunk_raises_before_the_spend(bad):
    X, y, users, _ = _data()
    ids = users.astype(object if bad is None else np.float64)
    ids[N - 3] = bad
    accountant = _RecordingAccountant()
    with pytest.raises(ValueError, match="user id"):
        LinearRegression(**PARAMS, accountant=accountant).fit(
            _dask(X, CHUNKINGS[2]), _dask(y, CHUNKINGS[2]), groups=_dask(ids, CHUNKINGS[2])
        )
    assert [call for call, _ in accountant.calls] == ["check"]


def test_nan_in_x_raises_before_the_spend():
    X, y, users, _ = _data()
    X[N - 5, 2] = np.nan
    accountant = _RecordingAccountant()
    with pytest.raises(ValueError, match="NaN|infinity|finite"):
        LinearRegression(**PARAMS, accountant=accountant).fit(
            _dask(X, CHUNKINGS[2]), _dask(y, CHUNKINGS[2]), groups=_dask(users, CHUNKINGS[2])
        )
    assert [call for call, _ in accountant.calls] == ["check"]


def test_groups_not_aligned_with_x_are_refused_before_any_compute(computes):
    X, y, users, _ = _data()
    Xd, yd = _dask(X, CHUNKINGS[1]), _dask(y, CHUNKINGS[1])
    unknown = _dask(users, CHUNKINGS[1])[_dask(users, CHUNKINGS[1]) >= 0]  # unknown partition sizes
    cases = [
        (_dask(users[:-1], (N - 1,)), "groups has"),
        (users[:-7], "groups has"),
        (unknown, "groups has"),
        (_dask(np.stack([users, users], axis=1), CHUNKINGS[1]), "1-dimensional"),
    ]
    for groups, message in cases:
        accountant = _RecordingAccountant()
        with pytest.raises(ValueError, match=message):
            LinearRegression(**PARAMS, accountant=accountant).fit(Xd, yd, groups=groups)
        assert [call for call, _ in accountant.calls] == ["check"]
    assert computes.computes == 0


def test_one_user_changes_one_count_and_only_its_own_weights():
    """What one user can change: removing all its rows (spread over chunks) removes one
    entry of the merged count table, leaves every other row's weight unchanged, and its
    own rows weigh at most h in total."""
    _, _, users, _ = _data()
    chunks = np.split(users, np.cumsum(CHUNKINGS[1])[:-1])
    victim = np.bincount(users).argmax()  # the heaviest user: in every chunk
    assert all(victim in c for c in chunks)
    table = _merge_counts(*[_chunk_counts(c) for c in chunks])
    without = _merge_counts(*[_chunk_counts(c[c != victim]) for c in chunks])
    assert set(table.index) - set(without.index) == {victim}
    assert (table.drop(victim).sort_index() == without.sort_index()).all()
    h = 5.0
    weights = user_weights(table, h, users)
    others = users != victim
    np.testing.assert_array_equal(user_weights(without, h, users[others]), weights[others])
    assert weights[~others].sum() <= h


# -- dpsk.stats with groups ----------------------------------------------------------------


def _stat_cases():
    from dpsk import stats

    bounds = dict(bounds=(-3.0, 3.0))
    return [
        (stats.count, {}),
        (stats.sum, bounds),
        (stats.mean, bounds),
        (stats.mean, dict(bounds, public_user_counts=True)),
        (stats.var, bounds),
        (stats.std, dict(bounds, threshold=3.0)),
    ]


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=len)
@pytest.mark.parametrize("function, params", _stat_cases(), ids=lambda v: getattr(v, "__name__", ""))
def test_user_level_statistics_equal_in_memory(chunks, function, params):
    X, y, users, _ = _data()
    a = function(y, groups=users, random_state=_rng(), return_error=True, **params)
    b = function(_dask(y, chunks), groups=_dask(users, chunks), random_state=_rng(), return_error=True, **params)
    assert np.array_equal(a.value, b.value) and a.noise_std == b.noise_std
    assert a.threshold == b.threshold and a.privacy_spent == b.privacy_spent


def test_user_level_column_means_of_a_frame():
    from dpsk import stats

    X, _, users, _ = _data()
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "user": users})
    ddf = dd.from_pandas(frame, npartitions=5)
    a = stats.mean(frame[["a", "b"]], bounds=(-1.0, 1.0), axis=0, groups=users, random_state=_rng())
    b = stats.mean(ddf[["a", "b"]], bounds=(-1.0, 1.0), axis=0, groups=ddf["user"], random_state=_rng())
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_user_level_statistics_refusals_before_any_compute(computes):
    from dpsk import stats

    _, y, users, _ = _data()
    yd = _dask(y, CHUNKINGS[1])
    with pytest.raises(ValueError, match="contribution_bound='smooth'"):
        stats.mean(yd, bounds=(-3.0, 3.0), groups=_dask(users, CHUNKINGS[1]), contribution_bound="limit")
    with pytest.raises(ValueError, match="groups has"):
        stats.mean(yd, bounds=(-3.0, 3.0), groups=_dask(users[1:], (N - 1,)))
    assert computes.computes == 0
    bad = users.astype(np.float64)
    bad[7] = np.nan
    accountant = _RecordingAccountant()
    with pytest.raises(ValueError, match="user id"):
        stats.sum(yd, bounds=(-3.0, 3.0), groups=_dask(bad, CHUNKINGS[1]), accountant=accountant)
    assert [call for call, _ in accountant.calls] == ["check"]


@pytest.mark.slow
def test_a_local_cluster_of_processes_gives_the_same_releases():
    """Two worker processes (a LocalCluster started here): the count table travels between
    them (it is shared by every chunk's task), the tree regressors' partial sums too; the
    releases are the in-memory ones."""
    from dpsk import stats
    from dpsk.ensemble import RandomForestRegressor

    distributed = pytest.importorskip("distributed")
    X, y, users, w = _data()
    chunks = CHUNKINGS[1]
    forest = dict(n_estimators=4, bounds=(-1.0, 1.0), bounds_y=(-4.0, 4.0))
    expected = (
        LinearRegression(**PARAMS, random_state=_rng()).fit(X, y, groups=users, sample_weight=w),
        stats.mean(y, bounds=(-4.0, 4.0), groups=users, random_state=_rng()),
        RandomForestRegressor(**forest, random_state=_rng()).fit(X, y, sample_weight=w),
    )
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        Xd, yd, ids, wd = (_dask(a, chunks) for a in (X, y, users, w))
        got = (
            LinearRegression(**PARAMS, random_state=_rng()).fit(Xd, yd, groups=ids, sample_weight=wd),
            stats.mean(yd, bounds=(-4.0, 4.0), groups=ids, random_state=_rng()),
            RandomForestRegressor(**forest, random_state=_rng()).fit(Xd, yd, sample_weight=wd),
        )
    _assert_same(expected[0], got[0])
    assert expected[1] == got[1]
    assert np.array_equal(expected[2]._leaf_values, got[2]._leaf_values)
    assert np.array_equal(expected[2].totals_, got[2].totals_)
