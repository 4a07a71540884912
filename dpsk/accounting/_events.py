# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Immutable privacy events: *what* a release cost, as plain data.

An event describes a mechanism (Laplace with a noise multiplier, Gaussian, ...) or how
mechanisms were combined (composed, repeated, run on disjoint partitions). It does not
say how to account for it: accountants read events and compose them with the tightest
method they support. Events are frozen, hashable and comparable, so a fitted estimator can
keep its cost as a fitted attribute and tests can compare declared and drawn costs.

Stability rules (as in Google's dp_accounting): events are never removed, new fields are
optional, and the meaning of a field never changes.
"""

import math
import numbers
from dataclasses import dataclass, field

__all__ = [
    "ApproxDPEvent",
    "ComposedEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "ParallelEvent",
    "PrivacyEvent",
    "PureDPEvent",
    "SelfComposedEvent",
]


def _positive(value, name, *, allow_zero=False, allow_inf=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a real number")
    if math.isinf(value) and not allow_inf:
        raise ValueError(f"{name} must be finite")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")


@dataclass(frozen=True)
class PrivacyEvent:
    """Base class of all privacy events."""

    def flatten(self):
        """The leaf mechanism events of this event, as a tuple, repeating self-compositions.

        Used by the release-recording tests: the mechanisms a fit actually invoked must
        be exactly the leaves of the cost it declared.
        """
        return (self,)


@dataclass(frozen=True)
class PureDPEvent(PrivacyEvent):
    """A release that is ε-DP, with nothing more known about it."""

    epsilon: float

    def __post_init__(self):
        _positive(self.epsilon, "epsilon", allow_zero=True)


@dataclass(frozen=True)
class ApproxDPEvent(PrivacyEvent):
    """A release that is (ε, δ)-DP, with nothing more known about it."""

    epsilon: float
    delta: float

    def __post_init__(self):
        _positive(self.epsilon, "epsilon", allow_zero=True)
        if not (isinstance(self.delta, numbers.Real) and 0.0 <= self.delta <= 1.0):
            raise ValueError("delta must be in [0, 1]")


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """Laplace noise of scale ``noise_multiplier × Δ₁`` on a query of L1 sensitivity Δ₁.

    The release is ε-DP with ε = 1 / noise_multiplier; RDP and PLD accountants use the
    exact Laplace privacy-loss distribution, which composes better than ε alone.
    """

    noise_multiplier: float

    def __post_init__(self):
        _positive(self.noise_multiplier, "noise_multiplier")


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """Gaussian noise of std ``noise_multiplier × Δ₂`` on a query of L2 sensitivity Δ₂."""

    noise_multiplier: float

    def __post_init__(self):
        _positive(self.noise_multiplier, "noise_multiplier")


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """Several releases on the same data, in sequence (adaptive composition)."""

    events: tuple = field(default=())

    def __post_init__(self):
        events = tuple(self.events)
        for event in events:
            if not isinstance(event, PrivacyEvent):
                raise TypeError(f"events must be PrivacyEvent instances, got {type(event).__name__}")
        object.__setattr__(self, "events", events)

    def flatten(self):
        return tuple(leaf for event in self.events for leaf in event.flatten())


@dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """The same release repeated ``count`` times on the same data."""

    event: PrivacyEvent
    count: int

    def __post_init__(self):
        if not isinstance(self.event, PrivacyEvent):
            raise TypeError("event must be a PrivacyEvent")
        if isinstance(self.count, bool) or not isinstance(self.count, numbers.Integral) or self.count < 0:
            raise ValueError("count must be a non-negative integer")

    def flatten(self):
        return self.event.flatten() * int(self.count)


@dataclass(frozen=True)
class ParallelEvent(PrivacyEvent):
    """Releases on *disjoint* partitions of the privacy units (parallel composition).

    Each privacy unit (a row, or a user with ``groups=``) falls in at most one partition,
    so the cost is that of the most expensive part, not the sum.
    """

    events: tuple = field(default=())

    def __post_init__(self):
        events = tuple(self.events)
        for event in events:
            if not isinstance(event, PrivacyEvent):
                raise TypeError(f"events must be PrivacyEvent instances, got {type(event).__name__}")
        object.__setattr__(self, "events", events)

    def flatten(self):
        return tuple(leaf for event in self.events for leaf in event.flatten())
