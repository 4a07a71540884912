# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Composition: the tightest valid (ε, δ) guarantee of a multiset of privacy events.

How a ledger is accounted
=========================

1. **Normalise.** Composed and self-composed events are flattened into a multiset of
   *atoms* (leaf events with a count); parallel compositions collapse to their dominant
   part when one exists; subsampled events keep their (normalised) inner event.

2. **Decompose.** Each atom is described by what is known about it (:class:`_Cost`):
   a pure-DP part ε with an explicit δ (an (ε, δ)-DP release is, for every pair of
   neighbours, a mixture that is ε-DP with probability 1 - δ; Kairouz, Oh & Viswanath
   2015), an RDP curve, an exact Gaussian parameter, an exact (ε, δ) profile, a privacy
   loss distribution. Atoms fall in four *families*: ``pure`` (has a pure part),
   ``gaussian`` (composes exactly), ``rdp`` (an RDP curve and no pure part) and
   ``profile`` (only an (ε, δ) profile).

3. **Compose.** The explicit δᵢ combine into δ_fixed = 1 - Π(1 - δᵢ). The rest of the
   ledger is converted to ε at δ_c, where 1 - (1 - δ_fixed)(1 - δ_c) is the target δ,
   by the smallest of:

   * *split by family*: each family at its own share of δ_c, added by basic composition
     (pure family: basic Σε, the exact optimal composition of identical ε-DP releases
     [KOV15, Thm 3.3] or the closed-form bound [KOV15, Thm 3.5], or RDP of its members;
     Gaussian family: exact, a single Gaussian with μ = sqrt(Σ μᵢ²); RDP family: RDP;
     profile family: basic composition of the profiles);
   * *joint RDP*: all RDP curves added and converted once (profile atoms split off);
   * *PLD* (privacy loss distributions, through the optional ``dp-accounting``
     package), when every atom has one and it can beat the methods above.

Every method is a valid upper bound, so the minimum is; results are rounded up. The
running aggregates of :class:`LedgerState` make adding an atom O(1) (O(number of Rényi
orders) for atoms with an RDP curve), independent of how many spends came before.

References
----------
.. [KOV15] P. Kairouz, S. Oh and P. Viswanath. "The composition theorem for differential
   privacy." ICML 2015 / IEEE Trans. Inf. Theory 2017.
