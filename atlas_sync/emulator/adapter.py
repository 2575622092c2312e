"""In-process face: a requests transport adapter that answers from an :class:`Emulator` with no socket.

    session.mount("http://atlas-emulator.invalid", EmulatorAdapter(emu))

Injected faults become the exceptions a real network would raise: ``reset`` and ``lost_response`` ->
``requests.ConnectionError``, ``timeout`` -> ``requests.ReadTimeout``.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from http.client import HTTPMessage
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.cookies import extract_cookies_to_jar
from requests.structures import CaseInsensitiveDict
from urllib3 import HTTPResponse

from atlas_sync.emulator.app import Emulator
from atlas_sync.emulator.faults import ConnectionResetFault, LostResponseFault, TimeoutFault

BASE_URL = "http://atlas-emulator.invalid"


class EmulatorAdapter(BaseAdapter):
    """Route every request of a session prefix to ``emulator.handle``."""

    def __init__(self, emulator: Emulator) -> None:
        super().__init__()
        self.emulator = emulator

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        url = urlsplit(request.url or "")
        query = parse_qs(url.query, keep_blank_values=True)
        body = request.body
        if body is None:
            raw = b""
        elif isinstance(body, str):
            raw = body.encode("utf-8")
        elif isinstance(body, bytes | bytearray):
            raw = bytes(body)
        else:  # a file-like or generator body
            raw = b"".join(chunk if isinstance(chunk, bytes) else str(chunk).encode() for chunk in body)
        try:
            result = self.emulator.handle(
                request.method or "GET", url.path, query, dict(request.headers), raw
            )
        except TimeoutFault as exc:
            raise requests.ReadTimeout(
                "injected read timeout (atlas-sync emulator)", request=request
            ) from exc
        except ConnectionResetFault as exc:
            raise requests.ConnectionError(
                ConnectionResetError(104, "Connection reset by peer (injected)"), request=request
            ) from exc
        except LostResponseFault as exc:
            raise requests.ConnectionError(
                ConnectionResetError(
                    104, "Connection reset by peer after the request was applied (injected)"
                ),
                request=request,
            ) from exc
        response = requests.Response()
        response.status_code = result.status
        response.headers = CaseInsensitiveDict(result.headers)
        response.headers.setdefault("Content-Length", str(len(result.body)))
        response._content = result.body
        response.url = request.url or ""
        response.request = request
        response.reason = _REASONS.get(result.status, "")
        response.encoding = "utf-8" if "json" in result.headers.get("Content-Type", "") else None
        response.connection = self  # type: ignore[assignment]
        # a urllib3-like raw response so that requests' Session stores Set-Cookie (ATLASSESSIONID)
        raw_response = HTTPResponse(body=io.BytesIO(result.body), headers=result.headers, status=result.status,
                           preload_content=False, decode_content=False)  # fmt: skip
        message = HTTPMessage()
        for k, v in result.headers.items():
            message[k] = v
        raw_response._original_response = _Original(message)  # type: ignore[assignment]
        response.raw = raw_response
        extract_cookies_to_jar(response.cookies, request, raw_response)
        return response

    def close(self) -> None:
        pass


class _Original:
    """Stands in for ``http.client.HTTPResponse``: cookie extraction only needs ``.msg``."""

    def __init__(self, msg: HTTPMessage) -> None:
        self.msg = msg


_REASONS = {200: "OK", 204: "No Content", 302: "Found", 400: "Bad Request", 401: "Unauthorized",
            404: "Not Found", 409: "Conflict", 413: "Payload Too Large", 419: "Session Timeout",
            429: "Too Many Requests", 500: "Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout"}  # fmt: skip


def emulator_session(
    emulator: Emulator, *, auth: tuple[str, str] | None = ("admin", "admin")
) -> requests.Session:
    """A requests session wired to ``emulator`` at :data:`BASE_URL` (basic auth admin/admin by default)."""
    session = requests.Session()
    session.mount(BASE_URL, EmulatorAdapter(emulator))
    if auth is not None:
        session.auth = auth
    return session
