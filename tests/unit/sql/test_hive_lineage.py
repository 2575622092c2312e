"""The hive-lineage reader on the seed's edges/vertices JSON and on hook log lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.readers.hive_lineage import READER

SEEDS = Path(__file__).parents[2] / "data" / "seeds"
SEED = str(SEEDS / "spark-sql-field-lineage.edges.json")


def edges(graph) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(str(e.source), str(e.target), e.kind) for e in graph.edges}


def test_seed_projection_edges_are_direct_and_predicates_indirect_on_the_whole_table() -> None:
    graph = READER.read([SEED])
    got = edges(graph)
    assert {e for e in got if e[2] in ("IDENTITY", "TRANSFORMATION", "AGGREGATION")} == {
        ("default.tab1.id", "default.tab3.id", "IDENTITY"),
        ("default.tab1.name", "default.tab3.name", "IDENTITY"),
        ("default.tabb2.name", "default.tab3.name", "IDENTITY"),
        ("default.tabb2.age", "default.tab3.age", "IDENTITY"),
    }
    # "INNER" names a join; the other two predicates are plain filters.
    assert {e for e in got if e[2] == "JOIN"} == {
        ("default.tab1.id", "default.tab3.*", "JOIN"),
        ("default.tabb2.id", "default.tab3.*", "JOIN"),
    }
    assert {e for e in got if e[2] == "FILTER"} == {
        ("default.tabb2.id", "default.tab3.*", "FILTER"),
        ("default.tabb2.age", "default.tab3.*", "FILTER"),
        ("default.tab1.id", "default.tab3.*", "FILTER"),
    }
    [proc] = graph.processes
    assert proc.inputs == ["default.tab1", "default.tabb2"] and proc.outputs == ["default.tab3"]
    tab3 = graph.dataset("default.tab3")
    assert tab3 is not None and tab3.namespace == "default" and tab3.column_names() == ["id", "name", "age"]


def _doc(query: str, edges_: list[dict], vertices: list[tuple[str, str]]) -> dict:
    return {
        "version": "1.0",
        "user": "etl",
        "queryText": query,
        "hash": f"h{len(query)}",
        "edges": edges_,
        "vertices": [{"id": i, "vertexType": t, "vertexId": v} for i, (t, v) in enumerate(vertices)],
    }


def test_one_document_per_line_gives_one_process_each_with_query_text(tmp_path: Path) -> None:
    d1 = _doc(
        "INSERT INTO db.t SELECT sum(x) FROM db.s",
        [{"sources": [1], "targets": [0], "expression": "sum(db.s.x)", "edgeType": "PROJECTION"}],
        [("COLUMN", "db.t.total"), ("COLUMN", "db.s.x")],
    )
    d2 = _doc(
        "INSERT INTO db.u SELECT upper(a) FROM db.t JOIN db.v ON t.k = v.k",
        [
            {"sources": [1], "targets": [0], "expression": "upper(db.t.a)", "edgeType": "PROJECTION"},
            {"sources": [2, 3], "targets": [0], "expression": "(db.t.k = db.v.k)", "edgeType": "PREDICATE"},
        ],
        [("COLUMN", "db.u.a"), ("COLUMN", "db.t.a"), ("COLUMN", "db.t.k"), ("COLUMN", "db.v.k")],
    )
    path = tmp_path / "hive.lineage.log"
    path.write_text(json.dumps(d1) + "\n\n" + json.dumps(d2) + "\n", encoding="utf-8")
    graph = READER.read([str(path)])
    assert len(graph.processes) == 2
    assert graph.processes[0].attributes["queryText"] == d1["queryText"]
    assert graph.processes[0].attributes["user"] == "etl"
    got = edges(graph)
    assert ("db.s.x", "db.t.total", "AGGREGATION") in got
    assert ("db.t.a", "db.u.a", "TRANSFORMATION") in got
    # Equality between columns of two tables reads as a join condition.
    assert ("db.t.k", "db.u.*", "JOIN") in got and ("db.v.k", "db.u.*", "JOIN") in got
    assert graph.to_document()["tables"] == {"read": ["db.s", "db.v"], "write": ["db.u"]}


def test_a_predicate_on_some_columns_is_aimed_at_those_columns(tmp_path: Path) -> None:
    d = _doc(
        "q",
        [
            {"sources": [2], "targets": [0], "edgeType": "PROJECTION"},
            {"sources": [3], "targets": [1], "edgeType": "PROJECTION"},
            {"sources": [3], "targets": [0], "expression": "(db.s.b > 1)", "edgeType": "PREDICATE"},
        ],
        [("COLUMN", "db.t.a"), ("COLUMN", "db.t.b"), ("COLUMN", "db.s.a"), ("COLUMN", "db.s.b")],
    )
    path = tmp_path / "one.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    assert ("db.s.b", "db.t.a", "FILTER") in edges(READER.read([str(path)]))


def test_bad_json_on_a_line_names_file_and_line(tmp_path: Path) -> None:
    good = json.dumps(_doc("q", [], [("TABLE", "db.t")]))
    path = tmp_path / "bad.log"
    path.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        READER.read([str(path)])
    assert info.value.file == str(path) and info.value.line == 2


def test_an_edge_to_an_unknown_vertex_is_an_input_error(tmp_path: Path) -> None:
    d = _doc("q", [{"sources": [7], "targets": [0], "edgeType": "PROJECTION"}], [("COLUMN", "db.t.a")])
    path = tmp_path / "x.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(InputError, match="unknown vertex 7") as info:
        READER.read([str(path)])
    assert info.value.path == "$[0].edges[0]"


def test_sniff_recognises_hive_lineage_json() -> None:
    assert READER.sniff("x.json", Path(SEED).read_bytes()[:4096])
    assert not READER.sniff("x.json", b'{"datasets": []}')


def test_sql_lineage_round_trips_through_hive_lineage_json(tmp_path: Path) -> None:
    from atlas_sync.lineage.readers.hive_lineage import to_hive_lineage
    from atlas_sync.lineage.readers.sql import READER as SQL

    graph = SQL.read([str(SEEDS / "spark-sql-field-lineage.sql")], dialect="spark", default_schema="default")
    [doc] = to_hive_lineage(graph)
    assert {e["edgeType"] for e in doc["edges"]} == {"PROJECTION", "PREDICATE"}
    path = tmp_path / "seed.hive-lineage.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    back = READER.read([str(path)])
    direct = {
        (str(e.source), str(e.target))
        for e in back.edges
        if e.kind in ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
    }
    assert direct == {(str(e.source), str(e.target)) for e in graph.edges if e.is_direct}
    # PREDICATE edges name every column of tab3, so they come back aimed at the whole table.
    assert {str(e.target) for e in back.edges if not e.is_direct} == {"default.tab3.*"}
    assert {str(e.source) for e in back.edges if not e.is_direct} == {
        str(e.source) for e in graph.edges if not e.is_direct
    }


def test_a_table_the_query_overwrites_from_itself_is_its_input_too(tmp_path: Path) -> None:
    doc = _doc(
        "INSERT OVERWRITE TABLE db.t SELECT DISTINCT t.id, s.name FROM db.t t JOIN db.s s ON t.id = s.id",
        [
            {"sources": [0], "targets": [0], "expression": None, "edgeType": "PROJECTION"},
            {"sources": [2], "targets": [1], "expression": None, "edgeType": "PROJECTION"},
            {"sources": [0, 3], "targets": [0, 1], "expression": "(t.id = s.id)", "edgeType": "PREDICATE"},
        ],
        [("COLUMN", "db.t.id"), ("COLUMN", "db.t.name"), ("COLUMN", "db.s.name"), ("COLUMN", "db.s.id")],
    )
    path = tmp_path / "lineage.log"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    graph = READER.read([str(path)])
    [proc] = graph.processes
    # every column edge's source is an input of its process (the model's invariant)
    assert proc.inputs == ["db.t", "db.s"] and proc.outputs == ["db.t"]
    assert ("db.t.id", "db.t.id", "IDENTITY") in edges(graph)
    assert graph.missing_edge_inputs() == []
