"""Statements of the kinds other projects' test suites carry (ClickHouse dictionaries, Snowflake
semantic views, table functions taking tables, dialect case rules for quoted names, plain DDL,
syntax the dialect lacks). Expectations worked out by hand."""

from __future__ import annotations

from pathlib import Path

from atlas_sync.lineage.readers.sql import READER
from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import one, triples


def test_clickhouse_dictget_reads_the_dictionary() -> None:
    st = one(
        "INSERT INTO mart.enriched SELECT e.id, dictGet('geo.country_dict', 'name', e.country_id) AS country "
        "FROM raw.events e",
        "clickhouse",
    )
    assert [r.id for r in st.reads] == ["raw.events", "geo.country_dict"]
    assert ("raw.events.id", "mart.enriched.id", "IDENTITY") in triples(st)


def test_snowflake_semantic_view_is_read() -> None:
    st = one(
        "CREATE TABLE rpt.revenue AS SELECT * FROM SEMANTIC_VIEW(db.sem.sales METRICS total_revenue "
        "DIMENSIONS customer.region)",
        "snowflake",
    )
    assert [r.id for r in st.reads] == ["db.sem.sales"]
    assert [w.id for w in st.writes] == ["rpt.revenue"]


def test_tables_passed_to_table_functions_are_read_and_models_are_not() -> None:
    st = one(
        "CREATE TABLE ds.scored AS SELECT * FROM ML.PREDICT(MODEL ds.churn, TABLE ds.customers)", "bigquery"
    )
    assert [r.id for r in st.reads] == ["ds.customers"]  # ds.churn is a model, not data
    st = one("INSERT INTO o.out SELECT * FROM TABLE(my_udtf(TABLE(db.s.src)))", "snowflake")
    assert [r.id for r in st.reads] == ["db.s.src"]


def test_quoted_names_follow_the_dialects_case_rules() -> None:
    schema = {"shop.orders": ["TotalPrice", "id"]}
    # Snowflake folds unquoted names to upper case: "TOTALPRICE" is totalprice, "TotalPrice" is not
    st = one('INSERT INTO shop.t SELECT "TOTALPRICE", "ID" FROM "SHOP"."ORDERS"', "snowflake", schema=schema)
    assert [r.id for r in st.reads] == ["shop.orders"]
    assert ("shop.orders.totalprice", "shop.t.totalprice", "IDENTITY") in triples(st)
    st = one('INSERT INTO shop.t SELECT "TotalPrice" FROM shop.orders', "snowflake")
    assert ("shop.orders.TotalPrice", "shop.t.TotalPrice", "IDENTITY") in triples(st)
    # T-SQL names are case-insensitive: [Sales].[Orders] is sales.orders
    st = one("INSERT INTO dbo.t (x) SELECT [Amount] FROM [Sales].[Orders]", "tsql")
    assert triples(st) == {("sales.orders.amount", "dbo.t.x", "IDENTITY")}
    # Postgres keeps a quoted mixed-case name
    st = one('INSERT INTO t (x) SELECT "Amount" FROM "Sales".orders', "postgres")
    assert triples(st) == {("Sales.orders.Amount", "t.x", "IDENTITY")}


def test_a_plain_create_table_is_a_dataset_with_its_typed_columns(tmp_path: Path) -> None:
    path = tmp_path / "ddl.sql"
    path.write_text(
        "CREATE TABLE sales.orders (id BIGINT NOT NULL, amount DECIMAL(12, 2), PRIMARY KEY (id));\n"
        "CREATE TEMP TABLE scratch (a INT);\n",
        encoding="utf-8",
    )
    graph = READER.read([str(path)], dialect="postgres")
    assert graph.processes == []
    assert [d.id for d in graph.datasets] == ["sales.orders"]  # the temporary table is no dataset
    orders = graph.datasets[0]
    assert [(c.name, c.type) for c in orders.columns] == [("id", "BIGINT"), ("amount", "DECIMAL(12, 2)")]


def test_syntax_the_dialect_lacks_is_a_warning_naming_the_statement() -> None:
    (st,) = analyze_sql("SELECT 1;\nINSERT INTO a.b SELECT x FROM c.d ORDER BY x LIMIT 5", dialect="tsql")[1:]
    assert st.writes and not st.error
    (warning,) = st.problems
    assert warning["code"] == "dialect-syntax" and "LIMIT" in warning["message"] and warning["line"] == 2
    (top,) = analyze_sql("INSERT INTO a.b SELECT TOP 5 x FROM c.d ORDER BY x", dialect="tsql")
    assert top.problems == []


def test_a_parenthesized_join_group_keeps_its_join_condition() -> None:
    # DuckDB and Postgres print view definitions with FROM (a JOIN b ON ...)
    st = one(
        "INSERT INTO x SELECT c.name FROM (sales.orders AS o INNER JOIN customers AS c "
        "ON ((c.id = o.customer_id))) WHERE o.status = 'paid'",
        "duckdb",
    )
    assert triples(st) == {
        ("customers.name", "x.name", "IDENTITY"),
        ("customers.id", "x.*", "JOIN"),
        ("sales.orders.customer_id", "x.*", "JOIN"),
        ("sales.orders.status", "x.*", "FILTER"),
    }
