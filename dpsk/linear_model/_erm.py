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

from dpsk._core._accumulate import clipped_gram
from dpsk._core._clip import clip_bounds, clip_rows_l2
from dpsk._core._noise import add_gaussian, gamma_norm_vector
from dpsk._core._sparse import (
    ClippedCSR,
    as_csr,
    csr_block_sums,
    csr_clip_bounds,
    csr_clip_rows_l2,
    sparse_weighted_gram,
)
from dpsk.accounting import ApproxDPEvent, PureDPEvent, gaussian_sigma, note_release
from dpsk.accounting._calibration import _ratio_up, _reciprocal_up, round_down, round_up
from dpsk.accounting._events import NON_PRIVATE_EVENT
from dpsk.mechanisms import Gaussian
from dpsk.stats._bounds import row_norms
from dpsk.utils._private_bounds import PrivateSensitivity, is_private, refuse_sparse_private, what_to_pass
from dpsk.utils._threads import single_blas_thread
from dpsk.utils.validation import is_non_private, resolve_bounds, resolve_data_norm

__all__ = [
    "AMP_SHARE",
    "HuberizedHinge",
    "LogisticLoss",
    "PerturbationPlan",
    "box_half_widths",
    "clip_rows",
    "default_regularization",
    "fit_private_linear",
    "max_certifiable_rows",
    "plan_perturbation",
    "private_row_bounds",
    "release_row_norm",
    "row_bounds",
]

#: Share of each problem's ε spent on the output noise of approximate minima perturbation.
AMP_SHARE = 0.01

# Rows per block of the certified gradient: each block's dot products carry a rounding
# error of at most γ_(_BLOCK) relative to Σ|terms|, and the blocks are added exactly.
_BLOCK = 64
# Above this many rows the Hessian's weighted Gram matrix goes through the threaded kernel.
_GRAM_KERNEL_ROWS = 65536
#: Rows per block of the BLAS Hessian below ``_GRAM_KERNEL_ROWS`` (a block-sized temporary).
_BLOCK_ROWS = 4096
# Sparse X with more parameters: Newton steps by conjugate gradients (no dense Hessian).
_DIRECT_SOLVE_PARAMS = 500
_UNIT_ROUNDOFF = 2.0**-53
# Default regularisation of objective perturbation, relative to the expected norm of b.
_DEFAULT_STRENGTH = 0.05


def _gamma(k):
    """Higham's γ_k = k u / (1 − k u): the relative error bound of a k-term float sum."""
    return k * _UNIT_ROUNDOFF / (1.0 - k * _UNIT_ROUNDOFF)


# ------------------------------------------------------------------------------ losses


class LogisticLoss:
    """ℓ(z) = log(1 + e^(−z)): ℓ′ ∈ (−1, 0), 0 < ℓ″ ≤ 1/4."""

    curvature = 0.25

    def evaluate(self, z):
        """(ℓ(z), ℓ′(z), ℓ″(z)) elementwise, from one exponential per element."""
        # In place where possible (n-sized temporaries dominate the fit's memory); the
        # same operations in the same order as the textbook expressions in the comments.
        e = np.abs(z)
        np.negative(e, out=e)
        np.exp(e, out=e)  # e = exp(−|z|)
        values = np.log1p(e)
        positive_part = np.negative(z)
        np.maximum(positive_part, 0.0, out=positive_part)
        values += positive_part  # log1p(e) + max(−z, 0)
        inverse = np.add(e, 1.0, out=positive_part)
        np.divide(1.0, inverse, out=inverse)  # 1 / (1 + e)
        p = np.multiply(e, inverse, out=e)  # e / (1 + e)
        second = p * inverse  # e · inverse · inverse
        np.copyto(p, inverse, where=z < 0)  # σ(−z) = −ℓ′(z), accurate to a few ulps
        return values, np.negative(p, out=p), second

    def derivatives(self, z):
        """(ℓ′(z), ℓ″(z)) elementwise."""
        return self.evaluate(z)[1:]

    def first_derivative(self, z):
        """ℓ′(z) alone, bit for bit as :meth:`evaluate`'s (two n-sized temporaries, not four)."""
        e = np.abs(z)
        np.negative(e, out=e)
        np.exp(e, out=e)
        inverse = np.add(e, 1.0)
        np.divide(1.0, inverse, out=inverse)
        p = np.multiply(e, inverse, out=e)
        np.copyto(p, inverse, where=z < 0)
        return np.negative(p, out=p)


