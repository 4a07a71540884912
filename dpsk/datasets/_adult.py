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

__all__ = ["ADULT_SCHEMA", "load_adult"]

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


def load_adult(*, subset="train", return_X_y=False):
    """Load the Adult census data, encoded for DP learning with public preprocessing.

    Parameters
    ----------
    subset : {"train", "test"}, default="train"
        The standard split (32,561 / 16,281 rows).
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.

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
