# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""k-means' compiled labels: the nearest centre of each clipped row, by the documented rule."""

import numpy as np
import pytest

from dpsk._core._kmeans import nearest_centres


def _reference(X, lower, upper, centres):
    """The rule of ``nearest_centres`` in numpy: rows clipped in float64, each score's dot
    product summed in feature order (elementwise, so no reordering), first minimum."""
    rows = np.clip(X.astype(np.float64), lower, upper)
    acc = np.zeros((X.shape[0], centres.shape[0]))
    for t in range(X.shape[1]):
        acc += rows[:, t : t + 1] * centres[:, t]
    return np.argmin(np.einsum("ij,ij->i", centres, centres) - 2.0 * acc, axis=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, d, k", [(0, 3, 2), (1, 1, 1), (63, 4, 3), (1000, 7, 8), (4097, 20, 33)])
def test_labels_follow_the_rule(dtype, n, d, k):
    rng = np.random.default_rng(n + d + k)
    X = (rng.normal(size=(n, d)) * 3).astype(dtype)
    lower, upper = np.full(d, -2.0), np.full(d, 2.5)  # some rows clipped
    centres = rng.normal(size=(k, d))
    labels = nearest_centres(X, lower, upper, centres)
    assert labels.dtype == np.intp
    np.testing.assert_array_equal(labels, _reference(X, lower, upper, centres))
    np.testing.assert_array_equal(nearest_centres(X, lower, upper, centres, n_threads=1), labels)


def test_ties_go_to_the_first_centre_and_bad_centres_are_refused():
    X = np.zeros((5, 2))
    centres = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    np.testing.assert_array_equal(nearest_centres(X, [-1, -1], [1, 1], centres), 0)
    with pytest.raises(ValueError, match="centres"):
        nearest_centres(X, [-1, -1], [1, 1], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="centres"):
        nearest_centres(X, [-1, -1], [1, 1], np.zeros((0, 2)))
    with pytest.raises(ValueError, match="finite"):
        nearest_centres(X, [-1, -1], [1, 1], np.full((2, 2), np.nan))
