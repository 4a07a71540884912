# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy units and random partitions by unit: shared by the private searches and the random trees.

Each unit (a row, or all rows of a user with ``groups=``) draws its part independently
and uniformly. Adding or removing a unit then leaves every other unit where it was, which
is what parallel composition over the parts (and the searches' k-fold argument) needs;
a split of fixed sizes, or by position, would move other rows between parts.
"""

import numpy as np

__all__ = ["privacy_units", "random_parts"]


def privacy_units(n_samples, groups):
    """(unit of each row, number of units): rows, or the users of ``groups``."""
    if groups is None:
        return None, n_samples
    _, units = np.unique(np.asarray(groups), return_inverse=True)
    units = units.reshape(-1)
    return units, int(units.max()) + 1 if units.size else 0


def random_parts(rng, n_parts, n_units, units):
    """Part of each row: each unit draws one of ``n_parts`` parts independently and uniformly."""
    parts = rng.integers(n_parts, size=n_units)
    return parts if units is None else parts[units]
