"""The emulator core: request routing, authentication, transactions, error shapes, test hooks.

``Emulator.handle(method, path, query, headers, body)`` is the one entry point every face uses (the
requests transport adapter, the HTTP server and the test fixtures).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from atlas_sync.emulator import propagation
from atlas_sync.emulator import typedefs as tdefs
from atlas_sync.emulator.contention import Contention
from atlas_sync.emulator.errors import AtlasApiError, BadJsonError, EmulatorError, InternalError
from atlas_sync.emulator.faults import (
    ConnectionResetFault,
    Fault,
    FaultInjector,
    Latency,
    LostResponseFault,
    TimeoutFault,
)
from atlas_sync.emulator.routes import NoContent, Request, Text, routes
from atlas_sync.emulator.state import State
from atlas_sync.emulator.store import Store
from atlas_sync.emulator.types import KEY_CATEGORIES, LIST_KEYS, Registry

log = logging.getLogger("atlas_sync.emulator")
JSON_TYPE = "application/json;charset=UTF-8"
MAX_SESSIONS = 10_000
JETTY_REQUEST_BUFFER = 16192
BROWSER_UA = re.compile(r"^(Mozilla|Opera|Chrome)")


@dataclass
class EmulatorResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class RequestRecord:
    method: str
    path: str
    status: int
    entity_count: int
    duration_ms: float = 0.0
    fault: str | None = None
    bytes_in: int = 0  # request body
    bytes_out: int = 0  # response body


def _builtin_types() -> dict[str, Any]:
    text = resources.files("atlas_sync.emulator").joinpath("data/builtin_types.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


class Emulator:
    """An Atlas 2.4-compatible REST server core. ``db_path=None`` keeps state in memory.

    ``users`` maps user name to password for HTTP basic authentication.
    """

    def __init__(self, db_path: str | Path | None = None, *, users: dict[str, str] | None = None) -> None:
        self.store = Store(db_path)
        self.users = dict(users) if users is not None else {"admin": "admin"}
        self.request_log: list[RequestRecord] = []
        self.request_log_sink: Callable[[RequestRecord], None] | None = None
        self.faults = FaultInjector()
        self.latency = Latency()
        self.contention: Contention | None = None
        self._sessions: dict[str, str] = {}
        self._log_lock = threading.Lock()
        self._load_registry()
        self.routes = routes()

    # ------------------------------------------------------------------ setup
    def _load_registry(self) -> None:
        with self.store.transaction() as conn:
            rows = conn.execute("SELECT body FROM typedefs").fetchall()
            if not rows and self.store.get_meta("builtin_loaded") is None:
                state = State(self.store, Registry({}))
                now = state.now()
                defs = []
                data = _builtin_types()
                for key in LIST_KEYS:
                    for d in data.get(key, []):
                        defs.append(tdefs.normalize_def(d, KEY_CATEGORIES[key], "admin", now))
                registry = Registry({d["name"]: d for d in defs})
                state.save_defs(defs)
                conn.execute("UPDATE typedefs SET builtin=1")
                self.store.set_meta("builtin_loaded", "1")
                self.state = State(self.store, registry)
                self._data_version = self.store.data_version()
                return
            defs = [json.loads(r[0]) for r in rows]
            self.state = State(self.store, Registry({d["name"]: d for d in defs}))
            self._data_version = self.store.data_version()

    def _refresh_registry(self) -> None:
        """Reload the typedefs if another process wrote to the same database file since we last looked."""
        version = self.store.data_version()
        if version != self._data_version:
            self._data_version = version
            rows = self.store.conn.execute("SELECT body FROM typedefs").fetchall()
            defs = [json.loads(r[0]) for r in rows]
            self.state.registry = Registry({d["name"]: d for d in defs})

    @property
    def registry(self) -> Registry:
        return self.state.registry

    def close(self) -> None:
        self.store.close()

    # ------------------------------------------------------------------ test hooks
    def set_latency(self, fixed_ms: float = 0, per_entity_ms: float = 0, per_kib_ms: float = 0) -> None:
        """Delay every answer by ``fixed_ms`` plus ``per_entity_ms`` per entity in the request/response
        plus ``per_kib_ms`` per KiB of request body."""
        self.latency = Latency(float(fixed_ms), float(per_entity_ms), float(per_kib_ms))

    def set_racing_creates(self, window_ms: float, *, index_loss: bool = False) -> None:
        """Model concurrent creates as a real Atlas commits them: a create of a qualifiedName within
        ``window_ms`` of another request's create of it makes a second entity (neither transaction
        saw the other's); a GET by unique attribute then names any of the copies, as a real Atlas's
        does. ``index_loss``: also as Atlas 2.1.0's unique index, deleting one of the copies makes
        the others unfound by name (lookups, creates, references) until a write sets the name again
        (docs/real-atlas-differences.md RA-32). 0 turns it off."""
        self.state.racing_creates_ms = float(window_ms)
        self.state.racing_index_loss = bool(index_loss) and window_ms > 0
        if not self.state.racing_index_loss:
            self.state.unindexed.clear()

    def set_propagation_delay(self, delay_ms: float) -> None:
        """Propagate classifications ``delay_ms`` after the write that calls for it, at the first request
        after that (Atlas 2.4.0's background tasks), instead of in the write itself (2.1.0). 0: in the write."""
        self.state.propagation_delay_ms = float(delay_ms)

    def run_propagation(self) -> None:
        """Run a delayed propagation now (what Atlas's task queue does when it gets to it)."""
        with self.store.transaction():
            self._refresh_registry()
            propagation.refresh(self.state)
            self.state.propagation_due = None

    def set_contention(self, enabled: bool = True, *, hold_ms: float = 0.0) -> Contention | None:
        """Answer concurrent entity writes that touch the same entities with Atlas's lock-timeout 500
        (see :mod:`atlas_sync.emulator.contention`); ``hold_ms``: how long a write keeps its entities."""
        self.contention = Contention(hold_ms / 1000.0) if enabled else None
        return self.contention

    def inject_fault(
        self,
        kind: str,
        *,
        at: int | None = None,
        probability: float | None = None,
        seed: int = 0,
        status: int | None = None,
        retry_after: float | None = None,
        path_prefix: str | None = None,
        method: str | None = None,
    ) -> Fault:
        """Make requests fail: ``kind`` is "status", "reset", "timeout" or "lost_response"."""
        return self.faults.add(Fault(kind, at, probability, seed, status, retry_after, path_prefix, method))

    def clear_faults(self) -> None:
        self.faults.clear()

    def clear_log(self) -> None:
        with self._log_lock:
            self.request_log.clear()

    def _record(self, rec: RequestRecord) -> None:
        with self._log_lock:
            self.request_log.append(rec)
        if self.request_log_sink is not None:
            self.request_log_sink(rec)

    # ------------------------------------------------------------------ entry point
    def handle(
        self,
        method: str,
        path: str,
        query: Mapping[str, list[str]] | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes | str | None = b"",
    ) -> EmulatorResponse:
        """Answer one HTTP request. Raises an :class:`InjectedFault` for reset/timeout/lost faults."""
        started = time.perf_counter()
        method = method.upper()
        split = urlsplit(path)
        path = split.path
        q: dict[str, list[str]] = {
            k: [v] if isinstance(v, str) else list(v) for k, v in (query or {}).items()
        }
        if split.query:
            for k, v in parse_qs(split.query, keep_blank_values=True).items():
                q.setdefault(k, []).extend(v)
        hdrs = {k.lower(): v for k, v in (headers or {}).items()}
        raw = body.encode("utf-8") if isinstance(body, str) else (body or b"")
        fault = self.faults.pick(method, path)
        if fault is not None and fault.kind in ("reset", "timeout"):
            self._record(RequestRecord(method, path, 0, 0, _ms(started), fault.kind))
            raise ConnectionResetFault() if fault.kind == "reset" else TimeoutFault()
        if fault is not None and fault.kind == "status":
            resp = _status_fault(fault)
            self._record(RequestRecord(method, path, resp.status, 0, _ms(started), "status"))
            return resp
        contention = self.contention
        keys = contention.touched(method, path, q, raw) if contention is not None else set()
        ticket = contention.claim(keys) if contention is not None and keys else None
        if contention is not None and keys and ticket is None:
            # what Atlas answers when JanusGraph's commit hits a BerkeleyJE LockTimeoutException
            resp, ident = _server_error(JSON_TYPE)
            log.debug("%s %s: Could not commit transaction (lock timeout) (ID %s)", method, path, ident)
            count = 0
        else:
            try:
                resp, count = self._dispatch(method, path, q, hdrs, raw)
                if ticket is not None and contention is not None and contention.hold_seconds:
                    time.sleep(contention.hold_seconds)
            finally:
                if ticket is not None and contention is not None:
                    contention.release(ticket, raw, resp.body if resp.status == 200 else b"")
        delay = self.latency.seconds(count, len(raw))
        if delay:
            time.sleep(delay)
        self._record(RequestRecord(method, path, resp.status, count, _ms(started),
                                   fault.kind if fault else None, len(raw), len(resp.body)))  # fmt: skip
        if fault is not None and fault.kind == "lost_response":
            raise LostResponseFault()
        return resp

    def _dispatch(
        self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str], body: bytes
    ) -> tuple[EmulatorResponse, int]:
        too_big = _header_overflow(method, path, query, headers)
        if too_big is not None:
            return too_big, 0
        if not path.startswith("/api/atlas/"):
            return _plain(404, "Not Found"), 0
        sub = path[len("/api/atlas") :]
        if sub == "/admin/status":
            return _json(200, {"Status": "ACTIVE"}), 0
        user, cookie = self._authenticate(headers)
        if user is None:
            return self._unauthorized(method, path, headers), 0
        if (
            method not in ("GET", "HEAD", "OPTIONS", "TRACE")
            and BROWSER_UA.match(headers.get("user-agent", ""))
            and not headers.get("x-xsrf-header")
        ):
            msg = {"msgDesc": "Missing header or invalid Header value for CSRF Vulnerability Protection"}
            return _json(400, msg), 0
        resp, count = self._route(method, sub, query, headers, body, user)
        if cookie:
            resp.headers["Set-Cookie"] = f"ATLASSESSIONID={cookie}; Path=/; HttpOnly"
        return resp, count

    def _route(
        self,
        method: str,
        sub: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
        user: str,
    ) -> tuple[EmulatorResponse, int]:
        for m, pattern, handler in self.routes:
            if m != method:
                continue
            match = pattern.match(sub)
            if match is None:
                continue
            params = [unquote(g) for g in match.groups()]
            try:
                with self.store.transaction():
                    self._refresh_registry()
                    before = self.state.registry
                    self.state.user = user
                    self.state.staged = None
                    try:
                        due = self.state.propagation_due
                        if due is not None and time.monotonic() >= due:
                            propagation.refresh(self.state)
                            self.state.propagation_due = None
                        req = Request(method, sub, params, query, headers, body, self.state)
                        result = handler(req)
                        if method != "GET" and not sub.startswith("/v2/search"):
                            if self.state.propagation_delay_ms <= 0:
                                propagation.refresh(self.state)
                            elif self.state.propagation_due is None:
                                self.state.propagation_due = (
                                    time.monotonic() + self.state.propagation_delay_ms / 1000
                                )
                    except BaseException:
                        self.state.registry = before
                        self.state.staged = None
                        raise
            except AtlasApiError as exc:
                return _json(exc.status, {"errorCode": exc.code, "errorMessage": exc.message}), 0
            except BadJsonError as exc:
                return _json(400, {"error": str(exc)}), 0
            except (InternalError, EmulatorError) as exc:
                resp, ident = _server_error(JSON_TYPE)
                log.debug("%s %s: %s (ID %s)", method, sub, exc, ident)
                return resp, 0
            except Exception:  # Atlas maps any other failure to a 500 too; log it: it is an emulator bug
                resp, ident = _server_error(JSON_TYPE)
                log.exception("%s %s failed (ID %s)", method, sub, ident)
                return resp, 0
            return _result(result, body)
        return _server_error()[0], 0

    # ------------------------------------------------------------------ auth
    def _authenticate(self, headers: dict[str, str]) -> tuple[str | None, str | None]:
        auth = headers.get("authorization", "")
        if auth.lower().startswith("basic "):
            try:
                user, _, password = base64.b64decode(auth[6:].strip()).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError):
                return None, None
            expected = self.users.get(user)
            if expected is not None and secrets.compare_digest(expected, password):
                token = None
                if "ATLASSESSIONID=" not in headers.get("cookie", ""):
                    token = secrets.token_hex(16)
                    with self._log_lock:
                        self._sessions[token] = user
                        if len(self._sessions) > MAX_SESSIONS:  # clients that drop cookies must not grow this
                            self._sessions.pop(next(iter(self._sessions)))
                return user, token
            return None, None
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "ATLASSESSIONID" and value in self._sessions:
                return self._sessions[value], None
        return None, None

    def _unauthorized(self, method: str, path: str, headers: dict[str, str]) -> EmulatorResponse:
        if headers.get("x-requested-with", "") == "XMLHttpRequest":
            return _plain(419, "Session Timeout")
        if headers.get("user-agent", "") == "Mozilla":
            return EmulatorResponse(302, {"Location": "/login.jsp", "Content-Length": "0"}, b"")
        if method not in ("GET", "POST", "HEAD"):
            # Jetty's error handler writes a page only for GET/POST/HEAD: other methods get a bare 401
            return EmulatorResponse(401, {"Content-Length": "0"}, b"")
        if "application/json" in headers.get("accept", ""):
            body = json.dumps({"url": path, "status": "401", "message": "Unauthorized"}).encode()
            return EmulatorResponse(401, {"Content-Type": "application/json"}, body)
        html = (
            '<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html;charset=ISO-8859-1"/>\n'
            "<title>Error 401 Unauthorized</title>\n</head>\n<body><h2>HTTP ERROR 401 Unauthorized</h2>\n"
            f"<table>\n<tr><th>URI:</th><td>{path}</td></tr>\n<tr><th>STATUS:</th><td>401</td></tr>\n"
            "<tr><th>MESSAGE:</th><td>Unauthorized</td></tr>\n</table>\n</body>\n</html>\n"
        )
        return EmulatorResponse(401, {"Content-Type": "text/html;charset=iso-8859-1"}, html.encode("latin-1"))


