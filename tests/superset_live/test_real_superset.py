"""The `superset` reader against a real Apache Superset 6.1.0 (conftest.py): objects made through its
REST API (tests/superset_live/support.py) read back through the API and from its export ZIP, synced into
Atlas (the embedded emulator; the real Atlas too when ATLAS_URL is set) with a dbt project over the
same DuckDB tables. Expectations by hand from what support.py creates."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage import registry
from superset_live.conftest import Superset
from superset_live.support import export_zip

DBT = Path(__file__).resolve().parents[1] / "data" / "dbt" / "artifacts" / "1.10"


@pytest.fixture()
def env(superset: Superset, monkeypatch: pytest.MonkeyPatch) -> Superset:
    monkeypatch.setenv("SUPERSET_USERNAME", superset.username)
    monkeypatch.setenv("SUPERSET_PASSWORD_FILE", superset.password_file)
    monkeypatch.delenv("SUPERSET_PASSWORD", raising=False)
    return superset


def _uuids(s: Superset, kind: str) -> dict[int, str]:
    q = "(columns:!(id,uuid),page:0,page_size:100)"
    r = s.api.session.get(f"{s.url}/api/v1/{kind}/", params={"q": q}, timeout=30)
    r.raise_for_status()
    return {int(x["id"]): str(x["uuid"]) for x in r.json()["result"]}


def _expected(s: Superset) -> dict[str, Any]:
    """What support.build_content made, as dataset ids and process inputs (by hand)."""
    c = s.content
    ds = _uuids(s, "dataset")
    ch = _uuids(s, "chart")
    dash = _uuids(s, "dashboard")[c["dashboard"]]
    customers = f"superset:bi_dataset:{ds[c['datasets']['customers']]}"
    orders = f"superset:bi_dataset:{ds[c['datasets']['orders']]}"
    virtual = f"superset:bi_dataset:{ds[c['datasets']['virtual']]}"
    ltv, amount, big = (f"superset:chart:{ch[c['charts'][k]]}" for k in ("ltv", "amount", "big"))
    return {
        "ids": {
            "customers": customers,
            "orders": orders,
            "virtual": virtual,
            "ltv": ltv,
            "amount": amount,
            "big": big,
            "dash": f"superset:dashboard:{dash}",
        },
        "inputs": {
            customers: ["jaffle.main_marts.customers"],
            orders: ["jaffle.main_marts.fct_orders"],
            virtual: ["jaffle.main_marts.customers", "jaffle.main_marts.fct_orders"],
            ltv: [customers],
            amount: [orders],
            big: [virtual],
            f"superset:dashboard:{dash}": sorted([ltv, amount, big]),
        },
    }


def _inputs(graph: Any) -> dict[str, list[str]]:
    return {
        p.id: sorted(p.inputs) if p.id.startswith("superset:dashboard:") else p.inputs
        for p in graph.processes
    }


# One test: the session's Superset content is built once per test process (Superset's SQLite metadata
# keeps table names unique, so two xdist workers cannot both build it on one server), and the sync part
# deletes a chart, which the reading part must not see.
def test_real_superset_read_both_ways_then_sync_with_dbt_resync_and_delete_a_chart(
    env: Superset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _read_both_ways(env, tmp_path, monkeypatch)
    _sync_with_dbt_resync_and_delete_a_chart(env)


def _read_both_ways(env: Superset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cmap = {env.content["database_name"]: "jaffle"}
    counted: list[int] = []
    from atlas_sync.lineage.superset import api as api_mod

    real_read = api_mod.read_api

    def spy(url: str, **kw: Any) -> Any:
        return real_read(url, on_api=lambda a: counted.append(a.requests_made), **kw)

    monkeypatch.setattr(api_mod, "read_api", spy)
    live = registry.read("superset", [], superset_url=env.url, connection_map=cmap, progress=False)
    exp = _expected(env)
    assert _inputs(live) == exp["inputs"]
    # login, one page of dashboards, one of charts, one dashboard export (which brings all three charts:
    # no chart export): O(objects / page size)
    assert counted == [4]
    z = export_zip(env.api, [env.content["dashboard"]], tmp_path / "export.zip")
    exported = registry.read("superset", [str(z)], connection_map=cmap)
    assert _inputs(exported) == exp["inputs"]
    assert {(str(e.source), str(e.target), e.kind) for e in live.edges} == {
        (str(e.source), str(e.target), e.kind) for e in exported.edges
    }
    ids = exp["ids"]
    edges = {(str(e.source), str(e.target), e.kind) for e in live.edges}
    assert ("jaffle.main_marts.fct_orders.amount", f"{ids['virtual']}.order_amount", "IDENTITY") in edges
    assert (
        "jaffle.main_marts.customers.lifetime_value",
        f"{ids['customers']}.total_ltv",
        "AGGREGATION",
    ) in edges
    assert (f"{ids['orders']}.amount", f'{ids["amount"]}."SUM(amount)"', "AGGREGATION") in edges


def _publisher(domain: str) -> tuple[Publisher, Any]:
    if os.environ.get("ATLAS_URL"):
        from atlas_sync.config import load_settings
        from atlas_sync.factory import client_from_settings

        return Publisher(client_from_settings(load_settings()), profile="lineage", domain=domain), None
    emu = Emulator(None)
    return Publisher(embedded_client(emulator=emu), profile="lineage", domain=domain), emu


def _sync_with_dbt_resync_and_delete_a_chart(env: Superset) -> None:
    domain = "bi-" + env.content["prefix"]
    pub, _emu = _publisher(domain)
    cmap = {env.content["database_name"]: "jaffle"}
    pub.sync(registry.read("dbt", [str(DBT)]))
    first = pub.sync(registry.read("superset", [], superset_url=env.url, connection_map=cmap, progress=False))
    exp = _expected(env)
    ids = exp["ids"]
    found = list(
        pub.client.search_basic(
            "lineage_dataset",
            entity_filters={
                "attributeName": "qualifiedName",
                "operator": "endsWith",
                "attributeValue": "@" + domain,
            },
            attributes=["qualifiedName"],
        )
    )
    names = Counter(h["attributes"]["qualifiedName"] for h in found)
    # exactly one entity per warehouse table: the Superset datasets' tables are dbt's
    assert names["jaffle.main_marts.customers@" + domain] == 1
    assert names["jaffle.main_marts.fct_orders@" + domain] == 1
    assert not any(n.startswith("main_marts.") for n in names)
    types = Counter(h["typeName"] for h in found)
    assert (
        types["lineage_bi_dataset"] == 3 and types["lineage_chart"] == 3 and types["lineage_dashboard"] == 1
    )
    assert types["lineage_dataset"] == 14  # dbt's 14 relations, no copy
    # the superset job created what it read (no dataset of dbt's taken over)
    created = {i.qualified_name for i in first.plan.by_action("create")}
    assert f"{ids['dash']}@{domain}" in created and f"jaffle.main_marts.customers@{domain}" not in created
    again = pub.sync(registry.read("superset", [], superset_url=env.url, connection_map=cmap, progress=False))
    assert not again.plan.has_changes
    # a chart deleted in Superset is deleted by the next sync
    env.api.call("DELETE", f"chart/{env.content['charts']['amount']}")
    after = pub.sync(
        registry.read("superset", [], superset_url=env.url, connection_map=cmap, progress=False), force=True
    )
    deleted = {i.qualified_name for i in after.plan.by_action("delete")}
    assert f"{ids['amount']}@{domain}" in deleted
    assert f"superset:{ids['amount']}@{domain}" not in deleted
    assert not any(ids["ltv"] in q or ids["big"] in q for q in deleted)
