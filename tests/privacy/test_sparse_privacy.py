# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy of the sparse paths: the dense audits on CSR data, broken sparse variants, recording.

``SPARSE_AUDITS`` (``dpsk/utils/_testing/registry.py``) are the estimators' dense audits
with X handed over as CSR matrices (with an all-zero column where the dense neighbours
hold no zero). The audits must pass (``audit`` marker, like the dense ones); the broken
sparse variants must be rejected (``slow``); every sparse fit must release exactly what it
declares (the recording harness).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from dpsk.accounting import record_releases
from dpsk.audit import audit, estimator_sampler
from dpsk.audit._samplers import declared_cost
from dpsk.utils._testing.common import estimators_under_test
from dpsk.utils._testing.registry import (
    ESTIMATOR_AUDITS,
    SPARSE_AUDITS,
    SPARSE_BROKEN_VARIANTS,
    SPARSE_CASES,
    SPARSE_STAT_AUDITS,
    sparse_audit,
)
from dpsk.utils._testing.sparse import as_pure_claim, bounds_neighbours
from dpsk.utils.estimator_checks import _fit_quietly, _leaves, _prepared, make_check_data


def test_sparse_neighbours_are_sparse_and_neighbours():
    """Check that every sparse audit fits CSR data whose densified rows differ by the canary only."""
    for name, case in SPARSE_AUDITS.items():
        without, with_canary = case.neighbours(case.estimator)
        assert sp.issparse(without["X"]) and sp.issparse(with_canary["X"]), name
        assert with_canary["X"].shape[0] == without["X"].shape[0] + 1, name
        assert np.array_equal(with_canary["X"][:-1].toarray(), without["X"].toarray()), name
        assert without["X"].nnz < np.prod(without["X"].shape) or name in (
            "KMeans",
            "DecisionTreeRegressor",
            "RandomForestRegressor",
        ), name


@pytest.mark.audit
@pytest.mark.parametrize("name", sorted(SPARSE_AUDITS))
@pytest.mark.extended
def test_sparse_privacy_audit(name):
    """Check that the sparse path's noise is enough for the cost it declares, on the dense audit's neighbours."""
    result = SPARSE_AUDITS[name].run()
    assert result.passed, str(result)


def _broken(name, cls):
    dense, changes, zero = SPARSE_CASES[name]
    return sparse_audit(ESTIMATOR_AUDITS[dense], changes, zero, cls=cls)


@pytest.mark.slow
@pytest.mark.parametrize("name, cls", SPARSE_BROKEN_VARIANTS, ids=[cls.__name__ for _, cls in SPARSE_BROKEN_VARIANTS])
@pytest.mark.extended
def test_sparse_audit_rejects_broken_variant(name, cls):
    result = _broken(name, cls).run()
    assert not result.passed, str(result)


@pytest.mark.parametrize("name, cls", SPARSE_BROKEN_VARIANTS, ids=[cls.__name__ for _, cls in SPARSE_BROKEN_VARIANTS])
def test_sparse_broken_variant_declares_the_correct_cost_and_differs(name, cls):
    """Check that a broken variant declares the correct cost, and that on the canary
    neighbour its (noise-free) fit differs from the correct one: only its clipping is wrong."""
    broken, correct = _broken(name, cls), SPARSE_AUDITS[name]
    _, with_canary = correct.neighbours(correct.estimator)
    fits = [case.estimator.set_params(random_state=np.random.PCG64(0)).fit(**with_canary) for case in (broken, correct)]
    assert fits[0].privacy_spent_ == fits[1].privacy_spent_
    assert not np.array_equal(correct.projection(fits[0]), correct.projection(fits[1]))


SPARSE_ESTIMATORS = [est for est in estimators_under_test() if type(est).__name__ in SPARSE_CASES]


