"""Materialized views with engine options, VALUES with subqueries, SELECT INTO over set operations,
statement-level CTEs of UPDATE/MERGE/DELETE, DELETE with other sources, CREATE TABLE LIKE/CLONE,
and the rule that a statement's target is never one of its own table-level inputs."""

from __future__ import annotations

import pytest

from atlas_sync.lineage.sql.opaque import reduce_create
from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import DIRECT, one, triples

SALES = {"sales": ["region", "amount"]}


# ---------------------------------------------------------------- materialized views
@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        (
            "postgres",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS mv WITH (fillfactor = 70) TABLESPACE pg_default "
            "AS SELECT region, sum(amount) AS total FROM sales GROUP BY region WITH NO DATA",
        ),
        (
            "oracle",
            "CREATE MATERIALIZED VIEW mv BUILD IMMEDIATE REFRESH FAST ON COMMIT ENABLE QUERY REWRITE "
            "AS SELECT region, SUM(amount) total FROM sales GROUP BY region",
        ),
        (
            "snowflake",
            "CREATE OR REPLACE SECURE MATERIALIZED VIEW mv COMMENT = 'by region' CLUSTER BY (region) "
            "AS SELECT region, SUM(amount) AS total FROM sales GROUP BY region",
        ),
        (
            "bigquery",
            "CREATE MATERIALIZED VIEW mv OPTIONS (enable_refresh = true, refresh_interval_minutes = 60) "
            "AS (SELECT region, SUM(amount) AS total FROM sales GROUP BY region)",
        ),
        (
            "clickhouse",
            "CREATE MATERIALIZED VIEW mv ENGINE = SummingMergeTree ORDER BY region POPULATE "
            "AS SELECT region, sum(amount) AS total FROM sales GROUP BY region",
        ),
        (
            "redshift",
            "CREATE MATERIALIZED VIEW mv BACKUP NO DISTSTYLE KEY DISTKEY(region) AUTO REFRESH YES "
            "AS SELECT region, SUM(amount) AS total FROM sales GROUP BY region",
        ),
    ],
)
def test_materialized_view_with_storage_or_refresh_options_gives_lineage_like_a_view(
    dialect: str, sql: str
) -> None:
    st = one(sql, dialect)
    assert st.type == "CREATE MATERIALIZED VIEW" and not st.error
    assert [(w.id, w.kind) for w in st.writes] == [("mv", "view")]
    assert [r.id for r in st.reads] == ["sales"]
    assert triples(st) == {
        ("sales.region", "mv.region", "IDENTITY"),
        ("sales.amount", "mv.total", "AGGREGATION"),
        ("sales.region", "mv.*", "GROUP_BY"),
    }


def test_materialized_view_column_list_names_the_view_columns_despite_options() -> None:
    st = one(
        "CREATE MATERIALIZED VIEW mv (r, a) BUILD DEFERRED REFRESH ON DEMAND AS SELECT region, amount FROM sales",
        "oracle",
    )
    assert triples(st) == {("sales.region", "mv.r", "IDENTITY"), ("sales.amount", "mv.a", "IDENTITY")}


def test_clickhouse_materialized_view_with_engine_and_to_writes_the_to_table() -> None:
    st = one(
        "CREATE MATERIALIZED VIEW IF NOT EXISTS db.mv TO db.target ENGINE = MergeTree ORDER BY a "
        "AS SELECT a FROM db.s",
        "clickhouse",
    )
    assert [w.id for w in st.writes] == ["db.target"]
    assert triples(st) == {("db.s.a", "db.target.a", "IDENTITY")}


# ---------------------------------------------------------------- INSERT ... VALUES with subqueries
@pytest.mark.parametrize("dialect", ["postgres", "mysql", "snowflake", "tsql", "oracle"])
def test_values_subqueries_are_sources_column_by_column(dialect: str) -> None:
    st = one(
        "INSERT INTO audit (id, total, note) VALUES "
        "(1, (SELECT SUM(amount) FROM sales WHERE region = 'eu'), 'eu total')",
        dialect,
    )
    assert st.type == "INSERT VALUES"
    assert [r.id for r in st.reads] == ["sales"] and [w.id for w in st.writes] == ["audit"]
    assert triples(st) == {
        ("sales.amount", "audit.total", "AGGREGATION"),
        ("sales.region", "audit.total", "FILTER"),
    }
    assert st.problems == []


