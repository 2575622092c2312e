"""The endpoint over HTTP: a small ASGI app (Starlette) served by uvicorn, with TLS and limits.

Routes: ``POST /api/v1/lineage`` (:meth:`LineageEndpoint.submit`), ``GET /health`` (alive),
``GET /ready`` (take traffic: journal open, Atlas reachable, backlog below its bound),
``GET /metrics`` (Prometheus text) and ``GET /api/v1/metrics`` (the same figures as JSON).

What a slow or hostile client cannot do (:class:`ServerLimits`):

* send a body larger than ``max_body_bytes``: an announced one is refused with 413 before a byte of
  it is read (uvicorn stops reading the socket once 64 KiB wait unread), a streamed one (chunked,
  no Content-Length) as soon as it passes the limit; the connection is then closed;
* hold a request open: its headers must arrive within ``header_timeout``, its body within
  ``body_timeout`` (408, closed); a connection may wait ``idle_timeout`` for its first or next
  request (uvicorn's keep-alive timeout, which it only arms after a first response, is armed at
  connect here too);
* exhaust memory or threads: at most ``max_requests`` POSTs read or are journalled at once (503 +
  Retry-After beyond, which OpenLineage clients retry), at most ``max_connections`` connections.

Idle and slow connections cost a socket and a few KiB each on the event loop, no thread: they do not
delay other producers. A big body is validated on a thread; the appends of one turn of the event
loop go to the journal's writer together (one group commit, ~16 events at 64 producers, where one
hand-over per request gave ~2.7 and a p99 1.3x the thread-per-connection server's), and the loop
keeps serving while they commit.

Stopping (:meth:`EndpointServer.shutdown`, SIGTERM in the CLI): the listening socket is closed, idle
connections are closed, in-flight requests get ``shutdown_grace`` seconds to finish (their events
are journalled and answered), then the sync worker drains for ``drain_timeout``; whatever is left
stays in the journal.

One process per journal (its lock), so no ``--workers``: the journal's group commit, not the HTTP
layer, is what limits accepted events per second.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas_sync.errors import ConfigError
from atlas_sync.openlineage_server.endpoint import Answer, LineageEndpoint, too_large_message
from atlas_sync.openlineage_server.journal import JournalError, JournalFull
from atlas_sync.openlineage_server.metrics import CONTENT_TYPE_LATEST

log = logging.getLogger("atlas_sync.openlineage_server")

__all__ = [
    "BackgroundServer",
    "EndpointServer",
    "ServerLimits",
    "bind",
    "create_app",
    "serve",
    "uvicorn_config",
]

LINEAGE_PATHS = ("/api/v1/lineage", "/api/v1/lineage/")
HEALTH_PATHS = ("/health", "/healthz", "/api/v1/health")
SERVER_NAME = "atlas-sync-openlineage"
INLINE_BODY_BYTES = 16 * 1024  # bodies up to this are validated on the event loop (one event or a few)


@dataclass
class ServerLimits:
    """What one client may hold of the server (seconds, counts)."""

    max_requests: int = 256  # POSTs reading their body or being journalled at once, then 503
    max_connections: int = 4096  # open connections, then 503 (mind the process's open-files limit)
    idle_timeout: float = 30.0  # a connection waiting for its first or next request
    header_timeout: float = 10.0  # from a request's first byte to the end of its headers
    body_timeout: float = 60.0  # to receive a whole body
    shutdown_grace: float = 10.0  # in-flight requests finish within this on stop
    backlog: int = 2048  # connections the kernel queues before accept


class _TooLarge(Exception):
    pass


def _server_parts() -> tuple[Any, Any]:
    try:
        import starlette  # noqa: F401
        import uvicorn
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ConfigError(
            f"the OpenLineage endpoint needs starlette and uvicorn[standard] ({exc.name} is missing)",
            hint="pip install 'atlas-sync[server]'",
        ) from None
    return uvicorn, HttpToolsProtocol


def _json(status: int, payload: Any, headers: Mapping[str, str] | None = None, *, close: bool = False) -> Any:
    from starlette.responses import Response

    h = dict(headers or {})
    if close:
        h["Connection"] = "close"  # the body was not read: the connection cannot carry another request
    return Response(json.dumps(payload), status_code=status, headers=h, media_type="application/json")


def _copy_result(source: Any, target: asyncio.Future[Any]) -> None:
    """A finished concurrent future's outcome into an asyncio one (on its loop)."""
    if target.done():  # the request was cancelled (its client went away)
        return
    exc = source.exception()
    if exc is not None:
        target.set_exception(exc)
    else:
        target.set_result(source.result())


