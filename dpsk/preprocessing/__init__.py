# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Feature scaling with differentially private statistics."""

from dpsk.preprocessing._data import MinMaxScaler, StandardScaler

__all__ = ["MinMaxScaler", "StandardScaler"]
