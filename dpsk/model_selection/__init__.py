# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private model selection: hyper-parameter search and cross-validation on private data.

Searching on private data is itself a mechanism: every fit, the choice of the best
candidate and the refit are charged, the total is checked against the budget before the
data is read, and the selection is private (exponential mechanism, or the best of a
random number of noisy trials), never the raw argmax.

* :class:`GridSearchCV` — every candidate of a grid; disjoint parts (default) or k-fold.
* :class:`RandomizedSearchCV` — random candidates; random stopping (default) costs about
  twice one trial whatever the number of trials.
* :func:`cross_val_score` — noisy cross-validated accuracy of one estimator.
* :func:`privacy_utility_curve` — test score against ε over repeated fits, for choosing
  ε and models on public or benchmark data (plot it with
  :func:`dpsk.utils.plotting.plot_privacy_utility`).

scikit-learn's own ``GridSearchCV`` and ``cross_val_score`` also record every fit of a
dpsk estimator on its accountant, but their selection (an argmax) and their scores are
not private: use these instead on private data.
"""

from dpsk.model_selection._curve import privacy_utility_curve
from dpsk.model_selection._random_search import RandomizedSearchCV
from dpsk.model_selection._search import GridSearchCV
from dpsk.model_selection._validation import cross_val_score

__all__ = ["GridSearchCV", "RandomizedSearchCV", "cross_val_score", "privacy_utility_curve"]
