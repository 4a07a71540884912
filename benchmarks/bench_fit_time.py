# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fit time of every estimator at n ∈ {10⁴, 10⁵, 10⁶}, d = 20: dpsk against scikit-learn and diffprivlib.

Synthetic data, generated once per n (seed 0): standard normal features (bounds
[-5, 5], row norm bound 7 for the linear classifiers, 8 for PCA), a logistic-model label
and a linear-model target (bounds [-30, 30]); ``make_blobs(n, 8 centres, 20 features)``
for k-means (bounds [-15, 15]); the signs of the features for BernoulliNB, Poisson(1)
counts (L1 bound 60) for MultinomialNB and uniform codes of 10 categories per feature for
CategoricalNB.
Every private fit is at ε = 1 (δ = 1e-5 for PCA's Analyze Gauss). "dpsk (s)", its ratios
and the targets are the production setting, ``random_state=None`` (fresh secure noise);
"dpsk seeded (s)" is the same estimator with ``random_state=0``, timed in the same rounds,
whose time includes the digest of the data that gives a seeded release its own noise
stream (BLAKE3 over all of X and y: 41 ms for 10⁶ × 20 float64 on two cores). A seed is
for tests and research, never for releases (``dpsk.utils.check_random_state``).

dpsk and scikit-learn are timed interleaved in this process (best of 7, 5 and 3 runs at
10⁴, 10⁵ and 10⁶ rows; ``--quick``: n ∈ {10⁴, 10⁵}, best of 3 and 2), so that load from
other processes affects both alike; diffprivlib 0.6.6 (where it has the estimator) runs
in its own environment in the same run, best of as many fits, each (estimator, n) with a
time limit (300 s for its PCA, whose rejection sampler slows down with n·ε; 600 s
otherwise; a time limit that stops the repeats after at least one fit keeps the best
finished fit).

Where the algorithms iterate, the comparison fixes the iterations: scikit-learn's
``newton-cholesky`` LogisticRegression runs as many Newton steps as dpsk's fit took
(``n_iter_``, tolerance 0), with dpsk's ``C_``; scikit-learn's ``lbfgs`` (its default,
``max_iter=100``) is shown beside it. KMeans: 5 Lloyd iterations on both sides (dpsk adds
its private seeding passes, scikit-learn its k-means++ initialisation, one run,
``tol=0``). diffprivlib's LogisticRegression (lbfgs, its defaults) and KMeans (its own
iteration rule from ε) cannot be given the same iterations. LinearSVC: scikit-learn's
liblinear with dpsk's ``C_`` (different solvers; for reference). RandomForestClassifier:
100 trees of depth 10 in every library (``n_jobs=1``; diffprivlib's with the same bounds
and classes). scikit-learn's forest is timed on fewer trees and its time scaled to 100
(min(100, max(4, 10⁶ / n)) trees: 100 at 10⁴, 10 at 10⁵, 4 at 10⁶, as the
"scikit-learn setting" column says): its trees are fitted one after the other,
independently, so its cost is linear in their number, and 100 trees at 10⁶ rows take
500–1,200 s a fit on a shared 2-core machine. Targets (at 10⁶ rows): GaussianNB, the
scalers and PCA within 1.2× scikit-learn (PCA also under 1 s), KMeans no slower than
scikit-learn, RandomForestClassifier under 0.1× scikit-learn.
"""

import warnings

import numpy as np
from _family_common import best_seconds, fit_time_record, main, run_diffprivlib
from sklearn.base import clone
from sklearn.cluster import KMeans as SkKMeans
from sklearn.datasets import make_blobs
from sklearn.decomposition import PCA as SkPCA
from sklearn.ensemble import RandomForestClassifier as SkRandomForestClassifier
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.linear_model import Ridge as SkRidge
from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB
from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
from sklearn.naive_bayes import GaussianNB as SkGaussianNB
from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB
from sklearn.preprocessing import MinMaxScaler as SkMinMaxScaler
from sklearn.preprocessing import StandardScaler as SkStandardScaler
from sklearn.svm import LinearSVC as SkLinearSVC

from dpsk.cluster import KMeans
from dpsk.decomposition import PCA
from dpsk.ensemble import RandomForestClassifier
from dpsk.linear_model import LinearRegression, LogisticRegression, Ridge
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB
from dpsk.preprocessing import MinMaxScaler, StandardScaler
from dpsk.svm import LinearSVC

D = 20
CLASSES = [0, 1]
LINEAR = dict(bounds_X=(-5.0, 5.0), bounds_y=(-30.0, 30.0))

DPL_FIT = """
from diffprivlib.models import (GaussianNB, KMeans, LinearRegression, LogisticRegression, PCA,
                                 RandomForestClassifier, StandardScaler)
