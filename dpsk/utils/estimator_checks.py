# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Checks of the differential-privacy contract of an estimator (public, like scikit-learn's).

scikit-learn's ``parametrize_with_checks`` tests the scikit-learn API; the checks here test
what a DP estimator must add (doc/developers/architecture.rst, "The fit protocol"):

* privacy parameters are validated, and invalid ones release nothing;
* the noise shrinks as ε grows;
* ``random_state=None`` draws fresh entropy (not numpy's global state), an int reproduces;
* no Generator, BitGenerator, SeedSequence or seed is kept on the fitted estimator;
* the privacy cost is recorded in ``privacy_spent_`` and on the accountant, which is
  checked before the data is read;
* the releases actually made equal the declared cost (``record_releases``);
* inputs are not mutated;
* data-derived sensitivity parameters raise :class:`~dpsk.exceptions.PrivacyLeakWarning`;
* NaN, inf, empty and one-class inputs raise a clear error and release nothing;
* where ``fit`` takes ``sample_weight``, a weight above 1 counts as 1 (a row repeated
  through a weight, as scikit-learn's Bagging does with bootstrap counts, counts once).

Third-party DP estimators can run them too::

    from dpsk.utils.estimator_checks import parametrize_with_dp_checks

    @parametrize_with_dp_checks([MyDPEstimator(epsilon=1.0)])
    def test_dp_contract(estimator, check):
        check(estimator)

Each check builds its own small data in [-1, 1] (in [0, 1] for estimators tagged
``positive_only``, integer codes 0, 1, 2 for those tagged ``categorical``; classes 0 and 1
for classifiers, targets in [-1, 1] for regressors, users of four rows when ``fit`` takes
``groups``) and sets the estimator's public sensitivity parameters to match (``bounds``,
``bounds_X``, ``bounds_y``, ``data_norm``, ``classes``, ``n_categories``), so that no check
depends on a data-derived value unless it tests exactly that.

An estimator whose sensitivity parameters are *alternatives* (any one of them is enough,
e.g. PCA's ``bounds`` or ``data_norm``) lists them in a class attribute
``_alternative_sensitivity_params = (("bounds", "data_norm"),)``: the leak-warning check
then expects the warning when all of a group are None, not when one of them is.
"""

import functools
import inspect
import math
import random
import warnings
from collections import Counter

import numpy as np
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils import get_tags

from dpsk.accounting import BudgetAccountant, PrivacyEvent, get_epsilon, record_releases
from dpsk.exceptions import BudgetExceededError, PrivacyLeakWarning

__all__ = [
    "check_bad_input_releases_nothing",
    "check_budget_checked_before_data_is_read",
    "check_dp_estimator",
    "check_inputs_not_mutated",
    "check_infinite_epsilon_is_exact",
    "check_noise_decreases_with_epsilon",
    "check_no_generator_or_seed_stored",
    "check_privacy_leak_warning",
    "check_privacy_params_validated",
    "check_privacy_spent_recorded",
    "check_random_state_int_reproducible",
    "check_random_state_none_is_fresh",
    "check_releases_match_declared_cost",
    "check_sample_weight_counts_once",
    "dp_checks",
    "parametrize_with_dp_checks",
]

#: Sensitivity hyper-parameters: left to None, estimated privately, refused, or (``classes``, and
#: estimators without private bounds) derived from the data with a warning.
SENSITIVITY_PARAMS = ("bounds", "bounds_X", "bounds_y", "data_norm", "classes", "n_categories")

# Categories of the check data of estimators tagged ``categorical``.
_N_CHECK_CATEGORIES = 3

# A value that must never appear in an error message (messages name shapes, not data).
_MARKER = 987654.321
_MARKER_TEXT = "987654"


# --------------------------------------------------------------------------- helpers


def _takes_groups(estimator):
    return "groups" in inspect.signature(estimator.fit).parameters


def make_check_data(estimator, *, n_samples=40, n_features=3, dtype=np.float64, seed=0):
    """Fit arguments for the checks: X in [-1, 1]; y and groups when the estimator needs them.

    X follows the estimator's input tags: in [0, 1] when ``positive_only``, integer codes
    in [0, 3) when ``categorical``.
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n_samples, n_features))
    input_tags = get_tags(estimator).input_tags
    if input_tags.categorical:
        X = np.floor((X + 1.0) / 2.0 * _N_CHECK_CATEGORIES)
    elif input_tags.positive_only:
        X = np.abs(X)
    data = {"X": X.astype(dtype)}
    if is_classifier(estimator):
        data["y"] = np.arange(n_samples) % 2
    elif is_regressor(estimator):
        data["y"] = rng.uniform(-1.0, 1.0, n_samples).astype(dtype)
    elif get_tags(estimator).target_tags.required:  # a supervised transformer (feature selection)
        data["y"] = np.arange(n_samples) % 2
    if _takes_groups(estimator):
        data["groups"] = np.arange(n_samples) // 4
    return data


