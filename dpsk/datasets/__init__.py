# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Datasets bundled with dpsk, with *public* preprocessing.

Preprocessing for DP must not look at the private data: the category lists and numeric
ranges used here come from the dataset's published schema (UCI documentation), not from
the rows. This keeps examples and benchmarks honest about their privacy cost.
"""

from dpsk.datasets._adult import ADULT_SCHEMA, load_adult, schema_bounds

__all__ = ["ADULT_SCHEMA", "load_adult", "schema_bounds"]