class HuberizedHinge:
    """The Huberized hinge of CMS 2011: 0 (z > 1 + h), (1 + h − z)²/(4h) (|1 − z| ≤ h), 1 − z.

    ℓ′ ∈ [−1, 0] and 0 ≤ ℓ″ ≤ 1/(2h).
    """

    def __init__(self, h=0.5):
        self.h = float(h)
        self.curvature = 1.0 / (2.0 * self.h)

    def evaluate(self, z):
        """(ℓ(z), ℓ′(z), ℓ″(z)) elementwise."""
        h = self.h
        gap = 1.0 + h - z
        quad = np.clip(gap, 0.0, 2.0 * h)  # the quadratic zone, saturated at both ends
        values = quad * quad / (4.0 * h) + np.maximum(gap - 2.0 * h, 0.0)
        second = np.where((gap > 0.0) & (gap < 2.0 * h), self.curvature, 0.0)
        return values, -quad / (2.0 * h), second

    def derivatives(self, z):
        """(ℓ′(z), ℓ″(z)) elementwise."""
        return self.evaluate(z)[1:]

    def first_derivative(self, z):
        """ℓ′(z) elementwise."""
        return self.evaluate(z)[1]


# ------------------------------------------------------------------------ the objective


class _Objective:
    """F(v) = Σ ℓ(y_i z_iᵀv) + (μ/2)‖v‖² + bᵀv with z_i = [x_i, κ]/S, evaluated with BLAS.

    ``X`` holds the clipped rows (‖x_i‖ ≤ R exactly, float64, C order); ``kappa`` is None
    without intercept. Coefficients in original units are w = v/S.
    """

    def __init__(self, X, y, loss, *, norm_bound, scale, kappa, mu, linear, weights=None):
        self.X = X
        self.norm_bound = norm_bound
        # Per-row weights in [0, 1] of the loss terms (user-level fits), or None.
        self.weights = weights
        self.y = y
        self.loss = loss
        self.scale = scale
        self.kappa = kappa
        self.mu = mu
        self.linear = linear  # b, shape (n_params,)
        self.n_features = X.shape[1]
        # Terms of a margin's dot product: n_features, or the most stored values of a
        # sparse row (the CSR product adds only those: a tighter rounding bound, which
        # wide sparse data needs to certify at all).
        self.row_terms = _row_terms(X)

    def margins(self, v):
        w = v / self.scale
        m = np.asarray(self.X @ w[: self.n_features])
        if self.kappa is not None:
            m += self.kappa * w[-1]
        m *= self.y
        return m

    def _weighted(self, per_row):
        return per_row if self.weights is None else per_row * self.weights

    def evaluate(self, v, z):
        """(F(v), ℓ′, ℓ″) at the margins z = y ⊙ (Z v); ℓ′ and ℓ″ are not yet weighted."""
        values, first, second = self.loss.evaluate(z)
        data = float(np.sum(values)) if self.weights is None else float(self.weights @ values)
        return data + 0.5 * self.mu * float(v @ v) + float(self.linear @ v), first, second

    def _data_part(self, s):
        """Σ s_i z_i for per-row coefficients s (fast path: one BLAS call)."""
        g = np.asarray(s @ self.X)
        if self.kappa is not None:
            g = np.append(g, self.kappa * s.sum())
        return g / self.scale

    def gradient(self, v, first):
        return self._data_part(self._weighted(self.y * first)) + self.mu * v + self.linear

    def hessian(self, second):
        second = self._weighted(second)
        if _is_sparse(self.X):  # sparse XᵀDX (no dense copy of X); small d only (see _minimize)
            count, sums = float(second.sum()), second @ self.X
            gram = sparse_weighted_gram(self.X, second)
        elif self.X.shape[0] > _GRAM_KERNEL_ROWS:
            count, sums, gram = clipped_gram(self.X, max_norm=self.norm_bound, sample_weight=second)
        else:  # one BLAS call; the kernel's threads do not pay off on small inputs
            count, sums = float(second.sum()), second @ self.X
            gram = np.zeros((self.n_features, self.n_features))
            for start in range(0, self.X.shape[0], _BLOCK_ROWS):  # no weighted copy of X
                rows = self.X[start : start + _BLOCK_ROWS]
                gram += (rows.T * second[start : start + _BLOCK_ROWS]) @ rows
        if self.kappa is not None:
            d = self.n_features
            full = np.empty((d + 1, d + 1))
            full[:d, :d] = gram
            full[:d, d] = full[d, :d] = self.kappa * sums
            full[d, d] = self.kappa * self.kappa * count
            gram = full
        gram /= self.scale * self.scale
        gram.flat[:: gram.shape[0] + 1] += self.mu
        return gram

    def hessian_vector(self, second, p):
        """H p for the Hessian of :meth:`hessian` (without forming it): O(nnz) per product."""
        second = self._weighted(second)
        d = self.n_features
        u = p[:d] / self.scale
        m = np.asarray(self.X @ u)
        if self.kappa is not None:
            m = m + self.kappa * p[d] / self.scale
        t = second * m
        out = np.asarray(t @ self.X) / self.scale
        if self.kappa is not None:
            out = np.append(out, self.kappa * t.sum() / self.scale)
        return out + self.mu * p

    def block_parts(self, s):
        """Σ_i s_i x_i over each block of _BLOCK rows (dense X), formed in float64 (a rounding
        of at most γ_(_BLOCK) each): shape (n_blocks + 1, d), the last row the partial block."""
        X, n, d = self.X, self.X.shape[0], self.n_features
        full = n - n % _BLOCK
        parts = np.matmul(s[:full].reshape(-1, 1, _BLOCK), X[:full].reshape(-1, _BLOCK, d))[:, 0, :]
        return np.vstack([parts, (s[full:] @ X[full:])[None, :]])

    def _block_sums(self, s):
        """Σ_i s_i x_i (length d) as the exact sums (``math.fsum``) of :meth:`block_parts`."""
        if _is_sparse(self.X):  # the same blocks; added by Sum2 (see _sparse_sum_bound), O(d) memory
            return csr_block_sums(self.X, s, _BLOCK)
        parts = self.block_parts(s)
        return np.array([math.fsum(parts[:, j]) for j in range(self.n_features)])

    def signed_first(self, v):
        """s_i = w_i y_i ℓ′(y_i z_iᵀv): the per-row coefficients of the gradient's data part."""
        first = self.loss.first_derivative(self.margins(v))
        first *= self.y
        return self._weighted(first)

    def certified_gradient_norm(self, v):
        """An upper bound on the exact ‖∇F(v)‖ for the stored data, rounding included."""
        s = self.signed_first(v)
        data = self._block_sums(s)
        if self.kappa is not None:
            data = np.append(data, self.kappa * math.fsum(s))
        data /= self.scale
        return certified_norm(self, data, v, abs_s=float(np.sum(np.abs(s))), n=self.X.shape[0])