def public_params(estimator, n_features):
    """Public sensitivity parameters matching :func:`make_check_data`, for those the estimator has.

    Nested parameters count too (``estimator__bounds`` of a search, ``clf__classes`` of
    a pipeline): a meta-estimator's guarantee rests on its inner estimators' bounds.
    """
    values = {
        "bounds": (-1.0, 1.0),
        "bounds_X": (-1.0, 1.0),
        "bounds_y": (-1.0, 1.0),
        "data_norm": math.sqrt(n_features),
        "classes": np.array([0, 1]),
        "n_categories": _N_CHECK_CATEGORIES,
    }
    params = estimator.get_params()
    return {k: values[k.split("__")[-1]] for k in params if k.split("__")[-1] in values}


def _prepared(estimator, data, **params):
    """A clone with public sensitivity parameters and no accountant, plus ``params``."""
    est = clone(estimator)
    given = {**public_params(est, data["X"].shape[1]), **params}
    if "accountant" in est.get_params() and "accountant" not in params:
        given["accountant"] = None
    return est.set_params(**given)


def _fit_quietly(est, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return est.fit(**data)


def _fitted_float_arrays(est):
    """Public fitted float arrays (the released model), by attribute name (``name[i]`` for lists of arrays).

    Boolean arrays count as 0/1 floats: a feature selector's released model is its mask.
    """
    found = {}
    for k, v in vars(est).items():
        if not k.endswith("_") or k.startswith("_"):
            continue
        items = list(enumerate(v)) if isinstance(v, list) else [(None, v)]
        for i, a in items:
            if isinstance(a, np.ndarray) and a.dtype.kind in "fb":
                found[k if i is None else f"{k}[{i}]"] = a.astype(np.float64) if a.dtype.kind == "b" else a
    return found


def _leaves(events):
    return Counter(leaf for event in events for leaf in event.flatten())


class _RecordingAccountant:
    """Minimal accountant that logs calls (and can refuse every spend)."""

    def __init__(self, refuse=False):
        self.refuse = refuse
        self.calls = []

    def check_event(self, event):
        self.calls.append(("check", event))
        if self.refuse:
            raise BudgetExceededError("test accountant refuses every spend")

    def record(self, event):
        self.calls.append(("record", event))
        if self.refuse:
            raise BudgetExceededError("test accountant refuses every spend")

    def __deepcopy__(self, memo):
        return self  # a handle, like dpsk's BudgetAccountant: clones share it


class _ReadTrackingArray:
    """Array-like that remembers whether anyone converted it to an array."""

    def __init__(self, array):
        self._array = array
        self.was_read = False

    def __array__(self, dtype=None, copy=None):
        self.was_read = True
        return self._array if dtype is None else self._array.astype(dtype)

    def __len__(self):
        self.was_read = True
        return len(self._array)


def _fit_must_fail(est, data, what):
    """Fit must raise ValueError/TypeError and release nothing; returns the exception."""
    with record_releases() as drawn:
        try:
            _fit_quietly(est, data)
        except (ValueError, TypeError) as exc:
            error = exc
        except Exception as exc:
            raise AssertionError(
                f"{type(est).__name__}: fit with {what} raised {type(exc).__name__} instead of a clear ValueError"
            ) from exc
        else:
            raise AssertionError(f"{type(est).__name__}: fit accepted {what}; it must raise a ValueError")
    if drawn:
        raise AssertionError(
            f"{type(est).__name__}: fit with {what} released {len(drawn)} noisy value(s) before failing"
        )
    return error


# --------------------------------------------------------------------------- checks


def check_privacy_params_validated(name, estimator):
    """Invalid ε (0, < 0, NaN) and δ (< 0, ≥ 1, NaN) raise before any release (ε = inf is valid)."""
    data = make_check_data(estimator)
    bad = {"epsilon": [0.0, -1.0, float("nan")]}
    if "delta" in estimator.get_params():
        bad["delta"] = [-0.1, 1.0, 1.5, float("nan")]
    for param, values in bad.items():
        for value in values:
            est = _prepared(estimator, data, **{param: value})
            _fit_must_fail(est, data, f"{param}={value}")


def check_infinite_epsilon_is_exact(name, estimator):
    """``epsilon=inf``: no noise (fits with different seeds agree), recorded as an infinite spend.

    A finite budget refuses the fit before X is read; an unlimited accountant records it
    and reports an infinite total.
    """
    data = make_check_data(estimator)
    fits = [_fit_quietly(_prepared(estimator, data, epsilon=math.inf, random_state=seed), data) for seed in (0, 1)]
    first, second = (_fitted_float_arrays(est) for est in fits)
    if first.keys() != second.keys() or not all(np.array_equal(first[k], second[k], equal_nan=True) for k in first):
        raise AssertionError(f"{name}: with epsilon=inf the fit still depends on random_state: noise was added")
    spent = getattr(fits[0], "privacy_spent_", None)
    if not isinstance(spent, PrivacyEvent) or not math.isinf(get_epsilon(spent, 0.5)):
        raise AssertionError(f"{name}: with epsilon=inf, privacy_spent_ must be an infinite spend, got {spent!r}")
    if "accountant" not in estimator.get_params():
        return
    tracked = _ReadTrackingArray(data["X"])
    finite = BudgetAccountant(epsilon=1e6, delta=0.5)
    try:
        _fit_quietly(_prepared(estimator, data, epsilon=math.inf, accountant=finite), {**data, "X": tracked})
    except BudgetExceededError:
        pass
    else:
        raise AssertionError(f"{name}: a finite budget accepted a fit with epsilon=inf")
    if tracked.was_read or len(finite.spent_budget):
        raise AssertionError(f"{name}: the refused epsilon=inf fit read X or spent budget")
    unlimited = BudgetAccountant()
    _fit_quietly(_prepared(estimator, data, epsilon=math.inf, accountant=unlimited), data)
    if not math.isinf(unlimited.total().epsilon):
        raise AssertionError(f"{name}: the epsilon=inf fit was recorded as {unlimited.total()}, not as infinite")


#: Seeds per ε of :func:`check_noise_decreases_with_epsilon`. The variance over seeds is heavy
#: tailed for some mechanisms (objective perturbation's Gamma-norm noise): LinearSVC's variance
#: ratio, 0.03-0.1 on most sets of 10 seeds, was 0.25 on one (the check's bound); over 10
#: disjoint sets of 20 seeds at most 0.14, over 5 sets of 40 at most 0.09.
NOISE_CHECK_SEEDS = 40


def check_noise_decreases_with_epsilon(name, estimator):
    """The spread of the fitted model over seeds is much smaller at ε = 50 than at ε = 0.5."""
    data = make_check_data(estimator, n_samples=60)

    def spread(epsilon):
        fits = [
            _fitted_float_arrays(_fit_quietly(_prepared(estimator, data, epsilon=epsilon, random_state=seed), data))
            for seed in range(NOISE_CHECK_SEEDS)
        ]
        common = [k for k in fits[0] if all(k in f and f[k].shape == fits[0][k].shape for f in fits)]
        return sum(float(np.var(np.stack([f[k] for f in fits]), axis=0).sum()) for k in common)

    low, high = spread(0.5), spread(50.0)
    if not low > 0:
        raise AssertionError(f"{name}: the fitted model does not vary over seeds at epsilon=0.5: no noise?")
    if not high < 0.25 * low:
        raise AssertionError(
            f"{name}: the fitted model varies as much at epsilon=50 as at epsilon=0.5 "
            f"(variance ratio {high / low:.3g}); the noise must shrink as epsilon grows"
        )


def check_random_state_none_is_fresh(name, estimator, max_fits=20):
    """``random_state=None`` gives different fits even after ``np.random.seed(0)``.

    Fits until one differs from the first (at most ``max_fits``): a discrete release
    (a feature selector's mask) can coincide by chance, 20 times with probability ~1e-9.
    """
    data = make_check_data(estimator)
    saved = np.random.get_state()

    def fresh_fit():
        np.random.seed(0)
        random.seed(0)
        return _fitted_float_arrays(_fit_quietly(_prepared(estimator, data, random_state=None), data))

    try:
        first = fresh_fit()
        if not first:
            raise AssertionError(f"{name}: no fitted float array to compare")
        for _ in range(max_fits - 1):
            other = fresh_fit()
            if not all(np.array_equal(first[k], other.get(k), equal_nan=True) for k in first):
                return
    finally:
        np.random.set_state(saved)
    raise AssertionError(
        f"{name}: {max_fits} fits with random_state=None after np.random.seed(0) are identical: "
        "the noise comes from numpy's global state (or is missing)"
    )


def check_random_state_int_reproducible(name, estimator):
    """Two fits with the same int ``random_state`` are identical."""
    data = make_check_data(estimator)
    first, second = (
        _fitted_float_arrays(_fit_quietly(_prepared(estimator, data, random_state=7), data)) for _ in range(2)
    )
    if first.keys() != second.keys() or not all(np.array_equal(first[k], second[k], equal_nan=True) for k in first):
        raise AssertionError(f"{name}: two fits with random_state=7 differ")


_RANDOM_TYPES = (
    np.random.Generator,
    np.random.BitGenerator,
    np.random.SeedSequence,
    np.random.RandomState,
    random.Random,
)
_SUSPECT_NAMES = ("seed", "rng", "generator", "random_state", "entropy")


def _find_randomness(obj, path, seen, hyper_params=()):
    """Paths under ``obj`` holding a random generator or a seed-like attribute."""
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, complex, bool, type(None), type)):
        return []
    seen.add(id(obj))
    if isinstance(obj, _RANDOM_TYPES):
        return [f"{path} ({type(obj).__name__})"]
    if isinstance(obj, np.ndarray):
        items = enumerate(obj.ravel()) if obj.dtype == object else ()
        return [p for i, v in items for p in _find_randomness(v, f"{path}[{i}]", seen)]
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = enumerate(obj)
    elif hasattr(obj, "__dict__") and not inspect.ismodule(obj) and not callable(obj) or hasattr(obj, "get_params"):
        attributes = vars(obj) if hasattr(obj, "__dict__") else {}
        # Hyper-parameters are the user's (random_state itself is allowed); fitted state is not.
        params = obj.get_params(deep=False) if hasattr(obj, "get_params") else {}
        found = []
        for key, value in attributes.items():
            if key in params:
                continue
            if any(s in key.lower() for s in _SUSPECT_NAMES):
                found.append(f"{path}.{key} (name suggests a seed or generator)")
            found += _find_randomness(value, f"{path}.{key}", seen)
        return found
    else:
        return []
    return [p for k, v in items for p in _find_randomness(v, f"{path}[{k!r}]", seen)]


