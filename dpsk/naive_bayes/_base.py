# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the naive Bayes classifiers share: constraints and priors (prediction: ``dpsk.base``)."""

import textwrap
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_consistent_length, column_or_1d

from dpsk.base import DP_PARAMETER_CONSTRAINTS, BaseJointLogLikelihoodClassifier
from dpsk.utils._sklearn_compat import Interval, validate_data
from dpsk.utils.validation import (
    ON_INVALID_CONSTRAINT,
    _check_sample_weight_dp,
    labels_in,
    screen_invalid,
    screen_sample_weight,
    take_records,
)

__all__ = ["BaseDPNB", "check_priors"]

#: Constraints of every naive Bayes classifier (pure ε-DP: no delta).
NB_CONSTRAINTS = {
    **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
    "classes": ["array-like", None],
    "on_invalid": ON_INVALID_CONSTRAINT,
}


def on_invalid_doc(drop, clip):
    """The ``on_invalid`` parameter text of a naive Bayes model.

    ``drop`` names the model's own invalid values (after "a label outside ``classes``"),
    ``clip`` says what "clip" does with its values.
    """
    text = (
        "What to do with training rows outside the declared domain (see the Privacy paragraph). "
        '``"raise"``: a ``ValueError`` before anything is spent. ``"drop"``: rows holding NaN '
        f"or ±inf, a label outside ``classes``{drop}, or a NaN, infinite or negative "
        f'``sample_weight`` are removed inside the mechanism. ``"clip"``: {clip}; rows with a '
        "label outside ``classes`` or a NaN weight are removed, and weights are clipped to "
        "[0, 1]. Either is a function of each row alone, so the sensitivity and the guarantee "
        "are unchanged (see :ref:`declared_domain`)."
    )
    body = textwrap.fill(text, width=88, initial_indent=" " * 8, subsequent_indent=" " * 8, break_on_hyphens=False)
    return 'on_invalid : {"raise", "drop", "clip"}, default="raise"\n' + body


#: Constraints of the discrete naive Bayes classifiers (smoothing and priors, as in scikit-learn).
DISCRETE_NB_CONSTRAINTS = {
    **NB_CONSTRAINTS,
    "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
    "force_alpha": ["boolean"],
    "fit_prior": ["boolean"],
    "class_prior": ["array-like", None],
}


class BaseDPNB(BaseJointLogLikelihoodClassifier):
    """Base of the naive Bayes classifiers: prediction from ``_joint_log_likelihood``."""

    #: ``accept_sparse`` of the validation (False: scipy.sparse X raises scikit-learn's error).
    _accept_sparse: bool | tuple[str, ...] = False

    def _validate_training_data(
        self, X, y, sample_weight, *, infinite="clip", row_valid=None, clip=None, reset=True, classes=None
    ):
        """X, y and sample weights validated, with the ``on_invalid`` policy applied.

        ``"raise"``: scikit-learn's validation (NaN/inf raise; labels and model-specific
        values are checked by the caller). Otherwise each row is kept, mapped or dropped
        by a function of that row alone (``dpsk.utils.validation.screen_invalid``):
        ``row_valid(X)`` marks the rows valid for the model (under ``"drop"``),
        ``clip(X)`` maps the values under ``"clip"`` before the screen, ``infinite`` says
        what "clip" does with ±inf. May return no rows: the release then runs on none.
        ``reset=False`` (a later ``partial_fit`` call) checks X against the fitted features;
        ``classes`` (``partial_fit``'s public classes) replaces the ``classes`` parameter.
        """
        dtype = [np.float64, np.float32]
        if self.on_invalid == "raise":
            X, y = validate_data(self, X, y, dtype=dtype, order="C", accept_sparse=self._accept_sparse, reset=reset)
            return X, y, _check_sample_weight_dp(sample_weight, X)
        X = validate_data(
            self, X, dtype=dtype, order="C", accept_sparse=self._accept_sparse, ensure_all_finite=False, reset=reset
        )
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        valid = labels_in(self.classes if classes is None else classes, y)
        sample_weight, weight_valid = screen_sample_weight(self.on_invalid, sample_weight, X.shape[0])
        if weight_valid is not None:
            valid &= weight_valid
        if self.on_invalid == "clip" and clip is not None:
            X = clip(X)
        elif self.on_invalid == "drop" and row_valid is not None:
            with np.errstate(invalid="ignore"):
                valid &= row_valid(X)
        X, keep = screen_invalid(self.on_invalid, X, valid=valid, infinite=infinite)
        X, y, sample_weight = take_records(keep, X, y, sample_weight)
        X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X)
        return X, y, _check_sample_weight_dp(sample_weight, X)


def check_priors(priors, n_classes, name):
    """Validated class priors: shape (n_classes,), non-negative, summing to 1."""
    priors = np.asarray(priors, dtype=np.float64)
    if priors.shape != (n_classes,):
        raise ValueError(f"{name} must have shape ({n_classes},) (one per class), got {priors.shape}")
    if not np.isclose(priors.sum(), 1.0):
        raise ValueError(f"the sum of {name} must be 1")
    if np.any(priors < 0):
        raise ValueError(f"{name} must be non-negative")
    return priors
