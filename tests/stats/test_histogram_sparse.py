# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.stats histogram and histogramdd on scipy.sparse X (issue 16).

The stored values are counted as numpy counts them and the implicit zeros in the bin of
0, without a dense copy of the data (``no_densifying``): the release is bitwise the dense
one under the same noise (the same fresh bit generator).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpsk import stats
from dpsk.exceptions import PrivacyLeakWarning


def _data(n=700, d=3, seed=0, zeros=0.6):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 2.0, (n, d))
    X[rng.random(X.shape) < zeros] = 0.0
    X[3, 1] = 2.0  # on the last edge of the range (-1, 2): in the last bin, as numpy counts it
    X[4, 0] = -1.5  # below the range: not counted
    return X


def _same(dense, sparse):
    (a, a_edges), (b, b_edges) = dense, sparse
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype
    for e, f in zip(
        a_edges if isinstance(a_edges, list) else [a_edges], b_edges if isinstance(b_edges, list) else [b_edges]
    ):
        np.testing.assert_array_equal(e, f)


def _run(function, X, **kwargs):
    return getattr(stats, function)(X, epsilon=1.0, random_state=np.random.PCG64(3), **kwargs)


HISTOGRAM_BINS = [
    dict(bins=5, range=(-1, 2)),  # equal widths: numpy's linear-index path
    dict(bins=[-1.0, -0.5, 0.0, 0.5, 2.0]),  # edges: 0 on an inner edge
    dict(bins=4, range=(0.5, 1.5)),  # 0 outside the range: the implicit zeros are not counted
    dict(bins=3, range=(-1, 2), density=True),
]


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("kwargs", HISTOGRAM_BINS)
def test_sparse_histogram_is_the_dense_release(kwargs, fmt, no_densifying):
    """Check that histogram on sparse X releases bitwise the dense counts (every value of a record counted)."""
    X = _data()
    _same(_run("histogram", X, **kwargs), _run("histogram", sp.csr_matrix(X).asformat(fmt), **kwargs))


HISTOGRAMDD_BINS = [
    dict(bins=4, range=[(-1, 2)] * 3),
    dict(bins=[3, [-1.0, 0.0, 0.5, 2.0], 2], range=[(-1, 2), None, (0.5, 2)]),
    dict(bins=2, range=[(-1, 2)] * 3, density=True),
]


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("kwargs", HISTOGRAMDD_BINS)
def test_sparse_histogramdd_is_the_dense_release(kwargs, fmt, no_densifying):
    """Check that histogramdd on sparse X (a record is a point) releases bitwise the dense counts."""
    X = _data()
    _same(_run("histogramdd", X, **kwargs), _run("histogramdd", sp.csr_matrix(X).asformat(fmt), **kwargs))


@pytest.mark.parametrize("function", ["histogram", "histogramdd"])
def test_sparse_float32_integers_and_errors(function, no_densifying):
    """Check float32 and integer sparse X, and the DPResult (noise, interval) of return_error."""
    X = np.round(_data(seed=1) * 2)
    kwargs = dict(bins=3, range=(-2, 4)) if function == "histogram" else dict(bins=3, range=[(-2, 4)] * 3)
    for dtype in (np.float32, np.int64):
        _same(_run(function, X.astype(dtype), **kwargs), _run(function, sp.csr_matrix(X.astype(dtype)), **kwargs))
    (dense, _), (sparse, _) = (_run(function, M, return_error=True, **kwargs) for M in (X, sp.csr_matrix(X)))
    np.testing.assert_array_equal(dense.value, sparse.value)
    np.testing.assert_array_equal(dense.noise_std, sparse.noise_std)
    np.testing.assert_array_equal(dense.confidence_interval()[0], sparse.confidence_interval()[0])
    assert dense.privacy_spent == sparse.privacy_spent


@pytest.mark.parametrize("function", ["histogram", "histogramdd"])
def test_sparse_user_level(function, no_densifying):
    """Check the user-level (weighted) counts on sparse X: the dense release."""
    X = _data(seed=2)
    groups = np.arange(X.shape[0]) // 7
    kwargs = dict(bins=3, range=(-1, 2)) if function == "histogram" else dict(bins=3, range=[(-1, 2)] * 3)
    for bound in (dict(threshold=5), dict(contribution_bound="limit", threshold=3)):
        _same(
            _run(function, X, groups=groups, **bound, **kwargs),
            _run(function, sp.csr_matrix(X), groups=groups, **bound, **kwargs),
        )


@pytest.mark.parametrize("on_invalid", ["drop", "clip"])
@pytest.mark.parametrize("function", ["histogram", "histogramdd"])
def test_sparse_screening(function, on_invalid, no_densifying):
    """Check on_invalid="drop"/"clip" on sparse X: the records screened as the dense ones."""
    X = _data(seed=3)
    X[5, 1], X[9, 2], X[11, 0] = np.nan, np.inf, -np.inf
    kwargs = dict(bins=3, range=(-1, 2)) if function == "histogram" else dict(bins=3, range=[(-1, 2)] * 3)
    _same(
        _run(function, X, on_invalid=on_invalid, **kwargs),
        _run(function, sp.csr_matrix(X), on_invalid=on_invalid, **kwargs),
    )
    with pytest.raises(ValueError, match="NaN or infinity"):
        _run(function, sp.csr_matrix(X), **kwargs)


@pytest.mark.parametrize("zeros", [0.6, 0.0])
@pytest.mark.parametrize("function", ["histogram", "histogramdd"])
def test_sparse_data_range_includes_implicit_zeros(function, zeros, no_densifying):
    """Check the data-derived range (no `range`: warned) on sparse X: the dense one, implicit zeros included."""
    X = np.abs(_data(seed=4, zeros=zeros)) + 0.5 * (zeros == 0.0)  # no zero at all, or implicit zeros
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        _same(_run(function, X, bins=3), _run(function, sp.csr_matrix(X), bins=3))
    with pytest.warns(PrivacyLeakWarning):
        _run(function, sp.csr_matrix(X), bins=3)
