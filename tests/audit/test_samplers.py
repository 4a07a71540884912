# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Samplers, neighbours and projections for estimator audits."""

import contextvars
from functools import partial

import numpy as np
import pytest
from sklearn.base import clone

from dpsk.accounting import BudgetAccountant
from dpsk.audit import (
    canary_neighbours,
    canary_row,
    declared_cost,
    estimator_sampler,
    mechanism_sampler,
    project_attribute,
    project_output,
    worst_case_neighbours,
)
from dpsk.utils._testing import ToyDPMeanClassifier, ToyLaplaceMechanism

TOY = ToyDPMeanClassifier(epsilon=2.0, bounds=(-1.0, 1.0), classes=[0, 1])


def test_estimator_sampler_is_deterministic_and_parallel_invariant():
    data = worst_case_neighbours(TOY)[1]
    sequential = estimator_sampler(TOY, project_attribute("means_", (1, 0)), batch_size=7)
    parallel = estimator_sampler(TOY, project_attribute("means_", (1, 0)), n_jobs=2, batch_size=7)
    first = sequential(data, 30, np.random.default_rng(5))
    assert first.shape == (30, 1)
    np.testing.assert_array_equal(first, parallel(data, 30, np.random.default_rng(5)))
    assert np.unique(first).size == 30  # fresh noise per fit


def test_estimator_sampler_charges_no_accountant():
    """Check that neither the estimator's accountant nor an active one is charged by an audit."""
    own, active = BudgetAccountant(), BudgetAccountant()
    sampler = estimator_sampler(clone(TOY).set_params(accountant=own), project_attribute("means_"))
    with active:
        sampler(worst_case_neighbours(TOY)[0], 5, np.random.default_rng(0))
    assert len(own) == 0 and len(active) == 0


def test_estimator_sampler_requires_random_state():
    from sklearn.linear_model import LinearRegression

    with pytest.raises(ValueError, match="random_state"):
        estimator_sampler(LinearRegression(), project_attribute("coef_"))


def test_declared_cost_and_data_dependent_cost():
    neighbours = worst_case_neighbours(TOY)
    assert declared_cost(TOY, neighbours) == TOY.fit(**neighbours[0]).privacy_spent_

    class SizeDependentCost(ToyDPMeanClassifier):
        def fit(self, X, y):
            super().fit(X, y)
            self.privacy_spent_ = type(self.privacy_spent_)(self.privacy_spent_.events[: len(X) % 2 + 1])
            return self

    with pytest.raises(ValueError, match="depends on the data"):
        declared_cost(SizeDependentCost(**TOY.get_params()), neighbours)


def test_mechanism_sampler_repeats_the_input():
    sampler = mechanism_sampler(partial(ToyLaplaceMechanism, epsilon=1e9))
    out = sampler(np.array([1.0, 2.0]), 4, np.random.default_rng(0))
    assert out.shape == (4, 2)
    np.testing.assert_allclose(out, [[1.0, 2.0]] * 4, atol=1e-6)


def test_canary_row_on_the_boundary():
    np.testing.assert_array_equal(canary_row(3, bounds=(-2.0, [1.0, 3.0, 2.0])), [-2.0, 3.0, 2.0])
    for norm in (1.0, 0.1, 3.0, 7.3):
        row = canary_row(5, data_norm=norm, direction=np.arange(1.0, 6.0))
        assert np.linalg.norm(row) <= norm
        assert np.linalg.norm(row) == pytest.approx(norm, rel=1e-12)
    with pytest.raises(ValueError, match="exactly one"):
        canary_row(2)
    with pytest.raises(ValueError, match="direction"):
        canary_row(2, data_norm=1.0, direction=[0.0, 0.0])


def test_canary_neighbours_item_and_user_level():
    X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    without, with_canary = canary_neighbours(X, y, canary_X=[1.0, 1.0], canary_y=1)
    assert with_canary["X"].shape == (5, 2) and with_canary["y"][-1] == 1
    assert without["X"] is not with_canary["X"]
    groups = np.array([0, 0, 1, 1])
    _, user = canary_neighbours(X, y, canary_X=np.ones((3, 2)), canary_y=1, groups=groups)
    assert user["X"].shape == (7, 2)
    assert set(user["groups"][-3:]) == {2}
    with pytest.raises(ValueError, match="new user"):
        canary_neighbours(X, y, canary_X=np.ones((1, 2)), canary_y=1, groups=groups, canary_group=1)
    with pytest.raises(ValueError, match="canary_y"):
        canary_neighbours(X, y, canary_X=np.ones(2))
    with pytest.raises(ValueError, match="features"):
        canary_neighbours(X, canary_X=np.ones(3))


def test_worst_case_neighbours_for_a_classifier():
    without, with_canary = worst_case_neighbours(TOY, n_samples=10, n_features=2)
    assert without["X"].shape == (10, 2) and with_canary["X"].shape == (11, 2)
    np.testing.assert_array_equal(without["X"], -1.0)
    np.testing.assert_array_equal(with_canary["X"][-1], [4.0, 4.0])  # overshoot: a correct fit clips it
    assert with_canary["y"][-1] == 1
    with pytest.raises(ValueError, match="classes"):
        worst_case_neighbours(ToyDPMeanClassifier(bounds=(-1, 1)))
    with pytest.raises(ValueError, match="bounds or data_norm"):
        worst_case_neighbours(ToyDPMeanClassifier(classes=[0, 1]))
    with pytest.raises(ValueError, match="overshoot"):
        worst_case_neighbours(TOY, overshoot=0.5)


def test_projections():
    fitted = ToyDPMeanClassifier(epsilon=1e6, bounds=(-1, 1), classes=[0, 1], random_state=0)
    fitted.fit(np.array([[-1.0, 0.5], [1.0, -0.5]]), [0, 1])
    np.testing.assert_allclose(project_attribute("means_", (1, 0))(fitted), [1.0], atol=1e-3)
    np.testing.assert_allclose(project_attribute("means_", (slice(None), 0), sort=True)(fitted), [-1.0, 1.0], atol=1e-3)
    assert project_output("predict", [[0.9, -0.4]])(fitted).tolist() == [1.0]


def test_fits_run_in_an_empty_context():
    """The sampler's fits see no context variables of the caller (no recorder, no accountant)."""
    marker = contextvars.ContextVar("marker", default=None)
    marker.set("caller")
    seen = []

    class Probe(ToyDPMeanClassifier):
        def fit(self, X, y):
            seen.append(marker.get())
            return super().fit(X, y)

    estimator_sampler(Probe(**TOY.get_params()), project_attribute("means_"))(
        worst_case_neighbours(TOY)[0], 2, np.random.default_rng(0)
    )
    assert seen == [None, None]


def test_mechanism_sampler_one_call_per_run_when_not_vectorised():
    class Counter:
        def __init__(self, random_state):
            self.rng = random_state

        def randomise(self, scores):
            return int(np.argmax(scores + self.rng.gumbel(size=len(scores))))

    sampler = mechanism_sampler(Counter, vectorised=False)
    out = sampler(np.array([0.0, 50.0, 0.0]), 7, np.random.default_rng(0))
    assert out.shape == (7,)
    np.testing.assert_array_equal(out, 1)
