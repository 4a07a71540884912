# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random parts per privacy unit, and validation scores of sensitivity 1."""

import numpy as np
import pytest

from dpsk.model_selection._splits import (
    check_training_parts,
    fit_params_with_groups,
    privacy_units,
    random_parts,
    unit_score,
)
from dpsk.utils._testing import ALPHA, chisquare_pvalue
from dpsk.utils._testing.selection import ToyShiftedMeanClassifier


def test_units_are_assigned_whole_and_uniformly():
    groups = np.repeat(np.arange(5000), 3)
    units, n_units = privacy_units(groups.size, groups)
    assert n_units == 5000
    parts = random_parts(np.random.default_rng(0), 4, n_units, units)
    assert all(len(set(parts[groups == g])) == 1 for g in range(0, 5000, 97))
    per_unit = parts[::3]
    assert chisquare_pvalue(per_unit, np.arange(4), np.full(4, 0.25)) > ALPHA
    assert chisquare_pvalue(per_unit, np.arange(4), [0.3, 0.25, 0.25, 0.2]) < ALPHA  # power


def test_adding_a_unit_moves_no_other_unit():
    """The coupling behind the privacy argument: other units keep their parts."""
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    without = random_parts(rng_a, 5, 100, None)
    with_one = random_parts(rng_b, 5, 101, None)
    # same generator, one more draw at the end: the first 100 units are where they were
    assert np.array_equal(without, with_one[:100])


def test_unit_score_has_sensitivity_one():
    y = np.array([0, 1, 1, 0, 1])
    pred = np.array([0, 1, 0, 0, 0])
    assert unit_score(pred, y, None) == 3.0
    units = np.array([0, 0, 1, 1, 1])  # user 0: 2/2 right, user 1: 1/3 right
    assert unit_score(pred, y, units) == pytest.approx(1.0 + 1.0 / 3.0)
    # removing a whole user changes the score by at most 1
    assert unit_score(pred[:2], y[:2], units[:2]) == pytest.approx(1.0)


def test_empty_training_parts_are_refused():
    check_training_parts([(np.arange(3), np.arange(0))], 3)
    with pytest.raises(ValueError, match="too few"):
        check_training_parts([(np.arange(3), np.arange(2)), (np.arange(0), np.arange(2))], 5)


def test_groups_reach_estimators_that_take_them():
    class UserLevel(ToyShiftedMeanClassifier):
        def fit(self, X, y, groups=None):
            return super().fit(X, y)

    groups = np.arange(4)
    assert "groups" not in fit_params_with_groups(ToyShiftedMeanClassifier(), groups, {})
    assert fit_params_with_groups(UserLevel(), groups, {})["groups"] is groups
    with pytest.raises(TypeError, match="sample_weight"):
        fit_params_with_groups(UserLevel(), groups, {"sample_weight": groups})
