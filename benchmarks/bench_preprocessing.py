# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Scalers: accuracy of the noisy statistics against diffprivlib.

* StandardScaler at ε = 1 on 10⁴ rows of 20 features drawn N(μⱼ, σⱼ²) with μⱼ uniform
  in [-2, 2] and σⱼ uniform in [0.5, 2], bounds [-8, 8] stated for every feature: mean
  absolute error of ``mean_`` and relative error of ``scale_``, 10 seeds, dpsk and
  diffprivlib (same bounds) in the same run.
* MinMaxScaler at ε = 1 on the same distribution with 10⁴ and 10⁵ rows: the fraction of
  training values outside [``data_min_``, ``data_max_``] (a DP minimum is a low quantile,
  not the minimum: no private estimate sees single rows; this says which); diffprivlib
  has no MinMaxScaler.

Fit times (target: at most 1.2× scikit-learn's scalers at 10⁶ × 20) are in
``bench_fit_time.py``.

Run: ``python benchmarks/bench_preprocessing.py [--quick]``.
"""

import numpy as np
from _family_common import main, mean_std, run_diffprivlib

from dpsk.preprocessing import MinMaxScaler, StandardScaler

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
        {
            "benchmark": f"StandardScaler |mean_ error|, {n} x 20",
            "epsilon": 1.0,
            "dpsk": mean_std(errors[:, 0]),
            "diffprivlib": mean_std(dpl[:, 0]) if dpl is not None else "unavailable",
        },
        {
            "benchmark": f"StandardScaler |scale_ / std - 1|, {n} x 20",
            "epsilon": 1.0,
            "dpsk": mean_std(errors[:, 1]),
            "diffprivlib": mean_std(dpl[:, 1]) if dpl is not None else "unavailable",
        },
    ]
    for size in (n, 10 * n):
        X = synthetic(size)
        outside = []
        for s in seeds:
            scaler = MinMaxScaler(epsilon=1.0, bounds=(-8.0, 8.0), random_state=s).fit(X)
            outside.append(np.mean((X < scaler.data_min_) | (X > scaler.data_max_)))
        rows.append(
            {
                "benchmark": f"MinMaxScaler: fraction of values outside [data_min_, data_max_], {size} x 20",
                "epsilon": 1.0,
                "dpsk": mean_std(outside),
                "diffprivlib": "n/a",
                "scikit-learn": "0",
            }
        )
    return rows


def run(quick=False):
    """Rows of the scaler benchmark (``quick``: 2 seeds)."""
    return accuracy_rows(list(range(2 if quick else 10)))


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
