# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""How an accountant shows itself: :meth:`BudgetAccountant.summary` and the notebook view.

Rendering only: the accountant gathers the figures (a :class:`Report`, the same figures
:meth:`~BudgetAccountant.total` and :meth:`~BudgetAccountant.remaining` give) and these
functions turn them into text or plain HTML (no JavaScript), with a breakdown per model.

Figures are rounded for reading (4 significant digits: ``0.1``, not
``0.10000000000000002``), spent figures up and remaining ones down; the ledger itself and
:meth:`~BudgetAccountant.total` stay exact.
"""

import html
import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from typing import NamedTuple

from dpsk.accounting._budget import TOLERANCE, Budget

__all__ = ["Report", "budget_text", "summary_html", "summary_text"]

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

#: Why δ is used when every spend is pure ε (the ledger was converted to save ε).
_PURE_CONVERSION_NOTE = (
    "used by the composition, not by any spend: the pure-epsilon spends add up to {plain}, "
    "certified as {spent} by spending this delta"
)

#: Spent and remaining ε add up to the ceiling; one spend may still take less (composition).
_NEXT_SPEND_NOTE = "one further pure-epsilon spend can take at most {next}: composition is not additive"


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
    #: ``[(model, n_spends, Budget), ...]``: each model's spends composed on their own.
    breakdown: list = []
    #: Σε of the pure-ε spends if every spend is pure ε, else None.
    pure_epsilon: float | None = None


def _rows(report):
    """(name, used, limit, left, fraction spent or None if unlimited, note or None) per ε, δ.

    Spent and remaining add up to the ceiling as displayed; where a further spend can
    take less than the difference (composition), the note says how much.
    """
    ceiling, spent, remaining = report.ceiling, report.spent, report.remaining
    rows = []
    # Once the ledger is converted to (ε, δ), its δ is used up by the conversion (see
    # the reporting semantics): say so rather than let a full δ bar look like a warning.
    converted_note = report.converted and ceiling.delta < 1.0
    for name, used, limit, left, unlimited in (
        ("epsilon", spent.epsilon, ceiling.epsilon, remaining.epsilon, ceiling.epsilon == math.inf),
        ("delta", spent.delta, ceiling.delta, remaining.delta, ceiling.delta >= 1.0),
    ):
        note = None
        if unlimited:
            fraction = None
        elif limit > 0:
            fraction = min(used / limit, 1.0)
            if name == "epsilon" and report.converted:
                # Shown so that spent + remaining = ceiling; a single spend can take `left`.
                by_difference = max(limit - used, 0.0)
                if by_difference - left > limit * 1e-9:
                    note = _NEXT_SPEND_NOTE.format(next=_number(left, "down"))
                left = by_difference
            if left <= limit * TOLERANCE:  # floating-point noise of the declared values
                left = 0.0
        else:
            fraction = 1.0
        if converted_note and name == "delta":
            if report.pure_epsilon is not None:
                note = _PURE_CONVERSION_NOTE.format(
                    plain=_number(report.pure_epsilon, "up"), spent=_number(spent.epsilon, "up")
                )
            else:
                note = _CONVERSION_NOTE
        rows.append((name, used, limit, left, fraction, note))
    return rows


def _model_line(name, n_spends, figures):
    text = f"{name}: {_spends(n_spends)}, epsilon {_number(figures.epsilon, 'up')}"
    if figures.delta > 0:
        text += f", delta {_number(figures.delta, 'up')}"
    return text


#: Heading of the per-model breakdown.
_BREAKDOWN = "by model (each alone; composed together they give the total)"


def _spends(n_spends):
    return f"{n_spends} spend{'' if n_spends == 1 else 's'}"


def summary_text(title, report):
    """The text of :meth:`BudgetAccountant.summary` (``report`` None: a detached copy)."""
    if report is None:
        return f"{title}: a copy in another process; its ledger is not available here"
    lines = [f"{title}: {_spends(report.n_spends)}"]
    for name, used, limit, left, fraction, note in _rows(report):
        label = f"{name}:".ljust(8)
        if fraction is None:
            line = f"spent {_number(used, 'up')} (no {'limit' if name == 'epsilon' else 'ceiling'})"
        elif limit == 0:
            line = f"spent {_number(used, 'up')} of 0 (no {name} allowed)"
        else:
            line = (
                f"spent {_number(used, 'up')} of {_number(limit)} ({_percent(fraction)}), "
                f"remaining {_number(left, 'down')}"
            )
        if note:
            line += f"\n           ({note})"
        lines.append(f"  {label} {line}")
    lines.append(f"  composition: {_COMPOSITION[report.composition]}")
    if report.breakdown:
        lines.append(f"  {_BREAKDOWN}:")
        lines.extend(f"    {_model_line(*model)}" for model in report.breakdown)
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
    for name, used, limit, left, fraction, note in _rows(report):
        symbol = "&epsilon;" if name == "epsilon" else "&delta;"
        if fraction is None:
            bar = ""
            text = f"spent {_number(used, 'up')} &middot; no {'limit' if name == 'epsilon' else 'ceiling'}"
        else:
            neutral = name == "delta" and note is not None
            bar = _html_bar(fraction, f"{name}: {_percent(fraction)} of the budget spent", neutral=neutral)
            if limit == 0:
                text = f"spent {_number(used, 'up')} of 0 &middot; no {symbol} allowed"
            else:
                text = (
                    f"spent {_number(used, 'up')} of {_number(limit)} ({_percent(fraction)}) "
                    f"&middot; remaining {_number(left, 'down')}"
                )
        if note:
            text += f'<br><small style="white-space: normal;">{html.escape(note)}</small>'
        parts.append(
            f'<tr><td style="padding: 0.1em 0.5em 0.1em 0; font-weight: bold;">{symbol}</td>'
            f'<td style="padding: 0.1em 0.5em 0.1em 0;">{bar}</td>'
            f'<td style="padding: 0.1em 0; white-space: nowrap;">{text}</td></tr>'
        )
    parts.append("</table>")
    parts.append(f"<div>Composition: {html.escape(_COMPOSITION[report.composition])}</div>")
    if report.breakdown:
        parts.append(
            f'<details style="margin-top: 0.3em;"><summary>{html.escape(_BREAKDOWN)}</summary>'
            '<ul style="margin: 0.2em 0; padding-left: 1.4em;">'
        )
        parts.extend(f"<li>{html.escape(_model_line(*model))}</li>" for model in report.breakdown)
        parts.append("</ul></details>")
    parts.append("</div>")
    return "".join(parts)


def _number(value, rounding="nearest"):
    """A budget figure for display: 4 significant digits, ``inf`` spelled out.

    ``rounding`` is ``"up"`` for spent figures and ``"down"`` for remaining ones, so that
    a display never understates what was spent; a value within floating-point noise
    (relative 1e-9) of a 4-digit figure is shown as that figure (``0.1 + 0.2`` is ``0.3``).
    """
    if value == math.inf:
        return "inf"
    if value == 0 or not math.isfinite(value):
        return f"{value:.4g}"
    # Decimal arithmetic is exact on a float's value and has no overflow: a power-of-ten
    # scale overflows a float for subnormal figures (a δ of 1e-309).
    exact = Decimal(value)
    step = Decimal(1).scaleb(exact.adjusted() - 3)
    nearest = exact.quantize(step, rounding=ROUND_HALF_EVEN)
    if rounding == "nearest" or abs(exact - nearest) <= abs(exact) * Decimal("1e-9"):
        shown = nearest
    else:
        shown = exact.quantize(step, rounding=ROUND_CEILING if rounding == "up" else ROUND_FLOOR)
    shown = float(shown)
    return f"{shown:.4g}"


def budget_text(budget, rounding="up"):
    """``"epsilon=0.5, delta=0"``: an (ε, δ) pair for messages, rounded for reading."""
    return f"epsilon={_number(budget.epsilon, rounding)}, delta={_number(budget.delta, rounding)}"


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
