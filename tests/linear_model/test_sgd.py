# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP-SGD linear models: gradients, accounting, the fit protocol and black-box audits."""

import math

import numpy as np
import pytest

import dpsk.linear_model._sgd as sgd
import dpsk.utils._dpsgd as engine
from dpsk.accounting import (
    BudgetAccountant,
    GaussianEvent,
    PoissonSampledEvent,
    SelfComposedEvent,
    calibrate_noise_multiplier,
    get_epsilon,
)
from dpsk.audit import audit_estimator, canary_neighbours, project_attribute
from dpsk.exceptions import BudgetExceededError
from dpsk.linear_model import SGDClassifier, SGDRegressor

# ------------------------------------------------------------------ gradients


@pytest.mark.parametrize("loss", ["log_loss", "hinge", "modified_huber", "squared_error", "huber"])
def test_loss_gradients_match_finite_differences(loss):
    """Check each loss's dℓ/dz against a central finite difference of the loss itself."""
    values = {
        "log_loss": lambda z, t: np.logaddexp(0.0, -t * z),
        "hinge": lambda z, t: np.maximum(0.0, 1.0 - t * z),
        "modified_huber": lambda z, t: np.where(t * z >= -1.0, np.maximum(0.0, 1.0 - t * z) ** 2, -4.0 * t * z),
        "squared_error": lambda z, t: 0.5 * (z - t) ** 2,
        "huber": lambda z, t: np.where(np.abs(z - t) <= 0.1, 0.5 * (z - t) ** 2, 0.1 * np.abs(z - t) - 0.005),
    }[loss]
    z = np.array([[-2.3], [-0.45], [0.37], [0.8], [1.7]])
    t = np.array([[1.0], [-1.0], [1.0], [-1.0], [1.0]])
    h = 1e-6
    numeric = (values(z + h, t) - values(z - h, t)) / (2 * h)
    np.testing.assert_allclose(sgd.LOSSES[loss](z, t, 0.1), numeric, atol=1e-5)


def test_clipped_sum_equals_explicit_per_example_clipping():
    """Check the ghost-norm clipped sum against per-example gradients formed and clipped one by one."""
    rng = np.random.default_rng(0)
    rows = np.hstack([rng.normal(size=(30, 4)) * rng.uniform(0.1, 5, (30, 1)), np.ones((30, 1))])
    targets = np.where(rng.random((30, 3)) < 0.5, 1.0, -1.0)
    coef = rng.normal(size=(3, 5))
    weights = rng.uniform(0, 1, 30)
    total, factor = sgd.clipped_gradient_sum(rows, targets, coef, sgd.LOSSES["log_loss"], 0.7, weights)
    expected = np.zeros_like(coef)
    for i in range(30):
        g = np.outer(sgd.LOSSES["log_loss"](rows[i] @ coef.T, targets[i], None), rows[i])
        norm = np.linalg.norm(g)
        clipped = g * min(1.0, 0.7 / norm)
        assert np.linalg.norm(clipped * factor[i] / weights[i] / min(1.0, 0.7 / norm)) <= 0.7 + 1e-12
        expected += weights[i] * clipped
    np.testing.assert_allclose(total, expected, rtol=1e-8)  # the 2^-30 clip margin
    # Every clipped per-example gradient is within the bound (never above C).
    per_norm = (
        np.abs(factor / weights)
        * np.linalg.norm(sgd.LOSSES["log_loss"](rows @ coef.T, targets, None), axis=1)
        * np.linalg.norm(rows, axis=1)
    )
    assert np.all(per_norm <= 0.7)


# ------------------------------------------------------------------ accounting


@pytest.mark.slow
def test_calibration_meets_the_budget_and_is_tight():
    """Check that the calibrated σ gives ε <= target by the accountant, and 2% less σ does not."""
    q, steps = 0.02, 500
    sigma = engine.noise_multiplier(2.0, 1e-5, q, steps)
    event = SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(sigma)), steps)
    assert get_epsilon(event, 1e-5) <= 2.0
    smaller = SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(sigma * 0.98)), steps)
    assert get_epsilon(smaller, 1e-5) > 2.0


def test_calibration_full_batch_is_exact_gaussian_composition():
    """Check DP-GD's σ: T Gaussian steps compose into one Gaussian of σ/sqrt(T) (exact)."""
    from dpsk.accounting import gaussian_sigma

    sigma = engine.noise_multiplier(1.0, 1e-5, 1.0, 16)
    assert sigma / 4.0 == pytest.approx(gaussian_sigma(1.0, 1e-5), rel=2e-3)
    assert sigma / 4.0 >= gaussian_sigma(1.0, 1e-5) * (1 - 1e-12)


