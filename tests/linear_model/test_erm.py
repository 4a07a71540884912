# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the private ERM machinery: losses, certified solver, calibration."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import gamma, kstest

from dpsk.accounting import ApproxDPEvent, PureDPEvent, gaussian_sigma
from dpsk.linear_model._erm import (
    AMP_SHARE,
    _box_norm,
    default_regularization,
    plan_perturbation,
)
from dpsk.linear_model._solver import HuberizedHinge, LogisticLoss, _minimize, _Objective, check_certifiable

LOSSES = [LogisticLoss(), HuberizedHinge(0.5), HuberizedHinge(0.2)]


def test_logistic_loss_is_accurate_far_from_zero():
    """Check the fused evaluation against direct formulas, including |z| large."""
    z = np.array([-800.0, -40.0, -3.0, -1e-8, 0.0, 2.0, 35.0, 800.0])
    values, first, second = LogisticLoss().evaluate(z)
    np.testing.assert_allclose(values, np.logaddexp(0.0, -z), rtol=1e-15, atol=0)
    np.testing.assert_allclose(-first, expit(-z), rtol=4e-16, atol=0)
    np.testing.assert_allclose(second, expit(z) * expit(-z), rtol=1e-15, atol=0)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda l: type(l).__name__)
def test_loss_derivatives_match_finite_differences_and_bounds(loss):
    """Check ℓ′, ℓ″ against central differences, and −1 <= ℓ′ <= 0 <= ℓ″ <= c."""
    z = np.linspace(-6, 6, 2401)
    z = z[np.abs(z - 1) > 1e-3]  # away from the Huber kinks at 1 ± h
    if isinstance(loss, HuberizedHinge):
        z = z[np.minimum(np.abs(z - 1 - loss.h), np.abs(z - 1 + loss.h)) > 1e-3]
    h = 1e-5
    first, second = loss.derivatives(z)
    numeric_first = np.array(
        [(loss.evaluate(np.array([t + h]))[0][0] - loss.evaluate(np.array([t - h]))[0][0]) / (2 * h) for t in z]
    )
    numeric_second = (loss.derivatives(z + h)[0] - loss.derivatives(z - h)[0]) / (2 * h)
    np.testing.assert_allclose(first, numeric_first, atol=1e-6)
    np.testing.assert_allclose(second, numeric_second, atol=1e-5)
    assert np.all((first >= -1) & (first <= 0))
    assert np.all((second >= 0) & (second <= loss.curvature * (1 + 1e-12)))
    assert second.max() > 0.95 * loss.curvature  # c is the supremum, not a loose bound


def test_huberized_hinge_values():
    loss = HuberizedHinge(0.5)
    # (1 + h − z)²/(4h) in the middle zone; 1 − z below it (continuous at z = 1 − h).
    for z, expected in [(2.0, 0.0), (1.5, 0.0), (1.0, 0.125), (0.5, 0.5), (-1.0, 2.0)]:
        assert loss.evaluate(np.array([z]))[0][0] == pytest.approx(expected)


def _problem(n=300, d=4, kappa=1.0, mu=0.7, seed=0, loss=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1) / 2.0)[:, None]  # norm <= 2
    y = np.where(X @ np.arange(1, d + 1) + rng.normal(size=n) > 0, 1.0, -1.0)
    scale = math.hypot(2.0, kappa) * (1 + 1e-12) if kappa is not None else 2.0
    linear = rng.normal(size=d + (kappa is not None))
    obj = _Objective(X, y, loss or LogisticLoss(), norm_bound=2.0, scale=scale, kappa=kappa, mu=mu, linear=linear)
    return obj