def create_app(endpoint: LineageEndpoint, limits: ServerLimits | None = None) -> Any:
    """The ASGI app serving ``endpoint`` (already started, or started by the caller)."""
    import anyio
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import Response
    from starlette.routing import Route

    lim = limits or ServerLimits()
    threads = anyio.CapacityLimiter(lim.max_requests)
    in_flight = 0  # POSTs past their headers (one event loop: no lock)
    accept_seconds = endpoint.prometheus.request_seconds
    config = endpoint.config

    async def read_body(request: Request) -> bytes:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > config.max_body_bytes:
                raise _TooLarge
            chunks.append(chunk)
        return b"".join(chunks)

    waiting: list[tuple[list[dict[str, Any]], asyncio.Future[Any]]] = []

    def hand_over(journal: Any) -> None:
        # every request that reached the journal in this turn of the loop, in one hand-over: the
        # writer wakes once, not once per request, and the GIL stays with the loop meanwhile
        batch = waiting[:]
        waiting.clear()
        try:
            futures = journal.append_futures([events for events, _ in batch])
        except Exception as exc:  # noqa: BLE001 - each request answers for itself
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(exc)
            return
        loop = asyncio.get_running_loop()
        for (_, fut), cf in zip(batch, futures, strict=True):
            cf.add_done_callback(lambda cf, fut=fut: loop.call_soon_threadsafe(_copy_result, cf, fut))

    async def append(journal: Any, events: list[dict[str, Any]]) -> Any:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        if not waiting:
            loop.call_soon(hand_over, journal)
        waiting.append((events, fut))
        return await fut

    async def submit(body: bytes, headers: dict[str, str]) -> Answer:
        # A small body is validated here, on the event loop (a fraction of a millisecond: cheaper
        # than a hop to a thread, which would wait for the GIL anyway); a big one on a thread, so
        # the loop keeps serving meanwhile. The journal's commit is awaited, not waited for.
        if len(body) <= INLINE_BODY_BYTES:
            events = endpoint.prepare(body, headers)
        else:
            events = await anyio.to_thread.run_sync(endpoint.prepare, body, headers, limiter=threads)
        if isinstance(events, tuple):
            return events
        journal = endpoint.journal
        if journal is None:
            return endpoint.journal_refused(JournalError("the journal is closed"), len(events))
        try:
            kept = await append(journal, events)
        except (JournalFull, JournalError) as exc:
            return endpoint.journal_refused(exc, len(events))
        return endpoint.accepted(kept, len(events))

    async def lineage(request: Request) -> Response:
        nonlocal in_flight
        t0 = time.perf_counter()
        refuse = endpoint.counters.refuse
        length = request.headers.get("content-length")
        if length is not None and not (length.isdigit() and len(length) < 19):
            refuse("bad_request")
            return _json(400, {"error": f"invalid Content-Length {length[:40]!r}"}, close=True)
        if length is not None and int(length) > config.max_body_bytes:
            refuse("too_large")
            return _json(413, {"error": too_large_message(config.max_body_bytes)}, close=True)
        early = endpoint.precheck(request.headers)
        if early is not None:
            status, headers, payload = early
            return _json(status, payload, headers, close=True)
        if in_flight >= lim.max_requests:
            refuse("busy")
            retry = {"Retry-After": str(config.retry_after)}
            return _json(503, {"error": "too many requests in flight, retry later"}, retry, close=True)
        in_flight += 1
        try:
            try:
                async with asyncio.timeout(lim.body_timeout):
                    body = await read_body(request)
            except _TooLarge:
                refuse("too_large")
                return _json(413, {"error": too_large_message(config.max_body_bytes)}, close=True)
            except TimeoutError:
                refuse("body_timeout")
                msg = f"the body did not arrive within {lim.body_timeout:g} s"
                return _json(408, {"error": msg}, close=True)
            except ClientDisconnect:
                refuse("client_disconnect")
                return _json(400, {"error": "the client went away"}, close=True)
            status, headers, payload = await submit(body, dict(request.headers.items()))
        finally:
            in_flight -= 1
        accept_seconds.labels(str(status)).observe(time.perf_counter() - t0)
        return _json(status, payload, headers)

    async def health(request: Request) -> Response:
        h = endpoint.health()
        return _json(200 if h["status"] in ("ok", "full") else 503, h)

    async def ready(request: Request) -> Response:
        r = endpoint.ready()
        return _json(200 if r["ready"] else 503, r)

    async def prometheus(request: Request) -> Response:
        return Response(endpoint.prometheus.text(), media_type=CONTENT_TYPE_LATEST)

    async def metrics_json(request: Request) -> Response:
        return _json(200, endpoint.metrics())

    async def not_found(request: Request, exc: Exception) -> Response:
        path = request.url.path
        hint = " (use /api/v1/lineage)" if request.method == "POST" else ""
        return _json(404, {"error": f"no such endpoint: {request.method} {path}{hint}"})

    async def not_allowed(request: Request, exc: Exception) -> Response:
        allow = dict(getattr(exc, "headers", None) or {}).get("Allow", "")
        error = f"{request.url.path} does not take {request.method}" + (
            f" (it takes {allow})" if allow else ""
        )
        return _json(405, {"error": error}, {"Allow": allow} if allow else None)

    routes = [Route(p, lineage, methods=["POST"]) for p in LINEAGE_PATHS]
    routes += [Route(p, health, methods=["GET"]) for p in HEALTH_PATHS]
    routes += [
        Route("/ready", ready, methods=["GET"]),
        Route("/metrics", prometheus, methods=["GET"]),
        Route("/api/v1/metrics", metrics_json, methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})