@pytest.mark.slow
def test_calibration_golden_against_dp_accounting():
    """Check σ within 1% of dp-accounting's PLD calibration (q = 0.01, 1000 steps, ε = 1)."""
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event

    def theirs(s):
        return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(s)), 1000)

    reference = dpa.calibrate_dp_mechanism(dpa.pld.PLDAccountant, theirs, 1.0, 1e-5)
    ours = engine.noise_multiplier(1.0, 1e-5, 0.01, 1000)
    assert ours == pytest.approx(reference, rel=0.01)


def test_steps_event_is_the_accountants_golden_dpsgd_event():
    """Check the engine builds exactly the event whose ε the accountant's golden tests pin."""
    golden = SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.1)), 10_000)
    assert engine.steps_event(0.01, 10_000, 1.1) == golden


def test_golden_dpsgd_epsilon_pld():
    """Check issue 21's golden value: q = 0.01, σ = 1.1, 10⁴ steps give ε ≈ 5.19 at δ = 1e-5 by PLD.

    The same figure as tests/accounting/test_composition.py::test_golden_dpsgd_pld, here for
    the event the engine builds (and by the method its fits use when dp-accounting is there);
    not marked slow: it takes under a second.
    """
    pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    event = engine.steps_event(0.01, 10_000, 1.1)
    assert get_epsilon(event, 1e-5, method="pld") == pytest.approx(5.1926, abs=2e-3)
    assert get_epsilon(event, 1e-5) == pytest.approx(5.1926, abs=2e-3)


@pytest.mark.slow
def test_calibrate_noise_multiplier_rdp_matches_bisection():
    """Check the root finder against a plain bisection on the RDP accountant."""

    def make(s):
        return SelfComposedEvent(PoissonSampledEvent(0.05, GaussianEvent(s)), 200)

    sigma = calibrate_noise_multiplier(make, 1.5, 1e-6, method="rdp")
    lo, hi = 0.1, 10.0
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if get_epsilon(make(mid), 1e-6, method="rdp") <= 1.5 else (mid, hi)
    assert hi <= sigma <= hi * 1.002


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    return X, y


@pytest.mark.slow
def test_one_spend_per_fit_and_cost_within_budget():
    """Check one ledger entry per fit, at most (ε, δ) by the accountant, with and without n_samples."""
    X, y = _data()
    for n_samples in (None, 200):
        acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
        clf = SGDClassifier(
            epsilon=1.0, n_samples=n_samples, classes=[0, 1], batch_size=100, max_iter=2, accountant=acc
        )
        clf.fit(X, y)
        assert len(acc.spent_budget) == 1
        assert get_epsilon(clf.privacy_spent_, 1e-5) <= 1.0
        assert acc.spent_budget == [clf.privacy_spent_]


def test_cost_is_data_independent_with_public_n_samples():
    """Check the declared cost with n_samples does not depend on the data (the audit's premise)."""
    X, y = _data()
    a = SGDClassifier(n_samples=150, classes=[0, 1], batch_size=30, random_state=0).fit(X, y)
    b = SGDClassifier(n_samples=150, classes=[0, 1], batch_size=30, random_state=0).fit(X[:57], y[:57])
    assert a.privacy_spent_ == b.privacy_spent_
    assert a.privacy_spent_ == SelfComposedEvent(PoissonSampledEvent(0.2, GaussianEvent(a.noise_multiplier_)), 75)


@pytest.mark.parametrize(
    "params, data",
    [
        (dict(clip_norm=0.0), None),
        (dict(clip_norm=-1.0), None),
        (dict(delta=0.0), None),
        (dict(batch_size=0), None),
        ({}, "nan"),
        ({}, "one class"),
    ],
)
def test_bad_input_refused_before_any_spend(params, data):
    """Check bad parameters and data raise a ValueError with nothing recorded."""
    X, y = _data()
    classes = [0, 1]
    if data == "nan":
        X = X.copy()
        X[3, 1] = np.nan
    elif data == "one class":
        y, classes = np.zeros_like(y), None
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError):
        SGDClassifier(classes=classes, accountant=acc, **params).fit(X, y)
    assert len(acc.spent_budget) == 0