times = []
for _ in range(int(repeats)):
    model = {constructor}
    start = time.perf_counter()
    model.fit(X, y)
    times.append(time.perf_counter() - start)
    print(json.dumps(min(times)), flush=True)
print(json.dumps(min(times)))
"""


def datasets(n):
    """The synthetic data of one n: {kind: (X, y)}."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, D))
    label = (X @ rng.normal(size=D) + rng.logistic(size=n) > 0).astype(int)
    target = X @ rng.normal(size=D) + rng.normal(size=n)
    blobs, _ = make_blobs(n, centers=8, n_features=D, random_state=0)
    return {
        "class": (X, label),
        "regression": (X, target),
        "blobs": (blobs, label),
        "binary": ((X > 0).astype(np.float64), label),
        "counts": (rng.poisson(1.0, size=(n, D)).astype(np.float64), label),
        "codes": (rng.integers(0, 10, size=(n, D)), label),
    }


def logistic(X, y):
    """dpsk's LogisticRegression and scikit-learn's solvers at dpsk's C and Newton steps."""
    ours = LogisticRegression(epsilon=1.0, data_norm=7.0, classes=CLASSES, random_state=0)
    ours.fit(X, y)  # warm-up: gives the C and the number of Newton steps to match
    C, steps = float(ours.C_), int(ours.n_iter_.max())
    return (
        ours,
        {
            "scikit-learn": SkLogisticRegression(solver="newton-cholesky", C=C, max_iter=steps, tol=0.0),
            "scikit-learn lbfgs": SkLogisticRegression(solver="lbfgs", C=C, max_iter=100),
        },
        f"newton-cholesky, {steps} Newton steps (as dpsk), C = dpsk's C_",
    )


def linear_svc(X, y):
    ours = LinearSVC(epsilon=1.0, data_norm=7.0, classes=CLASSES, random_state=0).fit(X, y)
    return ours, {"scikit-learn": SkLinearSVC(C=float(ours.C_))}, "liblinear, C = dpsk's C_ (other solver)"


def ridge(X, y):
    ours = Ridge(1.0, epsilon=1.0, random_state=0, **LINEAR)
    return ours, {"scikit-learn": SkRidge(1.0)}, "Ridge(alpha=1)"