def check_no_generator_or_seed_stored(name, estimator):
    """No Generator, BitGenerator, SeedSequence, RandomState or seed is kept after fit.

    Walks ``vars(estimator)`` recursively (lists, dicts, nested objects), skipping the
    hyper-parameters (``random_state`` is the user's). PCG64 can be rewound, so a kept
    generator lets anyone regenerate, and subtract, the noise.
    """
    data = make_check_data(estimator)
    for random_state in (None, 3):
        est = _fit_quietly(_prepared(estimator, data, random_state=random_state), data)
        found = _find_randomness(est, name, set())
        if found:
            raise AssertionError(f"{name}: fitted estimator keeps randomness: {', '.join(found)}")


def check_privacy_spent_recorded(name, estimator):
    """``privacy_spent_`` is a PrivacyEvent, checked then recorded on the accountant."""
    data = make_check_data(estimator)
    accountant = _RecordingAccountant()
    est = _fit_quietly(_prepared(estimator, data, accountant=accountant), data)
    spent = getattr(est, "privacy_spent_", None)
    if not isinstance(spent, PrivacyEvent):
        raise AssertionError(f"{name}: after fit, privacy_spent_ must be a PrivacyEvent, got {type(spent).__name__}")
    kinds = [kind for kind, _ in accountant.calls]
    recorded = [event for kind, event in accountant.calls if kind == "record"]
    if not recorded or "check" not in kinds or kinds.index("check") > kinds.index("record"):
        raise AssertionError(f"{name}: fit must call accountant.check_event before accountant.record; calls: {kinds}")
    if _leaves(recorded) != _leaves([spent]):
        raise AssertionError(f"{name}: the accountant recorded {recorded}, but privacy_spent_ is {spent}")


