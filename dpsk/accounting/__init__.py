# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy accounting: immutable privacy events and the accountants that compose them."""

from dpsk.accounting._context import active_accountant, resolve_accountant
from dpsk.accounting._events import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    PrivacyEvent,
    PureDPEvent,
    SelfComposedEvent,
)
from dpsk.accounting._recording import note_release, record_releases

__all__ = [
    "ApproxDPEvent",
    "ComposedEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "ParallelEvent",
    "PrivacyEvent",
    "PureDPEvent",
    "SelfComposedEvent",
    "active_accountant",
    "note_release",
    "record_releases",
    "resolve_accountant",
]
