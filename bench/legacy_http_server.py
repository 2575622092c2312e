"""The endpoint's HTTP front door before the ASGI server: ``http.server.ThreadingHTTPServer``, one
thread per connection. Kept only so ``bench/openlineage_endpoint.py`` compares the two in one run;
not part of the product (``atlas_sync.openlineage_server.serve`` is the uvicorn server). The same
:class:`LineageEndpoint` core (journal, worker) sits behind both.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from atlas_sync.openlineage_server import LineageEndpoint

log = logging.getLogger("bench.legacy_http_server")

LINEAGE_PATHS = ("/api/v1/lineage", "/api/v1/lineage/")
HEALTH_PATHS = ("/health", "/healthz", "/api/v1/health")


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