def check_budget_checked_before_data_is_read(name, estimator):
    """With an exhausted budget, fit raises BudgetExceededError without reading X or releasing."""
    data = make_check_data(estimator)
    est = _prepared(estimator, data, accountant=_RecordingAccountant(refuse=True))
    tracked = _ReadTrackingArray(data["X"])
    with record_releases() as drawn:
        try:
            _fit_quietly(est, {**data, "X": tracked})
        except BudgetExceededError:
            pass
        else:
            raise AssertionError(f"{name}: fit succeeded although the accountant refused the spend")
    if tracked.was_read:
        raise AssertionError(f"{name}: fit read X before checking the privacy budget")
    if drawn:
        raise AssertionError(f"{name}: fit released noise although the budget check failed")


def check_releases_match_declared_cost(name, estimator, n_features=3):
    """The releases a fit makes (``note_release``) are exactly the leaves of ``privacy_spent_``."""
    data = make_check_data(estimator, n_features=n_features)
    est = _prepared(estimator, data, random_state=0)
    with record_releases() as drawn:
        _fit_quietly(est, data)
    if not isinstance(getattr(est, "privacy_spent_", None), PrivacyEvent):
        raise AssertionError(f"{name}: after fit, privacy_spent_ must be a PrivacyEvent")
    declared = _leaves([est.privacy_spent_])
    made = _leaves(drawn)
    if made != declared:
        raise AssertionError(
            f"{name} (n_features={n_features}): releases made {dict(made)} differ from the "
            f"declared cost {dict(declared)} (missing: {dict(declared - made)}, undeclared: {dict(made - declared)})"
        )


