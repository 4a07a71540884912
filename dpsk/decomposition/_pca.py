# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Principal component analysis with differential privacy (noisy second-moment matrix)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin

from dpsk._core._clip import _bounds_in_dtype, clip_bounds
from dpsk._core._exact_sums import (
    GRAM_BITS,
    ball_clip_radius,
    exact_gram,
    exact_gram_sums,
    fixed_point_grid,
    l1_gram_pass,
)
from dpsk.accounting._events import budget_event
from dpsk.base import BOUNDS_CONSTRAINT, DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.dask._data import dask_apply, dask_fit, is_dask
from dpsk.mechanisms._joint import JointRelease
from dpsk.stats._bounds import row_norms
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, PrivateSensitivity, is_private
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils._sparse import refuse_sparse
from dpsk.utils._threads import single_blas_thread
from dpsk.utils.validation import (
    _check_sample_weight_dp,
    release_generator,
    resolve_bounds,
    resolve_data_norm,
)

__all__ = ["PCA"]

#: Budget shares of the count, the sum and the second-moment matrix (uncentred data).
#: The matrix is the output; the count and the sum only centre it, and their noise
#: enters the covariance divided by n.
BUDGET_SHARES = (0.05, 0.15, 0.8)
#: The least ‖y‖₂ and ‖y‖₁ bounds the release assumes: their squares stay normal floats.
SMALLEST_BOUND = 2.0**-400


def _in_box_dtype(X, lower, upper):
    """X, or X in float64 when some coordinate's box ``[lower, upper]`` holds no value of X's
    dtype (float32 UNIX timestamps in a one-hour box: float32's spacing there is 65 536 s).
    The kernels clip in X's dtype and would have no value to clip to. The choice depends on
    the box and the dtype only: public, or released before."""
    if lower is None or X.dtype == np.float64:
        return X
    try:
        _bounds_in_dtype(np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64), X.dtype)
    except ValueError:
        return X.astype(np.float64)
    return X


