"""The lineage model and its JSON document (design doc: 'The lineage model')."""

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import ColumnRef, LineageGraph, dotted, split_dotted

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
