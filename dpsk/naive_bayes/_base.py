# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the naive Bayes classifiers share: prediction from a joint log-likelihood, priors."""

from abc import abstractmethod
from numbers import Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin

from dpsk.base import DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.utils._sklearn_compat import Interval, check_is_fitted

__all__ = ["BaseDPNB"]

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


class BaseDPNB(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Prediction for naive Bayes: subclasses give ``_joint_log_likelihood`` and ``_check_X``."""

    @abstractmethod
    def _joint_log_likelihood(self, X):
        """log P(c) + log P(x | c) for each row of a validated X: shape (n_samples, n_classes)."""

    @abstractmethod
    def _check_X(self, X):
        """Validate X for prediction (``reset=False``)."""

    def predict_joint_log_proba(self, X):
        """Joint log-probability log P(x, c) of each row of X and each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self)
        return self._joint_log_likelihood(self._check_X(X))

    def predict(self, X):
        """Most probable class of each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        jll = self.predict_joint_log_proba(X)
        return self.classes_[np.argmax(jll, axis=1)]

    def predict_log_proba(self, X):
        """Log-probability of each class for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
        """
        jll = self.predict_joint_log_proba(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Probability of each class for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
        """
        return np.exp(self.predict_log_proba(X))


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


def priors_from_counts(counts):
    """Class priors from noisy class counts: proportional to the counts clamped at 1 (post-processing)."""
    counts = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
    return counts / counts.sum()
