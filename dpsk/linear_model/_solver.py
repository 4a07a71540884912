# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The exact minimiser behind :mod:`dpsk.linear_model._erm`: losses, the objective, a
damped Newton method and the certified gradient norm that decides when it stops.

No noise is drawn here. The privacy argument (``_erm``'s module docstring, "The solver
is inexact") needs one property of this module: the returned point's gradient norm,
*rounding included*, is at most ``tol``. :meth:`_Objective.certified_gradient_norm`
(and :func:`certified_norm`, shared with the Dask solver in ``dpsk.dask._newton``)
bounds every rounding error of the gradient's computation and adds it to the norm.
"""

import math

import numpy as np
import scipy.sparse as sp

from dpsk._core._accumulate import clipped_gram
from dpsk._core._sparse import ClippedCSR, csr_block_sums, sparse_weighted_gram
from dpsk.utils._threads import single_blas_thread

__all__ = [
    "HuberizedHinge",
    "LogisticLoss",
    "certified_norm",
    "check_certifiable",
    "max_certifiable_rows",
]

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


def _gamma(k):
    """Higham's γ_k = k u / (1 − k u): the relative error bound of a k-term float sum."""
    return k * _UNIT_ROUNDOFF / (1.0 - k * _UNIT_ROUNDOFF)


# ------------------------------------------------------------------------------ losses


class LogisticLoss:
    """ℓ(z) = log(1 + e^(−z)): ℓ′ ∈ (−1, 0), 0 < ℓ″ ≤ 1/4, and ℓ″ = s(1 − s) with s = |ℓ′|."""

    curvature = 0.25
    #: ℓ″ = 4·curvature·s(1 − s), s = |ℓ′|: objective perturbation may bound both at once (``_erm``).
    curvature_tracks_slope = True

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
