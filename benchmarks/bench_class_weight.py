# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Recall and balanced accuracy on Adult at ε = 1, with and without ``class_weight="balanced"``.

Adult (train 32,561 rows, test 16,281; about 24% positive): LogisticRegression and
LinearSVC with the package's public ``data_norm``, RandomForestClassifier with the
bounds of the one-hot/min-max encoded features ([0, 1] per feature, public by the
encoding). Means over 5 seeds (2 with ``--quick``) of the test recall of the positive
class and the balanced accuracy; scikit-learn's non-private LogisticRegression
(``class_weight`` None and "balanced") for reference.
"""

import warnings

import numpy as np
from _family_common import main
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.metrics import balanced_accuracy_score, recall_score

from dpsk.datasets import load_adult
from dpsk.ensemble import RandomForestClassifier
from dpsk.linear_model import LogisticRegression
from dpsk.svm import LinearSVC


def run(quick=False):
    """One row per (estimator, class_weight)."""
    warnings.simplefilter("ignore")
    train, test = load_adult(), load_adult(subset="test")
    seeds = range(2 if quick else 5)
    n_features = train.data.shape[1]
    makers = {
        "LogisticRegression": lambda cw, s: LogisticRegression(
            epsilon=1.0, data_norm=train.data_norm, classes=[0, 1], class_weight=cw, random_state=s
        ),
        "LinearSVC": lambda cw, s: LinearSVC(
            epsilon=1.0, data_norm=train.data_norm, classes=[0, 1], class_weight=cw, random_state=s
        ),
        "RandomForestClassifier": lambda cw, s: RandomForestClassifier(
            epsilon=1.0,
            bounds=(np.zeros(n_features), np.ones(n_features)),
            classes=[0, 1],
            class_weight=cw,
            random_state=s,
        ),
    }
    rows = []
    for name, make in makers.items():
        for cw in (None, "balanced"):
            recall, balanced = [], []
            for seed in seeds:
                predicted = make(cw, seed).fit(train.data, train.target).predict(test.data)
                recall.append(recall_score(test.target, predicted))
                balanced.append(balanced_accuracy_score(test.target, predicted))
            rows.append(
                {
                    "estimator": name,
                    "class_weight": str(cw),
                    "ε": 1.0,
                    "recall": float(np.mean(recall)),
                    "balanced accuracy": float(np.mean(balanced)),
                    "seeds": len(seeds),
                }
            )
    for cw in (None, "balanced"):
        predicted = (
            SkLogisticRegression(class_weight=cw, max_iter=1000).fit(train.data, train.target).predict(test.data)
        )
        rows.append(
            {
                "estimator": "scikit-learn LogisticRegression (non-private)",
                "class_weight": str(cw),
                "ε": "∞",
                "recall": recall_score(test.target, predicted),
                "balanced accuracy": balanced_accuracy_score(test.target, predicted),
                "seeds": 1,
            }
        )
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
