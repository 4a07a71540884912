# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Cost of recording many spends, and of ``total()`` after them: dpsk vs diffprivlib.

diffprivlib 0.6.6 needs scikit-learn < 1.8, so it runs in its own virtual environment
(``--dpl-python``, default ``/work/.venv-dpl/bin/python``) through a subprocess; both
sides time the same loop with ``time.perf_counter``. Runs are interleaved (dpsk, then
diffprivlib, per repeat) and the best of ``--repeats`` is kept, so load from other
processes affects both sides alike. Ratios are computed within one run.

Scenarios (``n`` spends of ε = 1e-4 each, δ = 0 unless said):

* ``tracking``: ``BudgetAccountant()`` (no limit). diffprivlib skips its check here.
* ``budget``: ``BudgetAccountant(epsilon=10, delta=1e-5)``: every spend is checked
  against the budget (diffprivlib recomputes its total over all past spends: O(n)).
* dpsk only: ``Gaussian`` (``record(GaussianEvent(50))``, converted at δ = 1e-5 on
  every check), ``Laplace tight`` (100 x ``LaplaceEvent(10)`` under ε = 5, beyond basic
  composition: the tight methods run on every check), and ``SQLite`` (a persistent
  ledger; each spend is a durable transaction, so fewer spends are timed).

Usage::

    python benchmarks/bench_accountant.py            # n = 10,000
    python benchmarks/bench_accountant.py --n 2000   # quicker
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

_DPL_SCRIPT = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
from diffprivlib import BudgetAccountant
n, scenario = int(sys.argv[1]), sys.argv[2]
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
    from dpsk.accounting import BudgetAccountant, GaussianEvent, LaplaceEvent

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


def _dpl_run(python, n, scenario):
    out = subprocess.run([python, "-c", _DPL_SCRIPT, str(n), scenario], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _best(runs):
    return {key: min(r[key] for r in runs) for key in ("spends", "total")} | {"epsilon": runs[-1]["epsilon"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="spends per run (default 10,000)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many interleaved runs")
    parser.add_argument("--dpl-python", default="/work/.venv-dpl/bin/python")
    parser.add_argument("--dpl-budget-repeats", type=int, default=1, help="repeats of diffprivlib's O(n^2) run")
    args = parser.parse_args()
    have_dpl = os.path.exists(args.dpl_python)

    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for scenario in ("tracking", "budget"):
            dpsk_runs, dpl_runs = [], []
            for i in range(args.repeats):
                dpsk_runs.append(_dpsk_run(args.n, scenario, tmpdir))
                if have_dpl and (scenario == "tracking" or i < args.dpl_budget_repeats):
                    dpl_runs.append(_dpl_run(args.dpl_python, args.n, scenario))
            rows.append((scenario, args.n, _best(dpsk_runs), _best(dpl_runs) if dpl_runs else None))
        for scenario, n in (("Gaussian", args.n), ("Laplace tight", 100), ("SQLite", min(args.n, 1000))):
            rows.append((scenario, n, _best([_dpsk_run(n, scenario, tmpdir) for _ in range(args.repeats)]), None))

    def us(seconds, n):
        return f"{seconds / n * 1e6:,.1f}"

    print(f"\nAccountant cost (best of {args.repeats}; diffprivlib: {args.dpl_python if have_dpl else 'not found'})\n")
    print("| scenario | spends | dpsk µs/spend | diffprivlib µs/spend | ratio | dpsk total() ms | diffprivlib total() ms | ε (dpsk / diffprivlib) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for scenario, n, d, p in rows:
        if p is None:
            print(f"| {scenario} | {n:,} | {us(d['spends'], n)} | – | – | {d['total'] * 1e3:,.2f} | – | {d['epsilon']:.6g} |")
        else:
            ratio = p["spends"] / d["spends"]
            print(
                f"| {scenario} | {n:,} | {us(d['spends'], n)} | {us(p['spends'], n)} | {ratio:,.1f}x | "
                f"{d['total'] * 1e3:,.2f} | {p['total'] * 1e3:,.2f} | {d['epsilon']:.6g} / {p['epsilon']:.6g} |"
            )
    print()


if __name__ == "__main__":
    sys.exit(main())
