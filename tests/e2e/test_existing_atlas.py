"""Publishing into an existing Atlas with the `atlas` profile (docs/existing-atlas.md), end to end.

A catalog is first built as Atlas's hooks would build it (hive_db, hive_tables with columns and storage
descriptors, an hdfs_path, a kafka_topic, one table carrying a classification; REST calls with the hooks'
names and attributes). Three jobs then read and write those tables: a Spark plan (InsertIntoHadoopFsRelation
into a catalog table), a SQL script and an OpenLineage event. Runs on the embedded emulator, and on a real
Atlas when ATLAS_URL is set (.ci/real-atlas.sh, which loads Atlas's complete model set there).

Expected counts are derived by hand from the inputs and the mapping (comments at each constant).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.config import load_settings
from atlas_sync.factory import client_from_settings
from atlas_sync.lineage.registry import read
from atlas_sync.render.native import ownership_labels

DATA = Path(__file__).resolve().parents[1] / "data"
SPARK_PLAN = DATA / "spark/fixtures/insert_into_cte/analyzed.txt"  # tab1, tabb2 -> tab3 (catalog tables)
RUN = uuid.uuid4().hex[:8]
NS = f"cm{RUN}"  # the metadata namespace of this run's "cluster"
DOMAIN = f"prod{RUN}"
TAG = f"PII_{RUN}"
COLUMNS = {"tab1": ["id", "name", "age"], "tabb2": ["id", "name", "age"], "tab3": ["id", "name", "age"]}
COLUMNS["tab4"] = ["id", "name"]

SQL_V1 = """
INSERT INTO default.tab4 SELECT id, name FROM default.tab3;
CREATE TABLE default.tab5 AS SELECT id, age FROM default.tab1;
"""
SQL_V2 = "INSERT INTO default.tab4 SELECT id, upper(name) AS name FROM default.tab3;\n"


def _client() -> AtlasClient:
    if not os.environ.get("ATLAS_URL"):
        from atlas_sync.factory import embedded_client

        return embedded_client(None)
    # ATLAS_URL, ATLAS_USERNAME, ATLAS_PASSWORD or ATLAS_PASSWORD_FILE, as the CLI reads them
    return client_from_settings(load_settings())


# ------------------------------------------------------------------ the catalog, as the Hive hook writes it
def _hook_catalog() -> list[dict[str, Any]]:
    """HiveMetaStoreBridge's entities (toDbEntity, toTableEntity, toStorageDescEntity, toColumns), the HDFS
    path of AtlasPathExtractorUtil.addHDFSPathEntity and KafkaBridge's topic; qualified names as they write."""
    out: list[dict[str, Any]] = [
        {
            "typeName": "hive_db",
            "guid": "-1",
            "attributes": {
                "qualifiedName": f"default@{NS}",
                "name": "default",
                "clusterName": NS,
                "owner": "hive",
                "location": "hdfs://nn:8020/warehouse",
            },
        }
    ]
    n = 1
    for table, cols in COLUMNS.items():
        n += 1
        tguid, tqn = f"-{n}", f"default.{table}@{NS}"
        entity: dict[str, Any] = {
            "typeName": "hive_table",
            "guid": tguid,
            "attributes": {
                "qualifiedName": tqn,
                "name": table,
                "owner": "hive",
                "tableType": "MANAGED_TABLE",
                "temporary": False,
                "createTime": 1700000000000,
                "parameters": {"transient_lastDdlTime": "1700000000"},
            },
            "relationshipAttributes": {"db": {"guid": "-1", "typeName": "hive_db"}},
        }
        if table == "tabb2":
            entity["classifications"] = [{"typeName": TAG}]
        out.append(entity)
        n += 1
        out.append(
            {
                "typeName": "hive_storagedesc",
                "guid": f"-{n}",
                "attributes": {
                    "qualifiedName": f"{tqn}_storage",
                    "location": f"hdfs://nn:8020/warehouse/{table}",
                    "inputFormat": "org.apache.hadoop.mapred.TextInputFormat",
                    "compressed": False,
                    "numBuckets": -1,
                },
                "relationshipAttributes": {"table": {"guid": tguid, "typeName": "hive_table"}},
            }
        )
        for pos, col in enumerate(cols):
            n += 1
            out.append(
                {
                    "typeName": "hive_column",
                    "guid": f"-{n}",
                    "attributes": {
                        "qualifiedName": f"default.{table}.{col}@{NS}",
                        "name": col,
                        "type": "int" if col != "name" else "string",
                        "position": pos,
                        "owner": "hive",
                    },
                    "relationshipAttributes": {"table": {"guid": tguid, "typeName": "hive_table"}},
                }
            )
    out.append(
        {
            "typeName": "hdfs_path",
            "guid": "-900",
            "attributes": {
                "qualifiedName": f"hdfs://nn:8020/landing/events@{NS}",
                "name": "/landing/events",
                "path": "hdfs://nn:8020/landing/events",
                "clusterName": NS,
            },
        }
    )
    out.append(
        {
            "typeName": "kafka_topic",
            "guid": "-901",
            "attributes": {
                "qualifiedName": f"events@{NS}",
                "name": "events",
                "topic": "events",
                "uri": "events",
            },
        }
    )
    return out


