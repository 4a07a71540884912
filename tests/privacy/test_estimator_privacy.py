# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Black-box privacy audit of every estimator on worst-case neighbours.

Each estimator is fitted thousands of times on two neighbouring datasets (a canary row
beyond the clipping boundary added or removed; a whole user for user-level estimators),
each fit is projected to the value the canary moves most, and :func:`dpsk.audit.audit`
tests the projection against the privacy cost the estimator itself declares
(``privacy_spent_``). A declared cost too small for the noise actually added, a missing
clip or a wrong sensitivity makes the audit fail.

**Adding an estimator** is one entry in ``ESTIMATOR_AUDITS``: an instance with public
sensitivity parameters, a projection, and, only if the default
:func:`dpsk.audit.worst_case_neighbours` does not fit the estimator, a neighbour
generator ``estimator -> (fit kwargs without, fit kwargs with canary)``. Estimators that
cannot be audited this way go in ``NOT_AUDITED`` with the reason.
"""

from dataclasses import dataclass, field
from typing import Callable

import pytest

from dpsk.audit import audit_estimator, project_attribute, worst_case_neighbours
from dpsk.utils import all_estimators
from dpsk.utils._test_common import REFERENCE_ESTIMATORS
from dpsk.utils._testing import ToyDPMeanClassifier


@dataclass
class EstimatorAudit:
    estimator: object
    projection: Callable
    neighbours: Callable = worst_case_neighbours
    n_samples: int = 6_000
    audit_params: dict = field(default_factory=dict)


ESTIMATOR_AUDITS = {
    # The class-1 mean: the canary (class 1, beyond the upper bound) moves both its count
    # and its sum, while the other class-1 rows sit at the lower bound.
    "ToyDPMeanClassifier": EstimatorAudit(
        ToyDPMeanClassifier(epsilon=2.0, bounds=(-1.0, 1.0), classes=[0, 1]), project_attribute("means_", (1, 0))
    ),
}

#: Estimators that are deliberately not audited here, by class name, with the reason.
NOT_AUDITED = {
    name: "audited in test_selection_privacy.py with neighbours that make the selection visible "
    "and its declared cost as an (epsilon, 0) claim (no privacy profile for the exponential mechanism)"
    for name in ("GridSearchCV", "RandomizedSearchCV")
}


def test_every_estimator_has_a_privacy_audit():
    """Check that a new public estimator cannot skip the privacy audit."""
    names = {name for name, _ in [*all_estimators(), *REFERENCE_ESTIMATORS]}
    missing = names - set(ESTIMATOR_AUDITS) - set(NOT_AUDITED)
    assert not missing, f"add an entry to ESTIMATOR_AUDITS (or NOT_AUDITED, with a reason) for {sorted(missing)}"
    assert set(ESTIMATOR_AUDITS) <= names, "stale entries in ESTIMATOR_AUDITS"
    assert all(len(reason) > 10 for reason in NOT_AUDITED.values())


@pytest.mark.parametrize("name", sorted(ESTIMATOR_AUDITS))
def test_estimator_privacy_audit(name):
    """Check that the estimator's noise is enough for the cost it declares, on worst-case neighbours."""
    case = ESTIMATOR_AUDITS[name]
    result = audit_estimator(
        case.estimator,
        case.neighbours(case.estimator),
        case.projection,
        n_samples=case.n_samples,
        random_state=0,
        **case.audit_params,
    )
    assert result.passed, str(result)
