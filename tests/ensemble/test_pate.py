# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""PATEClassifier, SubsampleAggregate and stats.subsample_aggregate: accounting, bad input, privacy audits."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from dpsk import stats
from dpsk.accounting import (
    BudgetAccountant,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    SelfComposedEvent,
    get_epsilon,
    record_releases,
)
from dpsk.audit import audit_estimator, canary_neighbours
from dpsk.ensemble import PATEClassifier, SubsampleAggregate, _parts, _pate
from dpsk.stats import _subsample


def _leaves(events):
    return sorted(repr(leaf) for event in events for leaf in event.flatten())


def _blobs(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] > 0).astype(int), rng.normal(size=(50, 2))


# ------------------------------------------------------------------ accounting


@pytest.mark.parametrize("aggregator", ["gnmax", "lnmax", "confident"])
def test_pate_calibrated_cost_meets_the_target_once_per_fit(aggregator):
    """Check that σ meets (ε, δ) for max_queries queries, and that fit records exactly that one cost."""
    X, y, X_public = _blobs()
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = PATEClassifier(
        SkLogisticRegression(),
        n_teachers=5,
        aggregator=aggregator,
        epsilon=1.0,
        delta=1e-5,
        max_queries=None,
        classes=[0, 1],
        accountant=accountant,
        random_state=0,
    )
    with record_releases() as drawn:
        clf.fit(X, y, X_public=X_public)
    assert clf.n_queries_ == 50
    assert get_epsilon(clf.privacy_spent_, 1e-5) <= 1.0
    assert get_epsilon(clf.privacy_spent_, 1e-5) > 0.99  # tight: not a loose over-estimate
    assert _leaves(drawn) == _leaves([clf.privacy_spent_])
    assert len(accountant) == 1
    leaf = DiscreteLaplaceEvent if aggregator == "lnmax" else DiscreteGaussianEvent
    counts = {}
    for event in clf.privacy_spent_.flatten():
        assert isinstance(event, leaf)
        counts[event] = counts.get(event, 0) + 1
    # 2 counts per query for the vote, plus one threshold check per query (confident)
    assert sorted(counts.values()) == ([50, 100] if aggregator == "confident" else [100])


def test_pate_cost_is_per_histogram_count_not_per_class():
    """Check that the declared cost is 2T counts of sensitivity 1 whatever the number of classes (10 here)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = rng.integers(0, 10, 300)
    clf = PATEClassifier(SkLogisticRegression(), n_teachers=3, max_queries=None, classes=np.arange(10), random_state=0)
    clf.fit(X, y, X_public=X[:20])
    assert clf.privacy_spent_ == SelfComposedEvent(DiscreteGaussianEvent(clf.sigma_, 1), 40)


def test_pate_max_queries_caps_the_cost_and_samples_the_queries():
    X, y, X_public = _blobs()
    clf = PATEClassifier(SkLogisticRegression(), n_teachers=3, max_queries=10, classes=[0, 1], random_state=0)
    clf.fit(X, y, X_public=X_public)
    assert clf.n_queries_ == clf.n_answered_ == 10
    assert clf.class_count_.sum() == 10
    full = PATEClassifier(SkLogisticRegression(), n_teachers=3, max_queries=None, classes=[0, 1], random_state=0).fit(
        X, y, X_public=X_public
    )
    assert full.sigma_ > clf.sigma_


def test_pate_given_sigma_above_the_budget_is_refused_before_reading():
    X, y, X_public = _blobs()
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = PATEClassifier(SkLogisticRegression(), sigma=1.0, classes=[0, 1], accountant=accountant)
    with pytest.raises(ValueError, match="costs more than epsilon"):
        clf.fit(X, y, X_public=X_public)
    assert len(accountant) == 0


def test_pate_noise_shrinks_with_epsilon_and_is_fresh_with_none():
    """The two contract checks the common tests cannot run on discrete labels (_test_common.py)."""
    X, y, X_public = _blobs()
    sigmas = [
        PATEClassifier(SkLogisticRegression(), n_teachers=3, epsilon=eps, classes=[0, 1])
        .fit(X, y, X_public=X_public)
        .sigma_
        for eps in (0.5, 50.0)
    ]
    assert sigmas[1] < 0.05 * sigmas[0]
    counts = []
    for _ in range(2):
        np.random.seed(0)
        clf = PATEClassifier(
            SkLogisticRegression(), n_teachers=3, epsilon=0.5, max_queries=None, classes=[0, 1], random_state=None
        )
        counts.append(clf.fit(X, y, X_public=X_public).predict(X_public))
    assert not np.array_equal(*counts)


def test_pate_gaussian_aggregators_need_delta():
    X, y, X_public = _blobs()
    with pytest.raises(ValueError, match="delta > 0"):
        PATEClassifier(SkLogisticRegression(), delta=0.0, classes=[0, 1]).fit(X, y, X_public=X_public)
    PATEClassifier(SkLogisticRegression(), n_teachers=3, aggregator="lnmax", delta=0.0, classes=[0, 1]).fit(
        X, y, X_public=X_public
    )


class _ShapeOnly:
    """Public rows known by their shape alone: reading a value raises."""

    def __init__(self, shape):
        self.shape = shape

    def __array__(self, *args, **kwargs):
        raise AssertionError("X_public was read")


def test_pate_label_signal_matches_a_simulated_noisy_argmax():
    """Check the rule's label-quality model (quadrature) against a simulation of the noisy argmax."""
    rng = np.random.default_rng(0)
    for n_teachers, n_classes, std in ((20, 2, 10.0), (20, 10, 6.0), (250, 2, 150.0), (50, 5, 30.0)):
        votes = np.zeros(n_classes)
        votes[0] = _pate.ASSUMED_AGREEMENT * n_teachers
        votes[1] = (1 - _pate.ASSUMED_AGREEMENT) * n_teachers
        noisy = votes + std * rng.standard_normal((200_000, n_classes))
        p = np.mean(np.argmax(noisy, axis=1) == 0)
        simulated = (n_classes * p - 1) / (n_classes - 1)
        assert _pate.label_signal(n_teachers, n_classes, std) == pytest.approx(simulated, abs=0.01)
    assert _pate.label_signal(20, 2, 0.0) == 1.0
    assert _pate.label_signal(20, 10, 1e6) == pytest.approx(0.0, abs=1e-4)


