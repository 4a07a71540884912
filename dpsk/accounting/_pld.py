# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy loss distributions through the optional ``dp-accounting`` package.

PLD accounting (Koskela et al. 2020; Doroshenko et al. 2022) composes the exact privacy
loss of Laplace, subsampled Gaussian and randomized-response releases numerically and
is the tightest method available for them (e.g. 100 Laplace releases of ε = 0.1 at
δ = 1e-5: 4.22, against 4.31 for the optimal composition of generic ε-DP releases).
dpsk uses dp-accounting's *pessimistic* discretisation, so the result is an upper bound.

Install with ``pip install dpsk[accounting]``. Without it, the accountant silently uses
its other methods, which are valid but a little looser for these releases.
"""

import functools
import math

from dpsk.accounting import _calibration as cal

__all__ = ["available", "ledger_epsilon"]


@functools.cache
def available():
    """Whether dp-accounting (>= 0.4) can be imported."""
    try:
        from dp_accounting.pld import common, privacy_loss_distribution  # noqa: F401
    except ImportError:
        return False
    return True


def _lib():
    from dp_accounting.pld import privacy_loss_distribution

    return privacy_loss_distribution


# Factories: each returns a callable `interval -> PLD` (or None when not representable).


def approx_factory(epsilon, delta):
    def make(interval):
        from dp_accounting.pld import common

        return _lib().from_privacy_parameters(
            common.DifferentialPrivacyParameters(float(epsilon), float(delta)), value_discretization_interval=interval
        )

    return make


def laplace_factory(noise_multiplier, sampling_probability=1.0):
    return lambda interval: _lib().from_laplace_mechanism(
        noise_multiplier, value_discretization_interval=interval, sampling_prob=sampling_probability
    )


def gaussian_factory(noise_multiplier, sampling_probability=1.0):
    return lambda interval: _lib().from_gaussian_mechanism(
        noise_multiplier, value_discretization_interval=interval, sampling_prob=sampling_probability
    )


#: dp-accounting builds discrete PLDs by enumerating the sensitivity: beyond this (e.g. a
#: lattice Laplace release, sensitivity ~2**40 lattice steps) PLD is not used.
MAX_DISCRETE_SENSITIVITY = 1000


def discrete_laplace_factory(scale, sensitivity, sampling_probability=1.0):
    if sensitivity > MAX_DISCRETE_SENSITIVITY:
        return None
    return lambda interval: _lib().from_discrete_laplace_mechanism(
        1.0 / scale, sensitivity=sensitivity, value_discretization_interval=interval, sampling_prob=sampling_probability
    )


def discrete_gaussian_factory(sigma, sensitivity, sampling_probability=1.0):
    if sensitivity > MAX_DISCRETE_SENSITIVITY or sigma > 1e4:
        return None
    return lambda interval: _lib().from_discrete_gaussian_mechanism(
        sigma, sensitivity=sensitivity, value_discretization_interval=interval, sampling_prob=sampling_probability
    )


def randomized_response_factory(epsilon, num_categories):
    # dp-accounting's parameter: probability of answering uniformly at random.
    noise = num_categories / (math.exp(epsilon) + num_categories - 1.0)
    return lambda interval: _lib().from_randomized_response(
        noise, num_categories, value_discretization_interval=interval
    )


def sampled_factory(q, inner, pure, fixed_delta, *, poisson):
    """PLD of a subsampled release, from its inner ledger state (or None)."""
    from dpsk.accounting._events import DiscreteGaussianEvent, DiscreteLaplaceEvent, GaussianEvent, LaplaceEvent

    single = inner.single_atom()
    if poisson and isinstance(single, GaussianEvent):
        return gaussian_factory(single.noise_multiplier, q)
    if poisson and isinstance(single, LaplaceEvent):
        return laplace_factory(single.noise_multiplier, q)
    if poisson and isinstance(single, DiscreteLaplaceEvent):
        return discrete_laplace_factory(single.scale, single.sensitivity, q)
    if poisson and isinstance(single, DiscreteGaussianEvent):
        return discrete_gaussian_factory(single.sigma, single.sensitivity, q)
    if pure is not None:
        return approx_factory(pure, fixed_delta)
    return None


@functools.lru_cache(maxsize=128)
def _self_composed(atom, count, interval):
    from dpsk.accounting._composition import _cost

    return _cost(atom).pld(interval).self_compose(count)


@functools.lru_cache(maxsize=32)
def _gaussian(mu2, interval):
    return gaussian_factory(1.0 / math.sqrt(mu2))(interval)


def ledger_epsilon(state, delta, hint):
    """ε of the whole ledger at total ``delta`` by PLD, or None if some atom has no PLD.

    ``hint`` (an ε already certified by another method) sets the discretisation
    interval: 1e-4, or hint / 1e5 for large ε, so the cost stays bounded.
    """
    if not available():
        return None
    from dpsk.accounting._composition import _cost

    interval = 1e-4
    if hint is not None and math.isfinite(hint):
        interval = max(interval, hint / 1e5)
    gaussians = []
    others = []
    for atom, count in state.counts.items():
        cost = _cost(atom)
        if cost.pld is None:
            return None
        if cost.family == "gaussian":
            gaussians.append(atom)
        else:
            others.append((atom, count))
    plds = [_self_composed(atom, count, interval) for atom, count in others]
    if gaussians:
        # Gaussian releases compose exactly into one: a single PLD, however many there are.
        plds.append(_gaussian(cal.round_up(state.mu2.value()), interval))
    composed = plds[0]
    for pld in plds[1:]:
        composed = composed.compose(pld)
    return cal.round_up(composed.get_epsilon_for_delta(delta))
