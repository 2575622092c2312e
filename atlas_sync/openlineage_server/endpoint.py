"""The OpenLineage endpoint: validate, queue, batch per job, sync, retry, drain or spool on stop.

Life of an event:

1. ``POST /api/v1/lineage`` with one event (or a JSON array of events, gzip allowed) and, when an
   API key is configured, ``Authorization: Bearer <key>``;
2. each event is checked against the spec subset atlas-sync reads; a bad one rejects the request
   (400, nothing queued); a full queue answers 503 with ``Retry-After`` (the openlineage-python
   transport retries 503 by default) - nothing is ever dropped silently;
3. the worker takes up to ``batch_max`` events (all that are queued, by default), keeps the event
   types configured (COMPLETE by default; FAIL/ABORT never delete anything, they are skipped),
   groups them per job and syncs each job once, with the lineage of its latest run in the batch
   (all events of that run; earlier runs' events are *superseded*: a job's lineage is what its
   last completed run did) through the sync callable (``Publisher.sync``);
4. a failed sync is retried with exponential backoff and jitter; after ``max_attempts`` the events
   go to a dead-letter file (JSON lines) and the failure is counted and logged;
5. on stop (SIGTERM in the CLI) the endpoint stops accepting, drains the queue for up to
   ``drain_timeout`` seconds, and writes whatever is left (including a batch still being synced) to
   the spool file, which the next start loads first.
"""

from __future__ import annotations

import hmac
import json
import logging
import random
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from atlas_sync.atlas import AtlasError
from atlas_sync.errors import AtlasSyncError, InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage import NamespaceMap, events_to_graph, job_key, validate_event
from atlas_sync.openlineage_server.queue import EventQueue, read_spool, write_spool

log = logging.getLogger("atlas_sync.openlineage_server")

SyncFn = Callable[[LineageGraph, str], Any]
LINEAGE_PATHS = ("/api/v1/lineage", "/api/v1/lineage/")
HEALTH_PATHS = ("/health", "/healthz", "/api/v1/health")


@dataclass
class EndpointConfig:
    """Tuning of the endpoint. ``api_key`` is never shown in ``repr``."""

    queue_size: int = 10_000
    api_key: str | None = field(default=None, repr=False)
    event_types: tuple[str, ...] = ("COMPLETE",)
    namespace_map: NamespaceMap | None = None
    batch_max: int = 10_000  # a batch takes everything queued: fewer syncs under load
    linger: float = 0.05  # seconds to wait for more events to fill a batch
    retry_base: float = 0.5
    retry_max: float = 30.0
    max_attempts: int = 8  # then the events go to the dead-letter file
    spool_path: Path = Path(".atlas-sync/openlineage-spool.jsonl")
    dead_letter_path: Path = Path(".atlas-sync/openlineage-dead-letter.jsonl")
    drain_timeout: float = 30.0
    max_body_bytes: int = 16 * 1024 * 1024
    retry_after: int = 1  # seconds, in 503 answers


@dataclass
class Counters:
    """What the endpoint did since it started (``GET /metrics``, ``GET /health``)."""

    accepted: int = 0  # events queued
    rejected: int = 0  # events (or requests, when unparsable) refused: auth, invalid, queue full
    rejected_full: int = 0  # of those, refused because the queue was full
    synced: int = 0  # events whose job was synced
    skipped: int = 0  # accepted events not synced by design (event type not selected, DatasetEvents)
    superseded: int = 0  # events of an older run of a job synced in the same batch as a newer run
    failed: int = 0  # failed sync attempts (each retry counts)
    dead_lettered: int = 0  # events given up on after max_attempts (in the dead-letter file)
    spooled: int = 0  # events written to the spool file at stop
    restored: int = 0  # events loaded from the spool file at start
    batches: int = 0  # job syncs that succeeded
    last_error: str | None = None
    started_at: float = field(default_factory=time.time)

    def to_json(self, queue_depth: int) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "started_at"}
        d["queue_depth"] = queue_depth
        d["uptime_seconds"] = round(time.time() - self.started_at, 3)
        return d


