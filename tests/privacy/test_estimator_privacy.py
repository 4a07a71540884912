# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Black-box privacy audit of every estimator on worst-case neighbours.

Each estimator is fitted thousands of times on two neighbouring datasets (a canary row
beyond the clipping boundary added or removed; a whole user for user-level estimators),
each fit is projected to the value the canary moves most, and :func:`dpsk.audit.audit`
tests the projection against the privacy cost the estimator itself declares
(``privacy_spent_``). A declared cost too small for the noise actually added, a missing
clip or a wrong sensitivity makes the audit fail.

**Adding an estimator** is one entry in ``ESTIMATOR_AUDITS`` (the audit registry,
``dpsk/utils/_testing/registry.py``): an instance with public
sensitivity parameters, a projection, and, only if the default
:func:`dpsk.audit.worst_case_neighbours` does not fit the estimator, a neighbour
generator ``estimator -> (fit kwargs without, fit kwargs with canary)``. Estimators that
cannot be audited this way go in ``NOT_AUDITED`` with the reason.
"""

import numpy as np
import pytest

from dpsk.audit import audit_estimator
from dpsk.utils._testing.registry import ESTIMATOR_AUDITS


@pytest.mark.audit
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


@pytest.mark.slow
@pytest.mark.extended
def test_label_privacy_audit_rejects_per_row_sensitivity(monkeypatch):
    """Check the power of the label-privacy audit: noise calibrated on the largest *row* mass
    of C (item level) instead of the largest *user* mass is rejected (users of 4 rows)."""
    from dpsk.linear_model import _user_level

    monkeypatch.setattr(_user_level, "user_masses", lambda C, codes, n_users: np.abs(C).sum(axis=0))
    case = ESTIMATOR_AUDITS["LabelPrivateLinearRegression"]
    result = audit_estimator(
        case.estimator, case.neighbours(case.estimator), case.projection, n_samples=case.n_samples, random_state=0
    )
    assert not result.passed, str(result)
