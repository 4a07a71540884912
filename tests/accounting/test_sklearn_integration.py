# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""One accountant through scikit-learn's pipelines, clones, model selection and processes."""

import threading
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import BaggingClassifier
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpsk.accounting import BudgetAccountant, ComposedEvent, LaplaceEvent, SelfComposedEvent, record_releases
from dpsk.accounting._context import BOUND_ATTRIBUTE
from dpsk.exceptions import BudgetExceededError, DetachedAccountantError, PrivacyLeakWarning
from dpsk.linear_model import LogisticRegression
from dpsk.utils._testing import ToyDPMeanClassifier
from dpsk.utils._testing.accounting import ToyDPCenterer

GRID = {"epsilon": [0.5, 1.0, 2.0, 4.0]}


@pytest.fixture
def data(toy_data):
    return toy_data


def _classifier(**params):
    return ToyDPMeanClassifier(bounds=(-1.0, 1.0), classes=[0, 1], random_state=0, **params)


def _cost(epsilon):
    half = LaplaceEvent(2.0 / epsilon)
    return ComposedEvent((half, half))


def _pipeline(accountant=None):
    """Two DP steps: ε = 1 (centering) then ε = 2 (classifier)."""
    return make_pipeline(
        ToyDPCenterer(epsilon=1.0, bounds=(-1.0, 1.0), accountant=accountant, random_state=0),
        _classifier(epsilon=2.0, accountant=accountant),
    )