@pytest.mark.parametrize("aggregator", ["gnmax", "lnmax", "confident"])
def test_pate_auto_queries_trade_labels_against_noise(aggregator):
    """Check the default rule: the grid minimum of its error model; scarce labels: every row; many classes: fewer."""
    delta = 0.0 if aggregator == "lnmax" else 1e-5
    n_queries, below = _pate.auto_queries(aggregator, 250, 2, 1.0, delta, 8140)
    assert not below and _pate.MIN_QUERIES < n_queries < 8140
    errors = {t: _pate._modelled_error(aggregator, 250, 2, 1.0, delta, t) for t in range(10, 8141, 10)}
    assert _pate._modelled_error(aggregator, 250, 2, 1.0, delta, n_queries) <= min(errors.values()) + 1e-3
    # More budget or more teachers afford more (accurate) labels; the public rows cap them.
    assert _pate.auto_queries(aggregator, 250, 2, 5.0, delta, 8140)[0] > 2 * n_queries
    assert _pate.auto_queries(aggregator, 500, 2, 1.0, delta, 8140)[0] > 1.5 * n_queries
    assert _pate.auto_queries(aggregator, 250, 2, 1.0, delta, 7) == (7, False)
    if aggregator == "gnmax":
        # Two classes, few teachers, few public rows: labels are scarce, every row is labelled.
        assert _pate.auto_queries(aggregator, 20, 2, 1.0, delta, 71) == (71, False)
        # Ten classes: a label needs its class to clear nine noisy counts, so fewer, better labels.
        assert _pate.auto_queries(aggregator, 20, 10, 5.0, delta, 225)[0] < 60


def test_pate_auto_queries_floor_warns():
    """Check that too few teachers for the number of classes still label MIN_QUERIES rows, with a warning."""
    assert _pate.auto_queries("gnmax", 5, 10, 1.0, 1e-5, 1000) == (_pate.MIN_QUERIES, True)
    X, y, X_public = _blobs()
    with pytest.warns(UserWarning, match="too noisy"):
        clf = PATEClassifier(SkLogisticRegression(), n_teachers=5, classes=np.arange(10), random_state=0)
        clf.fit(X, y, X_public=X_public)
    assert clf.n_queries_ == _pate.MIN_QUERIES


