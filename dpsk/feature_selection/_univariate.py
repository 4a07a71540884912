# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private univariate feature selection: SelectKBest and SelectPercentile.

Each feature gets a score of bounded sensitivity, computed exactly in integers, and the
best k are chosen by k rounds of an exact selection mechanism ("peeling"), each at ε/k.

Score ``"class_deviation"`` (classification). With public bounds, every value is
clipped and scaled to u in [0, 1] and rounded to the grid 2⁻²⁰ (a fixed map of each row,
so the analysis below holds for the rounded values). For feature j, with n rows, n_c of
class c, S_cj = Σ_{i in c} u_ij, S_j = Σ_c S_cj and m_j = S_j / n::

    score_j = Σ_c |S_cj − n_c m_j| = Σ_c n_c |mean_c(u_j) − mean(u_j)|

(the between-class spread of the feature, in L1: the numerator of an ANOVA F statistic
without its squares and its within-class denominator, whose sensitivity is unbounded).

**Sensitivity 2.** Remove one row (class c₀, value z) from n rows (n >= 2). The mean moves
by m − m' = (z − m)/(n − 1). Each term c ≠ c₀ moves by at most n_c |m − m'|; the term
c₀ becomes S_c₀ − z − (n_c₀ − 1) m', a change of exactly (z − m)(n − n_c₀)/(n − 1). The
total is at most 2 |z − m| (n − n_c₀)/(n − 1) <= 2, since |z − m| <= 1 and n_c₀ >= 1.
For n = 1 both scores are 0 (one row is its class's mean). Adding a row is the same
argument in reverse. The scores are computed exactly (integer sums; n·2²⁰·score as a
Python integer) and handed to the selection mechanism as exact fractions, so the
computed score has exactly this sensitivity.
"""

import math
from fractions import Fraction
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin

from dpsk.accounting import ComposedEvent, SelfComposedEvent, split_epsilon
from dpsk.accounting._events import budget_event
from dpsk.base import DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.mechanisms import ExponentialMechanism, ReportNoisyMax
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, private_box
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils.validation import release_generator

__all__ = ["SelectKBest", "SelectPercentile", "class_deviation_scores"]

#: Bits of the grid the scaled values are rounded to.
_GRID_BITS = 20
#: Sensitivity of each score function (add/remove one row).
SCORE_SENSITIVITY = {"class_deviation": 2}
_SELECTIONS = {"exponential": ExponentialMechanism, "permute_and_flip": ReportNoisyMax}


def class_deviation_scores(X, y, lower, upper):
    """The exact scores Σ_c |S_cj − n_c m_j| of the module docstring (non-private).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (any hashable values).
    lower, upper : ndarray of shape (n_features,)
        The public bounds; values are clipped to them.

    Returns
    -------
    scores : ndarray of object (Fractions), shape (n_features,)

    Notes
    -----
    **Privacy.** Not private by itself: each score has sensitivity 2 under add/remove
    one row, the property the selectors rely on.
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if n == 0:
        return np.array([Fraction(0)] * d, dtype=object)
    width = upper - lower
    scaled = np.zeros_like(X)
    varying = width > 0
    scaled[:, varying] = (np.clip(X[:, varying], lower[varying], upper[varying]) - lower[varying]) / width[varying]
    units = np.clip(np.floor(scaled * (1 << _GRID_BITS) + 0.5), 0, 1 << _GRID_BITS).astype(np.int64)
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    codes = codes.reshape(-1)
    n_classes = int(codes.max()) + 1
    class_sums = np.zeros((n_classes, d), dtype=np.int64)
    np.add.at(class_sums, codes, units)  # exact: n·2²⁰ < 2⁶³
    class_counts = np.bincount(codes, minlength=n_classes)
    sums = class_sums.astype(object).sum(axis=0)
    # n·score_j·2²⁰ = Σ_c |n S_cj − n_c S_j|, in Python integers.
    numerators = np.abs(class_sums.astype(object) * n - class_counts.astype(object)[:, None] * sums[None, :]).sum(
        axis=0
    )
    denominator = n << _GRID_BITS
    return np.array([Fraction(int(v), denominator) for v in numerators], dtype=object)


_DOCS = dict(
    epsilon=_shared_docs["epsilon"],
    bounds=_shared_docs["bounds_private"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    score_func="""score_func : {"class_deviation"}, default="class_deviation"
        The score of each feature, of proven sensitivity (module docstring): the
        between-class spread ``Σ_c n_c |mean_c − mean|`` of the feature scaled to [0, 1] by
        ``bounds`` (sensitivity 2). Callables are not accepted: dpsk cannot check the
        sensitivity of an arbitrary score.""",
    selection="""selection : {"exponential", "permute_and_flip"}, default="exponential"
        The mechanism of each of the k rounds: the exponential mechanism (k rounds are
        distributed as one-shot Gumbel top-k, Durfee & Rogers 2019) or permute-and-flip
        (report-noisy-max with exponential noise; never worse in expected score).""",
    privacy="""**Privacy.** ε-DP under add/remove-one-row, for public ``bounds`` (values are
    clipped to them). The scores (module ``dpsk.feature_selection._univariate``) have
    sensitivity 2 and are computed exactly. The k features are selected one at a time
    among those left, each round by an exact selection mechanism at ε/k (rounded down):
    k-fold composition, ε in total. With the exponential mechanism the k rounds have the
    law of adding Gumbel noise of scale 4k/ε once to every score and keeping the top k
    (Durfee & Rogers 2019), and each round is ε/k-bounded-range, which the accountant
    composes as such. Released: which features are selected (``get_support()``), nothing
    else: the scores are not stored. Floating-point safe (integer scores, exact
    samplers). Selecting every feature (``k >= n_features``) reads nothing and costs
    nothing. The number of features is public.
    Domain: finite X; any class labels (a class without rows adds nothing to a score).
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain (:ref:`declared_domain`).""",
)


class _BaseDPSelector(DPEstimatorMixin, SelectorMixin, BaseEstimator):
    """Shared fit of the private selectors; subclasses give ``_n_selected(n_features)``."""

    _parameter_constraints = {
        **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
        "score_func": [StrOptions(set(SCORE_SENSITIVITY))],
        "bounds": [tuple, PRIVATE_CONSTRAINT, None],
        "selection": [StrOptions(set(_SELECTIONS))],
    }

    def _selection_event(self, k, epsilon=None):
        """The cost of selecting k features by peeling (k rounds at ε/k; ``epsilon``: the
        selection's budget, ε less the private bounds' share)."""
        share = split_epsilon(self.epsilon if epsilon is None else epsilon, k)
        return SelfComposedEvent(_SELECTIONS[self.selection](epsilon=share, sensitivity=1.0).privacy_event(), k)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Select features privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
        """
        self._check_privacy_budget(budget_event(self.epsilon))  # an upper bound of the cost
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C", y_numeric=False)
        d = X.shape[1]
        k = self._n_selected(d)
        if k >= d or k == 0:  # public decision: nothing to choose
            self._spend_privacy_budget(ComposedEvent(()))
            self.support_ = np.full(d, k >= d)
            return self
        plan, box = private_box(self, X)  # "private" or left out: released in the fit's one event
        rng = release_generator(self.random_state, context=self, data=(X, y))
        plan.spend(self, self._selection_event(k, plan.fit_epsilon), rng)
        lower, upper = self.bounds_ = plan.box("bounds", X, box)
        scores = class_deviation_scores(X, y, lower, upper)
        mechanism = _SELECTIONS[self.selection](
            epsilon=split_epsilon(plan.fit_epsilon, k),
            sensitivity=SCORE_SENSITIVITY[self.score_func],
            random_state=rng,
        )
        remaining = list(range(d))
        support = np.zeros(d, dtype=bool)
        for _ in range(k):
            pick = mechanism.randomise(scores[remaining])
            support[remaining.pop(pick)] = True
        self.support_ = support
        return self

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


@Substitution(**_DOCS)
class SelectKBest(_BaseDPSelector):
    """Select the k features with the highest scores, privately.

    Parameters
    ----------
    {score_func}

    k : int or "all", default=10
        Number of features to select; ``"all"`` (or k >= n_features) keeps every
        feature without reading the data.

    {epsilon}

    {bounds}

    {selection}

    {accountant}

    {random_state}

    Attributes
    ----------
    support_ : ndarray of bool, shape (n_features,)
        The selected features (also ``get_support()``).
    bounds_ : tuple of ndarray
        The bounds used (absent when nothing was selected privately).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.
    {privacy_spent_}

    See Also
    --------
    sklearn.feature_selection.SelectKBest : the non-private selector.
    SelectPercentile : select a fraction of the features.

    Notes
    -----
    {privacy}

    Unlike scikit-learn's selector, no ``scores_`` or ``pvalues_`` are stored: they are
    exact statistics of the data.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.feature_selection import SelectKBest
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 2000)
    >>> X = rng.uniform(0, 1, (2000, 5))
    >>> X[:, 3] += 0.5 * y
    >>> selector = SelectKBest(k=1, epsilon=1.0, bounds=(0, 1.5), random_state=0).fit(X, y)
    >>> selector.get_support(indices=True)
    array([3])
    """

    _parameter_constraints = {
        **_BaseDPSelector._parameter_constraints,
        "k": [StrOptions({"all"}), Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        score_func="class_deviation",
        *,
        k=10,
        epsilon=1.0,
        bounds=None,
        selection="exponential",
        accountant=None,
        random_state=None,
    ):
        self.score_func = score_func
        self.k = k
        self.epsilon = epsilon
        self.bounds = bounds
        self.selection = selection
        self.accountant = accountant
        self.random_state = random_state

    def _n_selected(self, n_features):
        return n_features if self.k == "all" else min(int(self.k), n_features)


@Substitution(**_DOCS)
class SelectPercentile(_BaseDPSelector):
    """Select the highest-scoring percentile of the features, privately.

    Parameters
    ----------
    {score_func}

    percentile : float, default=10
        Percent of the features to keep: ``floor(n_features * percentile / 100)`` of them
        (a public number).

    {epsilon}

    {bounds}

    {selection}

    {accountant}

    {random_state}

    Attributes
    ----------
    support_ : ndarray of bool, shape (n_features,)
    bounds_ : tuple of ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.
    {privacy_spent_}

    See Also
    --------
    sklearn.feature_selection.SelectPercentile : the non-private selector.
    SelectKBest : select a number of features.

    Notes
    -----
    {privacy}
    """

    _parameter_constraints = {
        **_BaseDPSelector._parameter_constraints,
        "percentile": [Interval(Real, 0, 100, closed="both")],
    }

    def __init__(
        self,
        score_func="class_deviation",
        *,
        percentile=10,
        epsilon=1.0,
        bounds=None,
        selection="exponential",
        accountant=None,
        random_state=None,
    ):
        self.score_func = score_func
        self.percentile = percentile
        self.epsilon = epsilon
        self.bounds = bounds
        self.selection = selection
        self.accountant = accountant
        self.random_state = random_state

    def _n_selected(self, n_features):
        return min(n_features, math.floor(n_features * self.percentile / 100 + 1e-9))
