# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The recording harness really exercises naive Bayes, PCA, k-means and the scalers.

``test_recording.py`` checks, for every discovered estimator and d ∈ {1, 2, 5, 20, 50},
that the releases a fit makes equal its declared cost. That check would pass vacuously
for an estimator that releases nothing and declares nothing; here each of these
estimators must also be discovered, make at least one release of positive cost at every
d, and declare a cost that changes with ε (so the check compares real events).
"""

import pytest

from dpsk.accounting import get_epsilon, record_releases
from dpsk.utils._testing.common import estimators_under_test
from dpsk.utils._testing.registry import FAMILY_AUDITS as AUDITS
from dpsk.utils.estimator_checks import _prepared, make_check_data

FAMILY = {type(est).__name__: est for est in estimators_under_test() if type(est).__name__ in AUDITS}


def test_every_family_estimator_is_under_test():
    assert set(FAMILY) == set(AUDITS)


@pytest.mark.parametrize("n_features", [1, 2, 5, 20, 50])
@pytest.mark.parametrize("name", sorted(AUDITS))
def test_fit_makes_releases_of_positive_cost(name, n_features):
    estimator = FAMILY[name]
    data = make_check_data(estimator, n_features=n_features)
    costs = []
    for epsilon in (0.5, 2.0):
        with record_releases() as drawn:
            _prepared(estimator, data, epsilon=epsilon, random_state=0).fit(**data)
        assert drawn, f"{name} made no release at n_features={n_features}"
        costs.append(sum(get_epsilon(event, 1e-6) for event in drawn))
    assert 0 < costs[0] < costs[1]
