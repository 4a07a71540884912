# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""LinearRegression accuracy against scikit-learn and diffprivlib (markdown table).

``make_regression(25000, 20, noise=10)`` (20000 train, 5000 test rows, the model's seed
fixed; 20 noise seeds, 2 with ``--quick``) at ε = 1 with the stated bounds
``bounds_X = (-4, 4)``, ``bounds_y = (-700, 700)`` (and dpsk's optional ``row_norm = 6``),
median and minimum test R²; a fit "diverged" if R² < 0. diffprivlib 0.6.6's
LinearRegression with the same bounds in the same run.

The classifiers' accuracy (LogisticRegression, LinearSVC on Adult and breast_cancer) is
in ``bench_accuracy.py``; fit times of every estimator in ``bench_fit_time.py``.

Run: ``python benchmarks/bench_linear.py [--quick]``.
"""

import numpy as np
from _family_common import diffprivlib_cell, main, run_diffprivlib
from sklearn.datasets import make_regression
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.metrics import r2_score

from dpsk.linear_model import LinearRegression

DPL_LINEAR = """
from diffprivlib.models import LinearRegression
from sklearn.metrics import r2_score
out = []
for seed in seeds:
    reg = LinearRegression(epsilon=1.0, bounds_X=(-4.0, 4.0), bounds_y=(-700.0, 700.0), random_state=int(seed))
    out.append(float(r2_score(y_test, reg.fit(X_train, y_train).predict(X_test))))
print(json.dumps(out))
"""


def describe(r2):
    r2 = np.asarray(r2)
    return f"median {np.median(r2):.4g}, min {np.min(r2):.4g}, diverged {int(np.sum(r2 < 0))}/{r2.size}"


def run(quick=False):
    """Test R² of LinearRegression at ε = 1 (``quick``: 2 seeds instead of 20)."""
    seeds = list(range(2 if quick else 20))
    X, y = make_regression(25000, 20, noise=10, random_state=0)
    X_train, X_test, y_train, y_test = X[:20000], X[20000:], y[:20000], y[20000:]
    bounds = dict(bounds_X=(-4.0, 4.0), bounds_y=(-700.0, 700.0))
    baseline = r2_score(y_test, SkLinearRegression().fit(X_train, y_train).predict(X_test))
    rows = [{"model": "scikit-learn LinearRegression (non-private)", "epsilon": np.inf, "test R²": f"{baseline:.4f}"}]
    for label, extra in (
        ("dpsk LinearRegression", {}),
        ("dpsk LinearRegression, row_norm=6", {"row_norm": 6.0}),
        ("dpsk LinearRegression, δ=1e-5", {"delta": 1e-5}),
        ("dpsk LinearRegression, δ=1e-5, row_norm=6", {"delta": 1e-5, "row_norm": 6.0}),
    ):
        r2 = [
            r2_score(
                y_test,
                LinearRegression(epsilon=1.0, random_state=seed, **bounds, **extra)
                .fit(X_train, y_train)
                .predict(X_test),
            )
            for seed in seeds
        ]
        rows.append({"model": label, "epsilon": 1.0, "test R²": describe(r2)})
    dpl = run_diffprivlib(
        DPL_LINEAR, dict(X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test, seeds=np.array(seeds))
    )
    rows.append({"model": "diffprivlib LinearRegression", "epsilon": 1.0, "test R²": diffprivlib_cell(dpl, describe)})
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
