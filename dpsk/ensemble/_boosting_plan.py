# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The budget plan and the releases of histogram gradient boosting (see ``_gradient_boosting``).

One home for what decides the noise and what is computed from the noisy sums: the
fixed-point grid (``_quantise``), the plan of the fit's releases and their one event
(``_Noise``), the data-independent default of the rounds and the learning rate
(``auto_schedule``), and the post-processing of the noisy histograms (``_best_split``,
``_newton``). The estimators in ``_gradient_boosting`` read the data and call these.
"""

import math
from numbers import Integral

import numpy as np

from dpsk._core._noise import add_gaussian_lattice, add_laplace_lattice
from dpsk.accounting import ComposedEvent, PureDPEvent, SelfComposedEvent, ZCDPEvent, note_release
from dpsk.accounting._calibration import round_up, zcdp_rho
from dpsk.accounting._events import budget_event

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
    ``fraction``: the part of the budget (of ρ, or of ε with δ = 0) left to the trees after
    the quantile bin edges (``_boosting_bins``); 1 without them. ``n_grid``: rounds whose
    cuts are public (``grid_masks``): they release no histogram, only their leaves, as one
    release of weight ``n_levels + LEAF_WEIGHT`` (kind "grid": the weight of the tree's
    releases it replaces, so the total weight, and every other release, is unchanged).
    """

    def __init__(self, epsilon, delta, n_iter, n_levels, k, n_outputs, fraction=1.0, n_grid=0):
        self.exact = math.isinf(epsilon)
        self.gaussian = delta > 0
        self.grid = MAX_GRID
        self.weight = {"level": 1.0, "leaf": LEAF_WEIGHT, "grid": n_levels + LEAF_WEIGHT}
        self.spread = {"level": math.sqrt(k) if self.gaussian else float(k), "leaf": 1.0, "grid": 1.0}
        if self.exact:
            self.event = budget_event(epsilon)
            return
        total_weight = LEAF_WEIGHT + n_iter * (n_levels + LEAF_WEIGHT)  # the baseline counts as a leaf release
        shares = {"g": GRADIENT_SHARE, "h": 1.0 - GRADIENT_SHARE}
        if self.gaussian:
            rho = zcdp_rho(epsilon, delta) * fraction / total_weight
            # σ per unit of L2 sensitivity and weight: Δ²/(2σ²) = share · w · ρ / W.
            self.unit = {part: 1.0 / math.sqrt(2.0 * share * rho) for part, share in shares.items()}
        else:
            # Laplace scale per unit of L2 sensitivity and weight: the L1 norm of K entries
            # is at most √K times their L2 norm, and Δ₁/b = share · w · ε / W.
            self.unit = {
                part: math.sqrt(n_outputs) * total_weight / (share * epsilon * fraction)
                for part, share in shares.items()
            }
        self.root_k = math.sqrt(n_outputs)
        largest = max(self.unit.values()) * self.spread["level"] / self._per_weight(min(1.0, LEAF_WEIGHT))
        # The grid: as fine as MAX_GRID allows while the noise stays in the exact samplers' range.
        self.grid = int(min(MAX_GRID, 2 ** max(0, math.floor(math.log2(MAX_NOISE_STEPS / largest)))))
        level = (self.event_of("g", "level"), self.event_of("h", "level"))
        leaf = (self.event_of("g", "leaf"), self.event_of("h", "leaf"))
        tree = ComposedEvent(level * n_levels + leaf)
        trees = [SelfComposedEvent(tree, n_iter - n_grid)] if n_iter > n_grid else []
        if n_grid:
            grid_tree = ComposedEvent((self.event_of("g", "grid"), self.event_of("h", "grid")))
            trees.append(SelfComposedEvent(grid_tree, n_grid))
        self.event = ComposedEvent((*leaf, *trees))

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


#: ``max_iter="auto"``: each noisy sum's noise std at most ``NOISE_TO_SPREAD`` times √n clips
#: (the spread of a sum of n clipped terms; see ``auto_schedule``).
NOISE_TO_SPREAD = 0.5
#: ``max_iter="auto"``: bounds on the rounds (the lower one also at least one per feature).
AUTO_MIN_ITER, AUTO_MAX_ITER = 10, 200
#: ``learning_rate="auto"``: total shrinkage per feature, ``learning_rate · max_iter / d`` (3 since
#: 2026-11-26, chosen on a validation split of Adult's training rows and Friedman #1; 2 before).
STEPS_PER_FEATURE = 3.0
#: ``learning_rate="auto"``: its largest value.
AUTO_MAX_LEARNING_RATE = 1.0


