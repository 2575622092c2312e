"""Temporary tables and table variables in procedure bodies: one rule in T-SQL, Snowflake and
PostgreSQL (docs/sql-reader.md, "Temporary tables"). Written and read by the body: intermediate,
lineage passes through to the real tables. Written and never read: kept, as a temporary dataset
(kind ``intermediate``). Read and never written (the caller filled it): kept as an input. Table-valued
functions are not tables. Expectations worked out by hand."""

from __future__ import annotations

from atlas_sync.lineage.sql.analyze import StatementLineage
from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import triples


def only(sql: str, dialect: str) -> StatementLineage:
    results = analyze_sql(sql, dialect=dialect)
    assert len(results) == 1, [(r.type, r.text[:40]) for r in results]
    return results[0]


def kinds(refs: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(r.id, r.kind) for r in refs]


def test_tsql_temp_written_and_read_is_composed_away_written_only_is_kept() -> None:
    st = only(
        """CREATE PROCEDURE dw.p AS
BEGIN
  SELECT id, name INTO #stage FROM stg.customers WHERE active = 1
  INSERT INTO dw.customers (id, name) SELECT id, name FROM #stage
  SELECT id, total INTO #report FROM stg.orders
END""",
        "tsql",
    )
    assert kinds(st.reads) == [("stg.customers", "table"), ("stg.orders", "table")]
    assert kinds(st.writes) == [("dw.customers", "table"), ('"#report"', "intermediate")]
    assert st.writes[1].columns == ["id", "total"]
    assert triples(st) == {
        ("stg.customers.id", "dw.customers.id", "IDENTITY"),
        ("stg.customers.name", "dw.customers.name", "IDENTITY"),
        ("stg.customers.active", "dw.customers.*", "FILTER"),
        ("stg.orders.id", '"#report".id', "IDENTITY"),
        ("stg.orders.total", '"#report".total', "IDENTITY"),
    }


def test_tsql_table_variable_written_only_is_kept_and_one_read_is_composed() -> None:
    st = only(
        """CREATE PROCEDURE dw.p AS
BEGIN
  DECLARE @ids TABLE (id INT)
  DECLARE @log TABLE (id INT, at DATETIME)
  INSERT INTO @ids (id) SELECT id FROM stg.x
  INSERT INTO dw.y (id) SELECT id FROM @ids
  INSERT INTO @log (id, at) SELECT id, GETDATE() FROM stg.x
END""",
        "tsql",
    )
    assert kinds(st.writes) == [("dw.y", "table"), ('"@log"', "intermediate")]
    assert triples(st) == {("stg.x.id", "dw.y.id", "IDENTITY"), ("stg.x.id", '"@log".id', "IDENTITY")}


def test_tsql_temp_filled_by_the_caller_is_an_input() -> None:
    st = only(
        """CREATE PROCEDURE dw.p AS
INSERT INTO dw.from_caller (id) SELECT id FROM #caller
GO""",
        "tsql",
    )
    assert kinds(st.reads) == [('"#caller"', "intermediate")]
    assert triples(st) == {('"#caller".id', "dw.from_caller.id", "IDENTITY")}


def test_tsql_temp_is_not_a_table_of_the_default_schema() -> None:
    results = analyze_sql(
        "SELECT a INTO #t FROM stg.s;\nINSERT INTO dw.t (a) SELECT a FROM #t;",
        dialect="tsql",
        default_schema="dbo",
    )
    assert kinds(results[0].writes) == [('"#t"', "intermediate")]
    assert kinds(results[1].reads) == [('"#t"', "intermediate")]


def test_snowflake_temporary_table_same_rule() -> None:
    st = only(
        """CREATE OR REPLACE PROCEDURE mart.p()
RETURNS VARCHAR LANGUAGE SQL AS
$$
BEGIN
  CREATE TEMPORARY TABLE stage AS SELECT id, amount FROM raw.orders;
  INSERT INTO mart.totals (id, amount) SELECT id, amount FROM stage;
  CREATE TEMPORARY TABLE leftover AS SELECT id FROM raw.refunds;
  RETURN 'ok';
END;
$$;""",
        "snowflake",
    )
    assert kinds(st.reads) == [("raw.orders", "table"), ("raw.refunds", "table")]
    assert kinds(st.writes) == [("mart.totals", "table"), ("leftover", "intermediate")]
    assert triples(st) == {
        ("raw.orders.id", "mart.totals.id", "IDENTITY"),
        ("raw.orders.amount", "mart.totals.amount", "IDENTITY"),
        ("raw.refunds.id", "leftover.id", "IDENTITY"),
    }


def test_postgres_temp_table_same_rule() -> None:
    st = only(
        """CREATE PROCEDURE mart.p() LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE stage AS SELECT id, amount FROM sales.orders;
  INSERT INTO mart.totals (id, amount) SELECT id, amount FROM stage;
  CREATE TEMP TABLE leftover AS SELECT id FROM sales.refunds;
END $$;""",
        "postgres",
    )
    assert kinds(st.writes) == [("mart.totals", "table"), ("leftover", "intermediate")]
    assert ("sales.orders.amount", "mart.totals.amount", "IDENTITY") in triples(st)
    assert ("sales.refunds.id", "leftover.id", "IDENTITY") in triples(st)


def test_tsql_table_valued_functions_are_not_tables() -> None:
    st = only(
        """CREATE PROCEDURE dw.p AS
BEGIN
  INSERT INTO dw.t (id, v)
  SELECT f.id, s.v FROM dbo.fn_active(1) AS f
  JOIN stg.s AS s ON s.id = f.id
  CROSS APPLY dbo.fn_split(s.tags, ',') AS x
END""",
        "tsql",
    )
    assert kinds(st.reads) == [("stg.s", "table")]
    assert ("stg.s.v", "dw.t.v", "IDENTITY") in triples(st)


def test_result_set_select_after_dml_is_a_read() -> None:
    st = only(
        """CREATE PROCEDURE dw.p AS
BEGIN
  UPDATE dw.t SET x = s.x FROM stg.s s WHERE s.id = dw.t.id
  SELECT id, x FROM dw.summary WHERE x > 0
END""",
        "tsql",
    )
    assert kinds(st.reads) == [("stg.s", "table"), ("dw.summary", "table")]
    assert kinds(st.writes) == [("dw.t", "table")]
