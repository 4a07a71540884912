# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private linear models."""

from dpsk.linear_model._least_squares import LinearRegression, Ridge
from dpsk.linear_model._logistic import LogisticRegression

__all__ = [
    "LinearRegression",
    "LogisticRegression",
    "Ridge",
]
