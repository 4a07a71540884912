# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private empirical risk minimisation for linear classifiers (logistic loss, Huberized hinge).

Shared by :class:`dpsk.linear_model.LogisticRegression` and :class:`dpsk.svm.LinearSVC`.
Everything privacy-relevant about those estimators is decided here, and argued here.

The problem
===========

Rows x (clipped to ``‖x‖ ≤ R``, R = ``data_norm``) get the constant κ
(``intercept_scaling``) appended when an intercept is fitted and are scaled by
S ≥ sqrt(R² + κ²) (S = R without intercept), so every row z = [x, κ]/S of the problem
has ``‖z‖ ≤ 1``. Labels are y ∈ {−1, +1} (one-vs-rest for more classes). The objective,
scikit-learn's ``C Σ ℓ + ½‖w‖²`` divided by C and written in the scaled coordinates
v = S·[w, w₀/κ], is::

    F_D(v) = Σ_i ℓ(y_i z_iᵀv) + (Λ/2)‖v‖² (+ bᵀv + (Δ/2)‖v‖² when perturbed),   Λ = 1/(C S²).

The loss ℓ is convex, non-increasing, with −1 ≤ ℓ′ ≤ 0 and 0 ≤ ℓ″ ≤ c (logistic:
c = 1/4; Huberized hinge with width h: c = 1/(2h)). Neither Λ nor the noise depends on
the number of rows n: the objective is a *sum*, so adding or removing one row adds or
removes exactly one term.

Objective perturbation, add/remove one row (after Chaudhuri, Monteleoni & Sarwate 2011)
======================================================================================

Let μ = Λ + Δ and let v* be the minimiser of the perturbed objective. For a fixed
dataset D the map b ↦ v* is a bijection with inverse b_D(v) = −∇(Σℓ)(v) − μv, so v*
has density ν(b_D(v)) · det H_D(v), with H_D(v) = Σ_i ℓ″_i z_i z_iᵀ + μI. For D' = D plus
one row z (label y):

* b_{D'}(v) = b_D(v) − g with g = y ℓ′(y zᵀv) z, ‖g‖ ≤ 1 (one term, not two: CMS prove
  the replacement relation with a 1/n-normalised objective and get ‖g‖ ≤ 2);
* H_{D'} = H_D + ℓ″ z zᵀ is a rank-one update, so det H_{D'} / det H_D =
  1 + ℓ″ zᵀH_D⁻¹z ∈ [1, 1 + c/μ] (H_D ⪰ μI).

With ν(b) ∝ exp(−β‖b‖) (gamma-norm noise) the density ratio is within
exp(±(β + ε_det)), ε_det = log(1 + c/μ): the release is (β + ε_det)-DP. Given the budget
ε₁ of this step, Δ = max(0, c/(e^{ε₁/2} − 1) − Λ) keeps ε_det ≤ ε₁/2 and β = ε₁ − ε_det.
(The Huberized hinge's ℓ″ jumps at two margins: the inverse map is then a Lipschitz,
piecewise smooth bijection and the density formula holds almost everywhere, as CMS note.)

**The logistic loss: one bound for both factors.** The two factors are evaluated at the
same v, hence at the same margin t = y zᵀv: with s = |ℓ′(t)| ∈ [0, 1], ‖g‖ <= s and, for
the logistic loss, ℓ″(t) = σ(t)σ(−t) = s(1 − s) exactly. The log density ratio is
therefore at most φ(β) = max over s in [0, 1] of β s + log(1 + s(1 − s)/μ) (with D'
in the denominator the determinant factor is <= 1 and the bound is β s <= β <= φ(β)):
a row with the full gradient has no curvature left and one with the full curvature
(s = ½) has half the gradient. The release is φ(β)-DP, and φ(β) < β + ε_det (at ε₁ =
0.99 and μ = 0.92: β = 0.750 by the separate bounds, 0.989 by the joint one). For the
pure-ε noises (gamma- and box-norm) β is the largest value with φ(β) <= ε₁
(:func:`joint_objective_budget`: φ is concave in s, so its maximum is bounded above
rigorously by the tangent at the computed maximiser, and β is found by bisection from
the separate bound, which is always feasible). Δ keeps the same rule. The Huberized
hinge (ℓ″ is not a function of ℓ′), the Gaussian variant and the user-level fit keep
the separate bounds. Losses that qualify set ``curvature_tracks_slope`` (ℓ″ <= 4c·s(1 − s)).

