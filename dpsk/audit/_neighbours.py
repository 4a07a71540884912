# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Worst-case neighbouring datasets for estimators, and projections of fitted models.

Black-box audits only see what the chosen neighbours and projection reveal, so both are
picked to make a privacy bug as visible as possible:

* neighbours differ by a *canary*: one row (or, with ``groups=``, all rows of one user)
  placed at the clipping boundary, where its influence is the full sensitivity, while the
  other rows sit at the opposite corner, so that the canary also moves ratios (means)
  as far as possible;
* the projection keeps the coordinate the canary moves most: a coefficient, the
  prediction at the canary, a centroid coordinate, a log-probability.
"""

import inspect

import numpy as np
from sklearn.base import is_classifier, is_regressor

__all__ = [
    "canary_neighbours",
    "canary_row",
    "project_attribute",
    "project_output",
    "worst_case_neighbours",
]


def canary_row(n_features, *, bounds=None, data_norm=None, direction=None):
    """A row on the clipping boundary: an extreme corner of ``bounds`` or a row of norm ``data_norm``.

    Parameters
    ----------
    n_features : int
    bounds : tuple (lower, upper), optional
        Per-feature bounds (scalars or arrays); the canary takes, per feature, the bound
        of larger magnitude (the upper one on ties).
    data_norm : float, optional
        L2 bound on rows; the canary has exactly this norm.
    direction : array-like of shape (n_features,), optional
        Direction of the canary for ``data_norm`` (default: the first axis, so that one
        coefficient carries all of the canary's influence).

    Returns
    -------
    row : ndarray of shape (n_features,)
    """
    if (bounds is None) == (data_norm is None):
        raise ValueError("give exactly one of bounds or data_norm")
    if bounds is not None:
        lower = np.broadcast_to(np.asarray(bounds[0], dtype=np.float64), (n_features,))
        upper = np.broadcast_to(np.asarray(bounds[1], dtype=np.float64), (n_features,))
        return np.where(np.abs(upper) >= np.abs(lower), upper, lower).copy()
    direction = np.eye(n_features)[0] if direction is None else np.asarray(direction, dtype=np.float64)
    if direction.shape != (n_features,) or not np.any(direction):
        raise ValueError(f"direction must be a non-zero vector of shape ({n_features},)")
    # Scale, then pull back inside the ball if rounding overshot: the canary must not be
    # clipped, or the audit would test a smaller sensitivity than the estimator claims.
    row = direction * (float(data_norm) / np.linalg.norm(direction))
    while np.linalg.norm(row) > data_norm:
        row = np.nextafter(row, 0.0)
    return row


def canary_neighbours(X, y=None, *, canary_X, canary_y=None, groups=None, canary_group=None):
    """Two neighbouring datasets: ``X`` without and with the canary rows.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or (n_samples, n_targets), optional
    canary_X : array-like of shape (n_features,) or (n_canary, n_features)
        One row (item-level privacy) or all rows of one user (with ``groups``).
    canary_y : scalar or array-like of shape (n_canary,) or (n_targets,), optional
        Required when ``y`` is given; with several targets, the canary's targets
        (broadcast to every canary row).
    groups : array-like of shape (n_samples,), optional
        User ids; the canary rows then belong to one new user, ``canary_group``.
    canary_group : scalar, optional
        Default: one more than the largest integer id in ``groups``.

    Returns
    -------
    without, with_canary : dict
        ``fit`` keyword arguments (``X``, and ``y``/``groups`` when given).
    """
    X = np.asarray(X, dtype=np.float64)
    canary_X = np.atleast_2d(np.asarray(canary_X, dtype=np.float64))
    if canary_X.shape[1] != X.shape[1]:
        raise ValueError(f"canary_X must have {X.shape[1]} features, got {canary_X.shape[1]}")
    without = {"X": X}
    with_canary = {"X": np.concatenate([X, canary_X])}
    if y is not None:
        if canary_y is None:
            raise ValueError("canary_y is required when y is given")
        y = np.asarray(y)
        # One target per row, or several (2-d y): the canary's targets broadcast per row.
        canary_y = np.broadcast_to(np.asarray(canary_y, dtype=y.dtype), (canary_X.shape[0], *y.shape[1:]))
        without["y"] = y
        with_canary["y"] = np.concatenate([y, canary_y])
    if groups is not None:
        groups = np.asarray(groups)
        if canary_group is None:
            canary_group = int(np.max(groups)) + 1 if groups.size else 0
        elif np.any(groups == canary_group):
            raise ValueError("canary_group must be a new user id, not one already in groups")
        without["groups"] = groups
        with_canary["groups"] = np.concatenate([groups, np.full(canary_X.shape[0], canary_group, dtype=groups.dtype)])
    return without, with_canary


def _classifier_labels(params, n_samples):
    """Labels of the background rows (the public classes in turn) and of the added record (the last)."""
    if params.get("classes") is None:
        raise ValueError("set the public `classes` of the classifier under audit")
    classes = np.asarray(params["classes"])
    return classes[np.arange(n_samples) % classes.size], classes[-1]


def _user_groups(estimator, n_samples, rows_per_user):
    """``(groups, rows of the added unit)``: users of ``rows_per_user`` rows if ``fit`` takes ``groups``."""
    if "groups" in inspect.signature(estimator.fit).parameters:
        return np.arange(n_samples) // rows_per_user, rows_per_user
    return None, 1


def worst_case_neighbours(estimator, *, n_samples=100, n_features=1, rows_per_user=5, overshoot=4.0):
    """Default canary neighbours built from an estimator's public sensitivity parameters.

    The canary sits ``overshoot`` times beyond the corner of ``bounds`` (or ``bounds_X``)
    or on the sphere of radius ``overshoot × data_norm``: a correct estimator clips it
    onto the boundary (the worst case), one that forgot to clip shows ``overshoot`` times
    its claimed sensitivity. The other rows sit at the opposite point of the boundary.
    Classifiers get the canary in the last class of ``classes`` (rows alternate between
    classes); regressors get targets at the low end of ``bounds_y`` and a canary target
    ``overshoot`` times the high end. With ``n_samples`` rows; user-level estimators (a
    ``groups`` argument in ``fit``) get users of ``rows_per_user`` rows and a canary user
    of as many rows.

    Estimators whose worst case differs (e.g. k-means, trees) should build their own
    neighbours with :func:`canary_row` and :func:`canary_neighbours`.

    Returns
    -------
    without, with_canary : dict
        ``fit`` keyword arguments.

    Notes
    -----
    **Privacy.** Builds synthetic datasets from the estimator's public parameters
    only; no data is read and nothing is released.
    """
    if not overshoot >= 1.0:
        raise ValueError(f"overshoot must be >= 1 (the canary must reach the boundary), got {overshoot}")
    params = estimator.get_params()
    bounds = params.get("bounds_X", params.get("bounds"))
    if bounds is not None:
        canary = canary_row(n_features, bounds=bounds)
        lower = np.broadcast_to(np.asarray(bounds[0], dtype=np.float64), (n_features,))
        upper = np.broadcast_to(np.asarray(bounds[1], dtype=np.float64), (n_features,))
        opposite = np.where(canary == upper, lower, upper)
    elif params.get("data_norm") is not None:
        canary = canary_row(n_features, data_norm=params["data_norm"])
        opposite = -canary
    else:
        raise ValueError(
            f"{type(estimator).__name__} has no public bounds or data_norm set; worst-case "
            "neighbours need the clipping boundary (set them, or build neighbours yourself)"
        )
    X = np.tile(opposite, (n_samples, 1))
    y = canary_y = None
    if is_classifier(estimator):
        y, canary_y = _classifier_labels(params, n_samples)
    elif is_regressor(estimator):
        if params.get("bounds_y") is None:
            raise ValueError("set the public `bounds_y` of the regressor under audit")
        low_y, high_y = (float(b) for b in params["bounds_y"])
        y = np.full(n_samples, low_y)
        canary_y = overshoot * high_y
    groups, n_canary = _user_groups(estimator, n_samples, rows_per_user)
    return canary_neighbours(
        X, y, canary_X=np.tile(overshoot * canary, (n_canary, 1)), canary_y=canary_y, groups=groups
    )


class _AttributeProjection:
    def __init__(self, name, index, sort):
        self.name = name
        self.index = index
        self.sort = sort

    def __call__(self, fitted):
        value = np.asarray(getattr(fitted, self.name), dtype=np.float64)
        if self.index is not None:
            value = value[self.index]
        value = np.ravel(value)
        return np.sort(value) if self.sort else value


class _OutputProjection:
    def __init__(self, method, X, index):
        self.method = method
        self.X = np.atleast_2d(np.asarray(X))
        self.index = index

    def __call__(self, fitted):
        value = np.asarray(getattr(fitted, self.method)(self.X), dtype=np.float64)
        return np.ravel(value if self.index is None else value[self.index])


def project_attribute(name, index=None, *, sort=False):
    """Projection onto a fitted attribute: a coefficient, a mean, a centroid coordinate.

    Parameters
    ----------
    name : str
        Fitted attribute, e.g. ``"coef_"``, ``"means_"``, ``"cluster_centers_"``.
    index : int, tuple or slice, optional
        Which entries to keep (numpy indexing), e.g. ``(0, 0)``.
    sort : bool, default=False
        Sort the kept entries (for outputs defined up to a permutation, such as the
        first coordinates of k-means centroids).

    Returns
    -------
    projection : callable ``projection(fitted) -> ndarray of shape (k,)`` (picklable)
    """
    return _AttributeProjection(name, index, sort)


def project_output(method, X, index=None):
    """Projection onto a prediction: ``getattr(fitted, method)(X)[index]``.

    For example the log-probability of the canary's class at the canary,
    ``project_output("predict_log_proba", canary, (0, 1))``, or
    ``project_output("decision_function", canary)``.

    Returns
    -------
    projection : callable ``projection(fitted) -> ndarray of shape (k,)`` (picklable)
    """
    return _OutputProjection(method, X, index)
