# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""LogisticRegression and LinearSVC on Dask input: the in-memory release by a distributed Newton.

Both fits draw their noise from fresh copies of the same bit generator, so the released
coefficients differ only by where the solver stopped: both solutions are certified within
``tol`` of the gradient's zero, hence within 2·tol/μ of each other in the solver's
coordinates (μ >= Λ = 1/(C S²)), which is what the equality tests allow.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from dpsk.accounting import record_releases
from dpsk.dask._newton import DaskObjective, exact_ints, rounded
from dpsk.dask._reduce import merge
from dpsk.exceptions import BudgetExceededError
from dpsk.linear_model import LogisticRegression
from dpsk.svm import LinearSVC
from dpsk.utils.estimator_checks import _leaves, _RecordingAccountant

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

N, D = 1200, 3
NORM = 2.0
#: 1 chunk, 7 chunks, 64 chunks (ragged: a one-row and an empty chunk among them).
CHUNKINGS = {1: (N,), 7: (200,) * 5 + (150, 50), 64: (1, 0) + (19,) * 61 + (N - 1 - 61 * 19,)}


def _data(n_classes=2, n=N):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, D))
    X[::53] *= 10.0  # rows outside data_norm: clipped
    scores = X @ np.array([1.5, -1.0, 0.5]) + rng.logistic(size=n)
    if n_classes == 2:
        y = (scores > 0).astype(int)
    else:
        y = np.digitize(scores, np.quantile(scores, np.linspace(0, 1, n_classes + 1)[1:-1]))
    weights = rng.uniform(0.0, 1.4, size=n)
    return X, y, weights


def _dask(values, chunks):
    values = np.asarray(values)
    return da.from_array(values, chunks=(chunks,) + tuple((s,) for s in values.shape[1:]))


def _rng():
    return np.random.Generator(np.random.PCG64(99))


def _assert_same_solution(dask_fit, memory_fit):
    """Released coefficients within 2·tol/Λ of each other (the certificate's radius), the
    same cost, and noise that is not negligible (so equality is not trivially met)."""
    assert dask_fit.privacy_spent_ == memory_fit.privacy_spent_
    scale = math.hypot(memory_fit.data_norm_, memory_fit.intercept_scaling)
    radius = 2.0 * memory_fit.tol * memory_fit.C_ * scale  # in original units: 2·tol/(Λ S)
    for a, b in ((dask_fit.coef_, memory_fit.coef_), (dask_fit.intercept_, memory_fit.intercept_)):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=0, atol=radius)
    np.testing.assert_array_equal(dask_fit.classes_, memory_fit.classes_)
    assert dask_fit.C_ == memory_fit.C_ and dask_fit.data_norm_ == memory_fit.data_norm_


@pytest.mark.parametrize("n_chunks", sorted(CHUNKINGS))
@pytest.mark.parametrize("Estimator", [LogisticRegression, LinearSVC])
def test_same_model_as_in_memory(Estimator, n_chunks):
    X, y, _ = _data()
    chunks = CHUNKINGS[n_chunks]
    assert sum(chunks) == N and len(chunks) == n_chunks
    params = dict(epsilon=2.0, data_norm=NORM, classes=[0, 1])
    memory = Estimator(**params, random_state=_rng()).fit(X, y)
    on_dask = Estimator(**params, random_state=_rng()).fit(_dask(X, chunks), _dask(y, chunks))
    _assert_same_solution(on_dask, memory)
    # the tolerance is far below the noise: the equality above is not met by any private fit
    other_noise = Estimator(**params, random_state=np.random.PCG64(100)).fit(X, y)
    radius = 2.0 * memory.tol * memory.C_ * math.hypot(NORM, 1.0)
    assert np.max(np.abs(other_noise.coef_ - memory.coef_)) > 1000 * radius


@pytest.mark.parametrize("n_chunks", [1, 7])
def test_same_model_multiclass_weighted_bounds_float32(n_chunks):
    """Three classes (one-vs-rest), sample and class weights, public bounds (box noise), float32."""
    X, y, w = _data(n_classes=3)
    X = X.astype(np.float32)
    chunks = CHUNKINGS[n_chunks]
    params = dict(epsilon=3.0, bounds=(-2.0, 2.0), classes=[0, 1, 2], class_weight={0: 0.5, 2: 2.0})
    memory = LogisticRegression(**params, random_state=_rng()).fit(X, y, sample_weight=w)
    frame = dd.from_dask_array(_dask(X, chunks), columns=["a", "b", "c"])
    on_dask = LogisticRegression(**params, random_state=_rng()).fit(
        frame, _dask(y, 300), sample_weight=_dask(w, chunks)
    )
    assert list(on_dask.feature_names_in_) == ["a", "b", "c"]
    memory_named = LogisticRegression(**params, random_state=_rng()).fit(
        __import__("pandas").DataFrame(X, columns=["a", "b", "c"]), y, sample_weight=w
    )
    _assert_same_solution(on_dask, memory)
    _assert_same_solution(on_dask, memory_named)
    np.testing.assert_array_equal(on_dask.class_weight_, memory.class_weight_)


