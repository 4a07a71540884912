# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The contract every mechanism keeps: parameters, shapes, dtypes, recording, accounting."""

import math

import numpy as np
import pytest

from dpsk.accounting import BudgetAccountant, PureDPEvent, get_epsilon, record_releases
from dpsk.exceptions import BudgetExceededError
from dpsk.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    RandomizedResponse,
    ReportNoisyMax,
    UnsafeGaussian,
    UnsafeLaplace,
)

CONTINUOUS = [
    lambda **kw: Laplace(epsilon=1.0, sensitivity=2.0, random_state=0, **kw),
    lambda **kw: UnsafeLaplace(epsilon=1.0, sensitivity=2.0, random_state=0, **kw),
    lambda **kw: Gaussian(epsilon=1.0, delta=1e-5, sensitivity=2.0, random_state=0, **kw),
    lambda **kw: UnsafeGaussian(epsilon=1.0, delta=1e-5, sensitivity=2.0, random_state=0, **kw),
]
DISCRETE = [
    lambda **kw: DiscreteLaplace(epsilon=1.0, sensitivity=2, random_state=0, **kw),
    lambda **kw: DiscreteGaussian(epsilon=1.0, delta=1e-5, sensitivity=2, random_state=0, **kw),
]
VALUE_MECHANISMS = CONTINUOUS + DISCRETE
IDS = ["Laplace", "UnsafeLaplace", "Gaussian", "UnsafeGaussian", "DiscreteLaplace", "DiscreteGaussian"]


@pytest.mark.parametrize("make", VALUE_MECHANISMS, ids=IDS)
def test_one_release_recorded_per_call_with_the_declared_event(make):
    mech = make()
    value = np.arange(6, dtype=np.float64).reshape(2, 3)
    with record_releases() as drawn:
        mech.randomise(value)
        mech.randomise(4.0)
        mech.randomise(value[0])
    assert drawn == [mech.privacy_event((2, 3)), mech.privacy_event(), mech.privacy_event(3)]


@pytest.mark.parametrize("make", VALUE_MECHANISMS, ids=IDS)
def test_shapes_dtypes_and_inputs_are_preserved(make):
    mech = make()
    floating = make not in DISCRETE
    for dtype in (np.float32, np.float64) if floating else (np.int32, np.int64):
        value = np.arange(12, dtype=dtype).reshape(3, 4)
        before = value.copy()
        out = mech.randomise(value)
        assert out.shape == (3, 4) and out.dtype == dtype
        np.testing.assert_array_equal(value, before)  # never mutated
        scalar = mech.randomise(dtype(3))
        assert np.ndim(scalar) == 0 and scalar.dtype == dtype
    python_scalar = mech.randomise(3)
    assert isinstance(python_scalar, float if floating else int)
    assert np.asarray(mech.randomise([1, 2, 3])).shape == (3,)
    assert mech.randomise(np.empty((0, 2))).shape == (0, 2)


@pytest.mark.parametrize("make", CONTINUOUS, ids=IDS[:4])
def test_non_finite_values_are_rejected(make):
    with pytest.raises(ValueError, match="finite"):
        make().randomise([1.0, np.nan])
    with pytest.raises(ValueError, match="finite"):
        make().randomise(np.inf)


@pytest.mark.parametrize("make", DISCRETE, ids=IDS[4:])
def test_discrete_mechanisms_need_integers(make):
    with pytest.raises(ValueError, match="integers"):
        make().randomise(1.5)
    assert make().randomise(np.array([2.0, 3.0])).dtype == np.float64  # integral floats are fine


BAD_PARAMETERS = [
    {"epsilon": 0.0},
    {"epsilon": -1.0},
    {"epsilon": math.nan},
    {"sensitivity": -1.0},
    {"sensitivity": math.nan},
    {"delta": 1.0},
    {"delta": -0.1},
    {"delta": math.nan},
]


_CONSTRUCTORS = [
    (Laplace, {"epsilon": 1.0}),
    (UnsafeLaplace, {"epsilon": 1.0}),
    (Gaussian, {"epsilon": 1.0, "delta": 1e-5}),
    (UnsafeGaussian, {"epsilon": 1.0, "delta": 1e-5}),
    (DiscreteLaplace, {"epsilon": 1.0}),
    (DiscreteGaussian, {"epsilon": 1.0, "delta": 1e-5}),
    (ExponentialMechanism, {"epsilon": 1.0}),
    (ReportNoisyMax, {"epsilon": 1.0}),
]
_BAD_CASES = [
    pytest.param(cls, {**defaults, **bad}, id=f"{cls.__name__}-{next(iter(bad))}={next(iter(bad.values()))}")
    for cls, defaults in _CONSTRUCTORS
    for bad in BAD_PARAMETERS
    if "delta" not in bad or "delta" in defaults  # pure-DP mechanisms take no delta
]


