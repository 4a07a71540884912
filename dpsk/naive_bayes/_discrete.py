# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Naive Bayes on counts with differential privacy: multinomial and Bernoulli.

CategoricalNB, on the same base, is in ``_categorical.py``.

Each model is a table of counts (rows of a class, and per-class feature counts). One row
of the data adds to one class and, per feature, to at most one cell (or a bounded amount),
so the whole table is released at once with one noisy vector whose L1 sensitivity is one
row's total contribution; probabilities are post-processing of the noisy counts (which are
clamped at 0 and smoothed with ``alpha``). Every table is a vector of exact integers
under exact discrete Laplace noise: counts (in units of 1/1024 with weights), and
MultinomialNB's sums of clipped real values on a public fixed-point grid
(:func:`_exact_class_table`), so what one row changes in the *computed* table is
exactly its own bounded contribution, whatever the other rows and their order.
"""

import math
import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp

from dpsk._core._sparse import multinomial_table
from dpsk.accounting._events import budget_event
from dpsk.base import priors_from_counts
from dpsk.dask._data import dask_fit, is_dask
from dpsk.mechanisms import DiscreteLaplace
from dpsk.naive_bayes._base import DISCRETE_NB_CONSTRAINTS, BaseDPNB, check_priors, on_invalid_doc
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._partial_fit import PARTIAL_FIT_NOTE, PartialFitMixin, partial_fit_classes
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, PrivateSensitivity, is_data, wants_private
from dpsk.utils._sklearn_compat import Interval, _fit_context, validate_data
from dpsk.utils._sparse import ACCEPT_SPARSE, map_values, row_sums_max, rows_all
from dpsk.utils._threads import single_blas_thread
from dpsk.utils.validation import (
    _weight_units,
    check_data_norm,
    release_generator,
    resolve_classes,
    warn_data_derived,
)

__all__ = ["BernoulliNB", "MultinomialNB"]


_ALPHA_MIN = 1e-10
#: MultinomialNB's grid: 2**-k with data_norm·2**k in [2**19, 2**20) (step = data_norm·2**-20 at
#: most), k clamped to [0, 21]: a value is at most 2**k·max(1, data_norm) < 2**21 units for
#: data_norm < 2**20, so 2**31 rows with weight units (<= 2**10) sum below 2**62.
_GRID_BITS = 20
_MAX_GRID_EXPONENT = 21
#: The largest integer sum of one table cell (int64, room left for the noise).
_MAX_CELL_UNITS = 2**62

_DISCRETE_DOCS = {
    "alpha": """alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing of the noisy counts (0 for none).""",
    "force_alpha": """force_alpha : bool, default=True
        If False and alpha is below 1e-10, alpha is set to 1e-10.""",
    "fit_prior": """fit_prior : bool, default=True
        Whether to learn the class priors from the noisy class counts; if False, uniform
        priors are used.""",
    "class_prior": """class_prior : array-like of shape (n_classes,) or None, default=None
        Public prior probabilities of the classes; overrides ``fit_prior``.""",
    "common_attributes": """class_count_ : ndarray of shape (n_classes,)
        Noisy number of training rows per class (clamped at 0).
    class_log_prior_ : ndarray of shape (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.""",
}


class _BaseDiscreteNB(PartialFitMixin, BaseDPNB):
    """Smoothing and priors shared by the count-based models (as in scikit-learn)."""

    def _mechanism(self, sensitivity, rng):
        """The noise of the count table (integer counts: exact discrete Laplace)."""
        return DiscreteLaplace(epsilon=self.epsilon, sensitivity=sensitivity, random_state=rng)

    def _check_alpha(self, n_features):
        alpha = np.asarray(self.alpha, dtype=np.float64)
        if alpha.ndim == 1 and alpha.shape[0] != n_features:
            raise ValueError(f"alpha must be a scalar or have shape ({n_features},), got {alpha.shape}")
        if np.any(alpha < 0):
            raise ValueError("alpha must be non-negative")
        if np.min(alpha) < _ALPHA_MIN and not self.force_alpha:
            warnings.warn(
                f"alpha too small will result in numeric errors, setting alpha = {_ALPHA_MIN:.1e}", stacklevel=3
            )
            alpha = np.maximum(alpha, _ALPHA_MIN)
        return alpha

    def _set_class_log_prior(self, counts, n_classes):
        if self.class_prior is not None:
            prior = check_priors(self.class_prior, n_classes, "class_prior")
            with np.errstate(divide="ignore"):
                self.class_log_prior_ = np.log(prior)
        elif self.fit_prior:
            self.class_log_prior_ = np.log(priors_from_counts(counts))
        else:
            self.class_log_prior_ = np.full(n_classes, -np.log(n_classes))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags

    def _prepare(self, X, y, sample_weight, classes, **screen):
        """Budget check, validation (with ``on_invalid``), weights and classes (the part of
        a release before any noise); ``screen`` as for ``_validate_training_data``.
        Returns whether this is the first release since ``fit`` (or ever) too."""
        self._check_privacy_budget(budget_event(self.epsilon))
        first = not self._partial_fit_started()
        X, y, sample_weight = self._validate_training_data(X, y, sample_weight, reset=first, classes=classes, **screen)
        classes, y_index = resolve_classes(self, classes, y)
        return X, y, classes, y_index, sample_weight, first

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(note=PARTIAL_FIT_NOTE)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Update the model with one batch of rows: one private release.

        {note}

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            As for :meth:`fit`.
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,) or None, default=None
            All the class labels (public). Required on the first call unless the
            ``classes`` parameter is set; ignored (checked) afterwards.
        sample_weight : float, array-like of shape (n_samples,) or None, default=None
            As for :meth:`fit` (clipped to [0, 1]).

        Returns
        -------
        self : object
        """
        return self._fit_batch(X, y, sample_weight, partial_fit_classes(self, classes))

    def _fit(self, X, y, sample_weight):
        """``fit``: forget earlier releases, then one release on all rows."""
        self._reset_partial_fit()
        return self._fit_batch(X, y, sample_weight, self.classes)


def _class_indicator(y_index, n_classes, dtype, weights=None):
    """One-hot matrix of the classes, shape (n_samples, n_classes), each row times its weight."""
    indicator = np.zeros((y_index.size, n_classes), dtype=dtype)
    indicator[np.arange(y_index.size), y_index] = 1 if weights is None else weights
    return indicator


def _multinomial_grid(data_norm):
    """MultinomialNB's public grid for ``data_norm`` R: ``(k, top)``, values in units of 2**-k
    and ``top = floor(R·2**k)`` the most units one clipped row adds to the feature sums.

    ``k = clamp(20 − e, 0, 21)`` for R = f·2**e, f in [0.5, 1): a step of about R·2**-20
    (2**-21 at least, 1 at most, so that a count of 1 is 2**k units, an integer).
    ``top < 2**31`` keeps the integer clipping (``q·top``) inside int64: a larger R is
    refused (a public parameter: no release).
    """
    k = min(max(_GRID_BITS - int(np.frexp(data_norm)[1]), 0), _MAX_GRID_EXPONENT)
    top = int(np.floor(data_norm * 2.0**k))  # exact: a power-of-two scaling, then floor
    if top >= 2**31:
        raise ValueError(f"data_norm must be below 2**31 for MultinomialNB's exact sums, got {data_norm}")
    return k, top


#: The ladder of private ``data_norm`` values: R = 2**j − 1 for j = 1 … 20. Their grids
#: (_multinomial_grid: k = 20 − j, top = 2**20 − 2**k) all give one row the same integer
#: sensitivity 2**k + top = 2**20, so the noise's event does not depend on the released R.
_LADDER_BITS = 20
_LADDER_TOP = 2.0**_LADDER_BITS - 1.0


def _private_data_norm(plan, X):
    """The released L1 bound, on the ladder: the rows' L1 norms' private upper quantile
    (``plan``'s ``"data_norm"`` release, after its spend) rounded down to 2**j − 1, j in
    [1, 20] (post-processing). Down: a clipped row keeps its proportions (it is only
    scaled), so a lower bound costs little while the noise grows with R (on synthetic
    documents at ε = 0.1, R = 31 scored 0.76, 63 scored 0.70; see bench_bounds.py)."""
    with np.errstate(over="ignore"):  # no value-dependent warning: an inf norm is capped by the release
        norms = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()  # non-negative rows: their L1 norms
    released = float(np.log2(1.0 + plan.release("data_norm", norms)))
    # ε = ∞ (the data's largest norm): rounded up, nothing is clipped below it.
    j = min(max(math.ceil(released) if plan.non_private else math.floor(released), 1), _LADDER_BITS)
    return 2.0**j - 1.0


def _check_exact_rows(n_rows, k, top, grid):
    """Refuse more rows than the int64 table can sum exactly (public: the shape and parameters).

    One row adds at most ``max(2**k, top)·grid`` units to one cell; for ``data_norm``
    below 2**20 the limit is above 2**31 rows."""
    limit = _MAX_CELL_UNITS // (max(2**k, top) * grid)
    if n_rows > limit:
        raise ValueError(f"MultinomialNB sums at most {limit} rows exactly for this data_norm; got {n_rows}")


#: Bits of a row's values relative to its largest before the L1 clip (exact row sums).
_ROW_BITS = 31


def _row_units(values, row_max, row_of, row_sums, k, top):
    """Row values L1-clipped to ``data_norm`` and rounded down onto the grid 2**-k, as int64.

    ``values`` are the (non-negative) entries of some rows, ``row_of`` the row of each
    entry (an index array broadcasting with ``values``), ``row_max`` each row's largest
    value and ``row_sums(a)`` the exact per-row sums of an int64 array shaped like
    ``values``. Every step is a function of the row alone, decided on exact integers, so
    dense and sparse rows agree bitwise:

    1. ``q = floor(x·2**p)`` with ``p`` per row such that the row's maximum is in
       [2**30, 2**31) (``ldexp``: exact scaling; parts below 2**-30 of the maximum are
       dropped). The row's sum S = Σq is an exact integer (int64).
    2. ``u = floor(q·c)``, ``c = min(2**(k−p), top/S)``: the row scaled to L1 norm at most
       ``data_norm`` on the grid (an unclipped row with ``p >= k``: exactly ``floor(x·2**k)``).
    3. Float rounding in step 2 may leave Σu slightly above ``top``: such a row becomes
       ``u·top // Σu`` in integers (``u·top < 2**62``), so Σu <= ``top`` holds exactly.
    """
    p = _ROW_BITS - np.frexp(row_max)[1].astype(np.int64)
    q = np.floor(np.ldexp(values, p[row_of])).astype(np.int64)
    with np.errstate(divide="ignore"):
        scale = np.minimum(np.ldexp(1.0, k - p), top / row_sums(q))
    u = np.floor(q * scale[row_of]).astype(np.int64)
    u_sums = row_sums(u)[row_of]
    return np.where(u_sums > top, u * top // np.maximum(u_sums, 1), u)


def _dense_row_sums(a):
    return a.sum(axis=1)


def _exact_class_table(X, y_index, n_classes, k, top, units):
    """MultinomialNB's table as exact int64 units: per class, ``Σ W_i·2**k`` (the count) and
    ``Σ W_i·q_i`` (the feature sums), shape (n_classes, 1 + n_features).

    ``q_i`` is row i L1-clipped and rounded down onto the grid (:func:`_row_units`), so
    ``Σ_j q_ij <= top`` exactly; ``W_i`` is the row's weight in units
    of 1/1024 (1 without weights). Integer sums are exact and order-independent: a row
    changes the table by exactly its own contribution, at most ``(2**k + top)·W_i`` in L1.
    Dense X is read as it is (no copy), sparse X through its stored values (implicit
    zeros add 0), with the same integers.
    """
    # The steps of _row_units (the reference, in numpy) in one kernel pass per row
    # (dpsk._core._sparse): the stored values of sparse X, every value of dense X.
    return multinomial_table(X, y_index, n_classes, k, top, units, _ROW_BITS)


@Substitution(
    epsilon=_shared_docs["epsilon"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    on_invalid=on_invalid_doc(
        drop=", a negative count", clip="negative counts (and −inf) count as 0 and rows holding NaN or +inf are removed"
    ),
    privacy_spent_=_shared_docs["privacy_spent_"],
    **_DISCRETE_DOCS,
)
class MultinomialNB(_BaseDiscreteNB):
    """Multinomial naive Bayes (e.g. word counts) with differential privacy.

    Parameters
    ----------
    {epsilon}

    data_norm : float, "private", "data" or None, default=None
        Public bound on the **L1 norm** of each row of X (its total count, e.g. the
        length of a document). Rows with a larger sum are scaled down to it.
        ``"private"`` or left out (None): estimated inside the fit with a share of ε
        (``bounds_epsilon_share``, 10 %): a private upper quantile (0.9) of the rows' L1
        norms, rounded down to a value 2^j − 1 (j = 1 … 20; see **Privacy**).
        ``"data"`` derives it from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning`, which breaks the guarantee. The
        bound used is stored in ``data_norm_``.

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
    feature_count_ : ndarray of shape (n_classes, n_features)
        Noisy per-class sums of each feature (clamped at 0).
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        Smoothed log-probability of each feature given the class.
    data_norm_ : float
        The L1 bound used.
    {privacy_spent_}

    See Also
    --------
    sklearn.naive_bayes.MultinomialNB : the non-private estimator.

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row, for a public ``data_norm`` (R) and
    ``classes``. X must be non-negative; each row is scaled to L1 norm at most R. One row
    adds 1 to its class count and at most R (in L1) to its class's feature sums, so the
    vector of all class counts and all per-class feature sums has L1 sensitivity 1 + R
    and is released once with exact discrete Laplace noise (one ε-DP release: no budget
    split; every entry gets noise of scale at most (1 + R)/ε). The sums are **exact
    integers on a public grid**: each clipped value is rounded down to a multiple of
    2^-k (a step of about R·2^-20; a count of 1 is 2^k units), each row's units are
    clipped to at most ``floor(R·2^k)`` in integer arithmetic, and the table is summed in
    int64, exactly and in any order, so one row changes the *computed* table by exactly
    its own contribution (at most (2^k + floor(R·2^k)) units), whatever the other rows;
    the noise is calibrated to that integer sensitivity and the table divided by 2^k
    once. Sparse and dense X give the same integers. Released: ``class_count_``,
    ``feature_count_`` and what is computed from them. Floating-point safe. With
    ``sample_weight`` (clipped to [0, 1], rounded down to a multiple of 1/1024) the
    counts and sums are weighted in units of 1/1024 more: one row still adds at most
    1 + R in L1. With ``data_norm="private"`` (or left out), R is released first with
    ε_b = ε·``bounds_epsilon_share`` (a quantile of the rows' L1 norms, as
    :func:`dpsk.stats.bounds` with ``which="row_norm"`` releases L2 norms) and rounded
    down onto the ladder R = 2^j − 1, j = 1 … 20, whose grids (k = 20 − j) all give one row
    the same integer sensitivity 2^k + floor(R·2^k) = 2^20: the table's noise (scale
    (1 + R)/(ε − ε_b) in counts) is calibrated to a public constant, so its cost does not
    depend on the released R (adaptive composition: one ε-DP event records both).
    ``data_norm`` must be below 2^31, and a fit takes at most
    2^62 / (1024·max(2^k, floor(R·2^k))) rows (above 2^31 for R < 2^20); larger values
    are refused before anything is spent (public information).
    Domain: finite, non-negative X (counts), labels in ``classes``, finite, non-negative
    ``sample_weight``. Data outside it raise a ``ValueError`` before any noise is drawn,
    which reveals only that the data left the domain, or with ``on_invalid`` are dropped
    or clipped inside the mechanism (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.naive_bayes import MultinomialNB
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.poisson([5, 1, 1], (500, 3)), rng.poisson([1, 1, 5], (500, 3))])
    >>> y = np.repeat([0, 1], 500)
    >>> clf = MultinomialNB(epsilon=1.0, data_norm=20, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.predict([[6, 0, 1], [0, 1, 6]])
    array([0, 1])
    """

    _parameter_constraints = {
        **DISCRETE_NB_CONSTRAINTS,
        "data_norm": [Interval(Real, 0, None, closed="neither"), PRIVATE_CONSTRAINT, None],
    }
    _accept_sparse = ACCEPT_SPARSE

    def __init__(
        self,
        *,
        epsilon=1.0,
        data_norm=None,
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
        self.data_norm = data_norm
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state
        self.on_invalid = on_invalid

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight_grid"])
    def fit(self, X, y, sample_weight=None):
        """Fit the model on non-negative X and labels y with differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Non-negative features (counts or frequencies).
        y : array-like of shape (n_samples,)
        {sample_weight}

        Returns
        -------
        self : object
        """
        return self._fit(X, y, sample_weight)

    def _fit_batch(self, X, y, sample_weight, classes):
        if is_dask(X, y, sample_weight):  # exact per-chunk integer tables (dpsk.dask)
            self._check_privacy_budget(budget_event(self.epsilon))
            return dask_fit(self, X, y, sample_weight=sample_weight)
        X, y, classes, y_index, sample_weight, first = self._prepare(
            X,
            y,
            sample_weight,
            classes,
            infinite="drop",
            row_valid=lambda X: rows_all(X, lambda v: v >= 0),
            clip=lambda X: map_values(X, lambda v: np.maximum(v, 0)),
        )
        if (X.data.min(initial=0.0) if sp.issparse(X) else np.min(X, initial=0.0)) < 0:
            raise ValueError("Negative values in data passed to MultinomialNB (input X)")
        n_classes, n_features = classes.size, X.shape[1]
        alpha = self._check_alpha(n_features)
        plan = None
        if not first:  # fixed at the first call (public)
            data_norm = self.data_norm_
        elif wants_private(self.data_norm):  # a private L1 bound on the ladder (_private_data_norm)
            plan = PrivateSensitivity(self, self.epsilon, {"data_norm": ("row_norm", 1, None)})
            data_norm = _LADDER_TOP  # placeholder: every ladder value has the same sensitivity
        elif is_data(self.data_norm):  # never derived unasked
            warn_data_derived(self, "data_norm", "data_norm_")
            data_norm = row_sums_max(X) or 1.0
        else:
            data_norm = check_data_norm(self.data_norm)
        k, top = _multinomial_grid(data_norm)
        units, grid = _weight_units(sample_weight)
        _check_exact_rows(X.shape[0], k, top, grid)
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight, *self._release_tag()))
        # The table in integer units of 2**-k (times 1/grid with weights): one row adds at
        # most 2**k to its class count and ``top`` <= data_norm·2**k to its class's sums.
        if plan is None:
            mechanism = self._mechanism((2**k + top) * grid, rng)
            self._spend_privacy_budget(mechanism.privacy_event(n_classes * (1 + n_features)))
        else:
            mechanism = DiscreteLaplace(epsilon=plan.fit_epsilon, sensitivity=(2**k + top) * grid, random_state=rng)
            plan.spend(self, mechanism.privacy_event(n_classes * (1 + n_features)), rng)
            data_norm = _private_data_norm(plan, X)
            k, top = _multinomial_grid(data_norm)  # 2**k + top == 2**20: the same mechanism

        table = self._class_table(X, y_index, n_classes, k, top, units)
        return self._fit_table(table, mechanism, 2.0**k * grid, classes, alpha, data_norm)

    def _fit_table(self, table, mechanism, scale, classes, alpha, data_norm):
        """The noisy integer table (in units of 1/``scale``), added to the earlier
        ``partial_fit`` releases, and the fitted model (in memory and Dask)."""
        n_classes = classes.size
        (table,), _ = self._accumulate([mechanism.randomise(table).astype(np.float64) / scale])
        table = np.maximum(table, 0.0)

        self.classes_ = classes
        self.data_norm_ = data_norm
        self.class_count_ = table[:, 0]
        self.feature_count_ = table[:, 1:]
        self._set_class_log_prior(self.class_count_, n_classes)
        smoothed = self.feature_count_ + alpha
        self.feature_log_prob_ = np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))
        return self

    def _class_table(self, X, y_index, n_classes, k, top, units):
        """The exact integer table (rows clipped to ``top`` units): :func:`_exact_class_table`."""
        return _exact_class_table(X, y_index, n_classes, k, top, units)

    def _check_X(self, X):
        return validate_data(
            self, X, dtype=[np.float64, np.float32], order="C", reset=False, accept_sparse=self._accept_sparse
        )

    def _joint_log_likelihood(self, X):
        return np.asarray(X @ self.feature_log_prob_.T) + self.class_log_prior_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        return tags