def _exact_gradient(obj, v):
    """The gradient at v evaluated in exact rational arithmetic from the stored floats (slow)."""
    assert isinstance(obj.loss, HuberizedHinge)  # piecewise polynomial: exact in rationals
    h = Fraction(obj.loss.h)
    S = Fraction(obj.scale)
    kappa = None if obj.kappa is None else Fraction(obj.kappa)
    vf = [Fraction(x) for x in v]
    grad = [Fraction(obj.mu) * x + Fraction(b) for x, b in zip(vf, obj.linear)]
    for row, label in zip(obj.X, obj.y):
        z = [Fraction(x) for x in row] + ([kappa] if kappa is not None else [])
        margin = Fraction(label) * sum(a * b for a, b in zip(z, vf)) / S
        gap = 1 + h - margin
        first = -min(max(gap, Fraction(0)), 2 * h) / (2 * h)
        for j, a in enumerate(z):
            grad[j] += Fraction(label) * first * a / S
    return math.sqrt(float(sum(g * g for g in grad)))


@pytest.mark.parametrize("kappa", [1.0, None])
def test_certified_gradient_norm_bounds_the_exact_norm(kappa):
    """Check that the certificate is an upper bound on the exact gradient norm, and tight."""
    obj = _problem(n=150, d=3, kappa=kappa, loss=HuberizedHinge(0.5))
    rng = np.random.default_rng(1)
    for _ in range(3):
        v = rng.normal(size=obj.linear.size)
        exact = _exact_gradient(obj, v)
        first, _ = obj.loss.derivatives(obj.margins(v))
        fast = float(np.linalg.norm(obj.gradient(v, first)))
        certified = obj.certified_gradient_norm(v)
        assert exact <= certified <= exact + 1e-9
        assert fast == pytest.approx(exact, rel=1e-10)


@pytest.mark.parametrize("kappa", [1.0, None])
def test_certified_gradient_norm_on_sparse_rows_bounds_the_exact_norm(kappa):
    """Check the certificate on CSR rows (margins bounded with the rows' stored terms)."""
    import scipy.sparse as sp

    dense = _problem(n=150, d=6, kappa=kappa, loss=HuberizedHinge(0.5))
    X = dense.X.copy()
    X[:, [1, 4]] = 0.0  # at most 4 stored values per row
    dense.X = X
    M = sp.csr_matrix(X)
    obj = _Objective(
        M, dense.y, dense.loss, norm_bound=2.0, scale=dense.scale, kappa=kappa, mu=dense.mu, linear=dense.linear
    )
    assert obj.row_terms == 4
    rng = np.random.default_rng(2)
    for _ in range(3):
        v = rng.normal(size=obj.linear.size)
        exact = _exact_gradient(dense, v)
        assert exact <= obj.certified_gradient_norm(v) <= exact + 1e-9


