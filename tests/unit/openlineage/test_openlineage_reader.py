"""The ``openlineage`` reader: events -> datasets, one job process, column edges with kinds."""

import json
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

DATA = Path(__file__).parents[2] / "data" / "openlineage"
SPARK = str(DATA / "spark_complete.json")
PG = str(DATA / "postgres_runs.jsonl")


def read(*paths: str, **options):
    return registry.get("openlineage").read(list(paths), **options)


def edges(graph):
    return {(str(e.source), str(e.target), e.kind) for e in graph.edges}


def test_spark_event_names_the_hdfs_location_by_its_hive_table_symlink():
    g = read(SPARK)
    orders = g.dataset("raw.orders")
    assert orders is not None
    assert orders.kind == "table"
    assert (orders.namespace, orders.name) == ("raw", "orders")
    assert orders.facets["location"] == "hdfs://namenode:8020/warehouse/raw.db/orders"
    assert orders.column_names() == ["id", "region", "amount", "status"]
    assert {d.id for d in g.datasets} == {"raw.orders", "raw.regions", "mart.revenue"}


def test_one_job_process_with_event_type_run_id_and_sql():
    g = read(SPARK)
    assert len(g.processes) == 1
    p = g.processes[0]
    assert p.kind == "job"
    assert g.job == "spark-prod/daily_revenue.execute_insert_into_hive_table" == p.id
    assert p.attributes["eventType"] == "COMPLETE"
    assert p.attributes["runId"] == "0193f5d2-7c1e-7b7a-9c55-3c7f1e2a9b01"
    assert p.attributes["sql"].startswith("INSERT INTO mart.revenue")
    assert p.attributes["processingType"] == "BATCH"
    assert p.inputs == ["raw.orders", "raw.regions"]
    assert p.outputs == ["mart.revenue"]


def test_column_lineage_fields_and_dataset_list_map_to_dependency_kinds():
    g = read(SPARK)
    assert edges(g) == {
        ("raw.orders.region", "mart.revenue.region", "IDENTITY"),
        ("raw.orders.amount", "mart.revenue.total", "AGGREGATION"),
        ("raw.orders.region", "mart.revenue.*", "JOIN"),
        ("raw.orders.region", "mart.revenue.*", "GROUP_BY"),
        ("raw.regions.id", "mart.revenue.*", "JOIN"),
        ("raw.orders.status", "mart.revenue.*", "FILTER"),
    }
    agg = next(e for e in g.edges if e.kind == "AGGREGATION")
    assert agg.expression == "SUM(o.amount)"
    assert all(e.process == g.job for e in g.edges)
    assert g.check() == []


def test_document_summarises_tables_end_to_end():
    doc = read(SPARK).to_document()
    assert doc["tables"] == {"read": ["raw.orders", "raw.regions"], "write": ["mart.revenue"]}


def test_json_lines_merge_runs_of_a_job_into_one_process_with_latest_event_attributes():
    g = read(PG)
    assert [p.id for p in g.processes] == ["airflow/etl.load_customers"]
    p = g.processes[0]
    # The FAIL line comes last in the file but its eventTime (09:01) is before COMPLETE (09:05).
    assert p.attributes["eventType"] == "COMPLETE"
    assert p.attributes["runId"] == "11111111-1111-4111-8111-111111111111"
    assert p.inputs == ["crm.public.customers", "crm.public.customers_old"]


def test_event_types_option_keeps_only_those_events():
    g = read(PG, event_types=["COMPLETE"])
    assert g.processes[0].inputs == ["crm.public.customers"]
    assert g.dataset("crm.public.customers_old") is None
    assert any(p.code == "openlineage-skipped-events" for p in g.problems)
    assert read(PG, event_types="START").processes[0].attributes["eventType"] == "START"


def test_s3_output_becomes_a_file_and_old_transformation_type_maps_identity_and_masked():
    g = read(PG)
    out = g.dataset("s3://lake/bronze/customers/part-0.parquet")
    assert out is not None and out.kind == "file"
    assert out.column_names() == ["id", "email_hash"]
    assert edges(g) == {
        ("crm.public.customers.id", "s3://lake/bronze/customers/part-0.parquet.id", "IDENTITY"),
        (
            "crm.public.customers.email",
            "s3://lake/bronze/customers/part-0.parquet.email_hash",
            "TRANSFORMATION",
        ),
    }
    masked = next(e for e in g.edges if e.kind == "TRANSFORMATION")
    assert masked.expression == "sha256(email)"


