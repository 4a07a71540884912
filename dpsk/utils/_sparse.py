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

__all__ = [
    "ACCEPT_SPARSE",
    "refuse_sparse_screening",
    "row_sums_max",
    "sparse_data",
]

#: ``accept_sparse`` of the estimators that take sparse X (CSC and COO become CSR).
ACCEPT_SPARSE = ("csr", "csc", "coo")


def sparse_data(X):
    """The stored values of a sparse X (a view), or None for a dense X."""
    if sp.issparse(X):
        return X.data
    return None


def refuse_sparse_screening(X, on_invalid):
    """Raise TypeError for sparse X under ``on_invalid="drop"``/``"clip"`` (not supported yet).

    Depends only on the type of X, never on its values: no release.
    """
    if sp.issparse(X):
        raise TypeError(
            f'on_invalid="{on_invalid}" is not supported for sparse X yet: pass on_invalid="raise" '
            "(sparse X is then validated like dense X) or dense X"
        )


def row_sums_max(X):
    """The largest row sum of X (dense or sparse), 0.0 for no rows (data-derived bounds only)."""
    sums = np.asarray(X.sum(axis=1)).ravel()
    return float(np.max(sums, initial=0.0))
