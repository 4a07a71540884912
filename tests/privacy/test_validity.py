# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validity of the privacy audits themselves (Google's "test the test cases" idea).

An audit is only worth running if it (a) accepts a correct implementation and (b) rejects
the bugs it exists for. Here both are measured on toy mechanisms and the toy estimator,
each with deliberate bugs: sensitivity × 1.25, ε × 2, noise on the wrong scale, clipping
off. Requirement: acceptance ≥ 0.9 for the correct variant and rejection ≥ 0.9 for each
broken one, at the same sample sizes the privacy tests use.

The default run checks one fixed seed per variant; the ``slow`` tests measure the rates
over many seeds (deterministic: the seeds are fixed too) and print them; the figures in
doc/developers/privacy_testing.rst come from these tests.
"""

import math
from functools import partial

import pytest

from dpsk.audit import audit, audit_estimator, mechanism_sampler, project_attribute, worst_case_neighbours
from dpsk.utils._testing import (
    BrokenToyDPMeanClassifier,
    ToyDPMeanClassifier,
    ToyGaussianMechanism,
    ToyLaplaceMechanism,
    check_audit_rate,
)

EPS = math.log(3)

# name -> (mechanism class, constructor arguments, claim, runs per neighbour)
MECHANISMS = {
    "laplace/event": (ToyLaplaceMechanism, dict(epsilon=EPS), "event", 100_000),
    "laplace/epsilon": (ToyLaplaceMechanism, dict(epsilon=EPS), dict(epsilon=EPS), 100_000),
    "gaussian/event": (ToyGaussianMechanism, dict(epsilon=1.0, delta=1e-5), "event", 200_000),
}
MECHANISM_VARIANTS = [(name, bug) for name in MECHANISMS for bug in (None, *MECHANISMS[name][0].BUGS)]
ESTIMATOR_VARIANTS = [None, "epsilon_x2", "no_clipping"]
SLOW_SEEDS = range(1000, 1050)
SLOW_ESTIMATOR_SEEDS = range(1000, 1008)


def run_mechanism_audit(name, bug, seed):
    cls, params, claim, n_samples = MECHANISMS[name]
    if claim == "event":
        claim = dict(event=cls(**params).privacy_event)  # what the mechanism claims
    sampler = mechanism_sampler(partial(cls, bug=bug, **params))
    return audit(sampler, (0.0, 1.0), n_samples=n_samples, random_state=seed, **claim)


def run_estimator_audit(bug, seed, n_jobs=None):
    params = dict(epsilon=2.0, bounds=(-1.0, 1.0), classes=[0, 1])
    estimator = ToyDPMeanClassifier(**params) if bug is None else BrokenToyDPMeanClassifier(bug=bug, **params)
    return audit_estimator(
        estimator,
        worst_case_neighbours(estimator),
        project_attribute("means_", (1, 0)),
        n_samples=6_000,
        random_state=seed,
        n_jobs=n_jobs,
    )


def _ids(variant):
    return variant if isinstance(variant, str) else "correct" if variant is None else str(variant)


@pytest.mark.parametrize("name, bug", MECHANISM_VARIANTS, ids=[f"{n}-{_ids(b)}" for n, b in MECHANISM_VARIANTS])
def test_mechanism_audit_accepts_correct_and_rejects_bugs(name, bug):
    result = run_mechanism_audit(name, bug, seed=0)
    assert result.passed == (bug is None), str(result)


@pytest.mark.audit
@pytest.mark.parametrize("bug", ESTIMATOR_VARIANTS, ids=_ids)
@pytest.mark.extended
def test_estimator_audit_accepts_correct_and_rejects_bugs(bug):
    result = run_estimator_audit(bug, seed=0)
    assert result.passed == (bug is None), str(result)


@pytest.mark.slow
@pytest.mark.parametrize("name, bug", MECHANISM_VARIANTS, ids=[f"{n}-{_ids(b)}" for n, b in MECHANISM_VARIANTS])
@pytest.mark.extended
def test_mechanism_audit_rates(name, bug):
    """Check acceptance ≥ 0.9 (correct) and rejection ≥ 0.9 (broken) over 50 seeds."""
    check_audit_rate(name, bug, [run_mechanism_audit(name, bug, seed) for seed in SLOW_SEEDS])


@pytest.mark.slow
@pytest.mark.parametrize("bug", ESTIMATOR_VARIANTS, ids=_ids)
@pytest.mark.extended
def test_estimator_audit_rates(bug):
    """Check acceptance ≥ 0.9 (correct) and rejection ≥ 0.9 (broken) over 8 seeds."""
    check_audit_rate(
        "ToyDPMeanClassifier", bug, [run_estimator_audit(bug, seed, n_jobs=2) for seed in SLOW_ESTIMATOR_SEEDS]
    )
