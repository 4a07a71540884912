# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The UCI Adult census income data (Becker & Kohavi 1996, CC BY 4.0), bundled gzipped.

32,561 training and 16,281 test rows; the task is whether income exceeds $50K
(24.1% / 23.6% positive). The standard benchmark of DP classification.
"""

import csv
import gzip
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

__all__ = ["ADULT_SCHEMA", "load_adult", "schema_bounds"]

# Public schema, from the dataset's documentation (adult.names). "?" marks a missing value
# and is kept as its own category. Numeric ranges are the documented domains, with
# capital gains/losses log-transformed first (a fixed, public transformation) because
# they are heavy-tailed.
ADULT_SCHEMA = {
    "numeric": {
        "age": (17.0, 90.0),
        "education-num": (1.0, 16.0),
        "capital-gain": (0.0, float(np.log1p(99999.0))),
        "capital-loss": (0.0, float(np.log1p(4356.0))),
        "hours-per-week": (1.0, 99.0),
    },
    "log1p": ("capital-gain", "capital-loss"),
    "categorical": {
        "workclass": [
            "Private",
            "Self-emp-not-inc",
            "Self-emp-inc",
            "Federal-gov",
            "Local-gov",
            "State-gov",
            "Without-pay",
            "Never-worked",
            "?",
        ],
        "education": [
            "Bachelors",
            "Some-college",
            "11th",
            "HS-grad",
            "Prof-school",
            "Assoc-acdm",
            "Assoc-voc",
            "9th",
            "7th-8th",
            "12th",
            "Masters",
            "1st-4th",
            "10th",
            "Doctorate",
            "5th-6th",
            "Preschool",
        ],
        "marital-status": [
            "Married-civ-spouse",
            "Divorced",
            "Never-married",
            "Separated",
            "Widowed",
            "Married-spouse-absent",
            "Married-AF-spouse",
        ],
        "occupation": [
            "Tech-support",
            "Craft-repair",
            "Other-service",
            "Sales",
            "Exec-managerial",
            "Prof-specialty",
            "Handlers-cleaners",
            "Machine-op-inspct",
            "Adm-clerical",
            "Farming-fishing",
            "Transport-moving",
            "Priv-house-serv",
            "Protective-serv",
            "Armed-Forces",
            "?",
        ],
        "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"],
        "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
        "sex": ["Female", "Male"],
        "native-country": [
            "United-States",
            "Cambodia",
            "England",
            "Puerto-Rico",
            "Canada",
            "Germany",
            "Outlying-US(Guam-USVI-etc)",
            "India",
            "Japan",
            "Greece",
            "South",
            "China",
            "Cuba",
            "Iran",
            "Honduras",
            "Philippines",
            "Italy",
            "Poland",
            "Jamaica",
            "Vietnam",
            "Mexico",
            "Portugal",
            "Ireland",
            "France",
            "Dominican-Republic",
            "Laos",
            "Ecuador",
            "Taiwan",
            "Haiti",
            "Columbia",
            "Hungary",
            "Guatemala",
            "Nicaragua",
            "Scotland",
            "Thailand",
            "Yugoslavia",
            "El-Salvador",
            "Trinadad&Tobago",
            "Peru",
            "Hong",
            "Holand-Netherlands",
            "?",
        ],
    },
    "target": ("class", ">50K"),
}


def _read(subset):
    path = resources.files("dpsk.datasets") / "data" / f"adult_{subset}.csv.gz"
    with path.open("rb") as raw, gzip.open(raw, "rt", newline="") as text:
        return list(csv.DictReader(text))


def _encode(rows):
    """Numeric columns min–max scaled to [0, 1] with public ranges; categoricals one-hot."""
    columns, names = [], []
    for name, (low, high) in ADULT_SCHEMA["numeric"].items():
        values = np.array([float(r[name]) for r in rows])
        if name in ADULT_SCHEMA["log1p"]:
            values = np.log1p(values)
        columns.append(np.clip((values - low) / (high - low), 0.0, 1.0)[:, None])
        names.append(name)
    for name, categories in ADULT_SCHEMA["categorical"].items():
        index = {c: i for i, c in enumerate(categories)}
        codes = np.array([index[r[name]] for r in rows])
        columns.append(np.eye(len(categories))[codes])
        names.extend(f"{name}={c}" for c in categories)
    target, positive = ADULT_SCHEMA["target"]
    y = np.array([r[target] == positive for r in rows], dtype=np.int64)
    return np.hstack(columns), y, names


def _raw_schema():
    """The public schema in the units of the raw columns (capital gains and losses not log-transformed)."""
    numeric = {
        name: (float(np.expm1(low)), float(np.round(np.expm1(high)))) if name in ADULT_SCHEMA["log1p"] else (low, high)
        for name, (low, high) in ADULT_SCHEMA["numeric"].items()
    }
    categorical = {name: list(categories) for name, categories in ADULT_SCHEMA["categorical"].items()}
    return {"numeric": numeric, "categorical": categorical, "target": ADULT_SCHEMA["target"]}


def _frame(rows):
    """The raw rows as a DataFrame (numbers as numbers, categories as strings), features and target."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    for name in (*ADULT_SCHEMA["numeric"], "fnlwgt"):
        frame[name] = pd.to_numeric(frame[name])
    target, positive = ADULT_SCHEMA["target"]
    y = (frame[target] == positive).astype(np.int64).rename("income>50K")
    return frame, frame.drop(columns=[target]), y


