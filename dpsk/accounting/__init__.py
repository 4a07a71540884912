# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy accounting: immutable privacy events and the accountant that composes them.

* Events (:class:`PureDPEvent`, :class:`GaussianEvent`, :class:`PoissonSampledEvent`, ...)
  describe what a release cost, as plain data.
* :class:`BudgetAccountant` holds a budget and a ledger of events, composes them with the
  tightest valid method and refuses spends that do not fit.
* :func:`get_epsilon` gives the guarantee of an event by a chosen composition method, and
  :func:`get_delta` its inverse, the event's privacy profile δ(ε).
* :func:`check_budget` checks, before any data is read, that every DP step of an
  estimator (a pipeline, a column transformer, ...) fits the budget together.
* The calibration functions (:func:`gaussian_sigma`, ...) turn a budget into a noise
  scale with the same formulas the accountant uses to turn it back.
"""

from dpsk.accounting._accountant import Budget, BudgetAccountant
from dpsk.accounting._calibration import (
    amplified_epsilon,
    classic_gaussian_sigma,
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    discrete_gaussian_sigma,
    discrete_laplace_epsilon,
    discrete_laplace_scale,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_sigma,
    laplace_epsilon,
    laplace_noise_multiplier,
    randomized_response_keep_probability,
    split_epsilon,
    zcdp_rho,
)
from dpsk.accounting._composition import calibrate_noise_multiplier, get_delta, get_epsilon
from dpsk.accounting._context import SpendLabel, active_accountant, resolve_accountant
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
from dpsk.accounting._preflight import BudgetCheck, check_budget
from dpsk.accounting._recording import note_release, record_releases

__all__ = [
    "ApproxDPEvent",
    "Budget",
    "BudgetAccountant",
    "BudgetCheck",
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
    "SpendLabel",
    "ZCDPEvent",
    "active_accountant",
    "amplified_epsilon",
    "calibrate_noise_multiplier",
    "check_budget",
    "classic_gaussian_sigma",
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "discrete_gaussian_sigma",
    "discrete_laplace_epsilon",
    "discrete_laplace_scale",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_sigma",
    "get_delta",
    "get_epsilon",
    "laplace_epsilon",
    "laplace_noise_multiplier",
    "note_release",
    "randomized_response_keep_probability",
    "record_releases",
    "resolve_accountant",
    "split_epsilon",
    "zcdp_rho",
]
