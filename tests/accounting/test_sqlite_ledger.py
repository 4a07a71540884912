# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The persistent (SQLite) ledger: restarts, concurrent processes, handles."""

import multiprocessing
import pickle
import sys

import pytest

from dpsk.accounting import BudgetAccountant, GaussianEvent, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent
from dpsk.exceptions import BudgetExceededError
from dpsk.utils._testing import run_python
from dpsk.utils._testing.accounting import spend_repeatedly


def test_survives_a_restart(tmp_path):
    path = tmp_path / "budget.sqlite"
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5, path=path)
    acc.spend(1.0, 1e-7)
    acc.record(SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.1)), 100))
    before = acc.total()
    del acc
    # A new process (a restarted kernel) opens the file without repeating the budget.
    code = (
        "import sys; from dpsk import BudgetAccountant\n"
        "acc = BudgetAccountant(path=sys.argv[1])\n"
        "print(acc.epsilon, acc.delta, len(acc), *acc.total())\n"
        "acc.record(__import__('dpsk').accounting.LaplaceEvent(2.0))\n"
    )
    out = run_python(code, path, cwd=tmp_path, check=True)
    assert out.stdout.split() == ["10.0", "1e-05", "2", repr(before.epsilon), repr(before.delta)]
    reopened = BudgetAccountant(10.0, 1e-5, path=path)
    assert len(reopened) == 3
    assert reopened.spent_budget[-1] == LaplaceEvent(2.0)


def test_the_stored_budget_is_authoritative(tmp_path):
    path = tmp_path / "budget.sqlite"
    BudgetAccountant(epsilon=3.0, delta=1e-6, path=path).spend(1.0, 0)
    with pytest.raises(ValueError, match="holds the budget"):
        BudgetAccountant(epsilon=5.0, delta=1e-6, path=path)
    with pytest.raises(ValueError, match="already holds spends"):
        BudgetAccountant(3.0, 1e-6, spent_budget=[(0.5, 0)], path=path)
    assert BudgetAccountant(path=path).epsilon == 3.0
    assert "path=" in repr(BudgetAccountant(path=path))


def test_a_failed_spend_leaves_file_and_view_unchanged(tmp_path):
    acc = BudgetAccountant(epsilon=1.0, path=tmp_path / "b.sqlite")
    acc.spend(0.75, 0)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.5, 0)
    assert len(acc) == 1 and len(BudgetAccountant(path=tmp_path / "b.sqlite")) == 1


def test_two_handles_see_each_others_spends(tmp_path):
    first = BudgetAccountant(epsilon=2.0, path=tmp_path / "b.sqlite")
    second = pickle.loads(pickle.dumps(first))  # a handle on the same file
    assert second is not first and second.path == first.path
    first.spend(1.5, 0)
    with pytest.raises(BudgetExceededError):
        second.spend(1.0, 0)
    second.spend(0.5, 0)
    assert first.total() == second.total() == (2.0, 0.0)


@pytest.mark.slow
def test_concurrent_processes_never_exceed_the_budget(tmp_path):
    """8 processes x 50 spends of 1.0 against a budget of exactly 300."""
    path = str(tmp_path / "budget.sqlite")
    BudgetAccountant(epsilon=300.0, path=path)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(8)
        with ctx.Pool(8) as pool:
            results = pool.starmap(spend_repeatedly, [(path, 50, 1.0, barrier)] * 8)
    assert sum(s for s, _ in results) == 300
    assert sum(f for _, f in results) == 100
    acc = BudgetAccountant(path=path)
    assert len(acc) == 300
    assert acc.total() == (300.0, 0.0)


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX only")
def test_forked_children_reconnect(tmp_path):
    acc = BudgetAccountant(epsilon=10.0, path=tmp_path / "b.sqlite")
    acc.spend(1.0, 0)  # the parent has an open connection
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=acc.spend, args=(2.0, 0))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0
    assert acc.total() == (3.0, 0.0)


def test_a_relative_path_is_reopened_from_anywhere(tmp_path, monkeypatch):
    """Issue 14, finding 6: a relative path used to be reopened relative to the unpickler's
    working directory, where a fresh ledger silently granted the whole budget again."""
    (tmp_path / "here").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    acc = BudgetAccountant(epsilon=1.0, path="budget.sqlite")
    acc.spend(0.75, 0.0)
    assert acc.path == str(tmp_path / "here" / "budget.sqlite")
    blob = pickle.dumps(acc)
    monkeypatch.chdir(tmp_path / "elsewhere")
    restored = pickle.loads(blob)
    assert restored.path == acc.path
    assert len(restored) == 1 and restored.total().epsilon == pytest.approx(0.75)
    with pytest.raises(BudgetExceededError):
        restored.spend(0.5, 0.0)
    assert not (tmp_path / "elsewhere" / "budget.sqlite").exists()
