# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The joint bound of pure-ε objective perturbation for the logistic loss (``_erm``'s
module docstring): one row's gradient factor and determinant factor are evaluated at the
same margin, and ℓ″ = s(1 − s) with s = |ℓ′|, so the noise gets β with
max_s β s + log(1 + s(1 − s)/μ) <= ε₁ instead of β = ε₁ − log(1 + 1/(4μ))."""

import math

import numpy as np
import pytest
from scipy.special import expit

from dpsk.linear_model import LogisticRegression
from dpsk.linear_model._erm import _joint_loss_bound, joint_objective_budget, plan_perturbation
from dpsk.linear_model._solver import HuberizedHinge, LogisticLoss
from dpsk.svm import LinearSVC


def _plan(epsilon, lam, joint, delta=0.0, box=None, n_params=1):
    return plan_perturbation(
        method="objective",
        epsilon=epsilon,
        delta=delta,
        lam=lam,
        curvature=0.25,
        n_params=n_params,
        tol=1e-6,
        box=box,
        curvature_tracks_slope=joint,
    )


@pytest.mark.parametrize("beta", [0.0, 0.01, 0.3, 0.99, 1.7, 10.0])
@pytest.mark.parametrize("a", [1e-4, 0.05, 1.0, 2.7, 40.0])
def test_joint_loss_bound_is_a_tight_upper_bound(beta, a):
    """The bound is above the maximum on a fine grid of s, and within 1e-9 of it."""
    s = np.linspace(0.0, 1.0, 200_001)
    brute = float(np.max(beta * s + np.log1p(a * s * (1.0 - s))))
    bound = _joint_loss_bound(beta, a)
    assert brute <= bound <= brute + 1e-9


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0, 30.0])
@pytest.mark.parametrize("lam", [1e-4, 0.39, 0.92, 20.0])
def test_joint_budget_is_feasible_and_beats_the_separate_bounds(epsilon, lam):
    """At the μ of a plan (Λ, raised by the Δ rule when needed): β passes the bound at ε₁,
    a slightly larger β does not, and β >= ε₁ − log(1 + c/μ)."""
    plan = _plan(epsilon, lam, joint=True)
    eps_objective, mu = plan.events[0].epsilon, plan.mu
    beta = joint_objective_budget(eps_objective, mu, 0.25)
    assert 1.0 / plan.objective_scale == pytest.approx(beta, rel=1e-12)
    assert _joint_loss_bound(beta, 1.0 / mu) <= eps_objective
    assert _joint_loss_bound(beta * (1 + 1e-9) + 1e-12, 1.0 / mu) > eps_objective
    assert beta >= eps_objective - math.log1p(0.25 / mu) - 1e-12


def test_only_the_logistic_loss_declares_the_joint_bound():
    """ℓ″ = s(1 − s) holds for the logistic loss (checked pointwise), not for the Huberized
    hinge, whose plan keeps the separate bounds."""
    t = np.linspace(-30.0, 30.0, 10_001)
    slope, curvature = LogisticLoss().derivatives(t)
    np.testing.assert_allclose(-slope, expit(-t), rtol=1e-12)  # s = σ(−t), 1 − s = σ(t)
    np.testing.assert_allclose(curvature, expit(-t) * expit(t), rtol=1e-12)
    assert LogisticLoss.curvature_tracks_slope is True
    assert not getattr(HuberizedHinge(), "curvature_tracks_slope", False)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_logistic_regression_draws_the_joint_noise(delta):
    """LogisticRegression's plan (gamma-norm, and box-norm also with δ > 0) uses the joint
    β; LinearSVC's does not; the events (the claim) are unchanged."""
    X = np.array([[0.1, -0.2], [0.3, 0.4]])
    kwargs = dict(epsilon=1.0, delta=delta, bounds=(-0.5, 0.5), classes=[0, 1])
    model = LogisticRegression(**kwargs).fit(X, [0, 1])
    scale, lam, plan = model._perturbation(
        model.data_norm_, 1.0, np.full(2, -0.5), np.full(2, 0.5), 1.0, delta, 3, LogisticLoss()
    )
    assert plan.objective_noise == "box"
    assert 1.0 / plan.objective_scale == pytest.approx(joint_objective_budget(plan.events[0].epsilon, plan.mu, 0.25))
    separate = _plan(1.0, lam, joint=False, n_params=3)
    assert plan.objective_scale < 0.9 * separate.objective_scale
    assert (plan.mu, plan.events) == (separate.mu, separate.events)
    svc = LinearSVC(**kwargs)
    loss = svc._make_loss()
    _, _, svc_plan = svc._perturbation(1.0, 1.0, np.full(2, -0.5), np.full(2, 0.5), 1.0, delta, 3, loss)
    eps_det = math.log1p(loss.curvature / svc_plan.mu)
    assert 1.0 / svc_plan.objective_scale == pytest.approx(svc_plan.events[0].epsilon - eps_det, rel=1e-9)
