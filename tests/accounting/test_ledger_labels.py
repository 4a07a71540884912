# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The readable ledger: labelled spends, to_frame(), per-model summaries, rounded display."""

import builtins
import math
import sqlite3
import sys

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV as SkGridSearchCV
from sklearn.model_selection import cross_val_score as sk_cross_val_score
from sklearn.pipeline import make_pipeline as sk_make_pipeline

from dpsk.accounting import BudgetAccountant, GaussianEvent, LaplaceEvent, SelfComposedEvent
from dpsk.accounting import _display as display_module
from dpsk.accounting._context import SpendLabel
from dpsk.exceptions import BudgetExceededError
from dpsk.model_selection import GridSearchCV, cross_val_score
from dpsk.pipeline import make_pipeline
from dpsk.stats import mean
from dpsk.utils._testing import ToyDPMeanClassifier
from dpsk.utils._testing.accounting import ToyDPCenterer


@pytest.fixture
def data(toy_data):
    return toy_data


def _centerer(epsilon=0.5):
    return ToyDPCenterer(epsilon=epsilon, bounds=(-1.0, 1.0), random_state=0)


def _classifier(epsilon=1.0):
    return ToyDPMeanClassifier(epsilon=epsilon, bounds=(-1.0, 1.0), classes=[0, 1], random_state=0)


def _labels(acc):
    with acc._ledger.transaction() as ledger:
        return [label for label, _ in ledger.entries]


def _column_pipeline():
    """make_pipeline(ColumnTransformer([("num", make_pipeline(centerer), [0, 1])]), classifier)."""
    columns = ColumnTransformer([("num", sk_make_pipeline(_centerer()), [0, 1])])
    return make_pipeline(columns, _classifier())


# ------------------------------------------------------------------ labels


def test_a_bare_fit_is_labelled_with_its_class_and_call(data):
    acc = BudgetAccountant(epsilon=5.0)
    _classifier().set_params(accountant=acc).fit(*data)
    acc.spend(0.25, 0)
    assert _labels(acc) == [SpendLabel("ToyDPMeanClassifier", None, "fit"), SpendLabel(None, None, "spend")]
    assert str(_labels(acc)[0]) == "ToyDPMeanClassifier: fit"


def test_steps_of_a_pipeline_and_a_column_transformer_carry_their_path(data):
    acc = BudgetAccountant(epsilon=5.0)
    with acc:
        _column_pipeline().fit(*data)
    assert _labels(acc) == [
        SpendLabel("ToyDPCenterer", "columntransformer__num__toydpcenterer", "fit"),
        SpendLabel("ToyDPMeanClassifier", "toydpmeanclassifier", "fit"),
    ]
    # The path is the one set_params takes.
    assert "columntransformer__num__toydpcenterer__epsilon" in _column_pipeline().get_params()


def test_labels_do_not_outlive_the_pipeline_fit(data):
    acc = BudgetAccountant(epsilon=5.0)
    pipe = make_pipeline(_centerer(), _classifier())
    with acc:
        pipe.fit(*data)
        pipe.named_steps["toydpmeanclassifier"].fit(*data)  # refitted on its own
    assert [label.step for label in _labels(acc)] == ["toydpcenterer", "toydpmeanclassifier", None]


def test_sklearn_grid_search_and_cross_val_score_of_a_dpsk_pipeline(data):
    acc = BudgetAccountant(epsilon=50.0)
    with acc:
        sk_cross_val_score(make_pipeline(_centerer(), _classifier()), *data, cv=3)
    assert len(acc) == 6
    assert [label.step for label in _labels(acc)] == ["toydpcenterer", "toydpmeanclassifier"] * 3
    acc = BudgetAccountant(epsilon=50.0)
    with acc:
        SkGridSearchCV(_column_pipeline(), {"toydpmeanclassifier__epsilon": [1.0, 2.0]}, cv=2).fit(*data)
    assert len(acc) == 2 * (2 * 2 + 1)
    assert {label.step for label in _labels(acc)} == {"columntransformer__num__toydpcenterer", "toydpmeanclassifier"}


def test_dpsk_searches_and_cross_val_score_label_their_one_spend(data):
    acc = BudgetAccountant(epsilon=50.0)
    cross_val_score(_classifier(), *data, cv=3, epsilon=1.0, accountant=acc, random_state=0)
    search = GridSearchCV(_classifier(), {"epsilon": [1.0, 2.0]}, cv=3, epsilon=1.0, accountant=acc, random_state=0)
    search.fit(*data)
    first, second = _labels(acc)
    assert first == SpendLabel("ToyDPMeanClassifier", None, "cross_val_score (3 folds)")
    assert second.estimator == "GridSearchCV" and second.call.startswith("fit: ")
    assert "2 candidates" in second.call


