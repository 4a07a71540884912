# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""BudgetAccountant: budget rule, reporting semantics, diffprivlib compatibility, handles."""

import copy
import math
import multiprocessing
import pickle
import sys
import threading

import pytest

import dpsk
from dpsk.accounting import (
    ApproxDPEvent,
    Budget,
    BudgetAccountant,
    GaussianEvent,
    LaplaceEvent,
    PureDPEvent,
    SelfComposedEvent,
    active_accountant,
    gaussian_sigma,
    get_epsilon,
    laplace_noise_multiplier,
    split_epsilon,
)
from dpsk.exceptions import BudgetExceededError, DetachedAccountantError
from dpsk.utils._testing import run_python

# ------------------------------------------------------------------------ diffprivlib parity


def test_top_level_reexport():
    assert dpsk.BudgetAccountant is BudgetAccountant


def test_diffprivlib_docstring_examples():
    # The examples of diffprivlib 0.6.6's BudgetAccountant docstring, with dpsk.
    acc = BudgetAccountant(epsilon=1.5, delta=0)
    acc.spend(1.0, 0)
    assert acc.total() == (1.0, 0.0)
    acc.spend(0.25, 0)
    assert acc.total() == (1.25, 0.0)

    acc2 = BudgetAccountant()
    acc2.spend(0.25, 0).spend(0.25, 0)
    assert acc2.total() == (0.5, 0.0)
    assert acc2.remaining() == (math.inf, 1.0)

    acc3 = BudgetAccountant(slack=1e-3)
    for _ in range(20):
        acc3.spend(0.05, 0)
    eps, delta = acc3.total()
    assert delta == 1e-3
    assert eps < 0.7613352285668463  # diffprivlib's figure (heterogeneous KOV bound)
    assert eps >= get_epsilon(SelfComposedEvent(PureDPEvent(0.05), 20), 1e-3, method="advanced")

    with BudgetAccountant() as acc5:
        assert active_accountant() is acc5
        acc5.spend(1 / 3, 0)
    assert acc5.total() == (1 / 3, 0.0)
    assert active_accountant() is None


def test_check_and_spend_raise_before_anything_is_recorded():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    assert acc.check(0.5, 0) is True
    acc.spend(0.5, 1e-7)
    with pytest.raises(BudgetExceededError, match="remaining") as info:
        acc.spend(0.6, 0)
    assert isinstance(info.value, ValueError)
    with pytest.raises(BudgetExceededError):
        acc.check(0.1, 1e-6)  # the δ does not fit
    assert len(acc) == 1
    assert acc.spent_budget == [ApproxDPEvent(0.5, 1e-7)]


def test_constructor_and_argument_validation():
    with pytest.raises(ValueError):
        BudgetAccountant(epsilon=-1)
    with pytest.raises(ValueError):
        BudgetAccountant(delta=1.5)
    with pytest.raises(ValueError):
        BudgetAccountant(delta=1e-5, slack=1e-4)
    with pytest.raises(TypeError):
        BudgetAccountant(epsilon="1")
    acc = BudgetAccountant(3.0, spent_budget=[(1.0, 0), PureDPEvent(0.5)])
    assert acc.total() == (1.5, 0.0)
    with pytest.raises(BudgetExceededError):
        BudgetAccountant(1.0, spent_budget=[(1.0, 0), (0.5, 0)])
    with pytest.raises(TypeError):
        acc.record((1.0, 0.0))
    with pytest.raises(ValueError):
        acc.spend(math.nan, 0)
    with pytest.raises(ValueError):
        acc.remaining(0)
    assert repr(BudgetAccountant(2.0, 1e-5, 1e-6)) == "BudgetAccountant(epsilon=2.0, delta=1e-05, slack=1e-06)"
    assert repr(BudgetAccountant()) == "BudgetAccountant()"


# ------------------------------------------------------------------------ budget rule


def test_float_noise_of_declared_values_is_tolerated_but_reported():
    acc = BudgetAccountant(epsilon=1.0)
    for _ in range(10):
        acc.spend(0.1, 0)  # 10 x 0.1 exceeds 1.0 by 5.6e-17 in exact arithmetic
    eps, _ = acc.total()
    assert 1.0 <= eps <= 1.0 + 1e-12  # reported strictly (rounded up)
    assert acc.remaining() == (0.0, 1.0)
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-9, 0)


def test_mechanisms_calibrated_to_the_budget_fit_exactly():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    acc.record(GaussianEvent(gaussian_sigma(1.0, 1e-5)))
    with pytest.raises(BudgetExceededError):
        acc.record(GaussianEvent(gaussian_sigma(0.01, 1e-5)))

    acc = BudgetAccountant(epsilon=1.0)
    third = split_epsilon(1.0, 3)
    for _ in range(3):
        acc.record(LaplaceEvent(laplace_noise_multiplier(third)))
    with pytest.raises(BudgetExceededError):
        acc.record(LaplaceEvent(1e6))


