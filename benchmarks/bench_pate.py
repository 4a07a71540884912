# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Any scikit-learn model made private: PATEClassifier and SubsampleAggregate.

* **PATE on Adult** (``dpsk.datasets.load_adult``): private = the training split (32,561
  rows); public = a fixed random half of the test split, *unlabelled*; accuracy on the
  other half. Teachers: scikit-learn's ``LogisticRegression(max_iter=1000)`` and
  ``HistGradientBoostingClassifier()``, GNMax at δ = 1e-5, the student a clone of the
  teacher; PATE's defaults otherwise: 250 teachers, ``max_queries="auto"`` (the
  data-independent rule of ``dpsk.ensemble._pate``), the student on the labelled rows;
  next to the same with the number of queries of the previous rule (``previous_rule``:
  the noise per count held at ``n_teachers / (2√2)``), same run. Next to: the same
  scikit-learn models fitted on all private rows (non-private), dpsk's
  ``LogisticRegression`` at the same (ε, δ) (``data_norm=√13``, as in
  bench_accuracy.py), and the majority class. HistGradientBoosting teachers at ε = 1 only.
* **breast_cancer** (published ranges, as bench_accuracy.py; 75/25 split, the test part
  halved into public and evaluation) and **digits** (``load_digits``, 10 classes, pixels
  in [0, 16] by construction, same split), LogisticRegression teachers, 20 of them, with
  the default ``max_queries="auto"``, the previous rule's number of queries, and every
  public row queried (``max_queries=None``).
* **SubsampleAggregate** with scikit-learn's ``HuberRegressor`` inside on
  ``make_regression(20000, 20)`` (75/25 split), ε = 1: R² next to dpsk's
  ``LinearRegression`` and scikit-learn's non-private models. Public boxes from the
  generator's documentation: X standard normal (``bounds_X=(-4, 4)``), coefficients in
  [0, 100] (``bounds=(-100, 100)`` for coefficients and intercept), y = Xβ with
  Var(y) = Σβ² <= 10⁵ (``bounds_y=(-1000, 1000)``).

Mean ± standard deviation over ``SEEDS`` seeds of PATE's ``random_state`` (partition,
query subset, noise) and of dpsk's ``LogisticRegression``; the splits are fixed. The
random stream of a seed also depends on the other parameters (``max_queries`` among
them), so two rows with the same number of queries are independent repetitions.
``--quick`` runs ε = 1 only, with 2 seeds.

Run: ``python benchmarks/bench_pate.py [--quick]``.
"""

import math
import sys
import time
import warnings

import numpy as np
from _family_common import main
from bench_accuracy import documented_ranges
from sklearn.datasets import load_breast_cancer, load_digits, make_regression
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import HuberRegressor
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from dpsk.accounting import get_epsilon
from dpsk.datasets import load_adult
from dpsk.ensemble import PATEClassifier, SubsampleAggregate, _pate
from dpsk.linear_model import LinearRegression, LogisticRegression

DELTA = 1e-5
#: Seeds per PATE cell (each Adult fit with HistGradientBoosting teachers takes a minute or more).
SEEDS = 5


def previous_rule(n_teachers, epsilon, n_public, delta=DELTA):
    """The number of queries of the former ``max_queries="auto"`` (kept here for before/after).

    The most GNMax queries (at most ``n_public``, at least 10) whose calibrated noise keeps
    a standard deviation of at most ``n_teachers / (2√2)`` per count.
    """
    sigma = n_teachers / (2.0 * math.sqrt(2.0))

    def fits(n_queries):
        return get_epsilon(_pate._vote_event("gnmax", n_queries, sigma), delta) <= epsilon

    lo, hi = 0, n_public + 1  # fits(lo) (no query is free); bisection on the integers
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return max(lo, min(10, n_public))


def _halves(X, y, seed=0):
    """Public (unlabelled) half and evaluation half of a test set."""
    X_public, X_eval, _, y_eval = train_test_split(X, y, test_size=0.5, random_state=seed, stratify=y)
    return X_public, X_eval, y_eval


def _breast_cancer():
    """breast_cancer scaled with its published ranges (bench_accuracy.py), split 75/25."""
    lower, upper = documented_ranges()
    data = load_breast_cancer()
    X = np.clip((data.data - lower) / (upper - lower), 0.0, 1.0)
    return train_test_split(X, data.target, test_size=0.25, random_state=0, stratify=data.target)


def _pate_row(dataset, name, teacher, X, y, X_public, X_eval, y_eval, epsilon, classes, seeds, label="", **params):
    start = time.perf_counter()
    scores, queries, sigmas = [], set(), set()
    for seed in seeds:
        clf = PATEClassifier(teacher, epsilon=epsilon, delta=DELTA, classes=classes, random_state=seed, **params)
        clf.fit(X, y, X_public=X_public)
        scores.append(clf.score(X_eval, y_eval))
        queries.add(clf.n_queries_)
        sigmas.add(round(clf.sigma_, 1))
    return _progress(
        {
            "dataset": dataset,
            "model": f"PATE, {name} teachers{label}",
            "epsilon": epsilon,
            "accuracy": _mean_sd(scores),
            "seeds": len(scores),
            "sigma": ", ".join(map(str, sorted(sigmas))),
            "teachers": clf.n_teachers,
            "queries": ", ".join(map(str, sorted(queries))),
            "fit (s, each)": round((time.perf_counter() - start) / len(scores), 1),
        }
    )


def _mean_sd(scores):
    return f"{np.mean(scores):.3f} ± {np.std(scores):.3f}"


def _reference(dataset, model, accuracy, epsilon=math.inf):
    return _progress({"dataset": dataset, "model": model, "epsilon": epsilon, "accuracy": accuracy})


def _progress(row):
    """Each row on stderr as soon as it is measured (the whole run takes minutes)."""
    print(row, file=sys.stderr, flush=True)
    return row


def adult_rows(epsilons, seeds):
    X, y = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    X_public, X_eval, y_eval = _halves(X_test, y_test)
    lr = SkLogisticRegression(max_iter=1000)
    hgb = HistGradientBoostingClassifier()
    rows = [
        _reference("Adult", "majority class", max(np.mean(y_eval), 1 - np.mean(y_eval))),
        _reference("Adult", "scikit-learn LogisticRegression (non-private)", lr.fit(X, y).score(X_eval, y_eval)),
        _reference("Adult", "scikit-learn HistGradientBoosting (non-private)", hgb.fit(X, y).score(X_eval, y_eval)),
    ]
    data = (X, y, X_public, X_eval, y_eval)
    n_public = X_public.shape[0]
    for epsilon in epsilons:
        scores = [
            LogisticRegression(epsilon=epsilon, delta=DELTA, data_norm=math.sqrt(13), classes=[0, 1], random_state=seed)
            .fit(X, y)
            .score(X_eval, y_eval)
            for seed in seeds
        ]
        rows.append(_reference("Adult", f"dpsk LogisticRegression (δ={DELTA:g})", _mean_sd(scores), epsilon))
        teachers = (
            (("LogisticRegression", lr),)
            if epsilon != 1.0
            else (("LogisticRegression", lr), ("HistGradientBoosting", hgb))
        )
        for name, teacher in teachers:  # the slow teachers at ε = 1 only
            rows.append(_pate_row("Adult", name, teacher, *data, epsilon, [0, 1], seeds))
            previous = previous_rule(250, epsilon, n_public)
            rows.append(
                _pate_row(
                    "Adult", name, teacher, *data, epsilon, [0, 1], seeds, ", previous rule", max_queries=previous
                )
            )
    return rows


def _digits():
    """digits, pixels in [0, 16] by construction scaled to [0, 1], split 75/25."""
    digits = load_digits()
    return train_test_split(digits.data / 16.0, digits.target, test_size=0.25, random_state=0, stratify=digits.target)


def small_rows(epsilons, seeds):
    rows = []
    lr = SkLogisticRegression(max_iter=1000)
    for dataset, split, classes in (("breast_cancer", _breast_cancer(), [0, 1]), ("digits", _digits(), np.arange(10))):
        X, X_test, y, y_test = split
        X_public, X_eval, y_eval = _halves(X_test, y_test)
        score = lr.fit(X, y).score(X_eval, y_eval)
        rows.append(_reference(dataset, "scikit-learn LogisticRegression (non-private)", score))
        data = (X, y, X_public, X_eval, y_eval)
        for epsilon in epsilons:
            variants = (
                ("", {}),
                (", previous rule", {"max_queries": previous_rule(20, epsilon, X_public.shape[0])}),
                (", every public row queried", {"max_queries": None}),
            )
            for label, params in variants:
                rows.append(
                    _pate_row(
                        dataset,
                        "LogisticRegression",
                        lr,
                        *data,
                        epsilon,
                        classes,
                        seeds,
                        label,
                        n_teachers=20,
                        **params,
                    )
                )
    return rows


def subsample_rows(epsilon=1.0):
    X, y = make_regression(20000, 20, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    rows = []
    for name, model in (
        ("scikit-learn HuberRegressor (non-private)", HuberRegressor(max_iter=1000)),
        ("scikit-learn LinearRegression (non-private)", SkLinearRegression()),
        (
            "dpsk LinearRegression",
            LinearRegression(epsilon=epsilon, bounds_X=(-4, 4), bounds_y=(-1000, 1000), random_state=0),
        ),
    ):
        start = time.perf_counter()
        model.fit(X_train, y_train)
        rows.append(
            _progress(
                {
                    "model": name,
                    "epsilon": math.inf if "non-private" in name else epsilon,
                    "R²": r2_score(y_test, model.predict(X_test)),
                    "fit (s)": round(time.perf_counter() - start, 1),
                }
            )
        )
    for n_parts, delta in ((300, 0.0), (300, DELTA)):
        start = time.perf_counter()
        reg = SubsampleAggregate(
            HuberRegressor(max_iter=1000),
            n_parts=n_parts,
            bounds=(-100, 100),
            epsilon=epsilon,
            delta=delta,
            random_state=0,
        )
        reg.fit(X_train, y_train)
        rows.append(
            _progress(
                {
                    "model": f"SubsampleAggregate(HuberRegressor), {n_parts} parts, δ={delta:g}",
                    "epsilon": epsilon,
                    "R²": r2_score(y_test, reg.predict(X_test)),
                    "fit (s)": round(time.perf_counter() - start, 1),
                }
            )
        )
    return rows


def run(quick=False):
    """PATE accuracy tables and the subsample-and-aggregate R² table."""
    epsilons = [1.0] if quick else [0.5, 1.0, 2.0, 5.0]
    seeds = range(2 if quick else SEEDS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            ("SubsampleAggregate on make_regression(20000, 20): held-out R²", subsample_rows()),
            (f"PATE on Adult: test accuracy on the evaluation half ({len(seeds)} seeds)", adult_rows(epsilons, seeds)),
            (f"PATE on breast_cancer and digits ({len(seeds)} seeds)", small_rows(epsilons, seeds)),
        ]


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
