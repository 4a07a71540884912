# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random decision trees with differential privacy."""

from dpsk.tree._classes import DecisionTreeClassifier, RandomTree
from dpsk.tree._regressor import DecisionTreeRegressor

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "RandomTree"]
