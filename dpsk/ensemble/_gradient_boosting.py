# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Histogram gradient boosting with differential privacy (one zCDP budget for the whole fit).

Mechanism
=========

Bins come from public information only: equal-width bins of the public ``bounds`` for
numeric features, the (clipped) integer codes for categorical ones. The boosted trees
are complete binary trees of depth ``D`` whose nodes split on *one* feature by a mask
over its bins (``bin <= t`` for numeric features, any set of categories for categorical
ones). Each boosting round adds one tree (with ``K`` outputs per leaf: 1 for regression
and binary classification, ``n_classes`` for multiclass):

1. every row's gradient vector (``K`` entries) is clipped to L2 norm ``clip_gradients``
   and its hessian vector to the loss's public bound ``H``; both are scaled by the row's
   weight and converted to integers on a public fixed-point grid of ``Q`` steps per clip
   (truncation towards zero, so the integers' norm stays within ``Q``);
2. for each level ``l < D``, each node takes ``k`` features (feature ``t mod d`` in
   round t by default; or ``k`` drawn from the fit's generator, independently of the
   data) and the exact integer sums of gradients and
   hessians of its rows, by node, feature and bin, are released with discrete Gaussian
   noise (``delta > 0``) or discrete Laplace noise (``delta == 0``). A row lies in
   exactly one node of a level and in one bin of each of that node's ``k`` features, so
   the level's release has L2 sensitivity ``sqrt(k) Q`` (gradients) and ``sqrt(k) Q_h``
   (hessians), whatever the number of nodes; each node then chooses its split from the
   *noisy* histograms only (post-processing) and the rows are routed one level down;
3. the leaves' gradient and hessian sums (sensitivity ``Q`` and ``Q_h``: one leaf per
   row) are released the same way, and the Newton step ``-lr G / (H + λ)`` of the noisy
   sums is the leaf value.

An initial "tree" of depth 0 (one leaf, full Newton step) sets the baseline. The fit is
an adaptive composition of ``1 + max_iter (D + 1)`` releases, each ``Δ² / (2σ²)``-zCDP
(Canonne, Kamath & Steinke 2020), given equal shares of the budget ``ρ = zcdp_rho(ε, δ)``
(pure ε: shares of ε, basic composition), and recorded as one event.

Why one feature per node and not all: with all ``d`` features per node a level's
sensitivity is ``sqrt(d)`` times one feature's, so each histogram cell gets ``sqrt(d)``
times the noise. With one feature the noise is smallest but the split is chosen among
one feature's thresholds. The default is DP-EBM's cyclic schedule (every node of
round t on feature ``t mod d``: an additive model of one-feature trees); on Adult and
Friedman #1 at ε = 1 it beat one random feature per node, a third of the features
and all of them (doc/user_guide/boosting.rst, measured with this module). The rule
depends on the parameters only, never on the data.
"""

import math
from numbers import Integral, Real

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, RegressorMixin

from dpsk._core._hist_boost import MAX_BINS, bin_features, node_histograms, raw_predictions, route
from dpsk._core._noise import add_gaussian_lattice, add_laplace_lattice
from dpsk.accounting import ComposedEvent, PureDPEvent, SelfComposedEvent, ZCDPEvent, note_release
from dpsk.accounting._calibration import round_up, zcdp_rho
from dpsk.accounting._events import budget_event
from dpsk.base import (
    BOUNDS_CONSTRAINT,
    DP_PARAMETER_CONSTRAINTS,
    TARGET_BOUNDS_CONSTRAINT,
    BaseJointLogLikelihoodClassifier,
    DPEstimatorMixin,
)
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._sklearn_compat import Interval, _fit_context, check_is_fitted, validate_data
from dpsk.utils.validation import _check_sample_weight_dp, release_generator, resolve_bounds, resolve_classes

__all__ = ["HistGradientBoostingClassifier", "HistGradientBoostingRegressor"]

#: Largest fixed-point grid: a clipped gradient is at most 2**12 integer steps.
MAX_GRID = 2**12
#: Largest noise standard deviation in integer steps (the exact samplers' comfortable range).
MAX_NOISE_STEPS = 2.0**22
#: Share of each release's budget that goes to the gradient sums (the rest to the hessians).
GRADIENT_SHARE = 0.6
#: Budget of a leaf release relative to a level's histograms (see ``_Noise``).
LEAF_WEIGHT = 1.0
#: A split is a candidate when both sides' noisy hessian sums exceed this many noise std.
MIN_SNR = 2.0
#: Added to every Newton denominator (0/0 without noise and regularisation).
_TINY = 1e-12
#: Largest number of released histogram cells per level (memory guard).
MAX_CELLS = 2**26


def _n_features_per_node(max_features, n_features):
    """k: features drawn per node, from the public ``max_features`` and number of features (None: 1)."""
    if max_features is None:
        return 1
    if isinstance(max_features, Integral):
        return int(min(max(max_features, 1), n_features))
    return int(min(n_features, max(1, math.ceil(float(max_features) * n_features))))


def _categorical_mask(categorical_features, n_features, feature_names):
    """Boolean mask of the categorical features from sklearn's ``categorical_features`` forms."""
    mask = np.zeros(n_features, dtype=bool)
    if categorical_features is None:
        return mask
    cats = np.asarray(categorical_features)
    if cats.size == 0:
        return mask
    if cats.dtype.kind == "b":
        if cats.shape != (n_features,):
            raise ValueError(f"categorical_features as a boolean mask must have shape ({n_features},)")
        return cats.astype(bool)
    if cats.dtype.kind in "US O":
        if feature_names is None:
            raise ValueError("categorical_features given by name needs X with feature names")
        names = list(feature_names)
        for name in cats:
            if name not in names:
                raise ValueError(f"categorical feature {name!r} is not a feature of X")
            mask[names.index(name)] = True
        return mask
    idx = cats.astype(np.intp)
    if idx.min() < 0 or idx.max() >= n_features:
        raise ValueError(f"categorical_features indices must be in [0, {n_features})")
    mask[idx] = True
    return mask


