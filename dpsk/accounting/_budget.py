# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The (ε, δ) budget: its value type, its validation and the tolerance of its comparisons."""

import math
import numbers
from typing import NamedTuple

__all__ = ["TOLERANCE", "Budget", "check_budget_values"]

#: Budget comparisons tolerate this relative excess, the floating-point noise of declared
#: values (0.1 is not exactly 1/10, so ten spends of 0.1 exceed 1.0 by 5.6e-17).
TOLERANCE = 2.0**-40


class Budget(NamedTuple):
    """An (ε, δ) pair, as returned by :meth:`BudgetAccountant.total` and ``remaining``."""

    epsilon: float
    delta: float

    def __repr__(self):
        return f"(epsilon={self.epsilon!r}, delta={self.delta!r})"


def check_budget_values(epsilon, delta, slack):
    """Validate a budget's (``epsilon``, ``delta``, ``slack``); returns them as floats."""
    for name, value in (("epsilon", epsilon), ("delta", delta), ("slack", slack)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    if not 0.0 <= delta <= 1.0:
        raise ValueError(f"delta must be in [0, 1], got {delta}")
    if not 0.0 <= slack <= delta:
        raise ValueError(f"slack must be in [0, delta] = [0, {delta}], got {slack}")
    return float(epsilon), float(delta), float(slack)
