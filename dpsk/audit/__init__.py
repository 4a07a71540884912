# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Empirical privacy auditing: test a differential-privacy claim on neighbouring inputs.

A randomized function (a mechanism, or an estimator's ``fit`` followed by a projection to
a scalar or a small vector) is run many times on two neighbouring inputs, and the claim
(ε, δ) — or the exact privacy profile of a dpsk privacy event — is tested with
thresholded events chosen on one half of the runs and checked with Clopper–Pearson
bounds on the other half.

>>> import numpy as np
>>> from dpsk.audit import audit
>>> def broken_count(count, size, rng):  # noise calibrated for sensitivity 1, shift 1.5
...     return 1.5 * count + rng.laplace(0.0, 1.0, size)
>>> audit(broken_count, (0.0, 1.0), epsilon=1.0, random_state=0).verdict
'fail'

See doc/developers/privacy_testing.rst for the method and its measured validity.
"""

from dpsk.audit._audit import AuditResult, audit
from dpsk.audit._neighbours import (
    canary_neighbours,
    canary_row,
    project_attribute,
    project_output,
    worst_case_neighbours,
)
from dpsk.audit._offset import RoundingProbe, offset_neighbours, rounding_probe
from dpsk.audit._profiles import privacy_profile
from dpsk.audit._samplers import (
    StatisticEstimator,
    audit_estimator,
    declared_cost,
    estimator_sampler,
    mechanism_sampler,
    statistic_estimator,
)

__all__ = [
    "AuditResult",
    "RoundingProbe",
    "StatisticEstimator",
    "audit",
    "audit_estimator",
    "canary_neighbours",
    "canary_row",
    "declared_cost",
    "estimator_sampler",
    "mechanism_sampler",
    "offset_neighbours",
    "privacy_profile",
    "project_attribute",
    "project_output",
    "rounding_probe",
    "statistic_estimator",
    "worst_case_neighbours",
]