class _Noise:
    """The budget plan of one fit: the noise of each release and the fit's one event.

    Every release is a pair of noisy sums: gradients (integer L2 sensitivity ``√k Q``
    for a level's histograms, ``Q`` for leaves; L1 ``k √K Q`` and ``√K Q``) and hessians
    (the same with ``Q_h``). A level release has weight 1, a leaf release (and the
    baseline) weight ``LEAF_WEIGHT``; a release of weight ``w`` gets ``w / W`` of the
    budget (ρ = zcdp_rho(ε, δ) with discrete Gaussian noise, or ε with discrete Laplace
    noise), ``W`` the total weight of the fit, and its gradient sums ``GRADIENT_SHARE``
    of that. σ (or the Laplace scale) is rounded up, so each release costs at most its
    share and the composition at most the budget. ``event`` composes the exact cost of
    every release, known before the data is read; each release notes its own.
    """

    def __init__(self, epsilon, delta, n_iter, depth, k, n_outputs):
        self.exact = math.isinf(epsilon)
        self.gaussian = delta > 0
        self.grid = MAX_GRID
        self.weight = {"level": 1.0, "leaf": LEAF_WEIGHT}
        self.spread = {"level": math.sqrt(k) if self.gaussian else float(k), "leaf": 1.0}
        if self.exact:
            self.event = budget_event(epsilon)
            return
        total_weight = LEAF_WEIGHT + n_iter * (depth + LEAF_WEIGHT)  # the baseline counts as a leaf release
        shares = {"g": GRADIENT_SHARE, "h": 1.0 - GRADIENT_SHARE}
        if self.gaussian:
            rho = zcdp_rho(epsilon, delta) / total_weight
            # σ per unit of L2 sensitivity and weight: Δ²/(2σ²) = share · w · ρ / W.
            self.unit = {part: 1.0 / math.sqrt(2.0 * share * rho) for part, share in shares.items()}
        else:
            # Laplace scale per unit of L2 sensitivity and weight: the L1 norm of K entries
            # is at most √K times their L2 norm, and Δ₁/b = share · w · ε / W.
            self.unit = {
                part: math.sqrt(n_outputs) * total_weight / (share * epsilon) for part, share in shares.items()
            }
        self.root_k = math.sqrt(n_outputs)
        largest = max(self.unit.values()) * self.spread["level"] / self._per_weight(min(1.0, LEAF_WEIGHT))
        # The grid: as fine as MAX_GRID allows while the noise stays in the exact samplers' range.
        self.grid = int(min(MAX_GRID, 2 ** max(0, math.floor(math.log2(MAX_NOISE_STEPS / largest)))))
        level = (self.event_of("g", "level"), self.event_of("h", "level"))
        leaf = (self.event_of("g", "leaf"), self.event_of("h", "leaf"))
        tree = ComposedEvent(level * depth + leaf)
        self.event = ComposedEvent((*leaf, SelfComposedEvent(tree, n_iter)))

    def _per_weight(self, weight):
        return math.sqrt(weight) if self.gaussian else weight

    def sigma(self, part, kind):
        """Noise std (Gaussian) or scale (Laplace) in grid steps of one release."""
        return round_up(self.unit[part] * self.spread[kind] * self.grid / self._per_weight(self.weight[kind]))

    def event_of(self, part, kind):
        """The exact cost of one release of ``part`` ("g" or "h") sums of this kind ("level" or "leaf")."""
        sigma = self.sigma(part, kind)
        if self.gaussian:
            sensitivity = self.spread[kind] * self.grid  # L2, in grid steps
            return ZCDPEvent(round_up(sensitivity**2 / (2.0 * sigma**2)))
        return PureDPEvent(round_up(self.spread[kind] * self.root_k * self.grid / sigma))

    def std(self, part, kind):
        """Noise standard deviation of one sum, in grid steps."""
        if self.exact:
            return 0.0
        sigma = self.sigma(part, kind)
        return sigma if self.gaussian else math.sqrt(2.0) * sigma

    def release(self, values, part, kind, rng):
        """Noisy float copy of the integer sums ``values`` (grid steps): one release, noted."""
        out = np.array(values, dtype=np.float64).ravel()
        if self.exact:
            return out.reshape(np.shape(values))
        if self.gaussian:
            add_gaussian_lattice(out, self.sigma(part, kind), 1.0, rng)
        else:
            add_laplace_lattice(out, self.sigma(part, kind), 1.0, rng)
        note_release(self.event_of(part, kind))
        return out.reshape(np.shape(values))


