# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random forest regressor: which depth is best, and on what does it depend? (issue 19)

The regressors inherit the classifiers' default depth ``min(10, ceil(d / 2))``. Issue 19
asks for a regression-specific default chosen by a data-independent rule, not on a
benchmark's test split. This benchmark measures the test R² of ``RandomForestRegressor``
(20 trees, ε = 1, pure ε) at depths 3–12 on synthetic data only (never Friedman #1 or
diabetes): X uniform on [0, 1]^d (``bounds=(0, 1)``), y one of three signals plus
Gaussian noise (σ = 0.3), ``bounds_y`` the signal's range rounded outwards (a stand-in
for a public range):

* ``additive``: Σ_{j<5} sin(π (j + 1) x_j);
* ``interaction``: 4 x₀x₁ + 2 cos(3 x₂x₃);
* ``linear``: x·w, w standard normal (seeded);

for d ∈ {5, 10, 20} and n ∈ {2000, 20000} training rows (5000 test rows), 2 seeds each
(``--quick``: d = 10 only). The best depth follows n (the rows per leaf), hardly d:
see ``doc/user_guide/bounds.rst`` for the conclusion.

Run: ``python benchmarks/bench_tree_depth.py [--quick]``.
"""

import numpy as np
from _family_common import main
from sklearn.metrics import r2_score

from dpsk.ensemble import RandomForestRegressor

DEPTHS = (3, 4, 5, 6, 8, 10, 12)


def synthetic(kind, n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.random((n + 5000, d))
    if kind == "additive":
        y = sum(np.sin(np.pi * (j + 1) * X[:, j]) for j in range(min(5, d)))
    elif kind == "interaction":
        y = 4 * X[:, 0] * X[:, 1] + 2 * np.cos(3 * X[:, 2] * X[:, min(3, d - 1)])
    else:
        y = X @ rng.normal(size=d)
    y = y + rng.normal(scale=0.3, size=y.shape[0])
    bounds_y = (float(np.floor(y.min())) - 1.0, float(np.ceil(y.max())) + 1.0)
    return X[:n], X[n:], y[:n], y[n:], bounds_y


def run(quick=False):
    rows = []
    for d in (10,) if quick else (5, 10, 20):
        for n in (2000, 20000):
            for kind in ("additive", "interaction", "linear"):
                scores = []
                for depth in DEPTHS:
                    values = []
                    for seed in (0, 1):
                        X, X_test, y, y_test, bounds_y = synthetic(kind, n, d, 100 + seed)
                        forest = RandomForestRegressor(
                            max_depth=depth, epsilon=1.0, bounds=(0.0, 1.0), bounds_y=bounds_y, random_state=seed
                        )
                        values.append(r2_score(y_test, forest.fit(X, y).predict(X_test)))
                    scores.append(float(np.mean(values)))
                row = {"d": d, "n": n, "signal": kind}
                row.update({f"depth {depth}": f"{score:.3f}" for depth, score in zip(DEPTHS, scores)})
                row["best"] = DEPTHS[int(np.argmax(scores))]
                row["default min(10, ⌈d/2⌉)"] = min(10, -(-d // 2))
                rows.append(row)
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
