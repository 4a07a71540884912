# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fits on Dask input: the in-memory protocol with the statistics computed per chunk.

Every fit here follows the estimator contract in the order that matters on a cluster:

1. the budget is checked (by the estimator's ``fit``, before it hands over: nothing has
   been computed yet);
2. shapes, dtypes and names are validated lazily, and the public parameters (bounds,
   classes) are required: a data-derived bound is never computed on the cluster;
3. the exact statistics are computed per chunk by the estimator's own statistic method
   (the in-memory Cython kernels) and merged exactly (:mod:`dpsk.dask._reduce`):
   NaN/inf raise here, before any spend;
4. the release's Generator is made on the client, the cost is spent once, and the
   estimator's own release method (shared with the in-memory fit) draws the noise once
   and builds the model.
"""

import functools

import numpy as np

from dpsk.dask._data import as_rows, as_vector, frame_values, require_public, worker_view
from dpsk.dask._reduce import fingerprint, map_reduce
from dpsk.utils.validation import _check_sample_weight_dp, release_generator, resolve_bounds, resolve_classes

__all__ = ["fit", "moments_statistic"]


def _weights(sample_weight, X):
    """A chunk's weights clipped to [0, 1] as in memory (None stays None)."""
    return _check_sample_weight_dp(sample_weight, X)


# -- preprocessing -------------------------------------------------------------------------


def _scaler_chunk(view, box, X, sample_weight):
    return view._sums(X, box, _weights(sample_weight, X))


def _fit_standard_scaler(est, X, y=None, sample_weight=None):
    from dpsk.accounting import ComposedEvent
    from dpsk.mechanisms._joint import Box

    X = as_rows(est, X)
    w = as_vector(sample_weight, X, "sample_weight", dtype=np.float64)
    lower, upper = resolve_bounds(est, require_public(est.bounds, "bounds"), X)
    box = Box(lower, upper)
    est.bounds_ = (lower, upper)
    k = est._n_statistics()
    if k == 0:  # as in memory: nothing about the data is needed
        est._spend_privacy_budget(ComposedEvent(()))
        est.mean_ = est.var_ = est.scale_ = None
        est.n_samples_seen_ = 0.0
        return est
    moments = map_reduce(functools.partial(_scaler_chunk, worker_view(est), box), X, w)
    rng = release_generator(est.random_state, context=est, data=fingerprint(moments))
    release, sizes = est._release(box, rng), (1, X.shape[1], X.shape[1])[:k]
    est._spend_privacy_budget(release.privacy_event(sizes))
    return est._fit_sums(moments, box, release, sizes, X.dtype)


def _histogram_chunk(lower, upper, bins, X, sample_weight):
    from dpsk.preprocessing._data import _weighted_histogram
    from dpsk.utils.validation import _weight_units

    units, _ = _weight_units(_weights(sample_weight, X))
    return np.asarray(_weighted_histogram(X, lower, upper, bins, units), dtype=np.int64)


def _fit_min_max_scaler(est, X, y=None, sample_weight=None):
    from dpsk.utils.validation import WEIGHT_GRID

    X = as_rows(est, X)
    w = as_vector(sample_weight, X, "sample_weight", dtype=np.float64)
    lower, upper = resolve_bounds(est, require_public(est.bounds, "bounds"), X)
    grid = 1 if w is None else WEIGHT_GRID
    counts = map_reduce(functools.partial(_histogram_chunk, lower, upper, est.bins), X, w)
    rng = release_generator(est.random_state, context=est, data=fingerprint(counts))
    mechanism = est._mechanism(X.shape[1] * grid, rng)
    est._spend_privacy_budget(mechanism.privacy_event(X.shape[1] * est.bins))
    est.bounds_ = (lower, upper)
    return est._fit_counts(counts, mechanism, grid, lower, upper, X.dtype)


# -- naive Bayes ---------------------------------------------------------------------------


def _gaussian_nb_chunk(view, classes, box, X, y, sample_weight):
    _, y_index = resolve_classes(None, classes, y)
    return view._class_sums(X, y_index, classes.size, box, _weights(sample_weight, X))