@pytest.mark.parametrize("n_features", [1, 5, 50])
@pytest.mark.parametrize("estimator", SPARSE_ESTIMATORS, ids=lambda est: type(est).__name__)
def test_sparse_releases_match_declared_cost(estimator, n_features):
    """Check the recording harness on sparse X: the releases made are the declared ones."""
    if type(estimator).__name__ == "StandardScaler":
        estimator = estimator.set_params(with_mean=False)
    data = make_check_data(estimator, n_features=n_features)
    X = np.asarray(data["X"], dtype=np.float64)
    X[np.abs(X) < np.quantile(np.abs(X), 0.5)] = 0.0  # half the entries implicit
    data = {**data, "X": sp.csr_matrix(X)}
    est = _prepared(estimator, data, random_state=0)
    with record_releases() as drawn:
        _fit_quietly(est, data)
    assert _leaves(drawn) == _leaves([est.privacy_spent_])


_BOUNDS = (0.0, 3.0)
_USERS = np.arange(300) // 3

#: (function, its other arguments) of every dpsk.stats function that takes sparse X.
SPARSE_STATISTIC_CALLS = [
    ("mean", dict(bounds=_BOUNDS, axis=0)),
    ("var", dict(bounds=_BOUNDS, axis=0)),
    ("std", dict(bounds=_BOUNDS, axis=0)),
    ("sum", dict(bounds=_BOUNDS, axis=0)),
    ("count", dict(axis=0)),
    ("quantile", dict(q=[0.2, 0.8], bounds=_BOUNDS, axis=0)),
    ("percentile", dict(q=[20.0, 80.0], bounds=_BOUNDS, axis=0)),
    ("median", dict(bounds=_BOUNDS, axis=0)),
    ("histogram", dict(bins=3, range=_BOUNDS)),
    ("histogram", dict(bins=3, range=_BOUNDS, groups=_USERS)),
    ("histogramdd", dict(bins=3, range=[_BOUNDS] * 4)),
    ("histogramdd", dict(bins=3, range=[_BOUNDS] * 4, groups=_USERS)),
]


@pytest.mark.parametrize("on_invalid", ["raise", "drop", "clip"])
@pytest.mark.parametrize("function, kwargs", SPARSE_STATISTIC_CALLS)
def test_sparse_statistics_release_what_they_declare(function, kwargs, on_invalid):
    """Check the recording harness on sparse X for dpsk.stats (with screening, and user level
    for the histograms): the releases made are the declared cost, spent once."""
    from dpsk import stats
    from dpsk.accounting import BudgetAccountant

    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 3.0, (300, 4))
    X[rng.random(X.shape) < 0.6] = 0.0
    if on_invalid != "raise":
        X[5, 1], X[9, 2] = np.nan, np.inf
    accountant = BudgetAccountant(epsilon=5.0)
    with record_releases() as drawn:
        result = getattr(stats, function)(
            sp.csr_matrix(X),
            epsilon=1.0,
            **kwargs,
            on_invalid=on_invalid,
            random_state=0,
            return_error=True,
            accountant=accountant,
        )
    result = result[0] if isinstance(result, tuple) else result  # histograms: (counts, edges)
    assert len(accountant.to_frame()) == 1
    assert _leaves(drawn) == _leaves([result.privacy_spent])


@pytest.mark.parametrize("on_invalid", ["drop", "clip"])
@pytest.mark.parametrize("name", ["MultinomialNB", "BernoulliNB"])
def test_sparse_naive_bayes_screening_releases_what_it_declares(name, on_invalid):
    """Check the recording harness for naive Bayes on sparse X with on_invalid="drop"/"clip"."""
    from dpsk.naive_bayes import BernoulliNB, MultinomialNB

    rng = np.random.default_rng(1)
    X = np.round(rng.uniform(0.0, 3.0, (300, 5)))
    X[rng.random(X.shape) < 0.6] = 0.0
    X[4, 1], X[8, 2], X[12, 3] = np.nan, np.inf, -1.0
    y = rng.integers(0, 2, 300)
    cls = {"MultinomialNB": MultinomialNB, "BernoulliNB": BernoulliNB}[name]
    est = cls(epsilon=1.0, classes=[0, 1], on_invalid=on_invalid, random_state=0)
    if name == "MultinomialNB":
        est.set_params(data_norm=10.0)
    with record_releases() as drawn:
        est.fit(sp.csr_matrix(X), y)
    assert _leaves(drawn) == _leaves([est.privacy_spent_])


