# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private least squares by noisy sufficient statistics: LinearRegression, Ridge.

The method
==========

1. Standardise with public quantities only. Features are clipped to ``bounds_X`` and
   mapped to u = (x − m)/h ∈ [−1, 1]^d (m the centre, h the half-width of the box);
   with ``row_norm`` the centred rows are further clipped to ‖x − m‖ ≤ row_norm, hence
   ‖u‖ ≤ r = row_norm / min(h) (held exactly after the quantisation of step 2). The target is clipped to
   ``bounds_y`` and mapped to t ∈ [−1, 1]. Without
   an intercept nothing is centred (m = 0, h = max(|lower|, |upper|)), since a shift
   would change the model. All clipping uses ``dpsk._core._clip``.
2. Release, with ũ = [u, 1] (intercept) or ũ = u, the upper triangle (diagonal included)
   of A = Σ ũũᵀ and the vector B = Σ ũ t. yᵀy is not needed and not released.
   Both come from one exact pass (``dpsk._core._exact_sums.exact_gram_sums``) over the
   rows z = [c(x) − m, c(y) − m_y]: each value is rounded onto a public power-of-two
   grid of about 2⁻²⁰ of its half-width (to nearest, clamped so that |u_j|, |t| <= 1
   hold as real numbers; with ``row_norm`` the rows are first clipped to a radius
   smaller by the grid's diagonal, so that ‖u‖ <= r still holds after rounding) and
   summed as integers. A and B are the exact rationals (integers times grid steps over
   h), multiplied by (1 − η)/unit (η = ``ROUNDING_MARGIN`` = 2⁻¹⁴, unit the user-level
   divisor h or 1; B also by the Gaussian weight w) and rounded *once*: by the argument
   of ``dpsk._core._exact_sums`` (steps 4–5) the values handed to the mechanisms move by
   at most the sensitivities below between neighbours, for n <= 2³⁶ rows. The noisy
   values are divided by (1 − η) afterwards (post-processing).
3. Post-process (free): symmetrise A, project it onto the PSD cone (negative
   eigenvalues to 0), add a ridge λ equal to half the expected spectral norm of the noise
   matrix (2·sd·sqrt(p)·0.5, from the public noise level) plus the user's ``alpha``, and
   solve. The solved matrix is ⪰ λI, so the solution is bounded by ‖B̃‖/λ: a fit never
   explodes.

Sensitivities (add/remove one row), exact
=========================================

Let q = min(r², d) and s = min(r·sqrt(d), d): the largest ‖u‖₂² and ‖u‖₁ over the
box ∩ ball (both attained at u_j = min(1, r/sqrt(d))). |t| <= 1. With an intercept:

* L1 of A's upper triangle: Σ_{j<=k}|u_j u_k| + Σ_j |u_j| + 1 = (‖u‖₁² + ‖u‖₂²)/2 + ‖u‖₁ + 1
  <= (s² + q)/2 + s + 1; L1 of B: ‖u‖₁ + 1 <= s + 1 (without intercept drop the "+ s + 1"
  and "+ 1" terms). For d features in a box this is d(d+1)/2 + 2d + 2, not d·max².
* L2² of A's upper triangle: (‖u‖₂⁴ + Σ u_j⁴)/2 + ‖u‖₂² + 1 <= (q² + ⌊q⌋ + (q − ⌊q⌋)²)/2
  + q + 1 (attained with ⌊q⌋ coordinates at ±1); L2² of B: ‖u‖₂² + 1 <= q + 1.
* m targets (2-d y): the exact pass runs over z = [c(x) − m, c(Y) − m_Y], whose Gram
  holds A and the p × m matrix B = Σ ũ tᵀ, each target t_i standardised by its own
  bounds. One row moves B by ũ tᵀ, t ∈ [−1, 1]^m: L1 ‖ũ‖₁‖t‖₁ <= m (s + 1) and L2
  (Frobenius) ‖ũ‖₂‖t‖₂ <= sqrt(m (q + 1)), attained with every target at a bound.
  The sensitivities of B above are multiplied by m and sqrt(m), A's are unchanged, and
  all targets are released together: a record is protected in all its targets at the
  cost of one fit.

ε-DP: two :class:`~dpsk.mechanisms.Laplace` releases, A with ε_A and B with ε_B,
ε_A/ε_B = sqrt(L1_A / L1_B) (the A-noise is multiplied by the coefficients, of order 1
after standardisation, and there are more A entries). (ε, δ)-DP: one
:class:`~dpsk.mechanisms.Gaussian` release of [A, w·B] with w = (L2_A/L2_B)^(2/3) (the
weight minimising σ_A + σ_B under one L2 sensitivity). Both mechanisms are
floating-point safe.
"""

import math
from fractions import Fraction
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin

from dpsk._core._clip import clip_bounds, clip_rows_l2
from dpsk._core._exact_sums import GRAM_BITS, ROUNDING_MARGIN, ball_clip_radius, exact_gram_sums, fixed_point_grid
from dpsk._core._sparse import add_exact_grams, dense_row_blocks
from dpsk.accounting import ComposedEvent
from dpsk.accounting._calibration import split_epsilon
from dpsk.accounting._events import budget_event, compose
from dpsk.base import (
    BOUNDS_CONSTRAINT,
    DP_PARAMETER_CONSTRAINTS,
    TARGET_BOUNDS_CONSTRAINT,
    DaskScoreMixin,
    DPEstimatorMixin,
)
from dpsk.dask._data import dask_apply, dask_fit, is_dask
from dpsk.linear_model._user_level import USER_LEVEL_NOTES, user_plan
from dpsk.mechanisms import Gaussian, Laplace
from dpsk.stats._bounds import row_norms
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import (
    PRIVATE_CONSTRAINT,
    PRIVATE_ONLY_CONSTRAINT,
    PrivateSensitivity,
    is_private,
    refuse_sparse_private,
    wants_private,
)
from dpsk.utils._sklearn_compat import Interval, _fit_context, check_is_fitted, validate_data
from dpsk.utils._sparse import ACCEPT_SPARSE
from dpsk.utils.validation import _check_sample_weight_dp, _combine_weights, release_generator, resolve_bounds

__all__ = ["LinearRegression", "Ridge", "least_squares_sensitivities"]

#: Parameter and privacy text shared by LinearRegression and Ridge.
LEAST_SQUARES_DOCS = {
    **{k: _shared_docs[k] for k in ("epsilon", "accountant", "random_state", "privacy_spent_")},
    "delta": """delta : float, default=0.0
        Privacy parameter δ in [0, 1). ``0``: ε-DP with Laplace noise. ``> 0``: (ε, δ)-DP
        with Gaussian noise, usually much more accurate. Choose δ well below 1/n_samples.""",
    "bounds_X": """bounds_X : tuple (lower, upper), "private", "data" or None, default=None
        Public bounds on each feature (scalars or arrays of shape (n_features,)); values
        outside are clipped. ``"private"``: estimated inside the fit by a noisy
        logarithmic histogram of each column (:func:`dpsk.stats.bounds`; powers of two)
        with a share of ε (:ref:`bounds`). ``None`` (left out) is ``"private"``, unless
        a public ``row_norm`` is given (then the box is [−row_norm, row_norm] per
        feature). ``"data"`` derives them from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (stored in ``bounds_X_``).""",
    "bounds_y": """bounds_y : tuple (lower, upper), "private", "data" or None, default=None
        Public bounds on the target; values outside are clipped. With several targets
        (2-d ``y``), scalars apply to every target and arrays of shape (n_targets,) give
        each its own. ``"private"`` (or ``None``, left out): estimated inside the fit as
        ``bounds_X`` is. ``"data"`` derives them from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (stored in ``bounds_y_``).""",
    "row_norm": """row_norm : float, "private" or None, default=None
        Optional public bound on the L2 norm of each row after centring at the middle of
        ``bounds_X`` (at 0 without intercept); rows beyond are scaled down to it. For
        data whose rows are rarely all at the corners of the box (e.g. standardised
        features) this cuts the noise several-fold: the sensitivity of XᵀX grows with the
        largest row norm, which the box alone puts at its corner. ``None``: the box only.
        ``"private"``: the 0.9-quantile of the centred, clipped rows' norms, estimated
        inside the fit (:func:`dpsk.stats.bounds`, inside [0, ‖h‖] for public
        ``bounds_X``), stored in ``row_norm_``.

        Private parameters share ``bounds_epsilon_share`` of ε (:func:`dpsk.set_config`,
        10 % by default) equally; the rest is the fit's, and the fit records one event
        composing all of them (the ledger's label names them). Item level only: with
        ``groups`` pass public bounds (or ``"data"``), also for left-out ones.""",
    "fit_intercept": """fit_intercept : bool, default=True
        Fit an intercept (not penalised). Features and target are then centred at the
        middle of their public bounds before the statistics are computed.""",
    "fitted": """coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        Coefficients, in X's dtype (2-d when ``y`` is 2-d, as in scikit-learn).
    intercept_ : float or ndarray of shape (n_targets,)
        Intercept (0 when ``fit_intercept=False``).
    bounds_X_ : tuple of ndarray
        The feature bounds used (``bounds_X`` or derived).
    bounds_y_ : tuple of float, or tuple of ndarray of shape (n_targets,)
        The target bounds used (``bounds_y`` or derived).
    row_norm_ : float or None
        The row-norm bound used (``row_norm``, or its private estimate; None without).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names.
    threshold_ : float
        Only after a fit with ``groups``: the threshold h (a user's rows weigh at most h
        rows), chosen privately.""",
    "privacy": """**Privacy.** ε-DP (``delta=0``) or (ε, δ)-DP under the add/remove-one-row
    relation, assuming the public ``bounds_X``, ``bounds_y`` and ``row_norm`` (data
    outside is clipped, nothing is assumed about it). Those set to ``"private"`` are
    released first, each ε_b-DP (their share of ε), and the statistics below are
    released with the rest of ε for the released bounds: the fit is (ε, δ)-DP by
    adaptive composition, recorded as one event (the bounds' releases, then the fit's). Released: the upper triangle of
    A = Σ ũũᵀ and B = Σ ũt for the standardised rows ũ = [u, 1] and targets t (see
    ``dpsk/linear_model/_least_squares.py`` for the exact sensitivities); the
    coefficients are post-processing. With m targets (2-d ``y``), each standardised
    by its own bounds to t ∈ [−1, 1]^m, B = Σ ũtᵀ is p × m and one row moves it by
    ũtᵀ: ‖ũ‖₁‖t‖₁ <= m·L1_B and ‖ũ‖₂‖t‖₂ <= sqrt(m)·L2_B (attained with every target
    at a bound); A is the same for every target. All targets are released at once, in
    the same (ε, δ): the privacy cost covers every target of a row, not one target's.
    Budget: ε-DP splits ε between A and B in the ratio sqrt(L1_A) : sqrt(L1_B) of
    their L1 sensitivities (two Laplace releases); (ε, δ)-DP makes one Gaussian release
    of [A, w·B]. Both mechanisms are floating-point safe
    (noise on a lattice, :mod:`dpsk.mechanisms`). The solve projects the noisy A onto
    the PSD cone and adds a ridge of half the expected spectral norm of its noise (a
    public quantity), so the solution stays bounded for every draw. With
    ``sample_weight`` (clipped to [0, 1]) A and B are weighted sums: one row's terms
    are scaled by w <= 1, so the sensitivities above still hold.

    """
    + USER_LEVEL_NOTES
    + """ A and B are computed with the row weights and divided by h
    before their release, which gives them the item-level sensitivities above (a
    user's rows form a weighted sum of at most h rows' terms); the coefficients do not
    change (both are divided), ``Ridge``'s ``alpha`` is divided by h along. Sample
    weights multiply the user weights (a user still weighs at most h rows).

    The sensitivities hold for the *computed* A and B, for up to 2**36 rows, float32 or
    float64: they are summed exactly (each clipped, centred value rounded onto a
    public grid of about 2**-20 of its half-width, weights rounded down to multiples
    of 2**-10, integer sums), converted with one rounding, and scaled by
    1 − 2**-14 before the noise (``dpsk._core._exact_sums``, "Exact sums"); the noise
    is 0.006 % larger than the real-number analysis needs.
    Domain: finite X and y, finite, non-negative ``sample_weight``; with ``groups``, a
    user id for every row. Data outside it raise a ``ValueError`` before any noise is
    drawn, which reveals only that the data left the domain (:ref:`declared_domain`).""",
}


# Ridge added after the PSD projection, as a multiple of the expected spectral norm of the
# noise matrix (2·sd·sqrt(p) for p×p symmetric noise with entry sd). 0.5 was the best
# multiple of {1/8, ..., 2} on synthetic correlated-Gaussian regressions (d = 5 to 40,
# n = 5000 and 50000, ε-DP and (ε, δ)-DP), and never gave a negative median R² there.
_NOISE_RIDGE = 0.5


def least_squares_sensitivities(n_features, row_norm, fit_intercept, n_targets=1):
    """Exact sensitivities of (upper triangle of A, B) over the box [−1, 1]^d ∩ {‖u‖ <= r}.

    Parameters
    ----------
    n_features : int
    row_norm : float or None
        r, the L2 bound on standardised rows (None: the box alone).
    fit_intercept : bool
    n_targets : int, default=1
        m, the number of targets: B = Σ ũ tᵀ is a p × m matrix, and one row moves it by
        ũ tᵀ with t ∈ [−1, 1]^m, so ‖ũ tᵀ‖₁ = ‖ũ‖₁‖t‖₁ <= m·L1_B and ‖ũ tᵀ‖_F =
        ‖ũ‖₂‖t‖₂ <= sqrt(m)·L2_B (attained: every target at its bound). A does not
        depend on the targets.

    Returns
    -------
    l1_a, l1_b, l2_a, l2_b : float
    """
    d = n_features
    q = float(d) if row_norm is None else min(row_norm * row_norm, float(d))
    s = float(d) if row_norm is None else min(row_norm * math.sqrt(d), float(d))
    fourth = math.floor(q) + (q - math.floor(q)) ** 2
    l1_a, l1_b = (s * s + q) / 2.0, s
    l2_a2, l2_b2 = (q * q + fourth) / 2.0, q
    if fit_intercept:
        l1_a, l1_b = l1_a + s + 1.0, l1_b + 1.0
        l2_a2, l2_b2 = l2_a2 + q + 1.0, l2_b2 + 1.0
    l1_b, l2_b2 = l1_b * n_targets, l2_b2 * n_targets
    # Rounded up by a relative margin: the formulas are evaluated in floating point.
    up = 1.0 + 2.0**-40
    return l1_a * up, l1_b * up, math.sqrt(l2_a2) * up, math.sqrt(l2_b2) * up


class _BaseLeastSquares(DaskScoreMixin, DPEstimatorMixin, RegressorMixin, BaseEstimator):
    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        "bounds_X": [*BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "bounds_y": [*TARGET_BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "row_norm": [Interval(Real, 0, None, closed="neither"), PRIVATE_ONLY_CONSTRAINT, None],
        "fit_intercept": ["boolean"],
    }

    def _standardisation(self, X, box=None, row_norm=None):
        """(m, h) of the features and the row-norm bound r in standardised units.

        ``box``: the feature bounds when already resolved (private), else resolved here;
        ``row_norm``: the resolved row-norm bound (None: the box only).
        """
        if box is not None:
            lower, upper = box
        elif self.bounds_X is None and row_norm is not None and not is_private(self.row_norm):
            d = X.shape[1]
            lower, upper = np.full(d, -float(row_norm)), np.full(d, float(row_norm))
        else:
            lower, upper = resolve_bounds(self, self.bounds_X, X, param="bounds_X", attribute="bounds_X_")
        if self.fit_intercept:
            centre, half = lower / 2.0 + upper / 2.0, upper / 2.0 - lower / 2.0  # halves first: no overflow
        else:
            centre, half = np.zeros_like(lower), np.maximum(np.abs(lower), np.abs(upper))
        half = np.where(half > 0, half, 1.0)  # a constant feature: any scale will do
        r = None if row_norm is None else float(row_norm) / float(np.min(half))
        return (lower, upper), centre, half, r

    def _private_requests(self, X, Y):
        """The ``"private"`` parameters of this fit: ``{param: (which, n_columns, domain)}`` (public).

        A private row norm is a norm of the clipped, centred rows: with public
        ``bounds_X`` it lies in [0, ‖h‖] (h the half-widths); else it has no domain (a
        logarithmic histogram of the norms finds their scale first).
        """
        private = {"bounds_X": self._private_bounds_X(), "bounds_y": wants_private(self.bounds_y)}
        private["row_norm"] = is_private(self.row_norm)
        refuse_sparse_private(self, X, *(["row_norm"] if private["row_norm"] else []))  # it clips dense rows
        requests = {}
        if private["bounds_X"]:
            requests["bounds_X"] = ("columns", X.shape[1], None)
        if private["bounds_y"]:
            requests["bounds_y"] = ("columns", Y.shape[1], None)
        if is_private(self.row_norm):
            domain = None
            if isinstance(self.bounds_X, (tuple, list, dict)):
                (lower, upper), _, half, _ = self._standardisation(X)
                domain = float(np.linalg.norm(np.where(upper > lower, half, 0.0))) or None
            requests["row_norm"] = ("row_norm", 1, domain)
        return requests

    def _private_bounds_X(self):
        """Whether ``bounds_X`` is estimated privately: ``"private"``, or left out (None)
        without a public ``row_norm`` (which gives the box [−row_norm, row_norm])."""
        return is_private(self.bounds_X) or (self.bounds_X is None and wants_private(self.row_norm))

    def _private_row_norm(self, plan, X, box, centre):
        """The private row-norm bound: an upper quantile of ‖clip(x) − m‖ (after the spend)."""
        features = clip_bounds(np.asarray(X, dtype=np.float64), box[0], box[1])
        features -= centre
        value = plan.release("row_norm", row_norms(features))
        # Floored at a public fraction of the box's diagonal (post-processing): the exact
        # sums need a grid coarser than 2**-990.
        floor = float(np.linalg.norm((box[1] - box[0]) / 2.0)) * 2.0**-20
        return max(value, floor) if floor > 0 else value

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, groups=None, sample_weight=None):
        """Fit the model with a private release of its sufficient statistics.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, clipped to ``bounds_X`` (and ``row_norm``).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets, clipped to ``bounds_y`` (several targets: one release for all).
        groups : array-like of shape (n_samples,) or None, default=None
            User id of each row. When given, the guarantee protects every user as a
            whole (all their rows), see the Notes. Routed by scikit-learn's metadata
            routing (``set_fit_request(groups=True)``) through pipelines and searches.
        {sample_weight}

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit_rows(X, y, groups, sample_weight)

    def _fit_rows(self, X, y, groups=None, sample_weight=None):
        """Fit with every row (or, with ``groups``, every user) a privacy unit (add/remove).

        With ``groups``, rows are weighted min(1, h/s_user) (a user weighs at most h rows,
        ``dpsk.linear_model._user_level``) and the statistics are divided by h before
        their release: they then have the item-level sensitivities.
        """
        self._check_privacy_budget(budget_event(self.epsilon, self.delta))
        if is_dask(X, y, groups, sample_weight):  # the same release from per-chunk exact sums (dpsk.dask)
            return dask_fit(self, X, y, groups=groups, sample_weight=sample_weight)
        epsilon, delta = float(self.epsilon), float(self.delta)
        X, y = validate_data(
            self,
            X,
            y,
            dtype=[np.float64, np.float32],
            order="C",
            y_numeric=True,
            multi_output=True,
            accept_sparse=ACCEPT_SPARSE,
        )
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        Y = np.asarray(y).reshape(X.shape[0], -1)  # (n_samples, n_targets); public shape
        plan = PrivateSensitivity(self, epsilon, self._private_requests(X, Y), groups=groups)
        users = user_plan(groups, X.shape[0], plan.fit_epsilon)
        d, n_targets = X.shape[1], Y.shape[1]
        row_norm = None if self.row_norm is None or is_private(self.row_norm) else float(self.row_norm)
        if plan.requests:
            # The split of ε between A and B is fixed before the data is read: from the box
            # alone when a bound is still to be released (its cost does not depend on it).
            r_split = None
            if row_norm is not None and not self._private_bounds_X():
                r_split = self._standardisation(X, row_norm=row_norm)[3]
            _, cost = self._releases(users.release_epsilon, delta, d, r_split, n_targets, normalise=True)
        else:
            (lower, upper), centre, half, r = self._standardisation(X, row_norm=row_norm)
            y_lower, y_upper = self._resolve_bounds_y(Y)
            r_split = r
            mechanisms, cost = self._releases(users.release_epsilon, delta, d, r, n_targets)
        cost = plan.cost(compose([users.event, cost]))
        rng = release_generator(self.random_state, context=self, data=(X, y, groups, sample_weight))
        plan.bind(rng)
        self._spend_privacy_budget(cost, note=plan.note)
        if plan.requests:  # the private bounds, then the fit's releases with them
            box = plan.release("bounds_X", X) if "bounds_X" in plan else None
            (lower, upper), centre, half, _ = self._standardisation(X, box=box, row_norm=row_norm)
            if "row_norm" in plan:
                row_norm = self._private_row_norm(plan, X, (lower, upper), centre)
            r = None if row_norm is None else float(row_norm) / float(np.min(half))
            if "bounds_y" in plan:
                y_lower, y_upper = plan.release("bounds_y", Y)
            else:
                y_lower, y_upper = self._resolve_bounds_y(Y)
            mechanisms, _ = self._releases(
                users.release_epsilon, delta, d, r, n_targets, r_split=r_split, normalise=True
            )
        target = self._target_box(y_lower, y_upper)
        contribution = users.resolve(rng)  # user level: releases the threshold h
        weights = _combine_weights(contribution.weights, sample_weight)
        sums = self._exact_sums(X, Y, lower, upper, centre, half, target, weights, row_norm)
        if groups is not None:
            self.threshold_ = contribution.unit
        self.row_norm_ = row_norm
        return self._fit_sums(
            sums, (lower, upper), centre, half, target, contribution.unit, mechanisms, rng, X.dtype, y.ndim
        )

    def _target_box(self, y_lower, y_upper):
        """(lower, upper, centre, half-width) of the targets' box."""
        if self.fit_intercept:
            # Halves first (the same floats, and no overflow for bounds near the float range).
            return y_lower, y_upper, y_lower / 2.0 + y_upper / 2.0, y_upper / 2.0 - y_lower / 2.0
        return y_lower, y_upper, np.zeros_like(y_lower), np.maximum(np.abs(y_lower), np.abs(y_upper))

    def _fit_sums(self, sums, bounds, centre, half, target, unit, mechanisms, rng, dtype, y_ndim):
        """The noisy release of the exact sums and the fitted model (in memory and Dask)."""
        (lower, upper), (y_lower, y_upper, y_centre, y_half) = bounds, target
        y_half = np.where(y_half > 0, y_half, 1.0)
        A_noisy, B_noisy, noise_sd = self._release(sums, half, y_half, unit, mechanisms, rng)
        beta = self._solve(A_noisy, B_noisy, noise_sd, half, y_half, unit)  # (p, n_targets)
        d = half.size
        coef = (beta[:d] * y_half / half[:, None]).T  # (n_targets, n_features)
        intercept = y_centre + y_half * beta[d] - coef @ centre if self.fit_intercept else np.zeros(y_lower.size)
        if y_ndim == 1:  # scikit-learn's shapes: a 1-d target gives 1-d coef_ and a scalar intercept_
            self.coef_ = coef[0].astype(dtype)
            self.intercept_ = dtype.type(intercept[0])
            self.bounds_y_ = (float(y_lower[0]), float(y_upper[0]))
        else:
            self.coef_ = coef.astype(dtype)
            self.intercept_ = intercept.astype(dtype)
            self.bounds_y_ = (y_lower, y_upper)
        self.bounds_X_ = (lower, upper)
        return self

    def _resolve_bounds_y(self, Y):
        """Bounds of each target (arrays of shape (n_targets,)): scalars apply to every target."""
        return resolve_bounds(
            self, self.bounds_y, np.asarray(Y, dtype=np.float64), param="bounds_y", attribute="bounds_y_"
        )

    def _exact_sums(self, X, y, lower, upper, centre, half, target, weights, row_norm=None):
        """Exact sums of z = [c(x) − m, c(y) − m_y] and z zᵀ (``exact_gram_sums``), weighted.

        One pass over the augmented rows gives Σw, Σw z and Σw z zᵀ, hence A and B (and
        yᵀy, unused), as exact integers on the public grid: each row is clipped, centred
        and quantised (to nearest, clamped to the box) *before* the accumulation, so the
        standardised values u = (z_x)/h, t = z_y/h_y satisfy |u_j|, |t| <= 1 as real
        numbers. With ``row_norm`` the centred features are first clipped to a radius
        smaller by the grid's diagonal, so that rounding cannot take ‖z_x‖ above
        ``row_norm`` (‖u‖ <= r). Weights are rounded down (never grow).
        """
        if sp.issparse(X):  # the same exact integers, from bounded dense blocks of rows
            return add_exact_grams(
                self._exact_sums(
                    rows,
                    y[start:stop],
                    lower,
                    upper,
                    centre,
                    half,
                    target,
                    None if weights is None else weights[start:stop],
                    row_norm,
                )
                for start, stop, rows in dense_row_blocks(X)
            )
        y_lower, y_upper, y_centre, y_half = target
        n, d = X.shape
        Z = np.empty((n, d + y.shape[1]))
        # A constant feature (zero half-width) has radius 0: it quantises to 0, as before.
        radius = np.append(np.where(upper > lower, half, 0.0) if self.fit_intercept else half, y_half)
        if row_norm is None:
            Z[:, :d] = X
            box_lower, box_upper, box_centre = lower, upper, centre
        else:
            features = clip_bounds(np.asarray(X, dtype=np.float64), lower, upper)
            features -= centre
            # |z_j| <= row_norm too: the grid's radius; rows are clipped to a ball smaller by
            # the most rounding to nearest can add (ball_clip_radius).
            radius[:d] = np.minimum(radius[:d], float(row_norm))
            step = np.where(radius[:d] > 0, fixed_point_grid(radius[:d], GRAM_BITS)[0], 0.0)
            row_norm = float(row_norm)
            clip_rows_l2(features, ball_clip_radius(row_norm, step), out=features)
            Z[:, :d] = features
            del features
            # Already clipped and centred; scaling towards m keeps rows in the box (|z_j| <= h_j).
            big = np.full(d, np.finfo(np.float64).max)
            box_lower, box_upper, box_centre = -big, big, np.zeros(d)
        Z[:, d:] = y
        return exact_gram_sums(
            Z,
            np.append(box_lower, y_lower),
            np.append(box_upper, y_upper),
            np.append(box_centre, y_centre),
            radius,
            sample_weight=weights,
        )

    def _statistics(self, sums, half, y_half):
        """Exact A = Σ ũũᵀ and B = Σ ũtᵀ (object arrays of Fractions, B of shape (p, n_targets))."""
        d, m = half.size, np.size(y_half)
        # u_j = q_j·step_j / h_j, t_i = q_i·step_i / h_i: per-coordinate exact factors.
        factor = [Fraction(float(s)) / Fraction(float(h)) for s, h in zip(sums.step, np.append(half, y_half))]
        G = [[sums.gram[j, k] * factor[j] * factor[k] for k in range(d + m)] for j in range(d + 1)]
        T = [sums.total[j] * factor[j] for j in range(d + m)]
        p = d + self.fit_intercept
        A = np.empty((p, p), dtype=object)
        B = np.empty((p, m), dtype=object)
        for j in range(d):
            for i in range(m):
                B[j, i] = G[j][d + i]
            for k in range(d):
                A[j, k] = G[j][k]
        if self.fit_intercept:
            A[:d, d] = A[d, :d] = T[:d]
            A[d, d] = Fraction(sums.count)
            B[d] = T[d:]
        return A, B

    def _releases(self, epsilon, delta, n_features, r, n_targets=1, r_split=..., normalise=False):
        """The mechanisms of the fit (unseeded), with their factors f, and its declared cost.

        ``r_split``: the row-norm bound the ε-DP split between A and B is computed from
        (default ``r``); a private bound's fit fixes it before the bound is released, so
        that the cost (ε_A, ε_B) does not depend on the data. ``normalise``: each
        mechanism has sensitivity 1 and releases the statistic divided by f = its
        sensitivity (``_release`` folds 1/f into the exact conversion and multiplies
        the noisy values by f): the events of lattice noise depend on the sensitivity
        through the lattice's rounding, and a private bound's fit must declare them
        before the sensitivity is known. Otherwise f = 1 (the same numbers as before).
        """
        if r_split is ...:
            r_split = r
        p = n_features + self.fit_intercept
        n_a, n_b = p * (p + 1) // 2, p * n_targets
        l1_a, l1_b, l2_a, l2_b = least_squares_sensitivities(n_features, r, self.fit_intercept, n_targets)
        if delta > 0:
            weight = (l2_a / l2_b) ** (2.0 / 3.0)
            sensitivity = math.hypot(l2_a, weight * l2_b)
            factor = sensitivity if normalise else 1.0
            mechanism = Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0 if normalise else sensitivity)
            return (mechanism, weight, factor), ComposedEvent((mechanism.privacy_event((n_a + n_b,)),))
        split_a, split_b = least_squares_sensitivities(n_features, r_split, self.fit_intercept, n_targets)[:2]
        share = math.sqrt(split_a) / (math.sqrt(split_a) + math.sqrt(split_b))
        eps_a, eps_b = split_epsilon(epsilon, [share, 1.0 - share])  # sum to at most ε (ε = ∞: both ∞)
        f_a, f_b = (l1_a, l1_b) if normalise else (1.0, 1.0)
        mech_a = Laplace(epsilon=eps_a, sensitivity=l1_a / f_a)
        mech_b = Laplace(epsilon=eps_b, sensitivity=l1_b / f_b)
        cost = ComposedEvent((mech_a.privacy_event((n_a,)), mech_b.privacy_event((n_b,))))
        return (mech_a, mech_b, f_a, f_b), cost

    def _release(self, sums, half, y_half, unit, mechanisms, rng):
        """Noisy A/unit and B/unit, and the noise's standard deviation on A's entries.

        The values handed to the mechanisms are the exact statistics times
        c = (1 − ``ROUNDING_MARGIN``)/unit (times the weight w of B in the Gaussian
        release), each correctly rounded once (``ExactGram.round``): by the argument of
        ``dpsk._core._exact_sums`` ("Exact sums", steps 4-5, with n <= 2**36 rows) their
        change between neighbours is at most the declared sensitivity. The outputs are
        divided by c (post-processing). With normalised mechanisms (factors f) c is
        divided by f exactly (a rational) before the one rounding, and the noisy values
        multiplied by f: the rounding argument is relative, hence unchanged by the exact
        scaling (f is at most a few times d², far from under- or overflow).
        """
        A, B = self._statistics(sums, half, y_half)
        p = A.shape[0]
        upper = np.triu_indices(p)
        shrink = 1.0 - ROUNDING_MARGIN
        c = Fraction(shrink) / Fraction(float(unit))
        a_exact = A[upper]
        if isinstance(mechanisms[0], Gaussian):
            mechanism, weight, factor = mechanisms
            mechanism = Gaussian(
                epsilon=mechanism.epsilon, delta=mechanism.delta, sensitivity=mechanism.sensitivity, random_state=rng
            )
            scaled = c / Fraction(factor)
            values = np.concatenate([sums.round(a_exact, scaled), sums.round(B, scaled * Fraction(weight)).ravel()])
            noisy = mechanism.randomise(values) * factor
            a_values, b_values = noisy[: a_exact.size], noisy[a_exact.size :].reshape(B.shape) / weight
            noise_sd = mechanism.sigma((noisy.size,)) * factor
        else:
            mech_a, mech_b = (
                Laplace(epsilon=m.epsilon, sensitivity=m.sensitivity, random_state=rng) for m in mechanisms[:2]
            )
            f_a, f_b = mechanisms[2:]
            a_values = mech_a.randomise(sums.round(a_exact, c / Fraction(f_a))) * f_a
            b_values = mech_b.randomise(sums.round(B, c / Fraction(f_b))) * f_b
            noise_sd = math.sqrt(mech_a.variance(a_values)) * f_a
        A_noisy = np.zeros((p, p))
        A_noisy[upper] = a_values / shrink
        A_noisy = np.triu(A_noisy) + np.triu(A_noisy, 1).T
        return A_noisy, b_values / shrink, noise_sd / shrink

    def _penalty(self, half, y_half):
        """The user's ridge penalty in standardised coordinates (none for LinearRegression)."""
        return np.zeros(half.size)

    def _solve(self, A, B, noise_sd, half, y_half, unit=1.0):
        eigenvalues, vectors = np.linalg.eigh(A)
        ridge = _NOISE_RIDGE * 2.0 * noise_sd * math.sqrt(A.shape[0])
        projected = (vectors * (np.maximum(eigenvalues, 0.0) + ridge)) @ vectors.T
        penalty = self._penalty(half, y_half) / unit  # A and B were divided by the unit
        projected[np.diag_indices(penalty.size)] += penalty
        return np.linalg.solve(projected, B)

    def predict(self, X):
        """Predicted target of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk
            return dask_apply(self, "predict", X, n_outputs=None if self.coef_.ndim == 1 else self.coef_.shape[0])
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False, accept_sparse=ACCEPT_SPARSE)
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.input_tags.sparse = True
        return tags


@Substitution(**LEAST_SQUARES_DOCS)
class LinearRegression(_BaseLeastSquares):
    """Ordinary least squares with differential privacy (noisy sufficient statistics).

    Releases noisy XᵀX, Xᵀy (and the counts and sums of the intercept) of the clipped,
    standardised data once, then solves the normal equations after a PSD projection and
    a small ridge: one release, any number of solves.

    Parameters
    ----------
    {epsilon}

    {delta}

    {bounds_X}

    {bounds_y}

    {row_norm}

    {fit_intercept}

    {accountant}

    {random_state}

    Attributes
    ----------
    {fitted}

    {privacy_spent_}

    See Also
    --------
    Ridge : the same with an L2 penalty.
    sklearn.linear_model.LinearRegression : the non-private estimator.

    Notes
    -----
    {privacy}

    ``sample_weight`` is clipped to [0, 1] (a weight above 1 counts as 1, unlike
    scikit-learn, where it equals a duplicated row). With a large ε the fit converges
    to scikit-learn's (with the clipped weights) on data inside the bounds.

    References
    ----------
    J. Zhang, Z. Zhang, X. Xiao, Y. Yang and M. Winslett, "Functional mechanism:
    regression analysis under differential privacy", VLDB 2012.

    Y.-X. Wang, "Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain", UAI 2018.

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from dpsk.linear_model import LinearRegression
    >>> X, y = make_regression(20000, 20, noise=10, random_state=0)
    >>> reg = LinearRegression(epsilon=1.0, bounds_X=(-4, 4), bounds_y=(-700, 700), row_norm=6.0,
    ...                        random_state=0).fit(X, y)
    >>> reg.score(X, y) > 0.85
    True
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=0.0,
        bounds_X=None,
        bounds_y=None,
        row_norm=None,
        fit_intercept=True,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.accountant = accountant
        self.random_state = random_state


@Substitution(**LEAST_SQUARES_DOCS)
class Ridge(_BaseLeastSquares):
    """Ridge regression with differential privacy (noisy sufficient statistics).

    Minimises ``‖y − Xw − b‖² + alpha‖w‖²`` (scikit-learn's objective) on noisy
    sufficient statistics; see :class:`LinearRegression` for the release.

    Parameters
    ----------
    alpha : float, default=1.0
        L2 penalty on the coefficients (not the intercept), in the units of the original
        features, as in scikit-learn. It adds to the small ridge every private fit uses.

    {epsilon}

    {delta}

    {bounds_X}

    {bounds_y}

    {row_norm}

    {fit_intercept}

    {accountant}

    {random_state}

    Attributes
    ----------
    {fitted}

    {privacy_spent_}

    See Also
    --------
    LinearRegression : no penalty.
    sklearn.linear_model.Ridge : the non-private estimator.

    Notes
    -----
    {privacy}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.linear_model import Ridge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (5000, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + rng.normal(0, 0.1, 5000)
    >>> reg = Ridge(alpha=1.0, epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-4, 4), random_state=0).fit(X, y)
    >>> reg.coef_.shape
    (3,)
    """

    _parameter_constraints = {
        **_BaseLeastSquares._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        epsilon=1.0,
        delta=0.0,
        bounds_X=None,
        bounds_y=None,
        row_norm=None,
        fit_intercept=True,
        accountant=None,
        random_state=None,
    ):
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.accountant = accountant
        self.random_state = random_state

    def _penalty(self, half, y_half):
        # α‖w‖² on the original coefficients is α Σ β_j² / h_j² on β_j = h_j w_j / y_half,
        # after dividing the objective by y_half².
        return float(self.alpha) / (half * half)
