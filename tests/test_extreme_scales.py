# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Data and bounds at the ends of float64's range: a fit succeeds, or refuses before it
spends any budget. Squares of half-widths overflow above ~1.3e154 and vanish below
~1.5e-162; grids finer than 2**-990 have no finite inverse step. Each of these once
raised *after* the spend (with private bounds, depending on the data), and an infinite
or vanishing sensitivity of PCA's second moment would have released it without noise.
"""

import warnings

import numpy as np
import pytest

from dpsk import stats
from dpsk.accounting import BudgetAccountant
from dpsk.cluster import KMeans
from dpsk.decomposition import PCA
from dpsk.linear_model import LinearRegression
from dpsk.naive_bayes import GaussianNB
from dpsk.preprocessing import MinMaxScaler, StandardScaler

SCALES = [1e-320, 1e-300, 1e-170, 1e-163, 1e150, 1e155, 1e300, 5e307]


def _norm(bounds):
    """A row-norm bound for rows in the box (None: private), finite up to the float range."""
    return None if bounds is None else min(2.0 * bounds[1], np.finfo(np.float64).max)


ESTIMATORS = {
    "StandardScaler": lambda bounds: StandardScaler(epsilon=1.0, bounds=bounds),
    "MinMaxScaler": lambda bounds: MinMaxScaler(epsilon=1.0, bounds=bounds),
    "GaussianNB": lambda bounds: GaussianNB(epsilon=1.0, bounds=bounds, classes=[0, 1]),
    "KMeans": lambda bounds: KMeans(2, epsilon=1.0, bounds=bounds),
    "PCA box": lambda bounds: PCA(2, epsilon=1.0, bounds=bounds),
    "PCA ball": lambda bounds: PCA(2, epsilon=1.0, data_norm=_norm(bounds)),
    "PCA ball, δ > 0": lambda bounds: PCA(2, epsilon=1.0, delta=1e-5, data_norm=_norm(bounds)),
    "LinearRegression": lambda bounds: LinearRegression(epsilon=1.0, bounds_X=bounds, bounds_y=bounds),
    "LinearRegression ball": lambda bounds: LinearRegression(
        epsilon=1.0, bounds_X=bounds, bounds_y=bounds, row_norm=_norm(bounds)
    ),
}


@pytest.mark.parametrize("private", [False, True], ids=["public bounds", "private bounds"])
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("name", ESTIMATORS)
def test_fit_succeeds_or_refuses_before_the_spend(name, scale, private):
    rng = np.random.default_rng(0)
    X = np.clip(rng.normal(size=(300, 4)), -3.0, 3.0) * scale  # finite up to 5e307
    y = (X[:, 0] > 0).astype(int)
    accountant = BudgetAccountant()
    estimator = ESTIMATORS[name](None if private else (-3.0 * scale, 3.0 * scale))
    estimator.set_params(accountant=accountant, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow in post-processing (as scikit-learn's own)
        try:
            estimator.fit(X, y)
        except ValueError as error:
            assert "rescale" in str(error)
            assert not accountant.spent_budget, "refused after spending"
            return
    assert accountant.spent_budget


@pytest.mark.parametrize("private", [False, True], ids=["public bounds", "private bounds"])
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("function", [stats.sum, stats.mean, stats.var, stats.std])
def test_statistic_succeeds_or_refuses_before_the_spend(function, scale, private):
    X = np.clip(np.random.default_rng(0).normal(size=(300, 4)), -3.0, 3.0) * scale
    accountant = BudgetAccountant()
    bounds = None if private else (-3.0 * scale, 3.0 * scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            function(X, epsilon=1.0, bounds=bounds, axis=0, accountant=accountant, random_state=0)
        except ValueError as error:
            assert "rescale" in str(error)
            assert not accountant.spent_budget, "refused after spending"
            return
    assert accountant.spent_budget
