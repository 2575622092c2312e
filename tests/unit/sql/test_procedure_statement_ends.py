"""Where a procedure's header and statements end: found by the procedure corpus (issue 43), each a
silent loss before (no problem reported)."""

from __future__ import annotations

import pytest

from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import DIRECT, triples


@pytest.mark.parametrize("setting", ["NOCOUNT ON", "XACT_ABORT ON", "IDENTITY_INSERT dbo.t ON"])
def test_tsql_set_option_on_without_semicolon_does_not_swallow_the_next_dml(setting: str) -> None:
    sql = (
        f"CREATE PROCEDURE dbo.p AS\nBEGIN\n  SET {setting}\n"
        "  UPDATE t SET t.a = s.a FROM dbo.t t JOIN dbo.s s ON s.id = t.id\n"
        "  SET @rows = @@ROWCOUNT\n"
        "  INSERT INTO dbo.u (b) SELECT b FROM dbo.s\nEND\n"
    )
    (proc,) = analyze_sql(sql, dialect="tsql")
    assert not proc.problems
    assert [w.id for w in proc.writes] == ["dbo.t", "dbo.u"]
    assert triples(proc, DIRECT) == {("dbo.s.a", "dbo.t.a", "IDENTITY"), ("dbo.s.b", "dbo.u.b", "IDENTITY")}


def test_tsql_script_set_option_on_then_insert_is_two_statements() -> None:
    results = analyze_sql("SET XACT_ABORT ON\nINSERT INTO dbo.u (b) SELECT b FROM dbo.s\n", dialect="tsql")
    assert [r.type for r in results] == ["SET", "INSERT"]
    assert [w.id for w in results[1].writes] == ["dbo.u"]


@pytest.mark.parametrize(
    "grant", ["GRANT EXECUTE ON dbo.p TO etl_role", "GRANT SELECT, INSERT, UPDATE ON dbo.t TO app"]
)
def test_tsql_grant_of_statement_privileges_is_one_statement_without_error(grant: str) -> None:
    results = analyze_sql(f"INSERT INTO dbo.u (b) SELECT b FROM dbo.s\nGO\n{grant}\nGO\n", dialect="tsql")
    assert len(results) == 2
    assert not any(r.error for r in results), [r.problems for r in results]


@pytest.mark.parametrize("who", ["CALLER", "OWNER", "RESTRICTED CALLER"])
def test_snowflake_execute_as_clause_is_not_taken_for_the_body(who: str) -> None:
    sql = (
        "CREATE OR REPLACE PROCEDURE a.p() RETURNS VARCHAR LANGUAGE SQL\n"
        f"EXECUTE AS {who}\nAS\n$$\nBEGIN\n"
        "  INSERT INTO a.t (x) SELECT x FROM a.s;\n  RETURN 'ok';\nEND;\n$$;\n"
    )
    (proc,) = analyze_sql(sql, dialect="snowflake")
    assert [r.id for r in proc.reads] == ["a.s"] and [w.id for w in proc.writes] == ["a.t"]
    assert triples(proc, DIRECT) == {("a.s.x", "a.t.x", "IDENTITY")}


def test_tsql_with_execute_as_user_string_is_not_taken_for_the_body() -> None:
    sql = (
        "CREATE PROCEDURE dbo.p WITH EXECUTE AS 'etl_user' AS\nBEGIN\n"
        "  INSERT INTO dbo.u (b) SELECT b FROM dbo.s;\nEND\n"
    )
    (proc,) = analyze_sql(sql, dialect="tsql")
    assert not proc.problems
    assert [w.id for w in proc.writes] == ["dbo.u"]


@pytest.mark.parametrize("delimiter", ["//", "$$", ";;"])
def test_mysql_client_delimiter_lines_end_procedures_and_keep_line_numbers(delimiter: str) -> None:
    sql = (
        f"DELIMITER {delimiter}\n"
        f"DROP PROCEDURE IF EXISTS a.p{delimiter}\n"
        "CREATE PROCEDURE a.p()\nBEGIN\n"
        "  INSERT INTO a.t (x) SELECT x FROM a.s;\n"
        f"END{delimiter}\n"
        "CREATE PROCEDURE a.q()\nBEGIN\n"
        "  INSERT INTO a.u (y) SELECT y FROM a.s WHERE k = 'END//';\n"
        f"END {delimiter}\n"
        "DELIMITER ;\n"
        "INSERT INTO a.v (z) SELECT z FROM a.s;\n"
    )
    results = analyze_sql(sql, dialect="mysql")
    assert [r.type for r in results] == ["DROP", "CREATE PROCEDURE", "CREATE PROCEDURE", "INSERT"]
    assert not any(r.problems for r in results)
    assert [r.line for r in results] == [2, 3, 7, 12]
    assert [[w.id for w in r.writes] for r in results] == [[], ["a.t"], ["a.u"], ["a.v"]]


def test_mysql_replace_into_select_in_a_procedure_body_moves_data_like_insert() -> None:
    sql = "CREATE PROCEDURE a.p()\nBEGIN\n  REPLACE INTO a.t (x, y) SELECT s.x, s.y FROM a.s s;\nEND\n"
    (proc,) = analyze_sql(sql, dialect="mysql")
    assert not proc.problems
    assert [w.id for w in proc.writes] == ["a.t"]
    assert triples(proc, DIRECT) == {("a.s.x", "a.t.x", "IDENTITY"), ("a.s.y", "a.t.y", "IDENTITY")}