def _fit_gaussian_nb(est, X, y, sample_weight=None):
    from dpsk.mechanisms._joint import Box
    from dpsk.naive_bayes._base import check_priors

    X, y, w, classes = _classifier_inputs(est, X, y, sample_weight)
    lower, upper = resolve_bounds(est, require_public(est.bounds, "bounds"), X)
    n_classes, n_features = classes.size, X.shape[1]
    priors = None if est.priors is None else check_priors(est.priors, n_classes, "priors")
    box = Box(lower, upper)
    moments = map_reduce(functools.partial(_gaussian_nb_chunk, worker_view(est), classes, box), X, y, w)
    rng = release_generator(est.random_state, context=est, data=fingerprint(moments))
    release = est._release(box, rng)
    sizes = (n_classes, n_classes * n_features, n_classes * n_features)
    est._spend_privacy_budget(release.privacy_event(sizes))
    return est._fit_sums(moments, box, release, sizes, classes, priors, X.dtype)


def _bernoulli_chunk(view, classes, X, y, sample_weight):
    from dpsk.utils.validation import _weight_units

    if not np.all(np.isfinite(X)):
        raise ValueError("Input X contains NaN or infinity.")
    _, y_index = resolve_classes(None, classes, y)
    units, _ = _weight_units(_weights(sample_weight, X))
    # integers (weights: integer units in float64, exact): merged as int64
    return np.rint(view._count_table(X, y_index, classes.size, units)).astype(np.int64)


def _fit_bernoulli_nb(est, X, y, sample_weight=None):
    from dpsk.utils.validation import WEIGHT_GRID

    X, y, w, classes = _classifier_inputs(est, X, y, sample_weight)
    n_classes, n_features = classes.size, X.shape[1]
    alpha = est._check_alpha(n_features)
    grid = 1 if w is None else WEIGHT_GRID
    table = map_reduce(functools.partial(_bernoulli_chunk, worker_view(est), classes), X, y, w)
    table = table if w is None else table.astype(np.float64)  # the in-memory dtypes
    rng = release_generator(est.random_state, context=est, data=fingerprint(table))
    mechanism = est._mechanism((1 + n_features) * grid, rng)
    est._spend_privacy_budget(mechanism.privacy_event(n_classes * (1 + n_features)))
    return est._fit_table(table, mechanism, grid, classes, alpha)


def _categorical_chunk(view, classes, n_categories, X, y, sample_weight):
    from dpsk.utils.validation import _weight_units

    if not np.all(np.isfinite(X)):
        raise ValueError("Input X contains NaN or infinity.")
    _, y_index = resolve_classes(None, classes, y)
    units, _ = _weight_units(_weights(sample_weight, X))
    flat = view._count_tables(view._codes(X), y_index, classes.size, n_categories, units)
    return np.rint(flat).astype(np.int64)  # weights: integer units in float64, exact


def _fit_categorical_nb(est, X, y, sample_weight=None):
    from dpsk.utils.validation import WEIGHT_GRID

    X, y, w, classes = _classifier_inputs(est, X, y, sample_weight)
    n_classes, n_features = classes.size, X.shape[1]
    alpha = np.broadcast_to(est._check_alpha(n_features), (n_features,))
    require_public(est.n_categories, "n_categories")
    n_categories = est._resolve_n_categories(np.empty((0, n_features)))
    grid = 1 if w is None else WEIGHT_GRID
    chunk = functools.partial(_categorical_chunk, worker_view(est), classes, n_categories)
    flat = map_reduce(chunk, X, y, w)
    flat = flat if w is None else flat.astype(np.float64)  # the in-memory dtypes
    rng = release_generator(est.random_state, context=est, data=fingerprint(flat))
    mechanism = est._mechanism(n_features * grid, rng)
    est._spend_privacy_budget(mechanism.privacy_event(n_classes * int(n_categories.sum())))
    return est._fit_tables(flat, mechanism, grid, classes, n_categories, alpha)


