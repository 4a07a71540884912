# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from dpsk.datasets import ADULT_SCHEMA, load_adult


def test_load_adult_shapes_and_public_encoding():
    """Check the documented split sizes, the [0, 1] range and the public row-norm bound."""
    train = load_adult()
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    assert train.data.shape == (32561, 107)
    assert X_test.shape == (16281, 107)
    assert len(train.feature_names) == 107
    for X in (train.data, X_test):
        assert X.min() >= 0.0 and X.max() <= 1.0
        assert np.linalg.norm(X, axis=1).max() <= train.data_norm
    # the documented positive rates
    assert abs(train.target.mean() - 7841 / 32561) < 1e-12
    assert abs(y_test.mean() - 3846 / 16281) < 1e-12
    # one-hot blocks: exactly one 1 per categorical field
    n_numeric = len(ADULT_SCHEMA["numeric"])
    assert np.all(train.data[:, n_numeric:].sum(axis=1) == len(ADULT_SCHEMA["categorical"]))


def test_load_adult_rejects_unknown_subset():
    with pytest.raises(ValueError, match="subset"):
        load_adult(subset="validation")
