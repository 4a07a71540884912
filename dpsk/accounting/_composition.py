# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Composition: the tightest valid (ε, δ) guarantee of a multiset of privacy events.

How a ledger is accounted
=========================

1. **Normalise.** Composed and self-composed events are flattened into a multiset of
   *atoms* (leaf events with a count); parallel compositions collapse to their dominant
   part when one exists; subsampled events keep their (normalised) inner event.

2. **Decompose.** Each atom is described by what is known about it (its
   :class:`~dpsk.accounting._costs.Cost`):
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

Where each step lives
=====================

This module is the public entry point (:func:`get_epsilon`, :func:`get_delta`). The steps
above live in, from the bottom up:

* ``_sums``: exact float sums (Σε, Σμ², ... without rounding drift);
* ``_pld``: privacy loss distributions through ``dp-accounting`` (a leaf: it is handed
  factories and counts, and knows no event or ledger);
* ``_costs``: the :class:`~dpsk.accounting._costs.Cost` of one leaf event (step 2), found
  by one dispatch on the event type;
* ``_normalize``: step 1;
* ``_theorems``: the composition theorems of step 3 ([KOV15], basic composition of
  groups at the best split of δ or of ε);
* ``_ledger_state``: :class:`LedgerState`, the running aggregates and the minimum over
  methods of step 3;
* ``_composite``: the costs of subsampled, parallel and repeat-and-select events, which
  are those of an inner ledger state (registered into ``_costs``).

References
----------
.. [KOV15] P. Kairouz, S. Oh and P. Viswanath. "The composition theorem for differential
   privacy." ICML 2015 / IEEE Trans. Inf. Theory 2017.
"""

import math
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

# _composite registers the costs of composite events into _costs' registry.
from dpsk.accounting import _composite, _pld  # noqa: F401
from dpsk.accounting._events import PrivacyEvent
from dpsk.accounting._ledger_state import LedgerState
from dpsk.accounting._normalize import normalize

__all__ = ["METHODS", "calibrate_noise_multiplier", "get_delta", "get_epsilon"]

#: Composition methods that :func:`get_epsilon` can be asked for by name.
Method = Literal["tightest", "basic", "advanced", "gaussian", "rdp", "pld"]
METHODS = get_args(Method)


def get_epsilon(event: PrivacyEvent, delta: float, *, method: Method = "tightest") -> float:
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
    if method == "pld" and not _pld.available():
        raise ImportError("method='pld' needs the optional dp-accounting package: pip install dpsk[accounting]")
    return LedgerState.from_counts(normalize(event)).epsilon(delta, method=method)


def get_delta(event: PrivacyEvent, epsilon: ArrayLike, *, method: Method = "tightest") -> float | np.ndarray:
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
    if method == "pld" and not _pld.available():
        raise ImportError("method='pld' needs the optional dp-accounting package: pip install dpsk[accounting]")
    state = LedgerState.from_counts(normalize(event))
    deltas = np.array([state.delta(e, method=method) for e in epsilons.ravel()]).reshape(epsilons.shape)
    return float(deltas) if deltas.ndim == 0 else deltas


def calibrate_noise_multiplier(make_event, epsilon, delta, *, method: Method = "tightest", rtol=1e-3):
    """The smallest noise multiplier σ (to within ``rtol``) at which ``make_event(σ)`` is (ε, δ)-DP.

    The inverse of :func:`get_epsilon` along a family of events indexed by their noise
    multiplier, for releases calibrated by "noise first, then account" (DP-SGD: a
    Poisson-sampled Gaussian composed over the training steps).

    Parameters
    ----------
    make_event : callable
        σ > 0 -> PrivacyEvent, with ε(δ) non-increasing in σ.
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    method : {"tightest", "basic", "advanced", "gaussian", "rdp", "pld"}, default="tightest"
        The accountant's method the guarantee is checked with (as :func:`get_epsilon`).
    rtol : float, default=1e-3
        Relative resolution on σ: the result is at most ``1 + rtol`` times the smallest
        valid σ found by bisection.

    Returns
    -------
    sigma : float
        ``get_epsilon(make_event(sigma), delta, method=method) <= epsilon`` holds.

    Raises
    ------
    ValueError
        If no σ up to 10⁶ gives (ε, δ)-DP.

    Notes
    -----
    **Privacy.** A function of public parameters only: it costs no budget. The
    returned σ is checked with the same accountant that records the release, so
    recording ``make_event(sigma)`` never charges more than (ε, δ) by that method
    (for ``"tightest"``: PLD with the optional dp-accounting package, RDP otherwise).

    Examples
    --------
    >>> from dpsk.accounting import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
    >>> from dpsk.accounting import calibrate_noise_multiplier
    >>> sigma = calibrate_noise_multiplier(
    ...     lambda s: SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(s)), 1000), 1.0, 1e-5, method="rdp"
    ... )
    >>> round(sigma, 2)  # doctest: +SKIP
    0.96
    """
    epsilon, delta = float(epsilon), float(delta)
    if not (epsilon > 0.0 and 0.0 < delta < 1.0):
        raise ValueError(f"need epsilon > 0 and 0 < delta < 1, got ({epsilon}, {delta})")

    log_target = math.log(epsilon)

    def gap(log_sigma):
        # log ε(σ) - log ε_target, capped so that the root finder sees finite values.
        try:
            eps = get_epsilon(make_event(math.exp(log_sigma)), delta, method=method)
        except OverflowError:  # dp-accounting's PLD at a tiny σ: ε is huge there
            return 50.0
        return min(math.log(eps), 50.0) - log_target if eps > 0.0 else -50.0

    # Bracket the root of the (decreasing, nearly linear in log-log) gap: first step with
    # slope -1, then doubling steps.
    a, ga = 0.0, gap(0.0)
    if ga == 0.0:
        return 1.0
    step = max(min(ga, 8.0), -8.0) or 1.0
    b, gb = a + step, gap(a + step)
    while (ga > 0.0) == (gb > 0.0) and gb != 0.0:
        if b > math.log(1e6) or b < math.log(1e-8):
            if gb > 0.0:
                raise ValueError(f"no noise multiplier up to 1e6 gives ({epsilon}, {delta})-DP")
            return math.exp(b)
        step *= 2.0
        a, ga = b, gb
        b, gb = a + step, gap(a + step)
    root = optimize.brentq(gap, min(a, b), max(a, b), xtol=rtol / 4.0) if gb != 0.0 else b
    sigma = math.exp(root + rtol / 4.0)
    while gap(math.log(sigma)) > 0.0:  # the accountant's own check, rounded outward
        sigma *= 1.0 + rtol / 4.0
    return sigma
