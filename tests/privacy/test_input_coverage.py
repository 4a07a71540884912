# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sparse X and ``sample_weight`` get the checks dense X gets (issue 16), for every estimator.

Which estimators accept sparse X is read from their tags (``input_tags.sparse``, with
every boolean parameter tried both ways: ``StandardScaler(with_mean=False)``), which
take ``sample_weight`` from their ``fit`` signature, and which :mod:`dpsk.stats`
functions take sparse X by calling them: nothing here is a hand-kept list. A new
estimator or statistic on these paths fails until it has

* a black-box privacy audit on sparse neighbours (``SPARSE_AUDITS``), on weighted
  neighbours (``WEIGHTED_AUDITS``) and on both (``SPARSE_WEIGHTED_AUDITS``), or a
  ``NOT_*`` entry with the reason;
* the recording harness on its sparse, weighted and sparse weighted fits (run here);
* scikit-learn's sparse checks (``parametrize_with_checks`` runs them when the tags say
  sparse): on the default instance in ``tests/test_common.py``, and here on the
  instances that accept sparse X only with a non-default parameter.
"""

import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpsk import stats
from dpsk.accounting import record_releases
from dpsk.utils._testing.common import estimators_under_test, expected_failed_checks
from dpsk.utils._testing.registry import (
    NOT_AUDITED,
    SPARSE_AUDITS,
    SPARSE_STAT_AUDITS,
    SPARSE_WEIGHTED_AUDITS,
    WEIGHTED_AUDITS,
    public_statistics,
    takes_sample_weight,
)
from dpsk.utils.estimator_checks import _fit_quietly, _fitted_float_arrays, _leaves, _prepared, make_check_data


def _sparse_instance(estimator):
    """``estimator``, or a copy with one boolean parameter flipped, whose tags accept sparse X (else None)."""
    if estimator.__sklearn_tags__().input_tags.sparse:
        return estimator
    for key, value in estimator.get_params(deep=False).items():
        if isinstance(value, bool):
            flipped = clone(estimator).set_params(**{key: not value})
            if flipped.__sklearn_tags__().input_tags.sparse:
                return flipped
    return None


ESTIMATORS = list(estimators_under_test())
SPARSE = {type(est).__name__: inst for est in ESTIMATORS if (inst := _sparse_instance(est)) is not None}
WEIGHTED = {type(est).__name__: est for est in ESTIMATORS if takes_sample_weight(est)}
#: Accept sparse X only with a non-default parameter: scikit-learn's sparse checks run on these here.
SPARSE_ONLY_WITH_PARAMS = [
    SPARSE[type(est).__name__]
    for est in ESTIMATORS
    if type(est).__name__ in SPARSE and not est.__sklearn_tags__().input_tags.sparse
]


def _accepts_sparse(function):
    """Whether ``function`` runs on a small CSR matrix (its records the rows)."""
    params = inspect.signature(function).parameters
    kwargs = {"epsilon": 1.0, "random_state": 0}
    kwargs.update({"axis": 0} if "axis" in params else {})
    kwargs.update({"q": 50.0 if function is stats.percentile else 0.5} if "q" in params else {})
    kwargs.update({"range": [(0.0, 1.0)] * (2 if function is stats.histogramdd else 1)} if "range" in params else {})
    X = sp.csr_matrix(np.array([[0.0, 0.5], [0.25, 0.0], [0.0, 0.0], [0.75, 1.0]]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            function(X, **kwargs)
    except (TypeError, ValueError):
        return False
    return True


SPARSE_STATISTICS = {name for name in public_statistics() if _accepts_sparse(getattr(stats, name[len("stats.") :]))}


def test_the_paths_are_found():
    """Check that the derivation finds what issue 16 made sparse and weighted (it is not vacuous)."""
    assert {"MultinomialNB", "LogisticRegression", "RandomForestClassifier", "StandardScaler"} <= set(SPARSE)
    assert "MinMaxScaler" not in SPARSE and "GaussianNB" in WEIGHTED
    assert {"stats.mean", "stats.histogram", "stats.histogramdd"} <= SPARSE_STATISTICS


def test_every_sparse_estimator_has_a_sparse_audit():
    """Check that an estimator accepting sparse X cannot skip the audit on sparse neighbours."""
    missing = set(SPARSE) - set(SPARSE_AUDITS) - set(NOT_AUDITED)
    assert not missing, f"add a SPARSE_CASES entry (dpsk/utils/_testing/sparse.py) for {sorted(missing)}"
    assert set(SPARSE_AUDITS) <= set(SPARSE), "stale entries in SPARSE_CASES"


def test_every_weighted_estimator_has_a_weighted_audit():
    """Check that an estimator taking sample_weight cannot skip the audit on weighted neighbours."""
    missing = set(WEIGHTED) - set(WEIGHTED_AUDITS) - set(NOT_AUDITED)
    assert not missing, f"add a dense audit (ESTIMATOR_AUDITS) for {sorted(missing)}: its weighted one follows"
    missing = (set(SPARSE) & set(WEIGHTED)) - set(SPARSE_WEIGHTED_AUDITS) - set(NOT_AUDITED)
    assert not missing, f"sparse and weighted, without a sparse weighted audit: {sorted(missing)}"


def test_every_sparse_statistic_has_a_sparse_audit():
    """Check that a dpsk.stats function accepting sparse X cannot skip the audit on sparse neighbours."""
    missing = SPARSE_STATISTICS - {f"stats.{name.split(',')[0]}" for name in SPARSE_STAT_AUDITS}
    assert not missing, f"add a SPARSE_STAT_AUDITS entry (dpsk/utils/_testing/sparse.py) for {sorted(missing)}"


def _check_data(estimator, *, sparse, weighted, n_features=5):
    data = make_check_data(estimator, n_features=n_features)
    if sparse:
        X = np.asarray(data["X"], dtype=np.float64)
        X[np.abs(X) < np.quantile(np.abs(X), 0.5)] = 0.0  # half the entries implicit
        data = {**data, "X": sp.csr_matrix(X)}
    if weighted:
        n = data["X"].shape[0]
        data = {**data, "sample_weight": (np.arange(n) % 4) * 0.75}  # 0, 0.75, 1.5 (clipped to 1), 2.25
    return data


@pytest.mark.parametrize(
    "estimator, sparse, weighted",
    [(est, False, True) for est in WEIGHTED.values()]
    + [(est, True, False) for est in SPARSE.values()]
    + [(est, True, True) for name, est in SPARSE.items() if name in WEIGHTED],
    ids=lambda v: type(v).__name__ if not isinstance(v, bool) else str(v),
)
def test_releases_match_declared_cost(estimator, sparse, weighted):
    """Check the recording harness on the sparse, weighted and sparse weighted fits."""
    data = _check_data(estimator, sparse=sparse, weighted=weighted)
    est = _prepared(estimator, {k: v for k, v in data.items() if k != "sample_weight"}, random_state=0)
    with record_releases() as drawn:
        _fit_quietly(est, data)
    assert _leaves(drawn) == _leaves([est.privacy_spent_])


@pytest.mark.filterwarnings("ignore::dpsk.exceptions.PrivacyLeakWarning")
@parametrize_with_checks(SPARSE_ONLY_WITH_PARAMS, expected_failed_checks=expected_failed_checks)
def test_sklearn_checks_on_sparse_instances(estimator, check):
    """scikit-learn's checks, with its sparse ones, on instances that accept sparse X by a parameter."""
    check(estimator)


@pytest.mark.parametrize(
    "estimator", [est for name, est in SPARSE.items() if name in WEIGHTED], ids=lambda e: type(e).__name__
)
def test_sparse_bootstrap_counts_count_once(estimator):
    """Check check_sample_weight_counts_once's property on sparse X: weights k > 1 give the fit of
    weight 1 (same noise), so a row repeated through its weight counts once on the sparse path too."""
    data = _check_data(estimator, sparse=True, weighted=False)
    counts = np.arange(data["X"].shape[0]) % 4  # 0 (left out), 1, 2 and 3 copies
    fits = [
        _fitted_float_arrays(
            _fit_quietly(_prepared(estimator, data, random_state=np.random.PCG64(11)), {**data, "sample_weight": w})
        )
        for w in (counts, (counts > 0).astype(np.float64))
    ]
    assert fits[0].keys() == fits[1].keys()
    for key in fits[0]:
        np.testing.assert_array_equal(fits[0][key], fits[1][key], err_msg=key)