def test_integer_seed_is_chunking_invariant_and_keyed_by_the_data():
    """An int seed keys the noise by exact, chunking-free statistics: the same fit for any
    chunking, and neighbouring datasets (one row removed) get independent noise."""
    X, y, _ = _data()
    params = dict(epsilon=0.1, data_norm=NORM, classes=[0, 1], random_state=5)
    fits = [LogisticRegression(**params).fit(_dask(X, c), _dask(y, c)) for c in CHUNKINGS.values()]
    for other in fits[1:]:
        _assert_same_solution(other, fits[0])
    neighbour = LogisticRegression(**params).fit(_dask(X[1:], 200), _dask(y[1:], 200))
    exact = LogisticRegression(**{**params, "epsilon": np.inf}).fit(X, y)
    exact_neighbour = LogisticRegression(**{**params, "epsilon": np.inf}).fit(X[1:], y[1:])
    # shared noise would leave only the noise-free change (tiny); independent noise moves far more
    noise_free = np.abs(exact.coef_ - exact_neighbour.coef_).max()
    assert np.abs(fits[0].coef_ - neighbour.coef_).max() > 100 * noise_free


def test_one_spend_and_the_declared_releases(computes):
    X, y, _ = _data(n_classes=3)
    accountant = _RecordingAccountant()
    est = LogisticRegression(epsilon=1.0, data_norm=NORM, classes=[0, 1, 2], accountant=accountant, random_state=0)
    with record_releases() as drawn:
        est.fit(_dask(X, 100), _dask(y, 100))
    assert [call for call, _ in accountant.calls] == ["check", "record"]
    assert accountant.calls[1][1] == est.privacy_spent_
    assert _leaves(drawn) == _leaves([est.privacy_spent_])
    # the validating pass, then per problem: the start and one pass per Newton iterate (full
    # steps here: no backtracking), each also giving the certificate's sums at its point
    assert computes.computes == 1 + sum(n_iter + 1 for n_iter in est.n_iter_)


def test_over_budget_computes_nothing(computes):
    X, y, _ = _data()
    accountant = _RecordingAccountant(refuse=True)
    with pytest.raises(BudgetExceededError):
        LogisticRegression(data_norm=NORM, classes=[0, 1], accountant=accountant).fit(_dask(X, 100), _dask(y, 100))
    assert computes.computes == 0
    assert [call for call, _ in accountant.calls] == ["check"]


@pytest.mark.parametrize("where", ["X", "label", "weight"])
def test_bad_values_in_one_chunk_raise_before_the_spend(where, computes):
    X, y, w = _data()
    if where == "X":
        X[N - 3, 1] = np.nan  # in the last chunk only
    elif where == "label":
        y = y.astype(float)
        y[N - 3] = 5.0
    else:
        w[N - 3] = -1.0
    accountant = _RecordingAccountant()
    est = LinearSVC(data_norm=NORM, classes=[0, 1], accountant=accountant)
    with pytest.raises(ValueError, match="NaN|infinity|classes|label|negative|weight"):
        est.fit(_dask(X, 100), _dask(y, 100), sample_weight=_dask(w, 100))
    assert [call for call, _ in accountant.calls] == ["check"]
    assert computes.computes == 1  # the validating pass only


def test_bad_shapes_and_parameters_raise_before_any_compute(computes):
    X, y, w = _data()
    accountant = _RecordingAccountant()
    est = LogisticRegression(data_norm=NORM, classes=[0, 1], accountant=accountant)
    with pytest.raises(ValueError, match="rows"):
        est.fit(_dask(X, 100), _dask(y[:-1], 100))
    with pytest.raises(ValueError, match="rows"):
        est.fit(_dask(X, 100), _dask(y, 100), sample_weight=np.ones(N - 1))
    unknown = _dask(X, 100)[_dask(X, 100)[:, 0] > 0]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        est.fit(unknown, _dask(y, 100)[_dask(X, 100)[:, 0] > 0])
    with pytest.raises(ValueError, match="groups"):
        est.fit(_dask(X, 100), _dask(y, 100), groups=np.zeros(N))
    with pytest.raises(ValueError, match="balanced"):
        est.set_params(class_weight="balanced").fit(_dask(X, 100), _dask(y, 100))
    est.set_params(class_weight=None)
    with pytest.raises(ValueError, match="public `classes`"):
        est.set_params(classes=None).fit(_dask(X, 100), _dask(y, 100))
    with pytest.raises(ValueError, match="public `data_norm` or `bounds`"):
        est.set_params(classes=[0, 1], data_norm="private").fit(_dask(X, 100), _dask(y, 100))
    with pytest.raises(ValueError, match="public `data_norm` or `bounds`"):
        est.set_params(data_norm=None).fit(_dask(X, 100), _dask(y, 100))
    assert computes.computes == 0
    assert {call for call, _ in accountant.calls} == {"check"}


