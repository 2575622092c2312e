"""The lineage model and its JSON document (design doc: 'The lineage model')."""

import json
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import (
    ColumnEdge,
    ColumnRef,
    Dataset,
    LineageGraph,
    Problem,
    Process,
    dotted,
    split_dotted,
)

MINIMAL = {
    "datasets": [
        {
            "id": "raw.orders",
            "namespace": "raw",
            "name": "orders",
            "kind": "table",
            "columns": ["id", "amount"],
        },
        {"id": "mart.revenue", "namespace": "mart", "name": "revenue", "kind": "table", "columns": ["total"]},
    ],
    "processes": [
        {
            "id": "daily_revenue",
            "name": "daily revenue",
            "kind": "job",
            "inputs": ["raw.orders"],
            "outputs": ["mart.revenue"],
        }
    ],
    "columns": [
        {
            "source": "raw.orders.amount",
            "target": "mart.revenue.total",
            "kind": "AGGREGATION",
            "process": "daily_revenue",
        }
    ],
}


def test_minimal_document_from_design_doc_is_accepted():
    g = LineageGraph.from_document(MINIMAL)
    assert [d.id for d in g.datasets] == ["raw.orders", "mart.revenue"]
    assert g.datasets[0].column_names() == ["id", "amount"]
    assert g.edges[0].source == ColumnRef(dataset="raw.orders", column="amount")
    assert g.edges[0].kind == "AGGREGATION"


def test_document_round_trips():
    g = LineageGraph.from_document(MINIMAL)
    doc = g.to_document()
    assert doc["tables"] == {"read": ["raw.orders"], "write": ["mart.revenue"]}
    assert doc["columns"] == [
        {"source": "raw.orders.amount", "target": "mart.revenue.total", "kind": "AGGREGATION"}
    ]
    assert LineageGraph.from_document(doc) == g


def test_intermediate_tables_are_collapsed_end_to_end():
    doc = {
        "datasets": [
            {"id": "a", "name": "a", "columns": ["x"]},
            {"id": "b", "name": "b", "columns": ["y"]},
            {"id": "c", "name": "c", "columns": ["z"]},
        ],
        "processes": [
            {"id": "s1", "name": "s1", "inputs": ["a"], "outputs": ["b"]},
            {"id": "s2", "name": "s2", "inputs": ["b"], "outputs": ["c"]},
        ],
        "edges": [
            {"source": "a.x", "target": "b.y", "kind": "IDENTITY"},
            {"source": "b.y", "target": "c.z", "kind": "AGGREGATION"},
            {"source": "a.x", "target": "b.*", "kind": "FILTER"},
        ],
    }
    g = LineageGraph.from_document(doc)
    out = g.to_document()
    assert out["tables"] == {"read": ["a"], "write": ["c"]}
    kinds = {(c["source"], c["target"], c["kind"]) for c in out["columns"]}
    assert ("a.x", "c.z", "AGGREGATION") in kinds
    # b's row filter decides which rows reach c at all: it applies to the whole of c
    assert ("a.x", "c.*", "FILTER") in kinds
    assert not any(k == "FILTER" and t != "c.*" for _, t, k in kinds)


def test_dangling_reference_is_an_input_error():
    bad = {"datasets": [], "processes": [{"id": "p", "name": "p", "inputs": ["nope"]}]}
    with pytest.raises(InputError, match="unknown dataset 'nope'"):
        LineageGraph.from_document(bad, file="x.json")


def test_unknown_kind_names_json_path():
    bad = dict(
        MINIMAL, columns=[{"source": "raw.orders.id", "target": "mart.revenue.total", "kind": "MAGIC"}]
    )
    with pytest.raises(InputError) as exc:
        LineageGraph.from_document(bad, file="x.json")
    assert "$.columns[0]" in str(exc.value)


@pytest.mark.parametrize("parts", [["db", "t", "c"], ["db", 'we"ird', "a.b"], ["x y", "@z"]])
def test_dotted_names_quote_and_split_back(parts):
    assert split_dotted(dotted(*parts)) == parts


def test_a_table_read_before_it_is_written_is_a_source_not_an_intermediate():
    # INSERT INTO report SELECT a FROM daily; INSERT INTO daily SELECT a FROM raw;
    doc = {
        "datasets": [{"id": i, "name": i, "columns": ["a"]} for i in ("raw", "daily", "report")],
        "processes": [
            {"id": "s1", "name": "s1", "inputs": ["daily"], "outputs": ["report"]},
            {"id": "s2", "name": "s2", "inputs": ["raw"], "outputs": ["daily"]},
        ],
        "edges": [
            {"source": "daily.a", "target": "report.a", "kind": "IDENTITY", "process": "s1"},
            {"source": "raw.a", "target": "daily.a", "kind": "IDENTITY", "process": "s2"},
        ],
    }
    out = LineageGraph.from_document(doc).to_document()
    assert sorted(out["tables"]["read"]) == ["daily", "raw"]
    assert sorted(out["tables"]["write"]) == ["daily", "report"]
    pairs = {(c["source"], c["target"]) for c in out["columns"]}
    assert pairs == {("daily.a", "report.a"), ("raw.a", "daily.a")}


