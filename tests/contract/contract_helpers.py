"""Shared helpers for the Atlas REST contract suite.

The suite is black-box: every check goes through raw HTTP (``requests``) so that it can run unchanged against
the in-process emulator, the emulator over HTTP, or a real Apache Atlas (see ``conftest.py``). Names are
run-unique (``ct_ds_<run>``, ``x@ct_<run>``) so that repeated runs against a persistent server do not collide.
"""

from __future__ import annotations

import itertools
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

import requests

RUN = os.environ.get("CONTRACT_RUN") or uuid.uuid4().hex[:8]
DOMAIN = f"ct_{RUN}"

CT_DS = f"ct_ds_{RUN}"
CT_DS2 = f"ct_ds2_{RUN}"
CT_PROC = f"ct_proc_{RUN}"
CT_INF = f"ct_inf_{RUN}"
CT_MIXIN = f"ct_mixin_{RUN}"
CT_STRUCT = f"ct_struct_{RUN}"

# The attributes of ct_ds as the checklist's shared fixtures define them.
CT_DS_ATTRS: list[dict[str, Any]] = [
    {"name": "count", "typeName": "int", "isOptional": True},
    {"name": "flag", "typeName": "boolean", "isOptional": True},
    {"name": "born", "typeName": "date", "isOptional": True},
    {"name": "note", "typeName": "string", "isOptional": True},
    {"name": "tier", "typeName": "string", "isOptional": True, "defaultValue": "bronze"},
]

_counter = itertools.count(1)

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TYPEDEF_LISTS = (
    "enumDefs",
    "structDefs",
    "classificationDefs",
    "entityDefs",
    "relationshipDefs",
    "businessMetadataDefs",
)


def fresh(prefix: str = "e") -> str:
    """A short entity name unique within this run (qualified names add the run domain)."""
    return f"{prefix}{next(_counter)}"


def fresh_type(prefix: str = "ct_t") -> str:
    """A type name unique across runs: ``<prefix>_<run>_<n>``."""
    return f"{prefix}_{RUN}_{next(_counter)}"


def qn(x: str) -> str:
    """The checklist's ``x@ct`` qualified name for this run."""
    return f"{x}@{DOMAIN}"


def random_guid() -> str:
    return str(uuid.uuid4())


# ---------------------------------------------------------------------------------------------- typedefs


def entity_def(
    name: str, supers: Iterable[str] = ("DataSet",), attrs: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "superTypes": list(supers), "attributeDefs": list(attrs or [])}
    d.update(extra)
    return d


def struct_def(name: str, attrs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if attrs is None:
        attrs = [{"name": "s", "typeName": "string", "isOptional": True}]
    return {"name": name, "attributeDefs": attrs}


def rel_def(
    name: str,
    end1: dict[str, Any],
    end2: dict[str, Any],
    category: str | None = "ASSOCIATION",
    **extra: Any,
) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "endDef1": end1, "endDef2": end2}
    if category is not None:
        d["relationshipCategory"] = category
    d.update(extra)
    return d


def end(type_: str, name: str | None, cardinality: str = "SINGLE", **extra: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"type": type_, "cardinality": cardinality}
    if name is not None:
        e["name"] = name
    e.update(extra)
    return e


def typedefs(**lists: list[dict[str, Any]]) -> dict[str, Any]:
    """An AtlasTypesDef body with the given lists (the others empty)."""
    body: dict[str, Any] = {k: [] for k in TYPEDEF_LISTS}
    body.update(lists)
    return body


def ct_ds_def(name: str = CT_DS) -> dict[str, Any]:
    return entity_def(name, ["DataSet"], [dict(a) for a in CT_DS_ATTRS])


# ---------------------------------------------------------------------------------------------- entities


def E(x: str, guid: str | None = "-1", type_: str = CT_DS, **attrs: Any) -> dict[str, Any]:
    """The checklist's ``E(x)``: a ct_ds entity with qualifiedName ``x@ct`` and name ``x``."""
    a: dict[str, Any] = {"qualifiedName": qn(x), "name": x}
    a.update(attrs)
    e: dict[str, Any] = {"typeName": type_, "attributes": a}
    if guid is not None:
        e["guid"] = guid
    return e