def _quantise(values, norm_bound, grid):
    """Integer steps of row vectors: clipped to L2 norm ``norm_bound``, then ``grid`` steps per bound.

    Truncation towards zero after a scale just below ``grid / norm_bound`` keeps every
    row's integer vector within L2 norm ``grid`` (and each entry within ``grid``), float
    rounding of the scale included.
    """
    norms = np.sqrt(np.einsum("ij,ij->i", values, values))
    factor = np.minimum(1.0, norm_bound / np.maximum(norms, np.finfo(np.float64).tiny))
    scaled = values * (factor * (grid * (1.0 - 2.0**-20) / norm_bound))[:, None]
    return np.ascontiguousarray(np.trunc(scaled), dtype=np.int64)


class BaseHistGradientBoosting(DPEstimatorMixin, BaseEstimator):
    """The fit shared by the classifier and the regressor: see the module docstring.

    Subclasses give the loss: ``_n_outputs``, ``_encode_y`` (validated y -> targets),
    ``_baseline`` (public starting raw prediction), ``_gradients(raw, target)`` ->
    (gradients, hessians) as ``(n, K)`` arrays, ``_hessian_bound`` and ``_default_clip``.
    """

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_depth": [Interval(Integral, 1, 12, closed="both"), None],
        "max_leaf_nodes": [Interval(Integral, 2, 2**12, closed="both"), None],
        "max_bins": [Interval(Integral, 2, MAX_BINS, closed="both")],
        "max_features": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="right"), None],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "categorical_features": ["array-like", None],
        "bounds": BOUNDS_CONSTRAINT,
        "clip_gradients": [Interval(Real, 0, None, closed="neither"), None],
    }

    def _depth(self):
        if self.max_leaf_nodes is not None:
            depth = max(1, int(math.floor(math.log2(self.max_leaf_nodes))))
            return depth if self.max_depth is None else min(depth, int(self.max_depth))
        return 3 if self.max_depth is None else int(self.max_depth)

    def _check_X(self, X):
        return validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)

    def _binned(self, X):
        return bin_features(X, self.bounds_[0], self.bounds_[1], self.n_bins_, self.is_categorical_)

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
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C", y_numeric=self._y_numeric)
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        n, d = X.shape
        is_categorical = _categorical_mask(self.categorical_features, d, getattr(self, "feature_names_in_", None))
        if is_categorical.all():
            lower, upper = np.zeros(d), np.full(d, float(self.max_bins))
        else:
            lower, upper = resolve_bounds(self, self.bounds, X)
            lower, upper = np.array(lower, dtype=np.float64), np.array(upper, dtype=np.float64)
        lower[is_categorical], upper[is_categorical] = 0.0, float(self.max_bins)
        target = self._encode_y(y)  # public classes / bounds_y: may warn, never reads beyond the domain
        K = self._n_outputs
        depth = self._depth()
        k = _n_features_per_node(self.max_features, d)
        cyclic = self.max_features is None  # DP-EBM's schedule: round t splits on feature t mod d
        if math.isinf(epsilon) and self.max_features is None:
            k, cyclic = d, False  # no noise to save: every feature at every node (non-private boosting)
        if 2 ** (depth - 1) * k * int(self.max_bins) * K > MAX_CELLS:
            raise ValueError("max_depth, max_features, max_bins and the classes give too many histogram cells")
        n_iter = int(self.max_iter)
        noise = self._noise_plan(epsilon, delta, n_iter, depth, k, K)
        clip = float(self.clip_gradients) if self.clip_gradients is not None else self._default_clip()
        hess_bound = self._hessian_bound()
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight))
        self._spend_privacy_budget(noise.event)
        if noise.exact:
            note_release(noise.event)  # the one (noise-free) release

        self.bounds_ = (lower, upper)
        self.is_categorical_ = is_categorical
        self.n_bins_ = int(self.max_bins)
        self.max_depth_ = depth
        self.max_features_ = k
        self.feature_schedule_ = "cyclic" if cyclic else ("all" if k == d else "random")
        self.clip_gradients_ = clip
        binned = self._binned(X)
        weight = None if sample_weight is None else sample_weight[:, None]
        lam = float(self.l2_regularization)
        lr = float(self.learning_rate)
        n_internal = 2**depth - 1
        feature = np.zeros((n_iter, n_internal), dtype=np.intp)
        mask = np.ones((n_iter, n_internal, self.n_bins_), dtype=np.uint8)
        values = np.zeros((n_iter, 2**depth, K))
        leaf_sums = np.zeros((n_iter, 2**depth, K, 2))
        raw = np.tile(self._baseline(), (n, 1))
        released = []

        scale_g, scale_h = clip / noise.grid, hess_bound / noise.grid

        def grid_sums():
            """Every row's clipped, weighted gradient and hessian, as integers on the grid (per round)."""
            g, h = self._gradients(raw, target)
            if weight is not None:
                g, h = g * weight, h * weight
            return self._to_grid(g, clip, noise.grid), self._to_grid(h, hess_bound, noise.grid)

        def sums(bins, node, features, n_bins, kind):
            """One release: noisy gradient and hessian sums by node, feature and bin."""
            hg, hh = node_histograms(bins, node, features, g_int, h_int, n_bins)
            G = noise.release(hg, "g", kind, rng) * scale_g
            H = noise.release(hh, "h", kind, rng) * scale_h
            released.append((G, H))
            return G, H, noise.std("h", kind) * scale_h, (hg * scale_g, hh * scale_h)

        # Leaves are nodes with one "feature" of a single bin: their sums (sensitivity of one row).
        one_bin = np.zeros((n, 1), dtype=np.uint8)
        # The baseline: a depth-0 tree, one leaf, a full Newton step.
        g_int, h_int = grid_sums()
        G, H, std_h, _ = sums(one_bin, np.zeros(n, dtype=np.intp), np.zeros((1, 1), dtype=np.intp), 1, "leaf")
        self.baseline_ = self._baseline() + _newton(G[0, 0, 0], H[0, 0, 0], lam, std_h)
        raw = np.tile(self.baseline_, (n, 1))

        for t in range(n_iter):
            node = np.zeros(n, dtype=np.intp)
            g_int, h_int = grid_sums()  # the model is fixed during a round
            for level in range(depth):
                n_nodes = 2**level
                features = self._node_features(rng, t, n_nodes, d, k, cyclic)
                G, H, std_h, exact = sums(binned, node, features, self.n_bins_, "level")
                G, H = self._split_inputs((G, H), exact)
                first = n_nodes - 1
                for m in range(n_nodes):
                    f, left = _best_split(G[m], H[m], is_categorical[features[m]], lam, std_h)
                    feature[t, first + m] = features[m, f]
                    mask[t, first + m] = left
                route(
                    binned,
                    node,
                    np.ascontiguousarray(feature[t, first : first + n_nodes]),
                    mask[t, first : first + n_nodes],
                )
            n_leaves = 2**depth
            G, H, std_h, _ = sums(one_bin, node, np.zeros((n_leaves, 1), dtype=np.intp), 1, "leaf")
            G, H = G[:, 0, 0], H[:, 0, 0]  # (n_leaves, K)
            leaf_sums[t, :, :, 0], leaf_sums[t, :, :, 1] = G, H
            values[t] = lr * _newton(G, H, lam, std_h)
            raw = raw + values[t][node]

        self._feature, self._mask, self._values = feature, np.ascontiguousarray(mask), values
        self.leaf_sums_ = leaf_sums
        self.n_iter_ = n_iter
        self._released = released
        return self

    # Hooks of the release, one place each (the audits' broken variants override them).
    def _noise_plan(self, epsilon, delta, n_iter, depth, k, n_outputs):
        """The noise of every release and the fit's event (see ``_Noise``)."""
        return _Noise(epsilon, delta, n_iter, depth, k, n_outputs)

    def _node_features(self, rng, round_, n_nodes, n_features, k, cyclic):
        """The ``k`` features of each node of a level: the public cyclic schedule, or drawn from
        the fit's generator; never from the data."""
        if cyclic:
            return np.full((n_nodes, 1), round_ % n_features, dtype=np.intp)
        if k == n_features:
            return np.tile(np.arange(n_features, dtype=np.intp), (n_nodes, 1))
        return np.stack([rng.permutation(n_features)[:k] for _ in range(n_nodes)]).astype(np.intp)

    def _to_grid(self, values, bound, grid):
        """Per-row vectors clipped to L2 norm ``bound``, as integers on the grid (``_quantise``)."""
        return _quantise(values, bound, grid)

    def _split_inputs(self, noisy, exact):
        """The histograms splits are chosen from: the noisy ones (post-processing)."""
        return noisy

    def _raw_predict(self, X):
        """Raw scores (n_samples, K) of validated rows X: baseline plus the trees' leaf values."""
        binned = self._binned(X)
        return self.baseline_ + raw_predictions(binned, self._feature, self._mask, self._values, self.max_depth_)


