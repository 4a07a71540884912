# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random regression trees with differential privacy.

The regressors share the structure, the partition and the routing of the classifiers
(:class:`~dpsk.tree._classes.RandomTreesMixin`, ``_classes.py``); their leaves release a
noisy count and a noisy sum of the target centred in the public ``bounds_y``, all leaves
and the totals in one joint lattice-Laplace release.
"""

import math

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from dpsk._core._clip import clip_bounds_1d
from dpsk._core._exact_sums import MAX_EXACT_ROWS
from dpsk.accounting._events import budget_event
from dpsk.base import TARGET_BOUNDS_CONSTRAINT, DaskScoreMixin, DPEstimatorMixin
from dpsk.dask._data import dask_apply, dask_fit, is_dask
from dpsk.mechanisms._joint import Box, JointRelease
from dpsk.tree._classes import (
    DEFAULT_MAX_DEPTH,
    MAX_LEAF_COUNTS,
    TREE_CONSTRAINTS,
    TREE_DOCS,
    RandomTree,
    RandomTreesMixin,
    SingleTreeMixin,
)
from dpsk.tree._sparse_routing import apply_trees, as_csr, tree_votes
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._noisy_count import RowCount
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, private_boxes
from dpsk.utils._random import release_generator
from dpsk.utils._sklearn_compat import _fit_context, check_is_fitted, validate_data
from dpsk.utils._sparse import ACCEPT_SPARSE
from dpsk.utils.validation import _check_sample_weight_dp, _weight_units

__all__ = ["DecisionTreeRegressor"]

#: Budget shares of the regressors' one joint release: leaf counts, leaf sums of the
#: standardised target, and the total count and sum (the prior every tree falls back on).
#: See ``BaseRandomTreesRegressor`` for why.
REGRESSION_SHARES = (0.95 * 0.25, 0.95 * 0.75, 0.05 * 0.25, 0.05 * 0.75)

#: ``max_depth=None``: an average leaf should hold at least this many rows per unit of ε
#: (see ``regression_depth``).
ROWS_PER_LEAF_EPSILON = 4.0


def regression_depth(n_rows, epsilon, n_trees):
    """Default depth of the random tree regressors, from public values and a (noisy) row count.

    ``clip(floor(log2(n ε / (4 T))), 1, 10)`` for ``n`` rows, the ε of the leaves'
    release and ``T`` trees: the deepest complete trees whose average leaf holds
    ``n / (T 2^D) ≥ 4 / ε`` rows, about the Laplace scale of a leaf count
    (``1 / (0.95 · 0.25 ε) ≈ 4.2 / ε``, ``REGRESSION_SHARES``): deeper, most leaves'
    counts are below their noise and fall back on their ancestors. The best depth of
    RandomForestRegressor (20 trees, ε = 1) on synthetic additive, interaction and
    linear targets followed n, not the number of features: 3-5 at 2,000 rows, 6-10 at
    20,000 (benchmarks/results/bench_tree_depth.md); the rule gives 4 and 7. Also
    capped so that the forest's leaf values fit ``MAX_LEAF_COUNTS``. ε = ∞: 10.
    """
    cap = min(DEFAULT_MAX_DEPTH, int(math.floor(math.log2(MAX_LEAF_COUNTS / (2.0 * n_trees)))))
    if math.isinf(epsilon):
        return max(1, cap)
    rows_per_leaf = float(n_rows) * float(epsilon) / (ROWS_PER_LEAF_EPSILON * n_trees)
    depth = math.floor(math.log2(rows_per_leaf)) if rows_per_leaf > 0 else 1
    return int(min(cap, max(1, depth)))


#: The leaf sums are exact integers: a row adds its weight units ``u`` (``1``, or
#: ``floor(w·WEIGHT_GRID)`` <= 2**10) to its leaf's count and ``u·q`` to its sum, ``q =
#: rint(t·2**SUM_BITS)`` for its standardised target ``t`` in [−1, 1] (``|u·q| <= 2**30``).
SUM_BITS = 20
#: Rows per ``np.bincount`` of ``exact_leaf_sums``: float partial sums below 2**52, exact.
_SUM_BLOCK = 2**22


def check_leaf_rows(n_rows, grid):
    """Refuse more rows than the int64 leaf sums hold exactly: ``n·grid·2**SUM_BITS <= 2**62``
    (2**42 rows unweighted, capped at ``MAX_EXACT_ROWS`` = 2**36; 2**32 weighted). Public:
    the shape and whether there are weights, so this error is no release."""
    limit = min(MAX_EXACT_ROWS, 2**62 // (grid * 2**SUM_BITS))
    if n_rows > limit:
        raise ValueError(f"the random tree regressors sum at most {limit} rows exactly here, got {n_rows}")


def exact_leaf_sums(cell, t, units, n_cells):
    """Exact int64 count and sum of every (tree, leaf) cell, in integer units.

    ``counts[c] = Σ u_i`` and ``sums[c] = Σ u_i·rint(t_i·2**SUM_BITS)`` over the rows i in
    cell c (``u_i = 1`` without weights). Every row's terms are integers bounded by the
    row alone (``u_i <= WEIGHT_GRID``, ``|t_i| <= 1``), and integer sums do not depend on
    the order: the statistic of a data set is the sum of its parts' (Dask chunks,
    threads), bitwise. ``np.bincount`` sums floats, exactly here: at most 2**22 rows per
    call, so every partial sum is an integer below 2**52. At most ``check_leaf_rows``
    rows: every sum then stays below 2**62.

    Parameters
    ----------
    cell : ndarray of shape (n_rows,), intp
    t : ndarray of shape (n_rows,), float64 in [−1, 1]
    units : ndarray of shape (n_rows,) of integer floats in [0, WEIGHT_GRID], or None
    n_cells : int

    Returns
    -------
    counts, sums : ndarray of shape (n_cells,), int64
    """
    q = np.rint(np.ldexp(t, SUM_BITS))
    if units is not None:
        q = q * units  # exact: integers below 2**30
    counts = np.zeros(n_cells, dtype=np.int64)
    sums = np.zeros(n_cells, dtype=np.int64)
    for start in range(0, cell.shape[0], _SUM_BLOCK):
        rows = slice(start, start + _SUM_BLOCK)
        weights = None if units is None else units[rows]
        counts += np.rint(np.bincount(cell[rows], weights=weights, minlength=n_cells)).astype(np.int64)
        sums += np.rint(np.bincount(cell[rows], weights=q[rows], minlength=n_cells)).astype(np.int64)
    return counts, sums


def leaf_floats(counts, sums, grid):
    """The values the regressors' release randomises: leaf counts, leaf sums of t, the
    total count and the total sum, from the exact integers of :func:`exact_leaf_sums`.

    Each is one correctly rounded conversion of an exact rational (int64 to float64, then
    exact power-of-two scalings), as the exact kernels' releases (``dpsk._core._exact_sums``,
    step 4): one row moves the exact values by at most 1 each (its weight ``u/grid <= 1``,
    ``|u·q| / (grid·2**SUM_BITS) <= 1``), and ``JointRelease``'s rounding margin covers
    the one rounding.
    """
    scale = float(grid)
    total_count, total_sum = int(counts.sum(dtype=object)), int(sums.sum(dtype=object))
    return [
        counts.astype(np.float64) / scale,
        np.ldexp(sums.astype(np.float64), -SUM_BITS) / scale,
        np.array([float(total_count) / scale]),
        np.array([math.ldexp(float(total_sum), -SUM_BITS) / scale]),
    ]


def smoothed_leaf_means(counts, sums, prior, count_std, sum_std):
    """Mean target of every leaf, each node shrunk towards its parent (post-processing).

    Internal nodes get the sums of their leaves' noisy counts ``c`` and sums ``s`` (of
    the standardised target, in [−1, 1] per row). From the root (shrunk towards
    ``prior``) down, each node's mean is the ridge estimate of ``s ≈ c μ``::

        μ = (c⁺ s + a² μ_parent) / (c⁺² + a²),  clipped to [−1, 1]

    with ``c⁺`` the count clamped at 0 and ``a²`` the variance of the noise of
    ``s − c μ_parent`` at that node, ``k (σ_sum² + μ_parent² σ_count²)`` for a node
    with ``k`` leaves below (at least 1): a node whose count is well above its noise
    keeps ``s / c``; one whose count is below it follows its parent, and so on up to
    the prior. Unlike ``(s + a μ_parent) / (c⁺ + a)``, an empty node adds none of its
    sum's noise to its parent's mean.

    Parameters
    ----------
    counts, sums : ndarray of shape (n_trees, n_leaves)
    prior : float
        In [−1, 1].
    count_std, sum_std : float
        Noise standard deviations of one leaf's count and sum.

    Returns
    -------
    means : ndarray of shape (n_trees, n_leaves)
        In [−1, 1].
    """
    levels = [(counts, sums)]
    while levels[-1][0].shape[1] > 1:
        c, s = levels[-1]
        levels.append((c.reshape(c.shape[0], -1, 2).sum(axis=2), s.reshape(s.shape[0], -1, 2).sum(axis=2)))
    n_leaves = counts.shape[1]
    means = np.full((counts.shape[0], 1), float(prior))
    for i, (c, s) in enumerate(reversed(levels)):
        if i:
            means = np.repeat(means, 2, axis=1)
        a2 = np.maximum((n_leaves / c.shape[1]) * (sum_std**2 + means**2 * count_std**2), 1.0)
        c = np.maximum(c, 0.0)
        means = np.clip((c * s + a2 * means) / (c * c + a2), -1.0, 1.0)
    return means


REGRESSOR_DOCS = {
    "max_depth": """max_depth : int or None, default=None
        Depth of every tree (all trees are complete: 2**max_depth leaves). ``None``:
        ``clip(floor(log2(ñ ε' / (4 T))), 1, 10)`` with ``T`` the number of trees, ``ε'``
        the ε left for the leaves and ``ñ`` the number of rows counted privately with 1%
        of ε inside the fit's event (stored in ``n_rows_``): the deepest trees whose
        average leaf holds at least ``4 / ε'`` rows, about its count's noise
        (:func:`~dpsk.tree._regressor.regression_depth`; 4 at 2,000 rows and 7 at 20,000
        with 20 trees at ε = 1). An explicit depth releases no count.""",
    "bounds_y": """bounds_y : tuple (lower, upper), "private", "data" or None, default=None
        Public bounds on the target; values outside are clipped (never trusted). The
        noise on the leaf sums is proportional to ``(upper - lower) / 2``: choose the
        narrowest range known without looking at the data. ``"private"``: estimated
        inside the fit, as ``bounds``; ``None`` (left out) means the same. ``"data"``
        derives them from the data with a :class:`~dpsk.exceptions.PrivacyLeakWarning`
        (stored in ``bounds_y_``), which breaks the guarantee.""",
    "common_attributes": """totals_ : ndarray of shape (2,)
        Noisy number of training rows and noisy sum of ``y - m`` (``m`` the middle of
        ``bounds_y_``, y clipped), released with 5% of ε: the prior every tree falls back on.
    max_depth_ : int
        The depth used.
    n_rows_ : float
        The number of rows the default depth read: noisy (1% of ε, inside the fit's
        event) with ``max_depth=None``, the data's count (not a release) otherwise.
    bounds_ : tuple of ndarray
        The feature bounds used (given, or derived from the data with a warning).
    bounds_y_ : tuple of float
        The target bounds used (given, or derived from the data with a warning).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.""",
    "privacy": """Each row
    adds 1 to the count of its leaf and ``t = (clip(y) - m) / h`` to its sum, where ``m``
    and ``h`` are the middle and half-width of ``bounds_y`` (``|t| <= 1``: centring
    makes the sensitivity of the sum ``(upper - lower) / 2`` in y's units, not
    ``max(|lower|, |upper|)``), and 1 and ``t`` to the total count and sum. The leaf
    counts, leaf sums, total count and total sum (each of L1 sensitivity 1 in these
    units) are released as one vector with lattice Laplace noise
    (``dpsk.mechanisms._joint.JointRelease``; floating-point safe): 95% of ε to the leaves
    and 5% to the totals (as the classifiers' class totals), each split 1:3 between
    counts and sums (sequential composition, ε in total). Why 1:3: the noise of a leaf
    mean ``s / c`` is about ``√(σ_s² + μ² σ_c²) / c``, smallest for ``ε_s / ε_c =
    (1 / |μ|)^(2/3)`` (``μ`` in units of ``h``), which is 3 at ``|μ| ≈ 0.2``: targets
    well inside a generous public range; it gave the best R² of the shares 0.6, 0.75
    and 0.85 for the sums on Friedman #1 (doc/user_guide/trees.rst). With
    ``sample_weight`` (clipped to [0, 1], rounded down to a multiple of 1/1024) a row
    adds its weight w to its leaf's count and to the total count and ``w·t`` to the
    sums: the sensitivities hold unchanged. The counts and sums are exact integers (t
    rounded to a multiple of 2**-20; :func:`~dpsk.tree._regressor.exact_leaf_sums`),
    converted to float once: the computed values, not only the real-number ones, move
    by at most the sensitivities (the same for any chunking, e.g. on Dask).""",
    "prediction": """**Prediction** (post-processing). Each node of each tree gets the
    noisy counts and sums of its leaves added up; from the root down, a node's mean is
    the ridge estimate ``μ = (c⁺ s + a² μ_parent) / (c⁺² + a²)`` clipped to [−1, 1]
    (``c⁺`` the count clamped at 0, ``a`` the noise standard deviation at that node,
    the root's parent the mean of ``totals_``), so a leaf whose count is below its
    noise falls back on its ancestors (:func:`smoothed_leaf_means`). The prediction is
    ``m + h μ`` of the leaf a row reaches, averaged over the trees: always inside
    ``bounds_y``.""",
}


class BaseRandomTreesRegressor(RandomTreesMixin, DaskScoreMixin, DPEstimatorMixin, RegressorMixin, BaseEstimator):
    """Fit and prediction shared by :class:`DecisionTreeRegressor` and the random forest regressor.

    The structure, the partition of rows between trees and the routing are the
    classifiers' (:class:`RandomTreesMixin`); the release is one joint lattice-Laplace
    vector of leaf counts, leaf sums of the standardised target and their totals.
    """

    def _store_trees(self, feature, threshold, counts, sums):
        """Public fitted attributes describing the trees (``tree_``, ``estimators_``)."""

    def _random_tree(self, t, feature, threshold, counts, sums):
        """``tree_`` of tree t: value columns the noisy counts and sums of ``y - m`` (y's units)."""
        half = self.bounds_y_[1] / 2 - self.bounds_y_[0] / 2
        return RandomTree(feature[t], threshold[t], np.stack([counts[t], sums[t] * half], axis=1))

    def _standardised_targets(self, y, box_y):
        """t = (clip(y) - m) / h, clipped again into [-1, 1] against rounding; 0 for a constant target."""
        half = float(box_y.half_width[0]) if box_y.n_active else 1.0
        t = clip_bounds_1d(y, float(box_y.lower[0]), float(box_y.upper[0]))
        return clip_bounds_1d((t - float(box_y.centre[0])) / half, -1.0, 1.0)

    def _release(self, rng, epsilon=None):
        """The one joint release of (leaf counts, leaf sums, total count, total sum)."""
        epsilon = self.epsilon if epsilon is None else epsilon
        return JointRelease([(1.0, 1.0)] * 4, REGRESSION_SHARES, epsilon=epsilon, delta=0.0, random_state=rng)

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, sample_weight=None):
        """Draw the trees from the bounds and release their noisy leaf counts and sums.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Targets, clipped to ``bounds_y``.
        {sample_weight}

        Returns
        -------
        self : object
        """
        self._check_privacy_budget(budget_event(self.epsilon))
        if is_dask(X, y, sample_weight):  # exact leaf sums per chunk, the same release (dpsk.dask)
            return dask_fit(self, X, y, sample_weight=sample_weight)
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], order="C", y_numeric=True, accept_sparse=ACCEPT_SPARSE
        )
        X = as_csr(X)
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        y = np.ascontiguousarray(y, dtype=np.float64)
        plan, boxes = private_boxes(self, {"bounds": (X, "bounds_"), "bounds_y": (y[:, None], "bounds_y_")})
        (lower, upper), (y_lower, y_upper) = boxes["bounds"], boxes["bounds_y"]
        n_trees = self._n_trees()
        needed = self.max_depth is None
        depth = None if needed else self._depth(X.shape[1], n_trees, 2)  # too many leaves fails here
        n_threads = self._n_threads()  # invalid n_jobs fails here, before any spend
        units, grid = _weight_units(sample_weight)
        check_leaf_rows(X.shape[0], grid)
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight))
        count, depth, structure, release, sizes = self._spend_leaf_release(
            plan, rng, X.shape[0], n_trees, depth, lower, upper
        )
        if plan.requests:  # the trees are drawn in the released box
            lower, upper = plan.box("bounds", X, (lower, upper))
            y_lower, y_upper = plan.box("bounds_y", y[:, None], (y_lower, y_upper))
            structure = self._structure(rng, n_trees, depth, lower, upper)
        box_y = Box(y_lower, y_upper)
        part = self._parts(rng, n_trees, X.shape[0])
        counts, sums = self._leaf_sums(X, y, units, part, *structure, depth, box_y, n_threads=n_threads)
        return self._fit_leaves(
            counts, sums, grid, release, sizes, structure, depth, (lower, upper), box_y, count.value
        )

    def _spend_leaf_release(self, plan, rng, n_rows, n_trees, depth, lower, upper):
        """The noisy row count (``max_depth=None``), the depth, the structure (None while
        the bounds are still to be released), the leaves' release and its one spend, in
        the Generator's order (in memory and on Dask)."""
        # max_depth=None: the depth from a noisy row count (its ε share inside the one event).
        count = self._row_count(plan.fit_epsilon, n_rows, rng, needed=depth is None)
        if depth is None:
            depth = regression_depth(count.value, count.fit_epsilon, n_trees)
        structure = None if plan.requests else self._structure(rng, n_trees, depth, lower, upper)
        release = self._release(rng, epsilon=count.fit_epsilon)
        n_cells = n_trees * 2**depth
        sizes = (n_cells, n_cells, 1, 1)
        plan.spend(self, count.compose(release.privacy_event(sizes)), rng)
        return count, depth, structure, release, sizes

    def _leaf_sums(self, X, y, units, part, feature, threshold, depth, box_y, *, n_threads=None):
        """The exact statistic of the release: int64 leaf counts and sums of the rows
        (:func:`exact_leaf_sums`), for the whole data in memory or one Dask chunk."""
        if part is None:
            part = np.zeros(X.shape[0], dtype=np.intp)
        cell = part * 2**depth + apply_trees(X, feature, threshold, depth, part=part, n_threads=n_threads)
        t = self._standardised_targets(np.asarray(y, dtype=np.float64), box_y)
        return exact_leaf_sums(cell, t, units, feature.shape[0] * 2**depth)

    def _fit_leaves(self, counts, sums, grid, release, sizes, structure, depth, bounds, box_y, n_rows):
        """The release of the exact leaf statistics and the fitted model (in memory and on Dask)."""
        feature, threshold = structure
        values = leaf_floats(counts, sums, grid)
        noisy_counts, noisy_sums, total_count, total_sum = release.randomise(values)
        self.bounds_ = bounds
        self.bounds_y_ = (float(box_y.lower[0]), float(box_y.upper[0]))
        self.max_depth_ = depth
        self.n_rows_ = n_rows
        self.totals_ = np.array([total_count[0], total_sum[0] * float(box_y.half_width[0])])
        shape = (feature.shape[0], 2**depth)
        self._set_model(
            feature,
            threshold,
            noisy_counts.reshape(shape),
            noisy_sums.reshape(shape),
            total_count[0],
            total_sum[0],
            [release.noise_std(i, sizes) for i in range(4)],
        )
        self._store_trees(feature, threshold, noisy_counts.reshape(shape), noisy_sums.reshape(shape))
        return self

    def _row_count(self, epsilon, n_rows, rng, *, needed):
        """The row count ``max_depth=None`` reads: released with its share of ε (``RowCount``)."""
        return RowCount(epsilon, n_rows, rng, needed=needed)

    def _set_model(self, feature, threshold, counts, sums, total_count, total_sum, noise_std):
        """Leaf predictions from the noisy counts and sums (post-processing); ``noise_std``
        of a leaf count, a leaf sum, the total count and the total sum."""
        self._feature, self._threshold = feature, threshold
        prior = smoothed_leaf_means(np.array([[total_count]]), np.array([[total_sum]]), 0.0, *noise_std[2:])[0, 0]
        means = smoothed_leaf_means(counts, sums, prior, *noise_std[:2])
        lower, upper = self.bounds_y_
        centre, half = lower / 2 + upper / 2, upper / 2 - lower / 2
        self._leaf_values = np.ascontiguousarray(np.clip(centre + half * means, lower, upper)[:, :, None])

    def predict(self, X):
        """Predicted target of each row: the mean of its leaves' values over the trees.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
            In X's dtype; always inside ``bounds_y_``.
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk
            return dask_apply(self, "predict", X)
        X = self._check_X(X)
        n_trees = self._feature.shape[0]
        votes = tree_votes(
            X, self._feature, self._threshold, self.max_depth_, self._leaf_values, n_threads=self._n_threads()
        )
        lower, upper = self.bounds_y_
        return np.clip(votes[:, 0] / n_trees, lower, upper).astype(X.dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags


@Substitution(
    epsilon=_shared_docs["epsilon"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    bounds=TREE_DOCS["bounds"],
    **REGRESSOR_DOCS,
)
class DecisionTreeRegressor(SingleTreeMixin, BaseRandomTreesRegressor):
    """A random decision tree regressor with differential privacy.

    The tree's splits (a feature and a threshold per node) are drawn at random from the
    public ``bounds``, without looking at the data (as for
    :class:`DecisionTreeClassifier`); the data only determines the noisy row counts and
    target sums of the leaves. For accuracy, use
    :class:`dpsk.ensemble.RandomForestRegressor`, which averages many such trees for the
    same budget.

    Parameters
    ----------
    {max_depth}

    {epsilon}

    {bounds}

    {bounds_y}

    {accountant}

    {random_state}

    Attributes
    ----------
    tree_ : RandomTree
        The structure and the release: ``tree_.value[:, 0]`` the noisy counts,
        ``tree_.value[:, 1]`` the noisy sums of ``y - m`` (``m`` the middle of
        ``bounds_y_``), summed up the tree for internal nodes.
    {common_attributes}
    {privacy_spent_}

    See Also
    --------
    dpsk.ensemble.RandomForestRegressor : many random trees, one budget.
    sklearn.tree.DecisionTreeRegressor : the non-private (greedy) estimator.

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row, for public ``bounds`` and ``bounds_y``.
    The structure is drawn from ``random_state`` and the bounds only; each row reaches
    exactly one leaf. {privacy} Rows outside ``bounds`` are routed as if clipped to
    them. Released: ``tree_``, ``totals_`` and predictions, all computed from the one
    release.
    Domain: finite X and y, finite, non-negative ``sample_weight``. Data outside it
    raise a ``ValueError`` before any noise is drawn, which reveals only that the data
    left the domain (:ref:`declared_domain`).

    {prediction}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.tree import DecisionTreeRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((5000, 1))
    >>> y = np.where(X[:, 0] > 0.5, 8.0, 2.0)
    >>> reg = DecisionTreeRegressor(max_depth=3, bounds=(0, 1), bounds_y=(0, 10), random_state=0)
    >>> reg.fit(X, y).predict([[0.05], [0.95]]).round()
    array([2., 8.])
    """

    #: Where the class was defined before a refactor: seeded noise stays the same (``dpsk.utils._random``).
    _release_name = "dpsk.tree._classes.DecisionTreeRegressor"

    _parameter_constraints = {
        **{k: v for k, v in TREE_CONSTRAINTS.items() if k != "classes"},
        "bounds_y": [*TARGET_BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
    }

    def __init__(self, *, max_depth=None, epsilon=1.0, bounds=None, bounds_y=None, accountant=None, random_state=None):
        self.max_depth = max_depth
        self.epsilon = epsilon
        self.bounds = bounds
        self.bounds_y = bounds_y
        self.accountant = accountant
        self.random_state = random_state

    def _store_trees(self, feature, threshold, counts, sums):
        self.tree_ = self._random_tree(0, feature, threshold, counts, sums)
