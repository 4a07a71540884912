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

A leaf module: it knows dp-accounting, not dpsk's events or ledgers. Each release's cost
(:mod:`dpsk.accounting._costs`) holds a factory made here, and the ledger state hands
:func:`compose` the factories and counts of its releases.
"""

import functools
import math

from dpsk.accounting import _calibration as cal

__all__ = [
    "approx_factory",
    "available",
    "compose",
    "delta_at",
    "discrete_gaussian_factory",
    "discrete_laplace_factory",
    "epsilon_at",
    "gaussian_factory",
    "interval_for",
    "laplace_factory",
    "randomized_response_factory",
]


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
# `sampling_probability` < 1: the release under Poisson subsampling.


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


@functools.lru_cache(maxsize=128)
def _self_composed(factory, count, interval):
    # Keyed by the factory object: each release's factory lives as long as its cached cost.
    return factory(interval).self_compose(count)


@functools.lru_cache(maxsize=32)
def _gaussian(mu2, interval):
    return gaussian_factory(1.0 / math.sqrt(mu2))(interval)


def compose(parts, gaussian_mu2, interval):
    """The PLD of a ledger, at discretisation ``interval``.

    ``parts`` holds (factory, count) pairs, each ``count`` releases of the PLD the factory
    makes; ``gaussian_mu2`` is the μ² = Σ μᵢ² of the ledger's Gaussian releases, which
    compose exactly into one Gaussian (None if there are none). At least one must be given.
    """
    plds = [_self_composed(factory, count, interval) for factory, count in parts]
    if gaussian_mu2 is not None:
        # Gaussian releases compose exactly into one: a single PLD, however many there are.
        plds.append(_gaussian(gaussian_mu2, interval))
    composed = plds[0]
    for pld in plds[1:]:
        composed = composed.compose(pld)
    return composed


def interval_for(epsilon):
    """Discretisation interval for a ledger whose ε is about ``epsilon``: 1e-4, or ε / 1e5
    for large ε, so the cost stays bounded."""
    if epsilon is not None and math.isfinite(epsilon):
        return max(1e-4, epsilon / 1e5)
    return 1e-4


def epsilon_at(pld, delta):
    """ε of ``pld`` at ``delta``, rounded up."""
    return cal.round_up(pld.get_epsilon_for_delta(delta))


def delta_at(pld, epsilon):
    """δ of ``pld`` at ``epsilon`` (not rounded).

    dp-accounting's pessimistic discretisation makes it an upper bound.
    """
    return float(pld.get_delta_for_epsilon(epsilon))