@pytest.mark.parametrize("aggregator", ["gnmax", "confident"])
def test_pate_auto_queries_depend_on_public_shapes_only(aggregator):
    """Check that two data sets with the same public shapes get the same queries and noise.

    The private row counts differ (400 and 3000, not public): a rule reading them, or the
    values, would give different answers.
    """
    fitted = []
    for n, seed in ((400, 0), (3000, 1)):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, 2)) * (seed + 1)
        y = (X[:, seed] > 0).astype(int)
        X_public = rng.normal(size=(300, 2)) + seed
        clf = PATEClassifier(
            SkLogisticRegression(), n_teachers=50, aggregator=aggregator, epsilon=2.0, classes=[0, 1], random_state=0
        )
        fitted.append(clf.fit(X, y, X_public=X_public))
    first, second = fitted
    assert first.n_queries_ == second.n_queries_ == _pate.auto_queries(aggregator, 50, 2, 2.0, 1e-5, 300)[0]
    assert first.sigma_ == second.sigma_
    assert first.privacy_spent_ == second.privacy_spent_
    # The number of classes is public (given): it changes the rule, the data never do.
    clf = PATEClassifier(SkLogisticRegression(), n_teachers=50, epsilon=2.0, classes=np.arange(10), random_state=0)
    assert clf.fit(X, y, X_public=X_public).n_queries_ == _pate.auto_queries("gnmax", 50, 10, 2.0, 1e-5, 300)[0]


def test_pate_default_queries_follow_the_rule_with_one_spend():
    """Check that the default max_queries is the rule's, and that fit records that one cost, once."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    y = (X[:, 0] > 0).astype(int)
    X_public = rng.normal(size=(500, 2))
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = PATEClassifier(
        SkLogisticRegression(), n_teachers=100, epsilon=2.0, classes=[0, 1], accountant=accountant, random_state=0
    )
    with record_releases() as drawn:
        clf.fit(X, y, X_public=X_public)
    expected = _pate.auto_queries("gnmax", 100, 2, 2.0, 1e-5, 500)[0]
    assert 10 < clf.n_queries_ == expected < 500
    assert clf.privacy_spent_ == SelfComposedEvent(DiscreteGaussianEvent(clf.sigma_, 1), 2 * expected)
    assert _leaves(drawn) == _leaves([clf.privacy_spent_])
    assert len(accountant) == 1
    assert (clf.predict(X_public) == (X_public[:, 0] > 0)).mean() > 0.95


@pytest.mark.parametrize("sigma", [None, 40.0])
def test_pate_auto_queries_read_no_data(sigma, monkeypatch):
    """Check that the number of queries (and the cost) is fixed before X, y or X_public is read."""
    from dpsk.accounting._preflight import _Unreadable

    seen = {}
    original = PATEClassifier._cost

    def cost(self, n_queries):
        seen["n_queries"] = n_queries
        return original(self, n_queries)

    def stop(*args, **kwargs):
        raise KeyboardInterrupt  # the first read of the data: stop there

    monkeypatch.setattr(PATEClassifier, "_cost", cost)
    monkeypatch.setattr(_pate, "validate_data", stop)
    clf = PATEClassifier(SkLogisticRegression(), sigma=sigma, epsilon=2.0, classes=[0, 1])
    with pytest.raises(KeyboardInterrupt):
        clf.fit(_Unreadable(), _Unreadable(), X_public=_ShapeOnly((5000, 3)))
    assert seen["n_queries"] == _pate.auto_queries("gnmax", 250, 2, 2.0, 1e-5, 5000, sigma)[0]
    assert 10 < seen["n_queries"] < 5000


def test_pate_semi_supervised_student_uses_the_unlabelled_public_rows():
    """Check that semi_supervised=True self-trains the student on all public rows, and that it is free."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X_public = rng.normal(size=(400, 2))
    params = dict(n_teachers=100, epsilon=4.0, max_queries=20, classes=["a", "b"], random_state=0)
    semi = PATEClassifier(SkLogisticRegression(), semi_supervised=True, **params).fit(
        X, np.array(["a", "b"])[y], X_public=X_public
    )
    plain = PATEClassifier(SkLogisticRegression(), **params).fit(X, np.array(["a", "b"])[y], X_public=X_public)
    from sklearn.semi_supervised import SelfTrainingClassifier

    assert isinstance(semi.student_, SelfTrainingClassifier)
    assert semi.student_.transduction_.shape == (400,)
    assert (semi.student_.labeled_iter_ > 0).sum() > 100  # pseudo-labelled public rows
    assert not isinstance(plain.student_, SelfTrainingClassifier)
    assert semi.privacy_spent_ == plain.privacy_spent_  # post-processing: the same cost
    assert set(semi.predict(X_public)) <= {"a", "b"}
    assert semi.predict_proba(X_public).shape == (400, 2)


