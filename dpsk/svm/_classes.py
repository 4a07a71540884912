# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private linear support vector classification (Huberized hinge loss)."""

from dpsk.linear_model._classifier import CLASSIFIER_DOCS, BasePrivateLinearClassifier
from dpsk.linear_model._solver import HuberizedHinge
from dpsk.utils._docstring import Substitution

__all__ = ["LinearSVC"]

#: Width h of the quadratic zone of the Huberized hinge (CMS 2011): curvature c = 1/(2h) = 1.
HUBER_WIDTH = 0.5


@Substitution(**CLASSIFIER_DOCS)
class LinearSVC(BasePrivateLinearClassifier):
    """Linear support vector classification with differential privacy.

    Minimises the L2-regularised Huberized hinge loss (the hinge max(0, 1 − z) with its
    corner replaced by a parabola of width 2h, h = 0.5: CMS 2011) with objective or
    output perturbation. The hinge itself has no second derivative, which objective
    perturbation needs; the Huberized hinge has ℓ″ <= 1/(2h) = 1. Binary, or one-vs-rest
    for more classes.

    Parameters
    ----------
    {parameters}

    Attributes
    ----------
    {fitted}

    {privacy_spent_}

    See Also
    --------
    dpsk.linear_model.LogisticRegression : the same framework with the logistic loss.
    sklearn.svm.LinearSVC : the non-private estimator (hinge or squared hinge loss).

    Notes
    -----
    {privacy}

    The curvature constant of the loss enters the guarantee (c = 1/(2h) = 1, four times
    the logistic loss's 1/4): objective perturbation spends up to log(1 + c/Λ) of ε on
    it. No ``predict_proba`` (the model is not probabilistic).

    References
    ----------
    K. Chaudhuri, C. Monteleoni and A. D. Sarwate, "Differentially private empirical
    risk minimization", JMLR 12, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.svm import LinearSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> clf = LinearSVC(epsilon=1.0, data_norm=4.0, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    """

    def _make_loss(self):
        return HuberizedHinge(HUBER_WIDTH)