def _multinomial_chunk(view, classes, k, top, X, y, sample_weight):
    from dpsk.utils.validation import _weight_units

    if not np.all(np.isfinite(X)):
        raise ValueError("Input X contains NaN or infinity.")
    if np.min(X, initial=0.0) < 0:
        raise ValueError("Negative values in data passed to MultinomialNB (input X)")
    _, y_index = resolve_classes(None, classes, y)
    units, _ = _weight_units(_weights(sample_weight, X))
    # rows L1-clipped and rounded onto the public 2**-k grid, row by row: exact int64 units
    return view._class_table(X, y_index, classes.size, k, top, units)


def _fit_multinomial_nb(est, X, y, sample_weight=None):
    from dpsk.naive_bayes._discrete import _check_exact_rows, _multinomial_grid
    from dpsk.utils.validation import WEIGHT_GRID, check_data_norm

    X, y, w, classes = _classifier_inputs(est, X, y, sample_weight)
    n_classes, n_features = classes.size, X.shape[1]
    alpha = est._check_alpha(n_features)
    data_norm = check_data_norm(require_public(est.data_norm, "data_norm"))
    k, top = _multinomial_grid(data_norm)
    grid = 1 if w is None else WEIGHT_GRID
    _check_exact_rows(X.shape[0], k, top, grid)  # public: the shape and the parameters
    table = map_reduce(functools.partial(_multinomial_chunk, worker_view(est), classes, k, top), X, y, w)
    rng = release_generator(est.random_state, context=est, data=fingerprint(table))
    mechanism = est._mechanism((2**k + top) * grid, rng)
    est._spend_privacy_budget(mechanism.privacy_event(n_classes * (1 + n_features)))
    return est._fit_table(table, mechanism, 2.0**k * grid, classes, alpha, data_norm)


def _classifier_inputs(est, X, y, sample_weight):
    """X, y and weights as Dask arrays chunked alike, and the public, sorted ``classes``."""
    if getattr(est, "on_invalid", "raise") != "raise":
        raise ValueError('Dask fits support on_invalid="raise" only: clean the data first')
    X = as_rows(est, X)
    y = as_vector(require_public(y, "y"), X, "y")
    w = as_vector(sample_weight, X, "sample_weight", dtype=np.float64)
    classes = np.unique(np.asarray(require_public(est.classes, "classes")))
    if classes.ndim != 1 or classes.size < 2:
        raise ValueError("classes must be a 1-d array-like of at least two labels")
    return X, y, w, classes


# -- random trees and forests (classifiers) ------------------------------------------------


def _class_totals_chunk(classes, X, y, sample_weight):
    from dpsk.utils.validation import _weight_units

    if not np.all(np.isfinite(X)):
        raise ValueError("Input X contains NaN or infinity.")
    _, y_index = resolve_classes(None, classes, y)
    units, _ = _weight_units(_weights(sample_weight, X))
    return np.rint(np.bincount(y_index, weights=units, minlength=classes.size)).astype(np.int64)


def _leaf_counts_chunk(classes, feature, threshold, depth, X, y, sample_weight, part):
    from dpsk.tree._classes import _weighted_leaf_counts
    from dpsk.utils.validation import _weight_units

    _, y_index = resolve_classes(None, classes, y)
    units, _ = _weight_units(_weights(sample_weight, X))
    part = None if part is None else part.astype(np.intp)
    return _weighted_leaf_counts(X, y_index, classes.size, part, feature, threshold, depth, 1, units)


