# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk: differentially private estimators with the scikit-learn API.

Swap one import (``from dpsk.linear_model import LogisticRegression``) and the fitted
model is an (ε)- or (ε, δ)-differentially private release of the training data, with
every spend tracked by one :class:`BudgetAccountant` across pipelines, cross-validation
and grid search.

Subpackages are imported lazily: ``import dpsk`` is cheap, ``dpsk.linear_model`` loads
on first use.
"""

import importlib as _importlib

# Fail early, and readably, when the Cython kernels were not compiled.
from dpsk import _core  # noqa: F401

__version__ = "0.1.0.dev0"

_submodules = [
    "accounting",
    "audit",
    "cluster",
    "dask",
    "datasets",
    "decomposition",
    "ensemble",
    "exceptions",
    "feature_selection",
    "linear_model",
    "mechanisms",
    "model_selection",
    "naive_bayes",
    "neural_network",
    "pipeline",
    "preprocessing",
    "stats",
    "svm",
    "tree",
    "utils",
]

# Main names re-exported at top level: name -> defining subpackage.
_reexports = {
    "BudgetAccountant": "accounting",
    "BudgetExceededError": "exceptions",
    "PrivacyLeakWarning": "exceptions",
    "config_context": "_config",
    "get_config": "_config",
    "set_config": "_config",
}

__all__ = [*_submodules, *_reexports, "__version__"]


def __dir__():
    return __all__


def __getattr__(name):
    if name in _submodules:
        return _importlib.import_module(f"dpsk.{name}")
    if name in _reexports:
        module = _importlib.import_module(f"dpsk.{_reexports[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'dpsk' has no attribute {name!r}")
