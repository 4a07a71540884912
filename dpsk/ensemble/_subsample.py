# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Subsample-and-aggregate for any linear regressor: a private aggregate of its coefficients on disjoint parts."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, RegressorMixin

from dpsk.accounting._events import budget_event
from dpsk.base import DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.ensemble._parts import fit_parts, seed_estimators
from dpsk.stats._subsample import SubsampleQuery, part_outputs
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, is_data, require_given
from dpsk.utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils._units import random_parts
from dpsk.utils.validation import release_generator, resolve_bounds

__all__ = ["SubsampleAggregate"]


def _coefficients(fitted):
    """A linear regressor's (coef_, intercept_) as one vector."""
    return np.concatenate([np.ravel(fitted.coef_), np.ravel(getattr(fitted, "intercept_", 0.0))])


@Substitution(
    epsilon=_shared_docs["epsilon"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
)
class SubsampleAggregate(DPEstimatorMixin, MetaEstimatorMixin, RegressorMixin, BaseEstimator):
    """Any linear regressor, made private: a private aggregate of its fits on disjoint parts.

    Sample-and-aggregate (Nissim, Raskhodnikova & Smith 2007): the rows are split at
    random into ``n_parts`` disjoint parts, a clone of ``estimator`` (any scikit-learn
    regressor with ``coef_`` and ``intercept_``, not private: ``HuberRegressor``,
    ``QuantileRegressor``, ``TheilSenRegressor``...) is fitted on each, and the
    coefficient vectors ``(coef_, intercept_)`` of the parts, clipped to the public box
    ``bounds``, are aggregated privately. The result is DP whatever the estimator does:
    no sensitivity analysis of the estimator is needed, only a box for its output.

    Parameters
    ----------
    estimator : regressor
        Fitted on each part (cloned; clones with ``random_state=None`` are seeded from
        ``random_state``). The parts' models are discarded after ``fit``.

    n_parts : int, default=100
        Number of parts. The noise on the mean shrinks as 1/n_parts, while each part
        has n_samples/n_parts rows: choose it so that a part still has several times
        more rows than coefficients.

    bounds : tuple (lower, upper), "data" or None, default=None
        Public box of the vector ``(coef_..., intercept_)``: scalars or arrays of shape
        (n_features + 1,). Parts' coefficients outside are clipped (``"mean"``).
        Required: left out (None) or ``"private"``, the fit raises a ``ValueError``
        before anything is spent (no private estimate: one row moves one part's whole output, a
        replacement that the private bounds, made for one added or removed row, do not
        cover). ``"data"``: the parts' extreme values, with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (this breaks the guarantee).

    aggregate : {{"mean", "median"}}, default="mean"
        The winsorised mean (one Laplace or Gaussian release of the whole vector) or the
        median of each coefficient (exact exponential mechanism, ε split over the
        coefficients). See :func:`dpsk.stats.subsample_aggregate`.

    {epsilon}

    delta : float, default=0.0
        > 0 with ``"mean"``: Gaussian noise, whose cost grows as √(n_features) rather
        than n_features.

    bins : int or None, default=None
        The median's grid (see :func:`dpsk.stats.quantile`).

    n_jobs : int or None, default=None
        joblib workers fitting the parts.

    {accountant}

    {random_state}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    bounds_ : tuple of ndarray
        The box used (given, or derived from the parts with a warning).
    n_features_in_ : int
    {privacy_spent_}

    See Also
    --------
    dpsk.stats.subsample_aggregate : the same for any statistic.
    PATEClassifier : any classifier, made private with public unlabelled data.

    Notes
    -----
    **Privacy.** ε-DP (``delta=0`` or ``"median"``) or (ε, δ)-DP under add/remove-one-row,
    for a public ``bounds``. Each row draws its part independently and uniformly, so it
    changes one part's coefficients only: one of the ``n_parts`` vectors of the box is
    replaced, whatever ``estimator`` computes. The winsorised mean moves by at most
    the box's width / n_parts per coefficient and is released with lattice noise on
    exact sums (floating-point safe); the medians by the exact quantile mechanism.
    Parts that are empty or whose fit fails contribute the box's centre; their warnings
    and errors are silenced. Released: ``coef_`` and ``intercept_``.
    Domain: finite X and y (rows a part's estimator cannot fit make that part fail,
    inside the mechanism).
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import HuberRegressor
    >>> from dpsk.ensemble import SubsampleAggregate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 2))
    >>> y = X @ [1.0, -2.0] + 0.1 * rng.normal(size=20000)
    >>> reg = SubsampleAggregate(HuberRegressor(), bounds=(-5, 5), epsilon=50.0, random_state=0).fit(X, y)
    >>> reg.coef_.round(1)
    array([ 1., -2.])
    """

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        "estimator": [HasMethods(["fit", "predict"])],
        "n_parts": [Interval(Integral, 1, None, closed="left")],
        "bounds": [tuple, PRIVATE_CONSTRAINT, None],
        "aggregate": [StrOptions({"mean", "median"})],
        "bins": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        estimator,
        *,
        n_parts=100,
        bounds=None,
        aggregate="mean",
        epsilon=1.0,
        delta=0.0,
        bins=None,
        n_jobs=None,
        accountant=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_parts = n_parts
        self.bounds = bounds
        self.aggregate = aggregate
        self.epsilon = epsilon
        self.delta = delta
        self.bins = bins
        self.n_jobs = n_jobs
        self.accountant = accountant
        self.random_state = random_state

    def _query(self, n_outputs, rng):
        return SubsampleQuery(
            self.n_parts,
            n_outputs,
            aggregate=self.aggregate,
            epsilon=self.epsilon,
            delta=self.delta,
            bins=self.bins,
            rng=rng,
        )

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the estimator on each part and release the private aggregate of the coefficients.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        # The budget first (nothing read); the release's detailed cost never exceeds it.
        self._check_privacy_budget(budget_event(self.epsilon, self.delta))
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], y_numeric=True)
        n_features = X.shape[1]
        rng = release_generator(self.random_state, context=self, data=(X, y))
        query = self._query(n_features + 1, rng)
        if not is_data(require_given(self, "bounds", "one row moves one part's output as a whole")):
            lower, upper = resolve_bounds(self, self.bounds, np.zeros((0, n_features + 1)))
        self._spend_privacy_budget(query.event)

        estimators = seed_estimators(self.estimator, int(self.n_parts), rng)
        parts = random_parts(rng, int(self.n_parts), X.shape[0], None).astype(np.intp)
        results = fit_parts(estimators, X, y, parts, _coefficients, self.n_jobs)
        outputs = part_outputs(results, n_features + 1)
        if is_data(self.bounds):
            usable = outputs[np.all(np.isfinite(outputs), axis=1)]
            lower, upper = resolve_bounds(self, "data", usable if usable.size else np.zeros((1, n_features + 1)))
        values = query.release(outputs, lower, upper)
        self.coef_ = values[:-1].astype(X.dtype)
        self.intercept_ = float(values[-1])
        self.bounds_ = (lower, upper)
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return X @ self.coef_ + self.intercept_
