# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""``partial_fit`` of the naive Bayes classifiers and the scalers: one release per call.

Each call is checked against the budget before its batch is read, records one spend,
releases exactly what that spend declares (the recording harness), and the model is the
post-processing of the summed noisy statistics; what the first call fixes (classes,
bounds, ``data_norm``, ``n_categories``) stays fixed. The privacy audit of one call is
in ``test_partial_fit_privacy_audit`` (with a broken variant it must reject).
"""

import math
import warnings
from collections import Counter

import numpy as np
import pytest

from dpsk.accounting import BudgetAccountant, record_releases
from dpsk.audit import audit_estimator
from dpsk.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB
from dpsk.preprocessing import MinMaxScaler, StandardScaler
from dpsk.utils._testing.family import AUDITS, GaussianNBNoClipping, project_class_sum

CLASSIFIERS = {
    "GaussianNB": lambda **kw: GaussianNB(bounds=(0, 4), **kw),
    "MultinomialNB": lambda **kw: MultinomialNB(data_norm=20.0, **kw),
    "BernoulliNB": lambda **kw: BernoulliNB(binarize=1.5, **kw),
    "CategoricalNB": lambda **kw: CategoricalNB(n_categories=5, **kw),
}
SCALERS = {
    "StandardScaler": lambda **kw: StandardScaler(bounds=(0, 4), **kw),
    "MinMaxScaler": lambda **kw: MinMaxScaler(bounds=(0, 4), bins=8, **kw),
}
ALL = {**CLASSIFIERS, **SCALERS}


def _batch(seed, n=200, d=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.integers(0, 2, (n, d)) + 2 * y[:, None]  # category codes 0..3, in the bounds
    return X.astype(np.float64), y


def _partial_fit(est, X, y, **kw):
    if type(est).__name__ in CLASSIFIERS:
        return est.partial_fit(X, y, **kw)
    return est.partial_fit(X)


@pytest.mark.parametrize("name", sorted(ALL))
def test_one_spend_per_call_and_releases_match_it(name):
    acc = BudgetAccountant(epsilon=10.0)
    est = ALL[name](epsilon=1.0, accountant=acc, random_state=0)
    for call in range(3):
        X, y = _batch(call)
        with record_releases() as drawn:
            _partial_fit(est, X, y, classes=[0, 1])
        assert Counter(drawn) == Counter(est.privacy_spent_.flatten()), name
        assert len(acc.spent_budget) == call + 1
    assert acc.total().epsilon == pytest.approx(3.0)


@pytest.mark.parametrize("name", sorted(ALL))
def test_budget_checked_before_the_batch_is_read(name):
    acc = BudgetAccountant(epsilon=1.5)
    est = ALL[name](epsilon=1.0, accountant=acc, random_state=0)
    X, y = _batch(0)
    _partial_fit(est, X, y, classes=[0, 1])
    bad = X.copy()
    bad[0, 0] = np.nan  # would be a ValueError if the batch were read first
    with pytest.raises(BudgetExceededError):
        _partial_fit(est, bad, y)
    assert len(acc.spent_budget) == 1


@pytest.mark.parametrize("name", sorted(ALL))
def test_partial_fit_at_infinite_epsilon_equals_fit(name):
    """Without noise, the post-processed sum of the batch statistics is the statistic of all rows."""
    (X1, y1), (X2, y2) = _batch(1), _batch(2)
    whole = ALL[name](epsilon=math.inf, classes=[0, 1]) if name in CLASSIFIERS else ALL[name](epsilon=math.inf)
    whole.fit(np.vstack([X1, X2]), np.concatenate([y1, y2]))
    parts = ALL[name](epsilon=math.inf)
    _partial_fit(parts, X1, y1, classes=[0, 1])
    _partial_fit(parts, X2, y2)
    for attr in ("theta_", "var_", "class_count_", "feature_count_", "mean_", "data_min_", "data_max_", "histogram_"):
        if hasattr(whole, attr):
            np.testing.assert_allclose(getattr(parts, attr), getattr(whole, attr), rtol=1e-12, err_msg=attr)
    if name == "CategoricalNB":
        for a, b in zip(parts.category_count_, whole.category_count_):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(ALL))
def test_fit_forgets_earlier_partial_fits(name):
    X, y = _batch(3)
    est = ALL[name](epsilon=math.inf, classes=[0, 1]) if name in CLASSIFIERS else ALL[name](epsilon=math.inf)
    _partial_fit(est, X, y)
    _partial_fit(est, X, y)
    refit = ALL[name](epsilon=math.inf, classes=[0, 1]) if name in CLASSIFIERS else ALL[name](epsilon=math.inf)
    est.fit(X, y)
    refit.fit(X, y)
    assert est._n_releases == 1
    np.testing.assert_array_equal(est._noisy_sums[0], refit._noisy_sums[0])


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_classes_required_on_the_first_call(name):
    X, y = _batch(0)
    est = CLASSIFIERS[name](epsilon=1.0)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        est.partial_fit(X, y)
    est.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="not the same as on the first call"):
        est.partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="differ from the `classes` parameter"):
        CLASSIFIERS[name](epsilon=1.0, classes=[0, 1]).partial_fit(X, y, classes=[0, 2])


@pytest.mark.parametrize(
    "make, param, private",
    [
        (lambda **kw: GaussianNB(epsilon=1.0, **kw), "bounds", True),
        (lambda **kw: MultinomialNB(epsilon=1.0, **kw), "data_norm", True),
        (lambda **kw: CategoricalNB(epsilon=1.0, **kw), "n_categories", False),
        (lambda **kw: StandardScaler(epsilon=1.0, **kw), "bounds", True),
        (lambda **kw: MinMaxScaler(epsilon=1.0, **kw), "bounds", True),
    ],
)
@pytest.mark.parametrize("value", [None, "data"])
def test_sensitivity_parameters_fixed_at_the_first_call(make, param, private, value):
    """Estimated privately (left out) or derived with the warning ("data") once, at the first
    call, never from a later batch; a left-out parameter without a private estimate is refused."""
    acc = BudgetAccountant(epsilon=10.0)
    est = make(accountant=acc, **{param: value})
    X, y = _batch(0)
    if value is None and not private:
        with pytest.raises(ValueError, match="left out"):
            _partial_fit(est, X, y, classes=[0, 1])
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _partial_fit(est, X, y, classes=[0, 1])
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert bool(leaks) == (value == "data")
    labels = [str(label) for label in acc.to_frame()["label"]]
    assert (f"private {param}" in labels[0]) == (value is None), labels
    before = np.copy(getattr(est, f"{param}_"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _partial_fit(est, X + 1, y)  # larger values: would widen derived bounds or norms
    np.testing.assert_array_equal(np.copy(getattr(est, f"{param}_")), before)
    assert "private" not in str(acc.to_frame()["label"].iloc[-1])


def test_integer_seed_draws_fresh_noise_per_call():
    X, y = _batch(0)
    est = GaussianNB(epsilon=1.0, bounds=(0, 4), random_state=0)
    est.partial_fit(X, y, classes=[0, 1])
    first = est._noisy_sums[1].copy()
    est.partial_fit(X, y)
    # The same batch again: the sum is not twice the first release (independent noise).
    assert not np.allclose(est._noisy_sums[1], 2 * first)


def test_noise_variance_accumulates():
    X, y = _batch(0)
    est = StandardScaler(epsilon=1.0, bounds=(0, 4), random_state=0)
    est.partial_fit(X)
    one = est._scalar_sums[0]
    est.partial_fit(X)
    assert est._scalar_sums[0] == pytest.approx(2 * one)


def test_n_features_fixed_at_the_first_call():
    X, y = _batch(0)
    est = MultinomialNB(epsilon=1.0, data_norm=10.0).partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :2], y)


# -- privacy audit of one partial_fit call -----------------------------------------------------

_FIRST_X = np.zeros((50, 1))
_FIRST_Y = np.arange(50) % 2


class _SecondCall:
    """``fit`` = a first ``partial_fit`` on fixed rows, then one on the audited neighbours.

    ``privacy_spent_`` is then the second call's: the audit tests that call's release,
    seen through the model built from both (the first release does not depend on the
    neighbours, so it can only make the test easier for the estimator to pass).
    """

    def fit(self, X, y, sample_weight=None):
        self._reset_partial_fit()
        self.partial_fit(_FIRST_X, _FIRST_Y, classes=[0, 1])
        return self.partial_fit(X, y, sample_weight=sample_weight)


class GaussianNBSecondCall(_SecondCall, GaussianNB):
    pass


class GaussianNBNoClippingSecondCall(_SecondCall, GaussianNBNoClipping):
    pass


def _audit(cls):
    config = AUDITS["GaussianNB"]
    params = {k: v for k, v in config.params.items() if k != "classes"}
    return audit_estimator(
        cls(**params), config.neighbours(), project_class_sum, n_samples=config.n_samples, random_state=0
    )


@pytest.mark.audit
def test_partial_fit_privacy_audit():
    result = _audit(GaussianNBSecondCall)
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_partial_fit_audit_rejects_a_call_without_clipping():
    result = _audit(GaussianNBNoClippingSecondCall)
    assert not result.passed, str(result)
