# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy of the linear models: exact privacy-loss computations and black-box audits.

The audits fit an estimator thousands of times on two neighbouring datasets (a canary
row beyond the norm boundary, added or removed) and test the projection against the
claim. Each broken variant (noise halved; the curvature term of objective perturbation
scaled like the leading library's; the box of box-norm noise taken from the range of the
bounds) must be rejected, the correct code accepted. The
correct variants of the default configurations are audited in
``tests/privacy/test_estimator_privacy.py``.
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy.special import expit

import dpsk.linear_model._classifier as classifier_module
import dpsk.linear_model._least_squares as least_squares_module
from dpsk.accounting import GaussianEvent, gaussian_delta
from dpsk.audit import (
    audit,
    audit_estimator,
    canary_neighbours,
    estimator_sampler,
    project_attribute,
    project_output,
)
from dpsk.linear_model import LinearRegression, LogisticRegression
from dpsk.linear_model._erm import plan_perturbation
from dpsk.mechanisms import Gaussian
from dpsk.svm import LinearSVC

# Fits per neighbour: enough for the broken variants to be rejected; the correct
# variants are accepted with probability >= 1 − α whatever the sample size, so their
# smoke runs use fewer.
N_SAMPLES = 6_000
N_SAMPLES_CORRECT = 3_000


def _misclassified_canary(data_norm, n=100):
    """Rows at the boundary x = R with label 0, and a canary of label 1 four times beyond.

    The model predicts 0 firmly at x = R, so the canary's loss has slope close to −1: its
    gradient moves the objective by (almost) the full sensitivity.
    """
    return canary_neighbours(np.full((n, 1), data_norm), np.zeros(n, dtype=int), canary_X=[4 * data_norm], canary_y=1)


def _lone_canary(data_norm, n=20):
    """Rows at x = 0 (no gradient, no curvature) and a canary of label 1 four times beyond R."""
    return canary_neighbours(np.zeros((n, 1)), np.arange(n) % 2, canary_X=[4 * data_norm], canary_y=1)


def _halve_noise(plan):
    """The plan with half the noise on every release it draws itself."""
    if plan.method == "output":
        return dataclasses.replace(plan, output_scale=plan.output_scale * 0.5)
    return dataclasses.replace(plan, objective_scale=plan.objective_scale * 0.5)


def _broken_plans(monkeypatch, transform=None, curvature_factor=1.0):
    def broken(**params):
        params["curvature"] *= curvature_factor
        plan = plan_perturbation(**params)
        return transform(plan) if transform else plan

    monkeypatch.setattr(classifier_module, "plan_perturbation", broken)


def _audit(estimator, neighbours, **params):
    return audit_estimator(
        estimator, neighbours, project_attribute("coef_", (0, 0)), n_samples=N_SAMPLES, random_state=0, **params
    )


# ------------------------------------------------------------ exact privacy loss (1-D)


def _hockey_stick(epsilon, beta, mu):
    """δ(ε) of ε-DP objective perturbation in 1-D, computed from the exact densities.

    D holds rows at x = 0 only (no gradient, no curvature), D' adds x = 1, y = +1; no
    intercept. Under D the minimiser is w = −b/μ, under D' it solves ℓ′(w) + μw + b = 0,
    so f_D(w) = ν(−μw)·μ and f_D'(w) = ν(σ(−w) − μw)·(μ + σ(w)σ(−w)) with
    ν(b) = (β/2)e^(−β|b|). Returns max over both directions of ∫ (f − e^ε g)₊.
    """
    w = np.linspace(-40.0 / (mu * beta) - 40.0, 40.0 / (mu * beta) + 40.0, 2_000_001)
    step = w[1] - w[0]

    def nu(b):
        return 0.5 * beta * np.exp(-beta * np.abs(b))

    f = nu(-mu * w) * mu
    g = nu(expit(-w) - mu * w) * (mu + expit(w) * expit(-w))
    return (
        max(np.sum(np.maximum(g - math.exp(epsilon) * f, 0.0)), np.sum(np.maximum(f - math.exp(epsilon) * g, 0.0)))
        * step
    )


