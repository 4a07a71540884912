# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private feature selection: the score's sensitivity, the selection, charging, pipelines, audit."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from dpsk.accounting import BudgetAccountant, ExponentialEvent, PureDPEvent, SelfComposedEvent, record_releases
from dpsk.audit import audit, canary_neighbours, estimator_sampler
from dpsk.feature_selection import SelectKBest, SelectPercentile
from dpsk.feature_selection._univariate import class_deviation_scores
from dpsk.linear_model import LogisticRegression
from dpsk.pipeline import make_pipeline


def _scores(X, y, lower=0.0, upper=1.0):
    d = X.shape[1]
    return np.array(class_deviation_scores(X, y, np.full(d, lower), np.full(d, upper)), dtype=object)


def test_scores_match_the_formula():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (50, 3))
    y = rng.integers(0, 3, 50)
    u = np.floor(X * 2**20 + 0.5) / 2**20
    expected = [sum(abs(u[y == c, j].sum() - (y == c).sum() * u[:, j].mean()) for c in range(3)) for j in range(3)]
    np.testing.assert_allclose([float(s) for s in _scores(X, y)], expected, rtol=1e-12)


def test_score_sensitivity_is_two():
    """|score(D) - score(D + row)| <= 2 exactly, over adversarial small datasets (grid search)."""
    rng = np.random.default_rng(1)
    worst = Fraction(0)
    for _ in range(300):
        n = int(rng.integers(1, 8))
        X = rng.choice([0.0, 0.25, 1.0], size=(n, 1))
        y = rng.integers(0, int(rng.integers(1, 4)), n)
        before = _scores(X, y)[0]
        for z, label in itertools.product([0.0, 1.0, 0.5], [0, 1, 2, 7]):
            after = _scores(np.vstack([X, [[z]]]), np.append(y, label))[0]
            worst = max(worst, abs(after - before))
    assert worst <= 2
    assert worst > 1.5  # the bound is nearly attained (a new class far from the mean)


def test_selects_the_informative_features_at_high_epsilon():
    X, y = load_breast_cancer(return_X_y=True)
    bounds = (X.min(axis=0), X.max(axis=0))
    top = np.argsort([-float(s) for s in class_deviation_scores(X, y, *bounds)])[:3]
    selector = SelectKBest(k=3, epsilon=1e4, bounds=bounds, random_state=0).fit(X, y)
    assert set(selector.get_support(indices=True)) == set(top)
    assert selector.transform(X).shape == (X.shape[0], 3)
    assert (
        SelectPercentile(percentile=10, epsilon=1.0, bounds=bounds, random_state=0).fit(X, y).transform(X).shape[1] == 3
    )


@pytest.mark.parametrize("selection, event", [("exponential", ExponentialEvent), ("permute_and_flip", PureDPEvent)])
def test_one_spend_of_k_rounds(selection, event):
    X, y = load_breast_cancer(return_X_y=True)
    acc = BudgetAccountant(epsilon=2.0)
    selector = SelectKBest(k=4, epsilon=1.0, bounds=(X.min(0), X.max(0)), selection=selection, accountant=acc)
    with record_releases() as drawn:
        selector.fit(X, y)
    assert selector.privacy_spent_ == SelfComposedEvent(event(0.25), 4)
    assert drawn == [event(0.25)] * 4
    assert len(acc.spent_budget) == 1
    assert acc.total().epsilon <= 1.0


def test_selecting_everything_reads_nothing_and_costs_nothing():
    X, y = np.zeros((5, 3)), np.arange(5) % 2
    with record_releases() as drawn:
        selector = SelectKBest(k="all", bounds=(0, 1)).fit(X, y)
    assert drawn == [] and selector.get_support().all()
    assert SelectKBest(k=7, bounds=(0, 1)).fit(X, y).get_support().all()


def test_bad_input_is_refused_before_any_spend():
    acc = BudgetAccountant(epsilon=1.0)
    X = np.ones((10, 3))
    X[0, 0] = np.nan
    with pytest.raises(ValueError):
        SelectKBest(k=1, bounds=(0, 1), accountant=acc).fit(X, np.arange(10) % 2)
    with pytest.raises(ValueError):
        SelectKBest(k=-1, bounds=(0, 1), accountant=acc).fit(np.ones((10, 3)), np.arange(10) % 2)
    assert acc.spent_budget == []
    small = BudgetAccountant(epsilon=0.5)
    with pytest.raises(Exception, match="budget"):
        SelectKBest(k=1, epsilon=1.0, bounds=(0, 1), accountant=small).fit(np.ones((10, 3)), np.arange(10) % 2)
    assert small.spent_budget == []


