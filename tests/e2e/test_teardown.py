"""Teardown as a plan, on the in-process emulator: what is listed, what is named in deletes, what is
purged, and that nothing outside the domain is touched.

Counts are derived by hand from DOC and the lineage profile's rules (docs/profiles.md): 3 datasets
(7 columns, owned by their dataset), 1 process (3 column lineages, owned by their process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import RetryPolicy
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.bookkeeping import entity_key

DOC = {
    "datasets": [
        {"id": "raw.orders", "namespace": "raw", "name": "orders", "columns": ["id", "amount", "region"]},
        {"id": "raw.regions", "namespace": "raw", "name": "regions", "columns": ["id", "name"]},
        {"id": "mart.revenue", "namespace": "mart", "name": "revenue", "columns": ["region", "total"]},
    ],
    "processes": [
        {"id": "daily", "name": "daily", "inputs": ["raw.orders", "raw.regions"], "outputs": ["mart.revenue"]}
    ],
    "edges": [
        {
            "source": "raw.regions.name",
            "target": "mart.revenue.region",
            "kind": "IDENTITY",
            "process": "daily",
        },
        {
            "source": "raw.orders.amount",
            "target": "mart.revenue.total",
            "kind": "AGGREGATION",
            "process": "daily",
        },
        {"source": "raw.orders.region", "target": "mart.revenue.*", "kind": "JOIN", "process": "daily"},
    ],
}
DATASETS, COLUMNS, PROCESSES, LINEAGES = 3, 7, 1, 3
TOTAL = DATASETS + COLUMNS + PROCESSES + LINEAGES


@pytest.fixture()
def emu() -> Any:
    e = Emulator(None)
    yield e
    e.close()


def publisher(emu: Emulator, domain: str = "demo", **kw: Any) -> Publisher:
    return Publisher(embedded_client(emulator=emu, **kw), domain=domain)


def graph() -> LineageGraph:
    return LineageGraph.from_document(DOC)


def rows(emu: Emulator, domain: str) -> dict[str, tuple[str, str, int]]:
    """guid -> (type, status, version) of every entity of ``domain`` the emulator stores."""
    return {
        r["guid"]: (r["type_name"], r["status"], r["version"])
        for r in emu.store.conn.execute(
            "SELECT guid, type_name, qualified_name, status, version FROM entities"
        )
        if (r["qualified_name"] or "").endswith("@" + domain)
    }


def record_deletes(pub: Publisher) -> list[list[str]]:
    """The guids of each delete call the publisher's client gets, in order."""
    calls: list[list[str]] = []
    inner = pub.client.delete_entities

    def spy(guids: Any, **kw: Any) -> Any:
        calls.append(list(guids))
        return inner(calls[-1], **kw)

    pub.client.delete_entities = spy
    return calls


def test_the_plan_lists_the_domain_active_and_deleted_owned_entities_first(emu) -> None:
    pub = publisher(emu)
    pub.sync(graph(), job="daily")
    publisher(emu, "other").sync(graph(), job="daily")
    proc = next(g for g, (t, _, _) in rows(emu, "demo").items() if t == "lineage_process")
    pub.client.delete_entities([proc])  # the process and its 3 column lineages are DELETED now

    plan = pub.plan_teardown(purge=True)
    assert {e.guid for e in plan.entities} == set(rows(emu, "demo"))  # every one of demo, none of other
    assert plan.counts == {
        "delete": DATASETS + COLUMNS,
        "already_deleted": PROCESSES + LINEAGES,
        "purge": TOTAL,
        "delete_requests": 1,
        "purge_requests": 1,
    }
    data, procs = plan.order()
    assert [e.type_name for e in data] == ["lineage_column"] * COLUMNS + ["lineage_dataset"] * DATASETS
    assert procs == []
    doc = plan.to_json()
    assert doc["by_type"]["lineage_column_lineage"] == {"ACTIVE": 0, "DELETED": LINEAGES}
    assert {e["action"] for e in doc["entities"] if e["status"] == "DELETED"} == {"purge"}
    assert "Plan: 10 to delete in 1 request, 14 to purge." in plan.text()
    no_purge = pub.plan_teardown()
    assert no_purge.counts["purge"] == 0 and "nothing purged (no --purge)" in no_purge.text()


def test_teardown_deletes_the_dataset_side_then_the_process_side_and_purges_all_leaving_other_domains(
    emu,
) -> None:
    pub = publisher(emu)
    pub.sync(graph(), job="daily")
    publisher(emu, "other").sync(graph(), job="daily")
    other = rows(emu, "other")
    types = {g: t for g, (t, _, _) in rows(emu, "demo").items()}
    calls = record_deletes(pub)
    res = pub.teardown(purge=True)
    assert (res.deleted, res.purged) == (TOTAL, TOTAL)
    assert [[types[g] for g in c] for c in calls] == [
        ["lineage_column"] * COLUMNS + ["lineage_dataset"] * DATASETS,
        ["lineage_column_lineage"] * LINEAGES + ["lineage_process"],
    ]
    assert rows(emu, "demo") == {}
    assert rows(emu, "other") == other  # same guids, status and version