@Substitution(
    epsilon=_shared_docs["epsilon"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    on_invalid=on_invalid_doc(
        drop="", clip="±inf values are binarized like any value (+inf is on, −inf off) and rows holding NaN removed"
    ),
    privacy_spent_=_shared_docs["privacy_spent_"],
    **_DISCRETE_DOCS,
)
class BernoulliNB(_BaseDiscreteNB):
    """Naive Bayes for binary features with differential privacy.

    Parameters
    ----------
    {epsilon}

    {alpha}

    {force_alpha}

    binarize : float, default=0.0
        Threshold: a feature is "on" when it is strictly greater.

    {fit_prior}

    {class_prior}

    {classes}

    {accountant}

    {random_state}

    {on_invalid}

    Attributes
    ----------
    {common_attributes}
    feature_count_ : ndarray of shape (n_classes, n_features)
        Noisy number of rows of each class with each feature on (clamped at 0).
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        Smoothed log-probability that each feature is on, given the class.
    {privacy_spent_}

    See Also
    --------
    sklearn.naive_bayes.BernoulliNB : the non-private estimator.

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row, for public ``classes``. One row adds 1
    to its class count and at most 1 to each of the d feature counts of its class, so
    the vector of all counts has L1 sensitivity 1 + d and is released once with exact
    discrete Laplace noise of scale (1 + d)/ε (no budget split). Released:
    ``class_count_``, ``feature_count_`` and what is computed from them. Floating-point
    safe (integer noise on integer counts). With ``sample_weight`` the counts are integers in units of 1/1024
    (weights clipped to
    [0, 1], rounded down to that grid): one row adds at most 1024 units where it added
    1, and the noise scale is multiplied by 1024 in units — the same in counts.
    Domain: finite X, labels in ``classes``, finite, non-negative ``sample_weight``.
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain, or with ``on_invalid`` are dropped or clipped inside
    the mechanism (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.naive_bayes import BernoulliNB
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.random((500, 3)) < [0.9, 0.1, 0.5], rng.random((500, 3)) < [0.1, 0.9, 0.5]])
    >>> y = np.repeat([0, 1], 500)
    >>> clf = BernoulliNB(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.predict([[1, 0, 0], [0, 1, 0]])
    array([0, 1])
    """

    _parameter_constraints = {**DISCRETE_NB_CONSTRAINTS, "binarize": [Interval(Real, None, None, closed="neither")]}
    _accept_sparse = ACCEPT_SPARSE

    def __init__(
        self,
        *,
        epsilon=1.0,
        alpha=1.0,
        force_alpha=True,
        binarize=0.0,
        fit_prior=True,
        class_prior=None,
        classes=None,
        accountant=None,
        random_state=None,
        on_invalid="raise",
    ):
        self.epsilon = epsilon
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state
        self.on_invalid = on_invalid

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight_grid"])
    def fit(self, X, y, sample_weight=None):
        """Fit the model on X (binarized at ``binarize``) and labels y with differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
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
        X, y, classes, y_index, sample_weight, _ = self._prepare(X, y, sample_weight, classes, infinite="keep")
        self._check_sparse_threshold(X)
        units, grid = _weight_units(sample_weight)
        n_classes, n_features = classes.size, X.shape[1]
        alpha = self._check_alpha(n_features)
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight, *self._release_tag()))
        # Weighted counts are in units of 1/grid: one row adds at most grid units per count.
        mechanism = self._mechanism((1 + n_features) * grid, rng)
        self._spend_privacy_budget(mechanism.privacy_event(n_classes * (1 + n_features)))

        return self._fit_table(self._count_table(X, y_index, n_classes, units), mechanism, grid, classes, alpha)

    def _count_table(self, X, y_index, n_classes, units):
        """Exact (weighted) class counts and "on" counts per class: shape (n_classes, 1 + n_features)."""
        dtype = np.int64 if units is None else np.float64  # integer units: exact sums below 2**53
        indicator = _class_indicator(y_index, n_classes, dtype, units)
        on = (X > self.binarize).astype(dtype)  # sparse X: sparse, integer products are exact
        with single_blas_thread():
            return np.hstack([indicator.sum(axis=0)[:, None], np.asarray(indicator.T @ on)])

    def _fit_table(self, table, mechanism, grid, classes, alpha):
        """The noisy count table, added to the earlier ``partial_fit`` releases, and the fitted
        model (in memory and Dask)."""
        n_classes = classes.size
        (table,), _ = self._accumulate([mechanism.randomise(table).astype(np.float64) / grid])
        table = np.maximum(table, 0.0)

        self.classes_ = classes
        self.class_count_ = table[:, 0]
        self.feature_count_ = table[:, 1:]
        self._set_class_log_prior(self.class_count_, n_classes)
        # P(on | class) from the noisy counts; the count of "on" cannot exceed the class count.
        on_count = np.minimum(self.feature_count_, self.class_count_[:, None])
        denominator = np.log(self.class_count_ + 2.0 * alpha)[:, None]
        self.feature_log_prob_ = np.log(on_count + alpha) - denominator
        self._neg_log_prob = np.log(self.class_count_[:, None] - on_count + alpha) - denominator
        return self

    def _check_sparse_threshold(self, X):
        """scikit-learn's refusal: a negative threshold would turn every implicit zero on."""
        if sp.issparse(X) and self.binarize < 0:
            raise ValueError("Cannot binarize a sparse matrix with threshold < 0")

    def _check_X(self, X):
        X = validate_data(
            self, X, dtype=[np.float64, np.float32], order="C", reset=False, accept_sparse=self._accept_sparse
        )
        self._check_sparse_threshold(X)
        return X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _joint_log_likelihood(self, X):
        on = (X > self.binarize).astype(np.float64)
        return (
            np.asarray(on @ (self.feature_log_prob_ - self._neg_log_prob).T)
            + self._neg_log_prob.sum(axis=1)
            + self.class_log_prior_
        )