def _busy_app(on_refused: Callable[[], None] | None) -> Any:
    """The ASGI app answering every request of a connection beyond ``max_connections``: 503 with
    Retry-After, as the endpoint's own refusals (uvicorn's limit answers plain text without it)."""
    body = json.dumps({"error": "too many connections, retry later"}).encode()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if on_refused is not None:
            on_refused()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", b"1"),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def _protocol(limits: ServerLimits, on_refused: Callable[[], None] | None = None) -> type[Any]:
    """uvicorn's httptools protocol with the header timeout, an idle timeout from the connect, and
    the bound on connections."""
    _, base = _server_parts()
    busy = _busy_app(on_refused)

    class Protocol(base):  # type: ignore[misc, valid-type]
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                self.app = busy  # its requests are answered 503, and it is closed
            # the idle timeout below closes it if it sends nothing
            # uvicorn arms its keep-alive timeout after a response only: a connection that never
            # sends a request would be held forever (data_received cancels this one)
            self.timeout_keep_alive_task = self.loop.call_later(
                limits.idle_timeout, self.timeout_keep_alive_handler
            )

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._cancel_head()
            self._head_timer = self.loop.call_later(limits.header_timeout, self._head_timeout)

        def on_headers_complete(self) -> None:
            self._cancel_head()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_head()
            super().connection_lost(exc)

        def shutdown(self) -> None:
            idle = self.cycle is None or self.cycle.response_complete
            if idle and self.scheme == "https" and not self.transport.is_closing():
                # closing TLS waits for the client's close_notify, which an idle keep-alive client
                # never sends: the stop would wait out its grace period for nothing
                self.transport.abort()
                return
            super().shutdown()

        def _cancel_head(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timeout(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                self.transport.write(
                    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                )
                self.transport.close()

    return Protocol


class BackgroundServer:
    """A uvicorn server on a thread of its own (its own event loop), on a socket bound by the
    caller: ``url``, ``port``, ``stop()``."""

    def __init__(self, config: Any, sock: socket.socket, tls: bool) -> None:
        uvicorn, _ = _server_parts()
        self._server = uvicorn.Server(config)
        self._address = sock.getsockname()
        self._tls = tls
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="openlineage-http", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ConfigError("the HTTP server did not start")
            time.sleep(0.01)

    @property
    def port(self) -> int:
        return int(self._address[1])

    @property
    def url(self) -> str:
        host = self._address[0]
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self._tls else 'http'}://{host}:{self.port}"

    def stop(self) -> None:
        """Close the listening socket and idle connections; in-flight requests get the grace
        period (``shutdown_grace``) to finish."""
        self._server.should_exit = True
        self._thread.join(self._server.config.timeout_graceful_shutdown + 5)


class EndpointServer(BackgroundServer):
    """A running endpoint: ``url``, ``port``, ``endpoint`` and ``shutdown()``."""

    def __init__(self, endpoint: LineageEndpoint, config: Any, sock: socket.socket, tls: bool) -> None:
        self.endpoint = endpoint
        self._stopped: int | None = None
        super().__init__(config, sock, tls)

    def shutdown(self, *, drain: bool = True, timeout: float | None = None) -> int:
        """Stop taking connections, let in-flight requests finish, then drain the sync worker (up
        to ``timeout``, default ``drain_timeout``). Returns the number of events left in the
        journal for the next start."""
        if self._stopped is not None:
            return self._stopped
        self.stop()
        self._stopped = self.endpoint.stop(drain=drain, timeout=timeout)
        return self._stopped


def uvicorn_config(
    app: Any,
    limits: ServerLimits,
    *,
    ssl_certfile: str | Path | None = None,
    ssl_keyfile: str | Path | None = None,
    ssl_keyfile_password: str | None = None,
    on_refused: Callable[[], None] | None = None,
) -> Any:
    """uvicorn's settings for ``app`` with ``limits`` (loaded: a bad certificate raises here);
    ``on_refused()`` counts a request refused for too many connections."""
    uvicorn, _ = _server_parts()
    config = uvicorn.Config(
        app,
        http=_protocol(limits, on_refused),
        lifespan="off",
        log_config=None,
        access_log=False,
        server_header=False,
        headers=[("server", SERVER_NAME)],
        timeout_keep_alive=max(1, round(limits.idle_timeout)),
        timeout_graceful_shutdown=max(1, round(limits.shutdown_grace)),
        backlog=limits.backlog,
        ssl_certfile=str(ssl_certfile) if ssl_certfile else None,
        ssl_keyfile=str(ssl_keyfile) if ssl_keyfile else None,
        ssl_keyfile_password=ssl_keyfile_password,
    )
    try:
        config.load()
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        what = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(
            f"cannot load the TLS certificate {ssl_certfile} / key {ssl_keyfile}: {what}",
            hint="--ssl-certfile takes a PEM certificate (chain), --ssl-keyfile its PEM private key",
        ) from None
    return config


def bind(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket (``port=0``: a free one); :class:`OSError` when it cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on accepted sockets only then (else Nagle holds a
    # response's second write back until the client's delayed ACK, ~40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


def serve(
    endpoint: LineageEndpoint,
    host: str = "127.0.0.1",
    port: int = 5000,
    *,
    limits: ServerLimits | None = None,
    ssl_certfile: str | Path | None = None,
    ssl_keyfile: str | Path | None = None,
    ssl_keyfile_password: str | None = None,
) -> EndpointServer:
    """Start ``endpoint`` and serve it over HTTP (HTTPS with a certificate) on a background thread
    (``port=0``: a free port). Raises :class:`OSError` when the address cannot be bound,
    :class:`ConfigError` for an unreadable certificate or key, :class:`JournalError` when the
    journal cannot be opened."""
    lim = limits or ServerLimits()
    config = uvicorn_config(
        create_app(endpoint, lim),
        lim,
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
        ssl_keyfile_password=ssl_keyfile_password,
        on_refused=lambda: endpoint.counters.refuse("too_many_connections"),
    )
    sock = bind(host, port, lim.backlog)
    try:
        endpoint.start()
    except BaseException:
        sock.close()
        raise
    try:
        return EndpointServer(endpoint, config, sock, ssl_certfile is not None)
    except BaseException:
        endpoint.stop(drain=False, timeout=0)
        raise
