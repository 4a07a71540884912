# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The shortcuts that cut the fixed cost of a fit give scikit-learn's answers, errors and warnings."""

import gc
import warnings
import weakref

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils.multiclass import check_classification_targets

from dpsk.base import DPEstimatorMixin
from dpsk.naive_bayes import GaussianNB
from dpsk.utils._random import release_digest
from dpsk.utils.validation import _check_classification_targets


class _Base(DPEstimatorMixin, BaseEstimator):
    def __init__(self, epsilon=1.0, b=2):
        self.epsilon = epsilon
        self.b = b


class _Child(_Base):
    def __init__(self, epsilon=1.0, b=2, c=3):
        super().__init__(epsilon=epsilon, b=b)
        self.c = c


class _Inherits(_Base):
    pass


class _VarArgs(DPEstimatorMixin, BaseEstimator):
    def __init__(self, *args, epsilon=1.0):
        self.args = args
        self.epsilon = epsilon


def _sklearn_names(cls):
    return super(DPEstimatorMixin, cls)._get_param_names()


@pytest.mark.parametrize("cls", [_Base, _Child, _Inherits, GaussianNB])
def test_param_names_are_sklearns(cls):
    """Cached per class: a subclass gets its own names, the same list as scikit-learn's."""
    assert cls._get_param_names() == _sklearn_names(cls)
    assert cls._get_param_names() == _sklearn_names(cls)  # from the cache
    names = cls._get_param_names()
    names.append("mutated")  # a caller's copy: the cache is not touched
    assert cls._get_param_names() == _sklearn_names(cls)


def test_param_names_follow_a_replaced_init(monkeypatch):
    assert _Base._get_param_names() == ["b", "epsilon"]

    def __init__(self, epsilon=1.0, z=0):
        self.epsilon = epsilon
        self.z = z

    monkeypatch.setattr(_Base, "__init__", __init__)
    assert _Base._get_param_names() == ["epsilon", "z"]
    assert _Inherits._get_param_names() == ["epsilon", "z"]
    assert clone(_Base(z=5)).get_params() == {"epsilon": 1.0, "z": 5}


def test_param_names_cache_lets_classes_made_on_the_fly_go():
    """A class made at run time (a subclass per test, a notebook cell run again) is freed
    once unused: the cache holds it and its ``__init__`` weakly."""

    def make():
        class OnTheFly(_Base):
            def __init__(self, b=3, epsilon=1.0):
                super().__init__(b=b, epsilon=epsilon)

        assert OnTheFly._get_param_names() == ["b", "epsilon"]
        return weakref.ref(OnTheFly)

    ref = make()
    gc.collect()
    assert ref() is None


def test_param_names_error_is_raised_every_time():
    for _ in range(2):
        with pytest.raises(RuntimeError, match="no varargs"):
            _VarArgs._get_param_names()


def test_clone_and_set_params_with_cached_names():
    est = _Child(epsilon=2.0, c=7)
    copy = clone(est)
    assert copy.get_params() == {"epsilon": 2.0, "b": 2, "c": 7}
    with pytest.raises(ValueError, match="Invalid parameter"):
        copy.set_params(d=1)


def _targets():
    rng = np.random.default_rng(0)
    yield from (
        np.arange(20) % 2,
        np.arange(20) % 5,
        np.arange(21),  # most labels distinct: scikit-learn warns
        np.arange(40) % 20,  # exactly half distinct: no warning
        np.arange(40) % 21,
        rng.integers(0, 3, size=100).astype(np.uint8),
        rng.random(30) > 0.5,
        np.array([0.0, 1.0, 2.0] * 10),
        np.array([0.0, 1.0, 2.0] * 10, dtype=np.float32),
        np.array([0.0, 1.0, 2.0] * 10, dtype=np.float16),
        np.array([0.0, 1.5, 2.0]),
        np.array([0.0, np.nan, 1.0]),
        np.array([0.0, np.inf, 1.0]),
        np.array([0.0, 1e300, 1.0]),
        np.array([0.0, -(2.0**63), 1.0]),
        np.array([0.0, 2.0**63, 1.0]),
        np.array([1.0]),
        np.array([], dtype=float),
        np.array([], dtype=int),
        np.array(["a", "b", "a"]),
        np.array(["a", 1, None], dtype=object),
        np.arange(6).reshape(3, 2),
        np.arange(3).reshape(3, 1),
        np.array([[0.5], [1.0]]),
        np.array([1 + 1j, 2 + 0j]),
        [0, 1, 1],
        [0.5, 1.0],
        np.ma.masked_array([0, 1, 2]),
    )


