# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""How an accountant shows itself: :meth:`BudgetAccountant.summary` and the notebook view.

Rendering only: the accountant gathers the figures (a :class:`Report`, the same figures
:meth:`~BudgetAccountant.total` and :meth:`~BudgetAccountant.remaining` give) and these
functions turn them into text or plain HTML (no JavaScript).
"""

import html
import math
from typing import NamedTuple

from dpsk.accounting._budget import TOLERANCE, Budget

__all__ = ["Report", "summary_html", "summary_text"]

#: What :meth:`BudgetAccountant.summary` says about the composition behind the total.
_COMPOSITION = {
    "none": "nothing spent yet",
    "single": "a single spend, reported by its own privacy profile",
    "basic": "basic composition (the epsilons add up, and so do explicit deltas)",
    "gaussian": "exact composition of Gaussian releases",
    "advanced": "advanced composition of pure-DP spends (Kairouz, Oh & Viswanath 2015)",
    "rdp": "Renyi DP of all spends, converted to (epsilon, delta)",
    "pld": "privacy loss distributions (dp-accounting)",
    "tightest": "the tightest bound of each kind of spend, added by basic composition",
}

_CONVERSION_NOTE = "taken by the conversion to epsilon; the remaining epsilon is for pure-DP spends"


class Report(NamedTuple):
    """The figures an accountant shows."""

    n_spends: int
    #: The budget's ceilings.
    ceiling: Budget
    #: As :meth:`BudgetAccountant.total` and ``remaining()`` report them.
    spent: Budget
    remaining: Budget
    #: Whether the total is the converted point (see the reporting semantics).
    converted: bool
    #: Key of :data:`_COMPOSITION`: a method that certifies the total.
    composition: str


def _rows(report):
    """(name, used, limit, left, fraction spent or None if unlimited, conversion note?) per ε, δ."""
    ceiling, spent, remaining = report.ceiling, report.spent, report.remaining
    rows = []
    # Once the ledger is converted to (ε, δ), its δ is used up by the conversion (see
    # the reporting semantics): say so rather than let a full δ bar look like a warning.
    converted_note = report.converted and ceiling.delta < 1.0
    for name, used, limit, left, unlimited in (
        ("epsilon", spent.epsilon, ceiling.epsilon, remaining.epsilon, ceiling.epsilon == math.inf),
        ("delta", spent.delta, ceiling.delta, remaining.delta, ceiling.delta >= 1.0),
    ):
        if unlimited:
            fraction = None
        elif limit > 0:
            fraction = min(used / limit, 1.0)
            if left <= limit * TOLERANCE:  # floating-point noise of the declared values
                left = 0.0
        else:
            fraction = 1.0
        rows.append((name, used, limit, left, fraction, converted_note and name == "delta"))
    return rows


def _spends(n_spends):
    return f"{n_spends} spend{'' if n_spends == 1 else 's'}"


def summary_text(title, report):
    """The text of :meth:`BudgetAccountant.summary` (``report`` None: a detached copy)."""
    if report is None:
        return f"{title}: a copy in another process; its ledger is not available here"
    lines = [f"{title}: {_spends(report.n_spends)}"]
    for name, used, limit, left, fraction, conversion in _rows(report):
        label = f"{name}:".ljust(8)
        if fraction is None:
            line = f"spent {_number(used)} (no {'limit' if name == 'epsilon' else 'ceiling'})"
        elif limit == 0:
            line = f"spent {_number(used)} of 0 (no {name} allowed)"
        else:
            line = f"spent {_number(used)} of {_number(limit)} ({_percent(fraction)}), remaining {_number(left)}"
        if conversion:
            line += f"\n           ({_CONVERSION_NOTE})"
        lines.append(f"  {label} {line}")
    lines.append(f"  composition: {_COMPOSITION[report.composition]}")
    return "\n".join(lines)


def summary_html(title, report):
    """The notebook view: a spent/remaining bar for ε and δ (``report`` None: a detached copy)."""
    title = html.escape(title)
    box = (
        '<div class="dpsk-accountant" style="font-family: sans-serif; font-size: 0.9em; '
        "line-height: 1.4; max-width: 40em; border: 1px solid #bbb; border-radius: 4px; "
        'padding: 0.4em 0.7em;">'
    )
    if report is None:
        return (
            f"{box}<div><code>{title}</code></div><div>A copy in another process: its ledger "
            "is not available here.</div></div>"
        )
    parts = [box, f"<div><code>{title}</code> &middot; {_spends(report.n_spends)}</div>"]
    parts.append('<table style="border-collapse: collapse; margin: 0.3em 0; font-size: inherit;">')
    for name, used, limit, left, fraction, conversion in _rows(report):
        symbol = "&epsilon;" if name == "epsilon" else "&delta;"
        if fraction is None:
            bar = ""
            text = f"spent {_number(used)} &middot; no {'limit' if name == 'epsilon' else 'ceiling'}"
        else:
            bar = _html_bar(fraction, f"{name}: {_percent(fraction)} of the budget spent", neutral=conversion)
            if limit == 0:
                text = f"spent {_number(used)} of 0 &middot; no {symbol} allowed"
            else:
                text = (
                    f"spent {_number(used)} of {_number(limit)} ({_percent(fraction)}) "
                    f"&middot; remaining {_number(left)}"
                )
            if conversion:
                text += f'<br><small style="white-space: normal;">{html.escape(_CONVERSION_NOTE)}</small>'
        parts.append(
            f'<tr><td style="padding: 0.1em 0.5em 0.1em 0; font-weight: bold;">{symbol}</td>'
            f'<td style="padding: 0.1em 0.5em 0.1em 0;">{bar}</td>'
            f'<td style="padding: 0.1em 0; white-space: nowrap;">{text}</td></tr>'
        )
    parts.append("</table>")
    parts.append(f"<div>Composition: {html.escape(_COMPOSITION[report.composition])}</div></div>")
    return "".join(parts)


def _number(value):
    """A budget figure for display: 4 significant digits, ``inf`` spelled out."""
    return "inf" if value == math.inf else f"{value:.4g}"


def _percent(fraction):
    """``fraction`` (in [0, 1]) as a percentage: 100% only when all is spent.

    All is spent within the accountant's tolerance (``TOLERANCE``): the floating-point
    noise of declared values, e.g. 0.2 + 0.792 + 0.008 is not exactly 1.
    """
    if fraction >= 1.0 - TOLERANCE:
        return "100%"
    percent = 100.0 * fraction
    if percent < 1.0:
        return f"{percent:.2g}%"
    return f"{min(round(percent), 99)}%"


def _html_bar(fraction, label, neutral=False):
    """A horizontal bar filled to ``fraction`` (in [0, 1]); its colour warns near the end."""
    if neutral:
        color = "#8c8c8c"
    else:
        color = "#4c72b0" if fraction < 0.8 else ("#dd8452" if fraction < 1.0 - TOLERANCE else "#c44e52")
    percent = 100.0 * fraction
    return (
        f'<div role="progressbar" aria-valuemin="0" aria-valuemax="100" aria-valuenow="{math.floor(percent)}" '
        f'title="{html.escape(label)}" style="width: 10em; height: 0.8em; background: #e4e4e4; '
        f'border-radius: 2px; overflow: hidden;"><div style="width: {percent:.2f}%; height: 100%; '
        f'background: {color};"></div></div>'
    )
