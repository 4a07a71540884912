# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The estimator contract on Dask input: budget first, one spend, errors before any spend."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpsk
from dpsk import stats
from dpsk.accounting import record_releases
from dpsk.cluster import KMeans
from dpsk.decomposition import PCA
from dpsk.exceptions import BudgetExceededError
from dpsk.linear_model import LinearRegression, Ridge, SGDClassifier
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB
from dpsk.preprocessing import MinMaxScaler, StandardScaler
from dpsk.utils.estimator_checks import _leaves, _RecordingAccountant

da = pytest.importorskip("dask.array")

N, D = 400, 3
BOUNDS = (-1.0, 1.0)


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.2, 1.2, size=(N, D))
    y = X.sum(axis=1) + rng.normal(scale=0.1, size=N)
    labels = (X[:, 0] > 0).astype(int)
    return X, y, labels


def _fits():
    """(estimator, its supervised target kind) for every estimator with a Dask fit."""
    return [
        (StandardScaler(bounds=BOUNDS), None),
        (MinMaxScaler(bounds=BOUNDS), None),
        (GaussianNB(bounds=BOUNDS, classes=[0, 1]), "labels"),
        (LinearRegression(bounds_X=BOUNDS, bounds_y=(-3, 3)), "y"),
        (Ridge(bounds_X=BOUNDS, bounds_y=(-3, 3), delta=1e-5), "y"),
        (KMeans(n_clusters=2, bounds=BOUNDS, max_iter=2), None),
        (BernoulliNB(classes=[0, 1]), "labels"),
        (CategoricalNB(classes=[0, 1], n_categories=3), "codes"),
        (PCA(n_components=2, bounds=BOUNDS), None),
    ]


def _fit(estimator, target, X, y, labels, **params):
    targets = {None: None, "y": y, "labels": labels, "codes": labels}
    if target == "codes":  # category codes 0, 1, 2 (NaN stays NaN)
        X = da.floor(da.clip(X + 1.2, 0.0, 2.0)) if hasattr(X, "dask") else np.floor(np.clip(X + 1.2, 0.0, 2.0))
    args = (X,) if target is None else (X, targets[target])
    return estimator.fit(*args, **params)


def _dask(values, chunks=64):
    values = np.asarray(values)
    return da.from_array(values, chunks=(chunks,) + values.shape[1:])


IDS = [type(est).__name__ for est, _ in _fits()]


@pytest.mark.parametrize("estimator, target", _fits(), ids=IDS)
def test_one_spend_and_the_declared_releases(estimator, target, computes):
    """Recording harness: one check and one record, and the noise draws are exactly the
    declared cost; the whole fit runs one Dask computation."""
    X, y, labels = _data()
    accountant = _RecordingAccountant()
    estimator.set_params(accountant=accountant, random_state=0)
    with record_releases() as drawn:
        _fit(estimator, target, _dask(X), _dask(y), _dask(labels))
    assert [call for call, _ in accountant.calls] == ["check", "record"]
    assert accountant.calls[1][1] == estimator.privacy_spent_
    assert _leaves(drawn) == _leaves([estimator.privacy_spent_])
    # one pass (k-means: the seeding passes, the Lloyd steps, and one keying the int seed)
    passes = 1 if not isinstance(estimator, KMeans) else 1 + estimator._n_seeding_passes() + estimator.max_iter
    assert computes.computes == passes


@pytest.mark.parametrize("estimator, target", _fits(), ids=IDS)
def test_over_budget_computes_nothing(estimator, target, computes):
    X, y, labels = _data()
    accountant = _RecordingAccountant(refuse=True)
    estimator.set_params(accountant=accountant)
    with pytest.raises(BudgetExceededError):
        _fit(estimator, target, _dask(X), _dask(y), _dask(labels))
    assert computes.computes == 0
    assert [call for call, _ in accountant.calls] == ["check"]


def test_stats_over_budget_computes_nothing_and_one_spend(computes):
    X, _, _ = _data()
    with pytest.raises(BudgetExceededError):
        stats.mean(_dask(X), bounds=BOUNDS, axis=0, accountant=_RecordingAccountant(refuse=True))
    assert computes.computes == 0
    accountant = _RecordingAccountant()
    result = stats.var(_dask(X), bounds=BOUNDS, axis=0, accountant=accountant, return_error=True)
    assert [call for call, _ in accountant.calls] == ["check", "record"]
    assert accountant.calls[1][1] == result.privacy_spent
    assert computes.computes == 1