def _fit_random_trees(est, X, y, sample_weight=None):
    """Random trees and forests: the structure is drawn from the public bounds (no data),
    each chunk routes its rows and counts its leaves (int64, exact), the counts are summed.

    The Generator is used in the in-memory order (structure, spend, each row's tree,
    the leaf noise, the class totals' noise); the rows' trees are drawn on the client
    (public randomness, n small integers) and shipped chunked like X.
    """
    import math

    from dpsk.utils._private_bounds import private_box
    from dpsk.utils.validation import WEIGHT_GRID

    X, y, w, classes = _classifier_inputs(est, X, y, sample_weight)
    require_public(est.bounds, "bounds")
    plan, (lower, upper) = private_box(est, X)
    n_trees, n_classes = est._n_trees(), classes.size
    depth = est._depth(X.shape[1], n_trees, n_classes)
    est._n_threads()  # invalid n_jobs fails here, before any spend
    grid = 1 if w is None else WEIGHT_GRID
    # A first pass validates the data (NaN, labels, weights) and keys an integer seed.
    totals_exact = map_reduce(functools.partial(_class_totals_chunk, classes), X, y, w)
    rng = release_generator(est.random_state, context=est, data=fingerprint(totals_exact))
    feature, threshold = est._structure(rng, n_trees, depth, lower, upper)
    leaves, totals = est._spend_leaf_releases(plan, rng, n_trees, depth, n_classes, grid)
    part = est._parts(rng, n_trees, X.shape[0])
    part = None if part is None else as_vector(part.astype(np.min_scalar_type(n_trees - 1)), X, "part")
    chunk = functools.partial(_leaf_counts_chunk, classes, feature, threshold, depth)
    counts = map_reduce(chunk, X, y, w, part)
    noisy = leaves.randomise(counts).astype(np.float64) / grid
    class_count = totals.randomise(totals_exact if w is None else totals_exact.astype(np.float64)) / grid
    noise_std = math.sqrt(float(leaves.variance(counts))) / grid
    # the fitted attributes of BaseRandomTrees.fit
    est.classes_, est.n_classes_ = classes, n_classes
    est.bounds_, est.max_depth_ = (lower, upper), depth
    est.class_count_ = np.maximum(class_count, 0.0)
    est._set_model(feature, threshold, noisy, noise_std)
    est._store_trees(feature, threshold, noisy, noise_std)
    return est


# -- random trees and forests (regressors) -------------------------------------------------


def _regression_totals_chunk(view, box_y, X, y, sample_weight):
    from dpsk.tree._regressor import exact_leaf_sums
    from dpsk.utils.validation import _weight_units

    if not np.all(np.isfinite(X)):
        raise ValueError("Input X contains NaN or infinity.")
    units, _ = _weight_units(_weights(sample_weight, X))
    t = view._standardised_targets(np.asarray(y, dtype=np.float64), box_y)  # NaN in y raises
    return exact_leaf_sums(np.zeros(X.shape[0], dtype=np.intp), t, units, 1)


def _regression_leaves_chunk(view, feature, threshold, depth, box_y, X, y, sample_weight, part):
    from dpsk.utils.validation import _weight_units

    units, _ = _weight_units(_weights(sample_weight, X))
    part = None if part is None else part.astype(np.intp)
    return view._leaf_sums(X, y, units, part, feature, threshold, depth, box_y, n_threads=1)


def _fit_random_trees_regressor(est, X, y, sample_weight=None):
    """Random tree regressors: the in-memory release, with the exact leaf counts and sums
    (int64, :func:`dpsk.tree._regressor.exact_leaf_sums`) computed per chunk and summed.

    A first pass validates the data (NaN, weights) and computes the exact totals, which
    key an integer seed; then the Generator is used in the in-memory order (the noisy row
    count, the structure, the spend, each row's tree, the noise); the rows' trees are
    drawn on the client (public randomness) and shipped chunked like X.
    """
    from dpsk.mechanisms._joint import Box
    from dpsk.tree._regressor import check_leaf_rows
    from dpsk.utils._private_bounds import private_boxes
    from dpsk.utils.validation import WEIGHT_GRID

    X = as_rows(est, X)
    y = as_vector(require_public(y, "y"), X, "y")
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d for {type(est).__name__}, got {y.ndim} dimensions")
    y = y.astype(np.float64)
    w = as_vector(sample_weight, X, "sample_weight", dtype=np.float64)
    require_public(est.bounds, "bounds")
    require_public(est.bounds_y, "bounds_y")
    plan, boxes = private_boxes(est, {"bounds": (X, "bounds_"), "bounds_y": (y[:, None], "bounds_y_")})
    (lower, upper), (y_lower, y_upper) = boxes["bounds"], boxes["bounds_y"]
    n_trees = est._n_trees()
    depth = None if est.max_depth is None else est._depth(X.shape[1], n_trees, 2)
    est._n_threads()  # invalid n_jobs fails here, before any spend
    grid = 1 if w is None else WEIGHT_GRID
    check_leaf_rows(X.shape[0], grid)
    box_y = Box(y_lower, y_upper)
    view = worker_view(est)
    totals = map_reduce(functools.partial(_regression_totals_chunk, view, box_y), X, y, w)
    # The key holds the number of rows too: max_depth=None releases it (noisily), and a
    # row of weight 0 changes it but not the sums (a shared stream would reveal the row).
    key = (*fingerprint(totals), np.array([X.shape[0]]))
    rng = release_generator(est.random_state, context=est, data=key)
    count, depth, structure, release, sizes = est._spend_leaf_release(
        plan, rng, X.shape[0], n_trees, depth, lower, upper
    )
    part = est._parts(rng, n_trees, X.shape[0])
    part = None if part is None else as_vector(part.astype(np.min_scalar_type(n_trees - 1)), X, "part")
    chunk = functools.partial(_regression_leaves_chunk, view, *structure, depth, box_y)
    counts, sums = map_reduce(chunk, X, y, w, part)
    return est._fit_leaves(counts, sums, grid, release, sizes, structure, depth, (lower, upper), box_y, count.value)