def test_tight_composition_admits_more_spends_than_basic():
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5)
    for _ in range(100):
        acc.record(LaplaceEvent(10.0))  # basic composition would stop at 50
    assert acc.total().epsilon <= 4.31


def test_slack_is_reserved_for_composition():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5, slack=5e-6)
    with pytest.raises(BudgetExceededError, match="explicit delta"):
        acc.spend(1.0, 6e-6)
    acc.spend(1.0, 4e-6)
    acc.record(GaussianEvent(5.0))  # converted with the δ the explicit spends left


def test_no_delta_ceiling_means_epsilon_at_the_slack():
    acc = BudgetAccountant(epsilon=5.0)  # diffprivlib's default delta=1.0
    with pytest.raises(BudgetExceededError, match="inf"):
        acc.record(GaussianEvent(2.0))  # no finite ε at δ = 0
    tracked = BudgetAccountant()
    tracked.record(GaussianEvent(2.0))
    assert tracked.total() == (math.inf, 0.0)
    assert tracked.get_epsilon(1e-5) == get_epsilon(GaussianEvent(2.0), 1e-5)
    assert tracked.total(slack=1e-5) == (get_epsilon(GaussianEvent(2.0), 1e-5), 1e-5)
    with_slack = BudgetAccountant(epsilon=5.0, slack=1e-5)
    with_slack.record(GaussianEvent(2.0)).spend(0.5, 0.3)
    assert with_slack.total().delta == pytest.approx(1 - (1 - 0.3) * (1 - 1e-5))


# ------------------------------------------------------------------------ reporting semantics


def test_total_reports_delta_only_when_it_is_used():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5)
    acc.spend(1.0, 1e-7).spend(0.5, 0)
    assert acc.total() == (1.5, 1e-7)  # a few spends: conversion gains nothing
    for _ in range(100):
        acc.record(LaplaceEvent(20.0))
    eps, delta = acc.total()
    assert delta == 1e-5 and eps < 1.5 + 5.0  # many spends: converted at the budget's δ
    gauss = BudgetAccountant(epsilon=10.0, delta=1e-5).record(GaussianEvent(3.0))
    assert gauss.total() == (get_epsilon(GaussianEvent(3.0), 1e-5), 1e-5)


def test_remaining_is_jointly_spendable(monkeypatch):
    # remaining() searches without the (slow) PLD method; check() may then allow a little
    # more. Without PLD the two must agree exactly.
    monkeypatch.setattr("dpsk.accounting._pld.available", lambda: False)
    acc = BudgetAccountant(epsilon=3.0, delta=1e-5)
    assert acc.remaining() == (3.0, 1e-5)
    acc.spend(1.0, 1e-6)
    eps, delta = acc.remaining()
    assert eps == 2.0 and delta == pytest.approx((1e-5 - 1e-6) / (1 - 1e-6), rel=1e-9)
    assert acc.check(eps, delta)
    eps3, delta3 = acc.remaining(3)
    acc.record(SelfComposedEvent(ApproxDPEvent(eps3, delta3), 3))
    acc2 = BudgetAccountant(epsilon=3.0, delta=1e-5).record(GaussianEvent(5.0))
    eps, delta = acc2.remaining()
    assert delta == 0.0  # the δ is used to convert the Gaussian spend
    assert acc2.check(eps, 0.0)
    with pytest.raises(BudgetExceededError):
        acc2.check(eps * (1 + 1e-6) + 1e-9, 0.0)


def test_total_with_hypothetical_spends_does_not_record():
    acc = BudgetAccountant(epsilon=2.0)
    assert acc.total(spent_budget=[(0.5, 0), (0.25, 1e-6)]) == (0.75, 1e-6)
    assert len(acc) == 0


# ------------------------------------------------------------------------ handle semantics


def test_copies_and_clones_are_the_same_accountant():
    from sklearn.base import clone

    acc = BudgetAccountant()
    assert copy.copy(acc) is acc
    assert copy.deepcopy(acc) is acc
    assert copy.deepcopy({"a": acc})["a"] is acc
    assert clone(acc, safe=False) is acc
    assert pickle.loads(pickle.dumps(acc)) is acc  # same process: reattached