def check_sample_weight_counts_once(name, estimator):
    """Weights above 1 count as 1: bootstrap counts as ``sample_weight`` give the fit of weight 1.

    Both fits draw their noise from a fresh copy of the same bit generator, so any
    difference comes from the data: a weight of k counted as more than one row (k rows
    cost kε, while the fit records ε).
    """
    data = make_check_data(estimator)
    n_samples = data["X"].shape[0]
    counts = np.arange(n_samples) % 4  # 0 (left out), 1, 2 and 3 copies
    fits = [
        _fitted_float_arrays(
            _fit_quietly(
                _prepared(estimator, data, random_state=np.random.PCG64(11)), {**data, "sample_weight": weights}
            )
        )
        for weights in (counts, (counts > 0).astype(np.float64))
    ]
    first, second = fits
    if first.keys() != second.keys() or not all(np.array_equal(first[k], second[k], equal_nan=True) for k in first):
        raise AssertionError(
            f"{name}: a sample_weight of k > 1 changes the fit compared with a weight of 1: a row "
            "repeated through its weight counts more than once (clip the weights to [0, 1])"
        )


def check_inputs_not_mutated(name, estimator):
    """fit leaves X, y and groups untouched (float64 and float32, C order)."""
    for dtype in (np.float64, np.float32):
        data = make_check_data(estimator, dtype=dtype)
        data["X"][0] = 50.0  # out of bounds: an in-place clip would show
        copies = {k: v.copy() for k, v in data.items()}
        _fit_quietly(_prepared(estimator, data), data)
        for key, value in data.items():
            if not np.array_equal(value, copies[key]):
                raise AssertionError(f"{name}: fit modified its input {key} ({np.dtype(dtype).name})")


