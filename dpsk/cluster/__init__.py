# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clustering with differential privacy."""

from dpsk.cluster._kmeans import KMeans

__all__ = ["KMeans"]
