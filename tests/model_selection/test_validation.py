# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""cross_val_score: noisy per-fold accuracy, the whole cost charged once before reading the data."""

import doctest

import numpy as np
import pytest

import dpsk.model_selection._validation as validation_module
from dpsk.accounting import BudgetAccountant, ComposedEvent, SelfComposedEvent, get_epsilon, record_releases
from dpsk.exceptions import BudgetExceededError
from dpsk.model_selection import cross_val_score
from dpsk.utils._testing.selection import ToyShiftedMeanClassifier


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(3000, 2))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def toy(epsilon=1.0, **params):
    return ToyShiftedMeanClassifier(epsilon=epsilon, bounds=(-1.0, 1.0), classes=[0, 1], **params)


def test_cost_and_scores(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0, delta=0.0)
    scores, cost = cross_val_score(
        toy(1.0), X, y, cv=5, epsilon=0.5, accountant=acc, random_state=0, return_privacy_spent=True
    )
    # each unit is in 4 of the 5 training folds (4 x ε = 1), plus the noisy counts (ε = 0.5)
    assert get_epsilon(cost, 0.0) == pytest.approx(4.5)
    assert isinstance(cost, ComposedEvent) and cost.events[0] == SelfComposedEvent(toy(1.0).fit(X, y).privacy_spent_, 4)
    assert acc.spent_budget == [cost]
    assert scores.shape == (5,) and np.all((0 <= scores) & (scores <= 1))
    assert np.all(np.abs(scores - 0.97) < 0.05)  # nearest-mean on a clean split: about 97%


def test_releases_match_the_declared_cost_but_one_fit(data):
    X, y = data
    with record_releases() as drawn:
        scores, cost = cross_val_score(toy(), X, y, cv=3, random_state=0, return_privacy_spent=True)
    fit = list(toy().fit(X, y).privacy_spent_.flatten())
    assert sorted(map(repr, drawn)) == sorted(map(repr, fit * 3 + [cost.events[1]]))  # 3 fits made, 2 charged


def test_noise_shrinks_with_epsilon(data):
    X, y = data
    spread = {
        eps: np.std([cross_val_score(toy(1e4), X, y, cv=2, epsilon=eps, random_state=s) for s in range(20)])
        for eps in (0.01, 10.0)
    }
    assert spread[10.0] < 0.2 * spread[0.01]


def test_budget_checked_first_and_nothing_spent_on_bad_data(data):
    X, y = data
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(BudgetExceededError):
        cross_val_score(toy(1.0), X, y, accountant=acc)
    with acc, pytest.raises(ValueError, match="scoring"):
        cross_val_score(toy(0.1), X, y, cv=2, epsilon=0.1, scoring="f1")
    assert len(acc) == 0
    for bad, match in [(dict(cv=1), "cv"), (dict(scoring="f1"), "scoring"), (dict(epsilon=0.0), "epsilon")]:
        with pytest.raises(ValueError, match=match):
            cross_val_score(toy(), X, y, **bad)


def test_user_level_folds(data):
    X, y = data
    groups = np.arange(len(y)) // 10
    scores, cost = cross_val_score(toy(), X, y, groups=groups, cv=3, random_state=0, return_privacy_spent=True)
    assert scores.shape == (3,) and np.all(np.abs(scores - 0.97) < 0.1)


def test_docstring_examples():
    assert doctest.testmod(validation_module, optionflags=doctest.ELLIPSIS).failed == 0


def test_verbose_shows_the_cost_first_then_each_fold(data, capsys):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    cross_val_score(toy(1.0), X, y, cv=3, epsilon=0.5, accountant=acc, verbose=2, random_state=0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "cross_val_score: Fitting 3 folds, totalling 3 fits"
    assert lines[2].split()[:2] == ["fits", "(3"] and "epsilon=2 " in lines[2]
    assert lines[4].split()[0] == "total" and "epsilon=2.5 " in lines[4]
    assert lines[5] == f"cross_val_score: charged to {acc!r}, which has now spent epsilon=2.5, delta=0"
    assert lines[6:] == ["[CV 1/3] END", "[CV 2/3] END", "[CV 3/3] END"]


def test_verbose_plan_is_printed_even_when_the_budget_refuses(data, capsys):
    X, y = data
    with pytest.raises(BudgetExceededError):
        cross_val_score(toy(1.0), X, y, cv=3, accountant=BudgetAccountant(epsilon=1.0), verbose=1)
    out = capsys.readouterr().out
    assert "privacy cost, checked against the budget before the data is read" in out
    assert "charged" not in out and "END" not in out
