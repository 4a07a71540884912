# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Normalisation: an event as a multiset of *atoms* (leaf events with a count).

Composed and self-composed events are flattened; calibration hints are dropped (they
are summed apart, by :func:`calibrated_delta`); parallel compositions collapse to their
dominant part when one exists (else they stay one :class:`ParallelAtom`); subsampled
events keep their (normalised) inner event. Atoms are what the ledger state counts and
what :func:`dpsk.accounting._costs.cost_of` prices.
"""

import math
from dataclasses import dataclass
from fractions import Fraction

from dpsk.accounting import _calibration as cal
from dpsk.accounting._costs import cost_of
from dpsk.accounting._events import (
    CalibratedEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    ExponentialEvent,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    RepeatAndSelectEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
)
from dpsk.accounting._sums import FloatSum, fraction_up

__all__ = ["ParallelAtom", "as_event", "calibrated_delta", "canonical", "normalize"]


@dataclass(frozen=True)
class ParallelAtom:
    """A parallel composition whose parts have no single dominant part.

    ``parts`` is a tuple of normalised multisets, each a sorted tuple of (atom, count).
    """

    parts: tuple


def canonical(counts):
    """A normalised multiset as a sorted tuple of (atom, count): hashable, order-free."""
    return tuple(sorted(counts.items(), key=lambda item: repr(item[0])))


def normalize(event):
    """The multiset of atoms (leaf events) of ``event``: a dict atom -> count."""
    out = {}
    _add_leaves(event, 1, out)
    return out


def _add_leaves(event, count, out):
    if count == 0:
        return
    if isinstance(event, ComposedEvent):
        for inner in event.events:
            _add_leaves(inner, count, out)
    elif isinstance(event, SelfComposedEvent):
        _add_leaves(event.event, count * int(event.count), out)
    elif isinstance(event, CalibratedEvent):
        _add_leaves(event.event, count, out)  # the calibration δ is a reporting hint only
    elif isinstance(event, ParallelEvent):
        parts = [normalize(part) for part in event.events]
        parts = [part for part in parts if part]
        if not parts:
            return
        if all(part == parts[0] for part in parts):
            for atom, n in parts[0].items():
                out[atom] = out.get(atom, 0) + n * count
            return
        atom = _dominant_part(parts)
        out[atom] = out.get(atom, 0) + count
    elif isinstance(event, PoissonSampledEvent):
        if event.sampling_probability == 1.0:
            _add_leaves(event.event, count, out)
        else:
            atom = PoissonSampledEvent(event.sampling_probability, as_event(normalize(event.event)))
            out[atom] = out.get(atom, 0) + count
    elif isinstance(event, SampledWithoutReplacementEvent):
        if event.sample_size == 0:
            return  # the output does not depend on the data
        atom = SampledWithoutReplacementEvent(event.source_size, event.sample_size, as_event(normalize(event.event)))
        out[atom] = out.get(atom, 0) + count
    elif isinstance(event, PrivacyEvent):
        out[event] = out.get(event, 0) + count
    else:
        raise TypeError(f"expected a PrivacyEvent, got {type(event).__name__}")


def calibrated_delta(event):
    """Σ of the δ's that the releases of ``event`` were calibrated for (``CalibratedEvent``).

    Exact (a Fraction). Parallel parts count once (the largest), like their privacy;
    sampled releases keep their inner release's δ (any δ is a valid reporting point).
    """
    if isinstance(event, CalibratedEvent):
        return Fraction(event.delta)
    if isinstance(event, ComposedEvent):
        return sum((calibrated_delta(e) for e in event.events), Fraction(0))
    if isinstance(event, SelfComposedEvent):
        return calibrated_delta(event.event) * int(event.count)
    if isinstance(event, ParallelEvent):
        return max((calibrated_delta(e) for e in event.events), default=Fraction(0))
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent, RepeatAndSelectEvent)):
        return calibrated_delta(event.event)
    return Fraction(0)


def as_event(counts):
    """A canonical single event for a normalised multiset (used inside sampled events)."""
    items = canonical(counts)
    if len(items) == 1:
        atom, n = items[0]
        return atom if n == 1 else SelfComposedEvent(atom, n)
    return ComposedEvent(tuple(SelfComposedEvent(atom, n) if n != 1 else atom for atom, n in items))


# Parts made of one atom of these types are ordered by privacy: the dominant one is kept.
# (Per type: a key that must be equal for two atoms to be comparable, and the order.)
_DOMINANCE = {
    LaplaceEvent: (lambda e: (), lambda e: -e.noise_multiplier),
    GaussianEvent: (lambda e: (), lambda e: -e.noise_multiplier),
    PureDPEvent: (lambda e: (), lambda e: e.epsilon),
    ExponentialEvent: (lambda e: (), lambda e: e.epsilon),
    ZCDPEvent: (lambda e: (), lambda e: e.rho),
    DiscreteLaplaceEvent: (lambda e: e.sensitivity, lambda e: -e.scale),
    DiscreteGaussianEvent: (lambda e: e.sensitivity, lambda e: -e.sigma),
    RandomizedResponseEvent: (lambda e: e.num_categories, lambda e: e.epsilon),
}


def _dominant_part(parts):
    """Collapse a parallel composition to its dominant part when one exists, else an atom."""
    singles = [next(iter(p.items())) for p in parts if len(p) == 1]
    if len(singles) == len(parts) and all(n == 1 for _, n in singles):
        atoms = [a for a, _ in singles]
        kind = type(atoms[0])
        if kind in _DOMINANCE and all(type(a) is kind for a in atoms):
            group, order = _DOMINANCE[kind]
            if all(group(a) == group(atoms[0]) for a in atoms):
                return max(atoms, key=order)
    costs = [[(cost_of(atom), n) for atom, n in part.items()] for part in parts]
    if all(cost.family == "gaussian" for part in costs for cost, _ in part):
        # Each part is one Gaussian release of μ² = Σ μᵢ² (summed exactly, as the ledger
        # state does); the largest μ dominates.
        mu2 = max(_exact_total((cost.mu2, n) for cost, n in part) for part in costs)
        return GaussianEvent(math.nextafter(1.0 / math.sqrt(cal.round_up(mu2)), 0.0))
    if all(cost.family == "pure" and cost.fixed_delta == 0.0 for part in costs for cost, _ in part):
        # Each part is ε-DP with ε = Σ εᵢ (basic composition, exact, rounded up).
        return PureDPEvent(max(fraction_up(sum(cost.pure_exact * n for cost, n in part)) for part in costs))
    return ParallelAtom(tuple(canonical(p) for p in parts))


def _exact_total(terms):
    total = FloatSum()
    for value, count in terms:
        total.add(value, count)
    return total.value()
