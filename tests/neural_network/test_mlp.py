# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP-SGD MLPs: per-example gradients, ghost-norm clipping, the fit protocol and black-box audits."""

import numpy as np
import pytest

import dpsk.neural_network._multilayer_perceptron as mlp
import dpsk.utils._dpsgd as engine
from dpsk.accounting import (
    BudgetAccountant,
    ComposedEvent,
    GaussianEvent,
    PoissonSampledEvent,
    SelfComposedEvent,
    record_releases,
)
from dpsk.audit import audit_estimator, canary_neighbours
from dpsk.neural_network import MLPClassifier, MLPRegressor
from dpsk.utils._testing.weighted import with_weights

# ------------------------------------------------------------------ gradients


def _loss(out_activation, output, target):
    if out_activation == "identity":
        return 0.5 * np.sum((output - target) ** 2)
    if out_activation == "logistic":
        return -np.sum(target * np.log(output) + (1 - target) * np.log(1 - output))
    return -np.sum(target * np.log(output))


def _network(rng, units):
    coefs = [rng.normal(size=(a, b)) * 0.7 for a, b in zip(units[:-1], units[1:])]
    intercepts = [rng.normal(size=b) * 0.3 for b in units[1:]]
    return coefs, intercepts


@pytest.mark.parametrize("activation", ["relu", "tanh", "logistic", "identity"])
@pytest.mark.parametrize("out_activation, n_out", [("logistic", 1), ("softmax", 3), ("identity", 2)])
def test_per_example_gradients_match_finite_differences(activation, out_activation, n_out):
    """Check every per-example gradient entry against a central finite difference of that example's loss."""
    rng = np.random.default_rng(0)
    units = [3, 4, 5, n_out]
    coefs, intercepts = _network(rng, units)
    X = rng.normal(size=(4, 3))
    if out_activation == "identity":
        Y = rng.normal(size=(4, n_out))
    else:
        Y = np.eye(max(n_out, 2))[rng.integers(0, max(n_out, 2), 4)][:, -n_out:]
    coef_grads, intercept_grads = mlp.per_example_gradients(coefs, intercepts, X, Y, activation, out_activation)
    h = 1e-6
    for params, grads in ((coefs, coef_grads), (intercepts, intercept_grads)):
        for layer, (P, G) in enumerate(zip(params, grads)):
            for index in np.ndindex(P.shape):
                P[index] += h
                up = [mlp.forward(coefs, intercepts, X[i : i + 1], activation, out_activation)[-1] for i in range(4)]
                P[index] -= 2 * h
                down = [mlp.forward(coefs, intercepts, X[i : i + 1], activation, out_activation)[-1] for i in range(4)]
                P[index] += h
                for i in range(4):
                    numeric = (_loss(out_activation, up[i], Y[i]) - _loss(out_activation, down[i], Y[i])) / (2 * h)
                    assert G[(i, *index)] == pytest.approx(numeric, abs=1e-5), (layer, index, i)


def test_clipped_sums_equal_explicit_per_example_clipping():
    """Check the ghost-norm clipped sums against per-example gradients formed, clipped jointly and summed."""
    rng = np.random.default_rng(1)
    units = [4, 6, 5, 3]
    coefs, intercepts = _network(rng, units)
    X = rng.normal(size=(25, 4)) * rng.uniform(0.1, 5, (25, 1))
    Y = np.eye(3)[rng.integers(0, 3, 25)]
    weights = rng.uniform(0, 1, 25)
    T = 0.7 * (1 - 2.0**-30)  # the target with the engine's smallest margin
    coef_sums, intercept_sums, factor = mlp.clipped_gradient_sums(
        coefs, intercepts, X, Y, weights, T, "tanh", "softmax"
    )
    coef_grads, intercept_grads = mlp.per_example_gradients(coefs, intercepts, X, Y, "tanh", "softmax")
    flat = np.hstack([g.reshape(25, -1) for g in (*coef_grads, *intercept_grads)])
    norms = np.linalg.norm(flat, axis=1)
    scale = weights * np.minimum(1.0, T / norms)
    assert np.any(norms > 0.7) and np.any(norms < 0.7)  # both regimes present
    for got, per_example in zip((*coef_sums, *intercept_sums), (*coef_grads, *intercept_grads)):
        expected = np.tensordot(scale, per_example, axes=1)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(factor, scale, rtol=1e-12)
    assert np.all(factor / weights * norms <= 0.7)


