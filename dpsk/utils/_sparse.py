# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sparse input (scipy.sparse X) in the estimators: the few decisions shared by their sparse branches.

The kernels are in ``dpsk._core._sparse`` (bitwise the dense kernels on the densified
data); this module holds what the estimators decide around them. A sparse row is a
row: sensitivities, bounds and accounting do not depend on the storage format, and
nothing here reads a value before the budget check of the estimator's ``fit``.
"""

import numpy as np
import scipy.sparse as sp

from dpsk._core._exact_sums import exact_moments
from dpsk._core._sparse import csr_exact_moments

__all__ = [
    "ACCEPT_SPARSE",
    "column_min_max",
    "exact_moments_of",
    "map_values",
    "refuse_sparse",
    "row_norms_l2",
    "row_sums_max",
    "rows_all",
    "screen_sparse_rows",
]

#: ``accept_sparse`` of the estimators that take sparse X (CSC and COO become CSR).
ACCEPT_SPARSE = ("csr", "csc", "coo")


def screen_sparse_rows(on_invalid, X, keep, infinite):
    """``screen_invalid`` for sparse X (``on_invalid`` "drop" or "clip"): ``(values, keep)``.

    A row is judged by its stored values, as the dense row by all of its values (the
    implicit zeros are finite): under "drop" (or ``infinite="drop"``) rows holding a
    non-finite value are removed, under "clip" rows holding NaN, and with
    ``infinite="clip"`` ±inf become the largest finite values of the dtype (a sparse
    copy of the stored values only then). A function of each row alone.
    """
    X = sp.csr_matrix(X)
    data = X.data
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    bad = ~np.isfinite(data) if on_invalid == "drop" or infinite == "drop" else np.isnan(data)
    keep = keep & ~np.bincount(rows[bad], minlength=X.shape[0]).astype(bool)
    if on_invalid == "clip" and infinite == "clip" and np.isinf(data).any():
        largest = np.finfo(data.dtype).max
        X = sp.csr_matrix((np.where(np.isinf(data), np.copysign(largest, data), data), X.indices, X.indptr), X.shape)
    return X, keep


def rows_all(X, predicate):
    """Whether ``predicate`` holds for every value of each row of X (dense or sparse).

    Sparse X: the stored values decide (``predicate(0)`` must hold: the implicit zeros).
    """
    if not sp.issparse(X):
        return np.all(predicate(X), axis=1)
    if not predicate(np.zeros(1))[0]:
        raise ValueError("rows_all on sparse X needs a predicate that holds for 0")
    X = sp.csr_matrix(X)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    return ~np.bincount(rows[~predicate(X.data)], minlength=X.shape[0]).astype(bool)


def map_values(X, func):
    """``func`` applied to every value of X; on sparse X to the stored values (``func(0)``
    must be 0: the implicit zeros), a sparse copy."""
    if not sp.issparse(X):
        return func(X)
    if func(np.zeros(1))[0] != 0:
        raise ValueError("map_values on sparse X needs a function that maps 0 to 0")
    X = sp.csr_matrix(X)
    return sp.csr_matrix((func(X.data), X.indices, X.indptr), shape=X.shape)


def row_sums_max(X):
    """The largest row sum of X (dense or sparse), 0.0 for no rows (data-derived bounds only)."""
    sums = np.asarray(X.sum(axis=1)).ravel()
    return float(np.max(sums, initial=0.0))


def column_min_max(X):
    """(minimum, maximum) of each column of X, implicit zeros included (data-derived bounds only)."""
    if sp.issparse(X):
        return X.min(axis=0).toarray().ravel(), X.max(axis=0).toarray().ravel()
    return np.min(X, axis=0), np.max(X, axis=0)


def row_norms_l2(X):
    """The L2 norm of each row of X (float64; data-derived bounds only)."""
    if sp.issparse(X):
        return np.sqrt(np.asarray(sp.csr_matrix(X, dtype=np.float64).multiply(X).sum(axis=1)).ravel())
    return np.linalg.norm(np.asarray(X, dtype=np.float64), axis=1)


def exact_moments_of(X, lower, upper, y_index=None, n_classes=1, sample_weight=None, squares=True):
    """``exact_moments`` of X, dense or sparse (bitwise the same integers for the same values;
    ``squares=False`` may leave out the sums of squares)."""
    if sp.issparse(X):
        return csr_exact_moments(X, lower, upper, y_index, n_classes, sample_weight)
    return exact_moments(X, lower, upper, y_index, n_classes, sample_weight, squares=squares)


def refuse_sparse(X, what, alternative):
    """TypeError for sparse X where ``what`` has no sparse path (a type check: no release)."""
    if sp.issparse(X):
        raise TypeError(f"{what} does not support sparse input; {alternative}")