def test_a_table_written_then_read_later_is_walked_through():
    doc = {
        "datasets": [{"id": i, "name": i, "columns": ["a"]} for i in ("raw", "daily", "report")],
        "processes": [
            {"id": "s1", "name": "s1", "inputs": ["raw"], "outputs": ["daily"]},
            {"id": "s2", "name": "s2", "inputs": ["daily"], "outputs": ["report"]},
        ],
        "edges": [
            {"source": "raw.a", "target": "daily.a", "kind": "IDENTITY", "process": "s1"},
            {"source": "daily.a", "target": "report.a", "kind": "TRANSFORMATION", "process": "s2"},
        ],
    }
    out = LineageGraph.from_document(doc).to_document()
    assert out["tables"] == {"read": ["raw"], "write": ["report"]}
    assert [(c["source"], c["target"], c["kind"]) for c in out["columns"]] == [
        ("raw.a", "report.a", "TRANSFORMATION")
    ]


# ----------------------------------------------------------------- process identity (issue 39)
def _named(job: str | None, from_name: bool, process_jobs: bool = False) -> LineageGraph:
    return LineageGraph(job=job, job_from_name=from_name, process_jobs=process_jobs)


def test_a_process_named_after_a_job_that_is_only_the_file_name_is_named_after_the_syncs_job() -> None:
    from atlas_sync.lineage.model import process_local_name

    g = _named("v1", True)
    assert process_local_name("v1:m.t:aa9e9456", g, "j") == "j:m.t:aa9e9456"
    assert process_local_name("v1", g, "j") == "j"  # a Spark plan: the process is the job
    assert process_local_name("other", g, "j") == "j:other"
    assert process_local_name("v1x:m.t", g, "j") == "j:v1x:m.t"  # only the whole job name is replaced
    # without --job the file's name is the job, as before
    assert process_local_name("v1:m.t:aa9e9456", g, "v1") == "v1:m.t:aa9e9456"


def test_a_job_the_input_names_stays_in_the_process_name_under_another_job() -> None:
    from atlas_sync.lineage.model import process_local_name

    g = _named("loader", False)  # a SeaTunnel env job.name, a dbt project, a --job given to the reader
    assert process_local_name("loader:dw.t", g, "nightly") == "nightly:loader:dw.t"
    assert process_local_name("loader:dw.t", g, "loader") == "loader:dw.t"


def test_an_openlineage_job_is_named_by_its_namespace_and_name_under_every_job() -> None:
    from atlas_sync.lineage.model import process_local_name

    g = _named(None, False, process_jobs=True)
    for job in ("a/goodjob", "default", "nightly"):
        assert process_local_name("a/goodjob", g, job) == "a/goodjob"


def test_a_spark_dataset_named_after_the_file_name_is_named_after_the_syncs_job() -> None:
    from atlas_sync.lineage.model import dataset_id_under, dataset_named_under

    g = _named("cars", True)
    d = Dataset(id="unknown:cars/source", namespace="unknown", name="cars/source")
    assert dataset_named_under(d, g, "j") == ("unknown:j/source", "j/source")
    assert dataset_id_under("result:cars/result", g, "j") == "result:j/result"
    assert dataset_id_under("db.cars", g, "j") == "db.cars"
    assert dataset_id_under("s3://cars/x", g, "j") == "s3://cars/x"
    assert dataset_id_under("result:cars/result", _named("cars", False), "j") == "result:cars/result"


def test_splitting_process_jobs_gives_each_job_its_datasets_and_edges() -> None:
    from atlas_sync.lineage.model import split_process_jobs

    g = LineageGraph(
        datasets=[Dataset(id=i, name=i, columns=["c"]) for i in ("s", "t", "u", "lonely")],
        processes=[
            Process(id="a/x", name="x", inputs=["s"], outputs=["t"]),
            Process(id="a/y", name="y", inputs=["s"], outputs=["u"]),
        ],
        edges=[
            ColumnEdge(
                source=ColumnRef(dataset="s", column="c"),
                target=ColumnRef(dataset="u", column="c"),
                kind="IDENTITY",
                process="a/y",
            ),
        ],
        problems=[Problem(message="m")],
        process_jobs=True,
    )
    x, y = split_process_jobs(g)
    assert (x.job, [d.id for d in x.datasets], x.edges) == ("a/x", ["s", "t", "lonely"], [])
    assert (y.job, [d.id for d in y.datasets], len(y.edges)) == ("a/y", ["s", "u"], 1)
    assert x.problems == g.problems and not y.problems
    assert x.process_jobs and y.process_jobs


def test_the_document_keeps_what_names_the_processes(tmp_path: Path) -> None:
    from atlas_sync.lineage import registry

    g = LineageGraph(job="v1", job_from_name=True, process_jobs=True)
    doc = g.to_document()
    assert doc["job_from_name"] is True and doc["process_jobs"] is True
    back = LineageGraph.from_document(doc)
    assert back.job_from_name and back.process_jobs
    assert "job_from_name" not in LineageGraph(job="v1").to_document()  # false: left out
    with pytest.raises(InputError, match="'job_from_name' must be true or false"):
        LineageGraph.from_document({"job_from_name": "yes"})
    # the graph reader, whole and in chunks
    path = tmp_path / "d.lineage.json"
    path.write_text(json.dumps(MINIMAL | {"job": "v1", "job_from_name": True}), encoding="utf-8")
    for options in ({}, {"chunk_processes": 1}):
        [read] = list(registry.read_chunks("graph", [str(path)], **options))
        assert (read.job, read.job_from_name, read.process_jobs) == ("v1", True, False)