class _Geometry:
    """Where clipped rows lie, and about which centre the statistics are summed.

    Rows are clipped to the box ``bounds`` and/or the ball ``‖x‖ <= data_norm``; the
    statistics are sums of ``y = c(x) − centre`` and ``y yᵀ``. ``l2``/``l1`` bound
    ``‖y‖₂`` and ``‖y‖₁`` for every clipped row.
    """

    def __init__(self, lower, upper, data_norm, n_features, allow_midpoint=True, l1_norm=None):
        self.lower, self.upper, self.data_norm = lower, upper, data_norm
        self.centre = np.zeros(n_features)
        inf = np.inf
        l2 = l1 = inf
        if data_norm is not None:  # the ball about the origin
            l2, l1 = data_norm, np.sqrt(n_features) * data_norm
        if lower is not None:
            corner = np.maximum(np.abs(lower), np.abs(upper))
            l2, l1 = min(l2, np.linalg.norm(corner)), min(l1, corner.sum())
            half = upper / 2 - lower / 2
            # About the box's midpoint rows are within the half-widths, as long as they
            # stay in the box: always with the box alone; with the ball too only when
            # the box contains the origin (scaling towards the origin keeps rows inside).
            inside = data_norm is None or (np.all(lower <= 0) and np.all(upper >= 0))
            if allow_midpoint and inside:
                if np.linalg.norm(half) < l2:
                    self.centre = lower / 2 + upper / 2
                    l2, l1 = np.linalg.norm(half), half.sum()
        # An L1 clip of y (about the centre) only where it is tighter than the geometry's.
        self.l1_norm = None if l1_norm is None or not l1_norm < l1 else float(l1_norm)
        if self.l1_norm is not None:
            l1 = self.l1_norm
        # Claiming larger bounds is always safe (more noise): below SMALLEST_BOUND the
        # squares in the sensitivities would be subnormal or 0 (no noise at all).
        self.l2, self.l1 = max(float(l2), SMALLEST_BOUND), max(float(l1), SMALLEST_BOUND)
        self._pass = None  # (L1GramPass, key) of this fit's first pass (use_pass)

    def statistics(self, X, sample_weight=None):
        """(count, Σy, Σyyᵀ) for y = c(x) − centre, summed exactly (``exact_gram``), weighted.

        Each row is clipped, centred and quantised *before* accumulation (on a public grid
        of about 2**-20 times the largest |y_j| allowed, to nearest, clamped to the box;
        with the ball, rows are first clipped to a radius smaller by √d grid steps, so
        that rounding cannot take ‖y‖ above ``data_norm``; with ``l1_norm``, y is then
        scaled towards the centre to an L1 radius just below it, so that rounding cannot
        take ‖y‖₁ above it either), and the sums are exact integers: the release's
        sensitivities hold for the computed statistics. Weights are rounded down
        (``exact_gram``), so a row never weighs more than its weight. One pass over X,
        without copies; with this fit's first pass (:meth:`use_pass`), a pass over the rows
        the L1 clip scales only.
        """
        if self.l1_norm is not None and self._pass is not None:
            first, key = self._pass
            if key == (id(X), id(sample_weight), self._grid_key()):  # the first pass of this fit
                return first.exact_gram(self.l1_norm)
        args, kwargs = self._kernel(X)
        return exact_gram(X, *args, sample_weight=sample_weight, **kwargs)

    def l1_pass(self, X, sample_weight=None):
        """One pass over X for a private ``l1_norm``: ``(L1GramPass, key)``. Its ``norms``
        are every row's ‖c(x) − centre‖₁ (box, then ball clipping, in X's dtype: what
        ``l1_norm`` bounds; bitwise ``clipped_l1_norms``), and it holds the exact sums of
        the rows' quantised y *unscaled*. A geometry that differs from this one only by its
        ``l1_norm`` takes it (:meth:`use_pass`): its :meth:`statistics` then only re-reads
        the rows that the L1 clip scales, and is bitwise what the full pass gives
        (``l1_gram_pass``)."""
        args, clips = self._clipping_kernel(X)
        first = l1_gram_pass(X, *args, sample_weight=sample_weight, **clips, norm_clip=self.data_norm)
        return first, (id(X), id(sample_weight), self._grid_key())

    def use_pass(self, first):
        """Take a first pass (:meth:`l1_pass`, or None). :meth:`statistics` uses it only for
        the same X and weights (by identity) and the same grid, centre and clips."""
        self._pass = first

    def _grid_key(self):
        """What the first pass's integers depend on besides X and the weights: the centre,
        the grid (radius), the box and the ball (not ``l1_norm``)."""
        box = None if self.lower is None else (self.lower.tobytes(), self.upper.tobytes())
        return (self.centre.tobytes(), self._radius().tobytes(), box, self.data_norm)

    def exact_sums(self, X, sample_weight=None):
        """The exact integers behind :meth:`statistics` (an ``ExactGram``; ``dpsk.dask``
        merges those of the chunks before the one rounding)."""
        args, kwargs = self._kernel(X)
        return exact_gram_sums(X, *args, sample_weight=sample_weight, **kwargs)

    def _kernel(self, X):
        """``(args, kwargs)`` of the one-pass exact Gram: the kernel clips each row to the
        box, then into the ball, then (``l1_norm``) scales it into the L1 ball about the
        centre, without a copy of X."""
        if self.data_norm is None and self.l1_norm is None:  # the grid's own clamp is the box
            return (self.lower, self.upper, self.centre, self._radius()), {}
        args, clips = self._clipping_kernel(X)
        return args, {**clips, "clip_l1": self.l1_norm}

    def _clipping_kernel(self, X):
        """``(args, kwargs)`` of a kernel that clips each row to the box, then into the
        ball (no L1 clip): no clamping bounds, the grid about the centre."""
        radius = self._radius()
        big = np.full(X.shape[1], np.finfo(np.float64).max)
        box = None if self.lower is None else (self.lower, self.upper)
        norm = None if self.data_norm is None else self._ball_radius(radius)
        return (-big, big, self.centre, radius), {"clip_box": box, "clip_norm": norm}

    def _ball_radius(self, radius):
        """The radius rows are clipped to before rounding, so that the quantised y keep
        ‖y‖ <= ``data_norm`` (``ball_clip_radius``)."""
        return ball_clip_radius(self.data_norm, fixed_point_grid(radius, GRAM_BITS)[0])

    def _radius(self):
        """Public per-coordinate bound on |y_j|."""
        radius = np.full(self.centre.shape, np.inf)
        if self.data_norm is not None:
            radius = np.minimum(radius, self.data_norm)
        if self.lower is not None:
            if np.any(self.centre != 0):
                radius = np.minimum(radius, self.upper / 2 - self.lower / 2)
            else:
                radius = np.minimum(radius, np.maximum(np.abs(self.lower), np.abs(self.upper)))
        return radius