# ------------------------------------------------------------------ behaviour


def test_pate_learns_and_keeps_no_teacher():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 2))
    y = (X[:, 0] > 0).astype(int)
    X_public = rng.normal(size=(200, 2))
    clf = PATEClassifier(SkLogisticRegression(), n_teachers=40, epsilon=4.0, classes=[0, 1], random_state=0)
    clf.fit(X, y, X_public=X_public)
    assert (clf.predict(X_public) == (X_public[:, 0] > 0)).mean() > 0.95
    assert clf.predict_proba(X_public).shape == (200, 2)
    assert not [
        name
        for name, value in vars(clf).items()
        if "teacher" in name and name.endswith("_") or hasattr(value, "coef_") and value is not clf.student_
    ]


def test_pate_empty_and_one_class_teachers_vote_safely():
    """Check that fewer rows than teachers is not an error (n is private): empty teachers abstain."""
    X, y, X_public = _blobs(n=6)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = PATEClassifier(
        SkLogisticRegression(), n_teachers=20, max_queries=None, classes=[0, 1], accountant=accountant, random_state=0
    )
    clf.fit(X, y, X_public=X_public)
    assert clf.n_answered_ == 50
    assert len(accountant) == 1


def test_pate_without_x_public_warns_label_privacy():
    from dpsk.exceptions import PrivacyLeakWarning

    X, y, _ = _blobs()
    with pytest.warns(PrivacyLeakWarning, match="X_public"):
        PATEClassifier(SkLogisticRegression(), n_teachers=3, classes=[0, 1]).fit(X, y)


# ------------------------------------------------------------------ bad input, before any spend


class _NoPredict:
    def fit(self, X, y):
        return self

    def get_params(self, deep=True):
        return {}


@pytest.mark.parametrize(
    "make, fit_kwargs",
    [
        (lambda acc: PATEClassifier(_NoPredict(), classes=[0, 1], accountant=acc), {}),
        (
            lambda acc: PATEClassifier(SkLogisticRegression(), classes=[0, 1], accountant=acc),
            {"X_public": np.ones((5, 3))},
        ),
        (lambda acc: SubsampleAggregate(_NoPredict(), bounds=(-1, 1), accountant=acc), {}),
    ],
    ids=["classifier without predict", "X_public of the wrong width", "regressor without predict"],
)
def test_bad_input_refused_before_any_spend(make, fit_kwargs):
    X, y, X_public = _blobs()
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = make(accountant)
    kwargs = {"X_public": X_public} if isinstance(est, PATEClassifier) else {}
    kwargs.update(fit_kwargs)
    with record_releases() as drawn, pytest.raises(ValueError):
        est.fit(X, y.astype(float) if isinstance(est, SubsampleAggregate) else y, **kwargs)
    assert drawn == []
    assert len(accountant) == 0


# ------------------------------------------------------------------ subsample-and-aggregate


@pytest.mark.parametrize("aggregate", ["mean", "median"])
def test_subsample_aggregate_recovers_coefficients_and_declares_its_release(aggregate):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 2))
    y = X @ [0.5, -0.25] + 0.1
    reg = SubsampleAggregate(
        SkLinearRegression(), n_parts=40, bounds=(-1, 1), aggregate=aggregate, epsilon=20.0, random_state=0
    )
    with record_releases() as drawn:
        reg.fit(X, y)
    np.testing.assert_allclose(reg.coef_, [0.5, -0.25], atol=0.05)
    assert abs(reg.intercept_ - 0.1) < 0.05
    assert _leaves(drawn) == _leaves([reg.privacy_spent_])
    assert get_epsilon(reg.privacy_spent_, 0.0) <= 20.0


def test_subsample_failing_parts_contribute_the_centre():
    """Check that a statistic that raises on some parts still releases (box centre for those parts)."""

    def fragile(part):
        if part.shape[0] % 2:
            raise RuntimeError("odd")
        return part.mean(axis=0)

    x = np.full((1000, 1), 0.5)
    value = stats.subsample_aggregate(fragile, x, bounds=(np.zeros(1), np.ones(1)), epsilon=50.0, random_state=0)
    assert value.shape == (1,)
    assert 0.4 < value[0] < 0.6


