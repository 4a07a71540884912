# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""LinearRegression/Ridge: the declared sensitivity holds for the *computed* statistics (issue 14, 1).

Fits on D and on D′ = D plus one record, with identical noise (``dpsk.audit.rounding_probe``:
a fresh PCG64 per fit), record the values handed to the mechanisms; their change must not
exceed the mechanisms' declared sensitivity. D: 2·10⁵ rows with a large common offset in a
narrow public window (UNIX timestamps of one hour per feature, a target likewise). The
record sits at the upper corner of the box, where the real-number change of the statistics
*equals* the sensitivity: any rounding of the computed sums that goes the wrong way, or an
ulp of float error in the standardisation, shows as a ratio above 1.
"""

import numpy as np
import pytest

from dpsk.audit import rounding_probe
from dpsk.linear_model import LinearRegression, Ridge

N = 200_000
LOWER, UPPER = 1.7e9, 1.7e9 + 3600.0
Y_LOWER, Y_UPPER = 1.6e9, 1.6e9 + 7200.0


def neighbours(dtype, d=3, first=False):
    rng = np.random.default_rng(0)
    X = (LOWER + rng.uniform(0, 3600, (N, d))).astype(dtype)
    y = Y_LOWER + rng.uniform(0, 7200, N)
    X1 = np.vstack([X, np.full((1, d), UPPER, dtype=dtype)])
    y1 = np.append(y, Y_UPPER)
    if first:  # the record first: every partial sum differs
        X1, y1 = np.roll(X1, 1, axis=0), np.roll(y1, 1)
    return {"X": X, "y": y}, {"X": X1, "y": y1}


@pytest.mark.parametrize("row_norm", [None, 2500.0])
@pytest.mark.parametrize("first", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
@pytest.mark.parametrize("Estimator", [LinearRegression, Ridge])
def test_offset_record_within_sensitivity(Estimator, delta, dtype, first, row_norm):
    """Before the exact sums: 1 + 4e-13 times the sensitivity with row_norm (Laplace, record last)."""
    estimator = Estimator(
        epsilon=1.0, delta=delta, bounds_X=(LOWER, UPPER), bounds_y=(Y_LOWER, Y_UPPER), row_norm=row_norm
    )
    probe = rounding_probe(estimator, neighbours(dtype, first=first), rtol=0.0)
    assert probe.n_releases[0] > 0
    assert probe.passed, str(probe)


@pytest.mark.parametrize("Estimator", [LinearRegression, Ridge])
def test_offset_record_row_norm_and_weights(Estimator):
    """The ball path (row_norm) and sample weights reach the same bound."""
    D, D1 = neighbours(np.float64)
    rng = np.random.default_rng(1)
    w = rng.uniform(0, 1, N)
    D["sample_weight"], D1["sample_weight"] = w, np.append(w, 1.0)
    estimator = Estimator(epsilon=1.0, bounds_X=(LOWER, UPPER), bounds_y=(Y_LOWER, Y_UPPER), row_norm=2500.0)
    probe = rounding_probe(estimator, (D, D1), rtol=0.0)
    assert probe.n_releases[0] > 0
    assert probe.passed, str(probe)


@pytest.mark.parametrize("Estimator", [LinearRegression, Ridge])
def test_statistics_do_not_depend_on_row_order(Estimator):
    """Exact sums: a permutation of the rows hands the mechanisms bit-identical values
    (float sums differ in the last bits with the order, which the margin cannot bound for every n)."""
    D, _ = neighbours(np.float64)
    order = np.random.default_rng(2).permutation(N)
    permuted = {key: value[order] for key, value in D.items()}
    estimator = Estimator(epsilon=1.0, bounds_X=(LOWER, UPPER), bounds_y=(Y_LOWER, Y_UPPER))
    probe = rounding_probe(estimator, (D, permuted), rtol=0.0)
    assert probe.n_releases[0] > 0
    assert probe.ratio == 0.0, str(probe)