# ---------------------------------------------------------------------- responses
def _header_overflow(
    method: str, path: str, query: Mapping[str, list[str]], headers: Mapping[str, str]
) -> EmulatorResponse | None:
    """Jetty's request buffer (atlas.jetty.request.buffer.size = 16192 bytes) caps the request line and
    headers together: that is what limits a bulk GET to roughly 350 guids (contract §0)."""
    uri = len(quote(path)) + (1 + len(urlencode(query, doseq=True)) if query else 0)
    line = len(method) + uri + len(" HTTP/1.1\r\n")
    head = sum(len(k) + len(v) + 4 for k, v in headers.items())
    if line + head <= JETTY_REQUEST_BUFFER:
        return None
    status, reason = (
        (414, "URI Too Long")
        if line > JETTY_REQUEST_BUFFER // 2
        else (431, "Request Header Fields Too Large")
    )
    body = f"<h1>Bad Message {status}</h1><pre>reason: {reason}</pre>"
    return EmulatorResponse(status, {"Content-Type": "text/html;charset=iso-8859-1", "Connection": "close"},
                            body.encode())  # fmt: skip


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _json(status: int, value: Any) -> EmulatorResponse:
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return EmulatorResponse(status, {"Content-Type": JSON_TYPE}, body)


def _plain(status: int, text: str) -> EmulatorResponse:
    return EmulatorResponse(status, {"Content-Type": "text/plain"}, text.encode("utf-8"))