def test_y_chunked_unlike_X_gives_the_same_fit():
    """Mismatched partitions of X and y are aligned on X's chunks (lengths must match)."""
    X, y, _ = _data()
    params = dict(data_norm=NORM, classes=[0, 1])
    a = LogisticRegression(**params, random_state=_rng()).fit(_dask(X, 100), _dask(y, 100))
    b = LogisticRegression(**params, random_state=_rng()).fit(_dask(X, 100), _dask(y, 333))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    pd = pytest.importorskip("pandas")
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=12)
    series = dd.from_pandas(pd.Series(y), npartitions=5)
    c = LogisticRegression(**params, random_state=_rng()).fit(frame, series)
    np.testing.assert_array_equal(a.coef_, c.coef_)


def test_lazy_prediction_and_score():
    X, y, w = _data(n_classes=3)
    model = LogisticRegression(data_norm=NORM, classes=[0, 1, 2], random_state=0).fit(X, y)
    binary = LinearSVC(data_norm=NORM, classes=[0, 1], random_state=0).fit(X, y > 0)
    for est, methods in (
        (model, ("predict", "decision_function", "predict_proba", "predict_log_proba")),
        (binary, ("predict", "decision_function")),
    ):
        for method in methods:
            out = getattr(est, method)(_dask(X, 100))
            assert isinstance(out, da.Array), method
            expected = getattr(est, method)(X)
            got = out.compute()
            assert got.shape == expected.shape and got.dtype == expected.dtype, method
            if got.dtype.kind == "f":
                np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=method)
            else:
                np.testing.assert_array_equal(got, expected, err_msg=method)
    assert model.score(_dask(X, 100), _dask(y, 100), sample_weight=_dask(w, 100)) == pytest.approx(
        model.score(X, y, sample_weight=w), abs=1e-12
    )


def test_exact_ints_merge_exactly():
    """Per-chunk exact sums merged in any grouping equal the exact sum of all values."""
    rng = np.random.default_rng(1)
    values = rng.normal(size=(500, 2)) * np.exp2(rng.integers(-60, 60, size=(500, 2)))
    values[7, 0] = 5e-324  # a subnormal
    values[8, 1] = -0.0
    parts = [exact_ints(values[i : i + 37]) for i in range(0, 500, 37)]
    merged = merge(*parts)
    for j in range(2):
        exact = sum(Fraction(float(v)) for v in values[:, j])
        assert Fraction(merged[j], 1 << 1074) == exact
        assert rounded(merged)[j] == math.fsum(values[:, j])


@pytest.mark.parametrize("kappa", [None, 1.0])
def test_certificate_bounds_the_exact_gradient(kappa):
    """The Dask certificate is an upper bound on the exact gradient norm (rational
    arithmetic) and close to the in-memory one."""
    from dpsk.dask._data import worker_view
    from dpsk.dask._newton import _ChunkProblem
    from dpsk.linear_model._erm import clip_rows
    from dpsk.linear_model._solver import LogisticLoss, _Objective

    X, y, w = _data(n=300)
    est = LogisticRegression(data_norm=NORM)
    scale = math.hypot(NORM, kappa) if kappa else NORM
    problem = _ChunkProblem(worker_view(est), LogisticLoss(), np.array([0, 1]), None, NORM, None, None, scale, kappa)
    n_params = D + (kappa is not None)
    linear, v = np.full(n_params, 0.3), np.linspace(-1.0, 1.0, n_params)
    dask_objective = DaskObjective(
        (problem, _dask(y, 70), _dask(w, 70)),
        _dask(X, 70),
        1,
        LogisticLoss(),
        norm_bound=NORM,
        scale=scale,
        kappa=kappa,
        mu=0.7,
        linear=linear,
    )
    rows, labels, weights = clip_rows(X, NORM), np.where(y == 1, 1.0, -1.0), np.minimum(w, 1.0)
    memory = _Objective(
        rows, labels, LogisticLoss(), norm_bound=NORM, scale=scale, kappa=kappa, mu=0.7, linear=linear, weights=weights
    )
    # the exact gradient in rationals (ℓ′ evaluated in float64 as both fits do: its rounding is in the bound)
    first = memory.signed_first(v)
    Z = np.column_stack([rows, np.full(len(rows), kappa)]) if kappa else rows
    exact = [
        sum(Fraction(float(s)) * Fraction(float(z)) for s, z in zip(first, Z[:, j])) / Fraction(scale)
        + Fraction(0.7) * Fraction(float(v[j]))
        + Fraction(float(linear[j]))
        for j in range(n_params)
    ]
    exact_norm = math.sqrt(float(sum(g * g for g in exact)))
    certified = dask_objective.certified_gradient_norm(v)
    assert exact_norm <= certified <= exact_norm * (1 + 1e-9) + 1e-9
    assert certified == pytest.approx(memory.certified_gradient_norm(v), rel=1e-12, abs=1e-12)
    # the data part evaluated on Dask is the in-memory one
    f, g, h = dask_objective.evaluate(v, dask_objective.margins(v))
    f_mem, first_mem, second_mem = memory.evaluate(v, memory.margins(v))
    assert f == pytest.approx(f_mem, rel=1e-13)
    np.testing.assert_allclose(dask_objective.gradient(v, g), memory.gradient(v, first_mem), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dask_objective.hessian(h), memory.hessian(second_mem), rtol=1e-12, atol=1e-12)
    # the certificate's sums computed in the same pass as the evaluation are the same
    assert dask_objective.certified_gradient_norm(v) == certified