@pytest.mark.parametrize("epsilon, lam", [(1.0, 0.01), (1.0, 0.5), (2.0, 0.003), (0.5, 5.0)])
def test_exact_privacy_loss_of_objective_perturbation(epsilon, lam):
    """Check the derivation on a worst case: δ(ε) = 0 with the add/remove calibration.

    With the curvature term scaled by R too few times (as the leading library does for
    data_norm = R = 100), the same computation shows a large δ at the claimed ε.
    """
    plan = plan_perturbation(
        method="objective", epsilon=epsilon, delta=0.0, lam=lam, curvature=0.25, n_params=1, tol=1e-6
    )
    beta = 1.0 / plan.objective_scale
    assert _hockey_stick(plan.events[0].epsilon, beta, plan.mu) < 1e-9
    wrong = plan_perturbation(
        method="objective", epsilon=epsilon, delta=0.0, lam=lam, curvature=0.25 / 100, n_params=1, tol=1e-6
    )
    if lam < 0.1:
        assert _hockey_stick(wrong.events[0].epsilon, 1.0 / wrong.objective_scale, wrong.mu) > 0.05


@pytest.mark.parametrize("epsilon, lam", [(1.0, 0.01), (1.0, 0.5), (1.0, 0.92), (2.0, 0.003), (0.5, 5.0)])
def test_exact_privacy_loss_of_the_joint_calibration(epsilon, lam):
    """Check the joint calibration of the logistic loss (``_erm``) on the exact 1-D densities
    of the worst case above: δ(ε) = 0 at the claimed ε; at ε = 1 and the breast_cancer
    default μ it buys a third more β than the separate bounds, and 3 % more β than it
    gives is caught (δ > 0): the worst case is reached, the calibration is tight."""
    plan = plan_perturbation(
        method="objective",
        epsilon=epsilon,
        delta=0.0,
        lam=lam,
        curvature=0.25,
        n_params=1,
        tol=1e-6,
        curvature_tracks_slope=True,
    )
    beta = 1.0 / plan.objective_scale
    assert _hockey_stick(plan.events[0].epsilon, beta, plan.mu) < 1e-9
    separate = (
        1.0
        / plan_perturbation(
            method="objective", epsilon=epsilon, delta=0.0, lam=lam, curvature=0.25, n_params=1, tol=1e-6
        ).objective_scale
    )
    assert beta >= separate
    if (epsilon, lam) == (1.0, 0.92):
        assert beta > 1.3 * separate
        assert _hockey_stick(plan.events[0].epsilon, beta * 1.03, plan.mu) > 1e-5


# ------------------------------------------------------------------- black-box audits


@pytest.mark.slow
@pytest.mark.extended
def test_objective_perturbation_audit_rejects_halved_noise(monkeypatch):
    """Check the audit of ε-DP objective perturbation has power: half the noise is rejected."""
    estimator = LogisticRegression(epsilon=1.0, data_norm=1.0, C=1.0, fit_intercept=False, classes=[0, 1])
    _broken_plans(monkeypatch, _halve_noise)
    result = _audit(estimator, _misclassified_canary(1.0))
    assert not result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_misscaled_data_norm_is_rejected(monkeypatch):
    """Check that the leading library's data_norm scaling of the curvature term fails the audit.

    With rows of norm R, carrying R through the proof multiplies the curvature term by
    R² (the Hessian gains ℓ″ x xᵀ); using R once (the leading library's choice) leaves
    ε_det too small when Λ is small. R = 100, Λ = 0.01, ε = 1: the exact computation above
    gives δ(ε) ≈ 0.2 for this variant and δ(ε) = 0 for the correct calibration.
    """
    data_norm = 100.0
    estimator = LogisticRegression(epsilon=1.0, data_norm=data_norm, C=0.01, fit_intercept=False, classes=[0, 1])
    neighbours = _lone_canary(data_norm)
    _broken_plans(monkeypatch, curvature_factor=1.0 / data_norm)
    # 6000 runs are at the edge of the power needed here (measured lower bounds 0.87-1.34
    # against the claimed 1 on audit seeds 0-3: passed on 1 of them before integer seeds
    # were derived per release and on 3 after); 12000 runs found 1.75-1.97 on seeds 0-2.
    result = audit_estimator(
        estimator, neighbours, project_attribute("coef_", (0, 0)), n_samples=12_000, random_state=0
    )
    assert not result.passed, str(result)


