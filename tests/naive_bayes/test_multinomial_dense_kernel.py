# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""MultinomialNB's dense table kernel reads each row's nonzero values only (issue 16, slow
paths): the same integers as the CSR path and as the numpy reference of the steps."""

import numpy as np
import pytest
import scipy.sparse as sp

from dpsk._core._sparse import multinomial_table
from dpsk.naive_bayes._discrete import _ROW_BITS, _dense_row_sums, _multinomial_grid, _row_units


def _reference(D, y, n_classes, k, top, units):
    table = np.zeros((n_classes, 1 + D.shape[1]), dtype=np.int64)
    q = _row_units(D, D.max(axis=1, initial=0.0), np.arange(D.shape[0])[:, None], _dense_row_sums, k, top)
    for i in range(D.shape[0]):
        table[y[i], 0] += units[i] << k
        table[y[i], 1:] += units[i] * q[i]
    return table


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("data_norm", [1e-3, 1.0, 13.0, 1e6])
def test_dense_table_is_the_sparse_and_reference_table(dtype, data_norm):
    rng = np.random.default_rng(7)
    D = rng.exponential(size=(400, 37)) * (rng.uniform(size=(400, 37)) < 0.15)
    D[0] = 0.0  # an empty row
    D[1] = -0.0  # negative zeros are zeros
    D[2, 5] = -0.0
    D[3] = rng.exponential(size=37)  # a dense row
    D[4, -1] = 1e-300  # a tiny value at the end of a row
    D = D.astype(dtype)
    y = rng.integers(0, 3, size=400).astype(np.intp)
    units = rng.integers(0, 1025, size=400).astype(np.int64)
    k, top = _multinomial_grid(data_norm)
    with np.errstate(all="ignore"):
        expected = _reference(D.astype(np.float64), y, 3, k, top, units)
    got = multinomial_table(D, y, 3, k, top, units, _ROW_BITS)
    assert got.tobytes() == expected.tobytes()
    assert got.tobytes() == multinomial_table(sp.csr_matrix(D), y, 3, k, top, units, _ROW_BITS).tobytes()


@pytest.mark.parametrize("bad", [-1.0, -1e-300, np.nan, np.inf])
def test_dense_table_refuses_negative_and_non_finite(bad):
    D = np.ones((3, 4))
    D[1, 2] = bad
    with pytest.raises(ValueError, match="non-negative and finite"):
        multinomial_table(D, np.zeros(3, dtype=np.intp), 1, 3, 100, None, _ROW_BITS)
