# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Scalers: accuracy of the noisy statistics against diffprivlib, and fit time at 10⁶ × 20.

* StandardScaler at ε = 1 on 10⁴ rows of 20 features drawn N(μⱼ, σⱼ²) with μⱼ uniform
  in [-2, 2] and σⱼ uniform in [0.5, 2], bounds [-8, 8] stated for every feature: mean
  absolute error of ``mean_`` and relative error of ``scale_``, 10 seeds, dpsk and
  diffprivlib (same bounds) in the same run.
* MinMaxScaler at ε = 1 on the same distribution with 10⁴ and 10⁵ rows: the fraction of
  training values outside [``data_min_``, ``data_max_``] (a DP minimum is a low quantile,
  not the minimum: no private estimate sees single rows; this says which); diffprivlib
  has no MinMaxScaler.
* Fit time on 10⁶ × 20 standard normal rows (bounds [-5, 5]) against scikit-learn's
  scalers (interleaved, best of ``repeats``). Target: at most 1.2× scikit-learn.

Run: ``python benchmarks/bench_preprocessing.py [--quick]``.
"""

import os
import sys

import numpy as np
from sklearn.preprocessing import MinMaxScaler as SkMinMaxScaler
from sklearn.preprocessing import StandardScaler as SkStandardScaler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # _family_common, next to this file
from _family_common import best_seconds, main, mean_std, run_diffprivlib  # noqa: E402

from dpsk.preprocessing import MinMaxScaler, StandardScaler  # noqa: E402

DPL_SCALER = """
from diffprivlib.models import StandardScaler
out = []
for s in seeds:
    sc = StandardScaler(epsilon=1.0, bounds=(-8.0, 8.0), random_state=int(s)).fit(X)
    out.append([float(np.abs(sc.mean_ - X.mean(0)).mean()), float(np.abs(sc.scale_ / X.std(0) - 1).mean())])
print(json.dumps(out))
"""


def synthetic(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(rng.uniform(-2, 2, 20), rng.uniform(0.5, 2, 20), size=(n, 20))


def accuracy_rows(seeds, n=10_000):
    X = synthetic(n)
    mean, std = X.mean(axis=0), X.std(axis=0)
    errors = []
    for s in seeds:
        scaler = StandardScaler(epsilon=1.0, bounds=(-8.0, 8.0), random_state=s).fit(X)
        errors.append([np.abs(scaler.mean_ - mean).mean(), np.abs(scaler.scale_ / std - 1).mean()])
    errors = np.array(errors)
    dpl = run_diffprivlib(DPL_SCALER, dict(X=X, seeds=np.array(seeds)), timeout=600)
    dpl = np.array(dpl) if isinstance(dpl, list) else None
    rows = [
        {"benchmark": f"StandardScaler |mean_ error|, {n} x 20", "epsilon": 1.0, "dpsk": mean_std(errors[:, 0]),
         "diffprivlib": mean_std(dpl[:, 0]) if dpl is not None else "unavailable"},
        {"benchmark": f"StandardScaler |scale_ / std - 1|, {n} x 20", "epsilon": 1.0, "dpsk": mean_std(errors[:, 1]),
         "diffprivlib": mean_std(dpl[:, 1]) if dpl is not None else "unavailable"},
    ]
    for size in (n, 10 * n):
        X = synthetic(size)
        outside = []
        for s in seeds:
            scaler = MinMaxScaler(epsilon=1.0, bounds=(-8.0, 8.0), random_state=s).fit(X)
            outside.append(np.mean((X < scaler.data_min_) | (X > scaler.data_max_)))
        rows.append({"benchmark": f"MinMaxScaler: fraction of values outside [data_min_, data_max_], {size} x 20",
                     "epsilon": 1.0, "dpsk": mean_std(outside), "diffprivlib": "n/a", "scikit-learn": "0"})
    return rows


def timing_rows(n, repeats):
    X = np.random.default_rng(0).normal(size=(n, 20))
    rows = []
    for name, ours, theirs in [
        ("StandardScaler", StandardScaler(epsilon=1.0, bounds=(-5.0, 5.0), random_state=0), SkStandardScaler()),
        ("MinMaxScaler", MinMaxScaler(epsilon=1.0, bounds=(-5.0, 5.0), random_state=0), SkMinMaxScaler()),
    ]:
        times = best_seconds({"dpsk": lambda: ours.fit(X), "sklearn": lambda: theirs.fit(X)}, repeats)
        ratio = times["dpsk"] / times["sklearn"]
        rows.append({
            "benchmark": f"{name} fit time, {n:.0e} x 20", "dpsk": f"{times['dpsk']:.3f} s",
            "scikit-learn": f"{times['sklearn']:.3f} s", "ratio": f"{ratio:.2f}", "target": "<= 1.2x",
            "met": ("yes" if ratio <= 1.2 else "no") if n >= 1_000_000 else "(target at 1e6 rows)",
        })
    return rows


def run(quick=False):
    """Rows of the scaler benchmark (``quick``: 3 seeds, 10⁵ rows for timing)."""
    seeds = list(range(3 if quick else 10))
    return accuracy_rows(seeds) + timing_rows(100_000 if quick else 1_000_000, 3 if quick else 7)


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
