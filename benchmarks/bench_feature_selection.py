# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private feature selection on breast_cancer: SelectKBest(k=5) → LogisticRegression at total ε = 1.

Data as in ``bench_accuracy.py``: a fixed stratified 75/25 split, features min–max scaled
with the ranges published in the dataset's description (public metadata), clipped to
[0, 1] and centred by the public 0.5. Rows:

* dpsk ``LogisticRegression`` alone at ε = 1 on all 30 features (``data_norm`` = √30/2,
  ``bounds`` = (−0.5, 0.5));
* a ``dpsk.pipeline`` of ``SelectKBest(k=5, epsilon=ε_sel)`` and ``LogisticRegression``
  at ε = 1 − ε_sel on the 5 selected features (``data_norm`` = √5/2), for a few splits of
  the same total ε = 1 (each pipeline is charged ε_sel + (1 − ε_sel) <= 1 on one
  accountant: checked for every fit);
* scikit-learn's non-private LogisticRegression on all features, for reference.

Held-out accuracy, mean ± standard deviation over 20 seeds (5 with ``--quick``); the seed
drives the privacy noise only. Run: ``python benchmarks/bench_feature_selection.py``.
"""

import math
import time

import numpy as np
from _family_common import main
from bench_accuracy import documented_ranges
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.model_selection import train_test_split

from dpsk.accounting import BudgetAccountant
from dpsk.feature_selection import SelectKBest
from dpsk.linear_model import LogisticRegression
from dpsk.pipeline import make_pipeline

TOTAL_EPSILON = 1.0
K = 5
SELECTION_SHARES = (0.1, 0.2, 0.3)


def data():
    X, y = load_breast_cancer(return_X_y=True)
    lower, upper = documented_ranges()
    X = np.clip((X - lower) / (upper - lower), 0.0, 1.0) - 0.5
    return train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)


def logistic(epsilon, n_features, seed):
    return LogisticRegression(
        epsilon=epsilon,
        data_norm=math.sqrt(n_features) / 2,
        bounds=(-0.5, 0.5),
        classes=[0, 1],
        random_state=seed,
    )


def pipeline(share, seed):
    return make_pipeline(
        SelectKBest(k=K, epsilon=share * TOTAL_EPSILON, bounds=(-0.5, 0.5), random_state=seed),
        logistic((1 - share) * TOTAL_EPSILON, K, seed),
    )


def _accuracy(make, seeds, X, y, X_test, y_test):
    scores = []
    start = time.perf_counter()
    for seed in seeds:
        accountant = BudgetAccountant(epsilon=TOTAL_EPSILON)
        with accountant:
            model = make(seed).fit(X, y)
        assert accountant.total().epsilon <= TOTAL_EPSILON
        scores.append(model.score(X_test, y_test))
    return float(np.mean(scores)), float(np.std(scores)), time.perf_counter() - start


def run(quick=False):
    """One row per model: held-out accuracy at total ε = 1."""
    X, X_test, y, y_test = data()
    seeds = range(5 if quick else 20)
    rows = []
    models = {f"LogisticRegression (ε = {TOTAL_EPSILON:g}, 30 features)": lambda s: logistic(TOTAL_EPSILON, 30, s)}
    for share in SELECTION_SHARES:
        label = f"SelectKBest(k={K}, ε = {share:g}) → LogisticRegression (ε = {1 - share:g})"
        models[label] = lambda s, share=share: pipeline(share, s)
    for name, make in models.items():
        mean, std, seconds = _accuracy(make, seeds, X, y, X_test, y_test)
        rows.append(
            {
                "model": name,
                "accuracy": round(mean, 3),
                "std": round(std, 3),
                "seeds": len(seeds),
                "time (s)": round(seconds, 2),
            }
        )
    reference = SkLogisticRegression(max_iter=1000).fit(X, y).score(X_test, y_test)
    rows.append(
        {
            "model": "scikit-learn LogisticRegression (non-private)",
            "accuracy": round(reference, 3),
            "std": 0.0,
            "seeds": 1,
            "time (s)": "",
        }
    )
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
