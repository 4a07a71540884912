# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random forest regressor: R² against scikit-learn's forest, and fit time.

* R² on a held-out test set, mean ± standard deviation over 10 seeds (3 with
  ``--quick``; the seed drives the trees, the partition of rows and the noise, and for
  diabetes the 75/25 split), at ε ∈ {0.5, 1, 5}, against scikit-learn's
  ``RandomForestRegressor()`` (100 greedy trees, non-private) on the same split:

  - Friedman #1 (``make_friedman1``, 20 000 training and 5 000 test rows, 10 features,
    noise 1): X is uniform on [0, 1]^10 by construction (``bounds=(0, 1)``); y = 10
    sin(π x₀x₁) + 20 (x₂ − ½)² + 10 x₃ + 5 x₄ + noise lies in [0, 30] plus Gaussian
    noise of standard deviation 1, so ``bounds_y=(-5, 35)`` (five standard deviations
    of margin) is known from the generating formula, not from the rows.
  - diabetes (``load_diabetes``, 442 rows, 10 features): scikit-learn documents each
    column as mean-centred and scaled to unit Euclidean norm, so a value 4 standard
    deviations from the mean is 4/√442 ≈ 0.19: ``bounds=(-0.2, 0.2)``. The target is
    "a quantitative measure of disease progression one year after baseline" (observed
    25–346); ``bounds_y=(0, 400)`` is a generous rounded range that a domain expert
    would give. Both are public-ish metadata, not computed from the rows.

  dpsk at its defaults (20 trees, depth ``min(10, ceil(d/2))`` = 5) and with 10 trees of
  depth 10 (Friedman) or 10 trees of depth 3 (diabetes, 330 training rows).
* Fit time at 10⁶ rows × 20 features (uniform in [0, 1], y from Friedman's formula on
  the first 5), 100 trees of depth 10, ``n_jobs=1``. scikit-learn's greedy forest of
  that size takes many minutes on this data: it is measured with 10 trees on a 10⁵-row
  subsample (``--quick``: 2·10⁴) and reported as measured, next to dpsk's 10-tree fit on
  the same subsample for a like-for-like ratio.

Run: ``python benchmarks/bench_forest_regressor.py [--quick]``.
"""

import numpy as np
from _family_common import best_seconds, main
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.ensemble import RandomForestRegressor as SkRandomForest
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from dpsk.ensemble import RandomForestRegressor

EPSILONS = (0.5, 1.0, 5.0)


def friedman(seed):
    X, y = make_friedman1(n_samples=20_000, n_features=10, noise=1.0, random_state=seed)
    X_test, y_test = make_friedman1(n_samples=5_000, n_features=10, noise=1.0, random_state=10_000 + seed)
    return X, X_test, y, y_test


def diabetes(seed):
    X, y = load_diabetes(return_X_y=True)
    return train_test_split(X, y, test_size=0.25, random_state=seed)


DATASETS = {
    "Friedman #1": (friedman, dict(bounds=(0.0, 1.0), bounds_y=(-5.0, 35.0)), dict(n_estimators=10, max_depth=10)),
    "diabetes": (diabetes, dict(bounds=(-0.2, 0.2), bounds_y=(0.0, 400.0)), dict(n_estimators=10, max_depth=3)),
}


def _summary(scores):
    return f"{np.mean(scores):.3f} ± {np.std(scores):.3f}"


def accuracy_rows(seeds):
    rows = []
    for name, (load, public, tuned) in DATASETS.items():
        splits = [load(seed) for seed in seeds]
        sk = [
            r2_score(yt, SkRandomForest(random_state=s, n_jobs=1).fit(X, y).predict(Xt))
            for s, (X, Xt, y, yt) in zip(seeds, splits)
        ]
        for label, params in (("defaults", {}), (", ".join(f"{k}={v}" for k, v in tuned.items()), tuned)):
            row = {"dataset": name, "dpsk forest": label}
            for epsilon in EPSILONS:
                scores = [
                    r2_score(
                        yt,
                        RandomForestRegressor(epsilon=epsilon, random_state=s, **public, **params)
                        .fit(X, y)
                        .predict(Xt),
                    )
                    for s, (X, Xt, y, yt) in zip(seeds, splits)
                ]
                row[f"R² ε={epsilon:g}"] = _summary(scores)
            row["scikit-learn (non-private)"] = _summary(sk)
            rows.append(row)
    return rows


def timing_data(n, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    return X, y + rng.normal(size=n)


def fit_time_rows(n_sklearn, repeats):
    X, y = timing_data(1_000_000)
    Xs, ys = X[:n_sklearn], y[:n_sklearn]
    public = dict(bounds=(0.0, 1.0), bounds_y=(-5.0, 35.0), max_depth=10, n_jobs=1, random_state=0)
    times = best_seconds(
        {
            "dpsk 100 trees, 1e6 rows": lambda: RandomForestRegressor(100, **public).fit(X, y),
            "dpsk 10 trees, subsample": lambda: RandomForestRegressor(10, **public).fit(Xs, ys),
        },
        repeats,
    )
    times.update(
        best_seconds(
            {
                "sklearn 10 trees, subsample": lambda: SkRandomForest(10, max_depth=10, n_jobs=1, random_state=0).fit(
                    Xs, ys
                ),
            },
            1,
        )
    )
    return [
        {
            "fit": "100 trees of depth 10, 10⁶ × 20",
            "dpsk (s)": times["dpsk 100 trees, 1e6 rows"],
            "scikit-learn (s)": "not run (see below)",
        },
        {
            "fit": f"10 trees of depth 10, {n_sklearn:.0e} × 20",
            "dpsk (s)": times["dpsk 10 trees, subsample"],
            "scikit-learn (s)": times["sklearn 10 trees, subsample"],
        },
    ]


def run(quick=False):
    """R² table and fit times (``quick``: 3 seeds, a smaller scikit-learn subsample)."""
    seeds = list(range(3 if quick else 10))
    return [
        (f"R² on held-out data ({len(seeds)} seeds, mean ± sd)", accuracy_rows(seeds)),
        ("Fit time, n_jobs=1", fit_time_rows(20_000 if quick else 100_000, 1 if quick else 3)),
    ]


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
