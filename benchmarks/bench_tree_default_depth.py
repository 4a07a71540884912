# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random forest regressor with its defaults: test R² and the default depth (issue 19)

``RandomForestRegressor(random_state=seed)`` with nothing else set (20 trees, ε = 1,
``bounds`` and ``bounds_y`` estimated privately, ``max_depth=None``) on Friedman #1
(``make_friedman1``, d = 10, noise 1; 20,000 training and 5,000 test rows) and on
scikit-learn's diabetes data (442 rows, d = 10; a 75/25 split per seed), seeds 0-2.
The rows give the mean test R², each seed's R² and the depths the fits used: run it
on the code before and after a change of the default depth to compare them.

Run: ``python benchmarks/bench_tree_default_depth.py [--quick]``.
"""

import numpy as np
from _family_common import main
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from dpsk.ensemble import RandomForestRegressor


def _friedman(seed):
    X, y = make_friedman1(n_samples=25000, n_features=10, noise=1.0, random_state=seed)
    return X[:20000], X[20000:], y[:20000], y[20000:]


def _diabetes(seed):
    X, y = load_diabetes(return_X_y=True)
    return train_test_split(X, y, test_size=0.25, random_state=seed)


def run(quick=False):
    rows = []
    for name, data in (("Friedman #1 (20,000 rows, d = 10)", _friedman), ("diabetes (331 rows, d = 10)", _diabetes)):
        scores, depths = [], []
        for seed in (0,) if quick else (0, 1, 2):
            X, X_test, y, y_test = data(seed)
            forest = RandomForestRegressor(random_state=seed).fit(X, y)
            scores.append(r2_score(y_test, forest.predict(X_test)))
            depths.append(forest.max_depth_)
        rows.append(
            {
                "data": name,
                "mean R²": f"{np.mean(scores):.3f}",
                "R² per seed": ", ".join(f"{s:.3f}" for s in scores),
                "max_depth_": ", ".join(str(d) for d in depths),
            }
        )
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
