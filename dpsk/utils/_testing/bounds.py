# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Broken variants of the private-bounds releases (``dpsk.stats._bounds``), for the audits'
power checks: tests/stats/test_bounds.py and tests/utils/test_private_bounds.py patch them in
with ``monkeypatch.setattr(dpsk.stats._bounds, name, variant)`` and require a rejection.
Also the small data sets of the private-bounds tests (tests/utils/test_*_bounds.py).
"""

import numpy as np

from dpsk.mechanisms import DiscreteLaplace
from dpsk.stats._quantile import QuantileQuery

__all__ = ["NoNoiseDiscreteLaplace", "NoiselessQuantileQuery", "classification_data", "regression_data"]


def regression_data(n=2_000, d=5, seed=0):
    """Gaussian features and a linear target with a little noise (no bounds known)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y


def classification_data(n=2_000, d=4, seed=0):
    """Gaussian features (scale 0.5) and a binary label from the first one."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.5
    return X, (X[:, 0] + 0.2 * rng.normal(size=n) > 0).astype(int)


class NoNoiseDiscreteLaplace(DiscreteLaplace):
    """Broken: the logarithmic histogram's counts released without noise (declaring the same cost)."""

    def randomise(self, value):
        return np.asarray(value)


class NoiselessQuantileQuery(QuantileQuery):
    """Broken: the quantile selected with 10⁴ × ε (nearly without noise), declaring ε."""

    def __init__(self, q, *, epsilon, **kwargs):
        super().__init__(q, epsilon=epsilon * 1e4, **kwargs)
        self.event = QuantileQuery(q, epsilon=epsilon, **kwargs).event