class LineageEndpoint:
    """The HTTP-independent core: ``submit`` a request body, a worker thread syncs.

    ``sync(graph, job)`` publishes one job's lineage (``Publisher(...).sync``); it runs on the
    worker thread only, one job at a time.
    """

    def __init__(self, sync: SyncFn, config: EndpointConfig | None = None) -> None:
        self.sync = sync
        self.config = config or EndpointConfig()
        self.queue = EventQueue(self.config.queue_size)
        self.counters = Counters()
        self._lock = threading.Lock()
        self._accepting = False
        self._stop = threading.Event()  # stop requested
        self._worker: threading.Thread | None = None
        self._inflight: list[dict[str, Any]] = []
        self._wanted = {t.upper() for t in self.config.event_types}

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Load events spooled by an earlier run, start the worker, accept requests."""
        spooled = read_spool(self.config.spool_path)
        if spooled:
            self.queue.put_front(spooled)
            self.config.spool_path.unlink()
            self._count(restored=len(spooled))
            log.info("restored %d events from %s", len(spooled), self.config.spool_path)
        self._stop.clear()
        self._worker = threading.Thread(target=self._run, name="openlineage-sync", daemon=True)
        self._worker.start()
        self._accepting = True

    def stop(self, *, drain: bool = True, timeout: float | None = None) -> int:
        """Stop accepting; drain the queue (up to ``timeout``, default ``drain_timeout``); spool the
        rest. Returns the number of events written to the spool file."""
        self._accepting = False
        deadline = time.monotonic() + (self.config.drain_timeout if timeout is None else timeout)
        if drain:
            while len(self.queue) and time.monotonic() < deadline and self._worker_alive():
                time.sleep(0.02)
        self._stop.set()
        self.queue.wake()
        if self._worker is not None:
            self._worker.join(max(0.0, deadline - time.monotonic()) + 0.5)
        leftover = self.queue.drain_all()
        if self._worker_alive():
            # still inside a sync call: keep its batch too (a repeated sync is harmless)
            leftover = list(self._inflight) + leftover
        written = write_spool(self.config.spool_path, leftover) if leftover else 0
        if written:
            self._count(spooled=written)
            log.warning("spooled %d unsynced events to %s", written, self.config.spool_path)
        return written

    def _worker_alive(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    @property
    def accepting(self) -> bool:
        return self._accepting

    def _count(self, **deltas: int) -> None:
        with self._lock:
            for k, v in deltas.items():
                setattr(self.counters, k, getattr(self.counters, k) + v)

    def metrics(self) -> dict[str, Any]:
        with self._lock:
            return self.counters.to_json(len(self.queue))

    def health(self) -> dict[str, Any]:
        m = self.metrics()
        status = "ok"
        if not self._accepting:
            status = "stopping"
        elif not self._worker_alive():
            status = "worker-down"
        elif m["queue_depth"] >= self.config.queue_size:
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
                self._count(rejected=1)
                return 401, {"WWW-Authenticate": "Bearer"}, {"error": "missing or wrong API key"}
        if not self._accepting:
            self._count(rejected=1)
            return 503, {"Retry-After": str(self.config.retry_after)}, {"error": "shutting down"}
        encoding = h.get("content-encoding", "identity").lower().strip()
        try:
            if encoding == "gzip":
                body = _bounded_decompress(body, self.config.max_body_bytes, gzip_=True)
            elif encoding == "deflate":
                body = _bounded_decompress(body, self.config.max_body_bytes, gzip_=False)
            elif encoding not in ("", "identity"):
                self._count(rejected=1)
                return 415, {}, {"error": f"unsupported Content-Encoding {encoding!r} (gzip, deflate)"}
        except _TooLarge:
            self._count(rejected=1)
            return 413, {}, {"error": f"body larger than {self.config.max_body_bytes} bytes"}
        except (OSError, EOFError, zlib.error):
            self._count(rejected=1)
            return 400, {}, {"error": "body is not valid compressed data"}
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._count(rejected=1)
            return 400, {}, {"error": f"invalid JSON: {getattr(exc, 'msg', str(exc))}"}
        except RecursionError:
            self._count(rejected=1)
            return 400, {}, {"error": "JSON nested too deeply"}
        events = data if isinstance(data, list) else [data]
        if not events:
            return 200, {}, {"accepted": 0}
        for i, ev in enumerate(events):
            try:
                validate_event(ev, path=f"$[{i}]" if isinstance(data, list) else "$")
            except InputError as exc:
                self._count(rejected=len(events))
                return 400, {}, {"error": str(exc), "path": exc.path}
        if not self.queue.offer(events):
            self._count(rejected=len(events), rejected_full=len(events))
            return (
                503,
                {"Retry-After": str(self.config.retry_after)},
                {"error": "queue full, retry later", "queue_size": self.config.queue_size},
            )
        self._count(accepted=len(events))
        return 201, {}, {"accepted": len(events)}

    # ------------------------------------------------------------------ worker
    def _run(self) -> None:
        while not self._stop.is_set():
            batch = self.queue.take(self.config.batch_max, timeout=0.2, linger=self.config.linger)
            if not batch:
                continue
            try:
                if not self._process(batch):
                    return
            except Exception as exc:  # noqa: BLE001 - the worker must outlive a bug; keep the events
                log.exception("unexpected error in the sync worker")
                self._dead_letter("(worker)", list(self._inflight), f"{type(exc).__name__}: {exc}")
            finally:
                self._inflight = []

    def _process(self, batch: list[dict[str, Any]]) -> bool:
        """Sync a batch job by job; False when stopping with events given back to the queue."""
        groups: dict[str, list[dict[str, Any]]] = {}
        skipped = 0
        for ev in batch:
            job = ev.get("job")
            if not isinstance(job, dict):
                skipped += 1  # DatasetEvent: no job to sync it under
                continue
            if "run" in ev and str(ev.get("eventType") or "").upper() not in self._wanted:
                skipped += 1
                continue
            groups.setdefault(job_key(job["namespace"], job["name"]), []).append(ev)
        if skipped:
            self._count(skipped=skipped)
        items = list(groups.items())
        self._inflight = [e for _, evs in items for e in evs]
        for i, (job_name, events) in enumerate(items):
            latest = latest_run(events)
            if len(latest) < len(events):
                self._count(superseded=len(events) - len(latest))
            # what stop() must spool (or a worker error dead-letter) if this sync does not finish
            self._inflight = latest + [e for _, evs in items[i + 1 :] for e in evs]
            if not self._sync_job(job_name, latest):
                self.queue.put_front(self._inflight)  # stopping while this job keeps failing
                return False
        return True

    def _sync_job(self, job: str, events: list[dict[str, Any]]) -> bool:
        attempt = 0
        while True:
            try:
                graph = events_to_graph(events, namespace_map=self.config.namespace_map, validate=False)
                self.sync(graph, job)
            except InputError as exc:
                # retrying cannot fix the input: keep it aside for a human
                self._dead_letter(job, events, f"input error: {exc}")
                return True
            except Exception as exc:  # noqa: BLE001 - Atlas down, timeouts, 5xx...: retried
                if isinstance(exc, AtlasSyncError) and not isinstance(exc, AtlasError):
                    # a refusal of the sync core (e.g. the delete fail-safe) gives the same answer
                    # every time: no retry; the events wait in the dead-letter file for a human
                    self._count(failed=1)
                    self._dead_letter(job, events, f"refused: {exc}")
                    return True
                attempt = self._failed(job, exc, attempt)
                if attempt < 0:
                    self._dead_letter(job, events, str(exc))
                    return True
                if attempt == 0:
                    return False
                continue
            self._count(synced=len(events), batches=1)
            return True

    def _failed(self, job: str, exc: Exception, attempt: int) -> int:
        """Count a failed attempt and back off. Returns the next attempt number, -1 when attempts
        are used up, 0 when stopping."""
        attempt += 1
        msg = str(exc) if isinstance(exc, AtlasSyncError) else f"{type(exc).__name__}: {exc}"
        with self._lock:
            self.counters.failed += 1
            self.counters.last_error = f"{job}: {msg}"
        log.warning("sync of job %s failed (attempt %d): %s", job, attempt, msg)
        if attempt >= self.config.max_attempts:
            return -1
        delay = min(self.config.retry_max, self.config.retry_base * 2 ** (attempt - 1))
        delay *= 0.5 + random.random() / 2  # jitter: many endpoints must not retry in step
        if self._stop.wait(delay):
            return 0
        return attempt

    def _dead_letter(self, job: str, events: list[dict[str, Any]], reason: str) -> None:
        write_spool(self.config.dead_letter_path, events)
        with self._lock:
            self.counters.dead_lettered += len(events)
            self.counters.last_error = f"{job}: {reason}"
        log.error(
            "gave up on %d events of job %s (%s); they are in %s",
            len(events),
            job,
            reason,
            self.config.dead_letter_path,
        )


def latest_run(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of the job's latest run (by ``eventTime``, then arrival); JobEvents always stay."""
    best: tuple[Any, int] | None = None
    run_id: str | None = None
    for i, ev in enumerate(events):
        run = ev.get("run")
        if not isinstance(run, dict):
            continue
        key = (_sortable_time(ev.get("eventTime")), i)
        if best is None or key >= best:
            best, run_id = key, run.get("runId")
    if run_id is None:
        return events
    return [e for e in events if not isinstance(e.get("run"), dict) or e["run"].get("runId") == run_id]


def _sortable_time(value: Any) -> float:
    from datetime import UTC, datetime

    if isinstance(value, str):
        try:
            t = datetime.fromisoformat(value)
        except ValueError:
            return float("-inf")
        return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()
    return float("-inf")


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
        """Stop accepting (503 to late requests), drain or spool the queue, then close the socket."""
        spooled = self.endpoint.stop(drain=drain, timeout=timeout)
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
        return spooled


def serve(endpoint: LineageEndpoint, host: str = "127.0.0.1", port: int = 5000) -> EndpointServer:
    """Start ``endpoint`` and serve it over HTTP in a background thread (``port=0``: a free port)."""
    server = _Server((host, port), endpoint)
    endpoint.start()
    return EndpointServer(endpoint, server)
