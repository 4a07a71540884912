# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Black-box privacy audits of the private searches on neighbouring datasets.

The whole search is run thousands of times on two datasets that differ in one canary
row, and the selected candidate is tested against the cost the search declares
(``privacy_spent_``, as an (ε, 0) claim: the audit's privacy profiles do not cover the
exponential mechanism's event). The data makes the selection as visible as possible:

* class 0 at x = -1 and class 1 at x = +1 (the toy classifier's noisy means stay within
  about 0.01 of them), so both candidates — decision boundaries at 0 (``shift=0.0``) and
  0.25 (``shift=0.25``) — classify every row correctly: their validation counts tie;
* the canary, of class 1 at x = 0.1, is right for ``shift=0.0`` only, so with it that
  candidate's count is one higher, whatever the random folds (2 folds: every row is
  validated once).

A correct search picks ``shift=0.0`` with probability 1/2 without the canary and
e^ε/(1 + e^ε) with it (0.92 at ε = 2.5). Power: the raw argmax (first on ties) flips
deterministically, and a search that leaves its selection out of the declared cost
claims only its fits (ε = 0.5), far less than the selection's visible ln((1 + e^2.5)/2).
"""

import numpy as np
import pytest

from dpsk.accounting import get_epsilon
from dpsk.audit import audit, canary_neighbours, declared_cost, estimator_sampler
from dpsk.model_selection import GridSearchCV, RandomizedSearchCV
from dpsk.utils._testing.selection import BrokenGridSearchCV, ToyShiftedMeanClassifier, project_best_param

N_PER_CLASS = 2000
CANDIDATES = {"shift": [0.25, 0.0]}  # the raw argmax takes the first on ties
# Runs per neighbour: with the selection at ε = 2.5, enough to reject both broken variants
# (their violations are far beyond the Clopper-Pearson tolerance at 350 test runs).
N_SAMPLES = 700


def neighbours():
    X = np.concatenate([np.full(N_PER_CLASS, -1.0), np.full(N_PER_CLASS, 1.0)])[:, None]
    y = np.concatenate([np.zeros(N_PER_CLASS, int), np.ones(N_PER_CLASS, int)])
    return canary_neighbours(X, y, canary_X=[0.1], canary_y=1)


def toy():
    return ToyShiftedMeanClassifier(epsilon=0.25, bounds=(-1.0, 1.0), classes=[0, 1])


def grid_search(bug=None):
    params = dict(cv=2, epsilon=2.5, refit=False)
    if bug is None:
        return GridSearchCV(toy(), CANDIDATES, **params)
    return BrokenGridSearchCV(toy(), CANDIDATES, bug=bug, **params)


def run_audit(search, n_samples, seed=0):
    pair = neighbours()
    claimed = get_epsilon(declared_cost(search, pair), 0.0)
    sampler = estimator_sampler(search, project_best_param("shift"), n_jobs=2, batch_size=250)
    return audit(sampler, pair, epsilon=claimed, n_samples=n_samples, random_state=seed), claimed


@pytest.mark.slow
def test_grid_search_privacy_audit():
    result, claimed = run_audit(grid_search(), N_SAMPLES)
    assert claimed == pytest.approx(2 * 0.25 + 2.5)  # 2 candidates x 1 training fold, + selection
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("bug", ["raw_argmax", "uncharged_selection"])
@pytest.mark.extended
def test_grid_search_audit_rejects_a_broken_selection(bug):
    result, _ = run_audit(grid_search(bug), N_SAMPLES)
    assert not result.passed, str(result)


@pytest.mark.slow
def test_random_stopping_privacy_audit():
    search = RandomizedSearchCV(toy(), CANDIDATES, n_iter=2, cv=2, epsilon=1.0, refit=False)
    result, claimed = run_audit(search, N_SAMPLES)
    assert 1.0 < claimed <= 2.0 * (1 + 1e-9)  # one trial is 1-DP (max of fit 0.25 and score 1)
    assert result.passed, str(result)