def _newton(G, H, lam, std_h):
    """Newton step ``-G / (H⁺ + λ + σ_H)`` of noisy sums (post-processing): the hessian's noise
    std is added to the regularisation, so that a sum below its noise cannot blow the step up."""
    return -G / (np.maximum(H, 0.0) + lam + std_h + _TINY)


def _best_split(G, H, categorical, lam, std_h):
    """Feature (index among the node's k) and left mask of the best split by noisy gain (post-processing).

    ``G``, ``H``: noisy histograms of shape ``(k, n_bins, K)``. The gain of a split is
    ``Σ_c G_L²/(H_L + λ') + G_R²/(H_R + λ') - G²/(H + λ')`` with ``λ' = λ + σ`` (``σ`` the
    noise std of a cumulated hessian), hessians clamped at 0, over the cut points of the
    bins in order (numeric) or sorted by ``G / (H + λ')`` (categorical). A split whose
    sides' hessians are not above their noise is not a candidate; without candidates the
    node sends every row left.
    """
    k, n_bins, _ = G.shape
    best_gain, best = 0.0, (0, np.ones(n_bins, dtype=np.uint8))
    for j in range(k):
        g, h = G[j], H[j]
        order = np.arange(n_bins)
        if categorical[j]:
            order = np.argsort(g.sum(axis=1) / (np.maximum(h.sum(axis=1), 0.0) + lam + std_h + _TINY), kind="stable")
        g, h = g[order], h[order]
        cg, ch = np.cumsum(g, axis=0)[:-1], np.cumsum(h, axis=0)[:-1]
        tg, th = g.sum(axis=0), h.sum(axis=0)
        steps = np.arange(1, n_bins)[:, None]
        noise_left = std_h * np.sqrt(steps)
        noise_right = std_h * np.sqrt(n_bins - steps)
        hl, hr = np.maximum(ch, 0.0), np.maximum(th - ch, 0.0)
        gain = (
            (cg**2 / (hl + lam + noise_left + _TINY)).sum(axis=1)
            + ((tg - cg) ** 2 / (hr + lam + noise_right + _TINY)).sum(axis=1)
            - (tg**2 / (np.maximum(th, 0.0) + lam + std_h * math.sqrt(n_bins) + _TINY)).sum()
        )
        valid = (ch.min(axis=1) > MIN_SNR * noise_left[:, 0]) & ((th - ch).min(axis=1) > MIN_SNR * noise_right[:, 0])
        gain = np.where(valid, gain, -np.inf)
        if gain.size and gain.max() > best_gain:
            cut = int(np.argmax(gain))
            left = np.zeros(n_bins, dtype=np.uint8)
            left[order[: cut + 1]] = 1
            best_gain, best = float(gain.max()), (j, left)
    return best


