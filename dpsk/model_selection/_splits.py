# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random splits by privacy unit, and the fit-and-score task every private search runs.

**Why splits are drawn independently per unit.** The privacy arguments of the searches
(k-fold: a unit is in k - 1 training folds and one validation fold; disjoint parts:
parallel composition) need neighbouring datasets to differ in *one* unit of *one* part.
scikit-learn's ``KFold`` assigns folds by position, so adding a row shifts the folds of
the rows after it; a shuffled split of fixed sizes moves rows across fold boundaries.
Here each unit (a row, or all rows of a user with ``groups=``) draws its part
independently and uniformly: adding or removing a unit leaves every other unit where it
was, and the search is a mixture, over the unit's part, of mechanisms that each satisfy
the bound (parts have random sizes; that is the price).

**Validation score.** Accuracy is scored as a count: the number of correct predictions
(with ``groups=``: the sum over users of the fraction of the user's rows predicted
correctly). For fixed fitted models, adding or removing one unit changes it by at most 1,
and only upwards when adding (a *monotone* score). A fraction of correct predictions
would have a sensitivity that depends on the private number of rows.
"""

import inspect

import numpy as np
from joblib import Parallel
from sklearn.utils import indexable
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d

from dpsk.model_selection._estimators import missing_classes, public_classes
from dpsk.utils._progress import progress
from dpsk.utils._units import privacy_units, random_parts
from dpsk.utils.validation import _warn_leak, resolve_classes

__all__ = [
    "check_search_data",
    "check_training_parts",
    "fit_and_score",
    "fit_params_for",
    "fit_params_with_groups",
    "privacy_units",
    "params_message",
    "random_parts",
    "run_fits",
    "shared_classes",
    "take_rows",
    "takes_zero_weight",
    "unit_score",
]


def take_rows(data, index):
    """Rows ``index`` of an array, sparse matrix, DataFrame/Series or list."""
    if data is None:
        return None
    if hasattr(data, "iloc"):
        return data.iloc[index]
    if hasattr(data, "shape"):
        return data[index]
    return [data[i] for i in index]


def n_rows(data):
    """Number of rows of ``data`` (an array-like)."""
    return data.shape[0] if hasattr(data, "shape") else len(data)


def _row_aligned(value, n_samples):
    return (
        value is not None
        and not isinstance(value, (str, bytes, dict))
        and hasattr(value, "__len__")
        and n_rows(value) == n_samples
    )


def fit_params_for(params, index, n_samples):
    """Fit parameters restricted to rows ``index`` (those that have one entry per row)."""
    return {k: take_rows(v, index) if _row_aligned(v, n_samples) else v for k, v in params.items()}


def check_search_data(X, y, groups, name, estimator=None):
    """Validate the data of a private search before its budget is spent (nothing released yet).

    X must be finite (any dtype the estimator accepts), y a classification target, and X,
    y, groups of the same length. y must hold two classes only when ``estimator`` would
    derive its classes from the data (already a :class:`~dpsk.exceptions.PrivacyLeakWarning`
    path): with public ``classes`` a one-class y is valid data, and whether it has one class
    can hinge on one record. A label outside a step's public ``classes`` is outside the
    declared domain: refused here, before the search spends, not by an inner fit after it.
    """
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None")
    X, y, groups = indexable(X, y, groups)
    check_array(X, accept_sparse=True, dtype=None, ensure_all_finite=True, ensure_2d=False, allow_nd=True)
    y_array = column_or_1d(y, warn=True)
    check_classification_targets(y_array)
    if (estimator is None or missing_classes(estimator)) and np.unique(y_array).size < 2:
        raise ValueError(f"y holds one class only; {name} needs at least two classes")
    if estimator is not None:
        for param, classes in public_classes(estimator).items():
            resolve_classes(estimator, classes, y_array, param=param)
    return X, y_array, groups


def shared_classes(estimator, y, name):
    """The classes every inner fit must know, derived once from y with a warning; or None.

    Only when a DP step would derive them itself (its ``classes`` is None): random parts
    can miss a class, and fold models must agree on the classes anyway.
    """
    if not missing_classes(estimator):
        return None
    _warn_leak(
        f"{name}: the estimator's `classes` was not given, so the classes are computed from y and passed to every fit",
        "classes",
        stacklevel=3,
    )
    return np.unique(column_or_1d(y))


def takes_zero_weight(estimator):
    """Whether ``estimator.fit`` takes ``sample_weight`` (so that a zero-weight row stands for no row)."""
    return "sample_weight" in inspect.signature(estimator.fit).parameters


def check_training_parts(splits, n_units, estimator=None, grouped=False):
    """Refuse (before anything is spent) if a random training part drew no unit and cannot be fitted.

    A part with no unit is fitted as the mechanism on no data: one placeholder row with
    weight 0 (:func:`fit_and_score`), which every dpsk estimator with ``sample_weight``
    treats exactly as an absent row, so the part still releases its noise and whether a
    part is empty changes nothing observable. Only an ``estimator`` whose ``fit`` takes
    no ``sample_weight``, or a user-level search (``grouped``: a placeholder would be one
    more user), is refused here; that refusal depends on the number of units (m parts:
    probability about m (1 - 1/m)^n_units), see ``doc/limitations.rst``.
    """
    if estimator is not None and not grouped and takes_zero_weight(estimator):
        return
    if any(train.size == 0 for train, _ in splits):
        raise ValueError(
            f"a random training part drew none of the {n_units} privacy units; that many units are "
            "too few for this design (use fewer candidates or folds). Nothing was spent."
        )


def unit_score(y_pred, y_true, units):
    """Number of correct predictions, or Σ over units of their fraction of correct rows."""
    correct = (np.asarray(y_pred) == np.asarray(y_true)).astype(np.float64)
    if units is None:
        return float(correct.sum())
    _, inverse = np.unique(units, return_inverse=True)
    return float(np.sum(np.bincount(inverse, weights=correct) / np.bincount(inverse)))


def fit_params_with_groups(estimator, groups, params):
    """Fit parameters for the inner fits: ``params``, plus ``groups`` if the estimator takes it.

    Raises TypeError (before anything is spent) for a parameter ``fit`` does not take.
    """
    accepted = inspect.signature(estimator.fit).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    unknown = sorted(k for k in params if k not in accepted and not takes_any)
    if unknown:
        raise TypeError(f"{type(estimator).__name__}.fit does not take the parameter(s) {unknown}")
    params = dict(params)
    if groups is not None and "groups" in accepted:
        params["groups"] = groups
    return params


def fit_and_score(estimator, X, y, fit_params, train, validation, units, keep_model):
    """Fit ``estimator`` on rows ``train`` and score it on rows ``validation`` (a joblib task).

    Returns
    -------
    score : float
        :func:`unit_score` of the validation rows (0 if there are none).
    model : estimator or None
        The fitted estimator if ``keep_model``.
    """
    n_samples = n_rows(X)
    params = fit_params_for(fit_params, train, n_samples)
    if train.size == 0:
        # The mechanism on no data: a placeholder row whose weight 0 makes it count for nothing.
        train = np.zeros(1, dtype=np.intp)
        params = {**fit_params_for(fit_params, train, n_samples), "sample_weight": np.zeros(1)}
    estimator.fit(take_rows(X, train), take_rows(y, train), **params)
    score = 0.0
    if validation.size:
        y_pred = estimator.predict(take_rows(X, validation))
        score = unit_score(y_pred, take_rows(y, validation), None if units is None else units[validation])
    return score, (estimator if keep_model else None)


def run_fits(tasks, lines, *, n_jobs, pre_dispatch, verbose, description="fits"):
    """Run the :func:`fit_and_score` ``tasks`` with joblib and return their results in order.

    At ``verbose == 1`` a progress bar counts the finished fits (``description`` names
    it; ``dpsk.utils._progress``: tqdm when installed, plain lines otherwise).
    At ``verbose >= 2`` ``lines[i]`` is printed when task i has finished, by this process
    (so it also appears in notebooks with process workers). Lines follow scikit-learn's
    ``[CV i/k; j/m] END params`` style but carry no score or time: both depend on the
    private data, and printed output is often shared with the notebook. At
    ``verbose >= 3`` joblib's own progress messages are added.
    """
    options = {"n_jobs": n_jobs, "verbose": max(verbose - 2, 0), "pre_dispatch": pre_dispatch}
    try:
        parallel = Parallel(**options, return_as="generator")
    except TypeError:  # joblib < 1.3: all results at the end
        parallel = Parallel(**options)
    results = []
    done = parallel(tasks)
    if verbose == 1:
        done = progress(done, len(lines), description)
    for line, result in zip(lines, done, strict=True):
        if verbose >= 2:
            print(line, flush=True)
        results.append(result)
    return results


def params_message(params):
    """``"a=1, b=2"``: parameters as scikit-learn's verbose output shows them."""
    return ", ".join(f"{name}={value}" for name, value in sorted(params.items()))
