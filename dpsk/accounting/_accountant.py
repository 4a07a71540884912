# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The budget accountant: one privacy budget, checked before and spent by every DP release."""

import math
import numbers
import os
import uuid
import weakref
from collections.abc import Iterable

from dpsk.accounting import _calibration as cal
from dpsk.accounting import _display
from dpsk.accounting._budget import TOLERANCE, Budget, check_budget_values
from dpsk.accounting._context import SpendLabel, _pop, _push, current_label
from dpsk.accounting._events import PrivacyEvent, SelfComposedEvent, budget_event
from dpsk.accounting._ledger import DetachedLedger, MemoryLedger, SQLiteLedger
from dpsk.accounting._ledger_state import LedgerState
from dpsk.accounting._normalize import calibrated_delta
from dpsk.exceptions import BudgetExceededError, DetachedAccountantError

__all__ = ["Budget", "BudgetAccountant"]

#: total() reports the converted point only if it saves at least this fraction of ε.
_MIN_GAIN = 0.01

# In-memory accountants alive in this process, so that unpickling in the *same* process
# (joblib.dump/load, copy via pickle, threads) gives back the original object.
_LIVE: "weakref.WeakValueDictionary[str, BudgetAccountant]" = weakref.WeakValueDictionary()


def _as_event(entry):
    if isinstance(entry, PrivacyEvent):
        return entry
    try:
        epsilon, delta = entry
    except (TypeError, ValueError):
        raise TypeError(
            f"spent_budget entries must be PrivacyEvents or (epsilon, delta) pairs, got {entry!r}"
        ) from None
    return budget_event(epsilon, delta)


def _reattach(uid, budget):
    """Unpickle an in-memory accountant: the original in its own process, else a detached copy."""
    live = _LIVE.get(uid)
    if live is not None:
        return live
    accountant = BudgetAccountant.__new__(BudgetAccountant)
    accountant._epsilon, accountant._delta, accountant._slack = budget
    accountant._ledger = DetachedLedger()
    accountant._uid = uid
    return accountant


def _reopen(path, budget):
    """Unpickle a persistent accountant: a handle on the same file."""
    return BudgetAccountant(*budget, path=path)


