# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""GridSearchCV and RandomizedSearchCV: costs known in advance, charged once, private selection.

Expected costs are derived by hand from the designs (disjoint parts: parallel
composition; k-fold: k - 1 fits per unit; refit: one more fit) for the toy classifier,
whose fit costs exactly ε (two Laplace releases of ε/2).
"""

import doctest
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

import dpsk.model_selection._random_search as random_search_module
import dpsk.model_selection._search as search_module
from dpsk.accounting import (
    BudgetAccountant,
    ExponentialEvent,
    ParallelEvent,
    RepeatAndSelectEvent,
    get_epsilon,
    record_releases,
)
from dpsk.accounting._repeat_and_select import stopping_gamma
from dpsk.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpsk.model_selection import GridSearchCV, RandomizedSearchCV
from dpsk.model_selection._random_search import _draw_trials, _sample_candidate
from dpsk.utils._testing import ALPHA, chisquare_pvalue
from dpsk.utils._testing.accounting import ToyDPCenterer
from dpsk.utils._testing.selection import ToyShiftedMeanClassifier

GRID = {"shift": [0.0, 0.1]}


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def toy(epsilon=1.0, **params):
    return ToyShiftedMeanClassifier(epsilon=epsilon, bounds=(-1.0, 1.0), classes=[0, 1], **params)


def pure_epsilon(event):
    return get_epsilon(event, 0.0)


class _Unreadable:
    """X or y that fails the test if anything reads it."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read")

    def __len__(self):
        raise AssertionError("the data was read")

    def __getattr__(self, name):
        raise AssertionError("the data was read")


# ------------------------------------------------------------------- costs, by design


@pytest.mark.parametrize(
    "cv, refit, expected",
    [
        # disjoint: max(fit ε = 1, selection ε = 0.5) in parallel, + refit 1
        ("disjoint", True, 2.0),
        ("disjoint", False, 1.0),
        ("disjoint", "selected", 1.0),
        # 3-fold, 2 candidates: each unit in 2 training folds of each -> 4 fits, + 0.5, + refit
        (3, True, 5.5),
        (3, "selected", 4.5),
        (5, False, 8.5),
    ],
)
def test_grid_cost_by_design(data, cv, refit, expected):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0, delta=0.0)
    search = GridSearchCV(toy(1.0), GRID, cv=cv, epsilon=0.5, refit=refit, accountant=acc, random_state=0).fit(X, y)
    assert pure_epsilon(search.privacy_spent_) == pytest.approx(expected)
    assert len(acc) == 1 and acc.spent_budget == [search.privacy_spent_]
    assert acc.total().epsilon == pytest.approx(expected)
    report = search.budget_report_
    assert report["stage"][-1] == "total" and report["epsilon"][-1] == pytest.approx(expected)
    assert report["event"][-1] == search.privacy_spent_
    assert hasattr(search, "best_estimator_") == bool(refit)


def test_disjoint_cost_does_not_grow_with_the_number_of_candidates(data):
    X, y = data
    costs = []
    for m in (2, 5):
        grid = {"shift": list(np.linspace(0, 0.2, m))}
        costs.append(
            pure_epsilon(GridSearchCV(toy(), grid, epsilon=1.0, refit=False, random_state=0).fit(X, y).privacy_spent_)
        )
    assert costs == [1.0, 1.0]


def test_candidates_of_different_costs_are_charged_their_largest(data):
    X, y = data
    search = GridSearchCV(toy(), {"epsilon": [0.5, 2.0]}, epsilon=0.1, random_state=0).fit(X, y)
    # disjoint: max(0.5, 2, 0.1) = 2; refit: the selected one is unknown in advance -> 2
    assert pure_epsilon(search.privacy_spent_) == pytest.approx(4.0)
    search = GridSearchCV(toy(), {"epsilon": [0.5, 2.0]}, cv=2, epsilon=0.1, refit=False, random_state=0).fit(X, y)
    assert pure_epsilon(search.privacy_spent_) == pytest.approx(0.5 + 2.0 + 0.1)