def _gaussian_claim(estimator):
    """The (ε, δ) point of the proven profile of Gaussian objective perturbation + AMP at ε' = ε_det + ε₂.

    The objective step is (ε_det + e, δ_G(e; 1/σ))-DP for every e >= 0, the output step
    ε₂-DP: claim e = 0, where δ is the Gaussian total variation (largest, most visible).
    """
    params = estimator.get_params()
    plan = plan_perturbation(
        method="objective",
        epsilon=params["epsilon"],
        delta=params["delta"],
        lam=1.0 / (params["C"] * params["data_norm"] ** 2),
        curvature=0.25,
        n_params=1,
        tol=params["tol"],
    )
    eps_det = math.log1p(0.25 / plan.mu)
    return eps_det + plan.events[1].epsilon, gaussian_delta(0.0, 1.0 / plan.objective_scale), plan


@pytest.mark.slow
def test_gaussian_objective_perturbation_audit(monkeypatch):
    """Check (ε, δ) objective perturbation against its proven privacy profile; half the noise is rejected."""
    estimator = LogisticRegression(epsilon=4.0, delta=1e-5, data_norm=1.0, C=0.1, fit_intercept=False, classes=[0, 1])
    epsilon, delta, plan = _gaussian_claim(estimator)
    assert plan.objective_noise == "gaussian" and delta > 0.2
    neighbours = _misclassified_canary(1.0)
    sampler = estimator_sampler(estimator, project_attribute("coef_", (0, 0)))
    assert audit(sampler, neighbours, epsilon, delta, n_samples=N_SAMPLES_CORRECT, random_state=0).passed
    _broken_plans(monkeypatch, _halve_noise)
    result = audit(sampler, neighbours, epsilon, delta, n_samples=N_SAMPLES, random_state=0)
    assert not result.passed, str(result)


@pytest.mark.slow
def test_output_perturbation_audit(monkeypatch):
    """Check ε-DP output perturbation; half the noise is rejected.

    The Huberized hinge has slope exactly −1 for margins below 1 − h, so with Λ = 4 the
    canary moves the minimiser by exactly the sensitivity 1/Λ (no other row matters).
    The correct variant of this configuration is audited in tests/privacy/.
    """
    estimator = LinearSVC(epsilon=1.0, data_norm=1.0, C=0.25, method="output", fit_intercept=False, classes=[0, 1])
    _broken_plans(monkeypatch, _halve_noise)
    result = _audit(estimator, _lone_canary(1.0))
    assert not result.passed, str(result)


def _range_half_widths(lower, upper, kappa, scale):
    """A plausible mistake: the box's half-widths from the range, (upper − lower)/2, not max(|lower|, |upper|)."""
    a = (upper - lower) / 2.0
    return (a if kappa is None else np.append(a, kappa)) / scale


@pytest.mark.slow
@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_box_norm_objective_perturbation_audit(delta, monkeypatch):
    """Check ε-DP objective perturbation with box-norm noise (``bounds``); a box too small is rejected.

    With δ > 0 the box noise is still chosen here (p = 2: it is smaller than the Gaussian),
    and the step must be ε-DP (the claim audited has δ = 0).

    Two features in [0.5, 1], no intercept: the rows lie in the box [−1, 1]² (a = 1), the
    corner norm is √2 = data_norm, and box noise is chosen ((p + 1)‖k‖ = 3 < 2√3). Rows at
    the corner (1, 1) with label 0, a canary of label 1 beyond it (clipped to the corner):
    the decision at the corner sees the canary's gradient, which has box norm 1. The broken
    variant takes the half-widths from the range ((1 − 0.5)/2), a quarter of the correct box.
    """
    estimator = LogisticRegression(
        epsilon=1.0, delta=delta, bounds=(0.5, 1.0), C=1.0, fit_intercept=False, classes=[0, 1]
    )
    corner = np.ones((1, 2))
    neighbours = canary_neighbours(np.ones((100, 2)), np.zeros(100, dtype=int), canary_X=4.0 * corner, canary_y=1)
    fitted = LogisticRegression(**{**estimator.get_params(), "random_state": 0}).fit(**neighbours[0])
    assert fitted.data_norm_ == pytest.approx(math.sqrt(2.0))
    projection = project_output("decision_function", corner)
    sampler = estimator_sampler(estimator, projection)
    assert audit(sampler, neighbours, 1.0, n_samples=N_SAMPLES_CORRECT, random_state=0).passed
    monkeypatch.setattr(classifier_module, "box_half_widths", _range_half_widths)
    result = audit(sampler, neighbours, 1.0, n_samples=N_SAMPLES, random_state=0)
    assert not result.passed, str(result)


