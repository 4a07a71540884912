# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private sensitivity parameters and the utility targets of issue 19: before/after table at ε = 1.

Pure ε unless stated; median and minimum over noise seeds (the data and splits are
fixed): 20 seeds for LinearRegression (with the number of fits below R² = 0), 10 for the
others (``--quick``: 3 and 2):

* **LinearRegression** on ``make_regression(25000, 20, noise=10)`` (20000 train, 5000
  test rows): the public box ``bounds_X = (-4, 4)``, ``bounds_y = (-700, 700)`` alone
  (before), with the hand-set ``row_norm = 6`` (an oracle: chosen knowing the data),
  with ``row_norm="private"`` (after), and with everything private (no bound given at
  all). Test R². Targets: median ≥ 0.9 and no fit below 0 (box + private row norm),
  median ≥ 0.85 (everything private).
* **LogisticRegression** on Adult (``dpsk.datasets.load_adult``, X in [0, 1]^107,
  the standard test split): ``data_norm = √13`` (public, from the schema: 5 numeric
  columns in [0, 1] and 8 one-hot groups) against ``data_norm="private"``, and the
  data-derived value (``"data"``, with the leak warning) for reference. Test accuracy.
  Target: "private" within 0.01 of √13.
* **StandardScaler** then the private **GaussianNB** on Adult's 5 numeric columns:
  ``bounds = (0, 1)`` (schema) against ``bounds="private"``. Test accuracy.
* **PCA** (pure ε, ``delta=0``), 5 components on Adult's training rows with
  ``data_norm = √13``: the share of the non-private top-5 variance captured by the
  private axes, ``trace(V C Vᵀ) / Σ top-5 eigenvalues of C``. Before: ``l1_norm=None``
  (Laplace calibrated to B₁ = √107 · √13); after: the default ``l1_norm="auto"`` (a
  private L1 clip of the rows), and the schema's public L1 bound 13. Target ≥ 0.9.
* **LogisticRegression** on breast_cancer, the split and scaling of
  ``bench_accuracy.py`` (published ranges, centred by 0.5, ``data_norm = √30/2``,
  ``bounds = (-0.5, 0.5)``). Target ≥ 0.90 (not met: no change in this session).

Private bounds take ``bounds_epsilon_share`` = 10 % of each fit's ε (dpsk's default):
the rows marked "private" spend exactly the same total ε as the others.

Run: ``python benchmarks/bench_bounds.py [--quick]``.
"""

import math
import warnings

import numpy as np
from _family_common import main
from sklearn.datasets import make_regression
from sklearn.metrics import r2_score

from dpsk.datasets import load_adult
from dpsk.decomposition import PCA
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.linear_model import LinearRegression, LogisticRegression
from dpsk.naive_bayes import GaussianNB

#: Adult's numeric columns (the first five of the public-schema encoding).
NUMERIC = slice(0, 5)


def _describe(values, below_zero=False):
    values = np.asarray(values)
    text = f"median {np.median(values):.3f}, min {np.min(values):.3f}"
    if below_zero:
        text += f", {int(np.sum(values < 0))} of {values.size} below 0"
    return text


def _rows(task, metric, configs, score, seeds, below_zero=False):
    rows = []
    for label, make in configs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            values = [score(make(seed)) for seed in seeds]
        rows.append({"task": task, "bounds": label, "seeds": len(seeds), "result": _describe(values, below_zero)})
    return rows


def linear_regression(seeds):
    X, y = make_regression(25000, 20, noise=10, random_state=0)
    X_train, X_test, y_train, y_test = X[:20000], X[20000:], y[:20000], y[20000:]
    box = dict(bounds_X=(-4.0, 4.0), bounds_y=(-700.0, 700.0))
    configs = [
        ("box only (before)", lambda s: LinearRegression(epsilon=1.0, random_state=s, **box)),
        (
            "box + row_norm=6 (hand-set oracle)",
            lambda s: LinearRegression(epsilon=1.0, random_state=s, row_norm=6.0, **box),
        ),
        (
            "box + row_norm='private' (after)",
            lambda s: LinearRegression(epsilon=1.0, random_state=s, row_norm="private", **box),
        ),
        (
            "everything 'private' (no bound given)",
            lambda s: LinearRegression(
                epsilon=1.0, random_state=s, bounds_X="private", bounds_y="private", row_norm="private"
            ),
        ),
    ]
    return _rows(
        "LinearRegression, make_regression",
        "test R²",
        configs,
        lambda est: r2_score(y_test, est.fit(X_train, y_train).predict(X_test)),
        seeds,
        below_zero=True,
    )


def adult(seeds):
    train, test = load_adult(), load_adult(subset="test")
    logistic = [
        ("data_norm=√13 (schema, before)", math.sqrt(13)),
        ("data_norm='private' (after)", "private"),
        ("data_norm='data' (data-derived, leaks)", "data"),
    ]
    rows = _rows(
        "LogisticRegression, Adult",
        "test accuracy",
        [
            (
                label,
                lambda s, norm=norm: LogisticRegression(epsilon=1.0, data_norm=norm, classes=[0, 1], random_state=s),
            )
            for label, norm in logistic
        ],
        lambda est: est.fit(train.data, train.target).score(test.data, test.target),
        seeds,
    )
    X_train, X_test = train.data[:, NUMERIC], test.data[:, NUMERIC]
    nb = [("bounds=(0, 1) (schema, before)", (0.0, 1.0)), ("bounds='private' (after)", "private")]
    rows += _rows(
        "GaussianNB, Adult numeric columns",
        "test accuracy",
        [(label, lambda s, b=b: GaussianNB(epsilon=1.0, bounds=b, classes=[0, 1], random_state=s)) for label, b in nb],
        lambda est: est.fit(X_train, train.target).score(X_test, test.target),
        seeds,
    )
    return rows


def pca_adult(seeds):
    X = load_adult().data
    cov = np.cov(X.T)
    best = np.sort(np.linalg.eigvalsh(cov))[::-1][:5].sum()
    configs = [
        ("l1_norm=None: B₁ = √107·√13 (before)", None),
        ("l1_norm='auto': private L1 clip (after, default)", "auto"),
        ("l1_norm=13 (schema: 5 numeric + 8 one-hot)", 13.0),
    ]
    return _rows(
        "PCA(5), Adult, pure ε, data_norm=√13",
        "captured variance",
        [
            (label, lambda s, l1=l1: PCA(5, epsilon=1.0, data_norm=math.sqrt(13), l1_norm=l1, random_state=s))
            for label, l1 in configs
        ],
        lambda est: float(np.trace(est.fit(X).components_ @ cov @ est.components_.T) / best),
        seeds,
    )


def breast_cancer(seeds):
    from bench_accuracy import breast_cancer as views_of_breast_cancer

    views, (y_train, y_test), norm, _, _ = views_of_breast_cancer()
    X_train, X_test = views["linear"]
    return _rows(
        "LogisticRegression, breast_cancer",
        "test accuracy",
        [
            (
                "data_norm=√30/2, bounds=(-0.5, 0.5) (unchanged)",
                lambda s: LogisticRegression(
                    epsilon=1.0, data_norm=norm, bounds=(-0.5, 0.5), classes=[0, 1], random_state=s
                ),
            )
        ],
        lambda est: est.fit(X_train, y_train).score(X_test, y_test),
        seeds,
    )


def run(quick=False):
    """The before/after table (``quick``: 3 and 2 seeds instead of 20 and 10)."""
    many, few = list(range(3 if quick else 20)), list(range(2 if quick else 10))
    return linear_regression(many) + adult(few) + pca_adult(few) + breast_cancer(few)


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
