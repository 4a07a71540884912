# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validation and plumbing shared by the functions of :mod:`dpsk.stats`.

The privacy unit of an array ``a`` is one *record* ``a[i]`` along the first axis (one
row of a data matrix), or with ``groups=`` one user (all records with the same id).
A reduction over ``axis`` must therefore include axis 0: the array is viewed as
``(n_records, per_record, n_outputs)``, where each record holds ``per_record`` values
for each of the ``n_outputs`` entries of the result (``per_record = 1`` for the usual
column statistics of a matrix with ``axis=0``).

Every function follows the estimators' protocol: the cost is known from the parameters,
checked on the accountant before the data is read, recorded before the first release.
"""

import functools
import numbers
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from dpsk._core._sparse import as_csr
from dpsk.accounting._context import accountant_in_play
from dpsk.utils._docstring import _shared_docs
from dpsk.utils.validation import check_bounds, resolve_bounds

__all__ = [
    "Records",
    "STATS_DOCS",
    "as_array",
    "as_records",
    "check_accountant",
    "column_names",
    "frame_aware",
    "layout",
    "resolve_stat_bounds",
    "shape_output",
]


class Records(NamedTuple):
    """An array viewed as records: ``X`` of shape ``(n_records * per_record, n_outputs)``."""

    X: np.ndarray  # C-contiguous float32/float64 (or a CSR matrix); the rows of one record are consecutive
    n_records: int
    per_record: int
    out_shape: tuple  # shape of the result without keepdims
    keep_shape: tuple  # shape of the result with keepdims=True

    @property
    def n_outputs(self):
        return self.X.shape[1]


def _columns_of(a):
    """The column labels of a pandas DataFrame (duck-typed: pandas stays optional), else None."""
    if type(a).__module__.partition(".")[0] != "pandas" or getattr(a, "ndim", None) != 2:
        return None
    return getattr(a, "columns", None)


def frame_aware(function):
    """Decorator: a statistic of a pandas DataFrame per column comes back as a Series (pandas' way).

    When the first argument is a DataFrame and the result has one entry per column
    (``axis=0``), the result is ``pandas.Series(values, index=df.columns)``; with several
    quantiles (shape ``(n_q, n_columns)``), a DataFrame indexed by ``q``. Other results
    (``axis=None`` gives a scalar, as numpy's functions do) are unchanged. With
    ``return_error=True`` the :class:`DPResult`'s ``value`` is converted. Post-processing
    of public labels only.
    """

    @functools.wraps(function)
    def wrapper(a, *args, **kwargs):
        result = function(a, *args, **kwargs)
        columns = _columns_of(a)
        if columns is None:
            return result
        if hasattr(result, "privacy_spent"):  # DPResult
            result.value = _labelled(result.value, columns, function.__name__, args, kwargs)
            return result
        return _labelled(result, columns, function.__name__, args, kwargs)

    return wrapper


def _labelled(value, columns, name, args, kwargs):
    import pandas as pd  # present: the input is a DataFrame

    arr = np.asarray(value)
    if arr.ndim == 1 and arr.shape[0] == len(columns):
        return pd.Series(arr, index=columns, name=name)
    if arr.ndim == 2 and arr.shape[1] == len(columns):
        q = kwargs.get("q", args[0] if args else None)
        index = np.ravel(q) if q is not None and np.size(q) == arr.shape[0] else None
        return pd.DataFrame(arr, index=index, columns=columns)
    return value


def _normalize_axis(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) and not isinstance(axis, bool) else tuple(axis)
    out = []
    for ax in axes:
        if isinstance(ax, bool) or not isinstance(ax, numbers.Integral):
            raise TypeError(f"axis must be None, an int or a tuple of ints, got {axis!r}")
        if not -ndim <= ax < ndim:
            raise ValueError(f"axis {ax} is out of bounds for an array of dimension {ndim}")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError("axis contains repeated axes")
    if 0 not in out:
        raise ValueError(
            "axis must include axis 0: records (the privacy unit) lie along the first axis, and "
            "a statistic of one record alone cannot be released privately"
        )
    return tuple(out)


def as_array(a, *, name="a"):
    """``a`` as a real ndarray with at least one dimension (its values are not inspected);
    a scipy.sparse matrix is kept as it is (records are its rows: axis 0 only)."""
    if sp.issparse(a):
        if a.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
        return a
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (records along axis 0), got a scalar")
    return arr


def layout(arr, axis, *, name="a", allow_empty=False):
    """Shape-only view of a reduction: ``(n_records, per_record, n_outputs, out_shape, keep_shape)``.

    Reads no values (shapes are public), so the cost of a call can be checked first.
    ``allow_empty``: accept no records (data screened by ``on_invalid``: the release runs
    on no data rather than raise depending on the values).
    """
    axes = _normalize_axis(axis, arr.ndim)
    kept = [ax for ax in range(arr.ndim) if ax not in axes]
    n = arr.shape[0]
    per_record = int(np.prod([arr.shape[ax] for ax in axes if ax != 0], dtype=np.int64))
    out_shape = tuple(arr.shape[ax] for ax in kept)
    n_outputs = int(np.prod(out_shape, dtype=np.int64))
    if n == 0 and not allow_empty:
        raise ValueError(f"{name} has no records (shape {arr.shape}); a statistic needs at least one")
    if per_record == 0 or n_outputs == 0:
        raise ValueError(f"{name} of shape {arr.shape} has no values to reduce over axis {axis}")
    keep_shape = tuple(1 if ax in axes else arr.shape[ax] for ax in range(arr.ndim))
    return axes, kept, per_record, out_shape, keep_shape


def as_records(arr, axis, *, name="a", allow_empty=False):
    """Validate the values of ``arr`` (finite) and view it as records for a reduction over ``axis``.

    float32 stays float32; every other real dtype becomes float64. ``allow_empty`` as
    for :func:`layout`.
    """
    axes, kept, per_record, out_shape, keep_shape = layout(arr, axis, name=name, allow_empty=allow_empty)
    n = arr.shape[0]
    if sp.issparse(arr):  # the rows are the records; the kernels read the stored values only
        if tuple(axes) != (0,):
            raise ValueError(f"sparse {name}: only reductions along axis 0 (over the rows) are supported")
        X = as_csr(arr.astype(np.float32 if arr.dtype == np.float32 else np.float64))
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name} contains NaN or infinity")
        return Records(X, n, per_record, out_shape, keep_shape)
    inner = [ax for ax in axes if ax != 0]
    dtype = np.float32 if arr.dtype == np.float32 else np.float64
    X = np.transpose(arr, [0, *inner, *kept]).reshape(n * per_record, int(np.prod(out_shape, dtype=np.int64)))
    X = np.ascontiguousarray(X, dtype=dtype)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinity")
    return Records(X, n, per_record, out_shape, keep_shape)


def shape_output(values, records, keepdims, dtype, *, leading=()):
    """Reshape flat per-output ``values`` to the result shape (a numpy scalar for a scalar)."""
    shape = (*leading, *(records.keep_shape if keepdims else records.out_shape))
    out = np.asarray(values, dtype=np.float64).reshape(shape).astype(dtype, copy=False)
    return out[()] if out.ndim == 0 else out


def column_names(a, axis):
    """The column labels of a 2-d DataFrame ``a`` reduced over its rows (one output per
    column), else None: what a dict of ``bounds`` may be keyed by."""
    columns = _columns_of(a)
    if columns is None or _normalize_axis(axis, 2) != (0,):
        return None
    return list(columns)


def resolve_stat_bounds(bounds, records, function, *, feature_names=None):
    """Public (lower, upper) bounds broadcast to the outputs, or data-derived ones with a warning.

    Bounds are scalars or arrays broadcastable to the result shape (without keepdims),
    or, for one output per column, a dict of ``(lower, upper)`` per column, keyed by
    column index or by name (``feature_names``, from :func:`column_names`), resolved as
    the estimators' bounds by name. Returns two float64 arrays of shape ``(n_outputs,)``.
    """
    n_outputs = records.X.shape[1]
    if bounds is None or (isinstance(bounds, str) and bounds == "private"):  # placeholders: released after the spend
        return np.full(n_outputs, -1.0), np.full(n_outputs, 1.0)
    if isinstance(bounds, str) and bounds == "data":
        # As for estimators: the data's minimum and maximum, with the leak warning.
        return resolve_bounds(function, "data", records.X, attribute=None)
    if isinstance(bounds, Mapping):
        if len(records.out_shape) != 1:
            raise ValueError(
                "bounds as a dict give (lower, upper) per column: they need a 2-d input reduced over axis=0"
            )
        return check_bounds(bounds, n_outputs, feature_names=feature_names)
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError("bounds must be a tuple (lower, upper)")
    try:
        flat = [np.broadcast_to(np.asarray(b, dtype=np.float64), records.out_shape).reshape(-1) for b in bounds]
    except ValueError:
        raise ValueError(f"bounds must be scalars or broadcastable to the result shape {records.out_shape}") from None
    return check_bounds(tuple(flat), n_outputs)


def check_accountant(accountant):
    """The accountant to check and spend on: ``accountant``, else the active one, else None.

    Resolved as for estimators (:func:`~dpsk.accounting._context.resolve_accountant`),
    with no accountant bound by a clone.
    """
    if accountant is not None and not (hasattr(accountant, "check_event") and hasattr(accountant, "record")):
        raise TypeError(f"accountant must be a BudgetAccountant or None, got {type(accountant).__name__}")
    return accountant_in_play(accountant, who="this dpsk.stats call")


#: Parameter text shared by the docstrings of dpsk.stats (``dpsk.utils._docstring.Substitution``).
STATS_DOCS = {
    "a": """a : array-like
        The data. Records (the privacy unit, e.g. people) lie along the first axis: ``a[i]``
        is one record, which may hold several values (a row of a data matrix).""",
    "epsilon": """epsilon : float, default=1.0
        Privacy parameter ε > 0: the budget of the whole call. Smaller is more private
        and noisier. ``float("inf")`` gives the exact statistic (no noise), recorded as
        an infinite spend.""",
    "delta": """delta : float, default=0.0
        ``0`` gives pure ε-DP (Laplace noise). A value in (0, 1) uses Gaussian noise for
        the sums, much more accurate for many entries at once; choose δ well below
        1/n_records.""",
    "bounds": """bounds : tuple (lower, upper), dict, "private", "data" or None, default=None
        Public bounds on the values: scalars, or arrays broadcastable to the result's
        shape (e.g. one per column). With one result per column (a 2-d input,
        ``axis=0``) also a dict of ``(lower, upper)`` per column, keyed by column index
        or, for a DataFrame, by column name (``{"age": (17, 90), ...}``), covering every
        column. Values outside are clipped, so the guarantee holds whatever the data.
        ``"private"`` estimates them in the same call (:func:`bounds`, a noisy
        logarithmic histogram per output; one value per record and output, item level)
        with ``bounds_epsilon_share`` of ε (:func:`dpsk.set_config`, 10 %), part of the
        call's one event; ``DPResult.bounds`` reports them. ``None`` (left out, the
        default) means the same. Where they cannot be estimated privately (with ``groups``, or several
        values per record) a left-out ``bounds`` raises a ``ValueError`` before anything
        is spent. ``"data"`` uses the data's minimum and maximum with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning`, which breaks the guarantee.""",
    "axis": """axis : None, int or tuple of ints, default=None
        Axes to reduce over; must include axis 0 (the records). ``None``: all values,
        ``0``: one result per column.""",
    "keepdims": """keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.""",
    "groups": """groups : array-like of shape (n_records,) or None, default=None
        User id of each record. When given, the guarantee protects every user as a
        whole: neighbouring datasets differ in all records of one user, however many.
        ``None``: each record is its own unit (item-level privacy).""",
    "contribution_bound": """contribution_bound : {"smooth", "limit"}, default="smooth"
        With ``groups``: how each user's rows are bounded to the weight of at most
        ``threshold`` rows. ``"smooth"`` (Epasto et al. 2020): every row of a user with s
        rows gets weight min(1, h/s), nothing is dropped. ``"limit"`` (sample limiting):
        h rows chosen at random are kept, the rest dropped; for comparison.""",
    "threshold": """threshold : float or None, default=None
        With ``groups``: the public cap h on a user's total weight (in rows; an integer
        for ``"limit"``). ``None`` chooses h: privately from the data with 10% of ε
        (charged; for means, variances and quantiles the optimum of Epasto et al., for
        totals the 0.9-quantile of the users' row counts), or from the public counts with
        ``public_user_counts=True``.""",
    "public_user_counts": """public_user_counts : bool, default=False
        With ``groups``: declare the set of users and each user's number of rows
        **public**, as in Epasto et al. (2020). The neighbouring relation becomes "replace
        the values of one user's rows" (not add/remove a user), the count needs no noise
        and h is the paper's closed-form optimum, at no cost. Only set this if the counts
        are really public: the release then says nothing about them.""",
    "accountant": """accountant : BudgetAccountant or None, default=None
        Checked before any value is read (:class:`~dpsk.exceptions.BudgetExceededError`
        if the call would exceed its budget) and charged before the release. ``None``
        uses the accountant made active by ``with accountant:``, if any.""",
    "random_state": _shared_docs["random_state"],
    "on_invalid": """on_invalid : {"raise", "drop", "clip"}, default="raise"
        What to do with records outside the declared domain (NaN or ±inf values, a
        missing user id in ``groups``). ``"raise"``: a ``ValueError`` before anything is
        spent. ``"drop"``: such records are removed inside the mechanism. ``"clip"``:
        ±inf values are clipped to ``bounds``, which must then be given (:func:`count`
        counts them; histograms count them in no bin, as any value outside ``range``),
        and records with NaN or a missing user id are removed. Dropping or clipping is a function of each
        record alone, so the sensitivity and the guarantee are unchanged (see
        :ref:`declared_domain`); not with ``public_user_counts=True``, whose counts
        dropping would change.""",
    "return_error": """return_error : bool, default=False
        Return a :class:`DPResult` holding the value, the standard deviation of the noise,
        a guaranteed confidence interval (``confidence_interval()``) and the privacy
        cost, instead of the bare value. Computed from the release and public parameters
        only: free of privacy cost.""",
    # Used inside Notes paragraphs (4-space indentation): continuation lines match it.
    # The declared domain, the last sentence of every Privacy paragraph (Notes indentation).
    "domain": """Domain: finite values; with ``groups``, a user id for every record. Data outside it
    raise a ``ValueError`` before any noise is drawn, which reveals only that the data
    left the domain, or with ``on_invalid`` are dropped or clipped inside the mechanism
    (:ref:`declared_domain`).""",
    "user_level_privacy": """With ``groups``, the unit is one user: neighbours differ in all
    rows of one user (add or remove the user), or, with ``public_user_counts=True``,
    in the values of one user's rows (user counts public, sensitivities doubled for
    the replacement); every sensitivity is multiplied by the threshold h, since one
    user's rows weigh at most h rows. Choosing h privately costs 10% of ε (an
    exponential mechanism, recorded in the cost).""",
}
STATS_DOCS["user_level"] = "\n    ".join(
    STATS_DOCS[k] for k in ("groups", "contribution_bound", "threshold", "public_user_counts")
)
STATS_DOCS["call"] = "\n    ".join(STATS_DOCS[k] for k in ("accountant", "random_state"))
