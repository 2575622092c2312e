"""BI lineage under the `atlas` profile joins the tables Atlas's Hive hook made: a Superset chart over
`mart.orders` of a Hive database reads the hook's `hive_table` (referenced, never written), and the BI
objects are atlas-sync's BI types next to it. The hook's entities are made as HiveMetaStoreBridge
names them; expectations by hand."""

from __future__ import annotations

import zipfile
from pathlib import Path

import yaml

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage import registry

NS = "cm"


def _hook_table(client) -> str:  # type: ignore[no-untyped-def]
    """hive_db mart@cm, hive_table mart.orders@cm with columns id, amount; the table's guid."""
    entities = [
        {
            "typeName": "hive_db",
            "guid": "-1",
            "attributes": {"qualifiedName": f"mart@{NS}", "name": "mart", "clusterName": NS},
        },
        {
            "typeName": "hive_table",
            "guid": "-2",
            "attributes": {"qualifiedName": f"mart.orders@{NS}", "name": "orders", "owner": "hive"},
            "relationshipAttributes": {"db": {"guid": "-1", "typeName": "hive_db"}},
        },
    ]
    for pos, col in enumerate(("id", "amount")):
        entities.append(
            {
                "typeName": "hive_column",
                "guid": f"-{3 + pos}",
                "attributes": {
                    "qualifiedName": f"mart.orders.{col}@{NS}",
                    "name": col,
                    "type": "int",
                    "position": pos,
                },
                "relationshipAttributes": {"table": {"guid": "-2", "typeName": "hive_table"}},
            }
        )
    client.upsert_entities(entities)
    return f"mart.orders@{NS}"


def _export(folder: Path) -> Path:
    path = folder / "export.zip"
    docs = {
        "databases/Lake.yaml": {
            "database_name": "Lake",
            "sqlalchemy_uri": "hive://hs2:10000/default",
            "uuid": "db-1",
        },
        "datasets/Lake/orders.yaml": {
            "uuid": "ds-1",
            "database_uuid": "db-1",
            "table_name": "orders",
            "schema": "mart",
            "sql": None,
            "columns": [{"column_name": "id"}, {"column_name": "amount"}],
            "metrics": [{"metric_name": "revenue", "expression": "SUM(amount)"}],
        },
        "charts/revenue.yaml": {
            "uuid": "c-1",
            "slice_name": "Revenue",
            "viz_type": "big_number_total",
            "dataset_uuid": "ds-1",
            "params": {"metric": "revenue"},
        },
        "dashboards/sales.yaml": {
            "uuid": "d-1",
            "dashboard_title": "Sales",
            "position": {"CHART-1": {"type": "CHART", "meta": {"uuid": "c-1"}}},
        },
    }
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("export/metadata.yaml", "version: 1.0.0\ntype: Dashboard\n")
        for name, doc in docs.items():
            zf.writestr(f"export/{name}", yaml.safe_dump(doc))
    return path


def test_superset_lineage_under_the_atlas_profile_reads_the_hooks_hive_table(tmp_path: Path) -> None:
    client = embedded_client(emulator=Emulator(None))
    _hook_table(client)
    # the Hive database's tables carry no catalog: the map's "" keeps mart.orders
    graph = registry.read("superset", [str(_export(tmp_path))], connection_map={"Lake": ""})
    pub = Publisher(client, profile="atlas", domain="bi", metadata_namespace=NS)
    result = pub.sync(graph)
    referenced = {i.key for i in result.plan.by_action("referenced")}
    assert ("hive_table", f"mart.orders@{NS}") in referenced
    assert ("hive_column", f"mart.orders.amount@{NS}") in referenced
    created = {i.key for i in result.plan.by_action("create")}
    assert {
        ("bi_dataset", f"superset:bi_dataset:ds-1@{NS}"),
        ("bi_chart", f"superset:chart:c-1@{NS}"),
        ("bi_dashboard", f"superset:dashboard:d-1@{NS}"),
        ("bi_dataset_column", f"superset:bi_dataset:ds-1.revenue@{NS}"),
        ("bi_chart_column", f"superset:chart:c-1.revenue@{NS}"),
        # (the job, superset, already begins the process id: no prefix of its own)
        ("bi_process", f"superset:bi_dataset:ds-1@{NS}"),
        ("bi_column_lineage", f"superset:bi_dataset:ds-1@{NS}:superset:bi_dataset:ds-1.revenue"),
    } <= created
    assert not any(t.startswith("hive_") for t, _ in created)  # the hook's entities are not written
    feed = client.get_entity_by_unique("bi_process", f"superset:bi_dataset:ds-1@{NS}")
    table = client.get_entity_by_unique("hive_table", f"mart.orders@{NS}")
    assert feed is not None and table is not None
    inputs = feed["attributes"]["inputs"]
    assert [i["guid"] for i in inputs] == [table["guid"]]
    assert not table.get("labels")  # another tool's table: not marked as ours
    again = pub.sync(graph)
    assert not again.plan.has_changes
