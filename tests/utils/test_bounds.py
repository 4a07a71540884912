# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Bounds given as lists, or per feature name (dict) with a DataFrame's feature_names_in_."""

import numpy as np
import pytest

from dpsk.decomposition import PCA
from dpsk.linear_model import LinearRegression, LogisticRegression
from dpsk.naive_bayes import GaussianNB
from dpsk.preprocessing import StandardScaler
from dpsk.utils import check_bounds

X = np.random.default_rng(0).uniform(0, 50, (40, 2))
Y = np.arange(40) % 2


def test_check_bounds_by_name_or_index():
    lower, upper = check_bounds({"b": (0, 9), "a": [-1, 1]}, 2, feature_names=["a", "b"])
    np.testing.assert_array_equal(lower, [-1, 0])
    np.testing.assert_array_equal(upper, [1, 9])
    lower, _ = check_bounds({1: (0, 9), 0: (-1, 1)}, 2)
    np.testing.assert_array_equal(lower, [-1, 0])
    with pytest.raises(ValueError, match=r"no bounds for \['b'\]"):
        check_bounds({"a": (0, 1)}, 2, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="'c' is not a feature"):
        check_bounds({"a": (0, 1), "b": (0, 1), "c": (0, 1)}, 2, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="no feature names"):
        check_bounds({"a": (0, 1), "b": (0, 1)}, 2)
    with pytest.raises(ValueError, match="pair"):
        check_bounds({0: (0, 1, 2), 1: (0, 1)}, 2)


def _estimators(bounds):
    # A fresh bit generator each (used as is): the same noise for every form of the bounds
    # (an int seed would derive the stream from the parameters, which differ in form).
    return [
        GaussianNB(epsilon=1.0, bounds=bounds, classes=[0, 1], random_state=np.random.PCG64(1)),
        StandardScaler(epsilon=1.0, bounds=bounds, random_state=np.random.PCG64(2)),
        PCA(epsilon=1.0, bounds=bounds, random_state=np.random.PCG64(3)),
        LogisticRegression(epsilon=1.0, bounds=bounds, data_norm=80.0, classes=[0, 1], random_state=np.random.PCG64(4)),
        LinearRegression(epsilon=1.0, bounds_X=bounds, bounds_y=[0, 1], random_state=np.random.PCG64(5)),
    ]


@pytest.mark.filterwarnings("ignore::dpsk.exceptions.PrivacyLeakWarning")
def test_estimators_take_bounds_by_feature_name_and_as_lists():
    """Check that a dict by feature name, a list pair and a tuple pair give the same fit."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["age", "hours"])
    by_name = {"hours": (0.0, 60.0), "age": (10.0, 50.0)}
    as_list = [[10.0, 0.0], [50.0, 60.0]]
    as_tuple = (np.array([10.0, 0.0]), np.array([50.0, 60.0]))
    for named, listed, plain in zip(_estimators(by_name), _estimators(as_list), _estimators(as_tuple)):
        fits = [est.fit(df, Y) for est in (named, listed, plain)]
        assert all(hasattr(est, "feature_names_in_") for est in fits)
        arrays = [{k: v for k, v in vars(est).items() if k.endswith("_") and isinstance(v, np.ndarray)} for est in fits]
        for other in arrays[1:]:
            assert other.keys() == arrays[0].keys()
            for key in other:
                np.testing.assert_array_equal(other[key], arrays[0][key], err_msg=f"{type(named).__name__}.{key}")


def test_bounds_by_name_need_a_dataframe():
    with pytest.raises(ValueError, match="no feature names"):
        GaussianNB(epsilon=1.0, bounds={"age": (0, 1), "hours": (0, 1)}, classes=[0, 1]).fit(X, Y)