def _ol_event() -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-12-01T06:00:00Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.25.0/integration/airflow",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0193f5d2-7c1e-7b7a-9c55-3c7f1e2a9b77"},
        "job": {"namespace": "etl", "name": "ingest"},
        "inputs": [
            {"namespace": "kafka://broker:9092", "name": "events"},
            {"namespace": "hdfs://nn:8020", "name": "/landing/events"},
        ],
        "outputs": [
            {
                "namespace": "hive://metastore:9083",
                "name": "default.tab1",
                "facets": {
                    "schema": {
                        "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.25.0/integration/airflow",
                        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                        "fields": [{"name": "id"}, {"name": "name"}, {"name": "age"}],
                    }
                },
            }
        ],
    }


# ------------------------------------------------------------------ helpers
def _snapshot(client: AtlasClient, guids: list[str]) -> dict[str, Any]:
    """What the hook wrote: attributes, classifications, labels and every relationship except the lineage
    ones (inputToProcesses / outputFromProcesses) and those whose other end atlas-sync created (a table it
    created in the hook's database): those are atlas-sync's entities' relationships."""
    ours = {h["guid"] for h in _labelled(client, active_only=False)}
    out = {}
    for e in client.get_entities(guids):
        rels = {
            k: sorted(
                json.dumps(x, sort_keys=True)
                for x in (v if isinstance(v, list) else [v])
                if x and x.get("guid") not in ours
            )
            for k, v in (e.get("relationshipAttributes") or {}).items()
            if k not in ("inputToProcesses", "outputFromProcesses")
        }
        out[e["guid"]] = {
            "attributes": {
                k: v
                for k, v in e["attributes"].items()
                if k not in ("inputToProcesses", "outputFromProcesses")
            },
            # its own classifications; ones propagated along the new lineage come from another entity
            "classifications": sorted(
                c["typeName"]
                for c in e.get("classifications") or []
                if c.get("entityGuid", e["guid"]) == e["guid"]
            ),
            "labels": sorted(e.get("labels") or []),
            "relationships": rels,
            "status": e.get("status"),
        }
    return out


def _differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """``guid section key: before -> after`` for everything that differs (readable failures)."""
    out = []
    for guid, b in before.items():
        a = after.get(guid, {})
        for section in ("attributes", "relationships"):
            for k in sorted(set(b[section]) | set(a.get(section, {}))):
                if b[section].get(k) != a.get(section, {}).get(k):
                    out.append(
                        f"{guid} {section} {k}: {b[section].get(k)!r} -> {a.get(section, {}).get(k)!r}"
                    )
        for section in ("classifications", "labels", "status"):
            if b[section] != a.get(section):
                out.append(f"{guid} {section}: {b[section]!r} -> {a.get(section)!r}")
    return out


def _guid(client: AtlasClient, type_name: str, qn: str) -> str:
    [e] = client.get_entities_by_unique(type_name, [qn])
    return str(e["guid"])


def _sql(tmp: Path, text: str) -> Path:
    path = tmp / "etl2.sql"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def catalog() -> Iterator[tuple[AtlasClient, dict[str, str]]]:
    client = _client()
    client.create_typedefs(
        {"classificationDefs": [{"name": TAG, "superTypes": [], "attributeDefs": []}], "entityDefs": []}
    )
    made = client.upsert_entities(_hook_catalog())
    guids = dict(made.guid_assignments) if hasattr(made, "guid_assignments") else {}
    hook = {e["attributes"]["qualifiedName"]: guids[e["guid"]] for e in _hook_catalog()}
    try:
        yield client, hook
    finally:
        if os.environ.get("ATLAS_URL"):  # leave a real server as it was
            Publisher(client, profile="atlas", domain=DOMAIN).teardown(purge=True)
            client.delete_entities(list(hook.values()))
            client.purge_entities(list(hook.values()))
            client.delete_typedefs({"classificationDefs": [{"name": TAG}]})