def _regression_neighbours(canary_y, base=(1.0, 1.0), n=100):
    """Rows at (x, y) = ``base`` and a canary at x = 4 (clipped to the bound 1); no intercept.

    With d = 1 and no intercept the releases are A = Σx² and B = Σxy, the slope is B/A,
    and a canary at x = 1 moves A by its whole sensitivity 1 (and B by its y).
    """
    return canary_neighbours(np.full((n, 1), base[0]), np.full(n, base[1]), canary_X=[4.0], canary_y=canary_y)


def _halve_least_squares_noise(monkeypatch):
    exact = least_squares_module.least_squares_sensitivities
    monkeypatch.setattr(
        least_squares_module, "least_squares_sensitivities", lambda *a: tuple(0.5 * s for s in exact(*a))
    )


@pytest.mark.slow
def test_least_squares_laplace_audit(monkeypatch):
    """Check the ε_A Laplace release of Σx² (a canary with y = 0 moves nothing else); half the noise is rejected.

    The declared cost of a Laplace release does not depend on the sensitivity, so the
    broken variant declares the same cost with half the noise.
    """
    estimator = LinearRegression(epsilon=1.0, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), fit_intercept=False)
    # Base rows (0.1, 1): A = 100, B = 1000, slope 10, which moves by −B/A² = −0.1 per
    # unit of A but only 1/A = 0.01 per unit of B: the slope shows the A release alone.
    neighbours = _regression_neighbours(canary_y=0.0, base=(0.1, 1.0), n=10_000)
    fitted = LinearRegression(**{**estimator.get_params(), "random_state": 0}).fit(**neighbours[0])
    release_a = fitted.privacy_spent_.flatten()[0]
    epsilon_a = release_a.sensitivity / release_a.scale  # DiscreteLaplaceEvent of the scalar Σx²
    sampler = estimator_sampler(estimator, project_attribute("coef_", 0))
    assert audit(sampler, neighbours, epsilon_a, n_samples=N_SAMPLES_CORRECT, random_state=0).passed
    _halve_least_squares_noise(monkeypatch)
    result = audit(sampler, neighbours, epsilon_a, n_samples=N_SAMPLES, random_state=0)
    assert not result.passed, str(result)


@pytest.mark.slow
def test_least_squares_gaussian_audit(monkeypatch):
    """Check the Gaussian release of (Σx², Σxy) against the Gaussian profile of its noise; half the noise is rejected.

    The canary (x, y) = (1, −1) moves (A, B) by (1, −1), the whole L2 sensitivity, along
    the direction the slope ≈ B/A sees. The claim is the Gaussian noise actually added
    (std σ for L2 sensitivity Δ); the accountant is charged its zCDP conversion.
    """
    estimator = LinearRegression(
        epsilon=4.0, delta=1e-5, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), fit_intercept=False
    )
    neighbours = _regression_neighbours(canary_y=-4.0)
    _, _, l2_a, l2_b = least_squares_module.least_squares_sensitivities(1, None, False)
    weight = (l2_a / l2_b) ** (2.0 / 3.0)
    sensitivity = math.hypot(l2_a, weight * l2_b)
    sigma = Gaussian(epsilon=4.0, delta=1e-5, sensitivity=sensitivity).sigma((2,))
    claim = GaussianEvent(sigma / sensitivity)
    sampler = estimator_sampler(estimator, project_attribute("coef_", 0))
    assert audit(sampler, neighbours, event=claim, n_samples=N_SAMPLES_CORRECT, random_state=0).passed
    _halve_least_squares_noise(monkeypatch)
    result = audit(sampler, neighbours, event=claim, n_samples=N_SAMPLES, random_state=0)
    assert not result.passed, str(result)


# ----------------------------------------------------------------- several targets

N_TARGETS = 8


