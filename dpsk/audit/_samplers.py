# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Samplers: turn a mechanism or an estimator into ``sampler(data, size, rng) -> outputs``.

:func:`dpsk.audit.audit` only needs a function that runs the randomized computation
``size`` times on one input. A vectorised mechanism does that in one call; an estimator
needs ``size`` fits, each from its own seed, which :func:`estimator_sampler` spreads over
joblib workers.
"""

import contextvars

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone

from dpsk.accounting._context import BOUND_ATTRIBUTE

from dpsk.audit._audit import audit

__all__ = ["audit_estimator", "declared_cost", "estimator_sampler", "mechanism_sampler"]


class _MechanismSampler:
    def __init__(self, make_mechanism, method):
        self.make_mechanism = make_mechanism
        self.method = method

    def __call__(self, value, size, rng):
        value = np.asarray(value, dtype=np.float64)
        # One call on `size` copies of the input: mechanisms are vectorised elementwise.
        batch = np.broadcast_to(value, (size, *value.shape)).copy()
        mechanism = self.make_mechanism(random_state=rng)
        return np.asarray(getattr(mechanism, self.method)(batch))


def mechanism_sampler(make_mechanism, *, method="randomise"):
    """Sampler of a vectorised mechanism, for :func:`audit`.

    Parameters
    ----------
    make_mechanism : callable ``make_mechanism(random_state=rng) -> mechanism``
        Builds the mechanism with the audit's Generator, e.g.
        ``functools.partial(Laplace, epsilon=1.0, sensitivity=1.0)``.
    method : str, default="randomise"
        Method applied to an array holding ``size`` copies of the input value (a scalar
        or an array); it must act elementwise along the first axis.

    Returns
    -------
    sampler : callable ``sampler(value, size, rng) -> ndarray``
    """
    return _MechanismSampler(make_mechanism, method)


def _fit_and_project(estimator, data, projection, seeds):
    """Fit ``estimator`` once per seed on ``data`` and project each fitted model."""
    outputs = []
    for seed in seeds:
        estimator.set_params(random_state=int(seed))
        estimator.fit(**data)
        outputs.append(np.ravel(np.asarray(projection(estimator), dtype=np.float64)))
    return np.array(outputs)


def _detached_clone(estimator):
    """A clone that spends on no accountant: neither a parameter, nor one active or bound.

    Cloned in an empty context, so that ``DPEstimatorMixin.__sklearn_clone__`` does not
    bind an accountant made active by the caller's ``with accountant:`` block.
    """
    fitted = contextvars.Context().run(clone, estimator)
    if "accountant" in fitted.get_params():
        fitted.set_params(accountant=None)
    vars(fitted).pop(BOUND_ATTRIBUTE, None)
    return fitted


def _fit_batch(estimator, data, projection, seeds):
    # A fresh, empty context: no accountant made active by `with accountant:` in the
    # caller is charged for the audit's fits, and no `record_releases` block collects them.
    return contextvars.Context().run(_fit_and_project, _detached_clone(estimator), data, projection, seeds)


class _EstimatorSampler:
    def __init__(self, estimator, projection, n_jobs, batch_size):
        self.estimator = estimator
        self.projection = projection
        self.n_jobs = n_jobs
        self.batch_size = batch_size

    def __call__(self, data, size, rng):
        estimator = _detached_clone(self.estimator)
        # Seeds drawn up front from the audit's Generator: the outputs do not depend on
        # how the fits are spread over workers.
        seeds = rng.integers(0, 2**63 - 1, size=size, dtype=np.int64)
        n_batches = max(1, -(-size // self.batch_size))
        batches = np.array_split(seeds, n_batches)
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_batch)(estimator, data, self.projection, batch) for batch in batches
        )
        return np.concatenate(results)


def estimator_sampler(estimator, projection, *, n_jobs=None, batch_size=500):
    """Sampler that fits an estimator from fresh seeds and projects each fit, for :func:`audit`.

    Parameters
    ----------
    estimator : estimator
        An unfitted dpsk estimator with a ``random_state`` parameter. It is cloned; its
        ``accountant`` is set to None (an audit fits thousands of times: no budget should
        be charged) and each fit runs in an empty context, so an accountant made active
        with ``with accountant:`` is not charged either.
    projection : callable ``projection(fitted) -> float or ndarray``
        Reduces a fitted estimator to a scalar or a small vector, e.g.
        :func:`project_attribute` or :func:`project_output`. Must be picklable (a
        module-level function or one of those helpers) when ``n_jobs`` uses processes.
    n_jobs : int or None, default=None
        joblib workers for the fits (``None`` means 1 unless inside
        :func:`joblib.parallel_config`).
    batch_size : int, default=500
        Fits per joblib task.

    Returns
    -------
    sampler : callable ``sampler(data, size, rng) -> ndarray of shape (size, k)``
        ``data`` is a dict of ``fit`` arguments (see :func:`canary_neighbours`).
    """
    if "random_state" not in estimator.get_params():
        raise ValueError(f"{type(estimator).__name__} has no random_state parameter to seed fits with")
    return _EstimatorSampler(estimator, projection, n_jobs, int(batch_size))


def declared_cost(estimator, neighbours):
    """The privacy cost an estimator declares (``privacy_spent_``) when fitted on the neighbours.

    Fits once on each neighbour (seed 0, no accountant). The declared cost must not depend
    on the data: a cost that differs between neighbours is itself a leak, and raises.

    Returns
    -------
    event : PrivacyEvent
    """
    events = []
    for data in neighbours:
        fitted = _detached_clone(estimator).set_params(random_state=0)
        contextvars.Context().run(fitted.fit, **data)
        events.append(fitted.privacy_spent_)
    if events[0] != events[1]:
        raise ValueError(
            f"{type(estimator).__name__} declares different privacy costs on the two "
            "neighbours: the declared cost depends on the data"
        )
    return events[0]


def audit_estimator(estimator, neighbours, projection, *, n_jobs=None, **audit_params):
    """Audit an estimator against the privacy cost it declares, on a pair of neighbours.

    Shorthand for ``audit(estimator_sampler(estimator, projection, n_jobs=n_jobs),
    neighbours, event=declared_cost(estimator, neighbours), **audit_params)``.

    Parameters
    ----------
    estimator : estimator
        Unfitted; see :func:`estimator_sampler`.
    neighbours : tuple (dict, dict)
        ``fit`` arguments of the two neighbouring datasets, e.g. from
        :func:`canary_neighbours` or :func:`worst_case_neighbours`.
    projection : callable
        See :func:`project_attribute`, :func:`project_output`.
    n_jobs : int or None, default=None
    **audit_params
        ``n_samples``, ``alpha``, ``delta``, ``random_state``, ... of :func:`audit`.

    Returns
    -------
    result : AuditResult
    """
    sampler = estimator_sampler(estimator, projection, n_jobs=n_jobs)
    return audit(sampler, neighbours, event=declared_cost(estimator, neighbours), **audit_params)
