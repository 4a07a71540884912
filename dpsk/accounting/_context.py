# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Which accountant an estimator spends on.

Order: the estimator's ``accountant`` parameter; else the accountant made active with
``with accountant:`` (a context variable, so threads and asyncio tasks do not leak
accountants into each other); else the accountant that was active when the estimator
was *cloned* (so that clones sent to worker processes by ``n_jobs > 1``, where context
variables do not travel, still spend on it, or fail loudly if they cannot); else none
(the cost is still kept in ``privacy_spent_``, unless strict mode,
``dpsk.set_config(require_accountant=True)``, refuses the release).

Also what a spend is called in the ledger (:class:`SpendLabel`): the estimator's class,
its step path inside a :class:`dpsk.pipeline.Pipeline` (``"columntransformer__num__scaler"``)
and the call that made it (``"fit"``, ``"cross_val_score"``). A pipeline opens a
:func:`labelled_fit` scope naming its DP steps; the spend path of estimators
(``DPEstimatorMixin``), statistics and searches sets the label with :func:`spending_as`
around the accountant's ``check_event``/``record``, which reads it with :func:`current_label`.
"""

import contextlib
import contextvars
import threading
from typing import NamedTuple

from dpsk._config import get_config
from dpsk.exceptions import AccountantRequiredError

__all__ = [
    "SpendLabel",
    "accountant_for_clone",
    "active_accountant",
    "current_label",
    "label_of",
    "labelled_fit",
    "resolve_accountant",
    "spending_as",
]

_ACTIVE = contextvars.ContextVar("dpsk_active_accountant", default=None)
# Accountants shadowed by nested ``with`` blocks, innermost last (per context).
_SHADOWED = contextvars.ContextVar("dpsk_shadowed_accountants", default=())

# Accountants inside a ``with`` block, per thread. Context variables do not reach the
# helper threads joblib dispatches tasks from (``pre_dispatch``): a clone made there
# must still find the accountant of the ``with`` block around the call.
_BY_THREAD: dict[int, list[object]] = {}
_BY_THREAD_LOCK = threading.Lock()

#: Private attribute under which ``DPEstimatorMixin.__sklearn_clone__`` binds the active
#: accountant onto a clone (never a parameter: ``get_params`` does not see it).
BOUND_ATTRIBUTE = "_dpsk_bound_accountant"


def active_accountant():
    """The accountant made active by the innermost ``with accountant:`` block, or None.

    Notes
    -----
    **Privacy.** The accountant returned here is the one that estimators and
    :mod:`dpsk.stats` functions with ``accountant=None`` check and charge. The
    ``with`` block is a context variable: threads and asyncio tasks do not see each
    other's accountants.
    """
    return _ACTIVE.get()


def _push(accountant):
    """Make ``accountant`` active (``with accountant:``), remembering the one it shadows."""
    _SHADOWED.set((*_SHADOWED.get(), _ACTIVE.get()))
    _ACTIVE.set(accountant)
    with _BY_THREAD_LOCK:
        _BY_THREAD.setdefault(threading.get_ident(), []).append(accountant)


def _pop():
    """Restore the accountant that was active before the matching :func:`_push`."""
    leaving = _ACTIVE.get()
    shadowed = _SHADOWED.get()
    _ACTIVE.set(shadowed[-1] if shadowed else None)
    _SHADOWED.set(shadowed[:-1])
    with _BY_THREAD_LOCK:
        stack = _BY_THREAD.get(threading.get_ident(), [])
        for i in range(len(stack) - 1, -1, -1):  # by identity: asyncio tasks may interleave
            if stack[i] is leaving:
                del stack[i]
                break
        if not stack:
            _BY_THREAD.pop(threading.get_ident(), None)


def accountant_for_clone():
    """The accountant a clone made now must remember (see ``DPEstimatorMixin.__sklearn_clone__``).

    The active accountant of this context; else, in a helper thread without one (such as
    joblib's dispatch thread), the single accountant inside a ``with`` block in this
    process.

    Raises
    ------
    RuntimeError
        If several threads are inside ``with`` blocks of different accountants: the
        clone's accountant would be a guess. Pass ``accountant=`` explicitly.
    """
    accountant = _ACTIVE.get()
    if accountant is not None or threading.current_thread() is threading.main_thread():
        # The main thread has its own context: a clone made there outside any `with`
        # block belongs to no accountant (not to a `with` block of another thread).
        return accountant
    with _BY_THREAD_LOCK:
        candidates = {id(stack[-1]): stack[-1] for stack in _BY_THREAD.values() if stack}
    if len(candidates) > 1:
        raise RuntimeError(
            "An estimator is being cloned in a thread without an active accountant while "
            "several threads are inside `with accountant:` blocks of different accountants; "
            "dpsk cannot tell which one the clone must spend on. Pass accountant=... to the "
            "estimator explicitly."
        )
    return next(iter(candidates.values()), None)


def accountant_in_play(accountant, bound=None, *, who="this release"):
    """``accountant`` if given, else the accountant of the innermost ``with`` block, else ``bound``.

    The one resolution order of estimators (:func:`resolve_accountant`), of the functions
    of :mod:`dpsk.stats` (which have no bound accountant) and of private searches, and
    the one place that enforces strict mode: with ``require_accountant=True`` (see
    :func:`dpsk.set_config`), finding no accountant raises
    :class:`~dpsk.exceptions.AccountantRequiredError`. Callers resolve their accountant
    before reading any data, so the refusal comes before any read.
    """
    if accountant is None:
        active = _ACTIVE.get()
        accountant = active if active is not None else bound
    if accountant is None and get_config()["require_accountant"]:
        raise AccountantRequiredError(
            f"Strict mode (dpsk.set_config(require_accountant=True)) is on and {who} has no "
            "accountant to spend on: pass accountant=... or fit inside `with accountant:`. "
            "Nothing was read or spent."
        )
    return accountant


def resolve_accountant(estimator):
    """The accountant ``estimator`` must check and spend on, or None.

    Notes
    -----
    **Privacy.** The order is: the estimator's ``accountant``, the accountant of the
    innermost ``with`` block, the accountant bound when the estimator was cloned.
    ``None`` means no budget is enforced: the fit's cost is kept only in
    ``privacy_spent_``, for the caller to compose.
    """
    return accountant_in_play(
        getattr(estimator, "accountant", None),
        getattr(estimator, BOUND_ATTRIBUTE, None),
        who=f"{type(estimator).__name__}.fit",
    )


# -- labels of spends ------------------------------------------------------------------

#: Private attribute under which a clone made inside a :func:`labelled_fit` scope keeps
#: its step path (a column transformer fits clones of its transformers).
PATH_ATTRIBUTE = "_dpsk_step_path"


class SpendLabel(NamedTuple):
    """What a spend is called in the ledger.

    Attributes
    ----------
    estimator : str or None
        Class name of the estimator (or search) that spent; None for a direct
        :meth:`BudgetAccountant.spend` or ``record``.
    step : str or None
        Its path inside a pipeline, as ``set_params`` spells it
        (``"columntransformer__num__standardscaler"``); None outside a pipeline.
    call : str
        The call that spent: ``"fit"``, ``"cross_val_score (5 folds)"``,
        ``"dpsk.stats.mean"``, ``"spend"``...

    See Also
    --------
    BudgetAccountant.to_frame : The ledger, one labelled row per spend.

    Notes
    -----
    **Privacy.** A label names the code that spent (class names, step names, calls):
    it holds no data. It is set by the spend path of estimators, statistics and
    searches, never by the released values.

    Examples
    --------
    >>> from dpsk.accounting import SpendLabel
    >>> str(SpendLabel("StandardScaler", "columntransformer__num__standardscaler", "fit"))
    'columntransformer__num__standardscaler (StandardScaler): fit'
    """

    estimator: str | None = None
    step: str | None = None
    call: str = "spend"

    def __str__(self):
        if self.step and self.estimator:
            who = f"{self.step} ({self.estimator})"
        else:
            who = self.step or self.estimator
        return f"{who}: {self.call}" if who else self.call

    @property
    def model(self):
        """The part that names the model (step and class), for per-model breakdowns."""
        if self.step and self.estimator:
            return f"{self.step} ({self.estimator})"
        return self.step or self.estimator or "direct spends"


class _Scope:
    """A labelled fit in progress: step paths by object id, the call, and what was spent."""

    def __init__(self, paths, call):
        self.paths = dict(paths)
        self.call = call
        self.spent = []


_SCOPE = contextvars.ContextVar("dpsk_spend_scope", default=None)
_LABEL = contextvars.ContextVar("dpsk_spend_label", default=None)


@contextlib.contextmanager
def labelled_fit(paths, call="fit"):
    """Name the DP steps of a composite fit: ``paths`` maps estimators to step paths.

    Yields the scope, whose ``spent`` lists ``(label, event, accountant)`` of every spend
    recorded inside it. Nested scopes (a pipeline inside a pipeline) keep the outer
    scope's paths and call: they are the full ones.
    """
    outer = _SCOPE.get()
    if outer is not None:
        for estimator, path in paths:
            outer.paths.setdefault(id(estimator), path)
        yield outer
        return
    token = _SCOPE.set(_Scope({id(estimator): path for estimator, path in paths}, call))
    try:
        yield _SCOPE.get()
    finally:
        _SCOPE.reset(token)


def step_path(estimator):
    """The step path of ``estimator`` in the labelled fit in progress (or kept by its clone)."""
    scope = _SCOPE.get()
    if scope is not None and id(estimator) in scope.paths:
        return scope.paths[id(estimator)]
    return vars(estimator).get(PATH_ATTRIBUTE) if hasattr(estimator, "__dict__") else None


def label_of(estimator, call=None):
    """The :class:`SpendLabel` of a spend by ``estimator`` now (``call`` default: the scope's, or "fit")."""
    scope = _SCOPE.get()
    if call is None:
        call = scope.call if scope is not None else "fit"
    return SpendLabel(type(estimator).__name__, step_path(estimator), call)


@contextlib.contextmanager
def spending_as(label):
    """Label the accountant checks and spends made inside the block with ``label``."""
    token = _LABEL.set(label)
    try:
        yield label
    finally:
        _LABEL.reset(token)


def current_label():
    """The label of a spend made now: set by :func:`spending_as`, else a direct spend."""
    label = _LABEL.get()
    if label is not None:
        return label
    scope = _SCOPE.get()
    return SpendLabel(call=scope.call if scope is not None else "spend")


def note_spent(label, event, accountant):
    """Tell the labelled fit in progress (if any) that ``event`` was recorded on ``accountant``."""
    scope = _SCOPE.get()
    if scope is not None:
        scope.spent.append((label, event, accountant))
