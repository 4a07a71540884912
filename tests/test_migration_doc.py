# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The dpsk side of doc/migration.rst: what the page says about dpsk's parameters,
defaults and behaviour holds. (Its statements about diffprivlib were checked against
diffprivlib 0.6.6, which is not a test dependency.)"""

import copy
import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from dpsk import BudgetAccountant, mechanisms
from dpsk.cluster import KMeans
from dpsk.decomposition import PCA
from dpsk.ensemble import RandomForestClassifier
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.linear_model import LinearRegression, LogisticRegression
from dpsk.naive_bayes import GaussianNB
from dpsk.preprocessing import StandardScaler
from dpsk.tree import DecisionTreeClassifier
from dpsk.utils import all_estimators


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, (200, 3))
    return X, (X[:, 0] > 5).astype(int)


def _default(cls, name):
    return inspect.signature(cls).parameters[name].default


def test_defaults_in_the_table():
    assert _default(LogisticRegression, "C") is None
    assert _default(LogisticRegression, "tol") == 1e-6
    assert _default(KMeans, "max_iter") == 5
    assert _default(KMeans, "init") == "summary"
    assert _default(DecisionTreeClassifier, "max_depth") is None
    assert inspect.signature(DecisionTreeClassifier).parameters["max_depth"].kind is inspect.Parameter.KEYWORD_ONLY
    assert _default(RandomForestClassifier, "n_estimators") == 20
    assert _default(RandomForestClassifier, "max_depth") is None


@pytest.mark.parametrize(
    "cls, kwargs",
    [
        (LogisticRegression, {"verbose": 1}),
        (LogisticRegression, {"warm_start": True}),
        (LogisticRegression, {"n_jobs": 2}),
        (LogisticRegression, {"penalty": "l2"}),
        (LinearRegression, {"copy_X": True}),
        (DecisionTreeClassifier, {"criterion": "gini"}),
        (RandomForestClassifier, {"shuffle": True}),
        (RandomForestClassifier, {"warm_start": True}),
    ],
)
def test_arguments_not_accepted(cls, kwargs):
    with pytest.raises(TypeError):
        cls(**kwargs)


def test_sample_weight_and_partial_fit_as_documented():
    """Check migration.rst's statement: every estimator but LabelPrivateLinearRegression, the feature
    selectors and the any-model wrappers (and the searches, which pass fit parameters on) takes
    ``sample_weight``."""
    without = {name for name, cls in all_estimators() if "sample_weight" not in inspect.signature(cls.fit).parameters}
    selectors = {"SelectKBest", "SelectPercentile"}
    wrappers = {"PATEClassifier", "SubsampleAggregate"}
    assert without == {"LabelPrivateLinearRegression", "GridSearchCV", "RandomizedSearchCV", *selectors, *wrappers}
    assert hasattr(GaussianNB, "partial_fit")
    assert hasattr(StandardScaler, "partial_fit")


def test_pca_rejects_mle_and_standard_scaler_rejects_nan():
    X, _ = _data()
    with pytest.raises(ValueError):
        PCA("mle", data_norm=20).fit(X)
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError):
        StandardScaler(bounds=(0, 10)).fit(X)


def test_legacy_random_state_rejected():
    X, y = _data()
    with pytest.raises(TypeError):
        GaussianNB(bounds=(0, 10), classes=[0, 1], random_state=np.random.RandomState(0)).fit(X, y)


def test_missing_classes_warns_and_missing_bounds_are_private():
    """ "Bounds left out": estimated privately (no warning, the parameter stays None); "data" warns."""
    X, y = _data()
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        clf = GaussianNB(bounds=(0, 10)).fit(X, y)
    acc = BudgetAccountant(epsilon=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = GaussianNB(classes=[0, 1], accountant=acc).fit(X, y)
    assert clf.bounds is None and clf.get_params()["bounds"] is None
    assert hasattr(clf, "bounds_") and "private bounds: 10% of ε" in str(acc.to_frame()["label"].iloc[0])
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        clf = GaussianNB(bounds="data", classes=[0, 1]).fit(X, y)
    assert clf.get_params()["bounds"] == "data"


def test_var_smoothing_is_relative_to_the_bounds():
    X, y = _data()
    clf = GaussianNB(bounds=(0, 10), var_smoothing=1e-2, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.epsilon_ == pytest.approx(1e-2 * 5.0**2)


def test_accountant_is_kept_by_clones_and_bound_at_fit_time():
    X, y = _data()
    acc = BudgetAccountant()
    clf = GaussianNB(bounds=(0, 10), classes=[0, 1], accountant=acc)
    assert clone(clf).accountant is acc and copy.deepcopy(clf).accountant is acc
    GridSearchCV(clf, {"epsilon": [0.5, 1.0]}, cv=3).fit(X, y)
    assert len(acc) == 7  # 2 settings x 3 folds + refit
    assert not hasattr(BudgetAccountant, "set_default")

    outside = GaussianNB(bounds=(0, 10), classes=[0, 1])
    acc_fit = BudgetAccountant()
    with acc_fit:
        outside.fit(X, y)
        inside = GaussianNB(bounds=(0, 10), classes=[0, 1])
    inside.fit(X, y)
    assert len(acc_fit) == 1  # only the fit made inside the block
    assert inside.privacy_spent_ is not None


def test_totals_quoted_on_the_page():
    acc = BudgetAccountant(slack=1e-3, spent_budget=[(0.05, 0)] * 20)
    assert round(acc.total().epsilon, 3) == 0.498
    acc = BudgetAccountant(epsilon=100, delta=1e-5, spent_budget=[(0.1, 0)] * 100)
    total = acc.total()
    assert round(total.epsilon, 2) == 4.31 and total.delta == 1e-5


def test_mechanisms():
    with pytest.raises(ValueError):
        mechanisms.Gaussian(epsilon=1.0, delta=1e-5, calibration="classic")
    mechanisms.Gaussian(epsilon=0.5, delta=1e-5, calibration="classic")
    mechanisms.Gaussian(epsilon=5.0, delta=1e-5)
    with pytest.raises(TypeError):
        mechanisms.Laplace(epsilon=1.0, delta=0.1)
    assert mechanisms.Laplace(epsilon=1.0).randomise(np.zeros(3)).shape == (3,)
    selection = mechanisms.ExponentialMechanism(epsilon=1.0, random_state=0)
    assert selection.randomise([0.0, 1.0, 50.0]) == 2
    acc = BudgetAccountant()
    with acc:
        mechanisms.Laplace(epsilon=1.0).randomise(0.0)
    assert len(acc) == 0  # a mechanism never charges an accountant


def test_stats_signatures():
    from dpsk import stats

    X, _ = _data()
    with pytest.raises(ValueError, match="axis 0"):
        stats.mean(X, 1.0, (0, 10), 1)
    with pytest.raises(TypeError):
        stats.mean(X, 1.0, (0, 10), 0, True)  # keepdims is keyword-only
    with pytest.raises(TypeError):
        stats.mean(X, 1.0, (0, 10), dtype=float)
    with pytest.raises(TypeError):
        stats.histogram(X[:, 0], 1.0, 5, (0, 10), weights=np.ones(len(X)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stats.quantile(X[:, 0], 0.5, 1.0, (0, 10), random_state=0)