def test_pipeline_steps_are_all_charged(data):
    X, y = data
    pipe = make_pipeline(ToyDPCenterer(epsilon=0.5, bounds=(-1.0, 1.0)), toy(1.0))
    search = GridSearchCV(pipe, {"toyshiftedmeanclassifier__shift": [0.0, 0.1]}, epsilon=0.5, random_state=0)
    search.fit(X, y)
    assert pure_epsilon(search.privacy_spent_) == pytest.approx(1.5 + 1.5)  # parallel max(1.5, 0.5) + refit
    assert search.best_estimator_.steps[1][1].shift in (0.0, 0.1)


def test_random_stopping_cost(data):
    X, y = data
    search = RandomizedSearchCV(toy(1.0), GRID, n_iter=10, epsilon=1.0, refit="selected", random_state=0).fit(X, y)
    event = search.privacy_spent_
    assert isinstance(event, RepeatAndSelectEvent) and event.mean == 10.0 and event.shape == 0.0
    trial = event.event
    assert isinstance(trial, ParallelEvent)  # the fit and the noisy score see disjoint units
    # one trial is 1-DP (fit ε = 1, score ε = 1): the best of K ~ logarithmic is <= 2-DP
    assert 1.0 < pure_epsilon(event) <= 2.0 * (1 + 1e-9)
    space = {"shift": stats.uniform(0.0, 0.2)}
    fixed = RandomizedSearchCV(toy(1.0), space, n_iter=10, stopping="fixed", cv=5, epsilon=1.0, refit="selected")
    fixed.set_params(random_state=0).fit(X, y)
    assert pure_epsilon(fixed.privacy_spent_) == pytest.approx(10 * 4 * 1.0 + 1.0)  # 10 candidates x 4 folds
    geometric = RandomizedSearchCV(toy(1.0), GRID, stopping="geometric", refit=True, random_state=0).fit(X, y)
    assert pure_epsilon(geometric.privacy_spent_) <= (3.0 + 1.0) * (1 + 1e-9)  # 3 x trial, + refit


# ------------------------------------------------------------------- the budget


def test_budget_is_checked_before_the_data_is_read():
    acc = BudgetAccountant(epsilon=1.9, delta=0.0)
    with record_releases() as drawn, pytest.raises(BudgetExceededError):
        GridSearchCV(toy(1.0), GRID, epsilon=0.5, accountant=acc).fit(_Unreadable(), _Unreadable())
    assert len(acc) == 0 and not drawn
    with pytest.raises(BudgetExceededError):
        RandomizedSearchCV(toy(1.0), GRID, refit=True, accountant=acc).fit(_Unreadable(), _Unreadable())


def test_nothing_is_spent_on_invalid_data(data):
    X, y = data
    acc = BudgetAccountant()
    bad = X.copy()
    bad[3, 1] = np.nan
    for args, match in [
        ((bad, y), "NaN"),
        ((X, None), "requires y"),
        ((X[:5], y), "inconsistent"),
    ]:
        with record_releases() as drawn, pytest.raises(ValueError, match=match):
            GridSearchCV(toy(), GRID, accountant=acc).fit(*args)
        assert not drawn
    assert len(acc) == 0


def test_too_few_units_for_the_design_is_refused_before_spending():
    X = np.array([[-1.0], [1.0], [-0.5], [0.5]])
    y = np.array([0, 1, 0, 1])
    acc = BudgetAccountant()
    grid = {"shift": list(np.linspace(0, 0.1, 20))}  # 21 parts for 4 units
    with pytest.raises(ValueError, match="too few"):
        GridSearchCV(toy(), grid, accountant=acc, random_state=0).fit(X, y)
    assert len(acc) == 0