def test_non_finite_row_contributes_nothing():
    """Check that a row whose gradient overflows is dropped, not turned into NaN in the released sum."""
    rng = np.random.default_rng(2)
    coefs, intercepts = _network(rng, [3, 8, 1])
    X = rng.normal(size=(6, 3))
    Y = rng.normal(size=(6, 1))
    huge = np.vstack([X, np.full((1, 3), 1e307)])
    with np.errstate(all="ignore"):
        got = mlp.clipped_gradient_sums(coefs, intercepts, huge, np.vstack([Y, [[0.0]]]), None, 1.0, "relu", "identity")
    expected = mlp.clipped_gradient_sums(coefs, intercepts, X, Y, None, 1.0, "relu", "identity")
    for a, b in zip(got[0] + got[1], expected[0] + expected[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert got[2][-1] == 0.0


# ------------------------------------------------------------------ fit protocol


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    return X, y


def test_one_spend_per_fit_and_the_releases_are_the_declared_steps():
    """Check one ledger entry per fit, equal to the T recorded step releases (n_samples given)."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = MLPClassifier((4,), noise_multiplier=1.0, n_samples=200, classes=[0, 1], batch_size=50, max_iter=2)
    with record_releases() as releases:
        clf.set_params(accountant=acc).fit(X, y)
    step = PoissonSampledEvent(0.25, GaussianEvent(1.0))
    assert acc.spent_budget == [clf.privacy_spent_] == [SelfComposedEvent(step, 8)]
    assert releases == [step] * 8


def test_one_spend_with_the_private_count():
    """Check that without n_samples the count and the steps are one spend, with n_samples_ the noisy count."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    reg = MLPRegressor((4,), noise_multiplier=1.0, batch_size="full", max_iter=3, accountant=acc).fit(X, X[:, 0])
    assert len(acc.spent_budget) == 1 and acc.spent_budget[0] == reg.privacy_spent_
    assert reg.n_steps_ == 3 and isinstance(reg.privacy_spent_, ComposedEvent)


@pytest.mark.parametrize(
    "params, data",
    [
        (dict(clip_norm=0.0), None),
        (dict(delta=0.0), None),
        (dict(batch_size=0), None),
        (dict(hidden_layer_sizes=(4, 0)), None),
        (dict(hidden_layer_sizes=(2.5,)), None),
        (dict(activation="softplus"), None),
        (dict(solver="lbfgs"), None),
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
        MLPClassifier(classes=classes, accountant=acc, noise_multiplier=1.0, **params).fit(X, y)
    assert len(acc.spent_budget) == 0


def test_fitted_attributes_as_scikit_learn():
    """Check shapes and names of the fitted attributes (binary logistic, multiclass softmax, regressor)."""
    X, y = _data()
    clf = MLPClassifier((5, 4), noise_multiplier=1.0, n_samples=200, classes=[0, 1], max_iter=1).fit(X, y)
    assert [W.shape for W in clf.coefs_] == [(3, 5), (5, 4), (4, 1)]
    assert clf.n_layers_ == 4 and clf.n_outputs_ == 1 and clf.out_activation_ == "logistic"
    assert not hasattr(clf, "loss_curve_")
    clf3 = MLPClassifier((5,), noise_multiplier=1.0, n_samples=200, classes=[0, 1, 2], max_iter=1).fit(X, y)
    assert clf3.out_activation_ == "softmax" and clf3.coefs_[-1].shape == (5, 3)
    np.testing.assert_allclose(clf3.predict_proba(X[:4]).sum(axis=1), 1.0)
    reg = MLPRegressor((5,), noise_multiplier=1.0, n_samples=200, max_iter=1).fit(X, np.c_[X[:, 0], X[:, 1]])
    assert reg.predict(X).shape == (200, 2) and reg.out_activation_ == "identity"
    X32 = X.astype(np.float32)
    assert MLPRegressor((5,), noise_multiplier=1.0, n_samples=200, max_iter=1).fit(X32, y).coefs_[0].dtype == np.float32


def test_large_epsilon_learns_with_both_solvers():
    """Check that with vanishing noise both solvers fit an easy problem (ε → ∞ is plain minibatch training)."""
    X, y = _data(600)
    for solver, lr in (("adam", 0.01), ("sgd", 0.1)):
        clf = MLPClassifier(
            (8,),
            solver=solver,
            learning_rate_init=lr,
            noise_multiplier=1e-9,
            clip_norm=100.0,
            n_samples=600,
            classes=[0, 1],
            batch_size=32,
            max_iter=20,
            random_state=0,
        ).fit(X, y)
        assert clf.score(X, y) > 0.95, solver


# ------------------------------------------------------------------ privacy audits

N_AUDIT = 6_000


def _fixed_init(layer_units, activation, rng):
    # One hidden unit, W_1 = 0, W_2 = 1, biases 0: rows at x = 0 then have no gradient on
    # W_1, and the canary's gradient (clipped to C every step, η tiny) points along W_1.
    # Privacy must hold for any data-independent initialisation, so fixing it is fair.
    return [np.zeros((1, 1)), np.ones((1, 1))], [np.zeros(1), np.zeros(1)]


def _first_weight(fitted):
    return np.array([fitted.coefs_[0][0, 0]])


def _audited(epsilon=1.0, **params):
    return MLPClassifier(
        (1,),
        activation="identity",
        solver="sgd",
        momentum=0.0,
        learning_rate_init=1e-3,
        alpha=0.0,
        epsilon=epsilon,
        n_samples=20,
        classes=[0, 1],
        max_iter=1,
        **params,
    )


def _audit(estimator, weighted=False):
    neighbours = canary_neighbours(np.zeros((19, 1)), np.arange(19) % 2, canary_X=[100.0], canary_y=1)
    if weighted:  # weight 1 per row, a bootstrap count for the canary (issue 16)
        neighbours = with_weights(lambda estimator: neighbours)()
    return audit_estimator(estimator, neighbours, _first_weight, n_samples=N_AUDIT, random_state=0)


@pytest.mark.audit
@pytest.mark.parametrize("batch_size", [5, "full"])
def test_audit_accepts_dpsgd_mlp(monkeypatch, batch_size):
    """Check the correct MLP DP-SGD (Poisson, q = 0.25) and DP-GD pass the audit at the declared cost."""
    monkeypatch.setattr(mlp, "_init_parameters", _fixed_init)
    result = _audit(_audited(batch_size=batch_size))
    assert result.passed, str(result)


@pytest.mark.audit
def test_audit_accepts_weighted_dpsgd_mlp(monkeypatch):
    """Check the weighted path: a canary of weight 4 counts once (its weight clipped to 1)."""
    monkeypatch.setattr(mlp, "_init_parameters", _fixed_init)
    result = _audit(_audited(batch_size=5), weighted=True)
    assert result.passed, str(result)


class _PartialFitted(MLPClassifier):
    """The release of one ``partial_fit`` call, as an estimator the audit can fit.

    The audit refits the same object once per seed: each fit drops the fitted weights so
    that it is a first call (a continued call would compose all the previous ones).
    """

    def fit(self, X, y):
        self.__dict__.pop("coefs_", None)
        return self.partial_fit(X, y)


@pytest.mark.audit
def test_audit_accepts_partial_fit(monkeypatch):
    """Check one partial_fit call (one epoch, Poisson q = 0.25) passes the audit at its declared cost."""
    monkeypatch.setattr(mlp, "_init_parameters", _fixed_init)
    params = _audited(batch_size=5).get_params()
    result = _audit(_PartialFitted(**params))
    assert result.passed, str(result)


@pytest.mark.audit
@pytest.mark.extended
def test_audit_rejects_partial_fit_without_amplification(monkeypatch):
    """Check the audit's power on partial_fit: every row in every step while q = 0.25 is declared is rejected."""
    monkeypatch.setattr(mlp, "_init_parameters", _fixed_init)
    monkeypatch.setattr(engine, "poisson_batch", lambda n, q, rng: slice(None))
    result = _audit(_PartialFitted(**_audited(batch_size=5).get_params()))
    assert not result.passed, str(result)


@pytest.mark.audit
@pytest.mark.extended
def test_audit_rejects_missing_clipping(monkeypatch):
    """Check the audit's power: per-example gradients not clipped (noise still calibrated to C) are rejected."""
    monkeypatch.setattr(mlp, "_init_parameters", _fixed_init)
    monkeypatch.setattr(engine, "clip_margin", lambda max_batch, width: -1e6)
    result = _audit(_audited(batch_size="full"))
    assert not result.passed, str(result)


@pytest.mark.audit
@pytest.mark.extended
def test_audit_rejects_half_noise(monkeypatch):
    """Check the audit's power: noise × 0.5 on every step is rejected."""
    monkeypatch.setattr(mlp, "_init_parameters", _fixed_init)
    real = engine.add_gaussian
    monkeypatch.setattr(engine, "add_gaussian", lambda x, sigma, rng: real(x, 0.5 * sigma, rng))
    result = _audit(_audited(epsilon=4.0, batch_size="full"))
    assert not result.passed, str(result)


def test_noise_decreases_with_epsilon_from_a_fixed_initialisation(monkeypatch):
    """Check what the common check cannot (random init): with the init fixed, the spread over seeds shrinks with ε."""
    monkeypatch.setattr(mlp, "_init_parameters", _fixed_init)
    X, y = _data(60)

    def spread(epsilon):
        fits = [
            MLPRegressor(
                (1,),
                activation="identity",
                solver="sgd",
                momentum=0.0,
                learning_rate_init=1.0,
                batch_size="full",
                epsilon=epsilon,
                n_samples=60,
                max_iter=2,
                random_state=s,
            )
            .fit(X[:, :1], X[:, 0])
            .coefs_[0]
            for s in range(8)
        ]
        return float(np.var(np.stack(fits)))

    assert spread(50.0) < 0.25 * spread(0.5)


# ------------------------------------------------------------------ default learning rate


def test_auto_learning_rate_is_the_fixed_horizon_rule():
    """Check "auto" is c/√T from the public plan: 0.3/√T for Adam, 3/√T for SGD, stored in learning_rate_."""
    X, y = _data(2000)
    for solver, c in (("adam", 0.3), ("sgd", 3.0)):
        clf = MLPClassifier((4,), solver=solver, noise_multiplier=1.0, n_samples=2000, classes=[0, 1], max_iter=2)
        clf.fit(X, y)
        q, steps, _ = engine.plan_steps(256, 2, 2000)
        assert clf.n_steps_ == steps
        assert clf.learning_rate_ == pytest.approx(c / np.sqrt(steps))


def test_default_network_learns_on_two_thousand_rows():
    """Check the defaults learn on a small data set at ε = 1 (scikit-learn's fixed 0.001 stayed near chance)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 10))
    y = (X[:, :3] @ [1.5, -1.0, 1.0] + 0.3 * rng.normal(size=4000) > 0).astype(int)
    clf = MLPClassifier((32,), epsilon=1.0, n_samples=2000, classes=[0, 1], max_iter=5, random_state=0)
    assert clf.fit(X[:2000], y[:2000]).score(X[2000:], y[2000:]) > 0.8


# ------------------------------------------------------------------ partial_fit


def test_partial_fit_one_spend_per_call_of_one_epoch():
    """Check each call is one release and one spend: the event of one epoch planned from n_samples."""
    X, y = _data(200)
    acc = BudgetAccountant()
    clf = MLPClassifier((4,), epsilon=1.0, n_samples=200, batch_size=50, classes=[0, 1], accountant=acc, random_state=0)
    q, steps, _ = engine.plan_steps(50, 1, 200)
    expected = engine.steps_event(q, steps, engine.noise_multiplier(1.0, 1e-5, q, steps))
    for _ in range(2):
        with record_releases() as drawn:
            clf.partial_fit(X, y)
        assert drawn == [engine.step_event(q, clf.noise_multiplier_)] * steps
        assert clf.privacy_spent_ == expected
    assert len(acc.spent_budget) == 2 and all(event == expected for event in acc.spent_budget)
    assert clf.n_steps_ == 2 * steps and clf.n_iter_ == 2


def _deterministic_init(layer_units, activation, rng):
    # A fixed, data-independent initialisation, so that fits can be compared across calls.
    coefs = [np.linspace(-0.5, 0.5, a * b).reshape(a, b) for a, b in zip(layer_units[:-1], layer_units[1:])]
    return coefs, [np.full(b, 0.1) for b in layer_units[1:]]


@pytest.mark.parametrize("solver", ["adam", "sgd"])
@pytest.mark.parametrize("Est, extra", [(MLPClassifier, {"classes": [0, 1]}), (MLPRegressor, {})])
def test_partial_fit_continues_from_the_weights_and_the_solver(monkeypatch, Est, extra, solver):
    """Check a call starts where the previous one stopped (weights and solver state): two calls = two epochs."""
    monkeypatch.setattr(mlp, "_init_parameters", _deterministic_init)
    X, y = _data(100)
    y = y if Est is MLPClassifier else X @ [1.0, -1.0, 0.5]
    params = dict(epsilon=np.inf, n_samples=100, batch_size="full", learning_rate_init=0.05, random_state=0, **extra)
    online = Est((3,), solver=solver, **params)
    online.partial_fit(X, y).partial_fit(X, y)
    batch = Est((3,), solver=solver, max_iter=2, **params).fit(X, y)
    once = Est((3,), solver=solver, **params).partial_fit(X, y)
    for a, b, c in zip(online.coefs_ + online.intercepts_, batch.coefs_ + batch.intercepts_, once.coefs_):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        assert not np.allclose(a, c)
    assert online.n_iter_ == 2
