# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the naive Bayes classifiers share: constraints and priors (prediction: ``dpsk.base``)."""

from numbers import Real

import numpy as np

from dpsk.base import DP_PARAMETER_CONSTRAINTS, BaseJointLogLikelihoodClassifier
from dpsk.utils._sklearn_compat import Interval

__all__ = ["BaseDPNB", "check_priors"]

#: Constraints of every naive Bayes classifier (pure ε-DP: no delta).
NB_CONSTRAINTS = {
    **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
    "classes": ["array-like", None],
}

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
