# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Recording of every noise release, so tests can prove that a fit spent what it declared.

Every mechanism (and every estimator that draws noise from a kernel directly) calls
:func:`note_release` with the event of the release it just made. Inside
:func:`record_releases` those events are collected; outside, the call costs one
context-variable lookup.

Example (the check run on every estimator in tests/test_common.py)::

    with record_releases() as drawn:
        est.fit(X, y)
    assert sorted_leaves(drawn) == sorted_leaves([est.privacy_spent_])
"""

import contextlib
import contextvars

__all__ = ["note_release", "record_releases"]

_RECORDERS = contextvars.ContextVar("dpsk_release_recorders", default=())


def note_release(event):
    """Record that a release with privacy cost ``event`` was just made.

    Notes
    -----
    **Privacy.** Recording only: it neither checks nor spends a budget (that is
    :meth:`BudgetAccountant.record`). Every release of dpsk calls it exactly once
    with its event, so that the tests can compare the releases a fit makes with the
    cost it declares.
    """
    for recorder in _RECORDERS.get():
        recorder.append(event)


@contextlib.contextmanager
def record_releases():
    """Collect the events of all releases made inside the ``with`` block (this thread/context).

    Notes
    -----
    **Privacy.** Collects the events of :func:`note_release` calls for tests; it
    spends nothing and changes no release.
    """
    drawn = []
    token = _RECORDERS.set((*_RECORDERS.get(), drawn))
    try:
        yield drawn
    finally:
        _RECORDERS.reset(token)
