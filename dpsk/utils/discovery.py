# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Find every public dpsk estimator, so the common tests cover new ones automatically."""

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

__all__ = ["all_estimators"]

# Subpackages that hold estimators (missing ones are skipped while the library grows).
_ESTIMATOR_PACKAGES = (
    "cluster",
    "decomposition",
    "ensemble",
    "feature_selection",
    "linear_model",
    "model_selection",
    "naive_bayes",
    "neural_network",
    "preprocessing",
    "svm",
    "tree",
)

#: Public subpackages whose estimators are left out of :func:`all_estimators`, and why.
#: (``tests/test_common.py`` checks that every other public estimator is discovered.)
_NOT_DP_ESTIMATOR_PACKAGES = {
    # The common tests run dpsk's DP contract checks (epsilon, privacy_spent_, releases
    # matching the declared cost, noise shrinking as ε grows) and a privacy audit on
    # every discovered estimator: they presuppose an estimator that is a mechanism with
    # privacy parameters of its own. dpsk.pipeline.Pipeline has none: it is
    # scikit-learn's Pipeline with a budget check before fit, releases nothing itself,
    # and its guarantee is the composition of its steps', which are tested on their own.
    # scikit-learn's checks need steps to build one; tests/test_pipeline.py runs them on
    # pipelines of DP steps.
    "pipeline": "a container of DP steps, not a DP estimator of its own (see the comment above)",
    # dpsk.audit.StatisticEstimator wraps a dpsk.stats function so that the audits can fit
    # it like an estimator; the statistic is the mechanism, tested in tests/stats.
    "audit": "test adapters around dpsk.stats functions, not DP estimators of their own",
    # dpsk.local's estimators aggregate reports that users randomized themselves: fitting
    # is post-processing (no ε spent, no noise, no privacy_spent_), so the DP contract
    # checks do not apply; the randomizers are the mechanisms, audited in
    # tests/privacy/test_mechanism_privacy.py. tests/local runs scikit-learn's checks.
    "local": "server-side aggregation of local-DP reports: post-processing, not a DP release",
}


def all_estimators():
    """Return ``[(name, class), ...]`` for every public estimator class of dpsk.

    An estimator is public if it is a non-abstract subclass of
    :class:`sklearn.base.BaseEstimator` defined in dpsk, listed in its subpackage's
    ``__all__`` and not starting with an underscore. Sorted by name.
    """
    found = {}
    for package in _ESTIMATOR_PACKAGES:
        try:
            module = importlib.import_module(f"dpsk.{package}")
        except ModuleNotFoundError as exc:
            if exc.name == f"dpsk.{package}":
                continue
            raise
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseEstimator)
                and obj.__module__.startswith("dpsk.")
                and not name.startswith("_")
                and not inspect.isabstract(obj)
            ):
                found[name] = obj
    return sorted(found.items())


def _all_public_modules():
    """Names of every importable public dpsk module (for docstring tests)."""
    import dpsk

    names = []
    for info in pkgutil.walk_packages(dpsk.__path__, prefix="dpsk."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        names.append(info.name)
    return sorted(names)
