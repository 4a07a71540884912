# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Feature scaling with differentially private statistics: StandardScaler and MinMaxScaler."""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from dpsk._core._accumulate import clipped_histogram
from dpsk.accounting import ComposedEvent
from dpsk.accounting._events import budget_event
from dpsk.base import BOUNDS_CONSTRAINT, DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.dask._data import dask_apply, dask_fit, is_dask
from dpsk.mechanisms import DiscreteLaplace
from dpsk.mechanisms._joint import Box, JointRelease
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._partial_fit import PARTIAL_FIT_NOTE, PartialFitMixin
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, PrivateSensitivity, private_box
from dpsk.utils._sklearn_compat import Interval, _fit_context, check_is_fitted, validate_data
from dpsk.utils._sparse import ACCEPT_SPARSE, refuse_sparse
from dpsk.utils.validation import _check_sample_weight_dp, _weight_units, release_generator

__all__ = ["MinMaxScaler", "StandardScaler"]

#: Budget shares of the count, Σz and Σ(z² − 1/2) (StandardScaler). The count is large next
#: to its noise; means and variances matter equally for scaling.
BUDGET_SHARES = (0.1, 0.45, 0.45)

_DOCS = dict(
    epsilon=_shared_docs["epsilon"],
    delta=_shared_docs["delta"],
    bounds=_shared_docs["bounds_private"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
)


def _weighted_histogram(X, lower, upper, bins, units):
    """``clipped_histogram`` with integer row weights ``units`` (None: every row counts 1).

    The rows of each weight are binned by the kernel (one home for the binning) and their
    counts multiplied by that weight: every row still adds to exactly one bin per feature,
    now ``units[i]`` instead of 1, and the counts stay exact integers.
    """
    if units is None:
        return clipped_histogram(X, lower, upper, bins)
    counts = np.zeros((X.shape[1], bins), dtype=np.int64)
    for unit in np.unique(units[units > 0]):
        counts += int(unit) * clipped_histogram(X[units == unit], lower, upper, bins)
    return counts


class _BaseScaler(PartialFitMixin, DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Validation and ``partial_fit`` shared by the scalers (``transform`` is the subclass's)."""

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(note=PARTIAL_FIT_NOTE)
    def partial_fit(self, X, y=None, sample_weight=None):
        """Update the statistics with one batch of rows: one private release.

        {note}

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        sample_weight : float, array-like of shape (n_samples,) or None, default=None
            As for :meth:`fit` (clipped to [0, 1]).

        Returns
        -------
        self : object
        """
        return self._fit_batch(X, sample_weight)

    def _batch_bounds(self, X, first):
        """``(plan, (lower, upper))`` of this release: resolved at the first call (planned, for
        ``"private"``: :func:`~dpsk.utils._private_bounds.private_box`), then fixed (public)."""
        if not first:
            return PrivateSensitivity(self, self.epsilon, {}), self.bounds_
        plan, self.bounds_ = private_box(self, X)
        return plan, self.bounds_

    #: ``accept_sparse`` of the validation (MinMaxScaler refuses sparse X as scikit-learn does).
    _accept_sparse: bool | tuple[str, ...] = False

    def _validate(self, X, reset):
        if not self._accept_sparse:
            refuse_sparse(
                X,
                type(self).__name__,
                "scaling to a range would turn the implicit zeros into non-zeros (scikit-learn refuses it "
                "too): use StandardScaler(with_mean=False) on sparse X, or densify it",
            )
        return validate_data(
            self, X, dtype=[np.float64, np.float32], order="C", reset=reset, accept_sparse=self._accept_sparse
        )


@Substitution(**_DOCS)
class StandardScaler(_BaseScaler):
    """Standardise features by removing a noisy mean and scaling to unit noisy variance.

    Parameters
    ----------
    {epsilon}

    {delta}

    {bounds}

    copy : bool, default=True
        If False, ``transform`` scales float arrays in place.

    with_mean : bool, default=True
        Centre the data before scaling.

    with_std : bool, default=True
        Scale the data to unit variance.

    {accountant}

    {random_state}

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        Noisy mean (None when ``with_mean=False`` and ``with_std=False``).
    var_ : ndarray of shape (n_features,) or None
        Noisy variance (None when ``with_std=False``).
    scale_ : ndarray of shape (n_features,) or None
        ``sqrt(var_)``, with zeros replaced by 1.
    n_samples_seen_ : float
        Noisy number of rows (0 when nothing is released).
    bounds_ : tuple of ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.
    {privacy_spent_}

    See Also
    --------
    sklearn.preprocessing.StandardScaler : the non-private scaler.
    dpsk.stats.mean, dpsk.stats.var : the same statistics as functions.

    Notes
    -----
    **Privacy.** ε-DP (``delta=0``) or (ε, δ)-DP under add/remove-one-row, for public
    ``bounds``. Rows are clipped to the bounds and standardised by their midpoint m and
    half-widths h, ``z = (clip(x) − m)/h`` in [−1, 1]; one pass over X gives the count,
    Σz and Σ(z² − 1/2), whose sensitivities are 1, d′ and d′/2 in L1 (1, √d′ and √d′/2 in
    L2; d′ the number of features with ``lower < upper``). They are released as one
    vector (``dpsk.mechanisms._joint.JointRelease``): Laplace noise with shares 0.1, 0.45 and
    0.45 of ε, or with ``delta > 0`` Gaussian noise with those shares of the zCDP
    budget. With ``with_std=False`` only the count and Σz are released (shares 0.1 :
    0.45); with neither centring nor scaling nothing is. Means (clipped into the
    bounds), variances (clipped into [0, h²] and floored at the noise of their
    estimate) and ``n_samples_seen_`` are post-processing. Released: ``mean_``,
    ``var_``, ``scale_``, ``n_samples_seen_``. Floating-point safe: the sums are exact
    fixed-point sums of the centred, clipped values (``dpsk._core._exact_sums``). With ``sample_weight``
    (clipped to [0, 1]) every sum is
    weighted: one row still changes the count by at most 1 and the sums by at most
    d′ and d′/2, so the noise and the cost are those of the unweighted fit.
    Domain: finite X, finite, non-negative ``sample_weight``. Data outside it raise a
    ``ValueError`` before any noise is drawn, which reveals only that the data left the
    domain (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.preprocessing import StandardScaler
    >>> X = np.random.default_rng(0).normal(3.0, 2.0, size=(10000, 2))
    >>> scaler = StandardScaler(epsilon=1.0, bounds=(-10, 15), random_state=0).fit(X)
    >>> np.round(scaler.mean_), np.round(scaler.scale_)
    (array([3., 3.]), array([2., 2.]))
    """

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        "bounds": [*BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "copy": ["boolean"],
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=0.0,
        bounds=None,
        copy=True,
        with_mean=True,
        with_std=True,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std
        self.accountant = accountant
        self.random_state = random_state

    _accept_sparse = ACCEPT_SPARSE

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self.with_mean  # as scikit-learn: centring refuses sparse X
        return tags

    def _n_statistics(self):
        """How many of (count, Σz, Σ(z² − 1/2)) are released: the variance needs all three."""
        return 3 if self.with_std else 2 if self.with_mean else 0

    def _release(self, box, rng, epsilon=None):
        k = self._n_statistics()
        epsilon = self.epsilon if epsilon is None else epsilon
        return JointRelease(
            box.sensitivities(k), BUDGET_SHARES[:k], epsilon=epsilon, delta=self.delta, random_state=rng
        )

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y=None, sample_weight=None):
        """Compute the noisy mean and variance of each feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        {sample_weight}

        Returns
        -------
        self : object
        """
        self._reset_partial_fit()
        return self._fit_batch(X, sample_weight)

    def _fit_batch(self, X, sample_weight):
        """One release on one batch, added to the earlier ones (``fit`` resets them first)."""
        self._check_privacy_budget(budget_event(self.epsilon, self.delta))
        if is_dask(X, sample_weight):  # the same release from per-chunk exact sums (dpsk.dask)
            return dask_fit(self, X, sample_weight=sample_weight)
        first = not self._partial_fit_started()
        X = self._validate(X, reset=first)
        self._check_sparse_centring(X)
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        plan, (lower, upper) = self._batch_bounds(X, first)
        n_features = X.shape[1]
        k = self._n_statistics()
        if k == 0:  # neither centring nor scaling: nothing about the data is needed
            if "bounds" in plan:  # nothing released, so no private bounds either
                self.bounds_ = (None, None)
            self._spend_privacy_budget(ComposedEvent(()))
            self.mean_ = self.var_ = self.scale_ = None
            self.n_samples_seen_ = 0.0
            return self
        rng = release_generator(self.random_state, context=self, data=(X, sample_weight, *self._release_tag()))
        box = Box(lower, upper)
        release = self._release(box, rng, epsilon=plan.fit_epsilon)
        sizes = (1, n_features, n_features)[:k]
        plan.spend(self, release.privacy_event(sizes), rng)
        if "bounds" in plan:  # the released box, and the release built on it
            self.bounds_ = plan.box("bounds", X, (lower, upper))
            box = Box(*self.bounds_)
            release = self._release(box, rng, epsilon=plan.fit_epsilon)
        return self._fit_sums(self._sums(X, box, sample_weight), box, release, sizes, X.dtype)

    def _fit_sums(self, moments, box, release, sizes, dtype):
        """The noisy release of the exact sums, added to the earlier ``partial_fit`` releases,
        and the fitted attributes (in memory and Dask)."""
        k = len(sizes)
        count, sum_z, sum_sq = box.standardised_sums(moments)
        released = release.randomise((count, sum_z[0], sum_sq[0])[:k])
        noise_var = [release.noise_std(2, sizes) ** 2] if self.with_std else []
        noisy, noise_var = self._accumulate(released, noise_var)
        n = max(float(noisy[0][0]), 1.0)
        mean_z = np.clip(noisy[1] / n, -1.0, 1.0)
        self.n_samples_seen_ = max(float(noisy[0][0]), 0.0)
        self.mean_ = box.to_original(mean_z).astype(dtype)
        if self.with_std:
            second = np.clip(noisy[2] / n + 0.5, 0.0, 1.0)
            # A variance below the noise of its estimate is noise (post-processing floor).
            floor = noise_var[0] ** 0.5 / n
            var_z = np.maximum(np.clip(second - mean_z**2, 0.0, 1.0), floor)
            self.var_ = (box.half_width**2 * var_z).astype(dtype)
            scale = np.sqrt(self.var_)
            self.scale_ = np.where(scale > 0, scale, 1.0).astype(dtype)
        else:
            self.var_ = self.scale_ = None
        return self

    def _sums(self, X, box, sample_weight=None):
        """Exact fixed-point sums of X clipped to ``box`` (a hook for the audit's broken variants)."""
        return box.exact_sums(X, sample_weight=sample_weight)

    def transform(self, X, copy=None):
        """Centre and scale X with the noisy statistics.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        copy : bool or None, default=None
            Copy X (default: the ``copy`` parameter).

        Returns
        -------
        X_tr : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk
            return dask_apply(self, "transform", X, n_outputs=self.n_features_in_)
        X = self._validate(X, reset=False)
        self._check_sparse_centring(X)
        copy = self.copy if copy is None else copy
        if sp.issparse(X):  # with_std only: scale the stored values, keep the sparsity
            X = X.tocsr(copy=copy)
            if self.with_std:
                X.data /= self.scale_[X.indices]
            return X
        X = X.copy() if copy else X
        if self.with_mean:
            X -= self.mean_
        if self.with_std:
            X /= self.scale_
        return X

    def _check_sparse_centring(self, X):
        """scikit-learn's refusal: centring would turn the implicit zeros into non-zeros."""
        if sp.issparse(X) and self.with_mean:
            raise ValueError(
                "Cannot center sparse matrices: pass `with_mean=False` instead. "
                "See docstring for motivation and alternatives."
            )

    def inverse_transform(self, X, copy=None):
        """Undo :meth:`transform`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        copy : bool or None, default=None

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        if sp.issparse(X):
            self._check_sparse_centring(X)
            X = sp.csr_matrix(X, dtype=self._dtype(), copy=bool(self.copy if copy is None else copy))
            if self.with_std:
                X.data *= self.scale_[X.indices]
            return X
        X = np.array(X, dtype=self._dtype(), copy=True if (self.copy if copy is None else copy) else None)
        if self.with_std:
            X *= self.scale_
        if self.with_mean:
            X += self.mean_
        return X

    def _dtype(self):
        return self.mean_.dtype if self.mean_ is not None else np.float64


@Substitution(**_DOCS)
class MinMaxScaler(_BaseScaler):
    """Scale each feature to a range, with a noisy minimum and maximum.

    The minimum and maximum of a feature are estimated from a noisy histogram of its
    clipped values: the lowest and highest bins whose noisy count stands out of the noise.

    Parameters
    ----------
    feature_range : tuple (min, max), default=(0, 1)
        The range of the transformed data.

    {epsilon}

    {bounds}

    bins : int, default=32
        Equal bins per feature between the bounds: the resolution of the noisy minimum
        and maximum. More bins give finer edges, but each bin then needs more rows to
        stand out of the noise, so more of the data falls outside the estimated range
        (with 20 features at ε = 1: about 3% of 10⁴ rows, 0.2% of 10⁵ rows at 32 bins;
        19% and 1.3% at 128).

    copy : bool, default=True
        If False, ``transform`` scales float arrays in place.

    clip : bool, default=False
        Clip transformed values to ``feature_range``.

    {accountant}

    {random_state}

    Attributes
    ----------
    data_min_ : ndarray of shape (n_features,)
        Noisy minimum: the lower edge of the first bin above the noise (the lower bound if
        none is).
    data_max_ : ndarray of shape (n_features,)
        Noisy maximum: the upper edge of the last bin above the noise.
    data_range_ : ndarray of shape (n_features,)
    min_ : ndarray of shape (n_features,)
    scale_ : ndarray of shape (n_features,)
    n_samples_seen_ : float
        Noisy number of rows (the average over features of the noisy histogram totals).
    histogram_ : ndarray of shape (n_features, bins)
        The released noisy counts of each bin (floats; may be negative).
    bounds_ : tuple of ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.
    {privacy_spent_}

    See Also
    --------
    sklearn.preprocessing.MinMaxScaler : the non-private scaler.

    Notes
    -----
    The noisy minimum is not the minimum: a few rows below the first bin that stands out
    of the noise are not seen (no private estimate can see a single row), so transformed
    training data may fall slightly outside ``feature_range``; use ``clip=True`` to
    avoid that.

    **Privacy.** ε-DP under add/remove-one-row, for public ``bounds``. Values are clipped
    to the bounds and counted in ``bins`` equal bins per feature (one kernel pass); a
    row adds 1 to one bin of each of the d features, so the d × ``bins`` counts have L1
    sensitivity d and are released once with exact discrete Laplace noise of scale d/ε.
    A bin "stands out" when its noisy count exceeds (d/ε)·ln(2·bins/0.05): an empty bin
    does so with probability below 0.05/2 per feature and side. Everything else is
    post-processing. Released: ``histogram_`` and what is computed from it
    (``data_min_``, ``data_max_``, ``n_samples_seen_``, ...). Floating-point safe
    (integer noise on integer counts). With ``sample_weight`` the counts are integers
    in units of 1/1024 (weights clipped to [0, 1], rounded down to that grid): one row
    adds at most 1024 units to one bin per feature, and the discrete Laplace noise
    has scale 1024·d/ε in units, the same d/ε in counts.
    Domain: finite X, finite, non-negative ``sample_weight``. Data outside it raise a
    ``ValueError`` before any noise is drawn, which reveals only that the data left the
    domain (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.preprocessing import MinMaxScaler
    >>> X = np.random.default_rng(0).uniform(2.0, 6.0, size=(10000, 2))
    >>> scaler = MinMaxScaler(epsilon=1.0, bounds=(0, 10), random_state=0).fit(X)
    >>> scaler.data_min_, scaler.data_max_
    (array([1.875, 1.875]), array([6.25, 6.25]))
    """

    _parameter_constraints = {
        **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
        "feature_range": [tuple],
        "bounds": [*BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "bins": [Interval(Integral, 1, None, closed="left")],
        "copy": ["boolean"],
        "clip": ["boolean"],
    }

    def __init__(
        self,
        feature_range=(0, 1),
        *,
        epsilon=1.0,
        bounds=None,
        bins=32,
        copy=True,
        clip=False,
        accountant=None,
        random_state=None,
    ):
        self.feature_range = feature_range
        self.epsilon = epsilon
        self.bounds = bounds
        self.bins = bins
        self.copy = copy
        self.clip = clip
        self.accountant = accountant
        self.random_state = random_state

    def _mechanism(self, n_features, rng, epsilon=None):
        epsilon = self.epsilon if epsilon is None else epsilon
        return DiscreteLaplace(epsilon=epsilon, sensitivity=n_features, random_state=rng)

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight_grid"])
    def fit(self, X, y=None, sample_weight=None):
        """Compute the noisy minimum and maximum of each feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        {sample_weight}

        Returns
        -------
        self : object
        """
        self._reset_partial_fit()
        return self._fit_batch(X, sample_weight)

    def _fit_batch(self, X, sample_weight):
        """One release on one batch, added to the earlier ones (``fit`` resets them first)."""
        low, high = self.feature_range
        if not low < high:
            raise ValueError(f"feature_range must be (min, max) with min < max, got {self.feature_range}")
        self._check_privacy_budget(budget_event(self.epsilon))
        if is_dask(X, sample_weight):
            return dask_fit(self, X, sample_weight=sample_weight)
        first = not self._partial_fit_started()
        if not first and self.bins != self.histogram_.shape[1]:
            raise ValueError("bins must not change between calls to partial_fit")
        X = self._validate(X, reset=first)
        units, grid = _weight_units(_check_sample_weight_dp(sample_weight, X))
        plan, (lower, upper) = self._batch_bounds(X, first)
        n_features = X.shape[1]
        rng = release_generator(self.random_state, context=self, data=(X, sample_weight, *self._release_tag()))
        # Weighted counts are in units of 1/grid: one row adds at most grid units per feature.
        mechanism = self._mechanism(n_features * grid, rng, epsilon=plan.fit_epsilon)
        plan.spend(self, mechanism.privacy_event(n_features * self.bins), rng)
        if "bounds" in plan:
            lower, upper = self.bounds_ = plan.box("bounds", X, (lower, upper))
        counts = _weighted_histogram(X, lower, upper, self.bins, units)
        return self._fit_counts(counts, mechanism, grid, lower, upper, X.dtype, plan.fit_epsilon)

    def _fit_counts(self, exact_counts, mechanism, grid, lower, upper, dtype, epsilon=None):
        """The noisy histogram, added to the earlier ``partial_fit`` releases, and the fitted
        attributes (in memory and Dask). ``epsilon``: the histogram's (the fit's, less a
        private bounds' share)."""
        epsilon = self.epsilon if epsilon is None else epsilon
        low, high = self.feature_range
        n_features = exact_counts.shape[0]
        released = mechanism.randomise(exact_counts) / grid
        # After k calls the threshold is the sum of the k thresholds: an empty bin exceeds it
        # only if one call's noise exceeds its own (probability below k·0.05/2 per side).
        (counts,), (threshold,) = self._accumulate([released], [n_features / epsilon * np.log(2.0 * self.bins / 0.05)])
        self.histogram_ = counts
        above = counts > threshold
        first = np.where(above.any(axis=1), np.argmax(above, axis=1), 0)
        last = np.where(above.any(axis=1), self.bins - 1 - np.argmax(above[:, ::-1], axis=1), self.bins - 1)
        width = (upper - lower) / self.bins
        self.data_min_ = (lower + width * first).astype(dtype)
        self.data_max_ = np.minimum(lower + width * (last + 1), upper).astype(dtype)
        self.data_range_ = self.data_max_ - self.data_min_
        self.n_samples_seen_ = max(float(counts.sum(axis=1).mean()), 0.0)
        range_ = np.where(self.data_range_ > 0, self.data_range_, 1.0)
        self.scale_ = ((high - low) / range_).astype(dtype)
        self.min_ = (low - self.data_min_ * self.scale_).astype(dtype)
        return self

    def transform(self, X):
        """Scale X to ``feature_range`` with the noisy minimum and maximum.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_tr : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk
            return dask_apply(self, "transform", X, n_outputs=self.n_features_in_)
        X = self._validate(X, reset=False)
        X = X.copy() if self.copy else X
        X *= self.scale_
        X += self.min_
        if self.clip:
            np.clip(X, self.feature_range[0], self.feature_range[1], out=X)
        return X

    def inverse_transform(self, X):
        """Undo :meth:`transform`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = np.array(X, dtype=self.scale_.dtype, copy=True if self.copy else None)
        X -= self.min_
        X /= self.scale_
        return X