def auto_schedule(epsilon, delta, n_rows, n_features, n_levels, n_outputs=1, fraction=1.0):
    """``(max_iter, learning_rate)`` from the public budget, features, (noisy) row count and the
    number of histogram releases per tree ``n_levels`` (1 with the cyclic schedule, else the depth).

    The rounds: as many as keep the noise std of every released gradient sum (in clips)
    at most ``NOISE_TO_SPREAD · √n``, the spread of a sum of n clipped gradients: with
    ``W = 1 + T (n_levels + 1)`` releases and discrete Gaussian noise, a sum's std is
    ``√(W / (2 s ρ))`` (``s = GRADIENT_SHARE``, ρ = zcdp_rho(ε, δ)), so ``W = 2 s ρ c² n``
    (ρ: the budget's zCDP; with Laplace noise ``√2 √K W / (s ε)``, so ``W = s ε c √n /
    (√2 √K)``). T is clipped to ``[max(10, min(d, 50)), 200]`` (every feature gets a
    round under the cyclic schedule; 200 at ε = ∞). The learning rate makes the total
    shrinkage per feature ``lr · T / d`` equal to ``STEPS_PER_FEATURE`` (capped at 1): a
    feature's residual then shrinks by ``(1 - lr)^(T/d)`` whatever T, while the noise a
    leaf value carries stays proportional to ``lr · T``. Derived on synthetic additive
    logistic data (doc/user_guide/boosting.rst); depends on public values only. ``fraction``:
    the part of ρ (of ε with δ = 0) the trees get (see ``_Noise``).
    """
    low = max(AUTO_MIN_ITER, min(int(n_features), 50))
    if math.isinf(epsilon):
        n_iter = AUTO_MAX_ITER
    else:
        if delta > 0:
            releases = 2.0 * GRADIENT_SHARE * zcdp_rho(epsilon, delta) * fraction * NOISE_TO_SPREAD**2 * n_rows
        else:
            releases = GRADIENT_SHARE * epsilon * fraction * NOISE_TO_SPREAD * math.sqrt(n_rows / (2.0 * n_outputs))
        n_iter = int(min(AUTO_MAX_ITER, max(low, math.floor((releases - 1.0) / (n_levels + 1)))))
    return n_iter, auto_learning_rate(n_iter, n_features)


def auto_learning_rate(n_iter, n_features):
    """``learning_rate="auto"``: ``min(1, STEPS_PER_FEATURE · d / T)`` (see ``auto_schedule``)."""
    return min(AUTO_MAX_LEARNING_RATE, STEPS_PER_FEATURE * n_features / n_iter)


def auto_thresholds(epsilon, cyclic):
    """``thresholds="auto"``: ``"grid"`` (public cuts) under the cyclic schedule with a finite
    budget, else ``"gain"`` (features drawn per node, or ε = ∞: nothing to save, non-private boosting).

    A function of public parameters only. Chosen on a validation split of Adult's training
    rows (public cuts at least as accurate as cuts by noisy gain at every ε from 0.1 to 5)
    and Friedman #1 (better up to ε = 1, tied at 2 and 3, 0.003 R² lower at 5);
    doc/user_guide/boosting.rst has the figures.
    """
    return "grid" if cyclic and not math.isinf(epsilon) else "gain"


#: The classifier's default ``clip_gradients``: ``|p - y|`` above it only for rows predicted
#: wrongly with probability above 0.7; chosen on a validation split of Adult's training rows.
CLASSIFIER_CLIP = 0.7

#: ``thresholds="grid"``: the cuts' offsets from a node's middle bin cycle through this many
#: values, one per visit of the feature (see ``grid_masks``).
GRID_OFFSETS = 4


