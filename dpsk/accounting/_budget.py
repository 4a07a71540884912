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


class _BudgetPair(NamedTuple):
    epsilon: float
    delta: float


class Budget(_BudgetPair):
    """An (ε, δ) pair, as returned by :meth:`BudgetAccountant.total` and ``remaining``.

    Both values are >= 0 (ε may be infinite: the cost of a non-private release). Budgets
    are ordered component-wise, which is a *partial* order: ``a <= b`` when neither ε nor
    δ of ``a`` exceeds that of ``b``. ``Budget(4, 0.02) >= Budget(3, 0.1)`` is False, and
    so is ``Budget(4, 0.02) <= Budget(3, 0.1)``: neither budget covers the other.
    Equality is that of the pairs. A plain ``(epsilon, delta)`` tuple compares the same way.
    """

    __slots__ = ()

    def __new__(cls, epsilon, delta=0.0):
        values = []
        for name, value in (("epsilon", epsilon), ("delta", delta)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
                raise TypeError(f"Budget {name} must be a real number, got {value!r}")
            if value < 0:
                raise ValueError(f"Budget {name} must be >= 0, got {value}")
            values.append(float(value))
        return super().__new__(cls, *values)

    def __repr__(self):
        return f"(epsilon={self.epsilon!r}, delta={self.delta!r})"

    @staticmethod
    def _pair(other):
        if isinstance(other, tuple) and len(other) == 2:
            return other
        return None

    def __le__(self, other):
        other = self._pair(other)
        if other is None:
            return NotImplemented
        return self.epsilon <= other[0] and self.delta <= other[1]

    def __ge__(self, other):
        other = self._pair(other)
        if other is None:
            return NotImplemented
        return self.epsilon >= other[0] and self.delta >= other[1]

    def __lt__(self, other):
        other = self._pair(other)
        if other is None:
            return NotImplemented
        return self <= other and tuple(self) != tuple(other)

    def __gt__(self, other):
        other = self._pair(other)
        if other is None:
            return NotImplemented
        return self >= other and tuple(self) != tuple(other)

    # Equality stays the pairs' (tuple) equality, and so does the hash.
    __eq__ = tuple.__eq__
    __ne__ = tuple.__ne__
    __hash__ = tuple.__hash__


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