def _accepts_data(estimator, param):
    """Whether ``param``'s constraints take the explicit ``"data"`` (derive it from the data)."""
    for constraint in getattr(estimator, "_parameter_constraints", {}).get(param, ()):
        options = getattr(constraint, "options", None)
        if options is not None and "data" in options:
            return True
    return False


def _n_leaves(event):
    return len(event.flatten()) if hasattr(event, "flatten") else 0


def check_privacy_leak_warning(name, estimator):
    """No sensitivity parameter is ever derived from the data silently (issue 19).

    All given: no PrivacyLeakWarning. Each parameter (or group of alternatives) left to
    None: either estimated privately — no warning, and the fit's one event holds more
    releases than with the public values (the bound's) — or derived from the data with a
    PrivacyLeakWarning (``classes``, and estimators without private bounds). Set to
    ``"data"`` (where accepted): the warning. Fits never overwrite the hyper-parameter.
    """
    data = make_check_data(estimator)
    given = public_params(estimator, data["X"].shape[1])

    def leak_warnings(est):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(**data)
        return [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]

    public = _prepared(estimator, data)
    if leak_warnings(public):
        raise AssertionError(f"{name}: PrivacyLeakWarning although every sensitivity parameter was given")
    public_leaves = _n_leaves(getattr(public, "privacy_spent_", None))
    # Alternatives (any one suffices) are left out together; other parameters one at a time.
    groups = [
        tuple(p for p in group if p in given) for group in getattr(estimator, "_alternative_sensitivity_params", ())
    ]
    grouped = {p for group in groups for p in group}
    groups += [(param,) for param in given if param not in grouped]
    for group in filter(None, groups):
        est = _prepared(estimator, data, **dict.fromkeys(group))
        try:
            caught = leak_warnings(est)
        except ValueError:
            continue  # the estimator requires this parameter: nothing is derived from data
        released = _n_leaves(getattr(est, "privacy_spent_", None)) > public_leaves
        if not caught and not released:
            raise AssertionError(
                f"{name}: {' and '.join(group)}=None derives it from the data without a PrivacyLeakWarning "
                "(and without a private release of it in the fit's event)"
            )
        overwritten = [p for p in group if est.get_params()[p] is not None]
        if overwritten:
            raise AssertionError(f"{name}: fit overwrote the hyper-parameter {overwritten[0]}")
    for param in (p for p in given if _accepts_data(estimator, p)):
        est = _prepared(estimator, data, **{param: "data"})
        if not leak_warnings(est):
            raise AssertionError(f'{name}: {param}="data" derives it from the data without a PrivacyLeakWarning')
        if est.get_params()[param] != "data":
            raise AssertionError(f"{name}: fit overwrote the hyper-parameter {param}")


