# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Black-box privacy audit of every mechanism on worst-case neighbouring inputs.

Each mechanism is run 5·10³–2·10⁵ times on each of two neighbouring inputs and
:func:`dpsk.audit.audit` tests the outputs against what the mechanism declares, its
``privacy_event()``: the exact privacy profile of one release, as the accountant
computes it (:func:`dpsk.accounting.get_delta`). Neighbours are worst cases: values one
sensitivity apart; for the selection mechanisms, scores (0, 0) against (-Δ, +Δ), each
score moved by the sensitivity in the direction that favours candidate 1; for
randomized response, the two answers.

Every entry also carries a deliberately broken variant with the same claim (noise
calibrated for 0.8 of the sensitivity, i.e. a sensitivity bug × 1.25, or ε × 2), which
must be rejected: with seed 0 in the default run, and at a rate ≥ 0.9 over 20 seeds in
the ``slow`` run, which also measures the acceptance rate of the correct mechanism
(doc/developers/privacy_testing.rst reports the figures).

**Adding a mechanism** is one entry in ``MECHANISM_AUDITS`` (the audit registry,
``dpsk/utils/_testing/registry.py``): a factory
``make(random_state=rng) -> mechanism`` (e.g. ``functools.partial``), the neighbouring
inputs, the broken variant, and how many runs. Classes exported by ``dpsk.mechanisms``
that are not mechanisms, or cannot be audited this way, go in ``NOT_AUDITED_MECHANISMS``
with the reason.
"""

import numpy as np
import pytest

from dpsk.audit import audit, mechanism_sampler
from dpsk.utils._testing import check_audit_rate
from dpsk.utils._testing.registry import MECHANISM_AUDITS

SLOW_SEEDS = range(1000, 1020)


def _projected(sampler, projection):
    def projected(value, size, rng):
        return projection(sampler(value, size, rng))

    return projected


def run_audit(name, *, broken=False, seed=0):
    case = MECHANISM_AUDITS[name]
    sampler = mechanism_sampler(case.broken if broken else case.make, vectorised=case.vectorised)
    if case.projection is not None:
        sampler = _projected(sampler, case.projection)
    return audit(sampler, case.neighbours, n_samples=case.n_samples, random_state=seed, **case.audit_claim())


@pytest.mark.parametrize("name", sorted(MECHANISM_AUDITS))
def test_mechanism_privacy_audit(name):
    """Check that the mechanism satisfies its claim on neighbouring inputs (α = 1e-6, fixed seed)."""
    result = run_audit(name)
    assert result.passed, str(result)


@pytest.mark.parametrize("name", sorted(MECHANISM_AUDITS))
def test_broken_mechanism_is_rejected(name):
    """Check the audit's power: the broken variant fails the correct variant's claim (seed 0)."""
    result = run_audit(name, broken=True)
    assert not result.passed, f"{MECHANISM_AUDITS[name].bug}: {result}"


@pytest.mark.parametrize("name", sorted(MECHANISM_AUDITS))
def test_bulk_sampler_draws_what_randomise_releases(name):
    """Check that the audit's bulk draw is the public release, draw for draw (same generator)."""
    case = MECHANISM_AUDITS[name]
    sampler = mechanism_sampler(case.make, vectorised=case.vectorised)
    for value in case.neighbours:
        for seed in range(3):
            released = case.make(random_state=np.random.default_rng(seed)).randomise(value)
            drawn = sampler(value, 1, np.random.default_rng(seed))
            np.testing.assert_array_equal(drawn[0], released)


@pytest.mark.slow
@pytest.mark.parametrize("broken", [False, True], ids=["correct", "broken"])
@pytest.mark.parametrize("name", sorted(set(MECHANISM_AUDITS) - {"ToyLaplaceMechanism", "ToyGaussianMechanism"}))
@pytest.mark.extended
def test_mechanism_audit_rates(name, broken):
    """Check acceptance ≥ 0.9 (correct) and rejection ≥ the entry's rate (0.9 unless stated) over 20 seeds."""
    results = [run_audit(name, broken=broken, seed=seed) for seed in SLOW_SEEDS]
    case = MECHANISM_AUDITS[name]
    check_audit_rate(name, case.bug if broken else None, results, minimum=case.min_rejection_rate if broken else 0.9)


def test_answer_counts_tells_every_count_pattern_apart():
    """Check that the sparse-vector projection maps distinct per-block counts of ⊤ and ⊥ to distinct codes."""
    from itertools import product

    from dpsk.utils._testing.registry import answer_counts

    runs = np.array(list(product((-1, 0, 1), repeat=5)))
    codes = answer_counts(runs, blocks=(2, 3))
    counts = [((r[:2] == 1).sum(), (r[:2] == 0).sum(), (r[2:] == 1).sum(), (r[2:] == 0).sum()) for r in runs]
    assert len(set(codes.tolist())) == len(set(counts))
    for code, count in zip(codes, counts):
        assert all(codes[i] == code for i, c in enumerate(counts) if c == count)
