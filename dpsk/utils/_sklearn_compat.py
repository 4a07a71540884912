# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The only module in dpsk that imports scikit-learn's *private* API.

Everything version-sensitive goes through here, so supporting a new scikit-learn
release means editing one file. Supported: scikit-learn >= 1.6 (see pyproject.toml).
"""

import sklearn
from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    Options,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils.validation import check_is_fitted
from sklearn.utils.validation import validate_data as _sklearn_validate_data

try:  # scikit-learn >= 1.7
    from sklearn.utils._repr_html.estimator import _get_visual_block, _VisualBlock
except ImportError:  # pragma: no cover - scikit-learn 1.6
    from sklearn.utils._estimator_html_repr import _get_visual_block, _VisualBlock

SKLEARN_VERSION = tuple(int(p) for p in sklearn.__version__.split(".")[:2] if p.isdigit())

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "Options",
    "RealNotInt",
    "SKLEARN_VERSION",
    "StrOptions",
    "_VisualBlock",
    "_fit_context",
    "_safe_indexing",
    "_get_visual_block",
    "check_is_fitted",
    "validate_data",
    "validate_parameter_constraints",
    "validate_params",
]


def validate_data(_estimator, /, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, refusing Dask collections with a clear error.

    Estimators that run on Dask (``dpsk.dask``) hand Dask input over before validating;
    every other one would silently gather the whole collection into one in-memory array.
    """
    from dpsk.dask._data import is_dask, refuse_dask

    if is_dask(X, y):
        refuse_dask(_estimator)
    return _sklearn_validate_data(_estimator, X, y, **kwargs)