def P(x: str, guid: str | None = "-1", type_: str = CT_PROC, **attrs: Any) -> dict[str, Any]:
    """The checklist's ``P(x)``: a ct_proc entity."""
    return E(x, guid, type_, **attrs)


def ref(x: str, type_: str = CT_DS) -> dict[str, Any]:
    """``ref(T, x)``: a reference by unique attributes."""
    return {"typeName": type_, "uniqueAttributes": {"qualifiedName": qn(x)}}


def oid(guid: str, type_: str | None = CT_DS) -> dict[str, Any]:
    o: dict[str, Any] = {"guid": guid}
    if type_ is not None:
        o["typeName"] = type_
    return o


def mutated(body: dict[str, Any], op: str) -> list[str]:
    """Guids listed under ``mutatedEntities[op]`` (empty when the key is absent)."""
    return [h["guid"] for h in body.get("mutatedEntities", {}).get(op, [])]


def headers_of(body: dict[str, Any], op: str) -> list[dict[str, Any]]:
    return list(body.get("mutatedEntities", {}).get(op, []))


# ---------------------------------------------------------------------------------------------- assertions


def describe(resp: requests.Response) -> str:
    return f"{resp.request.method} {resp.request.path_url} -> {resp.status_code}: {resp.text[:600]}"


def expect_status(resp: requests.Response, status: int) -> None:
    assert resp.status_code == status, describe(resp)


def expect_ok(resp: requests.Response) -> Any:
    """Assert a 200 JSON response and return its body."""
    expect_status(resp, 200)
    return resp.json()


def expect_error(
    resp: requests.Response,
    status: int,
    code: str,
    *,
    contains: str | None = None,
    startswith: str | None = None,
) -> dict[str, Any]:
    """Assert an Atlas error: HTTP status, ``errorCode`` and (optionally) ``errorMessage`` text."""
    assert resp.status_code == status, describe(resp)
    try:
        body = resp.json()
    except ValueError as exc:  # pragma: no cover - failure path
        raise AssertionError(f"error body is not JSON: {describe(resp)}") from exc
    assert body.get("errorCode") == code, describe(resp)
    msg = body.get("errorMessage", "")
    if contains is not None:
        assert contains in msg, f"{contains!r} not in {msg!r}"
    if startswith is not None:
        assert msg.startswith(startswith), f"{msg!r} does not start with {startswith!r}"
    return body


LOGGED_500 = re.compile(
    r"There was an error processing your request\. It has been logged \(ID [0-9a-f]{16}\)\."
)


def expect_plain_500(resp: requests.Response, media_type: str | None = "application/json") -> None:
    """A non-Atlas server error: 500 whose body is the plain "logged (ID …)" text, without ``errorCode``.

    Only the body is plain text. When a resource matched, Atlas keeps that resource's JSON ``Content-Type``
    (the default ``media_type``); an unknown path answers ``text/plain``. ``media_type=None`` skips the check.
    """
    assert resp.status_code == 500, describe(resp)
    assert LOGGED_500.fullmatch(resp.text.strip()), describe(resp)
    if media_type is not None:
        assert media_type_of(resp)[0] == media_type, resp.headers.get("Content-Type")


def media_type_of(resp: requests.Response) -> tuple[str, dict[str, str]]:
    """The parsed ``Content-Type``: (media type, lower-cased parameters); ("", {}) when absent."""
    raw = resp.headers.get("Content-Type")
    if not raw:
        return "", {}
    m = Message()
    m["content-type"] = raw
    return m.get_content_type(), {k.lower(): v for k, v in m.get_params()[1:]}


def expect_error_key_body(resp: requests.Response) -> None:
    """A JSON-provider error: 400 with ``{"error": "..."}`` and no ``errorCode``."""
    assert resp.status_code == 400, describe(resp)
    body = resp.json()
    assert isinstance(body.get("error"), str), describe(resp)
    assert "errorCode" not in body