def test_atlas_profile_publishes_onto_an_existing_catalog(
    catalog: tuple[AtlasClient, dict[str, str]], tmp_path: Path
) -> None:
    client, hook = catalog
    before = _snapshot(client, list(hook.values()))
    assert before[hook[f"default.tabb2@{NS}"]]["classifications"] == [TAG]

    def publisher() -> Publisher:
        return Publisher(client, profile="atlas", domain=DOMAIN, metadata_namespace=NS)

    ol_path = tmp_path / "ingest.ol.json"
    ol_path.write_text(json.dumps(_ol_event()), encoding="utf-8")
    jobs = {
        "spark": lambda: read("spark-plan", [str(SPARK_PLAN)], mode="job"),
        "sql": lambda: read("sql", [str(_sql(tmp_path, SQL_V1))], dialect="hive"),
        "openlineage": lambda: read("openlineage", [str(ol_path)]),
    }
    figures: dict[str, Any] = {}
    for name, graph in jobs.items():
        client.stats.reset()
        first = publisher().sync(graph())
        figures[name] = {
            "created": first.plan.counts["create"],
            "referenced": first.plan.counts.get("referenced", 0),
            "requests_first": client.stats.total().requests,
        }
        client.stats.reset()
        again = publisher().sync(graph())
        figures[name]["requests_resync"] = client.stats.total().requests
        # a re-sync writes nothing
        assert not again.plan.has_changes and again.applied is None, name
        assert client.stats["entity_write"].requests == 0
    print("\nexisting-atlas figures:", json.dumps(figures))

    # Spark: hive_db + 3 tables + 9 columns exist (13 referenced); created: spark_application, spark_process,
    # 3 direct column lineages (tab3.id/name/age) + 3 indirect (FILTER, GROUP_BY, JOIN on tab3) = 8
    assert figures["spark"] == {**figures["spark"], "created": 8, "referenced": 13}
    # SQL: referenced hive_db, tab1/tab3/tab4 and their used columns (tab3.id/name, tab4.id/name,
    # tab1.id/age) = 10; created: 2 hive_process, tab5 + 2 columns, 4 column lineages = 9
    assert figures["sql"] == {**figures["sql"], "created": 9, "referenced": 10}
    # OpenLineage (airflow producer): kafka_topic, hdfs_path, hive_db, tab1 + 3 columns referenced; 1 Process
    assert figures["openlineage"] == {**figures["openlineage"], "created": 1, "referenced": 7}

    # one entity per table: a search by qualifiedName finds exactly one
    for table in [*COLUMNS, "tab5"]:
        qn = f"default.{table}@{NS}"
        found = list(
            client.search_basic(
                "DataSet",
                entity_filters={"attributeName": "qualifiedName", "operator": "=", "attributeValue": qn},
            )
        )
        assert [f["attributes"]["qualifiedName"] for f in found] == [qn]

    # the hook-made entities are unchanged: attributes, classification, labels, relationships
    assert _differences(before, _snapshot(client, list(hook.values()))) == []

    if os.environ.get("ATLAS_URL"):
        # Atlas propagates the hook's classification along the lineage atlas-sync added (tabb2 -> tab3)
        tab3 = client.get_entities([hook[f"default.tab3@{NS}"]])[0]
        assert TAG in {c["typeName"] for c in tab3.get("classifications") or []}

    # lineage from an existing hive_table walks through our processes to its upstream tables
    tab4 = hook[f"default.tab4@{NS}"]
    lineage = client.lineage(tab4, direction="INPUT", depth=0)
    upstream = set(lineage.get("guidEntityMap") or {})
    for qn in (f"default.tab3@{NS}", f"default.tab1@{NS}", f"default.tabb2@{NS}", f"events@{NS}"):
        assert hook[qn] in upstream, qn
    kinds = {e["typeName"] for e in (lineage.get("guidEntityMap") or {}).values()}
    assert {"hive_process", "spark_process", "Process"} <= kinds

    # column lineage links the existing hive_columns
    [cl_qn] = [
        h["attributes"]["qualifiedName"]
        for h in _labelled(client)
        if h["typeName"] == "hive_column_lineage"
        and h["attributes"]["qualifiedName"].endswith(":default.tab4.id")
    ]
    [cl] = client.get_entities_by_unique("hive_column_lineage", [cl_qn])
    assert [x["guid"] for x in cl["attributes"]["inputs"]] == [hook[f"default.tab3.id@{NS}"]]
    assert [x["guid"] for x in cl["attributes"]["outputs"]] == [hook[f"default.tab4.id@{NS}"]]

    # what we created carries our labels; a table the job created is ours
    tab5 = client.get_entities_by_unique("hive_table", [f"default.tab5@{NS}"])[0]
    assert sorted(tab5["labels"]) == sorted(ownership_labels(DOMAIN, "etl2"))

    # a hook writing our table later is not fought over: the next sync leaves it alone
    client.upsert_entities(
        [
            {
                "typeName": "hive_table",
                "attributes": {
                    "qualifiedName": f"default.tab5@{NS}",
                    "name": "tab5",
                    "owner": "hive",
                    "comment": "from the hook",
                },
            }
        ]
    )
    assert not publisher().plan(jobs["sql"]()).has_changes

    # a changed job touches only our entities: it updates or deletes only what we created, and what it
    # creates carries our labels
    ours = {(e["typeName"], e["attributes"]["qualifiedName"]) for e in _labelled(client)}
    changed = publisher().sync(read("sql", [str(_sql(tmp_path, SQL_V2))], dialect="hive"))
    by_action = {
        a: {i.key for i in changed.plan.items if i.action == a} for a in ("create", "update", "delete")
    }
    assert by_action["update"] | by_action["delete"] <= ours
    now_ours = {(e["typeName"], e["attributes"]["qualifiedName"]) for e in _labelled(client)}
    assert by_action["create"] and by_action["create"] <= now_ours
    # the INSERT's text changed, so its stable name did (docs/sql-reader.md): new hive_process + 2 column
    # lineages; the old ones (3) and the CTAS's hive_process, 2 column lineages, tab5 and its 2 columns (6) go
    assert changed.plan.counts["create"] == 3
    assert changed.plan.counts["delete"] == 9
    assert not {qn for _, qn in by_action["create"] | by_action["update"] | by_action["delete"]} & set(hook)
    assert _differences(before, _snapshot(client, list(hook.values()))) == []

    # teardown deletes only what we created: Spark 8 + OpenLineage 1 + SQL 9 + 3 - 9 = 12 entities
    assert len(_labelled(client)) == 12
    down = publisher().teardown()
    assert down.deleted == 12
    assert _labelled(client) == []
    assert _differences(before, _snapshot(client, list(hook.values()))) == []