def test_accountant_in_play(data):
    X, y = data
    mine, theirs, active = BudgetAccountant(), BudgetAccountant(), BudgetAccountant()
    GridSearchCV(toy(accountant=theirs), GRID, accountant=mine, random_state=0).fit(X, y)
    assert (len(mine), len(theirs)) == (1, 0)  # the search's own accountant wins; inner fits are prepaid
    search = GridSearchCV(toy(accountant=theirs), GRID, random_state=0).fit(X, y)
    assert len(theirs) == 1  # else the estimator's
    assert search.best_estimator_.accountant is theirs  # given back
    with active:
        search = GridSearchCV(toy(), GRID, random_state=0).fit(X, y)
        clone(search).fit(X, y)
    assert len(active) == 2 and active.spent_budget == [search.privacy_spent_] * 2
    assert search.best_estimator_.accountant is None
    search.best_estimator_.set_params(accountant=active).fit(X, y)  # a later refit is the user's spend
    assert len(active) == 3
    pipe = make_pipeline(ToyDPCenterer(accountant=mine, bounds=(-1.0, 1.0)), toy(accountant=theirs))
    with pytest.raises(ValueError, match="different accountants"):
        GridSearchCV(pipe, {"toyshiftedmeanclassifier__shift": [0.0]}).fit(X, y)


def test_the_whole_search_is_charged_once_and_fits_nothing_else(data):
    """Check that every release the search makes is in privacy_spent_ (n_jobs=1)."""
    X, y = data
    for cv in ("disjoint", 3):
        search = GridSearchCV(toy(), GRID, cv=cv, epsilon=0.5, random_state=0)
        with record_releases() as drawn:
            search.fit(X, y)
        fit_leaves = sorted(map(repr, toy().fit(X, y).privacy_spent_.flatten()))
        made = sorted(map(repr, drawn))
        k = 1 if cv == "disjoint" else cv
        # releases made: every candidate fitted on each of its k splits, the selection, the refit
        assert made == sorted(fit_leaves * (2 * k + 1) + [repr(ExponentialEvent(0.5))])
        declared = sorted(map(repr, search.privacy_spent_.flatten()))
        if cv == "disjoint":
            assert declared == made
        else:  # each unit is in k - 1 of the k training folds: one fit per candidate less
            assert declared == sorted(fit_leaves * (2 * (k - 1) + 1) + [repr(ExponentialEvent(0.5))])
    search = RandomizedSearchCV(toy(), GRID, refit=True, random_state=0)
    with record_releases() as drawn:
        search.fit(X, y)
    assert sorted(map(repr, drawn)) == sorted(map(repr, search.privacy_spent_.flatten()))
    assert isinstance(search.privacy_spent_.flatten()[0], RepeatAndSelectEvent)


# ------------------------------------------------------------------- private selection


def _separable_1d(n_per_class, n_between):
    """Class 0 at -1, class 1 at +1, and ``n_between`` class-1 rows at 0.05.

    Candidates shift=0 and shift=0.1 predict every row alike except those at 0.05 (shift 0
    is right, 0.1 wrong), so with precise fits their validation counts differ by exactly
    ``n_between``, whatever the random folds.
    """
    X = np.concatenate([np.full(n_per_class, -1.0), np.full(n_per_class, 1.0), np.full(n_between, 0.05)])[:, None]
    y = np.concatenate([np.zeros(n_per_class, int), np.ones(n_per_class + n_between, int)])
    return X, y


@pytest.mark.slow
def test_selection_follows_the_monotone_exponential_mechanism():
    """Check P(select) ∝ exp(ε · score) (monotone counts), with a power check against exp(ε s / 2)."""
    X, y = _separable_1d(100, 2)
    epsilon = 0.5
    search = GridSearchCV(toy(1e4), {"shift": [0.1, 0.0]}, cv=2, epsilon=epsilon, refit=False)
    n = 1000  # 600 left the power check at p ~ 1e-5 on some seed sets
    picks = np.array([search.set_params(random_state=seed).fit(X, y).best_index_ for seed in range(n)])

    def pvalue(scale):  # scale multiplies ε in P(index 1) = e^{2 ε}/(1 + e^{2 ε})
        p1 = 1.0 / (1.0 + math.exp(-2.0 * epsilon * scale))
        return stats.binomtest(int(picks.sum()), n, p1).pvalue

    assert pvalue(1.0) > ALPHA
    assert pvalue(0.5) < ALPHA  # the non-monotone calibration would pick the better one less often


