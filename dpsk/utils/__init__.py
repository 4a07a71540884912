# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Utilities: validation of randomness, privacy parameters and sensitivity assumptions."""

from dpsk.utils._random import check_random_state, rekey_generator, release_generator
from dpsk.utils.discovery import all_estimators
from dpsk.utils.validation import (
    check_bounds,
    check_data_norm,
    check_privacy_params,
    resolve_bounds,
    resolve_classes,
    resolve_data_norm,
    warn_data_derived,
)

__all__ = [
    "all_estimators",
    "check_bounds",
    "check_data_norm",
    "check_privacy_params",
    "check_random_state",
    "rekey_generator",
    "release_generator",
    "resolve_bounds",
    "resolve_classes",
    "resolve_data_norm",
    "warn_data_derived",
]
