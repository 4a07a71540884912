# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Histogram gradient boosting with differential privacy (one zCDP budget for the whole fit).

Mechanism
=========

Bins: for numeric features, by default (``bin_strategy="quantile"``) edges released by
recursive private medians inside the feature's range (``_boosting_bins``: exact
exponential-mechanism quantiles, a share of the budget, inside the fit's one event), or
equal-width bins of the range (``"uniform"``); the range is the public ``bounds``, or a
box released privately inside the event (``bounds`` left out or ``"private"``).
Categorical features: the (clipped) integer codes. The boosted trees
are complete binary trees of depth ``D`` whose nodes split on *one* feature by a mask
over its bins (``bin <= t`` for numeric features, any set of categories for categorical
ones). Each boosting round adds one tree (with ``K`` outputs per leaf: 1 for regression
and binary classification, ``n_classes`` for multiclass):

1. every row's gradient vector (``K`` entries) is clipped to L2 norm ``clip_gradients``
   and its hessian vector to the loss's public bound ``H``; both are scaled by the row's
   weight and converted to integers on a public fixed-point grid of ``Q`` steps per clip
   (truncation towards zero, so the integers' norm stays within ``Q``);
2. for each level ``l < D``, each node takes ``k`` features (by default one per round:
   feature ``t`` in the first ``d`` rounds, then chosen from released sums only, see
   ``FeatureSchedule``; or ``k`` drawn from the fit's generator, independently of the
   data) and the exact integer sums of gradients and
   hessians of its rows, by node, feature and bin, are released with discrete Gaussian
   noise (``delta > 0``) or discrete Laplace noise (``delta == 0``). A row lies in
   exactly one node of a level and in one bin of each of that node's ``k`` features, so
   the level's release has L2 sensitivity ``sqrt(k) Q`` (gradients) and ``sqrt(k) Q_h``
   (hessians), whatever the number of nodes; each node then chooses its split from the
   *noisy* histograms only (post-processing) and the rows are routed one level down.
   Under the cyclic schedule only level 0 is released: all nodes split the round's
   feature, so a node's histogram is the root's restricted to the bins it holds;
3. the leaves' gradient and hessian sums (sensitivity ``Q`` and ``Q_h``: one leaf per
   row) are released the same way, and the Newton step ``-lr G / (H + λ)`` of the noisy
   sums is the leaf value. Under the cyclic schedule a leaf's rows are exactly those of
   its bins, so the root histogram summed over them is a second, independent estimate
   of the same sums: the two are averaged by inverse variance (``_combine_leaves``,
   post-processing).

With ``thresholds="grid"`` (and ``"auto"``, the default, at finite ε) a cyclic round on a
numeric feature skips step 2: its cuts are public (``grid_masks``: near the middle bin of
each node, staggered from one visit of the feature to the next), and its leaves' sums are
released once with the weight of the round's two releases (the total weight, and so every
other release's noise, unchanged).

An initial "tree" of depth 0 (one leaf, full Newton step) sets the baseline. Before the
trees come the private box and ``bounds_y`` when asked for (their pure-ε share), the row
count of ``max_iter="auto"`` (1% of ε) and the quantile edges (10% of ρ, or of ε with
δ = 0). The trees are
an adaptive composition of ``1 + max_iter (L + 1)`` releases (``L`` = 1 cyclic, else D), each ``Δ² / (2σ²)``-zCDP
(Canonne, Kamath & Steinke 2020), given equal shares of the rest of the budget ``ρ =
zcdp_rho(ε, δ)`` (pure ε: shares of ε, basic composition); everything is recorded as
one event.

