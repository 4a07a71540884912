# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random forest regressor with its defaults: test R² and the default depth (issue 19)

``RandomForestRegressor(random_state=seed)`` with nothing else set (20 trees, ε = 1,
``bounds`` and ``bounds_y`` estimated privately, ``max_depth=None``) on Friedman #1
(``make_friedman1``, d = 10, noise 1; 20,000 training and 5,000 test rows) and on
scikit-learn's diabetes data (442 rows, d = 10; a 75/25 split per seed), seeds 0-2;
then the same with the public bounds of ``bench_forest_regressor.py`` (Friedman #1
``bounds=(0, 1)``, ``bounds_y=(-5, 35)``; diabetes ``bounds=(-0.2, 0.2)``,
``bounds_y=(0, 400)``). The rows give the mean test R², each seed's R² and the depths
the fits used: run it on the code before and after a change of the default depth to
compare them.

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


#: (name, data, public bounds) of each row.
CASES = (
    ("Friedman #1 (20,000 rows, d = 10)", _friedman, {"bounds": (0.0, 1.0), "bounds_y": (-5.0, 35.0)}),
    ("diabetes (331 rows, d = 10)", _diabetes, {"bounds": (-0.2, 0.2), "bounds_y": (0.0, 400.0)}),
)


def run(quick=False):
    rows = []
    for setting in ("defaults", "public bounds"):
        for name, data, bounds in CASES:
            rows.append(_row(name, data, setting, bounds if setting == "public bounds" else {}, quick))
    return rows


def _row(name, data, setting, params, quick):
    """Test R² and depths of RandomForestRegressor(**params) over the seeds."""
    scores, depths = [], []
    for seed in (0,) if quick else (0, 1, 2):
        X, X_test, y, y_test = data(seed)
        forest = RandomForestRegressor(random_state=seed, **params).fit(X, y)
        scores.append(r2_score(y_test, forest.predict(X_test)))
        depths.append(forest.max_depth_)
    return {
        "data": name,
        "setting": setting,
        "mean R²": f"{np.mean(scores):.3f}",
        "R² per seed": ", ".join(f"{s:.3f}" for s in scores),
        "max_depth_": ", ".join(str(d) for d in depths),
    }


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
