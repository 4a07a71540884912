# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Common tests run on every public estimator: scikit-learn's checks and dpsk's DP contract.

Estimators are discovered by :func:`dpsk.utils.all_estimators`, so a new estimator is
tested as soon as it is exported; test instances and expected failures are declared in
``dpsk/utils/_testing/common.py`` (one line each).
"""

import ast
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpsk.utils import all_estimators
from dpsk.utils._testing import BrokenToyDPMeanClassifier, ToyDPMeanClassifier
from dpsk.utils._testing.common import (
    EXPECTED_FAILED_CHECKS,
    EXPECTED_FAILED_DP_CHECKS,
    INIT_PARAMS,
    REFERENCE_ESTIMATORS,
    estimators_under_test,
    expected_failed_checks,
    expected_failed_dp_checks,
)
from dpsk.utils.discovery import _NOT_DP_ESTIMATOR_PACKAGES, _all_public_modules
from dpsk.utils.estimator_checks import (
    check_bad_input_releases_nothing,
    check_budget_checked_before_data_is_read,
    check_infinite_epsilon_is_exact,
    check_inputs_not_mutated,
    check_no_generator_or_seed_stored,
    check_noise_decreases_with_epsilon,
    check_privacy_leak_warning,
    check_privacy_params_validated,
    check_privacy_spent_recorded,
    check_random_state_int_reproducible,
    check_random_state_none_is_fresh,
    check_releases_match_declared_cost,
    check_sample_weight_counts_once,
    dp_checks,
    parametrize_with_dp_checks,
)

ESTIMATORS = list(estimators_under_test())
REPO = Path(__file__).resolve().parents[1]


# scikit-learn's checks use data of every shape and label set: estimators derive bounds
# and classes from it, and warn, as they should.
@pytest.mark.filterwarnings("ignore::dpsk.exceptions.PrivacyLeakWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@parametrize_with_dp_checks(ESTIMATORS, expected_failed_checks=expected_failed_dp_checks)
def test_dp_contract(estimator, check):
    check(estimator)


# --------------------------------------------------------------------- discovery


def test_common_tests_cover_every_discovered_estimator():
    """Check that the suites run on every discovered estimator plus the reference toy (never empty)."""
    tested = sorted(type(est).__name__ for est in ESTIMATORS)
    expected = sorted([name for name, _ in all_estimators()] + [name for name, _ in REFERENCE_ESTIMATORS])
    assert tested == expected
    assert "ToyDPMeanClassifier" in tested


def test_all_estimators_finds_an_estimator_in_a_subpackage(monkeypatch):
    """Check that discovery works: an estimator exported by an estimator subpackage is found."""
    fake = types.ModuleType("dpsk.naive_bayes")
    fake.__all__ = ["ToyDPMeanClassifier"]
    fake.ToyDPMeanClassifier = ToyDPMeanClassifier
    monkeypatch.setitem(sys.modules, "dpsk.naive_bayes", fake)
    assert ("ToyDPMeanClassifier", ToyDPMeanClassifier) in all_estimators()


def test_every_public_estimator_class_is_discovered():
    """Check that no estimator in a public module escapes discovery (e.g. a package not listed)."""
    discovered = {cls for _, cls in all_estimators()}
    missed = []
    for module_name in _all_public_modules():
        if module_name.split(".")[1] in _NOT_DP_ESTIMATOR_PACKAGES:
            continue  # left out on purpose, with the reason in dpsk/utils/discovery.py
        module = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseEstimator)
                and obj.__module__.startswith("dpsk.")
                and obj not in discovered
            ):
                missed.append(f"{module_name}.{name}")
    assert not missed, f"public estimators not found by all_estimators(): {missed}"


def test_test_tables_name_estimators_under_test_and_give_reasons():
    """Check that INIT_PARAMS and EXPECTED_FAILED_(DP_)CHECKS have no stale entries and every xfail has a reason."""
    names = {type(est).__name__ for est in ESTIMATORS}
    assert set(INIT_PARAMS) <= names
    assert set(EXPECTED_FAILED_CHECKS) <= names
    assert set(EXPECTED_FAILED_DP_CHECKS) <= names
    for checks in [*EXPECTED_FAILED_CHECKS.values(), *EXPECTED_FAILED_DP_CHECKS.values()]:
        for check, reason in checks.items():
            assert check.startswith("check_") and isinstance(reason, str) and len(reason) > 10


# ------------------------------------------------ the DP checks can fail (validity)

CAUGHT_BY = {
    "stores_rng": check_no_generator_or_seed_stored,
    "stores_seed": check_no_generator_or_seed_stored,
    "global_random": check_random_state_none_is_fresh,
    "mutates_X": check_inputs_not_mutated,
    "under_declares": check_releases_match_declared_cost,
    "ignores_epsilon": check_noise_decreases_with_epsilon,
    "silent_bounds": check_privacy_leak_warning,
    "release_before_validation": check_bad_input_releases_nothing,
    "no_privacy_spent": check_privacy_spent_recorded,
    "unvalidated_epsilon": check_privacy_params_validated,
    "budget_after_read": check_budget_checked_before_data_is_read,
    "finite_cost_at_inf": check_infinite_epsilon_is_exact,
}
# Bugs only a privacy audit can see (tests/privacy/test_validity.py).
CAUGHT_BY_AUDITS = {"epsilon_x2", "no_clipping"}


def test_every_deliberate_bug_is_assigned_a_test():
    assert set(CAUGHT_BY) | CAUGHT_BY_AUDITS == set(BrokenToyDPMeanClassifier.BUGS)


@pytest.mark.parametrize("bug", sorted(CAUGHT_BY))
def test_dp_check_fails_on_the_bug_it_targets(bug):
    """Check that each DP contract check rejects the broken toy it is meant to catch."""
    estimator = BrokenToyDPMeanClassifier(bug=bug)
    with pytest.raises(AssertionError):
        CAUGHT_BY[bug](type(estimator).__name__, estimator)


def test_dp_checks_list_the_accountant_checks_only_when_applicable():
    names = [check.func.__name__ for check in dp_checks(ToyDPMeanClassifier())]
    assert "check_budget_checked_before_data_is_read" in names
    assert len(names) == len(set(names)) == 12


class _WeightsAsCopies(ToyDPMeanClassifier):
    """Takes ``sample_weight`` as scikit-learn does: a weight of k is k copies of the row."""

    def fit(self, X, y, sample_weight=None):
        if sample_weight is not None:
            index = np.repeat(np.arange(len(X)), np.asarray(sample_weight, dtype=np.intp))
            X, y = np.asarray(X)[index], np.asarray(y)[index]
        return super().fit(X, y)


class _WeightsClipped(ToyDPMeanClassifier):
    """Takes ``sample_weight`` clipped to [0, 1] (here 0 or 1: a row is in or out)."""

    def fit(self, X, y, sample_weight=None):
        if sample_weight is not None:
            keep = np.asarray(sample_weight) > 0
            X, y = np.asarray(X)[keep], np.asarray(y)[keep]
        return super().fit(X, y)


def test_sample_weight_check_fails_when_a_weight_counts_as_copies():
    """Check that the sample-weight check can fail: weights taken as copies (issue 14, bootstrap duplicates)."""
    assert "check_sample_weight_counts_once" in [c.func.__name__ for c in dp_checks(_WeightsAsCopies())]
    with pytest.raises(AssertionError, match="more than once"):
        check_sample_weight_counts_once("WeightsAsCopies", _WeightsAsCopies())
    check_sample_weight_counts_once("WeightsClipped", _WeightsClipped())


def test_int_seed_check_fails_on_nondeterministic_estimator():
    """Check that the reproducibility check can fail: an estimator ignoring its int seed."""

    class Unseeded(ToyDPMeanClassifier):
        def _generator(self, X, y):
            return np.random.default_rng()  # ignores random_state

    with pytest.raises(AssertionError, match="differ"):
        check_random_state_int_reproducible("Unseeded", Unseeded())


# ------------------------------------------- only public scikit-learn API outside the shim

SHIM = REPO / "dpsk" / "utils" / "_sklearn_compat.py"
_PYX_IMPORT = re.compile(r"^\s*(?:from\s+(sklearn[\w.]*)\s+(?:c?import)\s+([^#\n]+)|c?import\s+(sklearn[\w.]*))", re.M)


def _private(parts):
    return [p for p in parts if p.startswith("_") and not (p.startswith("__") and p.endswith("__"))]


def private_sklearn_uses(source, *, cython=False):
    """Private scikit-learn names used by ``source``: imports and attribute chains."""
    found = []
    if cython:
        for module, names, plain in _PYX_IMPORT.findall(source):
            path = (module or plain).split(".")
            names = [n.strip().split(" ")[0] for n in names.replace("(", "").replace(")", "").split(",") if n.strip()]
            if _private(path) or _private(names):
                found.append(module or plain)
        return found
    tree = ast.parse(source)
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sklearn":
            if _private(node.module.split(".")) or _private([a.name for a in node.names]):
                found.append(f"from {node.module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sklearn":
                    aliases.add((alias.asname or alias.name).split(".")[0])
                    if _private(alias.name.split(".")):
                        found.append(f"import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = []
            inner = node
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in aliases and _private(chain):
                found.append(".".join([inner.id, *reversed(chain)]))
    return found


def test_private_sklearn_scanner_flags_private_names():
    """Check that the scanner below can fail."""
    assert private_sklearn_uses("from sklearn.utils._param_validation import Interval")
    assert private_sklearn_uses("from sklearn.base import _fit_context")
    assert private_sklearn_uses("import sklearn\nsklearn.utils._testing.ignore_warnings")
    assert private_sklearn_uses("from sklearn.utils._x cimport y", cython=True)
    assert not private_sklearn_uses("from sklearn.base import clone\nimport sklearn\nsklearn.__version__")


def test_only_public_sklearn_api_outside_the_compat_module():
    """Check that scikit-learn's private API is imported in dpsk/utils/_sklearn_compat.py only."""
    offenders = {}
    for folder in ("dpsk", "tests", "examples", "benchmarks", "doc"):
        for path in sorted((REPO / folder).rglob("*")):
            if path == SHIM or path.suffix not in (".py", ".pyx", ".pxd"):
                continue
            if any(part.startswith(".") or part == "_build" for part in path.relative_to(REPO).parts):
                continue  # virtual environments (benchmarks/.venv-diffprivlib) and build output
            uses = private_sklearn_uses(path.read_text(), cython=path.suffix != ".py")
            if uses:
                offenders[str(path.relative_to(REPO))] = uses
    assert not offenders, f"private scikit-learn API outside {SHIM.name}: {offenders}"
