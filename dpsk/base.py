# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What every dpsk estimator shares: privacy-parameter constraints and budget spending.

Also the prediction base of the classifiers that score classes by a joint
log-likelihood (naive Bayes, random trees) and their class priors from noisy counts.

The fit protocol (see doc/developers/architecture.rst)::

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        cost = self._privacy_cost(...)          # an event, from hyper-parameters (and shapes)
        self._check_privacy_budget(cost)        # BudgetExceededError before any data is read
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C")
        rng = release_generator(self.random_state, context=self, data=(X, y))  # local, per release
        self._spend_privacy_budget(cost)        # atomic check-and-spend; sets privacy_spent_
        ...                                     # clip, accumulate, release through mechanisms
        return self
"""

import math
import weakref
from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin

from dpsk.accounting._context import (
    BOUND_ATTRIBUTE,
    PATH_ATTRIBUTE,
    accountant_for_clone,
    label_of,
    note_spent,
    resolve_accountant,
    spending_as,
    step_path,
)
from dpsk.dask._data import dask_apply, dask_score, is_dask
from dpsk.utils._sklearn_compat import HasMethods, Interval, Options, _VisualBlock, check_is_fitted
from dpsk.utils._threads import single_blas_thread

# The bases of the naive Bayes and tree classifiers are importable but internal: only the
# mixin is public API.
__all__ = ["DPEstimatorMixin"]

#: Constraints of the privacy hyper-parameters, shared by every estimator
#: (merge into ``_parameter_constraints`` with ``{**DP_PARAMETER_CONSTRAINTS, ...}``).
DP_PARAMETER_CONSTRAINTS = {
    # float("inf"): the non-private model (no noise), recorded as an infinite spend.
    "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {math.inf})],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "accountant": [None, HasMethods(["check_event", "record"])],
    "random_state": [
        None,
        Interval(Integral, 0, None, closed="left"),
        np.random.Generator,
        np.random.BitGenerator,
        np.random.SeedSequence,
    ],
}


#: Constraint of feature ``bounds`` parameters: a pair (tuple or list) of scalars or arrays,
#: or a dict of pairs by feature name or column index (:func:`dpsk.utils.check_bounds`).
BOUNDS_CONSTRAINT = [tuple, list, dict, None]
#: Constraint of target ``bounds_y`` parameters: a pair (tuple or list).
TARGET_BOUNDS_CONSTRAINT = [tuple, list, None]


class DPEstimatorMixin:
    """Mixin for differentially private estimators (put it left of ``BaseEstimator``).

    Provides the two budget steps of ``fit``; the estimator provides the privacy cost.

    Notes
    -----
    **Privacy.** The mixin provides the budget steps of the fit protocol: the cost
    is checked on the accountant in play before any data is read, and recorded
    (atomically) with ``privacy_spent_`` before the first release. The guarantee
    itself — relation, sensitivity, noise — is each estimator's, stated in its own
    Privacy paragraph. Clones remember the accountant active when they were cloned,
    so that their spends are recorded, or fail loudly, in worker processes.
    """

    _dpsk_estimator = True

    # scikit-learn's HTML diagram links each estimator to its API page through these hooks.
    _doc_link_module = "dpsk"
    _doc_link_template = (
        "https://dpsk.readthedocs.io/en/latest/modules/generated/{estimator_module}.{estimator_name}.html"
    )

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's parameter names (the arguments of ``__init__``), introspected once per class.

        A fit reads its parameters several times (parameter validation, the seed digest,
        ``set_params``), and scikit-learn's ``inspect.signature`` of ``__init__`` costs more
        than the rest of ``get_params``. The names are cached by class and ``__init__``: a
        subclass, or an ``__init__`` replaced later, is introspected anew.
        """
        return list(_init_param_names(cls, cls.__init__))

    def _privacy_label(self):
        """``ε=…`` (and ``δ=…``) of the estimator's parameters, for its HTML diagram ("" if none)."""
        params = self.get_params(deep=False)
        epsilon = params.get("epsilon")
        if not isinstance(epsilon, Real):
            return ""
        label = f"ε={float(epsilon):g}"
        delta = params.get("delta")
        if isinstance(delta, Real) and delta > 0:
            label += f", δ={float(delta):g}"
        return label

    def _sk_visual_block_(self):
        """scikit-learn's diagram block, with the privacy parameters next to the class name.

        A meta-estimator (a search) keeps scikit-learn's block of its inner estimators,
        each labelled by its own parameters; the budget of its own step (the selection)
        goes on its name when it is displayed on its own.
        """
        label = self._privacy_label()
        nested = [
            (key, est)
            for key, est in self.get_params(deep=False).items()
            if hasattr(est, "get_params") and hasattr(est, "fit") and not isinstance(est, type)
        ]
        if nested:
            return _VisualBlock(
                "parallel",
                [est for _, est in nested],
                names=[f"{key}: {est.__class__.__name__}" for key, est in nested],
                name_details=[str(est) for _, est in nested],
            )
        name = type(self).__name__ + (f" ({label})" if label else "")
        return _VisualBlock("single", self, names=name, name_details=str(self))

    def _validate_params(self):
        """scikit-learn's parameter validation, after the clear error of ``classes="private"``
        (a private label set is not possible; the constraints' message would not say why)."""
        if "classes" in getattr(self, "_parameter_constraints", {}):
            from dpsk.utils.validation import refuse_private_classes

            refuse_private_classes(self, getattr(self, "classes", None))
        super()._validate_params()

    def __sklearn_clone__(self):
        """Clone as scikit-learn does, remembering the accountant active at clone time.

        ``with acc: GridSearchCV(est, ..., n_jobs=2).fit(X, y)`` clones ``est`` in this
        process and fits the clones in worker processes, where the ``with`` block does
        not exist. Binding ``acc`` (a private attribute, not a parameter) makes each
        clone spend on it there, or fail loudly if ``acc`` cannot be reached from the
        worker: a spend never vanishes silently.
        """
        clone = super().__sklearn_clone__()
        accountant = accountant_for_clone()
        if accountant is None:
            accountant = getattr(self, BOUND_ATTRIBUTE, None)
        if accountant is not None and getattr(clone, "accountant", None) is None:
            setattr(clone, BOUND_ATTRIBUTE, accountant)
        path = step_path(self)
        if path is not None:  # a column transformer fits clones: they keep the step's label
            setattr(clone, PATH_ATTRIBUTE, path)
        return clone

    def _accountant_in_play(self):
        """The accountant ``fit`` checks and spends on, here and now (or None).

        :func:`dpsk.accounting.check_budget` asks it, to check a step's cost on the
        accountant its fit will use. Estimators that look for their accountant
        elsewhere (a private search also asks its candidate's steps) override it.
        """
        return resolve_accountant(self)

    def _check_privacy_budget(self, cost):
        """Dry run: raise BudgetExceededError if ``cost`` does not fit the accountant's budget.

        Call before reading the data. Returns the accountant in play (or None).
        """
        accountant = self._accountant_in_play()
        if accountant is not None:
            with spending_as(label_of(self)):
                accountant.check_event(cost)
        return accountant

    def _spend_privacy_budget(self, cost, note=None):
        """Record ``cost`` on the accountant (atomic check-and-spend) and in ``privacy_spent_``.

        Call once the data is validated and before the first noisy release. A concurrent
        spend can still take the budget first, in which case this raises
        BudgetExceededError and nothing is released. ``note`` (public text, e.g. which
        bounds the fit estimates privately) is appended to the ledger label's call.
        """
        accountant = self._accountant_in_play()
        if accountant is not None:
            # The ledger labels the spend with the class, step path and call (one place).
            label = label_of(self)
            if note:
                label = label._replace(call=f"{label.call} [{note}]")
            with spending_as(label) as label:
                accountant.record(cost)
            note_spent(label, cost, accountant)
        self.privacy_spent_ = cost