@pytest.mark.parametrize(
    "estimator, target",
    [
        (StandardScaler(), None),
        (MinMaxScaler(), None),
        (PCA(), None),
        (GaussianNB(bounds=BOUNDS), "labels"),
        (GaussianNB(classes=[0, 1]), "labels"),
        (CategoricalNB(classes=[0, 1]), "codes"),
        (LinearRegression(bounds_y=(-3, 3)), "y"),
        (LinearRegression(bounds_X=BOUNDS), "y"),
    ],
    ids=[
        "scaler",
        "minmax",
        "pca",
        "nb-classes",
        "nb-bounds",
        "categorical-n_categories",
        "lr-bounds_X",
        "lr-bounds_y",
    ],
)
def test_missing_public_bounds_raise_before_any_compute(estimator, target, computes):
    """Never a data-derived bound computed on the cluster (silently or with a warning)."""
    X, y, labels = _data()
    accountant = _RecordingAccountant()
    estimator.set_params(accountant=accountant)
    with pytest.raises(ValueError, match="public"):
        _fit(estimator, target, _dask(X), _dask(y), _dask(labels))
    assert computes.computes == 0
    assert [call for call, _ in accountant.calls] == ["check"]
    with pytest.raises(ValueError, match="public `bounds`"):
        stats.mean(_dask(X), axis=0)


@pytest.mark.parametrize("estimator, target", _fits(), ids=IDS)
def test_nan_in_one_chunk_raises_before_the_spend(estimator, target):
    X, y, labels = _data()
    X[N - 3, 1] = np.nan  # in the last chunk only
    accountant = _RecordingAccountant()
    estimator.set_params(accountant=accountant)
    with pytest.raises(ValueError, match="NaN|infinity|finite"):
        _fit(estimator, target, _dask(X), _dask(y), _dask(labels))
    assert [call for call, _ in accountant.calls] == ["check"]


def test_bad_shapes_raise_before_any_compute(computes):
    X, y, _ = _data()
    est = LinearRegression(bounds_X=BOUNDS, bounds_y=(-3, 3))
    with pytest.raises(ValueError, match="rows"):
        est.fit(_dask(X), _dask(y[:-1]))
    with pytest.raises(ValueError, match="rows"):
        est.fit(_dask(X), _dask(y), sample_weight=np.ones(N - 1))
    with pytest.raises(ValueError, match="groups"):
        est.fit(_dask(X), _dask(y), groups=np.zeros(N - 1))
    unknown = _dask(X)[_dask(X)[:, 0] > 0]  # unknown chunk sizes
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        StandardScaler(bounds=BOUNDS).fit(unknown)
    assert computes.computes == 0
    fitted = StandardScaler(bounds=BOUNDS, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        fitted.transform(_dask(X[:, :2]))


def test_estimators_without_a_dask_fit_refuse_clearly(computes):
    X, _, labels = _data()
    accountant = _RecordingAccountant()
    with pytest.raises(TypeError, match=r"X.compute\(\)"):
        SGDClassifier(classes=[0, 1], accountant=accountant).fit(_dask(X), _dask(labels))
    assert computes.computes == 0
    assert [call for call, _ in accountant.calls] == ["check"]


def test_lazy_naive_bayes_prediction():
    X, _, labels = _data()
    model = GaussianNB(bounds=BOUNDS, classes=[0, 1], random_state=0).fit(X, labels)
    for method in ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        out = getattr(model, method)(_dask(X))
        assert isinstance(out, da.Array), method
        np.testing.assert_allclose(out.compute(), getattr(model, method)(X), rtol=1e-12, err_msg=method)


def test_importing_dpsk_does_not_import_dask():
    code = (
        "import sys, dpsk, dpsk.dask, dpsk.stats, dpsk.preprocessing, dpsk.linear_model, dpsk.naive_bayes\n"
        "import numpy as np\n"
        "dpsk.preprocessing.StandardScaler(bounds=(0, 1), random_state=0).fit(np.ones((5, 2)))\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]\n"
        "assert not loaded, loaded\n"
    )
    root = Path(dpsk.__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


@pytest.mark.slow
def test_local_cluster_of_threads_gives_the_same_fit():
    """The distributed scheduler (a LocalCluster started here, threads only): same fit."""
    distributed = pytest.importorskip("distributed")
    X, y, _ = _data()
    params = dict(bounds_X=BOUNDS, bounds_y=(-3, 3))
    expected = LinearRegression(**params, random_state=np.random.PCG64(1)).fit(X, y)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster):
            got = LinearRegression(**params, random_state=np.random.PCG64(1)).fit(_dask(X, 50), _dask(y, 50))
            mean = stats.mean(_dask(X, 50), bounds=BOUNDS, axis=0, random_state=np.random.PCG64(2))
    assert np.array_equal(expected.coef_, got.coef_) and expected.intercept_ == got.intercept_
    assert np.array_equal(mean, stats.mean(X, bounds=BOUNDS, axis=0, random_state=np.random.PCG64(2)))


def test_histogram_needs_a_public_range_and_spends_once(computes):
    X, _, _ = _data()
    with pytest.raises(ValueError, match="public `range`"):
        stats.histogram(_dask(X[:, 0]), bins=5)
    assert computes.computes == 0
    accountant = _RecordingAccountant()
    with record_releases() as drawn:
        result, _ = stats.histogram(_dask(X[:, 0]), bins=5, range=BOUNDS, accountant=accountant, return_error=True)
    assert [call for call, _ in accountant.calls] == ["check", "record"]
    assert _leaves(drawn) == _leaves([result.privacy_spent])
    assert computes.computes == 1
