# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Samplers: turn a mechanism or an estimator into ``sampler(data, size, rng) -> outputs``.

:func:`dpsk.audit.audit` only needs a function that runs the randomized computation
``size`` times on one input. A vectorised mechanism does that in one call; an estimator
needs ``size`` fits, each from its own seed, which :func:`estimator_sampler` spreads over
joblib workers.
"""

import contextvars
import inspect

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone

from dpsk.accounting._context import BOUND_ATTRIBUTE
from dpsk.audit._audit import audit
from dpsk.dask._data import is_dask
from dpsk.mechanisms._base import DPMechanism

__all__ = [
    "StatisticEstimator",
    "audit_estimator",
    "declared_cost",
    "estimator_sampler",
    "mechanism_sampler",
    "statistic_estimator",
]


class _MechanismSampler:
    def __init__(self, make_mechanism, method, vectorised):
        self.make_mechanism = make_mechanism
        self.method = method
        self.vectorised = vectorised

    def __call__(self, value, size, rng):
        mechanism = self.make_mechanism(random_state=rng)
        release = getattr(mechanism, self.method)
        if not self.vectorised:
            return np.array([release(value) for _ in range(size)])
        value = np.asarray(value)
        batch = np.broadcast_to(value, (size, *value.shape)).copy()
        if isinstance(mechanism, DPMechanism) and self.method == "randomise":
            return _independent_releases(mechanism, value, batch)
        # One call on `size` copies of the input: the method acts elementwise.
        return np.asarray(release(batch.astype(np.float64, copy=False)))


def _independent_releases(mechanism, value, batch):
    """``len(batch)`` independent releases of ``value``, drawn in one kernel call.

    ``DPMechanism.randomise`` treats an array as ONE vector-valued query, calibrated for
    its size, so it cannot draw many releases at once. This draws every copy with the
    calibration of a single release of ``value`` (the one ``privacy_event(value.shape)``
    declares): each row is distributed exactly as ``randomise(value)``, which
    tests/audit/test_samplers.py checks draw for draw on the first row.
    """
    _, work = mechanism._values(batch)
    params = mechanism._calibration(max(value.size, 1)).params
    if params and work.size:
        mechanism._add_noise(work.reshape(-1), params)
    return work


def mechanism_sampler(make_mechanism, *, method="randomise", vectorised=True):
    """Sampler of a mechanism, for :func:`audit`.

    Parameters
    ----------
    make_mechanism : callable ``make_mechanism(random_state=rng) -> mechanism``
        Builds the mechanism with the audit's Generator, e.g.
        ``functools.partial(Laplace, epsilon=1.0, sensitivity=1.0)``.
    method : str, default="randomise"
        The release method, called with the input value (a scalar or an array).
    vectorised : bool, default=True
        Whether all runs can be drawn in one call. For the value-perturbing mechanisms
        of :mod:`dpsk.mechanisms`, ``size`` independent releases of the input are drawn
        at once, each with the calibration of one release of the input's shape. Other
        mechanisms get one call on an array holding ``size`` copies of the input, and
        ``method`` must act elementwise along its first axis (e.g. randomized response,
        one release per respondent). ``False``: one call per run (e.g. the selection
        mechanisms, which release one index per call).

    Returns
    -------
    sampler : callable ``sampler(value, size, rng) -> ndarray``

    Notes
    -----
    **Privacy.** The sampler draws many releases of the same input, which together
    reveal it: use it on synthetic values only. It spends no budget.
    """
    return _MechanismSampler(make_mechanism, method, vectorised)


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

    Notes
    -----
    **Privacy.** The sampler fits clones with no accountant (an audit would
    otherwise exhaust any budget), in an empty context so that an active ``with
    accountant:`` block is not charged either: the fits it makes spend nothing and
    protect nothing. Use it on synthetic data.
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

    Notes
    -----
    **Privacy.** Fits the estimator twice, with a fixed seed and no accountant: for
    synthetic neighbours only. A cost that differs between the neighbours would
    itself leak information, and raises.
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

    Notes
    -----
    **Privacy.** As for :func:`audit`: the estimator is fitted thousands of times on
    the given neighbours, with no accountant charged. Use synthetic data.
    """
    sampler = estimator_sampler(estimator, projection, n_jobs=n_jobs)
    return audit(sampler, neighbours, event=declared_cost(estimator, neighbours), **audit_params)


