"""The Atlas REST client every atlas-sync command uses.

All requests go through one ``requests.Session`` with explicit timeouts, retries (see
:class:`RetryPolicy`), error mapping (:mod:`atlas_sync.atlas.errors`) and per-kind counters
(:attr:`AtlasClient.stats`). The same code talks to a real Atlas, to ``atlas-sync emulator serve``
over HTTP, or to the embedded emulator mounted as a transport adapter (no socket).

Why not ``apache_atlas.client.base_client.AtlasClient``: its ``call_api`` sends without a timeout,
raises one exception type with the body pasted into the message, coerces every answer into its model
classes (slow for thousands of entities) and has no batching or paging; so this client calls through
its own session and uses plain dicts in Atlas's JSON shapes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import requests
import requests.adapters
from requests.auth import AuthBase, HTTPBasicAuth

from atlas_sync.atlas.concurrency import InFlight
from atlas_sync.atlas.errors import (
    AtlasError,
    AuthError,
    ConflictError,
    NotAtlasError,
    NotFoundError,
    TransportError,
    error_class_for,
)
from atlas_sync.atlas.interface import Capabilities
from atlas_sync.atlas.mutation import (
    MutationResult,
    encode_entity,
    guid_assignments_only,
    order_for_batching,
    rewrite_placeholders,
)
from atlas_sync.atlas.retry import RetryPolicy
from atlas_sync.atlas.stats import ClientStats
from atlas_sync.errors import ConfigError

log = logging.getLogger("atlas_sync.atlas")

API = "/api/atlas"

# GET/DELETE with many guid= / attr_N: params: Jetty's request buffer is 16192 bytes (contract §0),
# about 350 guids; stay well below in both count and encoded query length.
MAX_IDS_PER_GET = 300
MAX_QUERY_BYTES = 13_000
MAX_PURGE = 1000  # atlas.purge.api.max.request.size on newer Atlas
MAX_SEARCH_LIMIT = 10_000  # atlas.search.maxlimit; larger limits silently become 100
TYPEDEF_LISTS = (
    "enumDefs",
    "structDefs",
    "classificationDefs",
    "entityDefs",
    "relationshipDefs",
    "businessMetadataDefs",
)


class BasicAuth(HTTPBasicAuth):
    """HTTP basic auth whose repr never shows the password."""

    def __repr__(self) -> str:
        return f"BasicAuth(username={self.username!r}, password='**********')"


def _secret(value: Any) -> str:
    """The plain text of a str or pydantic SecretStr."""
    getter = getattr(value, "get_secret_value", None)
    return str(getter() if getter else value)


def _server_url(url: str) -> str:
    """The server root as given, without a trailing slash; a URL with credentials is refused (they
    would end up in logs). Full normalisation of user input is :func:`atlas_sync.config.normalize_base_url`.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"Atlas URL {url!r} is not an http(s) URL", hint="give it like https://atlas:21000")
    if parts.password is not None:
        raise ConfigError(
            "the Atlas URL contains a password",
            hint="remove it from the URL and pass the password in auth= instead",
        )
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1], parts.path.rstrip("/"), "", ""))


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _chunks_by_query(
    params: Sequence[tuple[str, str]], max_count: int = MAX_IDS_PER_GET, max_bytes: int = MAX_QUERY_BYTES
) -> Iterator[list[tuple[str, str]]]:
    """Split repeated query params into chunks bounded by count and encoded length."""
    chunk: list[tuple[str, str]] = []
    size = 0
    for key, value in params:
        n = len(urlencode([(key, value)])) + 1
        if chunk and (len(chunk) >= max_count or size + n > max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((key, value))
        size += n
    if chunk:
        yield chunk


def _parse_error_body(resp: requests.Response) -> tuple[str | None, str | None, Any]:
    """(errorCode, errorMessage, parsed body) from any of Atlas's error body shapes (contract §0, §8)."""
    text = resp.text or ""
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        if "errorCode" in body or "errorMessage" in body:
            return body.get("errorCode"), body.get("errorMessage"), body
        for key in ("error", "msgDesc", "message"):
            if key in body:
                return None, str(body[key]), body
        return None, text[:300], body
    content_type = resp.headers.get("Content-Type", "")
    if "html" in content_type or text.lstrip().startswith("<"):
        return None, None, None  # Jetty's error page: the status says it all
    return None, text.strip()[:300] or None, None


class AtlasClient:
    """Client of the Apache Atlas REST API v2 (and of the embedded emulator).

    ``base_url`` is the Atlas server (``https://host:21000``); ``auth`` a ``(user, password)`` pair
    (password may be a ``SecretStr``), a ``requests`` auth object (e.g. Kerberos), or None.
    ``verify`` is True (system CAs), a CA bundle path, or False (insecure; warns).
    ``timeout`` is ``(connect, read)`` seconds. Thread-safe for concurrent calls; ``max_in_flight``
    bounds the requests in flight at once, from all threads (None: no bound).
    """

    def __init__(
        self,
        base_url: str,
        *,
        auth: tuple[str, Any] | AuthBase | None = None,
        verify: bool | str = True,
        timeout: tuple[float, float] = (10, 60),
        retry: RetryPolicy | None = None,
        session: requests.Session | None = None,
        batch_size: int = 500,
        max_batch_bytes: int = 4_000_000,
        max_in_flight: int | None = None,
    ) -> None:
        self.base_url = _server_url(base_url)
        self.username: str | None = None
        self._auth: AuthBase | None
        if isinstance(auth, tuple):
            self.username = auth[0]
            self._auth = BasicAuth(auth[0], _secret(auth[1]))
        else:
            self._auth = auth
        if verify is False:
            log.warning("TLS certificate verification is OFF for %s (insecure mode)", self.base_url)
            import urllib3

            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self.verify = verify
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        if session is None:
            session = requests.Session()
            # Room for parallel batches (the default pool keeps 10 connections per host).
            adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=32)
            session.mount("https://", adapter)
            session.mount("http://", adapter)
        self.session = session
        self.batch_size = batch_size
        self.max_batch_bytes = max_batch_bytes
        self.stats = ClientStats()
        # every request of every thread holds a slot while on the wire (--parallel)
        self.in_flight = InFlight(max_in_flight)
        self.emulator: Any = None  # the in-process server when embedded (set by atlas_sync.factory)
        self._clock_offset: float | None = None  # the server's clock minus ours (its Date header), s
        self._joined_type_search = True  # until the server refuses it (Atlas before 2.2)
        self.target = f"Atlas at {self.base_url}" + (f" (user {self.username})" if self.username else "")

    def __repr__(self) -> str:
        return f"AtlasClient({self.target!r})"

    @property
    def capabilities(self) -> Capabilities:
        """What this client can do (:class:`~atlas_sync.atlas.interface.Capabilities`)."""
        return Capabilities(
            server_clock="in-process" if self.emulator is not None else "date-header",
            joined_type_search=self._joined_type_search,
        )

    def note_one_type_per_search(self) -> None:
        """The server refused type names joined by commas in a basic search: one type per search now."""
        self._joined_type_search = False

    def server_time_ms(self) -> int:
        """The server's time now, in ms since the epoch, from the ``Date`` header of the first answer
        that had one (to the second); this machine's clock before any."""
        return int((time.time() + (self._clock_offset or 0.0)) * 1000)

    # ------------------------------------------------------------------ transport

    def _call(
        self,
        kind: str,
        method: str,
        path: str,
        *,
        params: Sequence[tuple[str, str]] | None = None,
        body: Any = None,
        idempotent: bool = True,
        not_found_ok: bool = False,
        data: bytes | None = None,
        before_retry: Callable[[int | None, str], None] | None = None,
        parse: Callable[[bytes], Any] | None = None,
    ) -> Any:
        """One API call with retries; returns the parsed JSON (None for an empty body).

        With ``not_found_ok`` a 404 returns None instead of raising. ``data``: a JSON body already encoded.
        ``before_retry(status, body text)`` runs before each retry (status None: no answer).
        ``parse``: reads a successful answer's body instead of a full JSON parse.
        """
        url = self.base_url + API + path
        if data is None and body is not None:
            data = json.dumps(body, ensure_ascii=False).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        policy = self.retry
        started = time.monotonic()
        attempt = 0
        ambiguous = False  # an earlier attempt may have been applied (lost response / timeout / 5xx)
        while True:
            attempt += 1
            t0 = time.monotonic()
            self.stats.record(kind, requests=1, bytes_sent=len(data or b""), retries=1 if attempt > 1 else 0)
            try:
                with self.in_flight.slot():
                    resp = self.session.request(
                        method,
                        url,
                        params=list(params) if params else None,
                        data=data,
                        headers=headers,
                        auth=self._auth,
                        timeout=self.timeout,
                        verify=self.verify,
                    )
            except requests.exceptions.SSLError as exc:
                self.stats.record(kind, errors=1, seconds=time.monotonic() - t0)
                raise TransportError(
                    f"TLS handshake with {self.base_url} failed: {_short(exc)}",
                    method=method,
                    path=API + path,
                    hint=self._tls_hint(exc),
                ) from None
            except (
                requests.exceptions.ConnectionError,
                requests.exceptions.Timeout,
                requests.exceptions.ChunkedEncodingError,
            ) as exc:
                elapsed = time.monotonic() - t0
                self.stats.record(kind, seconds=elapsed)
                # A connect failure never reached the server; anything later may have been applied.
                sent = not isinstance(exc, requests.exceptions.ConnectTimeout) and not _refused(exc)
                wait = policy.next_wait(attempt, started) if (idempotent or not sent) else None
                if wait is None:
                    self.stats.record(kind, errors=1)
                    raise self._transport_error(method, path, exc, attempt) from None
                ambiguous = ambiguous or sent
                log.info(
                    "%s %s%s failed (%s); retry %d in %.1f s",
                    method,
                    API,
                    path,
                    _short(exc),
                    attempt,
                    wait,
                )
                if before_retry is not None:
                    before_retry(None, _short(exc))
                self._sleep(kind, wait)
                continue
            content = resp.content or b""
            if self._clock_offset is None and resp.headers.get("Date"):
                with contextlib.suppress(TypeError, ValueError, IndexError):
                    self._clock_offset = parsedate_to_datetime(resp.headers["Date"]).timestamp() - time.time()
            self.stats.record(kind, bytes_received=len(content), seconds=time.monotonic() - t0)
            status = resp.status_code
            html = "html" in resp.headers.get("Content-Type", "")
            # (a web server's HTML page for a method it lacks, e.g. 501 to any POST of `python -m
            # http.server`, is no Atlas either: Atlas's REST API answers JSON)
            if status == 404 or (html and (status < 300 or status in (405, 501))):
                self._check_atlas_answer(kind, method, path, resp, content)
            log.debug(
                "%s %s%s -> %d (%.0f ms, %d B sent, %d B received)",
                method,
                API,
                path,
                status,
                (time.monotonic() - t0) * 1000,
                len(data or b""),
                len(content),
            )
            if status < 400:
                if not content.strip():
                    return None
                try:
                    return parse(content) if parse is not None else resp.json()
                except ValueError:
                    return resp.text
            if status == 404 and not_found_ok:
                return None
            if status in policy.statuses and idempotent:
                wait = policy.next_wait(attempt, started, resp.headers.get("Retry-After"))
                if wait is not None:
                    ambiguous = ambiguous or status != 429
                    log.info("%s %s%s -> %d; retry %d in %.1f s", method, API, path, status, attempt, wait)
                    if before_retry is not None:
                        before_retry(status, content[:2000].decode("utf-8", "replace"))
                    self._sleep(kind, wait)
                    continue
            self.stats.record(kind, errors=1)
            err = self._http_error(method, path, resp, attempt)
            err.retried_after_ambiguous = ambiguous
            raise err

    def call(
        self,
        kind: str,
        method: str,
        path: str,
        *,
        params: Sequence[tuple[str, str]] | None = None,
        body: Any = None,
        idempotent: bool = True,
        not_found_ok: bool = False,
    ) -> Any:
        """One API call under ``/api/atlas`` (``path`` like ``/v2/glossary``) with this client's retries,
        error mapping and counters (under ``kind``): for the calls with no method of their own
        (:mod:`atlas_sync.atlas.metadata`, :mod:`atlas_sync.atlas.glossary`)."""
        return self._call(
            kind, method, path, params=params, body=body, idempotent=idempotent, not_found_ok=not_found_ok
        )

    def _sleep(self, kind: str, seconds: float) -> None:
        self.stats.record(kind, seconds=seconds)
        if seconds > 0:
            self.retry.sleep(seconds)

    def _tls_hint(self, exc: requests.exceptions.SSLError) -> str:
        ca = "give the server's CA with --ca-bundle / ATLAS_CA_BUNDLE (or, for a throwaway test server only, --insecure)"
        if "certificate verify failed" in str(exc).lower():
            return ca
        parts = urlsplit(self.base_url)
        if parts.hostname and _speaks_plain_http(parts.hostname, parts.port or 443, self.timeout[0]):
            plain = urlunsplit(("http", parts.netloc, parts.path, "", ""))
            return f"the server answers plain HTTP, not HTTPS: use {plain}"
        return ca

    def _check_atlas_answer(
        self, kind: str, method: str, path: str, resp: requests.Response, content: bytes
    ) -> None:
        """Raise :class:`NotAtlasError` unless a 404 carries Atlas's error JSON (every 404 of Atlas's
        REST API does: ``{"errorCode": "ATLAS-404-...", ...}``) and a success, a 405 or a 501 is not an
        HTML page.
        Only the answer at hand is read: no request is added."""
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip() or "no content type"
        if resp.status_code == 404:
            try:
                body = json.loads(content)
            except ValueError:
                body = None
            code = body.get("errorCode") if isinstance(body, dict) else None
            if isinstance(code, str) and code.startswith("ATLAS-404"):
                return
        self.stats.record(kind, errors=1)
        raise NotAtlasError(
            f"no Atlas at {self.base_url} ({method} {API}{path} answered HTTP {resp.status_code} "
            f"{ctype}, not Atlas's JSON)",
            status=resp.status_code,
            method=method,
            path=API + path,
            hint=f"check ATLAS_URL / --url: give Atlas's root (its REST API is <URL>{API}/...), "
            "e.g. http://atlas-host:21000, with no path unless Atlas is served under one; a login page "
            "or proxy in front of Atlas answers like this too",
        )

    def _transport_error(self, method: str, path: str, exc: Exception, attempts: int) -> TransportError:
        what = "timed out" if isinstance(exc, requests.exceptions.Timeout) else "could not connect"
        if isinstance(exc, requests.exceptions.ReadTimeout):
            what = f"got no answer within {self.timeout[1]:g} s"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        hint = (
            "check that Atlas is running and the URL is right (`atlas-sync status`); unset ATLAS_URL "
            "to use the embedded emulator instead"
        )
        if isinstance(exc, requests.exceptions.ReadTimeout):
            hint = "Atlas is slow to answer: raise --timeout, or lower --batch-size"
        return TransportError(
            f"{method} {API}{path}: {what} to {self.base_url}{tries} ({_short(exc)})",
            method=method,
            path=API + path,
            hint=hint,
        )

    def _http_error(self, method: str, path: str, resp: requests.Response, attempts: int) -> AtlasError:
        status = resp.status_code
        code, message, body = _parse_error_body(resp)
        cls = error_class_for(status)
        hint: str | None = None
        if status in (401, 419):
            who = f"user {self.username!r}" if self.username else "no credentials"
            message = message or "authentication failed"
            hint = (
                f"Atlas at {self.base_url} refused {who}; set the user with --user / ATLAS_USERNAME and the "
                "password with ATLAS_PASSWORD, ATLAS_PASSWORD_FILE or --password-file"
            )
        elif status == 403:
            hint = f"user {self.username!r} lacks the Atlas privilege for this; ask an Atlas admin"
        elif status == 429 or (status >= 500 and code is None):
            tries = f" (tried {attempts} times)" if attempts > 1 else ""
            hint = f"the server kept failing{tries}; check the Atlas server log, then run again"
        text = f"{method} {API}{path} failed: HTTP {status}"
        if code:
            text += f" {code}"
        if message:
            text += f": {message}"
        return cls(
            text,
            status=status,
            error_code=code,
            error_message=message,
            method=method,
            path=API + path,
            hint=hint,
            body=body,
        )

    # ------------------------------------------------------------------ admin

    def status(self) -> str:
        """Atlas's service state (``ACTIVE``, ``PASSIVE``, ...); needs no credentials."""
        body = self._call("admin", "GET", "/admin/status")
        return str((body or {}).get("Status", "UNKNOWN")) if isinstance(body, dict) else "UNKNOWN"

    def version(self) -> dict[str, Any]:
        """``{"Version": ..., "Revision": ..., "Name": ..., "Description": ...}`` (authenticated)."""
        return self._call("admin", "GET", "/admin/version") or {}

    # ------------------------------------------------------------------ typedefs

    def get_typedefs(
        self,
        type_: str | None = None,
        name: str | None = None,
        supertype: str | None = None,
        service_type: str | None = None,
    ) -> dict[str, Any]:
        """``AtlasTypesDef`` (six lists), filtered by category ``type_``, exact ``name``, ``supertype``,
        ``service_type`` (Atlas 2.1 reads the lowercase ``servicetype`` only: ``serviceType=`` is ignored
        and answers every type)."""
        pairs = (("type", type_), ("name", name), ("supertype", supertype), ("servicetype", service_type))
        params = [(k, v) for k, v in pairs if v]
        return self._call("typedef_read", "GET", "/v2/types/typedefs", params=params) or {}

    def get_typedef_headers(self) -> list[dict[str, Any]]:
        """``[{guid, name, category, serviceType?}]`` of every type."""
        return self._call("typedef_read", "GET", "/v2/types/typedefs/headers") or []

    def get_typedef_by_name(self, name: str) -> dict[str, Any] | None:
        """One def of any category, or None if no type has this name."""
        return self._call(
            "typedef_read", "GET", f"/v2/types/typedef/name/{quote(name, safe='')}", not_found_ok=True
        )

    def create_typedefs(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST new types (all-or-nothing; an existing one is a :class:`ConflictError`).

        If a retry hits 409 because the first attempt was applied but its answer lost, the created
        defs are read back and returned as if the first answer had arrived.
        """
        try:
            return self._call("typedef_write", "POST", "/v2/types/typedefs", body=body) or {}
        except ConflictError as exc:
            if not exc.retried_after_ambiguous:
                raise
            out: dict[str, Any] = {key: [] for key in TYPEDEF_LISTS}
            for key in TYPEDEF_LISTS:
                for d in body.get(key) or []:
                    found = self.get_typedef_by_name(d.get("name", ""))
                    if found is None:
                        raise
                    out[key].append(found)
            return out

    def update_typedefs(self, body: dict[str, Any]) -> dict[str, Any]:
        """PUT changed types (every existing attribute must be listed; new ones optional)."""
        return self._call("typedef_write", "PUT", "/v2/types/typedefs", body=body) or {}

    def delete_typedefs(self, body: dict[str, Any]) -> None:
        """DELETE the types named in ``body``; mutually referencing types may go together.

        A 404 on a retry whose first attempt may have been applied counts as done.
        """
        try:
            self._call("typedef_write", "DELETE", "/v2/types/typedefs", body=body)
        except NotFoundError as exc:
            if not exc.retried_after_ambiguous:
                raise

    def delete_typedef_by_name(self, name: str) -> None:
        """DELETE one type by name (a 404 after an ambiguous first attempt counts as done)."""
        try:
            self._call("typedef_write", "DELETE", f"/v2/types/typedef/name/{quote(name, safe='')}")
        except NotFoundError as exc:
            if not exc.retried_after_ambiguous:
                raise

    # ------------------------------------------------------------------ entity writes

    def upsert_entities(
        self,
        entities: Sequence[dict[str, Any]],
        *,
        batch_size: int | None = None,
        max_bytes: int | None = None,
        before_retry: Callable[[int | None, str], None] | None = None,
        headers: bool = True,
    ) -> MutationResult:
        """Create or update entities (POST ``/v2/entity/bulk``) in batches.

        Give new entities negative placeholder guids (``"-1"``) and reference them by those; Atlas
        matches each entity by qualifiedName, so a repeat is an update (or a skipped no-op).
        Batches hold at most ``batch_size`` entities and about ``max_bytes`` of JSON; entities are
        reordered (stably) only if one references a placeholder defined after it; references to
        placeholders created by an earlier batch are rewritten to the real guids. On failure the
        raised :class:`AtlasError` has ``.partial``: the merged result of the batches already applied.
        ``before_retry(status, body text)`` runs before a failed request is retried (e.g. to let
        other writes in flight finish first when the server signals lock contention).
        ``headers=False``: keep only ``guid_assignments`` (and ``requests``), not the entity headers of
        ``created`` / ``updated``; the answers (~0.6 KB per entity) are then not parsed in full.
        """
        result = MutationResult()
        parse = None if headers else guid_assignments_only
        if not entities:
            return result
        batch_size = batch_size or self.batch_size
        max_bytes = max_bytes or self.max_batch_bytes
        assigned = result.guid_assignments
        # One request resolves its placeholders in any order: reorder only when there will be several.
        encoded = [encode_entity(e) for e in entities] if len(entities) <= batch_size else []
        ordered = not encoded or sum(map(len, encoded)) + len(encoded) > max_bytes
        pending = deque(order_for_batching(entities) if ordered else entities)
        first = {} if ordered else {id(e): part for e, part in zip(entities, encoded, strict=True)}
        n = 0
        while pending:
            # Sized on the bytes sent: placeholders of earlier batches already replaced by real guids.
            batch: list[dict[str, Any]] = []
            parts: list[bytes] = []
            size = 0
            while pending and len(batch) < batch_size:
                part = first.get(id(pending[0])) if not assigned else None
                if part is None:
                    part = encode_entity(rewrite_placeholders(pending[0], assigned))
                if batch and size + len(part) + 1 > max_bytes:
                    break
                batch.append(pending.popleft())
                parts.append(part)
                size += len(part) + 1
            n += 1
            body = b'{"entities":[' + b",".join(parts) + b"]}"
            try:
                response = self._call(
                    "entity_write",
                    "POST",
                    "/v2/entity/bulk",
                    data=body,
                    before_retry=before_retry,
                    parse=parse,
                )
            except AtlasError as exc:
                if exc.status == 413 and len(batch) > 1:
                    # the server takes less than max_bytes: halve the batches from here on
                    max_bytes = max(1, size // 2)
                    log.info(
                        "HTTP 413 for %d entities (%d bytes); sending at most %d bytes",
                        len(batch),
                        size,
                        max_bytes,
                    )
                    pending.extendleft(reversed(batch))
                    if not ordered:  # now split: placeholders must come before their references
                        pending, ordered = deque(order_for_batching(list(pending))), True
                    n -= 1
                    continue
                exc.partial = result
                if exc.status == 413:
                    e = batch[0]
                    qn = (e.get("attributes") or {}).get("qualifiedName")
                    exc.message = (
                        f"{exc.message}: entity {e.get('typeName')} {qn!r} is {size - 1} bytes of JSON, "
                        "more than the server takes in one request"
                    )
                    exc.args = (exc.message,)
                    exc.hint = (
                        "shorten its attributes (e.g. a long description or query text), "
                        "or raise the server's request size limit"
                    )
                if n > 1:
                    applied = f"batch {n} failed; {n - 1} earlier batches were applied"
                    exc.hint = f"{exc.hint}; {applied}" if exc.hint else applied
                raise
            result.requests += 1
            result.merge(response)
        return result

    def create_relationship(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create one relationship (POST ``/v2/relationship``): ``{"typeName", "end1", "end2"}`` with
        object ids as ends. A 409 means an ACTIVE one exists already. Used to bring back a reference a
        real Atlas 2.4 left DELETED when an update listed it again (docs/real-atlas-differences.md)."""
        result: dict[str, Any] = self._call("entity_write", "POST", "/v2/relationship", body=body)
        return result

    def get_relationship(self, guid: str) -> dict[str, Any]:
        """One relationship (GET ``/v2/relationship/guid/{guid}``): its ``typeName``, ``end1``,
        ``end2`` and ``attributes``."""
        result: dict[str, Any] = self._call(
            "entity_read", "GET", f"/v2/relationship/guid/{quote(guid, safe='')}"
        )
        rel = result.get("relationship") if isinstance(result, dict) else None
        return rel if isinstance(rel, dict) else {}

    def set_entity_attribute(self, guid: str, name: str, value: Any) -> MutationResult:
        """Set one attribute of one entity (PUT ``/v2/entity/guid/{guid}?name=<attribute>``, Atlas's
        partial update): its other attributes and its relationships stay as they are, and unlike a
        bulk write Atlas does not ask for the entity's mandatory attributes and references."""
        result = MutationResult(requests=1)
        result.merge(
            self._call(
                "entity_write",
                "PUT",
                f"/v2/entity/guid/{quote(guid, safe='')}",
                params=[("name", name)],
                body=value,
            )
        )
        return result

    def delete_entities(
        self,
        guids: Iterable[str],
        *,
        hard: bool = False,
        before_retry: Callable[[int | None, str], None] | None = None,
    ) -> MutationResult:
        """Delete entities by guid (DELETE ``/v2/entity/bulk``), chunked; unknown guids are ignored.

        Atlas also deletes what they own (composition) and lists it in the answer. ``hard`` asks for a
        hard delete (``deleteType=HARD``), which Atlas honours only with
        ``atlas.rest.enable.delete.type.override=true`` and otherwise ignores (a soft delete then).
        ``before_retry`` as for :meth:`upsert_entities` (the write path's contention back-off).
        """
        result = MutationResult()
        params = [("guid", g) for g in dict.fromkeys(guids)]
        extra = [("deleteType", "HARD")] if hard else []
        for chunk in _chunks_by_query(params):
            response = self._call(
                "entity_delete",
                "DELETE",
                "/v2/entity/bulk",
                params=chunk + extra,
                before_retry=before_retry,
            )
            result.requests += 1
            result.merge(response)
        return result

    def purge_entities(
        self, guids: Iterable[str], *, before_retry: Callable[[int | None, str], None] | None = None
    ) -> MutationResult:
        """Purge (hard-delete) soft-deleted entities (PUT ``/admin/purge``) in chunks of <= 1000.

        ACTIVE and unknown guids are ignored by Atlas. ``before_retry`` as for :meth:`delete_entities`.
        """
        result = MutationResult()
        unique = list(dict.fromkeys(guids))
        for i in range(0, len(unique), MAX_PURGE):
            response = self._call(
                "purge", "PUT", "/admin/purge", body=unique[i : i + MAX_PURGE], before_retry=before_retry
            )
            result.requests += 1
            result.merge(response)
        return result

    # ------------------------------------------------------------------ entity reads

    def _read_flags(self, min_ext_info: bool, ignore_relationships: bool) -> list[tuple[str, str]]:
        return [("minExtInfo", _bool(min_ext_info)), ("ignoreRelationships", _bool(ignore_relationships))]

    def get_entity_with_ext_info(
        self, guid: str, *, min_ext_info: bool = False, ignore_relationships: bool = False
    ) -> dict[str, Any] | None:
        """``{"entity": ..., "referredEntities": ...}`` by guid (DELETED included), or None."""
        return self._call(
            "entity_read",
            "GET",
            f"/v2/entity/guid/{quote(guid, safe='')}",
            params=self._read_flags(min_ext_info, ignore_relationships),
            not_found_ok=True,
        )

    def get_entity(
        self, guid: str, *, min_ext_info: bool = False, ignore_relationships: bool = False
    ) -> dict[str, Any] | None:
        """The entity (the ``entity`` member of Atlas's answer) by guid, or None if unknown.

        Soft-deleted entities are returned, with ``status`` DELETED.
        """
        body = self.get_entity_with_ext_info(
            guid, min_ext_info=min_ext_info, ignore_relationships=ignore_relationships
        )
        return body.get("entity") if body else None

    def get_entity_by_unique(
        self,
        type_name: str,
        qualified_name: str,
        *,
        attribute: str = "qualifiedName",
        min_ext_info: bool = False,
        ignore_relationships: bool = False,
    ) -> dict[str, Any] | None:
        """The ACTIVE entity of ``type_name`` (or a subtype) with this unique attribute, or None."""
        params = [(f"attr:{attribute}", qualified_name)] + self._read_flags(
            min_ext_info, ignore_relationships
        )
        body = self._call(
            "entity_read",
            "GET",
            f"/v2/entity/uniqueAttribute/type/{quote(type_name, safe='')}",
            params=params,
            not_found_ok=True,
        )
        return body.get("entity") if body else None

    def get_entities(
        self, guids: Iterable[str], *, min_ext_info: bool = False, ignore_relationships: bool = False
    ) -> list[dict[str, Any]]:
        """Entities by guid (bulk GET, ~300 per request); unknown guids are skipped.

        Atlas fails a whole bulk GET when one guid is unknown; such a chunk is split in halves until
        the unknown guids are isolated.
        """
        flags = self._read_flags(min_ext_info, ignore_relationships)
        out: list[dict[str, Any]] = []
        params = [("guid", g) for g in dict.fromkeys(guids)]
        for chunk in _chunks_by_query(params):
            out.extend(self._get_bulk(chunk, flags))
        return out

    def _get_bulk(self, chunk: list[tuple[str, str]], flags: list[tuple[str, str]]) -> list[dict[str, Any]]:
        # Atlas fails the whole bulk GET if one guid is unknown: bisect to find and skip it.
        try:
            body = self._call("entity_read", "GET", "/v2/entity/bulk", params=chunk + flags)
        except NotFoundError:
            if len(chunk) == 1:
                return []
            half = len(chunk) // 2
            return self._get_bulk(chunk[:half], flags) + self._get_bulk(chunk[half:], flags)
        return list((body or {}).get("entities") or [])

    def get_entities_by_unique(
        self,
        type_name: str,
        qualified_names: Iterable[str],
        *,
        attribute: str = "qualifiedName",
        min_ext_info: bool = False,
        ignore_relationships: bool = False,
    ) -> list[dict[str, Any]]:
        """ACTIVE entities by unique attribute (bulk GET, ~300 per request); missing ones are skipped."""
        flags = self._read_flags(min_ext_info, ignore_relationships)
        path = f"/v2/entity/bulk/uniqueAttribute/type/{quote(type_name, safe='')}"
        out: list[dict[str, Any]] = []
        names = list(dict.fromkeys(qualified_names))
        params = [(f"attr_{i}:{attribute}", qn) for i, qn in enumerate(names)]
        for chunk in _chunks_by_query(params):
            # attr_N indexes only group values; renumber from 0 in each request.
            renumbered = [(f"attr_{i}:{attribute}", value) for i, (_, value) in enumerate(chunk)]
            body = self._call("entity_read", "GET", path, params=renumbered + flags, not_found_ok=True)
            out.extend((body or {}).get("entities") or [])
        return out

    # ------------------------------------------------------------------ search

    def search_basic(
        self,
        type_name: str,
        *,
        query: str | None = None,
        entity_filters: dict[str, Any] | None = None,
        exclude_deleted: bool = True,
        attributes: Sequence[str] | None = None,
        page_size: int = 1000,
        include_subtypes: bool = True,
        sort_by: str | None = None,
        dedupe: bool = True,
        include_classifications: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Entity headers from POST ``/v2/search/basic``, paging with ``offset`` until a short page.

        ``include_classifications`` asks for each header's ``classifications`` (own and propagated,
        each with its ``entityGuid``: ``includeClassificationAttributes``); else headers carry only
        ``classificationNames``.

        ``dedupe`` drops a header already given (pages shift when entities change meanwhile); it
        remembers every guid, so a caller that tolerates repeats over a huge result may turn it off.

        ``entity_filters`` is Atlas's FilterCriteria, e.g. ``{"attributeName": "qualifiedName",
        "operator": "endsWith", "attributeValue": "@demo"}`` (operator spellings: ``=``, ``startsWith``,
        ``endsWith``, ...; Atlas 2.4 silently drops unknown ones). Deleted entities are excluded unless
        ``exclude_deleted=False`` (Atlas's own default is to include them).
        """
        limit = max(1, min(page_size, MAX_SEARCH_LIMIT))
        body: dict[str, Any] = {
            "typeName": type_name,
            "excludeDeletedEntities": exclude_deleted,
            "includeSubTypes": include_subtypes,
            "limit": limit,
            "offset": 0,
        }
        if query:
            body["query"] = query
        if entity_filters:
            body["entityFilters"] = entity_filters
        if attributes:
            body["attributes"] = list(attributes)
        if sort_by:
            body["sortBy"] = sort_by
            body["sortOrder"] = "ASCENDING"
        if include_classifications:
            body["includeClassificationAttributes"] = True
        offset = 0
        seen: set[str] = set()
        while True:
            body["offset"] = offset
            page = self._call("search", "POST", "/v2/search/basic", body=body) or {}
            entities = page.get("entities") or []
            # A server with a lower atlas.search.maxlimit silently shrinks the page; judge "short page"
            # by the limit it actually used, or results would be cut off without a word.
            used = (page.get("searchParameters") or {}).get("limit")
            page_limit = used if isinstance(used, int) and 0 < used < limit else limit
            fresh = [e for e in entities if e.get("guid") not in seen]
            if dedupe:
                seen.update(str(e.get("guid")) for e in fresh)
            yield from fresh
            if len(entities) < page_limit:
                return
            if not fresh:
                log.warning(
                    "search for %s returned the same page again at offset %d; stopping", type_name, offset
                )
                return
            offset += len(entities)

    def _first_header(
        self, type_name: str, entity_filters: dict[str, Any] | None, exclude_deleted: bool, **extra: Any
    ) -> dict[str, Any]:
        """One page of one header of a basic search (its ``approximateCount`` is the point)."""
        body: dict[str, Any] = {
            "typeName": type_name,
            "excludeDeletedEntities": exclude_deleted,
            "includeSubTypes": True,
            "limit": 1,
            "offset": 0,
            **extra,
        }
        if entity_filters:
            body["entityFilters"] = entity_filters
        return self._call("search", "POST", "/v2/search/basic", body=body) or {}

    def search_count(
        self, type_name: str, *, entity_filters: dict[str, Any] | None = None, exclude_deleted: bool = True
    ) -> int | None:
        """How many entities a basic search matches (its ``approximateCount``, one request for one
        header), or ``None`` when the server gives no count."""
        page = self._first_header(type_name, entity_filters, exclude_deleted, attributes=["qualifiedName"])
        count = page.get("approximateCount")
        return count if isinstance(count, int) and count >= 0 else None

    def search_newest(
        self, type_name: str, *, entity_filters: dict[str, Any] | None = None, exclude_deleted: bool = False
    ) -> tuple[int | None, int | None]:
        """How many entities a basic search matches (deleted ones too, unless ``exclude_deleted``) and
        the newest ``__modificationTimestamp`` among them (ms), from one request for one header sorted
        by it; ``(None, ...)`` when the server gives no count, ``(..., None)`` when nothing matches."""
        stamp = "__modificationTimestamp"
        page = self._first_header(
            type_name,
            entity_filters,
            exclude_deleted,
            attributes=[stamp],
            sortBy=stamp,
            sortOrder="DESCENDING",
        )
        count = page.get("approximateCount")
        newest = None
        for e in page.get("entities") or []:
            value = (e.get("attributes") or {}).get(stamp)
            if isinstance(value, int):
                newest = value
        return (count if isinstance(count, int) and count >= 0 else None), newest

    # ------------------------------------------------------------------ lineage

    def lineage(self, guid: str, direction: str = "BOTH", depth: int = 3) -> dict[str, Any]:
        """``AtlasLineageInfo`` of an entity: ``guidEntityMap`` and ``relations`` (depth 0 = unlimited)."""
        params = [("direction", direction.upper()), ("depth", str(int(depth)))]
        return self._call("lineage", "GET", f"/v2/lineage/{quote(guid, safe='')}", params=params) or {}

    def lineage_by_unique(
        self, type_name: str, qualified_name: str, direction: str = "BOTH", depth: int = 3
    ) -> dict[str, Any]:
        """Lineage of the ACTIVE entity of ``type_name`` with this qualifiedName."""
        params = [
            ("attr:qualifiedName", qualified_name),
            ("direction", direction.upper()),
            ("depth", str(int(depth))),
        ]
        path = f"/v2/lineage/uniqueAttribute/type/{quote(type_name, safe='')}"
        return self._call("lineage", "GET", path, params=params) or {}


def kerberos_auth() -> AuthBase:
    """SPNEGO auth from requests-kerberos (optional dependency, imported only when asked for)."""
    try:
        from requests_kerberos import OPTIONAL, HTTPKerberosAuth
    except ImportError:
        raise ConfigError(
            "Kerberos authentication needs the requests-kerberos package",
            hint="pip install requests-kerberos (and have a ticket: kinit)",
        ) from None
    auth: AuthBase = HTTPKerberosAuth(mutual_authentication=OPTIONAL)
    return auth


def _refused(exc: Exception) -> bool:
    """True when the connection was never established (nothing reached the server)."""
    text = str(exc)
    return any(s in text for s in ("Connection refused", "Failed to establish", "Name or service not known"))


def _speaks_plain_http(host: str, port: int, timeout: float) -> bool:
    """Whether ``host:port`` answers a bare plain-HTTP request (no credentials in it) with HTTP."""
    try:
        with socket.create_connection((host, port), timeout=min(timeout, 5.0)) as sock:
            sock.sendall(b"HEAD / HTTP/1.0\r\nHost: " + host.encode("idna") + b"\r\n\r\n")
            return sock.recv(5) == b"HTTP/"
    except (OSError, UnicodeError):
        return False


def _short(exc: BaseException) -> str:
    """The innermost reason of a requests/urllib3 exception, without URLs' query strings."""
    reason: BaseException = exc
    for _ in range(4):
        inner = reason.args[0] if reason.args and isinstance(reason.args[0], BaseException) else None
        inner = inner or getattr(reason, "reason", None)
        if not isinstance(inner, BaseException):
            break
        reason = inner
    text = str(reason) or type(reason).__name__
    return text.split("?", 1)[0][:200] if "url:" in text else text[:200]


__all__ = ["AtlasClient", "AuthError", "BasicAuth", "kerberos_auth"]