def test_pipeline_spends_each_step_once():
    X, y = load_breast_cancer(return_X_y=True)
    lower, upper = X.min(0), X.max(0)
    X01 = (X - lower) / (upper - lower) - 0.5
    acc = BudgetAccountant(epsilon=1.0)
    pipe = make_pipeline(
        SelectKBest(k=5, epsilon=0.2, bounds=(-0.5, 0.5), random_state=0),
        LogisticRegression(epsilon=0.8, data_norm=np.sqrt(5) / 2, bounds=(-0.5, 0.5), classes=[0, 1], random_state=0),
    )
    with acc:
        pipe.fit(X01, y)
    assert len(acc.spent_budget) == 2
    assert acc.total().epsilon <= 1.0
    assert pipe.score(X01, y) > 0.6


def test_random_state_none_is_fresh():
    """Fresh OS noise, not numpy's global state: equal-score features get different picks."""
    X, y = np.zeros((20, 30)), np.arange(20) % 2
    picks = set()
    for _ in range(5):
        np.random.seed(0)
        picks.add(int(SelectKBest(k=1, bounds=(0, 1)).fit(X, y).get_support(indices=True)[0]))
    assert len(picks) > 1


# ------------------------------------------------------------------------------- audit


class BrokenSelectKBest(SelectKBest):
    """SelectKBest with a deliberate bug (test helper)."""

    def __init__(self, *, bug="raw_argmax", k=1, epsilon=1.0, bounds=None, random_state=None, accountant=None):
        self.bug = bug
        super().__init__(k=k, epsilon=epsilon, bounds=bounds, random_state=random_state, accountant=accountant)

    def fit(self, X, y):
        super().fit(X, y)
        if self.bug == "raw_argmax":  # the best exact score, first on ties
            scores = class_deviation_scores(np.asarray(X, float), y, *self.bounds_)
            self.support_ = np.zeros(X.shape[1], bool)
            self.support_[int(np.argmax([float(s) for s in scores]))] = True
        return self


class QuarterSensitivitySelectKBest(SelectKBest):
    """SelectKBest whose mechanism assumes sensitivity 0.5 instead of 2 (test helper)."""

    def fit(self, X, y):
        import dpsk.feature_selection._univariate as module

        saved = module.SCORE_SENSITIVITY["class_deviation"]
        module.SCORE_SENSITIVITY["class_deviation"] = 0.5
        try:
            return super().fit(X, y)
        finally:
            module.SCORE_SENSITIVITY["class_deviation"] = saved


def _selected(fitted):
    return float(fitted.get_support(indices=True)[0])


def _selection_neighbours():
    """30 features at 0 for 200 rows of class 0 (every score 0); the canary, alone in class 1,
    at 1 in the last feature raises that score to 2·200/201, the most one row can (the raw
    argmax takes the first feature on ties, the last with the canary)."""
    X = np.zeros((200, 30))
    canary = np.zeros(30)
    canary[-1] = 1.0
    return canary_neighbours(X, np.zeros(200, int), canary_X=canary, canary_y=1)


@pytest.mark.audit
@pytest.mark.parametrize(
    "estimator, passes",
    [
        (SelectKBest(k=1, epsilon=2.0, bounds=(0.0, 1.0)), True),
        (BrokenSelectKBest(bug="raw_argmax", k=1, epsilon=2.0, bounds=(0.0, 1.0)), False),
        (QuarterSensitivitySelectKBest(k=1, epsilon=2.0, bounds=(0.0, 1.0)), False),
    ],
    ids=["correct", "raw_argmax", "sensitivity_quartered"],
)
def test_selection_privacy_audit(estimator, passes):
    pair = _selection_neighbours()
    sampler = estimator_sampler(estimator, _selected, n_jobs=1)
    result = audit(sampler, pair, epsilon=2.0, n_samples=4000, random_state=0)
    assert result.passed == passes, str(result)
