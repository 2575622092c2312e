"""HTTP face: serve an :class:`Emulator` on a real socket (``atlas-sync emulator serve`` and tests).

``serve(emu)`` starts a ``ThreadingHTTPServer`` in a background thread, bound to 127.0.0.1 by default,
and returns an :class:`EmulatorServer` with ``.url``, ``.port`` and ``.shutdown()``.
Injected ``reset`` / ``lost_response`` faults close the connection with a TCP reset; ``timeout`` holds
the connection open without answering (until ``hang_seconds`` or shutdown).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from atlas_sync.emulator.app import Emulator
from atlas_sync.emulator.faults import ConnectionResetFault, LostResponseFault, TimeoutFault

DEFAULT_MAX_BODY = 256 * 1024 * 1024  # bytes; larger requests get 413


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], emulator: Emulator, max_body: int, hang_seconds: float
    ) -> None:
        self.emulator = emulator
        self.max_body = max_body
        self.hang_seconds = hang_seconds
        self.stopping = threading.Event()
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # one write per response (headers + body) and no Nagle delay: keep-alive requests stay fast
    disable_nagle_algorithm = True
    wbufsize = 1 << 16
    server_version = "Jetty(9.4.31)"
    sys_version = ""

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the emulator keeps its own request log

    def _serve(self) -> None:
        length_text = self.headers.get("Content-Length")
        try:
            length = int(length_text) if length_text else 0
        except ValueError:
            length = -1
        if length < 0 or length > self.server.max_body:
            self._send(413, {"Content-Type": "text/plain"}, b"Request body too large")
            self.close_connection = True
            return
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        try:
            resp = self.server.emulator.handle(
                self.command, url.path, query, dict(self.headers.items()), body
            )
        except (ConnectionResetFault, LostResponseFault):
            self._reset()
            return
        except TimeoutFault:
            self.server.stopping.wait(self.server.hang_seconds)
            self._reset()
            return
        self._send(resp.status, resp.headers, resp.body)

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for k, v in headers.items():
            if k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _reset(self) -> None:
        # SO_LINGER with timeout 0 makes close() send a RST: the client sees "connection reset"
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _serve


class EmulatorServer:
    """A running HTTP server around an emulator."""

    def __init__(self, server: _Server, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread
        self.emulator = server.emulator
        self.host = str(server.server_address[0])
        self.port = int(server.server_address[1])
        self.url = f"http://{self.host}:{self.port}"

    def shutdown(self) -> None:
        """Stop serving and wait for the server thread."""
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def serve_forever(self) -> None:
        """Block until interrupted (used by the CLI)."""
        self._thread.join()

    def __enter__(self) -> EmulatorServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def serve(
    emu: Emulator,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    hang_seconds: float = 120.0,
) -> EmulatorServer:
    """Serve ``emu`` over HTTP in a background thread; ``port=0`` picks a free port."""
    server = _Server((host, port), emu, max_body_bytes, hang_seconds)
    thread = threading.Thread(target=server.serve_forever, name=f"atlas-emulator-{server.server_address[1]}",
                              daemon=True)  # fmt: skip
    thread.start()
    return EmulatorServer(server, thread)
