"""Spark plans published end to end (issue 6, End to end): the seed with the pico profile, and every
shared fixture with the lineage profile, read back through Atlas's lineage API."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client

DATA = Path(__file__).resolve().parents[1] / "data"
SEED_PLAN = DATA / "spark" / "spark-plan-to-atlas.logical.txt"
SPARK = DATA / "spark" / "fixtures"


@pytest.fixture()
def client():
    return embedded_client(emulator=Emulator(None))


def _qn(h: dict) -> str:
    return (h.get("attributes") or {}).get("qualifiedName", "")


def test_seed_plan_publishes_the_seeds_entity_set_with_pico(client):
    pub = Publisher(client, profile="pico", domain="picoDomain")
    graph = pub.read("spark-plan", [str(SEED_PLAN)])
    result = pub.sync(graph)
    # By hand from the seed: 7 operators (Project, Project, Filter, Union, Relation, Project,
    # LocalRelation); one dataset per parent/child pair (6) plus the base input and output.
    assert result.plan.counts["create"] == 15
    names = {i.qualified_name for i in result.plan.items}
    for qn in (
        "pico_spark_data_input@picoDomain",
        "pico_spark_data_output@picoDomain",
        "pico_spark_data_1_0-2_0@picoDomain",
        "pico_spark_data_2_0-3_0@picoDomain",
        "pico_spark_data_3_0-4_0@picoDomain",
        "pico_project_1_0@picoDomain",
        "pico_filter_3_0@picoDomain",
        "pico_union_4_0@picoDomain",
    ):
        assert qn in names


def test_seed_lineage_walks_from_output_back_to_input_through_every_operator(client):
    pub = Publisher(client, profile="pico", domain="picoDomain")
    pub.sync(pub.read("spark-plan", [str(SEED_PLAN)]))
    info = client.lineage_by_unique(
        "pico_spark_data_type", "pico_spark_data_output@picoDomain", direction="INPUT", depth=0
    )
    seen = {_qn(h) for h in info["guidEntityMap"].values()}
    procs = {q for q in seen if q.startswith("pico_") and not q.startswith("pico_spark_data_")}
    assert len(procs) == 7
    assert "pico_spark_data_input@picoDomain" in seen


def test_seed_second_run_writes_nothing_and_an_edited_filter_updates_one_process(client, tmp_path):
    pub = Publisher(client, profile="pico", domain="picoDomain")
    pub.sync(pub.read("spark-plan", [str(SEED_PLAN)]))
    assert not pub.plan(pub.read("spark-plan", [str(SEED_PLAN)])).has_changes
    edited = tmp_path / "edited.logical.txt"
    edited.write_text(SEED_PLAN.read_text().replace("(manufacturer#18 = Audi)", "(manufacturer#18 = BMW)"))
    plan = pub.plan(pub.read("spark-plan", [str(edited)]), job=pub.read("spark-plan", [str(SEED_PLAN)]).job)
    changed = [(i.action, i.qualified_name) for i in plan.items if i.action != "unchanged"]
    assert changed == [("update", "pico_filter_3_0@picoDomain")]
    assert {c.attribute for i in plan.items for c in i.changes} <= {"condition", "planText"}


FIXTURES = sorted(p.name for p in SPARK.iterdir() if (p / "analyzed.txt").exists())


@pytest.mark.parametrize("case", FIXTURES)
def test_every_shared_fixture_syncs_with_the_lineage_profile_and_converges(client, case):
    folder = SPARK / case
    pub = Publisher(client, profile="lineage", domain="spark")
    graph = pub.read("spark-plan", [str(folder / "analyzed.txt")], explain=str(folder / "explain.txt"))
    result = pub.sync(graph)
    assert result.plan.counts["create"] > 0
    again = pub.plan(
        pub.read("spark-plan", [str(folder / "analyzed.txt")], explain=str(folder / "explain.txt"))
    )
    assert not again.has_changes
    # every written dataset's lineage reaches back to a source through the job's process
    doc = graph.to_document()
    for target in doc["tables"]["write"]:
        info = client.lineage_by_unique("lineage_dataset", f"{target}@spark", direction="INPUT", depth=0)
        seen = {_qn(h) for h in info["guidEntityMap"].values()}
        assert any(f"{src}@spark" in seen for src in doc["tables"]["read"]), (case, target, seen)


def test_inner_join_column_lineage_is_visible_in_atlas(client):
    """expected.md of inner_join_parquet: customer_name <- customers.name (IDENTITY); JOIN on both customer_id."""
    folder = SPARK / "inner_join_parquet"
    pub = Publisher(client, profile="lineage", domain="spark")
    graph = pub.read("spark-plan", [str(folder / "analyzed.txt")], explain=str(folder / "explain.txt"))
    pub.sync(graph)
    heads = list(
        client.search_basic(
            "lineage_column_lineage",
            entity_filters={
                "attributeName": "qualifiedName",
                "operator": "endsWith",
                "attributeValue": "@spark",
            },
            attributes=["qualifiedName", "dependencyType"],
        )
    )
    by_name = {_qn(h): h for h in heads}
    name_cl = next(q for q in by_name if q.endswith(".customer_name@spark"))
    ent = client.get_entity_by_unique("lineage_column_lineage", name_cl)
    assert ent["attributes"]["dependencyType"] == "IDENTITY"
    info = client.lineage(ent["guid"], direction="INPUT", depth=1)
    srcs = {_qn(h) for h in info["guidEntityMap"].values()}
    assert "file:/tmp/sparkdata/customers.parquet.name@spark" in srcs
    join = next(q for q in by_name if q.endswith(":JOIN@spark"))
    jent = client.get_entity_by_unique("lineage_column_lineage", join)
    jin = {_qn(h) for h in client.lineage(jent["guid"], direction="INPUT", depth=1)["guidEntityMap"].values()}
    assert {
        "file:/tmp/sparkdata/orders.parquet.customer_id@spark",
        "file:/tmp/sparkdata/customers.parquet.customer_id@spark",
    } <= jin