def test_each_values_row_contributes_its_own_subqueries() -> None:
    st = one(
        "INSERT INTO limits (lo, hi) VALUES ((SELECT MIN(a) FROM s1), 10), (0, (SELECT MAX(b) FROM s2))",
        "mysql",
    )
    assert {r.id for r in st.reads} == {"s1", "s2"}
    assert triples(st, DIRECT) == {("s1.a", "limits.lo", "AGGREGATION"), ("s2.b", "limits.hi", "AGGREGATION")}


def test_values_subquery_without_column_list_uses_the_known_target_columns() -> None:
    st = one(
        "INSERT INTO audit VALUES (7, (SELECT max(amount) FROM sales))",
        "postgres",
        schema={"audit": ["id", "top"]},
    )
    assert triples(st) == {("sales.amount", "audit.top", "AGGREGATION")}


# ---------------------------------------------------------------- SELECT INTO over set operations
@pytest.mark.parametrize(
    ("dialect", "op", "right_kind"),
    [
        ("tsql", "UNION", "IDENTITY"),
        ("tsql", "UNION ALL", "IDENTITY"),
        ("postgres", "UNION", "IDENTITY"),
        ("postgres", "EXCEPT", "FILTER"),
        ("tsql", "INTERSECT", "FILTER"),
        ("redshift", "UNION ALL", "IDENTITY"),
    ],
)
def test_select_into_over_a_set_operation_writes_the_target(dialect: str, op: str, right_kind: str) -> None:
    st = one(f"SELECT id, name INTO people FROM staff {op} SELECT id, name FROM contractors", dialect)
    assert st.type == "SELECT INTO"
    assert [w.id for w in st.writes] == ["people"]
    assert {r.id for r in st.reads} == {"staff", "contractors"}
    assert ("staff.id", "people.id", "IDENTITY") in triples(st)
    if right_kind == "IDENTITY":
        assert ("contractors.name", "people.name", "IDENTITY") in triples(st)
    else:
        assert ("contractors.id", "people.*", "FILTER") in triples(st)


def test_select_into_temp_over_a_set_operation_is_an_intermediate() -> None:
    st = one("SELECT id INTO TEMP ids FROM a UNION SELECT id FROM b", "postgres")
    assert [(w.id, w.kind) for w in st.writes] == [("ids", "intermediate")]


# ---------------------------------------------------------------- CTEs of UPDATE / MERGE / DELETE
@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        (
            "postgres",
            "WITH s AS (SELECT id, sum(amount) AS total FROM sales GROUP BY id) "
            "UPDATE accounts a SET total = s.total FROM s WHERE a.id = s.id",
        ),
        (
            "tsql",
            "WITH s AS (SELECT id, SUM(amount) AS total FROM sales GROUP BY id) "
            "UPDATE a SET a.total = s.total FROM accounts a JOIN s ON a.id = s.id",
        ),
        (
            "snowflake",
            "WITH s AS (SELECT id, SUM(amount) AS total FROM sales GROUP BY id) "
            "UPDATE accounts SET total = s.total FROM s WHERE accounts.id = s.id",
        ),
        (
            "sqlite",
            "WITH s AS (SELECT id, SUM(amount) AS total FROM sales GROUP BY id) "
            "UPDATE accounts SET total = s.total FROM s WHERE accounts.id = s.id",
        ),
    ],
)
def test_cte_feeding_update_from_resolves_to_its_table(dialect: str, sql: str) -> None:
    st = one(sql, dialect)
    assert [r.id for r in st.reads] == ["sales"] and [w.id for w in st.writes] == ["accounts"]
    assert ("sales.amount", "accounts.total", "AGGREGATION") in triples(st)
    assert ("sales.id", "accounts.*", "JOIN") in triples(st)
    assert not any(e.source == "s" for e in st.edges)


