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


def test_load_adult_as_frame_gives_the_raw_data_and_its_public_schema():
    pd = pytest.importorskip("pandas")
    adult = load_adult(as_frame=True)
    assert isinstance(adult.data, pd.DataFrame) and adult.data.shape == (32561, 14)
    assert isinstance(adult.target, pd.Series) and adult.target.mean() == pytest.approx(7841 / 32561)
    assert list(adult.frame.columns[:-1]) == list(adult.data.columns)
    schema = adult.schema
    assert schema["numeric"]["capital-gain"] == (0.0, 99999.0)  # raw units, not log1p
    for name, (low, high) in schema["numeric"].items():
        assert adult.data[name].between(low, high).all()  # the documented ranges hold
    for name, categories in schema["categorical"].items():
        assert set(adult.data[name]) <= set(categories)
    X, y = load_adult(as_frame=True, return_X_y=True, subset="test")
    assert X.shape == (16281, 14) and y.shape == (16281,)


def test_schema_bounds_of_a_column_transformer_output():
    """Check the one-line helper: the bounds and the row-norm bound hold for every output row."""
    pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    from dpsk.datasets import schema_bounds

    adult = load_adult(as_frame=True)
    numeric, categorical = list(adult.schema["numeric"]), list(adult.schema["categorical"])
    encoder = OneHotEncoder(categories=[adult.schema["categorical"][c] for c in categorical], sparse_output=False)
    preprocess = ColumnTransformer([("num", "passthrough", numeric), ("cat", encoder, categorical)])
    Z = preprocess.fit_transform(adult.data)
    public = schema_bounds(adult.schema, preprocess.get_feature_names_out())
    lower, upper = public.bounds
    assert lower.shape == (Z.shape[1],)
    assert np.all(Z >= lower) and np.all(Z <= upper)
    assert np.linalg.norm(Z, axis=1).max() <= public.data_norm
    assert public.bounds_by_name["num__age"] == (17.0, 90.0)
    assert public.bounds_by_name["cat__sex_Male"] == (0.0, 1.0)
    with pytest.raises(ValueError, match="fnlwgt"):
        schema_bounds(adult.schema, ["fnlwgt"])