def _server_error(content_type: str = "text/plain") -> tuple[EmulatorResponse, str]:
    """Atlas's AllExceptionMapper answer. The body is plain text, but once a resource matched the response
    keeps that resource's JSON ``Content-Type``; an unknown path answers ``text/plain``."""
    ident = f"{secrets.randbits(64):016x}"
    text = f"There was an error processing your request. It has been logged (ID {ident})."
    return EmulatorResponse(500, {"Content-Type": content_type}, text.encode("utf-8")), ident


def _status_fault(fault: Fault) -> EmulatorResponse:
    status = int(fault.status or 503)
    # a 500 is what Atlas's AllExceptionMapper answers for any failure (e.g. a lock timeout at commit)
    resp = _server_error(JSON_TYPE)[0] if status == 500 else _plain(status, f"injected fault: HTTP {status}")
    if fault.retry_after is not None:
        resp.headers["Retry-After"] = str(int(fault.retry_after) if float(fault.retry_after).is_integer()
                                          else fault.retry_after)  # fmt: skip
    return resp


def _result(result: Any, body: bytes) -> tuple[EmulatorResponse, int]:
    if isinstance(result, NoContent):
        # Atlas 2.4 sets requestId only on responses without a body (AuditFilter runs after the flush)
        return EmulatorResponse(204, {"requestId": str(uuid.uuid4())}, b""), 0
    if isinstance(result, Text):
        return _plain(200, result.text), 0
    return _json(200, result), _entity_count(result, body)


def _entity_count(result: Any, body: bytes) -> int:
    count = 0
    if body[:1] in (b"{", b"[") and len(body) < 50_000_000:
        try:
            sent = json.loads(body)
        except ValueError:
            sent = None
        if isinstance(sent, dict) and isinstance(sent.get("entities"), list):
            count = len(sent["entities"])
        elif isinstance(sent, dict) and isinstance(sent.get("entity"), dict):
            count = 1
        elif isinstance(sent, list):
            count = len(sent)
    if isinstance(result, dict):
        if isinstance(result.get("entities"), list):
            count = max(count, len(result["entities"]))
        elif isinstance(result.get("entity"), dict):
            count = max(count, 1)
        mutated = result.get("mutatedEntities")
        if isinstance(mutated, dict):
            count = max(count, sum(len(v) for v in mutated.values() if isinstance(v, list)))
    return count
