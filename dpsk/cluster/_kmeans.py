# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""k-means with differential privacy: Lloyd iterations on noisy per-cluster counts and sums."""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin

from dpsk._core._clip import clip_bounds
from dpsk._core._kmeans import nearest_centres
from dpsk.accounting import ComposedEvent
from dpsk.accounting._calibration import split_epsilon
from dpsk.accounting._events import budget_event
from dpsk.base import BOUNDS_CONSTRAINT, DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.dask._data import dask_apply, dask_fit, is_dask
from dpsk.mechanisms._joint import Box, JointRelease
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, PrivateSensitivity, private_box
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils._threads import single_blas_thread
from dpsk.utils.validation import _check_sample_weight_dp, release_generator

__all__ = ["KMeans"]

#: Su et al. (2016)'s coordinate normalisation factor ρ: in the budget split between
#: counts and sums it stands for the typical magnitude of a centroid coordinate in [-1, 1].
SU_RHO = 0.225

#: With ``init="summary"``: candidates per cluster at the end of the seeding.
OVERSAMPLING = 4

#: Fraction of ε given to the last Lloyd iteration, whose noise stays in the centres.
FINAL_SHARE = 0.3

#: With ``init="summary"``: restarts of the weighted k-means++ that reduces the candidates.
SUMMARY_RESTARTS = 10


def su_split(n_features):
    """Budget shares (counts, sums) of one Lloyd iteration, as in Su et al. (2016).

    For data in [-1, 1]^d, Su et al. minimise the expected squared error of the noisy
    centroids and find ε_count : ε_coordinate = ∛(4dρ²) : 1 (each of the d coordinates of
    the sums costs ε_coordinate). Over the whole sum vector (L1 sensitivity d), the shares
    of one iteration's budget are ∛(4dρ²)/(d + ∛(4dρ²)) for the counts and d/(d + ∛(4dρ²))
    for the sums.

    Returns
    -------
    count_share, sum_share : float
    """
    unit = np.cbrt(4.0 * n_features * SU_RHO**2)
    return unit / (n_features + unit), n_features / (n_features + unit)


