# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Costs probed without data; inner fits prepaid, reseeded and given back to the user."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpsk.accounting import BudgetAccountant, ComposedEvent, LaplaceEvent, ParallelEvent
from dpsk.accounting._context import BOUND_ATTRIBUTE
from dpsk.accounting._preflight import PrepaidTicket
from dpsk.exceptions import BudgetExceededError
from dpsk.model_selection._estimators import (
    candidate_cost,
    dp_steps,
    largest_cost,
    prepare,
    restore_user_params,
    search_accountant,
)
from dpsk.utils._testing.accounting import ToyDPCenterer
from dpsk.utils._testing.selection import ToyShiftedMeanClassifier


def toy_cost(epsilon):
    half = LaplaceEvent(2.0 / epsilon)
    return ComposedEvent((half, half))


def test_candidate_cost_is_the_cost_the_fit_declares():
    est = ToyShiftedMeanClassifier(epsilon=1.0)
    assert candidate_cost(est, {}) == toy_cost(1.0)
    assert candidate_cost(est, {"epsilon": 4.0}) == toy_cost(4.0)
    pipe = make_pipeline(FunctionTransformer(), ToyDPCenterer(epsilon=2.0), est)
    assert candidate_cost(pipe, {}) == ComposedEvent((toy_cost(2.0), toy_cost(1.0)))
    assert len(dp_steps(pipe)) == 2


def test_largest_cost():
    assert largest_cost([toy_cost(1.0)] * 3) == toy_cost(1.0)
    assert largest_cost([toy_cost(1.0), toy_cost(2.0), toy_cost(1.0)]) == ParallelEvent((toy_cost(1.0), toy_cost(2.0)))


def test_prepare_and_restore():
    user = BudgetAccountant()
    est = make_pipeline(
        ToyDPCenterer(accountant=user, random_state=1, bounds=(-1.0, 1.0)),
        ToyShiftedMeanClassifier(random_state=2, bounds=(-1.0, 1.0)),
    )
    with BudgetAccountant() as active:
        prepared = prepare(est, {"toyshiftedmeanclassifier__shift": 0.5}, 7, classes=np.array([0, 1]))
    steps = dp_steps(prepared)
    assert all(isinstance(s.accountant, PrepaidTicket) and s.accountant.remaining == 1 for s in steps)
    assert all(s.random_state == 7 for s in steps)
    assert all(BOUND_ATTRIBUTE not in vars(s) for s in steps)
    assert steps[1].shift == 0.5 and list(steps[1].classes) == [0, 1]
    X = np.random.default_rng(0).uniform(-1, 1, (50, 2))
    prepared.fit(X, (X[:, 0] > 0).astype(int))
    assert len(user) == 0 and len(active) == 0  # prepaid: nobody is charged twice
    assert [s.accountant.remaining for s in steps] == [0, 0]  # each paid fit used up
    restored = restore_user_params(prepared, est, {"toyshiftedmeanclassifier__shift": 0.5})
    steps = dp_steps(restored)
    assert steps[0].accountant is user and steps[0].random_state == 1
    assert steps[1].accountant is None and steps[1].random_state == 2 and steps[1].classes is None
    assert steps[1].shift == 0.5 and hasattr(steps[1], "means_")


def test_a_ticket_is_shared_by_copies_and_pickles_with_its_allowance():
    acc = BudgetAccountant()
    ticket = PrepaidTicket(toy_cost(1.0), 2, charged=acc, restore=None, step="clf")
    assert copy.copy(ticket) is ticket and copy.deepcopy(ticket) is ticket and clone(ticket, safe=False) is ticket
    est = ToyShiftedMeanClassifier(accountant=ticket)
    assert clone(est).accountant is ticket  # every copy a meta-estimator makes draws on it
    ticket.record(toy_cost(1.0))
    copied = pickle.loads(pickle.dumps(ticket))
    assert copied.remaining == 1 and copied.step == "clf" and copied.cost == toy_cost(1.0)


def test_a_ticket_charges_every_spend_beyond_the_paid_fits():
    acc = BudgetAccountant(epsilon=2.5)
    ticket = PrepaidTicket(toy_cost(1.0), 1, charged=acc)
    ticket.check_event(toy_cost(1.0))
    ticket.record(toy_cost(1.0))
    assert len(acc) == 0  # paid by the search
    ticket.record(toy_cost(1.0)).record(toy_cost(1.0))
    assert acc.spent_budget == [toy_cost(1.0)] * 2  # never free
    with pytest.raises(BudgetExceededError):
        ticket.check_event(toy_cost(1.0))
    with pytest.raises(RuntimeError, match="did not plan"):
        PrepaidTicket(toy_cost(1.0), 0, charged=None, step="clf").check_event(toy_cost(1.0))


def test_search_accountant_order():
    class Search:
        accountant = None

    a, b = BudgetAccountant(), BudgetAccountant()
    est = ToyShiftedMeanClassifier(accountant=a)
    assert search_accountant(Search(), est) is a
    with b:
        assert search_accountant(Search(), est) is a
        assert search_accountant(Search(), ToyShiftedMeanClassifier()) is b
    assert search_accountant(Search(), ToyShiftedMeanClassifier()) is None
    with pytest.raises(ValueError, match="different accountants"):
        search_accountant(Search(), make_pipeline(ToyDPCenterer(accountant=a), ToyShiftedMeanClassifier(accountant=b)))
