"""Sync core end to end through the Python API on the in-process emulator (issue 5).

Expected entity counts are derived by hand from the inputs below and the lineage profile's rules:
one lineage_dataset per dataset, one lineage_column per column, one lineage_process per process,
one lineage_column_lineage per (process, target column) for direct edges and per (process, target,
kind) for indirect ones.
"""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile import PlanRefused

DOC = {
    "datasets": [
        {"id": "raw.orders", "namespace": "raw", "name": "orders", "columns": ["id", "amount", "region"]},
        {"id": "raw.regions", "namespace": "raw", "name": "regions", "columns": ["id", "name"]},
        {"id": "mart.revenue", "namespace": "mart", "name": "revenue", "columns": ["region", "total"]},
    ],
    "processes": [
        {
            "id": "daily",
            "name": "daily revenue",
            "inputs": ["raw.orders", "raw.regions"],
            "outputs": ["mart.revenue"],
        }
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
        {"source": "raw.regions.id", "target": "mart.revenue.*", "kind": "JOIN", "process": "daily"},
    ],
}
# 3 datasets, 7 columns, 1 process, 2 direct column lineages (region, total), 1 JOIN lineage on revenue.*
EXPECTED = {
    "lineage_dataset": 3,
    "lineage_column": 7,
    "lineage_process": 1,
    "lineage_column_lineage": 3,
}


@pytest.fixture()
def emu():
    return Emulator(None)


@pytest.fixture()
def client(emu):
    return embedded_client(emulator=emu)


def publisher(client, domain="demo", **kw):
    return Publisher(client, profile="lineage", domain=domain, **kw)


def graph(doc=DOC) -> LineageGraph:
    return LineageGraph.from_document(copy.deepcopy(doc))


def domain_entities(client, domain, *, include_deleted=False):
    out = []
    for h in client.search_basic(
        "lineage_dataset,lineage_column,lineage_process,lineage_column_lineage",
        entity_filters={
            "attributeName": "qualifiedName",
            "operator": "endsWith",
            "attributeValue": "@" + domain,
        },
        exclude_deleted=not include_deleted,
        attributes=["qualifiedName", "atlasSyncJob"],
    ):
        out.append(h)
    return out


def writes(emu) -> list:
    return [r for r in emu.request_log if r.method in ("POST", "PUT", "DELETE") and "/v2/entity" in r.path]


def test_first_sync_creates_exactly_the_expected_entities(client):
    result = publisher(client).sync(graph(), job="daily")
    counts = Counter(h["typeName"] for h in domain_entities(client, "demo"))
    assert dict(counts) == EXPECTED
    assert result.applied is not None and result.applied.created == sum(EXPECTED.values())


def test_first_sync_of_a_small_graph_is_two_entity_requests_datasets_then_processes(client, emu):
    # datasets and columns first, then processes: in between, a sync settles copies another sync
    # created at the same moment (reconcile.holdings.settle_duplicates), before processes refer to them
    publisher(client).ensure_typedefs()
    emu.clear_log()
    publisher(client).sync(graph(), job="daily", ensure_typedefs=False)
    first, second = writes(emu)
    assert first.entity_count == EXPECTED["lineage_dataset"] + EXPECTED["lineage_column"]


def test_second_identical_sync_writes_nothing(client, emu):
    publisher(client).sync(graph(), job="daily")
    emu.clear_log()
    result = publisher(client).sync(graph(), job="daily")
    assert result.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": sum(EXPECTED.values())}
    assert writes(emu) == []
    assert not [r for r in emu.request_log if "/types/" in r.path and r.method != "GET"]


def test_process_reads_back_with_its_inputs_and_outputs_through_lineage_api(client):
    publisher(client).sync(graph(), job="daily")
    info = client.lineage_by_unique("lineage_dataset", "mart.revenue@demo", direction="INPUT", depth=0)
    names = {(h.get("attributes") or {}).get("qualifiedName") for h in info["guidEntityMap"].values()}
    assert {"raw.orders@demo", "raw.regions@demo", "daily@demo", "mart.revenue@demo"} <= names


