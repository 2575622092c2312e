"""A live Superset's objects through its REST API (``--superset-url``), as :class:`SupersetContent`.

Superset's own export endpoints give each object exactly as an export ZIP holds it (uuids, a dataset's
SQL, a dashboard's layout), so the reader lists the ids (``GET /api/v1/<kind>/``, ``page_size`` per
request) and fetches the dashboards in exports of ``page_size`` ids (``GET /api/v1/dashboard/export/``,
which brings their charts, datasets and databases), then the charts no dashboard holds
(``GET /api/v1/chart/export/``), up to ``workers`` requests at a time: O(objects / page size) requests. Every dashboard and every chart
(a chart on no dashboard too); with ``select``, the dashboards named (title, id or uuid) and what
they use. The user needs Superset's export permission (``can_export``).

Credentials: ``SUPERSET_USERNAME`` and ``SUPERSET_PASSWORD`` or ``SUPERSET_PASSWORD_FILE`` (never argv),
logged in with ``POST /api/v1/security/login`` (``SUPERSET_AUTH_PROVIDER``: ``db`` by default, ``ldap``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from atlas_sync.errors import ConfigError, InputError
from atlas_sync.lineage.superset.content import SupersetContent, read_export_bytes
from atlas_sync.progress import report as progress_report
from atlas_sync.secrets import read_secret_file

TIMEOUT = 60


def credentials() -> tuple[str, str]:
    """User and password from the environment (``SUPERSET_PASSWORD_FILE`` wins over ``SUPERSET_PASSWORD``)."""
    user = os.environ.get("SUPERSET_USERNAME", "")
    if not user:
        raise ConfigError(
            "no Superset user: set SUPERSET_USERNAME",
            hint="and SUPERSET_PASSWORD_FILE (or SUPERSET_PASSWORD); never on the command line",
        )
    pw_file = os.environ.get("SUPERSET_PASSWORD_FILE")
    if pw_file:
        return user, read_secret_file(pw_file)
    password = os.environ.get("SUPERSET_PASSWORD", "")
    if not password:
        raise ConfigError("no Superset password: set SUPERSET_PASSWORD_FILE (or SUPERSET_PASSWORD)")
    return user, password


class SupersetApi:
    """A logged-in session on one Superset; counts its requests (``requests_made``)."""

    def __init__(self, url: str, session: requests.Session | None = None) -> None:
        self.url = url.rstrip("/")
        self.session = session or requests.Session()
        self.requests_made = 0

    def login(self, user: str, password: str) -> None:
        provider = os.environ.get("SUPERSET_AUTH_PROVIDER", "db")
        try:
            r = self.session.post(
                f"{self.url}/api/v1/security/login",
                json={"username": user, "password": password, "provider": provider, "refresh": False},
                timeout=TIMEOUT,
            )
        except requests.RequestException as exc:
            raise InputError(f"cannot reach Superset at {self.url}: {type(exc).__name__}") from None
        self.requests_made += 1
        if r.status_code in (401, 403):
            raise InputError(
                f"Superset at {self.url} refused the login of {user!r} (HTTP {r.status_code})",
                hint="check SUPERSET_USERNAME and the password (SUPERSET_PASSWORD_FILE / SUPERSET_PASSWORD)",
            )
        token = _json(r, f"{self.url}/api/v1/security/login").get("access_token")
        if not isinstance(token, str):
            raise InputError(f"Superset at {self.url}: the login answered no access token")
        self.session.headers["Authorization"] = "Bearer " + token

    def get(self, path: str, params: dict[str, str] | None = None) -> requests.Response:
        where = f"{self.url}/api/v1/{path}"
        try:
            r = self.session.get(where, params=params, timeout=TIMEOUT)
        except requests.RequestException as exc:
            raise InputError(f"Superset request failed: GET {where}: {type(exc).__name__}") from None
        self.requests_made += 1
        if r.status_code >= 400:
            raise InputError(
                f"Superset answered HTTP {r.status_code} to GET {where}",
                hint="the user needs read and export permissions on dashboards, charts and datasets"
                if r.status_code in (401, 403)
                else None,
            )
        return r

    def list_ids(self, kind: str, page_size: int, columns: Sequence[str]) -> list[dict[str, Any]]:
        """Every object of ``kind`` (``dashboard``, ``chart``), ``columns`` of each, ``page_size`` a request."""
        out: list[dict[str, Any]] = []
        page = 0
        cols = ",".join(columns)
        while True:
            q = f"(columns:!({cols}),page:{page},page_size:{page_size})"
            doc = _json(self.get(f"{kind}/", {"q": q}), f"{kind}/")
            rows = doc.get("result") or []
            out.extend(r for r in rows if isinstance(r, dict))
            count = doc.get("count")
            if not rows or len(rows) < page_size or (isinstance(count, int) and len(out) >= count):
                return out
            page += 1

    def export(self, kind: str, ids: Sequence[int]) -> SupersetContent:
        q = "!(" + ",".join(str(i) for i in ids) + ")"
        r = self.get(f"{kind}/export/", {"q": q})
        return read_export_bytes(r.content, f"{self.url}/api/v1/{kind}/export/")


def _export_all(
    client: SupersetApi,
    pool: ThreadPoolExecutor,
    kind: str,
    ids: list[int],
    page_size: int,
    content: SupersetContent,
    update: Callable[[int, int], None],
) -> None:
    """Export ``ids`` in batches of ``page_size``, in parallel, into ``content``."""
    batches = [ids[i : i + page_size] for i in range(0, len(ids), page_size)]
    for done, part in enumerate(pool.map(lambda b: client.export(kind, b), batches), start=1):
        for section in ("databases", "datasets", "charts", "dashboards"):
            getattr(content, section).update(getattr(part, section))
        content.origin.update(part.origin)
        content.unreadable.extend(part.unreadable)
        update(done, len(batches))


def _json(r: requests.Response, where: str) -> dict[str, Any]:
    try:
        doc = r.json()
    except ValueError:
        raise InputError(f"Superset answered something that is not JSON to {where}") from None
    if not isinstance(doc, dict):
        raise InputError(f"Superset answered an unexpected document to {where}")
    return doc


def read_api(
    url: str,
    *,
    select: Sequence[str] = (),
    page_size: int = 100,
    workers: int = 4,
    progress: bool = True,
    api: SupersetApi | None = None,
    on_api: Callable[[SupersetApi], None] | None = None,
) -> SupersetContent:
    """Every dashboard and chart of the Superset at ``url`` (or the dashboards ``select`` names) and
    what they use. ``on_api`` gets the session (its request count) when done."""
    client = api or SupersetApi(url)
    client.login(*credentials())
    dashboards = client.list_ids("dashboard", page_size, ("id", "dashboard_title", "uuid"))
    content = SupersetContent()
    chart_ids: dict[str, Any] = {}
    with (
        progress_report(f"Superset exports from {client.url}", quiet=not progress) as update,
        ThreadPoolExecutor(max_workers=max(1, workers)) as pool,
    ):
        if select:
            wanted = {s.strip() for s in select if s.strip()}
            chosen = [
                int(d["id"])
                for d in dashboards
                if str(d.get("id")) in wanted or d.get("dashboard_title") in wanted or d.get("uuid") in wanted
            ]
            if not chosen:
                raise InputError(f"no dashboard of {client.url} matches --select {', '.join(sorted(wanted))}")
            _export_all(client, pool, "dashboard", chosen, page_size, content, update)
        else:
            charts = client.list_ids("chart", page_size, ("id", "uuid"))
            chart_ids = {str(c.get("uuid")): c.get("id") for c in charts}
            _export_all(
                client, pool, "dashboard", [int(d["id"]) for d in dashboards], page_size, content, update
            )
            # then only the charts no dashboard holds (a dashboard's export brought the others)
            rest = [int(c["id"]) for c in charts if str(c.get("uuid")) not in content.charts]
            _export_all(client, pool, "chart", rest, page_size, content, update)
    # ids for links back to Superset (an export has uuids only)
    by_uuid = {str(d.get("uuid")): d.get("id") for d in dashboards}
    for uuid, dash in content.dashboards.items():
        if by_uuid.get(uuid) is not None:
            dash["id"] = by_uuid[uuid]
    for uuid, chart in content.charts.items():
        if chart_ids.get(uuid) is not None:
            chart["id"] = chart_ids[uuid]
    if on_api is not None:
        on_api(client)
    return content