# -- least squares -------------------------------------------------------------------------


def _least_squares_chunk(view, lower, upper, centre, half, target, row_norm, X, y, sample_weight):
    Y = np.asarray(y, dtype=np.float64).reshape(X.shape[0], -1)
    return view._exact_sums(X, Y, lower, upper, centre, half, target, _weights(sample_weight, X), row_norm)


def _user_least_squares_chunk(view, lower, upper, centre, half, target, row_norm, h, table, X, y, sample_weight, ids):
    from dpsk.dask._groups import user_weights
    from dpsk.utils.validation import _combine_weights

    weights = _combine_weights(user_weights(table, h, ids), _weights(sample_weight, X))
    Y = np.asarray(y, dtype=np.float64).reshape(X.shape[0], -1)
    return view._exact_sums(X, Y, lower, upper, centre, half, target, weights, row_norm)


def _fit_least_squares(est, X, y, groups=None, sample_weight=None):
    """LinearRegression and Ridge: the exact sums per chunk. With ``groups`` (user level,
    :mod:`dpsk.dask._groups`) a first pass validates the data (the item-level sums, which
    key an integer seed) and counts the rows per user; after the spend and the choice of
    h, a second pass weights each row as in memory and computes the release's sums."""
    import dask

    from dpsk.accounting._events import compose
    from dpsk.dask._groups import count_histogram, row_counts, user_counts
    from dpsk.linear_model._user_level import user_plan

    epsilon, delta = float(est.epsilon), float(est.delta)
    X = as_rows(est, X)
    y = as_vector(require_public(y, "y"), X, "y")
    if y.ndim not in (1, 2):
        raise ValueError(f"y must be 1-d or 2-d, got {y.ndim} dimensions")
    w = as_vector(sample_weight, X, "sample_weight", dtype=np.float64)
    ids = as_vector(groups, X, "groups")
    if ids is not None and ids.ndim != 1:
        raise ValueError(f"groups must be 1-dimensional, got shape {ids.shape}")
    if est.row_norm is None:
        require_public(est.bounds_X, "bounds_X")
    require_public(est.bounds_y, "bounds_y")
    n_targets = 1 if y.ndim == 1 else y.shape[1]
    users = user_plan(groups, X.shape[0], epsilon, bind=False)
    row_norm = None if est.row_norm is None else float(est.row_norm)  # "private" refused in fit()
    bounds, centre, half, r = est._standardisation(X, row_norm=row_norm)
    target = est._target_box(*est._resolve_bounds_y(np.empty((0, n_targets))))
    mechanisms, cost = est._releases(users.release_epsilon, delta, X.shape[1], r, n_targets)
    cost = compose([users.event, cost])
    view = worker_view(est)
    chunk = functools.partial(_least_squares_chunk, view, *bounds, centre, half, target, row_norm)
    if ids is None:
        sums = map_reduce(chunk, X, y, w)
        key = fingerprint(sums)
    else:  # one pass: the data validated, the item-level sums, the histogram of the users' counts
        table = user_counts(ids)
        item_sums, histogram = dask.compute(map_reduce(chunk, X, y, w, lazy=True), count_histogram(table))
        users.bind_counts(row_counts(histogram), X.shape[0])
        key = (*fingerprint(item_sums), *histogram)
    rng = release_generator(est.random_state, context=est, data=key)
    est._spend_privacy_budget(cost)
    if ids is None:
        unit = users.resolve(rng).unit
    else:
        unit = users.choose_threshold(rng)  # as in memory: h from the counts, released
        chunk = functools.partial(_user_least_squares_chunk, view, *bounds, centre, half, target, row_norm, unit)
        sums = map_reduce(chunk, X, y, w, ids, shared=table)
        est.threshold_ = unit
    est.row_norm_ = row_norm
    return est._fit_sums(sums, bounds, centre, half, target, unit, mechanisms, rng, X.dtype, y.ndim)