def _labelled(client: AtlasClient, *, active_only: bool = True) -> list[dict[str, Any]]:
    from atlas_sync.render.native import DOMAIN_LABEL, label_for

    mark = label_for(DOMAIN_LABEL, DOMAIN)
    return [
        h
        for h in client.search_basic(
            "Referenceable",
            entity_filters={"attributeName": "__labels", "operator": "contains", "attributeValue": mark},
            exclude_deleted=active_only,
            attributes=["qualifiedName"],
        )
        if mark in (h.get("labels") or [])
    ]


def test_missing_datasets_fail_refuses_and_skip_leaves_them_out(
    catalog: tuple[AtlasClient, dict[str, str]], tmp_path: Path
) -> None:
    from atlas_sync.reconcile import plan_text
    from atlas_sync.reconcile.plan import PlanRefused

    client, hook = catalog
    graph = read("sql", [str(_sql(tmp_path, SQL_V1))], dialect="hive")  # CTAS writes default.tab5: missing

    def publisher(policy: str) -> Publisher:
        return Publisher(
            client, profile="atlas", domain=DOMAIN, metadata_namespace=NS, missing_datasets=policy
        )

    client.stats.reset()
    with pytest.raises(PlanRefused, match=f"default.tab5@{NS}"):
        publisher("fail").sync(graph)
    assert client.stats["entity_write"].requests == 0

    seen: list[tuple[int, int]] = []
    skipped = publisher("skip").sync(graph, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1]  # the progress reaches its total (left-out ones count)
    text = plan_text(skipped.plan)
    assert f"& hive_table default.tab4@{NS}  (exists, not ours: referenced)" in text
    assert not [i for i in skipped.plan.items if "tab5" in i.qualified_name]
    assert any("left out" in w for w in skipped.plan.warnings)
    assert client.get_entities_by_unique("hive_table", [f"default.tab5@{NS}"]) == []
    # the CTAS only writes the missing table: its process and column lineage are left out with it
    ours = _labelled(client)
    assert not [h for h in ours if "tab5" in h["attributes"]["qualifiedName"]]
    [insert] = [h for h in ours if h["typeName"] == "hive_process"]
    [insert_entity] = client.get_entities([insert["guid"]])
    assert [x["guid"] for x in insert_entity["attributes"]["outputs"]] == [hook[f"default.tab4@{NS}"]]
    again = publisher("skip").plan(graph)
    # (unchanged, but not "Atlas matches the input": `sync` says what it left out)
    assert not again.has_changes and again.left_out == skipped.plan.left_out > 0
    publisher("skip").teardown()