# -- dpsk.stats on sparse X ----------------------------------------------------------------------


def run_statistic(name, n_samples=None, neighbours=None):
    case = SPARSE_STAT_AUDITS[name]
    neighbours = case.neighbours() if neighbours is None else neighbours
    claim = as_pure_claim(declared_cost(case.estimator, neighbours))
    sampler = estimator_sampler(case.estimator, case.projection)
    return audit(sampler, neighbours, event=claim, n_samples=n_samples or case.n_samples, random_state=0)


def test_sparse_statistic_neighbours_hold_implicit_zeros():
    """Check that the statistics' sparse neighbours are CSR neighbours, with implicit zeros where the values allow."""
    for name, case in SPARSE_STAT_AUDITS.items():
        without, with_canary = case.neighbours()
        assert sp.issparse(without["X"]) and with_canary["X"].shape[0] == without["X"].shape[0] + 1, name
        assert np.array_equal(with_canary["X"][:-1].toarray(), without["X"].toarray()), name
        assert without["X"].nnz < np.prod(without["X"].shape) or "quantile" in name or "percentile" in name, name


@pytest.mark.audit
@pytest.mark.parametrize("name", sorted(SPARSE_STAT_AUDITS))
@pytest.mark.extended
def test_sparse_statistic_privacy_audit(name):
    """Check each dpsk.stats function on sparse records against its declared cost (α = 1e-6)."""
    result = run_statistic(name)
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_sparse_statistic_audit_rejects_unclipped_moments(monkeypatch):
    """Check the audit's power on the sparse mean when the sparse values are not clipped."""
    from dpsk.stats import _moments

    real = _moments.exact_moments_of

    def unclipped(X, lower, upper, *args, **kwargs):
        if not sp.issparse(X):
            return real(X, lower, upper, *args, **kwargs)
        return real(X, np.full_like(lower, -1e9), np.full_like(upper, 1e9), *args, **kwargs)

    monkeypatch.setattr(_moments, "exact_moments_of", unclipped)
    assert not run_statistic("mean", 6_000).passed


@pytest.mark.slow
@pytest.mark.parametrize("name", ["histogram", "histogramdd"])
@pytest.mark.extended
def test_sparse_histogram_audit_rejects_values_counted_twice(name, monkeypatch):
    """Check the audit's power on the sparse histograms when a record's values count twice."""
    from dpsk.stats import _histogram

    real = _histogram._sparse_counts
    monkeypatch.setattr(_histogram, "_sparse_counts", lambda *args: 2 * real(*args))
    assert not run_statistic(name).passed


@pytest.mark.slow
@pytest.mark.extended
def test_sparse_bounds_audit_rejects_stored_values_counted_twice(monkeypatch):
    """Check the audit's power on stats.bounds' sparse log histograms when each stored value counts twice."""
    from dpsk.stats import _bounds

    real = _bounds._log_histograms

    def twice(X):
        counts = real(X)
        if sp.issparse(X):
            counts += real(X) - real(sp.csr_matrix(X.shape))  # the stored values' counts once more
        return counts

    monkeypatch.setattr(_bounds, "_log_histograms", twice)
    # 6 rows in [2, 4): the broken count moves that bin from 12 to 14, where the correct one
    # moves by 1 (11 -> 12 is the sharpest step; see SPARSE_BOUNDS_CASES).
    neighbours = bounds_neighbours(3.0, np.concatenate([np.full(6, 3.0), np.zeros(100)]))()
    assert not run_statistic("bounds, log histogram", neighbours=neighbours).passed