@Substitution(
    epsilon=_shared_docs["epsilon"],
    delta=_shared_docs["delta"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
)
class PCA(DPEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis with differential privacy.

    The covariance of the data is estimated from a noisy second-moment matrix, a noisy
    sum and a noisy count, computed in one pass over X; the principal axes are its
    eigenvectors. With ``delta > 0`` the noise is Gaussian ("Analyze Gauss", Dwork,
    Talwar, Thakurta & Zhang 2014); with ``delta = 0`` it is Laplace, added to the
    upper triangle of the matrix and mirrored (symmetric Laplace noise, as in Imtiaz &
    Sarwate 2016's pure-ε baseline), calibrated to a private (or public) bound on the
    rows' L1 norms by default (``l1_norm="auto"``). Either way the running time does not depend on ε
    or on the number of samples beyond the one pass (no rejection sampling).

    Parameters
    ----------
    n_components : int, float or None, default=None
        Number of components to keep: an int in [1, n_features]; a float in (0, 1), the
        smallest number of components whose (noisy) explained variance ratio exceeds it;
        or None for all features.

    {epsilon}

    {delta}

    data_norm : float, "private", "data" or None, default=None
        Public bound on the L2 norm of each row of X (rows are scaled down to it).
        ``"private"``: the 0.9-quantile of the (box-clipped) row norms, estimated inside
        the fit (:func:`dpsk.stats.bounds`), stored in ``data_norm_`` (:ref:`bounds`).
        ``"data"``: the largest row norm, with a :class:`~dpsk.exceptions.PrivacyLeakWarning`.

    centered : bool, default=False
        If True, the data are assumed to be centred already: the mean is taken as 0 and
        only the count and the second-moment matrix about the origin are released.

    bounds : tuple (lower, upper), "private", "data" or None, default=None
        Public bounds on each feature, as scalars or arrays of shape (n_features,);
        values outside are clipped. ``"private"``: estimated inside the fit (a noisy
        logarithmic histogram per column), stored in ``bounds_``. Private parameters
        take ``bounds_epsilon_share`` of ε (:func:`dpsk.set_config`, 10 %), recorded in
        the fit's one event.

        With both, rows are clipped to the box and then to the ball. If both are left
        out (None), ``data_norm`` is ``"private"``; ``"data"`` (either) derives it from
        the data with a :class:`~dpsk.exceptions.PrivacyLeakWarning`, which breaks the
        guarantee.

    l1_norm : float, "private", "auto" or None, default="auto"
        Public bound on the L1 norm of each centred row (``‖c(x) − t‖₁``, see the
        Notes): rows beyond it are scaled down towards the centre. Only the pure-ε
        release (``delta=0``) uses it: its Laplace noise is calibrated to the L1
        sensitivity of the second-moment matrix, ``(B₁² + B₂²)/2``, where ``bounds``
        and ``data_norm`` alone give B₁ up to √d times B₂ (a dense corner), so a
        tight L1 bound cuts the noise by up to a factor d/2 (one-hot data: Adult's rows
        have ‖x‖₁ <= 13 against √107·√13 ≈ 37 from ``data_norm = √13``).
        ``"private"``: the 0.9-quantile of the rows' L1 norms, estimated inside the fit
        as the other private parameters (:ref:`bounds`; ``bounds_epsilon_share`` of ε),
        stored in ``l1_norm_``. ``"auto"``: ``"private"`` when ``delta=0``,
        ``n_features >= 4`` (then the worst-case L1 sensitivity of a ball or an even
        box is at least 2.5 times the best possible, (d + 1)/2 against 1 in units of
        B₂², which outweighs the 10 % of ε the estimate takes) and neither ``bounds``
        nor ``data_norm`` is ``"private"`` (the estimate would halve their share), else
        None; a rule on public parameters only. None: B₁ from ``bounds`` and ``data_norm`` only (and
        always with ``delta > 0`` or on Dask arrays).

    copy : bool, default=True
        Kept for compatibility with scikit-learn; X is never modified.

    whiten : bool, default=False
        Scale the projections to unit (noisy) variance.

    {accountant}

    {random_state}

    Attributes
    ----------
    components_ : ndarray of shape (`n_components_`, n_features)
        Principal axes, by decreasing explained variance (sign: largest entry positive).
    explained_variance_ : ndarray of shape (`n_components_`,)
        Noisy variance along each axis (clamped at 0).
    explained_variance_ratio_ : ndarray of shape (`n_components_`,)
    singular_values_ : ndarray of shape (`n_components_`,)
    mean_ : ndarray of shape (n_features,)
        Noisy mean (zeros when ``centered=True``).
    n_components_ : int
    noise_variance_ : float
        Mean of the discarded noisy eigenvalues (probabilistic PCA).
    n_samples_ : float
        Noisy number of rows.
    data_norm_ : float or None
        The row-norm bound used (None if only ``bounds`` were given).
    bounds_ : tuple of ndarray or None
        The bounds used (None if not given).
    l1_norm_ : float or None
        The L1 clip of the centred rows used by the pure-ε release (None: none beyond
        ``bounds`` and ``data_norm``).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when X has string feature names.
    {privacy_spent_}

    See Also
    --------
    sklearn.decomposition.PCA : the non-private estimator.

    Notes
    -----
    **Privacy.** ε-DP (``delta=0``) or (ε, δ)-DP under add/remove-one-row. Rows are
    clipped (box and/or ball), then summed about a centre t: the midpoint of the box when
    that gives the smaller row norm (only bounds, or a box containing the origin),
    otherwise the origin. With y = c(x) − t and B₂, B₁ public bounds on ‖y‖₂, ‖y‖₁
    (the ball's radius and √d times it; the box's half-widths or largest corner; the
    smaller of the two when both apply), one row changes:

    ===========================  =================  ===============  ============
    statistic                    L1 sensitivity     L2 sensitivity   budget share
    ===========================  =================  ===============  ============
    count n                      1                  1                0.05
    Σ y                          B₁                 B₂               0.15
    upper triangle of Σ y yᵀ     (B₁² + B₂²)/2      B₂²              0.80
    ===========================  =================  ===============  ============

    (the upper triangle, diagonal included, of y yᵀ has L2 norm
    √((‖y‖⁴ + Σyⱼ⁴)/2) <= ‖y‖² and L1 norm (‖y‖₁² + ‖y‖₂²)/2).

    **The L1 clip** (``l1_norm``, pure ε only). Rows are further scaled towards the
    centre, ``y ← y · min(1, L/‖y‖₁)``, which keeps them in the box and the ball
    (a convex combination with the centre, which lies in both whenever it is used),
    so B₂ still holds, and B₁ becomes min(B₁, L). Proof of the sensitivities: each
    row's computed y (after grid rounding, which moves ‖y‖₁ by at most half the sum of
    the grid steps: the clip, inside the exact Gram's pass, scales to L minus the whole
    sum, or to L/2 when that is larger, less a relative 2**-28 for the float errors of
    the scaling; ``dpsk._core._exact_sums._l1_margin``) has ‖y‖₁ <= L, so one row
    moves Σy by at most L in L1 and the triangle by (‖y‖₁² + ‖y‖₂²)/2 <= (L² + B₂²)/2;
    the Laplace release of the table is then ε-DP as before. With ``"private"`` L,
    it is the 0.9-quantile of the rows' ‖y‖₁ (box and ball clipped, about the same
    centre) by the exponential mechanism (``dpsk.stats._bounds.BoundsQuery``,
    inside [0, B₁] when B₁ is public, else after a logarithmic histogram),
    ε_b = ``bounds_epsilon_share`` · ε (shared with the other private parameters),
    and the table gets ε − ε_b: adaptive sequential composition, ε in total, one
    event. Why it helps: with only ``bounds`` or ``data_norm``, B₁ is up to √d B₂ and
    the triangle's L1 sensitivity up to (d + 1) B₂²/2, while rows that are sparse or
    one-hot have ‖y‖₁ far below √d ‖y‖₂ (Adult, ``data_norm = √13``: the pure-ε top-5
    subspace captures 0.99 of the non-private variance instead of 0.50 at ε = 1,
    ``benchmarks/bench_decomposition.py``). The three are released as
    one vector (``dpsk.mechanisms._joint.JointRelease``), with lattice Laplace noise (shares
    of ε) or lattice Gaussian noise (shares of the zCDP budget); the noisy triangle is
    mirrored into a symmetric matrix. With ``centered=True`` the centre is the origin and
    the sum is not released (the count and the matrix share the budget 0.05 : 0.8).
    The covariance Ĉ = Σyyᵀ/n − ȳȳᵀ, its eigen-decomposition, ``mean_ = t + ȳ`` (clipped
    to the box) and everything else are post-processing. Released: ``components_``,
    ``explained_variance_``, ``singular_values_``, ``mean_``, ``n_samples_``,
    ``noise_variance_``. Floating-point safe: rows are centred and quantised on a public
    grid before an exact integer accumulation, for up to 2**36 rows (see
    ``dpsk._core._exact_sums``). With ``sample_weight`` (clipped to [0, 1], then rounded down
    to multiples of 2**-10) the three sums are weighted: one row's terms are scaled by
    w <= 1, so the sensitivities above hold unchanged.
    Domain: finite X, finite, non-negative ``sample_weight``. Data outside it raise a
    ``ValueError`` before any noise is drawn, which reveals only that the data left the
    domain (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.decomposition import PCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(10000, 3)) * [3.0, 1.0, 0.1]
    >>> pca = PCA(1, epsilon=1.0, delta=1e-6, bounds=(-10, 10), random_state=0).fit(X)
    >>> np.round(np.abs(pca.components_), 1)
    array([[1., 0., 0.]])
    """

    # Either bound gives a guarantee (see dpsk.utils.estimator_checks).
    _alternative_sensitivity_params = (("bounds", "data_norm"),)

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="neither"), None],
        "data_norm": [Interval(Real, 0, None, closed="neither"), PRIVATE_CONSTRAINT, None],
        "centered": ["boolean"],
        "bounds": [*BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "l1_norm": [Interval(Real, 0, None, closed="neither"), StrOptions({"private", "auto"}), None],
        "copy": ["boolean"],
        "whiten": ["boolean"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        epsilon=1.0,
        delta=0.0,
        data_norm=None,
        centered=False,
        bounds=None,
        l1_norm="auto",
        copy=True,
        whiten=False,
        accountant=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.centered = centered
        self.bounds = bounds
        self.l1_norm = l1_norm
        self.copy = copy
        self.whiten = whiten
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y=None, sample_weight=None):
        """Fit the principal axes on X with differential privacy.

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
        self._check_privacy_budget(budget_event(self.epsilon, self.delta))
        if is_dask(X, sample_weight):  # exact per-chunk Gram sums, the same release (dpsk.dask)
            return dask_fit(self, X, sample_weight=sample_weight)
        refuse_sparse(
            X,
            "PCA",
            "its private covariance is a dense n_features x n_features matrix centred on a dense mean. "
            "Densify X (X.toarray()) if n_features is moderate, or reduce the features first "
            "(e.g. dpsk.feature_selection); scikit-learn's non-private alternative is TruncatedSVD",
        )
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C")
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        n_features = X.shape[1]
        if isinstance(self.n_components, Integral) and self.n_components > n_features:
            raise ValueError(f"n_components={self.n_components} must be <= n_features={n_features}")
        plan, (lower, upper, data_norm, l1_norm) = self._sensitivity(X)
        # Centred data: the second moment about the origin is the covariance.
        midpoint = not self.centered
        geometry = _Geometry(lower, upper, data_norm, n_features, allow_midpoint=midpoint, l1_norm=l1_norm)
        rng = release_generator(self.random_state, context=self, data=(X, sample_weight))
        release = self._release(geometry, rng, epsilon=plan.fit_epsilon)
        n_triangle = n_features * (n_features + 1) // 2
        sizes = (1, n_triangle) if self.centered else (1, n_features, n_triangle)
        plan.spend(self, release.privacy_event(sizes), rng)
        dtype = X.dtype  # of the fitted attributes, whatever the kernels read
        X = _in_box_dtype(X, lower, upper)
        if plan.requests:  # the released bounds, then the release built on them
            lower, upper = plan.box("bounds", X, (lower, upper))
            X = _in_box_dtype(X, lower, upper)
            if "data_norm" in plan:
                rows = X if lower is None else clip_bounds(np.asarray(X, dtype=np.float64), lower, upper)
                data_norm = plan.release("data_norm", row_norms(rows))
            first = None
            if "l1_norm" in plan:  # the L1 norms about the centre of the released box and ball
                # One pass: the norms, and the exact sums of the unscaled rows that the
                # statistics below complete for the released l1_norm (L1GramPass).
                box = _Geometry(lower, upper, data_norm, n_features, allow_midpoint=midpoint)
                first = box.l1_pass(X, sample_weight)
                l1_norm = plan.release("l1_norm", first[0].norms)
            geometry = _Geometry(lower, upper, data_norm, n_features, allow_midpoint=midpoint, l1_norm=l1_norm)
            geometry.use_pass(first)
            release = self._release(geometry, rng, epsilon=plan.fit_epsilon)
        statistics = self._statistics(geometry, X, sample_weight)
        return self._fit_statistics(statistics, release, geometry, (lower, upper), data_norm, dtype)

    def _fit_statistics(self, statistics, release, geometry, bounds, data_norm, dtype):
        """The noisy release of (count, Σy, Σyyᵀ) and the components (in memory and Dask)."""
        count, total, gram = statistics
        n_features = total.shape[0]
        upper_index = np.triu_indices(n_features)
        if self.centered:
            count, triangle = release.randomise((np.array([count]), gram[upper_index]))
            total = np.zeros(n_features)
        else:
            count, total, triangle = release.randomise((np.array([count]), total, gram[upper_index]))
        noisy = np.empty((n_features, n_features))
        noisy[upper_index] = triangle
        noisy.T[upper_index] = triangle  # the mirror, in place
        del triangle, upper_index

        self.bounds_ = None if bounds[0] is None else bounds
        self.data_norm_ = data_norm
        self.l1_norm_ = geometry.l1_norm
        self._set_components(noisy, count, total, geometry, dtype)
        return self

    def _statistics(self, geometry, X, sample_weight=None):
        return geometry.statistics(X, sample_weight)

    def _sensitivity(self, X):
        """``(plan, (lower, upper, data_norm, l1_norm))``: the public bounds (None when not
        given; ``"data"``: derived from the data with a warning) and the plan of the private
        ones (``"private"``, or ``data_norm`` when neither is given), with placeholders
        ([−1, 1]^d, norm 1) until their release."""
        n_features = X.shape[1]
        requests = {}
        lower = upper = data_norm = None
        if is_private(self.bounds):
            requests["bounds"] = ("columns", n_features, None)
            lower, upper = np.full(n_features, -1.0), np.full(n_features, 1.0)
        elif self.bounds is not None:  # public, or "data" (with its leak warning)
            lower, upper = resolve_bounds(self, self.bounds, X)
        # Left out with no public box either: a private data_norm (issue 19).
        if is_private(self.data_norm) or (self.data_norm is None and self.bounds is None):
            corner = None if lower is None or "bounds" in requests else float(np.linalg.norm(np.maximum(-lower, upper)))
            requests["data_norm"] = ("row_norm", 1, corner or None)
            data_norm = 1.0
        elif self.data_norm is not None:  # public, or "data" (with its leak warning)
            data_norm = resolve_data_norm(self, self.data_norm, X)
        l1_norm = self.l1_norm
        if isinstance(l1_norm, str) and l1_norm == "auto":  # public parameters only
            # Not next to private bounds: it would halve their share of ε.
            l1_norm = "private" if self.delta == 0 and n_features >= 4 and not requests else None
        if self.delta > 0:
            l1_norm = None
        elif is_private(l1_norm):
            public = not requests  # the worst case B₁ is a public domain for its quantile
            domain = _Geometry(lower, upper, data_norm, n_features, allow_midpoint=not self.centered).l1
            requests["l1_norm"] = ("row_norm", 1, domain if public else None)
            l1_norm = None  # the placeholder: the geometry's own B₁ until the release
        return PrivateSensitivity(self, self.epsilon, requests), (lower, upper, data_norm, l1_norm)

    def _release(self, geometry, rng, epsilon=None):
        """The joint release of the fit (count and matrix only when ``centered``)."""
        b2, b1 = geometry.l2, geometry.l1
        sensitivities = ((1.0, 1.0), (b1, b2), ((b1 * b1 + b2 * b2) / 2.0, b2 * b2))
        shares = BUDGET_SHARES
        if self.centered:
            sensitivities, shares = sensitivities[::2], shares[::2]
        epsilon = self.epsilon if epsilon is None else epsilon
        return JointRelease(sensitivities, shares, epsilon=epsilon, delta=self.delta, random_state=rng)

    def _set_components(self, second_moment, count, total, geometry, dtype):
        """Eigen-decomposition of the noisy covariance and the fitted attributes (post-processing)."""
        n_features = second_moment.shape[0]
        n = max(float(count[0]), 2.0)
        mean_y = total / n
        covariance = second_moment  # in place: the caller's own noisy matrix
        covariance /= n
        covariance -= np.outer(mean_y, mean_y)
        mean = geometry.centre + mean_y
        if geometry.lower is not None:
            mean = np.clip(mean, geometry.lower, geometry.upper)
        with single_blas_thread():  # a d × d problem: see dpsk.utils._threads
            eigenvalues, eigenvectors = np.linalg.eigh(covariance)
        order = np.argsort(eigenvalues)[::-1]
        eigenvalues = np.maximum(eigenvalues[order], 0.0) * (n / (n - 1.0))
        components = eigenvectors[:, order].T
        # Deterministic signs (largest entry positive), as scikit-learn's svd_flip.
        signs = np.sign(components[np.arange(n_features), np.argmax(np.abs(components), axis=1)])
        components *= np.where(signs == 0, 1.0, signs)[:, None]
        total_variance = eigenvalues.sum()
        ratio = eigenvalues / total_variance if total_variance > 0 else np.zeros(n_features)

        if self.n_components is None:
            k = n_features
        elif isinstance(self.n_components, Integral):
            k = int(self.n_components)
        else:
            k = int(np.searchsorted(np.cumsum(ratio), self.n_components, side="right")) + 1
            k = min(k, n_features)
        self.n_components_ = k
        self.n_samples_ = n
        self.mean_ = mean.astype(dtype)
        self.components_ = components[:k].astype(dtype)
        self.explained_variance_ = eigenvalues[:k].astype(dtype)
        self.explained_variance_ratio_ = ratio[:k].astype(dtype)
        self.singular_values_ = np.sqrt(eigenvalues[:k] * (n - 1.0)).astype(dtype)
        self.noise_variance_ = float(eigenvalues[k:].mean()) if k < n_features else 0.0

    def transform(self, X):
        """Project X on the principal axes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, `n_components_`)
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk
            return dask_apply(self, "transform", X, n_outputs=self.n_components_)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        projected = (X - self.mean_) @ self.components_.T
        if self.whiten:
            projected /= np.sqrt(np.maximum(self.explained_variance_, np.finfo(self.explained_variance_.dtype).tiny))
        return projected

    def inverse_transform(self, X):
        """Map projections back to the feature space.

        Parameters
        ----------
        X : array-like of shape (n_samples, `n_components_`)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = np.asarray(X, dtype=self.components_.dtype)
        if self.whiten:
            X = X * np.sqrt(self.explained_variance_)
        return X @ self.components_ + self.mean_

    def _scaled_components(self):
        """The released axes (scaled by the root explained variance when whitening) and the
        variances above the noise level, in float64 (probabilistic PCA, Tipping & Bishop 1999)."""
        components = self.components_.astype(np.float64)
        variance = self.explained_variance_.astype(np.float64)
        if self.whiten:
            components = components * np.sqrt(variance)[:, None]
        return components, np.maximum(variance - self.noise_variance_, 0.0)

    def get_covariance(self):
        """Covariance of the data under the fitted probabilistic PCA model.

        ``components_.T @ diag(explained_variance_ − noise_variance_) @ components_ +
        noise_variance_ · I``, as in scikit-learn.

        Returns
        -------
        cov : ndarray of shape (n_features, n_features)

        Notes
        -----
        **Privacy.** Post-processing of the released model (``components_``,
        ``explained_variance_``, ``noise_variance_``): no further cost.
        """
        check_is_fitted(self)
        components, excess = self._scaled_components()
        cov = (components.T * excess) @ components
        cov[np.diag_indices_from(cov)] += self.noise_variance_
        return cov

    def get_precision(self):
        """Precision matrix (inverse covariance) of the fitted probabilistic PCA model.

        Computed with the matrix inversion lemma when some components are discarded
        (``noise_variance_ > 0``), else by inverting :meth:`get_covariance`.

        Returns
        -------
        precision : ndarray of shape (n_features, n_features)

        Notes
        -----
        **Privacy.** Post-processing of the released model: no further cost.
        """
        check_is_fitted(self)
        noise = self.noise_variance_
        if noise == 0.0:
            return np.linalg.inv(self.get_covariance())
        components, excess = self._scaled_components()
        inner = components @ components.T / noise
        with np.errstate(divide="ignore"):
            inner[np.diag_indices_from(inner)] += 1.0 / excess
        precision = components.T @ np.linalg.inv(inner) @ components
        precision /= -(noise**2)
        precision[np.diag_indices_from(precision)] += 1.0 / noise
        return precision

    def score_samples(self, X):
        """Log-likelihood of each row of X under the fitted probabilistic PCA model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ll : ndarray of shape (n_samples,)

        Notes
        -----
        **Privacy.** Post-processing of the released model, evaluated on the X given
        here (not the training data): no further cost.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        centred = np.asarray(X, dtype=np.float64) - self.mean_
        precision = self.get_precision()
        _, logdet = np.linalg.slogdet(precision)
        quadratic = np.einsum("ij,ij->i", centred @ precision, centred)
        return -0.5 * (quadratic + X.shape[1] * np.log(2.0 * np.pi) - logdet)

    def score(self, X, y=None):
        """Average log-likelihood of the rows of X under the fitted probabilistic PCA model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        ll : float

        Notes
        -----
        **Privacy.** Post-processing of the released model, evaluated on the X given
        here: no further cost. (Scoring on the training data inside a search is a
        release about that data: use dpsk's private searches, which charge for it.)
        """
        return float(np.mean(self.score_samples(X)))

    @property
    def _n_features_out(self):
        return self.components_.shape[0]