# -- k-means: one map-reduce per pass ------------------------------------------------------


def _fingerprint_chunk(box, X, sample_weight):
    return box.exact_sums(X, sample_weight=_weights(sample_weight, X))


def dask_generator(est, data, box):
    """The release Generator of a multi-pass fit, after one validating pass.

    The first pass computes the exact moments of the clipped rows: NaN, infinity or bad
    weights raise there, before the spend (the passes of the fit come after it). With an
    integer seed the stream is keyed by those moments: under add/remove they differ for
    neighbouring datasets (the weighted count changes), unless the extra row weighs 0
    and so changes nothing. A Generator is used as is; None is fresh entropy.
    """
    moments = map_reduce(functools.partial(_fingerprint_chunk, box), data.rows, data.sample_weight)
    return release_generator(est.random_state, context=est, data=fingerprint(moments))


def _fit_kmeans(est, X, y=None, sample_weight=None):
    from dpsk.dask._data import DaskRows
    from dpsk.mechanisms._joint import Box

    rows = as_rows(est, X)
    w = as_vector(sample_weight, rows, "sample_weight", dtype=np.float64)
    lower, upper = resolve_bounds(est, require_public(est.bounds, "bounds"), rows)
    box = Box(lower, upper)
    data = DaskRows(rows, w)
    return est._fit_passes(data, box, dask_generator(est, data, box))


# -- PCA ---------------------------------------------------------------------------------


def _gram_chunk(geometry, X, sample_weight):
    return geometry.exact_sums(X, _weights(sample_weight, X))


def _fit_pca(est, X, y=None, sample_weight=None):
    from numbers import Integral

    from dpsk._core._exact_sums import gram_floats
    from dpsk.decomposition._pca import _Geometry
    from dpsk.utils.validation import check_bounds, check_data_norm

    X = as_rows(est, X)
    w = as_vector(sample_weight, X, "sample_weight", dtype=np.float64)
    n_features = X.shape[1]
    if isinstance(est.n_components, Integral) and est.n_components > n_features:
        raise ValueError(f"n_components={est.n_components} must be <= n_features={n_features}")
    if est.bounds is None:
        require_public(est.data_norm, "bounds` or `data_norm")
    lower = upper = data_norm = None
    if est.bounds is not None:
        lower, upper = check_bounds(est.bounds, n_features, feature_names=getattr(est, "feature_names_in_", None))
    if est.data_norm is not None:
        data_norm = check_data_norm(est.data_norm)
    geometry = _Geometry(lower, upper, data_norm, n_features, allow_midpoint=not est.centered)
    sums = map_reduce(functools.partial(_gram_chunk, geometry), X, w)
    rng = release_generator(est.random_state, context=est, data=fingerprint(sums))
    release = est._release(geometry, rng)
    n_triangle = n_features * (n_features + 1) // 2
    est._spend_privacy_budget(release.privacy_event((1, n_triangle) if est.centered else (1, n_features, n_triangle)))
    return est._fit_statistics(gram_floats(sums), release, geometry, (lower, upper), data_norm, X.dtype)