# -- searches on a Dask cluster ------------------------------------------------------------


@pytest.mark.slow
def test_searches_under_the_dask_joblib_backend_charge_every_fit_on_the_client():
    """GridSearchCV and cross_val_score with n_jobs under joblib's Dask backend (a
    LocalCluster of 2 worker processes started here): the fits run on the workers, the
    accountant stays on the client and records each search once, with every fit in it;
    the results are those of the serial search."""
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_backend

    from dpsk.accounting import BudgetAccountant
    from dpsk.model_selection import GridSearchCV, cross_val_score

    X, y, _ = _data(n=600)
    est = LogisticRegression(data_norm=NORM, classes=[0, 1])
    grid = {"C": [0.1, 1.0, 10.0]}
    accountant = BudgetAccountant(epsilon=100.0)

    def searches(n_jobs):
        search = GridSearchCV(est, grid, cv=3, n_jobs=n_jobs, accountant=accountant, random_state=3).fit(X, y)
        scores, spent = cross_val_score(
            est, X, y, cv=3, n_jobs=n_jobs, accountant=accountant, random_state=4, return_privacy_spent=True
        )
        return search, scores, spent

    serial = searches(None)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        with parallel_backend("dask"):
            on_cluster = searches(2)
            assert len(cluster.scheduler.task_groups) > 0  # the fits did run on the cluster
    assert accountant.spent_budget == [serial[0].privacy_spent_, serial[2]] * 2
    # every candidate fit is in the search's cost: 3 candidates, one fit each on its part, and the refit
    assert on_cluster[0].privacy_spent_ == serial[0].privacy_spent_
    assert on_cluster[0].best_index_ == serial[0].best_index_
    np.testing.assert_array_equal(on_cluster[0].best_estimator_.coef_, serial[0].best_estimator_.coef_)
    np.testing.assert_array_equal(on_cluster[1], serial[1])
    assert on_cluster[2] == serial[2]


# -- privacy audit -------------------------------------------------------------------------


def _dask_neighbours(case, n_chunks=3):
    """The registry's neighbours of LogisticRegression as Dask arrays in a few chunks."""
    out = []
    for arguments in case.neighbours(case.estimator):
        converted = {}
        for key, value in arguments.items():
            if isinstance(value, np.ndarray) and value.ndim >= 1:
                value = _dask(value, -(-value.shape[0] // n_chunks))
            converted[key] = value
        out.append(converted)
    return tuple(out)


@pytest.mark.audit
@pytest.mark.extended
@pytest.mark.parametrize("broken", [False, True], ids=["dask", "broken-no-clipping"])
def test_privacy_audit_on_dask(broken, monkeypatch):
    """The registry's audit of LogisticRegression (objective perturbation, a canary beyond
    ``data_norm`` with the largest gradient), with the fits on Dask input. Validity: a
    variant whose chunks do not clip the rows is rejected by the same audit."""
    from dpsk.audit import audit_estimator
    from dpsk.linear_model._classifier import BasePrivateLinearClassifier
    from dpsk.utils._testing.registry import ESTIMATOR_AUDITS

    if broken:
        monkeypatch.setattr(
            BasePrivateLinearClassifier, "_clip_rows", lambda self, X, norm, lower, upper: np.asarray(X, float)
        )
    case = ESTIMATOR_AUDITS["LogisticRegression"]
    result = audit_estimator(
        case.estimator, _dask_neighbours(case), case.projection, n_samples=500, random_state=0, **case.audit_params
    )
    assert result.passed is not broken, str(result)
