# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact float arithmetic for the accountant: running sums without rounding error.

A ledger adds up the costs of many spends (Σε, Σε², Σμ², ...). Naive float sums drift
with the order and the number of terms, so a figure could go *down* when a spend is
added and come back differently when it is removed. These sums are exact (Shewchuk's
partials, or rationals) and are rounded once, upward, when a guarantee is read.
"""

import math
from fractions import Fraction

__all__ = ["FloatSum", "fraction_up", "sum_up"]


class FloatSum:
    """Running float sum without accumulated rounding error (Shewchuk's partials)."""

    __slots__ = ("partials",)

    def __init__(self, partials=()):
        self.partials = list(partials)

    def add(self, x, count=1):
        if count != 1:
            product = x * count
            # The rounding error of a product is itself a float: add both, exactly.
            self._add(float(Fraction(x) * count - Fraction(product)))
            x = product
        self._add(x)

    def _add(self, x):
        i = 0
        partials = self.partials
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    def value(self):
        return math.fsum(self.partials)

    def copy(self):
        return FloatSum(self.partials)


def fraction_up(value):
    """The smallest float >= the rational ``value``."""
    f = float(value)
    if Fraction(f) < value:
        f = math.nextafter(f, math.inf)
    return f


def sum_up(values):
    """Σ values, exactly, rounded up (inf if any is inf)."""
    if any(math.isinf(v) for v in values):
        return math.inf
    return fraction_up(sum(Fraction(v) for v in values))
