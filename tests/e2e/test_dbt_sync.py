"""A dbt project synced to the emulator as a user would after each `dbt build`: the Python API, then
the CLI (`atlas-sync sync --from auto target/`), on the artifacts real dbt wrote (tests/data/dbt).

Entity counts are derived by hand from the project (tests/data/dbt/README.md, expected_columns.txt).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage import registry

ARTIFACTS = Path(__file__).resolve().parents[1] / "data" / "dbt" / "artifacts"
FULL, REMOVED = ARTIFACTS / "1.10", ARTIFACTS / "1.10-removed"
TYPES = "lineage_dataset,lineage_column,lineage_process,lineage_column_lineage"
# 14 relations; their columns: seeds 4+5+4, sources 4+4, staging 4+5+4+4, fct_orders 7, customers 6,
# order_overview 7, fct_order_events 4, snapshot 4+4 dbt columns; 9 models + 1 snapshot + 3 seeds;
# one column lineage per (process, target column) with a direct edge, and per (process, target, kind)
# for indirect ones (CONDITIONAL on a column; FILTER, JOIN, GROUP_BY on `*`).
EXPECTED = {
    "lineage_dataset": 14,
    "lineage_column": 13 + 8 + 17 + 7 + 6 + 7 + 4 + 8,
    "lineage_process": 12,
    "lineage_column_lineage": 4 + 5 + 4 + 4 + (7 + 2 + 2) + (6 + 1 + 2) + (7 + 1) + (4 + 1) + 4,
}


@pytest.fixture()
def emu():
    return Emulator(None)


@pytest.fixture()
def client(emu):
    return embedded_client(emulator=emu)


def publisher(client) -> Publisher:
    return Publisher(client, profile="lineage", domain="shop")


def entities(client) -> list[dict]:
    return list(
        client.search_basic(
            TYPES,
            entity_filters={
                "attributeName": "qualifiedName",
                "operator": "endsWith",
                "attributeValue": "@shop",
            },
            attributes=["qualifiedName", "atlasSyncJob", "description", "owner"],
        )
    )


def writes(emu) -> list:
    return [r for r in emu.request_log if r.method in ("POST", "PUT", "DELETE") and "/v2/entity" in r.path]


def test_sync_then_resync_writes_nothing(client, emu):
    graph = registry.read("dbt", [str(FULL)])
    result = publisher(client).sync(graph)
    assert result.plan.job == "jaffle"  # the project's name is the default job
    found = entities(client)
    assert dict(Counter(h["typeName"] for h in found)) == EXPECTED
    by_qn = {h["attributes"]["qualifiedName"]: h for h in found}
    customers = by_qn["jaffle.main_marts.customers@shop"]["attributes"]
    assert customers["owner"] == "analytics@jaffle.test"
    assert customers["description"].startswith("One row per customer")
    orders = by_qn["jaffle:model.jaffle.orders@shop"]["attributes"]
    assert orders["description"] == "One row per order with its payments and product."
    assert orders["owner"] == "sales@jaffle.test, finance@jaffle.test"

    emu.clear_log()
    again = publisher(client).sync(registry.read("dbt", [str(FULL)]))
    assert again.plan.counts["create"] == again.plan.counts["update"] == again.plan.counts["delete"] == 0
    assert writes(emu) == []


def test_removing_a_model_deletes_exactly_its_process_and_what_only_it_made(client):
    publisher(client).sync(registry.read("dbt", [str(FULL)]))
    before = {h["attributes"]["qualifiedName"] for h in entities(client)}
    plan = publisher(client).plan(registry.read("dbt", [str(REMOVED)]))
    changed = {(i.type_name, i.qualified_name): i.action for i in plan.items if i.action != "unchanged"}
    overview = "jaffle.main_marts.order_overview"
    columns = [
        "order_id",
        "customer_id",
        "order_date",
        "status",
        "product_name",
        "credit_card_amount",
        "amount",
    ]
    want = {
        ("lineage_process", "jaffle:model.jaffle.order_overview@shop"): "delete",
        ("lineage_dataset", f"{overview}@shop"): "delete",
        **{("lineage_column", f"{overview}.{c}@shop"): "delete" for c in columns},
        **{
            ("lineage_column_lineage", f"jaffle:model.jaffle.order_overview:{overview}.{c}@shop"): "delete"
            for c in columns
        },
        ("lineage_column_lineage", f"jaffle:model.jaffle.order_overview:{overview}.*:FILTER@shop"): "delete",
    }
    assert changed == want
    publisher(client).apply(plan)
    after = {h["attributes"]["qualifiedName"] for h in entities(client)}
    assert before - after == {qn for _type, qn in want}


def test_a_partial_run_deletes_nothing_it_did_not_run(client, tmp_path):
    publisher(client).sync(registry.read("dbt", [str(FULL)]))
    run = json.loads((FULL / "run_results.json").read_text())
    run["results"] = [r for r in run["results"] if r["unique_id"] == "model.jaffle.customers"]
    (tmp_path / "run_results.json").write_text(json.dumps(run))
    graph = registry.read("dbt", [str(FULL)], run_results=str(tmp_path / "run_results.json"))
    assert [p.id for p in graph.processes] == ["model.jaffle.customers"] and graph.partial
    plan = publisher(client).plan(graph)  # the API itself deletes nothing for a partial graph
    assert plan.counts["delete"] == 0 and plan.counts["create"] == 0 and plan.counts["update"] == 0
    assert publisher(client).sync(graph).applied is None


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_sync_of_target_folder_and_a_partial_run(tmp_path):
    first = run_cli(["sync", "--domain", "shop", str(FULL)], tmp_path)
    assert first.returncode == 0, first.stderr
    assert "reader: dbt (picked by --from auto)" in first.stderr
    assert f"{sum(EXPECTED.values())} created" in first.stdout
    # The run that built only `customers` (dbt build -s customers): nothing else is deleted.
    run = json.loads((FULL / "run_results.json").read_text())
    run["results"] = [r for r in run["results"] if r["unique_id"] == "model.jaffle.customers"]
    (tmp_path / "run_results.json").write_text(json.dumps(run))
    part = run_cli(
        ["sync", "--domain", "shop", "--from", "dbt", "--run-results", "run_results.json", str(FULL)],
        tmp_path,
    )
    assert part.returncode == 0, part.stderr
    assert "nothing is deleted" in part.stderr
    # (what it does not delete it says, and why: not that Atlas matches the whole job)
    assert "Nothing written: 120 deletes skipped: the input is part of the job's lineage" in part.stdout
    removed = run_cli(["sync", "--domain", "shop", "--from", "dbt", str(REMOVED)], tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert "0 created, 0 updated, 17 deleted" in removed.stdout


def test_atlas_profile_maps_duckdb_relations_to_rdbms_tables_and_models_to_processes(client, emu):
    pub = Publisher(client, profile="atlas", domain="shop")
    pub.sync(registry.read("dbt", [str(FULL)]))
    tables = {
        h["attributes"]["qualifiedName"]: h
        for h in client.search_basic("rdbms_table", attributes=["qualifiedName", "description", "owner"])
    }
    assert len(tables) == 14
    customers = tables["jaffle.main_marts.customers@primary"]["attributes"]
    assert customers["owner"] == "analytics@jaffle.test" and customers["description"].startswith("One row")
    procs = {
        h["attributes"]["qualifiedName"]
        for h in client.search_basic("Process", attributes=["qualifiedName"])
        if h["typeName"] == "Process"  # not its subtypes (hive_column_lineage)
    }
    assert "jaffle:model.jaffle.orders@primary" in procs and len(procs) == 12
    emu.clear_log()
    again = pub.sync(registry.read("dbt", [str(FULL)]))
    assert again.plan.counts["create"] == again.plan.counts["update"] == again.plan.counts["delete"] == 0
    assert writes(emu) == []
    # a dbt-spark/databricks project's relations are Hive tables (`[catalog:]db.table@ns`)
    spark = registry.read("dbt", [str(FULL)])
    for d in spark.datasets:
        d.facets["connection"] = "spark"
    Publisher(client, profile="atlas", domain="lake").sync(spark, job="lake")
    hive = {
        h["attributes"]["qualifiedName"]
        for h in client.search_basic("hive_table", attributes=["qualifiedName"])
    }
    assert "jaffle:main_marts.customers@primary" in hive and len(hive) == 14
