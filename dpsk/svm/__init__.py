# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private support vector machines."""

from dpsk.svm._classes import LinearSVC

__all__ = [
    "LinearSVC",
]