def certified_norm(objective, data, v, *, abs_s, n):
    """The certified ‖∇F(v)‖ from ``data`` = (Σ_i s_i z_i rounded once from exact sums of
    blocks of at most _BLOCK rows), ``abs_s`` (Σ|s_i| with a relative error below γ_n) and
    the number of rows n: ‖∇F(v)‖ as computed plus every rounding error, bounded.

    ``objective`` gives μ, b, ℓ's curvature, d and whether rows are weighted or sparse
    (the in-memory :class:`_Objective` or the Dask one, ``dpsk.dask._newton``).
    """
    d, mu, linear = objective.n_features, objective.mu, objective.linear
    grad = data + mu * v + linear
    norm_v = float(np.linalg.norm(v))
    abs_s = abs_s * (1.0 + _gamma(n))
    bound = (
        # the dot products inside each block (rows have norm <= 1 after scaling)
        _gamma(_BLOCK + 3) * abs_s
        # the margins (|error| <= γ_(k+3) ‖z_i‖‖v‖, k <= d the row's terms) through ℓ′ (Lipschitz c), and ℓ′ itself
        # (a weight w_i <= 1 multiplies ℓ′ with one more rounding: u more per row)
        + n
        * (
            objective.loss.curvature * _gamma(objective.row_terms + 4) * norm_v
            + (4.0 + (objective.weights is not None)) * _UNIT_ROUNDOFF
        )
        # the exact block sums rounded once, and the three-term sum of the gradient
        + _gamma(4) * (float(np.linalg.norm(data)) + mu * norm_v + float(np.linalg.norm(linear)))
        + (_sparse_sum_bound(n, abs_s) if _is_sparse(objective.X) else 0.0)
    )
    return float(np.linalg.norm(grad)) * (1.0 + _gamma(d + 3)) + bound


