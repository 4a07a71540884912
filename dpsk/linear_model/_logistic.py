# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private logistic regression."""

import numpy as np
from scipy.special import expit

from dpsk.dask._data import dask_apply, is_dask
from dpsk.linear_model._classifier import CLASSIFIER_DOCS, BasePrivateLinearClassifier
from dpsk.linear_model._solver import LogisticLoss
from dpsk.utils._docstring import Substitution
from dpsk.utils._sklearn_compat import check_is_fitted

__all__ = ["LogisticRegression"]


@Substitution(**CLASSIFIER_DOCS)
class LogisticRegression(BasePrivateLinearClassifier):
    """Logistic regression with differential privacy (objective or output perturbation).

    Minimises scikit-learn's L2-regularised logistic loss with a random linear term
    added to the objective (objective perturbation) or with noise added to the minimiser
    (output perturbation). Binary, or one-vs-rest for more classes. Solved by Newton's
    method to a certified gradient tolerance.

    Parameters
    ----------
    {parameters}

    Attributes
    ----------
    {fitted}

    {privacy_spent_}

    See Also
    --------
    dpsk.svm.LinearSVC : the same framework with the Huberized hinge loss.
    sklearn.linear_model.LogisticRegression : the non-private estimator.

    Notes
    -----
    {privacy}

    Differences from scikit-learn: the intercept is regularised (as with its liblinear
    solver and ``intercept_scaling``); multi-class is one-vs-rest; ``sample_weight`` is
    clipped to [0, 1] (a weight above 1 counts as 1); the default ``C`` is the DP
    rule above. With a large ε and an explicit ``C`` the fit reproduces
    ``sklearn.linear_model.LogisticRegression(solver="liblinear", C=C,
    intercept_scaling=intercept_scaling)`` on data within ``data_norm``.

    References
    ----------
    K. Chaudhuri, C. Monteleoni and A. D. Sarwate, "Differentially private empirical
    risk minimization", JMLR 12, 2011.

    D. Kifer, A. Smith and A. Thakurta, "Private convex empirical risk minimization and
    high-dimensional regression", COLT 2012.

    R. Iyengar, J. P. Near, D. Song, O. Thakkar, A. Thakurta and L. Wang, "Towards
    practical differentially private convex optimization", IEEE S&P 2019.

    Examples
    --------
    >>> from dpsk.datasets import load_adult
    >>> from dpsk.linear_model import LogisticRegression
    >>> adult = load_adult()
    >>> clf = LogisticRegression(epsilon=1.0, data_norm=adult.data_norm, classes=[0, 1])
    >>> clf = clf.fit(adult.data, adult.target)
    >>> [round(event.epsilon, 4) for event in clf.privacy_spent_.flatten()]
    [0.99, 0.01]
    """

    def _make_loss(self):
        return LogisticLoss()

    def predict_proba(self, X):
        """Probability of each class (one-vs-rest scores normalised when multi-class).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        if is_dask(X):  # lazily, chunk by chunk
            check_is_fitted(self)
            return dask_apply(self, "predict_proba", X, n_outputs=self.classes_.size)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = expit(scores)
            return np.column_stack([1.0 - positive, positive])
        proba = expit(scores)
        return proba / proba.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))
