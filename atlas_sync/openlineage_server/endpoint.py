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
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.openlineage import NamespaceMap, validate_event
from atlas_sync.openlineage_server.counters import Counters
from atlas_sync.openlineage_server.jobsync import JobSyncer, SyncFn, latest_run
from atlas_sync.openlineage_server.journal import (
    DEFAULT_MAX_BYTES,
    Entry,
    Journal,
    JournalError,
    JournalFull,
    open_journal,
)
from atlas_sync.openlineage_server.queue import EventQueue

log = logging.getLogger("atlas_sync.openlineage_server")

__all__ = ["Counters", "EndpointConfig", "LineageEndpoint", "SyncFn", "latest_run", "serve"]

LINEAGE_PATHS = ("/api/v1/lineage", "/api/v1/lineage/")
HEALTH_PATHS = ("/health", "/healthz", "/api/v1/health")


@dataclass
class EndpointConfig:
    """Tuning of the endpoint. ``api_key`` is never shown in ``repr``.

    ``journal_path=None`` keeps accepted events in memory only (nothing survives the process).
    """

    queue_size: int = 10_000  # events accepted and not yet synced (memory and journal)
    api_key: str | None = field(default=None, repr=False)
    event_types: tuple[str, ...] = ("COMPLETE",)
    namespace_map: NamespaceMap | None = None
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