Carrying the norm R through the unscaled rows instead gives the same result: ‖g‖ ≤ R
and the rank-one term ℓ″xxᵀ adds at most cR²/Λ_x to the determinant ratio (Λ_x = 1/C
the unscaled regularisation). Scaling that curvature term by R rather than R², as the
leading library does, under-states ε_det whenever R > 1: the exact privacy loss of such
a variant exceeds its claim (``tests/linear_model/test_linear_privacy.py`` computes
δ(ε) > 0.05 at the claimed ε and the black-box audit rejects it).

Gaussian objective perturbation (after Kifer, Smith & Thakurta 2012), b ~ N(0, σ²I).
The loss being non-increasing, g = −s·y z with s = |ℓ′| ∈ [0, 1]: its direction is the
fixed row, only its length t = s‖z‖ ∈ [0, 1] depends on v. With Z = ±⟨b, y z⟩/(σ‖z‖)
(standard normal when v is drawn under the dataset in the numerator; the sign depends on
the direction of the pair), the Gaussian part of the log density ratio is
tZ/σ + t²/(2σ²) <= (Z/σ + 1/(2σ²))₊, and the determinant adds at most ε_det (and only
when the numerator's dataset is the larger one). For ε >= ε_det the hockey-stick
divergence is therefore at most that of the Gaussian mechanism with sensitivity 1 at
ε − ε_det: the release is (ε, δ_G(ε − ε_det; σ))-DP, δ_G the exact Gaussian profile
(Balle & Wang 2018). σ is calibrated with :func:`dpsk.accounting.gaussian_sigma` at
(ε₁ − ε_det, δ).

Objective perturbation with box-shaped noise, ε-DP (``bounds`` given)
===================================================================

When every feature has public bounds, |x_j| <= a_j with a_j = max(|lower_j|, |upper_j|)
(rows are clipped to the bounds first, and scaling a row down for the norm bound keeps
it in the symmetric box), so g = s·y·[x, κ]/S lies in the box K = Π_j [−k_j, k_j],
k = [a, κ]/S. The density argument above uses only ν(b − g)/ν(b) <= e^β for every
possible g; with ν(b) ∝ exp(−β‖b‖_K), ‖·‖_K the norm whose unit ball is K (a weighted
max-norm), the triangle inequality gives it from ‖g‖_K <= 1: the K-norm mechanism
(Hardt & Talwar 2010; Awan & Slavković 2021 compare such norms). The determinant term
is unchanged (the rows still have ‖z‖ <= 1: R <= ‖a‖ and S >= sqrt(R² + κ²)), so the
calibration of β, Δ and the approximate-minima step is the same. Sampling: b = r·U
with r ~ Gamma(p + 1, 1/β) and U uniform in K, whose density is
∝ ∫_{‖b‖_K}^∞ r^p e^{−βr} r^{−p} dr ∝ e^{−β‖b‖_K}. A box with ‖k‖ = 1 touches the unit
ball only at its corners and fills a small part of it, so the box noise is much
smaller: its size (p + 1)·‖k‖/(√3·β) (mean radius times the root-mean-square norm of U)
against p/β for the ball. The box is used when that size is the smaller one (a public comparison: for
features min–max scaled around 0 with the default ``data_norm``, ‖k‖ = 1 and the box
wins whenever p >= 2); otherwise the ball. With δ > 0 the box noise (ε-DP, hence
(ε, δ)-DP) is compared with the Gaussian noise's size σ(ε, δ)·√p instead and used if
smaller, which happens in low dimension (it grows like p, the Gaussian like √p).
Output perturbation keeps the Euclidean calibration (the minimiser's sensitivity is a
Euclidean bound).

The solver is inexact: approximate minima perturbation (Iyengar et al. 2019)
==========================================================================

The analysis above is about the exact minimiser v*. The solver returns ṽ with a
*certified* gradient norm ‖∇F(ṽ)‖ ≤ γ (``tol``), hence ‖ṽ − v*‖ ≤ r = γ/μ (F is
μ-strongly convex), and releases ṽ + N with N of density ∝ exp(−ε₂‖N‖/(2r)). For a fixed
v*, the map D ↦ ṽ moves by at most 2r between neighbours, so this step is ε₂-DP given
v*; by adaptive composition the pair (v*, ṽ + N), hence its post-processing ṽ + N, is
(ε₁ + ε₂, δ)-DP. ε₂ is :data:`AMP_SHARE` of the budget; with γ = 1e-6 the extra noise is
2γε₁/ε₂ ≈ 2·10⁻⁴ times the objective noise.

"Certified" covers floating point: the gradient is recomputed in blocks of
:data:`_BLOCK` rows whose partial sums are added exactly (``math.fsum``), and a
rigorous bound on every rounding error (block dot products, margins, loss derivatives,
the final additions and norm) is added to its norm before comparing with γ.

Output perturbation (CMS 2011, Algorithm 1, add/remove)
=======================================================

Without b, one added row moves the exact minimiser by at most ‖g‖/Λ ≤ 1/Λ (strong
convexity of F_{D'} at v*_D, where ∇F_{D'} = g); the certified solution moves by at
most (1 + 2γ)/Λ. Gamma-norm noise with scale (1 + 2γ)/(Λε) gives ε-DP; the (ε, δ)
variant uses :class:`dpsk.mechanisms.Gaussian` with that L2 sensitivity.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpsk._core._clip import clip_bounds, clip_rows_l2
from dpsk._core._noise import add_gaussian, gamma_norm_vector
from dpsk._core._sparse import as_csr, csr_clip_bounds, csr_clip_rows_l2
from dpsk.accounting import ApproxDPEvent, PureDPEvent, gaussian_sigma, note_release
from dpsk.accounting._calibration import _memoised, _ratio_up, _reciprocal_up, round_down, round_up
from dpsk.accounting._events import NON_PRIVATE_EVENT
from dpsk.linear_model._solver import _minimize, _Objective
from dpsk.mechanisms import Gaussian
from dpsk.stats._bounds import row_norms
from dpsk.utils._private_bounds import PrivateSensitivity, is_private, refuse_sparse_private, what_to_pass
from dpsk.utils.validation import is_non_private, resolve_bounds, resolve_data_norm

__all__ = [
    "AMP_SHARE",
    "PerturbationPlan",
    "box_half_widths",
    "clip_rows",
    "default_regularization",
    "fit_private_linear",
    "joint_objective_budget",
    "plan_perturbation",
    "private_row_bounds",
    "release_row_norm",
    "row_bounds",
]

#: Share of each problem's ε spent on the output noise of approximate minima perturbation.
AMP_SHARE = 0.01

# Default regularisation of objective perturbation, relative to the expected norm of b.
_DEFAULT_STRENGTH = 0.05


# ------------------------------------------------------------------- privacy calibration


@dataclass(frozen=True)
class PerturbationPlan:
    """How one binary problem is perturbed: noise parameters and the events of its releases.

    Attributes
    ----------
    method : {"objective", "output"}
    mu : float
        Strong convexity of the solved objective (Λ + Δ).
    objective_noise : {"gamma", "box", "gaussian"} or None
        Law of the linear term b: gamma-norm with scale ``objective_scale`` (density
        ∝ exp(−‖b‖/scale)), box-norm (density ∝ exp(−‖b‖_K/scale), K the box of
        half-widths ``objective_box``), or Gaussian with standard deviation
        ``objective_scale``.
    objective_scale : float or None
    output_scale : float
        Scale of the gamma-norm output noise (pure ε), or the L2 sensitivity handed to
        the Gaussian mechanism (``output_gaussian``).
    output_gaussian : tuple (epsilon, delta) or None
    events : tuple of PrivacyEvent
        One per release, in order (objective, then output; output only for "output").
    objective_box : ndarray of shape (n_params,) or None
        Half-widths k of the box K (rows scaled to the unit ball), for box-norm noise.
    """

    method: str
    mu: float
    objective_noise: object
    objective_scale: object
    output_scale: float
    output_gaussian: object
    events: tuple
    objective_box: object = None


def row_bounds(estimator, X):
    """(R, lower, upper): the row norm bound and the public feature bounds of a fit.

    Without ``bounds``: ``data_norm`` (``"data"``: the data-derived value, with a warning) and
    None, None. With ``bounds``: R is the norm of the box's corner max(|lower|, |upper|)
    (public, no warning), or ``data_norm`` if that is smaller. A private ``data_norm``
    (``"private"``, or both left out: :func:`private_data_norm`) is for
    :func:`private_row_bounds` (item level): refused here (the user-level fit).
    """
    if private_data_norm(estimator):
        PrivateSensitivity(estimator, estimator.epsilon, {"data_norm": ("row_norm", 1, None)}, groups=True)
    if estimator.bounds is None:
        return resolve_data_norm(estimator, estimator.data_norm, X), None, None
    lower, upper = resolve_bounds(estimator, estimator.bounds, X)  # public, or "data" with its warning
    corner = round_up(float(np.linalg.norm(np.maximum(np.abs(lower), np.abs(upper)))))
    if corner == 0.0:
        raise ValueError("bounds must not be all zero: no row could carry information")
    if estimator.data_norm is None:
        return corner, lower, upper
    return min(resolve_data_norm(estimator, estimator.data_norm, X), corner), lower, upper


def private_data_norm(estimator):
    """Whether the fit estimates ``data_norm`` privately: ``"private"``, or left out (None)
    with no public ``bounds`` either (issue 19; with ``bounds``, R is the box's corner)."""
    return is_private(estimator.data_norm) or (estimator.data_norm is None and estimator.bounds is None)


def private_row_bounds(estimator, X, *, groups=None):
    """``(plan, (R, lower, upper))``: :func:`row_bounds`, or with ``data_norm="private"``
    the plan of its release and a placeholder R = 1 (the cost does not depend on R).

    The private R is an upper quantile of the norms of the rows clipped to ``bounds``
    (in [0, corner] when ``bounds`` is given, else without a domain), released by
    :func:`release_row_norm` after the spend.
    """
    if not private_data_norm(estimator):
        return PrivateSensitivity(estimator, estimator.epsilon, {}), row_bounds(estimator, X)
    if estimator.bounds is not None:  # the norms of box-clipped rows: dense rows
        refuse_sparse_private(estimator, X, "data_norm")
    if estimator.method == "output" and estimator.delta > 0 and estimator.C is not None:
        # The Gaussian's event depends on its sensitivity 1/λ, hence (with a given C) on
        # data_norm, which is released after the cost is declared.
        raise ValueError(
            f'{type(estimator).__name__}: a private data_norm with method="output", delta > 0 and a given C '
            "is not supported (the cost would depend on the released norm): leave C=None; "
            + what_to_pass(["data_norm"], left_out=estimator.data_norm is None)
        )
    lower = upper = None
    corner = None
    if estimator.bounds is not None:
        lower, upper = resolve_bounds(estimator, estimator.bounds, X)  # public, or "data" with its warning
        corner = round_up(float(np.linalg.norm(np.maximum(np.abs(lower), np.abs(upper))))) or None
    plan = PrivateSensitivity(estimator, estimator.epsilon, {"data_norm": ("row_norm", 1, corner)}, groups=groups)
    return plan, (1.0, lower, upper)


def release_row_norm(plan, X, lower=None, upper=None):
    """The private ``data_norm``: an upper quantile of the (box-clipped) rows' norms (after the spend)."""
    if lower is None:  # sparse X too: the norms of its rows
        return plan.release("data_norm", row_norms(X))
    rows = clip_bounds(np.asarray(X, dtype=np.float64), lower, upper)
    return plan.release("data_norm", row_norms(rows))


def clip_rows(X, norm_bound, lower=None, upper=None):
    """The rows of X as float64, clipped to the bounds (if given) and to norm ``norm_bound``.

    Scaling a row down keeps it in the symmetric box [−a, a] (a = max(|lower|, |upper|)),
    which is what the box-norm noise needs. X is never modified. Sparse X gives a
    ``ClippedCSR``: X's values and one recorded clip per row, replayed inside the
    products, bitwise the clipped dense rows (``dpsk._core._sparse``; no copy of the
    values unless box bounds are given).
    """
    if sp.issparse(X):
        rows = as_csr(X).astype(np.float64, copy=False)
        if lower is not None:
            rows = csr_clip_bounds(rows, lower, upper)
        return csr_clip_rows_l2(rows, norm_bound)
    rows = np.asarray(X, dtype=np.float64)
    fresh = X.dtype != np.float64  # the conversion already copied: clip in place
    if lower is not None:
        rows = clip_bounds(rows, lower, upper, out=rows if fresh else None)
        fresh = True
    return clip_rows_l2(rows, norm_bound, out=rows if fresh else None)


def box_half_widths(lower, upper, kappa, scale):
    """Half-widths k = [a, κ]/S of the box that holds every scaled row (a_j = max(|lower_j|, |upper_j|))."""
    a = np.maximum(np.abs(lower), np.abs(upper))
    if kappa is not None:
        a = np.append(a, kappa)
    return a / scale


def _box_noise_size(box, n_params):
    """(p + 1)‖k‖/√3: the size of box-norm noise at β = 1 (mean radius × RMS norm of U)."""
    return (n_params + 1) * float(np.linalg.norm(box)) / math.sqrt(3.0)


def _box_wins(box, n_params, epsilon, delta):
    """Whether box-norm noise is used (a public choice): smaller than the gamma-norm noise
    p/ε for δ = 0, than the Gaussian noise σ(ε, δ)·√p for δ > 0."""
    if box is None:
        return False
    if delta > 0:
        return _box_noise_size(box, n_params) / epsilon < gaussian_sigma(epsilon, delta) * math.sqrt(n_params)
    return _box_noise_size(box, n_params) < n_params


def _joint_loss_bound(beta, a):
    """An upper bound (rounded up) on max over s in [0, 1] of f(s) = β s + log1p(a s (1 − s)).

    f is concave in s (f″ < 0), so it lies below its tangent at any point p: the maximum
    over [0, 1] of f(p) + f′(p)(s − p), reached at s = 0 or 1, bounds it whatever the
    rounding of p (the computed stationary point, clamped to [0, 1]). A relative margin of
    1e-12 of the magnitudes involved covers the rounding of the evaluation itself.
    """
    if beta <= 0.0:
        point = 0.5
    else:  # root in [0, 1] of f′(s) = β + a(1 − 2s)/(1 + a s (1 − s))
        b = a * (2.0 - beta)
        point = (-b + math.sqrt(b * b + 4.0 * beta * a * (beta + a))) / (2.0 * beta * a)
        point = min(max(point, 0.0), 1.0)
    inner = 1.0 + a * point * (1.0 - point)
    value = beta * point + math.log1p(a * point * (1.0 - point))
    curve = a * (1.0 - 2.0 * point) / inner
    slope = beta + curve
    bound = value + max(-slope * point, slope * (1.0 - point))
    return round_up(bound + 1e-12 * (1.0 + abs(value) + beta + abs(curve)))


def joint_objective_budget(epsilon, mu, curvature):
    """The largest β (found by bisection, always feasible) with max over s in [0, 1] of
    β s + log(1 + 4c s (1 − s)/μ) <= ``epsilon``: the pure-ε noise budget of objective
    perturbation for a loss with ℓ″ <= 4c·s(1 − s), s = |ℓ′| (the logistic loss, c = 1/4;
    see the module docstring). At least the separate bound ε − log(1 + c/μ).

    Remembered per (ε, μ, c): the bisection (about 0.1 ms) ran on every fit."""
    return _joint_objective_budget(epsilon, mu, curvature)


@_memoised
def _joint_objective_budget(epsilon, mu, curvature):
    a = 4.0 * curvature / mu
    low = round_down(epsilon - round_up(math.log1p(curvature / mu)))
    if low <= 0.0 or _joint_loss_bound(low, a) > epsilon:  # not expected: the separate bound is feasible
        return low
    high = epsilon
    for _ in range(60):
        middle = 0.5 * (low + high)
        if _joint_loss_bound(middle, a) <= epsilon:
            low = middle
        else:
            high = middle
    return low


def plan_perturbation(*, method, epsilon, delta, lam, curvature, n_params, tol, box=None, curvature_tracks_slope=False):
    """Noise parameters for one binary problem with budget (ε, δ) (see the module docstring).

    ``box``: the half-widths from :func:`box_half_widths` when the features have public
    bounds; objective perturbation then draws box-norm noise (ε-DP, also when δ > 0) if
    it is smaller than the gamma-norm or Gaussian noise.

    ``curvature_tracks_slope``: the loss has ℓ″ <= 4·curvature·s(1 − s) with s = |ℓ′|
    (logistic); the pure-ε noise then gets the joint budget of
    :func:`joint_objective_budget` instead of ε − ε_det.

    ``epsilon=inf``: no noise at all (the exact regularised solution), one non-private
    release.
    """
    if is_non_private(epsilon):
        return PerturbationPlan(method, lam, None, None, 0.0, None, (NON_PRIVATE_EVENT,))
    if method == "output":
        sensitivity = _ratio_up(round_up(1.0 + 2.0 * tol), lam)
        if delta > 0:
            mechanism = Gaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
            event = mechanism.privacy_event((n_params,))
            return PerturbationPlan(method, lam, None, None, sensitivity, (epsilon, delta), (event,))
        return PerturbationPlan(method, lam, None, None, _ratio_up(sensitivity, epsilon), None, (PureDPEvent(epsilon),))
    eps_objective = epsilon * (1.0 - AMP_SHARE)
    eps_output = round_down(epsilon - eps_objective)  # the subtraction is exact (Sterbenz)
    extra = max(0.0, curvature / math.expm1(min(eps_objective / 2.0, 700.0)) - lam)
    mu = lam + extra
    eps_det = round_up(math.log1p(curvature / mu))
    budget = round_down(eps_objective - eps_det)  # what is left for the noise on b
    if delta > 0 and not _box_wins(box, n_params, epsilon, delta):
        noise, scale = "gaussian", gaussian_sigma(budget, delta)
        objective_event = ApproxDPEvent(eps_objective, delta)
    else:
        if curvature_tracks_slope:
            budget = joint_objective_budget(eps_objective, mu, curvature)
        noise, scale = ("box" if _box_wins(box, n_params, epsilon, delta) else "gamma"), _reciprocal_up(budget)
        objective_event = PureDPEvent(eps_objective)
    output_scale = _ratio_up(round_up(2.0 * tol / mu), eps_output)
    return PerturbationPlan(
        method,
        mu,
        noise,
        scale,
        output_scale,
        None,
        (objective_event, PureDPEvent(eps_output)),
        box if noise == "box" else None,
    )


def default_regularization(*, method, epsilon, delta, n_params, box=None):
    """The data-independent Λ used when ``C=None``.

    Objective perturbation: Λ = 0.05 × the expected norm of b at this budget (n_params/ε
    for gamma-norm noise, (n_params + 1)·‖k‖/(√3·ε) for box-norm noise, σ·sqrt(n_params)
    for Gaussian noise), so that directions the
    data does not pin down move by O(1) in the unit-ball coordinates (the factor was
    tuned by cross-validation on the Adult training split and synthetic data). Output
    perturbation: Λ = sqrt(n_params/ε) (the noise ‖N‖ ≈ n_params/(Λε) then matches the
    scale of the regularisation). At ε = ∞ (no noise) Λ = 1, ``C=1`` for the scaled rows.
    """
    if is_non_private(epsilon):
        return 1.0  # no noise to balance: Λ = 1 in the unit-ball coordinates (C = 1)
    if method == "output":
        return math.sqrt(n_params / epsilon)
    if _box_wins(box, n_params, epsilon, delta):
        return _DEFAULT_STRENGTH * _box_noise_size(box, n_params) / epsilon
    if delta > 0:
        return _DEFAULT_STRENGTH * gaussian_sigma(epsilon, delta) * math.sqrt(n_params)
    return _DEFAULT_STRENGTH * n_params / epsilon


# --------------------------------------------------------------------------- the fit


def _gamma_norm(n_params, scale, rng, plan_event):
    noise = np.zeros(n_params)
    gamma_norm_vector(noise, scale, rng)
    note_release(plan_event)
    return noise


def _box_norm(box, scale, rng, plan_event):
    """b with density ∝ exp(−‖b‖_K/scale), K the box of half-widths ``box``: r·U, r ~ Gamma(p + 1, scale)."""
    radius = rng.gamma(box.size + 1.0, scale)
    noise = radius * rng.uniform(-1.0, 1.0, size=box.size) * box
    note_release(plan_event)
    return noise


def fit_private_linear(
    X, y, loss, plan, *, norm_bound, scale, kappa, tol, max_iter, rng, weights=None, objective_type=None
):
    """Solve one perturbed binary problem and release its noisy solution.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64, C order
        Rows already clipped to norm ``norm_bound`` (``data_norm``).
    y : ndarray of shape (n_samples,)
        Labels in {−1, +1} (float64).
    loss : LogisticLoss or HuberizedHinge
    plan : PerturbationPlan
    norm_bound : float
        The row norm bound R the rows were clipped to.
    scale : float
        S >= sqrt(R² + κ²) (R without intercept).
    kappa : float or None
        The intercept constant, None without intercept.
    tol, max_iter : certified gradient tolerance and Newton iteration cap
    rng : numpy.random.Generator
    weights : ndarray of shape (n_samples,) or None
        Weights in [0, 1] of the loss terms (user-level fits; the plan must account for
        them, see ``dpsk.linear_model._user_level``).
    objective_type : callable or None
        Builds the objective from these arguments (``_Objective``'s signature); None for
        the in-memory ``_Objective``. The Dask fit passes its distributed objective
        (``dpsk.dask._newton``): the noise, the solver and the release stay these.

    Returns
    -------
    w : ndarray of shape (n_params,)
        The released coefficients in original units (the last one multiplies κ).
    n_iter : int
    """
    n_params = X.shape[1] + (kappa is not None)
    linear = np.zeros(n_params)
    if plan.method == "objective" and plan.objective_noise is not None:
        if plan.objective_noise == "gaussian":
            add_gaussian(linear, plan.objective_scale, rng)
            note_release(plan.events[0])
        elif plan.objective_noise == "box":
            linear = _box_norm(plan.objective_box, plan.objective_scale, rng, plan.events[0])
        else:
            linear = _gamma_norm(n_params, plan.objective_scale, rng, plan.events[0])
    objective = (objective_type or _Objective)(
        X, y, loss, norm_bound=norm_bound, scale=scale, kappa=kappa, mu=plan.mu, linear=linear, weights=weights
    )
    v, n_iter = _minimize(objective, n_params, tol=tol, max_iter=max_iter)
    if plan.events == (NON_PRIVATE_EVENT,):  # epsilon=inf: the exact solution
        note_release(NON_PRIVATE_EVENT)
    elif plan.output_gaussian is not None:
        eps, delta = plan.output_gaussian
        v = Gaussian(epsilon=eps, delta=delta, sensitivity=plan.output_scale, random_state=rng).randomise(v)
    else:
        v = v + _gamma_norm(n_params, plan.output_scale, rng, plan.events[-1])
    return v / scale, n_iter


def store_linear_classifier(estimator, coefs, n_iters, *, classes, data_norm, lam, scale, kappa, n_features, dtype):
    """Set a fitted linear classifier's attributes from the solver's rows ``coefs`` (one
    per one-vs-rest problem; the intercept last, in units of κ) and iteration counts."""
    coefs = np.asarray(coefs)
    estimator.classes_ = classes
    estimator.data_norm_ = data_norm
    estimator.C_ = 1.0 / (lam * scale * scale)
    estimator.coef_ = coefs[:, :n_features].astype(dtype)
    intercept = coefs[:, -1] * kappa if kappa is not None else np.zeros(len(coefs))
    estimator.intercept_ = intercept.astype(dtype)
    estimator.n_iter_ = np.array(n_iters, dtype=np.int32)
    return estimator