def grid_masks(n_used, n_bins, depth, visit):
    """Left masks (level order, ``(2**depth - 1, n_bins)``) of a complete tree on one numeric
    feature with public cuts: a node holding the bins ``[lo, hi)`` sends ``bin < c`` left, with
    ``c = lo + (hi - lo) // 2 + o`` moved inside ``[lo + 1, hi - 1]``, ``o = visit mod
    GRID_OFFSETS - GRID_OFFSETS // 2``; a node of one bin (or none) sends its rows left.

    ``n_used``: the feature's bins that can hold rows (public: the released quantile edges
    plus one, or ``n_bins``); ``visit``: how many rounds split this feature before
    (public). Successive visits stagger the cuts, so that the sum of the trees resolves
    finer steps than one tree's ``2**depth`` leaves. Nothing here reads the data.
    """
    offset = visit % GRID_OFFSETS - GRID_OFFSETS // 2
    masks = np.zeros((2**depth - 1, n_bins), dtype=np.uint8)
    ranges = [(0, int(n_used))]
    for level in range(depth):
        first, children = 2**level - 1, []
        for m, (lo, hi) in enumerate(ranges):
            cut = hi if hi - lo < 2 else min(max(lo + (hi - lo) // 2 + offset, lo + 1), hi - 1)
            masks[first + m, :cut] = 1
            children += [(lo, cut), (cut, hi)]
        ranges = children
    return masks


#: The cyclic schedule's later rounds: shared among the features of their kind in proportion to
#: the estimated loss reduction of each feature's first tree (see ``FeatureSchedule``).
ADAPTIVE_SCHEDULE = True
#: ``FeatureSchedule``: every feature keeps at least this share of its cyclic rounds.
MIN_SHARE = 0.5


def leaf_gain(G, H, var_g, std_h, lam):
    """Estimated loss reduction of a tree from its noisy leaf sums (post-processing):
    ``Σ_leaves (G² - var_G) / (H⁺ + λ + σ_H)`` minus the same for the root (the leaves' totals),
    the gradients' noise variance taken out of the squares. ``G``, ``H``: ``(n_leaves, K)``;
    ``var_g``, ``std_h``: scalars or ``(n_leaves, 1)``."""
    var_g = np.broadcast_to(var_g, (G.shape[0], 1))
    std_h = np.broadcast_to(std_h, (G.shape[0], 1))
    leaves = ((G**2 - var_g) / (np.maximum(H, 0.0) + lam + std_h + _TINY)).sum()
    g, h = G.sum(axis=0), H.sum(axis=0)
    root = ((g**2 - var_g.sum()) / (max(h.sum(), 0.0) + lam + math.sqrt((std_h**2).sum()) + _TINY)).sum()
    return float(leaves - root)


class FeatureSchedule:
    """The feature of each round under the cyclic schedule, from public values and released sums only.

    The first ``d`` rounds visit every feature once, as DP-EBM's cyclic schedule (round t:
    feature t). Each later round keeps the kind the cyclic schedule gives it (``kinds[t]``: a
    public-cut round or a round by noisy gain), so the releases, and the fit's event, are
    those of the cyclic schedule. The rounds of a kind are shared among its features: each
    keeps ``MIN_SHARE`` of its cyclic rounds (rounded down), the rest go in proportion to
    the estimated loss reduction of the feature's first tree (``leaf_gain`` of released leaf
    sums, negative counted as 0: post-processing), and each round takes the feature furthest
    behind its share of the rounds so far. Only with ``learning_rate < 1``: at 1 a feature's
    first tree takes a full Newton step, and its gain says little about what is left.
    ``ADAPTIVE_SCHEDULE`` False: the cyclic schedule itself.
    """

    def __init__(self, kinds, feature_kinds, learning_rate):
        self.kinds = np.asarray(kinds, dtype=bool)
        self.feature_kinds = np.asarray(feature_kinds, dtype=bool)
        d, n_iter = self.feature_kinds.size, self.kinds.size
        self.adaptive = ADAPTIVE_SCHEDULE and n_iter > d and learning_rate < 1.0
        self.visits = np.zeros(d, dtype=np.intp)
        self.gain = np.zeros(d)
        self.total = {kind: int((self.kinds == kind).sum()) for kind in (False, True)}
        self.done = {False: 0, True: 0}
        self.share = None  # each feature's rounds, set after the first cycle

    def _shares(self):
        share = np.zeros(self.feature_kinds.size)
        for kind, total in self.total.items():
            members = np.flatnonzero(self.feature_kinds == kind)
            if members.size:
                floor = math.floor(MIN_SHARE * total / members.size)
                weight = np.maximum(self.gain[members], 0.0)
                weight = weight / weight.sum() if weight.sum() > 0 else np.full(members.size, 1.0 / members.size)
                share[members] = floor + (total - floor * members.size) * weight
        return share

    def next(self, t):
        """The feature of round t (call once per round, in order, ``observe`` after each)."""
        d, kind = self.feature_kinds.size, bool(self.kinds[t])
        self.done[kind] += 1
        if not self.adaptive or t < d:
            return t % d
        if self.share is None:
            self.share = self._shares()
        members = np.flatnonzero(self.feature_kinds == kind)
        behind = self.share[members] * self.done[kind] / self.total[kind] - self.visits[members]
        return int(members[np.argmax(behind)])

    def observe(self, j, gain):
        """Feature j's round is done (``visits[j]`` counts it); ``gain``: its tree's estimated loss reduction."""
        if self.visits[j] == 0:
            self.gain[j] = gain
        self.visits[j] += 1
