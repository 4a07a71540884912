# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Matrix decomposition with differential privacy."""

from dpsk.decomposition._pca import PCA

__all__ = ["PCA"]
