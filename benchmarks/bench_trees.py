# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random decision trees and forests: design choices and predict throughput.

The forest's and the single tree's accuracy against diffprivlib and scikit-learn (every
ε, both datasets) is in ``bench_accuracy.py``; the fit time of 100 trees of depth 10 at
10⁴–10⁶ rows against scikit-learn's and diffprivlib's forests (target at 10⁶ × 20: under
0.1× scikit-learn) is in ``bench_fit_time.py``. This benchmark has what only the trees
need:

* Design table at ε = 1, on the same data and public bounds as ``bench_accuracy.py``
  (Adult: the standard train/test split, X in [0, 1]^107; breast_cancer: its fixed
  stratified 75/25 split, features scaled to [0, 1] with the published ranges), mean over
  10 seeds (3 with ``--quick``; the seed drives the trees and the noise): the budget
  across trees — each tree on its own random part of the rows at ε (dpsk's choice)
  against every tree on every row at ε/N — and how the trees' votes are combined
  (Jagannathan et al.'s sum of counts, and dpsk's weighted log-likelihood ratios for
  several ``evidence_weight``; post-processing: the same fits scored each way), for a few
  numbers of trees and depths.
* Predict throughput (rows/s) of same-size forests (100 trees, depth 10, ``n_jobs=1``)
  on 2·10⁵ rows of synthetic data (uniform features in [0, 1]^20, a noisy label from
  the first two); dpsk's forest is fitted on 10⁶ rows, scikit-learn's on a subsample
  (10⁵ rows; 2·10⁴ with ``--quick``) so that fitting it stays short (its trees still
  reach depth 10). Target: at least scikit-learn's.

Run: ``python benchmarks/bench_trees.py [--quick]``.
"""

import numpy as np
from _family_common import best_seconds, main
from bench_accuracy import adult, breast_cancer
from sklearn.ensemble import RandomForestClassifier as SkRandomForest

from dpsk.ensemble import RandomForestClassifier


class EveryRowEveryTree(RandomForestClassifier):
    """The other budget design: every tree on every row, noise for sensitivity N (ε/N per tree)."""

    def _parts(self, rng, n_trees, n_samples):
        return None

    def _leaf_sensitivity(self, n_trees):
        return n_trees


def splits(loader):
    """(X train, X test, y train, y test) of one of ``bench_accuracy``'s datasets, X in [0, 1]."""
    views, (y, y_test), *_ = loader()
    return (*views["X"], y, y_test)


def _dp(cls, seed, **params):
    return cls(bounds=(0.0, 1.0), classes=[0, 1], random_state=seed, **params)


def sum_of_counts_score(forest, X, y):
    """Accuracy of Jagannathan et al.'s rule: the class with the largest sum over trees of
    the (clamped) noisy counts of the leaves a row reaches (post-processing)."""
    leaves = forest.apply(X)
    total = sum(np.maximum(tree.tree_.value[leaves[:, t]], 0.0) for t, tree in enumerate(forest.estimators_))
    return float(np.mean(forest.classes_[np.argmax(total, axis=1)] == y))


def design_rows(name, split, seeds, configs, weights):
    """Accuracy of both budget designs, per (n_estimators, max_depth), for each way of voting."""
    X, X_test, y, y_test = split
    rows = []
    for n_estimators, max_depth in configs:
        for cls, design in (
            (RandomForestClassifier, "disjoint parts, ε each"),
            (EveryRowEveryTree, "all rows, ε/N each"),
        ):
            scores = {w: [] for w in weights}
            jpw = []
            for seed in seeds:
                forest = _dp(cls, seed, n_estimators=n_estimators, max_depth=max_depth).fit(X, y)
                for w in weights:  # post-processing of the same release
                    scores[w].append(forest.set_params(evidence_weight=w).score(X_test, y_test))
                jpw.append(sum_of_counts_score(forest, X_test, y_test))
            row = {
                "dataset": name,
                "trees": n_estimators,
                "depth": max_depth,
                "budget": design,
                "sum of counts (JPW)": f"{np.mean(jpw):.3f}",
            }
            row.update({("w=N" if w >= 1e9 else f"w={w:g}"): f"{np.mean(s):.3f}" for w, s in scores.items()})
            rows.append(row)
    return rows


def timing_data(n, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = (X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=n) > 1.0).astype(int)
    return X, y


def predict_rows(n_fit_sklearn, n_predict, repeats):
    X, y = timing_data(1_000_000)
    X_pred = X[:n_predict]
    ours = _dp(RandomForestClassifier, 0, n_estimators=100, max_depth=10).fit(X, y)
    sk = SkRandomForest(100, max_depth=10, n_jobs=1, random_state=0).fit(X[:n_fit_sklearn], y[:n_fit_sklearn])
    depth = max(est.get_depth() for est in sk.estimators_)
    times = best_seconds({"dpsk": lambda: ours.predict(X_pred), "sklearn": lambda: sk.predict(X_pred)}, repeats)
    rate = {k: n_predict / v for k, v in times.items()}
    return [
        {
            "rows predicted": n_predict,
            "forests": "100 trees of depth 10, n_jobs=1",
            "dpsk (rows/s)": rate["dpsk"],
            "scikit-learn (rows/s)": rate["sklearn"],
            "scikit-learn fitted on": f"{n_fit_sklearn:.0e} rows (depth {depth})",
            "dpsk / scikit-learn": rate["dpsk"] / rate["sklearn"],
            "target": ">= 1",
            "met": "yes" if rate["dpsk"] >= rate["sklearn"] else "no",
        }
    ]


def run(quick=False):
    """The design table and the predict throughput (``quick``: 3 seeds, one forest size, fewer weights)."""
    seeds = list(range(3 if quick else 10))
    configs = [(20, 10)] if quick else [(10, 6), (10, 10), (20, 8), (20, 10), (50, 10)]
    weights = (1.0, 4.0, 1e9) if quick else (1.0, 2.0, 3.0, 4.0, 6.0, 1e9)
    design = [
        row
        for name, loader in (("Adult", adult), ("breast_cancer", breast_cancer))
        for row in design_rows(name, splits(loader), seeds, configs, weights)
    ]
    return [
        (
            f"Design at ε = 1: budget across trees and vote ({len(seeds)} seeds; w = evidence_weight, "
            "N = n_estimators)",
            design,
        ),
        ("Predict throughput", predict_rows(20_000 if quick else 100_000, 200_000, 3 if quick else 5)),
    ]


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
