# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""BudgetAccountant.summary() and the notebook (HTML) view."""

import doctest
import math
import re
from html.parser import HTMLParser

import pytest

from dpsk.accounting import (
    BudgetAccountant,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    SelfComposedEvent,
    get_epsilon,
)
from dpsk.accounting import _accountant as accountant_module
from dpsk.accounting import _display as display_module
from dpsk.accounting._accountant import _reattach

# Ledgers, and the composition summary() must name for them (a method that certifies the
# reported total: checked against get_epsilon below).
LEDGERS = {
    "single": (dict(epsilon=2.0), [LaplaceEvent(1.0)]),
    "basic": (dict(epsilon=5.0, delta=0.0), [LaplaceEvent(1.0), LaplaceEvent(2.0)]),
    "advanced": (dict(delta=1e-5), [LaplaceEvent(10.0)] * 200),
    "gaussian": (dict(epsilon=10.0, delta=1e-5), [SelfComposedEvent(GaussianEvent(5.0), 100)]),
    "rdp": (dict(epsilon=20.0, delta=1e-5), [SelfComposedEvent(GaussianEvent(5.0), 50), *[LaplaceEvent(20.0)] * 100]),
}


def filled(budget, events):
    acc = BudgetAccountant(**budget)
    for event in events:
        acc.record(event)
    return acc