# ---------------------------------------------------------------------------------------------- client


@dataclass
class Target:
    """Where the suite runs: how to build sessions for it and how to describe it."""

    kind: str  # "emulator", "emulator-http" or "atlas"
    base_url: str  # ends with /api/atlas
    description: str
    username: str
    password: str
    make_session: Callable[[], requests.Session]
    close: Callable[[], None] = lambda: None

    @property
    def is_real(self) -> bool:
        return self.kind == "atlas"


@dataclass
class Api:
    """Raw HTTP access to the target, plus bookkeeping for cleanup."""

    target: Target
    session: requests.Session = field(init=False)
    created_guids: list[str] = field(default_factory=list)
    created_types: dict[str, str] = field(default_factory=dict)  # name -> list key in AtlasTypesDef

    def __post_init__(self) -> None:
        self.session = self.new_session(auth=True)

    # -- sessions
    def new_session(self, *, auth: bool | tuple[str, str] = False) -> requests.Session:
        s = self.target.make_session()
        if auth is True:
            s.auth = (self.target.username, self.target.password)
        elif isinstance(auth, tuple):
            s.auth = auth
        return s

    @property
    def username(self) -> str:
        return self.target.username

    @property
    def is_real(self) -> bool:
        return self.target.is_real

    def url(self, path: str) -> str:
        return self.target.base_url + path

    # -- raw calls
    def call(
        self,
        method: str,
        path: str,
        *,
        session: requests.Session | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        kwargs.setdefault("timeout", 60)
        resp = (session or self.session).request(method, self.url(path), **kwargs)
        self._track(method, path, resp)
        return resp

    def get(self, path: str, **kw: Any) -> requests.Response:
        return self.call("GET", path, **kw)

    def post(self, path: str, json: Any = None, **kw: Any) -> requests.Response:
        return self.call("POST", path, json=json, **kw)

    def put(self, path: str, json: Any = None, **kw: Any) -> requests.Response:
        return self.call("PUT", path, json=json, **kw)

    def delete(self, path: str, **kw: Any) -> requests.Response:
        return self.call("DELETE", path, **kw)

    def _track(self, method: str, path: str, resp: requests.Response) -> None:
        """Remember entities and types this run created, so the session can clean up after itself."""
        if resp.status_code != 200 or method not in ("POST", "PUT"):
            return
        try:
            body = resp.json()
        except ValueError:
            return
        if not isinstance(body, dict):
            return
        if path.startswith("/v2/types/typedefs") and method == "POST":
            for key in TYPEDEF_LISTS:
                for d in body.get(key) or []:
                    if isinstance(d, dict) and "name" in d:
                        self.created_types[d["name"]] = key
        elif path.startswith("/v2/entity"):
            for h in (body.get("mutatedEntities") or {}).get("CREATE", []):
                if h.get("guid") not in self.created_guids:
                    self.created_guids.append(h["guid"])

    # -- typedef conveniences
    def post_bad_typedefs(self, body: dict[str, Any]) -> requests.Response:
        """POST typedefs that the server should reject. If it accepts them anyway, delete them at once:
        a wrongly accepted def can break every later typedef request on a real server (its registry
        re-validates all types), which would turn one failure into dozens."""
        resp = self.post("/v2/types/typedefs", body)
        if resp.status_code == 200:
            created = resp.json()
            undo = typedefs(**{k: [{"name": d["name"]} for d in created.get(k) or []] for k in TYPEDEF_LISTS})
            self.delete("/v2/types/typedefs", json=undo)
            for key in TYPEDEF_LISTS:
                for d in created.get(key) or []:
                    if not self.get(f"/v2/types/typedef/name/{d['name']}").ok:
                        self.created_types.pop(d["name"], None)
        return resp

    def create_types(self, **lists: list[dict[str, Any]]) -> dict[str, Any]:
        return expect_ok(self.post("/v2/types/typedefs", typedefs(**lists)))

    def get_type(self, name: str) -> dict[str, Any]:
        return expect_ok(self.get(f"/v2/types/typedef/name/{name}"))

    def fresh_entity_type(
        self, supers: Iterable[str] = ("DataSet",), attrs: list[dict[str, Any]] | None = None
    ) -> str:
        name = fresh_type()
        self.create_types(entityDefs=[entity_def(name, supers, attrs)])
        return name

    # -- entity conveniences
    def upsert(self, *entities: dict[str, Any]) -> dict[str, Any]:
        return expect_ok(self.post("/v2/entity/bulk", {"entities": list(entities)}))

    def create(self, *entities: dict[str, Any]) -> list[str]:
        """POST the entities and return their real guids in order (via ``guidAssignments``)."""
        body = self.upsert(*entities)
        ga = body.get("guidAssignments", {})
        return [ga.get(e.get("guid"), e.get("guid")) for e in entities]

    def entity(self, guid: str, **params: Any) -> dict[str, Any]:
        return expect_ok(self.get(f"/v2/entity/guid/{guid}", params=params))["entity"]

    def by_qn(self, type_: str, x: str) -> requests.Response:
        return self.get(f"/v2/entity/uniqueAttribute/type/{type_}", params={"attr:qualifiedName": qn(x)})

    def delete_entity(self, guid: str) -> dict[str, Any]:
        return expect_ok(self.delete(f"/v2/entity/guid/{guid}"))

    def purge(self, guids: list[str]) -> dict[str, Any]:
        return expect_ok(self.put("/admin/purge", guids))

    def lineage(self, guid: str, **params: Any) -> dict[str, Any]:
        return expect_ok(self.get(f"/v2/lineage/{guid}", params=params))

    # -- polling (a real server's search index lags the graph commit)
    def poll(
        self,
        fetch: Callable[[], Any],
        until: Callable[[Any], bool] | None,
        timeout: float = 15.0,
    ) -> Any:
        """Call ``fetch`` until ``until(result)`` holds; only a real Atlas is polled (the emulator is exact)."""
        deadline = time.monotonic() + timeout
        while True:
            result = fetch()
            if until is None or not self.is_real or until(result) or time.monotonic() > deadline:
                return result
            time.sleep(0.5)

    def search(
        self,
        body: dict[str, Any],
        until: Callable[[dict[str, Any]], bool] | None = None,
        timeout: float = 15.0,
    ) -> dict[str, Any]:
        return self.poll(lambda: expect_ok(self.post("/v2/search/basic", body)), until, timeout)

    # -- cleanup
    def cleanup(self) -> list[str]:
        """Delete and purge the entities this run created, then delete its types. Best effort; returns problems."""
        problems: list[str] = []
        guids = list(self.created_guids)
        for i in range(0, len(guids), 100):
            chunk = guids[i : i + 100]
            r = self.delete("/v2/entity/bulk", params={"guid": chunk})
            if r.status_code != 200:
                # one unknown guid is ignored by Atlas; anything else is worth reporting
                problems.append(describe(r))
        for i in range(0, len(guids), 500):
            r = self.put("/admin/purge", guids[i : i + 500])
            if r.status_code != 200:
                problems.append(describe(r))
        remaining = {
            n: k for n, k in self.created_types.items() if self.get(f"/v2/types/typedef/name/{n}").ok
        }
        if remaining:
            body = typedefs()
            for n, key in remaining.items():
                body[key].append({"name": n})
            r = self.delete("/v2/types/typedefs", json=body)
            if r.status_code != 204:
                # fall back to one at a time, a few rounds (dependants first)
                left = list(remaining)
                for _ in range(4):
                    left = [
                        n
                        for n in reversed(left)
                        if self.delete(f"/v2/types/typedef/name/{n}").status_code != 204
                    ]
                    if not left:
                        break
                if left:
                    problems.append(f"types left behind: {', '.join(sorted(left))}")
        return problems


def ids(items: Iterable[dict[str, Any]], key: str = "guid") -> set[str]:
    return {i[key] for i in items}


def relation_pairs(lineage: dict[str, Any]) -> set[tuple[str, str]]:
    return {(r["fromEntityId"], r["toEntityId"]) for r in lineage.get("relations", [])}