Why one feature per node and not all: with all ``d`` features per node a level's
sensitivity is ``sqrt(d)`` times one feature's, so each histogram cell gets ``sqrt(d)``
times the noise. With one feature the noise is smallest but the split is chosen among
one feature's thresholds. The default is DP-EBM's cyclic schedule (every node of
round t on one feature: an additive model of one-feature trees); on Adult and
Friedman #1 at ε = 1 it beat one random feature per node, a third of the features
and all of them (doc/user_guide/boosting.rst, measured with this module). After the
first cycle (round t on feature t) the rounds are shared by the first trees' released
gains (``FeatureSchedule``: post-processing; the kinds of the rounds, and so the
releases, are the cyclic schedule's).
"""

import math
from numbers import Integral, Real

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, RegressorMixin

from dpsk._core._hist_boost import MAX_BINS, bin_features, raw_predictions
from dpsk.accounting import ComposedEvent, note_release
from dpsk.accounting._events import budget_event
from dpsk.base import (
    BOUNDS_CONSTRAINT,
    DP_PARAMETER_CONSTRAINTS,
    TARGET_BOUNDS_CONSTRAINT,
    BaseJointLogLikelihoodClassifier,
    DaskScoreMixin,
    DPEstimatorMixin,
)
from dpsk.dask._data import dask_apply, dask_fit, is_dask
from dpsk.ensemble._boosting_bins import QuantileEdges
from dpsk.ensemble._boosting_plan import (
    CLASSIFIER_CLIP,
    MAX_CELLS,
    MIN_SNR,
    FeatureSchedule,
    _best_split,
    _categorical_mask,
    _n_features_per_node,
    _newton,
    _Noise,
    _quantise,
    auto_learning_rate,
    auto_schedule,
    auto_thresholds,
    grid_masks,
    leaf_gain,
)
from dpsk.ensemble._boosting_rows import MemoryRows, node_sums
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._noisy_count import RowCount
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, PrivateSensitivity, wants_private
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils.validation import _check_sample_weight_dp, release_generator, resolve_bounds, resolve_classes

__all__ = ["HistGradientBoostingClassifier", "HistGradientBoostingRegressor"]

_AUTO = "auto"
#: ``bin_strategy="auto"``: quantile edges (see ``_boosting_bins``).
AUTO_BIN_STRATEGY = "quantile"


def _store_params(estimator, params):
    """``__init__``: store every parameter as given (scikit-learn's contract), one place for both estimators."""
    for name, value in params.items():
        if name != "self":
            setattr(estimator, name, value)


#: Cyclic trees: each leaf's sums also estimated from the round's root histogram (see ``_combine_leaves``).
COMBINE_LEAVES = True
#: ``_combine_leaves``: leave out of the root's estimate the bins whose noisy hessian sum is within
#: ``MIN_SNR`` noise std of 0 (2026-11-26; chosen on a validation split of Adult's training rows).
EMPTY_BINS = True


def _combine_leaves(leaves, root, leaf_bins, noise, scales):
    """Inverse-variance combination of two independent noisy estimates of the leaves' sums (post-processing).

    Under the cyclic schedule a leaf's rows are exactly those whose bin of the round's
    feature it holds, so the sum of the root histogram over the leaf's ``b`` bins is a
    second estimate of the released leaf sums, with ``b`` cells' noise: the weighted
    mean ``(x/σ_l² + y/(b σ_r²)) / (1/σ_l² + 1/(b σ_r²))`` has the smallest variance of
    the unbiased combinations. A leaf without bins has no rows: its sums are 0. A bin whose
    noisy hessian sum is not above ``MIN_SNR`` times its noise (``EMPTY_BINS``: an empty
    category code, or nearly) is left out of the second estimate: it would add its noise
    and little else. Returns the combined ``(G, H)`` and the hessian sums' noise std per
    leaf, ``(n_leaves, 1)``.
    """
    if EMPTY_BINS:
        leaf_bins = leaf_bins & (root[1][0, 0].sum(axis=1) > MIN_SNR * noise.std("h", "level") * scales[1])
    b = leaf_bins.sum(axis=1).astype(np.float64)[:, None]  # (n_leaves, 1)
    out, std_h = [], None
    for part, leaf, cells, scale in zip(("g", "h"), leaves, root, scales):
        derived = leaf_bins.astype(np.float64) @ cells[0, 0]  # (n_leaves, K)
        var_leaf = (noise.std(part, "leaf") * scale) ** 2
        var_root = b * (noise.std(part, "level") * scale) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            weight = np.where(b > 0, var_root / (var_leaf + var_root), 0.0)
            var = np.where(b > 0, var_leaf * var_root / (var_leaf + var_root), 0.0)
        if not var_leaf > 0:  # no noise (ε = ∞): both are the exact sums
            weight, var = np.ones_like(b), np.zeros_like(b)
        out.append(weight * leaf + (1.0 - weight) * derived)
        std_h = np.sqrt(var)
    return out[0], out[1], std_h


class BaseHistGradientBoosting(DPEstimatorMixin, BaseEstimator):
    """The fit shared by the classifier and the regressor: see the module docstring.

    Subclasses give the loss: ``_n_outputs``, ``_encode_y`` (validated y -> targets),
    ``_baseline`` (public starting raw prediction), ``_gradients(raw, target)`` ->
    (gradients, hessians) as ``(n, K)`` arrays, ``_hessian_bound`` and ``_default_clip``.
    """

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({_AUTO})],
        "learning_rate": [Interval(Real, 0, None, closed="neither"), StrOptions({_AUTO})],
        "max_depth": [Interval(Integral, 1, 12, closed="both"), None],
        "max_leaf_nodes": [Interval(Integral, 2, 2**12, closed="both"), None],
        "max_bins": [Interval(Integral, 2, MAX_BINS, closed="both")],
        "max_features": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="right"), None],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "categorical_features": ["array-like", None],
        "bounds": [*BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "bin_strategy": [StrOptions({_AUTO, "uniform", "quantile"})],
        "clip_gradients": [Interval(Real, 0, None, closed="neither"), None],
        "thresholds": [StrOptions({_AUTO, "gain", "grid"})],
    }

    def _depth(self):
        if self.max_leaf_nodes is not None:
            depth = max(1, int(math.floor(math.log2(self.max_leaf_nodes))))
            return depth if self.max_depth is None else min(depth, int(self.max_depth))
        return 3 if self.max_depth is None else int(self.max_depth)

    def _check_X(self, X):
        return validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)

    def _binned(self, X):
        binned = bin_features(X, self.bounds_[0], self.bounds_[1], self.n_bins_, self.is_categorical_)
        for j, edges in enumerate(self.bin_edges_ or ()):
            if edges is not None:  # quantile bins: x <= edges[0] in bin 0, edges[b-1] < x <= edges[b] in bin b
                binned[:, j] = np.searchsorted(edges, X[:, j], side="left")
        return binned

    def _private_box(self, numeric):
        """Whether the numeric columns' box is released privately (``bounds`` left out or "private")."""
        return bool(numeric.any()) and wants_private(self.bounds)

    def _bin_strategy(self, numeric):
        """``bin_strategy_``: "uniform" or "quantile" (``"auto"``: see ``AUTO_BIN_STRATEGY``)."""
        if not numeric.any():
            return "uniform"
        return AUTO_BIN_STRATEGY if self.bin_strategy == _AUTO else self.bin_strategy

    def _check_y(self, y):
        """The validated y before any spend (subclasses: the public checks of the labels)."""
        return y

    def _target_requests(self):
        """Private releases the target needs (the regressor's ``bounds_y``): PrivateSensitivity requests."""
        return {}

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, sample_weight=None):
        """Grow the trees, round by round, from noisy gradient and hessian histograms.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (in ``classes``), or targets (clipped to ``bounds_y``).
        {sample_weight}

        Returns
        -------
        self : object
        """
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        epsilon, delta = float(self.epsilon), float(self.delta)
        self._check_privacy_budget(budget_event(epsilon, delta))
        if is_dask(X, y, sample_weight):  # exact histograms per chunk, the same release (dpsk.dask._boosting)
            return dask_fit(self, X, y, sample_weight=sample_weight)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C", y_numeric=self._y_numeric)
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        n, d = X.shape
        is_categorical = _categorical_mask(self.categorical_features, d, getattr(self, "feature_names_in_", None))
        numeric = ~is_categorical
        y = self._check_y(y)  # public classes / finite targets: may warn, never reads beyond the domain
        # Left out (None) or "private": the numeric columns' box (and bounds_y) released inside the one event.
        requests = {"bounds": ("columns", int(numeric.sum()), None)} if self._private_box(numeric) else {}
        requests.update(self._target_requests())
        plan = PrivateSensitivity(self, epsilon, requests)
        lower, upper = np.zeros(d), np.ones(d)  # private: placeholders, nothing below depends on them
        if numeric.any() and "bounds" not in plan:
            lower, upper = (np.array(b, dtype=np.float64) for b in resolve_bounds(self, self.bounds, X))
        lower[is_categorical], upper[is_categorical] = 0.0, float(self.max_bins)
        depth, k, cyclic, grid = self._schedule(epsilon, d)
        hess_bound = self._hessian_bound()
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight))
        # "auto" rounds: from a noisy row count (its ε share inside the one event).
        count = self._row_count(plan.fit_epsilon, n, rng, needed=self.max_iter == _AUTO)
        strategy = self._bin_strategy(numeric)
        edges, n_iter, lr, grid_rounds, noise, fit_event = self._round_plan(
            count, delta, numeric, strategy, depth, k, cyclic, grid
        )
        plan.spend(self, count.compose(fit_event), rng)
        if "bounds" in plan:
            lower[numeric], upper[numeric] = self._released_box(plan, X[:, numeric])
        target = self._encode_y(y, plan)  # after the spend: a private bounds_y is released here
        released = None
        if strategy == "quantile":
            # Rows of weight 0 contribute nothing (as to the sums); a positive weight counts as one row.
            rows = X[:, numeric] if sample_weight is None else X[sample_weight > 0][:, numeric]
            released = self._released_edges(edges, rows, lower[numeric], upper[numeric], rng)
        clip = self._settle(
            count, lr, noise, (lower, upper), is_categorical, (depth, k, cyclic, grid), strategy, released
        )
        rows = MemoryRows(self, self._binned(X), target, sample_weight, (clip, hess_bound, noise.grid))
        return self._boost(rows, rng, noise, n_iter=n_iter, lr=lr, features_per_node=k, grid_rounds=grid_rounds)

    def _schedule(self, epsilon, d):
        """``(depth, features per node, cyclic, grid)`` from the public parameters (refusals first)."""
        depth = self._depth()
        k = _n_features_per_node(self.max_features, d)
        cyclic = self.max_features is None  # DP-EBM's schedule: round t splits on feature t mod d
        if self.thresholds == "grid" and not cyclic:
            raise ValueError('thresholds="grid" needs the cyclic schedule (max_features=None)')
        thresholds = auto_thresholds(epsilon, cyclic) if self.thresholds == _AUTO else self.thresholds
        if math.isinf(epsilon) and self.max_features is None and thresholds != "grid":
            k, cyclic = d, False  # no noise to save: every feature at every node (non-private boosting)
        grid = cyclic and thresholds == "grid"  # numeric features' cuts public (``grid_masks``)
        if 2 ** (depth - 1) * k * int(self.max_bins) * self._n_outputs > MAX_CELLS:
            raise ValueError("max_depth, max_features, max_bins and the classes give too many histogram cells")
        return depth, k, cyclic, grid

    def _round_plan(self, count, delta, numeric, strategy, depth, k, cyclic, grid):
        """``(edges, n_iter, learning rate, grid rounds, noise, the fit's event)``: public
        parameters and the noisy row count only, before the spend."""
        d, K = numeric.size, self._n_outputs
        edges = QuantileEdges(
            count.fit_epsilon, delta, int(numeric.sum()) if strategy == "quantile" else 0, self.max_bins
        )
        n_levels = 1 if cyclic else depth  # releases of histograms per tree (see ``_boost``)
        n_iter = auto_schedule(count.fit_epsilon, delta, count.value, d, n_levels, K, edges.fraction)[0]
        n_iter = n_iter if self.max_iter == _AUTO else int(self.max_iter)
        lr = auto_learning_rate(n_iter, d) if self.learning_rate == _AUTO else float(self.learning_rate)
        # Rounds on a numeric feature with public cuts (a public schedule): one release of the
        # round's whole weight each.
        grid_rounds = grid & numeric[np.arange(n_iter) % d]
        noise = self._noise_plan(
            count.fit_epsilon, delta, n_iter, n_levels, k, K, edges.fraction, int(grid_rounds.sum())
        )
        fit_event = noise.event if edges.event is None else ComposedEvent((edges.event, noise.event))
        return edges, n_iter, lr, grid_rounds, noise, fit_event

    def _settle(self, count, lr, noise, bounds, is_categorical, schedule, strategy, edges):
        """The fitted settings after the releases of the box and the quantile ``edges`` (one
        array per numeric feature, or None); returns the gradient clip."""
        depth, k, cyclic, grid = schedule
        self.bin_edges_ = None
        if edges is not None:
            self.bin_edges_ = [None] * is_categorical.size
            for j, e in zip(np.flatnonzero(~is_categorical), edges):
                self.bin_edges_[j] = e
        if noise.exact:
            note_release(noise.event)  # the one (noise-free) release
        self.n_rows_, self.learning_rate_ = count.value, lr
        clip = float(self.clip_gradients) if self.clip_gradients is not None else self._default_clip()
        self.bounds_ = bounds
        self.is_categorical_ = is_categorical
        self.n_bins_ = int(self.max_bins)
        self.max_depth_ = depth
        self.max_features_ = k
        self.feature_schedule_ = "cyclic" if cyclic else ("all" if k == is_categorical.size else "random")
        self.thresholds_ = "grid" if grid else "gain"
        self.bin_strategy_ = strategy
        self.clip_gradients_ = clip
        return clip

    def _boost(self, rows, rng, noise, *, n_iter, lr, features_per_node, grid_rounds):
        """The rounds, after the spend and the fitted settings (``max_depth_``, ``n_bins_``,
        ``feature_schedule_``, ...): in memory and on Dask alike, ``rows`` being a
        :class:`~dpsk.ensemble._boosting_rows.MemoryRows` or ``dpsk.dask``'s ``BoostingRows``
        (the exact sums; everything else, the noise included, happens here). Sets the trees."""
        depth, K, n_bins, k = self.max_depth_, self._n_outputs, self.n_bins_, features_per_node
        d, is_categorical = self.is_categorical_.size, self.is_categorical_
        cyclic = self.feature_schedule_ == "cyclic"
        lam = float(self.l2_regularization)
        n_internal, n_leaves = 2**depth - 1, 2**depth
        feature = np.zeros((n_iter, n_internal), dtype=np.intp)
        mask = np.ones((n_iter, n_internal, n_bins), dtype=np.uint8)
        values = np.zeros((n_iter, n_leaves, K))
        leaf_sums = np.zeros((n_iter, n_leaves, K, 2))
        released = []
        scale_g, scale_h = self.clip_gradients_ / noise.grid, self._hessian_bound() / noise.grid

        def sums(kind, tree, levels, features=None, n_bins=1):
            """One release: noisy gradient and hessian sums by node (after ``levels`` levels of
            ``tree``), feature and bin; ``features=None``: the nodes' sums."""
            hg, hh = rows.sums(node_sums, tree, levels, features, n_bins)
            G = noise.release(hg, "g", kind, rng) * scale_g
            H = noise.release(hh, "h", kind, rng) * scale_h
            released.append((G, H))
            return G, H, noise.std("h", kind) * scale_h, (hg * scale_g, hh * scale_h)

        # The baseline: a depth-0 tree, one leaf, a full Newton step.
        rows.reset(self._baseline())
        G, H, std_h, _ = sums("leaf", (feature[0], mask[0]), 0)
        self.baseline_ = self._baseline() + _newton(G[0, 0, 0], H[0, 0, 0], lam, std_h)
        rows.reset(self.baseline_)

        # Cyclic: the feature of each round (public kinds, then released leaf sums: post-processing).
        schedule = FeatureSchedule(grid_rounds, (self.thresholds_ == "grid") & ~is_categorical, lr)
        for t in range(n_iter):
            tree = (feature[t], mask[t])  # views: filled level by level below
            j = schedule.next(t) if cyclic else None
            if grid_rounds[t]:
                # Public cuts (no histogram released); the leaves get the round's whole weight.
                feature[t], mask[t] = j, self._grid_masks(j, depth, schedule.visits[j])
                G, H, std_h, exact = sums("grid", tree, depth)
                G, H = G[:, 0, 0], H[:, 0, 0]
                gain = self._schedule_gain((G, H), exact, (noise.std("g", "grid") * scale_g) ** 2, std_h, lam)
                self._add_tree(t, G, H, std_h, lr, lam, leaf_sums, values)
            else:
                node_bins = np.ones((1, n_bins), dtype=bool)  # cyclic: each node's bins of the round's feature
                for level in range(depth):
                    n_nodes = 2**level
                    if cyclic:  # the round's one feature (``schedule``)
                        features = np.full((n_nodes, 1), j, dtype=np.intp)
                    else:
                        features = self._node_features(rng, n_nodes, d, k)
                    if not cyclic or level == 0:
                        G, H, std_h, exact = sums("level", tree, level, features, n_bins)
                        G, H = self._split_inputs((G, H), exact)
                        root = (G, H)
                    if cyclic:
                        # Every node splits the round's feature: its rows are those whose bin it holds,
                        # so its histogram is the root's restricted to its bins (post-processing).
                        G, H = (part[0][None] * node_bins[:, None, :, None] for part in root)
                    first = n_nodes - 1
                    for m in range(n_nodes):
                        f, left = _best_split(G[m], H[m], is_categorical[features[m]], lam, std_h)
                        feature[t, first + m] = features[m, f]
                        mask[t, first + m] = left
                    if cyclic:
                        left = mask[t, first : first + n_nodes].astype(bool)
                        node_bins = np.stack([node_bins & left, node_bins & ~left], axis=1).reshape(-1, n_bins)
                G, H, std_h, exact = sums("leaf", tree, depth)
                G, H = G[:, 0, 0], H[:, 0, 0]  # (n_leaves, K)
                # The schedule's estimate: from the leaf release alone, whose noise the split choice did
                # not see (the combined sums share the root histogram's).
                gain = self._schedule_gain((G, H), exact, (noise.std("g", "leaf") * scale_g) ** 2, std_h, lam)
                if cyclic and COMBINE_LEAVES:
                    G, H, std_h = _combine_leaves((G, H), root, node_bins, noise, (scale_g, scale_h))
                self._add_tree(t, G, H, std_h, lr, lam, leaf_sums, values)
            if cyclic:
                schedule.observe(j, gain)
            if t + 1 < n_iter:  # the last round's predictions are never read
                rows.update(tree, depth, values[t])

        self._feature, self._mask, self._values = feature, np.ascontiguousarray(mask), values
        self.leaf_sums_ = leaf_sums
        self.n_iter_ = n_iter
        self._released = released
        return self

    @staticmethod
    def _add_tree(t, G, H, std_h, lr, lam, leaf_sums, values):
        """Round t's leaf sums ``(n_leaves, K)`` and leaf values (Newton steps of the noisy sums)."""
        leaf_sums[t, :, :, 0], leaf_sums[t, :, :, 1] = G, H
        values[t] = lr * _newton(G, H, lam, std_h)

    def _grid_masks(self, j, depth, visit):
        """Public cuts of numeric feature j at its ``visit``-th round (``grid_masks``): over the bins
        that can hold rows, from the released quantile edges (post-processing) or all of them."""
        edges = (self.bin_edges_ or [None] * (j + 1))[j]
        n_used = self.n_bins_ if edges is None else min(self.n_bins_, len(edges) + 1)
        return grid_masks(n_used, self.n_bins_, depth, visit)

    # Hooks of the release, one place each (the audits' broken variants override them).
    def _noise_plan(self, epsilon, delta, n_iter, n_levels, k, n_outputs, fraction=1.0, n_grid=0):
        """The noise of every release and the fit's event (see ``_Noise``)."""
        return _Noise(epsilon, delta, n_iter, n_levels, k, n_outputs, fraction, n_grid)

    def _released_edges(self, edges, X, lower, upper, rng):
        """The quantile bin edges of the numeric columns X (``QuantileEdges``, after the spend)."""
        return edges.release(X, lower, upper, rng)

    def _released_box(self, plan, X):
        """The private bounds of the numeric columns X: the plan's release (after the spend)."""
        return plan.box("bounds", X, None)

    def _row_count(self, epsilon, n_rows, rng, *, needed):
        """The row count ``max_iter="auto"`` reads: released with its share of ε (``RowCount``)."""
        return RowCount(epsilon, n_rows, rng, needed=needed)

    def _node_features(self, rng, n_nodes, n_features, k):
        """The ``k`` features of each node of a level without the cyclic schedule: all of them, or
        drawn from the fit's generator; never from the data."""
        if k == n_features:
            return np.tile(np.arange(n_features, dtype=np.intp), (n_nodes, 1))
        return np.stack([rng.permutation(n_features)[:k] for _ in range(n_nodes)]).astype(np.intp)

    def _to_grid(self, values, bound, grid):
        """Per-row vectors clipped to L2 norm ``bound``, as integers on the grid (``_quantise``)."""
        return _quantise(values, bound, grid)

    def _split_inputs(self, noisy, exact):
        """The histograms splits are chosen from: the noisy ones (post-processing)."""
        return noisy

    def _schedule_gain(self, noisy, exact, var_g, std_h, lam):
        """The estimated gain the feature schedule reads: of the released leaf sums (post-processing)."""
        return leaf_gain(*noisy, var_g, std_h, lam)

    def _raw_predict(self, X):
        """Raw scores (n_samples, K) of validated rows X: baseline plus the trees' leaf values."""
        binned = self._binned(X)
        return self.baseline_ + raw_predictions(binned, self._feature, self._mask, self._values, self.max_depth_)


