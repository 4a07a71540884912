# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What is known about one release: its :class:`Cost`, found by one dispatch on the event type.

A :class:`Cost` gathers everything the composition methods need to know about one atom
of a ledger (a leaf event; see :mod:`dpsk.accounting._normalize`): its family, its
(ε, δ) profile in both directions, its pure-DP part, its RDP curve (on the grid and at
any order), its Gaussian μ², its privacy loss distribution (PLD) and that PLD under
Poisson subsampling. :func:`cost_of` finds the cost of an atom through a
:func:`functools.singledispatch` registry keyed by the event type, so that a new event
type is taught to the accountant in one place: one registered function returning its
:class:`Cost`.

Why a registry and not methods on the event classes: events are plain data with a
stability contract (:mod:`dpsk.accounting._events`), imported by every mechanism and
estimator; what a release costs depends on the accountant's formulas (``_calibration``,
``_rdp``, ``_pld``) and, for composite events, on the ledger state of their inner
events. Keeping costs out of the events keeps the events free of that machinery and
the imports acyclic. The leaf events are registered here; the composite ones
(subsampled, parallel, repeat-and-select), whose cost is that of an inner ledger, in
:mod:`dpsk.accounting._composite`, which the package imports
(:mod:`dpsk.accounting._composition` does) before any ledger is accounted.
"""

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpsk.accounting import _calibration as cal
from dpsk.accounting import _pld, _rdp
from dpsk.accounting._events import (
    ApproxDPEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    ExponentialEvent,
    GaussianEvent,
    LaplaceEvent,
    PrivacyProfileEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    RDPEvent,
    ZCDPEvent,
)
from dpsk.accounting._sums import fraction_up

__all__ = ["Cost", "cost_of", "pure_cost", "rdp_cost", "register_cost"]


@dataclass
class Cost:
    """What is known about one release.

    Atoms fall in four *families*: ``"pure"`` (has a pure-DP part, possibly with an
    explicit δ), ``"gaussian"`` (composes exactly, by μ² = Σ μᵢ²), ``"rdp"`` (an RDP
    curve and no pure part) and ``"profile"`` (only an (ε, δ) profile).
    """

    family: str
    #: δ -> smallest known ε for ONE release.
    profile: Callable[[float], float]
    #: Its inverse, ε -> smallest known δ for ONE release.
    delta: Callable[[float], float]
    #: The pure-DP ε, rounded up to a float, and the same ε as an exact rational.
    pure_epsilon: float | None = None
    pure_exact: Fraction | None = None
    #: The explicit δ of an (ε, δ)-DP release.
    fixed_delta: float = 0.0
    #: The RDP curve on :data:`dpsk.accounting._rdp.ORDERS` (None: no curve).
    rdp: np.ndarray | None = None
    #: A closed form of the RDP curve at any orders, when known (sets ``rdp``).
    rdp_formula: Callable[[np.ndarray], np.ndarray] | None = None
    #: Gaussian family: μ² = 1/σ², rounded up.
    mu2: float = 0.0
    #: Callable: discretisation interval -> dp_accounting PLD, or None.
    pld: Callable | None = None
    #: Callable: sampling probability q -> the PLD factory of this release under Poisson
    #: subsampling (or None), when the release has a PLD of its own there.
    poisson_pld: Callable | None = None
    #: Callable: q -> the RDP curve of this release under Poisson subsampling, when a
    #: dedicated bound beats the generic one.
    poisson_rdp: Callable | None = None
    #: Whether ``delta`` is the release's exact privacy profile.
    exact: bool = False
    #: Whether only the release's (ε, δ) is known (a bare ε-DP or (ε, δ)-DP spend): the
    #: optimal composition of identical such releases is then exact.
    bare: bool = False

    def __post_init__(self):
        if self.rdp is None and self.rdp_formula is not None:
            self.rdp = self.rdp_formula(_rdp.ORDERS)

    def rdp_at(self, orders):
        """The RDP curve at arbitrary ``orders``: the closed form, else the grid extended by
        monotonicity (inf where nothing is known)."""
        if self.rdp_formula is not None:
            return self.rdp_formula(orders)
        if self.rdp is None:
            return np.full(len(orders), np.inf)
        return _rdp.rdp_from_points(_rdp.ORDERS, self.rdp, orders)


def pure_cost(epsilon, *, exact=None, fixed_delta=0.0, curve=None, **known):
    """An ε-DP (or (ε, δ)-DP) release; ``curve`` is its exact δ(ε), when known (δ = 0 then).

    ``exact`` is ε as a rational (for basic composition; default ``Fraction(epsilon)``);
    ``known`` holds the other :class:`Cost` fields (RDP curve, PLD, ...).
    """
    exact = Fraction(epsilon) if exact is None else exact
    epsilon = fraction_up(exact)
    if curve is not None:
        return Cost(
            "pure",
            lambda delta: cal.epsilon_from_delta(curve, delta, epsilon),
            curve,
            pure_epsilon=epsilon,
            pure_exact=exact,
            exact=True,
            **known,
        )

    def profile(delta):
        return epsilon if delta >= fixed_delta else math.inf

    def delta_at(eps):
        return fixed_delta if eps >= epsilon else 1.0

    return Cost("pure", profile, delta_at, pure_epsilon=epsilon, pure_exact=exact, fixed_delta=fixed_delta, **known)


def rdp_cost(rdp=None, *, rdp_formula=None):
    """A release known by its RDP curve only (on the grid, or as a closed form)."""
    curve = rdp_formula(_rdp.ORDERS) if rdp is None else rdp
    return Cost(
        "rdp",
        lambda delta: cal.round_up(_rdp.rdp_to_epsilon(curve, delta)),
        lambda eps: _rdp.rdp_to_delta(curve, eps),
        rdp=curve,
        rdp_formula=rdp_formula,
    )


@functools.singledispatch
def _dispatch(atom):
    raise TypeError(
        f"{type(atom).__name__} is not a privacy event dpsk knows how to account for; "
        "describe it with an RDPEvent or a PrivacyProfileEvent"
    )


#: Decorator registering the :class:`Cost` builder of an event type (see the module docstring).
register_cost = _dispatch.register


@functools.lru_cache(maxsize=4096)
def cost_of(atom):
    """The :class:`Cost` of one atom (cached: atoms are immutable and hashable)."""
    return _dispatch(atom)


# ----------------------------------------------------------------------------------------
# Leaf events
# ----------------------------------------------------------------------------------------


@register_cost
def _pure_dp(atom: PureDPEvent):
    eps = atom.epsilon
    if math.isinf(eps):
        # A non-private release (epsilon=inf): no (ε, δ) guarantee with δ < 1 at any finite
        # ε. Known by this profile only, so every composition with it is infinite too.
        return Cost("profile", lambda delta: math.inf, lambda e: 0.0 if e == math.inf else 1.0)
    return pure_cost(
        eps, rdp_formula=lambda orders: _rdp.rdp_pure(eps, orders), pld=_pld.approx_factory(eps, 0.0), bare=True
    )


@register_cost
def _approx_dp(atom: ApproxDPEvent):
    eps = atom.epsilon
    return pure_cost(
        eps,
        fixed_delta=atom.delta,
        rdp_formula=lambda orders: _rdp.rdp_pure(eps, orders),
        pld=_pld.approx_factory(eps, atom.delta),
        bare=True,
    )


@register_cost
def _laplace(atom: LaplaceEvent):
    b = atom.noise_multiplier
    return pure_cost(
        None,
        exact=1 / Fraction(b),
        curve=lambda e: cal.laplace_delta(e, b),
        rdp_formula=lambda orders: _rdp.rdp_laplace(b, orders),
        pld=_pld.laplace_factory(b),
        poisson_pld=lambda q: _pld.laplace_factory(b, q),
    )


@register_cost
def _discrete_laplace(atom: DiscreteLaplaceEvent):
    scale, sens = atom.scale, atom.sensitivity
    eps = cal.discrete_laplace_epsilon(scale, sens)
    return pure_cost(
        None,
        exact=Fraction(sens) / Fraction(scale),
        curve=lambda e: cal.discrete_laplace_delta(e, scale, sens),
        rdp_formula=lambda orders: np.minimum(
            _rdp.rdp_pure(eps, orders), _rdp.rdp_discrete_laplace(scale, sens, orders)
        ),
        pld=_pld.discrete_laplace_factory(scale, sens),
        poisson_pld=lambda q: _pld.discrete_laplace_factory(scale, sens, q),
    )


@register_cost
def _randomized_response(atom: RandomizedResponseEvent):
    eps, k = atom.epsilon, atom.num_categories
    return pure_cost(
        eps,
        curve=lambda e: cal.randomized_response_delta(e, eps, k),
        rdp_formula=lambda orders: _rdp.rdp_randomized_response(eps, k, orders),
        pld=_pld.randomized_response_factory(eps, k),
    )


@register_cost
def _exponential(atom: ExponentialEvent):
    eps = atom.epsilon
    return pure_cost(
        eps,
        curve=lambda e: cal.bounded_range_delta(e, eps),
        rdp_formula=lambda orders: _rdp.rdp_bounded_range(eps, orders),
        pld=_pld.approx_factory(eps, 0.0),
    )


@register_cost
def _gaussian(atom: GaussianEvent):
    sigma = atom.noise_multiplier
    mu2 = cal.round_up(1.0 / (sigma * sigma))
    return Cost(
        "gaussian",
        lambda delta: cal.gaussian_epsilon(delta, math.sqrt(mu2)),
        lambda eps: cal.gaussian_delta(eps, math.sqrt(mu2)),
        rdp_formula=lambda orders: _rdp.rdp_gaussian(sigma, orders),
        mu2=mu2,
        pld=_pld.gaussian_factory(sigma),
        poisson_pld=lambda q: _pld.gaussian_factory(sigma, q),
        poisson_rdp=lambda q: _rdp.rdp_poisson_gaussian(q, sigma),
        exact=True,
    )


@register_cost
def _discrete_gaussian(atom: DiscreteGaussianEvent):
    sigma, sens = atom.sigma, atom.sensitivity
    rho = sens * sens / (2.0 * sigma * sigma)
    return Cost(
        "rdp",
        lambda delta: cal.discrete_gaussian_epsilon(delta, sigma, sens),
        lambda eps: cal.discrete_gaussian_delta(eps, sigma, sens),
        rdp_formula=lambda orders: _rdp.rdp_zcdp(rho, orders),
        pld=_pld.discrete_gaussian_factory(sigma, sens),
        poisson_pld=lambda q: _pld.discrete_gaussian_factory(sigma, sens, q),
        exact=True,
    )


@register_cost
def _zcdp(atom: ZCDPEvent):
    return rdp_cost(rdp_formula=lambda orders: _rdp.rdp_zcdp(atom.rho, orders))


@register_cost
def _rdp_points(atom: RDPEvent):
    return rdp_cost(rdp_formula=lambda orders: _rdp.rdp_from_points(atom.orders, atom.epsilons, orders))


@register_cost
def _privacy_profile(atom: PrivacyProfileEvent):
    points = list(zip(atom.deltas, atom.epsilons))

    def profile(delta):
        return min((e for d, e in points if d <= delta), default=math.inf)

    def delta_at(eps):
        return min((d for d, e in points if e <= eps), default=1.0)

    return Cost("profile", profile, delta_at)