"""

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import gammaln

from dpsk.accounting import _calibration as cal
from dpsk.accounting import _rdp
from dpsk.accounting._events import (
    ApproxDPEvent,
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
    PrivacyProfileEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    RDPEvent,
    RepeatAndSelectEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
)

__all__ = ["METHODS", "LedgerState", "calibrated_delta", "get_delta", "get_epsilon", "normalize"]

#: Composition methods that :func:`get_epsilon` can be asked for by name.
METHODS = ("tightest", "basic", "advanced", "gaussian", "rdp", "pld")


# ----------------------------------------------------------------------------------------
# Exact sums
# ----------------------------------------------------------------------------------------


class _FloatSum:
    """Running float sum without accumulated rounding error (Shewchuk's partials)."""

    __slots__ = ("partials",)

    def __init__(self, partials=()):
        self.partials = list(partials)

    def add(self, x, count=1):
        if count != 1:
            product = x * count
            # The rounding error of a product is itself a float: add both, exactly.
            self._add(float(Fraction(x) * count - Fraction(product)))
            x = product
        self._add(x)

    def _add(self, x):
        i = 0
        partials = self.partials
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    def value(self):
        return math.fsum(self.partials)

    def copy(self):
        return _FloatSum(self.partials)


def _fraction_up(value):
    """The smallest float >= the rational ``value``."""
    f = float(value)
    if Fraction(f) < value:
        f = math.nextafter(f, math.inf)
    return f


# ----------------------------------------------------------------------------------------
# Normalisation
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ParallelAtom:
    """A parallel composition whose parts have no single dominant part.

    ``parts`` is a tuple of normalised multisets, each a sorted tuple of (atom, count).
    """

    parts: tuple


def _canonical(counts):
    return tuple(sorted(counts.items(), key=lambda item: repr(item[0])))


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
            atom = PoissonSampledEvent(event.sampling_probability, _as_event(normalize(event.event)))
            out[atom] = out.get(atom, 0) + count
    elif isinstance(event, SampledWithoutReplacementEvent):
        if event.sample_size == 0:
            return  # the output does not depend on the data
        atom = SampledWithoutReplacementEvent(
            event.source_size, event.sample_size, _as_event(normalize(event.event))
        )
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


def normalize(event):
    """The multiset of atoms (leaf events) of ``event``: a dict atom -> count."""
    out = {}
    _add_leaves(event, 1, out)
    return out


def _as_event(counts):
    """A canonical single event for a normalised multiset (used inside sampled events)."""
    items = _canonical(counts)
    if len(items) == 1:
        atom, n = items[0]
        return atom if n == 1 else SelfComposedEvent(atom, n)
    return ComposedEvent(tuple(SelfComposedEvent(atom, n) if n != 1 else atom for atom, n in items))


# Parts made of one atom of these types are ordered by privacy: the dominant one is kept.
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
    states = [LedgerState.from_counts(p) for p in parts]
    if all(s.only_family("gaussian") for s in states):
        # Each part is one Gaussian release of μ² = Σ μᵢ²; the largest μ dominates.
        mu2 = max(s.mu2.value() for s in states)
        return GaussianEvent(math.nextafter(1.0 / math.sqrt(cal.round_up(mu2)), 0.0))
    if all(s.only_family("pure") and s.fixed_delta() == 0.0 for s in states):
        return PureDPEvent(max(s.basic_epsilon() for s in states))
    return _ParallelAtom(tuple(_canonical(p) for p in parts))


# ----------------------------------------------------------------------------------------
# What is known about one atom
# ----------------------------------------------------------------------------------------


@dataclass
class _Cost:
    family: str  # "pure", "gaussian", "rdp" or "profile"
    profile: object  # callable: delta -> smallest known epsilon for ONE release
    delta: object  # its inverse, callable: epsilon -> smallest known delta for ONE release
    pure_epsilon: float = None  # rounded up to a float
    pure_exact: Fraction = None  # the same ε as an exact rational, for basic composition
    fixed_delta: float = 0.0
    rdp: np.ndarray = None
    mu2: float = 0.0
    pld: object = None  # callable: discretisation interval -> dp_accounting PLD, or None
    exact: bool = False  # whether `delta` is the release's exact privacy profile


def _pld_module():
    from dpsk.accounting import _pld

    return _pld


def _pure_cost(epsilon, rdp, pld=None, fixed_delta=0.0, exact=None, curve=None):
    """An ε-DP (or (ε, δ)-DP) release; ``curve`` is its exact δ(ε), when known (δ = 0 then)."""
    exact = Fraction(epsilon) if exact is None else exact
    epsilon = _fraction_up(exact)
    if curve is not None:
        return _Cost(
            "pure",
            lambda delta: cal.epsilon_from_delta(curve, delta, epsilon),
            curve,
            pure_epsilon=epsilon,
            pure_exact=exact,
            rdp=rdp,
            pld=pld,
            exact=True,
        )

    def profile(delta):
        return epsilon if delta >= fixed_delta else math.inf

    def delta_at(eps):
        return fixed_delta if eps >= epsilon else 1.0

    return _Cost(
        "pure", profile, delta_at, pure_epsilon=epsilon, pure_exact=exact, fixed_delta=fixed_delta, rdp=rdp, pld=pld
    )


def _rdp_cost(curve):
    return _Cost(
        "rdp",
        lambda delta: cal.round_up(_rdp.rdp_to_epsilon(curve, delta)),
        lambda eps: _rdp.rdp_to_delta(curve, eps),
        rdp=curve,
    )


def _multiset_profile(counts):
    state = LedgerState.from_counts(counts)
    return functools.lru_cache(maxsize=64)(lambda delta: state.epsilon(delta, use_pld=False))


def _multiset_delta(counts):
    state = LedgerState.from_counts(counts)
    return functools.lru_cache(maxsize=64)(lambda eps: state.delta(eps, use_pld=False))


def _cost_sampled(q_exact, inner_event, *, poisson):
    """A subsampled release; ``q_exact`` is the sampling probability as a Fraction."""
    q = _fraction_up(q_exact)
    inner = LedgerState.from_counts(normalize(inner_event))
    inner_profile = _multiset_profile(inner.counts)
    inner_delta = _multiset_delta(inner.counts)

    def profile(delta):
        # (ε, δ/q) inner  =>  (log(1 + q(e^ε - 1)), δ) outer.
        return cal.amplified_epsilon(inner_profile(min(1.0, delta / q)), q)

    def delta_at(eps):
        return min(1.0, q * inner_delta(cal.deamplified_epsilon(eps, q)))

    pure = None
    fixed = 0.0
    if inner.only_family("pure"):
        pure = cal.amplified_epsilon(inner.basic_epsilon(), q)
        fixed = _fraction_up(q_exact * Fraction(inner.fixed_delta()))
    rdp = None
    single = inner.single_atom()
    if poisson and single is not None and isinstance(single, GaussianEvent):
        rdp = _rdp.rdp_poisson_gaussian(q, single.noise_multiplier)
    elif poisson and inner.fixed_delta() == 0.0 and inner.rdp_all() is not None:
        inner_curve = inner.rdp_curve_function()
        rdp = _rdp.rdp_poisson_subsampled(q, inner_curve)
        if pure is not None:
            rdp = np.minimum(rdp, _rdp.rdp_pure(pure))
    elif pure is not None:
        rdp = _rdp.rdp_pure(pure)
    pld = _pld_module().sampled_factory(q, inner, pure, fixed, poisson=poisson)
    if pure is not None:
        return _Cost(
            "pure", profile, delta_at, pure_epsilon=pure, pure_exact=Fraction(pure), fixed_delta=fixed, rdp=rdp, pld=pld
        )
    return _Cost("rdp" if rdp is not None else "profile", profile, delta_at, rdp=rdp, pld=pld)


def _cost_parallel(atom):
    states = [LedgerState.from_counts(dict(part)) for part in atom.parts]
    profiles = [_multiset_profile(s.counts) for s in states]
    deltas = [_multiset_delta(s.counts) for s in states]

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
        return _Cost(
            "pure", profile, delta_at, pure_epsilon=pure, pure_exact=Fraction(pure), fixed_delta=fixed, rdp=rdp
        )
    curves = [s.rdp_all() if s.fixed_delta() == 0.0 else None for s in states]
    if all(c is not None for c in curves):
        return _Cost("rdp", profile, delta_at, rdp=np.max(np.stack(curves), axis=0))
    return _Cost("profile", profile, delta_at)


def _cost_repeat_and_select(atom):
    """The best of a random number of runs of ``atom.event`` (Papernot & Steinke 2022)."""
    from dpsk.accounting._repeat_and_select import best_of_random_runs_rdp

    inner = LedgerState.from_counts(normalize(atom.event))
    curve = inner.rdp_all()
    if curve is None or inner.fixed_delta() > 0.0:
        raise TypeError(
            "RepeatAndSelectEvent needs an inner event with a Renyi-DP curve and no explicit "
            f"delta; got {atom.event!r}"
        )
    pure = inner.basic_epsilon() if inner.only_family("pure") else None
    if pure is not None and not math.isfinite(pure):
        pure = None
    rdp, pure = best_of_random_runs_rdp(curve, atom.mean, atom.shape, pure_epsilon=pure)
    if pure is not None:
        return _pure_cost(pure, rdp, _pld_module().approx_factory(pure, 0.0))
    return _rdp_cost(rdp)


@functools.lru_cache(maxsize=4096)
def _cost(atom):
    """What is known about one atom (cached: atoms are immutable and hashable)."""
    pld = _pld_module()
    if isinstance(atom, PureDPEvent):
        return _pure_cost(atom.epsilon, _rdp.rdp_pure(atom.epsilon), pld.approx_factory(atom.epsilon, 0.0))
    if isinstance(atom, ApproxDPEvent):
        return _pure_cost(
            atom.epsilon, _rdp.rdp_pure(atom.epsilon), pld.approx_factory(atom.epsilon, atom.delta), atom.delta
        )
    if isinstance(atom, LaplaceEvent):
        b = atom.noise_multiplier
        return _pure_cost(
            None,
            _rdp.rdp_laplace(b),
            pld.laplace_factory(b),
            exact=1 / Fraction(b),
            curve=lambda e: cal.laplace_delta(e, b),
        )
    if isinstance(atom, DiscreteLaplaceEvent):
        eps = cal.discrete_laplace_epsilon(atom.scale, atom.sensitivity)
        return _pure_cost(
            None,
            np.minimum(_rdp.rdp_pure(eps), _rdp.rdp_discrete_laplace(atom.scale, atom.sensitivity)),
            pld.discrete_laplace_factory(atom.scale, atom.sensitivity),
            exact=Fraction(atom.sensitivity) / Fraction(atom.scale),
            curve=lambda e: cal.discrete_laplace_delta(e, atom.scale, atom.sensitivity),
        )
    if isinstance(atom, RandomizedResponseEvent):
        eps, k = atom.epsilon, atom.num_categories
        return _pure_cost(
            eps,
            _rdp.rdp_randomized_response(eps, k),
            pld.randomized_response_factory(eps, k),
            curve=lambda e: cal.randomized_response_delta(e, eps, k),
        )
    if isinstance(atom, ExponentialEvent):
        eps = atom.epsilon
        return _pure_cost(
            eps,
            _rdp.rdp_bounded_range(eps),
            pld.approx_factory(eps, 0.0),
            curve=lambda e: cal.bounded_range_delta(e, eps),
        )
    if isinstance(atom, GaussianEvent):
        sigma = atom.noise_multiplier
        mu2 = cal.round_up(1.0 / (sigma * sigma))
        return _Cost(
            "gaussian",
            lambda delta: cal.gaussian_epsilon(delta, math.sqrt(mu2)),
            lambda eps: cal.gaussian_delta(eps, math.sqrt(mu2)),
            rdp=_rdp.rdp_gaussian(sigma),
            mu2=mu2,
            pld=pld.gaussian_factory(sigma),
            exact=True,
        )
    if isinstance(atom, DiscreteGaussianEvent):
        sigma, sens = atom.sigma, atom.sensitivity
        return _Cost(
            "rdp",
            lambda delta: cal.discrete_gaussian_epsilon(delta, sigma, sens),
            lambda eps: cal.discrete_gaussian_delta(eps, sigma, sens),
            rdp=_rdp.rdp_zcdp(sens * sens / (2.0 * sigma * sigma)),
            pld=pld.discrete_gaussian_factory(sigma, sens),
            exact=True,
        )
    if isinstance(atom, ZCDPEvent):
        return _rdp_cost(_rdp.rdp_zcdp(atom.rho))
    if isinstance(atom, RDPEvent):
        return _rdp_cost(_rdp.rdp_from_points(atom.orders, atom.epsilons))
    if isinstance(atom, PrivacyProfileEvent):
        points = list(zip(atom.deltas, atom.epsilons))

        def profile(delta):
            return min((e for d, e in points if d <= delta), default=math.inf)

        def delta_at(eps):
            return min((d for d, e in points if e <= eps), default=1.0)

        return _Cost("profile", profile, delta_at)
    if isinstance(atom, PoissonSampledEvent):
        return _cost_sampled(Fraction(atom.sampling_probability), atom.event, poisson=True)
    if isinstance(atom, SampledWithoutReplacementEvent):
        return _cost_sampled(Fraction(atom.sample_size, atom.source_size), atom.event, poisson=False)
    if isinstance(atom, _ParallelAtom):
        return _cost_parallel(atom)
    if isinstance(atom, RepeatAndSelectEvent):
        return _cost_repeat_and_select(atom)
    raise TypeError(
        f"{type(atom).__name__} is not a privacy event dpsk knows how to account for; "
        "describe it with an RDPEvent or a PrivacyProfileEvent"
    )


# ----------------------------------------------------------------------------------------
# Composition theorems
# ----------------------------------------------------------------------------------------


def _kov_closed_form_epsilon(sum_eps, sum_sq, sum_kov, delta):
    """Heterogeneous ε-DP releases, composed with slack δ [KOV15, Thm 3.5]."""
    if delta <= 0.0:
        return math.inf
    a = sum_kov + math.sqrt(2.0 * sum_sq * math.log(math.e + math.sqrt(sum_sq) / delta))
    b = sum_kov + math.sqrt(2.0 * sum_sq * math.log(1.0 / delta))
    return min(a, b, sum_eps)


def _kov_closed_form_delta(sum_kov, sum_sq, epsilon):
    """The inverse of :func:`_kov_closed_form_epsilon`: the smallest δ for which either of its
    two bounds is at most ε (1 if neither is)."""
    slack = epsilon - sum_kov
    if slack <= 0.0 or sum_sq <= 0.0:
        return 1.0
    exponent = slack * slack / (2.0 * sum_sq)
    best = math.exp(-exponent)  # ε = Σkov + sqrt(2 Σε² log(1/δ))
    if exponent > 1.0:  # ε = Σkov + sqrt(2 Σε² log(e + sqrt(Σε²)/δ))
        with np.errstate(over="ignore"):
            best = min(best, math.sqrt(sum_sq) / np.expm1(exponent - 1.0) / math.e)
    return min(1.0, float(best))


def _smallest_delta(epsilon_of, epsilon):
    """The smallest δ in [0, 1] with ``epsilon_of(δ) <= epsilon``, for a non-increasing ``epsilon_of``.

    Bisection in log δ; the result is a δ at which ``epsilon_of`` was evaluated and certified.
    """
    if epsilon_of(0.0) <= epsilon:
        return 0.0
    if epsilon_of(1.0) > epsilon:
        return 1.0
    lo, hi = math.log(5e-324), 0.0
    if epsilon_of(math.exp(lo)) <= epsilon:
        return math.exp(lo)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        if epsilon_of(math.exp(mid)) <= epsilon:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def _sum_up(values):
    """Σ values, exactly, rounded up (inf if any is inf)."""
    if any(math.isinf(v) for v in values):
        return math.inf
    return _fraction_up(sum(Fraction(v) for v in values))


def _log_binom_int(n, k):
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _homogeneous_log_delta(eps0, k, eps):
    """log δ(ε) of the optimal composition of k ε0-DP releases [KOV15, Thm 3.3].

    The k-fold composition of binary randomized response is the worst case, so
    δ(ε) = Σ_{j: (k-2j)ε0 > ε} C(k,j) (e^{(k-j)ε0} - e^{ε + jε0}) / (1 + e^{ε0})^k.
    Only j within 19·sqrt(k) of the binomial mean are summed; the rest is bounded by
    Hoeffding's inequality (below e^-700) and added.
    """
    p_other = 1.0 / (1.0 + math.exp(eps0))  # P(one RR release reports the "wrong" side)
    mean = k * p_other
    width = 19.0 * math.sqrt(k) + 2.0
    j_lo = max(0, int(math.floor(mean - width)))
    j_hi = min(k, int(math.ceil(mean + width)), int(math.ceil((k - eps / eps0) / 2.0)) - 1)
    if j_hi < j_lo:
        return math.log(2.0) - 2.0 * width * width / k
    j = np.arange(j_lo, j_hi + 1, dtype=float)
    gap = (k - 2.0 * j) * eps0 - eps
    j, gap = j[gap > 0], gap[gap > 0]
    if j.size == 0:
        return math.log(2.0) - 2.0 * width * width / k
    log_norm = k * (eps0 + math.log1p(math.exp(-eps0)))  # k log(1 + e^ε0)
    logs = _log_binom_int(float(k), j) + (k - j) * eps0 - log_norm + np.log(-np.expm1(-gap))
    return float(np.logaddexp(np.logaddexp.reduce(logs), math.log(2.0) - 2.0 * width * width / k))


def _homogeneous_epsilon(eps0, k, delta):
    """Smallest ε with the optimal k-fold composition of ε0-DP being (ε, δ)-DP (rounded up)."""
    if delta <= 0.0:
        return _fraction_up(Fraction(eps0) * k)
    log_delta = math.log(delta)
    total = eps0 * k
    if _homogeneous_log_delta(eps0, k, 0.0) <= log_delta:
        return 0.0
    if _homogeneous_log_delta(eps0, k, total) > log_delta:
        return _fraction_up(Fraction(eps0) * k)
    eps = cal._smallest_root(lambda e: _homogeneous_log_delta(eps0, k, e) - log_delta, 0.0, total)
    return cal.round_up(eps)


# ----------------------------------------------------------------------------------------
# Ledger state: running aggregates per family
# ----------------------------------------------------------------------------------------


class LedgerState:
    """Running aggregates of a multiset of atoms; O(1) (or O(#orders)) per added atom."""

    __slots__ = (
        "counts",
        "family_counts",
        "pure_sum",
        "pure_sq",
        "pure_kov",
        "pure_values",
        "pure_rdp",
        "log_keep",
        "delta_sum",
        "mu2",
        "rdp_rest",
        "rdp_rest_atoms",
        "pure_atoms",
        "profile_atoms",
        "calibrated_delta",
        "_cache",
    )

    def __init__(self):
        self.counts = {}
        self.family_counts = {"pure": 0, "gaussian": 0, "rdp": 0, "profile": 0}
        self.pure_sum = Fraction(0)
        self.pure_sq = _FloatSum()
        self.pure_kov = _FloatSum()
        self.pure_values = {}
        self.pure_rdp = np.zeros(len(_rdp.ORDERS))
        self.log_keep = _FloatSum()
        self.delta_sum = Fraction(0)
        self.mu2 = _FloatSum()
        self.rdp_rest = np.zeros(len(_rdp.ORDERS))
        self.rdp_rest_atoms = {}
        self.pure_atoms = {}
        self.profile_atoms = {}
        self.calibrated_delta = Fraction(0)  # Σ calibration δ's: where to report without a δ ceiling
        self._cache = {}

    @classmethod
    def from_counts(cls, counts):
        state = cls()
        for atom, count in counts.items():
            state.add_atom(atom, count)
        return state

    def copy(self):
        new = LedgerState.__new__(LedgerState)
        new.counts = dict(self.counts)
        new.family_counts = dict(self.family_counts)
        new.pure_sum = self.pure_sum
        new.pure_sq = self.pure_sq.copy()
        new.pure_kov = self.pure_kov.copy()
        new.pure_values = dict(self.pure_values)
        new.pure_rdp = self.pure_rdp.copy()
        new.log_keep = self.log_keep.copy()
        new.delta_sum = self.delta_sum
        new.mu2 = self.mu2.copy()
        new.rdp_rest = self.rdp_rest.copy()
        new.rdp_rest_atoms = dict(self.rdp_rest_atoms)
        new.pure_atoms = dict(self.pure_atoms)
        new.profile_atoms = dict(self.profile_atoms)
        new.calibrated_delta = self.calibrated_delta
        new._cache = {}
        return new

    def add_event(self, event):
        for atom, count in normalize(event).items():
            self.add_atom(atom, count)
        self.calibrated_delta += calibrated_delta(event)

    def plus(self, event):
        """A new state: this ledger with ``event`` added (this state is unchanged)."""
        new = self.copy()
        new.add_event(event)
        return new

    def apply(self, event):
        """Add ``event`` in place; returns a token for :meth:`undo` (O(1) in the ledger size)."""
        counts = normalize(event)
        hint = calibrated_delta(event)
        # Arrays are replaced, never mutated, by add_atom: keeping references is enough.
        token = (counts, hint, self.pure_rdp, self.rdp_rest, self._cache)
        for atom, count in counts.items():
            self.add_atom(atom, count)
        self.calibrated_delta += hint
        return token

    def undo(self, token):
        """Remove an event added by :meth:`apply` (exactly: sums are exact, arrays restored)."""
        counts, hint, pure_rdp, rdp_rest, cache = token
        for atom, count in counts.items():
            self.add_atom(atom, -count, curves=False)
        self.calibrated_delta -= hint
        self.pure_rdp, self.rdp_rest, self._cache = pure_rdp, rdp_rest, cache

    def add_atom(self, atom, count, curves=True):
        """Add ``count`` releases of ``atom`` (a negative count removes them).

        ``curves=False`` leaves the RDP arrays alone (:meth:`undo` restores them: inf - inf
        would not subtract back).
        """
        cost = _cost(atom)
        self._cache = {}
        _bump(self.counts, atom, count)
        self.family_counts[cost.family] += count
        if cost.fixed_delta > 0.0:
            self.log_keep.add(math.log1p(-cost.fixed_delta), count)
            self.delta_sum += Fraction(cost.fixed_delta) * count
        if cost.family == "pure":
            eps = cost.pure_epsilon
            self.pure_sum += cost.pure_exact * count
            self.pure_sq.add(eps * eps, count)
            self.pure_kov.add(eps * math.tanh(eps / 2.0), count)  # ε (e^ε - 1)/(e^ε + 1)
            _bump(self.pure_values, eps, count)
            _bump(self.pure_atoms, atom, count)
            if curves:
                self.pure_rdp = self.pure_rdp + count * cost.rdp
        elif cost.family == "gaussian":
            self.mu2.add(cost.mu2, count)
        elif cost.family == "rdp":
            if curves:
                self.rdp_rest = self.rdp_rest + count * cost.rdp
            _bump(self.rdp_rest_atoms, atom, count)
        else:
            _bump(self.profile_atoms, atom, count)

    # -- simple questions ------------------------------------------------------------------

    def __len__(self):
        return sum(self.counts.values())

    def only_family(self, family):
        return all(n == 0 for f, n in self.family_counts.items() if f != family)

    def _single_pure_release(self):
        """The cost of the pure family's only release if it has no explicit δ, else None.

        Its own profile (exact for Laplace, ...) may then beat the family's bounds.
        """
        if self.family_counts["pure"] != 1:
            return None
        cost = _cost(next(iter(self.pure_atoms)))
        return cost if cost.fixed_delta == 0.0 else None

    def single_atom(self):
        """The atom if the ledger is exactly one release, else None."""
        if len(self.counts) == 1:
            atom, count = next(iter(self.counts.items()))
            if count == 1:
                return atom
        return None

    def fixed_delta(self):
        """δ_fixed = 1 - Π(1 - δᵢ) of the explicit δ's, rounded up.

        The smaller of Σδᵢ (exact) and the product form (rounded up): exact for one spend,
        tighter for many.
        """
        if self.delta_sum <= 0:
            return 0.0
        product = cal.round_up(-math.expm1(self.log_keep.value()))
        return min(_fraction_up(self.delta_sum), product)

    def calibration_delta(self):
        """Σ of the calibration δ's of the recorded releases (a reporting point), as a float."""
        return min(float(self.calibrated_delta), 1.0)

    def basic_epsilon(self):
        """Σ ε of the pure family, exactly, rounded up (inf if other families are present)."""
        if not self.only_family("pure"):
            return math.inf
        return _fraction_up(self.pure_sum)

    def gaussian_rdp(self):
        return _rdp.ORDERS * (self.mu2.value() / 2.0)

    def rdp_all(self):
        """The summed RDP curve of the whole ledger (None if some atom has none)."""
        if self.family_counts["profile"]:
            return None
        return self.pure_rdp + self.rdp_rest + cal.round_up(self.mu2.value()) / 2.0 * _rdp.ORDERS

    def rdp_curve_function(self):
        """A callable orders -> summed RDP curve at arbitrary orders (for subsampling)."""
        atoms = list(self.counts.items())

        def curve(orders):
            total = np.zeros(len(orders))
            for atom, count in atoms:
                total += count * _atom_rdp_at(atom, np.asarray(orders, dtype=float))
            return total

        return curve

    # -- family guarantees at a share of δ --------------------------------------------------

    def _pure_family_epsilon(self, delta, use_rdp=True):
        if self.family_counts["pure"] == 0:
            return 0.0
        best = _fraction_up(self.pure_sum)
        if delta <= 0.0:
            return best
        single = self._single_pure_release()
        if single is not None:
            best = min(best, single.profile(delta))
            if single.exact:
                return best  # nothing beats the exact profile
        if len(self.pure_values) == 1:
            (eps0, k), = self.pure_values.items()
            if eps0 == 0.0:
                return 0.0
            best = min(best, _homogeneous_epsilon(eps0, k, delta))
        sum_eps = float(self.pure_sum)
        kov = _kov_closed_form_epsilon(sum_eps, self.pure_sq.value(), self.pure_kov.value(), delta)
        rdp = _rdp.rdp_to_epsilon(self.pure_rdp, delta) if use_rdp else math.inf
        return min(best, cal.round_up(min(kov, rdp)))

    def _gaussian_family_epsilon(self, delta):
        if self.family_counts["gaussian"] == 0:
            return 0.0
        return cal.gaussian_epsilon(delta, math.sqrt(cal.round_up(self.mu2.value())))

    def _rdp_family_epsilon(self, delta):
        if self.family_counts["rdp"] == 0:
            return 0.0
        best = cal.round_up(_rdp.rdp_to_epsilon(self.rdp_rest, delta))
        if len(self.rdp_rest_atoms) == 1:
            (atom, count), = self.rdp_rest_atoms.items()
            if count == 1:
                best = min(best, _cost(atom).profile(delta))
        return best

    def _profile_family_epsilon(self, delta):
        total = sum(self.profile_atoms.values())
        if total == 0:
            return 0.0
        share = delta / total  # basic composition: each release gets an equal share of δ
        return _sum_up([n * _cost(atom).profile(share) for atom, n in self.profile_atoms.items()])

    def _joint_rdp_epsilon(self, delta):
        return cal.round_up(_rdp.rdp_to_epsilon(self._joint_rdp_curve(), delta))

    def _joint_rdp_curve(self):
        return self.pure_rdp + self.rdp_rest + cal.round_up(self.mu2.value()) / 2.0 * _rdp.ORDERS

    # -- family guarantees at a share of ε (the inverse direction: δ at a given ε) ---------
    #
    # Each is the inverse of the ε function above: the smallest δ share at which that
    # family's ε is at most ``epsilon`` (not rounded: :meth:`delta` rounds the total).

    def _pure_family_delta(self, epsilon, use_rdp=True):
        if self.family_counts["pure"] == 0 or epsilon >= math.inf or Fraction(epsilon) >= self.pure_sum:
            return 0.0
        single = self._single_pure_release()
        if single is not None and single.exact:
            return single.delta(epsilon)  # nothing beats the exact profile
        best = 1.0 if single is None else single.delta(epsilon)
        if len(self.pure_values) == 1:
            (eps0, k), = self.pure_values.items()
            best = min(best, math.exp(_homogeneous_log_delta(eps0, k, epsilon)))
        sum_sq = self.pure_sq.value()
        best = min(best, _kov_closed_form_delta(self.pure_kov.value(), sum_sq, epsilon))
        if use_rdp:
            best = min(best, _rdp.rdp_to_delta(self.pure_rdp, epsilon))
        return best

    def _gaussian_family_delta(self, epsilon):
        if self.family_counts["gaussian"] == 0:
            return 0.0
        return cal.gaussian_delta(epsilon, math.sqrt(cal.round_up(self.mu2.value())))

    def _rdp_family_delta(self, epsilon):
        if self.family_counts["rdp"] == 0:
            return 0.0
        best = _rdp.rdp_to_delta(self.rdp_rest, epsilon)
        if len(self.rdp_rest_atoms) == 1:
            (atom, count), = self.rdp_rest_atoms.items()
            if count == 1:
                best = min(best, _cost(atom).delta(epsilon))
        return best

    def _profile_family_delta(self, epsilon):
        total = sum(self.profile_atoms.values())
        if total == 0:
            return 0.0
        if total == 1:
            (atom, _), = self.profile_atoms.items()
            return _cost(atom).delta(epsilon)
        return _smallest_delta(self._profile_family_epsilon, epsilon)

    def _joint_rdp_delta(self, epsilon):
        return _rdp.rdp_to_delta(self._joint_rdp_curve(), epsilon)

    # -- the ledger's guarantee -------------------------------------------------------------

    def conversion_delta(self, delta):
        """δ_c left for conversion when the total must be ``delta`` (rounded down); None if < 0."""
        return cal.delta_remove(delta, self.fixed_delta())

    def epsilon(self, delta, *, method="tightest", use_pld=True):
        """The smallest certified ε such that the ledger is (ε, ``delta``)-DP (rounded up)."""
        if not self.counts or delta >= 1.0:
            return 0.0
        delta_c = self.conversion_delta(delta)
        if delta_c is None:
            return math.inf
        return self.conversion_epsilon(delta_c, method=method, use_pld=use_pld)

    def conversion_epsilon(self, delta_c, *, method="tightest", use_pld=True):
        """ε of the ledger when δ_c is spent on conversion; its total δ is δ_fixed ⊕ δ_c.

        Explicit δ's of (ε, δ) releases are not part of δ_c: they are in δ_fixed.
        """
        key = (delta_c, method, use_pld)
        if key not in self._cache:
            self._cache[key] = self._conversion_epsilon(delta_c, method, use_pld)
        return self._cache[key]

    def certify(self, epsilon, delta_c, *, use_pld=True):
        """None if the ledger is certified (``epsilon``, δ_fixed ⊕ δ_c)-DP, else its best ε.

        Cheapest methods first: the exact Σε of pure releases; for Gaussian releases only,
        one evaluation of δ(ε) instead of solving for ε; every method but PLD; PLD last.
        """
        if self.basic_epsilon() <= epsilon:
            return None
        if delta_c > 0.0 and self.only_family("gaussian"):
            mu = math.sqrt(cal.round_up(self.mu2.value()))
            if cal.gaussian_delta(cal.round_down(epsilon), mu) <= delta_c:
                return None
        eps = self.conversion_epsilon(delta_c, use_pld=False)
        if eps <= epsilon:
            return None
        if use_pld:
            eps = self.conversion_epsilon(delta_c, use_pld=True)
            if eps <= epsilon:
                return None
        return eps

    def total_delta(self, delta_c):
        """δ_fixed ⊕ δ_c = 1 - (1 - δ_fixed)(1 - δ_c), rounded up."""
        return cal.delta_compose(self.fixed_delta(), delta_c)

    def delta(self, epsilon, *, method="tightest", use_pld=True):
        """The smallest certified δ such that the ledger is (``epsilon``, δ)-DP (rounded up).

        The inverse of :meth:`epsilon`: the explicit δ's, composed with the δ_c that the
        conversion needs at ``epsilon``, by the same methods.
        """
        if not self.counts:
            return 0.0
        delta_c = self._conversion_delta(float(epsilon), method, use_pld)
        return min(1.0, self.total_delta(min(1.0, cal.round_up(delta_c))))

    def _conversion_delta(self, epsilon, method, use_pld):
        if method == "basic":
            return 0.0 if self.only_family("pure") and epsilon >= self.basic_epsilon() else 1.0
        if method == "advanced":
            return self._pure_family_delta(epsilon, use_rdp=False) if self.only_family("pure") else 1.0
        if method == "gaussian":
            return self._gaussian_family_delta(epsilon) if self.only_family("gaussian") else 1.0
        if method == "pld":
            result = _pld_module().ledger_delta(self, epsilon)
            return 1.0 if result is None else result
        # Each group: its δ function, and the ε at which that δ is 0 (its pure ε, or inf).
        profile_group = (self._profile_family_delta, self._profile_family_epsilon(0.0))
        joint_groups = [(self._joint_rdp_delta, math.inf)]
        if self.family_counts["profile"]:
            joint_groups.append(profile_group)
        joint = self._split_delta(joint_groups, epsilon)
        if method == "rdp":
            return joint
        groups = {
            "pure": (self._pure_family_delta, self._pure_family_epsilon(0.0)),
            "gaussian": (self._gaussian_family_delta, math.inf),
            "rdp": (self._rdp_family_delta, math.inf),
            "profile": profile_group,
        }
        best = self._split_delta([g for f, g in groups.items() if self.family_counts[f] > 0], epsilon)
        best = min(best, joint)
        if use_pld and best > 0.0 and math.isfinite(epsilon) and self._pld_may_help():
            pld_delta = _pld_module().ledger_delta(self, epsilon)
            if pld_delta is not None:
                best = min(best, pld_delta)
        return best

    def _conversion_epsilon(self, delta_c, method, use_pld):
        if not self.counts:
            return 0.0
        if method == "basic":
            return self.basic_epsilon()
        if method == "advanced":
            return self._pure_family_epsilon(delta_c, use_rdp=False) if self.only_family("pure") else math.inf
        if method == "gaussian":
            return self._gaussian_family_epsilon(delta_c) if self.only_family("gaussian") else math.inf
        joint = self._split(
            [self._joint_rdp_epsilon, self._profile_family_epsilon],
            [True, self.family_counts["profile"] > 0],
            delta_c,
        )
        if method == "rdp":
            return joint
        if method == "pld":
            result = _pld_module().ledger_epsilon(self, self.total_delta(delta_c), None)
            return math.inf if result is None else result
        best = self._split(
            [
                self._pure_family_epsilon,
                self._gaussian_family_epsilon,
                self._rdp_family_epsilon,
                self._profile_family_epsilon,
            ],
            [self.family_counts[f] > 0 for f in ("pure", "gaussian", "rdp", "profile")],
            delta_c,
        )
        best = min(best, joint)
        if use_pld and delta_c > 0.0 and math.isfinite(best) and self._pld_may_help():
            pld_eps = _pld_module().ledger_epsilon(self, self.total_delta(delta_c), best)
            if pld_eps is not None:
                best = min(best, pld_eps)
        return best

    def _pld_may_help(self):
        # Exact already: all-Gaussian, one release with an exact profile, or identical
        # pure releases (optimal composition).
        if self.only_family("gaussian"):
            return False
        single = self.single_atom()
        if single is not None and _cost(single).exact:
            return False
        if self.only_family("pure") and len(self.pure_values) == 1 and all(
            isinstance(a, (PureDPEvent, ApproxDPEvent)) for a in self.counts
        ):
            return False
        return _pld_module().available()

    @staticmethod
    def _split(functions, present, delta_c):
        """Basic composition of groups, each at its share of δ_c: the best split on a fixed grid.

        The grid of shares is the same whatever the ledger holds, so the result can only
        grow when releases are added (each group's ε at a given share does).
        """
        functions = [f for f, p in zip(functions, present) if p]
        if not functions:
            return 0.0
        if len(functions) == 1:
            return functions[0](delta_c)
        if delta_c <= 0.0:
            return _sum_up([f(0.0) for f in functions])
        shares = [cal.round_down(w * delta_c) for w in _SHARES]
        table = np.array([[f(s) for s in shares] for f in functions])
        total = table[0]
        weight = _SHARES
        for row in table[1:]:
            total = np.add.outer(total, row).ravel()
            weight = np.add.outer(weight, _SHARES).ravel()
        # Additive split of δ_c is valid: basic composition adds the δ's.
        with np.errstate(invalid="ignore"):
            total = np.where(weight <= 1.0 + 1e-12, total, np.inf)
        best = int(np.argmin(total))
        if not np.isfinite(total[best]):
            return math.inf
        index = np.unravel_index(best, (len(_SHARES),) * len(functions))
        return _sum_up([table[i, j] for i, j in enumerate(index)])


    @staticmethod
    def _split_delta(groups, epsilon):
        """Basic composition of groups in the δ direction: Σ δᵢ(εᵢ), minimised over Σ εᵢ = ε.

        ``groups`` holds, for each group present, its δ function and the ε at which its δ
        is 0 (its pure ε, or inf). The split of ε is searched on a uniform grid of
        ``_EPSILON_SPLITS`` steps; for two groups, also where one group gets exactly its
        pure ε, and by a bounded scalar minimisation around the best grid point.
        (:meth:`_split` splits δ instead; an optimal split of ε is at least as tight, so
        the two directions agree up to the resolution of the searches.)
        """
        functions = [f for f, _ in groups]
        if not functions:
            return 0.0
        if len(functions) == 1 or math.isinf(epsilon):
            return min(1.0, math.fsum(f(epsilon) for f in functions))
        fractions = np.linspace(0.0, 1.0, _EPSILON_SPLITS + 1)
        table = np.array([[f(epsilon * x) for x in fractions] for f in functions])
        # Min-plus convolution: total[j] = smallest Σ δᵢ with the shares adding up to j steps.
        total = table[0]
        for row in table[1:]:
            total = np.array([np.min(total[: j + 1] + row[j::-1]) for j in range(fractions.size)])
        best = float(total[-1])
        if len(functions) > 2 or best == 0.0:
            return min(1.0, best)
        first, second = functions

        def split(a):
            return first(a) + second(max(epsilon - a, 0.0))

        candidates = [a for a in (groups[0][1], epsilon - groups[1][1]) if 0.0 <= a <= epsilon]
        j = int(np.argmin(table[0] + table[1][::-1]))
        found = minimize_scalar(
            split,
            bounds=(fractions[max(j - 1, 0)] * epsilon, fractions[min(j + 1, _EPSILON_SPLITS)] * epsilon),
            method="bounded",
            options={"xatol": 1e-12 * max(epsilon, 1e-300)},
        )
        if found.success:
            candidates.append(float(found.x))
        return min(1.0, best, *(split(a) for a in candidates))


#: Steps of the grid on which :meth:`LedgerState._split_delta` splits ε between groups.
_EPSILON_SPLITS = 32

#: Fractions of δ_c tried for each group in :meth:`LedgerState._split`.
_SHARES = np.array([0.0, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0])


def _bump(counter, key, count):
    value = counter.get(key, 0) + count
    if value:
        counter[key] = value
    else:
        del counter[key]


def _atom_rdp_at(atom, orders):
    """The RDP curve of one atom at arbitrary orders (closed forms only; grid otherwise)."""
    if isinstance(atom, GaussianEvent):
        return _rdp.rdp_gaussian(atom.noise_multiplier, orders)
    if isinstance(atom, LaplaceEvent):
        return _rdp.rdp_laplace(atom.noise_multiplier, orders)
    if isinstance(atom, (PureDPEvent, ApproxDPEvent)):
        return _rdp.rdp_pure(atom.epsilon, orders)
    if isinstance(atom, DiscreteLaplaceEvent):
        eps = cal.discrete_laplace_epsilon(atom.scale, atom.sensitivity)
        return np.minimum(_rdp.rdp_pure(eps, orders), _rdp.rdp_discrete_laplace(atom.scale, atom.sensitivity, orders))
    if isinstance(atom, RandomizedResponseEvent):
        return _rdp.rdp_randomized_response(atom.epsilon, atom.num_categories, orders)
    if isinstance(atom, ExponentialEvent):
        return _rdp.rdp_bounded_range(atom.epsilon, orders)
    if isinstance(atom, DiscreteGaussianEvent):
        return _rdp.rdp_zcdp(atom.sensitivity**2 / (2.0 * atom.sigma**2), orders)
    if isinstance(atom, ZCDPEvent):
        return _rdp.rdp_zcdp(atom.rho, orders)
    if isinstance(atom, RDPEvent):
        return _rdp.rdp_from_points(atom.orders, atom.epsilons, orders)
    # Anything else: its curve on the grid, extended by monotonicity.
    curve = _cost(atom).rdp
    if curve is None:
        return np.full(len(orders), np.inf)
    return _rdp.rdp_from_points(_rdp.ORDERS, curve, orders)


def get_epsilon(event, delta, *, method="tightest"):
    """The ε at which ``event`` is (ε, δ)-DP, by the given composition method.

    Parameters
    ----------
    event : PrivacyEvent
        Typically a :class:`~dpsk.accounting.ComposedEvent` or
        :class:`~dpsk.accounting.SelfComposedEvent` of many releases.
    delta : float
        Target δ in [0, 1].
    method : {"tightest", "basic", "advanced", "gaussian", "rdp", "pld"}, default="tightest"
        ``"basic"``: Σε (inf unless every release has a pure-DP part);
        ``"advanced"``: optimal composition of identical ε-DP releases, or the
        closed-form bound of Kairouz, Oh & Viswanath for different ones;
        ``"gaussian"``: exact composition of Gaussian releases;
        ``"rdp"``: Rényi DP; ``"pld"``: privacy loss distributions (needs the optional
        ``dp-accounting`` package); ``"tightest"``: the smallest of all that apply.
        A method that does not apply to ``event`` gives ``inf``.

    Returns
    -------
    epsilon : float
        Rounded up: never below the guarantee the method certifies.

    See Also
    --------
    get_delta : the inverse, the event's privacy profile δ(ε).

    Notes
    -----
    **Privacy.** A function of the event only (public parameters): computing it
    costs no budget. The result is the guarantee of the recorded releases under the
    neighbouring relation they were calibrated for, rounded up, so it is never below
    the true ε of the method.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(event, PrivacyEvent):
        raise TypeError(f"event must be a PrivacyEvent, got {type(event).__name__}")
    delta = float(delta)
    if not 0.0 <= delta <= 1.0:
        raise ValueError(f"delta must be in [0, 1], got {delta}")
    if method == "pld" and not _pld_module().available():
        raise ImportError("method='pld' needs the optional dp-accounting package: pip install dpsk[accounting]")
    return LedgerState.from_counts(normalize(event)).epsilon(delta, method=method)


def get_delta(event, epsilon, *, method="tightest"):
    """The δ at which ``event`` is (ε, δ)-DP, by the given composition method.

    The inverse of :func:`get_epsilon`, computed by the same accountant in the other
    direction: δ(ε) is the event's *privacy profile*, the curve of all the (ε, δ)
    guarantees it gives at once.

    Parameters
    ----------
    event : PrivacyEvent
        A single release or any combination of releases.
    epsilon : float or array-like of float
        Target ε >= 0 (``inf`` allowed), or several.
    method : {"tightest", "basic", "advanced", "gaussian", "rdp", "pld"}, default="tightest"
        As for :func:`get_epsilon`. A method that does not apply to ``event`` gives 1.

    Returns
    -------
    delta : float or ndarray
        Rounded up: never below the δ the method certifies, hence never below the true δ
        of the event. An ndarray of the shape of ``epsilon`` if it is an array.

    See Also
    --------
    get_epsilon : the inverse, ε at a given δ.

    Notes
    -----
    Single releases get their exact profile where one is known: Laplace
    (1 - e^{(ε - ε₀)/2}), discrete Laplace, Gaussian (Balle & Wang 2018), discrete
    Gaussian (Canonne, Kamath & Steinke 2020), k-ary randomized response, the
    exponential mechanism (the tight bound for ε₀-bounded range: tanh(ε₀/4) at ε = 0),
    and randomized response's curve for a bare ε-DP release. Compositions use the same
    theorems as :func:`get_epsilon`, each inverted exactly, so that
    ``get_delta(event, get_epsilon(event, d)) <= d`` (up to the 2⁻⁴⁰ relative margin by
    which both round outward). One exception: where releases of different kinds are
    combined by basic composition, ``get_delta`` splits ε between them where
    ``get_epsilon`` splits δ, each on its own search grid; the two then agree up to the
    resolution of the grids.

    **Privacy.** A function of the event only (public parameters): computing it
    costs no budget. Rounded up: never below the true δ(ε) of the event under the
    relation it was calibrated for.

    Examples
    --------
    >>> from dpsk.accounting import GaussianEvent, LaplaceEvent, get_delta
    >>> round(get_delta(LaplaceEvent(1.0), 0.0), 6)  # total variation: 1 - e^{-1/2}
    0.393469
    >>> round(get_delta(GaussianEvent(1.0), 0.0), 6)  # total variation: 2Φ(1/2) - 1
    0.382925
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(event, PrivacyEvent):
        raise TypeError(f"event must be a PrivacyEvent, got {type(event).__name__}")
    epsilons = np.asarray(epsilon, dtype=np.float64)
    if np.any(np.isnan(epsilons)) or np.any(epsilons < 0.0):
        raise ValueError("epsilon must be >= 0 (inf allowed), not NaN")
    if method == "pld" and not _pld_module().available():
        raise ImportError("method='pld' needs the optional dp-accounting package: pip install dpsk[accounting]")
    state = LedgerState.from_counts(normalize(event))
    deltas = np.array([state.delta(e, method=method) for e in epsilons.ravel()]).reshape(epsilons.shape)
    return float(deltas) if deltas.ndim == 0 else deltas