class _Checker(HTMLParser):
    """Collects tags and checks that they are balanced (void elements aside)."""

    VOID = {"br", "hr", "img", "meta", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack.pop() == tag, f"unbalanced </{tag}>"

    def handle_data(self, data):
        self.text.append(data)


def parse(html):
    checker = _Checker()
    checker.feed(html)
    checker.close()
    assert checker.stack == [], f"unclosed tags {checker.stack}"
    return checker


def test_summary_docstring_example():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(accountant_module.BudgetAccountant.summary, "summary", globs={}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


@pytest.mark.parametrize("method", list(LEDGERS))
def test_summary_names_a_composition_that_certifies_the_total(method, monkeypatch):
    # Without dp-accounting's PLD, which would certify a tighter total than "advanced" and "rdp".
    monkeypatch.setattr("dpsk.accounting._pld.available", lambda: False)
    budget, events = LEDGERS[method]
    acc = filled(budget, events)
    total = acc.total()
    text = acc.summary()
    assert f"composition: {display_module._COMPOSITION[method]}" in text
    assert f"{len(events)} spend" in text
    if method not in ("single", "basic"):
        ledger = ComposedEvent(tuple(events))
        assert get_epsilon(ledger, total.delta, method=method) <= total.epsilon * (1 + 1e-12)
        # ... and the summary would be wrong with a method that does not certify it
        assert get_epsilon(ledger, total.delta, method="basic") > total.epsilon


def test_summary_names_pld_when_it_certifies_the_total():
    pytest.importorskip("dp_accounting")
    budget, events = LEDGERS["advanced"]
    acc = filled(budget, events)
    total = acc.total()
    assert f"composition: {display_module._COMPOSITION['pld']}" in acc.summary()
    ledger = ComposedEvent(tuple(events))
    assert get_epsilon(ledger, total.delta, method="pld") <= total.epsilon * (1 + 1e-12)
    assert get_epsilon(ledger, total.delta, method="advanced") > total.epsilon


def test_summary_figures_are_those_of_total_and_remaining():
    acc = filled(dict(epsilon=4.0, delta=1e-5), [LaplaceEvent(1.0), LaplaceEvent(2.0)])
    total, left = acc.total(), acc.remaining()
    lines = acc.summary().splitlines()
    assert lines[0] == "BudgetAccountant(epsilon=4.0, delta=1e-05): 2 spends"
    assert lines[1].split() == [
        "epsilon:",
        "spent",
        f"{total.epsilon:.4g}",
        "of",
        "4",
        "(38%),",
        "remaining",
        f"{left.epsilon:.4g}",
    ]
    assert "delta:" in lines[2] and "of 1e-05" in lines[2]


def test_summary_of_empty_unlimited_and_exhausted_budgets():
    assert BudgetAccountant().summary().splitlines() == [
        "BudgetAccountant(): 0 spends",
        "  epsilon: spent 0 (no limit)",
        "  delta:   spent 0 (no ceiling)",
        "  composition: nothing spent yet",
    ]
    acc = BudgetAccountant(epsilon=1.0, delta=0.0)
    for share in (0.2, 0.792, 0.008):  # not exactly 1 in floating point
        acc.spend(share, 0)
    text = acc.summary()
    assert "(100%), remaining 0" in text
    assert "spent 0 of 0 (no delta allowed)" in text


def test_summary_says_when_delta_is_taken_by_the_conversion():
    acc = filled(dict(epsilon=10.0, delta=1e-5), [SelfComposedEvent(GaussianEvent(5.0), 100)])
    assert display_module._CONVERSION_NOTE in acc.summary()
    acc = filled(dict(epsilon=10.0, delta=1e-5), [LaplaceEvent(1.0)])
    assert display_module._CONVERSION_NOTE not in acc.summary()


def test_detached_copy_is_displayed_without_raising():
    detached = _reattach("no-such-accountant", (1.0, 1e-5, 0.0))
    assert "not available" in detached.summary()
    checker = parse(detached._repr_html_())
    assert "not available" in "".join(checker.text)


def test_html_bars_match_the_spent_fraction():
    acc = filled(dict(epsilon=4.0, delta=0.0), [LaplaceEvent(1.0)])
    checker = parse(acc._repr_html_())
    bars = [attrs for tag, attrs in checker.tags if attrs.get("role") == "progressbar"]
    assert len(bars) == 2  # epsilon, and delta (ceiling 0)
    assert bars[0]["aria-valuenow"] == "25"
    fills = [
        attrs["style"]
        for tag, attrs in checker.tags
        if "background: #" in attrs.get("style", "")
        and "width" in attrs.get("style", "")
        and "height: 100%" in attrs.get("style", "")
    ]
    assert re.search(r"width: 25\.00%", fills[0])
    text = "".join(checker.text)
    assert "spent 1 of 4 (25%)" in text and "remaining 3" in text
    assert "Composition: a single spend" in text


def test_html_with_an_infinite_budget_has_no_bar_and_no_script():
    acc = filled({}, [LaplaceEvent(1.0), LaplaceEvent(0.5)])
    html = acc._repr_html_()
    checker = parse(html)
    assert not [attrs for _, attrs in checker.tags if attrs.get("role") == "progressbar"]
    assert "spent 3 &middot; no limit" in html
    assert "inf" not in html  # no figure computed from the infinite budget
    # A Gaussian release without a delta to report at has epsilon = inf: shown as such.
    assert "spent inf" in filled({}, [GaussianEvent(2.0)])._repr_html_()
    lowered = html.lower()
    assert "<script" not in lowered and "javascript:" not in lowered and " on" not in re.sub(r'"[^"]*"', "", lowered)


def test_html_escapes_text(tmp_path):
    path = tmp_path / "<b>&budget'.sqlite"
    acc = BudgetAccountant(epsilon=2.0, delta=1e-6, path=path)
    acc.spend(0.5, 0)
    html = acc._repr_html_()
    assert "<b>" not in html
    assert "&lt;b&gt;&amp;budget" in html
    checker = parse(html)
    assert str(path) in "".join(checker.text)  # the parser unescapes it back


def test_repr_is_unchanged_and_cheap():
    acc = filled(dict(epsilon=2.0), [LaplaceEvent(1.0)])
    assert repr(acc) == "BudgetAccountant(epsilon=2.0)"
    assert repr(_reattach("gone", (1.0, 1.0, 0.0))) == "BudgetAccountant(epsilon=1.0, <detached>)"


@pytest.mark.parametrize(
    "fraction, text",
    [
        (0.0, "0%"),
        (0.004, "0.4%"),
        (0.333, "33%"),
        (0.4999999999, "50%"),
        (0.996, "99%"),
        (1.0 - 1e-15, "100%"),
        (1.0, "100%"),
    ],
)
def test_percentages(fraction, text):
    assert display_module._percent(fraction) == text


def test_numbers():
    assert display_module._number(math.inf) == "inf"
    assert display_module._number(19.98000000001) == "19.98"


def test_numbers_at_the_ends_of_the_float_range():
    # Found by hypothesis: a float power-of-ten scale overflowed for a subnormal δ.
    tiny = 2.225073858507203e-309
    assert display_module._number(tiny, "up") == "2.226e-309"
    assert display_module._number(tiny, "down") == "2.225e-309"
    assert display_module._number(1.7e308, "up") == "1.7e+308"
    assert display_module._number(1 / 3, "up") == "0.3334"
    assert display_module._number(1 / 3, "down") == "0.3333"
