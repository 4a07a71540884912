# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validation shared by every mechanism and estimator: randomness, privacy parameters, bounds.

One place for each policy:

* :func:`check_random_state`, :func:`release_generator`, :func:`rekey_generator` — the
  randomness of a release; they live in :mod:`dpsk.utils._random` and are re-exported here;
* :func:`check_privacy_params` — what a valid ``(epsilon, delta)`` is;
* :func:`check_bounds`, :func:`check_data_norm` — sensitivity assumptions, and
  :func:`warn_data_derived` for the (leaky) case where they come from the data;
* :func:`_check_sample_weight_dp` — what a ``sample_weight`` is (clipped to [0, 1], so
  that a row never counts more than once), with ``_combine_weights`` and
  ``_weight_units`` for the estimators that weight user-level rows or integer counts;
* :func:`screen_invalid` — the ``on_invalid`` policy: what a release does with records
  outside its declared domain (raise, or drop or clip them inside the mechanism).

Error messages name parameters and shapes, never data values.
"""

import math
import numbers
import warnings
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets

from dpsk._core._common import _check_sample_weight
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.utils._random import check_random_state, rekey_generator, release_generator
from dpsk.utils._sklearn_compat import StrOptions, validate_parameter_constraints
from dpsk.utils._sparse import column_min_max, row_norms_l2, screen_sparse_rows

__all__ = [
    "check_bounds",
    "check_data_norm",
    "check_privacy_params",
    "check_random_state",
    "rekey_generator",
    "release_generator",
    "resolve_bounds",
    "resolve_classes",
    "resolve_data_norm",
    "warn_data_derived",
]

#: Resolution of sample weights in the estimators that release integer counts with
#: integer noise (discrete Laplace): a weight w counts as floor(w · WEIGHT_GRID) units of
#: 1/WEIGHT_GRID. A public constant: the sensitivity in units is WEIGHT_GRID per row.
WEIGHT_GRID = 2**10


def _check_real(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def check_privacy_params(epsilon, delta=0.0, *, allow_zero_epsilon=False):
    """Validate a privacy budget ``(epsilon, delta)`` and return it as floats.

    Parameters
    ----------
    epsilon : float
        Must be > 0 (or >= 0 with ``allow_zero_epsilon=True``, for mechanisms whose whole
        guarantee is in ``delta``). ``float("inf")`` is accepted: the non-private release,
        without noise, recorded as an infinite spend (:func:`is_non_private`).
    delta : float, default=0.0
        Must lie in [0, 1).
    allow_zero_epsilon : bool, default=False

    Returns
    -------
    epsilon, delta : float

    Raises
    ------
    TypeError, ValueError

    Notes
    -----
    **Privacy.** Validation only: ε must be positive (0 only where allowed; ∞ means no
    privacy at all), δ in [0, 1). A value that fails raises before any data is read.
    """
    epsilon = _check_real(epsilon, "epsilon")
    delta = _check_real(delta, "delta")
    if epsilon < 0 or (epsilon == 0 and not allow_zero_epsilon):
        raise ValueError(f"epsilon must be {'>= 0' if allow_zero_epsilon else '> 0'}, got {epsilon}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if epsilon == 0 and delta == 0:
        raise ValueError("epsilon and delta cannot both be zero")
    return epsilon, delta


def is_non_private(epsilon):
    """Whether ``epsilon`` asks for the non-private release (``float("inf")``: no noise).

    The one test the mechanisms make before calibrating noise: an infinite ε releases
    the exact value and records :data:`~dpsk.accounting.NON_PRIVATE_EVENT` (an infinite
    spend, refused by any finite budget).
    """
    return math.isinf(epsilon)


def check_bounds(bounds, n_features, *, name="bounds", feature_names=None):
    """Validate per-feature bounds and broadcast them to two float64 arrays.

    Parameters
    ----------
    bounds : tuple or list (lower, upper), or dict
        Scalars (same bounds for every feature) or array-likes of shape (n_features,).
        Finite, with ``lower <= upper`` elementwise. A dict gives ``(lower, upper)`` per
        feature: keyed by feature name (the ``feature_names_in_`` of a DataFrame X) or
        by column index, and covering every feature.
    n_features : int
    name : str, default="bounds"
        Parameter name used in error messages.
    feature_names : array-like of str or None, default=None
        The names of X's columns, for dict bounds keyed by name.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,), dtype float64
        Fresh arrays (safe to keep as fitted attributes).

    Notes
    -----
    **Privacy.** Validation only, of bounds given by the caller: it never looks at
    data. The bounds must be public (not derived from the protected data) for the
    estimator's guarantee to hold.
    """
    if isinstance(bounds, Mapping):
        bounds = _bounds_by_feature(bounds, n_features, name, feature_names)
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError(f"{name} must be a tuple (lower, upper)")
    out = []
    for side, value in zip(("lower", "upper"), bounds):
        arr = np.asarray(value, dtype=np.float64)
        if arr.ndim == 0:
            arr = np.full(n_features, float(arr))
        elif arr.shape != (n_features,):
            raise ValueError(
                f"{name}: {side} bound must be a scalar or have shape ({n_features},), got shape {arr.shape}"
            )
        else:
            arr = arr.copy()
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: {side} bound must be finite")
        out.append(arr)
    lower, upper = out
    if np.any(lower > upper):
        raise ValueError(f"{name}: lower bound must not exceed upper bound")
    return lower, upper


def _bounds_by_feature(bounds, n_features, name, feature_names):
    """(lower, upper) lists from a dict of per-feature bounds, keyed by name or column index."""
    names = [] if feature_names is None else [str(f) for f in feature_names]
    column = {f: j for j, f in enumerate(names)}
    lower, upper = [None] * n_features, [None] * n_features
    for key, pair in bounds.items():
        if isinstance(key, numbers.Integral) and not isinstance(key, bool) and 0 <= key < n_features:
            j = int(key)
        elif isinstance(key, str) and key in column:
            j = column[key]
        else:
            known = f"the features are {names}" if names else "X has no feature names (pass a DataFrame)"
            raise ValueError(f"{name}: {key!r} is not a feature of X ({known})")
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"{name}[{key!r}] must be a pair (lower, upper)")
        lower[j], upper[j] = pair
    missing = [names[j] if names else j for j in range(n_features) if lower[j] is None]
    if missing:
        raise ValueError(f"{name} gives no bounds for {missing}: every feature needs public bounds")
    return lower, upper


def check_data_norm(data_norm, *, name="data_norm"):
    """Validate an L2 norm bound on rows: a finite float > 0.

    Notes
    -----
    **Privacy.** Validation only, of a norm bound given by the caller: it never
    looks at data. The bound must be public for the estimator's guarantee to hold.
    """
    value = _check_real(data_norm, name)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def _warn_leak(what, param, stacklevel):
    """Emit the :class:`PrivacyLeakWarning` of a public input derived from the data (one text).

    ``what`` says what was derived and where it went; ``stacklevel`` counts from the
    caller of this function.
    """
    warnings.warn(
        f"{what}. This leaks information about the data outside the privacy guarantee. Pass "
        f"`{param}` explicitly (from domain knowledge, not from this data) to remove this warning.",
        PrivacyLeakWarning,
        stacklevel=stacklevel + 1,
    )


def warn_data_derived(estimator, param, attribute=None):
    """Warn that ``param`` was left out and is being derived from the data.

    The derived value must be stored on ``attribute`` (never written back into the
    hyper-parameter; None for functions, which store nothing) and is not protected by
    differential privacy.

    Notes
    -----
    **Privacy.** Emits the :class:`~dpsk.exceptions.PrivacyLeakWarning` of a
    sensitivity assumption derived from the data; the warning names the parameter
    and the fitted attribute, never data values.
    """
    owner = type(estimator).__name__ if not isinstance(estimator, str) else estimator
    stored = f" and stored in `{attribute}`" if attribute is not None else ""
    _warn_leak(f"{owner}: `{param}` was not given, so it is computed from the data{stored}", param, stacklevel=3)


def resolve_bounds(estimator, bounds, X, *, param="bounds", attribute="bounds_"):
    """Public bounds if given, else data-derived bounds with a :class:`PrivacyLeakWarning`.

    Parameters
    ----------
    estimator : object
        The estimator (used in the warning).
    bounds : tuple or list (lower, upper), dict, "data", or None
        See :func:`check_bounds`; dict keys are matched against the estimator's
        ``feature_names_in_``. ``"data"`` (or None, for estimators without private
        bounds): the data's minimum and maximum.
    X : ndarray of shape (n_samples, n_features)
        Validated data; only read when ``bounds`` is ``"data"`` or None.
    param, attribute : str
        Hyper-parameter and fitted-attribute names, for the warning (``attribute=None``
        for a function, which stores nothing).

    Returns
    -------
    lower, upper : ndarray of shape (n_features,), dtype float64

    Notes
    -----
    **Privacy.** When ``bounds`` is ``"data"`` (or None) the bounds are the data's minimum and
    maximum: a :class:`~dpsk.exceptions.PrivacyLeakWarning` is emitted, and the
    estimator's release is not differentially private with respect to them. Given
    bounds are validated and used as they are.
    """
    if bounds is None or _asks_for_data(bounds):
        warn_data_derived(estimator, param, attribute)
        bounds = column_min_max(X)
    # Feature bounds may be keyed by X's column names; a target's bounds never are.
    names = None if param == "bounds_y" else getattr(estimator, "feature_names_in_", None)
    return check_bounds(bounds, X.shape[1], name=param, feature_names=names)


def resolve_data_norm(estimator, data_norm, X, *, param="data_norm", attribute="data_norm_"):
    """Public row-norm bound if given, else the largest row norm with a :class:`PrivacyLeakWarning`.

    Notes
    -----
    **Privacy.** When ``data_norm`` is ``"data"`` (or None) the bound is the largest row norm of the
    data: a :class:`~dpsk.exceptions.PrivacyLeakWarning` is emitted, and the
    estimator's release is not differentially private with respect to it.
    """
    if data_norm is None or _asks_for_data(data_norm):
        warn_data_derived(estimator, param, attribute)
        norms = row_norms_l2(X)
        data_norm = float(norms.max()) if norms.size and norms.max() > 0 else 1.0
    return check_data_norm(data_norm, name=param)


def _asks_for_data(value):
    """Whether a sensitivity parameter is the explicit ``"data"`` (derive it from the data, with a warning)."""
    return isinstance(value, str) and value == "data"


#: The error for ``classes="private"`` (the same words in the docstrings).
PRIVATE_CLASSES_ERROR = (
    '{owner}: classes="private" is not possible: a private label set cannot be estimated (a label that '
    "one record holds is exactly what the guarantee hides). Pass the public label set as `{param}` (e.g. "
    "from the schema)."
)


def refuse_private_classes(estimator, classes, *, param="classes"):
    """Raise the clear :data:`PRIVATE_CLASSES_ERROR` for ``classes="private"`` (before any spend)."""
    if isinstance(classes, str) and classes == "private":
        owner = estimator if isinstance(estimator, str) else type(estimator).__name__
        raise ValueError(PRIVATE_CLASSES_ERROR.format(owner=owner, param=param))


def _check_classification_targets(y):
    """scikit-learn's ``check_classification_targets``, without its cost on the usual y.

    A non-empty 1-d NumPy array of booleans, integers or integral floats is a "binary"
    or "multiclass" target, which scikit-learn accepts; it then warns only if more than
    half of more than 20 rows hold distinct labels. Such a y passes here at the cost of
    one comparison (scikit-learn's target-type inference converts and inspects it three
    times: a fixed cost per fit of a few tenths of a millisecond). Any other y, and one
    scikit-learn would warn about, goes through scikit-learn: same errors, same warnings.
    """
    if type(y) is np.ndarray and y.ndim == 1 and y.size:
        kind = y.dtype.kind
        if kind == "f" and y.dtype.itemsize <= 8:
            with np.errstate(invalid="ignore"):  # NaN, inf, huge values: left to scikit-learn
                integral = not np.any(y != y.astype(np.int64))  # scikit-learn's test of integral floats
        else:
            integral = kind in "biu"
        if integral and (y.size <= 20 or np.unique(y).size <= round(0.5 * y.size)):
            return
    check_classification_targets(y)


def resolve_classes(estimator, classes, y, *, param="classes"):
    """Public class labels if given (y is checked against them), else ``np.unique(y)`` with a warning.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        Sorted unique labels.
    y_index : ndarray of shape (n_samples,), dtype intp
        Position of each label of y in ``classes``.

    Raises
    ------
    ValueError
        If y is not a classification target; if y holds a label outside ``classes``
        (the message does not say which); if ``classes`` has duplicates or fewer than two
        labels; if ``classes`` is None and y holds one class only; or if ``classes`` is
        ``"private"`` (a private label set is not possible: the public label set is
        required).

    Notes
    -----
    **Privacy.** When ``classes`` is None the labels present in y are used: a
    :class:`~dpsk.exceptions.PrivacyLeakWarning` is emitted (the set of labels is
    information about the data). Given classes are public; labels of y outside them
    are rejected without showing their values. Unlike bounds, a left-out ``classes``
    is not estimated privately: a label set has no private estimate that keeps every
    label of y (a label held by one record is what the guarantee hides).
    """
    refuse_private_classes(estimator, classes, param=param)
    _check_classification_targets(y)
    y = np.asarray(y)
    if classes is None:
        warn_data_derived(estimator, param, "classes_")
        classes, y_index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                "y holds one class only; a classifier needs at least two. Pass the public "
                f"list of labels as `{param}` if other classes exist but are absent here."
            )
        return classes, y_index.astype(np.intp, copy=False)
    classes = np.asarray(classes)
    if classes.ndim != 1 or classes.size < 2:
        raise ValueError(f"{param} must be a 1-d array-like of at least two labels")
    sorted_classes = np.unique(classes)
    if sorted_classes.size != classes.size:
        raise ValueError(f"{param} must not contain duplicate labels")
    y_index = np.searchsorted(sorted_classes, y)
    inside = y_index < sorted_classes.size
    inside[inside] = sorted_classes[y_index[inside]] == y[inside]
    if not np.all(inside):
        raise ValueError(
            f"y contains labels that are not in `{param}`; relabel or drop them before fitting "
            "(the offending labels are not shown, to avoid leaking data)."
        )
    return sorted_classes, y_index.astype(np.intp, copy=False)


def _check_sample_weight_dp(sample_weight, X):
    """Validate ``sample_weight`` for a private fit: None, or float64 weights clipped to [0, 1].

    Parameters
    ----------
    sample_weight : None, float or array-like of shape (n_samples,)
        A scalar is broadcast to every row.
    X : ndarray of shape (n_samples, n_features)
        The validated data (only its number of rows is used).

    Returns
    -------
    sample_weight : None or ndarray of shape (n_samples,), dtype float64, C-contiguous
        ``min(w, 1)`` for each row (a fresh array: the caller's is never modified).

    Raises
    ------
    ValueError
        If the weights have the wrong shape, or hold NaN, ±inf or negative values (the
        message does not show them).

    Notes
    -----
    **Privacy.** A weight scales the contribution of its (already clipped) row to every
    sum, count and loss term of the fit. Clipping the weights to [0, 1] keeps each row's
    contribution within what one row may contribute, so the add/remove-one-row
    sensitivity of every release is unchanged: a weight above 1 counts as 1, and a row
    repeated k times through a weight of k (scikit-learn's ``BaggingClassifier`` passes
    bootstrap counts this way) costs ε once, not kε. The weights are part of the data:
    an error for weights outside [0, ∞) reveals only that they left that domain.
    """
    if sample_weight is None:
        return None
    # Checked by dpsk's kernel check rather than scikit-learn's private helper, whose
    # keywords change between releases (all-zero weights must be accepted: refusing them
    # would be an error that depends on the values). A copy: the caller's array is kept.
    weights = _check_sample_weight(np.array(sample_weight, dtype=np.float64, copy=True), X.shape[0])
    return np.minimum(weights, 1.0, out=weights)


def _combine_weights(*weights):
    """The product of per-row weights in [0, 1] (None entries mean all ones), or None.

    A user-level fit weights a user's rows so that the user weighs at most h rows;
    multiplying by sample weights in [0, 1] can only lower each row's weight, so the
    user's total stays below h and the user-level sensitivity holds.
    """
    given = [w for w in weights if w is not None]
    if not given:
        return None
    out = np.array(given[0], dtype=np.float64, copy=True)
    for w in given[1:]:
        out *= w
    return out


def _weight_units(sample_weight):
    """Integer units of weights in [0, 1] on the public grid: ``floor(w · WEIGHT_GRID)``.

    For estimators that release integer counts with exact integer noise: weighted counts
    are then exact integer sums (in units of 1/WEIGHT_GRID), and one row adds at most
    WEIGHT_GRID units where it added 1. Returns ``(units, grid)``: ``(None, 1)`` without
    weights (the unweighted counts), else a float64 array of integers and WEIGHT_GRID.
    """
    if sample_weight is None:
        return None, 1
    return np.floor(sample_weight * WEIGHT_GRID), WEIGHT_GRID


# ---------------------------------------------------------------------------------------
# Data outside the declared domain: the ``on_invalid`` policy
# ---------------------------------------------------------------------------------------
#
# A release assumes its data lie in a declared domain (finite values, labels in the
# public ``classes``, non-negative counts, present user ids). ``on_invalid="raise"`` (the
# default) refuses other data with an error that reveals only that some record left the
# domain. ``"drop"`` and ``"clip"`` make the release total instead: a fixed, per-record
# map f sends each record to a valid record (clip) or to nothing (drop), and the
# mechanism runs on f(D). Under add/remove-one-record, f(D) and f(D') of neighbours D'
# = D + {x} are equal (x dropped) or neighbours (f(x) added): the sensitivity of every
# release is unchanged and M∘f is as private as M. With ``groups`` the same holds for
# add/remove one user (f removes or maps some of that user's rows only). It does not
# hold when the records' number is public (``public_user_counts=True``): dropping changes
# a public count, so that combination is refused.

#: The values of every ``on_invalid`` parameter.
ON_INVALID_OPTIONS = ("raise", "drop", "clip")

#: Its ``_parameter_constraints`` entry.
ON_INVALID_CONSTRAINT = [StrOptions(set(ON_INVALID_OPTIONS))]


def check_on_invalid(on_invalid, caller):
    """Validate ``on_invalid`` for a function (estimators use ``_parameter_constraints``).

    Raises scikit-learn's ``InvalidParameterError`` (a ``ValueError``), as the
    estimators' constraint does, naming ``caller``.
    """
    validate_parameter_constraints({"on_invalid": ON_INVALID_CONSTRAINT}, {"on_invalid": on_invalid}, caller)
    return on_invalid


def screen_invalid(on_invalid, values, *, valid=None, infinite="clip"):
    """Apply the ``on_invalid`` policy to records: which to keep, with which values.

    Parameters
    ----------
    on_invalid : {"raise", "drop", "clip"}
        ``"raise"``: nothing is done here (the caller's checks raise as before).
        ``"drop"``: records holding NaN or ±inf, or marked invalid by ``valid``, are
        removed. ``"clip"``: records holding NaN, or marked invalid by ``valid``, are
        removed; infinite values are treated as ``infinite`` says.
    values : ndarray of shape (n_records, ...)
        The values of every record (record ``i`` is ``values[i]``). Not modified.
    valid : ndarray of bool of shape (n_records,) or None
        The caller's other checks (label in ``classes``, user id present, weight valid,
        a count non-negative...). Ignored under ``"raise"``.
    infinite : {"clip", "drop", "keep"}, default="clip"
        Under ``"clip"``: ``"clip"`` replaces ±inf by the largest finite value of the
        dtype with that sign, which the release's own clipping then takes to its public
        bound; ``"drop"`` removes records holding ±inf (where the domain has no bound
        to clip to); ``"keep"`` leaves them (where the release handles them, e.g. a
        threshold).

    Returns
    -------
    values : ndarray
        ``values``, or a copy with the infinities replaced; all records, the dropped ones
        included (select with ``keep``).
    keep : ndarray of bool of shape (n_records,) or None
        The records to keep; None when all are kept.

    Notes
    -----
    **Privacy.** Each record is kept, dropped or mapped by a function of that record
    alone, fixed before the data is read. A release run on the screened data is as
    private as on valid data: for add/remove neighbours D and D + {x}, the screened
    datasets are equal (x dropped) or neighbours (x mapped), so the sensitivity holds.
    How many records were dropped is not released (it is part of the data the noise
    covers, like the count of the valid ones).
    """
    if on_invalid == "raise":
        return values, None
    if on_invalid not in ON_INVALID_OPTIONS:
        raise ValueError(f"on_invalid must be one of {ON_INVALID_OPTIONS}, got {on_invalid!r}")
    if sp.issparse(values):  # the same rule on the stored values (dpsk.utils._sparse)
        n = values.shape[0]
        keep = np.ones(n, dtype=bool) if valid is None else np.array(valid, dtype=bool, copy=True).reshape(n)
        values, keep = screen_sparse_rows(on_invalid, values, keep, infinite)
        return values, (None if keep.all() else keep)
    values = np.asarray(values)
    n = values.shape[0]
    keep = np.ones(n, dtype=bool) if valid is None else np.array(valid, dtype=bool, copy=True).reshape(n)
    if values.dtype.kind in "fc":
        rows = values.reshape(n, -1)
        if on_invalid == "drop" or infinite == "drop":
            keep &= np.isfinite(rows).all(axis=1)
        else:
            keep &= ~np.isnan(rows).any(axis=1)
            if infinite == "clip":
                infinities = np.isinf(values)
                if infinities.any():
                    largest = np.finfo(values.dtype).max
                    values = np.where(infinities, np.copysign(largest, values), values).astype(values.dtype)
    return values, (None if keep.all() else keep)


def take_records(keep, *arrays):
    """``arrays`` restricted to the records ``keep`` (None entries and ``keep=None`` pass through)."""
    if keep is None:
        return arrays
    return tuple(None if a is None else (a[keep] if sp.issparse(a) else np.asarray(a)[keep]) for a in arrays)


def screen_sample_weight(on_invalid, sample_weight, n_samples):
    """Invalid sample weights under ``on_invalid``: ``(weights, valid)``.

    ``"raise"``: ``(sample_weight, None)`` unchanged (:func:`_check_sample_weight_dp`
    raises on NaN, infinite or negative weights). ``"drop"``: rows whose weight is NaN,
    infinite or negative are marked invalid. ``"clip"``: weights are clipped to [0, 1]
    (−inf and negative weights count 0, +inf counts 1), NaN weights marked invalid.
    Weights of the wrong shape are returned as given (the shape error is public).
    """
    if on_invalid == "raise" or sample_weight is None:
        return sample_weight, None
    weights = np.array(sample_weight, dtype=np.float64, copy=True)
    if weights.ndim == 0:
        weights = np.full(n_samples, weights, dtype=np.float64)
    if weights.shape != (n_samples,):
        return sample_weight, None
    if on_invalid == "drop":
        valid = np.isfinite(weights) & (weights >= 0)
    else:
        valid = ~np.isnan(weights)
        np.clip(weights, 0.0, 1.0, out=weights)
    weights[~valid] = 0.0  # placeholders: these rows are dropped
    return weights, valid


def labels_in(classes, y):
    """Which labels of y are among the public ``classes`` (all, when ``classes`` is None).

    NaN and None are never among them. Used by ``on_invalid`` to find the rows whose
    label lies outside the declared domain, without raising.
    """
    y = np.asarray(y)
    if classes is None:
        if y.dtype.kind == "f":
            return ~np.isnan(y)
        if y.dtype.kind == "O":
            return np.array([not (v is None or (isinstance(v, float) and math.isnan(v))) for v in y], dtype=bool)
        return np.ones(y.shape[0], dtype=bool)
    classes = np.asarray(classes)
    if y.dtype.kind == "O" or classes.dtype.kind == "O":
        known = set(classes.tolist())
        return np.array([v in known for v in y.tolist()], dtype=bool)
    try:
        return np.isin(y, classes)
    except TypeError:  # incomparable types: no label is a class
        return np.zeros(y.shape[0], dtype=bool)
