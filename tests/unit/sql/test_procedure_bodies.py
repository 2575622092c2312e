"""Stored procedure bodies as production writes them (issue 43): keywords inside string literals,
quoted names and comments, T-SQL UPDATE/DELETE TOP, aliases of three-part names, session SET
options without semicolons, Snowflake Scripting headers and variables, and bodies the reader cannot
take apart reported, never returned as silent empty lineage. Expectations are worked out by hand
from the SQL (T-SQL and Snowflake Scripting documentation forms)."""

from __future__ import annotations

import pytest

from atlas_sync.lineage.sql.analyze import StatementLineage
from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import triples


def only(sql: str, dialect: str) -> StatementLineage:
    results = analyze_sql(sql, dialect=dialect)
    assert len(results) == 1, [(r.type, r.text[:40]) for r in results]
    return results[0]


def ids(refs: list) -> list[str]:  # type: ignore[type-arg]
    return [r.id for r in refs]


def codes(st: StatementLineage) -> list[str]:
    return [p["code"] for p in st.problems]


# ---------------------------------------------------------------- keywords inside literals
@pytest.mark.parametrize("word", ["DELETE", "UPDATE", "INSERT", "SELECT", "MERGE", "END", "BEGIN", "GO"])
def test_tsql_string_literal_equal_to_a_keyword_does_not_split_the_statement(word: str) -> None:
    st = only(f"SELECT id FROM stg.audit_log WHERE action_type = '{word}'", "tsql")
    assert not st.error, st.problems
    assert ids(st.reads) == ["stg.audit_log"]


@pytest.mark.parametrize("word", ["DELETE", "UPDATE", "INSERT", "SELECT", "MERGE"])
def test_tsql_procedure_with_keyword_literals_is_analysed(word: str) -> None:
    st = only(
        f"""CREATE PROCEDURE dw.load_audit AS
BEGIN
  INSERT INTO dw.audit (id, kind)
  SELECT id, action_type FROM stg.audit_log WHERE action_type = '{word}'
  UPDATE dw.audit SET kind = N'{word}' WHERE kind = '{word.lower()}'
  DELETE FROM dw.audit WHERE kind IN (SELECT kind FROM stg.ignored WHERE note <> '{word};')
END""",
        "tsql",
    )
    assert not st.error and st.problems == []
    assert ids(st.reads) == ["stg.audit_log", "stg.ignored"]
    assert ids(st.writes) == ["dw.audit"]
    assert triples(st) == {
        ("stg.audit_log.id", "dw.audit.id", "IDENTITY"),
        ("stg.audit_log.action_type", "dw.audit.kind", "IDENTITY"),
        ("stg.audit_log.action_type", "dw.audit.*", "FILTER"),
        ("dw.audit.kind", "dw.audit.*", "FILTER"),  # UPDATE ... WHERE kind = ...
        ("stg.ignored.kind", "dw.audit.*", "FILTER"),  # DELETE ... WHERE kind IN (SELECT ...)
        ("stg.ignored.note", "dw.audit.*", "FILTER"),
    }


def test_tsql_keywords_in_quoted_names_escaped_quotes_and_comments_are_not_statements() -> None:
    st = only(
        """CREATE PROCEDURE dw.p AS
BEGIN
  -- DELETE FROM dw.never; END
  /* UPDATE dw.never SET x = 1
     GO */
  INSERT INTO dw.events ([select], "end", note)
  SELECT [delete], "update", 'it''s an END; BEGIN '' DELETE'
  FROM stg.events WHERE [go] = N'GO'
END""",
        "tsql",
    )
    assert not st.error and st.problems == []
    assert ids(st.reads) == ["stg.events"]
    assert ids(st.writes) == ["dw.events"]
    assert triples(st) == {
        ("stg.events.delete", "dw.events.select", "IDENTITY"),
        ("stg.events.update", "dw.events.end", "IDENTITY"),
        ("stg.events.go", "dw.events.*", "FILTER"),
    }


def test_tsql_script_splits_on_go_and_semicolons_never_inside_literals() -> None:
    results = analyze_sql(
        """INSERT INTO dw.a (x) SELECT x FROM stg.s WHERE y = 'GO';
GO
INSERT INTO dw.b (x) SELECT x FROM stg.s WHERE y = ';GO;'
GO
""",
        dialect="tsql",
    )
    assert [(r.type, ids(r.writes)) for r in results] == [("INSERT", ["dw.a"]), ("INSERT", ["dw.b"])]
    assert not any(r.error for r in results)