def test_namespace_map_prefixes_table_names_with_metadata_namespace(tmp_path):
    g = read(PG, namespace_map={"postgres://pg1:*": "crm_prod"})
    assert g.dataset("crm_prod.crm.public.customers") is not None
    f = tmp_path / "ns.toml"
    f.write_text('[namespaces]\n"postgres://pg1:5432" = "pg1"\n"s3://lake" = "s3a://lake-prod"\n')
    g2 = read(PG, namespace_map=str(f))
    assert g2.dataset("pg1.crm.public.customers") is not None
    assert g2.dataset("s3a://lake-prod/bronze/customers/part-0.parquet") is not None


def test_prefer_symlinks_off_keeps_the_physical_location():
    g = read(SPARK, prefer_symlinks=False)
    assert g.dataset("hdfs://namenode:8020/warehouse/raw.db/orders") is not None
    assert g.dataset("raw.orders") is None
    # as the command line passes it (-o prefer_symlinks=false)
    assert read(SPARK, prefer_symlinks="false").dataset("raw.orders") is None


def test_array_of_events_for_two_jobs_gives_two_processes_each_a_job(tmp_path):
    ev = json.loads(Path(SPARK).read_text())
    other = json.loads(json.dumps(ev))
    other["job"]["name"] = "another_job"
    f = tmp_path / "events.json"
    f.write_text(json.dumps([ev, other]))
    g = read(str(f))
    assert sorted(p.name for p in g.processes) == [
        "another_job",
        "daily_revenue.execute_insert_into_hive_table",
    ]
    assert g.job is None
    # each job is a process named by its namespace and name; a sync publishes each under its own job
    assert g.process_jobs
    assert not g.problems


def test_unknown_subtype_is_recorded_with_a_problem(tmp_path):
    ev = json.loads(Path(SPARK).read_text())
    fields = ev["outputs"][0]["facets"]["columnLineage"]["fields"]
    fields["total"]["inputFields"][0]["transformations"][0]["subtype"] = "MAGIC"
    f = tmp_path / "e.json"
    f.write_text(json.dumps(ev))
    g = read(str(f))
    assert ("raw.orders.amount", "mart.revenue.total", "TRANSFORMATION") in edges(g)
    assert any("MAGIC" in p.message for p in g.problems)


def test_dataset_event_gives_a_dataset_without_process(tmp_path):
    f = tmp_path / "d.json"
    f.write_text(
        json.dumps(
            {
                "eventTime": "2026-11-30T09:00:00Z",
                "producer": "p",
                "schemaURL": "s",
                "dataset": {
                    "namespace": "hive://m:9083",
                    "name": "db.t",
                    "facets": {"schema": {"fields": [{"name": "a", "type": "int"}]}},
                },
            }
        )
    )
    g = read(str(f))
    assert g.processes == []
    assert g.dataset("db.t").column_names() == ["a"]


def test_nested_schema_fields_are_flattened_with_dots(tmp_path):
    ev = json.loads(Path(SPARK).read_text())
    ev["outputs"][0]["facets"]["schema"]["fields"].append(
        {"name": "meta", "type": "struct", "fields": [{"name": "src", "type": "string"}]}
    )
    f = tmp_path / "e.json"
    f.write_text(json.dumps(ev))
    assert read(str(f)).dataset("mart.revenue").column_names() == ["region", "total", "meta", "meta.src"]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"eventType": "COMPLETE", "run": {"runId": "r"}, "job": {"namespace": "n"}}', "$.job"),
        (
            '{"eventType": "DONE", "run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}}',
            "$.eventType",
        ),
        ('{"eventType": "COMPLETE", "run": {}, "job": {"namespace": "n", "name": "j"}}', "$.run"),
        ('[{"hello": 1}]', "$[0]"),
        (
            '{"run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}, "outputs": [{"namespace": "x"}]}',
            "$.outputs[0]",
        ),
    ],
)
def test_invalid_events_name_the_json_path(tmp_path, text, where):
    f = tmp_path / "bad.json"
    f.write_text(text)
    with pytest.raises(InputError) as exc:
        read(str(f))
    assert exc.value.path == where
    assert exc.value.file == str(f)


def test_bad_json_line_names_the_line(tmp_path):
    f = tmp_path / "bad.jsonl"
    good = Path(PG).read_text().splitlines()[0]
    f.write_text(good + "\n" + good + "\n{not json\n")
    with pytest.raises(InputError) as exc:
        read(str(f))
    assert exc.value.line == 3


def test_empty_file_is_an_input_error(tmp_path):
    f = tmp_path / "empty.json"
    f.write_text("  \n")
    with pytest.raises(InputError, match="empty"):
        read(str(f))


def test_sniff_recognises_events_and_not_other_json():
    r = registry.get("openlineage")
    assert r.sniff(SPARK, Path(SPARK).read_bytes()[:4096])
    assert r.sniff(PG, Path(PG).read_bytes()[:4096])
    assert not r.sniff("x.json", b'{"datasets": [], "processes": []}')