class LineageEndpoint:
    """The HTTP-independent core: ``submit`` a request body, a worker thread syncs.

    ``sync(graph, job)`` publishes one job's lineage (``Publisher(...).sync``); it runs on the
    worker thread only, one job at a time.
    """

    def __init__(self, sync: SyncFn, config: EndpointConfig | None = None) -> None:
        self.sync = sync
        self.config = config or EndpointConfig()
        self.queue: EventQueue[Entry] = EventQueue()
        self.counters = Counters()
        self.journal: Journal | None = None
        self._accepting = False
        self._stop = threading.Event()  # stop requested
        self._worker: threading.Thread | None = None

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
        )
        self._worker = threading.Thread(
            target=self._run, args=(syncer, journal), name="openlineage-sync", daemon=True
        )
        self._worker.start()
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
    def submit(self, body: bytes, headers: Mapping[str, str]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Handle one ``POST /api/v1/lineage``: (status, extra headers, JSON answer)."""
        h = {k.lower(): v for k, v in headers.items()}
        if self.config.api_key is not None:
            auth = h.get("authorization", "")
            scheme, _, token = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                token.strip().encode(), self.config.api_key.encode()
            ):
                self.counters.add(rejected=1)
                return 401, {"WWW-Authenticate": "Bearer"}, {"error": "missing or wrong API key"}
        retry = {"Retry-After": str(self.config.retry_after)}
        journal = self.journal
        if not self._accepting or journal is None:
            self.counters.add(rejected=1)
            return 503, retry, {"error": "shutting down"}
        encoding = h.get("content-encoding", "identity").lower().strip()
        try:
            if encoding == "gzip":
                body = _bounded_decompress(body, self.config.max_body_bytes, gzip_=True)
            elif encoding == "deflate":
                body = _bounded_decompress(body, self.config.max_body_bytes, gzip_=False)
            elif encoding not in ("", "identity"):
                self.counters.add(rejected=1)
                return 415, {}, {"error": f"unsupported Content-Encoding {encoding!r} (gzip, deflate)"}
        except _TooLarge:
            self.counters.add(rejected=1)
            return 413, {}, {"error": f"body larger than {self.config.max_body_bytes} bytes"}
        except (OSError, EOFError, zlib.error):
            self.counters.add(rejected=1)
            return 400, {}, {"error": "body is not valid compressed data"}
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self.counters.add(rejected=1)
            return 400, {}, {"error": f"invalid JSON: {getattr(exc, 'msg', str(exc))}"}
        except RecursionError:
            self.counters.add(rejected=1)
            return 400, {}, {"error": "JSON nested too deeply"}
        events = data if isinstance(data, list) else [data]
        if not events:
            return 200, {}, {"accepted": 0}
        for i, ev in enumerate(events):
            try:
                validate_event(ev, path=f"$[{i}]" if isinstance(data, list) else "$")
            except InputError as exc:
                self.counters.add(rejected=len(events))
                return 400, {}, {"error": str(exc), "path": exc.path}
        try:
            kept = journal.append(events)
        except JournalFull as exc:
            self.counters.add(rejected=len(events), rejected_full=len(events))
            return 503, retry, {"error": f"{exc}, retry later", "queue_size": self.config.queue_size}
        except JournalError as exc:
            self.counters.error(str(exc), rejected=len(events), journal_errors=1)
            return 503, retry, {"error": "the journal cannot be written, retry later"}
        self.queue.put(kept.entries)
        self.counters.add(accepted=len(kept.entries), duplicates=kept.duplicates)
        answer: dict[str, Any] = {"accepted": len(events)}
        if kept.duplicates:
            answer["duplicates"] = kept.duplicates
        return 201, {}, answer

    # ------------------------------------------------------------------ worker
    def _run(self, syncer: JobSyncer, journal: Journal) -> None:
        while not self._stop.is_set():
            batch = self.queue.take(self.config.batch_max, timeout=0.2, linger=self.config.linger)
            if batch and not syncer.process(batch, journal.settle):
                return  # stopping: what was not synced stays in the journal


class _TooLarge(Exception):
    pass


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


# ---------------------------------------------------------------------------------------- HTTP
class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive: one connection per client session
    # One write per response and no Nagle delay: otherwise delayed ACKs cost ~40 ms a request.
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True
    server_version = "atlas-sync-openlineage"

    def _send(self, status: int, payload: dict[str, Any], headers: Mapping[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        ep = self.server.endpoint
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        if length > ep.config.max_body_bytes:
            self.close_connection = True
            self._send(413, {"error": f"body larger than {ep.config.max_body_bytes} bytes"})
            return
        body = self.rfile.read(length) if length else b""
        if path not in LINEAGE_PATHS:
            self._send(404, {"error": f"no such endpoint: POST {path} (use /api/v1/lineage)"})
            return
        status, headers, payload = ep.submit(body, dict(self.headers.items()))
        self._send(status, payload, headers)

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        ep = self.server.endpoint
        path = self.path.split("?", 1)[0]
        if path in HEALTH_PATHS:
            h = ep.health()
            self._send(200 if h["status"] in ("ok", "full") else 503, h)
        elif path in ("/metrics", "/api/v1/metrics"):
            self._send(200, ep.metrics())
        else:
            self._send(404, {"error": f"no such endpoint: GET {path}"})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server signature
        log.debug("%s - %s", self.address_string(), format % args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], endpoint: LineageEndpoint) -> None:
        self.endpoint = endpoint
        super().__init__(address, _Handler)


class EndpointServer:
    """A running endpoint: ``url``, ``port``, ``endpoint`` and ``shutdown()``."""

    def __init__(self, endpoint: LineageEndpoint, server: _Server) -> None:
        self.endpoint = endpoint
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="openlineage-http", daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = self._server.server_address[0]
        return f"http://{host if isinstance(host, str) else host.decode()}:{self.port}"

    def shutdown(self, *, drain: bool = True, timeout: float | None = None) -> int:
        """Stop accepting (503 to late requests), drain, close the socket. Returns the number of
        events left in the journal for the next start."""
        left = self.endpoint.stop(drain=drain, timeout=timeout)
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
        return left


def serve(endpoint: LineageEndpoint, host: str = "127.0.0.1", port: int = 5000) -> EndpointServer:
    """Start ``endpoint`` and serve it over HTTP in a background thread (``port=0``: a free port)."""
    server = _Server((host, port), endpoint)
    try:
        endpoint.start()
    except BaseException:
        server.server_close()
        raise
    return EndpointServer(endpoint, server)
