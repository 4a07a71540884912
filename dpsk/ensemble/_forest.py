# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""A forest of random decision trees with differential privacy (one budget for all trees)."""

from numbers import Integral, Real

import numpy as np
from joblib import effective_n_jobs

from dpsk.base import TARGET_BOUNDS_CONSTRAINT
from dpsk.tree._classes import (
    TREE_CONSTRAINTS,
    TREE_DOCS,
    BaseRandomTrees,
    DecisionTreeClassifier,
    RandomTree,
)
from dpsk.tree._regressor import REGRESSOR_DOCS, BaseRandomTreesRegressor, DecisionTreeRegressor
from dpsk.utils._class_weight import CLASS_WEIGHT_CONSTRAINT, class_weights
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT
from dpsk.utils._progress import progress
from dpsk.utils._random import is_seed
from dpsk.utils._sklearn_compat import Interval

__all__ = ["RandomForestClassifier", "RandomForestRegressor"]


_N_JOBS_DOC = """n_jobs : int or None, default=None
        Threads that route rows through the trees in ``fit``, ``predict`` and
        ``apply`` (``None``: 1; ``-1``: all CPUs). Workers only route and count: every
        random number (structure, partition, noise) is drawn in the calling thread
        from the fit's generator, so results do not depend on ``n_jobs``."""

_VERBOSE_DOC = """verbose : int, default=0
        At 1 or more, ``fit`` draws a progress bar over the trees as they are assembled
        into ``estimators_`` (tqdm's when installed, the ``progress`` extra; a few plain
        lines on standard error otherwise), after the one pass that counts the data.
        Only the public number of trees is shown. The fit is the same whatever
        ``verbose`` is, with the same noise for the same ``random_state``."""


class _ForestMixin:
    """Number of trees, threads, ``apply``, ``decision_path`` and the sequence protocol of the random forests."""

    def _n_trees(self):
        return int(self.n_estimators)

    def __len__(self):
        """Number of trees in the fitted forest (as scikit-learn's ensembles)."""
        return len(self.estimators_)

    def __getitem__(self, index):
        """The ``index``-th fitted tree."""
        return self.estimators_[index]

    def __iter__(self):
        """Iterate over the fitted trees."""
        return iter(self.estimators_)

    def _tree_random_states(self, n_trees):
        """A ``random_state`` for each tree, as scikit-learn gives its sub-estimators.

        With an int or SeedSequence ``random_state``: distinct ints derived from that seed
        alone (``SeedSequence.spawn``), for reproducible refits of a tree. Otherwise None
        (fresh entropy). Not the noise of this fit: that came from the fit's own
        generator, which these values do not reveal.
        """
        if not is_seed(self.random_state):
            return [None] * n_trees
        root = self.random_state
        if not isinstance(root, np.random.SeedSequence):
            root = np.random.SeedSequence(int(root))
        return [int(child.generate_state(1)[0]) for child in root.spawn(n_trees)]

    def decision_path(self, X):
        """The nodes each row of X goes through in every tree, as scikit-learn's ``decision_path``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        indicator : sparse matrix of shape (n_samples, n_nodes)
            CSR; columns ``n_nodes_ptr[t]:n_nodes_ptr[t + 1]`` are the nodes of tree t.
        n_nodes_ptr : ndarray of shape (n_estimators + 1,)

        Notes
        -----
        **Privacy.** Post-processing of the released trees on the X given here.
        """
        return self._decision_path(X)

    def _n_threads(self):
        return effective_n_jobs(self.n_jobs)

    def _tree_indices(self, n_trees):
        """``range(n_trees)``, drawn as a progress bar at ``verbose >= 1``."""
        if self.verbose:
            return progress(range(n_trees), n_trees, type(self).__name__, unit="tree")
        return range(n_trees)

    def apply(self, X):
        """Index of the leaf (node number in each tree's ``tree_``) each row reaches in each tree.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        X_leaves : ndarray of shape (n_samples, n_estimators), dtype intp
        """
        return self._apply(X)