def _row_terms(X):
    """The most products a margin adds: n_features for dense X, the largest number of
    stored values of a row for sparse X (its implicit zeros are not added)."""
    if not _is_sparse(X):
        return X.shape[1]
    indptr = (X.X if isinstance(X, ClippedCSR) else X.tocsr()).indptr
    return int(np.max(np.diff(indptr), initial=0))


def _is_sparse(X):
    """Whether the objective's rows are sparse: a CSR matrix or lazily clipped CSR rows."""
    return sp.issparse(X) or isinstance(X, ClippedCSR)


def _sparse_sum_bound(n, abs_s):
    """What Sum2 adds to the rounding of the block sums on sparse X, in the scaled units.

    Sum2 (Ogita, Rump & Oishi 2005, Prop. 4.5) returns each entry within u·|S_j| +
    γ²_(m−1)·Σ_b |p_bj| of the exact sum S_j of its m <= ⌈n/_BLOCK⌉ block sums p_bj: the
    first part is the single rounding the dense path's exact sums have (counted there);
    the second, over the entries, is at most γ²_m (1 + γ__BLOCK) Σ_i |s_i| ‖x_i‖ in L2
    (triangle inequality over rows), and rows have norm <= 1 after scaling. ``abs_s``:
    an upper bound on Σ|s_i|.
    """
    blocks = -(-n // _BLOCK)
    return _gamma(blocks) ** 2 * (1.0 + _gamma(_BLOCK)) * abs_s


def max_certifiable_rows(tol):
    """The row limit of the declared domain at ``tol``: more rows and rounding alone could exceed ``tol``/4.

    A public function of ``tol`` (about 3·10⁷ rows at 1e-6, 3·10⁹ at 1e-4).
    """
    return math.floor(tol / 4.0 / (_gamma(_BLOCK + 3) + 5.0 * _UNIT_ROUNDOFF))


def check_certifiable(n_samples, tol):
    """Raise ValueError if the data has more rows than ``tol`` can certify (outside the declared domain).

    Under the add/remove relation n is not public, so the limit is part of the declared
    domain, like finite values: it is a public function of ``tol``
    (:func:`max_certifiable_rows`), and the error reveals only that the data left the
    domain (n above the limit), nothing about a dataset inside it. Called before the
    budget is spent, on the shape of X only.
    """
    limit = max_certifiable_rows(tol)
    if n_samples > limit:
        raise ValueError(
            f"the data has more rows than tol={tol} can certify in float64 (the declared domain of this "
            f"tol holds at most {limit} rows); increase tol. Nothing was spent."
        )


def _newton_step(objective, second, grad):
    """The Newton direction −H⁻¹∇F: a dense solve, or conjugate gradients on Hessian-vector
    products for sparse X with many features (no n_params² matrix). H >= μI is symmetric
    positive definite either way. Only the speed of the solver depends on this choice: the
    release is decided by the certified gradient norm."""
    if not (_is_sparse(objective.X) and grad.size > _DIRECT_SOLVE_PARAMS):
        return -np.linalg.solve(objective.hessian(second), grad)
    # Truncated CG (Steihaug without trust region: H is positive definite), forcing term
    # min(1/2, √‖g‖): superlinear convergence of the Newton iterations (Nocedal & Wright, §7.1).
    norm = float(np.linalg.norm(grad))
    target = min(0.5, math.sqrt(norm)) * norm
    step = np.zeros_like(grad)
    residual = -grad
    direction = residual.copy()
    rr = float(residual @ residual)
    for _ in range(max(50, 2 * int(math.sqrt(grad.size)))):
        if math.sqrt(rr) <= target:
            break
        hd = objective.hessian_vector(second, direction)
        alpha = rr / float(direction @ hd)
        step += alpha * direction
        residual -= alpha * hd
        rr_new = float(residual @ residual)
        direction = residual + (rr_new / rr) * direction
        rr = rr_new
    return step


def _minimize(objective, n_params, *, tol, max_iter):
    """Newton's method (with a backtracking line search) until ‖∇F‖ <= tol is certified.

    Returns (v, n_iter). Raises RuntimeError if ``max_iter`` Newton steps do not certify
    the tolerance (not observed on strongly convex problems; see ``check_certifiable``).

    The error is raised, not a warning with the uncertified iterate: the guarantee of
    objective (and output) perturbation holds for a solution within ``tol``/μ of the exact
    minimiser, so an uncertified iterate has no guarantee at all. Callers record the spend
    before calling, so the budget is charged whether the fit releases or fails.
    """
    with single_blas_thread():  # tall-thin BLAS calls, and the Gram kernel's own threads
        return _newton(objective, n_params, tol=tol, max_iter=max_iter)


def _newton(objective, n_params, *, tol, max_iter):
    n = objective.X.shape[0]
    v = np.zeros(n_params)
    f, first, second = objective.evaluate(v, objective.margins(v))
    for n_iter in range(max_iter + 1):
        grad = objective.gradient(v, first)
        if float(np.linalg.norm(grad)) <= tol / 2 and objective.certified_gradient_norm(v) <= tol:
            return v, n_iter
        if n_iter == max_iter:
            break
        step = _newton_step(objective, second, grad)
        first = second = None  # n-sized: free them before the line search makes new ones
        slope = float(grad @ step)
        # Near the optimum the decrease of F drowns in its rounding error: accept the
        # Newton step there (the certificate, not F, decides when to stop).
        noise = 16.0 * _UNIT_ROUNDOFF * (abs(f) + n)
        t = 1.0
        for _ in range(60):
            v_new = v + t * step
            f_new, first, second = objective.evaluate(v_new, objective.margins(v_new))
            if f_new <= f + 1e-4 * t * slope + noise:
                break
            t *= 0.5
        v, f = v_new, f_new
    raise RuntimeError(
        f"the solver did not certify tol={tol} within max_iter={max_iter} Newton steps; "
        "increase max_iter or tol (the privacy budget of this fit is spent)"
    )


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


def plan_perturbation(*, method, epsilon, delta, lam, curvature, n_params, tol, box=None):
    """Noise parameters for one binary problem with budget (ε, δ) (see the module docstring).

    ``box``: the half-widths from :func:`box_half_widths` when the features have public
    bounds; objective perturbation then draws box-norm noise (ε-DP, also when δ > 0) if
    it is smaller than the gamma-norm or Gaussian noise.

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
