"""Statements that are not valid SQL of the given dialect are errors naming the statement, never an
empty lineage; statements that are valid but move no data stay quiet."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlglot import exp

from atlas_sync.lineage.readers.sql import READER
from atlas_sync.lineage.sql.opaque import command_kind
from atlas_sync.lineage.sql.script import analyze_sql


def _error(sql: str, dialect: str) -> dict[str, object]:
    [st] = analyze_sql(sql, dialect=dialect)
    assert st.error and st.type == "ERROR", (st.type, st.problems)
    assert st.writes == [] and st.reads == [] and st.edges == []
    [problem] = st.problems
    assert problem["severity"] == "error"
    return problem


@pytest.mark.parametrize(
    ("dialect", "sql", "word"),
    [
        ("spark", "INSERT INTO t SELECT a.x FROM a JOIN b ON", "ON"),
        ("hive", "INSERT OVERWRITE TABLE t SELECT a.x FROM a LEFT JOIN b ON", "ON"),
        ("databricks", "CREATE TABLE t AS SELECT a.x FROM a JOIN b USING", "USING"),
        ("postgres", "UPDATE t SET v = s.v FROM s WHERE t.id = s.id AND", "AND"),
        ("mysql", "INSERT INTO t SELECT x FROM s ORDER BY", "ORDER BY"),
        ("snowflake", "MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v WHEN", "WHEN"),
        ("trino", "INSERT INTO t SELECT x FROM s UNION", "UNION"),
        ("tsql", "SELECT a.x INTO t FROM a JOIN b ON a.id = b.id OR", "OR"),
    ],
)
def test_a_statement_cut_short_is_an_error_naming_where_it_stops(dialect: str, sql: str, word: str) -> None:
    # sqlglot raises for most of these ("incomplete AND clause"); those it accepts (``JOIN b ON``
    # becomes ``ON TRUE``) are caught by their dangling last word.
    problem = _error(sql, dialect)
    assert problem["code"] == "sql-parse"
    assert word.split()[0] in str(problem["message"]) and "incomplete" in str(problem["message"])
    assert problem["line"] == 1


@pytest.mark.parametrize("dialect", ["spark", "hive", "postgres", "snowflake", "mysql", "bigquery"])
def test_a_join_without_its_condition_is_not_read_as_a_cross_join(dialect: str) -> None:
    sql = "INSERT INTO t SELECT a.x FROM a JOIN b ON"
    problem = _error(sql, dialect)
    assert problem["message"] == "cannot parse: the statement ends after 'ON' (it is incomplete)"
    assert problem["line"] == 1 and problem["column"] == len(sql)


@pytest.mark.parametrize(
    ("dialect", "sql", "between"),
    [
        ("spark", "INSERT INTO t SELECT a.x FROM a JOIN b ON WHERE a.y = 1", ("ON", "WHERE")),
        ("hive", "INSERT INTO t SELECT a.x FROM a JOIN b ON GROUP BY a.x", ("ON", "GROUP BY")),
        ("postgres", "INSERT INTO t SELECT x FROM s GROUP BY ORDER BY x", ("GROUP BY", "ORDER BY")),
        ("snowflake", "CREATE TABLE t AS SELECT a.x FROM a JOIN b ON JOIN c ON a.id = c.id", ("ON", "JOIN")),
    ],
)
def test_a_clause_left_empty_mid_statement_is_an_error(
    dialect: str, sql: str, between: tuple[str, str]
) -> None:
    problem = _error(sql, dialect)
    assert problem["code"] == "sql-parse"
    assert f"nothing between {between[0]!r} and {between[1]!r}" in str(problem["message"])


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("postgres", "INSERT INTO t SELECT a.x FROM a JOIN b ON a.id ="),
        ("spark", "INSERT INTO t SELECT x FROM s WHERE"),
        ("mysql", "UPDATE t SET x = WHERE y = 1"),
        ("postgres", "INSERT INTO t SELECT `x` FROM s"),  # backticks are MySQL/Hive/BigQuery quoting
        ("postgres", "SELECT TOP 10 x INTO t FROM s"),  # TOP is T-SQL
    ],
)
def test_sqlglot_parse_errors_stay_errors(dialect: str, sql: str) -> None:
    assert _error(sql, dialect)["code"] == "sql-parse"


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("mysql", "INSERT INTO t SELECT x, FROM s"),
        ("postgres", "INSERT INTO t (a, b) SELECT x,, y FROM s"),
        ("spark", "CREATE TABLE t AS SELECT coalesce(a,, b) AS c FROM s"),
    ],
)
def test_an_empty_list_item_is_an_error(dialect: str, sql: str) -> None:
    problem = _error(sql, dialect)
    assert "empty list item" in str(problem["message"])


@pytest.mark.parametrize("dialect", ["bigquery", "duckdb", "snowflake"])
def test_a_trailing_select_list_comma_is_fine_where_the_dialect_allows_it(dialect: str) -> None:
    [st] = analyze_sql("INSERT INTO t SELECT x, FROM s", dialect=dialect)
    assert not st.error and [w.id for w in st.writes] == ["t"]


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("postgres", "CREATE MATERIALIZED VIEW mv WITH (fillfactor = 70) AS SELECT a FROM s WHERE"),
        ("oracle", "CREATE TABLE t NOLOGGING PARALLEL 4 AS SELECT x FROM s WHERE"),
        ("oracle", "CREATE MATERIALIZED VIEW mv REFRESH FAST AS SELECT a FROM s JOIN"),
    ],
)
def test_data_moving_statements_sqlglot_keeps_opaque_are_errors(dialect: str, sql: str) -> None:
    problem = _error(sql, dialect)
    assert problem["code"] in ("sql-unsupported", "sql-parse")


def test_an_opaque_statement_error_names_the_statement_kind_and_the_dialect() -> None:
    problem = _error("CREATE TABLE t NOLOGGING PARALLEL 4 AS SELECT x FROM s WHERE", "oracle")
    assert problem["code"] == "sql-unsupported"
    assert "CREATE TABLE" in str(problem["message"]) and "oracle" in str(problem["message"])


def test_an_opaque_create_that_reduces_to_a_query_is_analysed() -> None:
    # sqlglot keeps Oracle's NOLOGGING/PARALLEL CTAS opaque; its core is an ordinary CTAS.
    [st] = analyze_sql("CREATE TABLE t NOLOGGING PARALLEL 4 AS SELECT x FROM s", dialect="oracle")
    assert st.type == "CREATE TABLE AS SELECT" and [r.id for r in st.reads] == ["s"]


def test_opaque_commands_of_lineage_statement_kinds_are_told_apart_from_others() -> None:
    cmd = exp.Command(this="INSERT", expression="INTO t SELECT x FROM s")
    assert command_kind(cmd, "postgres") == "INSERT"
    create = exp.Command(this="CREATE", expression="OR REPLACE TABLE t FOO BAR AS SELECT x FROM s")
    assert command_kind(create, "postgres") == "CREATE TABLE"
    refresh = exp.Command(this="REFRESH", expression="MATERIALIZED VIEW mv")
    assert command_kind(refresh, "postgres") is None
    function = exp.Command(this="CREATE", expression="FUNCTION f() RETURNS int AS $$ SELECT 1 $$")
    assert command_kind(function, "postgres") is None


@pytest.mark.parametrize(
    ("dialect", "script"),
    [
        (
            "postgres",
            "SET search_path = mart; -- comment only\nREFRESH MATERIALIZED VIEW mv; VACUUM ANALYZE t; "
            "COMMENT ON TABLE t IS 'x'; GRANT SELECT ON t TO bi; CREATE TABLE z (a int); "
            "ALTER TABLE z ADD COLUMN b int; DROP TABLE IF EXISTS y; TRUNCATE z; CREATE INDEX i ON z (a); "
            "BEGIN; COMMIT; ANALYZE z; DELETE FROM z WHERE a < 3",
        ),
        ("tsql", "SET NOCOUNT ON; SET ANSI_NULLS ON; DECLARE @x INT; EXEC dbo.p 1; DROP TABLE #tmp"),
        ("snowflake", "USE WAREHOUSE w; ALTER WAREHOUSE w RESUME; SHOW TABLES; USE SCHEMA db.s"),
        ("spark", "SET spark.sql.shuffle.partitions=10; REFRESH TABLE t; ANALYZE TABLE t COMPUTE STATISTICS"),
        ("bigquery", "DECLARE x INT64 DEFAULT 1; SET x = 2; CREATE SCHEMA IF NOT EXISTS ds"),
    ],
)
def test_valid_statements_without_lineage_are_neither_errors_nor_lineage(dialect: str, script: str) -> None:
    results = analyze_sql(script, dialect=dialect)
    assert len(results) > 1
    for st in results:
        assert not st.error, (st.text, st.problems)
        assert not st.writes and not st.edges
        assert all(p["severity"] != "error" for p in st.problems)


def test_the_error_names_the_statement_index_and_line_in_a_script(tmp_path: Path) -> None:
    path = tmp_path / "etl.sql"
    path.write_text(
        "INSERT INTO t1 SELECT a FROM s1;\n\nINSERT INTO t2\nSELECT a.x FROM a JOIN b ON;\nINSERT INTO t3 SELECT c FROM s3;\n",
        encoding="utf-8",
    )
    graph = READER.read([str(path)], dialect="spark")
    [err] = [p for p in graph.problems if p.severity == "error"]
    assert err.statement == 2 and err.line == 4 and err.file == str(path)
    assert [p.outputs for p in graph.processes] == [["t1"], ["t3"]]


@pytest.mark.parametrize(
    ("dialect", "sql", "word"),
    [
        ("oracle", "INSERT INTO ALL SELECT a FROM t", "ALL"),
        ("hive", "INSERT INTO PARTITION (dt) SELECT a, dt FROM t", "PARTITION"),
        ("spark", "INSERT INTO DEFAULT SELECT a FROM t", "DEFAULT"),
        ("tsql", "INSERT INTO TOP SELECT a FROM t", "TOP"),
        ("postgres", "INSERT INTO SET SELECT a FROM t", "SET"),
    ],
)
def test_insert_whose_target_is_a_keyword_has_no_target(dialect: str, sql: str, word: str) -> None:
    problem = _error(sql, dialect)
    assert problem["message"] == f"rejected: INSERT without a target table ({word} is a keyword, not a table)"
    assert (problem["line"], problem["column"]) == (1, 1)


def test_a_quoted_or_qualified_keyword_is_a_table_name() -> None:
    [quoted] = analyze_sql('INSERT INTO "all" SELECT a FROM t', dialect="postgres")
    [qualified] = analyze_sql("INSERT INTO dw.partition SELECT a FROM t", dialect="postgres")
    assert [w.id for w in quoted.writes] == ["all"]
    assert [w.id for w in qualified.writes] == ["dw.partition"]