def test_statistics_are_labelled_with_their_function():
    acc = BudgetAccountant(epsilon=5.0)
    mean(np.zeros(10), epsilon=1.0, bounds=(0, 1), accountant=acc, random_state=0)
    assert _labels(acc) == [SpendLabel(None, None, "dpsk.stats.mean")]


# ------------------------------------------------------------------ to_frame


def test_to_frame_has_one_exact_row_per_spend(data):
    pd = pytest.importorskip("pandas")
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5)
    with acc:
        make_pipeline(_centerer(0.1), _classifier(0.2)).fit(*data)
    acc.spend(0.1 + 0.2, 1e-7)
    frame = acc.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["label", "estimator", "step", "call", "epsilon", "delta", "event", "time"]
    assert frame["step"].tolist() == ["toydpcenterer", "toydpmeanclassifier", None]
    assert frame["label"].tolist()[0] == "toydpcenterer (ToyDPCenterer): fit"
    assert frame["epsilon"].tolist() == [0.1, 0.2, 0.1 + 0.2]  # exact, not rounded for display
    assert frame["delta"].tolist() == [0.0, 0.0, 1e-7]
    assert frame["event"].tolist() == ["ComposedEvent", "ComposedEvent", "ApproxDPEvent"]
    assert str(frame["time"].dt.tz) == "UTC"


def test_to_frame_without_pandas_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "pandas", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"dpsk\[pandas\]"):
        BudgetAccountant().spend(1.0, 0).to_frame()


def test_gaussian_rows_report_epsilon_at_their_calibration_delta():
    pytest.importorskip("pandas")
    from dpsk.accounting import CalibratedEvent

    acc = BudgetAccountant(epsilon=10.0, delta=1e-5)
    acc.record(CalibratedEvent(GaussianEvent(2.0), 1e-6))
    row = acc.to_frame().iloc[0]
    assert row["delta"] == pytest.approx(1e-6) and 0 < row["epsilon"] < math.inf


# ------------------------------------------------------------------ persistence


def test_labels_survive_the_sqlite_ledger(data, tmp_path):
    path = tmp_path / "budget.sqlite"
    acc = BudgetAccountant(epsilon=5.0, path=path)
    with acc:
        make_pipeline(_centerer(), _classifier()).fit(*data)
    reopened = BudgetAccountant(path=path)
    assert [label.step for label in _labels(reopened)] == ["toydpcenterer", "toydpmeanclassifier"]
    assert "toydpcenterer (ToyDPCenterer): 1 spend" in reopened.summary()


def test_a_ledger_file_without_labels_still_opens(tmp_path):
    # The layout of ledger files written before spends had labels.
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE dpsk_budget (id INTEGER PRIMARY KEY CHECK (id = 1), epsilon TEXT NOT NULL, "
        "delta TEXT NOT NULL, slack TEXT NOT NULL, format INTEGER NOT NULL)"
    )
    conn.execute(
        "CREATE TABLE dpsk_spends (id INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL, "
        "recorded_at REAL NOT NULL)"
    )
    conn.execute("INSERT INTO dpsk_budget VALUES (1, '2.0', '1.0', '0.0', 1)")
    conn.execute(
        "INSERT INTO dpsk_spends (event, recorded_at) VALUES (?, 0.0)",
        ('{"type":"PureDPEvent","epsilon":0.5}',),
    )
    conn.commit()
    conn.close()
    acc = BudgetAccountant(path=path)
    assert len(acc) == 1 and acc.total().epsilon == 0.5
    assert _labels(acc) == [SpendLabel(call="(not recorded)")]
    acc.spend(0.25, 0)  # new spends are labelled in the migrated file
    assert [label.call for label in _labels(BudgetAccountant(path=path))] == ["(not recorded)", "spend"]
    # ... and the columns an older dpsk writes still work.
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO dpsk_spends (event, recorded_at) VALUES (?, 0.0)", ('{"type":"PureDPEvent","epsilon":0.125}',)
    )
    conn.commit()
    conn.close()
    assert BudgetAccountant(path=path).total().epsilon == 0.875


# ------------------------------------------------------------------ summary and HTML


def test_summary_breaks_the_spends_down_per_model(data):
    acc = BudgetAccountant(epsilon=5.0)
    with acc:
        _column_pipeline().fit(*data)
        _classifier().fit(*data)
    lines = acc.summary().splitlines()
    start = lines.index(f"  {display_module._BREAKDOWN}:")
    assert lines[start + 1 :] == [
        "    columntransformer__num__toydpcenterer (ToyDPCenterer): 1 spend, epsilon 0.5",
        "    toydpmeanclassifier (ToyDPMeanClassifier): 1 spend, epsilon 1",
        "    ToyDPMeanClassifier: 1 spend, epsilon 1",
    ]
    html = acc._repr_html_()
    assert "columntransformer__num__toydpcenterer (ToyDPCenterer): 1 spend, epsilon 0.5" in html