_BOOSTING_DOCS = {
    "head": """max_iter : int, default=100
        Number of boosting rounds (trees). Each round costs its share of the budget:
        more rounds mean more noise per tree.

    learning_rate : float, default=0.3
        Shrinkage of every leaf value.

    max_depth : int or None, default=None
        Depth of every tree (complete trees: ``2**max_depth`` leaves). ``None``: 3, or
        ``floor(log2(max_leaf_nodes))`` when that is given.

    max_leaf_nodes : int or None, default=None
        Largest number of leaves; the trees are complete, so the depth is
        ``floor(log2(max_leaf_nodes))`` (capped by ``max_depth``).

    max_bins : int, default=32
        Number of bins of every feature (at most 256): equal-width bins of the public
        ``bounds`` for numeric features; categorical codes are clipped to
        ``[0, max_bins - 1]``.

    max_features : int, float or None, default=None
        Features drawn at random for each node (an int, or a fraction of the features
        as scikit-learn's): the node's histograms cover these only, and the noise
        grows as the square root of their number. ``None``: DP-EBM's cyclic schedule,
        every node of round t splits on feature ``t mod n_features`` (one histogram per
        row and level, the least noise; see Notes); with ``epsilon=inf`` (no noise)
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
    ``delta=0``), for public ``bounds``{public}. Bins come from the public bounds and
    ``max_bins`` only. Each row's gradient vector is clipped to L2 norm
    ``clip_gradients`` and its hessian vector to the loss's bound, both scaled by the
    row's weight (clipped to [0, 1]) and truncated onto a fixed-point grid of ``Q``
    integer steps per bound: the sums released are exact integer sums, so their
    sensitivity is that of one row's integers, whatever the floating-point data. In
    each round, every level of the tree releases the gradient and hessian sums of its
    nodes by feature and bin: a row lies in one node of the level and one bin of each
    of the node's ``k`` features (a public schedule, or drawn from ``random_state``;
    never from the data), so the release has L2 sensitivity ``√k Q`` (L1 ``k √K Q``, ``K`` outputs); splits are
    chosen from these noisy sums only. The leaves' sums (sensitivity ``Q``) give the
    Newton steps. With ``1 + max_iter (depth + 1)`` releases, each gets an equal share
    of ρ = zcdp_rho(ε, δ) with discrete Gaussian noise (Canonne, Kamath & Steinke 2020;
    60% to gradients, 40% to hessians), and ``privacy_spent_`` composes their zCDP
    costs into one event; with
    ``delta=0``, of ε with discrete Laplace noise (basic composition). Exact integer
    noise on integer sums: floating-point safe. Released: the structure and leaf values
    of every tree, ``leaf_sums_``, ``baseline_`` and predictions, all computed from the
    noisy sums.
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
        tree (``n_iter_``): the release the leaf values come from.
    n_iter_ : int
    max_depth_ : int
    max_features_ : int
        Features per node.
    feature_schedule_ : {"cyclic", "random", "all"}
        How the nodes' features were chosen (all from public information).
    n_bins_ : int
    clip_gradients_ : float
    is_categorical_ : ndarray of shape (n_features,), dtype bool
    bounds_ : tuple of ndarray
        The bounds used (given, or derived from the data with a warning).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.""",
}


