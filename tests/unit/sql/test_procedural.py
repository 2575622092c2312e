"""Procedural SQL: procedures, functions and blocks in T-SQL, PL/pgSQL, Snowflake Scripting and
Oracle PL/SQL (fixtures in tests/data/sql/procedures/, written from each dialect's documentation;
the expectations below are worked out by hand from those files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.lineage.readers.sql import READER
from atlas_sync.lineage.sql.analyze import StatementLineage
from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import triples

DATA = Path(__file__).resolve().parents[2] / "data" / "sql" / "procedures"


def run(name: str, dialect: str) -> list[StatementLineage]:
    return analyze_sql((DATA / name).read_text(encoding="utf-8"), dialect=dialect)


def codes(st: StatementLineage) -> list[str]:
    return [p["code"] for p in st.problems]


def test_tsql_procedure_with_try_catch_if_else_merge_and_table_variable() -> None:
    results = run("tsql_load_customers.sql", "tsql")
    assert [r.type for r in results] == ["CREATE PROCEDURE", "CREATE PROCEDURE", "SELECT"]
    load = results[0]
    assert load.routine == "dw.load_customers"
    assert not load.error
    # #recent and @changes are intermediates: composed away, never inputs or outputs
    assert [r.id for r in load.reads] == ["stg.customers"]
    assert [w.id for w in load.writes] == ["dw.customers", "dw.customer_audit", "dw.load_errors"]
    assert triples(load) == {
        # MERGE ... USING #recent, #recent from SELECT ... INTO in both IF branches
        ("stg.customers.id", "dw.customers.id", "IDENTITY"),
        ("stg.customers.name", "dw.customers.name", "IDENTITY"),
        ("stg.customers.email", "dw.customers.email", "IDENTITY"),  # INSERT branch
        ("stg.customers.email", "dw.customers.email", "TRANSFORMATION"),  # lower() in UPDATE branch
        ("stg.customers.id", "dw.customers.*", "JOIN"),  # ON t.id = s.id
        ("dw.customers.id", "dw.customers.*", "JOIN"),
        ("stg.customers.updated_at", "dw.customers.*", "FILTER"),  # WHERE of the IF branch
        # @changes (a table variable) <- #recent, then the audit table <- @changes
        ("stg.customers.id", "dw.customer_audit.customer_id", "IDENTITY"),
        ("stg.customers.updated_at", "dw.customer_audit.*", "FILTER"),
    }
    dynamic = [p for p in load.problems if p["code"] == "dynamic-sql"]
    assert len(dynamic) == 1 and "EXEC sp_executesql @sql" in dynamic[0]["message"]
    assert dynamic[0]["line"] == 27


def test_tsql_body_without_begin_runs_to_go_and_literal_exec_is_analysed() -> None:
    purge = run("tsql_load_customers.sql", "tsql")[1]
    assert purge.routine == "dw.purge_counts"
    assert [w.id for w in purge.writes] == ["dw.counts", "dw.scratch"]
    # EXEC (N'INSERT ...'): the string is known SQL, so it is analysed, not warned about
    assert triples(purge) == {("dw.customers.id", "dw.scratch.id", "IDENTITY")}
    assert "dynamic-sql" not in codes(purge)


def test_plpgsql_procedure_dollar_body() -> None:
    results = run("plpgsql_refresh.sql", "postgres")
    refresh, top, add_one = results
    assert refresh.type == "CREATE PROCEDURE" and refresh.routine == "mart.refresh_daily"
    assert [r.id for r in refresh.reads] == ["sales.orders", "sales.refunds"]  # FOR r IN SELECT ...
    assert [w.id for w in refresh.writes] == ["mart.daily_revenue", "mart.refresh_log", "mart.refresh_errors"]
    assert triples(refresh) == {
        # through the temporary table recent_orders
        ("sales.orders.order_date", "mart.daily_revenue.day", "IDENTITY"),
        ("sales.orders.amount", "mart.daily_revenue.revenue", "AGGREGATION"),
        ("sales.orders.order_date", "mart.daily_revenue.*", "GROUP_BY"),
        ("sales.orders.order_date", "mart.daily_revenue.*", "FILTER"),  # order_date >= p_since
        # UPDATE ... SET rows_loaded = v_rows: a variable, not a column of refresh_log
    }
    assert codes(refresh) == ["dynamic-sql"]
    assert "EXECUTE format(" in refresh.problems[0]["message"]
    # SELECT count(*) INTO v_rows assigns a variable: no table v_rows
    assert all("v_rows" not in w.id for w in refresh.writes)
    # RETURN QUERY SELECT ...: the function reads sales.orders
    assert top.routine == "mart.top_customers" and [r.id for r in top.reads] == ["sales.orders"]
    assert add_one.type == "CREATE FUNCTION" and not add_one.reads and not add_one.writes


def test_snowflake_scripting_procedure() -> None:
    (load,) = run("snowflake_scripting.sql", "snowflake")
    assert load.routine == "analytics.load_orders"
    assert [r.id for r in load.reads] == ["raw.orders"]
    assert [w.id for w in load.writes] == ["analytics.orders", "analytics.customers", "analytics.load_runs"]
    assert triples(load) == {
        ("raw.orders.order_id", "analytics.orders.order_id", "IDENTITY"),
        ("raw.orders.customer_id", "analytics.orders.customer_id", "IDENTITY"),
        ("raw.orders.amount", "analytics.orders.amount", "IDENTITY"),
        ("raw.orders.amount", "analytics.orders.*", "FILTER"),  # amount >= :min_amount
        ("raw.orders.customer_id", "analytics.customers.customer_id", "IDENTITY"),
        ("raw.orders.customer_id", "analytics.customers.*", "JOIN"),
        ("analytics.customers.customer_id", "analytics.customers.*", "JOIN"),
        ("raw.orders.amount", "analytics.customers.*", "FILTER"),
    }
    assert codes(load) == ["dynamic-sql"]  # EXECUTE IMMEDIATE 'TRUNCATE TABLE ' || table_name


def test_oracle_plsql_procedure_with_declarations_cursor_and_slash() -> None:
    results = run("oracle_plsql.sql", "oracle")
    assert len(results) == 1  # the "/" line is SQL*Plus's, not a statement
    (proc,) = results
    assert proc.routine == "hr.raise_salaries"
    assert [w.id for w in proc.writes] == ["hr.employees", "hr.salary_log"]
    assert proc.reads == []  # hr.employees is written, so it is no input (a loop in Atlas)
    assert triples(proc) == {
        ("hr.employees.salary", "hr.employees.salary", "TRANSFORMATION"),  # p_pct is a parameter
        ("hr.employees.department_id", "hr.employees.*", "FILTER"),
        ("hr.employees.employee_id", "hr.salary_log.employee_id", "IDENTITY"),
        ("hr.employees.salary", "hr.salary_log.new_salary", "IDENTITY"),
        ("hr.employees.department_id", "hr.salary_log.*", "FILTER"),
    }
    assert codes(proc) == ["dynamic-sql"]


def test_one_process_per_procedure_named_after_it(tmp_path: Path) -> None:
    graph = READER.read([str(DATA / "tsql_load_customers.sql")], dialect="tsql", job="etl")
    assert [p.id for p in graph.processes] == ["etl:dw.load_customers", "etl:dw.purge_counts"]
    load = graph.process("etl:dw.load_customers")
    assert load is not None and load.attributes["statementType"] == "CREATE PROCEDURE"
    # the MERGE reads its target (ON t.id = s.id): an input too (every edge's source is an input)
    assert load.inputs == ["stg.customers", "dw.customers"]
    # the intermediates are not datasets of the graph
    assert {d.id for d in graph.datasets} >= {"stg.customers", "dw.customers", "dw.customer_audit"}
    assert not any(d.kind == "intermediate" for d in graph.datasets)
    # editing the body keeps the name: history in Atlas stays with the procedure
    edited = tmp_path / "tsql_load_customers.sql"
    edited.write_text(
        (DATA / "tsql_load_customers.sql").read_text().replace("lower(s.email)", "upper(s.email)"),
        encoding="utf-8",
    )
    again = READER.read([str(edited)], dialect="tsql", job="etl")
    assert [p.id for p in again.processes] == [p.id for p in graph.processes]


@pytest.mark.parametrize(
    ("dialect", "sql", "shown"),
    [
        ("tsql", "EXEC(@sql)", "EXEC(@sql)"),
        ("tsql", "EXEC sp_executesql @stmt, N'@id INT', @id = 1", "sp_executesql"),
        ("postgres", "EXECUTE format('INSERT INTO %I SELECT * FROM s', t)", "format("),
        ("snowflake", "EXECUTE IMMEDIATE :stmt", "IMMEDIATE :stmt"),
        ("oracle", "EXECUTE IMMEDIATE v_sql", "v_sql"),
    ],
)
def test_dynamic_sql_is_a_warning_naming_the_statement(dialect: str, sql: str, shown: str) -> None:
    (st,) = analyze_sql(sql, dialect=dialect)
    assert not st.error and not st.writes
    assert codes(st) == ["dynamic-sql"]
    assert shown in st.problems[0]["message"]


def test_dynamic_sql_of_one_literal_is_known_and_analysed() -> None:
    (st,) = analyze_sql("EXECUTE IMMEDIATE 'INSERT INTO a.t (x) SELECT y FROM b.s'", dialect="snowflake")
    assert triples(st) == {("b.s.y", "a.t.x", "IDENTITY")} and codes(st) == []
    (st,) = analyze_sql("EXEC (N'INSERT INTO a.t (x) SELECT y FROM b.s')", dialect="tsql")
    assert triples(st) == {("b.s.y", "a.t.x", "IDENTITY")}


def test_a_procedure_call_is_not_dynamic_sql() -> None:
    (st,) = analyze_sql("EXEC dw.load_customers @since = '2024-01-01'", dialect="tsql")
    assert codes(st) == []


def test_anonymous_blocks() -> None:
    (pg,) = analyze_sql(
        "DO $$ BEGIN INSERT INTO a.t (x) SELECT y FROM b.s; END $$ LANGUAGE plpgsql;", dialect="postgres"
    )
    assert pg.type == "BLOCK" and pg.routine is None
    assert triples(pg) == {("b.s.y", "a.t.x", "IDENTITY")}
    (ora,) = analyze_sql(
        "DECLARE n NUMBER; BEGIN INSERT INTO a.t (x) SELECT y FROM b.s WHERE z > n; END;", dialect="oracle"
    )
    # n is a declared variable: no FILTER edge from a column b.s.n
    assert triples(ora) == {("b.s.y", "a.t.x", "IDENTITY"), ("b.s.z", "a.t.*", "FILTER")}


def test_transactions_are_not_blocks() -> None:
    results = analyze_sql("BEGIN; INSERT INTO a.t SELECT x FROM b.s; COMMIT;", dialect="postgres")
    assert [r.type for r in results] == ["TRANSACTION", "INSERT", "COMMIT"]
    results = analyze_sql("BEGIN TRANSACTION; INSERT INTO a.t SELECT x FROM b.s; COMMIT", dialect="tsql")
    assert "INSERT" in [r.type for r in results]


def test_a_bad_statement_in_a_body_is_an_error_and_the_others_still_give_lineage() -> None:
    sql = (
        "CREATE PROCEDURE p AS BEGIN\n"
        "  INSERT INTO a.t (x) SELECT y FROM b.s;\n"
        "  INSERT INTO a.u (x) SELECT FROM WHERE;\n"
        "END"
    )
    (st,) = analyze_sql(sql, dialect="tsql")
    assert not st.error  # one statement of two failed: the procedure keeps the other's lineage
    assert triples(st) == {("b.s.y", "a.t.x", "IDENTITY")}
    errors = [p for p in st.problems if p["severity"] == "error"]
    assert len(errors) == 1 and errors[0]["line"] == 3


def test_functions_in_other_languages_are_not_read_as_sql() -> None:
    (st,) = analyze_sql(
        "CREATE FUNCTION f() RETURNS int LANGUAGE plpython3u AS $$ return 1 $$;", dialect="postgres"
    )
    assert not st.error and not st.writes and codes(st) == ["foreign-body"]
    (spark,) = analyze_sql("CREATE FUNCTION f AS 'com.example.Upper' USING JAR 'x.jar'", dialect="spark")
    assert not spark.error and not spark.writes


def test_tsql_inline_function_and_trigger_rows() -> None:
    (fn,) = analyze_sql(
        "CREATE FUNCTION dbo.by_key (@k INT) RETURNS TABLE AS RETURN (SELECT y FROM b.s WHERE k = @k)",
        dialect="tsql",
    )
    assert fn.routine == "dbo.by_key" and [r.id for r in fn.reads] == ["b.s"] and not fn.problems
    (trg,) = analyze_sql(
        "CREATE TRIGGER dbo.orders_audit ON dbo.orders AFTER INSERT AS\n"
        "BEGIN\n  INSERT INTO dbo.audit (id, amount) SELECT i.id, i.amount FROM inserted i\nEND",
        dialect="tsql",
    )
    # inserted holds the new rows of the trigger's table
    assert [r.id for r in trg.reads] == ["dbo.orders"]
    assert triples(trg) == {
        ("dbo.orders.id", "dbo.audit.id", "IDENTITY"),
        ("dbo.orders.amount", "dbo.audit.amount", "IDENTITY"),
    }


def test_tsql_scripts_without_semicolons_split_into_statements() -> None:
    results = analyze_sql(
        "IF OBJECT_ID('tempdb..#x') IS NOT NULL DROP TABLE #x\n"
        "BEGIN TRAN\n"
        "SELECT y INTO #x FROM b.s\n"
        "INSERT INTO a.t (y) SELECT y FROM #x\n"
        "COMMIT",
        dialect="tsql",
    )
    assert [(r.line, r.type) for r in results] == [
        (1, "DROP"),
        (2, "TRANSACTION"),
        (3, "SELECT INTO"),
        (4, "INSERT"),
        (5, "COMMIT"),
    ]
    assert triples(results[3]) == {('"#x".y', "a.t.y", "IDENTITY")}  # #x, not a table x
