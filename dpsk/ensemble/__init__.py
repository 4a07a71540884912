# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Ensembles with differential privacy: forests of random decision trees."""

from dpsk.ensemble._forest import RandomForestClassifier, RandomForestRegressor

__all__ = ["RandomForestClassifier", "RandomForestRegressor"]
