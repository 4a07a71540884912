# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Naive Bayes: accuracy against scikit-learn and diffprivlib, and fit time at 10⁶ × 20.

* GaussianNB at ε ∈ {0.5, 1, 2} on breast_cancer (80/20 splits, 10 seeds), with public
  bounds: the per-feature minimum and maximum printed in the dataset's documentation
  (``load_breast_cancer().DESCR``), never computed from the rows. Target: >= 0.85 at ε = 1.
* CategoricalNB and BernoulliNB at ε = 1 on Adult (the standard train/test split, 10
  seeds) against the 0.764 majority rate; CategoricalNB gets the eight categorical
  columns decoded from the public one-hot encoding and the five numeric columns (scaled
  to [0, 1] with public ranges) cut into 10 equal bins. diffprivlib has neither model;
  its GaussianNB is shown on the one-hot features for reference.
* Fit time of GaussianNB on 10⁶ × 20 standard normal rows, 2 classes, against
  scikit-learn's GaussianNB in the same run (interleaved, best of ``repeats``). Target:
  at most 1.2× scikit-learn.

Run: ``python benchmarks/bench_naive_bayes.py [--quick]``.
"""

import os
import re
import sys

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB
from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
from sklearn.naive_bayes import GaussianNB as SkGaussianNB

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # _family_common, next to this file
from _family_common import best_seconds, main, mean_std, run_diffprivlib  # noqa: E402

from dpsk.datasets import load_adult  # noqa: E402
from dpsk.datasets._adult import ADULT_SCHEMA  # noqa: E402
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB  # noqa: E402

DPL_GAUSSIAN_NB = """
from diffprivlib.models import GaussianNB
scores = []
for seed in seeds:
    seed = int(seed)
    clf = GaussianNB(epsilon=float(epsilon), bounds=(lower, upper), random_state=seed)
    clf.fit(X_train[seed], y_train[seed])
    scores.append(float(clf.score(X_test[seed], y_test[seed])))
