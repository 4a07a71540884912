# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random decision trees with differential privacy (Jagannathan, Pillaipakkamnatt & Wright 2009).

The structure of every tree (the feature and threshold of each node) is drawn from the
public ``bounds`` alone, before the data is read; the data only enters through the class
counts of the leaves. The leaves of one tree partition the rows it sees, so one row
changes one count of that tree by 1. A forest trains each tree on its own random part of
the rows (each row draws its tree independently), so one row changes exactly one count
of the whole forest: all leaf counts of all trees form one vector of L1 sensitivity 1,
released once with exact discrete Laplace noise (95% of ε; the class totals, which every
leaf falls back on, get the other 5%). Prediction is post-processing of the noisy counts
(see :class:`BaseRandomTrees`).

Why disjoint parts rather than every tree on every row with ε/N each: both give each
tree's leaf counts the same signal-to-noise ratio (n/N rows and noise 1/ε, or n rows
and noise N/ε); measured accuracy was within a point on Adult, and on breast cancer each
design won some sizes by up to 2.4 points (doc/user_guide/trees.rst). The disjoint design routes each row
through one tree
instead of N, so fitting costs N times less, and its noise does not grow with N.

The regressors (``BaseRandomTreesRegressor``, ``_regressor.py``) share the structure, the
partition and the routing (:class:`RandomTreesMixin`); their leaves release a noisy count and
a noisy sum of the target centred in the public ``bounds_y``, all leaves and the totals
in one joint lattice-Laplace release.
"""

import math
from numbers import Integral

import numpy as np

from dpsk._core._trees import MAX_DEPTH, draw_structure
from dpsk.accounting import ComposedEvent
from dpsk.accounting._calibration import split_epsilon
from dpsk.accounting._events import budget_event
from dpsk.base import (
    BOUNDS_CONSTRAINT,
    DP_PARAMETER_CONSTRAINTS,
    BaseJointLogLikelihoodClassifier,
    priors_from_counts,
)
from dpsk.dask._data import dask_fit, is_dask
from dpsk.mechanisms import DiscreteLaplace
from dpsk.tree._sparse_routing import apply_trees, as_csr, leaf_counts, tree_votes
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, private_box
from dpsk.utils._sklearn_compat import Interval, _fit_context, check_is_fitted, validate_data
from dpsk.utils._sparse import ACCEPT_SPARSE
from dpsk.utils._units import random_parts
from dpsk.utils.validation import (
    _check_sample_weight_dp,
    _weight_units,
    release_generator,
    resolve_classes,
)

__all__ = ["DecisionTreeClassifier", "RandomTree"]

#: Largest number of leaf counts (trees x leaves x classes) a fit may allocate (512 MiB).
MAX_LEAF_COUNTS = 2**26

#: Budget split between the leaf counts and the class totals (the prior that every leaf
#: falls back on). The sum of all noisy leaf counts would estimate the totals with noise
#: growing as √(number of leaves): useless for deep trees on small data.
PRIOR_SPLIT = (0.95, 0.05)

#: Deepest default tree (see ``default_depth``).
DEFAULT_MAX_DEPTH = 10

#: Constraints shared by the random-tree estimators (pure ε-DP: no delta).
TREE_CONSTRAINTS = {
    **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
    "max_depth": [Interval(Integral, 1, MAX_DEPTH, closed="both"), None],
    "bounds": [*BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
    "classes": ["array-like", None],
}

TREE_DOCS = {
    "weights": """With ``sample_weight`` the counts are integers in units of
    1/1024 (weights clipped to [0, 1], rounded down to that grid): a row adds at most
    1024 units to one cell and one class total, and the noise scale is multiplied by
    1024 in units, the same in counts.""",
    "common_attributes": """class_count_ : ndarray of shape (n_classes,)
        Noisy number of training rows per class (released with 5% of ε, clamped at 0).
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    max_depth_ : int
        The depth used.
    bounds_ : tuple of ndarray
        The bounds used (given, or derived from the data with a warning).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.""",
    "max_depth": """max_depth : int or None, default=None
        Depth of every tree (all trees are complete: 2**max_depth leaves). ``None`` uses
        ``min(10, ceil(n_features / 2))``, a rule that depends on the number of features
        only (never on the data): about half the features on each path, as Jagannathan
        et al. recommend, capped where the leaves become too small for their noise.""",
    "bounds": """bounds : tuple (lower, upper), "private", "data" or None, default=None
        Public bounds on each feature, as scalars or arrays of shape (n_features,). The
        thresholds are drawn inside them; values outside are routed as if clipped to
        them. ``"private"``: estimated inside the fit (:func:`dpsk.stats.bounds`, a noisy
        logarithmic histogram per column) with ``bounds_epsilon_share`` of ε, before the
        trees are drawn (:ref:`bounds`). ``None`` (left out) means ``"private"``.
        ``"data"`` derives them from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (stored in ``bounds_``), which
        breaks the guarantee: the structure then depends on the data.""",
}


def smoothed_leaf_probabilities(noisy, prior, noise_std):
    """Class probabilities of every leaf, each node smoothed towards its parent (post-processing).

    Internal nodes get the sums of their leaves' noisy counts (noise standard deviation
    ``noise_std × √(leaves below)``). From the root (smoothed towards ``prior``) down,
    each node's probabilities are ``(c + a p_parent) / (Σc + a)`` with ``c`` its counts
    clamped at 0 and a pseudo-count ``a`` of ``n_classes`` noise standard deviations of
    that node (at least ``n_classes``): where the counts are below the noise, a leaf falls back on its parent,
    and so on up to the prior.

    Parameters
    ----------
    noisy : ndarray of shape (n_trees, n_leaves, n_classes)
    prior : ndarray of shape (n_classes,)
    noise_std : float

    Returns
    -------
    proba : ndarray of shape (n_trees, n_leaves, n_classes)
    """
    levels = [noisy]
    while levels[-1].shape[1] > 1:
        level = levels[-1]
        levels.append(level.reshape(level.shape[0], -1, 2, level.shape[2]).sum(axis=2))
    n_leaves, n_classes = noisy.shape[1], noisy.shape[2]
    proba = np.broadcast_to(prior, (noisy.shape[0], 1, n_classes))
    for i, level in enumerate(reversed(levels)):
        if i:
            proba = np.repeat(proba, 2, axis=1)
        counts = np.maximum(level, 0.0)
        # At least one pseudo-count per class: without noise, an empty node follows its parent.
        pseudo = n_classes * max(noise_std * math.sqrt(n_leaves / level.shape[1]), 1.0)
        proba = (counts + pseudo * proba) / (counts.sum(axis=2, keepdims=True) + pseudo)
    return proba


def default_depth(n_features):
    """Data-independent depth: about half the features per path, at most ``DEFAULT_MAX_DEPTH``."""
    return int(min(DEFAULT_MAX_DEPTH, max(1, math.ceil(n_features / 2))))


class RandomTree:
    """Structure and noisy leaf counts of one fitted random tree (the ``tree_`` attribute).

    Nodes are numbered in heap order like a complete binary tree: node ``i`` has children
    ``2i + 1`` (left, ``x[feature[i]] <= threshold[i]``) and ``2i + 2``; the
    ``2**max_depth`` leaves are the last nodes. As in scikit-learn's ``Tree``, leaves have
    ``feature == -2``, ``threshold == -2`` and children ``-1``.

    Attributes
    ----------
    max_depth : int
    node_count : int
    n_leaves : int
    feature : ndarray of shape (node_count,), dtype intp
    threshold : ndarray of shape (node_count,), dtype float64
        ``+inf`` where every value within the bounds goes left.
    value : ndarray of shape (node_count, n_classes) or (node_count, 2), dtype float64
        Classifiers: noisy class counts of each leaf (the release; may be negative).
        Regressors: the noisy row count and the noisy sum of ``y - m`` (``m`` the middle
        of ``bounds_y_``) of each leaf. For internal nodes, the sums of their leaves'
        rows (post-processing).
    children_left, children_right : ndarray of shape (node_count,), dtype intp

    Notes
    -----
    **Privacy.** Nothing here is computed from the data beyond the release of the
    estimator that owns it: ``feature`` and ``threshold`` are drawn from the public
    bounds before the data is read, the leaves' ``value`` rows are that estimator's noisy
    counts (its ``privacy_spent_``), and the internal nodes' rows are sums of them
    (post-processing).
    """

    def __init__(self, feature, threshold, leaf_counts):
        self.max_depth = int(round(math.log2(leaf_counts.shape[0])))
        self.n_leaves = leaf_counts.shape[0]
        self.node_count = 2 * self.n_leaves - 1
        self.feature = np.concatenate([feature, np.full(self.n_leaves, -2, dtype=np.intp)])
        self.threshold = np.concatenate([threshold, np.full(self.n_leaves, -2.0)])
        levels = [np.asarray(leaf_counts, dtype=np.float64)]
        while levels[-1].shape[0] > 1:
            levels.append(levels[-1].reshape(-1, 2, levels[-1].shape[1]).sum(axis=1))
        self.value = np.concatenate(levels[::-1])

    @property
    def children_left(self):
        nodes = np.arange(self.node_count, dtype=np.intp)
        return np.where(nodes < self.n_leaves - 1, 2 * nodes + 1, -1)

    @property
    def children_right(self):
        nodes = np.arange(self.node_count, dtype=np.intp)
        return np.where(nodes < self.n_leaves - 1, 2 * nodes + 2, -1)


def _weighted_leaf_counts(X, y_index, n_classes, part, feature, threshold, depth, n_threads, units):
    """``leaf_counts`` with integer row weights ``units`` (None: every row counts 1).

    The rows of each weight are counted by the kernel (one home for the routing) and
    their counts multiplied by that weight: every row still adds to exactly one
    (tree, leaf, class) cell, now ``units[i]`` instead of 1; the counts stay exact integers.
    """
    if units is None:
        return leaf_counts(X, y_index, n_classes, part, feature, threshold, depth, n_threads=n_threads)
    counts = 0
    for unit in np.unique(units[units > 0]):
        rows = units == unit
        subset = None if part is None else np.ascontiguousarray(part[rows])
        counts = counts + int(unit) * leaf_counts(
            X[rows],
            np.ascontiguousarray(y_index[rows]),
            n_classes,
            subset,
            feature,
            threshold,
            depth,
            n_threads=n_threads,
        )
    if isinstance(counts, int):  # no row with a positive weight
        counts = leaf_counts(
            X[:0],
            y_index[:0],
            n_classes,
            None if part is None else part[:0],
            feature,
            threshold,
            depth,
            n_threads=n_threads,
        )
    return counts


class RandomTreesMixin:
    """What every random-tree estimator shares: the data-independent structure, the
    partition of rows between trees, and routing (``apply``). Nothing here reads y."""

    def _n_trees(self):
        return 1

    def _n_threads(self):
        return 1

    def _check_X(self, X):
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False, accept_sparse=ACCEPT_SPARSE)
        return as_csr(X)  # sparse X is routed in dense blocks of rows (dpsk.tree._sparse_routing)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _depth(self, n_features, n_trees, n_values):
        """The depth used; refuses forests of more than ``MAX_LEAF_COUNTS`` released values."""
        depth = default_depth(n_features) if self.max_depth is None else int(self.max_depth)
        size = n_trees * 2**depth * n_values
        if size > MAX_LEAF_COUNTS:
            raise ValueError(
                f"{n_trees} trees of depth {depth} with {n_values} values per leaf need {size} leaf counts or sums, "
                f"more than {MAX_LEAF_COUNTS}; lower max_depth or the number of trees"
            )
        return depth

    def _structure(self, rng, n_trees, depth, lower, upper):
        """Features and thresholds of every tree, from ``rng`` and the public bounds only."""
        n_internal = 2**depth - 1
        u_feature = rng.random((n_trees, n_internal))
        u_threshold = rng.random((n_trees, n_internal))
        return draw_structure(u_feature, u_threshold, lower, upper, depth)

    def _parts(self, rng, n_trees, n_samples):
        """The tree of each row (disjoint parts), or None when every row feeds every tree."""
        if n_trees == 1:
            return None
        return random_parts(rng, n_trees, n_samples, None).astype(np.intp)

    def _apply(self, X):
        check_is_fitted(self)
        X = self._check_X(X)
        leaves = apply_trees(X, self._feature, self._threshold, self.max_depth_, n_threads=self._n_threads())
        return leaves + (2**self.max_depth_ - 1)

    def _decision_path(self, X):
        """Node indicator of every tree, stacked: CSR (n_samples, n_trees · node_count), and offsets.

        In heap order a node's parent is ``(i − 1) // 2``, so the path of a row is its leaf
        and the leaf's ancestors, ``max_depth_ + 1`` nodes per tree (all leaves are at
        the same depth), in increasing node order.
        """
        from scipy.sparse import csr_matrix

        leaves = self._apply(X)  # (n_samples, n_trees)
        n_samples, n_trees = leaves.shape
        depth = self.max_depth_
        node_count = 2 ** (depth + 1) - 1
        path = np.empty((n_samples, n_trees, depth + 1), dtype=np.intp)
        node = leaves.copy()
        for level in range(depth, -1, -1):
            path[:, :, level] = node
            node = (node - 1) // 2
        path += (np.arange(n_trees, dtype=np.intp) * node_count)[None, :, None]
        per_row = n_trees * (depth + 1)
        indicator = csr_matrix(
            (np.ones(n_samples * per_row, dtype=np.int64), path.reshape(-1), np.arange(n_samples + 1) * per_row),
            shape=(n_samples, n_trees * node_count),
        )
        return indicator, np.arange(n_trees + 1, dtype=np.intp) * node_count


class SingleTreeMixin:
    """``apply``, ``decision_path``, ``get_depth`` and ``get_n_leaves`` of the one-tree estimators."""

    def apply(self, X):
        """Index of the leaf (node number in ``tree_``) each row of X reaches.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        X_leaves : ndarray of shape (n_samples,), dtype intp
        """
        return self._apply(X)[:, 0]

    def decision_path(self, X):
        """The nodes each row of X goes through, as scikit-learn's ``decision_path``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        indicator : sparse matrix of shape (n_samples, n_nodes)
            CSR; ``indicator[i, j]`` is 1 when row i goes through node j of ``tree_``.

        Notes
        -----
        **Privacy.** Post-processing of the released tree on the X given here.
        """
        return self._decision_path(X)[0]

    def get_depth(self):
        """Depth of the tree (all leaves are at this depth)."""
        check_is_fitted(self)
        return self.max_depth_

    def get_n_leaves(self):
        """Number of leaves, ``2**max_depth_``."""
        check_is_fitted(self)
        return 2**self.max_depth_


class BaseRandomTrees(RandomTreesMixin, BaseJointLogLikelihoodClassifier):
    """Fit and prediction shared by :class:`DecisionTreeClassifier` and the random forest.

    **Prediction** (post-processing of the released counts; nothing here reads the data).
    Let ``π`` be the class prior from the released class totals (clamped at 1) and
    ``p_t`` the class probabilities of the leaf a row reaches in tree t: its noisy
    counts clamped at 0, smoothed towards its parent's probabilities, which are
    smoothed towards theirs, up to the root, smoothed towards ``π``
    (:func:`smoothed_leaf_probabilities`). A leaf whose counts are below the noise says
    little and falls back on its ancestors (a soft back-off, free: internal counts are
    sums of released leaf counts). The trees
    are combined as weighted log-likelihood ratios, a tempered naive Bayes over the
    trees' leaves (hence the prediction methods of :class:`~dpsk.base.BaseJointLogLikelihoodClassifier`,
    with these scores as ``predict_joint_log_proba``)::

        score(class) = log π + (w / N) Σ_t log(p_t / π),    w = min(evidence_weight, N)

    and ``predict_proba`` is the softmax of the scores. One tree (N = 1, w = 1) predicts
    its leaf's ``p``. ``w = N`` multiplies the trees' likelihood ratios (naive Bayes over
    trees), ``w = 1`` takes their geometric mean. Summing counts (Jagannathan et al.) or
    averaging the trees' probabilities gave the majority class on Adult, where most
    random trees see few informative features (doc/user_guide/trees.rst).
    """

    _evidence_weight = 1.0

    def _store_trees(self, feature, threshold, noisy, noise_std):
        """Public fitted attributes describing the trees (``tree_``, ``estimators_``)."""

    def _leaf_sensitivity(self, n_trees):
        """L1 sensitivity of all leaf counts: 1, as each row feeds one tree (see ``_parts``)."""
        return 1

    def _mechanism(self, epsilon, rng, sensitivity=1):
        """Exact discrete Laplace noise for integer counts of this L1 sensitivity."""
        return DiscreteLaplace(epsilon=epsilon, sensitivity=sensitivity, random_state=rng)

    def _spend_leaf_releases(self, plan, rng, n_trees, depth, n_classes, grid):
        """The mechanisms of the leaf counts and of the class totals, and their one spend
        (in memory and Dask)."""
        epsilon_leaves, epsilon_totals = split_epsilon(plan.fit_epsilon, PRIOR_SPLIT)
        # Weighted counts are in units of 1/grid: one row adds at most grid units per count.
        leaves = self._mechanism(epsilon_leaves, rng, self._leaf_sensitivity(n_trees) * grid)
        totals = self._mechanism(epsilon_totals, rng, grid)
        shape = (n_trees, 2**depth, n_classes)
        plan.spend(self, ComposedEvent((leaves.privacy_event(shape), totals.privacy_event(n_classes))), rng)
        return leaves, totals

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight_grid"])
    def fit(self, X, y, sample_weight=None):
        """Draw the trees from the bounds and release their noisy leaf counts.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        {sample_weight}

        Returns
        -------
        self : object
        """
        self._check_privacy_budget(budget_event(self.epsilon))
        if is_dask(X, y, sample_weight):  # leaf counts per chunk, the same release (dpsk.dask)
            return dask_fit(self, X, y, sample_weight=sample_weight)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C", accept_sparse=ACCEPT_SPARSE)
        X = as_csr(X)
        units, grid = _weight_units(_check_sample_weight_dp(sample_weight, X))
        plan, (lower, upper) = private_box(self, X)
        classes, y_index = resolve_classes(self, self.classes, y)
        n_trees, n_classes = self._n_trees(), classes.size
        depth = self._depth(X.shape[1], n_trees, n_classes)
        n_threads = self._n_threads()  # invalid n_jobs fails here, before any spend
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight))
        if not plan.requests:
            feature, threshold = self._structure(rng, n_trees, depth, lower, upper)
        leaves, totals = self._spend_leaf_releases(plan, rng, n_trees, depth, n_classes, grid)
        if plan.requests:  # the trees are drawn in the released box
            lower, upper = plan.box("bounds", X, (lower, upper))
            feature, threshold = self._structure(rng, n_trees, depth, lower, upper)

        part = self._parts(rng, n_trees, X.shape[0])
        counts = _weighted_leaf_counts(X, y_index, n_classes, part, feature, threshold, depth, n_threads, units)
        noisy = leaves.randomise(counts).astype(np.float64) / grid
        class_count = totals.randomise(np.bincount(y_index, weights=units, minlength=n_classes)) / grid
        noise_std = math.sqrt(float(leaves.variance(counts))) / grid

        self.classes_ = classes
        self.n_classes_ = n_classes
        self.bounds_ = (lower, upper)
        self.max_depth_ = depth
        self.class_count_ = np.maximum(class_count, 0.0)
        self._set_model(feature, threshold, noisy, noise_std)
        self._store_trees(feature, threshold, noisy, noise_std)
        return self

    def _set_model(self, feature, threshold, noisy, noise_std, class_weight=None):
        """Prediction tables from the noisy counts and ``class_count_`` (post-processing),
        every class's counts scaled by its ``class_weight`` (in [0, 1]) if given."""
        self._feature, self._threshold = feature, threshold
        weights = np.ones(self.class_count_.size) if class_weight is None else class_weight
        prior = priors_from_counts(self.class_count_ * weights)
        self._log_prior = np.log(prior)
        proba = smoothed_leaf_probabilities(noisy * weights, prior, noise_std)
        self._log_ratio = np.ascontiguousarray(np.log(proba) - self._log_prior)

    def _joint_log_likelihood(self, X):
        """Scores ``log π + (w / N) Σ_t log(p_t / π)`` of each class for validated rows X."""
        n_trees = self._feature.shape[0]
        weight = min(self._evidence_weight, n_trees) / n_trees  # read here: post-processing
        evidence = tree_votes(
            X, self._feature, self._threshold, self.max_depth_, self._log_ratio, n_threads=self._n_threads()
        )
        return self._log_prior + weight * evidence

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags


@Substitution(
    epsilon=_shared_docs["epsilon"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    **TREE_DOCS,
)
class DecisionTreeClassifier(SingleTreeMixin, BaseRandomTrees):
    """A random decision tree classifier with differential privacy.

    The tree's splits (a feature and a threshold per node) are drawn at random from the
    public ``bounds``, without looking at the data (Jagannathan, Pillaipakkamnatt &
    Wright 2009); the data only determines the noisy class counts of the leaves. For
    accuracy, use :class:`dpsk.ensemble.RandomForestClassifier`, which combines many
    such trees for the same budget.

    Parameters
    ----------
    {max_depth}

    {epsilon}

    {bounds}

    {classes}

    {accountant}

    {random_state}

    Attributes
    ----------
    tree_ : RandomTree
        The structure and the noisy counts (``tree_.value``).
    {common_attributes}
    {privacy_spent_}

    See Also
    --------
    dpsk.ensemble.RandomForestClassifier : many random trees, one budget.
    sklearn.tree.DecisionTreeClassifier : the non-private (greedy) estimator.

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row, for public ``bounds`` and ``classes``.
    The structure is drawn from ``random_state`` and the bounds only. Each row reaches
    exactly one leaf, so the table of (leaf, class) counts has L1 sensitivity 1; it is
    released once with exact discrete Laplace noise at 95% of ε (scale 1/(0.95 ε)), and
    the class totals (L1 sensitivity 1) at the other 5% (sequential composition, ε in
    total). Integer noise on integer counts: floating-point safe. Rows outside the
    bounds are routed as if clipped to them. Released: ``tree_`` (structure and noisy
    counts), ``class_count_`` and predictions, all computed from these two releases.
    {weights}
    Domain: finite X, labels in ``classes``, finite, non-negative ``sample_weight``.
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.tree import DecisionTreeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((2000, 2))
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> clf = DecisionTreeClassifier(max_depth=4, bounds=(0, 1), classes=[0, 1], random_state=0)
    >>> clf.fit(X, y).predict([[0.05, 0.5], [0.95, 0.5]])
    array([0, 1])
    """

    _parameter_constraints = dict(TREE_CONSTRAINTS)

    def __init__(self, *, max_depth=None, epsilon=1.0, bounds=None, classes=None, accountant=None, random_state=None):
        self.max_depth = max_depth
        self.epsilon = epsilon
        self.bounds = bounds
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    def _store_trees(self, feature, threshold, noisy, noise_std):
        self.tree_ = RandomTree(feature[0], threshold[0], noisy[0])