@Substitution(
    epsilon=_shared_docs["epsilon"],
    bounds=_shared_docs["bounds_private"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
)
class KMeans(DPEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """k-means clustering with differential privacy (DP Lloyd iterations).

    Each of ``max_iter`` iterations assigns the clipped rows to the nearest current
    centre and releases noisy per-cluster counts and sums, from one pass over X; the
    new centres are the noisy means. With ``init="summary"`` the starting centres come
    from a private summary of the data: a few seeding passes of the same kind grow a
    set of candidates by binary splitting, which a weighted k-means++ then reduces to
    ``n_clusters`` centres.

    Parameters
    ----------
    n_clusters : int, default=8

    {epsilon}

    {bounds}

    max_iter : int, default=5
        Number of Lloyd iterations, all of them run (the budget is split between them
        and the seeding passes: stopping early would not save it). More iterations
        converge further but each gets less budget.

    init : {{"summary", "random"}} or array-like of shape (n_clusters, n_features), \
            default="summary"
        - ``"summary"``: private seeding by binary splitting (Linde, Buzo & Gray
          1980). Starting from the centre of the bounds, each of S = ⌈log₂(4 ·
          n_clusters)⌉ seeding passes splits every candidate in two along a random
          direction and moves the candidates to the noisy means of their cells (up
          to 2, 4, ..., 2^S candidates); a weighted k-means++ on the last candidates
          (weighted by their noisy counts) picks the ``n_clusters`` starting centres.
          The seeding passes come on top of the ``max_iter`` Lloyd iterations and
          share the budget with them.
        - ``"random"``: starting centres drawn uniformly in the bounds (no seeding
          passes).
        - an array: public starting centres (not derived from this data).

    {accountant}

    {random_state}

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    cluster_sizes_ : ndarray of shape (n_clusters,)
        Noisy number of rows assigned to each centre in the last iteration (clamped at 0).
    n_iter_ : int
        Iterations run (``max_iter``).
    bounds_ : tuple of ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.
    {privacy_spent_}

    See Also
    --------
    sklearn.cluster.KMeans : the non-private estimator.

    Notes
    -----
    Neither ``labels_`` nor ``inertia_`` is set: the cluster of each training row and
    the exact inertia are functions of individual rows, not protected by the noise. Use
    ``predict`` or ``fit_predict`` (which returns labels without storing them) and
    ``score`` on data of your choice.

    **Privacy.** ε-DP under add/remove-one-row, for public ``bounds``. Rows are
    clipped to the bounds and standardised, ``z = (clip(x) − m)/h`` (m the midpoint, h
    the half-widths; features with ``lower == upper`` are left out). A fit makes
    T = S + ``max_iter`` passes over X (S seeding passes with ``init="summary"``, none
    otherwise); the last Lloyd iteration, whose noise stays in the centres, gets 30%
    of ε, and the other T − 1 passes share the remaining 70% equally (all of ε when
    T = 1; shares rounded down). Each pass releases the count and Σz of every cluster
    (or candidate) as one Laplace vector: a row is in exactly one cluster, so the
    counts have L1 sensitivity 1 and the sums d′ (the number of non-constant
    features). The pass's budget is split as in Su et al. (2016): the counts get
    ∛(4d′ρ²)/(d′ + ∛(4d′ρ²)) of it and the sums the rest, ρ = 0.225 (``su_split``).
    The passes compose sequentially: ``privacy_spent_`` is the composition of the T
    releases. Centres, the candidate splits and reduction, and clipping of centres
    into the bounds are post-processing. Released: ``cluster_centers_``, ``cluster_sizes_``. Floating-point
    safe (lattice Laplace noise), up to the rounding of the float64 sums. With
    ``sample_weight`` (clipped to [0, 1]) a row adds its weight to one count and its
    weighted row to one sum: the sensitivities 1 and d′ hold unchanged.
    Domain: finite X, finite, non-negative ``sample_weight``. Data outside it raise a
    ``ValueError`` before any noise is drawn, which reveals only that the data left the
    domain (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.cluster import KMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-5, 1, (1000, 2)), rng.normal(5, 1, (1000, 2))])
    >>> km = KMeans(2, epsilon=1.0, bounds=(-10, 10), random_state=0).fit(X)
    >>> np.round(np.sort(km.cluster_centers_[:, 0]))
    array([-5.,  5.])
    """

    _parameter_constraints = {
        **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "bounds": [*BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"summary", "random"}), "array-like"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        bounds=None,
        max_iter=5,
        init="summary",
        accountant=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.max_iter = max_iter
        self.init = init
        self.accountant = accountant
        self.random_state = random_state

    def _budget_split(self, n_features):
        """Shares (counts, sums) of each iteration's budget."""
        return su_split(n_features)

    def _release(self, box, epsilon, rng):
        """One pass's release: counts (L1 sensitivity 1) and Σz (L1 sensitivity d′) of every cluster."""
        d = box.n_active
        return JointRelease(box.sensitivities(2), self._budget_split(d), epsilon=epsilon, delta=0.0, random_state=rng)

    def _cluster_sums(self, X, centres, box, sample_weight=None):
        """Exact per-cluster fixed-point sums of the rows clipped to the box (weighted).

        Each row goes to its nearest centre (a function of that row alone), then the
        clusters' sums are accumulated exactly (``Box.exact_sums``): no float
        cancellation against the box's centre, whatever the offset of the data. A row
        adds to exactly one cluster, scaled by its weight.
        """
        if is_dask(X):  # per chunk, merged exactly (dpsk.dask)
            return X.reduce(self, "_cluster_sums", centres, box)
        if sp.issparse(X):
            labels = _sparse_labels(X, centres, box)
        else:  # one compiled pass; rows clipped in float64 (a box may hold no float32 value)
            labels = nearest_centres(X, box.lower, box.upper, centres)
        # Counts and sums only (a Lloyd step releases no squares).
        return box.exact_sums(X, labels, centres.shape[0], sample_weight=sample_weight, squares=False)

    def _n_seeding_passes(self):
        """Passes of the private seeding: candidates double each pass up to OVERSAMPLING × k."""
        if isinstance(self.init, str) and self.init == "summary":
            return max(1, int(np.ceil(np.log2(OVERSAMPLING * self.n_clusters))))
        return 0

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y=None, sample_weight=None):
        """Compute the cluster centres with differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        {sample_weight}

        Returns
        -------
        self : object
        """
        self._check_privacy_budget(budget_event(self.epsilon))
        if is_dask(X, sample_weight):  # one map-reduce of exact sums per pass (dpsk.dask)
            return dask_fit(self, X, sample_weight=sample_weight)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", accept_sparse="csr")
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        plan, (lower, upper) = private_box(self, X)
        self._initial_centres(Box(lower, upper), X.shape[1])  # checked before the spend
        rng = release_generator(self.random_state, context=self, data=(X, sample_weight))
        return self._fit_passes(X, Box(lower, upper), rng, sample_weight, plan)

    def _fit_passes(self, X, box, rng, sample_weight=None, plan=None):
        """The releases (spent here) and the passes over X (in memory, or Dask rows).

        ``plan``: the private bounds' release (:func:`~dpsk.utils._private_bounds.private_box`);
        None for public bounds (Dask input)."""
        n_features = X.shape[1]
        plan = PrivateSensitivity(self, self.epsilon, {}) if plan is None else plan
        centres = self._initial_centres(box, n_features)
        n_seeding = self._n_seeding_passes()
        budgets = self._pass_budgets(n_seeding, plan.fit_epsilon)
        releases = [self._release(box, e, rng) for e in budgets]
        # Seeding pass p releases 2**(p+1) clusters (at most); Lloyd iterations n_clusters.
        sizes = [2 ** (p + 1) for p in range(n_seeding)] + [self.n_clusters] * self.max_iter
        plan.spend(
            self, ComposedEvent(tuple(r.privacy_event((k, k * n_features)) for r, k in zip(releases, sizes))), rng
        )
        if "bounds" in plan:  # the released box: clip the starting centres and rebuild the releases in it
            box = Box(*plan.box("bounds", X, (box.lower, box.upper)))
            centres = self._initial_centres(box, n_features)
            releases = [self._release(box, e, rng) for e in budgets]

        if n_seeding:
            centres = self._seed(X, box, releases[:n_seeding], rng, sample_weight)
        elif centres is None:  # "random": uniform in the box
            centres = box.lower + (box.upper - box.lower) * rng.random((self.n_clusters, n_features))
        for release in releases[n_seeding:]:
            centres, counts = self._lloyd_step(X, centres, box, release, self.n_clusters, sample_weight=sample_weight)
        self.cluster_centers_ = centres.astype(X.dtype)
        self.cluster_sizes_ = np.maximum(counts, 0.0)
        self.n_iter_ = self.max_iter
        self.bounds_ = (box.lower, box.upper)
        return self

    def _pass_budgets(self, n_seeding, epsilon=None):
        """ε of each pass: the last Lloyd iteration gets FINAL_SHARE, the others equal parts."""
        epsilon = float(self.epsilon if epsilon is None else epsilon)
        n_passes = n_seeding + self.max_iter
        if n_passes == 1:
            return [epsilon]
        rest = (1.0 - FINAL_SHARE) / (n_passes - 1)
        return split_epsilon(epsilon, [rest] * (n_passes - 1) + [FINAL_SHARE])

    def _seed(self, X, box, releases, rng, sample_weight=None):
        """Private seeding by binary splitting (Linde, Buzo & Gray 1980) on noisy statistics.

        Starting from the box's midpoint, every pass splits each candidate into two along
        a random direction (the two halves of its cell are divided by a random hyperplane
        through it), then moves the candidates to the noisy means of their cells. The
        last candidates, weighted by their noisy counts, are reduced to ``n_clusters``
        centres by a weighted k-means++ (post-processing).
        """
        candidates = box.centre[None, :]
        for p, release in enumerate(releases):
            directions = rng.standard_normal(candidates.shape)
            directions *= box.half_width * 1e-3 / np.maximum(np.linalg.norm(directions, axis=1, keepdims=True), 1e-300)
            candidates = np.concatenate([candidates + directions, candidates - directions])
            # The declared size of pass p, even when earlier passes dropped candidates: the
            # release is padded to it, so what is released is exactly what was charged.
            size = 2 ** (p + 1)
            candidates, counts = self._lloyd_step(
                X, candidates, box, release, size, keep=False, sample_weight=sample_weight
            )
        return _reduce(candidates, counts, self.n_clusters, rng)

    def _initial_centres(self, box, n_features):
        """Public starting centres from ``init`` (clipped into the box), or None."""
        if isinstance(self.init, str):
            return None
        centres = np.array(self.init, dtype=np.float64)
        if centres.shape != (self.n_clusters, n_features):
            raise ValueError(
                f"init must have shape (n_clusters, n_features) = ({self.n_clusters}, {n_features}), "
                f"got {centres.shape}"
            )
        if not np.all(np.isfinite(centres)):
            raise ValueError("init must be finite")
        return np.clip(centres, box.lower, box.upper)

    def _lloyd_step(self, X, centres, box, release, size, keep=True, sample_weight=None):
        """One DP Lloyd iteration: noisy counts and sums of the clusters of ``centres``.

        The release always has ``size`` clusters (the declared event's size): missing
        candidates are padded with empty clusters. A centroid is trusted only where its
        count stands out of the sums' noise; elsewhere the previous centre stays
        (``keep``) or the candidate is dropped.
        """
        k = centres.shape[0]
        sums = self._cluster_sums(X, centres, box, sample_weight)
        counts, sum_z, _ = box.standardised_sums(sums, squares=False)
        pad = size - k
        counts, sum_z = release.randomise((np.pad(counts, (0, pad)), np.pad(sum_z, ((0, pad), (0, 0)))))
        counts, sum_z = counts[:k], sum_z[:k]
        std_sum = release.noise_std(1, (size, size * centres.shape[1]))
        reliable = counts > max(1.0, std_sum)
        new = box.to_original(sum_z / np.maximum(counts, 1.0)[:, None])
        if keep:
            return np.where(reliable[:, None], new, centres), counts
        if not np.any(reliable):  # nothing stands out: keep the candidates as they are
            return centres, np.ones(k)
        return new[reliable], counts[reliable]

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False, accept_sparse="csr")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def transform(self, X):
        """Distance of each row of X to each centre.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_clusters)
        """
        if is_dask(X):  # lazily, chunk by chunk
            check_is_fitted(self)
            return dask_apply(self, "transform", X, n_outputs=self.n_clusters, dtype=np.float64)
        X = self._check_X(X)
        row_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
        sq = (
            row_sq[:, None]
            - 2.0 * np.asarray(X @ self.cluster_centers_.T)
            + np.einsum("ij,ij->i", self.cluster_centers_, self.cluster_centers_)
        )
        return np.sqrt(np.maximum(sq, 0.0))

    def predict(self, X):
        """Index of the nearest centre for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return np.argmin(self.transform(X), axis=1)

    def fit_predict(self, X, y=None):
        """Fit, then predict the nearest centre of each row (the labels are not stored).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return self.fit(X).predict(X)

    def score(self, X, y=None):
        """Opposite of the inertia of X (sum of squared distances to the nearest centre).

        Computed on the X given here, with no privacy protection of its own.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        return -float(np.sum(np.min(self.transform(X), axis=1) ** 2))

    @property
    def _n_features_out(self):
        return self.cluster_centers_.shape[0]


def _sparse_labels(X, centres, box):
    """The nearest centre of each clipped row of sparse X (``nearest_centres``' rule, up to
    the rounding of BLAS's products): blocks of at most ~32 MiB densified, since the
    clipped implicit zeros need not be 0."""
    labels = np.empty(X.shape[0], dtype=np.intp)
    centre_sq = np.einsum("ij,ij->i", centres, centres)
    block = max(1, min(65536, 2**22 // max(X.shape[1], 1)))
    # A block times k centres: BLAS's threads only wait for each other (dpsk.utils._threads;
    # under load, 13 s against 4.8 s for a 10^6 x 20 fit).
    with single_blas_thread():
        for start in range(0, X.shape[0], block):
            rows = clip_bounds(X[start : start + block].toarray().astype(np.float64, copy=False), box.lower, box.upper)
            labels[start : start + block] = np.argmin(centre_sq - 2.0 * rows @ centres.T, axis=1)
    return labels


def _reduce(candidates, weights, n_clusters, rng):
    """k-means++ seeding plus a few weighted Lloyd steps on the candidates; the best of a few restarts.

    Post-processing of noisy centroids and counts: candidates with a non-positive count
    are dropped (if too few remain, all are used with a small weight floor).
    """
    weights = np.maximum(weights, 0.0)
    if np.count_nonzero(weights) < n_clusters:
        weights = weights + 1e-3
    # In units of a power of two about the candidates' largest magnitude: the same floats,
    # scaled exactly, but squared distances that neither overflow (boxes beyond ~1e154
    # gave NaN probabilities after the spend) nor vanish.
    unit = np.ldexp(1.0, int(np.frexp(np.max(np.abs(candidates), initial=0.0))[1]))
    candidates = candidates / unit
    best, best_cost = None, np.inf
    n_features = candidates.shape[1]
    weighted = (weights[:, None] * candidates).ravel()
    columns = np.arange(n_features)
    for _ in range(SUMMARY_RESTARTS):
        centres = _weighted_plusplus(candidates, weights, n_clusters, rng)
        previous = None
        for _ in range(20):
            d2 = ((candidates[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
            labels = np.argmin(d2, axis=1)
            if previous is not None and np.array_equal(labels, previous):
                break  # a fixed point: the remaining steps would recompute these centres bitwise
            previous = labels
            mass = np.bincount(labels, weights=weights, minlength=n_clusters)
            # Per (cluster, feature) sums in candidate order, as np.add.at would add them.
            cells = (labels[:, None] * n_features + columns).ravel()
            sums = np.bincount(cells, weights=weighted, minlength=n_clusters * n_features)
            sums = sums.reshape(n_clusters, n_features)
            centres = np.where(mass[:, None] > 0, sums / np.maximum(mass, 1e-300)[:, None], centres)
        cost = float(np.sum(weights * np.min(((candidates[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)))
        if cost < best_cost:
            best, best_cost = centres, cost
    return best * unit


def _weighted_plusplus(points, weights, n_clusters, rng):
    """k-means++ seeding of weighted points (D² sampling times the weight)."""
    chosen = [points[rng.choice(points.shape[0], p=weights / weights.sum())]]
    d2 = ((points - chosen[0]) ** 2).sum(axis=1)
    for _ in range(1, n_clusters):
        p = weights * d2
        total = p.sum()
        index = rng.choice(points.shape[0], p=p / total) if total > 0 else rng.integers(points.shape[0])
        chosen.append(points[index])
        d2 = np.minimum(d2, ((points - points[index]) ** 2).sum(axis=1))
    return np.array(chosen)
