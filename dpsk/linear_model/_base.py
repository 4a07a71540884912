# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the linear models."""

from dpsk.accounting import ApproxDPEvent, PureDPEvent
from dpsk.utils.validation import check_privacy_params

__all__ = ["budget_event"]


def budget_event(epsilon, delta):
    """The whole budget (ε, δ) as one event, validated.

    A fit checks it on the accountant before reading the data: the detailed cost of the
    releases (which depends on the number of features and classes) is only known
    afterwards, and never exceeds it.
    """
    epsilon, delta = check_privacy_params(epsilon, delta)
    return PureDPEvent(epsilon) if delta == 0 else ApproxDPEvent(epsilon, delta)
