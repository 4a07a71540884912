# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random decision trees and forests: accuracy against diffprivlib and scikit-learn, design choices, speed.

* Accuracy at ε = 1 on Adult (standard train/test split, all 107 features in [0, 1] with
  public ranges) and breast_cancer (80/20 splits, features min–max scaled with the
  ranges documented in ``load_breast_cancer().DESCR``, then public bounds [0, 1]), 10
  seeds: dpsk's RandomForestClassifier (defaults) and DecisionTreeClassifier, diffprivlib's
  RandomForestClassifier (its defaults, same bounds and classes), scikit-learn's
  non-private forest for reference. Targets: Adult >= 0.80 (majority rate 0.764),
  breast_cancer >= 0.85.
* Design table (same seeds): the budget across trees — each tree on its own random part
  of the rows at ε (dpsk's choice) against every tree on every row at ε/N — and how the
  trees' votes are combined (Jagannathan et al.'s sum of counts, and dpsk's weighted
  log-likelihood ratios for several ``evidence_weight``; post-processing: the same fits
  scored each way), for a few numbers of trees and depths.
* Fit time at 10⁶ × 20 with 100 trees of depth 10 against scikit-learn's
  RandomForestClassifier(n_estimators=100, max_depth=10) and diffprivlib's forest of the
  same size. scikit-learn's time is measured on fewer trees and scaled to 100 (its trees
  are fitted independently, so the cost is linear in their number; stated in the row).
  Target: dpsk < 0.1x scikit-learn.
* Predict throughput (rows/s) of the same-size forests (100 trees, depth 10) on 2·10⁵
  rows; scikit-learn's forest is fitted on a subsample so that fitting it stays short
  (its trees still reach depth 10). Target: at least scikit-learn's.

Run: ``python benchmarks/bench_trees.py [--quick]``.
"""

import os
import sys
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier as SkRandomForest
from sklearn.model_selection import train_test_split

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # _family_common, next to this file
from _family_common import best_seconds, main, mean_std, run_diffprivlib  # noqa: E402
from bench_naive_bayes import breast_cancer_bounds  # noqa: E402

from dpsk.datasets import load_adult  # noqa: E402
from dpsk.ensemble import RandomForestClassifier  # noqa: E402
from dpsk.tree import DecisionTreeClassifier  # noqa: E402

DPL_FOREST_SCORES = """
from diffprivlib.models import RandomForestClassifier
scores = []
for i, seed in enumerate(seeds):
    clf = RandomForestClassifier(epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1], random_state=int(seed))
    clf.fit(X_train[i], y_train[i])
    scores.append(float(clf.score(X_test[i], y_test[i])))
print(json.dumps(scores))
"""

DPL_FOREST_FIT_TIME = """
from diffprivlib.models import RandomForestClassifier
clf = RandomForestClassifier(n_estimators=100, max_depth=10, epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1],
                             random_state=0)