# -- dispatch ------------------------------------------------------------------------------


def _fits():
    from dpsk.cluster import KMeans
    from dpsk.dask._boosting import fit_boosting
    from dpsk.decomposition import PCA
    from dpsk.ensemble._gradient_boosting import BaseHistGradientBoosting
    from dpsk.linear_model._least_squares import _BaseLeastSquares
    from dpsk.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB
    from dpsk.preprocessing import MinMaxScaler, StandardScaler
    from dpsk.tree._classes import BaseRandomTrees
    from dpsk.tree._regressor import BaseRandomTreesRegressor

    return (
        (StandardScaler, _fit_standard_scaler),
        (MinMaxScaler, _fit_min_max_scaler),
        (GaussianNB, _fit_gaussian_nb),
        (BernoulliNB, _fit_bernoulli_nb),
        (CategoricalNB, _fit_categorical_nb),
        (MultinomialNB, _fit_multinomial_nb),
        (_BaseLeastSquares, _fit_least_squares),
        (KMeans, _fit_kmeans),
        (PCA, _fit_pca),
        (BaseRandomTrees, _fit_random_trees),
        (BaseRandomTreesRegressor, _fit_random_trees_regressor),
        (BaseHistGradientBoosting, fit_boosting),
    )


def fit(estimator, X, y=None, **fit_params):
    """Fit ``estimator`` (its budget already checked) on Dask ``X`` (and ``y``, weights)."""
    from dpsk.utils._private_bounds import is_data, is_private

    for name, value in estimator.get_params(deep=False).items():
        if is_private(value) or is_data(value):
            require_public(value, name)
    started = getattr(estimator, "_partial_fit_started", None)
    if started is not None and started():  # fit() resets first; only a later partial_fit gets here
        raise ValueError(
            "partial_fit takes Dask input only as its first call: pass numpy batches to later calls, "
            "or fit once on the whole Dask collection"
        )
    for cls, function in _fits():
        if isinstance(estimator, cls):
            return function(estimator, X, y, **fit_params)
    raise TypeError(
        f"{type(estimator).__name__} has no Dask fit: pass numpy arrays, or see the user guide "
        "(doc/user_guide/scaling.rst) for the estimators that run on Dask collections"
    )


# -- dpsk.stats ----------------------------------------------------------------------------


def _moments_chunk(lower, upper, X):
    from dpsk._core._exact_sums import exact_moments

    return exact_moments(X, lower, upper)


def _user_moments_chunk(lower, upper, h, table, X, ids):
    from dpsk._core._exact_sums import exact_moments
    from dpsk.dask._groups import user_weights

    return exact_moments(X, lower, upper, sample_weight=user_weights(table, h, ids))