_BOOSTING_DOCS = {
    "head": """max_iter : int or "auto", default="auto"
        Number of boosting rounds (trees). Each round costs its share of the budget:
        more rounds mean more noise per tree. ``"auto"``: a data-independent rule of
        the budget, the depth, the number of features and the number of rows (counted
        privately with 1% of ε, inside the fit's event): as many rounds as keep every
        noisy gradient sum's noise within half the spread of a sum of ``n`` clipped
        gradients, between ``max(10, min(n_features, 50))`` and 200 (200 at ε = ∞; 13
        to 200 on Adult from ε = 0.1 to 2).

    learning_rate : float or "auto", default="auto"
        Shrinkage of every leaf value. ``"auto"``: ``min(1, 3 n_features / max_iter)``,
        a total shrinkage of 3 per feature over the rounds (2 before 2026-11-26; 3 was
        chosen on a validation split of Adult's training rows and on Friedman #1).

    max_depth : int or None, default=None
        Depth of every tree (complete trees: ``2**max_depth`` leaves). ``None``: 3, or
        ``floor(log2(max_leaf_nodes))`` when that is given.

    max_leaf_nodes : int or None, default=None
        Largest number of leaves; the trees are complete, so the depth is
        ``floor(log2(max_leaf_nodes))`` (capped by ``max_depth``).

    max_bins : int, default=32
        Number of bins of every feature (at most 256). Numeric features: see
        ``bin_strategy`` (quantile bins use the largest power of two at most
        ``max_bins``); categorical codes are clipped to ``[0, max_bins - 1]``.

    bin_strategy : {"auto", "uniform", "quantile"}, default="auto"
        How numeric features are cut (the names of scikit-learn's ``KBinsDiscretizer``).
        ``"uniform"``: equal-width bins of the feature's range (``bounds_``).
        ``"quantile"``: bin edges released privately inside the fit's one event, by
        recursive medians: the median of the values in the range, then the median of
        each half, ``floor(log2(max_bins))`` levels, each median an exact
        exponential-mechanism quantile (as :func:`dpsk.stats.quantile`) inside its
        sub-range; stored in ``bin_edges_``. A mass at one value (a feature that is
        mostly 0) then takes one bin and the other values keep the resolution. Rows
        of ``sample_weight`` 0 are left out of the ranks; any positive weight counts 1.
        The edges cost 10% of the budget (of ρ with ``delta > 0``, else of ε), taken from
        the trees. ``"auto"``: ``"quantile"`` (a fixed rule; on a validation split of
        Adult's training rows it gained 0.007 accuracy at ε = 1 and lost 0.004 at ε =
        0.1, see the user guide).

    thresholds : {"auto", "gain", "grid"}, default="auto"
        How the cyclic trees (``max_features=None``) cut numeric features. ``"gain"``:
        each node takes the cut of largest gain on the round's noisy histogram.
        ``"grid"``: public cuts, no histogram released: a node holding the bins ``[lo,
        hi)`` cuts near its middle bin, the cut moved by -2, -1, 0 or +1 bins on
        successive rounds of the feature (staggered, so that the sum of the trees
        resolves finer steps); the round's leaf sums then get the budget of both of its
        releases. Categorical features keep the cuts by gain. Needs
        ``max_features=None``. ``"auto"``: ``"grid"`` under the cyclic schedule with a
        finite ``epsilon``, else ``"gain"`` (a rule of public parameters, chosen on a
        validation split of Adult's training rows, where the public cuts were at least
        as accurate at every ε from 0.1 to 5, and on Friedman #1, where they gained up
        to ε = 1 and lost 0.003 R² at ε = 5; see the user guide). ``"gain"`` was the
        default before 2026-11-26.

    max_features : int, float or None, default=None
        Features drawn at random for each node (an int, or a fraction of the features
        as scikit-learn's): the node's histograms cover these only, and the noise
        grows as the square root of their number. ``None``: DP-EBM's cyclic schedule,
        every node of a round splits on the round's one feature (one histogram per row
        and level, the least noise; see Notes): feature t in the first ``n_features``
        rounds, then, with ``learning_rate_`` below 1, the later rounds shared among the
        features by their first trees' released gains (post-processing); with ``epsilon=inf`` (no noise)
        ``None`` uses every feature at every node, scikit-learn's non-private boosting
        on the same bins.

    l2_regularization : float, default=0.0
        λ of the Newton steps ``-G / (H + λ)``. The noise standard deviation of the
        hessian sum is always added to it (a data-independent amount), so that a noisy
        sum near 0 cannot make a step explode.

    categorical_features : array-like of int, bool or str, or None, default=None
        The categorical features, as scikit-learn's (indices, a boolean mask, or names
        of X's columns). Their values are category codes: rounded down and clipped to
        ``[0, max_bins - 1]``; a node splits them into any two sets of categories.""",
    "privacy": """**Privacy.** (ε, δ)-DP under add/remove-one-row (pure ε-DP with
    ``delta=0``), for ``bounds``{public}. Each row's gradient vector is clipped to L2 norm
    ``clip_gradients`` and its hessian vector to the loss's bound, both scaled by the
    row's weight (clipped to [0, 1]) and truncated onto a fixed-point grid of ``Q``
    integer steps per bound: the sums released are exact integer sums, so their
    sensitivity is that of one row's integers, whatever the floating-point data. In
    each round, every level of the tree (only the first under the cyclic schedule,
    whose deeper levels restrict its histogram) releases the gradient and hessian sums of its
    nodes by feature and bin: a row lies in one node of the level and one bin of each
    of the node's ``k`` features (a public schedule, or drawn from ``random_state``;
    never from the data), so the release has L2 sensitivity ``√k Q`` (L1 ``k √K Q``, ``K`` outputs); splits are
    chosen from these noisy sums only. The leaves' sums (sensitivity ``Q``) give the
    Newton steps (cyclic trees: averaged with the root histogram's cells of the leaf's
    bins, post-processing). With public cuts (``thresholds="grid"``, or ``"auto"``, the
    default, at finite ε) a cyclic round on a numeric feature releases no histogram: its
    cuts are a public function of the round, the feature's number of released bins and
    the depth, and its leaf sums (sensitivity ``Q``) are one release with the weight of the
    two it replaces. ``max_iter="auto"`` first releases a row count (geometric mechanism, 1% of ε), ``bounds`` (and the
    regressor's ``bounds_y``) left out or ``"private"`` a box of the numeric features
    (and of y) (the share of ε for private bounds),
    both composed into the fit's event. ``bin_strategy="quantile"`` (the default)
    releases the numeric features' bin edges first: ``log2(max_bins)`` levels of medians per
    feature, each median an exponential-mechanism selection (score: the distance of
    its rank to the target rank, sensitivity 1) inside the sub-range the earlier
    edges cut; a row lies in one sub-range per level, so a level's selections are a
    parallel composition, and the levels compose sequentially (``p log2(max_bins)``
    levels, ``p`` numeric features), each ε_q-DP and ε_q²/8-zCDP (bounded range), with
    10% of ρ (of ε with ``delta=0``) in all. With ``1 + max_iter (L + 1)`` releases
    (``L`` = 1 cyclic, else the depth), each gets an equal share of the rest of ρ =
    zcdp_rho(ε, δ) with discrete Gaussian noise (Canonne, Kamath & Steinke 2020; 60% to
    gradients, 40% to hessians), and ``privacy_spent_`` composes their zCDP costs into
    one event; with ``delta=0``, of ε with discrete Laplace noise (basic composition). Exact integer
    noise on integer sums: floating-point safe. Released: the bin edges, the structure
    and leaf values of every tree, ``leaf_sums_``, ``baseline_`` and predictions, all
    computed from the noisy releases.
    Domain: finite X{domain}, finite, non-negative ``sample_weight``. Data outside it
    raise a ``ValueError`` before any noise is drawn, which reveals only that the data
    left the domain (:ref:`declared_domain`).""",
    "clip": """clip_gradients : float or None, default=None
        Public bound on the L2 norm of each row's gradient vector; larger gradients are
        clipped. The noise on the gradient sums is proportional to it. ``None``: {default}.""",
    "attributes": """baseline_ : ndarray of shape (n_outputs,)
        Raw prediction before the trees (the public starting point plus one noisy
        Newton step on all rows).
    leaf_sums_ : ndarray of shape (n_rounds, n_leaves, n_outputs, 2)
        Noisy gradient and hessian sums of every leaf (``2**max_depth_``) of every
        tree (``n_iter_``), the leaf values' inputs: the leaves' release (under the
        cyclic schedule, averaged with the root histogram's cells of the leaf's bins by
        inverse variance).
    n_iter_ : int
    learning_rate_ : float
    n_rows_ : float
        The row count the ``"auto"`` rounds used: the noisy count, or the data's own
        (explicit ``max_iter`` or ε = ∞: nothing released).
    max_depth_ : int
    max_features_ : int
        Features per node.
    feature_schedule_ : {"cyclic", "random", "all"}
        How the nodes' features were chosen (all from public information).
    thresholds_ : {"gain", "grid"}
        How the numeric features were cut (``"grid"`` only under the cyclic schedule;
        ``thresholds="auto"`` resolved).
    n_bins_ : int
    bin_strategy_ : {"uniform", "quantile"}
        The strategy used (``"uniform"`` when no feature is numeric).
    bin_edges_ : list of ndarray or None, or None
        ``"quantile"``: the released edges of every numeric feature (sorted, distinct;
        a value ``x <= edges[0]`` is in bin 0, ``edges[b - 1] < x <= edges[b]`` in bin
        ``b``), None for categorical features. ``"uniform"``: None.
    clip_gradients_ : float
    is_categorical_ : ndarray of shape (n_features,), dtype bool
    bounds_ : tuple of ndarray
        The bounds used: given, released privately (left out or ``"private"``), or
        derived from the data with a warning (``"data"``).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.""",
}


