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

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from dpsk.audit import audit_estimator, canary_neighbours, project_attribute, worst_case_neighbours
from dpsk.linear_model import LabelPrivateLinearRegression, LinearRegression, LogisticRegression, Ridge
from dpsk.svm import LinearSVC
from dpsk.utils import all_estimators
from dpsk.utils._test_common import REFERENCE_ESTIMATORS
from dpsk.utils._testing import ToyDPMeanClassifier
from dpsk.utils._testing_family import AUDITS as FAMILY_AUDITS


@dataclass
class EstimatorAudit:
    estimator: object
    projection: Callable
    neighbours: Callable = worst_case_neighbours
    n_samples: int = 6_000
    audit_params: dict = field(default_factory=dict)


def label_neighbours(estimator, n_users=10, rows=4, overshoot=4.0):
    """Label privacy: same public X and users; the last user's labels low or beyond the high bound.

    The canary user's rows sit at the edge of X (highest leverage on the slope).
    """
    low, high = estimator.get_params()["bounds_y"]
    X = np.repeat(np.linspace(-1.0, 1.0, n_users), rows)[:, None]
    groups = np.repeat(np.arange(n_users), rows)
    y = np.full(X.shape[0], float(low))
    y_canary = y.copy()
    y_canary[groups == n_users - 1] = overshoot * float(high)
    return {"X": X, "y": y, "groups": groups}, {"X": X, "y": y_canary, "groups": groups}


def _item_level(estimator):
    """worst_case_neighbours without ``groups``: the item-level fit of an estimator whose fit
    also takes ``groups`` (its user-level audits: tests/linear_model/test_user_level.py)."""
    neighbours = worst_case_neighbours(estimator, rows_per_user=1)  # a canary of one row
    return tuple({k: v for k, v in data.items() if k != "groups"} for data in neighbours)


def _misclassified_canary(estimator, n=100):
    """Linear classifiers: rows at x = data_norm labelled 0, a canary labelled 1 four times beyond.

    The fit predicts 0 firmly at x = data_norm, so the canary's loss has slope close to
    −1 and moves the perturbed objective by (almost) its whole sensitivity.
    """
    norm = estimator.get_params()["data_norm"]
    return canary_neighbours(np.full((n, 1), norm), np.zeros(n, dtype=int), canary_X=[4 * norm], canary_y=1)


def _lone_canary(estimator, n=20):
    """Linear classifiers: rows at x = 0 (no gradient, no curvature), a canary four times beyond data_norm."""
    norm = estimator.get_params()["data_norm"]
    return canary_neighbours(np.zeros((n, 1)), np.arange(n) % 2, canary_X=[4 * norm], canary_y=1)


ESTIMATOR_AUDITS = {
    # OLS keeps the fits cheap; the noise rule (masses of the final C) is the same for
    # every method (tests/linear_model/test_user_level.py shows the audit's power on it).
    "LabelPrivateLinearRegression": EstimatorAudit(
        LabelPrivateLinearRegression(epsilon=1.0, bounds_y=(-1.0, 1.0), method="ols"),
        project_attribute("coef_", 0),
        neighbours=label_neighbours,
    ),
    # The class-1 mean: the canary (class 1, beyond the upper bound) moves both its count
    # and its sum, while the other class-1 rows sit at the lower bound.
    "ToyDPMeanClassifier": EstimatorAudit(
        ToyDPMeanClassifier(epsilon=2.0, bounds=(-1.0, 1.0), classes=[0, 1]), project_attribute("means_", (1, 0))
    ),
    # Objective perturbation, ε-DP (the other methods: tests/linear_model/test_linear_privacy.py).
    "LogisticRegression": EstimatorAudit(
        LogisticRegression(epsilon=1.0, data_norm=1.0, C=1.0, fit_intercept=False, classes=[0, 1]),
        project_attribute("coef_", (0, 0)),
        _misclassified_canary,
    ),
    # Output perturbation: with Λ = 4 the Huberized hinge's slope is exactly −1 at the
    # canary, which alone (the other rows sit at x = 0) moves the minimiser by 1/Λ.
    "LinearSVC": EstimatorAudit(
        LinearSVC(epsilon=1.0, data_norm=1.0, C=0.25, method="output", fit_intercept=False, classes=[0, 1]),
        project_attribute("coef_", (0, 0)),
        _lone_canary,
    ),
    # Laplace releases of the sufficient statistics; the canary moves the slope most.
    "LinearRegression": EstimatorAudit(
        LinearRegression(epsilon=1.0, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0)),
        project_attribute("coef_", 0),
        _item_level,
    ),
    "Ridge": EstimatorAudit(
        Ridge(alpha=1.0, epsilon=1.0, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0)),
        project_attribute("coef_", 0),
        _item_level,
    ),
}

# Naive Bayes, PCA, k-means, scalers: configurations in dpsk/utils/_testing_family.py.
ESTIMATOR_AUDITS.update(
    {name: EstimatorAudit(a.estimator, a.projection, a.neighbours, a.n_samples) for name, a in FAMILY_AUDITS.items()}
)

#: Estimators that are deliberately not audited here, by class name, with the reason.
NOT_AUDITED = {
    name: "audited in test_selection_privacy.py with neighbours that make the selection visible "
    "and its declared cost as an (epsilon, 0) claim (no privacy profile for the exponential mechanism)"
    for name in ("GridSearchCV", "RandomizedSearchCV")
}
NOT_AUDITED.update(
    {
        name: "audited in tests/ensemble/test_pate.py with canary neighbours that need public rows "
        "(X_public) or a part-level canary, each with broken variants that must be rejected"
        for name in ("PATEClassifier", "SubsampleAggregate")
    }
)


def test_every_estimator_has_a_privacy_audit():
    """Check that a new public estimator cannot skip the privacy audit."""
    names = {name for name, _ in [*all_estimators(), *REFERENCE_ESTIMATORS]}
    missing = names - set(ESTIMATOR_AUDITS) - set(NOT_AUDITED)
    assert not missing, f"add an entry to ESTIMATOR_AUDITS (or NOT_AUDITED, with a reason) for {sorted(missing)}"
    assert set(ESTIMATOR_AUDITS) <= names, "stale entries in ESTIMATOR_AUDITS"
    assert all(len(reason) > 10 for reason in NOT_AUDITED.values())


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
