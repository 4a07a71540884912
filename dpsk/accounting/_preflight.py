# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a fit of any estimator would cost, found before the data is read.

dpsk's fit protocol (architecture.rst, "The fit protocol") guarantees that a DP
estimator checks its cost with its accountant *before* touching ``X``. That makes the
cost of a fit observable without data: :func:`probe_cost` hands the estimator an
accountant that captures the check and stops the fit, on placeholders that raise if
read. :func:`named_dp_steps` finds the DP estimators inside pipelines, column
transformers and other meta-estimators, and :func:`check_budget` checks all their costs
at once, on the accountants they would spend on, so that a composite fit is refused
before *any* of its steps reads the data.

Private searches (:mod:`dpsk.model_selection`) use the same probes to charge a whole
search at once; their inner fits then run with :data:`PREPAID`, an accountant that
accepts every spend because the search has recorded it already.
"""

from typing import NamedTuple

from sklearn.base import BaseEstimator, clone

from dpsk.accounting._context import BOUND_ATTRIBUTE, resolve_accountant
from dpsk.accounting._events import ComposedEvent, PrivacyEvent
from dpsk.exceptions import BudgetExceededError

__all__ = ["PREPAID", "BudgetCheck", "check_budget", "dp_steps", "named_dp_steps", "probe_cost"]


class _Prepaid:
    """An accountant that accepts every spend: the caller (a search) has recorded it already.

    Inner fits of a search carry it as their ``accountant``, so that neither the user's
    accountant (passed to the estimator or made active by ``with``) nor one bound at
    clone time is charged a second time, including in worker processes.
    """

    def check_event(self, event):
        return True

    def record(self, event):
        return self

    def __repr__(self):
        return "<prepaid by the search>"

    def __reduce__(self):
        return "PREPAID"  # a module-level singleton: unpickles as the same object


PREPAID = _Prepaid()


class _Probed(Exception):
    """Raised by the probe accountant to stop a fit once its cost is known."""

    def __init__(self, event):
        super().__init__("privacy cost probed")
        self.event = event


class _ProbeAccountant:
    """Captures the first cost an estimator checks (or records), then stops its fit."""

    def check_event(self, event):
        raise _Probed(event)

    def record(self, event):
        raise _Probed(event)


class _DataWasRead(Exception):
    pass


class _Unreadable:
    """Placeholder for ``X`` and ``y`` during a probe: any use of it raises."""

    def _refuse(self, *args, **kwargs):
        raise _DataWasRead()

    __array__ = __len__ = __iter__ = __getitem__ = _refuse

    def __getattr__(self, name):
        raise _DataWasRead()


def is_dp_estimator(obj):
    """Whether ``obj`` is a dpsk DP estimator (it accounts for everything its fit does)."""
    return isinstance(obj, BaseEstimator) and getattr(obj, "_dpsk_estimator", False)


def _join(path, name):
    return f"{path}__{name}" if path else name


def walk_estimators(obj, dp, plain, path=""):
    """Collect ``(name, estimator)`` of DP estimators (not looking inside them) and of non-DP leaves.

    Names are the prefixes ``set_params`` uses (``"scale__numeric"``, ``"clf"``), so that
    a message can name a step the way users address it.
    """
    if is_dp_estimator(obj):
        dp.append((path or type(obj).__name__, obj))
    elif isinstance(obj, BaseEstimator):
        before = len(dp) + len(plain)
        for key, value in obj.get_params(deep=False).items():
            if isinstance(value, (list, tuple)):
                # A list of (name, estimator, ...) tuples (Pipeline.steps,
                # ColumnTransformer.transformers) names its items after the owner, as
                # get_params(deep=True) does; other items are numbered.
                for i, item in enumerate(value):
                    if isinstance(item, tuple) and len(item) >= 2 and isinstance(item[0], str):
                        walk_estimators(item[1], dp, plain, _join(path, item[0]))
                    else:
                        walk_estimators(item, dp, plain, _join(path, f"{key}[{i}]"))
            else:
                walk_estimators(value, dp, plain, _join(path, key))
        if len(dp) + len(plain) == before:
            plain.append((path or type(obj).__name__, obj))


def named_dp_steps(estimator):
    """``[(name, step), ...]``: the DP estimators inside ``estimator`` (itself, or its steps).

    A DP estimator accounts for everything its own ``fit`` does, so the walk does not
    look inside it. Pipelines, column transformers and other containers are searched
    through their parameters, at any depth.
    """
    dp, plain = [], []
    walk_estimators(estimator, dp, plain)
    return dp


def dp_steps(estimator):
    """The differentially private estimators inside ``estimator`` (see :func:`named_dp_steps`)."""
    return [step for _, step in named_dp_steps(estimator)]


def probe_cost(step):
    """The privacy cost ``step.fit`` checks before reading the data (no data is read).

    Raises
    ------
    TypeError
        If ``step.fit`` touches the data before checking its cost (it breaks dpsk's fit
        protocol), so that its cost cannot be known in advance.
    """
    probe = clone(step).set_params(accountant=_ProbeAccountant())
    vars(probe).pop(BOUND_ATTRIBUTE, None)
    try:
        probe.fit(_Unreadable(), _Unreadable())
    except _Probed as probed:
        if not isinstance(probed.event, PrivacyEvent):
            raise TypeError(f"{type(step).__name__}.fit checked a {type(probed.event).__name__}, not a PrivacyEvent")
        return probed.event
    except _DataWasRead:
        pass
    raise TypeError(
        f"{type(step).__name__}.fit does not check its privacy cost with its accountant before "
        "reading the data (dpsk's fit protocol), so its cost cannot be known in advance."
    )


def accountant_in_play(step):
    """The accountant ``step.fit`` would check and spend on, here and now (or None)."""
    resolve = getattr(step, "_accountant_in_play", None)
    return resolve() if resolve is not None else resolve_accountant(step)


def compose(costs):
    """One event for ``costs`` spent in sequence on the same data (the only one if single)."""
    costs = tuple(costs)
    return costs[0] if len(costs) == 1 else ComposedEvent(costs)


class BudgetCheck(NamedTuple):
    """What a fit would cost, per DP step and per accountant: the report of :func:`check_budget`.

    Attributes
    ----------
    costs : dict of str to PrivacyEvent
        The cost of one fit of each DP step, by step name (the prefix ``set_params``
        uses, such as ``"scale__numeric"``; the class name for a bare estimator).
    accountants : dict of str to accountant or None
        The accountant each step would spend on; None if it spends on none.
    totals : list of (accountant, tuple of str, PrivacyEvent)
        For each accountant in play (in the order of the steps): the names of the steps
        that spend on it and their composed cost, which was checked against its budget.

    Notes
    -----
    **Privacy.** The report is computed from hyper-parameters alone: no data was read,
    nothing was released and nothing was spent.
    """

    costs: dict
    accountants: dict
    totals: list


def _exceeded(estimator, accountant, names, steps, error):
    listed = ", ".join(f"{name!r} ({type(steps[name]).__name__})" for name in names)
    what = "its DP step" if len(names) == 1 else f"its {len(names)} DP steps"
    return BudgetExceededError(
        f"Fitting {type(estimator).__name__} would exceed the budget of {accountant!r}: {what} "
        f"{listed} spend on it, and together they do not fit. No step was fitted and nothing "
        f"was spent. The accountant said: {error}"
    )


def budget_check(estimator, accountant=None, *, skip_unaccounted=False):
    """:func:`check_budget`; ``skip_unaccounted`` leaves out (does not probe) steps with
    nothing to check: no accountant, or one prepaid by a search."""
    steps = dict(named_dp_steps(estimator))
    costs, accountants, groups = {}, {}, {}
    for name, step in steps.items():
        spends_on = accountant if accountant is not None else accountant_in_play(step)
        if skip_unaccounted and (spends_on is None or spends_on is PREPAID):
            continue
        costs[name] = probe_cost(step)
        accountants[name] = spends_on
        if spends_on is not None:
            groups.setdefault(id(spends_on), (spends_on, []))[1].append(name)
    totals = []
    for spends_on, names in groups.values():
        total = compose(costs[name] for name in names)
        try:
            spends_on.check_event(total)
        except BudgetExceededError as error:
            raise _exceeded(estimator, spends_on, names, steps, error) from error
        totals.append((spends_on, tuple(names), total))
    return BudgetCheck(costs, accountants, totals)


def check_budget(estimator, accountant=None):
    """Check, before any data is read, that a fit of ``estimator`` fits the privacy budget.

    A scikit-learn :class:`~sklearn.pipeline.Pipeline` fits its steps one after the
    other, and each DP step checks only its own cost when its turn comes: if the last
    step does not fit the budget, the earlier ones have already read the data and spent.
    This function checks them all at once, without data. It finds every DP step of
    ``estimator`` (itself, or the steps of pipelines, column transformers and other
    meta-estimators, at any depth), finds what one fit of each costs (the cost its
    ``fit`` checks before reading the data), groups the steps by the accountant each
    would spend on, and checks their composed cost on each accountant.

    :class:`dpsk.pipeline.Pipeline` calls it at the start of every fit.

    Parameters
    ----------
    estimator : estimator object
        A dpsk estimator, or any scikit-learn meta-estimator holding some. Not fitted and
        not modified.

    accountant : BudgetAccountant, default=None
        Check every step's cost on this accountant. By default each step's cost is
        checked on the accountant its ``fit`` would spend on if called now: its
        ``accountant`` parameter, else the one of the enclosing ``with accountant:``
        block, else the one bound when it was cloned inside such a block. Steps that
        would spend on no accountant are reported and not checked.

    Returns
    -------
    report : BudgetCheck
        The cost of each DP step and the accountant it spends on, and the composed
        cost checked on each accountant.

    Raises
    ------
    BudgetExceededError
        If the steps that spend on one accountant cannot afford their composed cost
        together; the message names them.
    TypeError
        If a DP step does not check its cost before reading the data (dpsk's fit
        protocol), so that its cost cannot be known in advance.

    See Also
    --------
    dpsk.pipeline.Pipeline : A pipeline that runs this check before it fits.
    BudgetAccountant.check_event : The dry run applied to each accountant.

    Notes
    -----
    **Privacy.** The check reads no data, releases nothing and spends nothing: each
    step's cost comes from a clone fitted on placeholders that raise if read, stopped
    at its budget check, and each accountant's check is a dry run
    (:meth:`BudgetAccountant.check_event`). Steps that see the same rows compose
    sequentially (a column transformer's steps see different columns of the same rows,
    so they compose too).

    The check counts one fit of each DP step. A meta-estimator that fits a step
    several times (``OneVsRestClassifier``, bagging, scikit-learn's own searches)
    spends more; each of those fits is still checked by the step itself. A pipeline
    with ``memory`` that finds a transformer in its cache does not refit it and spends
    nothing for it, while the check counts it. A budget spent by another process
    between the check and the fit is caught by each step's own check-and-spend.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from dpsk import BudgetAccountant
    >>> from dpsk.accounting import check_budget
    >>> from dpsk.linear_model import LogisticRegression
    >>> from dpsk.preprocessing import StandardScaler
    >>> pipe = make_pipeline(StandardScaler(epsilon=0.5, bounds=(0, 1)),
    ...                      LogisticRegression(epsilon=1.0, data_norm=2.0, classes=[0, 1]))
    >>> report = check_budget(pipe, BudgetAccountant(epsilon=2.0))
    >>> sorted(report.costs)
    ['logisticregression', 'standardscaler']
    >>> check_budget(pipe, BudgetAccountant(epsilon=1.2))
    Traceback (most recent call last):
    ...
    dpsk.exceptions.BudgetExceededError: Fitting Pipeline would exceed the budget of ...
    """
    return budget_check(estimator, accountant)
