# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Categorical naive Bayes with differential privacy: one noisy table of code counts.

The count-table machinery shared with MultinomialNB and BernoulliNB (smoothing, priors,
partial fits, the discrete Laplace release) is ``_BaseDiscreteNB`` in ``_discrete.py``.
"""

from numbers import Integral

import numpy as np

from dpsk.accounting._events import budget_event
from dpsk.dask._data import dask_fit, is_dask
from dpsk.naive_bayes._base import DISCRETE_NB_CONSTRAINTS, on_invalid_doc
from dpsk.naive_bayes._discrete import _DISCRETE_DOCS, _BaseDiscreteNB
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, is_data, require_given
from dpsk.utils._random import release_generator
from dpsk.utils._sklearn_compat import Interval, _fit_context, validate_data
from dpsk.utils.validation import _weight_units, warn_data_derived

__all__ = ["CategoricalNB"]

# Why it is not estimated privately when left out (issue 19; the error says so).
_NO_PRIVATE_N_CATEGORIES = "the number of categories of each feature is part of the public schema, as the classes"


def _valid_codes(X):
    """Which entries of X are category codes (finite integers >= 0)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(X) & (X >= 0) & (X == np.floor(X))


def _unknown_codes(X):
    """X with every entry that is not a category code (NaN, ±inf, negative, fractional)
    replaced by −1: a category of no feature, counted nowhere (as codes at or above
    ``n_categories``)."""
    return np.where(_valid_codes(X), X, -1.0).astype(X.dtype)


