"""The OpenLineage endpoint: validate, journal, batch per job, sync, retry, settle.

Life of an event:

1. ``POST /api/v1/lineage`` with one event (or a JSON array of events, gzip allowed) and, when an
   API key is configured, ``Authorization: Bearer <key>``;
2. each event is checked against the spec subset atlas-sync reads; a bad one rejects the request
   (400, nothing kept);
3. the request's events are committed to the journal (:mod:`.journal`: SQLite, WAL,
   ``synchronous=FULL``) - all or none - and only then is the answer 201; a full journal (more than
   ``queue_size`` events or ``journal_max_bytes`` held) or one that cannot be written (disk full,
   I/O error) answers 503 with ``Retry-After`` (the openlineage-python transport retries 503 by
   default): an event is never answered 2xx unless it is on disk; an event already held (a producer
   re-sending after a timeout) is answered 201 again and kept once;
4. the worker takes up to ``batch_max`` events, and :class:`~.jobsync.JobSyncer` syncs them per
   job (latest run per job, retries with backoff, dead-letter file);
5. an event leaves the journal once its job's sync committed (or it was skipped or dead-lettered);
   after a crash, the next start queues what the journal holds before it accepts requests.

On stop (SIGTERM in the CLI) the endpoint stops accepting and drains for up to ``drain_timeout``
seconds; whatever is left simply stays in the journal.

This module is the HTTP-independent core; :mod:`.server` serves it over HTTP (an ASGI app on
uvicorn) and :mod:`.metrics` exposes its figures to Prometheus.
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas_sync.errors import AtlasSyncError, InputError
from atlas_sync.lineage.openlineage import NamespaceMap, validate_event
from atlas_sync.openlineage_server.counters import Counters
from atlas_sync.openlineage_server.jobsync import JobSyncer, SyncFn, latest_run
from atlas_sync.openlineage_server.journal import (
    DEFAULT_MAX_BYTES,
    Appended,
    Entry,
    Journal,
    JournalError,
    JournalFull,
    open_journal,
)
from atlas_sync.openlineage_server.metrics import EndpointMetrics, endpoint_metrics
from atlas_sync.openlineage_server.queue import EventQueue

log = logging.getLogger("atlas_sync.openlineage_server")

__all__ = ["Counters", "EndpointConfig", "LineageEndpoint", "ProbeFn", "SyncFn", "latest_run"]

ProbeFn = Callable[[], None]  # raises when Atlas cannot take writes (unreachable, not ACTIVE)
Answer = tuple[int, dict[str, str], dict[str, Any]]  # status, extra headers, JSON body


@dataclass
class EndpointConfig:
    """Tuning of the endpoint. ``api_key`` is never shown in ``repr``.

    ``journal_path=None`` keeps accepted events in memory only (nothing survives the process).
    """

    queue_size: int = 10_000  # events accepted and not yet synced (memory and journal)
    api_key: str | None = field(default=None, repr=False)
    event_types: tuple[str, ...] = ("COMPLETE",)
    namespace_map: NamespaceMap | None = None
    lenient_events: bool = False  # accept events without eventTime, runIds that are not UUIDs
    batch_max: int = 10_000  # a batch takes everything queued: fewer syncs under load
    linger: float = 0.05  # seconds to wait for more events to fill a batch
    retry_base: float = 0.5
    retry_max: float = 30.0
    max_attempts: int = 8  # then the events go to the dead-letter file
    journal_path: Path | None = Path(".atlas-sync/openlineage-journal.sqlite")
    journal_max_bytes: int = DEFAULT_MAX_BYTES
    dead_letter_path: Path = Path(".atlas-sync/openlineage-dead-letter.jsonl")
    drain_timeout: float = 30.0
    max_body_bytes: int = 16 * 1024 * 1024
    retry_after: int = 1  # seconds, in 503 answers
    probe_interval: float = 2.0  # seconds between two checks that Atlas is reachable (GET /ready)


class LineageEndpoint:
    """The HTTP-independent core: ``submit`` a request body, a worker thread syncs.

    ``sync(graph, job)`` publishes one job's lineage (``Publisher(...).sync``); it runs on the
    worker thread only, one job at a time. ``probe()`` (optional) raises when Atlas cannot take
    writes; it runs every ``probe_interval`` seconds on a thread of its own, for :meth:`ready`.
    ``prometheus`` holds the endpoint's own Prometheus registry (``GET /metrics``), with the Atlas
    client's request counters when ``atlas_stats()`` gives them (``AtlasClient.stats``).
    """

    def __init__(
        self,
        sync: SyncFn,
        config: EndpointConfig | None = None,
        *,
        probe: ProbeFn | None = None,
        atlas_stats: Callable[[], Any] | None = None,
    ) -> None:
        self.sync = sync
        self.config = config or EndpointConfig()
        self.probe = probe
        self.prometheus = EndpointMetrics()
        endpoint_metrics(self.prometheus, self.metrics, lambda: bool(self.ready()["ready"]), atlas_stats)
        self.queue: EventQueue[Entry] = EventQueue()
        self.counters = Counters()
        self.journal: Journal | None = None
        self._accepting = False
        self._stop = threading.Event()  # stop requested
        self._worker: threading.Thread | None = None
        self._prober: threading.Thread | None = None
        self._atlas: tuple[bool, str | None] = (probe is None, None)  # (reachable, why not)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Open the journal, queue what it holds (events an earlier process accepted and did not
        sync), start the worker, then accept requests. Raises :class:`JournalError` when the
        journal cannot be opened (e.g. another process uses it)."""
        c = self.config
        journal = open_journal(c.journal_path, c.queue_size, c.journal_max_bytes)
        self.journal = journal
        held = journal.pending()
        if held:
            self.queue.put(held)
            self.counters.add(replayed=len(held))
            log.info("replaying %d events from the journal %s", len(held), c.journal_path)
        self._stop.clear()
        syncer = JobSyncer(
            self.sync,
            dead_letter_path=c.dead_letter_path,
            counters=self.counters,
            stop=self._stop,
            watermark=journal.watermark,
            event_types=c.event_types,
            namespace_map=c.namespace_map,
            retry_base=c.retry_base,
            retry_max=c.retry_max,
            max_attempts=c.max_attempts,
            observer=self.prometheus,
        )
        self._worker = threading.Thread(
            target=self._run, args=(syncer, journal), name="openlineage-sync", daemon=True
        )
        self._worker.start()
        if self.probe is not None:
            self._probe_once()  # /ready is right from the first request
            self._prober = threading.Thread(target=self._probe_loop, name="openlineage-probe", daemon=True)
            self._prober.start()
        self._accepting = True

    def stop(self, *, drain: bool = True, timeout: float | None = None) -> int:
        """Stop accepting; wait until every accepted event is synced (up to ``timeout``, default
        ``drain_timeout``). Returns the number of events left in the journal for the next start
        (with no journal file: lost)."""
        self._accepting = False
        deadline = time.monotonic() + (self.config.drain_timeout if timeout is None else timeout)
        journal = self.journal
        if drain and journal is not None:
            while journal.depth and time.monotonic() < deadline and self._worker_alive():
                time.sleep(0.02)
        self._stop.set()
        self.queue.wake()
        if self._worker is not None:
            self._worker.join(max(0.0, deadline - time.monotonic()) + 0.5)
        left = 0
        if journal is not None:
            left = journal.depth
            journal.close()
            if left and journal.path is not None:
                log.warning(
                    "%d unsynced events stay in the journal %s for the next start", left, journal.path
                )
            elif left:
                log.warning("%d unsynced events lost (no journal file)", left)
        return left

    def _worker_alive(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    @property
    def accepting(self) -> bool:
        return self._accepting

    def metrics(self) -> dict[str, Any]:
        m = self.counters.to_json()
        m["queue_depth"] = len(self.queue)
        j = self.journal
        m["journal"] = str(j.path) if j is not None and j.path is not None else None
        m["journal_depth"] = j.depth if j is not None else 0
        m["journal_bytes"] = j.bytes if j is not None else 0
        m["journal_file_bytes"] = j.file_bytes() if j is not None else 0
        m["journal_commits"] = j.commits if j is not None else 0
        return m

    def ready(self) -> dict[str, Any]:
        """Whether a load balancer should send events here: accepting, the journal open, the
        worker alive, Atlas reachable (the last probe) and the backlog below its bound."""
        reasons = []
        journal = self.journal
        if not self._accepting or journal is None:
            reasons.append("not accepting (starting or stopping)")
        elif not self._worker_alive():
            reasons.append("the sync worker is down")
        atlas_ok, why = self._atlas
        if not atlas_ok:
            reasons.append(f"Atlas unreachable: {why}")
        if journal is not None and (
            journal.depth >= self.config.queue_size or journal.bytes >= self.config.journal_max_bytes
        ):
            reasons.append("the journal is full")
        return {
            "ready": not reasons,
            "reasons": reasons,
            "atlas": "unchecked" if self.probe is None else "reachable" if atlas_ok else "unreachable",
            "journal_depth": journal.depth if journal is not None else 0,
            "queue_size": self.config.queue_size,
        }

    def _probe_once(self) -> None:
        assert self.probe is not None
        try:
            self.probe()
        except Exception as exc:  # noqa: BLE001 - any failure means "not ready", with the reason
            msg = str(exc) if isinstance(exc, AtlasSyncError) else f"{type(exc).__name__}: {exc}"
            if self._atlas[0]:
                log.warning("Atlas is unreachable: %s", msg)
            self._atlas = (False, msg)
        else:
            if not self._atlas[0]:
                log.info("Atlas is reachable again")
            self._atlas = (True, None)

    def _probe_loop(self) -> None:
        while not self._stop.wait(self.config.probe_interval):
            self._probe_once()

    def health(self) -> dict[str, Any]:
        m = self.metrics()
        status = "ok"
        if not self._accepting:
            status = "stopping"
        elif not self._worker_alive():
            status = "worker-down"
        elif m["journal_depth"] >= self.config.queue_size:
            status = "full"
        return {"status": status, **m}

    # ------------------------------------------------------------------ requests
    def precheck(self, headers: Mapping[str, str]) -> Answer | None:
        """What can be answered from a request's headers alone (wrong API key, stopping, a
        Content-Type or Content-Encoding not read): the answer, before any body is read; else None."""
        return self._precheck({k.lower(): v for k, v in headers.items()})

    def _precheck(self, h: Mapping[str, str]) -> Answer | None:
        refuse = self.counters.refuse
        if self.config.api_key is not None:
            auth = h.get("authorization", "")
            scheme, _, token = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                token.strip().encode(), self.config.api_key.encode()
            ):
                refuse("unauthorized")
                return 401, {"WWW-Authenticate": "Bearer"}, {"error": "missing or wrong API key"}
        retry = {"Retry-After": str(self.config.retry_after)}
        journal = self.journal
        if not self._accepting or journal is None:
            refuse("stopping")
            return 503, retry, {"error": "shutting down"}
        ctype = h.get("content-type", "").split(";", 1)[0].strip().lower()
        if ctype and ctype != "application/json" and not ctype.endswith("+json"):
            refuse("unsupported_media_type")
            return 415, {}, {"error": f"unsupported Content-Type {ctype!r} (send application/json)"}
        encoding = h.get("content-encoding", "identity").lower().strip()
        if encoding not in ("", "identity", "gzip", "deflate"):
            refuse("unsupported_encoding")
            return 415, {}, {"error": f"unsupported Content-Encoding {encoding!r} (gzip, deflate)"}
        return None

    def submit(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        """Handle one ``POST /api/v1/lineage``: (status, extra headers, JSON answer)."""
        events = self.prepare(body, headers)
        if isinstance(events, tuple):
            return events
        journal = self.journal
        if journal is None:
            return self.journal_refused(JournalError("the journal is closed"), len(events))
        try:
            kept = journal.append(events)
        except (JournalFull, JournalError) as exc:
            return self.journal_refused(exc, len(events))
        return self.accepted(kept, len(events))

    def prepare(self, body: bytes, headers: Mapping[str, str]) -> Answer | list[dict[str, Any]]:
        """All of :meth:`submit` but the journal append: the answer when the request is refused
        (or empty), else its events, validated, for ``journal.append`` (then :meth:`accepted`
        or :meth:`journal_refused`)."""
        h = {k.lower(): v for k, v in headers.items()}
        early = self._precheck(h)
        if early is not None:
            return early
        refuse = self.counters.refuse
        encoding = h.get("content-encoding", "identity").lower().strip()
        try:
            if encoding == "gzip":
                body = _bounded_decompress(body, self.config.max_body_bytes, gzip_=True)
            elif encoding == "deflate":
                body = _bounded_decompress(body, self.config.max_body_bytes, gzip_=False)
        except _TooLarge:
            refuse("too_large")
            return 413, {}, {"error": too_large_message(self.config.max_body_bytes)}
        except (OSError, EOFError, zlib.error):
            refuse("bad_compression")
            return 400, {}, {"error": "body is not valid compressed data"}
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            refuse("invalid_json")
            return 400, {}, {"error": f"invalid JSON: {getattr(exc, 'msg', str(exc))}"}
        except RecursionError:
            refuse("invalid_json")
            return 400, {}, {"error": "JSON nested too deeply"}
        events = data if isinstance(data, list) else [data]
        if not events:
            return 200, {}, {"accepted": 0}
        for i, ev in enumerate(events):
            try:
                validate_event(
                    ev,
                    path=f"$[{i}]" if isinstance(data, list) else "$",
                    lenient_events=self.config.lenient_events,
                )
            except InputError as exc:
                refuse("invalid_event", len(events))
                return 400, {}, {"error": str(exc), "path": exc.path}
        return events

    def accepted(self, kept: Appended, n: int) -> Answer:
        """The answer to a request whose ``n`` events the journal kept; queues them for the worker."""
        self.queue.put(kept.entries)
        self.counters.add(accepted=len(kept.entries), duplicates=kept.duplicates)
        answer: dict[str, Any] = {"accepted": n}
        if kept.duplicates:
            answer["duplicates"] = kept.duplicates
        return 201, {}, answer

    def journal_refused(self, exc: Exception, n: int) -> Answer:
        """The answer to a request of ``n`` events the journal refused (full, or not writable)."""
        retry = {"Retry-After": str(self.config.retry_after)}
        if isinstance(exc, JournalFull):
            self.counters.refuse("journal_full", n, rejected_full=n)
            return 503, retry, {"error": f"{exc}, retry later", "queue_size": self.config.queue_size}
        self.counters.error(str(exc))
        self.counters.refuse("journal_error", n, journal_errors=1)
        return 503, retry, {"error": "the journal cannot be written, retry later"}

    # ------------------------------------------------------------------ worker
    def _run(self, syncer: JobSyncer, journal: Journal) -> None:
        while not self._stop.is_set():
            batch = self.queue.take(self.config.batch_max, timeout=0.2, linger=self.config.linger)
            if batch and not syncer.process(batch, journal.settle):
                return  # stopping: what was not synced stays in the journal


class _TooLarge(Exception):
    pass


def too_large_message(limit: int) -> str:
    return f"body larger than {limit} bytes"


def _bounded_decompress(body: bytes, limit: int, *, gzip_: bool) -> bytes:
    # Decompress in steps so a small "zip bomb" cannot exhaust memory.
    d = zlib.decompressobj(wbits=31 if gzip_ else 15)
    out = d.decompress(body, limit + 1)
    if len(out) > limit or d.unconsumed_tail:
        raise _TooLarge
    out += d.flush()
    if len(out) > limit:
        raise _TooLarge
    if gzip_ and not d.eof:
        raise EOFError("truncated gzip data")
    return out
