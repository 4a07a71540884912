# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Ensembles with differential privacy: histogram gradient boosting, forests of random decision trees, and any
scikit-learn model made private by an ensemble on disjoint parts of the rows (PATE,
subsample-and-aggregate)."""

from dpsk.ensemble._forest import RandomForestClassifier, RandomForestRegressor
from dpsk.ensemble._gradient_boosting import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from dpsk.ensemble._pate import PATEClassifier
from dpsk.ensemble._subsample import SubsampleAggregate

__all__ = [
    "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor",
    "PATEClassifier",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "SubsampleAggregate",
]