def _outcome(check, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            check(y)
            error = None
        except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
            error = (type(exc), str(exc))
    return error, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("y", list(_targets()), ids=lambda y: repr(y)[:40])
def test_classification_targets_as_sklearn(y):
    """Same errors (type and message) and warnings as scikit-learn's check, whatever y."""
    assert _outcome(_check_classification_targets, y) == _outcome(check_classification_targets, y)


def test_classification_targets_shortcut_is_taken(monkeypatch):
    """The usual targets do not go through scikit-learn (the point of the shortcut)."""
    import dpsk.utils.validation as validation

    def fail(y):
        raise AssertionError("scikit-learn's check was called")

    monkeypatch.setattr(validation, "check_classification_targets", fail)
    for y in (np.arange(20) % 2, np.arange(1000) % 7, np.array([0.0, 1.0] * 50, dtype=np.float32), np.ones(3, bool)):
        _check_classification_targets(y)
    with pytest.raises(AssertionError, match="was called"):
        _check_classification_targets(np.arange(21))  # would warn: scikit-learn's check


class _Str(str):
    pass


class _Float(float):
    pass


class _Int(int):
    pass


@pytest.mark.parametrize(
    "value, slow",
    [
        ("lbfgs", _Str("lbfgs")),
        ("", _Str("")),
        (0.1, _Float(0.1)),
        (-0.0, _Float(-0.0)),
        (float("inf"), _Float("inf")),
        (3, _Int(3)),
        (-(2**53), _Int(-(2**53))),
        (2**53 + 1, _Int(2**53 + 1)),
        (3, np.int64(3)),
        (3, 3.0),
        (
            {"C": 1.0, "solver": "newton", "max_iter": 100},
            {"C": _Float(1.0), "solver": _Str("newton"), "max_iter": _Int(100)},
        ),
    ],
)
def test_digest_fast_types_hash_as_before(value, slow):
    """The exact-type shortcut of the seed digest gives the bytes of the general branches
    (a subclass of str, float or int takes them)."""
    assert release_digest(value, ()) == release_digest(slow, ())
    assert release_digest(("ctx", value), (np.arange(3),)) == release_digest(("ctx", slow), (np.arange(3),))


@pytest.mark.parametrize(
    "function, args",
    [
        ("gaussian_sigma", (1.0, 1e-6, 1.0)),
        ("gaussian_sigma", (np.float64(0.3), 1e-5, 2)),
        ("gaussian_sigma", (1.0, 1e-6, -0.0)),
        ("discrete_gaussian_sigma", (1.0, 1e-6, 3)),
        ("zcdp_rho", (1.0, 1e-6)),
        ("zcdp_rho", (2, np.float64(1e-8))),
    ],
)
def test_memoised_calibrations_as_computed(function, args):
    """A remembered calibration is the value (and type) the search computes, called again or not."""
    from dpsk.accounting import _calibration

    inner = {"gaussian_sigma": "_gaussian_sigma", "discrete_gaussian_sigma": "_discrete_gaussian_sigma"}
    public = getattr(_calibration, function)
    first, second = public(*args), public(*args)
    assert type(first) is float and first == second
    if function in inner:
        fresh = getattr(_calibration, inner[function]).__wrapped__(*(float(a) for a in args))
        assert fresh.hex() == first.hex()


def test_memoised_calibrations_keep_errors_and_signed_zeros():
    from dpsk.accounting import _calibration

    for _ in range(2):  # an error is raised on every call, not remembered
        with pytest.raises(ValueError):
            _calibration.gaussian_sigma(1.0, 0.0)
    calls = []
    memo = _calibration._memoised(lambda x: calls.append(x) or str(x))
    assert memo(0.0) == "0.0" and memo(-0.0) == "-0.0" and memo(0.0) == "0.0"
    assert memo(np.float64(0.0)) == "0.0" and type(calls[-1]) is np.float64  # types apart
    assert calls == [0.0, -0.0, 0.0]


@pytest.mark.parametrize("args", [(0.9, 1.0, 0.25), (np.float64(0.45), 0.01, 0.25), (5.0, 2.0, 1.0)])
def test_joint_objective_budget_as_computed(args):
    from dpsk.linear_model._erm import _joint_objective_budget, joint_objective_budget

    fresh = _joint_objective_budget.__wrapped__(*args)
    for _ in range(2):
        budget = joint_objective_budget(*args)
        assert type(budget) is type(fresh) and budget.hex() == fresh.hex()


@pytest.mark.parametrize("size", [0, 1, 3, 1000])
@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1.0), (0.37, 2.5), (5.0, 1e-3)])
def test_laplace_calibration_shared_as_computed(epsilon, sensitivity, size):
    """Laplace's remembered calibration equals a fresh one (event and lattice parameters)."""
    from dpsk.mechanisms import Laplace
    from dpsk.mechanisms._laplace import _lattice_calibration

    fresh = _lattice_calibration.__wrapped__(epsilon, sensitivity, size)
    for _ in range(2):
        calibration = Laplace(epsilon=epsilon, sensitivity=sensitivity)._calibration(size)
        assert calibration == fresh
        assert [p.hex() for p in calibration.params] == [p.hex() for p in fresh.params]