@pytest.mark.parametrize("cls, params", _BAD_CASES)
def test_invalid_parameters_raise_value_error(cls, params):
    with pytest.raises(ValueError):
        cls(**params)


@pytest.mark.parametrize("cls, params", _CONSTRUCTORS[:6], ids=IDS)
def test_infinite_epsilon_releases_the_exact_value_as_an_infinite_spend(cls, params):
    """Check that epsilon=inf adds no noise and records one non-private release per call."""
    mech = cls(**{**params, "epsilon": math.inf}, sensitivity=2, random_state=0)
    value = np.array([[3.0, -2.0, 7.0], [0.0, 1.0, 5.0]])
    with record_releases() as drawn:
        out = mech.randomise(value)
        scalar = mech.randomise(4.0)
    np.testing.assert_array_equal(out, value)
    assert scalar == 4.0
    assert drawn == [PureDPEvent(math.inf)] * 2
    assert mech.variance(value) == 0.0
    assert math.isinf(get_epsilon(mech.privacy_event(value.shape), 0.5))


@pytest.mark.parametrize("cls", [ExponentialMechanism, ReportNoisyMax])
def test_infinite_epsilon_selection_is_a_uniform_argmax(cls):
    """Check that epsilon=inf selects uniformly among the best scores (the limit of both laws)."""
    mech = cls(epsilon=math.inf, random_state=0)
    scores = [0.5, 3.0, -1.0, 3.0]
    np.testing.assert_array_equal(mech.probabilities(scores), [0.0, 0.5, 0.0, 0.5])
    with record_releases() as drawn:
        picks = [mech.randomise(scores) for _ in range(200)]
    assert set(picks) == {1, 3}
    assert drawn == [PureDPEvent(math.inf)] * 200
    assert mech.privacy_event() == PureDPEvent(math.inf)


def test_infinite_epsilon_exponential_groups_picks_a_top_group():
    mech = ExponentialMechanism(epsilon=math.inf, random_state=0)
    scores = [5, 4, 5]
    picks = {mech.randomise_groups([2, 3, 1], [0.0, 1.0, 0.0], 0.0, scores.__getitem__, 5) for _ in range(100)}
    assert picks == {(0, 0), (0, 1), (2, 0)}


def test_infinite_epsilon_randomized_response_tells_the_truth():
    rr = RandomizedResponse(epsilon=math.inf, categories=["a", "b", "c"], random_state=0)
    values = np.array(["a", "c", "b", "c"] * 50)
    with record_releases() as drawn:
        np.testing.assert_array_equal(rr.randomise(values), values)
    assert drawn == [PureDPEvent(math.inf)]
    assert rr.keep_probability == 1.0


@pytest.mark.parametrize("cls", [DiscreteLaplace, Geometric])
@pytest.mark.parametrize("sensitivity", [0.5, 1.5, 2.25])
def test_discrete_laplace_refuses_a_fractional_sensitivity(cls, sensitivity):
    """Check that a fractional L1 sensitivity is refused, not floored (it used to be)."""
    with pytest.raises(ValueError, match="integer"):
        cls(epsilon=1.0, sensitivity=sensitivity)


def test_discrete_gaussian_refuses_a_fractional_sensitivity_for_a_scalar():
    """A scalar's sensitivity must be an integer (it used to be floored); a vector's L2 may not be."""
    mech = DiscreteGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.5, random_state=0)
    with pytest.raises(ValueError, match="integer"):
        mech.randomise(3)
    mech.randomise(np.array([3, 4]))  # L2 sensitivity sqrt(2)-like values are legitimate


@pytest.mark.parametrize("cls", [Gaussian, UnsafeGaussian, DiscreteGaussian])
def test_gaussian_mechanisms_need_a_positive_delta(cls):
    with pytest.raises(ValueError, match="delta must be > 0"):
        cls(epsilon=1.0, delta=0.0)


def test_constructors_are_keyword_only():
    with pytest.raises(TypeError):
        Laplace(1.0, 1.0)
    with pytest.raises(TypeError):
        Gaussian(1.0, 1e-5)