def test_changed_input_updates_and_deletes_exactly_what_changed(client, emu):
    publisher(client).sync(graph(), job="daily")
    doc = copy.deepcopy(DOC)
    # drop raw.regions entirely (and its edges), rename the process
    doc["datasets"] = [d for d in doc["datasets"] if d["id"] != "raw.regions"]
    doc["processes"][0]["inputs"] = ["raw.orders"]
    doc["processes"][0]["name"] = "daily revenue v2"
    doc["edges"] = [e for e in doc["edges"] if not e["source"].startswith("raw.regions")]
    emu.clear_log()
    plan = publisher(client).plan(graph(doc), job="daily")
    acts = {(i.type_name, i.qualified_name): i.action for i in plan.items if i.action != "unchanged"}
    assert acts == {
        ("lineage_process", "daily@demo"): "update",
        ("lineage_dataset", "raw.regions@demo"): "delete",
        ("lineage_column", "raw.regions.id@demo"): "delete",
        ("lineage_column", "raw.regions.name@demo"): "delete",
        # mart.revenue.region lost its only direct source
        ("lineage_column_lineage", "daily:mart.revenue.region@demo"): "delete",
        # the JOIN dependency keeps raw.orders.region only, and applies to the columns still written
        ("lineage_column_lineage", "daily:mart.revenue.*:JOIN@demo"): "update",
    }
    changes = {c.attribute for i in plan.items if i.action == "update" for c in i.changes}
    assert changes == {"name", "inputs", "outputs"}
    publisher(client).apply(plan)
    again = publisher(client).plan(graph(doc), job="daily")
    assert not again.has_changes


def test_sync_never_touches_another_jobs_processes_or_another_domain(client, emu):
    other = copy.deepcopy(DOC)
    other["processes"][0]["id"] = "weekly"
    other["processes"][0]["name"] = "weekly"
    for e in other["edges"]:
        e["process"] = "weekly"
    publisher(client).sync(graph(other), job="weekly")
    publisher(client, domain="elsewhere").sync(graph(), job="daily")
    publisher(client).sync(graph(), job="daily")
    before = {h["guid"]: h for h in domain_entities(client, "demo")} | {
        h["guid"]: h for h in domain_entities(client, "elsewhere")
    }
    # daily now produces nothing but one dataset: everything else of daily goes, weekly's stays
    shrunk = {
        "datasets": [{"id": "raw.orders", "name": "orders", "columns": ["id", "amount", "region"]}],
        "processes": [{"id": "daily", "name": "daily", "inputs": ["raw.orders"], "outputs": []}],
    }
    publisher(client).sync(graph(shrunk), job="daily", force=True)
    after = {h["guid"] for h in domain_entities(client, "demo")}
    weekly = {g for g, h in before.items() if (h.get("attributes") or {}).get("atlasSyncJob") == "weekly"}
    assert weekly and weekly <= after
    assert {g for g, h in before.items() if h["attributes"]["qualifiedName"].endswith("@elsewhere")} <= {
        h["guid"] for h in domain_entities(client, "elsewhere")
    }
    # datasets weekly created (and still uses) survive daily's shrink
    qns = {h["attributes"]["qualifiedName"] for h in domain_entities(client, "demo")}
    assert "raw.regions@demo" in qns and "mart.revenue@demo" in qns


def test_deletes_above_the_threshold_are_refused_unless_forced(client):
    publisher(client).sync(graph(), job="daily")
    tiny = {
        "datasets": [{"id": "raw.orders", "name": "orders"}],
        "processes": [{"id": "daily", "name": "d", "inputs": ["raw.orders"]}],
    }
    with pytest.raises(PlanRefused, match="max-delete-percent"):
        publisher(client).plan(graph(tiny), job="daily")
    plan = publisher(client).plan(graph(tiny), job="daily", force=True)
    assert plan.counts["delete"] > 0