@Substitution(
    epsilon=_shared_docs["epsilon"],
    bounds=_shared_docs["bounds"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    head=_BOOSTING_DOCS["head"],
    clip=_BOOSTING_DOCS["clip"].format(default="1 (the logistic loss's gradients have norm at most √2)"),
    attributes=_BOOSTING_DOCS["attributes"],
    privacy=_BOOSTING_DOCS["privacy"].format(public=" and ``classes``", domain=", labels in ``classes``"),
)
class HistGradientBoostingClassifier(BaseHistGradientBoosting, BaseJointLogLikelihoodClassifier):
    """Histogram gradient-boosted trees for classification with differential privacy.

    The private counterpart of scikit-learn's ``HistGradientBoostingClassifier``: the
    features are binned once from public bounds, and each boosting round grows one
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
    node of round t splits on feature ``t mod d``, so each level's histograms have the
    sensitivity of one row in one histogram and the noise is √d times smaller than
    with all ``d`` features. It beat one random feature per node, a third and all of
    the features on Adult and Friedman #1 at ε = 1 (doc/user_guide/boosting.rst); the
    rule depends on nothing but the parameters.

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
        max_iter=100,
        learning_rate=0.3,
        max_depth=None,
        max_leaf_nodes=None,
        max_bins=32,
        max_features=None,
        l2_regularization=0.0,
        categorical_features=None,
        epsilon=1.0,
        delta=1e-6,
        bounds=None,
        classes=None,
        clip_gradients=None,
        accountant=None,
        random_state=None,
    ):
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.max_bins = max_bins
        self.max_features = max_features
        self.l2_regularization = l2_regularization
        self.categorical_features = categorical_features
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.clip_gradients = clip_gradients
        self.accountant = accountant
        self.random_state = random_state

    def _encode_y(self, y):
        classes, y_index = resolve_classes(self, self.classes, y)
        self.classes_, self.n_classes_ = classes, classes.size
        self._n_outputs = 1 if classes.size <= 2 else classes.size
        if self._n_outputs == 1:
            return (y_index == 1).astype(np.float64)[:, None]
        return np.eye(classes.size)[y_index]

    def _baseline(self):
        return np.zeros(self._n_outputs)

    def _default_clip(self):
        return 1.0

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
        X = self._check_X(X)
        raw = self._raw_predict(X).astype(X.dtype, copy=False)  # float32 X: float32 scores
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags


@Substitution(
    epsilon=_shared_docs["epsilon"],
    bounds=_shared_docs["bounds"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
    head=_BOOSTING_DOCS["head"],
    clip=_BOOSTING_DOCS["clip"].format(default="a quarter of the width of ``bounds_y``"),
    attributes=_BOOSTING_DOCS["attributes"],
    privacy=_BOOSTING_DOCS["privacy"].format(public=" and ``bounds_y``", domain=" and y"),
)
class HistGradientBoostingRegressor(RegressorMixin, BaseHistGradientBoosting):
    """Histogram gradient-boosted trees for regression (squared error) with differential privacy.

    The private counterpart of scikit-learn's ``HistGradientBoostingRegressor``: the
    features are binned once from public bounds, and each boosting round grows one
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

    bounds_y : tuple (lower, upper) or None, default=None
        Public bounds on the target; values outside are clipped. The starting
        prediction is their middle, and predictions stay inside them. ``None`` derives
        them from the data with a :class:`~dpsk.exceptions.PrivacyLeakWarning`.

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
    >>> reg = HistGradientBoostingRegressor(max_iter=20, bounds=(0, 1), bounds_y=(0, 10), random_state=0)
    >>> reg.fit(X, y).predict([[0.1, 0.5], [0.9, 0.5]]).round()
    array([1., 9.])
    """

    _parameter_constraints = {
        **BaseHistGradientBoosting._parameter_constraints,
        "bounds_y": TARGET_BOUNDS_CONSTRAINT,
    }
    _y_numeric = True

    def __init__(
        self,
        *,
        max_iter=100,
        learning_rate=0.3,
        max_depth=None,
        max_leaf_nodes=None,
        max_bins=32,
        max_features=None,
        l2_regularization=0.0,
        categorical_features=None,
        epsilon=1.0,
        delta=1e-6,
        bounds=None,
        bounds_y=None,
        clip_gradients=None,
        accountant=None,
        random_state=None,
    ):
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.max_bins = max_bins
        self.max_features = max_features
        self.l2_regularization = l2_regularization
        self.categorical_features = categorical_features
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.bounds_y = bounds_y
        self.clip_gradients = clip_gradients
        self.accountant = accountant
        self.random_state = random_state

    _n_outputs = 1

    def _encode_y(self, y):
        y = np.asarray(y, dtype=np.float64)
        lower, upper = resolve_bounds(self, self.bounds_y, y[:, None], param="bounds_y", attribute="bounds_y_")
        self.bounds_y_ = (float(lower[0]), float(upper[0]))
        return np.clip(y, *self.bounds_y_)[:, None]

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
        X = self._check_X(X)
        return np.clip(self._raw_predict(X)[:, 0], *self.bounds_y_).astype(X.dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags
