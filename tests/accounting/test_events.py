# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy events: validation, immutability, flattening, serialisation."""

import dataclasses
import math
import pickle

import pytest

from dpsk.accounting import (
    ApproxDPEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    ExponentialEvent,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    PoissonSampledEvent,
    PrivacyProfileEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    RDPEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
)
from dpsk.accounting._ledger import event_from_json, event_to_json

ALL_EVENTS = [
    PureDPEvent(0.5),
    ApproxDPEvent(1.0, 1e-6),
    LaplaceEvent(2.0),
    GaussianEvent(1.5),
    DiscreteLaplaceEvent(3.0, sensitivity=2),
    DiscreteGaussianEvent(4.0),
    RandomizedResponseEvent(1.0, num_categories=5),
    ExponentialEvent(0.3),
    ZCDPEvent(0.1),
    RDPEvent((2.0, 8.0, 4.0), (0.1, 0.5, 0.3)),
    PrivacyProfileEvent((1.0, 0.5), (0.0, 1e-6)),
    PoissonSampledEvent(0.01, GaussianEvent(1.1)),
    SampledWithoutReplacementEvent(1000, 10, LaplaceEvent(1.0)),
    ComposedEvent((LaplaceEvent(1.0), GaussianEvent(2.0))),
    SelfComposedEvent(GaussianEvent(1.0), 3),
    ParallelEvent((LaplaceEvent(1.0), LaplaceEvent(2.0))),
]


@pytest.mark.parametrize("event", ALL_EVENTS, ids=lambda e: type(e).__name__)
def test_events_are_frozen_hashable_and_round_trip(event):
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(event, dataclasses.fields(event)[0].name, 1.0)
    assert hash(event) == hash(pickle.loads(pickle.dumps(event)))
    assert event_from_json(event_to_json(event)) == event


def test_existing_constructor_signatures_keep_working():
    # Other teams construct these positionally and by keyword.
    assert PureDPEvent(1.0).epsilon == 1.0
    assert ApproxDPEvent(1.0, 1e-5).delta == 1e-5
    assert LaplaceEvent(noise_multiplier=2.0) == LaplaceEvent(2.0)
    assert GaussianEvent(noise_multiplier=2.0) == GaussianEvent(2.0)
    assert SelfComposedEvent(LaplaceEvent(1.0), 2).count == 2
    assert ComposedEvent([LaplaceEvent(1.0)]).events == (LaplaceEvent(1.0),)
    assert ParallelEvent([LaplaceEvent(1.0)]).events == (LaplaceEvent(1.0),)


def test_flatten_repeats_self_compositions_and_keeps_sampled_events_whole():
    sampled = PoissonSampledEvent(0.1, GaussianEvent(1.0))
    event = ComposedEvent((SelfComposedEvent(LaplaceEvent(1.0), 3), sampled, ParallelEvent((GaussianEvent(2.0),))))
    assert event.flatten() == (LaplaceEvent(1.0),) * 3 + (sampled, GaussianEvent(2.0))


@pytest.mark.parametrize(
    "factory",
    [
        lambda: PureDPEvent(-1.0),
        lambda: PureDPEvent(math.nan),
        lambda: ApproxDPEvent(math.inf, 0.1),  # PureDPEvent(inf) is the non-private release
        lambda: ApproxDPEvent(1.0, 1.5),
        lambda: LaplaceEvent(0.0),
        lambda: GaussianEvent(-1.0),
        lambda: DiscreteLaplaceEvent(1.0, sensitivity=0),
        lambda: DiscreteGaussianEvent(1.0, sensitivity=1.5),
        lambda: RandomizedResponseEvent(1.0, num_categories=1),
        lambda: ExponentialEvent(0.0),
        lambda: ZCDPEvent(-0.1),
        lambda: RDPEvent((1.0,), (0.1,)),
        lambda: RDPEvent((2.0, 3.0), (0.1,)),
        lambda: PrivacyProfileEvent((1.0,), (2.0,)),
        lambda: PoissonSampledEvent(0.0, LaplaceEvent(1.0)),
        lambda: PoissonSampledEvent(1.5, LaplaceEvent(1.0)),
        lambda: SampledWithoutReplacementEvent(10, 11, LaplaceEvent(1.0)),
        lambda: SelfComposedEvent(LaplaceEvent(1.0), -1),
    ],
)
def test_invalid_parameters_are_rejected(factory):
    with pytest.raises(ValueError):
        factory()


def test_non_events_are_rejected_as_children():
    with pytest.raises(TypeError):
        ComposedEvent((1.0,))
    with pytest.raises(TypeError):
        PoissonSampledEvent(0.5, (1.0, 0.0))


def test_user_curves_are_sorted():
    curve = RDPEvent((8.0, 2.0), (0.5, 0.1))
    assert curve.orders == (2.0, 8.0) and curve.epsilons == (0.1, 0.5)
    profile = PrivacyProfileEvent((0.5, 1.0), (1e-6, 0.0))
    assert profile.deltas == (0.0, 1e-6) and profile.epsilons == (1.0, 0.5)


def test_calibrated_event_is_a_reporting_hint_only():
    """Check that CalibratedEvent composes like its inner event and sums its δ's as a hint."""
    from fractions import Fraction

    from dpsk.accounting import CalibratedEvent, get_epsilon
    from dpsk.accounting._normalize import calibrated_delta, normalize

    inner = GaussianEvent(3.0)
    wrapped = CalibratedEvent(inner, 1e-6)
    assert normalize(wrapped) == normalize(inner)
    assert get_epsilon(wrapped, 1e-5) == get_epsilon(inner, 1e-5)
    assert calibrated_delta(SelfComposedEvent(wrapped, 3)) == 3 * Fraction(1e-6)
    # disjoint partitions: the largest part, as for the privacy itself
    assert calibrated_delta(ParallelEvent((wrapped, CalibratedEvent(inner, 2e-6)))) == Fraction(2e-6)
    with pytest.raises(TypeError):
        CalibratedEvent(wrapped, 1e-6)
    with pytest.raises(ValueError):
        CalibratedEvent(inner, 1.0)