def test_raw_scores_are_not_released(data):
    X, y = data
    search = GridSearchCV(toy(), GRID, random_state=0).fit(X, y)
    assert not hasattr(search, "best_score_")
    assert set(search.cv_results_) == {"params", "param_shift"}
    assert list(search.cv_results_["param_shift"]) == [0.0, 0.1]
    assert search.best_params_ == search.cv_results_["params"][search.best_index_]


def test_random_stopping_reveals_nothing_about_the_number_of_trials(data, capsys):
    X, y = data
    outputs = []
    for seed in range(3):
        search = RandomizedSearchCV(toy(), GRID, verbose=3, random_state=seed).fit(X, y)
        outputs.append(capsys.readouterr().out)
        public = {k for k in vars(search) if k.endswith("_") and not k.startswith("_")}
        assert public == {"privacy_spent_", "budget_report_", "best_params_", "best_estimator_", "n_splits_"}
    assert outputs[0] == outputs[1] == outputs[2]
    assert "kept secret" in outputs[0]


@pytest.mark.parametrize("shape", [0.0, 1.0, 2.5])
def test_number_of_trials_follows_the_truncated_negative_binomial(shape):
    """Chi-square of K against D(shape, γ), and a power check (mean off by 1.2)."""
    from scipy.special import gammaln

    rng = np.random.default_rng(1)
    gamma = stopping_gamma(10.0, shape)
    sample = np.array([_draw_trials(rng, gamma, shape) for _ in range(20_000)])
    support = np.arange(1, 400)

    def pvalue(mean):
        g = stopping_gamma(mean, shape)
        if shape == 0.0:
            log_w = support * np.log1p(-g) - np.log(support)
        else:
            log_w = support * np.log1p(-g) + gammaln(support + shape) - gammaln(shape) - gammaln(support + 1.0)
        return chisquare_pvalue(sample, support, np.exp(log_w - log_w.max()))

    assert pvalue(10.0) > ALPHA
    assert pvalue(12.0) < ALPHA


def test_random_candidates_are_drawn_with_replacement():
    rng = np.random.default_rng(0)
    draws = [_sample_candidate({"a": [1, 2]}, rng)["a"] for _ in range(200)]
    assert {1, 2} == set(draws) and len(draws) == 200
    spaces = [{"a": [1]}, {"b": stats.uniform(0, 1)}]
    draws = [_sample_candidate(spaces, rng) for _ in range(200)]
    assert any("a" in d for d in draws) and any("b" in d for d in draws)
    assert all(0 <= d["b"] <= 1 for d in draws if "b" in d)


def test_random_stopping_with_costs_that_depend_on_a_distribution_is_refused(data):
    X, y = data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="known in advance"):
        RandomizedSearchCV(toy(), {"epsilon": stats.uniform(0.5, 1.0)}, accountant=acc, random_state=0).fit(X, y)
    assert len(acc) == 0
    # a distribution over a parameter that does not change the cost is fine
    RandomizedSearchCV(toy(), {"shift": stats.uniform(0, 0.2)}, accountant=acc, random_state=0).fit(X, y)
    # list-valued costs are enumerated: the trial is charged the largest
    search = RandomizedSearchCV(toy(), {"epsilon": [0.5, 1.0]}, epsilon=0.25, refit=False, random_state=0).fit(X, y)
    assert get_epsilon(search.privacy_spent_.event, 0.0) == pytest.approx(1.0)


def test_random_stopping_rejects_a_disjoint_design_and_tiny_means(data):
    X, y = data
    with pytest.raises(ValueError, match="disjoint"):
        RandomizedSearchCV(toy(), GRID, cv="disjoint").fit(X, y)
    with pytest.raises(ValueError, match=">= 2"):
        RandomizedSearchCV(toy(), GRID, n_iter=1).fit(X, y)
    RandomizedSearchCV(toy(), GRID, n_iter=1, stopping="fixed", random_state=0).fit(X, y)


# ------------------------------------------------------------------- what is fitted


