# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Broken variants of the private-bounds releases (``dpsk.stats._bounds``), for the audits'
power checks: tests/stats/test_bounds.py and tests/utils/test_private_bounds.py patch them in
with ``monkeypatch.setattr(dpsk.stats._bounds, name, variant)`` and require a rejection.
"""

import numpy as np

from dpsk.mechanisms import DiscreteLaplace
from dpsk.stats._quantile import QuantileQuery

__all__ = ["NoNoiseDiscreteLaplace", "NoiselessQuantileQuery"]


class NoNoiseDiscreteLaplace(DiscreteLaplace):
    """Broken: the logarithmic histogram's counts released without noise (declaring the same cost)."""

    def randomise(self, value):
        return np.asarray(value)


class NoiselessQuantileQuery(QuantileQuery):
    """Broken: the quantile selected with 10⁴ × ε (nearly without noise), declaring ε."""

    def __init__(self, q, *, epsilon, **kwargs):
        super().__init__(q, epsilon=epsilon * 1e4, **kwargs)
        self.event = QuantileQuery(q, epsilon=epsilon, **kwargs).event