def test_pickled_into_another_process_refuses_to_spend(tmp_path):
    acc = BudgetAccountant(epsilon=2.0)
    payload = pickle.dumps(acc)
    code = (
        "import pickle, sys\n"
        "from dpsk.exceptions import DetachedAccountantError\n"
        "acc = pickle.loads(sys.stdin.buffer.read())\n"
        "try:\n"
        "    acc.spend(1.0, 0)\n"
        "except DetachedAccountantError as exc:\n"
        "    print('detached', 'path=' in str(exc), repr(acc))\n"
    )
    out = run_python(code, cwd=tmp_path, input=payload, text=False, check=True)
    assert out.stdout.decode().split()[:2] == ["detached", "True"]
    assert "<detached>" in out.stdout.decode()
    assert len(acc) == 0


def _spend_in_child(acc, queue):
    try:
        acc.spend(1.0, 0)
        queue.put("spent")
    except DetachedAccountantError:
        queue.put("detached")


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX only")
def test_forked_process_refuses_to_spend_on_an_in_memory_accountant():
    ctx = multiprocessing.get_context("fork")
    acc = BudgetAccountant()
    queue = ctx.Queue()
    proc = ctx.Process(target=_spend_in_child, args=(acc, queue))
    proc.start()
    proc.join(60)
    assert queue.get(timeout=10) == "detached"
    assert len(acc) == 0


def test_threads_share_one_budget_exactly():
    acc = BudgetAccountant(epsilon=300.0)
    successes = []
    barrier = threading.Barrier(8)

    def worker():
        barrier.wait()
        n = 0
        for _ in range(50):
            try:
                acc.spend(1.0, 0)
                n += 1
            except BudgetExceededError:
                pass
        successes.append(n)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(successes) == 300 == len(acc)
    assert acc.total() == (300.0, 0.0)


def test_nested_context_managers():
    outer, inner = BudgetAccountant(), BudgetAccountant()
    with outer:
        with inner:
            assert active_accountant() is inner
            with outer:  # re-entering is fine
                assert active_accountant() is outer
            assert active_accountant() is inner
        assert active_accountant() is outer
    assert active_accountant() is None


def test_contexts_do_not_leak_between_threads():
    acc = BudgetAccountant()
    seen = []
    with acc:
        t = threading.Thread(target=lambda: seen.append(active_accountant()))
        t.start()
        t.join()
    assert seen == [None]


def test_budget_namedtuple():
    budget = Budget(1.0, 1e-5)
    eps, delta = budget
    assert (eps, delta) == (1.0, 1e-5)
    assert repr(budget) == "(epsilon=1.0, delta=1e-05)"


# ------------------------------------------------------------------------ Budget order, epsilon=inf


def test_budget_compares_component_wise():
    """Check that budgets are partially ordered: neither (4, .02) nor (3, .1) covers the other."""
    a, b = Budget(4, 0.02), Budget(3, 0.1)
    assert not a >= b and not a <= b and not a > b and not a < b
    assert Budget(3, 0.02) <= a and Budget(3, 0.02) <= b and Budget(3, 0.02) < a
    assert Budget(5, 0.1) >= a and Budget(5, 0.1) > b
    assert a <= a and a >= a and not a < a and not a > a
    assert a == (4.0, 0.02) and a <= (4, 0.5) and not a <= (3.9, 1.0)
    assert sorted([a]) == [a]  # still usable where one value is sorted


@pytest.mark.parametrize("epsilon, delta", [(-1.0, 0.0), (1.0, -1e-9), (-math.inf, 0.0)])
def test_budget_rejects_negative_values(epsilon, delta):
    with pytest.raises(ValueError, match=">= 0"):
        Budget(epsilon, delta)


def test_budget_rejects_nan():
    with pytest.raises(TypeError):
        Budget(math.nan, 0.0)


def test_infinite_spend_is_recorded_and_shown():
    """Check that epsilon=inf (the non-private release) is an infinite spend an unlimited accountant records."""
    acc = BudgetAccountant(delta=1e-5)
    acc.spend(1.0, 0.0)
    acc.spend(math.inf, 0.0)
    assert acc.total() == Budget(math.inf, 0.0)
    assert len(acc) == 2
    assert "spent inf" in acc.summary()
    assert get_epsilon(PureDPEvent(math.inf), 0.999) == math.inf


@pytest.mark.parametrize("budget", [dict(epsilon=1e6), dict(epsilon=1e6, delta=0.5)])
def test_finite_budget_refuses_an_infinite_spend(budget):
    acc = BudgetAccountant(**budget)
    with pytest.raises(BudgetExceededError):
        acc.spend(math.inf, 0.0)
    with pytest.raises(BudgetExceededError):
        acc.check(math.inf, 0.0)
    assert len(acc) == 0


def test_large_homogeneous_pure_spends_do_not_overflow():
    """Regression: optimal composition of ε0 > 709 releases overflowed (exp(ε0)) at δ > 0."""
    event = SelfComposedEvent(PureDPEvent(800.0), 2)
    assert get_epsilon(event, 0.5) <= 1600.0