def _multi_target_neighbours(n=100, n_targets=N_TARGETS):
    """Rows at (x, y) = (1, 0) for every target, and a canary at x = 4, every target at −4 (clipped to −1).

    No intercept, d = 1: A = Σx², B_i = Σx·t_i. The canary moves A by 1 and every B_i by
    −1 (the whole L2 sensitivity sqrt(1 + m) of [A, B] when the targets are ignored in it
    counts only sqrt(2)); with B ≈ 0 the slopes see the B releases alone.
    """
    return canary_neighbours(
        np.ones((n, 1)), np.zeros((n, n_targets)), canary_X=[4.0], canary_y=np.full(n_targets, -4.0)
    )


class _SumOfSlopes:
    """Projection: the sum of the slopes of all targets (the direction every target's B moves)."""

    def __call__(self, fitted):
        return np.array([float(np.sum(fitted.coef_))])


def test_multi_target_sensitivity_counts_every_target():
    """Check that B = Σ ũ tᵀ with m targets has m times the L1 and sqrt(m) times the L2 sensitivity
    of one target, and that these are attained (by a corner row with every target at its bound)."""
    for d, r, intercept in [(1, None, False), (3, None, True), (4, 1.5, True)]:
        l1_a, l1_b, l2_a, l2_b = least_squares_module.least_squares_sensitivities(d, r, intercept)
        many = least_squares_module.least_squares_sensitivities(d, r, intercept, 5)
        assert many[0] == l1_a and many[2] == l2_a  # A does not see the targets
        assert many[1] == pytest.approx(5 * l1_b, rel=1e-12)
        assert many[3] == pytest.approx(math.sqrt(5) * l2_b, rel=1e-12)
    u = np.array([1.0, -1.0, 1.0, 1.0])  # a corner of the box (d = 3 with intercept)
    t = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    _, l1_b, _, l2_b = least_squares_module.least_squares_sensitivities(3, None, True, 5)
    assert np.abs(np.outer(u, t)).sum() == pytest.approx(l1_b, rel=1e-9)
    assert np.linalg.norm(np.outer(u, t)) == pytest.approx(l2_b, rel=1e-9)


@pytest.mark.slow
def test_multi_target_laplace_audit_against_declared_cost():
    """Check a fit with 8 targets against the cost it declares, on neighbours that move every target."""
    estimator = LinearRegression(epsilon=1.0, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), fit_intercept=False)
    result = audit_estimator(
        estimator, _multi_target_neighbours(), _SumOfSlopes(), n_samples=N_SAMPLES_CORRECT, random_state=0
    )
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_multi_target_gaussian_audit_rejects_per_target_sensitivity(monkeypatch):
    """Check the Gaussian release of [A, w·B] with 8 targets against the profile of its noise;
    noise calibrated as if B had one target's sensitivity is rejected.

    The canary moves A by 1 and each of the 8 B_i by −1; the sum of the slopes sees
    Σ B_i / A, whose privacy loss is sqrt(8)/sqrt(2) = 2 times the claim's when the
    targets are left out of the sensitivity (and below the claim when they are in).
    """
    estimator = LinearRegression(
        epsilon=4.0, delta=1e-5, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), fit_intercept=False
    )
    neighbours = _multi_target_neighbours()
    _, _, l2_a, l2_b = least_squares_module.least_squares_sensitivities(1, None, False, N_TARGETS)
    weight = (l2_a / l2_b) ** (2.0 / 3.0)
    sensitivity = math.hypot(l2_a, weight * l2_b)
    sigma = Gaussian(epsilon=4.0, delta=1e-5, sensitivity=sensitivity).sigma((1 + N_TARGETS,))
    claim = GaussianEvent(sigma / sensitivity)
    sampler = estimator_sampler(estimator, _SumOfSlopes())
    assert audit(sampler, neighbours, event=claim, n_samples=N_SAMPLES_CORRECT, random_state=0).passed
    exact = least_squares_module.least_squares_sensitivities
    monkeypatch.setattr(least_squares_module, "least_squares_sensitivities", lambda d, r, i, m=1: exact(d, r, i))
    result = audit(sampler, neighbours, event=claim, n_samples=N_SAMPLES, random_state=0)
    assert not result.passed, str(result)