@pytest.mark.parametrize("make", VALUE_MECHANISMS, ids=IDS)
def test_integer_seed_is_reproducible_and_none_is_fresh(make):
    first, second = make(), make()
    value = np.zeros(5)
    np.testing.assert_array_equal(first.randomise(value), second.randomise(value))
    assert not np.array_equal(first.randomise(value), first.randomise(value))  # the stream advances
    fresh = type(first)(**{**_params(first), "random_state": None})
    other = type(first)(**{**_params(first), "random_state": None})
    assert not np.array_equal(fresh.randomise(np.zeros(20)), other.randomise(np.zeros(20)))


def _params(mech):
    params = {"epsilon": mech.epsilon, "sensitivity": mech.sensitivity}
    if mech.delta:
        params["delta"] = mech.delta
    return params


def test_zero_sensitivity_releases_the_value():
    for mech in (Laplace(epsilon=1.0, sensitivity=0.0), DiscreteLaplace(epsilon=1.0, sensitivity=0)):
        assert mech.randomise(3) == 3
        assert get_epsilon(mech.privacy_event(), 0.0) == 0.0


@pytest.mark.parametrize("make", VALUE_MECHANISMS, ids=IDS)
@pytest.mark.parametrize("shape", [(), (7,)])
def test_a_release_fits_exactly_the_budget_it_was_calibrated_to(make, shape):
    mech = make()
    acc = BudgetAccountant(epsilon=mech.epsilon, delta=mech.delta or 0.0)
    acc.record(mech.privacy_event(shape))
    with pytest.raises(BudgetExceededError):
        acc.record(mech.privacy_event(shape))


def test_selection_and_randomized_response_record_their_events():
    em, rnm = ExponentialMechanism(epsilon=0.5, random_state=0), ReportNoisyMax(epsilon=0.5, random_state=0)
    rr = RandomizedResponse(epsilon=0.5, categories=[1, 2, 3], random_state=0)
    with record_releases() as drawn:
        em.randomise([1.0, 2.0])
        rnm.randomise([1.0, 2.0])
        rr.randomise([1, 2, 3, 3])
    assert drawn == [em.privacy_event(), rnm.privacy_event(), rr.privacy_event()]
    for mech in (em, rnm, rr):
        assert get_epsilon(mech.privacy_event(), 0.0) == 0.5


def test_geometric_is_diffprivlibs_name_for_the_discrete_laplace():
    assert Geometric is DiscreteLaplace


# ------------------------------------------------------------- immutable after construction
# Reassigning a parameter used to be accepted and ignored by the noise (calibrated at
# construction) while reading, and being recorded, as the new value (issue 14, finding 6).

ALL_MECHANISMS = VALUE_MECHANISMS + [
    lambda **kw: ExponentialMechanism(epsilon=1.0, random_state=0, **kw),
    lambda **kw: ReportNoisyMax(epsilon=1.0, random_state=0, **kw),
    lambda **kw: RandomizedResponse(epsilon=1.0, random_state=0, **kw),
]
ALL_IDS = IDS + ["ExponentialMechanism", "ReportNoisyMax", "RandomizedResponse"]


@pytest.mark.parametrize("make", ALL_MECHANISMS, ids=ALL_IDS)
@pytest.mark.parametrize("name", ["epsilon", "delta", "sensitivity", "random_state", "calibration", "new_attribute"])
def test_mechanisms_are_immutable(make, name):
    mech = make()
    before = getattr(mech, name, None)
    with pytest.raises(AttributeError, match="immutable"):
        setattr(mech, name, 0.01)
    assert getattr(mech, name, None) == before
    if hasattr(mech, name):
        with pytest.raises(AttributeError, match="immutable"):
            delattr(mech, name)


def test_geometric_delta_cannot_be_set():
    mech = Geometric(epsilon=1.0)
    with pytest.raises(AttributeError, match="immutable"):
        mech.delta = 0.5
    assert mech.delta == 0.0
    with record_releases() as drawn:
        mech.randomise(3)
    assert drawn == [mech.privacy_event()]


def test_infinite_epsilon_selection_compares_exact_scores_exactly():
    """Scores as an object array of Fractions are compared without rounding to floats."""
    from fractions import Fraction

    scores = np.array([Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**30), Fraction(0)], dtype=object)
    mech = ExponentialMechanism(epsilon=math.inf, random_state=0)
    assert {mech.randomise(scores) for _ in range(20)} == {1}