def test_no_delete_mode_and_input_errors_block_deletes(client):
    publisher(client).sync(graph(), job="daily")
    doc = copy.deepcopy(DOC)
    doc["datasets"] = doc["datasets"][:1] + doc["datasets"][2:]
    doc["processes"][0]["inputs"] = ["raw.orders"]
    doc["edges"] = [e for e in doc["edges"] if not e["source"].startswith("raw.regions")]
    plan = publisher(client).plan(graph(doc), job="daily", allow_delete=False)
    assert plan.counts["delete"] == 0 and plan.deletes_blocked
    g = graph(doc)
    g.problem("statement 2 did not parse", severity="error")
    plan = publisher(client).plan(g, job="daily")
    assert plan.counts["delete"] == 0 and "errors" in (plan.deletes_blocked or "")


def test_teardown_with_purge_leaves_nothing(client):
    publisher(client).sync(graph(), job="daily")
    res = publisher(client).teardown(purge=True)
    assert res.deleted == sum(EXPECTED.values())
    assert domain_entities(client, "demo", include_deleted=True) == []


def test_teardown_without_purge_leaves_only_deleted_entities_and_resync_recreates(client):
    publisher(client).sync(graph(), job="daily")
    publisher(client).teardown()
    assert domain_entities(client, "demo") == []
    assert all(h["status"] == "DELETED" for h in domain_entities(client, "demo", include_deleted=True))
    publisher(client).sync(graph(), job="daily")
    assert dict(Counter(h["typeName"] for h in domain_entities(client, "demo"))) == EXPECTED


def test_rebuild_restores_the_domain(client):
    publisher(client).sync(graph(), job="daily")
    res = publisher(client).rebuild(graph(), job="daily")
    assert res.applied is not None and res.applied.created == sum(EXPECTED.values())
    assert dict(Counter(h["typeName"] for h in domain_entities(client, "demo"))) == EXPECTED
    assert len(domain_entities(client, "demo", include_deleted=True)) == sum(EXPECTED.values())


def test_saved_plan_is_refused_when_atlas_changed(client, tmp_path):
    from atlas_sync.reconcile import Plan

    publisher(client).sync(graph(), job="daily")
    doc = copy.deepcopy(DOC)
    doc["processes"][0]["name"] = "renamed"
    plan = publisher(client).plan(graph(doc), job="daily")
    saved = Plan.from_json(plan.to_json())
    doc["processes"][0]["name"] = "renamed again"
    publisher(client).sync(graph(doc), job="daily")
    from atlas_sync.errors import AtlasSyncError

    with pytest.raises(AtlasSyncError, match="no longer matches"):
        publisher(client).apply(saved)


def test_saved_plan_applies_when_nothing_moved(client):
    from atlas_sync.reconcile import Plan

    publisher(client).sync(graph(), job="daily")
    doc = copy.deepcopy(DOC)
    doc["processes"][0]["name"] = "renamed"
    saved = Plan.from_json(publisher(client).plan(graph(doc), job="daily").to_json())
    res = publisher(client).apply(saved)
    assert res.updated == 1
    assert not publisher(client).plan(graph(doc), job="daily").has_changes


