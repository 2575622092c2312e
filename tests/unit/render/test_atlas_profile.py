"""The `atlas` profile: real readers' lineage rendered onto Atlas's own types, named as Atlas's hooks name
them (expected names written from the hook sources cited in docs/existing-atlas.md, not from the code)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.lineage.registry import read
from atlas_sync.render import load_profile
from atlas_sync.render.native import Namespaces, label_for, ownership_labels
from atlas_sync.render.renderer import DesiredState, RenderError, render
from atlas_sync.resources import builtin_dir, builtin_profiles

DATA = Path(__file__).resolve().parents[2] / "data"
NS = Namespaces("cm", {"postgres://*": "pg_prod", "kafka://broker:9092": "kafka_cm"})


def _render(reader: str, path: Path, *, job: str | None = None, **opts: Any) -> DesiredState:
    graph = read(reader, [str(path)], **opts)
    return render(graph, load_profile("atlas"), domain="prod", job=job or graph.job or "job", namespaces=NS)


def _names(state: DesiredState, type_name: str) -> set[str]:
    return {qn for t, qn in state.entities if t == type_name}


def _one(state: DesiredState, type_name: str, qn: str) -> Any:
    return state.entities[(type_name, qn)]


def test_atlas_is_a_builtin_profile_that_registers_only_the_bi_types() -> None:
    assert "atlas" in builtin_profiles()
    profile = load_profile("atlas")
    # Atlas has no BI model: the BI types are the only ones it registers (typedefs/bi)
    assert profile.typedef_sources == ["bi"]
    assert {"hive_table", "hive_column", "hive_db", "hdfs_path", "kafka_topic", "spark_process"} <= set(
        profile.entity_types()
    )
    assert {"bi_dataset", "bi_chart", "bi_dashboard", "bi_dataset_column", "bi_chart_column"} <= set(
        profile.entity_types()
    )


def test_spark_insert_into_catalog_tables_renders_hive_tables_and_a_spark_process() -> None:
    state = _render("spark-plan", DATA / "spark/fixtures/insert_into_cte/analyzed.txt")
    # spark_catalog.default.tab1 -> the Hive hook's `db.table@<ns>` (HiveMetaStoreBridge.getTableQualifiedName)
    assert _names(state, "hive_table") == {"default.tab1@cm", "default.tabb2@cm", "default.tab3@cm"}
    assert _names(state, "hive_db") == {"default@cm"}
    db = _one(state, "hive_db", "default@cm")
    assert db.attributes["clusterName"] == "cm"
    table = _one(state, "hive_table", "default.tab3@cm")
    assert table.refs["db"] == ("hive_db", "default@cm")
    assert "default.tab3.id@cm" in _names(state, "hive_column")
    assert _one(state, "hive_column", "default.tab3.id@cm").refs["table"] == ("hive_table", "default.tab3@cm")
    [proc] = [e for e in state.entities.values() if e.type_name == "spark_process"]
    assert sorted(proc.refs["inputs"]) == [
        ("hive_table", "default.tab1@cm"),
        ("hive_table", "default.tabb2@cm"),
    ]
    assert proc.refs["outputs"] == [("hive_table", "default.tab3@cm")]
    assert proc.refs["application"] == ("spark_application", "insert_into_cte@cm")
    lineage = {e.qualified_name: e for e in state.entities.values() if e.type_name == "spark_column_lineage"}
    id_col = next(e for qn, e in lineage.items() if qn.endswith(":default.tab3.id"))
    assert id_col.refs["inputs"] == [("hive_column", "default.tab1.id@cm")]
    assert id_col.refs["outputs"] == [("hive_column", "default.tab3.id@cm")]
    assert id_col.refs["process"] == proc.key


def test_sql_statement_renders_hive_process_with_mandatory_attributes_and_hive_column_lineage(
    tmp_path: Path,
) -> None:
    sql = tmp_path / "agg.sql"
    sql.write_text(
        "INSERT INTO Sales.Orders_Agg SELECT Id, SUM(Amount) AS Total FROM Sales.Orders GROUP BY Id;\n",
        encoding="utf-8",
    )
    state = _render("sql", sql, dialect="hive")
    # lower case as the Hive hook writes (AtlasHiveHookContext.getQualifiedName(Table))
    assert _names(state, "hive_table") == {"sales.orders_agg@cm", "sales.orders@cm"}
    assert "sales.orders_agg.total@cm" in _names(state, "hive_column")
    [proc] = [e for e in state.entities.values() if e.type_name == "hive_process"]
    # the SQL reader's stable statement name `<job>:<target>:<digest>` (docs/sql-reader.md), then `@<ns>`
    assert proc.qualified_name.startswith("agg:sales.orders_agg:") and proc.qualified_name.endswith("@cm")
    for attr in ("startTime", "endTime", "userName", "operationType", "queryText", "queryPlan", "queryId"):
        assert attr in proc.attributes, attr
    assert "sum(amount)" in proc.attributes["queryText"].lower()
    total = _one(state, "hive_column_lineage", f"{proc.qualified_name}:sales.orders_agg.total")
    assert total.attributes["depenendencyType"] == "EXPRESSION"  # Atlas's spelling (BaseHiveEvent)
    assert total.refs["inputs"] == [("hive_column", "sales.orders.amount@cm")]
    assert total.refs["query"] == proc.key


def _ol_event(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], producer: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-30T06:00:00Z",
        "producer": producer,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0193f5d2-7c1e-7b7a-9c55-3c7f1e2a9b99"},
        "job": {"namespace": "etl", "name": "copy_job"},
        "inputs": inputs,
        "outputs": outputs,
    }


def test_paths_topics_and_jdbc_tables_follow_the_hooks_naming(tmp_path: Path) -> None:
    event = _ol_event(
        [
            {"namespace": "hdfs://nn:8020", "name": "/data/Raw"},
            {"namespace": "s3a://My-Bucket", "name": "landing/Orders"},
            {"namespace": "kafka://broker:9092", "name": "Orders"},
            {"namespace": "postgres://db.example.com:5432", "name": "Shop.Sales.Orders"},
        ],
        [{"namespace": "file", "name": "/tmp/Out"}],
        "https://github.com/OpenLineage/OpenLineage/tree/1.25.0/integration/airflow",
    )
    path = tmp_path / "ev.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    state = _render("openlineage", path)
    # AtlasPathExtractorUtil.addHDFSPathEntity: `<path>@<ns>`, path kept as written
    assert _names(state, "hdfs_path") == {"hdfs://nn:8020/data/Raw@cm"}
    hdfs = _one(state, "hdfs_path", "hdfs://nn:8020/data/Raw@cm")
    assert hdfs.attributes["path"] == "hdfs://nn:8020/data/Raw"
    # addS3PathEntityV2: scheme and bucket lower case, directory `s3a://bucket/dir/@ns`, objectPrefix `/dir/`
    assert _names(state, "aws_s3_v2_directory") == {"s3a://my-bucket/landing/Orders/@cm"}
    s3 = _one(state, "aws_s3_v2_directory", "s3a://my-bucket/landing/Orders/@cm")
    assert s3.attributes["objectPrefix"] == "/landing/Orders/"
    assert s3.refs["container"] == ("aws_s3_v2_bucket", "s3a://my-bucket@cm")
    # KafkaBridge: `<topic lower case>@<ns>`; the per-source namespace map picks the Kafka cluster's namespace
    assert _names(state, "kafka_topic") == {"orders@kafka_cm"}
    assert _one(state, "kafka_topic", "orders@kafka_cm").attributes["topic"] == "Orders"
    assert _names(state, "rdbms_table") == {"shop.sales.orders@pg_prod"}
    # non-HDFS paths: lower case without a namespace (AtlasPathExtractorUtil.getQualifiedName)
    assert _names(state, "fs_path") == {"file:///tmp/out"}
    [proc] = [e for e in state.entities.values() if e.type_name == "Process"]  # not a Spark producer
    assert proc.qualified_name == "etl/copy_job@cm"


def test_openlineage_from_spark_renders_a_spark_process() -> None:
    state = _render(
        "openlineage", Path(__file__).resolve().parents[3] / "examples/openlineage/daily_revenue.ol.json"
    )
    assert len(_names(state, "spark_process")) == 1
    assert _names(state, "rdbms_table") == {
        "shop.sales.orders@pg_prod",
        "shop.sales.regions@pg_prod",
        "shop.mart.daily_revenue@pg_prod",
    }


def test_datasets_their_containers_and_columns_are_shared_processes_are_not() -> None:
    state = _render("spark-plan", DATA / "spark/fixtures/insert_into_cte/analyzed.txt")
    for e in state.entities.values():
        dataset_like = e.type_name in ("hive_table", "hive_db", "hive_column")
        assert e.shared is dataset_like, e.key
        assert e.labels == ownership_labels("prod", "insert_into_cte")


def test_ownership_labels_are_valid_atlas_labels() -> None:
    valid = re.compile(r"^[A-Za-z0-9_-]{1,50}$")  # EntityGraphMapper.validateLabels
    assert ownership_labels("prod", "daily_revenue") == [
        "atlas-sync",
        "atlas-sync-d_prod",
        "atlas-sync-j_daily_revenue",
    ]
    for name in ("spark-prod/daily revenue", "x" * 80, "ünïcode.job"):
        label = label_for("atlas-sync-j_", name)
        assert valid.match(label), label
    assert label_for("p_", "a/b") != label_for("p_", "a.b")  # sanitised names keep distinct labels


def test_namespaces_exact_source_wins_over_pattern() -> None:
    ns = Namespaces("cm", {"postgres://*": "pg", "postgres://db1:5432": "db1"})
    assert ns.lookup("postgres://db1:5432") == "db1"
    assert ns.lookup("postgres://other:5432") == "pg"
    assert ns.lookup("") == "cm"
    assert ns.lookup("mysql://x") == "cm"


def _user_profile(tmp_path: Path, edit: Any) -> Path:
    folder = tmp_path / "myatlas"
    shutil.copytree(builtin_dir("templates") / "atlas", folder)
    mapping = folder / "mapping.toml"
    mapping.write_text(edit(mapping.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


def test_a_user_can_extend_the_mapping_table(tmp_path: Path) -> None:
    extra = (
        "[[dataset]]\n"
        "when = \"dataset.kind == 'topic'\"\n"
        "type = \"'kafka_topic'\"\n"
        "qualified_name = \"'stream.' ~ dataset.name ~ '@' ~ ns\"\n"
        'name = "dataset.name"\n'
        '[dataset.attributes]\ntopic = "dataset.name"\nuri = "dataset.name"\n\n'
    )
    folder = _user_profile(tmp_path, lambda text: extra + text)
    event = _ol_event(
        [{"namespace": "kafka://b:9092", "name": "clicks"}], [{"namespace": "file", "name": "/o"}], "x"
    )
    path = tmp_path / "ev.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    graph = read("openlineage", [str(path)])
    state = render(graph, load_profile(folder), domain="prod", job="j", namespaces=NS)
    assert _names(state, "kafka_topic") == {"stream.clicks@cm"}


def test_a_mapping_missing_a_mandatory_attribute_is_a_render_error(tmp_path: Path) -> None:
    folder = _user_profile(tmp_path, lambda text: text.replace("type = \"column.type or 'unknown'\"\n", ""))
    graph = read("spark-plan", [str(DATA / "spark/fixtures/insert_into_cte/analyzed.txt")])
    with pytest.raises(RenderError, match="mandatory attribute 'type'"):
        render(graph, load_profile(folder), domain="prod", job="j", namespaces=NS)


def test_metadata_namespace_comes_from_env_and_the_per_source_map_from_the_config_file(
    tmp_path: Path,
) -> None:
    from atlas_sync.api import Publisher
    from atlas_sync.config import load_settings

    (tmp_path / "atlas-sync.toml").write_text(
        'domain = "prod"\nprofile = "atlas"\n[metadata_namespaces]\n"postgres://*" = "pg_prod"\n',
        encoding="utf-8",
    )
    settings = load_settings(env={"ATLAS_SYNC_METADATA_NAMESPACE": "cl1"}, cwd=tmp_path)
    assert settings.metadata_namespace == "cl1"
    assert settings.sources["metadata_namespace"] == "env ATLAS_SYNC_METADATA_NAMESPACE"
    pub = Publisher.from_settings(None, settings)
    example = Path(__file__).resolve().parents[3] / "examples"
    state = render(
        pub.read("sql", [str(example / "sql/etl.sql")], dialect="hive"), pub.profile, domain="prod", job="etl"
    )
    assert _names(state, "hive_table") == {"default.tab1@cl1", "default.tabb2@cl1", "default.tab3@cl1"}
    ol_graph = pub.read("openlineage", [str(example / "openlineage/daily_revenue.ol.json")])
    ol = render(ol_graph, pub.profile, domain="prod", job="j")
    assert "shop.sales.orders@pg_prod" in _names(ol, "rdbms_table")
    assert load_profile("atlas").namespaces is None  # the built-in profile object is not changed


# ------------------------------------------------------------------ what a real Atlas requires
def test_an_rdbms_table_is_rendered_in_its_rdbms_db_in_its_rdbms_instance() -> None:
    # Atlas 2.1.0 refuses an rdbms_table without db, an rdbms_db without instance (mandatory: the child
    # end of a COMPOSITION relationship), an rdbms_instance without rdbms_type
    state = _render("dbt", DATA / "dbt" / "artifacts" / "1.10")
    table = _one(state, "rdbms_table", "jaffle.main_marts.customers@cm")
    assert table.refs["db"] == ("rdbms_db", "jaffle.main_marts@cm")
    db = _one(state, "rdbms_db", "jaffle.main_marts@cm")
    assert db.attributes["name"] == "jaffle.main_marts"
    assert db.refs["instance"] == ("rdbms_instance", "duckdb@cm")
    instance = _one(state, "rdbms_instance", "duckdb@cm")
    assert instance.attributes["rdbms_type"] == "duckdb"
    assert table.shared and db.shared and instance.shared  # (a dataset's containers, as a hive_db)


def test_a_generic_process_gets_no_column_lineage_entity_which_atlas_would_refuse() -> None:
    # a hive_column_lineage needs its hive_process (`query`): there is none for a dbt model's Process
    state = _render("dbt", DATA / "dbt" / "artifacts" / "1.10")
    assert _names(state, "Process")  # the models' table-level lineage stays
    assert not _names(state, "hive_column_lineage")


def test_tableau_and_power_bi_steps_are_bi_processes_with_their_column_lineage() -> None:
    for reader, path, cmap in (
        ("tableau", DATA / "tableau" / "shop.twb", {"warehouse.example.com/jaffle": "jaffle"}),
        ("powerbi", DATA / "powerbi" / "shop", {"warehouse.example.com/jaffle": "jaffle"}),
    ):
        state = _render(reader, path, connection_map=cmap)
        assert _names(state, "bi_process"), reader
        assert not _names(state, "Process"), reader
        lineage = [e for e in state.entities.values() if e.type_name == "bi_column_lineage"]
        assert lineage and all(e.refs["process"][0] == "bi_process" for e in lineage), reader


def test_the_child_end_of_a_composition_is_mandatory_in_the_profiles_schema() -> None:
    schema = load_profile("atlas").schema
    # what Atlas 2.1.0 answers for these types (GET /v2/types/entitydef: relationshipAttributeDefs
    # with isOptional false)
    assert schema.mandatory_relationship_names("rdbms_table") == {"db": "rdbms_db_tables"}
    assert schema.mandatory_relationship_names("rdbms_db") == {"instance": "rdbms_instance_databases"}
    assert schema.mandatory_relationship_names("hive_column_lineage") == {
        "query": "hive_process_column_lineage"
    }
    assert schema.mandatory_relationship_names("bi_column_lineage") == {
        "process": "bi_process_column_lineages"
    }
    assert schema.mandatory_relationship_names("hive_table") == {}
    assert schema.mandatory_relationship_names("spark_column_lineage") == {}


def test_a_mapping_that_leaves_out_a_mandatory_container_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "atlas-nodb"
    shutil.copytree(builtin_dir("templates") / "atlas", folder)
    mapping = folder / "mapping.toml"
    text = mapping.read_text(encoding="utf-8")
    start = text.index("[dataset.container]\ntype = \"'rdbms_db'\"")
    end = text.index("[dataset.column]\ntype = \"'rdbms_column'\"")
    mapping.write_text(text[:start] + text[end:], encoding="utf-8")
    graph = read("dbt", [str(DATA / "dbt" / "artifacts" / "1.10")])
    with pytest.raises(RenderError) as exc:
        render(graph, load_profile(str(folder)), domain="prod", job="dbt", namespaces=NS)
    assert "rdbms_table needs 'db' (the child end of the COMPOSITION relationship rdbms_db_tables" in str(
        exc.value
    )
