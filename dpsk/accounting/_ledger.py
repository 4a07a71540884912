# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Where a :class:`~dpsk.accounting.BudgetAccountant` keeps its spends.

* :class:`MemoryLedger` — this process only; a lock makes check-and-spend atomic across
  threads. A copy that reaches another process (pickling for ``n_jobs > 1``, or a fork)
  refuses to spend: the spend would be lost when the worker exits.
* :class:`SQLiteLedger` — a file (standard library ``sqlite3``): survives restarts and is
  shared by processes. Check-and-spend runs inside ``BEGIN IMMEDIATE`` (one writer at a
  time), after reading the spends other processes committed since the last look, so
  concurrent spends can never jointly exceed the budget.
* :class:`DetachedLedger` — what an in-memory accountant becomes in another process.

Each ledger keeps the events in order, with what each spend is called and when it was
recorded (``entries``: a :class:`~dpsk.accounting._context.SpendLabel` and a UNIX time
per event), and a :class:`~dpsk.accounting._composition.LedgerState`
of running aggregates, so a spend costs O(1) whatever the ledger's length.
"""

import collections
import contextlib
import dataclasses
import json
import math
import os
import sqlite3
import threading
import time

from dpsk.accounting import _events
from dpsk.accounting._composition import LedgerState
from dpsk.accounting._context import SpendLabel
from dpsk.accounting._events import SelfComposedEvent
from dpsk.exceptions import DetachedAccountantError

__all__ = ["DetachedLedger", "MemoryLedger", "SQLiteLedger", "event_from_json", "event_to_json"]

_EVENT_TYPES = {name: getattr(_events, name) for name in _events.__all__ if name != "PrivacyEvent"}
_FORMAT = 1


# ----------------------------------------------------------------------------------------
# Serialisation (for the SQLite file): events as JSON, floats round-trip exactly
# ----------------------------------------------------------------------------------------


def _to_plain(value):
    if isinstance(value, _events.PrivacyEvent):
        name = type(value).__name__
        if _EVENT_TYPES.get(name) is not type(value):
            raise TypeError(
                f"{name} cannot be stored in a persistent ledger; describe it with an RDPEvent or a PrivacyProfileEvent"
            )
        fields = {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"type": name, **fields}
    if isinstance(value, tuple):
        return [_to_plain(v) for v in value]
    return value


def _from_plain(value):
    if isinstance(value, dict):
        kwargs = {k: _from_plain(v) for k, v in value.items() if k != "type"}
        return _EVENT_TYPES[value["type"]](**kwargs)
    if isinstance(value, list):
        return tuple(_from_plain(v) for v in value)
    return value


def event_to_json(event):
    """The JSON text of ``event`` (exact: Python floats round-trip through ``repr``)."""
    return json.dumps(_to_plain(event), separators=(",", ":"))


def event_from_json(text):
    """The event stored by :func:`event_to_json`."""
    return _from_plain(json.loads(text))


def label_to_json(label):
    """The JSON text of a :class:`SpendLabel`."""
    return json.dumps(label._asdict(), separators=(",", ":"))


def label_from_json(text):
    """The label stored by :func:`label_to_json`; a row written before labels existed: unlabelled."""
    if text is None:
        return SpendLabel(call="(not recorded)")
    fields = json.loads(text)
    return SpendLabel(**{name: fields.get(name) for name in SpendLabel._fields if name in fields})


# ----------------------------------------------------------------------------------------
# Ledgers
# ----------------------------------------------------------------------------------------


class MemoryLedger:
    """Spends of this process, in memory."""

    persistent = False

    def __init__(self):
        self.events = []
        self.entries = []
        self._state = LedgerState()
        self._pending = []
        self._lock = threading.RLock()
        self._pid = os.getpid()

    @property
    def state(self):
        """The running aggregates, brought up to date with unchecked spends first."""
        if self._pending:
            # Repeated identical spends are folded in as one self-composition.
            for event, count in collections.Counter(self._pending).items():
                self._state.apply(event if count == 1 else SelfComposedEvent(event, count))
            self._pending.clear()
        return self._state

    @contextlib.contextmanager
    def transaction(self, write=False):
        """Exclusive access to ``events`` and ``state`` (consistent for the whole block)."""
        if os.getpid() != self._pid:
            raise DetachedAccountantError(_detached_message("was inherited by a forked process"))
        with self._lock:
            yield self

    def append(self, event, label):
        """Record ``event`` (already applied to ``state``); call inside a write transaction."""
        self.events.append(event)
        self.entries.append((label, time.time()))

    def append_unchecked(self, event, label):
        """Record ``event`` without checking it (no budget to check against): O(1).

        It is folded into ``state`` the next time the state is needed.
        """
        if os.getpid() != self._pid:
            raise DetachedAccountantError(_detached_message("was inherited by a forked process"))
        with self._lock:
            self.events.append(event)
            self.entries.append((label, time.time()))
            self._pending.append(event)


class DetachedLedger:
    """An in-memory accountant that reached another process: it refuses every operation."""

    persistent = False

    @contextlib.contextmanager
    def transaction(self, write=False):
        raise DetachedAccountantError(_detached_message("was copied into another process"))
        yield  # pragma: no cover


def _detached_message(how):
    return (
        f"This in-memory BudgetAccountant {how} (for example by n_jobs > 1 with the loky or "
        "multiprocessing backend): a spend recorded here would be lost when the worker exits, "
        "so nothing was spent and nothing was released. Use a persistent accountant shared by "
        "all processes, BudgetAccountant(..., path='budget.sqlite'), or run with n_jobs=1 (or "
        "the threading backend)."
    )


class SQLiteLedger:
    """Spends in an SQLite file, shared by every process that opens it."""

    persistent = True

    def __init__(self, path, budget, *, timeout=120.0):
        # Absolute from the start: a relative path would be reopened relative to the working
        # directory of whoever unpickles the accountant (a worker, a later session), where
        # it silently created a fresh ledger with the whole budget.
        self.path = os.path.abspath(os.fspath(path))
        self.timeout = float(timeout)
        self._reset()
        self._dirty = False
        self._lock = threading.RLock()
        self._conn = None
        self._pid = None
        self.budget = self._init_file(budget)

    # -- connection -------------------------------------------------------------------------

    def _connection(self):
        if self._conn is None or self._pid != os.getpid():
            # A connection must not cross a fork: the child opens its own.
            self._conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
            self._pid = os.getpid()
        return self._conn

    def _init_file(self, budget):
        """Create the tables, or check that ``budget`` matches the one stored in the file.

        ``budget`` is (epsilon, delta, slack), or None to adopt the stored budget. Returns
        the budget in force.
        """
        conn = self._connection()
        with self._write(conn):
            conn.execute(
                "CREATE TABLE IF NOT EXISTS dpsk_budget (id INTEGER PRIMARY KEY CHECK (id = 1), "
                "epsilon TEXT NOT NULL, delta TEXT NOT NULL, slack TEXT NOT NULL, format INTEGER NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS dpsk_spends (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                "event TEXT NOT NULL, recorded_at REAL NOT NULL, label TEXT)"
            )
            # Files written before spends had labels: add the (nullable) column. Older dpsk
            # versions still read and write such a file (they name the columns they use).
            columns = {row[1] for row in conn.execute("PRAGMA table_info(dpsk_spends)")}
            if "label" not in columns:
                conn.execute("ALTER TABLE dpsk_spends ADD COLUMN label TEXT")
            row = conn.execute("SELECT epsilon, delta, slack, format FROM dpsk_budget WHERE id = 1").fetchone()
            if row is None:
                if budget is None:
                    budget = (math.inf, 1.0, 0.0)
                conn.execute(
                    "INSERT INTO dpsk_budget VALUES (1, ?, ?, ?, ?)", (*(repr(float(b)) for b in budget), _FORMAT)
                )
                return tuple(float(b) for b in budget)
            stored = tuple(float(v) for v in row[:3])
            if row[3] > _FORMAT:
                raise ValueError(f"{self.path} was written by a newer dpsk (ledger format {row[3]})")
            if budget is not None and tuple(float(b) for b in budget) != stored:
                raise ValueError(
                    f"the ledger {self.path} holds the budget (epsilon={stored[0]}, delta={stored[1]}, "
                    f"slack={stored[2]}); open it with the same values, or with none to use them"
                )
            return stored

    @contextlib.contextmanager
    def _write(self, conn):
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # -- ledger interface -------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self, write=False):
        """Exclusive, up-to-date access; a write transaction holds the file's write lock."""
        with self._lock:
            conn = self._connection()
            if write:
                conn.execute("BEGIN IMMEDIATE")
                self._dirty = False
                try:
                    self._sync(conn)
                    yield self
                    conn.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                    if self._dirty:  # the in-memory view holds a spend that was not committed
                        self._reset()
                    raise
            else:
                conn.execute("BEGIN")
                try:
                    self._sync(conn)
                finally:
                    conn.execute("COMMIT")
                yield self

    def _sync(self, conn):
        """Apply the spends committed (by any process) since the last look."""
        rows = conn.execute(
            "SELECT id, event, label, recorded_at FROM dpsk_spends WHERE id > ? ORDER BY id", (self._last_id,)
        ).fetchall()
        for row_id, text, label, recorded_at in rows:
            event = event_from_json(text)
            self.state.apply(event)
            self.events.append(event)
            self.entries.append((label_from_json(label), recorded_at))
            self._last_id = row_id

    def _reset(self):
        self.events = []
        self.entries = []
        self.state = LedgerState()
        self._last_id = 0

    def append(self, event, label):
        """Record ``event`` (already applied to ``state``); call inside a write transaction."""
        self._dirty = True
        now = time.time()
        cursor = self._conn.execute(
            "INSERT INTO dpsk_spends (event, recorded_at, label) VALUES (?, ?, ?)",
            (event_to_json(event), now, label_to_json(label)),
        )
        self.events.append(event)
        self.entries.append((label, now))
        self._last_id = cursor.lastrowid

    def has_spends(self):
        with self.transaction():
            return bool(self.events)