def test_large_sync_batches_by_tier_and_converges(client, emu):
    n = 120
    doc = {
        "datasets": [{"id": f"s.t{i}", "name": f"t{i}", "columns": ["a", "b"]} for i in range(n)],
        "processes": [
            {"id": f"p{i}", "name": f"p{i}", "inputs": [f"s.t{i}"], "outputs": [f"s.t{(i + 1) % n}"]}
            for i in range(n)
        ],
    }
    pub = publisher(client, batch_size=50, parallel=3)
    pub.ensure_typedefs()
    emu.clear_log()
    res = pub.sync(graph(doc), job="big", ensure_typedefs=False)
    total = n + 2 * n + n  # datasets, columns, processes
    assert res.applied is not None and res.applied.created == total
    # 480 entities in dependency order (datasets, columns, processes), batches of 50 spanning tiers but
    # for the one between columns and processes (360 of them: a short eighth batch)
    assert len(writes(emu)) == -(-3 * n // 50) + -(-n // 50) == 11
    assert not pub.plan(graph(doc), job="big").has_changes


def test_input_with_errors_publishes_nothing_unless_partial_is_allowed(client, emu):
    from atlas_sync.errors import InputError

    g = graph()
    g.problem("statement 2: syntax error", severity="error", statement=2)
    emu.clear_log()
    with pytest.raises(InputError, match="nothing was published"):
        publisher(client).sync(g, job="daily")
    assert [r for r in emu.request_log if r.method != "GET"] == []
    res = publisher(client).sync(g, job="daily", allow_partial=True)
    assert res.applied is not None and res.applied.created == sum(EXPECTED.values())


def test_a_sync_leaves_the_garbage_collector_as_it_found_it(client):
    # a sync keeps the caller's objects out of the collector's full passes while it runs, and only then
    import gc

    assert gc.get_freeze_count() == 0
    publisher(client).sync(graph(), job="daily")
    assert gc.get_freeze_count() == 0
    tiny = {"datasets": [{"id": "raw.orders", "name": "orders"}], "processes": [{"id": "daily", "name": "d"}]}
    with pytest.raises(PlanRefused, match="max-delete-percent"):
        publisher(client).sync(graph(tiny), job="daily")  # a sync refused midway gives everything back too
    assert gc.get_freeze_count() == 0


def test_a_sync_leaves_a_freeze_made_by_the_host_process_alone(client):
    import gc

    gc.freeze()  # as a pre-forking server does before it forks its workers
    try:
        assert gc.get_freeze_count() > 0
        publisher(client).sync(graph(), job="daily")
        # still frozen (less what refcounting freed meanwhile), not thawed by the sync
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


OTHER_JOB = {
    "datasets": [{"id": "raw.leads", "namespace": "raw", "name": "leads", "columns": ["id"]}],
    "processes": [{"id": "leads", "name": "leads", "inputs": ["raw.leads"], "outputs": ["raw.leads"]}],
}


def test_rebuild_of_one_job_leaves_the_other_jobs_entities_alone(client):
    publisher(client).sync(graph(), job="daily")
    publisher(client).sync(graph(OTHER_JOB), job="leads")
    before = {
        h["guid"]
        for h in domain_entities(client, "demo")
        if h["attributes"]["qualifiedName"].startswith("raw.leads")
    }
    res = publisher(client).rebuild(graph(), "daily", only_job=True)
    # the job's entities were deleted (and purged) and created again; the other job's stay as they were
    assert res.teardown is not None and res.teardown.applied is not None
    assert res.teardown.applied.deleted == sum(EXPECTED.values())
    assert res.applied is not None and res.applied.created == sum(EXPECTED.values())
    after = {
        h["guid"]
        for h in domain_entities(client, "demo")
        if h["attributes"]["qualifiedName"].startswith("raw.leads")
    }
    assert after == before and len(before) == 2  # (the dataset and its column)


def test_open_input_reads_whole_unless_the_reader_gives_several_chunks_or_stream_is_asked(
    client, tmp_path, monkeypatch
):
    import json

    from atlas_sync.lineage.readers import graph as graph_reader

    path = tmp_path / "daily.lineage.json"
    path.write_text(json.dumps(DOC), encoding="utf-8")
    pub = publisher(client)
    whole = pub.open_input("graph", [str(path)])
    assert whole.chunks is None and whole.graph is not None and len(whole.graph.processes) == 1
    asked = pub.open_input("graph", [str(path)], stream=True)
    assert asked.graph is None and asked.chunks is not None and len(list(asked.chunks)) == 1
    doc = {
        "datasets": [{"id": f"t{i}", "namespace": "raw", "name": f"t{i}"} for i in range(4)],
        "processes": [
            {"id": f"p{i}", "name": f"p{i}", "inputs": [f"t{i}"], "outputs": [f"t{i + 1}"]} for i in range(3)
        ],
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setattr(graph_reader, "DEFAULT_CHUNK_PROCESSES", 1)
    several = pub.open_input("graph", [str(path)])
    assert several.graph is None and several.chunks is not None
    assert [len(c.processes) for c in several.chunks] == [1, 1, 1]
    kept = pub.open_input("graph", [str(path)], stream=False)
    assert kept.graph is not None and len(kept.graph.processes) == 3
