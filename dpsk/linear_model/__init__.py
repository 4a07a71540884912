# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private linear models."""

from dpsk.linear_model._least_squares import LinearRegression, Ridge
from dpsk.linear_model._logistic import LogisticRegression
from dpsk.linear_model._online import OnlineSGDClassifier, OnlineSGDRegressor
from dpsk.linear_model._sgd import SGDClassifier, SGDRegressor
from dpsk.linear_model._user_level import LabelPrivateLinearRegression

__all__ = [
    "LabelPrivateLinearRegression",
    "LinearRegression",
    "LogisticRegression",
    "OnlineSGDClassifier",
    "OnlineSGDRegressor",
    "Ridge",
    "SGDClassifier",
    "SGDRegressor",
]
