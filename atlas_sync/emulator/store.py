"""SQLite persistence of the emulator: typedefs, entities and relationships.

One connection, one writer at a time: every request runs inside :meth:`Store.transaction`, which holds a
lock and commits only if the request succeeded (Atlas's ``@GraphTransaction``: any error rolls the whole
request back). JSON documents live in TEXT columns; the columns that are queried have indexes.
"""

from __future__ import annotations

import atexit
import contextlib
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS typedefs (
    name TEXT PRIMARY KEY, guid TEXT NOT NULL UNIQUE, category TEXT NOT NULL, body TEXT NOT NULL,
    builtin INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS entities (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    guid TEXT NOT NULL UNIQUE, type_name TEXT NOT NULL, qualified_name TEXT, status TEXT NOT NULL,
    attrs TEXT NOT NULL, created_by TEXT, updated_by TEXT, create_time INTEGER, update_time INTEGER,
    version INTEGER NOT NULL DEFAULT 0, extra TEXT);
CREATE INDEX IF NOT EXISTS entities_type_qn ON entities (type_name, qualified_name, status);
CREATE INDEX IF NOT EXISTS entities_status ON entities (status);
CREATE TABLE IF NOT EXISTS relationships (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    guid TEXT NOT NULL UNIQUE, type_name TEXT NOT NULL, end1 TEXT NOT NULL, end2 TEXT NOT NULL,
    status TEXT NOT NULL, created_by TEXT, create_time INTEGER, update_time INTEGER);
CREATE INDEX IF NOT EXISTS relationships_end1 ON relationships (end1, type_name);
CREATE INDEX IF NOT EXISTS relationships_end2 ON relationships (end2, type_name);
CREATE INDEX IF NOT EXISTS relationships_type ON relationships (type_name);
"""


# Changes before the planner's statistics are first gathered (and the size of a database gathered at open)
STATS_MIN_CHANGES = 10_000


# Connections still open when the process exits are closed then, even those only a reference cycle
# holds (the CLI leaves what a command allocated to the OS): their write-ahead log is checkpointed into
# the file and removed, as when a store is closed. (Connections, not stores: the emulator's repository
# keeps a store's connection after the store object itself is gone.)
class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced (``sqlite3.Connection`` cannot)."""


_OPEN: weakref.WeakSet[_Connection] = weakref.WeakSet()


def _close_open_connections() -> None:
    for conn in list(_OPEN):
        with contextlib.suppress(sqlite3.Error):
            conn.close()


atexit.register(_close_open_connections)


class Store:
    """The emulator's database. ``path=None`` keeps everything in memory (lost on close)."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            target = ":memory:"
        else:
            p = Path(path)
            if p.is_dir() or (not p.is_file() and p.suffix.lower() not in (".db", ".sqlite", ".sqlite3")):
                p.mkdir(parents=True, exist_ok=True)
                p = p / "atlas.db"  # same file the embedded client uses (embedded_client)
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
            target = str(p)
        self.path = target
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so a whole request is one transaction.
        self.conn = sqlite3.connect(
            target, check_same_thread=False, isolation_level=None, factory=_Connection
        )
        _OPEN.add(self.conn)  # (closed at exit: _close_open_connections)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA foreign_keys=OFF")
        # another process (e.g. `emulator serve` and an embedded client on the same file) may hold the lock
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.execute("PRAGMA cache_size=-65536")  # 64 MB of pages: lookups stay in memory
        if target != ":memory:":
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        self.lock = threading.RLock()
        self._depth = 0
        self._stats_at = 0  # total_changes at the last ANALYZE
        if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone():
            self.analyze_if_big()  # a database written before statistics were kept

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Hold the writer lock and run one transaction; roll back on any exception."""
        with self.lock:
            if self._depth:
                # nested use (a helper inside a request) joins the outer transaction
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self._depth = 1
            # IMMEDIATE: take the write lock up front, so two processes never deadlock upgrading a read lock
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")
                self._keep_statistics()
            finally:
                self._depth = 0

    def analyze(self) -> None:
        """Gather the query planner's statistics (row counts per index key)."""
        with self.lock:
            self.conn.execute("ANALYZE")
            self._stats_at = self.conn.total_changes

    def analyze_if_big(self) -> None:
        """:meth:`analyze` where the entities are many enough for the planner's choice to matter."""
        if (self.conn.execute("SELECT max(rowid) FROM entities").fetchone()[0] or 0) >= STATS_MIN_CHANGES:
            self.analyze()

    def _keep_statistics(self) -> None:
        # Atlas's index always knows how selective a term is; SQLite knows only from ANALYZE. Without
        # it a search AND-ing a big domain's key with a few names walks the domain (2.7 s at 1.25 M
        # entities instead of 0.3). Again each time the changes since the last one double it.
        if self.conn.total_changes - self._stats_at >= max(STATS_MIN_CHANGES, self._stats_at):
            self.analyze()

    def data_version(self) -> int:
        """Changes whenever another connection (another process) commits to the same database file."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def close(self) -> None:
        with self.lock:
            self.conn.close()
