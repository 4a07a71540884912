# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Costs of composite events: subsampled, parallel and repeat-and-select releases.

Each of these wraps inner events, and what is known about it follows from the ledger
state of its inner multiset (:class:`~dpsk.accounting._ledger_state.LedgerState`): its
profile, pure part, RDP curve and PLD. They are registered in the one cost registry of
:mod:`dpsk.accounting._costs` (which cannot import the ledger state: the state prices
its atoms through that registry).
"""

import functools
import math
from fractions import Fraction

import numpy as np

from dpsk.accounting import _calibration as cal
from dpsk.accounting import _pld, _rdp
from dpsk.accounting._costs import Cost, cost_of, pure_cost, rdp_cost, register_cost
from dpsk.accounting._events import (
    NON_PRIVATE_EVENT,
    PoissonSampledEvent,
    RepeatAndSelectEvent,
    SampledWithoutReplacementEvent,
)
from dpsk.accounting._ledger_state import LedgerState
from dpsk.accounting._normalize import ParallelAtom, normalize
from dpsk.accounting._repeat_and_select import best_of_random_runs_rdp
from dpsk.accounting._sums import fraction_up

__all__ = []


def _multiset_profile(state):
    """δ -> ε of a whole inner ledger (memoised: a composite atom asks it again and again)."""
    return functools.lru_cache(maxsize=64)(lambda delta: state.epsilon(delta, use_pld=False))


def _multiset_delta(state):
    """ε -> δ of a whole inner ledger (memoised)."""
    return functools.lru_cache(maxsize=64)(lambda eps: state.delta(eps, use_pld=False))


@register_cost
def _poisson_sampled(atom: PoissonSampledEvent):
    return _sampled(Fraction(atom.sampling_probability), atom.event, poisson=True)


@register_cost
def _sampled_without_replacement(atom: SampledWithoutReplacementEvent):
    return _sampled(Fraction(atom.sample_size, atom.source_size), atom.event, poisson=False)


def _sampled(q_exact, inner_event, *, poisson):
    """A subsampled release; ``q_exact`` is the sampling probability as a Fraction."""
    q = fraction_up(q_exact)
    inner = LedgerState.from_counts(normalize(inner_event))
    inner_profile = _multiset_profile(inner)
    inner_delta = _multiset_delta(inner)

    def profile(delta):
        # (ε, δ/q) inner  =>  (log(1 + q(e^ε - 1)), δ) outer.
        return cal.amplified_epsilon(inner_profile(min(1.0, delta / q)), q)

    def delta_at(eps):
        return min(1.0, q * inner_delta(cal.deamplified_epsilon(eps, q)))

    pure = None
    fixed = 0.0
    if inner.only_family("pure"):
        pure = cal.amplified_epsilon(inner.basic_epsilon(), q)
        fixed = fraction_up(q_exact * Fraction(inner.fixed_delta()))
    single = inner.single_atom()
    single = None if single is None else cost_of(single)
    rdp = None
    if poisson and single is not None and single.poisson_rdp is not None:
        rdp = single.poisson_rdp(q)
    elif poisson and inner.fixed_delta() == 0.0 and inner.rdp_all() is not None:
        rdp = _rdp.rdp_poisson_subsampled(q, inner.rdp_curve_function())
        if pure is not None:
            rdp = np.minimum(rdp, _rdp.rdp_pure(pure))
    elif pure is not None:
        rdp = _rdp.rdp_pure(pure)
    # Poisson subsampling of a release that has a PLD of its own; else the amplified (ε, δ).
    if poisson and single is not None and single.poisson_pld is not None:
        pld = single.poisson_pld(q)
    elif pure is not None:
        pld = _pld.approx_factory(pure, fixed)
    else:
        pld = None
    if pure is not None:
        return Cost(
            "pure", profile, delta_at, pure_epsilon=pure, pure_exact=Fraction(pure), fixed_delta=fixed, rdp=rdp, pld=pld
        )
    return Cost("rdp" if rdp is not None else "profile", profile, delta_at, rdp=rdp, pld=pld)


@register_cost
def _parallel(atom: ParallelAtom):
    states = [LedgerState.from_counts(dict(part)) for part in atom.parts]
    profiles = [_multiset_profile(s) for s in states]
    deltas = [_multiset_delta(s) for s in states]

    def profile(delta):
        return max(p(delta) for p in profiles)

    def delta_at(eps):
        return max(d(eps) for d in deltas)

    if all(s.only_family("pure") for s in states):
        pure = max(s.basic_epsilon() for s in states)
        fixed = max(s.fixed_delta() for s in states)
        rdp = None
        if fixed == 0.0:
            rdp = np.max(np.stack([s.rdp_all() for s in states]), axis=0)
        if rdp is None:
            rdp = _rdp.rdp_pure(pure)
        return Cost("pure", profile, delta_at, pure_epsilon=pure, pure_exact=Fraction(pure), fixed_delta=fixed, rdp=rdp)
    curves = [s.rdp_all() if s.fixed_delta() == 0.0 else None for s in states]
    complete = [c for c in curves if c is not None]
    if len(complete) == len(states):
        return Cost("rdp", profile, delta_at, rdp=np.max(np.stack(complete), axis=0))
    return Cost("profile", profile, delta_at)


@register_cost
def _repeat_and_select(atom: RepeatAndSelectEvent):
    """The best of a random number of runs of ``atom.event`` (Papernot & Steinke 2022)."""
    inner = LedgerState.from_counts(normalize(atom.event))
    if math.isinf(inner.epsilon(0.5, use_pld=False)):  # a non-private trial (epsilon=inf): so is the search
        return cost_of(NON_PRIVATE_EVENT)
    curve = inner.rdp_all()
    if curve is None or inner.fixed_delta() > 0.0:
        raise TypeError(
            f"RepeatAndSelectEvent needs an inner event with a Renyi-DP curve and no explicit delta; got {atom.event!r}"
        )
    pure = inner.basic_epsilon() if inner.only_family("pure") else None
    if pure is not None and not math.isfinite(pure):
        pure = None
    rdp, pure = best_of_random_runs_rdp(curve, atom.mean, atom.shape, pure_epsilon=pure)
    if pure is not None:
        return pure_cost(pure, rdp=rdp, pld=_pld.approx_factory(pure, 0.0))
    return rdp_cost(rdp)
