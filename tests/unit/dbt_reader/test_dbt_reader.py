"""The dbt reader on the artifacts real dbt wrote for tests/data/dbt/jaffle (see its README).

Table lineage is checked against dbt's own graph (``parent_map``) with ephemeral models resolved by
walking that map here; column lineage against tests/data/dbt/expected_columns.txt, written by hand
from the models' SQL.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph

DATA = Path(__file__).resolve().parents[2] / "data" / "dbt"
ARTIFACTS = DATA / "artifacts"
VERSIONS = ["1.5", "1.7", "1.9", "1.10"]
RELATIONS = ("model", "seed", "snapshot", "source")


def read(path: Path | str, **options: object) -> LineageGraph:
    return registry.read("dbt", [str(path)], **options)


def manifest(version: str = "1.10") -> dict:
    return json.loads((ARTIFACTS / version / "manifest.json").read_text())


def expected_columns() -> set[tuple[str, str, str]]:
    out = set()
    for line in (DATA / "expected_columns.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            target, source_kind = line.split(" <- ")
            source, kind = source_kind.split()
            out.add((target, source, kind))
    return out


def edges(graph: LineageGraph) -> set[tuple[str, str, str]]:
    return {(str(e.target), str(e.source), e.kind) for e in graph.edges}


def relation_of(node: dict) -> str:
    """The dataset id of a node, from its database/schema/alias fields (not relation_name)."""
    return ".".join([node["database"], node["schema"], node.get("alias") or node["identifier"]])


def dbt_table_lineage(m: dict) -> dict[str, set[str]]:
    """uid -> the relations it reads, from parent_map, ephemeral models walked through."""
    nodes = {**m["nodes"], **m["sources"]}

    def ephemeral(uid: str) -> bool:
        return nodes[uid]["resource_type"] == "model" and nodes[uid]["config"]["materialized"] == "ephemeral"

    def reads(uid: str) -> set[str]:
        out: set[str] = set()
        for parent in m["parent_map"][uid]:
            if ephemeral(parent):
                out |= reads(parent)
            elif nodes[parent]["resource_type"] in RELATIONS:
                out.add(relation_of(nodes[parent]))
        return out

    return {
        uid: reads(uid)
        for uid, n in nodes.items()
        if n["resource_type"] in ("model", "seed", "snapshot") and not ephemeral(uid)
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_table_lineage_is_dbts_parent_map_with_ephemeral_models_resolved(version):
    m = manifest(version)
    g = read(ARTIFACTS / version)
    want = dbt_table_lineage(m)
    # and the incremental model reads itself ({{ this }}): every column edge's source is an input
    want["model.jaffle.fct_order_events"].add("jaffle.main_marts.fct_order_events")
    got = {p.id: set(p.inputs) for p in g.processes}
    assert got == want
    nodes = {**m["nodes"], **m["sources"]}
    for p in g.processes:
        assert p.outputs == [relation_of(nodes[p.id])]
    # the ephemeral model is no dataset and no process; orders reads stg_payments through it
    assert "model.jaffle.int_order_payments" not in got
    assert "jaffle.main.stg_payments" in got["model.jaffle.orders"]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_model_seed_snapshot_and_source_is_a_dataset(version):
    m = manifest(version)
    nodes = {**m["nodes"], **m["sources"]}
    want = {
        relation_of(n)
        for n in nodes.values()
        if n["resource_type"] in RELATIONS and n["config"].get("materialized") != "ephemeral"
    }
    assert {d.id for d in read(ARTIFACTS / version).datasets} == want
    assert len(want) == 14  # 3 seeds, 2 sources, 4 staging views, 4 marts, 1 snapshot


@pytest.mark.parametrize("version", VERSIONS)
def test_column_lineage_is_the_hand_written_expectation(version):
    g = read(ARTIFACTS / version)
    assert edges(g) == expected_columns()
    assert not g.problems


def test_every_dbt_version_gives_the_same_graph():
    docs = [read(ARTIFACTS / v).to_document() for v in VERSIONS]
    for doc in docs:
        for p in doc["processes"]:  # timing differs from run to run, compiled SQL in white space
            p["attributes"].pop("executionTime", None)
            if "queryText" in p["attributes"]:
                p["attributes"]["queryText"] = "".join(p["attributes"]["queryText"].split())
        for key, value in doc.items():  # dbt versions list nodes in different orders
            if isinstance(value, list):
                doc[key] = sorted(value, key=lambda x: json.dumps(x, sort_keys=True))
            elif key == "tables":
                doc[key] = {k: sorted(v) for k, v in value.items()}
    assert all(d == docs[-1] for d in docs)


def test_datasets_carry_kinds_types_descriptions_owners_and_tags():
    g = read(ARTIFACTS / "1.10")
    customers = g.dataset("jaffle.main_marts.customers")
    assert customers is not None
    assert customers.kind == "table"
    assert customers.description and customers.description.startswith("One row per customer")
    assert customers.owners == ["analytics@jaffle.test"]  # meta.owner
    assert customers.tags == ["marts", "pii"]
    by_name = {c.name: c for c in customers.columns}
    assert list(by_name) == [
        "customer_id",
        "first_name",
        "last_name",
        "first_order",
        "number_of_orders",
        "lifetime_value",
    ]  # the warehouse's order (catalog)
    assert by_name["customer_id"].type == "INTEGER"
    assert by_name["customer_id"].description == "The customer's id, unique across the shop."  # docs block
    orders = g.dataset("jaffle.main_marts.fct_orders")
    assert orders is not None and orders.owners == ["sales@jaffle.test", "finance@jaffle.test"]  # config.meta
    products = g.dataset("jaffle.raw.products")
    assert products is not None and products.description == "Products on sale."
    assert products.owners == ["platform@jaffle.test"]  # the source's meta
    assert g.dataset("jaffle.main.stg_orders").kind == "view"  # type: ignore[union-attr]
    snap = g.dataset("jaffle.snapshots.customers_snapshot")
    assert snap is not None and "dbt_valid_to" in snap.column_names()


def test_processes_carry_compiled_sql_and_the_node():
    g = read(ARTIFACTS / "1.10")
    orders = g.process("model.jaffle.orders")
    assert orders is not None and orders.name == "orders"
    q = orders.attributes["queryText"]
    assert "__dbt__cte__int_order_payments" in q and "{{" not in q  # compiled, ephemeral CTE injected
    assert orders.attributes["sourceFile"] == "models/marts/orders.sql"
    assert orders.attributes["materialized"] == "table"
    assert orders.attributes["status"] == "success"  # run_results.json next to the manifest
    assert orders.description == "One row per order with its payments and product."
    seed = g.process("seed.jaffle.raw_orders")
    assert seed is not None and seed.inputs == [] and seed.outputs == ["jaffle.main.raw_orders"]
    assert g.job == "jaffle" and g.source == "dbt" and not g.partial


def test_without_catalog_columns_come_from_the_sql_and_select_star_still_expands(tmp_path):
    shutil.copy(ARTIFACTS / "1.10" / "manifest.json", tmp_path / "manifest.json")
    g = read(tmp_path)
    got = edges(g)
    # seeds' columns are unknown without the catalog (no YAML columns): stg_* lineage from them is
    # still drawn from the SQL, and models downstream expand `select *` from what the SQL gave
    overview = {e for e in got if e[0].startswith("jaffle.main_marts.order_overview.")}
    assert overview == {e for e in expected_columns() if e[0].startswith("jaffle.main_marts.order_overview.")}
    assert {e for e in got if e[0].startswith("jaffle.main_marts.customers.")} == {
        e for e in expected_columns() if e[0].startswith("jaffle.main_marts.customers.")
    }
    snap = g.dataset("jaffle.snapshots.customers_snapshot")
    assert snap is not None and snap.column_names()[-4:] == [
        "dbt_scd_id",
        "dbt_updated_at",
        "dbt_valid_from",
        "dbt_valid_to",
    ]


def test_select_by_name_tag_path_and_graph_operators():
    def procs(select: object) -> set[str]:
        return {p.id for p in read(ARTIFACTS / "1.10", select=select).processes}

    assert procs("customers") == {"model.jaffle.customers"}
    assert procs("tag:staging") == {
        "model.jaffle.stg_customers",
        "model.jaffle.stg_orders",
        "model.jaffle.stg_payments",
        "model.jaffle.stg_products",
    }
    assert procs("path:models/marts") == {
        "model.jaffle.orders",
        "model.jaffle.customers",
        "model.jaffle.order_overview",
        "model.jaffle.fct_order_events",
    }
    assert procs("+orders") == {
        "model.jaffle.orders",
        "model.jaffle.stg_orders",
        "model.jaffle.stg_payments",
        "model.jaffle.stg_products",
        "seed.jaffle.raw_orders",
        "seed.jaffle.raw_payments",
    }  # int_order_payments is ephemeral: no process
    assert procs("orders+1") == {
        "model.jaffle.orders",
        "model.jaffle.customers",
        "model.jaffle.order_overview",
    }
    assert procs(["tag:marts,path:models/marts/customers.sql", "stg_orders"]) == {
        "model.jaffle.customers",
        "model.jaffle.stg_orders",
    }  # comma: intersection; list items / spaces: union
    g = read(ARTIFACTS / "1.10", select="customers")
    assert g.partial
    # the datasets it touches: its output and inputs, and nothing else
    assert {d.id for d in g.datasets} == {
        "jaffle.main_marts.customers",
        "jaffle.main_marts.fct_orders",
        "jaffle.main.stg_customers",
    }


def test_bad_selections_are_input_errors():
    with pytest.raises(InputError, match="names no model"):
        read(ARTIFACTS / "1.10", select="no_such_model")
    with pytest.raises(InputError, match="not supported"):
        read(ARTIFACTS / "1.10", select="state:modified")


def test_run_results_keep_only_what_ran(tmp_path):
    run = json.loads((ARTIFACTS / "1.10" / "run_results.json").read_text())
    keep = {"model.jaffle.stg_orders", "model.jaffle.orders"}
    run["results"] = [
        r for r in run["results"] if r["unique_id"] in keep or r["unique_id"].startswith("test.")
    ]
    for r in run["results"]:
        if r["unique_id"] == "model.jaffle.stg_orders":
            r["status"] = "error"  # failed: its relation was not rebuilt
    path = tmp_path / "run_results.json"
    path.write_text(json.dumps(run))
    g = read(ARTIFACTS / "1.10", run_results=str(path))
    assert [p.id for p in g.processes] == ["model.jaffle.orders"]
    assert g.partial


@pytest.mark.parametrize("where", ["folder", "manifest"])
def test_auto_detection_by_folder_or_manifest(where):
    path = ARTIFACTS / "1.10"
    target = path if where == "folder" else path / "manifest.json"
    assert registry.detect(str(target)).name == "dbt"


def _copy(tmp_path: Path) -> Path:
    for name in ("manifest.json", "catalog.json", "run_results.json"):
        shutil.copy(ARTIFACTS / "1.10" / name, tmp_path / name)
    return tmp_path


def test_truncated_manifest_names_the_file_and_place(tmp_path):
    target = _copy(tmp_path)
    text = (target / "manifest.json").read_text()
    (target / "manifest.json").write_text(text[: len(text) // 2])
    with pytest.raises(InputError) as err:
        read(target)
    assert str(target / "manifest.json") in str(err.value) and "invalid JSON" in str(err.value)
    assert err.value.line is not None


def test_truncated_catalog_names_the_catalog(tmp_path):
    target = _copy(tmp_path)
    (target / "catalog.json").write_text((target / "catalog.json").read_text()[:100])
    with pytest.raises(InputError) as err:
        read(target)
    assert err.value.file == str(target / "catalog.json")


@pytest.mark.parametrize("version", ["v3", "v13"])
def test_unknown_manifest_version_is_refused(tmp_path, version):
    target = _copy(tmp_path)
    doc = json.loads((target / "manifest.json").read_text())
    doc["metadata"]["dbt_schema_version"] = f"https://schemas.getdbt.com/dbt/manifest/{version}.json"
    (target / "manifest.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=f"schema {version} .* not one this reader knows") as err:
        read(target)
    assert err.value.file == str(target / "manifest.json")


def test_catalog_of_another_project_is_refused(tmp_path):
    target = _copy(tmp_path)
    cat = json.loads((target / "catalog.json").read_text())
    for key in ("nodes", "sources"):
        cat[key] = {k.replace(".jaffle.", ".other_shop."): v for k, v in cat[key].items()}
    (target / "catalog.json").write_text(json.dumps(cat))
    with pytest.raises(InputError, match="another project than jaffle") as err:
        read(target)
    assert err.value.file == str(target / "catalog.json")


def test_a_catalog_given_as_manifest_is_refused(tmp_path):
    with pytest.raises(InputError, match="catalog artifact, not a manifest"):
        read(ARTIFACTS / "1.10" / "catalog.json")


def test_dbt_1_0_to_1_2_manifests_use_compiled_sql(tmp_path):
    # Manifest v4-v6 (dbt 1.0-1.2) name the compiled query compiled_sql; same lineage.
    doc = manifest("1.5")
    doc["metadata"]["dbt_schema_version"] = "https://schemas.getdbt.com/dbt/manifest/v4.json"
    for node in doc["nodes"].values():
        if "compiled_code" in node:
            node["compiled_sql"] = node.pop("compiled_code")
            node["raw_sql"] = node.pop("raw_code")
    (tmp_path / "manifest.json").write_text(json.dumps(doc))
    shutil.copy(ARTIFACTS / "1.5" / "catalog.json", tmp_path / "catalog.json")
    assert edges(read(tmp_path)) == expected_columns()


def test_sql_that_cannot_be_parsed_keeps_table_lineage_with_a_warning(tmp_path):
    target = _copy(tmp_path)
    doc = json.loads((target / "manifest.json").read_text())
    doc["nodes"]["model.jaffle.customers"]["compiled_code"] = "select from from where ("
    (target / "manifest.json").write_text(json.dumps(doc))
    g = read(target)
    p = g.process("model.jaffle.customers")
    assert p is not None and set(p.inputs) == {"jaffle.main_marts.fct_orders", "jaffle.main.stg_customers"}
    assert not any(e.process == p.id for e in g.edges)
    assert [x.code for x in g.problems] == ["dbt-sql"] and not g.has_errors
    assert "model.jaffle.customers" in g.problems[0].message
