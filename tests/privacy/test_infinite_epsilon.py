# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Black-box audits of epsilon=inf releases: they are non-private, and recorded as such.

An ε = ∞ release adds no noise, so two neighbours give different outputs every time:
the audit must refute any finite claim it can resolve (a broken accounting that recorded
such a release as, say, ε = 2 would be caught), and accept the infinite cost dpsk
records (a claim no function can violate).
"""

import math
from functools import partial

import numpy as np
import pytest

from dpsk.audit import (
    audit,
    audit_estimator,
    canary_neighbours,
    declared_cost,
    estimator_sampler,
    mechanism_sampler,
    project_attribute,
    worst_case_neighbours,
)
from dpsk.linear_model import LinearRegression
from dpsk.mechanisms import DiscreteLaplace, Gaussian, Laplace
from dpsk.utils._testing import ToyDPMeanClassifier

N_SAMPLES = 1_000  # deterministic outputs: a few hundred runs already resolve ε > 3


@pytest.mark.parametrize(
    "mechanism",
    [partial(Laplace, epsilon=math.inf), partial(Gaussian, epsilon=math.inf, delta=1e-5)],
    ids=["Laplace", "Gaussian"],
)
def test_infinite_epsilon_mechanism_is_refuted_at_finite_epsilon(mechanism):
    sampler = mechanism_sampler(mechanism)
    recorded = mechanism().privacy_event()
    assert audit(sampler, (0.0, 1.0), event=recorded, n_samples=N_SAMPLES, random_state=0).passed
    refuted = audit(sampler, (0.0, 1.0), epsilon=2.0, n_samples=N_SAMPLES, random_state=0)
    assert not refuted.passed and refuted.epsilon_lower_bound > 3.0, str(refuted)


def test_infinite_epsilon_discrete_mechanism_is_refuted_at_finite_epsilon():
    sampler = mechanism_sampler(partial(DiscreteLaplace, epsilon=math.inf))
    refuted = audit(sampler, (0, 1), epsilon=2.0, n_samples=N_SAMPLES, random_state=0)
    assert not refuted.passed, str(refuted)


@pytest.mark.slow
@pytest.mark.parametrize(
    "estimator, projection",
    [
        (
            ToyDPMeanClassifier(epsilon=math.inf, bounds=(-1.0, 1.0), classes=[0, 1]),
            project_attribute("means_", (1, 0)),
        ),
        (
            LinearRegression(epsilon=math.inf, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), fit_intercept=False),
            project_attribute("coef_", 0),
        ),
    ],
    ids=["ToyDPMeanClassifier", "LinearRegression"],
)
def test_infinite_epsilon_estimator_declares_what_the_audit_sees(estimator, projection):
    """Check the declared cost of an ε = ∞ fit is infinite and that a finite claim is refuted."""
    if isinstance(estimator, LinearRegression):  # rows on the line y = 0; the canary moves the slope
        neighbours = canary_neighbours(np.ones((50, 1)), np.zeros(50), canary_X=[1.0], canary_y=1.0)
    else:
        neighbours = worst_case_neighbours(estimator)
    assert math.isinf(declared_cost(estimator, neighbours).flatten()[0].epsilon)
    assert audit_estimator(estimator, neighbours, projection, n_samples=N_SAMPLES, random_state=0).passed
    refuted = audit(
        estimator_sampler(estimator, projection), neighbours, epsilon=2.0, n_samples=N_SAMPLES, random_state=0
    )
    assert not refuted.passed, str(refuted)
    assert np.isfinite(refuted.epsilon_lower_bound)