def test_snowflake_body_with_keyword_literals_and_semicolons_in_strings() -> None:
    st = only(
        """CREATE OR REPLACE PROCEDURE mart.p()
RETURNS VARCHAR LANGUAGE SQL AS
$$
BEGIN
  INSERT INTO mart.log (msg) SELECT 'BEGIN; END; DELETE' FROM raw.s WHERE kind = 'END';
  RETURN 'END;';
END;
$$;""",
        "snowflake",
    )
    assert not st.error and st.problems == []
    assert ids(st.reads) == ["raw.s"] and ids(st.writes) == ["mart.log"]
    assert triples(st) == {("raw.s.kind", "mart.log.*", "FILTER")}


# ---------------------------------------------------------------- T-SQL UPDATE / DELETE forms
def test_tsql_update_top_in_a_procedure() -> None:
    st = only(
        """CREATE PROCEDURE dw.mark_batch @n INT AS
BEGIN
  UPDATE TOP (@n) q SET q.status = s.status
  FROM dw.queue q JOIN stg.status s ON s.id = q.id
END""",
        "tsql",
    )
    assert not st.error, st.problems
    assert ids(st.writes) == ["dw.queue"] and ids(st.reads) == ["stg.status"]
    assert triples(st) == {
        ("stg.status.status", "dw.queue.status", "IDENTITY"),
        ("stg.status.id", "dw.queue.*", "JOIN"),
        ("dw.queue.id", "dw.queue.*", "JOIN"),
    }


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE TOP (10) dw.t SET x = s.y FROM stg.s s WHERE s.id = dw.t.id",
        "UPDATE TOP (10) PERCENT dw.t SET x = s.y FROM stg.s s WHERE s.id = dw.t.id",
        "UPDATE TOP(@n)\n  dw.t SET x = s.y FROM stg.s s WHERE s.id = dw.t.id",
    ],
)
def test_tsql_update_top_statement(sql: str) -> None:
    st = only(sql, "tsql")
    assert not st.error, st.problems
    assert ids(st.writes) == ["dw.t"]
    assert ("stg.s.y", "dw.t.x", "IDENTITY") in triples(st)


def test_tsql_delete_top_from_is_the_table_not_top() -> None:
    st = only("DELETE TOP (500) FROM dw.t WHERE id IN (SELECT id FROM stg.gone)", "tsql")
    assert not st.error, st.problems
    assert ids(st.writes) == ["dw.t"] and ids(st.reads) == ["stg.gone"]
    assert triples(st) == {("stg.gone.id", "dw.t.*", "FILTER"), ("dw.t.id", "dw.t.*", "FILTER")}


def test_tsql_insert_top_into() -> None:
    st = only("INSERT TOP (5) INTO dw.t (a) SELECT a FROM stg.s", "tsql")
    assert triples(st) == {("stg.s.a", "dw.t.a", "IDENTITY")}


def test_tsql_update_alias_resolves_to_the_three_part_name_of_from() -> None:
    st = only(
        "UPDATE t SET t.total = s.total FROM sales.dbo.target t JOIN stg.src s ON s.id = t.id",
        "tsql",
    )
    assert ids(st.writes) == ["sales.dbo.target"]
    assert ids(st.reads) == ["stg.src"]
    assert triples(st) == {
        ("stg.src.total", "sales.dbo.target.total", "IDENTITY"),
        ("stg.src.id", "sales.dbo.target.*", "JOIN"),
        ("sales.dbo.target.id", "sales.dbo.target.*", "JOIN"),
    }


def test_tsql_update_alias_of_a_joined_three_part_name() -> None:
    st = only(
        "UPDATE t SET total = s.total FROM stg.src AS s INNER JOIN [sales].[dbo].[target] AS t ON s.id = t.id",
        "tsql",
    )
    assert ids(st.writes) == ["sales.dbo.target"]
    assert ("stg.src.total", "sales.dbo.target.total", "IDENTITY") in triples(st)


def test_tsql_delete_alias_from_three_part_name() -> None:
    st = only("DELETE t FROM sales.dbo.target AS t JOIN stg.gone g ON g.id = t.id", "tsql")
    assert ids(st.writes) == ["sales.dbo.target"] and ids(st.reads) == ["stg.gone"]


# ---------------------------------------------------------------- T-SQL session options
def test_tsql_set_options_without_semicolons_do_not_swallow_statements() -> None:
    st = only(
        """CREATE PROCEDURE dw.p AS
BEGIN
  SET NOCOUNT ON
  SET XACT_ABORT ON
  UPDATE dw.t SET x = s.x FROM stg.s s WHERE s.id = dw.t.id
  SET IDENTITY_INSERT dw.u ON
  INSERT INTO dw.u (id) SELECT id FROM stg.other
  SET IDENTITY_INSERT dw.u OFF
  SELECT id FROM stg.report
END""",
        "tsql",
    )
    assert not st.error and st.problems == []
    assert ids(st.writes) == ["dw.t", "dw.u"]
    # the result-set SELECT at the end reads stg.report
    assert ids(st.reads) == ["stg.s", "stg.other", "stg.report"]
    assert ("stg.other.id", "dw.u.id", "IDENTITY") in triples(st)
    assert ("stg.s.x", "dw.t.x", "IDENTITY") in triples(st)