start = time.perf_counter()
clf.fit(X, y)
print(json.dumps(time.perf_counter() - start))
"""


class EveryRowEveryTree(RandomForestClassifier):
    """The other budget design: every tree on every row, noise for sensitivity N (ε/N per tree)."""

    def _parts(self, rng, n_trees, n_samples):
        return None

    def _leaf_sensitivity(self, n_trees):
        return n_trees


def adult_splits(seeds):
    X, y = load_adult(return_X_y=True)
    Xt, yt = load_adult(subset="test", return_X_y=True)
    return [(X, Xt, y, yt)] * len(seeds)


def breast_cancer_splits(seeds):
    data = load_breast_cancer()
    lower, upper = breast_cancer_bounds()
    X = np.clip((data.data - lower) / (upper - lower), 0.0, 1.0)
    return [train_test_split(X, data.target, test_size=0.2, random_state=s) for s in seeds]


def _dp(cls, seed, **params):
    return cls(bounds=(0.0, 1.0), classes=[0, 1], random_state=seed, **params)


def accuracy_rows(name, splits, seeds, target):
    ours = [_dp(RandomForestClassifier, s).fit(a, c).score(b, d) for s, (a, b, c, d) in zip(seeds, splits)]
    tree = [_dp(DecisionTreeClassifier, s).fit(a, c).score(b, d) for s, (a, b, c, d) in zip(seeds, splits)]
    sk = [SkRandomForest(random_state=s, n_jobs=-1).fit(a, c).score(b, d) for s, (a, b, c, d) in zip(seeds, splits)]
    stacked = [np.stack([split[i] for split in splits]) for i in range(4)]
    arrays = dict(zip(["X_train", "X_test", "y_train", "y_test"], stacked), seeds=np.array(seeds))
    dpl = run_diffprivlib(DPL_FOREST_SCORES, arrays, timeout=1200)
    y_test = splits[0][3]
    majority = max(y_test.mean(), 1 - y_test.mean())
    return [
        {"benchmark": f"{name}, RandomForestClassifier (defaults)", "epsilon": 1.0, "dpsk": mean_std(ours),
         "diffprivlib": mean_std(dpl) if isinstance(dpl, list) else dpl, "scikit-learn (non-private)": mean_std(sk),
         "majority": f"{majority:.3f}", "target": f">= {target}", "met": "yes" if np.mean(ours) >= target else "no"},
        {"benchmark": f"{name}, DecisionTreeClassifier (defaults)", "epsilon": 1.0, "dpsk": mean_std(tree),
         "majority": f"{majority:.3f}"},
    ]


def sum_of_counts_score(forest, X, y):
    """Accuracy of Jagannathan et al.'s rule: the class with the largest sum over trees of
    the (clamped) noisy counts of the leaves a row reaches (post-processing)."""
    leaves = forest.apply(X)
    total = sum(np.maximum(tree.tree_.value[leaves[:, t]], 0.0) for t, tree in enumerate(forest.estimators_))
    return float(np.mean(forest.classes_[np.argmax(total, axis=1)] == y))


def design_rows(name, splits, seeds, configs, weights):
    """Accuracy of both budget designs, per (n_estimators, max_depth), for each way of voting."""
    rows = []
    for n_estimators, max_depth in configs:
        for cls, design in ((RandomForestClassifier, "disjoint parts, ε each"), (EveryRowEveryTree, "all rows, ε/N each")):
            scores = {w: [] for w in weights}
            jpw = []
            for seed, (a, b, c, d) in zip(seeds, splits):
                forest = _dp(cls, seed, n_estimators=n_estimators, max_depth=max_depth).fit(a, c)
                for w in weights:   # post-processing of the same release
                    scores[w].append(forest.set_params(evidence_weight=w).score(b, d))
                jpw.append(sum_of_counts_score(forest, b, d))
            row = {"benchmark": f"{name}, design", "trees": n_estimators, "depth": max_depth, "budget": design,
                   "sum of counts (JPW)": f"{np.mean(jpw):.3f}"}
            row.update({("w=N" if w >= 1e9 else f"w={w:g}"): f"{np.mean(s):.3f}" for w, s in scores.items()})
            rows.append(row)
    return rows


def timing_data(n, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = (X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=n) > 1.0).astype(int)
    return X, y


def fit_time_rows(n, sk_trees, repeats, dpl_timeout):
    X, y = timing_data(n)
    ours = RandomForestClassifier(100, max_depth=10, bounds=(0.0, 1.0), classes=[0, 1], random_state=0)
    sk = SkRandomForest(sk_trees, max_depth=10, n_jobs=1, random_state=0)
    times = best_seconds({"dpsk": lambda: ours.fit(X, y), "sklearn": lambda: sk.fit(X, y)}, repeats)
    sk_100 = times["sklearn"] * 100 / sk_trees
    dpl = run_diffprivlib(DPL_FOREST_FIT_TIME, dict(X=X, y=y), timeout=dpl_timeout)
    ratio = times["dpsk"] / sk_100
    return [{
        "benchmark": f"fit time, {n:.0e} x 20, 100 trees of depth 10 (n_jobs=1)", "dpsk": f"{times['dpsk']:.3f} s",
        "scikit-learn": f"{sk_100:.1f} s (measured on {sk_trees} trees: {times['sklearn']:.1f} s, x {100 / sk_trees:g})",
        "diffprivlib": f"{dpl:.1f} s" if isinstance(dpl, float) else dpl,
        "ratio dpsk / scikit-learn": f"{ratio:.4f}", "target": "< 0.1",
        "met": ("yes" if ratio < 0.1 else "no") if n >= 1_000_000 else "(target at 1e6 rows)",
    }]


def predict_rows(n_fit_sklearn, n_predict, repeats):
    X, y = timing_data(1_000_000)
    X_pred = X[:n_predict]
    ours = RandomForestClassifier(100, max_depth=10, bounds=(0.0, 1.0), classes=[0, 1], random_state=0).fit(X, y)
    sk = SkRandomForest(100, max_depth=10, n_jobs=1, random_state=0).fit(X[:n_fit_sklearn], y[:n_fit_sklearn])
    depth = max(est.get_depth() for est in sk.estimators_)
    times = best_seconds({"dpsk": lambda: ours.predict(X_pred), "sklearn": lambda: sk.predict(X_pred)}, repeats)
    rate = {k: n_predict / v for k, v in times.items()}
    return [{
        "benchmark": f"predict throughput, 100 trees of depth 10, {n_predict:.0e} rows (n_jobs=1)",
        "dpsk": f"{rate['dpsk']:.3g} rows/s",
        "scikit-learn": f"{rate['sklearn']:.3g} rows/s (fitted on {n_fit_sklearn:.0e} rows, depth {depth})",
        "ratio dpsk / scikit-learn": f"{rate['dpsk'] / rate['sklearn']:.2f}", "target": ">= 1",
        "met": "yes" if rate["dpsk"] >= rate["sklearn"] else "no",
    }]


def run(quick=False):
    """Rows of the trees benchmark (``quick``: 3 seeds, 10⁵ rows for timing, a smaller design table)."""
    seeds = list(range(3 if quick else 10))
    adult, cancer = adult_splits(seeds), breast_cancer_splits(seeds)
    rows = accuracy_rows("Adult", adult, seeds, 0.80)
    rows += accuracy_rows("breast_cancer", cancer, seeds, 0.85)
    configs = [(20, 10)] if quick else [(10, 6), (10, 10), (20, 8), (20, 10), (50, 10)]
    weights = (1.0, 4.0, 1e9) if quick else (1.0, 2.0, 3.0, 4.0, 6.0, 1e9)
    rows += design_rows("Adult", adult, seeds, configs, weights)
    rows += design_rows("breast_cancer", cancer, seeds, configs, weights)
    start = time.perf_counter()
    rows += fit_time_rows(100_000 if quick else 1_000_000, 2 if quick else 10, 1 if quick else 3, 120 if quick else 1800)
    rows += predict_rows(20_000 if quick else 100_000, 200_000, 3 if quick else 5)
    print(f"(timing rows took {time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