def forest(X, y):
    """100 trees of depth 10; scikit-learn's time measured on fewer trees, scaled to 100."""
    trees = min(100, max(4, 10**6 // X.shape[0]))
    ours = RandomForestClassifier(100, max_depth=10, bounds=(-5.0, 5.0), classes=CLASSES, random_state=0)
    theirs = SkRandomForestClassifier(trees, max_depth=10, n_jobs=1, random_state=0)
    note = "100 trees of depth 10, n_jobs=1" + (f"; timed on {trees} trees, x {100 / trees:g}" if trees < 100 else "")
    return ours, {"scikit-learn": theirs}, note, {"scikit-learn": 100 / trees}


def simple(ours, theirs, note=""):
    return lambda X, y: (ours, {"scikit-learn": theirs}, note)


#: name -> (data kind, factory(X, y) -> (dpsk estimator, {label: scikit-learn estimator}, note[,
#:          {label: factor its time is multiplied by}]), diffprivlib constructor or None,
#:          target at 10⁶ rows or None)
ESTIMATORS = {
    "LogisticRegression": ("class", logistic, "LogisticRegression(epsilon=1.0, data_norm=7.0)", None),
    "LinearSVC": ("class", linear_svc, None, None),
    "LinearRegression": (
        "regression",
        simple(LinearRegression(epsilon=1.0, random_state=0, **LINEAR), SkLinearRegression()),
        "LinearRegression(epsilon=1.0, bounds_X=(-5.0, 5.0), bounds_y=(-30.0, 30.0))",
        None,
    ),
    "Ridge": ("regression", ridge, None, None),
    "GaussianNB": (
        "class",
        simple(GaussianNB(epsilon=1.0, bounds=(-5.0, 5.0), classes=CLASSES, random_state=0), SkGaussianNB()),
        "GaussianNB(epsilon=1.0, bounds=(-5.0, 5.0))",
        1.2,
    ),
    "BernoulliNB": (
        "binary",
        simple(BernoulliNB(epsilon=1.0, classes=CLASSES, random_state=0), SkBernoulliNB()),
        None,
        None,
    ),
    "MultinomialNB": (
        "counts",
        simple(MultinomialNB(epsilon=1.0, data_norm=60.0, classes=CLASSES, random_state=0), SkMultinomialNB()),
        None,
        None,
    ),
    "CategoricalNB": (
        "codes",
        simple(
            CategoricalNB(epsilon=1.0, n_categories=[10] * D, classes=CLASSES, random_state=0),
            SkCategoricalNB(min_categories=10),
        ),
        None,
        None,
    ),
    "KMeans": (
        "blobs",
        simple(
            KMeans(8, epsilon=1.0, bounds=(-15.0, 15.0), max_iter=5, random_state=0),
            SkKMeans(8, n_init=1, max_iter=5, tol=0.0, random_state=0),
            "5 Lloyd iterations each",
        ),
        "KMeans(8, epsilon=1.0, bounds=(-15.0, 15.0))",
        1.0,
    ),
    "PCA": (
        "class",
        simple(
            PCA(5, epsilon=1.0, delta=1e-5, data_norm=8.0, random_state=0),
            SkPCA(5),
            "dpsk (ε, δ=1e-5); diffprivlib pure ε",
        ),
        "PCA(5, epsilon=1.0, data_norm=8.0, bounds=(-8.0, 8.0))",
        1.2,
    ),
    "StandardScaler": (
        "class",
        simple(StandardScaler(epsilon=1.0, bounds=(-5.0, 5.0), random_state=0), SkStandardScaler()),
        "StandardScaler(epsilon=1.0, bounds=(-5.0, 5.0))",
        1.2,
    ),
    "MinMaxScaler": (
        "class",
        simple(MinMaxScaler(epsilon=1.0, bounds=(-5.0, 5.0), random_state=0), SkMinMaxScaler()),
        None,
        1.2,
    ),
    "RandomForestClassifier": (
        "class",
        forest,
        "RandomForestClassifier(n_estimators=100, max_depth=10, epsilon=1.0, bounds=(-5.0, 5.0), classes=[0, 1])",
        0.1,
    ),
}


def diffprivlib_seconds(constructor, X, y, repeats, timeout):
    """Best fit time of a diffprivlib estimator, or a string saying why there is none."""
    out = run_diffprivlib(
        DPL_FIT.replace("{constructor}", constructor), {"X": X, "y": y, "repeats": np.array(repeats)}, timeout=timeout
    )
    if out is None:
        return "unavailable"
    if isinstance(out, dict) and "timeout" in out:
        return min(out["partial"]) if out["partial"] else f"not finished in {timeout:g} s"
    if isinstance(out, dict):
        return f"error: {out['error']}"
    return float(out)


def rows_at(n, repeats, names=None):
    data = datasets(n)
    rows = []
    for name, (kind, factory, dpl_constructor, target) in ESTIMATORS.items():
        if names is not None and name not in names:
            continue
        X, y = data[kind]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's convergence warnings at a fixed number of steps
            seeded, theirs, note, *scale = factory(X, y)
            production = clone(seeded).set_params(random_state=None)
            times = best_seconds(
                {"dpsk": lambda est=production, X=X, y=y: est.fit(X, y)}
                | {"dpsk seeded": lambda est=seeded, X=X, y=y: est.fit(X, y)}
                | {label: (lambda est=est, X=X, y=y: est.fit(X, y)) for label, est in theirs.items()},
                repeats,
            )
        for label, factor in (scale[0] if scale else {}).items():
            times[label] *= factor
        dpl = None
        if dpl_constructor is not None:
            timeout = 300 if name == "PCA" else 600
            dpl = diffprivlib_seconds(dpl_constructor, X, y, repeats, timeout)
        extra = {"dpsk seeded (s)": times["dpsk seeded"]}
        extra |= {f"{label} (s)": times[label] for label in theirs if label != "scikit-learn"}
        row = fit_time_record(
            name, n, X.shape[1], times["dpsk"], times["scikit-learn"], dpl, **extra, **{"scikit-learn setting": note}
        )
        if target is not None and n >= 10**6:
            met = row["dpsk / scikit-learn"] <= target and (name != "PCA" or times["dpsk"] < 1.0)
            row.update(
                {"target": f"<= {target:g}x" + (" and < 1 s" if name == "PCA" else ""), "met": "yes" if met else "no"}
            )
        rows.append(row)
    return rows


def run(quick=False, sizes=None, names=None):
    """Fit-time rows, one per (estimator, n) (``quick``: n ∈ {10⁴, 10⁵})."""
    sizes = sizes or ([10**4, 10**5] if quick else [10**4, 10**5, 10**6])
    rows = []
    for n in sizes:
        repeats = (3 if n < 10**5 else 2) if quick else {10**4: 7, 10**5: 5}.get(n, 3)
        rows += rows_at(n, repeats, names)
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