#: cls -> (weak reference to its ``__init__``, parameter names). Weak both ways, so that
#: classes made on the fly (a subclass per test, a notebook cell run again) can be freed.
_PARAM_NAMES: "weakref.WeakKeyDictionary[type, tuple]" = weakref.WeakKeyDictionary()


def _init_param_names(cls, init):
    """The names scikit-learn's ``_get_param_names`` gives ``cls`` (whose ``__init__`` is ``init``).

    An error (``*args`` in ``__init__``) is not cached: it is raised on every call.
    """
    cached = _PARAM_NAMES.get(cls)
    if cached is not None and cached[0]() is init:
        return cached[1]
    names = tuple(super(DPEstimatorMixin, cls)._get_param_names())
    try:
        _PARAM_NAMES[cls] = (weakref.ref(init), names)
    except TypeError:  # a built-in __init__ (object's): not cached
        pass
    return names


class DaskScoreMixin:
    """scikit-learn's ``score`` (R² or mean accuracy), reduced on the cluster for Dask input.

    Put before scikit-learn's ``RegressorMixin`` / ``ClassifierMixin``. Non-private, as
    theirs: evaluation on the caller's data (``dpsk.dask._data.dask_score``).
    """

    def score(self, X, y, sample_weight=None):
        """The score of the predictions on X against y (scikit-learn's metric).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,) or None, default=None

        Returns
        -------
        score : float
        """
        if is_dask(X, y, sample_weight):
            return dask_score(self, X, y, sample_weight)
        return super().score(X, y, sample_weight=sample_weight)


