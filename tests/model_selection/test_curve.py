# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""privacy_utility_curve: every fit charged up front, independent noise, scores per ε."""

import doctest
import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import dpsk.model_selection._curve as curve_module
from dpsk.accounting import BudgetAccountant, get_epsilon, record_releases
from dpsk.exceptions import BudgetExceededError
from dpsk.model_selection import privacy_utility_curve
from dpsk.naive_bayes import GaussianNB
from dpsk.utils._testing.accounting import ToyDPCenterer
from dpsk.utils._testing.selection import ToyShiftedMeanClassifier


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(1200, 2))
    y = (X[:, 0] > 0).astype(int)
    return X[:800], y[:800], X[800:], y[800:]


def toy(**params):
    return ToyShiftedMeanClassifier(bounds=(-1.0, 1.0), classes=[0, 1], **params)


def test_docstring_examples():
    assert doctest.testmod(curve_module, optionflags=doctest.ELLIPSIS).failed == 0


def test_every_fit_is_charged_once_up_front(data):
    acc = BudgetAccountant(epsilon=10.0, delta=0.0)
    with record_releases() as drawn:
        curve = privacy_utility_curve(toy(), [0.1, 1.0], *data, n_seeds=3, accountant=acc, random_state=0)
    # the toy's fit costs exactly its epsilon: 3 x 0.1 + 3 x 1.0
    assert get_epsilon(curve.privacy_spent, 0.0) == pytest.approx(3.3)
    assert acc.spent_budget == [curve.privacy_spent]
    assert sorted(map(repr, drawn)) == sorted(map(repr, curve.privacy_spent.flatten()))


def test_the_non_private_ceiling_is_a_point_of_the_curve(data):
    """Check epsilon=inf on a curve: exact fits (no spread over seeds), an infinite total cost."""
    acc = BudgetAccountant()
    curve = privacy_utility_curve(
        GaussianNB(bounds=(-1.0, 1.0), classes=[0, 1]),
        [0.01, math.inf],  # 0.01: far enough below the ceiling that no seed's luck reaches it
        *data,
        n_seeds=3,
        accountant=acc,
        random_state=0,
    )
    np.testing.assert_array_equal(curve.scores[-1], curve.scores[-1, 0])  # the same exact fit for every seed
    assert curve.mean[-1] >= curve.mean[0]
    assert math.isinf(acc.total().epsilon)
    with pytest.raises(BudgetExceededError):
        privacy_utility_curve(toy(), [1.0, math.inf], *data, n_seeds=1, accountant=BudgetAccountant(epsilon=100.0))


def test_budget_is_checked_before_the_data_is_read(data):
    acc = BudgetAccountant(epsilon=3.0)
    unreadable = object()  # any use of it as data raises something else than BudgetExceededError
    with pytest.raises(BudgetExceededError):
        privacy_utility_curve(toy(), [0.1, 1.0], *[unreadable] * 4, n_seeds=3, accountant=acc)
    assert len(acc) == 0


def test_accountant_from_the_estimator_or_the_context(data):
    acc = BudgetAccountant()
    privacy_utility_curve(toy(accountant=acc), [1.0], *data, n_seeds=2, random_state=0)
    assert len(acc) == 1
    other = BudgetAccountant()
    with other:
        privacy_utility_curve(toy(), [1.0], *data, n_seeds=2, random_state=0)
    assert len(other) == 1 and len(acc) == 1
    factory = {0.5: toy(accountant=acc), 1.0: toy(accountant=other)}
    with pytest.raises(ValueError, match="different accountants"):
        privacy_utility_curve(lambda eps: factory[eps], [0.5, 1.0], *data)


def test_scores_mean_and_spread(data):
    curve = privacy_utility_curve(toy(), [0.003, 10.0], *data, n_seeds=8, random_state=0)
    assert curve.scores.shape == (2, 8)
    np.testing.assert_allclose(curve.mean, curve.scores.mean(axis=1))
    np.testing.assert_allclose(curve.std, curve.scores.std(axis=1, ddof=1))
    assert curve.mean[1] > 0.9  # nearly noiseless: the toy separates the classes
    assert curve.mean[0] < curve.mean[1] - 0.1  # very noisy at epsilon = 0.003
    assert len(set(curve.scores[0])) > 1  # every fit draws its own noise
    assert curve.label == "ToyShiftedMeanClassifier" and curve.score_name == "accuracy"
    assert curve.baseline is None


def test_reproducible_and_the_same_with_process_workers(data):
    args = (toy(), [0.05, 0.5], *data)
    first = privacy_utility_curve(*args, n_seeds=2, random_state=3)
    again = privacy_utility_curve(*args, n_seeds=2, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(first.scores, again.scores)


def test_factory_pipeline_param_name_and_baseline(data):
    pipe = make_pipeline(ToyDPCenterer(bounds=(-1.0, 1.0)), toy())
    by_name = privacy_utility_curve(
        pipe,
        [1.0],
        *data,
        param_name="toyshiftedmeanclassifier__epsilon",
        n_seeds=2,
        baseline=LogisticRegression(),
        random_state=0,
    )
    assert by_name.label == "ToyShiftedMeanClassifier"
    assert 0.9 < by_name.baseline <= 1.0

    def split(eps):  # share epsilon between the two steps
        return make_pipeline(ToyDPCenterer(epsilon=eps / 2, bounds=(-1.0, 1.0)), toy(epsilon=eps / 2))

    shared = privacy_utility_curve(split, [1.0, 2.0], *data, n_seeds=2, label="shared", random_state=0)
    assert shared.label == "shared"
    assert get_epsilon(shared.privacy_spent, 0.0) == pytest.approx(2 * (1.0 + 2.0))


def test_verbose(data, capsys):
    privacy_utility_curve(toy(), [0.5, 1.0], *data, n_seeds=2, verbose=2, random_state=0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "privacy_utility_curve: 2 fits at each of 2 budgets, totalling 4 fits"
    assert "epsilon=3 " in next(line for line in lines if line.strip().startswith("total"))
    assert lines[-4:] == [
        "[epsilon 1/2; seed 1/2] END epsilon=0.5",
        "[epsilon 1/2; seed 2/2] END epsilon=0.5",
        "[epsilon 2/2; seed 1/2] END epsilon=1",
        "[epsilon 2/2; seed 2/2] END epsilon=1",
    ]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(epsilons=[]), ValueError, "non-empty"),
        (dict(epsilons=[1.0, 0.0]), ValueError, "> 0"),
        (dict(epsilons=[np.nan]), ValueError, "> 0"),
        (dict(n_seeds=0), ValueError, "n_seeds"),
        (dict(estimator=LogisticRegression()), ValueError, "Invalid parameter .epsilon."),
        (dict(estimator=lambda eps: LogisticRegression(C=eps)), ValueError, "no differentially private step"),
        (dict(estimator=lambda eps: "not an estimator"), TypeError, "not an estimator"),
    ],
)
def test_invalid_arguments(data, kwargs, error, match):
    args = {"estimator": toy(), "epsilons": [1.0], **kwargs}
    with pytest.raises(error, match=match):
        privacy_utility_curve(args.pop("estimator"), args.pop("epsilons"), *data, **args)