@pytest.mark.parametrize("dialect", ["snowflake", "tsql", "postgres", "databricks", "oracle"])
def test_cte_feeding_merge_using_resolves_to_its_table(dialect: str) -> None:
    st = one(
        "WITH s AS (SELECT id, v FROM src WHERE ok = 1) "
        "MERGE INTO tgt USING s ON tgt.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v",
        dialect,
    )
    assert [r.id for r in st.reads] == ["src"] and [w.id for w in st.writes] == ["tgt"]
    assert ("src.v", "tgt.v", "IDENTITY") in triples(st)
    assert ("src.ok", "tgt.*", "FILTER") in triples(st)


@pytest.mark.parametrize(
    ("dialect", "sql", "kind"),
    [
        (
            "postgres",
            "WITH old AS (SELECT id FROM stale) DELETE FROM accounts USING old WHERE accounts.id = old.id",
            "JOIN",
        ),
        (
            "postgres",
            "WITH old AS (SELECT id FROM stale) DELETE FROM accounts WHERE id IN (SELECT id FROM old)",
            "FILTER",
        ),
        ("snowflake", "DELETE FROM accounts USING stale WHERE accounts.id = stale.id", "JOIN"),
        ("tsql", "DELETE a FROM accounts a JOIN stale s ON a.id = s.id", "JOIN"),
        ("mysql", "DELETE a FROM accounts a JOIN stale s ON a.id = s.id", "JOIN"),
        (
            "duckdb",
            "DELETE FROM accounts WHERE EXISTS (SELECT 1 FROM stale WHERE stale.id = accounts.id)",
            "FILTER",
        ),
    ],
)
def test_delete_that_reads_other_tables_is_row_level_lineage_from_them(
    dialect: str, sql: str, kind: str
) -> None:
    st = one(sql, dialect)
    assert st.type == "DELETE" and st.lineage_bearing
    assert [r.id for r in st.reads] == ["stale"] and [w.id for w in st.writes] == ["accounts"]
    assert ("stale.id", "accounts.*", kind) in triples(st)
    assert triples(st, DIRECT) == set()  # a DELETE moves no column values


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "snowflake"])
def test_delete_reading_only_its_target_gives_no_lineage(dialect: str) -> None:
    st = one("DELETE FROM accounts WHERE closed < 2020", dialect)
    assert st.type == "DELETE" and not st.lineage_bearing and not st.error
    assert st.reads == [] and st.writes == [] and st.edges == []


# ---------------------------------------------------------------- CREATE TABLE ... LIKE / CLONE
@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("snowflake", "CREATE TABLE db.t LIKE db.s"),
        ("bigquery", "CREATE TABLE db.t LIKE db.s"),
        ("databricks", "CREATE TABLE IF NOT EXISTS db.t LIKE db.s"),
        ("spark", "CREATE TABLE db.t LIKE db.s USING parquet"),
        ("mysql", "CREATE TABLE db.t LIKE db.s"),
        ("mysql", "CREATE TABLE db.t (LIKE db.s)"),
        ("hive", "CREATE EXTERNAL TABLE db.t LIKE db.s LOCATION '/warehouse/t'"),
        ("postgres", "CREATE TABLE db.t (LIKE db.s INCLUDING ALL)"),
        ("redshift", "CREATE TABLE db.t (LIKE db.s INCLUDING DEFAULTS)"),
    ],
)
def test_create_table_like_is_table_level_lineage_and_copies_the_column_names(dialect: str, sql: str) -> None:
    like, insert = analyze_sql(
        f"{sql}; INSERT INTO db.t SELECT * FROM db.u",
        dialect=dialect,
        schema={"db.s": ["a", "b"], "db.u": ["x", "y"]},
    )
    assert like.type == "CREATE TABLE LIKE" and like.lineage_bearing
    assert [r.id for r in like.reads] == ["db.s"] and [w.id for w in like.writes] == ["db.t"]
    assert like.edges == []  # the definition is copied, no row is
    assert like.writes[0].columns == ["a", "b"]
    # Later statements know the columns the LIKE gave the new table.
    assert triples(insert) == {("db.u.x", "db.t.a", "IDENTITY"), ("db.u.y", "db.t.b", "IDENTITY")}