# ---------------------------------------------------------------- Snowflake Scripting headers
@pytest.mark.parametrize("rights", ["EXECUTE AS CALLER", "EXECUTE AS OWNER", "EXECUTE AS RESTRICTED CALLER"])
def test_snowflake_execute_as_before_the_body_with_a_transaction(rights: str) -> None:
    st = only(
        f"""CREATE OR REPLACE PROCEDURE mart.p(x VARCHAR)
RETURNS TABLE (a INT)
LANGUAGE SQL
{rights}
AS
$$
BEGIN
  BEGIN TRANSACTION;
  INSERT INTO mart.t (a) SELECT a FROM raw.s WHERE k = :x;
  COMMIT;
  LET res RESULTSET := (SELECT a FROM raw.r);
  RETURN TABLE(res);
END;
$$;""",
        "snowflake",
    )
    assert st.routine == "mart.p" and not st.error and st.problems == []
    assert ids(st.writes) == ["mart.t"]
    assert ids(st.reads) == ["raw.s", "raw.r"]  # LET res RESULTSET := (SELECT ...) reads raw.r
    assert triples(st) == {("raw.s.a", "mart.t.a", "IDENTITY"), ("raw.s.k", "mart.t.*", "FILTER")}


def test_tsql_with_execute_as_owner_before_as() -> None:
    st = only(
        """CREATE PROCEDURE dw.p @a INT WITH RECOMPILE, EXECUTE AS OWNER AS
BEGIN
  INSERT INTO dw.t (a) SELECT a FROM stg.s
END""",
        "tsql",
    )
    assert triples(st) == {("stg.s.a", "dw.t.a", "IDENTITY")}


def test_snowflake_declare_resultset_default_query_is_a_read() -> None:
    st = only(
        """DECLARE
  res RESULTSET DEFAULT (SELECT id FROM raw.k);
BEGIN
  INSERT INTO mart.t (id) SELECT id FROM raw.s;
  RETURN TABLE(res);
END;""",
        "snowflake",
    )
    assert ids(st.reads) == ["raw.k", "raw.s"] and ids(st.writes) == ["mart.t"]


# ---------------------------------------------------------------- never silent
def test_body_the_reader_cannot_take_apart_is_an_error_naming_the_procedure() -> None:
    # the generic dialect does not quote with $$: the body is not found
    results = analyze_sql(
        """CREATE PROCEDURE mart.p()
RETURNS VARCHAR LANGUAGE SQL AS
$$
BEGIN
  INSERT INTO mart.t (a) SELECT a FROM raw.s;
END;
$$;""",
        dialect="",
    )
    st = results[0]
    assert st.routine == "mart.p" and st.error
    assert codes(st)[0] == "sql-unsupported"
    assert "mart.p" in st.problems[0]["message"] and "'$$'" in st.problems[0]["message"]
    assert st.problems[0]["line"] == 3


def test_unknown_body_statement_is_reported_not_skipped() -> None:
    st = only(
        """CREATE PROCEDURE dw.p AS
BEGIN
  INSERT INTO dw.t (a) SELECT a FROM stg.s
  BULK INSERT dw.t FROM 'c:\\load\\t.csv'
END""",
        "tsql",
    )
    assert ids(st.writes) == ["dw.t"]
    assert codes(st) == ["unsupported-statement"]
    assert "BULK INSERT dw.t" in st.problems[0]["message"] and st.problems[0]["line"] == 4


# ---------------------------------------------------------------- MySQL client DELIMITER
def test_mysql_delimiter_lines_keep_a_procedure_whole() -> None:
    results = analyze_sql(
        """DELIMITER //
CREATE PROCEDURE shop.load_orders(IN p_day DATE)
BEGIN
  DECLARE v_n INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; END;
  START TRANSACTION;
  INSERT INTO shop.daily (day, total)
  SELECT p_day, SUM(amount) FROM shop.orders WHERE order_date = p_day AND note <> 'END //';
  SELECT COUNT(*) INTO v_n FROM shop.daily;
  IF v_n > 0 THEN
    UPDATE shop.stats s JOIN shop.daily d ON d.day = s.day SET s.total = d.total;
  END IF;
  COMMIT;
END //
DELIMITER ;
CALL shop.load_orders('2024-01-01');
""",
        dialect="mysql",
    )
    assert [r.type for r in results] == ["CREATE PROCEDURE", "OTHER"]
    proc = results[0]
    assert proc.routine == "shop.load_orders" and not proc.error and proc.problems == []
    assert ids(proc.reads) == ["shop.orders"]
    assert ids(proc.writes) == ["shop.daily", "shop.stats"]
    assert triples(proc) == {
        ("shop.orders.amount", "shop.daily.total", "AGGREGATION"),
        ("shop.orders.order_date", "shop.daily.*", "FILTER"),  # p_day is a parameter, not a column
        ("shop.orders.note", "shop.daily.*", "FILTER"),
        ("shop.daily.total", "shop.stats.total", "IDENTITY"),
        ("shop.daily.day", "shop.stats.*", "JOIN"),
        ("shop.stats.day", "shop.stats.*", "JOIN"),
    }
    assert proc.line == 2


