"""Multi-statement scripts (end-to-end tables/columns, statement documents) and bad SQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.readers.sql import READER
from atlas_sync.lineage.sql.dialects import resolve_dialect
from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import triples


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_script_end_to_end_collapses_a_temporary_view(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "daily.sql",
        "CREATE TEMPORARY VIEW cleaned AS SELECT id, amount FROM raw.orders WHERE amount > 0;\n"
        "INSERT INTO mart.revenue SELECT id, sum(amount) AS total FROM cleaned GROUP BY id;\n",
    )
    graph = READER.read([path], dialect="spark")
    doc = graph.to_document()
    assert doc["tables"] == {"read": ["raw.orders"], "write": ["mart.revenue"]}
    cols = {(c["source"], c["target"], c["kind"]) for c in doc["columns"]}
    assert ("raw.orders.amount", "mart.revenue.total", "AGGREGATION") in cols
    assert ("raw.orders.id", "mart.revenue.id", "IDENTITY") in cols
    assert [p.id.rsplit(":", 1)[0] for p in graph.processes] == ["daily:cleaned", "daily:mart.revenue"]
    assert graph.dataset("cleaned").kind == "intermediate"  # type: ignore[union-attr]
    assert [s["type"] for s in doc["statements"]] == ["CREATE VIEW", "INSERT"]
    assert doc["statements"][1]["tables"] == {"read": ["cleaned"], "write": ["mart.revenue"]}
    assert doc["statements"][1]["line"] == 2


def test_row_level_deps_of_an_intermediate_stay_row_level_end_to_end(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "daily.sql",
        "CREATE TEMPORARY VIEW cleaned AS SELECT id, amount FROM raw.orders WHERE amount > 0;\n"
        "INSERT INTO mart.revenue SELECT id, sum(amount) AS total FROM cleaned GROUP BY id;\n",
    )
    cols = {(c["source"], c["target"], c["kind"]) for c in READER.read([path]).to_document()["columns"]}
    # The view's WHERE filters the rows that reach mart.revenue: FILTER on the whole target, and
    # no FILTER pinned on single columns.
    assert ("raw.orders.amount", "mart.revenue.*", "FILTER") in cols
    assert not any(k == "FILTER" and not t.endswith(".*") for _, t, k in cols)


def test_table_created_earlier_in_the_script_expands_a_later_star() -> None:
    results = analyze_sql(
        "CREATE TABLE stage (a INT, b INT); INSERT INTO final SELECT * FROM stage;", dialect="postgres"
    )
    assert triples(results[1]) == {("stage.a", "final.a", "IDENTITY"), ("stage.b", "final.b", "IDENTITY")}


def test_use_sets_the_default_schema_for_the_statements_after_it() -> None:
    results = analyze_sql(
        "INSERT INTO a SELECT x FROM b; USE sales; INSERT INTO a SELECT x FROM b", dialect="hive"
    )
    assert triples(results[0]) == {("b.x", "a.x", "IDENTITY")}
    assert triples(results[2]) == {("sales.b.x", "sales.a.x", "IDENTITY")}


def test_a_bad_statement_is_an_error_problem_and_the_others_still_give_lineage(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mixed.sql",
        "INSERT INTO t1 SELECT a FROM s1;\nSELECT a FROM (SELECT b FROM;\nINSERT INTO t2 SELECT b FROM s2;\n",
    )
    graph = READER.read([path], dialect="spark")
    assert [p.id.rsplit(":", 1)[0] for p in graph.processes] == ["mixed:t1", "mixed:t2"]
    [err] = [p for p in graph.problems if p.severity == "error"]
    assert err.statement == 2 and err.line == 2 and err.column is not None
    assert err.file == path and err.code == "sql-parse"
    assert "SENTINEL" not in err.message and "Token" not in err.message


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO SELECT a FROM t",
        "INSERT INTO t SELECT FROM s",
        "SELECT a FROM",
        "CREATE TABLE t AS",
        "UPDATE SET a = 1",
        "MERGE INTO t USING ON t.id = s.id",
    ],
)
def test_broken_statements_are_rejected_not_misread(sql: str) -> None:
    [st] = analyze_sql(sql, dialect="spark")
    assert st.error
    assert st.writes == [] and st.edges == []
    assert [p["severity"] for p in st.problems] == ["error"]


def test_insert_without_target_names_the_reason() -> None:
    [st] = analyze_sql("INSERT INTO SELECT a FROM t", dialect="spark")
    assert "without a target table" in st.problems[0]["message"]


def test_when_every_statement_fails_reading_raises_an_input_error(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.sql", "\n\nSELEC a FRM t;\nINSERT INTO SELECT 1;")
    with pytest.raises(InputError) as info:
        READER.read([path], dialect="mysql")
    assert info.value.file == path
    assert info.value.statement == 1 and info.value.line == 3


def test_an_empty_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no SQL statement"):
        READER.read([write(tmp_path, "empty.sql", "  -- nothing here\n")])


def test_an_unterminated_string_fails_that_statement_only() -> None:
    results = analyze_sql("INSERT INTO t SELECT a FROM s;\nSELECT 'oops FROM x;\n", dialect="postgres")
    assert not results[0].error and triples(results[0])
    assert results[-1].error


def test_schema_file_expands_stars_and_bad_schema_files_name_the_file(tmp_path: Path) -> None:
    schema = write(tmp_path, "schema.json", json.dumps({"raw.src": ["a", "b"]}))
    sql = write(tmp_path, "s.sql", "INSERT INTO out SELECT * FROM raw.src")
    graph = READER.read([sql], dialect="spark", schema=schema)
    assert {(str(e.source), str(e.target)) for e in graph.edges} == {
        ("raw.src.a", "out.a"),
        ("raw.src.b", "out.b"),
    }
    bad = write(tmp_path, "bad.json", '{"raw.src": 3}')
    with pytest.raises(InputError) as info:
        READER.read([sql], schema=bad)
    assert info.value.file == bad


def test_reader_options_job_and_unknown_options_are_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "x.sql", "INSERT INTO t SELECT a FROM s")
    graph = READER.read([path], dialect="doris", job="nightly", something_else=True)
    assert graph.job == "nightly"
    assert [p.id.rsplit(":", 1)[0] for p in graph.processes] == ["nightly:t"]
    assert graph.processes[0].attributes["dialect"] == "mysql"


def test_two_files_name_their_processes_without_the_files_names(tmp_path: Path) -> None:
    a = write(tmp_path, "a.sql", "INSERT INTO t SELECT x FROM s")
    b = write(tmp_path, "b.sql", "INSERT INTO u SELECT x FROM t")
    graph = READER.read([a, b])
    assert [p.id.rsplit(":", 1)[0] for p in graph.processes] == ["a:t", "a:u"]
    assert graph.job == "a" and graph.job_from_name
    assert graph.to_document()["tables"] == {"read": ["s"], "write": ["u"]}


def test_the_same_statement_in_two_files_gets_two_processes(tmp_path: Path) -> None:
    a = write(tmp_path, "a.sql", "INSERT INTO t SELECT x FROM s")
    b = write(tmp_path, "b.sql", "insert into t select x from s -- again")
    ids = [p.id for p in READER.read([a, b]).processes]
    assert len(ids) == 2 and ids[1] == ids[0] + ":2"


def test_a_job_given_to_the_reader_is_not_taken_from_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, "x.sql", "INSERT INTO t SELECT a FROM s")
    assert not READER.read([path], job="nightly").job_from_name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("doris", "mysql"),
        ("Greenplum", "postgres"),
        ("AzureSQL", "tsql"),
        ("mssql", "tsql"),
        ("DeltaLake", "spark"),
        ("UnityCatalog", "databricks"),
        ("spark", "spark"),
        ("duckdb", "duckdb"),
        (None, ""),
    ],
)
def test_dialect_names_and_connection_types(name: str | None, expected: str) -> None:
    assert resolve_dialect(name) == expected


def test_unknown_dialect_is_an_input_error_with_a_hint() -> None:
    with pytest.raises(InputError) as info:
        resolve_dialect("cobol")
    assert info.value.hint and "spark" in info.value.hint


def test_parse_errors_speak_of_clauses_not_sqlglot_classes() -> None:
    [st] = analyze_sql("INSERT INTO t SELECT a FROM s WHERE", dialect="spark")
    message = st.problems[0]["message"]
    assert "WHERE" in message and "class" not in message and "sqlglot" not in message


def test_read_tables_list_their_schema_columns_in_order(tmp_path: Path) -> None:
    path = write(tmp_path, "s.sql", "INSERT INTO o SELECT b FROM raw.s")
    graph = READER.read([path], schema={"raw.s": ["a", "b", "c"]})
    assert graph.dataset("raw.s").column_names() == ["a", "b", "c"]  # type: ignore[union-attr]
    assert graph.dataset("o").column_names() == ["b"]  # type: ignore[union-attr]


def test_an_absurdly_long_identifier_is_rejected_without_echoing_it() -> None:
    [st] = analyze_sql("INSERT INTO t SELECT " + "x" * 100_000 + " FROM s", dialect="spark")
    assert st.error and st.writes == []
    assert len(st.problems[0]["message"]) < 200


def test_every_corpus_document_loads_back_with_the_graph_reader() -> None:
    import re

    from atlas_sync.lineage.model import LineageGraph

    corpus = Path(__file__).resolve().parents[3] / "bench" / "sql_corpus"
    for f in sorted(corpus.glob("*.sql")):
        m = re.search(r"--\s*dialect:\s*(\S+)", f.read_text(encoding="utf-8"))
        dialect = m.group(1) if m and not m.group(1).startswith("(") else None
        graph = READER.read([str(f)], dialect=dialect)
        assert graph.check() == [], f.name
        back = LineageGraph.from_document(graph.to_document())
        assert len(back.edges) == len(graph.edges), f.name


def test_a_default_catalog_qualifies_schema_qualified_targets_as_it_does_sources() -> None:
    (st,) = analyze_sql(
        "INSERT INTO sales.daily SELECT a FROM sales.orders", dialect="postgres", default_schema="shop.public"
    )
    assert [r.id for r in st.reads] == ["shop.sales.orders"]
    assert [w.id for w in st.writes] == ["shop.sales.daily"]


def test_a_temporary_table_stays_intermediate_under_a_default_schema() -> None:
    results = analyze_sql(
        "CREATE TEMP TABLE recent AS SELECT a FROM sales.orders; INSERT INTO mart.x SELECT a FROM recent",
        dialect="postgres",
        default_schema="shop.public",
    )
    assert [w.id for w in results[0].writes] == ["recent"]
    assert results[0].writes[0].kind == "intermediate"
    assert [r.id for r in results[1].reads] == ["recent"]