class StatisticEstimator(BaseEstimator):
    """A :mod:`dpsk.stats` function as an estimator, so that the estimator audits apply to it.

    Build it with :func:`statistic_estimator`. ``fit(X)`` calls
    ``function(a, **params, random_state=..., return_error=True)`` on the first column of
    ``X`` (the records; all columns with ``axis=0`` when ``X`` has several) and stores
    ``value_`` (the release, raveled) and ``privacy_spent_`` (its declared cost).

    Parameters
    ----------
    function : callable
        A :mod:`dpsk.stats` function.
    bounds : tuple (lower, upper) or None, default=None
        The public bounds, passed as ``bounds_name``; also read by
        :func:`worst_case_neighbours` and :func:`offset_neighbours`.
    bounds_name : str or None, default="bounds"
        Keyword of ``function`` that takes the bounds (``"range"`` for histograms; None
        for :func:`dpsk.stats.count`).
    params : dict or None, default=None
        Other keyword arguments of ``function`` (``epsilon``, ``q``, ``bins``, ...).
    random_state : None, int, BitGenerator or Generator, default=None

    Attributes
    ----------
    value_ : ndarray
        The statistic released by the last fit (for a histogram: its counts).
    privacy_spent_ : PrivacyEvent
        The cost the function declares (``DPResult.privacy_spent``).

    Notes
    -----
    **Privacy.** Exactly that of ``function``: one call per fit, with no accountant
    unless ``params`` names one. An audit tool; it adds nothing to the statistic.
    """

    def __init__(self, function, *, bounds=None, bounds_name="bounds", params=None, random_state=None):
        self.function = function
        self.bounds = bounds
        self.bounds_name = bounds_name
        self.params = params
        self.random_state = random_state

    def fit(self, X, y=None, groups=None):
        """Run the statistic on the records of ``X`` (and the users ``groups``, if given).

        Returns
        -------
        self : object
        """
        # A Dask collection runs on Dask (dpsk.dask); a sparse matrix stays sparse (its records are its rows).
        X = X if is_dask(X) or sp.issparse(X) else np.asarray(X)
        a = X[:, 0] if X.ndim == 2 and X.shape[1] == 1 and not sp.issparse(X) else X
        kwargs = dict(self.params or {})
        if self.bounds is not None and self.bounds_name is not None:
            kwargs[self.bounds_name] = self.bounds
        if a.ndim == 2 and "axis" in inspect.signature(self.function).parameters:
            kwargs.setdefault("axis", 0)
        if groups is not None:
            kwargs["groups"] = groups
        out = self.function(a, **kwargs, random_state=self.random_state, return_error=True)
        result = out[0] if isinstance(out, tuple) else out  # histograms: (counts, edges)
        self.value_ = np.ravel(np.asarray(result.value, dtype=np.float64))
        self.privacy_spent_ = result.privacy_spent
        return self


def statistic_estimator(function, *, bounds=None, bounds_name="bounds", **params):
    """Wrap a :mod:`dpsk.stats` function as an estimator for the audits and the rounding probe.

    Parameters
    ----------
    function : callable
        E.g. :func:`dpsk.stats.var`.
    bounds : tuple (lower, upper), optional
        Public bounds of the values.
    bounds_name : str or None, default="bounds"
        The function's keyword for them (``"range"`` for :func:`dpsk.stats.histogram`).
    **params
        Other keyword arguments of ``function``, e.g. ``epsilon=1.0``.

    Returns
    -------
    estimator : StatisticEstimator
        Audit it with ``audit_estimator(estimator, neighbours, project_attribute("value_"))``.

    Notes
    -----
    **Privacy.** See :class:`StatisticEstimator`: an audit adapter, no release of its own.

    Examples
    --------
    >>> from dpsk import stats
    >>> from dpsk.audit import statistic_estimator
    >>> est = statistic_estimator(stats.mean, bounds=(0.0, 1.0), epsilon=1.0).fit([[0.5]] * 100)
    >>> est.value_.shape
    (1,)
    """
    return StatisticEstimator(function, bounds=bounds, bounds_name=bounds_name, params=params)