@Substitution(
    n_jobs=_N_JOBS_DOC,
    verbose=_VERBOSE_DOC,
    epsilon=_shared_docs["epsilon"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    **TREE_DOCS,
)
class RandomForestClassifier(_ForestMixin, BaseRandomTrees):
    """A forest of random decision trees with differential privacy.

    Each tree's splits are drawn at random from the public ``bounds``, without looking
    at the data (Jagannathan, Pillaipakkamnatt & Wright 2009). Each row of the training
    data is sent to one tree, drawn at random; each tree releases the noisy class counts
    of its leaves. The forest costs ε in total, whatever the number of trees: more trees
    see fewer rows each, with the same noise.

    Parameters
    ----------
    n_estimators : int, default=20
        Number of trees. Each sees about ``n_samples / n_estimators`` rows.

    {max_depth}

    evidence_weight : float, default=4.0
        How strongly the trees' combined evidence moves the prediction away from the
        class prior (see Notes): ``min(evidence_weight, n_estimators)`` trees' worth.
        Prediction only: changing it after ``fit`` costs no privacy budget. The default
        gave the best accuracy on Adult and breast cancer (doc/user_guide/trees.rst).

    {epsilon}

    {bounds}

    {classes}

    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as in scikit-learn: a public dict ``{{label: weight}}``
        (missing labels weigh 1) or ``"balanced"`` (class c weighs n / (k · n_c)).
        Applied to the released counts (every leaf's and the class totals), so it is
        post-processing and costs nothing: ``"balanced"`` takes n_c from the forest's
        own noisy ``class_count_``. Weights are divided by their largest when it
        exceeds 1 (only their ratios matter here).

    {n_jobs}

    {verbose}

    {accountant}

    {random_state}

    Attributes
    ----------
    estimators_ : list of DecisionTreeClassifier
        The fitted trees (views of the forest's release). Each predicts from its own
        noisy counts and the forest's ``class_count_``; the forest combines them as
        described in Notes.
    class_weight_ : ndarray of shape (n_classes,) or None
        The weight of each class's counts in the prediction (None without
        ``class_weight``).
    {common_attributes}
    {privacy_spent_}

    See Also
    --------
    dpsk.tree.DecisionTreeClassifier : one random tree.
    sklearn.ensemble.RandomForestClassifier : the non-private estimator.

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row, for public ``bounds`` and ``classes``.
    The structure of every tree is drawn from ``random_state`` and the bounds only. Each
    row draws its tree independently and uniformly (never by position, so adding a row
    moves no other row), and reaches exactly one leaf of that tree: the counts of all
    (tree, leaf, class) cells form one vector of L1 sensitivity 1 (parallel composition
    across trees), released once with exact discrete Laplace noise at 95% of ε (scale
    1/(0.95 ε), whatever the number of trees). The class totals (L1 sensitivity 1) get
    the other 5% (sequential composition, ε in total). Integer noise on integer counts:
    floating-point safe. Rows outside the bounds are routed as if clipped to them.
    Released: the structure and noisy counts of every tree (``estimators_``),
    ``class_count_`` and predictions, all computed from these two releases.
    {weights}
    Domain: finite X, labels in ``classes``, finite, non-negative ``sample_weight``.
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain (:ref:`declared_domain`).

    **Prediction.** With ``π`` the class prior from ``class_count_`` and ``p_t`` the
    class probabilities of the leaf a row reaches in tree t (noisy counts clamped at 0,
    each node smoothed towards its parent with a pseudo-count of ``n_classes`` noise
    standard deviations of that node, the root towards ``π``), the score of a class is
    ``log π + (w / N) Σ_t log(p_t / π)`` with
    ``w = min(evidence_weight, N)``; ``predict_proba`` is its softmax.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.ensemble import RandomForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((5000, 3))
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> clf = RandomForestClassifier(n_estimators=10, max_depth=4, bounds=(0, 1), classes=[0, 1], random_state=0)
    >>> clf.fit(X, y).predict([[0.1, 0.1, 0.5], [0.9, 0.9, 0.5]])
    array([0, 1])
    """

    _parameter_constraints = {
        **TREE_CONSTRAINTS,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "evidence_weight": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
    }

    def __init__(
        self,
        n_estimators=20,
        *,
        max_depth=None,
        evidence_weight=4.0,
        epsilon=1.0,
        bounds=None,
        classes=None,
        class_weight=None,
        n_jobs=None,
        verbose=0,
        accountant=None,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.evidence_weight = evidence_weight
        self.epsilon = epsilon
        self.bounds = bounds
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.accountant = accountant
        self.random_state = random_state

    @property
    def _evidence_weight(self):
        return float(self.evidence_weight)

    def _set_model(self, feature, threshold, noisy, noise_std, class_weight=None):
        # class_weight: post-processing of the forest's own noisy class totals (free).
        self.class_weight_ = class_weights(self.class_weight, self.classes_, self.class_count_)
        super()._set_model(feature, threshold, noisy, noise_std, class_weight=self.class_weight_)

    def _store_trees(self, feature, threshold, noisy, noise_std):
        trees = []
        seeds = self._tree_random_states(noisy.shape[0])
        for t in self._tree_indices(noisy.shape[0]):
            tree = DecisionTreeClassifier(
                max_depth=self.max_depth_,
                epsilon=self.epsilon,
                bounds=self.bounds,
                classes=self.classes,
                random_state=seeds[t],
            )
            tree.classes_, tree.n_classes_ = self.classes_, self.n_classes_
            tree.bounds_, tree.max_depth_ = self.bounds_, self.max_depth_
            tree.n_features_in_ = self.n_features_in_
            tree.class_count_ = self.class_count_
            tree._set_model(
                feature[t : t + 1], threshold[t : t + 1], noisy[t : t + 1], noise_std, class_weight=self.class_weight_
            )
            tree.tree_ = RandomTree(feature[t], threshold[t], noisy[t])
            trees.append(tree)
        self.estimators_ = trees


@Substitution(
    n_jobs=_N_JOBS_DOC,
    verbose=_VERBOSE_DOC,
    epsilon=_shared_docs["epsilon"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    bounds=TREE_DOCS["bounds"],
    **REGRESSOR_DOCS,
)
class RandomForestRegressor(_ForestMixin, BaseRandomTreesRegressor):
    """A forest of random decision trees for regression with differential privacy.

    Each tree's splits are drawn at random from the public ``bounds``, without looking
    at the data (as for :class:`RandomForestClassifier`). Each row of the training data
    is sent to one tree, drawn at random; each tree releases the noisy row counts and
    target sums of its leaves, and the forest averages the trees' leaf means. The
    forest costs ε in total, whatever the number of trees.

    Parameters
    ----------
    n_estimators : int, default=20
        Number of trees. Each sees about ``n_samples / n_estimators`` rows.

    {max_depth}

    {epsilon}

    {bounds}

    {bounds_y}

    {n_jobs}

    {verbose}

    {accountant}

    {random_state}

    Attributes
    ----------
    estimators_ : list of DecisionTreeRegressor
        The fitted trees (views of the forest's release); each predicts its own leaf
        means, the forest their average.
    {common_attributes}
    {privacy_spent_}

    See Also
    --------
    dpsk.tree.DecisionTreeRegressor : one random tree.
    sklearn.ensemble.RandomForestRegressor : the non-private estimator.

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row, for public ``bounds`` and ``bounds_y``.
    The structure of every tree is drawn from ``random_state`` and the bounds only. Each
    row draws its tree independently and uniformly (never by position, so adding a row
    moves no other row) and reaches exactly one leaf of that tree, so the statistics
    of all (tree, leaf) cells have the sensitivity of one tree's (parallel composition
    across trees), whatever the number of trees. {privacy} Rows outside ``bounds`` are
    routed as if clipped to them. Released: the structure, noisy counts and sums of
    every tree (``estimators_``), ``totals_`` and predictions, all computed from the
    one release.
    Domain: finite X and y, finite, non-negative ``sample_weight``. Data outside it
    raise a ``ValueError`` before any noise is drawn, which reveals only that the data
    left the domain (:ref:`declared_domain`).

    {prediction}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.ensemble import RandomForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20000, 1))
    >>> y = 10 * X[:, 0]
    >>> reg = RandomForestRegressor(n_estimators=10, max_depth=4, bounds=(0, 1), bounds_y=(0, 10), random_state=0)
    >>> reg.fit(X, y).predict([[0.1], [0.9]]).round()
    array([1., 9.])
    """

    _parameter_constraints = {
        **{k: v for k, v in TREE_CONSTRAINTS.items() if k != "classes"},
        "bounds_y": [*TARGET_BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_estimators=20,
        *,
        max_depth=None,
        epsilon=1.0,
        bounds=None,
        bounds_y=None,
        n_jobs=None,
        verbose=0,
        accountant=None,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.epsilon = epsilon
        self.bounds = bounds
        self.bounds_y = bounds_y
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.accountant = accountant
        self.random_state = random_state

    def _store_trees(self, feature, threshold, counts, sums):
        trees = []
        seeds = self._tree_random_states(counts.shape[0])
        for t in self._tree_indices(counts.shape[0]):
            tree = DecisionTreeRegressor(
                max_depth=self.max_depth_,
                epsilon=self.epsilon,
                bounds=self.bounds,
                bounds_y=self.bounds_y,
                random_state=seeds[t],
            )
            tree.bounds_, tree.bounds_y_, tree.max_depth_ = self.bounds_, self.bounds_y_, self.max_depth_
            tree.n_rows_ = self.n_rows_
            tree.n_features_in_ = self.n_features_in_
            tree.totals_ = self.totals_
            tree._feature, tree._threshold = feature[t : t + 1], threshold[t : t + 1]
            tree._leaf_values = self._leaf_values[t : t + 1]
            tree.tree_ = self._random_tree(t, feature, threshold, counts, sums)
            trees.append(tree)
        self.estimators_ = trees