class BaseJointLogLikelihoodClassifier(
    DaskScoreMixin, DPEstimatorMixin, ClassifierMixin, BaseEstimator, metaclass=ABCMeta
):
    """Prediction from a joint log-likelihood: the naive Bayes classifiers and the random trees.

    Subclasses give ``_joint_log_likelihood`` and ``_check_X``; ``predict``,
    ``predict_proba``, ``predict_log_proba`` and ``predict_joint_log_proba`` follow.

    Notes
    -----
    **Privacy.** Post-processing of the fitted (released) attributes only: nothing
    here reads training data.
    """

    @abstractmethod
    def _joint_log_likelihood(self, X):
        """log P(c) + log P(x | c) for each row of a validated X: shape (n_samples, n_classes)."""

    @abstractmethod
    def _check_X(self, X):
        """Validate X for prediction (``reset=False``)."""

    def _jll(self, X):
        """Joint log-likelihood of X in float64, and the dtype of the outputs: float32 for
        float32 X (as scikit-learn's float32-preserving estimators), float64 otherwise."""
        check_is_fitted(self)
        dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
        X = self._check_X(X)
        with single_blas_thread():  # n × d times d × n_classes: one thread is faster (dpsk.utils._threads)
            return np.asarray(self._joint_log_likelihood(X), dtype=np.float64), dtype

    def predict_joint_log_proba(self, X):
        """Joint log-probability log P(x, c) of each row of X and each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; float32 for float32 X.
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk (dpsk.dask)
            return dask_apply(self, "predict_joint_log_proba", X, n_outputs=self.classes_.size, dtype=np.float64)
        jll, dtype = self._jll(X)
        return jll.astype(dtype, copy=False)

    def predict(self, X):
        """Most probable class of each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        if is_dask(X):
            check_is_fitted(self)
            return dask_apply(self, "predict", X, dtype=self.classes_.dtype)
        jll, _ = self._jll(X)
        return self.classes_[np.argmax(jll, axis=1)]

    def predict_log_proba(self, X):
        """Log-probability of each class for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
            Float32 for float32 X (computed in float64).
        """
        if is_dask(X):
            check_is_fitted(self)
            return dask_apply(self, "predict_log_proba", X, n_outputs=self.classes_.size, dtype=np.float64)
        jll, dtype = self._jll(X)
        log_proba = jll - logsumexp(jll, axis=1, keepdims=True)
        if dtype == np.float64:
            return log_proba
        # float32: the log of the float32 probabilities where they are positive, so that
        # log_proba == log(predict_proba) holds in float32 as in float64.
        proba = np.exp(log_proba).astype(np.float32)
        with np.errstate(divide="ignore"):
            return np.where(proba > 0, np.log(proba), log_proba.astype(np.float32))

    def predict_proba(self, X):
        """Probability of each class for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
            Float32 for float32 X (computed in float64).
        """
        if is_dask(X):
            return np.exp(self.predict_log_proba(X))  # lazy: a ufunc on a Dask array
        jll, dtype = self._jll(X)
        return np.exp(jll - logsumexp(jll, axis=1, keepdims=True)).astype(dtype, copy=False)


def priors_from_counts(counts):
    """Class priors from noisy class counts: proportional to the counts clamped at 1 (post-processing)."""
    counts = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
    return counts / counts.sum()