@Substitution(
    epsilon=_shared_docs["epsilon"],
    bounds=_shared_docs["bounds_private"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    head=_BOOSTING_DOCS["head"],
    clip=_BOOSTING_DOCS["clip"].format(
        default=(
            "0.7: ``|p - y|`` exceeds it only for rows predicted wrongly with probability above "
            "0.7 (chosen on a validation split of Adult's training rows; 1 before 2026-11-26)"
        )
    ),
    attributes=_BOOSTING_DOCS["attributes"],
    privacy=_BOOSTING_DOCS["privacy"].format(
        public=" (or released privately) and ``classes``", domain=", labels in ``classes``"
    ),
)
class HistGradientBoostingClassifier(BaseHistGradientBoosting, BaseJointLogLikelihoodClassifier):
    """Histogram gradient-boosted trees for classification with differential privacy.

    The private counterpart of scikit-learn's ``HistGradientBoostingClassifier``: the
    features are binned once (private quantile edges by default), and each boosting round grows one
    tree from noisy gradient and hessian histograms of the logistic (binary) or
    softmax (multiclass) loss. The whole fit costs (ε, δ).

    Parameters
    ----------
    {head}

    {epsilon}

    delta : float, default=1e-6
        Privacy parameter δ in [0, 1). ``0`` gives pure ε-DP with Laplace noise, far
        noisier over many rounds; choose δ well below 1/n_samples.

    {bounds}

    {classes}

    {clip}

    {accountant}

    {random_state}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    {attributes}
    {privacy_spent_}

    See Also
    --------
    HistGradientBoostingRegressor : the regressor.
    RandomForestClassifier : random trees; costs less per tree, learns less.
    sklearn.ensemble.HistGradientBoostingClassifier : the non-private estimator.

    Notes
    -----
    {privacy}

    **Features per node.** ``max_features=None`` follows DP-EBM's cyclic rounds: every
    node of a round splits on the round's one feature, so each level's histograms have the
    sensitivity of one row in one histogram and the noise is √d times smaller than
    with all ``d`` features. It beat one random feature per node, a third and all of
    the features on Adult and Friedman #1 at ε = 1 (doc/user_guide/boosting.rst). The
    first ``d`` rounds take the features in order; with a learning rate below 1 the later
    rounds go to the features in proportion to their first trees' estimated gains, from
    released leaf sums only (post-processing: the rounds' kinds, and so the releases and
    the event, are the cyclic schedule's).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.ensemble import HistGradientBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20000, 2))
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> clf = HistGradientBoostingClassifier(max_iter=10, bounds=(0, 1), classes=[0, 1], random_state=0)
    >>> clf.fit(X, y).predict([[0.1, 0.5], [0.9, 0.5]])
    array([0, 1])
    """

    _parameter_constraints = {
        **BaseHistGradientBoosting._parameter_constraints,
        "classes": ["array-like", None],
    }
    _y_numeric = False

    def __init__(
        self,
        *,
        max_iter="auto",
        learning_rate="auto",
        max_depth=None,
        max_leaf_nodes=None,
        max_bins=32,
        max_features=None,
        l2_regularization=0.0,
        categorical_features=None,
        epsilon=1.0,
        delta=1e-6,
        bounds=None,
        bin_strategy="auto",
        thresholds="auto",
        classes=None,
        clip_gradients=None,
        accountant=None,
        random_state=None,
    ):
        _store_params(self, locals())

    def _check_y(self, y):
        classes, y_index = resolve_classes(self, self.classes, y)
        self.classes_, self.n_classes_ = classes, classes.size
        self._n_outputs = 1 if classes.size <= 2 else classes.size
        return y_index

    def _encode_y(self, y_index, plan):
        if self._n_outputs == 1:
            return (y_index == 1).astype(np.float64)[:, None]
        return np.eye(self.classes_.size)[y_index]

    def _baseline(self):
        return np.zeros(self._n_outputs)

    def _default_clip(self):
        return CLASSIFIER_CLIP

    def _hessian_bound(self):
        # p(1 - p) <= 1/4; for K classes, Σ_c h_c² <= max_c h_c · Σ_c h_c <= 1/4.
        return 0.25 if self._n_outputs == 1 else 0.5

    def _gradients(self, raw, target):
        if raw.shape[1] == 1:
            p = expit(raw)
        else:
            p = softmax(raw, axis=1)
        return p - target, p * (1.0 - p)

    def _joint_log_likelihood(self, X):
        raw = self._raw_predict(X)
        if raw.shape[1] == 1:
            raw = np.hstack([np.zeros_like(raw), raw])
        if self.n_classes_ == 1:
            raw = raw[:, :1]
        return raw

    def decision_function(self, X):
        """Raw scores: the log-odds of ``classes_[1]`` (binary) or one score per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk (dpsk.dask)
            return dask_apply(self, "decision_function", X, n_outputs=None if self._n_outputs == 1 else self.n_classes_)
        X = self._check_X(X)
        raw = self._raw_predict(X).astype(X.dtype, copy=False)  # float32 X: float32 scores
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags


@Substitution(
    epsilon=_shared_docs["epsilon"],
    bounds=_shared_docs["bounds_private"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    head=_BOOSTING_DOCS["head"],
    clip=_BOOSTING_DOCS["clip"].format(default="a quarter of the width of ``bounds_y``"),
    attributes=_BOOSTING_DOCS["attributes"],
    privacy=_BOOSTING_DOCS["privacy"].format(public=" and ``bounds_y`` (or released privately)", domain=" and y"),
)
class HistGradientBoostingRegressor(DaskScoreMixin, RegressorMixin, BaseHistGradientBoosting):
    """Histogram gradient-boosted trees for regression (squared error) with differential privacy.

    The private counterpart of scikit-learn's ``HistGradientBoostingRegressor``: the
    features are binned once (private quantile edges by default), and each boosting round grows one
    tree from noisy histograms of the clipped residuals (and of the row counts, the
    hessians of the squared error). The whole fit costs (ε, δ).

    Parameters
    ----------
    {head}

    {epsilon}

    delta : float, default=1e-6
        Privacy parameter δ in [0, 1). ``0`` gives pure ε-DP with Laplace noise, far
        noisier over many rounds; choose δ well below 1/n_samples.

    {bounds}

    bounds_y : tuple (lower, upper), "private", "data" or None, default=None
        Public bounds on the target; values outside are clipped. The starting
        prediction is their middle, and predictions stay inside them. ``"private"``
        (or left out, ``None``): released inside the fit from a noisy logarithmic
        histogram of y (:func:`dpsk.stats.bounds`), with the share of ε for private
        bounds (``bounds_epsilon_share``, 10 %), composed into the fit's one event.
        ``"data"``: the data's range, with a :class:`~dpsk.exceptions.PrivacyLeakWarning`
        (the guarantee no longer holds).

    {clip}

    {accountant}

    {random_state}

    Attributes
    ----------
    bounds_y_ : tuple of float
    {attributes}
    {privacy_spent_}

    See Also
    --------
    HistGradientBoostingClassifier : the classifier.
    RandomForestRegressor : random trees.
    sklearn.ensemble.HistGradientBoostingRegressor : the non-private estimator.

    Notes
    -----
    {privacy}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.ensemble import HistGradientBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20000, 2))
    >>> y = 10 * X[:, 0]
    >>> reg = HistGradientBoostingRegressor(
    ...     max_iter=20, learning_rate=0.5, bounds=(0, 1), bounds_y=(0, 10), random_state=0
    ... )
    >>> reg.fit(X, y).predict([[0.1, 0.5], [0.9, 0.5]]).round()
    array([1., 9.])
    """

    _parameter_constraints = {
        **BaseHistGradientBoosting._parameter_constraints,
        "bounds_y": [*TARGET_BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
    }
    _y_numeric = True

    def __init__(
        self,
        *,
        max_iter="auto",
        learning_rate="auto",
        max_depth=None,
        max_leaf_nodes=None,
        max_bins=32,
        max_features=None,
        l2_regularization=0.0,
        categorical_features=None,
        epsilon=1.0,
        delta=1e-6,
        bounds=None,
        bin_strategy="auto",
        thresholds="auto",
        bounds_y=None,
        clip_gradients=None,
        accountant=None,
        random_state=None,
    ):
        _store_params(self, locals())

    _n_outputs = 1

    def _check_y(self, y):
        return np.asarray(y, dtype=np.float64)

    def _target_requests(self):
        return {"bounds_y": ("columns", 1, None)} if wants_private(self.bounds_y) else {}

    def _encode_y(self, y, plan):
        if "bounds_y" in plan:
            lower, upper = self._released_bounds_y(plan, y[:, None])
        else:
            lower, upper = resolve_bounds(self, self.bounds_y, y[:, None], param="bounds_y", attribute="bounds_y_")
        self.bounds_y_ = (float(lower[0]), float(upper[0]))
        return np.clip(y, *self.bounds_y_)[:, None]

    def _released_bounds_y(self, plan, y):
        """The private bounds of the target (after the spend): the plan's release."""
        return plan.box("bounds_y", y, None)

    def _baseline(self):
        return np.array([self.bounds_y_[0] / 2 + self.bounds_y_[1] / 2])

    def _default_clip(self):
        width = self.bounds_y_[1] - self.bounds_y_[0]
        return width / 4 if width > 0 else 1.0

    def _hessian_bound(self):
        return 1.0

    def _gradients(self, raw, target):
        return raw - target, np.ones_like(raw)

    def predict(self, X):
        """Predicted target of each row (inside ``bounds_y_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk (dpsk.dask)
            return dask_apply(self, "predict", X)
        X = self._check_X(X)
        return np.clip(self._raw_predict(X)[:, 0], *self.bounds_y_).astype(X.dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags
