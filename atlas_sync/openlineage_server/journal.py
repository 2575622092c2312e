"""The journal: accepted events kept on disk until their job's sync has committed to Atlas.

An event is *accepted* (the endpoint answers 2xx) only once :meth:`Journal.append` has returned,
that is once a SQLite transaction holding it is committed in WAL mode with ``synchronous=FULL``
(the WAL is fsync'd before the commit returns). It leaves the journal in :meth:`Journal.settle`,
called after its job's sync committed (or after it was written to the dead-letter file). On start,
:meth:`Journal.pending` gives back what an earlier process left, oldest first.

Why SQLite rather than an fsync'd append-only file: a request's events commit together or not at
all; a torn last write is discarded by the WAL's checksums; settled events are deleted without
rewriting or compacting a log; a unique index recognises a re-delivered event; and it is in the
standard library. Concurrent requests share one commit (and one fsync): a writer thread commits
whatever is waiting at once ("group commit"), so durability costs one fsync per group, not per
request. Settles, which nobody waits for, ride along with the next append's commit (or commit alone
after ``SETTLE_LINGER``): they add no fsync of their own under load.

The journal also keeps, per job, the newest run it synced (:class:`Watermark`): an event older than
that, e.g. a producer re-sending an event after a timeout once the job moved on, is recognised and
not synced again.

:class:`MemoryJournal` has the same interface without a file (nothing survives the process); it
is what ``EndpointConfig(journal_path=None)`` uses, e.g. to measure the cost of durability.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar

log = logging.getLogger("atlas_sync.openlineage_server")

DEFAULT_MAX_BYTES = 1024**3
# seconds a settle (a delete nobody waits for) may wait to share an append's commit
SETTLE_LINGER = 0.1
_T = TypeVar("_T")


@dataclass(frozen=True)
class Entry:
    """One accepted event: ``id`` orders entries (journal row id, or e.g. a Kafka offset);
    ``received``: when it was accepted (epoch seconds; None when unknown, e.g. replayed)."""

    id: int
    event: dict[str, Any]
    size: int = 0
    received: float | None = None


@dataclass(frozen=True)
class Watermark:
    """The newest run of a job that was synced: its ``eventTime`` (as a sortable number) and run id."""

    time: float
    run_id: str | None


@dataclass(frozen=True)
class Appended:
    """What :meth:`Journal.append` kept: the new entries, and how many events were already held."""

    entries: list[Entry]
    duplicates: int


class JournalFull(Exception):
    """The journal holds its maximum of events or bytes: nothing of the request was kept."""


class JournalError(Exception):
    """The journal could not be written (disk full, I/O error): nothing of the request was kept."""


def event_key(event: dict[str, Any]) -> str:
    """The identity of an event for re-deliveries: a RunEvent is its job, run id, type and time
    (what a producer resends after a timeout); any other event is its canonical JSON."""
    run, job = event.get("run"), event.get("job")
    if isinstance(run, dict) and isinstance(job, dict) and run.get("runId") is not None:
        ident = json.dumps(
            [
                job.get("namespace"),
                job.get("name"),
                run.get("runId"),
                str(event.get("eventType") or "").upper(),
                event.get("eventTime"),
            ],
            ensure_ascii=False,
        )
    else:
        ident = json.dumps(event, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(ident.encode()).hexdigest()


def event_time(value: Any) -> float:
    """``eventTime`` as seconds since the epoch (``-inf`` when missing or unreadable)."""
    if isinstance(value, str):
        try:
            t = datetime.fromisoformat(value)
        except ValueError:
            return float("-inf")
        return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()
    return float("-inf")


def _encode(event: dict[str, Any]) -> bytes:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()


class Journal:
    """Interface shared by :class:`SqliteJournal` and :class:`MemoryJournal`.

    Thread-safe. ``append`` is called by request threads, ``settle`` by the sync worker.
    """

    path: Path | None = None
    max_events: int
    max_bytes: int
    commits: int = 0  # transactions committed (each one fsync): appends per commit = grouping

    def pending(self) -> list[Entry]:
        """Events held, oldest first (what a new process replays)."""
        raise NotImplementedError

    def append(self, events: Sequence[dict[str, Any]]) -> Appended:
        """Keep ``events`` (all of them or none). Returns once they are durable. Raises
        :class:`JournalFull` or :class:`JournalError`; then none was kept."""
        raise NotImplementedError

    def append_future(self, events: Sequence[dict[str, Any]]) -> Future[Appended]:
        """:meth:`append` without waiting: a future of its result (or of its exception), set once
        the events are durable (an event loop awaits it with ``asyncio.wrap_future``)."""
        fut: Future[Appended] = Future()
        try:
            fut.set_result(self.append(events))
        except Exception as exc:  # noqa: BLE001 - handed to the waiter
            fut.set_exception(exc)
        return fut

    def append_futures(self, batches: Sequence[Sequence[dict[str, Any]]]) -> list[Future[Appended]]:
        """:meth:`append_future` for several requests at once (each kept or refused alone)."""
        return [self.append_future(events) for events in batches]

    def settle(self, entries: Iterable[Entry], watermarks: dict[str, Watermark] | None = None) -> None:
        """Drop entries whose job's sync committed (or that were dead-lettered) and record the
        jobs' newest synced runs. May return before the deletes are on disk (see :meth:`flush`)."""
        raise NotImplementedError

    def watermark(self, job: str) -> Watermark | None:
        raise NotImplementedError

    def flush(self) -> None:
        """Wait until the settles so far are written (no-op without a file)."""

    @property
    def depth(self) -> int:
        """Events held."""
        raise NotImplementedError

    @property
    def bytes(self) -> int:
        """Bytes of the events held (their JSON)."""
        raise NotImplementedError

    def file_bytes(self) -> int:
        """Bytes on disk (database and WAL)."""
        return 0

    def close(self) -> None:
        pass


class MemoryJournal(Journal):
    """The journal's bounds, de-duplication and watermarks, in memory only (no durability)."""

    def __init__(self, max_events: int, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._next = 1
        self._held: dict[str, Entry] = {}
        self._keys: dict[int, str] = {}
        self._bytes = 0
        self._marks: dict[str, Watermark] = {}

    def pending(self) -> list[Entry]:
        with self._lock:
            return sorted(self._held.values(), key=lambda e: e.id)

    def append(self, events: Sequence[dict[str, Any]]) -> Appended:
        with self._lock:
            new: list[tuple[str, dict[str, Any], int]] = []
            seen: set[str] = set()
            for ev in events:
                key = event_key(ev)
                if key in self._held or key in seen:
                    continue
                seen.add(key)
                new.append((key, ev, len(_encode(ev))))
            size = sum(n for _, _, n in new)
            if len(self._held) + len(new) > self.max_events or self._bytes + size > self.max_bytes:
                raise JournalFull(_full_message(self.max_events, self.max_bytes))
            out = []
            now = time.time()
            for key, ev, n in new:
                entry = Entry(self._next, ev, n, now)
                self._next += 1
                self._held[key] = entry
                self._keys[entry.id] = key
                out.append(entry)
            self._bytes += size
            return Appended(out, len(events) - len(out))

    def settle(self, entries: Iterable[Entry], watermarks: dict[str, Watermark] | None = None) -> None:
        with self._lock:
            for e in entries:
                key = self._keys.pop(e.id, None)
                if key is not None and self._held.pop(key, None) is not None:
                    self._bytes -= e.size
            self._marks.update(watermarks or {})

    def watermark(self, job: str) -> Watermark | None:
        with self._lock:
            return self._marks.get(job)

    @property
    def depth(self) -> int:
        with self._lock:
            return len(self._held)

    @property
    def bytes(self) -> int:
        with self._lock:
            return self._bytes


@dataclass
class _Op:
    rows: list[tuple[str, bytes, dict[str, Any]]] | None = None  # append: (key, json, event)
    settle: list[Entry] | None = None
    marks: dict[str, Watermark] | None = None
    done: threading.Event = field(default_factory=threading.Event)
    result: Appended | None = None
    error: Exception | None = None
    future: Future[Appended] | None = None
    urgent: bool = True  # someone waits for its commit (append, flush); a settle does not

    def finish(self) -> None:
        if self.future is not None:
            if self.error is not None:
                self.future.set_exception(self.error)
            elif self.result is not None:
                self.future.set_result(self.result)
        self.done.set()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    job TEXT PRIMARY KEY,
    time REAL NOT NULL,
    run_id TEXT
);
"""


class SqliteJournal(Journal):
    """The durable journal (see the module docstring). One process at a time: a second one on the
    same file is refused (an exclusive lock on ``<path>.lock``, released by the kernel on a crash)."""

    def __init__(self, path: Path, max_events: int, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = Path(path)
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lockfile: IO[bytes] | None = open(str(self.path) + ".lock", "ab")  # noqa: SIM115
        try:
            fcntl.flock(self._lockfile.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lockfile.close()
            self._lockfile = None
            raise JournalError(f"journal {self.path} is in use by another process") from None
        try:
            self._conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(f"journal {self.path}: SQLite refused WAL mode ({mode})")
            self._conn.execute("PRAGMA synchronous=FULL")
            # the WAL is reused after each checkpoint; cap what it keeps on disk once a burst is over
            self._conn.execute("PRAGMA journal_size_limit=67108864")
            self._conn.executescript(_SCHEMA)
            _fsync_dir(self.path.parent)
            self._depth, self._bytes = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(body)), 0) FROM events"
            ).fetchone()
            self._marks = {
                job: Watermark(t, run)
                for job, t, run in self._conn.execute("SELECT job, time, run_id FROM jobs")
            }
            # ids keep growing across restarts (AUTOINCREMENT's counter survives deletes)
            (last,) = self._conn.execute(
                "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), "
                "COALESCE((SELECT MAX(id) FROM events), 0))"
            ).fetchone()
            self._next_id = int(last) + 1
        except sqlite3.Error as exc:
            self._release_lock()
            raise JournalError(f"cannot open journal {self.path}: {exc}") from None
        self._db = threading.Lock()  # the connection: the writer thread, and pending()
        self._cond = threading.Condition()  # the waiting ops and the figures below
        self._ops: list[_Op] = []
        self._urgent = 0  # of self._ops, those someone waits for
        self._lazy_since: float | None = None  # when the oldest waiting settle was submitted
        self._retry_settles: list[_Op] = []
        self._closed = False
        self._writer = threading.Thread(target=self._write_loop, name="openlineage-journal", daemon=True)
        self._writer.start()

    # -------------------------------------------------------------------------------- reads
    def pending(self) -> list[Entry]:
        with self._db:
            rows = self._conn.execute("SELECT id, body FROM events ORDER BY id").fetchall()
        return [Entry(int(i), json.loads(body), len(body)) for i, body in rows]

    def watermark(self, job: str) -> Watermark | None:
        with self._cond:
            return self._marks.get(job)

    @property
    def depth(self) -> int:
        with self._cond:
            return int(self._depth)

    @property
    def bytes(self) -> int:
        with self._cond:
            return int(self._bytes)

    def file_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.stat(str(self.path) + suffix).st_size
        return total

    # -------------------------------------------------------------------------------- writes
    def append(self, events: Sequence[dict[str, Any]]) -> Appended:
        rows = []
        for ev in events:
            rows.append((event_key(ev), _encode(ev), ev))
        op = _Op(rows=rows)
        self._submit(op)
        op.done.wait()
        if op.error is not None:
            raise op.error
        assert op.result is not None
        return op.result

    def append_future(self, events: Sequence[dict[str, Any]]) -> Future[Appended]:
        return self.append_futures([events])[0]

    def append_futures(self, batches: Sequence[Sequence[dict[str, Any]]]) -> list[Future[Appended]]:
        # one hand-over (one lock, one wake-up of the writer) for all of them
        ops = [
            _Op(rows=[(event_key(ev), _encode(ev), ev) for ev in events], future=Future())
            for events in batches
        ]
        self._submit(*ops)
        return [op.future for op in ops if op.future is not None]

    def settle(self, entries: Iterable[Entry], watermarks: dict[str, Watermark] | None = None) -> None:
        # Does not wait for the commit: a delete that is lost (crash, failed write) only means the
        # events are synced once more. The watermarks count at once (the sync did commit).
        op = _Op(settle=list(entries), marks=dict(watermarks or {}), urgent=False)
        with self._cond:
            self._marks.update(op.marks or {})
        self._submit(op)

    def flush(self) -> None:
        """Wait until every settle so far is committed (or failed and kept for a retry)."""
        op = _Op(settle=[])
        self._submit(op)
        op.done.wait()

    def _submit(self, *ops: _Op) -> None:
        with self._cond:
            if self._closed:
                for op in ops:
                    op.error = JournalError("the journal is closed")
                    op.finish()
                return
            self._ops.extend(ops)
            urgent = sum(op.urgent for op in ops)
            if urgent:
                self._urgent += urgent
                self._cond.notify_all()
            elif self._lazy_since is None:
                self._lazy_since = time.monotonic()
                self._cond.notify_all()  # the writer starts the settle's linger

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                # An append (or flush) is committed as soon as the writer is free, with every op
                # waiting by then. A settle alone waits up to SETTLE_LINGER for an append to ride
                # along with: under load settles cost no fsync of their own, and an append never
                # queues behind a settle's commit.
                while not self._closed and not self._urgent:
                    if self._lazy_since is None:
                        self._cond.wait()
                        continue
                    left = self._lazy_since + SETTLE_LINGER - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                if not self._ops and self._closed:
                    return
                ops, self._ops = self._ops, []
                self._urgent, self._lazy_since = 0, None
                retry, self._retry_settles = self._retry_settles, []
            # requests arriving during this commit (and its fsync) wait for the next one, together
            with self._db:
                figures = self._commit(retry + ops)
            with self._cond:
                if figures is not None:
                    self._depth, self._bytes = figures
                    self.commits += 1
                else:
                    self._retry_settles = [
                        _Op(settle=o.settle, marks=o.marks) for o in retry + ops if o.rows is None
                    ] + self._retry_settles
            for op in ops:
                op.finish()

    def _commit(self, ops: list[_Op]) -> tuple[int, int] | None:
        """One transaction for every waiting op (on the writer thread). Returns the new depth and
        bytes, or None when the transaction failed.

        A handful of statements per transaction whatever the number of ops: each statement gives
        the GIL away and waits to get it back while the sync worker computes.
        """
        with self._cond:
            depth, nbytes = self._depth, self._bytes
        conn = self._conn
        next_id = self._next_id
        try:
            conn.execute("BEGIN IMMEDIATE")
            settled = [e for op in ops if op.rows is None for e in op.settle or []]
            for chunk in _chunks(settled, 10_000):
                cur = conn.execute(
                    f"DELETE FROM events WHERE id IN ({','.join('?' * len(chunk))})", [e.id for e in chunk]
                )
                if cur.rowcount == len(chunk):
                    depth -= len(chunk)
                    nbytes -= sum(e.size for e in chunk)
                else:  # some were gone already: count again
                    depth, nbytes = conn.execute(
                        "SELECT COUNT(*), COALESCE(SUM(LENGTH(body)), 0) FROM events"
                    ).fetchone()
            marks: dict[str, Watermark] = {}
            for op in ops:
                marks.update(op.marks or {})
            for chunk_m in _chunks(list(marks.items()), 5_000):
                conn.execute(
                    "INSERT INTO jobs(job, time, run_id) VALUES "
                    + ",".join("(?, ?, ?)" for _ in chunk_m)
                    + " ON CONFLICT(job) DO UPDATE SET time = excluded.time, run_id = excluded.run_id",
                    [v for job, m in chunk_m for v in (job, m.time, m.run_id)],
                )
            appends = [op for op in ops if op.rows is not None]
            keys = [key for op in appends for key, _, _ in op.rows or []]
            held: set[str] = set()
            for chunk_k in _chunks(keys, 10_000):
                held.update(
                    k
                    for (k,) in conn.execute(
                        f"SELECT key FROM events WHERE key IN ({','.join('?' * len(chunk_k))})", chunk_k
                    )
                )
            rows: list[tuple[int, str, bytes]] = []
            now = time.time()
            for op in appends:
                new: list[Entry] = []
                fresh: list[tuple[int, str, bytes]] = []
                seen: set[str] = set()
                for key, body, ev in op.rows or []:
                    if key in held or key in seen:
                        continue
                    seen.add(key)
                    fresh.append((next_id + len(fresh), key, body))
                    new.append(Entry(next_id + len(new), ev, len(body), now))
                size = sum(e.size for e in new)
                if depth + len(new) > self.max_events or nbytes + size > self.max_bytes:
                    op.error = JournalFull(_full_message(self.max_events, self.max_bytes))
                    continue
                held.update(seen)
                rows.extend(fresh)
                next_id += len(fresh)
                depth += len(new)
                nbytes += size
                op.result = Appended(new, len(op.rows or []) - len(new))
            for chunk_r in _chunks(rows, 5_000):
                conn.execute(
                    "INSERT INTO events(id, key, body) VALUES " + ",".join("(?, ?, ?)" for _ in chunk_r),
                    [v for row in chunk_r for v in row],
                )
            conn.execute("COMMIT")
        except Exception as exc:  # noqa: BLE001 - sqlite3 or I/O errors; the writer must live on
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            log.error("journal %s: write failed: %s", self.path, exc)
            for op in ops:
                if op.rows is not None:
                    op.result = None
                    op.error = JournalError(f"journal {self.path} cannot be written: {exc}")
            return None
        self._next_id = next_id
        return depth, nbytes

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._writer.join(10)
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        self._release_lock()

    def _release_lock(self) -> None:
        if self._lockfile is not None:
            self._lockfile.close()  # closing releases the flock
            self._lockfile = None


def _chunks(items: list[_T], size: int) -> list[list[_T]]:
    # SQLite takes at most 32,766 bound values per statement
    return [items[i : i + size] for i in range(0, len(items), size)]


def _full_message(max_events: int, max_bytes: int) -> str:
    return f"journal full ({max_events} events or {max_bytes} bytes held until synced)"


def _fsync_dir(path: Path) -> None:
    # the journal files' directory entries must survive a power loss too
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def open_journal(path: Path | None, max_events: int, max_bytes: int = DEFAULT_MAX_BYTES) -> Journal:
    """A :class:`SqliteJournal` at ``path``, or a :class:`MemoryJournal` when ``path`` is None."""
    if path is None:
        return MemoryJournal(max_events, max_bytes)
    return SqliteJournal(path, max_events, max_bytes)
