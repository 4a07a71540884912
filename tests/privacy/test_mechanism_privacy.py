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

**Adding a mechanism** is one entry in ``MECHANISM_AUDITS``: a factory
``make(random_state=rng) -> mechanism`` (e.g. ``functools.partial``), the neighbouring
inputs, the broken variant, and how many runs. Classes exported by ``dpsk.mechanisms``
that are not mechanisms, or cannot be audited this way, go in ``NOT_AUDITED`` with the
reason.
"""

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import pytest

import dpsk.local as local
import dpsk.mechanisms as mechanisms
from dpsk.accounting import GaussianEvent, LaplaceEvent
from dpsk.audit import audit, mechanism_sampler
from dpsk.local._randomizers import hash_buckets
from dpsk.mechanisms._base import ImmutableMechanism
from dpsk.utils._testing import (
    ToyGaussianMechanism,
    ToyLaplaceMechanism,
    analytic_gaussian_sigma,
    check_audit_rate,
)


@dataclass
class MechanismAudit:
    make: Callable  # make(random_state=rng) -> the mechanism
    broken: Callable  # the same with a deliberate calibration bug
    bug: str  # what the broken variant gets wrong
    neighbours: tuple = (0.0, 1.0)
    n_samples: int = 200_000
    vectorised: bool = True  # False: one `randomise` call per run
    claim: dict = None  # audit claim; default: event=make(...).privacy_event()
    projection: Callable = None  # outputs (size, ...) -> what the audit sees; default: as drawn

    def audit_claim(self):
        if self.claim is not None:
            return self.claim
        return dict(event=self.make(random_state=0).privacy_event())


class BrokenSparseVector(mechanisms.SparseVector):
    """SparseVector with a deliberate bug from the literature (Lyu, Su & Li 2017, §3)."""

    def __init__(self, *, bug, **params):
        self.bug = bug
        super().__init__(**params)

    def _query_shift(self):
        if self.bug == "no_factor_c":  # query noise Lap(2Δ/ε₂), as Lee & Clifton 2014 (their Alg. 4)
            return 2
        return super()._query_shift()

    def _answers(self, noisy, noisy_thresholds):
        if self.bug == "no_halting":  # answers every query (Chen et al. 2015, their Alg. 6)
            return np.where(noisy >= noisy_thresholds[:, None], 1, 0).astype(np.int8)
        return super()._answers(noisy, noisy_thresholds)


class BrokenDirectEncoding(local.DirectEncoding):
    """GRR keeping the true category with probability e^2ε/(e^2ε + d - 1): p computed with e^{2ε}."""

    def _keep_parameters(self):
        return self.n_categories, 2 * self.epsilon


class BrokenUnaryEncoding(local.UnaryEncoding):
    """Unary encoding whose two bit probabilities do not share ε: each gets all of it.

    SUE: every bit is randomized response with ε (basic RAPPOR without the split: a
    change of value flips two bits, 2ε). OUE: the true bit with SUE's p = e^ε/(e^ε + 1)
    instead of 1/2, next to OUE's q = 1/(e^ε + 1) (odds ratio e^2ε).
    """

    def _bit_gammas(self):
        return self.epsilon, self.epsilon


class BrokenLocalHashing(local.LocalHashing):
    """Local hashing to g buckets keeping the bucket with binary RR's e^ε/(e^ε + 1) (computed for g = 2)."""

    def _keep_parameters(self):
        return 2, self.epsilon


class BrokenOneBitMean(local.OneBitMean):
    """One-bit mean whose randomized response uses 2ε."""

    def _keep_gamma(self):
        return 2 * self.epsilon


def bits_of_neighbours(reports, first=0, last=-1):
    """Unary-encoding reports -> 2 bit_a + bit_b, the bits of the two neighbouring values.

    The other bits have the same distribution under both values, independently: the pair
    is all the audit needs to see.
    """
    return 2 * reports[:, first] + reports[:, last]


def supports_of_neighbours(reports, *, values=(0, 15), n_buckets):
    """Local-hashing reports (a, b, y) -> 2 [y = h(v0)] + [y = h(v1)] for the neighbours v0, v1.

    A post-processing of each report: what it says about the two values (a fixed
    function, so a violation on it is one of the report).
    """
    v0, v1 = (hash_buckets(reports[:, 0], reports[:, 1], v, n_buckets) for v in values)
    return 2 * (reports[:, 2] == v0) + (reports[:, 2] == v1)


def answer_pattern(answers):
    """One integer per run: the answers (1, 0, -1) in base 3, a discrete output for the audit."""
    answers = np.asarray(answers, dtype=np.int64)
    return ((answers + 1) * 3 ** np.arange(answers.shape[1])).sum(axis=1)


EPS = math.log(3)
DELTA = 1e-5
SCORES = (np.array([0.0, 0.0]), np.array([-1.0, 1.0]))  # each score moved by Δ = 1

MECHANISM_AUDITS = {
    # Reference entries (test helpers), so that the audit machinery always runs.
    "ToyLaplaceMechanism": MechanismAudit(
        partial(ToyLaplaceMechanism, epsilon=EPS),
        partial(ToyLaplaceMechanism, epsilon=EPS, bug="sensitivity_x1.25"),
        "sensitivity x 1.25",
        claim=dict(event=LaplaceEvent(1 / EPS)),
        n_samples=100_000,
    ),
    "ToyGaussianMechanism": MechanismAudit(
        partial(ToyGaussianMechanism, epsilon=1.0, delta=DELTA),
        partial(ToyGaussianMechanism, epsilon=1.0, delta=DELTA, bug="sensitivity_x1.25"),
        "sensitivity x 1.25",
        claim=dict(event=GaussianEvent(analytic_gaussian_sigma(1.0, DELTA))),
    ),
    # Floating-point safe value mechanisms (lattice noise, exact samplers).
    "Laplace": MechanismAudit(
        partial(mechanisms.Laplace, epsilon=EPS, sensitivity=1.0),
        partial(mechanisms.Laplace, epsilon=EPS, sensitivity=0.8),
        "noise for sensitivity 0.8",
        n_samples=100_000,
    ),
    "Gaussian": MechanismAudit(
        partial(mechanisms.Gaussian, epsilon=1.0, delta=DELTA, sensitivity=1.0),
        partial(mechanisms.Gaussian, epsilon=1.0, delta=DELTA, sensitivity=0.8),
        "noise for sensitivity 0.8",
    ),
    "DiscreteLaplace": MechanismAudit(
        partial(mechanisms.DiscreteLaplace, epsilon=EPS, sensitivity=5),
        partial(mechanisms.DiscreteLaplace, epsilon=EPS, sensitivity=4),
        "noise for sensitivity 4 of 5",
        neighbours=(0, 5),
        n_samples=100_000,
    ),
    "DiscreteGaussian": MechanismAudit(
        partial(mechanisms.DiscreteGaussian, epsilon=1.0, delta=DELTA, sensitivity=5),
        partial(mechanisms.DiscreteGaussian, epsilon=1.0, delta=DELTA, sensitivity=4),
        "noise for sensitivity 4 of 5",
        neighbours=(0, 5),
    ),
    # Textbook samplers (not floating-point safe, see test_floating_point.py): the
    # distribution itself is audited here.
    "UnsafeLaplace": MechanismAudit(
        partial(mechanisms.UnsafeLaplace, epsilon=EPS, sensitivity=1.0),
        partial(mechanisms.UnsafeLaplace, epsilon=EPS, sensitivity=0.8),
        "noise for sensitivity 0.8",
        n_samples=100_000,
    ),
    "UnsafeGaussian": MechanismAudit(
        partial(mechanisms.UnsafeGaussian, epsilon=1.0, delta=DELTA, sensitivity=1.0),
        partial(mechanisms.UnsafeGaussian, epsilon=1.0, delta=DELTA, sensitivity=0.8),
        "noise for sensitivity 0.8",
    ),
    # Selection: one index per call. The exponential mechanism's claim is its ε-bounded
    # range profile, which this pair attains exactly at ε' = ln(4/3).
    "ExponentialMechanism": MechanismAudit(
        partial(mechanisms.ExponentialMechanism, epsilon=EPS),
        partial(mechanisms.ExponentialMechanism, epsilon=2 * EPS),
        "epsilon x 2",
        neighbours=SCORES,
        n_samples=5_000,
        vectorised=False,
    ),
    "ReportNoisyMax": MechanismAudit(
        partial(mechanisms.ReportNoisyMax, epsilon=EPS),
        partial(mechanisms.ReportNoisyMax, epsilon=2 * EPS),
        "epsilon x 2",
        neighbours=SCORES,
        n_samples=5_000,
        vectorised=False,
    ),
    # Sparse vector: one run answers a stream of queries; its output (the answer pattern)
    # is audited as one discrete value. Neighbours (Lyu, Su & Li 2017, proof of Thm 2):
    # all queries at the threshold, against the first ones moved up by Δ (a shift of the
    # noisy threshold hides them) and the rest moved down by Δ (each ⊤ among them costs
    # its query noise a shift of 2Δ). ε = 4 makes the noise small enough next to Δ for
    # the bugs' extra loss to show in 10⁵ runs.
    "SparseVector": MechanismAudit(
        partial(mechanisms.SparseVector, epsilon=4.0, threshold=0.0, max_answers=2),
        partial(BrokenSparseVector, bug="no_factor_c", epsilon=4.0, threshold=0.0, max_answers=2),
        "query noise without the factor c",
        neighbours=(np.zeros(6), np.array([1.0, 1.0, -1.0, -1.0, -1.0, -1.0])),
        projection=answer_pattern,
    ),
    "AboveThreshold": MechanismAudit(
        partial(mechanisms.AboveThreshold, epsilon=4.0, threshold=0.0),
        partial(mechanisms.AboveThreshold, epsilon=4.0, threshold=0.0, monotonic=True),
        "monotonic-query noise (half) on general queries",
        neighbours=(np.zeros(5), np.array([1.0, 1.0, -1.0, -1.0, -1.0])),
        projection=answer_pattern,
    ),
    "SparseVector, no halting": MechanismAudit(
        partial(mechanisms.SparseVector, epsilon=4.0, threshold=0.0, max_answers=1),
        partial(BrokenSparseVector, bug="no_halting", epsilon=4.0, threshold=0.0, max_answers=1),
        "does not halt after c answers above",
        neighbours=(np.zeros(5), np.array([1.0, 1.0, -1.0, -1.0, -1.0])),
        projection=answer_pattern,
    ),
    # One release per respondent: the batch is many independent releases.
    "RandomizedResponse": MechanismAudit(
        partial(mechanisms.RandomizedResponse, epsilon=EPS),
        partial(mechanisms.RandomizedResponse, epsilon=2 * EPS),
        "epsilon x 2",
        neighbours=(0, 1),
        n_samples=100_000,
    ),
    # Local DP (dpsk.local): one report per user, a batch is many users. Neighbours are
    # two values of one user; the protocols treat every pair alike (GRR and UE by
    # symmetry, LH through a hash drawn per report), so the first and last categories
    # are as bad as any. ε = ln 3, as for RandomizedResponse.
    "local.DirectEncoding": MechanismAudit(
        partial(local.DirectEncoding, epsilon=EPS, n_categories=4),
        partial(BrokenDirectEncoding, epsilon=EPS, n_categories=4),
        "keep probability with e^(2 epsilon)",
        neighbours=(0, 3),
        n_samples=100_000,
    ),
    "local.UnaryEncoding": MechanismAudit(
        partial(local.UnaryEncoding, epsilon=EPS, n_categories=8),
        partial(BrokenUnaryEncoding, epsilon=EPS, n_categories=8),
        "true bit with SUE's p next to OUE's q (odds e^(2 epsilon))",
        neighbours=(0, 7),
        n_samples=100_000,
        projection=bits_of_neighbours,
    ),
    "local.UnaryEncoding, symmetric": MechanismAudit(
        partial(local.UnaryEncoding, epsilon=EPS, n_categories=8, variant="symmetric"),
        partial(BrokenUnaryEncoding, epsilon=EPS, n_categories=8, variant="symmetric"),
        "epsilon per bit instead of epsilon/2 (two bits change)",
        neighbours=(0, 7),
        n_samples=100_000,
        projection=bits_of_neighbours,
    ),
    # OLH at ε = ln 3: g = 4 buckets. The broken variant hashes to these 4 buckets but
    # keeps the bucket with the probability computed for 2 (odds 3 e^ε).
    "local.LocalHashing": MechanismAudit(
        partial(local.LocalHashing, epsilon=EPS, n_categories=16),
        partial(BrokenLocalHashing, epsilon=EPS, n_categories=16),
        "4 buckets, keep probability computed for 2",
        neighbours=(0, 15),
        n_samples=100_000,
        projection=partial(supports_of_neighbours, n_buckets=4),
    ),
    "local.OneBitMean": MechanismAudit(
        partial(local.OneBitMean, epsilon=EPS, bounds=(0.0, 1.0)),
        partial(BrokenOneBitMean, epsilon=EPS, bounds=(0.0, 1.0)),
        "randomized response with 2 epsilon",
        neighbours=(0.0, 1.0),
        n_samples=100_000,
    ),
}

#: Public names in dpsk.mechanisms that are not audited here, with the reason.
NOT_AUDITED = {
    "SparseVectorRun": "a run of SparseVector (made by SparseVector.start), audited as SparseVector; "
    "tests/mechanisms/test_sparse_vector.py checks that a run answers as randomise does",
}

SLOW_SEEDS = range(1000, 1020)


def _public_mechanism_classes():
    """Public classes of dpsk.mechanisms by name (an alias maps to the same class), and the
    randomizers of dpsk.local as ``local.<name>``."""
    classes = {
        name: getattr(mechanisms, name)
        for name in mechanisms.__all__
        if inspect.isclass(getattr(mechanisms, name)) and not issubclass(getattr(mechanisms, name), BaseException)
    }
    for name in local.__all__:
        obj = getattr(local, name)
        if inspect.isclass(obj) and issubclass(obj, ImmutableMechanism):
            classes[f"local.{name}"] = obj
    return classes


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


def test_every_mechanism_has_a_privacy_audit():
    """Check that a new public mechanism cannot skip the privacy audit (aliases count once)."""
    classes = _public_mechanism_classes()
    audited = {classes[name] for name in MECHANISM_AUDITS if name in classes}
    missing = {name for name, cls in classes.items() if cls not in audited and name not in NOT_AUDITED}
    assert not missing, f"add an entry to MECHANISM_AUDITS (or NOT_AUDITED, with a reason) for {sorted(missing)}"
    assert all(len(reason) > 10 for reason in NOT_AUDITED.values())


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
def test_mechanism_audit_rates(name, broken):
    """Check acceptance ≥ 0.9 (correct) and rejection ≥ 0.9 (broken) over 20 seeds."""
    results = [run_audit(name, broken=broken, seed=seed) for seed in SLOW_SEEDS]
    check_audit_rate(name, MECHANISM_AUDITS[name].bug if broken else None, results)
