# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""SparseVector / AboveThreshold: calibration, runs, halting, charging (the audit is in tests/privacy)."""

import numpy as np
import pytest

from dpsk.accounting import BudgetAccountant, PureDPEvent, record_releases
from dpsk.exceptions import BudgetExceededError
from dpsk.mechanisms import AboveThreshold, SparseVector


def test_calibration_follows_lyu_su_li():
    """ε₁ : ε₂ = 1 : (2c)^(2/3); threshold noise Δ/ε₁, query noise 2cΔ/ε₂ (cΔ/ε₂ if monotonic)."""
    svt = SparseVector(epsilon=1.0, sensitivity=2.0, threshold=0.0, max_answers=4)
    assert svt.threshold_epsilon + svt.query_epsilon <= 1.0
    assert svt.query_epsilon / svt.threshold_epsilon == pytest.approx(8 ** (2 / 3))
    threshold_scale, query_scale, g = svt._params
    assert threshold_scale == pytest.approx(2.0 / svt.threshold_epsilon, rel=1e-9)
    assert query_scale == pytest.approx(2 * 4 * 2.0 / svt.query_epsilon, rel=1e-9)
    mono = SparseVector(epsilon=1.0, sensitivity=2.0, threshold=0.0, max_answers=4, monotonic=True)
    assert mono._params[1] == pytest.approx(4 * 2.0 / mono.query_epsilon, rel=1e-9)
    assert svt.privacy_event() == PureDPEvent(1.0)


def test_answers_halt_after_max_answers():
    svt = SparseVector(epsilon=50.0, threshold=0.0, max_answers=2, random_state=0)
    answers = svt.randomise([-100.0, 100.0, -100.0, 100.0, 100.0, -100.0])
    assert answers.tolist() == [0, 1, 0, 1, -1, -1]
    run = svt.start()
    assert [run.query(v) for v in (-100.0, 100.0, 100.0)] == [False, True, True]
    assert run.halted
    with pytest.raises(RuntimeError, match="halted"):
        run.query(1.0)


def test_run_and_randomise_draw_the_same_answers():
    """A run fed one value at a time answers as one randomise call on the list (same Generator)."""
    values = np.array([0.5, -0.3, 1.2, 0.1, 2.0, -1.0])
    for seed in range(20):
        whole = SparseVector(epsilon=1.0, threshold=0.4, max_answers=2, random_state=np.random.default_rng(seed))
        answers = whole.randomise(values)
        run = SparseVector(epsilon=1.0, threshold=0.4, max_answers=2, random_state=np.random.default_rng(seed))
        # randomise draws every query's noise at once after the threshold; a run draws
        # them one by one from the same stream: the same numbers in the same order.
        started = run.start()
        streamed = []
        for v in values:
            streamed.append(int(started.query(v)) if not started.halted else -1)
        assert streamed == answers.tolist()


def test_callable_queries_are_evaluated_only_while_running():
    calls = []
    run = AboveThreshold(epsilon=50.0, threshold=0.0, random_state=0).start()
    assert run.query(lambda: calls.append(1) or 100.0)
    with pytest.raises(RuntimeError):
        run.query(lambda: calls.append(2) or 100.0)
    assert calls == [1]


def test_one_charge_per_run_before_any_answer():
    """The run is charged in full when it starts, whatever its answers; refused if it does not fit."""
    acc = BudgetAccountant(epsilon=1.0)
    svt = SparseVector(epsilon=0.6, threshold=0.0, max_answers=3, random_state=0)
    with record_releases() as drawn:
        run = svt.start(accountant=acc)
    assert drawn == [PureDPEvent(0.6)]
    assert acc.total().epsilon == pytest.approx(0.6)
    for _ in range(10):
        run.query(-1000.0)  # ⊥ answers cost nothing more
    assert acc.total().epsilon == pytest.approx(0.6)
    with pytest.raises(BudgetExceededError):
        svt.start(accountant=acc)
    with pytest.raises(BudgetExceededError):
        svt.randomise([1.0, 2.0], accountant=acc)
    assert acc.total().epsilon == pytest.approx(0.6)


def test_active_accountant_is_charged_per_run():
    acc = BudgetAccountant(epsilon=10.0)
    svt = AboveThreshold(epsilon=1.0, threshold=0.0, random_state=0)
    with acc:
        with record_releases() as drawn:
            svt.randomise(np.zeros((3, 4)))
    assert drawn == [PureDPEvent(1.0)] * 3
    assert acc.total().epsilon == pytest.approx(3.0)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(epsilon=0.0, threshold=0.0), "epsilon"),
        (dict(epsilon=1.0, threshold=float("nan")), "threshold"),
        (dict(epsilon=1.0, threshold=0.0, max_answers=0), "max_answers"),
        (dict(epsilon=1.0, threshold=0.0, max_answers=1.5), "max_answers"),
        (dict(epsilon=1.0, threshold=0.0, sensitivity=0.0), "sensitivity"),
    ],
)
def test_bad_parameters_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        SparseVector(**params)


def test_bad_values_are_refused_before_any_charge():
    acc = BudgetAccountant(epsilon=1.0)
    svt = SparseVector(epsilon=0.5, threshold=0.0)
    with pytest.raises(ValueError, match="finite"):
        svt.randomise([1.0, np.nan], accountant=acc)
    assert acc.spent_budget == []


def test_immutable():
    svt = AboveThreshold(epsilon=1.0, threshold=0.0)
    with pytest.raises(AttributeError, match="immutable"):
        svt.threshold = 5.0
