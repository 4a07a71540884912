# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Test helpers for private model selection (importable by worker processes).

* :class:`ToyShiftedMeanClassifier` — :class:`~dpsk.utils._testing.ToyDPMeanClassifier`
  with a hyper-parameter that changes its predictions but not its privacy cost (``shift``
  moves the decision boundary after the fit), so a search has something to choose with
  candidates of equal cost.
* :class:`BrokenGridSearchCV` — :class:`~dpsk.model_selection.GridSearchCV` with one
  deliberate selection bug, to show that the privacy audit of the search can fail.
* :func:`project_best_param` — an audit projection onto the selected value of a parameter.
"""

import numpy as np

from dpsk.accounting import ComposedEvent
from dpsk.mechanisms import ExponentialMechanism
from dpsk.model_selection import GridSearchCV
from dpsk.utils._sklearn_compat import check_is_fitted, validate_data
from dpsk.utils._testing import ToyDPMeanClassifier

__all__ = ["BrokenGridSearchCV", "ToyShiftedMeanClassifier", "project_best_param"]


class ToyShiftedMeanClassifier(ToyDPMeanClassifier):
    """Nearest noisy class mean, after shifting the inputs by ``shift`` (test helper).

    Parameters
    ----------
    shift : float, default=0.0
        Subtracted from every feature before the nearest-mean rule: post-processing of
        the private means, so it costs nothing.
    **params
        Those of :class:`~dpsk.utils._testing.ToyDPMeanClassifier`.
    """

    _parameter_constraints = {**ToyDPMeanClassifier._parameter_constraints, "shift": [float, int]}

    def __init__(self, *, shift=0.0, epsilon=1.0, bounds=None, classes=None, accountant=None, random_state=None):
        self.shift = shift
        super().__init__(
            epsilon=epsilon, bounds=bounds, classes=classes, accountant=accountant, random_state=random_state
        )

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        distances = (((X - self.shift)[:, None, :] - self.means_[None, :, :]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(distances, axis=1)]


class BrokenGridSearchCV(GridSearchCV):
    """:class:`~dpsk.model_selection.GridSearchCV` with a deliberate selection bug (test helper).

    Parameters
    ----------
    bug : str
        One of :attr:`BUGS` (the keys); the values say what goes wrong.
    (the others)
        Those of :class:`~dpsk.model_selection.GridSearchCV`.
    """

    BUGS = {
        "raw_argmax": "selects the best validation score exactly (the first on ties)",
        "epsilon_x2": "runs the exponential mechanism at twice the declared epsilon",
        "uncharged_selection": "leaves the selection out of the declared cost",
    }

    _parameter_constraints = {**GridSearchCV._parameter_constraints, "bug": [str]}

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        bug="raw_argmax",
        scoring="accuracy",
        cv="disjoint",
        epsilon=1.0,
        refit=True,
        n_jobs=None,
        verbose=0,
        pre_dispatch="2*n_jobs",
        random_state=None,
        accountant=None,
    ):
        self.bug = bug
        super().__init__(
            estimator,
            param_grid,
            scoring=scoring,
            cv=cv,
            epsilon=epsilon,
            refit=refit,
            n_jobs=n_jobs,
            verbose=verbose,
            pre_dispatch=pre_dispatch,
            random_state=random_state,
            accountant=accountant,
        )

    def _fixed_plan(self, candidates, rng):
        plan = super()._fixed_plan(candidates, rng)
        if self.bug == "uncharged_selection":
            plan.total = (
                plan.stages[0][1] if self.refit is not True else ComposedEvent((plan.stages[0][1], plan.stages[-1][1]))
            )
        return plan

    def _select(self, selection, scores):
        if self.bug == "raw_argmax":
            return int(np.argmax(scores))
        if self.bug == "epsilon_x2":
            selection = ExponentialMechanism(
                epsilon=2 * selection.epsilon, sensitivity=selection.sensitivity, random_state=selection.random_state
            )
        return super()._select(selection, scores)


class _BestParamProjection:
    def __init__(self, name):
        self.name = name

    def __call__(self, fitted):
        return float(fitted.best_params_[self.name])


def project_best_param(name):
    """Audit projection (picklable): the selected value of the numeric parameter ``name``."""
    return _BestParamProjection(name)