def test_inner_fits_get_independent_seeds_and_the_users_params_back(data, monkeypatch):
    X, y = data
    seeds = []
    original = ToyShiftedMeanClassifier.fit

    def spy(self, X, y):
        if type(self.accountant).__name__ != "_ProbeAccountant":  # not a cost probe
            assert type(self.accountant).__name__ == "PrepaidTicket"
            seeds.append(self.random_state)
        return original(self, X, y)

    monkeypatch.setattr(ToyShiftedMeanClassifier, "fit", spy)
    user = BudgetAccountant()
    search = GridSearchCV(toy(random_state=5, accountant=user), GRID, cv=3, random_state=0).fit(X, y)
    assert len(seeds) == 7 and len(set(seeds)) == 7  # 6 fits + refit, all different
    assert all(isinstance(s, int) for s in seeds)
    assert search.best_estimator_.random_state == 5 and search.best_estimator_.accountant is user
    seeds.clear()
    GridSearchCV(toy(random_state=5), GRID, cv=3).fit(X, y)
    assert seeds == [None] * 7  # random_state=None: fresh secure entropy for every fit


def test_classes_are_derived_once_with_a_warning(data):
    X, y = data
    est = ToyShiftedMeanClassifier(epsilon=1.0, bounds=(-1.0, 1.0))
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        search = GridSearchCV(est, GRID, random_state=0).fit(X, y)
    assert search.best_estimator_.classes is None
    np.testing.assert_array_equal(search.classes_, [0, 1])


def test_refit_selected_keeps_a_search_model(data):
    X, y = data
    search = GridSearchCV(toy(), GRID, refit="selected", random_state=0).fit(X, y)
    assert search.best_estimator_.shift == search.best_params_["shift"]
    assert search.score(X, y) > 0.9
    search = GridSearchCV(toy(), GRID, refit=False, random_state=0).fit(X, y)
    assert not hasattr(search, "predict")


def test_determinism_and_n_jobs(data):
    """Check that an int random_state reproduces the search, with or without threads."""
    from joblib import parallel_backend

    X, y = data
    first = GridSearchCV(toy(), GRID, cv=3, random_state=4).fit(X, y)
    with parallel_backend("threading", n_jobs=2):
        second = GridSearchCV(toy(), GRID, cv=3, n_jobs=2, random_state=4).fit(X, y)
    assert first.best_index_ == second.best_index_
    np.testing.assert_array_equal(first.best_estimator_.means_, second.best_estimator_.means_)


@pytest.mark.slow
def test_process_parallel_search_records_exactly_once(data):
    """Check loky workers with an in-memory accountant: the search records once, in this process."""
    X, y = data
    acc = BudgetAccountant(epsilon=20.0)
    serial = GridSearchCV(toy(), GRID, cv=3, accountant=acc, random_state=3).fit(X, y)
    parallel = GridSearchCV(toy(), GRID, cv=3, n_jobs=2, accountant=acc, random_state=3).fit(X, y)
    assert acc.spent_budget == [serial.privacy_spent_] * 2
    assert serial.best_index_ == parallel.best_index_
    np.testing.assert_array_equal(serial.best_estimator_.means_, parallel.best_estimator_.means_)
    with acc:
        RandomizedSearchCV(toy(), GRID, n_jobs=2, random_state=3).fit(X, y)
    assert len(acc) == 3


# ------------------------------------------------------------------- refused setups


