# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy audits of the sparse paths (scipy.sparse X), and broken sparse variants.

A sparse row is a row: each audit is the dense audit of the same estimator
(``dpsk.utils._testing.registry.ESTIMATOR_AUDITS``, same neighbours, projection and
number of fits), with X handed over as a CSR matrix, so the fits run the sparse kernels
(``dpsk._core._sparse``). Where the dense neighbours hold no zero, an all-zero column is
appended to the rows and the canary, so that implicit zeros are part of every fit.

Broken variants (declare the correct cost, as in ``family.py``):

* ``MultinomialNBSparseNoClipping``: the sparse rows of the exact class table skip the L1 clip
  (the dense ``MultinomialNBNoClipping`` breaks the dense path only, which sparse X
  never reaches: the sparse path needs its own broken variant);
* ``StandardScalerSparseNoClipping``: the sparse exact moments with a box that clips nothing;
* ``LogisticRegressionSparseNoClipping``: sparse rows not clipped to ``data_norm``;
* ``DecisionTreeClassifierSparseRowsTwice``: every sparse row routed twice (as blocks that
  overlap would), where the leaf counts declare sensitivity 1;
* ``RandomForestClassifierSparseEveryTree``, ``RandomForestRegressorSparseEveryTree``: every
  sparse row fed to every tree (as block routing that drops the rows' parts would), while
  the noise and the declared cost are those of disjoint parts.

``SPARSE_STAT_CASES``: the item-level audits of :mod:`dpsk.stats` (those in
``tests/stats/test_stats_privacy.py``) on CSR records, for every statistic that takes
sparse X; their broken variants are in ``tests/privacy/test_sparse_privacy.py``
(monkeypatched: the sparse moments unclipped, sparse histogram values counted twice).
"""

import numpy as np
import scipy.sparse as sp

from dpsk import stats
from dpsk.accounting import ComposedEvent, PureDPEvent, get_epsilon
from dpsk.audit import canary_neighbours, statistic_estimator
from dpsk.ensemble import RandomForestClassifier, RandomForestRegressor
from dpsk.linear_model import LogisticRegression
from dpsk.naive_bayes import MultinomialNB
from dpsk.tree import DecisionTreeClassifier
from dpsk.utils._testing.family import HUGE, StandardScalerNoClipping

__all__ = [
    "SPARSE_BOUNDS_CASES",
    "SPARSE_BROKEN_VARIANTS",
    "SPARSE_CASES",
    "SPARSE_STAT_CASES",
    "as_pure_claim",
    "bounds_neighbours",
    "sparse_audit",
]

#: Dense audits run on CSR data: {name: (name of the dense audit, parameters to change, zero column)}.
SPARSE_CASES = {
    "MultinomialNB": ("MultinomialNB", {}, True),
    "BernoulliNB": ("BernoulliNB", {}, True),
    "StandardScaler": ("StandardScaler", {"with_mean": False}, True),
    "KMeans": ("KMeans", {}, False),
    "LogisticRegression": ("LogisticRegression", {}, True),
    "LinearSVC": ("LinearSVC", {}, False),  # its rows sit at x = 0: implicit zeros already
    "LinearRegression": ("LinearRegression", {}, True),
    "Ridge": ("Ridge", {}, True),
    # The trees' audits predict on the one-feature canary: no extra column. The classifier's
    # rows sit at x = 0 (implicit zeros); the regressor's at x = -1 (stored).
    "DecisionTreeClassifier": ("DecisionTreeClassifier", {}, False),
    "DecisionTreeRegressor": ("DecisionTreeRegressor", {}, False),
    # The forests' audits (two trees, disjoint parts of the rows) as the trees': no extra column.
    "RandomForestClassifier": ("RandomForestClassifier", {}, False),
    "RandomForestRegressor": ("RandomForestRegressor", {}, False),
}


def _as_sparse(neighbours, zero_column):
    """``neighbours(estimator)`` with X as CSR (optionally with an all-zero column appended)."""

    def make(estimator=None):
        pair = neighbours(estimator)
        out = []
        for data in pair:
            X = np.asarray(data["X"], dtype=np.float64)
            if zero_column:
                X = np.hstack([X, np.zeros((X.shape[0], 1))])
            M = sp.csr_matrix(X)
            M.eliminate_zeros()
            out.append({**data, "X": M})
        return tuple(out)

    return make


def sparse_audit(dense, changes, zero_column, cls=None):
    """The EstimatorAudit ``dense`` on CSR data, with the estimator's parameters ``changes``;
    ``cls`` replaces the estimator's class (the broken variants)."""
    from dpsk.utils._testing.registry import EstimatorAudit

    params = {**dense.estimator.get_params(deep=False), **changes}
    return EstimatorAudit(
        (cls or type(dense.estimator))(**params),
        dense.projection,
        _as_sparse(dense.neighbours, zero_column),
        dense.n_samples,
        dense.audit_params,
    )


class MultinomialNBSparseNoClipping(MultinomialNB):
    def _class_table(self, X, y_index, n_classes, k, top, units):
        if sp.issparse(X):  # sparse rows not clipped (the sensitivity still declares top)
            top = int(HUGE * 2**k)
        return super()._class_table(X, y_index, n_classes, k, top, units)


class StandardScalerSparseNoClipping(StandardScalerNoClipping):
    pass


class LogisticRegressionSparseNoClipping(LogisticRegression):
    def _clip_rows(self, X, data_norm, lower, upper):
        return sp.csr_matrix(X, dtype=np.float64)  # scaled by S as if ‖x‖ <= R, but not clipped


class DecisionTreeClassifierSparseRowsTwice(DecisionTreeClassifier):
    def fit(self, X, y, sample_weight=None):
        if sp.issparse(X):  # each sparse row counted in two blocks
            X, y = sp.vstack([X, X]).tocsr(), np.concatenate([y, y])
            sample_weight = None if sample_weight is None else np.concatenate([sample_weight, sample_weight])
        return super().fit(X, y, sample_weight)


class _SparseEveryTree:
    """Mixin for the forests: on sparse X, the rows stacked once per tree, copy t in tree t."""

    def fit(self, X, y, sample_weight=None):
        self._every_tree = sp.issparse(X) and self.n_estimators > 1
        if self._every_tree:
            k = self.n_estimators
            X, y = sp.vstack([X] * k).tocsr(), np.tile(y, k)
            sample_weight = None if sample_weight is None else np.tile(sample_weight, k)
        return super().fit(X, y, sample_weight)

    def _parts(self, rng, n_trees, n_samples):
        part = super()._parts(rng, n_trees, n_samples)  # same random stream as the correct forest
        if not self._every_tree:
            return part
        return np.repeat(np.arange(n_trees, dtype=np.intp), n_samples // n_trees)


class RandomForestClassifierSparseEveryTree(_SparseEveryTree, RandomForestClassifier):
    pass


class RandomForestRegressorSparseEveryTree(_SparseEveryTree, RandomForestRegressor):
    pass


#: (name in SPARSE_AUDITS, broken variant)
SPARSE_BROKEN_VARIANTS = [
    ("MultinomialNB", MultinomialNBSparseNoClipping),
    ("StandardScaler", StandardScalerSparseNoClipping),
    ("LogisticRegression", LogisticRegressionSparseNoClipping),
    ("DecisionTreeClassifier", DecisionTreeClassifierSparseRowsTwice),
    ("RandomForestClassifier", RandomForestClassifierSparseEveryTree),
    ("RandomForestRegressor", RandomForestRegressorSparseEveryTree),
]


# -- dpsk.stats on sparse X (reductions along axis 0, histograms) ------------------------------


def _stat_neighbours(low=0.0, canary=4.0, high=None, n=50, columns=1):
    """The item-level neighbours of tests/stats/test_stats_privacy.py as CSR: ``n`` records at
    ``low`` (half at ``high`` if given) and the canary, in ``columns`` equal columns. Records
    at 0 are implicit zeros."""
    X = np.full((n, columns), low)
    if high is not None:
        X[n // 2 :] = high
    pair = canary_neighbours(X, canary_X=np.full(columns, canary))
    out = []
    for data in pair:
        M = sp.csr_matrix(data["X"])
        M.eliminate_zeros()
        out.append({"X": M})
    return lambda estimator=None: tuple(out)


def as_pure_claim(event):
    """The claim as a composition of pure-ε events (the audit's profiles do not cover every
    event type, e.g. the exponential mechanism's; the pure ε of each release is implied by
    it, so no validity is lost)."""
    leaves = event.events if isinstance(event, ComposedEvent) else (event,)
    return ComposedEvent(tuple(PureDPEvent(get_epsilon(leaf, 0.0)) for leaf in leaves))


def _stat_audit(function, neighbours, **params):
    """``(estimator, neighbours)`` of ``function`` at ε = 1 (as the dense audits)."""
    return statistic_estimator(function, epsilon=1.0, **params), neighbours


def _quantile_neighbours(estimator=None):
    """As tests/stats/test_stats_privacy.py: 4 records at 0.05, 2 at 0.65, 44 at 0.85 and a
    canary below the range, so that the gaps around the target rank 5 move by the score's
    full range."""
    X = np.concatenate([np.full(4, 0.05), np.full(2, 0.65), np.full(44, 0.85)])[:, None]
    return tuple({"X": sp.csr_matrix(d["X"])} for d in canary_neighbours(X, canary_X=[-4.0]))


def bounds_neighbours(canary, X):
    """``X`` (one column) and the ``canary`` row, as CSR with its zeros implicit."""
    pair = canary_neighbours(np.asarray(X, dtype=np.float64)[:, None], canary_X=[canary])
    return lambda estimator=None: tuple({"X": sp.csr_matrix(d["X"])} for d in pair)


#: dpsk.stats.bounds on CSR records: {name: (estimator, neighbours, projection index of value_)}.
#: The log histogram's upper bound: 11 rows in [2, 4) and 100 zeros (implicit); the canary in
#: [2, 4) moves P(upper = 4) from about 0.26 to 0.71 at ε = 1 (the grown box's threshold
#: sits there; measured). The median of the row norms: 25 zero rows, 25 of norm 4 and the
#: canary at 4 (tests/stats/test_bounds.py's audit with its norm-1 rows at 0).
SPARSE_BOUNDS_CASES = {
    "bounds, log histogram": (
        statistic_estimator(stats.bounds, epsilon=1.0),
        bounds_neighbours(3.0, np.concatenate([np.full(11, 3.0), np.zeros(100)])),
        1,
    ),
    "bounds, row norm": (
        statistic_estimator(stats.bounds, epsilon=1.0, which="row_norm", quantiles=0.5, domain=8.0),
        bounds_neighbours(4.0, np.concatenate([np.zeros(25), np.full(25, 4.0)])),
        None,
    ),
}

#: {name: (statistic as an estimator, neighbours)}: the statistics' dense item-level audits
#: (tests/stats/test_stats_privacy.py) on CSR records:
#: the same neighbours, where records at the lower value sit at 0 when that changes no bin
#: (median: 0.1 -> 0 in the bin [0, 0.25); histogram: 0.25 -> 0 in the bin [0, 0.5)), so
#: that the implicit zeros are counted. The quantiles keep their stored values (the fine
#: grid's gaps are the audit). Each audited by the pure ε its declared cost implies.
SPARSE_STAT_CASES = {
    "mean": _stat_audit(stats.mean, _stat_neighbours(), bounds=(0, 1)),
    "var": _stat_audit(stats.var, _stat_neighbours(), bounds=(0, 1)),
    "std": _stat_audit(stats.std, _stat_neighbours(), bounds=(0, 1)),
    "sum": _stat_audit(stats.sum, _stat_neighbours(), bounds=(-1, 1)),
    "count": _stat_audit(stats.count, _stat_neighbours(), bounds_name=None),
    "median": _stat_audit(stats.median, _stat_neighbours(high=0.9), bounds=(0, 1), bins=4),
    "quantile, fine grid": _stat_audit(stats.quantile, _quantile_neighbours, bounds=(0, 1), q=0.1),
    "percentile, fine grid": _stat_audit(stats.percentile, _quantile_neighbours, bounds=(0, 1), q=10.0),
    "histogram": _stat_audit(
        stats.histogram, _stat_neighbours(canary=0.75), bounds=(0, 1), bounds_name="range", bins=2
    ),
    "histogramdd": _stat_audit(
        stats.histogramdd, _stat_neighbours(canary=0.75, columns=2), bounds=[(0, 1)] * 2, bounds_name="range", bins=2
    ),
}