def test_an_owned_entity_whose_owner_is_outside_the_domain_is_deleted_and_the_owner_kept(emu) -> None:
    pub = publisher(emu)
    pub.sync(graph(), job="daily")
    publisher(emu, "other").sync(graph(), job="daily")
    # a column of demo (with demo's key) owned by a dataset of other (written by hand: atlas-sync never
    # writes this)
    pub.client.upsert_entities(
        [
            {
                "typeName": "lineage_column",
                "attributes": {
                    "qualifiedName": "raw.orders.extra@demo",
                    "name": "extra",
                    "atlasSyncJob": "daily",
                    "atlasSyncKey": entity_key("demo", "daily"),
                },
                "relationshipAttributes": {
                    "dataset": {
                        "typeName": "lineage_dataset",
                        "uniqueAttributes": {"qualifiedName": "raw.orders@other"},
                    }
                },
            }
        ]
    )
    other = rows(emu, "other")
    res = pub.teardown(purge=True)
    assert res.deleted == TOTAL + 1
    assert rows(emu, "demo") == {}
    owner = {g for g, (t, _, _) in other.items() if t == "lineage_dataset"}
    assert {g: s for g, (_, s, _) in rows(emu, "other").items() if g in owner} == dict.fromkeys(
        owner, "ACTIVE"
    )


def test_a_delete_or_purge_failing_on_lock_contention_past_its_retries_is_sent_again_in_halves(emu) -> None:
    pub = publisher(emu, retry=RetryPolicy(max_attempts=1, sleep=lambda s: None))
    pub.sync(graph(), job="daily")
    # the second delete request (the process side: 3 column lineages, 1 process) gets Atlas's
    # lock-timeout 500
    emu.inject_fault("status", status=500, at=2, method="DELETE", path_prefix="/api/atlas/v2/entity/bulk")
    emu.inject_fault("status", status=500, at=1, method="PUT", path_prefix="/api/atlas/admin/purge")
    emu.clear_log()
    res = pub.teardown(purge=True, batch_size=10)
    assert (res.deleted, res.purged) == (TOTAL, TOTAL)
    deletes = [r for r in emu.request_log if r.method == "DELETE"]
    # the dataset side's 10 in one request; the process side's 4 refused, then sent as 2 + 2
    assert [r.status for r in deletes] == [200, 500, 200, 200]
    purges = [r for r in emu.request_log if r.method == "PUT"]
    assert [r.status for r in purges] == [500, 200, 200]  # the purge too: refused, then 7 + 7
    assert rows(emu, "demo") == {}


def test_a_teardown_without_purge_and_then_with_purge_purges_what_the_first_deleted(emu) -> None:
    pub = publisher(emu)
    pub.sync(graph(), job="daily")
    first = pub.teardown()
    assert (first.deleted, first.purged) == (TOTAL, 0)
    assert {s for _, s, _ in rows(emu, "demo").values()} == {"DELETED"}
    assert pub.plan_teardown().is_empty
    calls = record_deletes(pub)
    second = pub.teardown(purge=True)
    assert (second.deleted, second.purged) == (0, TOTAL)
    assert calls == [] and rows(emu, "demo") == {}


# ------------------------------------------------------------------------------------------------ CLI


def test_teardown_plan_shows_what_would_go_as_text_and_json_and_writes_nothing(
    emulator_server, tmp_path
) -> None:
    env = {
        **os.environ,
        "ATLAS_URL": emulator_server.url,
        "ATLAS_USERNAME": "admin",
        "ATLAS_PASSWORD": "admin",
    }
    doc = tmp_path / "d.lineage.json"
    doc.write_text(json.dumps(DOC))
    cli = [sys.executable, "-m", "atlas_sync.cli.main"]
    subprocess.run([*cli, "sync", "-d", "demo", "--from", "graph", str(doc), "-q"], env=env, check=True)
    before = rows(emulator_server.emulator, "demo")
    text = subprocess.run(
        [*cli, "teardown", "-d", "demo", "--purge", "--plan"], env=env, capture_output=True, text=True
    )
    assert text.returncode == 0, text.stderr
    assert "- lineage_dataset raw.orders@demo (delete+purge)" in text.stdout
    assert "Plan: 14 to delete in 2 requests, 14 to purge." in text.stdout
    js = subprocess.run(
        [*cli, "teardown", "-d", "demo", "--plan", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    plan = json.loads(js.stdout)
    assert plan["counts"]["delete"] == TOTAL and plan["purge"] is False
    procs = [e["qualifiedName"] for e in plan["entities"] if e["typeName"] == "lineage_process"]
    assert len(procs) == 1 and procs[0].endswith("daily@demo")
    assert rows(emulator_server.emulator, "demo") == before  # nothing written


def test_on_a_server_that_hard_deletes_on_request_the_rest_goes_in_requests_of_300(emu) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from issue_workload import entity_count, issue_graph

    pub = publisher(emu)
    pub.sync(issue_graph(20, job="nightly"))  # 250 entities: 150 on the dataset side, 100 processes'
    sizes: list[tuple[int, bool]] = []
    inner_delete, inner_purge = pub.client.delete_entities, pub.client.purge_entities

    def hard_deleting(guids: Any, hard: bool = False, **kw: Any) -> Any:
        # what Atlas does with atlas.rest.enable.delete.type.override=true: deleteType=HARD is final
        guids = list(guids)
        sizes.append((len(guids), hard))
        res = inner_delete(guids, **kw)
        if hard:
            inner_purge(guids)
        return res

    pub.client.delete_entities = hard_deleting
    res = pub.teardown(purge=True)
    assert sizes == [(25, True), (125, True), (100, True)]  # one request to find out, then up to 300
    assert res.deleted == entity_count(20) and rows(emu, "demo") == {}