def test_refused_estimators_and_scorers(data):
    X, y = data
    with pytest.raises(ValueError, match="no differentially private step"):
        GridSearchCV(LogisticRegression(), {"C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="needs a classifier"):
        GridSearchCV(ToyDPCenterer(), {"epsilon": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="scoring"):
        GridSearchCV(toy(), GRID, scoring="roc_auc").fit(X, y)
    with pytest.raises(ValueError, match="cv"):
        GridSearchCV(toy(), GRID, cv=__import__("sklearn.model_selection").model_selection.KFold(3)).fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        GridSearchCV(toy(), GRID, epsilon=0.0).fit(X, y)


def test_infinite_epsilon_selects_the_best_candidate_exactly(data):
    """Check that epsilon=inf (no privacy in the selection) picks a best-scoring candidate every time
    and records the search as an infinite spend."""
    X, y = data
    acc = BudgetAccountant()
    grid = {"shift": [5.0, 0.0, -5.0]}  # shifting the class means by 5 ruins the accuracy
    picks = {
        GridSearchCV(toy(epsilon=math.inf), grid, epsilon=math.inf, accountant=acc, random_state=seed)
        .fit(X, y)
        .best_params_["shift"]
        for seed in range(8)
    }
    assert picks == {0.0}
    assert math.isinf(acc.total().epsilon)
    with pytest.raises(BudgetExceededError):
        GridSearchCV(toy(), GRID, epsilon=math.inf, accountant=BudgetAccountant(epsilon=1e3)).fit(X, y)


def test_steps_that_learn_without_privacy_are_flagged(data):
    X, y = data
    with pytest.warns(PrivacyLeakWarning, match="StandardScaler"):
        GridSearchCV(
            make_pipeline(StandardScaler(), toy()), {"toyshiftedmeanclassifier__shift": [0.0]}, random_state=0
        ).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        GridSearchCV(
            make_pipeline(FunctionTransformer(), toy()), {"toyshiftedmeanclassifier__shift": [0.0]}, random_state=0
        ).fit(X, y)


def test_estimators_that_read_data_before_the_budget_check_are_refused(data):
    X, y = data

    class Careless(ToyShiftedMeanClassifier):
        def fit(self, X, y):
            np.asarray(X)
            return super().fit(X, y)

    with pytest.raises(TypeError, match="before reading the data"):
        GridSearchCV(Careless(bounds=(-1.0, 1.0), classes=[0, 1]), GRID).fit(X, y)


@pytest.mark.parametrize("module", [search_module, random_search_module])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# ------------------------------------------------------------------------------ verbose


def test_verbose_shows_the_plan_and_its_cost_before_the_budget_is_checked(capsys):
    acc = BudgetAccountant(epsilon=1.0)  # the search needs 2 (disjoint: 1 in parallel with 0.5, + refit 1)
    search = GridSearchCV(toy(), GRID, epsilon=0.5, accountant=acc, verbose=1)
    with pytest.raises(BudgetExceededError):
        search.fit(_Unreadable(), _Unreadable())
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        "GridSearchCV: 2 candidates, each fitted on its own random part of the data (1/3 of the units "
        "on average) and scored on the remaining part"
    )
    table = {line.split()[0]: line for line in out.splitlines() if line.startswith("    ")}
    assert set(table) == {"candidate", "selection", "refit", "total"}
    assert "epsilon=2 " in table["total"] and "delta=0" in table["total"]
    assert "charged" not in out and len(acc) == 0


def test_verbose_reports_every_fit_as_it_ends_without_scores(data, capsys):
    X, y = data
    acc = BudgetAccountant()
    GridSearchCV(toy(), GRID, cv=3, epsilon=0.5, accountant=acc, verbose=2, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "GridSearchCV: Fitting 3 folds for each of 2 candidates, totalling 6 fits"
    assert lines[6] == f"GridSearchCV: charged to {acc!r}, which has now spent epsilon=5.5, delta=0"
    expected = [f"[CV {f}/3; {c}/2] END shift={shift}" for c, shift in ((1, 0.0), (2, 0.1)) for f in (1, 2, 3)]
    assert lines[7:13] == expected
    assert lines[13:] == ["[refit on all data] END"]
    # verbose=1: the plan only
    GridSearchCV(toy(), GRID, cv=3, epsilon=0.5, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "END" not in out and "no accountant in play" in out
    GridSearchCV(toy(), GRID, cv=3, epsilon=0.5, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_verbose_lines_come_from_the_calling_process_with_process_workers(data, capsys):
    X, y = data
    GridSearchCV(toy(), GRID, epsilon=0.5, verbose=2, n_jobs=2, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-3:] == ["[part 1/2] END shift=0.0", "[part 2/2] END shift=0.1", "[refit on all data] END"]
