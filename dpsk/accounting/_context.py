# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Which accountant an estimator spends on.

Order: the estimator's ``accountant`` parameter, else the accountant made active with
``with accountant:`` (a context variable, so threads and asyncio tasks do not leak
accountants into each other), else none (the cost is still kept in ``privacy_spent_``).
"""

import contextvars

__all__ = ["active_accountant", "resolve_accountant"]

_ACTIVE = contextvars.ContextVar("dpsk_active_accountant", default=None)


def active_accountant():
    """The accountant made active by the innermost ``with accountant:`` block, or None."""
    return _ACTIVE.get()


def _activate(accountant):
    """Make ``accountant`` active; returns a token for :func:`_deactivate`."""
    return _ACTIVE.set(accountant)


def _deactivate(token):
    _ACTIVE.reset(token)


def resolve_accountant(estimator):
    """The accountant ``estimator`` must check and spend on, or None."""
    accountant = getattr(estimator, "accountant", None)
    if accountant is not None:
        return accountant
    return _ACTIVE.get()