def test_display_rounds_while_the_ledger_stays_exact():
    acc = BudgetAccountant(epsilon=1.0, delta=0.0)
    acc.spend(0.1, 0).spend(0.2, 0)
    assert acc.total().epsilon == 0.1 + 0.2 != 0.3  # exact
    text = acc.summary()
    assert "spent 0.3 of 1 (30%), remaining 0.7" in text
    assert "0.30000000000000004" not in text and "0.7000000000000001" not in text
    assert "direct spends: 2 spends, epsilon 0.3" in text


@pytest.mark.parametrize(
    "value, rounding, text",
    [
        (0.1 + 0.2, "up", "0.3"),
        (0.1 + 0.2, "down", "0.3"),
        (1 / 3, "up", "0.3334"),
        (1 / 3, "down", "0.3333"),
        (2 / 3, "nearest", "0.6667"),
        (123456.0, "up", "1.235e+05"),
        (1e-5, "up", "1e-05"),
        (0.0, "down", "0"),
        (math.inf, "up", "inf"),
    ],
)
def test_rounded_figures(value, rounding, text):
    assert display_module._number(value, rounding) == text


def test_budget_errors_say_what_was_asked_what_remains_and_who(data):
    acc = BudgetAccountant(epsilon=1.0, delta=0.0)
    acc.spend(0.7, 0)
    with pytest.raises(BudgetExceededError) as info:
        with acc:
            make_pipeline(_classifier(0.1 + 0.2 + 0.2)).fit(*data)
    message = str(info.value)
    assert "Event(" not in message and "0.30000000000000004" not in message
    assert "'toydpmeanclassifier'" in message and "epsilon=0.5" in message
    with pytest.raises(BudgetExceededError) as info:
        _classifier(0.1 + 0.2 + 0.2).set_params(accountant=acc).fit(*data)
    message = str(info.value)
    assert message.startswith("Spend by ToyDPMeanClassifier (fit) not permitted: it asks for epsilon=0.5, delta=0")
    assert "remaining: epsilon=0.3, delta=0" in message and "Event(" not in message
    assert info.value.requested.epsilon == 0.1 + 0.2 + 0.2  # exact figures on the error
    assert len(acc) == 1


# ------------------------------------------------------------------ δ budget, pure-ε spends


def test_pure_spends_with_a_delta_budget_add_up_and_say_why_delta_is_used(monkeypatch):
    monkeypatch.setattr("dpsk.accounting._pld.available", lambda: False)
    acc = BudgetAccountant(epsilon=30.0, delta=1e-5)
    for _ in range(400):
        acc.record(LaplaceEvent(20.0))  # ε = 0.05 each: Σε = 20, advanced composition is tighter
    total, left = acc.total(), acc.remaining()
    assert total.delta == 1e-5 and total.epsilon < 20  # converted: the δ is used
    lines = acc.summary().splitlines()
    eps_spent = float(lines[1].split()[2])
    eps_left = float(lines[1].split()[-1])
    assert eps_spent + eps_left == pytest.approx(30.0, abs=2e-3)  # visibly add up
    assert "of 1e-05 (100%), remaining 0" in acc.summary()
    why = display_module._PURE_CONVERSION_NOTE.format(
        plain=display_module._number(20.0, "up"), spent=display_module._number(total.epsilon, "up")
    )
    assert f"({why})" in acc.summary()
    assert "add up to 20" in why
    # A single further pure spend can take less than the difference; the summary says how much.
    if 30.0 - total.epsilon - left.epsilon > 1e-6:
        assert display_module._NEXT_SPEND_NOTE.format(next=display_module._number(left.epsilon, "down")) in (
            acc.summary()
        )
    assert why in acc._repr_html_().replace("&#x27;", "'")


def test_pure_spends_without_conversion_add_up_and_show_no_note():
    acc = BudgetAccountant(epsilon=3.0, delta=1e-5)
    for _ in range(3):
        acc.spend(0.1, 0)
    text = acc.summary()
    assert "spent 0.3 of 3 (10%), remaining 2.7" in text
    assert "spent 0 of 1e-05 (0%), remaining 1e-05" in text
    assert "used by the composition" not in text


def test_gaussian_ledgers_keep_the_conversion_note():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5)
    acc.record(SelfComposedEvent(GaussianEvent(5.0), 100))
    assert display_module._CONVERSION_NOTE in acc.summary()
