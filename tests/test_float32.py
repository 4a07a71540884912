# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""float32 in, float32 out: every public classifier (and transformer) keeps float32 X in
float32 through ``predict_proba``, ``predict_log_proba``, ``predict_joint_log_proba``,
``decision_function`` and ``transform`` (issue 16)."""

import warnings

import numpy as np
import pytest
from sklearn.base import is_classifier

from dpsk.utils import all_estimators
from dpsk.utils._testing.common import INIT_PARAMS

METHODS = ("predict_proba", "predict_log_proba", "predict_joint_log_proba", "decision_function", "transform")
#: The searches delegate every method to their refitted best estimator, tested here itself.
SEARCHES = {"GridSearchCV", "RandomizedSearchCV"}
CLASSIFIERS = [
    (name, cls)
    for name, cls in all_estimators()
    if name not in SEARCHES and is_classifier(cls(**INIT_PARAMS.get(name, {})))
]
TRANSFORMERS = [
    (name, cls)
    for name, cls in all_estimators()
    if name not in SEARCHES and hasattr(cls, "transform") and (name, cls) not in CLASSIFIERS
]


def _data():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (200, 3)).astype(np.float32)  # category codes and counts too
    return X, (X[:, 0] > 1).astype(int)


def _outputs(name, cls):
    X, y = _data()
    est = cls(**INIT_PARAMS.get(name, {}))
    if hasattr(est, "random_state"):
        est.set_params(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
        return {m: getattr(est, m)(X) for m in METHODS if hasattr(est, m)}


def test_every_classifier_is_listed():
    names = {name for name, _ in CLASSIFIERS}
    assert {"GaussianNB", "LogisticRegression", "LinearSVC", "RandomForestClassifier", "PATEClassifier"} <= names


@pytest.mark.parametrize("name, cls", CLASSIFIERS + TRANSFORMERS, ids=[n for n, _ in CLASSIFIERS + TRANSFORMERS])
def test_float32_in_float32_out(name, cls):
    outputs = _outputs(name, cls)
    assert outputs, f"{name} has none of {METHODS}"
    for method, out in outputs.items():
        assert out.dtype == np.float32, f"{name}.{method} returned {out.dtype} for float32 X"
