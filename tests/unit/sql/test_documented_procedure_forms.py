"""The statement forms of T-SQL's and Snowflake Scripting's documentation in procedure bodies
(fixtures tests/data/sql/procedures/*_documented_forms.sql; expectations worked out by hand from
those files): MERGE ... OUTPUT INTO, INSERT ... EXEC, table variables, TRY/CATCH, transactions,
IF/ELSE, WHILE, cursors, DELETE ... FROM with joins, SELECT ... INTO #t, UPDATE ... FROM with aliases
and joins, sp_executesql and EXEC with literals, RETURN, RAISERROR/THROW; DECLARE ... BEGIN ... END,
LET, FOR ... DO, WHILE ... DO, IF/ELSEIF/ELSE, EXECUTE IMMEDIATE, RETURN TABLE(...), EXCEPTION."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.lineage.sql.analyze import StatementLineage
from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import one, triples

DATA = Path(__file__).resolve().parents[2] / "data" / "sql" / "procedures"


def run(name: str, dialect: str) -> list[StatementLineage]:
    return analyze_sql((DATA / name).read_text(encoding="utf-8"), dialect=dialect)


def ids(refs: list) -> list[str]:  # type: ignore[type-arg]
    return [r.id for r in refs]


def test_tsql_merge_output_into_table_variable_insert_exec_try_catch() -> None:
    load = run("tsql_documented_forms.sql", "tsql")[0]
    assert load.routine == "dbo.usp_load_sales" and not load.error
    assert ids(load.reads) == ["stg.products"]
    assert ids(load.writes) == ["dw.products", "dw.product_changes", "dw.sales_snapshot", "dw.load_errors"]
    assert triples(load) == {
        ("stg.products.name", "dw.products.name", "IDENTITY"),  # UPDATE SET and INSERT VALUES
        ("stg.products.product_id", "dw.products.product_id", "IDENTITY"),
        ("stg.products.product_id", "dw.products.*", "JOIN"),
        ("dw.products.product_id", "dw.products.*", "JOIN"),
        # OUTPUT inserted.product_id INTO @changed, then @changed into dw.product_changes
        ("dw.products.product_id", "dw.product_changes.product_id", "IDENTITY"),
    }
    [problem] = load.problems
    assert problem["code"] == "unsupported-statement" and problem["line"] == 33
    assert "EXEC stg.usp_get_sales @batch_id" in problem["message"]


def test_tsql_cursor_delete_from_join_if_exists_select_into_update_from_and_literal_exec() -> None:
    cleanup = run("tsql_documented_forms.sql", "tsql")[1]
    assert cleanup.routine == "dw.usp_cleanup" and not cleanup.error
    # the cursor's query, the DELETE's join, IF EXISTS (SELECT ...), the UPDATE's LEFT JOIN
    assert ids(cleanup.reads) == ["stg.expired", "stg.removed", "stg.flags", "stg.adjust"]
    assert ids(cleanup.writes) == ["dw.facts", "dw.summary", "dw.log", "dw.log2"]
    assert triples(cleanup) == {
        # DELETE f FROM dw.facts AS f INNER JOIN stg.removed AS r ON ... WHERE r.removed_at < ...
        ("stg.removed.fact_id", "dw.facts.*", "JOIN"),
        ("dw.facts.id", "dw.facts.*", "JOIN"),
        ("stg.removed.removed_at", "dw.facts.*", "FILTER"),
        # UPDATE s ... FROM dw.summary s JOIN #rebuild x ... LEFT JOIN stg.adjust a, #rebuild from dw.facts
        ("dw.facts.amount", "dw.summary.total", "IDENTITY"),
        ("dw.facts.amount", "dw.summary.*", "FILTER"),  # WHERE amount > 0 of SELECT ... INTO #rebuild
        ("dw.facts.id", "dw.summary.*", "JOIN"),
        ("dw.summary.id", "dw.summary.*", "JOIN"),
        ("stg.adjust.id", "dw.summary.*", "JOIN"),
        # EXEC sp_executesql N'INSERT ...': a literal, analysed
        ("stg.expired.note", "dw.log.msg", "IDENTITY"),
    }
    [problem] = cleanup.problems
    assert problem["code"] == "dynamic-sql" and problem["line"] == 85
    assert "EXEC sp_executesql @sql" in problem["message"]


def test_snowflake_scripting_forms() -> None:
    [proc] = run("snowflake_documented_forms.sql", "snowflake")
    assert proc.routine == "analytics.refresh_orders" and not proc.error
    # c1 CURSOR FOR SELECT, the INSERT's join, the DELETE's subquery, res := (SELECT ...)
    assert ids(proc.reads) == ["raw.orders", "raw.lines", "raw.cancelled", "analytics.orders_view"]
    assert ids(proc.writes) == ["analytics.ticks", "analytics.orders", "analytics.audit"]
    assert triples(proc) == {
        ("raw.orders.order_id", "analytics.orders.order_id", "IDENTITY"),
        ("raw.lines.amount", "analytics.orders.total", "AGGREGATION"),
        ("raw.lines.order_id", "analytics.orders.*", "JOIN"),
        ("raw.orders.order_id", "analytics.orders.*", "JOIN"),
        ("raw.orders.status", "analytics.orders.*", "FILTER"),  # status <> 'DELETE'
        ("raw.orders.order_id", "analytics.orders.*", "GROUP_BY"),
        ("analytics.orders.total", "analytics.orders.*", "FILTER"),  # UPDATE ... WHERE total IS NULL
        ("analytics.orders.order_id", "analytics.orders.*", "FILTER"),  # DELETE ... WHERE order_id IN
        ("raw.cancelled.order_id", "analytics.orders.*", "FILTER"),
        ("raw.orders.status", "analytics.audit.msg", "IDENTITY"),  # EXECUTE IMMEDIATE '...'
    }
    [problem] = proc.problems
    assert problem["code"] == "dynamic-sql" and problem["line"] == 33
    assert "EXECUTE IMMEDIATE :dyn_sql" in problem["message"]


@pytest.mark.parametrize(
    ("sql", "edges"),
    [
        (
            "UPDATE dw.p SET name = s.name OUTPUT inserted.id, deleted.name INTO dw.log (id, old_name) "
            "FROM stg.p s WHERE s.id = dw.p.id",
            {("dw.p.id", "dw.log.id", "IDENTITY"), ("dw.p.name", "dw.log.old_name", "IDENTITY")},
        ),
        (
            "DELETE FROM dw.p OUTPUT deleted.id, deleted.name INTO dw.log (id, old_name) WHERE id = 1",
            {("dw.p.id", "dw.log.id", "IDENTITY"), ("dw.p.name", "dw.log.old_name", "IDENTITY")},
        ),
        (
            "INSERT INTO dw.p (id, name) OUTPUT inserted.id INTO dw.log (id) SELECT id, name FROM stg.p",
            {("dw.p.id", "dw.log.id", "IDENTITY")},
        ),
        (
            "MERGE dw.p AS t USING stg.p AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.name = s.name "
            "OUTPUT $action, s.id INTO dw.log (act, src_id);",
            {("stg.p.id", "dw.log.src_id", "IDENTITY")},
        ),
    ],
)
def test_tsql_output_into_is_a_flow_from_the_changed_rows(sql: str, edges: set[tuple[str, str, str]]) -> None:
    st = one(sql, "tsql")
    assert not st.error, st.problems
    assert "dw.log" in ids(st.writes)
    assert {e for e in triples(st) if e[1].startswith("dw.log.")} == edges


def test_tsql_output_without_into_is_a_result_set() -> None:
    st = one("UPDATE dw.p SET name = s.name OUTPUT inserted.id FROM stg.p s WHERE s.id = dw.p.id", "tsql")
    assert ids(st.writes) == ["dw.p"]
    assert ("stg.p.name", "dw.p.name", "IDENTITY") in triples(st)


def test_tsql_insert_exec_literal_is_analysed_and_a_procedure_is_a_warning() -> None:
    literal = one("INSERT INTO dw.s (a) EXEC ('SELECT a FROM stg.s')", "tsql")
    assert triples(literal) == {("stg.s.a", "dw.s.a", "IDENTITY")}
    call = one("INSERT INTO dw.s (a, b) EXEC stg.usp_rows @x = 1", "tsql")
    assert ids(call.writes) == ["dw.s"] and call.edges == []
    assert [p["code"] for p in call.problems] == ["unsupported-statement"]


@pytest.mark.parametrize(
    "body",
    [
        # GO, BEGIN/END, semicolons and quotes in strings, names and comments, in every position
        "INSERT INTO dw.t (a) SELECT a FROM stg.s WHERE b = 'BEGIN' -- END;\n",
        "INSERT INTO dw.t (a) SELECT a FROM stg.s WHERE b = 'END;GO' /* BEGIN ' */\n",
        "INSERT INTO dw.t (a) SELECT a FROM stg.s WHERE b = N'''END''';\n",
        "INSERT INTO dw.t ([begin]) SELECT [end] AS [begin] FROM stg.s;\n",
        'INSERT INTO dw.t ("GO") SELECT "END" FROM stg.s\n',
        ";;INSERT INTO dw.t (a) SELECT a FROM stg.s;;\n",
    ],
)
def test_tsql_keywords_and_separators_inside_literals_in_every_position(body: str) -> None:
    st = one(f"CREATE PROCEDURE dw.p AS\nBEGIN\n{body}END\nGO\n", "tsql")
    assert not st.error and st.problems == [], st.problems
    assert ids(st.reads) == ["stg.s"] and ids(st.writes) == ["dw.t"]


def test_tsql_a_column_named_output_is_not_an_output_clause() -> None:
    st = one(
        "UPDATE dw.t SET a = s.output, output = 2 OUTPUT inserted.a INTO dw.log (a) "
        "FROM stg.s s WHERE s.id = dw.t.id",
        "tsql",
    )
    assert triples(st) == {
        ("stg.s.output", "dw.t.a", "IDENTITY"),
        ("stg.s.id", "dw.t.*", "JOIN"),
        ("dw.t.id", "dw.t.*", "JOIN"),
        ("dw.t.a", "dw.log.a", "IDENTITY"),
    }
    cte = one("WITH c AS (SELECT output FROM stg.s) INSERT INTO dw.t (a) SELECT output FROM c", "tsql")
    assert triples(cte) == {("stg.s.output", "dw.t.a", "IDENTITY")}
