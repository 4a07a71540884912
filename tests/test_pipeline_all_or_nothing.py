# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk.pipeline.Pipeline is all-or-nothing: what public metadata can refuse is refused before any
spend, and a later failure leaves the pipeline unfitted and reports what was spent.

Each test shows the failure with scikit-learn's Pipeline first (an earlier step spends, then
a later one fails), then that dpsk's pipeline spends nothing.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn import pipeline as sk_pipeline
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.preprocessing import SplineTransformer
from sklearn.preprocessing import StandardScaler as SkStandardScaler
from sklearn.utils.validation import check_is_fitted

from dpsk.accounting import BudgetAccountant
from dpsk.pipeline import make_pipeline
from dpsk.utils._testing import ToyDPMeanClassifier
from dpsk.utils._testing.accounting import ToyDPCenterer


def _centerer(acc, epsilon=1.0):
    return ToyDPCenterer(epsilon=epsilon, bounds=(-1.0, 1.0), accountant=acc, random_state=0)


def _classifier(acc, epsilon=2.0):
    return ToyDPMeanClassifier(epsilon=epsilon, bounds=(-1.0, 1.0), classes=[0, 1], accountant=acc, random_state=0)


def _spends(make, steps, X, y, error=ValueError):
    """Fit ``make(*steps(acc))`` on (X, y), expecting ``error``; returns (spends, the error)."""
    acc = BudgetAccountant(epsilon=10.0)
    pipe = make(*steps(acc))
    with pytest.raises(error) as info:
        pipe.fit(X, y)
    return len(acc), info.value


@pytest.mark.parametrize(
    "case",
    ["label outside classes", "invalid parameter of a later step", "sparse output into a dense step"],
)
def test_refused_before_any_spend(toy_data, case):
    X, y = toy_data
    if case == "label outside classes":
        y = y.copy()
        y[:3] = 2

        def steps(acc):
            return _centerer(acc), _classifier(acc)

        error = ValueError
    elif case == "invalid parameter of a later step":

        def steps(acc):
            return _centerer(acc), SkLogisticRegression(C=-1.0)

        error = ValueError
    else:

        def steps(acc):
            return _centerer(acc), SplineTransformer(sparse_output=True), _classifier(acc)

        error = TypeError
    spent_by_sklearn, _ = _spends(sk_pipeline.make_pipeline, steps, X, y, error=(ValueError, TypeError))
    assert spent_by_sklearn == 1  # the failure the pre-flight prevents
    spent, raised = _spends(make_pipeline, steps, X, y, error=error)
    assert spent == 0
    if case == "sparse output into a dense step":
        assert "'toydpmeanclassifier'" in str(raised) and "'splinetransformer'" in str(raised)


def test_a_later_branch_of_a_column_transformer_is_validated_first():
    # A DataFrame whose text column a non-private scaler cannot take, after a DP branch.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.uniform(-1, 1, 40), "job": ["a", "b"] * 20})
    y = (X["age"] > 0).astype(int).to_numpy()

    def steps(acc):
        columns = ColumnTransformer([("num", _centerer(acc), ["age"]), ("cat", SkStandardScaler(), ["job"])])
        return columns, _classifier(acc)

    spent_by_sklearn, _ = _spends(sk_pipeline.make_pipeline, steps, X, y)
    assert spent_by_sklearn == 1
    spent, _ = _spends(make_pipeline, steps, X, y)
    assert spent == 0


def test_a_failure_after_spending_leaves_the_pipeline_unfitted_and_says_what_was_spent(toy_data):
    X, y = toy_data
    acc = BudgetAccountant(epsilon=10.0)
    pipe = make_pipeline(_centerer(acc, epsilon=0.5), SkLogisticRegression())
    steps_before = list(pipe.steps)
    with pytest.raises(ValueError, match="class") as info:
        pipe.fit(X, np.zeros(len(y), dtype=int))  # one class only: the data decides, after the spend
    assert len(acc) == 1
    notes = "\n".join(getattr(info.value, "__notes__", [])) or str(info.value)
    assert "failed after 1 DP step(s) had spent" in notes
    assert "toydpcenterer (ToyDPCenterer): epsilon=0.5, delta=0 on BudgetAccountant(epsilon=10.0)" in notes
    assert [label.step for label, _ in info.value.privacy_spent] == ["toydpcenterer"]
    with pytest.raises(NotFittedError):
        check_is_fitted(pipe)
    assert pipe.steps == steps_before
    assert not hasattr(pipe.named_steps["toydpcenterer"], "privacy_spent_")
    # ... and the pipeline can be fitted afterwards.
    pipe.fit(X, y)
    check_is_fitted(pipe)


def test_a_failure_before_any_spend_says_nothing_was_spent(toy_data):
    X, y = toy_data
    pipe = make_pipeline(SkStandardScaler(), SkLogisticRegression())
    with pytest.raises(ValueError) as info:
        pipe.fit(X, np.zeros(len(y), dtype=int))
    assert "nothing was spent" in "\n".join(getattr(info.value, "__notes__", [])) + str(info.value)


def test_the_preflight_reads_but_releases_nothing(toy_data):
    from dpsk.accounting import record_releases

    drawn = {}
    for make in (sk_pipeline.make_pipeline, make_pipeline):
        acc = BudgetAccountant(epsilon=10.0)
        with record_releases() as drawn[make]:
            make(_centerer(acc), _classifier(acc)).fit(*toy_data)
        assert len(acc) == 2
    # The probes of dpsk's pipeline release nothing: the same releases as scikit-learn's.
    assert drawn[make_pipeline] == drawn[sk_pipeline.make_pipeline] and len(drawn[make_pipeline]) == 4