def test_certified_gradient_norm_is_tight_on_wide_sparse_rows():
    """Check that wide sparse data can be certified: the margins' rounding is bounded by
    the rows' few stored terms, not by n_features (with γ_(n_features) the allowance alone
    would be n·γ_(10**6)·‖v‖ > 1e-6, above any usual tol: the full-size text benchmark,
    10**5 documents × 5·10**4 words, never certified)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    n, d = 10_000, 1_000_000
    cols = rng.integers(0, d, (n, 3))
    M = sp.csr_matrix((np.full(3 * n, 0.5), cols.ravel(), np.arange(0, 3 * n + 1, 3)), shape=(n, d))
    M.sum_duplicates()
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    obj = _Objective(M, y, LogisticLoss(), norm_bound=1.0, scale=1.0, kappa=None, mu=1e-3, linear=np.zeros(d))
    v = rng.normal(size=d)
    v /= np.linalg.norm(v)
    first, _ = obj.loss.derivatives(obj.margins(v))
    fast = float(np.linalg.norm(obj.gradient(v, first)))
    assert obj.certified_gradient_norm(v) - fast <= 1e-7


@pytest.mark.parametrize("loss", LOSSES, ids=lambda l: type(l).__name__)
@pytest.mark.parametrize("kappa", [2.0, None])
def test_newton_reaches_the_minimiser(loss, kappa):
    """Check that the solver certifies tol and agrees with an independent minimiser."""
    obj = _problem(kappa=kappa, loss=loss)
    n_params = obj.linear.size
    v, n_iter = _minimize(obj, n_params, tol=1e-8, max_iter=100)
    assert obj.certified_gradient_norm(v) <= 1e-8
    assert 1 <= n_iter <= 30

    def f(u):
        return obj.evaluate(u, obj.margins(u))[0]

    def g(u):
        return obj.gradient(u, obj.loss.derivatives(obj.margins(u))[0])

    reference = minimize(f, np.zeros(n_params), jac=g, method="L-BFGS-B", options={"gtol": 1e-10, "ftol": 0}).x
    # ‖v − v*‖ <= ‖∇F(v)‖ / μ for a μ-strongly convex F.
    assert np.linalg.norm(v - reference) <= 1e-8 / obj.mu + 1e-6


def test_newton_raises_when_it_cannot_certify():
    obj = _problem()
    with pytest.raises(RuntimeError, match="did not certify"):
        _minimize(obj, obj.linear.size, tol=1e-8, max_iter=1)


def test_check_certifiable_refuses_huge_inputs():
    check_certifiable(10**6, 1e-6)
    with pytest.raises(ValueError, match="tol"):
        check_certifiable(10**9, 1e-6)
    check_certifiable(10**9, 1e-3)


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 2.0, 50.0])
@pytest.mark.parametrize("lam", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("curvature", [0.25, 1.0])
def test_objective_plan_pure_spends_at_most_epsilon(epsilon, lam, curvature):
    """Check β + log(1 + c/μ) <= ε₁, ε₁ + ε₂ <= ε, the Δ rule and the AMP noise scale."""
    tol = 1e-6
    plan = plan_perturbation(
        method="objective", epsilon=epsilon, delta=0.0, lam=lam, curvature=curvature, n_params=5, tol=tol
    )
    objective, output = plan.events
    assert isinstance(objective, PureDPEvent) and isinstance(output, PureDPEvent)
    assert Fraction(objective.epsilon) + Fraction(output.epsilon) <= Fraction(epsilon)
    assert output.epsilon == pytest.approx(AMP_SHARE * epsilon, rel=1e-9)
    beta = 1.0 / plan.objective_scale
    eps_det = math.log1p(curvature / plan.mu)
    assert beta + eps_det <= objective.epsilon
    assert beta == pytest.approx(objective.epsilon - eps_det, rel=1e-9)
    assert plan.mu >= lam
    assert eps_det <= objective.epsilon / 2 + 1e-12  # the Δ rule
    if plan.mu > lam:  # Δ added only when needed, and then exactly to the threshold
        assert eps_det == pytest.approx(objective.epsilon / 2, rel=1e-9)
    # AMP: density ∝ exp(−ε₂‖N‖/(2γ/μ)).
    assert plan.output_scale >= 2 * tol / plan.mu / output.epsilon


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_objective_plan_gaussian(epsilon):
    """Check σ is the analytic Gaussian σ at (ε₁ − ε_det, δ) and the events are (ε₁, δ) + ε₂."""
    delta = 1e-6
    plan = plan_perturbation(
        method="objective", epsilon=epsilon, delta=delta, lam=10.0, curvature=0.25, n_params=5, tol=1e-6
    )
    objective, output = plan.events
    assert objective == ApproxDPEvent(objective.epsilon, delta)
    eps_det = math.log1p(0.25 / plan.mu)
    assert plan.objective_noise == "gaussian"
    assert plan.objective_scale >= gaussian_sigma(objective.epsilon - eps_det, delta)
    assert plan.objective_scale == pytest.approx(gaussian_sigma(objective.epsilon - eps_det, delta), rel=1e-6)
    assert Fraction(objective.epsilon) + Fraction(output.epsilon) <= Fraction(epsilon)


def test_output_plan_sensitivity():
    """Check the output noise is calibrated to (1 + 2γ)/Λ."""
    plan = plan_perturbation(method="output", epsilon=0.5, delta=0.0, lam=4.0, curvature=0.25, n_params=3, tol=1e-3)
    assert plan.events == (PureDPEvent(0.5),)
    assert plan.output_scale >= (1 + 2e-3) / 4.0 / 0.5
    assert plan.output_scale == pytest.approx((1 + 2e-3) / 4.0 / 0.5, rel=1e-9)
    plan = plan_perturbation(method="output", epsilon=0.5, delta=1e-5, lam=4.0, curvature=0.25, n_params=3, tol=1e-3)
    assert plan.output_gaussian == (0.5, 1e-5)
    assert plan.output_scale == pytest.approx((1 + 2e-3) / 4.0, rel=1e-9)


def test_box_norm_noise_has_the_k_norm_density():
    """Check b = r·U (r ~ Gamma(p + 1), U uniform in K).

    Under ∝ exp(−‖b‖_K/s), ‖b‖_K/s ~ Gamma(p) and the direction is uniform.
    """
    box = np.array([0.5, 0.1, 0.3, 0.2])
    rng = np.random.default_rng(0)
    draws = np.array([_box_norm(box, 2.0, rng, PureDPEvent(1.0)) for _ in range(20_000)])
    k_norm = np.max(np.abs(draws) / box, axis=1) / 2.0
    assert kstest(k_norm, gamma(box.size).cdf).pvalue > 1e-6
    # Given its K-norm, b follows the cone measure of the box's surface: the pair of faces
    # where coordinate j attains the max spans the cone of volume k_j·Π_(i≠j) k_i·2^p/p,
    # the same for every j, so each coordinate is the maximal one with probability 1/p.
    faces = np.argmax(np.abs(draws) / box, axis=1)
    np.testing.assert_allclose(np.bincount(faces, minlength=box.size) / faces.size, 1.0 / box.size, atol=0.015)


def test_box_noise_is_used_only_when_smaller():
    """Check the public choice: box-norm noise for objective perturbation.

    It is chosen when smaller than the ball or Gaussian noise.
    """
    params = dict(epsilon=1.0, lam=1.0, curvature=0.25, tol=1e-6)
    corner = np.full(31, 1.0 / math.sqrt(31))  # ‖k‖ = 1: rows scaled by the corner norm
    plan = plan_perturbation(method="objective", delta=0.0, n_params=31, box=corner, **params)
    assert plan.objective_noise == "box" and plan.objective_box is corner
    same = plan_perturbation(method="objective", delta=0.0, n_params=31, **params)
    assert (plan.mu, plan.objective_scale, plan.events) == (same.mu, same.objective_scale, same.events)
    assert (
        plan_perturbation(method="objective", delta=0.0, n_params=1, box=np.ones(1), **params).objective_noise
        == "gamma"
    )
    assert (
        plan_perturbation(method="objective", delta=0.0, n_params=31, box=3 * corner, **params).objective_noise
        == "gamma"
    )
    # δ > 0: the box (an ε-DP step) against the Gaussian noise σ(ε, δ)·√p, which grows more slowly with p
    boxed = plan_perturbation(method="objective", delta=1e-6, n_params=31, box=corner, **params)
    assert boxed.objective_noise == "box" and boxed.events[0] == PureDPEvent(0.99)
    wide = np.full(301, 1.0 / math.sqrt(301))
    assert (
        plan_perturbation(method="objective", delta=1e-6, n_params=301, box=wide, **params).objective_noise
        == "gaussian"
    )
    lam_gauss = default_regularization(method="objective", epsilon=1.0, delta=1e-6, n_params=301, box=wide)
    assert lam_gauss == pytest.approx(0.05 * gaussian_sigma(1.0, 1e-6) * math.sqrt(301))
    assert plan_perturbation(method="output", delta=0.0, n_params=31, box=corner, **params).objective_box is None
    lam_box = default_regularization(method="objective", epsilon=1.0, delta=0.0, n_params=31, box=corner)
    assert lam_box == pytest.approx(0.05 * 32 / math.sqrt(3.0))
    assert default_regularization(
        method="objective", epsilon=1.0, delta=0.0, n_params=31, box=3 * corner
    ) == pytest.approx(0.05 * 31)
