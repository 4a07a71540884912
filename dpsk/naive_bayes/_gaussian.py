# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private Gaussian naive Bayes (noisy class moments, Vaidya et al. 2013)."""

from numbers import Real

import numpy as np

from dpsk.accounting._events import budget_event
from dpsk.base import BOUNDS_CONSTRAINT, DP_PARAMETER_CONSTRAINTS, priors_from_counts
from dpsk.dask._data import dask_fit, is_dask
from dpsk.mechanisms._joint import Box, JointRelease
from dpsk.naive_bayes._base import NB_CONSTRAINTS, BaseDPNB, check_priors, on_invalid_doc
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._partial_fit import PARTIAL_FIT_NOTE, PartialFitMixin, partial_fit_classes
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, PrivateSensitivity, is_data, private_box
from dpsk.utils._sklearn_compat import Interval, _fit_context, validate_data
from dpsk.utils.validation import release_generator, resolve_classes

__all__ = ["GaussianNB"]

#: Budget shares of the three statistics: class counts, sums, sums of squares. Means
#: matter most for the decision rule; counts least (they are large next to their noise);
#: variances are shrunk towards their pooled value when noisy (see ``_moments``).
BUDGET_SHARES = (0.05, 0.8, 0.15)


@Substitution(
    epsilon=_shared_docs["epsilon"],
    delta=_shared_docs["delta"],
    bounds=_shared_docs["bounds_private"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    on_invalid=on_invalid_doc(
        drop="",
        clip='±inf values are clipped to ``bounds`` (public, or estimated privately; not ``"data"``) and rows '
        "holding NaN removed",
    ),
    privacy_spent_=_shared_docs["privacy_spent_"],
)
class GaussianNB(PartialFitMixin, BaseDPNB):
    """Gaussian naive Bayes with differential privacy.

    Class counts, per-class means and per-class variances are computed from noisy sums
    of the clipped data, made in one pass over X (Vaidya, Shafiq, Basu & Hong 2013).

    Parameters
    ----------
    {epsilon}

    {delta}

    {bounds}

    priors : array-like of shape (n_classes,) or None, default=None
        Prior probabilities of the classes (public). ``None`` estimates them from the
        noisy class counts.

    var_smoothing : float, default=1e-9
        Added to every variance, as a fraction of the largest squared half-width of the
        bounds (scikit-learn uses the largest variance of the data, which is private).

    {classes}

    {accountant}

    {random_state}

    {on_invalid}

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
        Noisy number of training rows per class (clamped at 0).
    class_prior_ : ndarray of shape (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    epsilon_ : float
        The absolute value added to the variances.
    theta_ : ndarray of shape (n_classes, n_features)
        Noisy mean of each feature per class (inside the bounds).
    var_ : ndarray of shape (n_classes, n_features)
        Noisy variance of each feature per class.
    bounds_ : tuple of ndarray
        The bounds used (given, or derived from the data with a warning).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.
    {privacy_spent_}

    See Also
    --------
    sklearn.naive_bayes.GaussianNB : the non-private estimator.

    Notes
    -----
    **Privacy.** ε-DP (``delta=0``) or (ε, δ)-DP under add/remove-one-row, for public
    ``bounds`` and ``classes``. Each row is clipped to the bounds and standardised by
    their midpoint ``m`` and half-width ``h``: ``z = (clip(x) − m)/h`` lies in [−1, 1].
    One pass over X gives, per class, the count, Σz and Σ(z² − 1/2); a row belongs to one
    class, so one row changes these arrays (over all classes) by at most:

    ========================  ===============  ===============  ============
    statistic                 L1 sensitivity   L2 sensitivity   budget share
    ========================  ===============  ===============  ============
    class counts              1                1                0.05
    per-class Σ z             d′               √d′              0.80
    per-class Σ (z² − 1/2)    d′/2             √d′/2            0.15
    ========================  ===============  ===============  ============

    where d′ is the number of features with ``lower < upper`` (the others are constant
    after clipping). The three arrays are released as one vector
    (``dpsk.mechanisms._joint.JointRelease``) with lattice Laplace noise (shares of ε) or,
    with ``delta > 0``, lattice Gaussian noise (shares of the zCDP budget ρ).
    Means, variances and priors are post-processing: counts are clamped at 1, means and
    second moments into their ranges; variances are floored at the noise of their
    estimate, shrunk towards the pooled variance when noisy, and widened by the noise
    of the means. Released: ``theta_``, ``var_``, ``class_count_``, ``class_prior_``.
    With ``sample_weight`` (clipped to [0, 1]) every count and sum is weighted: one
    row still changes them by at most the sensitivities above.
    Floating-point safe: the per-class sums are exact fixed-point sums of the centred,
    clipped values, for up to 2**36 rows (see ``dpsk._core._exact_sums``).
    Domain: finite X, labels in ``classes``, finite, non-negative ``sample_weight``.
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain, or with ``on_invalid`` are dropped or clipped inside
    the mechanism (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.naive_bayes import GaussianNB
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-1, 1, (500, 2)), rng.normal(1, 1, (500, 2))])
    >>> y = np.repeat([0, 1], 500)
    >>> clf = GaussianNB(epsilon=1.0, bounds=(-4, 4), classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.predict([[-1.0, -1.0], [1.0, 1.0]])
    array([0, 1])
    """

    _parameter_constraints = {
        **NB_CONSTRAINTS,
        "delta": DP_PARAMETER_CONSTRAINTS["delta"],
        "bounds": [*BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=0.0,
        bounds=None,
        priors=None,
        var_smoothing=1e-9,
        classes=None,
        accountant=None,
        random_state=None,
        on_invalid="raise",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state
        self.on_invalid = on_invalid

    def _release(self, box, rng, epsilon=None):
        """The joint release of the fit: class counts, Σz and Σ(z² − 1/2) of every class."""
        epsilon = self.epsilon if epsilon is None else epsilon
        return JointRelease(box.sensitivities(), BUDGET_SHARES, epsilon=epsilon, delta=self.delta, random_state=rng)

    def _class_sums(self, X, y_index, n_classes, box, sample_weight=None):
        """Exact per-class fixed-point sums of the rows clipped to the box (one pass, weighted)."""
        return box.exact_sums(X, y_index, n_classes, sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, sample_weight=None):
        """Fit the model on X, y with differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        {sample_weight}

        Returns
        -------
        self : object
        """
        self._reset_partial_fit()
        return self._fit_batch(X, y, sample_weight, self.classes)

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"], note=PARTIAL_FIT_NOTE)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Update the model with one batch of rows: one private release.

        {note}

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,) or None, default=None
            All the class labels (public). Required on the first call unless the
            ``classes`` parameter is set; ignored (checked) afterwards.
        {sample_weight}

        Returns
        -------
        self : object
        """
        return self._fit_batch(X, y, sample_weight, partial_fit_classes(self, classes))

    def _fit_batch(self, X, y, sample_weight, classes):
        """One release on one batch, added to the earlier ones (``fit`` resets them first)."""
        self._check_privacy_budget(budget_event(self.epsilon, self.delta))
        if is_dask(X, y, sample_weight):  # the same release from per-chunk exact sums (dpsk.dask)
            return dask_fit(self, X, y, sample_weight=sample_weight)
        first = not self._partial_fit_started()
        if first and self.on_invalid == "clip" and is_data(self.bounds):  # left out: private, clipped to those
            raise ValueError('on_invalid="clip" clips to the public `bounds`: pass `bounds`, or use "drop"')
        X, y, sample_weight = self._validate_training_data(X, y, sample_weight, reset=first, classes=classes)
        # Fixed at the first call (public): later batches never derive their own bounds.
        if first:
            plan, (lower, upper) = private_box(self, X)
        else:
            plan, (lower, upper) = PrivateSensitivity(self, self.epsilon, {}), self.bounds_
        classes, y_index = resolve_classes(self, classes, y)
        n_classes, n_features = classes.size, X.shape[1]
        priors = None if self.priors is None else check_priors(self.priors, n_classes, "priors")
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight, *self._release_tag()))
        box = Box(lower, upper)
        release = self._release(box, rng, epsilon=plan.fit_epsilon)
        sizes = (n_classes, n_classes * n_features, n_classes * n_features)
        plan.spend(self, release.privacy_event(sizes), rng)
        if "bounds" in plan:  # the released box, and the release built on it
            box = Box(*plan.box("bounds", X, (lower, upper)))
            release = self._release(box, rng, epsilon=plan.fit_epsilon)
        moments = self._class_sums(X, y_index, n_classes, box, sample_weight)
        return self._fit_sums(moments, box, release, sizes, classes, priors, X.dtype)

    def _fit_sums(self, moments, box, release, sizes, classes, priors, dtype):
        """The noisy release of the exact class sums, added to the earlier ``partial_fit``
        releases, and the fitted model (in memory and Dask)."""
        noisy = release.randomise(box.standardised_sums(moments))
        variances = [release.noise_std(i, sizes) ** 2 for i in (1, 2)]
        (counts, sum_z, sum_sq), (var_sum, var_sq) = self._accumulate(noisy, variances)
        self.theta_, self.var_ = self._moments(box, counts, sum_z, sum_sq, var_sum**0.5, var_sq**0.5, dtype)
        self.classes_ = classes
        self.bounds_ = (box.lower, box.upper)
        self.class_count_ = np.maximum(counts, 0.0)
        self.class_prior_ = priors if priors is not None else priors_from_counts(counts)
        return self

    def _moments(self, box, counts, sum_z, sum_sq, std_sum, std_sq, dtype):
        """Means and variances from the noisy releases (post-processing only)."""
        n = np.maximum(counts, 1.0)[:, None]
        total = n.sum()
        mean_z = np.clip(sum_z / n, -1.0, 1.0)
        # std_sum, std_sq: noise standard deviation of each entry of Σz and Σ(z² − 1/2).
        var_z = np.clip(np.clip(sum_sq / n + 0.5, 0.0, 1.0) - mean_z**2, 0.0, 1.0)
        pooled = np.clip(np.sum(sum_sq, axis=0) / total + 0.5, 0.0, 1.0) - np.sum(n * mean_z**2, axis=0) / total
        pooled = np.maximum(pooled, std_sq / total)
        # A variance below the noise of its estimate is noise: floor it there, then
        # shrink each class's variance towards the pooled one, the more so the noisier
        # it is (empirical Bayes with a prior spread of half the pooled variance).
        tau = std_sq / n
        var_z = np.maximum(var_z, tau)
        prior = (pooled / 2.0) ** 2
        weight = np.divide(prior, prior + tau**2, out=np.ones_like(var_z), where=(prior + tau**2) > 0)
        var_z = weight * var_z + (1.0 - weight) * pooled
        # A row of class k is N(θ̂_k + noise, σ²): the noise of θ̂ adds to the variance.
        # The same term for every class (computed for equal class sizes), so that the
        # noise does not tilt the log-determinants towards the larger class.
        var_z = var_z + (std_sum * n.size / total) ** 2
        self.epsilon_ = float(self.var_smoothing * max(np.max(box.half_width**2, initial=0.0), 1e-300))
        theta = box.to_original(mean_z).astype(dtype)
        var = (box.half_width**2 * var_z + self.epsilon_).astype(dtype)
        return theta, var

    def _check_X(self, X):
        return validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)

    def _joint_log_likelihood(self, X):
        log_prior = np.log(np.maximum(self.class_prior_, np.finfo(np.float64).tiny))
        log_norm = -0.5 * np.sum(np.log(2.0 * np.pi * self.var_), axis=1)
        # One class at a time: no (n_samples, n_classes, n_features) temporary.
        quad = np.column_stack([np.sum((X - theta) ** 2 / var, axis=1) for theta, var in zip(self.theta_, self.var_)])
        return log_prior + log_norm - 0.5 * quad