def moments_statistic(call, kind, statistic, a, bounds, axis, keepdims, return_error, function):
    """``dpsk.stats`` count / sum / mean / var / std of a Dask array or DataFrame.

    Reductions over the records (axis 0; ``axis=None`` for 1-d input), with
    ``on_invalid="raise"``; the release itself is the in-memory one
    (``dpsk.stats._moments``). With ``groups`` (smooth contribution bounding): the
    users' row counts by a group-by (:mod:`dpsk.dask._groups`) in the validating pass,
    then the moments of the rows weighted as in memory.
    """
    import dask

    from dpsk.dask._groups import count_histogram, row_counts, user_counts
    from dpsk.stats._common import Records, layout, resolve_stat_bounds
    from dpsk.stats._contribution import Contribution
    from dpsk.stats._moments import moments_query, moments_result

    if call.on_invalid != "raise" or call.plan.contribution_bound != "smooth":
        raise ValueError(
            f"{function} on Dask input supports on_invalid='raise' and (with groups) contribution_bound='smooth' only"
        )
    arr = frame_values(a)
    columns = list(a.columns) if hasattr(a, "columns") else None
    if arr.ndim not in (1, 2):
        raise ValueError(f"{function} on Dask input takes 1-d or 2-d data, got {arr.ndim} dimensions")
    _, _, per_record, out_shape, keep_shape = layout(arr, axis)
    if per_record != 1:
        raise ValueError(f"{function} on Dask input reduces over the records only (axis=0)")
    n_outputs = int(np.prod(out_shape, dtype=np.int64))
    query = moments_query(call, kind, n_outputs)
    call.check(query.event)  # before anything is computed
    rows = as_rows(None, arr if arr.ndim == 2 else arr[:, None], name="a")
    records = Records(rows, rows.shape[0], 1, out_shape, keep_shape)
    ids = as_vector(call.groups, rows, "groups")
    if ids is not None and ids.ndim != 1:
        raise ValueError(f"groups must be 1-dimensional, got shape {ids.shape}")
    if kind != "count":
        names = columns if columns is not None and arr.ndim == 2 else None
        lower, upper = resolve_stat_bounds(
            require_public(bounds, "bounds", function), records, function, feature_names=names
        )
        query.check_scales(lower, upper, function)
    else:
        lower = upper = np.zeros(n_outputs)
    moments = map_reduce(functools.partial(_moments_chunk, lower, upper), rows, lazy=True)
    params = (bounds, axis, keepdims)
    if ids is None:
        (moments,) = dask.compute(moments)
        call.spend(records.n_records, function=function, params=params, data=fingerprint(moments))
        contribution = call.contribution()
    else:  # one pass: the values validated, the histogram of the users' row counts
        table = user_counts(ids)
        moments, histogram = dask.compute(moments, count_histogram(table))
        call.plan.bind_counts(row_counts(histogram), records.n_records)
        call.spend(records.n_records, function=function, params=params, data=(*fingerprint(moments), *histogram))
        kappa = None if kind in ("count", "sum") else query.kappa(per_record)
        h = call.plan.choose_threshold(call.rng, kappa=kappa)  # as call.contribution() in memory
        contribution = Contribution(None, h, h, call.relation)
        moments = map_reduce(functools.partial(_user_moments_chunk, lower, upper, h), rows, ids, shared=table)
    noisy = query.release(records, lower, upper, contribution, moments=moments)
    return moments_result(
        call, kind, statistic, query, records, noisy, keepdims, return_error, lower, upper, contribution
    )


def _bin_counts_chunk(edges, equal_width, X):
    points = X.astype(np.float64, copy=False)
    if not np.all(np.isfinite(points)):
        raise ValueError("sample contains NaN or infinity")
    if equal_width:  # numpy's linear-index path, as in memory (the same counts)
        counts, _ = np.histogram(points[:, 0], bins=edges[0].size - 1, range=(edges[0][0], edges[0][-1]))
    elif len(edges) == 1:
        counts, _ = np.histogram(points[:, 0], bins=edges[0])
    else:
        counts, _ = np.histogramdd(points, bins=edges)
    return np.rint(counts).astype(np.int64)


def histogram_counts(call, arr, n_dims, bins, value_range, density, function):
    """Exact bin counts of a Dask ``arr`` (``dpsk.stats.histogram``/``histogramdd``), after
    the budget check; spends, and returns ``(counts, edges, contribution)``.

    Item level, ``on_invalid="raise"``, public edges or range only.
    """
    from dpsk.stats._histogram import _edges

    if call.user_level or call.on_invalid != "raise":
        raise ValueError(f"{function} on Dask input supports item-level releases with on_invalid='raise' only")
    if value_range is None and any(np.ndim(b) == 0 for b in bins):
        require_public(None, "range", function)
    arr = frame_values(arr)
    # explicit edges everywhere when no range is given (the range is then not read)
    edges = _edges(bins, value_range if value_range is not None else [(0.0, 1.0)] * n_dims, None, function)
    n_records = arr.shape[0]
    rows = as_rows(None, arr.reshape(-1, n_dims) if arr.ndim != 2 or arr.shape[1] != n_dims else arr, name="sample")
    equal_width = n_dims == 1 and np.ndim(bins[0]) == 0
    counts = map_reduce(functools.partial(_bin_counts_chunk, edges, equal_width), rows)
    call.spend(n_records, function=function, params=(bins, value_range, density), data=fingerprint(counts))
    return counts, edges, call.contribution(kappa=None)
