# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dask input: detection without importing Dask, and lazy validation (shapes, dtypes, names).

Nothing here reads a value: only the public shape, the dtype and the column names.
Values are checked by the kernels, chunk by chunk, when the statistics are computed
(NaN or infinity raise there, before anything is spent or released).
"""

import numpy as np

__all__ = ["as_rows", "as_vector", "frame_values", "is_dask", "require_public", "worker_view"]


def is_dask(*objects):
    """Whether any of ``objects`` is a Dask collection (array, DataFrame, Series).

    The test dpsk's estimators and statistics make to run a fit on Dask. Duck-typed on
    the class's module: Dask is never imported here, so users without it (and every
    in-memory fit) pay nothing.

    Parameters
    ----------
    *objects : object
        Anything (None entries allowed).

    Returns
    -------
    bool

    Notes
    -----
    **Privacy.** Reads only the objects' types, never their values. What a fit on a Dask
    collection releases is the in-memory release of the same estimator (the user guide,
    :ref:`dask`, says where the statistics are computed and where the noise is drawn).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.dask import is_dask
    >>> is_dask(np.ones(3), None)
    False
    """
    for obj in objects:
        if obj is not None and type(obj).__module__.partition(".")[0] in ("dask", "dask_expr"):
            return True
        if isinstance(obj, DaskRows):
            return True
    return False


class DaskRows:
    """Validated Dask rows (and clipped weights) handed to an in-memory fit's passes.

    Multi-pass fits (k-means) run their own release code on it; where that code computes
    a statistic of X, it calls :meth:`reduce` instead: the estimator's own statistic
    method per chunk, merged exactly, one Dask computation per pass.
    """

    def __init__(self, rows, sample_weight=None):
        self.rows, self.sample_weight = rows, sample_weight
        self.shape, self.dtype = rows.shape, rows.dtype

    def reduce(self, estimator, method, *args):
        import functools

        from dpsk.dask._reduce import map_reduce

        chunk = functools.partial(_method_chunk, worker_view(estimator), method, args)
        return map_reduce(chunk, self.rows, self.sample_weight)


def _method_chunk(estimator, method, args, X, sample_weight):
    from dpsk.utils.validation import _check_sample_weight_dp

    return getattr(estimator, method)(X, *args, sample_weight=_check_sample_weight_dp(sample_weight, X))


def frame_values(obj):
    """A Dask DataFrame or Series as a Dask array with known chunk sizes (the lengths of
    the partitions: the public shape); anything else unchanged.

    The plan is optimised first: Dask's column projection may merge the partitions of
    small Parquet files, and the lengths must be counted on the partitions that are read.
    """
    if not hasattr(obj, "to_dask_array"):
        return obj
    if hasattr(obj, "optimize"):
        obj = obj.optimize()
    return obj.to_dask_array(lengths=True)


def _dask_array(obj, name):
    import dask.array as da

    if isinstance(obj, da.Array):
        return obj, None
    if hasattr(obj, "to_dask_array"):  # DataFrame or Series: lengths are the public shape
        columns = getattr(obj, "columns", None)
        return frame_values(obj), None if columns is None else list(columns)
    raise TypeError(f"{name} must be a dask.array.Array or a dask DataFrame/Series, got {type(obj).__name__}")


def _float_dtype(arr, name):
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.dtype in (np.float32, np.float64):
        return arr
    return arr.astype(np.float64)


def as_rows(estimator, X, *, reset=True, name="X"):
    """X as a 2-d float32/float64 Dask array chunked by rows only (all columns in a chunk).

    With ``reset`` sets ``n_features_in_`` and ``feature_names_in_`` (string column
    names of a DataFrame) as ``validate_data`` does; otherwise checks them.
    """
    arr, columns = _dask_array(X, name)
    if arr.ndim != 2:
        raise ValueError(f"Expected a 2-d {name}, got {arr.ndim} dimension(s)")
    if any(np.isnan(c) for c in arr.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes: call compute_chunk_sizes() first")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has 0 samples; at least one is required")
    names = None
    if columns is not None and all(isinstance(c, str) for c in columns):
        names = np.asarray(columns, dtype=object)
    if estimator is not None:
        if reset:
            estimator.n_features_in_ = int(arr.shape[1])
            if names is not None:
                estimator.feature_names_in_ = names
            elif hasattr(estimator, "feature_names_in_"):
                del estimator.feature_names_in_
        elif arr.shape[1] != estimator.n_features_in_:
            raise ValueError(
                f"X has {arr.shape[1]} features, but {type(estimator).__name__} is expecting "
                f"{estimator.n_features_in_} features as input"
            )
    return _float_dtype(arr, name).rechunk({1: -1})


def as_vector(values, rows, name, *, dtype=None):
    """A per-row vector (``y``, ``sample_weight``) as a Dask array chunked like ``rows``.

    None stays None; a scalar is broadcast; an in-memory array is wrapped. Its length must
    be the number of rows (public shapes: this error is no release).
    """
    import dask.array as da

    if values is None:
        return None
    if np.ndim(values) == 0 and not is_dask(values):
        values = da.full(rows.shape[0], values, chunks=(rows.chunks[0],))
    if is_dask(values):
        arr, _ = _dask_array(values, name)
    elif np.shape(values)[:1] != (rows.shape[0],):
        raise ValueError(f"{name} has {np.shape(values)[:1]} rows, X has {rows.shape[0]}: they must match")
    else:
        arr = da.from_array(np.asarray(values), chunks=(rows.chunks[0],) + tuple((s,) for s in np.shape(values)[1:]))
    if arr.shape[0] != rows.shape[0] or any(np.isnan(c) for c in arr.chunks[0]):
        raise ValueError(
            f"{name} has {arr.shape[0]} rows (partitions must have known sizes), X has {rows.shape[0]}: they must match"
        )
    if dtype is not None:
        arr = arr.astype(dtype)
    return arr.rechunk({0: rows.chunks[0], **{ax: -1 for ax in range(1, arr.ndim)}})


def require_public(value, name, what="Dask fits"):
    """Refuse a missing public parameter: a data-derived one would be a silent leak; a
    ``"private"`` one is estimated in memory only (not yet on a cluster)."""
    from dpsk.utils._private_bounds import is_private  # here: dpsk.base imports this module

    if value is None or is_private(value) or (isinstance(value, str) and value == "data"):
        left_out = ' (left out, it means "private")' if value is None else ""
        raise ValueError(
            f'{what} need the public `{name}`{left_out}: data-derived ({name}="data") and privately estimated '
            f'({name}="private") values are not computed on a cluster yet. Pass the public `{name}` (from the '
            "schema, not from this data), or fit in memory."
        )
    return value


def worker_view(estimator):
    """A shallow copy of ``estimator`` without its accountant, for shipping to workers.

    The per-chunk statistics call the estimator's own statistic method (one home; the
    audits' deliberately broken variants override it); the ledger stays on the client.
    """
    import copy

    view = copy.copy(estimator)
    if "accountant" in view.__dict__:
        view.accountant = None
    return view


def dask_fit(estimator, X, y=None, **fit_params):
    """Fit ``estimator`` on Dask input (``dpsk.dask._fit``); imports Dask only now."""
    from dpsk.dask._fit import fit

    return fit(estimator, X, y, **fit_params)


def _apply_block(estimator, method, columns, n_outputs, dtype, block):
    if block.shape[0] == 0:  # an empty chunk: an empty result (the method wants rows)
        return np.empty((0,) if n_outputs is None else (0, n_outputs), dtype=dtype)
    if columns is not None:  # the names the estimator was fitted with
        import pandas as pd

        block = pd.DataFrame(block, columns=columns)
    return getattr(estimator, method)(block)


def dask_apply(estimator, method, X, *, n_outputs=None, dtype=None):
    """``estimator.method`` on each row chunk of X, lazily: a Dask array (``map_blocks``).

    The fitted estimator's own in-memory method runs on every chunk (one home).
    ``n_outputs``: columns of the result (None: one value per row, a 1-d array).
    """
    import functools

    arr, _ = _dask_array(X, "X")
    if arr.ndim != 2 or arr.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has shape {arr.shape}, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input"
        )
    arr = _float_dtype(arr, "X").rechunk({1: -1})
    names = getattr(estimator, "feature_names_in_", None)
    dtype = arr.dtype if dtype is None else dtype
    columns = None if names is None else list(names)
    function = functools.partial(_apply_block, worker_view(estimator), method, columns, n_outputs, dtype)
    if n_outputs is None:
        return arr.map_blocks(function, drop_axis=1, dtype=dtype, meta=np.empty((0,), dtype=dtype))
    return arr.map_blocks(
        function, chunks=(arr.chunks[0], (n_outputs,)), dtype=dtype, meta=np.empty((0, 0), dtype=dtype)
    )


#: What runs on Dask collections (the user guide's table, and the error below).
SUPPORTED = (
    "StandardScaler, MinMaxScaler, GaussianNB, BernoulliNB, CategoricalNB, MultinomialNB, LinearRegression, Ridge, "
    "KMeans, PCA, DecisionTreeClassifier, RandomForestClassifier, DecisionTreeRegressor, RandomForestRegressor, "
    "HistGradientBoostingClassifier, HistGradientBoostingRegressor (fit); "
    "LinearRegression, Ridge with groups= (user level); "
    "LogisticRegression, LinearSVC (fit by a distributed Newton, lazy predict); "
    "their predict/transform and those of the naive Bayes classifiers, random trees and boosting (lazy); "
    "dpsk.stats count, sum, mean, var, std (also with groups=), histogram, histogramdd, quantile, percentile, median"
)


def refuse_dask(estimator):
    """The error for an estimator (or method) that does not run on Dask collections."""
    name = type(estimator).__name__ if estimator is not None else "this function"
    raise TypeError(
        f"{name} does not run on Dask collections here, and gathering the data into memory is left to you: "
        f"pass `X.compute()` (if it fits in memory) or use an estimator that runs on Dask. On Dask: {SUPPORTED}."
    )


def dask_score(estimator, X, y, sample_weight=None):
    """``score`` on Dask input: R² (regressors) or accuracy (classifiers) by Dask reductions.

    The predictions are the lazy ``predict``; the sums are reduced on the cluster and only
    the score comes back (neither y nor the predictions are gathered on the client).
    Non-private, as the in-memory ``score``: it is evaluation on the caller's data.
    """
    import dask
    import dask.array as da

    predicted = estimator.predict(X)
    y = as_vector(y, predicted if predicted.ndim == 2 else predicted[:, None], "y")
    w = as_vector(sample_weight, y if y.ndim == 2 else y[:, None], "sample_weight", dtype=np.float64)
    w = da.ones(y.shape[0], chunks=(y.chunks[0],)) if w is None else w
    total = w.sum()
    if getattr(estimator, "_estimator_type", None) == "classifier" or hasattr(estimator, "classes_"):
        hits = (w * (y == predicted)).sum()
        hits, total = dask.compute(hits, total)
        return float(hits / total)
    y = y.astype(np.float64)
    if y.ndim == 1:
        y, predicted = y[:, None], predicted[:, None]
    weights = w[:, None]
    mean = (weights * y).sum(axis=0) / total
    residual = (weights * (y - predicted) ** 2).sum(axis=0)
    spread = (weights * (y - mean) ** 2).sum(axis=0)
    residual, spread = dask.compute(residual, spread)
    # scikit-learn's conventions for a constant target: 1 if predicted exactly, else 0
    scores = np.where(spread > 0, 1.0 - residual / np.where(spread > 0, spread, 1.0), np.where(residual == 0, 1.0, 0.0))
    return float(np.mean(scores))
