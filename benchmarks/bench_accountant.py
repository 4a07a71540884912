# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Cost of recording many spends, and of ``total()`` after them: dpsk vs diffprivlib.

diffprivlib 0.6.6 needs scikit-learn < 1.8, so it runs in its own virtual environment
(``_family_common.run_diffprivlib``); both sides time the same loop with
``time.perf_counter``. Runs are interleaved (dpsk, then diffprivlib, per repeat) and the
best of 3 is kept, so load from other processes affects both sides alike. Ratios are
computed within one run.

Scenarios (``n`` spends of ε = 1e-4 each, δ = 0 unless said; diffprivlib's O(n²)
``budget`` run is timed once):

* ``tracking``: ``BudgetAccountant()`` (no limit). diffprivlib skips its check here.
* ``budget``: ``BudgetAccountant(epsilon=10, delta=1e-5)``: every spend is checked
  against the budget (diffprivlib recomputes its total over all past spends: O(n)).
* dpsk only: ``Gaussian`` (``record(GaussianEvent(50))``, converted at δ = 1e-5 on
  every check), ``Laplace tight`` (100 x ``LaplaceEvent(10)`` under ε = 5, beyond basic
  composition: the tight methods run on every check), and ``SQLite`` (a persistent
  ledger; each spend is a durable transaction, so fewer spends are timed).

Usage::

    python benchmarks/bench_accountant.py            # n = 10,000
    python benchmarks/bench_accountant.py --quick    # n = 2,000
"""

import os
import tempfile
import time

import numpy as np
from _family_common import main, run_diffprivlib

from dpsk.accounting import BudgetAccountant, GaussianEvent, LaplaceEvent

DPL_SPENDS = """
from diffprivlib import BudgetAccountant
n, scenario = int(n), str(scenario)
acc = BudgetAccountant() if scenario == "tracking" else BudgetAccountant(epsilon=10, delta=1e-5)
t0 = time.perf_counter()
for _ in range(n):
    acc.spend(1e-4, 0)
t1 = time.perf_counter()
total = acc.total()
t2 = time.perf_counter()
print(json.dumps({"spends": t1 - t0, "total": t2 - t1, "epsilon": float(total[0])}))
"""


def _dpsk_run(n, scenario, tmpdir):
    if scenario == "tracking":
        acc, spend = BudgetAccountant(), lambda a: a.spend(1e-4, 0)
    elif scenario == "budget":
        acc, spend = BudgetAccountant(epsilon=10, delta=1e-5), lambda a: a.spend(1e-4, 0)
    elif scenario == "Gaussian":
        acc, spend = BudgetAccountant(epsilon=1e6, delta=1e-5), lambda a: a.record(GaussianEvent(50.0))
    elif scenario == "Laplace tight":
        acc, spend = BudgetAccountant(epsilon=5.0, delta=1e-5), lambda a: a.record(LaplaceEvent(10.0))
    elif scenario == "SQLite":
        path = os.path.join(tmpdir, f"ledger-{time.monotonic_ns()}.sqlite")
        acc, spend = BudgetAccountant(epsilon=10, delta=1e-5, path=path), lambda a: a.spend(1e-4, 0)
    else:
        raise ValueError(scenario)
    t0 = time.perf_counter()
    for _ in range(n):
        spend(acc)
    t1 = time.perf_counter()
    total = acc.total()
    t2 = time.perf_counter()
    return {"spends": t1 - t0, "total": t2 - t1, "epsilon": total.epsilon}


def _dpl_run(n, scenario):
    out = run_diffprivlib(DPL_SPENDS, {"n": np.array(n), "scenario": np.array(scenario)})
    return out if isinstance(out, dict) and "spends" in out else None


def _best(runs):
    return {key: min(r[key] for r in runs) for key in ("spends", "total")} | {"epsilon": runs[-1]["epsilon"]}


def run(quick=False, repeats=3):
    """Rows of the accountant benchmark (``quick``: 2,000 spends instead of 10,000)."""
    n = 2_000 if quick else 10_000
    measured = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for scenario in ("tracking", "budget"):
            dpsk_runs, dpl_runs = [], []
            for i in range(repeats):
                dpsk_runs.append(_dpsk_run(n, scenario, tmpdir))
                if scenario == "tracking" or i == 0:  # diffprivlib's budget run is O(n²): once
                    dpl = _dpl_run(n, scenario)
                    if dpl is not None:
                        dpl_runs.append(dpl)
            measured.append((scenario, n, _best(dpsk_runs), _best(dpl_runs) if dpl_runs else None))
        for scenario, m in (("Gaussian", n), ("Laplace tight", 100), ("SQLite", min(n, 1000))):
            measured.append((scenario, m, _best([_dpsk_run(m, scenario, tmpdir) for _ in range(repeats)]), None))
    rows = []
    for scenario, m, ours, theirs in measured:
        row = {
            "scenario": scenario,
            "spends": m,
            "dpsk µs / spend": ours["spends"] / m * 1e6,
            "diffprivlib µs / spend": "–",
            "diffprivlib / dpsk": "–",
            "dpsk total() ms": ours["total"] * 1e3,
            "diffprivlib total() ms": "–",
            "ε (dpsk / diffprivlib)": f"{ours['epsilon']:.6g}",
        }
        if theirs is not None:
            row.update(
                {
                    "diffprivlib µs / spend": theirs["spends"] / m * 1e6,
                    "diffprivlib / dpsk": theirs["spends"] / ours["spends"],
                    "diffprivlib total() ms": theirs["total"] * 1e3,
                    "ε (dpsk / diffprivlib)": f"{ours['epsilon']:.6g} / {theirs['epsilon']:.6g}",
                }
            )
        rows.append(row)
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
