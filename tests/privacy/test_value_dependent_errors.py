# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring datasets inside the declared domain either both release or both refuse.

An error raised after the data is read is itself a release (issue 14, finding 4). Each
test builds D and D′ differing in one unit, both inside the domain, and checks that the
two fits behave alike; the cases are the ones that raised for one neighbour only.
"""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import BaggingClassifier
from sklearn.pipeline import make_pipeline as sklearn_make_pipeline

from dpsk import BudgetAccountant
from dpsk.accounting import record_releases, zcdp_rho
from dpsk.accounting._rdp import ORDERS, rdp_to_epsilon
from dpsk.linear_model import LabelPrivateLinearRegression
from dpsk.model_selection import GridSearchCV, cross_val_score
from dpsk.model_selection._estimators import candidate_cost
from dpsk.naive_bayes import GaussianNB
from dpsk.pipeline import make_pipeline
from dpsk.utils._units import random_parts


def _nb(**kw):
    return GaussianNB(epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1], random_state=0, **kw)


def _empty_part_seed(n_units, cv):
    """A seed whose folds leave a training part without units for ``n_units`` units, but not for one more."""
    for seed in range(1000):
        parts = random_parts(np.random.default_rng(seed), cv, n_units, None)
        if np.unique(parts).size == 1:  # all units in one fold: its complement trains on nothing
            return seed
    raise AssertionError("no seed found")  # pragma: no cover


# --------------------------------------------------------------------- searches


def test_cross_val_score_empty_training_part_releases_for_both_neighbours():
    """D (one row) leaves a training fold empty; D′ (two rows) need not: both must release."""
    X = np.array([[0.2, 0.3], [0.8, 0.7]])
    y = np.array([0, 1])
    for seed in range(30):  # random folds: include draws where D's or D′'s parts are empty
        acc_d, acc_d2 = BudgetAccountant(epsilon=100.0), BudgetAccountant(epsilon=100.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s1 = cross_val_score(_nb(), X[:1], y[:1], cv=3, epsilon=1.0, random_state=seed, accountant=acc_d)
            s2 = cross_val_score(_nb(), X, y, cv=3, epsilon=1.0, random_state=seed, accountant=acc_d2)
        assert s1.shape == s2.shape == (3,)
        assert acc_d.total() == acc_d2.total() and len(acc_d) == len(acc_d2) == 1


def test_search_with_one_class_y_releases_when_classes_are_public():
    """One class in y after adding a record of the other class: with public classes both release."""
    X = np.array([[0.2, 0.3], [0.4, 0.1], [0.3, 0.3], [0.9, 0.8]])
    y = np.array([0, 0, 0, 1])
    grid = {"var_smoothing": [1e-9, 1e-3]}
    for Xd, yd in ((X[:3], y[:3]), (X, y)):
        search = GridSearchCV(_nb(), grid, epsilon=1.0, cv=2, random_state=0).fit(Xd, yd)
        assert search.best_estimator_.classes_.tolist() == [0, 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert cross_val_score(_nb(), Xd, yd, cv=2, epsilon=1.0, random_state=0).shape == (2,)


# ------------------------------------------------------------- label privacy


@pytest.mark.parametrize("method", ["optimal", "limit", "ols"])
def test_label_private_regression_zero_features_releases(method):
    """X = 0 (public) is handled inside the mechanism: the coefficients are 0, for any labels."""
    X = np.zeros((4, 2))
    for y in (np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.1, 0.2, 0.3, -0.9])):
        reg = LabelPrivateLinearRegression(
            epsilon=1.0, bounds_y=(-1, 1), fit_intercept=False, method=method, random_state=0
        ).fit(X, y)
        np.testing.assert_array_equal(reg.coef_, [0.0, 0.0])
        assert reg.sensitivity_ == 0.0


# ----------------------------------------------------------- linear classifiers


def test_certifiable_rows_are_a_public_function_of_tol():
    """The row limit is part of the declared domain: decided by tol, refused outside only."""
    from dpsk.linear_model._solver import check_certifiable, max_certifiable_rows

    limit = max_certifiable_rows(1e-6)
    assert 3e7 < limit < 3.2e7
    assert max_certifiable_rows(1e-4) > 2**31  # the documented limit of finding 1 at tol=1e-4
    check_certifiable(limit, 1e-6)  # inside the domain: no error
    with pytest.raises(ValueError, match="declared domain"):
        check_certifiable(limit + 1, 1e-6)


# --------------------------------------------------------------- accounting


def test_zcdp_rho_small_epsilon_returns_or_refuses():
    """zcdp_rho(0.001, 1e-9) used to halve ρ forever: below the conversion's floor it refuses."""
    floor = rdp_to_epsilon(np.zeros_like(ORDERS), 1e-9)
    assert floor > 0.001
    with pytest.raises(ValueError, match="too small"):
        zcdp_rho(0.001, 1e-9)
    # Just above the floor a root exists: it satisfies the defining inequality and is the largest.
    rho = zcdp_rho(0.01, 1e-9)
    assert rho > 0
    target = 0.01 * (1 - 1e-9)
    assert rdp_to_epsilon(rho * ORDERS, 1e-9) <= 0.01
    assert rdp_to_epsilon(rho * 1.001 * ORDERS, 1e-9) > target * (1 - 1e-6)


# ------------------------------------------------------------------- bagging


def _bagging(pipeline_factory):
    pipe = pipeline_factory(_nb())
    return BaggingClassifier(pipe, n_estimators=4, bootstrap=True, random_state=0)


def test_bagging_bootstrap_around_dpsk_pipeline_passes_capped_weights():
    """Bootstrap counts reach the DP step as weights; each fit is one release, charged once."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    seen = []
    original = GaussianNB.fit

    def spy(self, X, y, sample_weight=None):
        fitted = original(self, X, y, sample_weight)  # checks its cost before reading X (probes)
        seen.append((len(X), sample_weight is not None))
        return fitted

    GaussianNB.fit = spy
    try:
        acc = BudgetAccountant(epsilon=100.0)
        bag = _bagging(make_pipeline)
        bag.set_params(estimator__gaussiannb__accountant=acc)
        with record_releases() as drawn:
            bag.fit(X, y)
    finally:
        GaussianNB.fit = original
    assert seen == [(40, True)] * 4  # all rows, weighted: no row repeated
    assert len(acc) == 4 and len(drawn) == 4
    # Counted by the searches: the pipeline now caps duplicates (it was refused before).
    assert candidate_cost(_bagging(make_pipeline), {}) is not None


def test_bagging_bootstrap_around_sklearn_pipeline_is_refused_before_data():
    """scikit-learn's Pipeline passes no weights: a search refuses it before reading data."""
    with pytest.raises(TypeError, match="dpsk.pipeline.Pipeline"):
        candidate_cost(_bagging(sklearn_make_pipeline), {})


def test_dpsk_pipeline_refuses_weights_for_a_dp_step_without_sample_weight():
    X = np.zeros((4, 2))
    y = np.arange(4.0)
    pipe = make_pipeline(LabelPrivateLinearRegression(epsilon=1.0, bounds_y=(-1, 1)))
    with pytest.raises(TypeError, match="no sample_weight"):
        pipe.fit(X, y, sample_weight=np.ones(4))