def load_adult(*, subset="train", return_X_y=False, as_frame=False):
    """Load the Adult census data, encoded for DP learning with public preprocessing.

    Parameters
    ----------
    subset : {"train", "test"}, default="train"
        The standard split (32,561 / 16,281 rows).
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.
    as_frame : bool, default=False
        Return the *raw* data as pandas objects (requires pandas) instead of the encoded
        array, with the public schema as data, so that you can build your own
        preprocessing from it: ``data`` is a DataFrame of the 14 raw columns (numbers as
        numbers, categories as strings, "?" for missing), ``target`` a Series (1 when
        income > $50K), ``frame`` both, and ``schema`` a dict ``{"numeric": {column:
        (low, high)}, "categorical": {column: [categories]}, "target": (column,
        positive label)}`` of the documented ranges and category lists in the raw units.
        ``fnlwgt`` (a census sampling weight with no documented range) is in the frame
        but not in the schema. Turn the schema into bounds with :func:`schema_bounds`.

    Returns
    -------
    data : Bunch
        ``data`` (ndarray of shape (n_samples, 107), float64, every value in [0, 1]: five
        numeric columns scaled with public ranges, then eight one-hot blocks),
        ``target`` (1 when income > $50K), ``feature_names``, ``data_norm`` (a public
        bound on row L2 norms: √13, five numeric values ≤ 1 and eight one-hot ones), and
        ``DESCR``.

    Notes
    -----
    The encoding uses only the published schema (``ADULT_SCHEMA``), never statistics of
    the rows, so it costs no privacy budget.

    **Privacy.** The Adult data are public (UCI, CC BY 4.0) and are encoded with the
    published schema only, so loading them releases nothing and costs no budget.
    Models trained on them protect their rows like any other data: use them to try
    dpsk's estimators on realistic data.
    """
    if subset not in ("train", "test"):
        raise ValueError("subset must be 'train' or 'test'")
    if as_frame:
        frame, X, y = _frame(_read(subset))
        if return_X_y:
            return X, y
        return Bunch(data=X, target=y, frame=frame, feature_names=list(X.columns), schema=_raw_schema(), DESCR=__doc__)
    X, y, names = _encode(_read(subset))
    if return_X_y:
        return X, y
    n_blocks = len(ADULT_SCHEMA["numeric"]) + len(ADULT_SCHEMA["categorical"])
    return Bunch(
        data=X,
        target=y,
        feature_names=names,
        data_norm=float(np.sqrt(n_blocks)),
        DESCR=__doc__,
    )


def schema_bounds(schema, feature_names):
    """Public ``bounds`` and ``data_norm`` of a preprocessing's output columns, from a public schema.

    For a pipeline that passes the schema's numeric columns through and one-hot encodes
    its categorical ones with the schema's categories (``OneHotEncoder(categories=...)``),
    this gives the sensitivity parameters of the DP estimator that follows, in one line::

        public = schema_bounds(adult.schema, preprocess.get_feature_names_out())
        model = LogisticRegression(data_norm=public.data_norm, bounds=public.bounds)

    Parameters
    ----------
    schema : dict
        ``{"numeric": {column: (low, high)}, "categorical": {column: [categories]}}``, as
        ``load_adult(as_frame=True).schema``. Public information, never statistics of the data.
    feature_names : sequence of str
        The output columns, e.g. ``get_feature_names_out()`` of a ``ColumnTransformer``:
        a transformer prefix ``"name__"`` is ignored; ``"column"`` is a numeric column,
        ``"column_category"`` (or ``"column=category"``) one indicator of a categorical one.

    Returns
    -------
    public : Bunch
        ``bounds``: ``(lower, upper)`` arrays in the order of ``feature_names``
        (indicators in [0, 1]); ``bounds_by_name``: the same as a dict by output name;
        ``data_norm``: a bound on the L2 norm of every output row, sqrt(Σ over numeric
        columns of max(low², high²) + the number of one-hot blocks), since a one-hot block
        holds at most one 1.

    Notes
    -----
    **Privacy.** Computed from the schema and the column names only: it reads no data
    and costs no budget. The result is valid for the estimator only if the
    preprocessing really is the one described (numeric columns unchanged, one-hot
    encoding with the schema's categories); a scaler fitted on the data would not be.
    """
    numeric = dict(schema.get("numeric", {}))
    categorical = {name: [str(c) for c in cats] for name, cats in schema.get("categorical", {}).items()}
    lower, upper, blocks, squares = [], [], set(), 0.0
    for output in feature_names:
        base = str(output).split("__", 1)[1] if "__" in str(output) else str(output)
        if base in numeric:
            low, high = (float(v) for v in numeric[base])
            squares += max(low * low, high * high)
        else:
            block = next(
                (
                    name
                    for name, cats in categorical.items()
                    for sep in ("_", "=")
                    if base.startswith(name + sep) and base[len(name) + 1 :] in cats
                ),
                None,
            )
            if block is None:
                raise ValueError(f"output column {output!r} is neither a numeric column nor a category of the schema")
            low, high = 0.0, 1.0
            blocks.add(block)
        lower.append(low)
        upper.append(high)
    names = [str(f) for f in feature_names]
    return Bunch(
        bounds=(np.array(lower), np.array(upper)),
        bounds_by_name={name: (lo, hi) for name, lo, hi in zip(names, lower, upper)},
        data_norm=float(np.sqrt(squares + len(blocks))),
    )