def test_budget_exceeded_before_data_is_read():
    """Check a fit beyond the budget raises BudgetExceededError with nothing recorded."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=0.5, delta=1e-3)
    with pytest.raises(BudgetExceededError):
        SGDClassifier(epsilon=1.0, classes=[0, 1], accountant=acc).fit(X, y)
    assert len(acc.spent_budget) == 0


@pytest.mark.parametrize("n_samples", [200, None])
def test_infinite_epsilon_is_noise_free_and_an_infinite_spend(n_samples):
    """Check epsilon=inf: full-batch fits agree across seeds, one infinite spend; a finite budget refuses it."""
    X, y = _data()
    acc = BudgetAccountant()
    fits = [
        SGDRegressor(epsilon=math.inf, batch_size="full", n_samples=n_samples, random_state=seed, accountant=acc).fit(
            X, y.astype(float)
        )
        for seed in (0, 1)
    ]
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    assert len(acc.spent_budget) == 2 and math.isinf(acc.total().epsilon)
    finite = BudgetAccountant(epsilon=1e6, delta=0.5)
    with pytest.raises(BudgetExceededError):
        SGDRegressor(epsilon=math.inf, n_samples=n_samples, accountant=finite).fit(X, y.astype(float))
    assert len(finite.spent_budget) == 0


# ------------------------------------------------------------------ utility


def test_large_epsilon_reproduces_non_private_gradient_descent():
    """Check that with vanishing noise, full batch and no clipping in effect, the fit is plain GD (ε → ∞)."""
    X, y = _data()
    clf = SGDRegressor(
        noise_multiplier=1e-12, batch_size="full", n_samples=200, clip_norm=1e6, max_iter=300, eta0=0.1, alpha=0.0
    ).fit(X, X @ [1.0, 2.0, -1.0] + 0.5)
    np.testing.assert_allclose(clf.coef_, [1.0, 2.0, -1.0], atol=1e-3)
    assert clf.intercept_[0] == pytest.approx(0.5, abs=1e-3)


@pytest.mark.slow
def test_classifier_learns_and_multiclass_shapes():
    """Check accuracy at ε = 4 and the one-vs-rest output shapes."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4))
    y = np.argmax(X[:, :3], axis=1)
    clf = SGDClassifier(epsilon=4.0, n_samples=3000, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
    assert clf.score(X, y) > 0.8
    np.testing.assert_allclose(clf.predict_proba(X[:5]).sum(axis=1), 1.0)
    assert not hasattr(SGDClassifier(loss="hinge"), "predict_proba")


# ------------------------------------------------------------------ privacy audits

N_AUDIT = 6_000


def _audited(epsilon=1.0, **params):
    # Rows at x = 0 carry no gradient; the canary's log-loss gradient is clipped to C at
    # every step (a tiny η keeps its margin at ~0), so the coefficient sums its noisy,
    # clipped contributions: the worst case for the sampled Gaussian. The last iterate
    # (average=False) is that sum; the default average of the iterates is post-processing
    # of it and would only blur the broken variants the audit must reject.
    return SGDClassifier(
        epsilon=epsilon,
        n_samples=20,
        classes=[0, 1],
        fit_intercept=False,
        eta0=1e-3,
        alpha=0.0,
        max_iter=1,
        average=False,
        **params,
    )


def _canary(_estimator=None):
    return canary_neighbours(np.zeros((19, 1)), np.arange(19) % 2, canary_X=[100.0], canary_y=1)


def _audit(estimator):
    return audit_estimator(estimator, _canary(), project_attribute("coef_", (0, 0)), n_samples=N_AUDIT, random_state=0)


@pytest.mark.audit
@pytest.mark.parametrize("batch_size", [5, "full"])
def test_audit_accepts_dpsgd(batch_size):
    """Check the correct DP-SGD (Poisson, q = 0.25) and DP-GD pass the audit at the declared cost."""
    result = _audit(_audited(batch_size=batch_size))
    assert result.passed, str(result)


class _PartialFitted(SGDClassifier):
    """The release of one ``partial_fit`` call, as an estimator the audit can fit.

    The audit refits the same object once per seed: each fit drops the coefficients so
    that it is a first call (a continued call would compose all the previous ones).
    """

    def fit(self, X, y):
        self.__dict__.pop("coef_", None)
        return self.partial_fit(X, y)


@pytest.mark.audit
def test_audit_accepts_partial_fit():
    """Check one partial_fit call (one epoch, Poisson q = 0.25) passes the audit at its declared cost."""
    result = _audit(_PartialFitted(**_audited(batch_size=5).get_params()))
    assert result.passed, str(result)


@pytest.mark.audit
@pytest.mark.extended
def test_audit_rejects_missing_clipping(monkeypatch):
    """Check the audit's power: gradients not clipped (noise still calibrated to C) are rejected."""
    monkeypatch.setattr(engine, "clip_margin", lambda max_batch, width: -1e6)
    result = _audit(_audited(batch_size="full"))
    assert not result.passed, str(result)


@pytest.mark.audit
@pytest.mark.extended
def test_audit_rejects_half_noise(monkeypatch):
    """Check the audit's power: noise × 0.5 on every step is rejected."""
    real = engine.add_gaussian
    monkeypatch.setattr(engine, "add_gaussian", lambda x, sigma, rng: real(x, 0.5 * sigma, rng))
    result = _audit(_audited(epsilon=4.0, batch_size="full"))
    assert not result.passed, str(result)


@pytest.mark.audit
@pytest.mark.extended
def test_audit_rejects_sampling_without_amplification(monkeypatch):
    """Check the audit's power: every row in every step while q = 0.25 is declared is rejected."""
    monkeypatch.setattr(engine, "poisson_batch", lambda n, q, rng: slice(None))
    result = _audit(_audited(batch_size=5))
    assert not result.passed, str(result)


def test_overflowing_row_contributes_nothing():
    """Check that a row whose margin overflows is dropped from the clipped sum instead of making it NaN."""
    rows = np.array([[1.0, 2.0, 1.0], [-1.0, 0.5, 1.0], [1e308, 1e308, 1.0]])
    targets = np.array([[1.0], [2.0], [0.0]])
    coef = np.array([[3.0, 3.0, 0.0]])
    with np.errstate(all="ignore"):
        total, factor = sgd.clipped_gradient_sum(rows, targets, coef, sgd.LOSSES["squared_error"], 1.0, None)
    expected, _ = sgd.clipped_gradient_sum(rows[:2], targets[:2], coef, sgd.LOSSES["squared_error"], 1.0, None)
    np.testing.assert_array_equal(total, expected)
    assert factor[2] == 0.0


# ------------------------------------------------------------------ partial_fit


def test_partial_fit_one_spend_per_call_of_one_epoch():
    """Check each call is one spend: the event of one epoch planned from the public n_samples."""
    X, y = _data(200)
    acc = BudgetAccountant()
    clf = SGDClassifier(epsilon=1.0, n_samples=200, batch_size=50, classes=[0, 1], accountant=acc, random_state=0)
    clf.partial_fit(X, y)
    clf.partial_fit(X, y)
    assert len(acc.spent_budget) == 2
    q, steps, _ = engine.plan_steps(50, 1, 200)
    expected = engine.steps_event(q, steps, engine.noise_multiplier(1.0, 1e-5, q, steps))
    assert all(event == expected for event in acc.spent_budget)
    assert clf.n_iter_ == 2 * steps


@pytest.mark.parametrize("Est, extra", [(SGDClassifier, {"classes": [0, 1]}), (SGDRegressor, {})])
def test_partial_fit_continues_from_the_coefficients(Est, extra):
    """Check a call starts where the previous one stopped: noise-free, two calls = fit with two epochs."""
    X, y = _data(100)
    y = y if Est is SGDClassifier else X @ [1.0, -1.0, 0.5]
    params = dict(epsilon=math.inf, n_samples=100, batch_size="full", random_state=0, **extra)
    online = Est(**params)
    online.partial_fit(X, y).partial_fit(X, y)
    batch = Est(max_iter=2, **params).fit(X, y)
    once = Est(**params).partial_fit(X, y)
    np.testing.assert_allclose(online.coef_, batch.coef_, rtol=1e-12)
    np.testing.assert_allclose(online.intercept_, batch.intercept_, rtol=1e-12)
    assert not np.allclose(online.coef_, once.coef_)


@pytest.mark.parametrize("Est, extra", [(SGDClassifier, {"classes": [0, 1]}), (SGDRegressor, {})])
def test_average_is_the_mean_of_the_chosen_iterates(Est, extra):
    """Check average="tail" (default) is the mean of the second half's iterates, True of all, False the last one.

    Noise-free DP-GD is deterministic, so the fit stopped after k steps (average=False) is
    the k-th iterate of a longer one.
    """
    X, y = _data(100)
    y = y if Est is SGDClassifier else X @ [1.0, -1.0, 0.5]
    params = dict(epsilon=math.inf, n_samples=100, batch_size="full", random_state=0, **extra)
    iterates = [
        np.append(np.ravel(m.coef_), m.intercept_)
        for m in (Est(max_iter=k, average=False, **params).fit(X, y) for k in range(1, 7))
    ]
    for average, mean in (("tail", np.mean(iterates[3:], axis=0)), (True, np.mean(iterates, axis=0))):
        fitted = Est(max_iter=6, average=average, **params).fit(X, y)
        np.testing.assert_allclose(np.append(np.ravel(fitted.coef_), fitted.intercept_), mean, rtol=1e-10)
    assert Est(**params).average == "tail"
    assert not np.allclose(iterates[-1], np.mean(iterates[3:], axis=0))