def test_subsample_aggregate_function_spends_once():
    accountant = BudgetAccountant(epsilon=10.0)
    x = np.random.default_rng(0).normal(size=(5000, 1))
    with record_releases() as drawn:
        m = stats.subsample_aggregate(np.median, x, bounds=(-1.0, 1.0), accountant=accountant, random_state=0)
    assert abs(m) < 0.1 and len(drawn) == 1


# ------------------------------------------------------------------ privacy audits (canary rows)


def pate_neighbours(estimator, n=40):
    """Rows at x = 0 of class 0; the public query and the canary at x = 1, class 1.

    A 1-NN teacher votes 0 at the query unless it holds the canary: the canary flips its
    teacher's vote, whichever teacher it lands in.
    """
    without, with_canary = canary_neighbours(np.zeros((n, 1)), np.zeros(n, dtype=int), canary_X=[1.0], canary_y=1)
    public = {"X_public": np.ones((1, 1))}
    return {**without, **public}, {**with_canary, **public}


def project_label_count(fitted):
    return fitted.class_count_[1]


PATE_AUDITED = PATEClassifier(
    KNeighborsClassifier(n_neighbors=1), n_teachers=2, epsilon=4.0, delta=1e-5, max_queries=None, classes=[0, 1]
)


def subsample_neighbours(estimator, n=40):
    """Parts fitted on y = -100 - 100 x (coefficients at the box's low corner); the canary's
    part jumps to the high corner (both coefficients move by the box's full width)."""
    x = np.tile([-1.0, 1.0], n // 2)[:, None]
    return canary_neighbours(x, -100.0 - 100.0 * x[:, 0], canary_X=[1.0], canary_y=1e7)


def project_coefficients(fitted):
    return np.array([fitted.coef_[0], fitted.intercept_])


SUBSAMPLE_AUDITED = SubsampleAggregate(SkLinearRegression(), n_parts=4, bounds=(-1.0, 1.0), epsilon=1.0)


def _halve_vote_noise(monkeypatch):
    original = _pate.round_up_sigma2
    monkeypatch.setattr(_pate, "round_up_sigma2", lambda sigma2: original(sigma2 / 4))


def _halve_mean_noise(monkeypatch):
    original = _subsample.JointRelease

    def broken(sensitivities, shares, **kwargs):
        return original([(s[0] / 2, s[1] / 2) for s in sensitivities], shares, **kwargs)

    monkeypatch.setattr(_subsample, "JointRelease", broken)


def _share_last_row(monkeypatch):
    """The last row (the canary) goes to two parts: parallel composition broken."""
    original = _parts.part_rows

    def shared(parts, n_parts):
        rows = original(parts, n_parts)
        last = len(parts) - 1
        other = (int(parts[last]) + 1) % n_parts
        rows[other] = np.sort(np.append(rows[other], last))
        return rows

    monkeypatch.setattr(_parts, "part_rows", shared)


AUDITS = {
    "pate": (PATE_AUDITED, pate_neighbours, project_label_count),
    "subsample": (SUBSAMPLE_AUDITED, subsample_neighbours, project_coefficients),
}


@pytest.mark.audit
@pytest.mark.parametrize("name", sorted(AUDITS))
def test_privacy_audit_with_canary(name):
    """Check that the declared cost holds on a canary that flips its teacher's vote / moves its part to the box edge."""
    estimator, neighbours, projection = AUDITS[name]
    result = audit_estimator(estimator, neighbours(estimator), projection, n_samples=6000, random_state=0)
    assert result.passed, str(result)


@pytest.mark.audit
@pytest.mark.parametrize(
    "name, bug",
    [
        ("pate", _halve_vote_noise),
        ("pate", _share_last_row),
        ("subsample", _halve_mean_noise),
        ("subsample", _share_last_row),
    ],
    ids=["pate-noise-x0.5", "pate-shared-row", "subsample-noise-x0.5", "subsample-shared-row"],
)
@pytest.mark.extended
def test_privacy_audit_rejects_broken_variant(name, bug, monkeypatch):
    """Check the audits' power: half the noise, or the canary in two parts, is rejected."""
    bug(monkeypatch)
    estimator, neighbours, projection = AUDITS[name]
    result = audit_estimator(estimator, neighbours(estimator), projection, n_samples=6000, random_state=0)
    assert not result.passed, str(result)