print(json.dumps(scores))
"""

DPL_GAUSSIAN_NB_ADULT = """
from diffprivlib.models import GaussianNB
scores = [float(GaussianNB(epsilon=1.0, bounds=(lower, upper), random_state=int(s)).fit(X, y).score(Xt, yt)) for s in seeds]
print(json.dumps(scores))
"""


def breast_cancer_bounds():
    """The documented per-feature minimum and maximum (the DESCR's summary table)."""
    data = load_breast_cancer()
    rows = re.findall(r"^([a-z ()]+):\s+([0-9.]+)\s+([0-9.]+)\s*$", data.DESCR, re.M)
    if len(rows) != data.data.shape[1]:
        raise RuntimeError("could not read the documented ranges of breast_cancer")
    return np.array([float(r[1]) for r in rows]), np.array([float(r[2]) for r in rows])


def breast_cancer_rows(seeds, epsilons):
    data = load_breast_cancer()
    lower, upper = breast_cancer_bounds()
    splits = [train_test_split(data.data, data.target, test_size=0.2, random_state=s) for s in seeds]
    sklearn_scores = [SkGaussianNB().fit(a, c).score(b, d) for a, b, c, d in splits]
    rows = []
    for epsilon in epsilons:
        ours = [
            GaussianNB(epsilon=epsilon, bounds=(lower, upper), classes=[0, 1], random_state=s).fit(a, c).score(b, d)
            for s, (a, b, c, d) in zip(seeds, splits)
        ]
        # The splits, stacked (every split has the same size), indexed by seed (0, 1, ...).
        stacked = [np.stack([split[i] for split in splits]) for i in range(4)]
        arrays = dict(zip(["X_train", "X_test", "y_train", "y_test"], stacked))
        arrays.update(seeds=np.array(seeds), epsilon=np.array(epsilon), lower=lower, upper=upper)
        dpl = run_diffprivlib(DPL_GAUSSIAN_NB, arrays, timeout=600)
        rows.append({
            "benchmark": "GaussianNB, breast_cancer", "epsilon": epsilon, "dpsk": mean_std(ours),
            "diffprivlib": mean_std(dpl) if isinstance(dpl, list) else dpl, "scikit-learn": mean_std(sklearn_scores),
            "target": ">= 0.85" if epsilon == 1.0 else "",
            "met": ("yes" if np.mean(ours) >= 0.85 else "no") if epsilon == 1.0 else "",
        })
    return rows


def adult_codes(X, bins=10):
    """Category codes of Adult from its public one-hot encoding; numeric columns in equal bins."""
    n_numeric = len(ADULT_SCHEMA["numeric"])
    columns = [np.minimum((X[:, j] * bins).astype(int), bins - 1) for j in range(n_numeric)]
    start = n_numeric
    sizes = [bins] * n_numeric
    for categories in ADULT_SCHEMA["categorical"].values():
        columns.append(np.argmax(X[:, start : start + len(categories)], axis=1))
        start += len(categories)
        sizes.append(len(categories))
    return np.column_stack(columns), np.array(sizes)


def adult_rows(seeds):
    X, y = load_adult(return_X_y=True)
    Xt, yt = load_adult(subset="test", return_X_y=True)
    codes, n_categories = adult_codes(X)
    codes_t, _ = adult_codes(Xt)
    majority = max(yt.mean(), 1 - yt.mean())
    categorical = [
        CategoricalNB(epsilon=1.0, n_categories=n_categories, classes=[0, 1], random_state=s).fit(codes, y).score(codes_t, yt)
        for s in seeds
    ]
    bernoulli = [BernoulliNB(epsilon=1.0, classes=[0, 1], random_state=s).fit(X, y).score(Xt, yt) for s in seeds]
    gaussian = [GaussianNB(epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1], random_state=s).fit(X, y).score(Xt, yt) for s in seeds]
    arrays = dict(X=X, y=y, Xt=Xt, yt=yt, seeds=np.array(seeds), lower=np.zeros(X.shape[1]), upper=np.ones(X.shape[1]))
    dpl = run_diffprivlib(DPL_GAUSSIAN_NB_ADULT, arrays, timeout=600)
    target = f"> majority {majority:.3f}"
    return [
        {"benchmark": "CategoricalNB, Adult", "epsilon": 1.0, "dpsk": mean_std(categorical), "diffprivlib": "n/a",
         "scikit-learn": f"{SkCategoricalNB(min_categories=n_categories).fit(codes, y).score(codes_t, yt):.3f}",
         "target": target, "met": "yes" if np.mean(categorical) > majority else "no"},
        {"benchmark": "BernoulliNB, Adult (one-hot)", "epsilon": 1.0, "dpsk": mean_std(bernoulli), "diffprivlib": "n/a",
         "scikit-learn": f"{SkBernoulliNB().fit(X, y).score(Xt, yt):.3f}",
         "target": target, "met": "yes" if np.mean(bernoulli) > majority else "no"},
        {"benchmark": "GaussianNB, Adult (one-hot; reference)", "epsilon": 1.0, "dpsk": mean_std(gaussian),
         "diffprivlib": mean_std(dpl) if isinstance(dpl, list) else dpl,
         "scikit-learn": f"{SkGaussianNB().fit(X, y).score(Xt, yt):.3f}"},
    ]


def timing_rows(n, repeats):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 20))
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    ours = GaussianNB(epsilon=1.0, bounds=(-5.0, 5.0), classes=[0, 1], random_state=0)
    times = best_seconds({"dpsk": lambda: ours.fit(X, y), "sklearn": lambda: SkGaussianNB().fit(X, y)}, repeats)
    ratio = times["dpsk"] / times["sklearn"]
    return [{
        "benchmark": f"GaussianNB fit time, {n:.0e} x 20", "dpsk": f"{times['dpsk']:.3f} s",
        "scikit-learn": f"{times['sklearn']:.3f} s", "ratio": f"{ratio:.2f}", "target": "<= 1.2x",
        "met": ("yes" if ratio <= 1.2 else "no") if n >= 1_000_000 else "(target at 1e6 rows)",
    }]


def run(quick=False):
    """Rows of the naive Bayes benchmark (``quick``: 3 seeds, 10⁵ rows for timing)."""
    seeds = list(range(3 if quick else 10))
    rows = breast_cancer_rows(seeds, [1.0] if quick else [0.5, 1.0, 2.0])
    rows += adult_rows(seeds)
    rows += timing_rows(100_000 if quick else 1_000_000, 3 if quick else 7)
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