def test_pipeline_records_every_dp_step(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    _pipeline(acc).fit(X, y)
    assert acc.spent_budget == [_cost(1.0), _cost(2.0)]
    assert acc.total() == (3.0, 0.0)


def test_pipeline_inside_a_with_block_records_every_dp_step(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    with acc:
        _pipeline().fit(X, y)
    assert acc.spent_budget == [_cost(1.0), _cost(2.0)]


def test_pipeline_stops_before_the_step_that_does_not_fit(data):
    X, y = data
    acc = BudgetAccountant(epsilon=2.0)
    with pytest.raises(BudgetExceededError):
        _pipeline(acc).fit(X, y)
    assert len(acc) == 1  # the first step's spend; the second step read no data


def test_grid_search_records_every_fit_on_the_users_accountant(data):
    X, y = data
    acc = BudgetAccountant()
    search = GridSearchCV(_classifier(accountant=acc), GRID, cv=3).fit(X, y)
    assert len(acc) == 4 * 3 + 1  # 4 settings x 3 folds + the refit
    assert search.best_estimator_.accountant is acc
    expected = 3 * sum(GRID["epsilon"]) + search.best_params_["epsilon"]
    assert acc.total() == (pytest.approx(expected), 0.0)


def test_cross_val_score_records_every_fold(data):
    X, y = data
    acc = BudgetAccountant()
    cross_val_score(_classifier(epsilon=1.0, accountant=acc), X, y, cv=5)
    assert len(acc) == 5
    with acc:
        cross_val_score(_classifier(epsilon=1.0), X, y, cv=5)
    assert len(acc) == 10


def _meta_estimators(accountant=None):
    step = _classifier(epsilon=1.0, accountant=accountant)
    return {
        "OneVsRestClassifier": OneVsRestClassifier(step),
        "BaggingClassifier": BaggingClassifier(step, n_estimators=4, bootstrap=False, max_samples=0.5, random_state=0),
        "CalibratedClassifierCV": CalibratedClassifierCV(
            LogisticRegression(epsilon=1.0, data_norm=2.0, classes=[0, 1], accountant=accountant), cv=3
        ),
    }


@pytest.mark.parametrize("name", list(_meta_estimators()))
def test_meta_estimators_used_directly_charge_every_clone(data, name):
    """Outside dpsk's searches, each clone a meta-estimator fits spends on the user's accountant."""
    X, y = data
    y3 = np.where(X[:, 1] > 0.3, 2, y)  # three classes: OneVsRest fits three clones
    for use_with in (False, True):
        acc = BudgetAccountant()
        meta = _meta_estimators(None if use_with else acc)[name]
        with record_releases() as drawn:
            if use_with:
                with acc:
                    meta.fit(X, y3 if name == "OneVsRestClassifier" else y)
            else:
                meta.fit(X, y3 if name == "OneVsRestClassifier" else y)
        made = sorted(repr(leaf) for event in drawn for leaf in event.flatten())
        charged = sorted(repr(leaf) for event in acc.spent_budget for leaf in event.flatten())
        assert made == charged and len(acc) == {"OneVsRestClassifier": 3, "BaggingClassifier": 4}.get(name, 3)


def test_clone_keeps_the_accountant_and_binds_the_active_one():
    acc = BudgetAccountant()
    est = _classifier(accountant=acc)
    assert clone(est).accountant is acc
    other = BudgetAccountant()
    with other:
        bound = clone(_classifier())
    assert getattr(bound, BOUND_ATTRIBUTE) is other
    assert "accountant" in bound.get_params() and bound.get_params()["accountant"] is None
    assert getattr(clone(bound), BOUND_ATTRIBUTE) is other  # clones of clones keep it
    assert not hasattr(clone(est), BOUND_ATTRIBUTE)  # an explicit accountant needs no binding


def test_budget_exceeded_before_the_data_is_read(data):
    X, y = data
    acc = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        _classifier(epsilon=1.0, accountant=acc).fit(np.full_like(X, np.nan), y)  # NaN never read
    assert len(acc) == 0


# ------------------------------------------------------------------------ processes


@pytest.mark.slow
def test_process_parallel_search_with_an_in_memory_accountant_fails_loudly(data):
    X, y = data
    acc = BudgetAccountant()
    search = GridSearchCV(_classifier(accountant=acc), GRID, cv=3, n_jobs=2, error_score="raise")
    with pytest.raises(DetachedAccountantError, match=r"BudgetAccountant\(\.\.\., path="):
        search.fit(X, y)
    # With scikit-learn's default error_score, every fit fails and the search raises.
    with pytest.raises(ValueError, match="path="):
        GridSearchCV(_classifier(accountant=acc), GRID, cv=3, n_jobs=2).fit(X, y)
    with acc, pytest.raises(ValueError, match="path="):
        cross_val_score(_classifier(epsilon=1.0), X, y, cv=5, n_jobs=2)
    assert len(acc) == 0


@pytest.mark.slow
def test_process_parallel_search_with_a_persistent_accountant_records_exactly(data, tmp_path):
    X, y = data
    acc = BudgetAccountant(path=tmp_path / "budget.sqlite")
    GridSearchCV(_classifier(accountant=acc), GRID, cv=3, n_jobs=2).fit(X, y)
    assert len(acc) == 13
    with acc:
        # Clones made by joblib's dispatch thread must find the accountant too.
        cross_val_score(_classifier(epsilon=1.0), X, y, cv=5, n_jobs=2, pre_dispatch=2)
    assert len(acc) == 18
    assert acc.spent_budget[-5:] == [_cost(1.0)] * 5


def test_threading_backend_shares_an_in_memory_accountant(data):
    from joblib import parallel_backend

    X, y = data
    acc = BudgetAccountant()
    with parallel_backend("threading", n_jobs=2):
        GridSearchCV(_classifier(accountant=acc), GRID, cv=3, n_jobs=2).fit(X, y)
        with acc:
            cross_val_score(_classifier(epsilon=1.0), X, y, cv=5, n_jobs=2, pre_dispatch=2)
    assert len(acc) == 18


def test_budget_is_enforced_across_a_grid_search(data):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FitFailedWarning for the fits that do not fit
        with pytest.raises((BudgetExceededError, ValueError)):
            GridSearchCV(_classifier(accountant=acc), {"epsilon": [1.0, 2.0]}, cv=3).fit(X, y)
    assert acc.total().epsilon <= 5.0


# ------------------------------------------------------------------------ estimator checks


def _checked_estimators():
    yield ToyDPMeanClassifier(accountant=BudgetAccountant(), random_state=0)
    yield ToyDPCenterer(accountant=BudgetAccountant(), random_state=0)


@pytest.mark.filterwarnings("ignore::dpsk.exceptions.PrivacyLeakWarning")
@parametrize_with_checks(list(_checked_estimators()))
def test_estimators_with_an_accountant_pass_sklearn_checks(estimator, check):
    check(estimator)


@pytest.mark.filterwarnings("ignore::dpsk.exceptions.PrivacyLeakWarning")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
def test_sklearn_checks_with_a_persistent_accountant(tmp_path):
    from sklearn.utils.estimator_checks import check_estimator

    acc = BudgetAccountant(path=tmp_path / "budget.sqlite")
    results = check_estimator(ToyDPMeanClassifier(accountant=acc, random_state=0), on_fail=None)
    assert [r["check_name"] for r in results if r["status"] == "failed"] == []
    assert len(acc) > 10  # the checks' fits were recorded on the file


def test_estimator_checks_spend_on_the_accountant():
    acc = BudgetAccountant()
    est = ToyDPMeanClassifier(accountant=acc, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        est.fit(np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1])
    assert acc.spent_budget == [_cost(1.0)]
    assert SelfComposedEvent(LaplaceEvent(2.0), 2).flatten() == est.privacy_spent_.flatten()


def _in_thread(fn):
    result = {}

    def run():
        try:
            result["value"] = fn()
        except Exception as exc:  # noqa: BLE001 (reported to the caller)
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result


def test_clones_made_in_helper_threads_find_the_with_block():
    acc = BudgetAccountant()
    with acc:
        helper = _in_thread(lambda: clone(_classifier()))
    assert getattr(helper["value"], BOUND_ATTRIBUTE) is acc
    # Outside any `with` block, nothing is bound.
    assert not hasattr(_in_thread(lambda: clone(_classifier()))["value"], BOUND_ATTRIBUTE)


def test_main_thread_clones_ignore_other_threads_blocks():
    acc = BudgetAccountant()
    entered, release = threading.Event(), threading.Event()

    def hold():
        with acc:
            entered.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait(30)
    try:
        assert not hasattr(clone(_classifier()), BOUND_ATTRIBUTE)
        assert getattr(_in_thread(lambda: clone(_classifier()))["value"], BOUND_ATTRIBUTE) is acc
        with BudgetAccountant():  # a second accountant active in another thread: ambiguous
            ambiguous = _in_thread(lambda: clone(_classifier()))
        assert isinstance(ambiguous["error"], RuntimeError)
    finally:
        release.set()
        holder.join()
