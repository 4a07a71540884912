# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private sensitivity parameters (issue 19): utility with hand-set, private and data-derived bounds.

Before/after table at ε = 1 (pure ε unless stated), median and minimum over noise seeds
(5, 2 with ``--quick``; the data and splits are fixed; few seeds because the benchmark
machine is shared: the medians move by about ±0.01 between runs):

* **LinearRegression** on ``make_regression(25000, 20, noise=10)`` (20000 train, 5000
  test rows): the public box ``bounds_X = (-4, 4)``, ``bounds_y = (-700, 700)`` alone
  (before), with the hand-set ``row_norm = 6`` (an oracle: chosen knowing the data),
  with ``row_norm="private"`` (after), and with everything private (no bound given at
  all). Test R².
* **LogisticRegression** on Adult (``dpsk.datasets.load_adult``, X in [0, 1]^107,
  the standard test split): ``data_norm = √13`` (public, from the schema: 5 numeric
  columns in [0, 1] and 8 one-hot groups) against ``data_norm="private"``, and the
  data-derived value (``"data"``, with the leak warning) for reference. Test accuracy.
* **StandardScaler** then the private **GaussianNB** on Adult's 5 numeric columns:
  ``bounds = (0, 1)`` (schema) against ``bounds="private"``. Test accuracy.

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
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.linear_model import LinearRegression, LogisticRegression
from dpsk.naive_bayes import GaussianNB

#: Adult's numeric columns (the first five of the public-schema encoding).
NUMERIC = slice(0, 5)


def _describe(values):
    values = np.asarray(values)
    return f"median {np.median(values):.3f}, min {np.min(values):.3f}"


def _rows(task, metric, configs, score, seeds):
    rows = []
    for label, make in configs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            values = [score(make(seed)) for seed in seeds]
        rows.append({"task": task, "bounds": label, metric: _describe(values)})
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


def run(quick=False):
    """The before/after table (``quick``: 2 seeds instead of 5)."""
    seeds = list(range(2 if quick else 5))
    return linear_regression(seeds) + adult(seeds)


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
