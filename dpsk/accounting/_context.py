# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Which accountant an estimator spends on.

Order: the estimator's ``accountant`` parameter; else the accountant made active with
``with accountant:`` (a context variable, so threads and asyncio tasks do not leak
accountants into each other); else the accountant that was active when the estimator
was *cloned* (so that clones sent to worker processes by ``n_jobs > 1``, where context
variables do not travel, still spend on it, or fail loudly if they cannot); else none
(the cost is still kept in ``privacy_spent_``).
"""

import contextvars
import threading

__all__ = ["accountant_for_clone", "active_accountant", "resolve_accountant"]

_ACTIVE = contextvars.ContextVar("dpsk_active_accountant", default=None)
# Accountants shadowed by nested ``with`` blocks, innermost last (per context).
_SHADOWED = contextvars.ContextVar("dpsk_shadowed_accountants", default=())

# Accountants inside a ``with`` block, per thread. Context variables do not reach the
# helper threads joblib dispatches tasks from (``pre_dispatch``): a clone made there
# must still find the accountant of the ``with`` block around the call.
_BY_THREAD = {}
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


def accountant_in_play(accountant, bound=None):
    """``accountant`` if given, else the accountant of the innermost ``with`` block, else ``bound``.

    The one resolution order of estimators (:func:`resolve_accountant`) and of the
    functions of :mod:`dpsk.stats` (which have no bound accountant).
    """
    if accountant is not None:
        return accountant
    active = _ACTIVE.get()
    return active if active is not None else bound


def resolve_accountant(estimator):
    """The accountant ``estimator`` must check and spend on, or None.

    Notes
    -----
    **Privacy.** The order is: the estimator's ``accountant``, the accountant of the
    innermost ``with`` block, the accountant bound when the estimator was cloned.
    ``None`` means no budget is enforced: the fit's cost is kept only in
    ``privacy_spent_``, for the caller to compose.
    """
    return accountant_in_play(getattr(estimator, "accountant", None), getattr(estimator, BOUND_ATTRIBUTE, None))
