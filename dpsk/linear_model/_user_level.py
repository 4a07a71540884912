# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""User-level private linear models (Epasto, Mahdian, Mao, Mirrokni & Ren, NeurIPS 2020).

Linear regression with label privacy: generalised weighted averaging (§5)
=========================================================================

With public features X (n × d) and public user row counts, every linear unbiased
estimator is β̂ = C y with C X = I_d (C a d × n matrix; OLS is C = (XᵀX)⁻¹Xᵀ).
Replacing the labels y_i ∈ [lower, upper] of one user l moves C y by at most
B·Σ_j Σ_{i∈S_l} |c_{j,i}| in L1 norm (B = upper − lower), so releasing C y with Laplace
noise of scale B·max_l m_l/ε, m_l the user's *ℓ1 mass* Σ_{i∈S_l} ‖C[:, i]‖₁, is ε-DP
(Algorithm 3), and (Theorem 6)

    Σ_j Var(β̃_j) = σ² ‖C‖_F² + 2d (B max_l m_l / ε)².

The best C solves the convex program (dpsk's formulation of the paper's "minimised in
polynomial time")::

    minimise_{C, t}  ‖C‖_F² + κ t²     s.t.  C X = I,   m_l(C) <= t for every user l,

with κ = 2d(B/ε)²/σ². :func:`gwa_matrix` solves its dual: for a multiplier Λ (d × d) of
CX = I, the inner minimum over (C, t) is reached by projecting every user's block of
A = ΛXᵀ/2 onto the ℓ1 ball of radius t (soft thresholding at the block's level θ_l(t))
with t the root of κ t = Σ_l θ_l(t) (piecewise linear, solved exactly); the dual is
concave and smooth with gradient I − C X, maximised by L-BFGS. **Privacy never depends
on the solver's accuracy**: the returned C is corrected to satisfy C X = I exactly
(C ← C − (CX − I)(XᵀX)⁻¹Xᵀ) and the noise is calibrated on the final C's masses.

Sample limiting (§5.2): OLS on min(h, s_l) random rows per user (zero columns for the
others), the same noise rule; ``threshold=max`` is OLS on all rows plus Laplace noise.
"""

import math
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, RegressorMixin

from dpsk._core._groups import limit_weights
from dpsk.accounting import PureDPEvent, note_release
from dpsk.accounting._calibration import _ratio_up, round_down, round_up, split_epsilon
from dpsk.accounting._events import budget_event, compose
from dpsk.base import DP_PARAMETER_CONSTRAINTS, TARGET_BOUNDS_CONSTRAINT, DPEstimatorMixin
from dpsk.linear_model._erm import (
    AMP_SHARE,
    PerturbationPlan,
    clip_rows,
    fit_private_linear,
    row_bounds,
    store_linear_classifier,
)
from dpsk.linear_model._solver import _minimize, _Objective, check_certifiable
from dpsk.mechanisms import Gaussian, Laplace
from dpsk.stats._contribution import ContributionPlan, group_index
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT, private_boxes
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils._sparse import ACCEPT_SPARSE
from dpsk.utils.validation import (
    _check_sample_weight_dp,
    _combine_weights,
    is_non_private,
    release_generator,
    resolve_classes,
)

__all__ = [
    "LabelPrivateLinearRegression",
    "USER_LEVEL_NOTES",
    "fit_user_level_classifier",
    "user_plan",
    "best_limit_matrix",
    "gwa_matrix",
    "gwa_total_variance",
    "limit_matrix",
    "user_masses",
]


# ---------------------------------------------------------------------------------------
# ℓ1-ball projection of every user's block at once
# ---------------------------------------------------------------------------------------


class _Blocks:
    """The entries of a d × n matrix grouped by user (column owner), for ℓ1 projections."""

    def __init__(self, codes, n_users, d):
        self.codes = codes
        self.n_users = n_users
        self.d = d
        entry_user = np.broadcast_to(codes, (d, codes.size)).ravel()
        self.entry_user = entry_user
        self.sizes = np.bincount(entry_user, minlength=n_users)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])

    def sort(self, A):
        """Per-user descending |A| with in-block ranks k = 1.. and prefix sums."""
        values = np.abs(A).ravel()
        order = np.lexsort((-values, self.entry_user))
        u = values[order]
        prefix = np.cumsum(u)
        offsets = np.repeat(prefix[self.starts] - u[self.starts], self.sizes)
        prefix = prefix - offsets  # within-block prefix sums
        rank = np.arange(u.size) - np.repeat(self.starts, self.sizes) + 1.0
        totals = np.add.reduceat(u, self.starts) if u.size else np.zeros(0)
        return u, prefix, rank, totals

    def levels(self, sorted_blocks, t):
        """Soft-threshold level θ_l(t) of each block (0 where ‖A_l‖₁ <= t), and its ρ_l, P_ρ."""
        u, prefix, rank, totals = sorted_blocks
        inside = u * rank > prefix - t  # holds for a prefix of each sorted block
        rho = np.maximum.reduceat(np.where(inside, rank, 0.0), self.starts)
        rho = np.maximum(rho, 1.0)
        last = self.starts + rho.astype(np.intp) - 1
        p_rho = prefix[last]
        active = totals > t
        theta = np.where(active, (p_rho - t) / rho, 0.0)
        return np.maximum(theta, 0.0), rho, p_rho, active


def _radius(blocks, sorted_blocks, kappa):
    """The t >= 0 with κ t = Σ_l θ_l(t) (θ piecewise linear and decreasing in t)."""
    totals = sorted_blocks[3]
    lo, hi = 0.0, float(totals.max()) if totals.size else 0.0
    if hi == 0.0:
        return 0.0
    t = hi / 2.0
    for _ in range(200):
        theta, rho, p_rho, active = blocks.levels(sorted_blocks, t)
        excess = kappa * t - theta.sum()
        if excess > 0:
            hi = t
        else:
            lo = t
        # On the current linear piece: κ t = Σ_active (P_ρ − t)/ρ.
        t_new = np.sum((p_rho / rho)[active]) / (kappa + np.sum((1.0 / rho)[active]))
        if t_new == t or hi - lo <= 1e-15 * hi:
            return t
        t = t_new if lo < t_new < hi else (lo + hi) / 2.0
    return t


def _project(A, blocks, kappa):
    """(C, t): each user's block of A projected onto the ℓ1 ball of the optimal radius t."""
    sorted_blocks = blocks.sort(A)
    t = _radius(blocks, sorted_blocks, kappa)
    theta = blocks.levels(sorted_blocks, t)[0]
    level = theta[blocks.codes]  # per column
    C = np.sign(A) * np.maximum(np.abs(A) - level, 0.0)
    return C, t


# ---------------------------------------------------------------------------------------
# Estimator matrices
# ---------------------------------------------------------------------------------------


def user_masses(C, codes, n_users):
    """m_l = Σ_{i∈S_l} Σ_j |c_{j,i}|: each user's ℓ1 mass in C."""
    return np.bincount(codes, weights=np.abs(C).sum(axis=0), minlength=n_users)


def gwa_total_variance(C, codes, n_users, *, noise_variance, bound, epsilon):
    """Theorem 6: σ²‖C‖_F² + 2d (B max_l m_l / ε)² (the exact total variance of GWA_C)."""
    d = C.shape[0]
    top = user_masses(C, codes, n_users).max()
    return float(noise_variance * np.sum(C * C) + 2.0 * d * (bound * top / epsilon) ** 2)


def _exact_inverse(X, C):
    """C corrected to satisfy C X = I exactly (up to rounding): C − (CX − I)(XᵀX)⁻¹Xᵀ."""
    residual = C @ X - np.eye(X.shape[1])
    return C - residual @ np.linalg.solve(X.T @ X, X.T) if np.any(residual) else C


def _full_rank(X):
    """A full-column-rank design for X, and the map from its estimator matrices back to X's.

    With rank r < p, X = U_r S_r V_rᵀ: the problem is solved for the r × n matrices of the
    design U_r S_r, and C = V_r C_r estimates the projection V_r V_rᵀ β (the minimum-norm
    solution, as least squares gives). The noise is calibrated on the final C either way.
    With X = 0 (rank 0) the design is None and C = 0: the coefficients are 0, no label is read.
    """
    p = X.shape[1]
    if X.shape[0] >= p and np.linalg.matrix_rank(X) == p:
        return X, lambda C: C
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    r = int(np.sum(s > s[0] * max(X.shape) * np.finfo(np.float64).eps)) if s.size and s[0] > 0 else 0
    if r == 0:  # X = 0: the minimum-norm solution is 0, whatever the labels (C = 0, nothing released)
        return None, lambda C: np.zeros((p, X.shape[0]))
    basis = Vt[:r].T
    return U[:, :r] * s[:r], lambda C: basis @ C


def gwa_matrix(X, codes, n_users, kappa, *, tol=1e-8, max_iter=2000):
    """The generalised weighted averaging matrix C minimising ‖C‖_F² + κ (max_l m_l)², C X = I.

    Parameters
    ----------
    X : ndarray of shape (n_samples, d)
        Public features, full column rank.
    codes : ndarray of shape (n_samples,), dtype intp
        User of each row, in ``range(n_users)``.
    n_users : int
    kappa : float
        2d(B/ε)²/σ² > 0: the weight of the noise term relative to the label noise.
    tol : float, default=1e-8
        Gradient tolerance of the dual (max |C X − I| before the final correction).
    max_iter : int, default=2000
        L-BFGS iterations.

    Returns
    -------
    C : ndarray of shape (d, n_samples)
        With C X = I (corrected exactly after the solve).
    n_iter : int
        Iterations of the dual solver.
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    blocks = _Blocks(codes, n_users, d)
    gram_inv = np.linalg.inv(X.T @ X)
    eye = np.eye(d)

    def negative_dual(flat):
        Lam = flat.reshape(d, d)
        A = Lam @ X.T / 2.0
        C, t = _project(A, blocks, kappa)
        # g(Λ) = tr Λ − ‖A‖² + κ t² + ‖A − C‖²; ∇g = I − C X
        value = np.trace(Lam) - np.sum(A * A) + kappa * t * t + np.sum((A - C) ** 2)
        return -value, (C @ X - eye).ravel()

    start = (2.0 * gram_inv).ravel()  # the OLS multiplier: optimal when no mass constraint binds
    result = minimize(negative_dual, start, jac=True, method="BFGS", options={"maxiter": max_iter, "gtol": tol})
    Lam = result.x.reshape(d, d)
    C, _ = _project(Lam @ X.T / 2.0, blocks, kappa)
    return _exact_inverse(X, C), max(int(result.nit), 1)


def limit_matrix(X, codes, n_users, threshold, rng):
    """Sample limiting: OLS on ``threshold`` random rows per user (zero columns elsewhere).

    Raises
    ------
    numpy.linalg.LinAlgError
        If the kept rows do not have full column rank.
    """
    X = np.asarray(X, dtype=np.float64)
    keep = limit_weights(codes, n_users, int(threshold), rng.permutation(codes.size).astype(np.intp))
    kept = X * keep[:, None]
    return np.linalg.solve(kept.T @ kept, kept.T)


def best_limit_matrix(X, codes, counts, *, noise_variance, bound, epsilon, rng):
    """Sample limiting at the threshold h minimising Theorem 6's total variance (public inputs only).

    Nested subsamples (one random order per call) make the candidates comparable.

    Returns
    -------
    C : ndarray of shape (d, n_samples)
    h : int
    """
    X = np.asarray(X, dtype=np.float64)
    order = rng.permutation(codes.size).astype(np.intp)
    best = None
    for h in range(1, int(counts.max()) + 1):
        keep = limit_weights(codes, counts.size, h, order)
        kept = X * keep[:, None]
        try:
            C = np.linalg.solve(kept.T @ kept, kept.T)
        except np.linalg.LinAlgError:
            continue
        v = gwa_total_variance(C, codes, counts.size, noise_variance=noise_variance, bound=bound, epsilon=epsilon)
        if best is None or v < best[0]:
            best = (v, C, h)
    if best is None:
        raise np.linalg.LinAlgError("no threshold gives a full-rank subsample")
    return best[1], best[2]


# ---------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------


@Substitution(**{k: _shared_docs[k] for k in ("epsilon", "accountant", "random_state", "privacy_spent_")})
class LabelPrivateLinearRegression(DPEstimatorMixin, RegressorMixin, BaseEstimator):
    """Linear regression that protects the **labels** only, user by user (X is public).

    Generalised weighted averaging (Epasto, Mahdian, Mao, Mirrokni & Ren, NeurIPS 2020,
    §5): the coefficients are β̂ = C y for the d × n matrix C with C X = I (so β̂ is
    unbiased) that minimises the total variance σ²‖C‖_F² + 2d(B·max_l m_l/ε)², m_l the
    ℓ1 mass of user l's columns of C, plus Laplace noise of scale B·max_l m_l/ε. Unlike
    capping users at h rows (sample limiting) or plain OLS plus noise, C can give
    high-leverage rows and heavy users less weight coordinate by coordinate; on the
    paper's synthetic benchmark its error is several times below sample limiting's at
    the best threshold and orders of magnitude below OLS's.

    Use it only when the features (and the users' row counts) are **public** and the
    labels are the secret — e.g. public item attributes and private ratings. For full
    user-level privacy use :class:`~dpsk.linear_model.LinearRegression` with ``groups``.

    Parameters
    ----------
    {epsilon}
    bounds_y : tuple (lower, upper), "private", "data" or None, default=None
        Public bounds on the labels; labels outside are clipped. The noise scales with
        their width B. ``"private"`` or left out (None): estimated from the labels inside
        the fit with a share of ε (``bounds_epsilon_share``, 10 %; see **Privacy**).
        ``"data"`` derives them from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning`, which breaks the guarantee. The
        bounds used are stored in ``bounds_y_``.
    noise_variance : "worst_case" or float, default="worst_case"
        The variance σ² of the labels around the regression line, which balances the two
        terms of the total variance (privacy is not affected: it only shapes C).
        ``"worst_case"``: (B/2)², the largest possible (Popoviciu), data-independent. A
        float must be public knowledge: estimating it from these labels (as the paper's
        experiments did, by OLS) is not private.
    method : {{"optimal", "limit", "ols"}}, default="optimal"
        ``"optimal"``: the variance-minimising C (a convex program solved in its dual).
        ``"limit"``: sample limiting — OLS on ``threshold`` random rows per user.
        ``"ols"``: OLS on all rows (sample limiting at the largest user).
    threshold : int or None, default=None
        For ``method="limit"``: rows kept per user. ``None``: the h minimising the
        total variance (computed from public quantities only).
    fit_intercept : bool, default=True
        Fit an intercept: a constant column of ones is appended to X (public), and the
        intercept is released with noise like the coefficients.
    tol : float, default=1e-8
        Tolerance of the dual solver (accuracy of C only; privacy never depends on it).
    max_iter : int, default=2000
        Iterations of the dual solver.
    {accountant}
    {random_state}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        0 when ``fit_intercept=False``.
    noise_scale_ : float
        Scale b of the Laplace noise on each coefficient.
    sensitivity_ : float
        B·max_l m_l, the L1 sensitivity of C y to one user's labels.
    expected_total_variance_ : float
        Theorem 6's Σ_j Var(β̃_j) for the σ² used (coefficients and intercept).
    threshold_ : int or None
        Rows kept per user (``method="limit"`` and ``"ols"``).
    n_iter_ : int
        Iterations of the dual solver (1 for ``"limit"`` and ``"ols"``).
    n_users_ : int
    bounds_y_ : tuple of float
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        When X has string feature names.
    {privacy_spent_}

    See Also
    --------
    LinearRegression : full privacy of features and labels (add/remove a row, or a user).

    Notes
    -----
    **Privacy.** ε-DP for **label privacy** (Chaudhuri & Hsu 2011): X, the user ids and
    hence every user's row count are treated as public; neighbouring datasets have the
    same X and users and differ in the labels of one user (all of them). This is a
    different, weaker relation than dpsk's default (add/remove a row or a user, features
    included): choose it explicitly. Labels are clipped to ``bounds_y``; replacing user
    l's labels moves C y by at most B·m_l in L1 norm, so Laplace noise of scale
    B·max_l m_l/ε on every coordinate is ε-DP (the paper's Lemma 1 / Theorem 6). C is
    computed from public inputs only, and the noise from the final C (corrected to
    C X = I exactly after the solve). Released: ``coef_`` and ``intercept_``. The noise is
    floating-point safe (:class:`~dpsk.mechanisms.Laplace`, one vector release).
    With ``bounds_y="private"`` (or left out) the labels' bounds are released first,
    with ε_b = ε·``bounds_epsilon_share``: a logarithmic histogram
    (:func:`dpsk.stats.bounds`) of one label per user, the label of the user's first
    row (a choice made from the public users and row order alone), whose exact
    discrete Laplace noise is calibrated to L1 sensitivity 2 (replacing one user's
    labels moves one value out of its bin and into another). One label per user gives
    the histogram n_users counts at sensitivity 2; all labels would give n counts at
    sensitivity 2·max_l m_l, never a better ratio. C and the coefficients then use the
    released bounds and ε − ε_b (adaptive composition), and the fit records one event
    for both (``bounds_y_`` is released too).

    ``sample_weight`` is not accepted: C is built from the rows themselves (C X = I),
    so a weight would have to enter that construction and its sensitivity analysis,
    which is not done. Without ``groups`` every row is its own user, so a row repeated
    k times (e.g. by ``BaggingClassifier(bootstrap=True)``, which passes repeated rows
    to estimators without ``sample_weight``) exposes its label k times at ε each: pass
    ``groups`` so that the copies of a person's rows share one id and count as one user.
    Domain: finite X and y; with ``groups``, a user id for every row. Data outside it
    raise a ``ValueError`` before any noise is drawn, which reveals only that the data
    left the domain (:ref:`declared_domain`).

    References
    ----------
    A. Epasto, M. Mahdian, J. Mao, V. Mirrokni and L. Ren, "Smoothly bounding user
    contributions in differential privacy", NeurIPS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.linear_model import LabelPrivateLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + rng.normal(size=500)
    >>> users = rng.integers(0, 100, 500)
    >>> reg = LabelPrivateLinearRegression(epsilon=1.0, bounds_y=(-10, 10), random_state=0)
    >>> reg = reg.fit(X, y, groups=users)
    >>> reg.coef_.shape
    (3,)
    """

    _parameter_constraints = {
        "epsilon": DP_PARAMETER_CONSTRAINTS["epsilon"],
        "accountant": DP_PARAMETER_CONSTRAINTS["accountant"],
        "random_state": DP_PARAMETER_CONSTRAINTS["random_state"],
        "bounds_y": [*TARGET_BOUNDS_CONSTRAINT, PRIVATE_CONSTRAINT],
        "noise_variance": [StrOptions({"worst_case"}), Interval(Real, 0, None, closed="neither")],
        "method": [StrOptions({"optimal", "limit", "ols"})],
        "threshold": [Interval(Integral, 1, None, closed="left"), None],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        bounds_y=None,
        noise_variance="worst_case",
        method="optimal",
        threshold=None,
        fit_intercept=True,
        tol=1e-8,
        max_iter=2000,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.bounds_y = bounds_y
        self.noise_variance = noise_variance
        self.method = method
        self.threshold = threshold
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, groups=None):
        """Fit the coefficients with label privacy per user.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Public features. Without full column rank (with the intercept column) the
            minimum-norm coefficients are estimated, as least squares does.
        y : array-like of shape (n_samples,)
            Private labels, clipped to ``bounds_y``.
        groups : array-like of shape (n_samples,) or None, default=None
            User id of each row (public, like X). The guarantee protects all labels of
            one user at once. ``None``: every row is its own user.

        Returns
        -------
        self : object
        """
        # One vector release of C y / sensitivity: its event depends on ε and the size only.
        self._check_privacy_budget(PureDPEvent(float(self.epsilon)))
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C", y_numeric=True)
        n, d = X.shape
        if groups is None:
            codes, counts = np.arange(n, dtype=np.intp), np.ones(n, dtype=np.int64)
        else:
            codes, counts = group_index(groups, n)
        labels = np.asarray(y, dtype=np.float64)[:, None]
        # Left out or "private": the labels' bounds from a noisy histogram of each user's
        # first label (chosen by the public users and row order), inside the one event:
        # replacing one user's labels moves one count out of a bin and one into another.
        plan, boxes = private_boxes(self, {"bounds_y": (labels, "bounds_y_")}, contribution=2)
        first_rows = np.unique(codes, return_index=True)[1]
        features = np.asarray(X, dtype=np.float64)
        if self.fit_intercept:
            features = np.column_stack([features, np.ones(n)])
        p = features.shape[1]
        design, back = _full_rank(features)
        epsilon = float(plan.fit_epsilon)
        mechanism = Laplace(epsilon=epsilon, sensitivity=1.0)
        cost = mechanism.privacy_event((p,))  # normalised: the same whatever the bounds
        rng = release_generator(self.random_state, context=self, data=(X, y, groups))
        if "bounds_y" in plan:
            plan.spend(self, cost, rng)
        lower, upper = plan.box("bounds_y", labels[first_rows], boxes["bounds_y"])
        lower, upper = float(lower[0]), float(upper[0])
        width = upper - lower
        sigma2 = (width / 2.0) ** 2 if self.noise_variance == "worst_case" else float(self.noise_variance)
        # C depends on public inputs only (X, users, bounds, ε, σ²); randomness for the
        # sample-limiting subsample is not privacy noise but comes from the same generator.
        threshold, n_iter = None, 1
        if design is None:  # X is zero: back() gives C = 0
            C = None
        elif self.method == "optimal":
            kappa = 2.0 * p * (width / epsilon) ** 2 / sigma2 if width > 0 else 1.0
            C, n_iter = gwa_matrix(design, codes, counts.size, kappa, tol=self.tol, max_iter=self.max_iter)
        elif self.method == "ols":
            C = np.linalg.solve(design.T @ design, design.T)
            threshold = int(counts.max())
        elif self.threshold is None:
            C, threshold = best_limit_matrix(
                design, codes, counts, noise_variance=sigma2, bound=width, epsilon=epsilon, rng=rng
            )
        else:
            threshold = int(self.threshold)
            try:
                C = limit_matrix(design, codes, counts.size, threshold, rng)
            except np.linalg.LinAlgError:
                raise ValueError(
                    f"the rows kept with threshold={threshold} do not determine the coefficients (rank "
                    "deficient); use a larger threshold"
                ) from None
        C = back(C)
        masses = user_masses(C, codes, counts.size)
        sensitivity = width * float(masses.max()) * (1.0 + 2.0**-40)  # computed in floats: round up
        labels = np.clip(labels[:, 0], lower, upper)
        if "bounds_y" not in plan:
            self._spend_privacy_budget(cost)
        beta = C @ labels
        if sensitivity > 0:
            beta = Laplace(epsilon=epsilon, sensitivity=1.0, random_state=rng).randomise(beta / sensitivity)
            beta = beta * sensitivity
        else:
            note_release(cost)  # nothing to hide: the labels are constant (B = 0)
        self.coef_ = beta[:d].astype(X.dtype)
        self.intercept_ = float(beta[d]) if self.fit_intercept else 0.0
        self.sensitivity_ = sensitivity
        self.noise_scale_ = sensitivity / epsilon
        self.expected_total_variance_ = gwa_total_variance(
            C, codes, counts.size, noise_variance=sigma2, bound=width, epsilon=epsilon
        )
        self.threshold_ = threshold
        self.n_iter_ = n_iter
        self.n_users_ = int(counts.size)
        self.bounds_y_ = (lower, upper)
        return self

    def predict(self, X):
        """Predicted labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        return X @ self.coef_ + X.dtype.type(self.intercept_)


# ---------------------------------------------------------------------------------------
# groups= in the fit of LogisticRegression / LinearSVC and LinearRegression / Ridge
# ---------------------------------------------------------------------------------------

USER_LEVEL_NOTES = """With ``groups``, the unit is the user: neighbouring datasets differ in all rows of
    one user (added or removed), however many. Each user's rows are weighted
    min(1, h/s) (s the user's number of rows; Epasto et al. 2020), so that a user weighs
    at most h rows; h is the 0.9-quantile of the users' row counts, chosen by the
    exponential mechanism with 10% of ε (recorded in ``privacy_spent_``; stored in
    ``threshold_``), and every sensitivity below is multiplied by h."""


def user_plan(groups, n_samples, epsilon, *, bind=True):
    """The threshold-selection plan of an estimator's fit (a no-op without ``groups``), ids validated.

    ``release_epsilon`` is what is left for the estimator's releases, ``event`` the cost
    of choosing h, ``resolve(rng)`` the row weights (after the budget is spent).
    ``bind=False``: the ids are not read here (Dask: ``ContributionPlan.bind_counts``).
    """
    plan = ContributionPlan(
        user_level=groups is not None,
        contribution_bound="smooth",
        threshold=None,
        public_user_counts=False,
        epsilon=float(epsilon),
    )
    if bind:
        plan.bind(groups, n_samples)
    return plan


def fit_user_level_classifier(est, X, y, groups, sample_weight=None):
    """``BasePrivateLinearClassifier.fit`` with ``groups``: weighted ERM, user-level noise.

    Weighted ERM (the paper's Algorithm 2; it allows "any DP ERM algorithm for the new
    loss"): minimise ``Σ_i w_i ℓ(y_i z_iᵀv) + (Λ/2)‖v‖²`` with w_i = min(1, h/s_l) (rows
    z_i in the unit ball, as in ``dpsk.linear_model._erm``). One user's terms weigh at most
    h in total and |ℓ′| <= 1, 0 <= ℓ″ <= c, so adding or removing a user changes the
    gradient by g with ‖g‖ <= h and the Hessian by a PSD ΔH of trace <= h·c.

    * ε-DP (``delta=0``): objective perturbation generalised to users. The density
      argument of ``_erm`` carries over with ‖g‖ <= h (gamma-norm noise with scale
      h/β is β-DP for the linear term) and a rank-s Hessian change, for which
      log det(I + H⁻¹ΔH) <= tr(H⁻¹ΔH) <= h·c/μ replaces the rank-one bound; μ is raised to
      2hc/ε₁ if needed so that this term is at most ε₁/2. Approximate minima perturbation
      follows unchanged (its sensitivity 2γ/μ does not involve the neighbours). Default
      Λ (``C=None``): the item-level rule 0.05·p/ε times h. ``bounds`` only clip rows
      here (the box-norm noise of ``_erm`` is not used: a user's weighted rows sum to a
      gradient in h times the box, which would need its own calibration).
    * (ε, δ)-DP: output perturbation. The certified minimiser moves by at most
      (h + 2γ)/Λ; Gaussian noise of that L2 sensitivity (:class:`~dpsk.mechanisms.Gaussian`,
      floating-point safe). (Gaussian objective perturbation is not used: its analysis
      needs the direction of g to be one fixed row, which a user's several rows break.)
      Default Λ: sqrt(p·h/ε), the item-level output rule with the noise scaled by h.
    """
    est._check_privacy_budget(budget_event(est.epsilon, est.delta))
    X, y = validate_data(est, X, y, dtype=[np.float64, np.float32], order="C", accept_sparse=ACCEPT_SPARSE)
    sample_weight = _check_sample_weight_dp(sample_weight, X)
    classes, y_index = resolve_classes(est, est.classes, y)
    data_norm, lower, upper = row_bounds(est, X)  # ``bounds`` only clip here
    check_certifiable(X.shape[0], est.tol)
    plan = user_plan(groups, X.shape[0], est.epsilon)
    n_problems = 1 if classes.size == 2 else classes.size
    kappa = float(est.intercept_scaling) if est.fit_intercept else None
    scale = round_up(math.hypot(data_norm, kappa)) if kappa is not None else data_norm
    n_params = X.shape[1] + (kappa is not None)
    epsilon = split_epsilon(plan.release_epsilon, n_problems)
    delta = round_down(float(est.delta) / n_problems)
    tol = float(est.tol)
    rng = release_generator(est.random_state, context=est, data=(X, y, groups, sample_weight))
    # epsilon=inf: the exact minimiser, through the output path (a noiseless release).
    perturb_output = delta > 0 or is_non_private(epsilon)
    if perturb_output:
        if delta > 0:
            output = Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0, random_state=rng)
        else:
            output = Laplace(epsilon=epsilon, sensitivity=1.0, random_state=rng)
        events = (output.privacy_event((n_params,)),)
    else:
        eps_objective = epsilon * (1.0 - AMP_SHARE)
        events = (PureDPEvent(eps_objective), PureDPEvent(round_down(epsilon - eps_objective)))
    cost = compose([plan.event, *(events * n_problems)])
    rows = clip_rows(X, data_norm, lower, upper)
    est._spend_privacy_budget(cost)

    contribution = plan.resolve(rng)  # releases the threshold h
    h = contribution.unit
    # Sample weights in [0, 1] only lower the user weights: a user still weighs <= h.
    weights = _combine_weights(contribution.weights, sample_weight)
    loss = est._make_loss()
    if est.C is not None:
        lam = 1.0 / (float(est.C) * scale * scale)
    elif is_non_private(epsilon):
        lam = 1.0  # no noise to balance (as in dpsk.linear_model._erm.default_regularization)
    else:
        lam = math.sqrt(n_params * h / epsilon) if delta > 0 else 0.05 * n_params * h / epsilon
    if not perturb_output:
        eps_objective, eps_output = events[0].epsilon, events[1].epsilon
        mu = max(lam, 2.0 * h * loss.curvature / eps_objective)
        eps_det = round_up(h * loss.curvature / mu)
        budget = round_down(eps_objective - eps_det)
        perturbation = PerturbationPlan(
            "objective",
            mu,
            "gamma",
            _ratio_up(h, budget),
            _ratio_up(round_up(2.0 * tol / mu), eps_output),
            None,
            events,
        )
    coefs, n_iters = [], []
    for k in range(n_problems):
        positive = 1 if n_problems == 1 else k
        labels = np.where(y_index == positive, 1.0, -1.0)
        if not perturb_output:
            w, n_iter = fit_private_linear(
                rows,
                labels,
                loss,
                perturbation,
                norm_bound=data_norm,
                scale=scale,
                kappa=kappa,
                tol=tol,
                max_iter=est.max_iter,
                rng=rng,
                weights=weights,
            )
        else:
            objective = _Objective(
                rows,
                labels,
                loss,
                norm_bound=data_norm,
                scale=scale,
                kappa=kappa,
                mu=lam,
                linear=np.zeros(n_params),
                weights=weights,
            )
            v, n_iter = _minimize(objective, n_params, tol=tol, max_iter=est.max_iter)
            sensitivity = _ratio_up(round_up(h + 2.0 * tol), lam)
            w = output.randomise(v / sensitivity) * sensitivity / scale
        coefs.append(w)
        n_iters.append(n_iter)
    store_linear_classifier(
        est,
        coefs,
        n_iters,
        classes=classes,
        data_norm=data_norm,
        lam=lam,
        scale=scale,
        kappa=kappa,
        n_features=X.shape[1],
        dtype=X.dtype,
    )
    est.threshold_ = h
    return est