def test_tsql_if_else_if_conditions_comparing_with_keyword_literals() -> None:
    st = only(
        """CREATE PROCEDURE dw.apply @action VARCHAR(10) AS
BEGIN
  IF @action = 'DELETE'
    DELETE FROM dw.t WHERE id IN (SELECT id FROM stg.gone)
  ELSE IF @action = 'UPDATE'
    UPDATE dw.t SET v = s.v FROM stg.s s WHERE s.id = dw.t.id
  ELSE IF @action = 'INSERT' BEGIN
    INSERT INTO dw.t (id, v) SELECT id, v FROM stg.s
  END
  ELSE
    THROW 50001, 'unknown action: END', 1;
  WHILE EXISTS (SELECT 1 FROM stg.queue WHERE state = 'SELECT')
    DELETE TOP (100) FROM stg.queue WHERE state = 'SELECT';
  RAISERROR ('MERGE done', 10, 1) WITH NOWAIT;
  RETURN;
END""",
        "tsql",
    )
    assert not st.error and st.problems == []
    # WHILE EXISTS (SELECT ... FROM stg.queue) reads it; the DELETE reading only its target gives nothing
    assert ids(st.reads) == ["stg.gone", "stg.s", "stg.queue"]
    assert ids(st.writes) == ["dw.t"]
    assert triples(st) == {
        ("stg.gone.id", "dw.t.*", "FILTER"),
        ("dw.t.id", "dw.t.*", "FILTER"),
        ("stg.s.v", "dw.t.v", "IDENTITY"),
        ("stg.s.id", "dw.t.*", "JOIN"),
        ("dw.t.id", "dw.t.*", "JOIN"),
        ("stg.s.id", "dw.t.id", "IDENTITY"),
    }


def test_plpgsql_foreach_loop_body_is_analysed() -> None:
    st = only(
        """CREATE OR REPLACE FUNCTION a.f(arr int[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE x int;
BEGIN
  FOREACH x IN ARRAY arr LOOP
    INSERT INTO a.t (v) SELECT v FROM a.s WHERE id = x;
  END LOOP;
END $$;""",
        "postgres",
    )
    assert st.problems == []
    assert triples(st) == {("a.s.v", "a.t.v", "IDENTITY"), ("a.s.id", "a.t.*", "FILTER")}


def test_plsql_forall_statement_is_analysed() -> None:
    st = only(
        """CREATE OR REPLACE PROCEDURE hr.p IS
  TYPE t_ids IS TABLE OF NUMBER;
  l_ids t_ids;
BEGIN
  SELECT id BULK COLLECT INTO l_ids FROM hr.src;
  FORALL i IN 1 .. l_ids.COUNT SAVE EXCEPTIONS
    INSERT INTO hr.dst (id, v) SELECT id, v FROM hr.src2 WHERE id = l_ids(i);
END;
/""",
        "oracle",
    )
    assert st.problems == []
    assert ids(st.reads) == ["hr.src", "hr.src2"] and ids(st.writes) == ["hr.dst"]
    assert triples(st) == {
        ("hr.src2.id", "hr.dst.id", "IDENTITY"),
        ("hr.src2.v", "hr.dst.v", "IDENTITY"),
        ("hr.src2.id", "hr.dst.*", "FILTER"),
    }


def test_procedure_moving_no_data_says_so() -> None:
    st = only(
        """CREATE PROCEDURE dw.purge @before DATE AS
BEGIN
  SET NOCOUNT ON
  DELETE FROM dw.log WHERE logged_at < @before
END""",
        "tsql",
    )
    assert st.reads == [] and st.writes == [] and not st.error
    [problem] = st.problems
    assert (problem["code"], problem["severity"], problem["line"]) == ("no-lineage", "warning", 1)
    assert problem["message"].startswith(
        "dw.purge: no lineage: its body reads and writes no table (1 data statement;"
    )