@Substitution(
    epsilon=_shared_docs["epsilon"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    on_invalid=on_invalid_doc(
        drop=", a negative or fractional code",
        clip="entries that are not category codes (NaN, ±inf, negative, fractional) count in no "
        "category of their feature, as codes at or above ``n_categories`` do",
    ),
    privacy_spent_=_shared_docs["privacy_spent_"],
    **_DISCRETE_DOCS,
)
class CategoricalNB(_BaseDiscreteNB):
    """Naive Bayes for categorical features with differential privacy.

    Each feature holds integer category codes ``0, 1, ..., n_categories_j - 1``.

    Parameters
    ----------
    {epsilon}

    n_categories : int, array-like of shape (n_features,), "data" or None, default=None
        The public number of categories of each feature (part of the schema, as
        ``classes``). Codes at or above it are ignored (the row counts for its class but
        for no category of that feature). Required: left out (None) or ``"private"``, the
        fit raises a ``ValueError`` before anything is spent. ``"data"`` derives it from
        the data (largest code + 1) with a :class:`~dpsk.exceptions.PrivacyLeakWarning`,
        stored in ``n_categories_``.

    {alpha}

    {force_alpha}

    {fit_prior}

    {class_prior}

    {classes}

    {accountant}

    {random_state}

    {on_invalid}

    Attributes
    ----------
    {common_attributes}
    category_count_ : list of ndarray of shape (n_classes, n_categories_[j])
        Noisy number of rows of each class with each category, per feature (clamped at 0).
    feature_log_prob_ : list of ndarray of shape (n_classes, n_categories_[j])
        Smoothed log-probability of each category given the class, per feature.
    n_categories_ : ndarray of shape (n_features,)
    {privacy_spent_}

    See Also
    --------
    sklearn.naive_bayes.CategoricalNB : the non-private estimator.

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row, for public ``n_categories`` and
    ``classes``. One row adds 1 to one cell of each feature's (class × category) table,
    so all d tables together have L1 sensitivity d and are released once with exact
    discrete Laplace noise of scale d/ε (no budget split). The class counts are not
    released separately: each table's row sums estimate them, and ``class_count_`` is
    their average over features (post-processing). Released: ``category_count_`` and
    what is computed from it. Floating-point safe (integer noise on integer counts).
    With ``sample_weight`` the counts are integers in units of 1/1024 (weights clipped to
    [0, 1], rounded down to that grid): one row adds at most 1024 units where it added
    1, and the noise scale is multiplied by 1024 in units — the same in counts.
    Domain: integer category codes >= 0 in X, labels in ``classes``, finite,
    non-negative ``sample_weight``. Data outside it raise a ``ValueError`` before any
    noise is drawn, which reveals only that the data left the domain, or with
    ``on_invalid`` are dropped or clipped inside the mechanism (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.naive_bayes import CategoricalNB
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 500)
    >>> X = np.column_stack([rng.integers(0, 2, 1000) + 2 * y, rng.integers(0, 4, 1000)])
    >>> clf = CategoricalNB(epsilon=1.0, n_categories=4, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.predict([[0, 1], [3, 1]])
    array([0, 1])
    """

    #: Where the class was defined before a refactor: seeded noise stays the same (``dpsk.utils._random``).
    _release_name = "dpsk.naive_bayes._discrete.CategoricalNB"

    _parameter_constraints = {
        **DISCRETE_NB_CONSTRAINTS,
        "n_categories": [Interval(Integral, 1, None, closed="left"), "array-like", PRIVATE_CONSTRAINT, None],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        n_categories=None,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        classes=None,
        accountant=None,
        random_state=None,
        on_invalid="raise",
    ):
        self.epsilon = epsilon
        self.n_categories = n_categories
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state
        self.on_invalid = on_invalid

    def _resolve_n_categories(self, X):
        n_features = X.shape[1]
        if is_data(require_given(self, "n_categories", _NO_PRIVATE_N_CATEGORIES)):  # never derived unasked
            warn_data_derived(self, "n_categories", "n_categories_")
            return (np.max(X, axis=0, initial=0).astype(np.int64) + 1) if X.size else np.ones(n_features, np.int64)
        n_categories = np.asarray(self.n_categories)
        if n_categories.ndim == 0:
            n_categories = np.full(n_features, n_categories)
        if n_categories.shape != (n_features,) or not np.issubdtype(n_categories.dtype, np.integer):
            raise ValueError(f"n_categories must be an int or integers of shape ({n_features},)")
        if np.any(n_categories < 1):
            raise ValueError("n_categories must be >= 1")
        return n_categories.astype(np.int64)

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight_grid"])
    def fit(self, X, y, sample_weight=None):
        """Fit the model on category codes X and labels y with differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Non-negative integer category codes.
        y : array-like of shape (n_samples,)
        {sample_weight}

        Returns
        -------
        self : object
        """
        return self._fit(X, y, sample_weight)

    def _fit_batch(self, X, y, sample_weight, classes):
        if is_dask(X, y, sample_weight):  # exact per-chunk count tables (dpsk.dask)
            self._check_privacy_budget(budget_event(self.epsilon))
            return dask_fit(self, X, y, sample_weight=sample_weight)
        X, y, classes, y_index, sample_weight, first = self._prepare(
            X, y, sample_weight, classes, row_valid=lambda X: np.all(_valid_codes(X), axis=1), clip=_unknown_codes
        )
        units, grid = _weight_units(sample_weight)
        codes = self._codes(X, unknown=self.on_invalid == "clip")
        n_classes, n_features = classes.size, X.shape[1]
        alpha = np.broadcast_to(self._check_alpha(n_features), (n_features,))
        # Fixed at the first call (public): later batches never derive their own.
        n_categories = self._resolve_n_categories(codes) if first else self.n_categories_
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight, *self._release_tag()))
        # Weighted counts are in units of 1/grid: one row adds at most grid units per table.
        mechanism = self._mechanism(n_features * grid, rng)
        self._spend_privacy_budget(mechanism.privacy_event(n_classes * int(n_categories.sum())))
        flat = self._count_tables(codes, y_index, n_classes, n_categories, units)
        return self._fit_tables(flat, mechanism, grid, classes, n_categories, alpha)

    def _count_tables(self, codes, y_index, n_classes, n_categories, units):
        """Exact (weighted) counts of (class, category) per feature, all tables flattened."""
        tables = []
        for column, size in zip(codes.T, n_categories):
            known = (column >= 0) & (column < size)  # codes outside the public domain count nowhere
            cells = y_index[known] * size + column[known]
            weights = None if units is None else units[known]
            tables.append(np.bincount(cells, weights=weights, minlength=n_classes * size).reshape(n_classes, size))
        return np.concatenate([t.ravel() for t in tables])

    def _fit_tables(self, flat, mechanism, grid, classes, n_categories, alpha):
        """The noisy count tables, added to the earlier ``partial_fit`` releases, and the fitted
        model (in memory and Dask)."""
        n_classes = classes.size
        (flat,), _ = self._accumulate([mechanism.randomise(flat).astype(np.float64) / grid])
        flat = np.maximum(flat, 0.0)
        counts = np.split(flat, np.cumsum(n_classes * n_categories)[:-1])

        self.classes_ = classes
        self.n_categories_ = n_categories
        self.category_count_ = [c.reshape(n_classes, size) for c, size in zip(counts, n_categories)]
        self.class_count_ = np.mean([c.sum(axis=1) for c in self.category_count_], axis=0)
        self._set_class_log_prior(self.class_count_, n_classes)
        self.feature_log_prob_ = [
            np.log(c + a) - np.log(c.sum(axis=1, keepdims=True) + a * c.shape[1])
            for c, a in zip(self.category_count_, alpha)
        ]
        return self

    def _codes(self, X, unknown=False):
        """Category codes as int64; raise (without showing values) unless they are integers >= 0
        (or, with ``unknown``, the code −1 of ``_unknown_codes``)."""
        if np.any(X < (-1 if unknown else 0)):
            raise ValueError("Negative values in data passed to CategoricalNB (input X)")
        if np.any(X != np.floor(X)):
            raise ValueError("X must hold integer category codes")
        return X.astype(np.int64)

    def _check_X(self, X):
        return self._codes(validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False))

    def _joint_log_likelihood(self, X):
        jll = np.tile(self.class_log_prior_, (X.shape[0], 1))
        for column, log_prob in zip(X.T, self.feature_log_prob_):
            known = column < log_prob.shape[1]  # unknown categories carry no evidence
            jll[known] += log_prob[:, column[known]].T
        return jll

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags
