# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Any scikit-learn model made private: PATEClassifier and SubsampleAggregate.

* **PATE on Adult** (``dpsk.datasets.load_adult``): private = the training split (32,561
  rows); public = a fixed random half of the test split, *unlabelled*; accuracy on the
  other half. Teachers: scikit-learn's ``LogisticRegression(max_iter=1000)`` and
  ``HistGradientBoostingClassifier()``, GNMax at δ = 1e-5, the student a clone of the
  teacher. Settings (``N_TEACHERS``, ``MAX_QUERIES``) were guided by a sweep on a split
  of the *training* data only (75% private, 25% as public pool and validation), never
  on the evaluation half; that sweep tried 100 teachers at T ∈ {100, 300, 1000, 4000}
  and 250 teachers at T = 100, so the pair 250/300 itself is a judgement call between
  them, not a measured optimum. Next to: the same scikit-learn models fitted on all private rows
  (non-private), dpsk's ``LogisticRegression`` at the same (ε, δ) (``data_norm=√13``, as in
  bench_accuracy.py), and the majority class.
* **breast_cancer** (published ranges, as bench_accuracy.py; 75/25 split, the test part
  halved into public and evaluation) and **digits** (``load_digits``, 10 classes, pixels
  in [0, 16] by construction, same split), LogisticRegression teachers.
* **SubsampleAggregate** with scikit-learn's ``HuberRegressor`` inside on
  ``make_regression(20000, 20)`` (75/25 split), ε = 1: R² next to dpsk's
  ``LinearRegression`` and scikit-learn's non-private models. Public boxes from the
  generator's documentation: X standard normal (``bounds_X=(-4, 4)``), coefficients in
  [0, 100] (``bounds=(-100, 100)`` for coefficients and intercept), y = Xβ with
  Var(y) = Σβ² <= 10⁵ (``bounds_y=(-1000, 1000)``).

One seed per cell (the fits are minutes long on a shared machine); ``--quick`` runs
ε = 1 only.

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

from dpsk.datasets import load_adult
from dpsk.ensemble import PATEClassifier, SubsampleAggregate
from dpsk.linear_model import LinearRegression, LogisticRegression

#: Teachers and labelled public rows (guided by a training-split sweep, see the docstring).
N_TEACHERS = 250
MAX_QUERIES = 300
DELTA = 1e-5


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


def _pate_row(dataset, name, teacher, X, y, X_public, X_eval, y_eval, epsilon, classes, **params):
    start = time.perf_counter()
    clf = PATEClassifier(teacher, epsilon=epsilon, delta=DELTA, classes=classes, random_state=0, **params)
    clf.fit(X, y, X_public=X_public)
    return _progress(
        {
            "dataset": dataset,
            "model": f"PATE, {name} teachers",
            "epsilon": epsilon,
            "accuracy": clf.score(X_eval, y_eval),
            "sigma": round(clf.sigma_, 1),
            "teachers": clf.n_teachers,
            "queries": clf.n_queries_,
            "fit (s)": round(time.perf_counter() - start, 1),
        }
    )


def _reference(dataset, model, accuracy, epsilon=math.inf):
    return _progress({"dataset": dataset, "model": model, "epsilon": epsilon, "accuracy": accuracy})


def _progress(row):
    """Each row on stderr as soon as it is measured (the whole run takes minutes)."""
    print(row, file=sys.stderr, flush=True)
    return row


def adult_rows(epsilons):
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
    for epsilon in epsilons:
        dp_lr = LogisticRegression(
            epsilon=epsilon, delta=DELTA, data_norm=math.sqrt(13), classes=[0, 1], random_state=0
        )
        rows.append(
            _reference(
                "Adult", f"dpsk LogisticRegression (δ={DELTA:g})", dp_lr.fit(X, y).score(X_eval, y_eval), epsilon
            )
        )
        for name, teacher in (("LogisticRegression", lr), ("HistGradientBoosting", hgb)):
            if name == "HistGradientBoosting" and epsilon != 1.0:
                continue  # minutes per fit: at ε = 1 only
            rows.append(
                _pate_row(
                    "Adult",
                    name,
                    teacher,
                    X,
                    y,
                    X_public,
                    X_eval,
                    y_eval,
                    epsilon,
                    [0, 1],
                    n_teachers=N_TEACHERS,
                    max_queries=MAX_QUERIES,
                )
            )
    return rows


def small_rows(epsilons):
    rows = []
    X, X_test, y, y_test = _breast_cancer()
    X_public, X_eval, y_eval = _halves(X_test, y_test)
    lr = SkLogisticRegression(max_iter=1000)
    rows.append(
        _reference("breast_cancer", "scikit-learn LogisticRegression (non-private)", lr.fit(X, y).score(X_eval, y_eval))
    )
    for epsilon in epsilons:
        rows.append(
            _pate_row(
                "breast_cancer",
                "LogisticRegression",
                lr,
                X,
                y,
                X_public,
                X_eval,
                y_eval,
                epsilon,
                [0, 1],
                n_teachers=20,
            )
        )
    digits = load_digits()
    X, X_test, y, y_test = train_test_split(
        digits.data / 16.0, digits.target, test_size=0.25, random_state=0, stratify=digits.target
    )
    X_public, X_eval, y_eval = _halves(X_test, y_test)
    rows.append(
        _reference("digits", "scikit-learn LogisticRegression (non-private)", lr.fit(X, y).score(X_eval, y_eval))
    )
    for epsilon in epsilons:
        rows.append(
            _pate_row(
                "digits",
                "LogisticRegression",
                lr,
                X,
                y,
                X_public,
                X_eval,
                y_eval,
                epsilon,
                np.arange(10),
                n_teachers=20,
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            ("SubsampleAggregate on make_regression(20000, 20): held-out R²", subsample_rows()),
            ("PATE on Adult: test accuracy on the evaluation half (one seed)", adult_rows(epsilons)),
            ("PATE on breast_cancer and digits (one seed)", small_rows(epsilons)),
        ]


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