class BudgetAccountant:
    r"""A privacy budget, and the ledger of everything spent from it.

    Every dpsk estimator and mechanism checks its privacy cost against the accountant
    *before* reading the data (raising :class:`~dpsk.exceptions.BudgetExceededError`
    if it does not fit) and records it when it releases. An accountant is a *handle*:
    ``clone()``, ``copy.deepcopy`` and scikit-learn's model selection keep the same
    accountant, so a 4-setting, 3-fold ``GridSearchCV`` with refit records 13 spends on
    the accountant you passed.

    Parameters
    ----------
    epsilon : float, default=inf
        ε ceiling of the budget, >= 0. ``inf`` tracks spends without a limit.
    delta : float, default=1.0
        δ ceiling, in [0, 1]. ``1.0`` (diffprivlib's default) means *no δ ceiling*; see
        the reporting semantics below.
    slack : float, default=0.0
        Part of ``delta`` reserved for composition: explicit δ's of (ε, δ) spends may
        not use it. With ``delta=1.0`` it is the δ at which the ledger is converted to ε
        (diffprivlib's meaning: more slack, smaller ε).
    spent_budget : list of PrivacyEvent or (epsilon, delta) pairs, default=None
        Spends to record first (e.g. ``other.spent_budget``). Each must fit the budget.
    path : str or path-like, default=None
        Keep the ledger in this SQLite file instead of in memory. The file survives
        restarts and is shared safely by concurrent processes (check-and-spend is one
        transaction), so worker processes of ``n_jobs > 1`` record their spends exactly.
        An existing file keeps its budget: open it with the same ``epsilon``, ``delta``
        and ``slack``, or with none of them to use the stored ones. A relative path is
        resolved against the working directory when the accountant is constructed, so a
        pickled accountant reopens the same file wherever it is unpickled.

    Attributes
    ----------
    epsilon, delta, slack : float
        The budget.
    spent_budget : list of PrivacyEvent
        Everything recorded, in order (a copy).
    path : str or None
        The SQLite file (absolute), if the ledger is persistent.

    See Also
    --------
    dpsk.accounting.get_epsilon : the guarantee of an event by a given composition method.

    Notes
    -----
    **Composition.** Spends are privacy events (a Laplace release with its noise, a
    Gaussian release, a subsampled DP-SGD run, or a plain (ε, δ) from :meth:`spend`),
    not just (ε, δ) pairs, so the accountant composes them with the tightest valid
    method: exact sums for pure ε; the optimal composition of identical ε-DP spends
    (Kairouz, Oh & Viswanath) or their closed-form bound for different ones; exact
    composition of Gaussian releases; Rényi DP with the tight conversion to (ε, δ);
    privacy loss distributions when the optional ``dp-accounting`` package is
    installed. The figures are rounded up and never below the true guarantee of the
    recorded events. Cost per spend is O(1) in the number of past spends.

    **Reporting semantics.** A ledger does not have one (ε, δ): it is (ε(δ), δ)-DP for a
    whole curve of δ. An (ε, δ) spend contributes its δ exactly (δ_fixed = 1 - Π(1 - δᵢ)
    over those spends) and its ε to the rest of the ledger, which is converted to ε at
    an extra δ_c:

    - with a δ ceiling (``delta < 1``), δ_c is everything the explicit δ's leave:
      δ_fixed ⊕ δ_c = ``delta``. A spend fits if the ledger is then (``epsilon``,
      ``delta``)-DP and δ_fixed ⊕ ``slack`` <= ``delta``;
    - without (``delta == 1``), δ_c = ``slack`` ⊕ δ_cal, where δ_cal sums the δ's the
      recorded releases were calibrated for (a Gaussian mechanism fitted with
      ``delta=1e-6`` contributes 1e-6; see :class:`~dpsk.accounting.CalibratedEvent`): the
      ε ceiling applies at δ_fixed ⊕ δ_c and δ is not limited (diffprivlib's behaviour).
      Releases recorded without a calibration δ (a bare ``GaussianEvent``) have ε = inf at
      δ = 0: give a δ ceiling or a slack (or ask :meth:`get_epsilon` at a δ of your
      choice).

    :meth:`total` returns one point of the curve: ``(ε at δ_c, δ_fixed ⊕ δ_c)`` if
    converting saves at least 1% of ε, else ``(Σε, δ_fixed)`` (e.g. a few pure-DP
    spends: no δ is needed, so none is reported). Totals never decrease: once the
    converted point is reported it stays, and a figure is never below one reported
    before (in this process). :meth:`remaining` returns an (ε, δ) that ``k`` further
    spends can take *jointly*: once the ledger uses its δ for conversion (Gaussian-type
    spends, or many pure ones), the remaining δ is 0 and the remaining ε is for pure-ε
    spends; :meth:`check_event` is authoritative for any other spend. Budget
    comparisons tolerate a relative 2⁻⁴⁰ excess (the floating-point noise of declared
    values, so ten spends of 0.1 fit a budget of 1), while :meth:`total` reports the
    strict rounded-up figure.

    **Processes and copies.** In-memory accountants are per process: a copy that
    reaches another process (``n_jobs > 1`` with loky, a fork) raises
    :class:`~dpsk.exceptions.DetachedAccountantError` instead of spending, so no spend
    is ever lost silently. Use ``path=`` for process-parallel work. Inside ``with acc:``,
    estimators cloned by scikit-learn remember ``acc``, so their spends reach it (or
    fail loudly) even in worker processes, where the ``with`` block does not exist.

    **Display.** :meth:`summary` tells in a few lines what was spent, what remains and
    which composition certifies the total; in a notebook the accountant shows the same
    as bars of ε and δ spent (plain HTML). ``repr`` stays the constructor call, so that
    estimators holding an accountant keep a short ``repr``.

    **Migrating from diffprivlib.** ``from dpsk import BudgetAccountant`` replaces
    ``from diffprivlib import BudgetAccountant``; ``epsilon``, ``delta``, ``slack``,
    ``spent_budget``, ``check``, ``spend``, ``total``, ``remaining``, ``len()`` and
    ``with acc:`` keep their meaning. Differences: totals are tighter (diffprivlib only
    sums or uses the heterogeneous advanced-composition bound); ``spent_budget`` lists
    events (the constructor still accepts (ε, δ) pairs); there is no process-wide
    default (``set_default``/``load_default``): pass ``accountant=`` or use ``with acc:``;
    ``clone()`` and ``GridSearchCV`` keep the accountant (diffprivlib deep-copies it, so
    spends made by clones are lost); :meth:`check` and :meth:`spend` raise
    :class:`~dpsk.exceptions.BudgetExceededError` (a ``ValueError``, like diffprivlib's
    ``BudgetError``).

    **Privacy.** The accountant releases nothing; it enforces a budget. Each spend
    is checked and recorded atomically (one transaction for a persistent ledger),
    and dpsk's estimators and statistics check their cost before reading the data,
    so a refused spend has released nothing. Reports (:meth:`total`,
    :meth:`remaining`, :meth:`get_epsilon`) are functions of the recorded events,
    rounded up, never below the true guarantee of the recorded releases. It knows
    only the spends made through it: releases made elsewhere, or through several
    accountants on the same data, compose outside its view.

    Examples
    --------
    >>> from dpsk import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.5, delta=0)
    >>> acc.spend(1.0, 0).total()
    (epsilon=1.0, delta=0.0)
    >>> acc.remaining()
    (epsilon=0.5, delta=0.0)
    >>> from dpsk.accounting import GaussianEvent, SelfComposedEvent
    >>> acc = BudgetAccountant(epsilon=10, delta=1e-5)
    >>> acc.record(SelfComposedEvent(GaussianEvent(noise_multiplier=5.0), 100)).total()
    (epsilon=9.997..., delta=1e-05)
    """

    def __init__(
        self,
        epsilon: float = math.inf,
        delta: float = 1.0,
        slack: float = 0.0,
        spent_budget: Iterable[PrivacyEvent | tuple[float, float]] | None = None,
        *,
        path: str | os.PathLike | None = None,
    ) -> None:
        epsilon, delta, slack = check_budget_values(epsilon, delta, slack)
        self._uid = uuid.uuid4().hex
        self._ledger: MemoryLedger | SQLiteLedger | DetachedLedger
        if path is None:
            self._ledger = MemoryLedger()
            _LIVE[self._uid] = self
        else:
            defaults = (epsilon, delta, slack) == (math.inf, 1.0, 0.0)
            ledger = SQLiteLedger(path, None if defaults else (epsilon, delta, slack))
            self._ledger = ledger
            epsilon, delta, slack = ledger.budget
            if spent_budget and ledger.has_spends():
                raise ValueError(f"the ledger {path} already holds spends; pass spent_budget only when creating it")
        self._epsilon, self._delta, self._slack = epsilon, delta, slack
        for entry in spent_budget or ():
            self.record(_as_event(entry), label=SpendLabel(call="spent_budget"))

    # -- handle semantics ---------------------------------------------------------------

    def __sklearn_clone__(self):
        return self

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        budget = (self._epsilon, self._delta, self._slack)
        if isinstance(self._ledger, SQLiteLedger):
            return (_reopen, (self._ledger.path, budget))
        return (_reattach, (self._uid, budget))

    def __enter__(self) -> "BudgetAccountant":
        _push(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _pop()

    def __repr__(self) -> str:
        params = []
        if self._epsilon != math.inf:
            params.append(f"epsilon={self._epsilon!r}")
        if self._delta != 1.0:
            params.append(f"delta={self._delta!r}")
        if self._slack > 0:
            params.append(f"slack={self._slack!r}")
        if isinstance(self._ledger, SQLiteLedger):
            params.append(f"path={self._ledger.path!r}")
        if isinstance(self._ledger, DetachedLedger):
            params.append("<detached>")
        return f"BudgetAccountant({', '.join(params)})"

    def __len__(self) -> int:
        with self._ledger.transaction() as ledger:
            return len(ledger.events)

    # -- budget -------------------------------------------------------------------------

    @property
    def epsilon(self) -> float:
        """ε ceiling of the budget."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """δ ceiling of the budget (1.0: none)."""
        return self._delta

    @property
    def slack(self) -> float:
        """δ reserved for composition (see the class docstring)."""
        return self._slack

    @property
    def path(self) -> str | None:
        """The SQLite file of a persistent ledger, or None."""
        return getattr(self._ledger, "path", None)

    @property
    def spent_budget(self) -> list[PrivacyEvent]:
        """Everything recorded, in order: a list of privacy events."""
        with self._ledger.transaction() as ledger:
            return list(ledger.events)

    # -- the budget rule ----------------------------------------------------------------

    def _conversion_delta(self, state):
        """δ_c for ``state``, or None if its explicit δ's (plus slack) break the δ ceiling."""
        slack = self._slack
        fixed = state.fixed_delta()
        if self._delta >= 1.0:
            return cal.delta_compose(slack, state.calibration_delta())
        if cal.delta_compose(fixed, slack) > self._delta * (1.0 + TOLERANCE):
            return None
        return cal.delta_remove(self._delta, fixed) or 0.0

    def _excess(self, state, use_pld=True, strict=False):
        """None if ``state`` fits the budget, else a description of the excess.

        ``strict`` drops the floating-point tolerance on ε (for :meth:`remaining`).
        """
        if self._epsilon == math.inf and self._delta >= 1.0:
            return None
        delta_c = self._conversion_delta(state)
        if delta_c is None:
            fixed = state.fixed_delta()
            return (
                f"its explicit delta would be {_display._number(fixed, 'up')} "
                f"(plus slack {_display._number(self._slack)})"
            )
        if self._epsilon == math.inf:
            return None
        limit = self._epsilon * (1.0 if strict else 1.0 + TOLERANCE)
        eps = state.certify(limit, delta_c, use_pld=use_pld)
        if eps is None:
            return None
        together = Budget(eps, state.total_delta(delta_c))
        return f"the ledger would be ({_display.budget_text(together)})-DP"

    def _exceeded(self, event, excess, label):
        """The BudgetExceededError for ``event``: what was asked, what remains, by whom.

        Call outside any ledger transaction (it asks :meth:`remaining`). The message
        gives figures rounded for reading, never the event's nested repr; the error
        carries the exact ones as ``requested`` and ``remaining``.
        """
        asked = self._figures(event)
        try:
            left = self.remaining()
        except DetachedAccountantError:  # pragma: no cover - a detached ledger raises before
            left = None
        who = "" if label is None or label.estimator is None and label.step is None else f" by {label.model}"
        call = "" if label is None else f" ({label.call})"
        if self._delta >= 1.0:  # no δ ceiling: only ε can run out
            ceiling = f"epsilon={_display._number(self._epsilon)} (no delta ceiling)"
            remains = "" if left is None else f"; remaining: epsilon={_display._number(left.epsilon, 'down')}"
        else:
            ceiling = _display.budget_text(Budget(self._epsilon, self._delta), rounding="nearest")
            remains = "" if left is None else f"; remaining: {_display.budget_text(left, rounding='down')}"
        error = BudgetExceededError(
            f"Spend{who}{call} not permitted: it asks for {_display.budget_text(asked)}{remains}, "
            f"of the budget {ceiling} ({excess}). Nothing was spent."
        )
        error.requested, error.remaining, error.label = asked, left, label
        return error

    def check_event(self, event: PrivacyEvent) -> bool:
        """Check that ``event`` fits the remaining budget, without spending it.

        Returns
        -------
        True

        Raises
        ------
        BudgetExceededError
            If recording ``event`` would exceed the budget.
        DetachedAccountantError
            If this in-memory accountant was copied into another process.
        """
        if not isinstance(event, PrivacyEvent):
            raise TypeError(f"event must be a PrivacyEvent, got {type(event).__name__}")
        with self._ledger.transaction() as ledger:
            token = ledger.state.apply(event)
            try:
                excess = self._excess(ledger.state)
            finally:
                ledger.state.undo(token)
        if excess is not None:
            raise self._exceeded(event, excess, current_label())
        return True

    def record(self, event: PrivacyEvent, *, label: SpendLabel | None = None) -> "BudgetAccountant":
        """Spend ``event``: check it against the budget and record it, atomically.

        Between two processes or threads sharing the budget, at most one of two
        competing spends that do not both fit is recorded; the other raises.

        Parameters
        ----------
        event : PrivacyEvent
            The spend.
        label : SpendLabel, default=None
            What the ledger calls the spend. By default the label of the estimator,
            statistic or search spending now (class, step path in a pipeline and call),
            or ``"spend"`` for a direct call.

        Returns
        -------
        self : BudgetAccountant

        Raises
        ------
        BudgetExceededError
            If ``event`` does not fit (nothing is recorded).
        DetachedAccountantError
            If this in-memory accountant was copied into another process.
        """
        if not isinstance(event, PrivacyEvent):
            raise TypeError(f"event must be a PrivacyEvent, got {type(event).__name__}")
        if label is None:
            label = current_label()
        if self._epsilon == math.inf and self._delta >= 1.0 and isinstance(self._ledger, MemoryLedger):
            self._ledger.append_unchecked(event, label)  # nothing to check: folded in when asked
            return self
        with self._ledger.transaction(write=True) as ledger:
            state = ledger.state
            token = state.apply(event)
            try:
                excess = self._excess(state)
                if excess is None:
                    ledger.append(event, label)
            except BaseException:
                state.undo(token)
                raise
            if excess is not None:
                state.undo(token)
        if excess is not None:
            raise self._exceeded(event, excess, label)
        return self

    def check(self, epsilon: float, delta: float) -> bool:
        """Check that a spend of (``epsilon``, ``delta``) fits (diffprivlib's API); True or raise."""
        return self.check_event(budget_event(epsilon, delta))

    def spend(self, epsilon: float, delta: float) -> "BudgetAccountant":
        """Spend (``epsilon``, ``delta``) (diffprivlib's API). Returns self."""
        return self.record(budget_event(epsilon, delta))

    # -- reports ------------------------------------------------------------------------

    def _report_delta(self, state, slack=None):
        """δ_c of the converted point :meth:`total` reports (see the reporting semantics)."""
        if self._delta >= 1.0:
            return cal.delta_compose(self._slack, state.calibration_delta()) if slack is None else slack
        return cal.delta_remove(self._delta, state.fixed_delta())

    def _total(self, state, slack=None, force_converted=False):
        """(Budget, whether it is the converted point) by the reporting rule."""
        fixed = state.fixed_delta()
        if not state.counts:
            return Budget(0.0, 0.0), False
        plain = Budget(state.conversion_epsilon(0.0), fixed)
        delta_c = self._report_delta(state, slack)
        if not delta_c:
            return plain, False
        converted = Budget(state.conversion_epsilon(delta_c), state.total_delta(delta_c))
        if self._delta < 1.0:
            converted = Budget(converted.epsilon, self._delta)
        if not force_converted and plain.epsilon <= converted.epsilon * (1.0 + _MIN_GAIN):
            return plain, False
        return converted, True

    def _reported_total(self, ledger):
        """:meth:`_total`, never below what this process reported before (monotone totals).

        Any figure above a valid bound is a valid bound, so taking the running maximum is
        safe; it hides the small non-monotonicities of numerical methods (PLD) and the
        switch from the (Σε, δ_fixed) point to the converted one, which is sticky.
        """
        last = getattr(ledger, "last_report", None)
        budget, converted = self._total(ledger.state, force_converted=last is not None and last[1])
        if last is not None:
            budget = Budget(max(budget.epsilon, last[0].epsilon), max(budget.delta, last[0].delta))
        ledger.last_report = (budget, converted)
        return budget, converted

    def total(
        self, spent_budget: Iterable[PrivacyEvent | tuple[float, float]] | None = None, slack: float | None = None
    ) -> Budget:
        """The privacy spent so far, as one (ε, δ) point (see the reporting semantics).

        Parameters
        ----------
        spent_budget : list of PrivacyEvent or (epsilon, delta) pairs, default=None
            Report on these spends instead of the recorded ones (diffprivlib's API).
        slack : float, default=None
            Without a δ ceiling: the conversion δ to report at, instead of ``self.slack``.

        Returns
        -------
        Budget
            ``(epsilon, delta)``, rounded up.
        """
        if slack is not None and not 0.0 <= slack <= self._delta:
            raise ValueError(f"slack must be in [0, {self._delta}], got {slack}")
        if spent_budget is not None:
            state = LedgerState()
            for entry in spent_budget:
                state.add_event(_as_event(entry))
            return self._total(state, slack)[0]
        with self._ledger.transaction() as ledger:
            if slack is not None:
                return self._total(ledger.state, slack)[0]
            return self._reported_total(ledger)[0]

    def get_epsilon(self, delta: float) -> float:
        """The smallest certified ε such that everything recorded is (ε, ``delta``)-DP."""
        delta = float(delta)
        if not 0.0 <= delta <= 1.0:
            raise ValueError(f"delta must be in [0, 1], got {delta}")
        with self._ledger.transaction() as ledger:
            return ledger.state.epsilon(delta)

    def remaining(self, k: int = 1) -> Budget:
        """The budget ``k`` further equal spends can take jointly (rounded down).

        Parameters
        ----------
        k : int, default=1
            Number of spends to share the remaining budget.

        Returns
        -------
        Budget
            ``(epsilon, delta)`` for *each* of the ``k`` spends: ``k`` spends of it fit.
        """
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"k must be an integer, got {type(k).__name__}")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        with self._ledger.transaction() as ledger:
            state = ledger.state
            (_, spent_delta), converted = self._reported_total(ledger)
            if self._delta >= 1.0:
                delta_each = 1.0
            elif converted:
                delta_each = 0.0
            else:
                free = cal.delta_remove(cal.delta_remove(self._delta, self._slack) or 0.0, spent_delta) or 0.0
                if k == 1 or free in (0.0, 1.0):
                    delta_each = free
                else:
                    delta_each = cal.round_down(-math.expm1(math.log1p(-free) / k))
            if self._epsilon == math.inf:
                return Budget(math.inf, delta_each)
            return Budget(self._largest_epsilon(state, k, 0.0 if self._delta >= 1.0 else delta_each), delta_each)

    def _largest_epsilon(self, state, k, delta_each):
        """The largest ε such that k spends of (ε, delta_each) fit, by bisection."""

        def fits(eps):
            event = budget_event(eps, delta_each)
            token = state.apply(event if k == 1 else SelfComposedEvent(event, k))
            try:
                # Without PLD (too slow to search with): the answer is on the safe side.
                return self._excess(state, use_pld=False, strict=True) is None
            finally:
                state.undo(token)

        lo, hi = 0.0, self._epsilon
        if not fits(lo):
            return 0.0
        if fits(hi):
            return hi
        for _ in range(200):
            mid = (lo + hi) / 2.0
            if mid in (lo, hi):
                break
            if fits(mid):
                lo = mid
            else:
                hi = mid
        return lo

    # -- the ledger, spend by spend ---------------------------------------------------

    def _figures(self, event, state=None):
        """One (ε, δ) for ``event`` (or for ``state``, several events) alone, for display.

        Its pure-ε sum and explicit δ when they are finite; else ε at the δ its releases
        were calibrated for (a Gaussian fit with ``delta=1e-6``); else the point
        :meth:`total` would report for it alone. Rounded up, like every report.
        """
        if state is None:
            state = LedgerState()
            state.add_event(event)
            hint = float(calibrated_delta(event))
        else:
            hint = float(state.calibrated_delta)
        if not state.counts:
            return Budget(0.0, 0.0)
        fixed = state.fixed_delta()
        plain = state.conversion_epsilon(0.0)
        if plain < math.inf:
            return Budget(plain, fixed)
        if hint > 0:
            return Budget(state.conversion_epsilon(hint), state.total_delta(hint))
        return self._total(state)[0]

    def _entries(self):
        """``[(label, time, event), ...]`` of everything recorded, in order."""
        with self._ledger.transaction() as ledger:
            return [(label, when, event) for (label, when), event in zip(ledger.entries, ledger.events)]

    def to_frame(self):
        """The ledger as a table: one row per spend, in the order recorded.

        Requires pandas (``pip install "dpsk[pandas]"``).

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``label`` (as :meth:`summary` prints it), ``estimator`` (class name),
            ``step`` (path inside a pipeline, or None), ``call`` (``"fit"``,
            ``"cross_val_score"``, ``"spend"``...), ``epsilon`` and ``delta`` (the spend
            on its own: its pure ε and explicit δ, or for a Gaussian-type release its ε
            at the δ it was calibrated for; exact, not rounded), ``event`` (the type of
            the privacy event) and ``time`` (when it was recorded, UTC).

        Raises
        ------
        ImportError
            If pandas is not installed.

        Notes
        -----
        **Privacy.** The table describes the spends (hyper-parameters only); it reads no
        data. The per-spend figures do not add up to :meth:`total` when the ledger is
        composed more tightly than by adding (see the class docstring).

        Examples
        --------
        >>> from dpsk import BudgetAccountant
        >>> acc = BudgetAccountant(epsilon=1.0).spend(0.25, 0).spend(0.5, 0)
        >>> acc.to_frame()[["label", "epsilon", "delta", "event"]]  # doctest: +SKIP
           label  epsilon  delta        event
        0  spend     0.25    0.0  PureDPEvent
        1  spend     0.50    0.0  PureDPEvent
        """
        try:
            import pandas as pd
        except ImportError as error:
            raise ImportError(
                "BudgetAccountant.to_frame() needs pandas, an optional dependency of dpsk: install it with "
                'pip install "dpsk[pandas]" (or pip install pandas). summary() shows the ledger without it.'
            ) from error
        entries = self._entries()
        figures = [self._figures(event) for _, _, event in entries]

        def text(values):  # None stays None (not NaN) in a column of names
            return pd.Series(values, dtype=object)

        return pd.DataFrame(
            {
                "label": text([str(label) for label, _, _ in entries]),
                "estimator": text([label.estimator for label, _, _ in entries]),
                "step": text([label.step for label, _, _ in entries]),
                "call": text([label.call for label, _, _ in entries]),
                "epsilon": pd.Series([f.epsilon for f in figures], dtype="float64"),
                "delta": pd.Series([f.delta for f in figures], dtype="float64"),
                "event": text([type(event).__name__ for _, _, event in entries]),
                "time": pd.to_datetime(
                    pd.Series([when for _, when, _ in entries], dtype="float64"), unit="s", utc=True
                ),
            }
        )

    def _breakdown(self, entries):
        """Per model (step and class): ``[(name, n_spends, Budget), ...]`` in order of first spend."""
        groups = {}
        for label, _, event in entries:
            groups.setdefault(label.model, []).append(event)
        breakdown = []
        for name, events in groups.items():
            state = LedgerState()
            for event in events:
                state.add_event(event)
            breakdown.append((name, len(events), self._figures(None, state)))
        return breakdown

    # -- display ------------------------------------------------------------------------

    def _certifying_method(self, state, spent, converted):
        """A composition method that certifies the reported total ``spent`` (a key of
        ``_display._COMPOSITION``)."""
        if not state.counts:
            return "none"
        if state.single_atom() is not None:
            return "single"
        if not converted:
            return "basic"
        delta_c = self._report_delta(state)
        for method in ("basic", "gaussian", "advanced", "rdp", "pld"):
            if state.conversion_epsilon(delta_c, method=method) <= spent.epsilon:
                return method
        return "tightest"

    def _report(self):
        """The figures :meth:`summary` and the HTML view show; None for a detached copy."""
        try:
            with self._ledger.transaction() as ledger:
                n_spends = len(ledger.events)
                spent, converted = self._reported_total(ledger)
                method = self._certifying_method(ledger.state, spent, converted)
                counts = ledger.state.family_counts
                pure = ledger.state.conversion_epsilon(0.0) if counts["pure"] == sum(counts.values()) else None
            remaining = self.remaining()
            breakdown = self._breakdown(self._entries())
        except DetachedAccountantError:
            return None
        return _display.Report(
            n_spends, Budget(self._epsilon, self._delta), spent, remaining, converted, method, breakdown, pure
        )

    def summary(self) -> str:
        """A readable account of the budget: spent, remaining, and the composition used.

        Returns
        -------
        str
            Several lines: the budget, the number of spends, the (ε, δ) spent and
            remaining (as :meth:`total` and :meth:`remaining` report them, rounded to 4
            significant digits: spent up, remaining down), which composition theorem
            certifies the total, and the spends of each model (estimator class and step
            path, see :meth:`to_frame`). When the total is the converted point (its δ is
            used by the composition), the remaining ε is shown as the ceiling minus the
            spent ε, with what one further spend can take if that is less.

        Examples
        --------
        >>> from dpsk import BudgetAccountant
        >>> acc = BudgetAccountant(epsilon=2.0, delta=0)
        >>> print(acc.spend(0.5, 0).spend(1.0, 0).summary())
        BudgetAccountant(epsilon=2.0, delta=0.0): 2 spends
          epsilon: spent 1.5 of 2 (75%), remaining 0.5
          delta:   spent 0 of 0 (no delta allowed)
          composition: basic composition (the epsilons add up, and so do explicit deltas)
          by model (each alone; composed together they give the total):
            direct spends: 2 spends, epsilon 1.5
        """
        return _display.summary_text(repr(self), self._report())

    def _repr_html_(self) -> str:
        """HTML view for notebooks: a spent/remaining bar for ε and δ (no JavaScript)."""
        return _display.summary_html(repr(self), self._report())