def check_bad_input_releases_nothing(name, estimator):
    """NaN, inf, empty and one-class inputs raise a clear ValueError, release nothing, spend nothing.

    The error messages must not contain data values.
    """
    data = make_check_data(estimator)
    cases = {}
    for label, value in (("NaN", np.nan), ("inf", np.inf)):
        X = data["X"].copy()
        X[1, 0] = _MARKER
        X[2, 0] = value
        cases[f"X containing {label}"] = {**data, "X": X}
    cases["empty X"] = {k: v[:0] for k, v in data.items()}
    if is_classifier(estimator):
        cases["y with one class (classes derived from y)"] = {**data, "y": np.full(data["y"].shape, int(_MARKER))}
    for what, bad in cases.items():
        accountant = _RecordingAccountant()
        extra = {"accountant": accountant} if "accountant" in estimator.get_params() else {}
        if "one class" in what and "classes" in estimator.get_params():
            extra["classes"] = None
        error = _fit_must_fail(_prepared(estimator, data, **extra), bad, what)
        if _MARKER_TEXT in str(error):
            raise AssertionError(f"{name}: the error for {what} shows a data value: {error}")
        if any(kind == "record" for kind, _ in accountant.calls):
            raise AssertionError(f"{name}: fit with {what} spent privacy budget before failing")


# --------------------------------------------------------------------------- runners


def dp_checks(estimator):
    """Yield the DP contract checks that apply to ``estimator``, as ``check(estimator)`` callables."""
    params = estimator.get_params()
    checks = [
        check_privacy_params_validated,
        check_infinite_epsilon_is_exact,
        check_noise_decreases_with_epsilon,
        check_random_state_none_is_fresh,
        check_random_state_int_reproducible,
        check_no_generator_or_seed_stored,
        check_releases_match_declared_cost,
        check_inputs_not_mutated,
        check_privacy_leak_warning,
        check_bad_input_releases_nothing,
    ]
    if "accountant" in params:
        checks += [check_privacy_spent_recorded, check_budget_checked_before_data_is_read]
    if "sample_weight" in inspect.signature(estimator.fit).parameters:
        checks.append(check_sample_weight_counts_once)
    name = type(estimator).__name__
    for check in checks:
        yield functools.partial(check, name)


def _check_name(check):
    return check.func.__name__ if isinstance(check, functools.partial) else check.__name__


def check_dp_estimator(estimator):
    """Run every DP contract check on ``estimator``; raise the first failure."""
    for check in dp_checks(estimator):
        check(estimator)


def parametrize_with_dp_checks(estimators, *, expected_failed_checks=None):
    """pytest decorator: one test per (estimator, DP contract check), like scikit-learn's.

    Parameters
    ----------
    estimators : list of estimators
    expected_failed_checks : callable or None, default=None
        ``expected_failed_checks(estimator) -> {check name: reason}``: those checks are
        marked ``xfail(strict=True)`` with the reason (as in scikit-learn's function).

    Returns
    -------
    decorator : pytest.MarkDecorator
        ``pytest.mark.parametrize("estimator, check", ...)``.

    Examples
    --------
    ::

        @parametrize_with_dp_checks([MyDPEstimator(epsilon=1.0)])
        def test_dp_contract(estimator, check):
            check(estimator)
    """
    import pytest

    cases = []
    for est in estimators:
        expected = expected_failed_checks(est) if expected_failed_checks is not None else {}
        for check in dp_checks(est):
            reason = expected.get(_check_name(check))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(est, check, marks=marks, id=f"{type(est).__name__}-{_check_name(check)}"))
    return pytest.mark.parametrize("estimator, check", cases)
