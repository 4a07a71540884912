# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Immutable privacy events: *what* a release cost, as plain data.

An event describes a mechanism (Laplace with a noise multiplier, Gaussian, ...) or how
mechanisms were combined (composed, repeated, subsampled, run on disjoint partitions).
It does not say how to account for it: accountants read events and compose them with the
tightest method they support (``dpsk.accounting._composition``). Events are frozen,
hashable and comparable, so a fitted estimator can keep its cost as a fitted attribute,
a ledger can count repeated events, and tests can compare declared and drawn costs.

Neighbouring relation: add/remove one privacy unit (a row, or a user with ``groups=``),
unless an event's docstring says otherwise. Sensitivities are those of the query under
that relation.

Stability rules (as in Google's dp_accounting): events are never removed, new fields are
optional, and the meaning of a field never changes.
"""

import math
import numbers
from dataclasses import dataclass, field

__all__ = [
    "ApproxDPEvent",
    "CalibratedEvent",
    "ComposedEvent",
    "DiscreteGaussianEvent",
    "DiscreteLaplaceEvent",
    "ExponentialEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "ParallelEvent",
    "PoissonSampledEvent",
    "PrivacyEvent",
    "PrivacyProfileEvent",
    "PureDPEvent",
    "RDPEvent",
    "RandomizedResponseEvent",
    "RepeatAndSelectEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ZCDPEvent",
]


def _positive(value, name, *, allow_zero=False, allow_inf=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a real number")
    if math.isinf(value) and not allow_inf:
        raise ValueError(f"{name} must be finite")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")


def _probability(value, name, *, allow_zero=True, allow_one=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a real number")
    low_ok = value > 0 or (allow_zero and value == 0)
    high_ok = value < 1 or (allow_one and value == 1)
    if not (low_ok and high_ok):
        lo, hi = "[" if allow_zero else "(", "]" if allow_one else ")"
        raise ValueError(f"{name} must be in {lo}0, 1{hi}, got {value}")


def _integer(value, name, *, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _event(value, name):
    if not isinstance(value, PrivacyEvent):
        raise TypeError(f"{name} must be a PrivacyEvent, got {type(value).__name__}")


def _events_tuple(instance):
    events = tuple(instance.events)
    for event in events:
        _event(event, "events")
    object.__setattr__(instance, "events", events)


@dataclass(frozen=True)
class PrivacyEvent:
    """Base class of all privacy events.

    Notes
    -----
    **Privacy.** An event describes a release; it does not make one private. A
    release is as private as the event recorded for it says, under the neighbouring
    relation its sensitivity was computed for (add/remove one row, or one user with
    ``groups=``, in dpsk). Only the accountant's composition
    (:class:`BudgetAccountant`, :func:`get_epsilon`, :func:`get_delta`) turns events
    into (ε, δ) guarantees.
    """

    def flatten(self):
        """The leaf mechanism events of this event, as a tuple, repeating self-compositions.

        Used by the release-recording tests: the mechanisms a fit actually invoked must
        be exactly the leaves of the cost it declared. Subsampled events are leaves: the
        sampling is part of the release.
        """
        return (self,)


# ----------------------------------------------------------------------------------------
# Generic guarantees
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PureDPEvent(PrivacyEvent):
    """A release that is ε-DP, with nothing more known about it.

    Notes
    -----
    **Privacy.** The release is ε-DP and nothing more is assumed: its privacy
    profile is that of randomized response with parameter ε, the worst case of all
    ε-DP mechanisms, and it composes by the pure-DP theorems (the sum, or optimal
    composition when converting to (ε, δ) saves budget).

    ``PureDPEvent(math.inf)`` records a non-private release (``epsilon=float("inf")``:
    no noise at all). It composes to an infinite ε, which only an accountant with an
    infinite ε budget accepts.
    """

    epsilon: float

    def __post_init__(self):
        _positive(self.epsilon, "epsilon", allow_zero=True, allow_inf=True)


@dataclass(frozen=True)
class ApproxDPEvent(PrivacyEvent):
    """A release that is (ε, δ)-DP, with nothing more known about it.

    Notes
    -----
    **Privacy.** The release is (ε, δ)-DP and nothing better is assumed: its privacy
    profile is randomized response's curve shifted by δ. The accountant adds its δ
    exactly to the ledger's explicit δ and composes its ε with the rest.
    """

    epsilon: float
    delta: float

    def __post_init__(self):
        _positive(self.epsilon, "epsilon", allow_zero=True)
        if not (isinstance(self.delta, numbers.Real) and 0.0 <= self.delta <= 1.0):
            raise ValueError("delta must be in [0, 1]")


@dataclass(frozen=True)
class ZCDPEvent(PrivacyEvent):
    """A release that is ρ-zero-concentrated DP (Bun & Steinke 2016): (α, ρα)-RDP for all α > 1.

    Notes
    -----
    **Privacy.** ρ-zCDP: (α, ρα)-RDP for every order α > 1 (Bun & Steinke 2016). The
    accountant composes it in Rényi DP (ρ's add up) and converts to (ε, δ) with its
    RDP conversion; it has no finite ε at δ = 0.
    """

    rho: float

    def __post_init__(self):
        _positive(self.rho, "rho", allow_zero=True)


@dataclass(frozen=True)
class RDPEvent(PrivacyEvent):
    """Extension point: a release described by its Rényi-DP curve.

    The release satisfies (α, ε(α))-RDP for each pair of ``orders`` and ``epsilons``
    (Mironov 2017). Between and above the given orders the accountant uses only what
    follows from monotonicity of ε(α) in α, so give the orders you care about (a grid
    such as 1.5, 2, 3, ..., 64 is typical). Use this for mechanisms dpsk does not know
    (e.g. a PATE aggregator with a data-independent RDP bound).

    Parameters
    ----------
    orders : tuple of float
        Rényi orders, each > 1.
    epsilons : tuple of float
        The RDP guarantee at each order, >= 0 (``inf`` allowed).

    Notes
    -----
    **Privacy.** (α, ε(α))-RDP at each given order (Mironov 2017); between and above
    the orders only what follows from the monotonicity of ε(α) is used, so the
    accountant's figures stay valid. It is converted to (ε, δ) for δ > 0 only (no
    finite ε at δ = 0).
    """

    orders: tuple
    epsilons: tuple

    def __post_init__(self):
        orders = tuple(float(a) for a in self.orders)
        epsilons = tuple(float(e) for e in self.epsilons)
        if not orders or len(orders) != len(epsilons):
            raise ValueError("orders and epsilons must be non-empty and of equal length")
        for order in orders:
            if not (math.isfinite(order) and order > 1):
                raise ValueError(f"every order must be finite and > 1, got {order}")
        for eps in epsilons:
            _positive(eps, "epsilons", allow_zero=True, allow_inf=True)
        pairs = sorted(zip(orders, epsilons))
        object.__setattr__(self, "orders", tuple(a for a, _ in pairs))
        object.__setattr__(self, "epsilons", tuple(e for _, e in pairs))


@dataclass(frozen=True)
class PrivacyProfileEvent(PrivacyEvent):
    """Extension point: a release described by points of its privacy profile.

    The release is (``epsilons[i]``, ``deltas[i]``)-DP for *every* i at once (e.g. a
    few points of an ε(δ) curve computed elsewhere). The accountant charges it at the
    cheapest point that fits the δ it can give it.

    Parameters
    ----------
    epsilons : tuple of float
        Each >= 0 and finite.
    deltas : tuple of float
        Each in [0, 1].

    Notes
    -----
    **Privacy.** (``epsilons[i]``, ``deltas[i]``)-DP for every i at once: each point
    must be a valid guarantee of the release. The accountant charges it at the
    cheapest point that fits the δ it can give it, and composes it by the (ε, δ)
    theorems.
    """

    epsilons: tuple
    deltas: tuple

    def __post_init__(self):
        epsilons = tuple(float(e) for e in self.epsilons)
        deltas = tuple(float(d) for d in self.deltas)
        if not epsilons or len(epsilons) != len(deltas):
            raise ValueError("epsilons and deltas must be non-empty and of equal length")
        for eps in epsilons:
            _positive(eps, "epsilons", allow_zero=True)
        for delta in deltas:
            _probability(delta, "deltas")
        pairs = sorted(zip(deltas, epsilons))
        object.__setattr__(self, "epsilons", tuple(e for _, e in pairs))
        object.__setattr__(self, "deltas", tuple(d for d, _ in pairs))


# ----------------------------------------------------------------------------------------
# Mechanisms
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """Laplace noise of scale ``noise_multiplier × Δ₁`` on a query of L1 sensitivity Δ₁.

    The release is ε-DP with ε = 1 / noise_multiplier; RDP and PLD accountants use the
    exact Laplace privacy-loss distribution, which composes better than ε alone.

    Notes
    -----
    **Privacy.** ε-DP with ε = 1 / noise_multiplier for a query whose L1 sensitivity
    Δ₁ was computed correctly. The exact privacy profile δ(ε') = 1 − e^((ε' − ε)/2)
    for ε' ≤ ε is used by the tight accountants. Continuous Laplace noise is not
    floating-point safe: dpsk's own :class:`~dpsk.mechanisms.Laplace` records a
    :class:`DiscreteLaplaceEvent` or a :class:`PureDPEvent` instead.
    """

    noise_multiplier: float

    def __post_init__(self):
        _positive(self.noise_multiplier, "noise_multiplier")


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """Gaussian noise of std ``noise_multiplier × Δ₂`` on a query of L2 sensitivity Δ₂.

    Gaussian releases compose exactly: k of them with multipliers σᵢ are one Gaussian
    release with multiplier (Σ σᵢ⁻²)^(-1/2).

    Notes
    -----
    **Privacy.** (ε, δ(ε))-DP for every ε ≥ 0, with the exact Gaussian profile δ(ε)
    = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), μ = 1 / noise_multiplier (Balle & Wang
    2018); never ε-DP for a finite ε at δ = 0. Recorded by
    :class:`~dpsk.mechanisms.UnsafeGaussian` (continuous noise, not floating-point
    safe).
    """

    noise_multiplier: float

    def __post_init__(self):
        _positive(self.noise_multiplier, "noise_multiplier")


@dataclass(frozen=True)
class DiscreteLaplaceEvent(PrivacyEvent):
    """Discrete Laplace (two-sided geometric) noise, ``P(k) ∝ exp(-|k| / scale)``, on an integer query.

    ``sensitivity`` is the query's integer L1 sensitivity; the release is ε-DP with
    ε = sensitivity / scale.

    Notes
    -----
    **Privacy.** ε-DP with ε = sensitivity / scale, for an integer query of integer
    L1 sensitivity ``sensitivity``; the exact privacy profile of the discrete
    Laplace distribution is used by the tight accountants. dpsk samples this noise
    exactly in integer arithmetic (floating-point safe).
    """

    scale: float
    sensitivity: int = 1

    def __post_init__(self):
        _positive(self.scale, "scale")
        _integer(self.sensitivity, "sensitivity", minimum=1)


@dataclass(frozen=True)
class DiscreteGaussianEvent(PrivacyEvent):
    """Discrete Gaussian noise, P(k) ∝ exp(-k² / (2 sigma²)), on an integer query (CKS 2020).

    ``sensitivity`` is the query's integer L2 sensitivity. The release is
    (sensitivity² / (2 sigma²))-zCDP, and its (ε, δ) profile is known exactly.

    Notes
    -----
    **Privacy.** (sensitivity² / (2 sigma²))-zCDP, and (ε, δ)-DP along its exact
    privacy profile (Canonne, Kamath & Steinke 2020, Theorem 7), for an integer
    query of integer L2 sensitivity ``sensitivity``. dpsk samples this noise exactly
    (floating-point safe).
    """

    sigma: float
    sensitivity: int = 1

    def __post_init__(self):
        _positive(self.sigma, "sigma")
        _integer(self.sensitivity, "sensitivity", minimum=1)


@dataclass(frozen=True)
class RandomizedResponseEvent(PrivacyEvent):
    """k-ary randomized response: keep the true category with probability e^ε / (e^ε + k - 1).

    ε-DP for changing one respondent's category (local DP: the relation is *replace*
    the value of one unit). The accountant uses the exact privacy loss of k-ary RR,
    which composes better than ε alone when k > 2.

    Notes
    -----
    **Privacy.** ε-DP under the *replace* relation (one respondent's value changed):
    local differential privacy. The accountant uses the exact privacy loss of k-ary
    randomized response. One array of answers, one answer per respondent, is one
    such release (parallel composition over respondents).
    """

    epsilon: float
    num_categories: int = 2

    def __post_init__(self):
        _positive(self.epsilon, "epsilon")
        _integer(self.num_categories, "num_categories", minimum=2)


@dataclass(frozen=True)
class ExponentialEvent(PrivacyEvent):
    """The exponential mechanism with P(r) ∝ exp(ε · score(r) / (2Δ)), Δ the score sensitivity.

    It is ε-DP and, more precisely, ε-*bounded range* (Durfee & Rogers 2019), hence
    (ε²/8)-zCDP (Cesar & Rogers 2021): many exponential-mechanism selections compose
    four times better in zCDP than generic ε-DP releases. Only use this event for a
    mechanism that samples this exact distribution (report-noisy-max with Gumbel noise
    does; permute-and-flip and Laplace/exponential noisy max do not: use PureDPEvent).

    Notes
    -----
    **Privacy.** ε-DP and ε-bounded range (Durfee & Rogers 2019), hence (ε²/8)-zCDP
    (Cesar & Rogers 2021); the accountant uses the bounded-range privacy profile
    (tanh(ε/4) at ε' = 0) and the zCDP bound in composition. Valid only for a
    mechanism that samples exactly this distribution with scores of sensitivity Δ.
    """

    epsilon: float

    def __post_init__(self):
        _positive(self.epsilon, "epsilon")


# ----------------------------------------------------------------------------------------
# Sampling
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoissonSampledEvent(PrivacyEvent):
    """``event`` run on a Poisson subsample: each unit kept independently with probability q.

    Privacy amplification by subsampling applies (add/remove relation): e.g. an ε-DP
    release becomes log(1 + q(e^ε - 1))-DP; a Gaussian release is accounted with the
    exact RDP of the sampled Gaussian mechanism (Mironov, Talwar & Zhang 2019). The
    sampling must use secure randomness and must not be visible in the output.

    Notes
    -----
    **Privacy.** Privacy amplification by Poisson subsampling under the add/remove
    relation (an ε-DP release becomes log(1 + q(e^ε − 1))-DP; subsampled Gaussian
    releases get the exact RDP of Mironov, Talwar & Zhang 2019). Valid only if each
    unit is kept independently with probability q using secure randomness, and the
    sample itself is not released.
    """

    sampling_probability: float
    event: PrivacyEvent

    def __post_init__(self):
        _probability(self.sampling_probability, "sampling_probability", allow_zero=False)
        _event(self.event, "event")


@dataclass(frozen=True)
class SampledWithoutReplacementEvent(PrivacyEvent):
    """``event`` run on a uniformly random subset of exactly ``sample_size`` units.

    ``source_size`` is the number of units sampled from. ``event`` must state the
    inner release's guarantee for *replacing* one unit of its fixed-size input (for a
    sum with per-unit L2 bound C that is sensitivity 2C, not C). Under dpsk's add/remove
    relation the release is then amplified with q = sample_size / source_size:
    an (ε, δ) inner guarantee becomes (log(1 + q(e^ε - 1)), qδ) (Balle, Barthe &
    Gaboardi 2018).

    Notes
    -----
    **Privacy.** Amplification by sampling ``sample_size`` of ``source_size`` units
    without replacement (Balle, Barthe & Gaboardi 2018): an inner (ε, δ) guarantee
    for *replacing* one unit becomes (log(1 + q(e^ε − 1)), qδ) under add/remove, q =
    sample_size / source_size. Valid only if the subset is uniformly random, drawn
    with secure randomness and not released.
    """

    source_size: int
    sample_size: int
    event: PrivacyEvent

    def __post_init__(self):
        _integer(self.source_size, "source_size", minimum=1)
        _integer(self.sample_size, "sample_size", minimum=0)
        if self.sample_size > self.source_size:
            raise ValueError("sample_size must not exceed source_size")
        _event(self.event, "event")


# ----------------------------------------------------------------------------------------
# Private selection
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RepeatAndSelectEvent(PrivacyEvent):
    """``event`` run K times with a random K, releasing only the best run (Papernot & Steinke 2022).

    K is drawn independently of the data from a truncated negative binomial distribution
    with mean ``mean`` and shape η = ``shape`` (0: logarithmic, 1: geometric); only the
    best run's output (by an order fixed in advance, e.g. a noisy score it releases) is
    released, never K or the other runs. ``event`` must be an RDP-accountable release
    with no explicit δ. The cost is a small multiple of one run's, whatever the mean
    (see ``dpsk.accounting._repeat_and_select``); the sampler must draw K with
    ``stopping_gamma(mean, shape)`` from that module.

    Notes
    -----
    **Privacy.** The Rényi-DP bound of Papernot & Steinke (2022, Theorem 2) for
    releasing the best of K runs of ``event``, K drawn independently of the data
    from the truncated negative binomial law (``mean``, ``shape``); when ``event``
    is ε₀-DP it is also at most (2 + shape)·ε₀-DP. Valid only if K, the other runs
    and their outputs stay secret, and if the best run is chosen by an order fixed
    in advance (e.g. a noisy score the run releases).
    """

    event: PrivacyEvent
    mean: float
    shape: float = 0.0

    def __post_init__(self):
        _event(self.event, "event")
        if isinstance(self.mean, bool) or not isinstance(self.mean, numbers.Real) or not 1.0 < self.mean < math.inf:
            raise ValueError(f"mean must be a finite real number > 1, got {self.mean!r}")
        _positive(self.shape, "shape", allow_zero=True)


# ----------------------------------------------------------------------------------------
# Combinations
# ----------------------------------------------------------------------------------------


class _PartsMixin:
    """What ComposedEvent and ParallelEvent share: a tuple of checked parts, and their leaves."""

    def __post_init__(self):
        _events_tuple(self)

    def flatten(self):
        """The leaf mechanism events of the parts, in order (see :meth:`PrivacyEvent.flatten`)."""
        return tuple(leaf for event in self.events for leaf in event.flatten())


@dataclass(frozen=True)
class ComposedEvent(_PartsMixin, PrivacyEvent):
    """Several releases on the same data, in sequence (adaptive composition).

    Notes
    -----
    **Privacy.** Adaptive sequential composition: every part may depend on the
    outputs of the previous ones. The cost is computed by the accountant's tightest
    method for the mix of parts (sums of pure ε, exact Gaussian composition, Rényi
    DP, privacy loss distributions).
    """

    events: tuple = field(default=())


@dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """The same release repeated ``count`` times on the same data.

    Notes
    -----
    **Privacy.** The ``count``-fold adaptive composition of ``event``: optimal
    composition for identical ε-DP releases (Kairouz, Oh & Viswanath 2017), exact
    composition for Gaussian releases, Rényi DP or privacy loss distributions
    otherwise.
    """

    event: PrivacyEvent
    count: int

    def __post_init__(self):
        _event(self.event, "event")
        if isinstance(self.count, bool) or not isinstance(self.count, numbers.Integral) or self.count < 0:
            raise ValueError("count must be a non-negative integer")

    def flatten(self):
        """The leaf events of ``event``, repeated ``count`` times (see :meth:`PrivacyEvent.flatten`)."""
        return self.event.flatten() * int(self.count)


@dataclass(frozen=True)
class ParallelEvent(_PartsMixin, PrivacyEvent):
    """Releases on *disjoint* partitions of the privacy units (parallel composition).

    Each privacy unit (a row, or a user with ``groups=``) falls in at most one partition,
    so the cost is that of the most expensive part, not the sum.

    Notes
    -----
    **Privacy.** Parallel composition: the cost is that of the most expensive part.
    Valid only if every privacy unit (a row, or a user with all their rows) can
    affect at most one part, with the parts chosen independently of the data (e.g.
    disjoint random parts drawn per unit).
    """

    events: tuple = field(default=())


@dataclass(frozen=True)
class CalibratedEvent(PrivacyEvent):
    """A release, with the δ its mechanism was calibrated for.

    The privacy of the release is that of ``event`` alone: ``delta`` neither adds to the
    guarantee nor weakens it. It records *which point* of the release's (ε, δ) curve the
    user asked for. A Gaussian release calibrated to (ε = 1, δ = 1e-6) is (ε(δ), δ)-DP for
    every δ, with ε(0) = ∞; an accountant without a δ ceiling (diffprivlib's default
    ``delta=1``) reports its ledger at the sum of these δ's rather than at δ = 0. Tight
    composition still uses the whole curve of ``event``.

    Mechanisms calibrated to a target δ (Gaussian, discrete Gaussian) emit this event.

    Notes
    -----
    **Privacy.** Exactly the privacy of ``event``. ``delta`` neither adds to the
    guarantee nor weakens it: it records the point of the (ε, δ) curve the user
    asked for, which an accountant without a δ ceiling uses as its conversion point
    when it reports a total.
    """

    event: PrivacyEvent
    delta: float

    def __post_init__(self):
        _event(self.event, "event")
        if isinstance(self.event, CalibratedEvent):
            raise TypeError("event must not itself be a CalibratedEvent")
        _probability(self.delta, "delta", allow_one=False)


# ----------------------------------------------------------------------------------------
# Constructors shared by the estimators, the stats functions and the accountant
# ----------------------------------------------------------------------------------------


#: The event of a release made with ``epsilon=float("inf")``: no noise, no guarantee.
NON_PRIVATE_EVENT = PureDPEvent(math.inf)


def budget_event(epsilon, delta=0.0):
    """A budget (ε, δ) as one event: ε-DP when ``delta == 0``, else (ε, δ)-DP.

    A fit checks it on its accountant before reading the data: the detailed cost of its
    releases may depend on the data's shape (numbers of features and classes, lattice
    noise calibrated per vector size), and never exceeds it. The accountant's
    diffprivlib-style ``check`` and ``spend`` record it as it is.

    Notes
    -----
    **Privacy.** Validation only of what the events cannot check themselves (NaN); the
    events refuse negative or infinite values. Callers whose parameters are not
    otherwise validated pass them through
    :func:`~dpsk.utils.validation.check_privacy_params` first.
    """
    epsilon, delta = float(epsilon), float(delta)
    if math.isnan(epsilon) or math.isnan(delta):
        raise ValueError("epsilon and delta must not be NaN")
    if math.isinf(epsilon):
        return NON_PRIVATE_EVENT  # no guarantee at all: δ adds nothing to it
    return PureDPEvent(epsilon) if delta == 0.0 else ApproxDPEvent(epsilon, delta)


def compose(events, *, flatten=True):
    """One event for ``events`` spent in sequence on the same data.

    The event itself when there is one; ``None`` entries (nothing released) are skipped.
    With ``flatten``, composed events are spliced in (one level: the same cost, no
    nesting); without, each entry stays one part (the preflight report keeps one part
    per step).
    """
    flat = []
    for event in events:
        if flatten and isinstance(event, ComposedEvent):
            flat.extend(event.events)
        elif event is not None:
            flat.append(event)
    return flat[0] if len(flat) == 1 else ComposedEvent(tuple(flat))