def test_postgres_like_plus_own_columns_lists_both() -> None:
    st = one(
        "CREATE TABLE t (LIKE s INCLUDING DEFAULTS, loaded_at timestamp)", "postgres", schema={"s": ["a"]}
    )
    assert st.writes[0].columns == ["a", "loaded_at"]


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("snowflake", "CREATE OR REPLACE TABLE db.t CLONE db.s AT (OFFSET => -3600)"),
        ("snowflake", "CREATE TRANSIENT TABLE db.t CLONE db.s"),
        ("bigquery", "CREATE TABLE db.t CLONE db.s FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01'"),
        ("bigquery", "CREATE SNAPSHOT TABLE db.t CLONE db.s"),
        ("bigquery", "CREATE TABLE db.t COPY db.s"),
        ("databricks", "CREATE TABLE db.t SHALLOW CLONE db.s VERSION AS OF 3"),
        ("databricks", "CREATE OR REPLACE TABLE db.t DEEP CLONE db.s"),
    ],
)
def test_clone_copies_every_column_of_the_source(dialect: str, sql: str) -> None:
    st = one(sql, dialect, schema={"db.s": ["a", "b"]})
    assert st.type == "CREATE TABLE CLONE" and not st.error
    assert [r.id for r in st.reads] == ["db.s"] and [w.id for w in st.writes] == ["db.t"]
    assert triples(st) == {("db.s.a", "db.t.a", "IDENTITY"), ("db.s.b", "db.t.b", "IDENTITY")}


def test_clone_of_a_table_of_unknown_columns_is_table_level_with_a_warning() -> None:
    st = one("CREATE TABLE t SHALLOW CLONE s", "databricks")
    assert [r.id for r in st.reads] == ["s"] and [w.id for w in st.writes] == ["t"]
    assert st.edges == []
    assert [p["code"] for p in st.problems] == ["unknown-columns"]


# ---------------------------------------------------------------- no table-level self-loops
@pytest.mark.parametrize(
    ("dialect", "sql", "column_edge"),
    [
        ("postgres", "UPDATE t SET x = x + 1", ("t.x", "t.x", "TRANSFORMATION")),
        ("mysql", "UPDATE t SET x = x + 1 WHERE y > 0", ("t.x", "t.x", "TRANSFORMATION")),
        (
            "databricks",
            "MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = t.v + s.v",
            ("t.v", "t.v", "TRANSFORMATION"),
        ),
        (
            "snowflake",
            "MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = t.v + s.v",
            ("t.k", "t.*", "JOIN"),
        ),
        ("hive", "INSERT OVERWRITE TABLE t SELECT DISTINCT x, y FROM t", ("t.x", "t.x", "IDENTITY")),
        ("spark", "INSERT INTO t SELECT x + 1 AS x FROM t", ("t.x", "t.x", "TRANSFORMATION")),
        ("postgres", "INSERT INTO t (x) VALUES ((SELECT max(x) + 1 FROM t))", ("t.x", "t.x", "AGGREGATION")),
    ],
)
def test_a_target_is_never_one_of_its_own_table_level_inputs(
    dialect: str, sql: str, column_edge: tuple[str, str, str]
) -> None:
    st = one(sql, dialect)
    written = {w.id for w in st.writes}
    assert written == {"t"}
    assert not written & {r.id for r in st.reads}
    assert column_edge in triples(st)  # what the target's own columns give stays at column level


def test_merge_keeps_its_source_as_the_only_table_input() -> None:
    st = one("MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v", "snowflake")
    assert [r.id for r in st.reads] == ["s"]


def test_snowflake_copy_grants_is_an_option_not_a_copy_source() -> None:
    reduced = reduce_create("CREATE OR REPLACE TABLE t COPY GRANTS NOLOGGING AS SELECT x FROM s", "snowflake")
    assert reduced is not None and reduced.args.get("clone") is None
    assert reduced.expression is not None and reduced.expression.sql() == "SELECT x FROM s"
