"""Column edges that depend on positions or generated names (issue 43): a PIVOT over ``*``
(Snowflake names the pivoted columns after the quoted values), Hive dynamic partitions (the last
outputs of the query fill the partition columns), and a MERGE's INSERT without a column list
(the values fill the target's columns in order). Expectations worked out by hand from the SQL."""

from __future__ import annotations

from .conftest import one, triples

SALES = {"sales.s": ["region", "quarter", "amount"]}


def test_snowflake_pivot_over_star_of_a_table_names_columns_after_the_quoted_values() -> None:
    st = one(
        "CREATE TABLE mart.p AS SELECT * FROM sales.s PIVOT (SUM(amount) FOR quarter IN ('Q1', 'Q2'))",
        "snowflake",
        schema=SALES,
    )
    assert st.writes[0].columns == ["region", "'Q1'", "'Q2'"]
    assert triples(st) == {
        ("sales.s.region", "mart.p.region", "IDENTITY"),
        ("sales.s.amount", "mart.p.'Q1'", "AGGREGATION"),
        ("sales.s.quarter", "mart.p.'Q1'", "CONDITIONAL"),
        ("sales.s.amount", "mart.p.'Q2'", "AGGREGATION"),
        ("sales.s.quarter", "mart.p.'Q2'", "CONDITIONAL"),
    }


def test_snowflake_pivot_over_star_of_a_subquery() -> None:
    st = one(
        "CREATE TABLE mart.p AS SELECT * FROM (SELECT region, quarter, amount FROM sales.s) "
        "PIVOT (SUM(amount) FOR quarter IN ('Q1', 'Q2')) ORDER BY region",
        "snowflake",
    )
    assert triples(st) == {
        ("sales.s.region", "mart.p.region", "IDENTITY"),
        ("sales.s.amount", "mart.p.'Q1'", "AGGREGATION"),
        ("sales.s.quarter", "mart.p.'Q1'", "CONDITIONAL"),
        ("sales.s.amount", "mart.p.'Q2'", "AGGREGATION"),
        ("sales.s.quarter", "mart.p.'Q2'", "CONDITIONAL"),
        ("sales.s.region", "mart.p.*", "SORT"),
    }


def test_pivot_over_star_with_value_aliases() -> None:
    st = one(
        "INSERT INTO mart.p SELECT * FROM sales.s PIVOT (SUM(amount) FOR quarter IN ('Q1' AS q1, 'Q2' AS q2))",
        "spark",
        schema={**SALES, "mart.p": ["region", "first_q", "second_q"]},
    )
    assert triples(st) == {
        ("sales.s.region", "mart.p.region", "IDENTITY"),
        ("sales.s.amount", "mart.p.first_q", "AGGREGATION"),
        ("sales.s.quarter", "mart.p.first_q", "CONDITIONAL"),
        ("sales.s.amount", "mart.p.second_q", "AGGREGATION"),
        ("sales.s.quarter", "mart.p.second_q", "CONDITIONAL"),
    }


def test_hive_dynamic_partition_takes_the_last_output_whatever_its_name() -> None:
    st = one("INSERT OVERWRITE TABLE dw.t PARTITION (dt) SELECT a, b, to_date(ts) FROM stg.s", "hive")
    assert st.problems == []
    assert st.writes[0].columns == ["a", "b", "dt"]
    assert triples(st) == {
        ("stg.s.a", "dw.t.a", "IDENTITY"),
        ("stg.s.b", "dw.t.b", "IDENTITY"),
        ("stg.s.ts", "dw.t.dt", "TRANSFORMATION"),
    }


def test_hive_dynamic_partition_output_named_differently_is_not_a_new_column() -> None:
    st = one("INSERT INTO TABLE dw.t PARTITION (dt) SELECT a, b, ds FROM stg.s", "hive")
    assert triples(st) == {
        ("stg.s.a", "dw.t.a", "IDENTITY"),
        ("stg.s.b", "dw.t.b", "IDENTITY"),
        ("stg.s.ds", "dw.t.dt", "IDENTITY"),
    }


def test_hive_static_and_dynamic_partitions_with_known_columns_without_partition_columns() -> None:
    # the schema lists the data columns; the partition columns follow them
    st = one(
        "INSERT OVERWRITE TABLE dw.t PARTITION (country = 'US', dt) SELECT a, b, d FROM stg.s",
        "hive",
        schema={"dw.t": ["x", "y"]},
    )
    assert triples(st) == {
        ("stg.s.a", "dw.t.x", "IDENTITY"),
        ("stg.s.b", "dw.t.y", "IDENTITY"),
        ("stg.s.d", "dw.t.dt", "IDENTITY"),
    }


def test_hive_two_dynamic_partitions_in_clause_order() -> None:
    st = one(
        "INSERT OVERWRITE TABLE dw.t PARTITION (y, m) SELECT v, year(ts), month(ts) FROM stg.s",
        "hive",
        schema={"dw.t": ["v", "y", "m"]},
    )
    assert triples(st) == {
        ("stg.s.v", "dw.t.v", "IDENTITY"),
        ("stg.s.ts", "dw.t.y", "TRANSFORMATION"),
        ("stg.s.ts", "dw.t.m", "TRANSFORMATION"),
    }


def test_merge_insert_without_column_list_fills_known_target_columns_in_order() -> None:
    st = one(
        "MERGE INTO dw.t USING stg.s s ON dw.t.id = s.key "
        "WHEN NOT MATCHED THEN INSERT VALUES (s.key, s.val + 1)",
        "snowflake",
        schema={"dw.t": ["id", "v"]},
    )
    assert st.problems == []
    assert triples(st) == {
        ("stg.s.key", "dw.t.id", "IDENTITY"),
        ("stg.s.val", "dw.t.v", "TRANSFORMATION"),
        ("stg.s.key", "dw.t.*", "JOIN"),
        ("dw.t.id", "dw.t.*", "JOIN"),
    }


def test_tsql_merge_positional_insert_under_a_condition() -> None:
    st = one(
        "MERGE dw.t AS t USING stg.s AS s ON t.id = s.id "
        "WHEN NOT MATCHED BY TARGET AND s.active = 1 THEN INSERT VALUES (s.id, s.name);",
        "tsql",
        schema={"dw.t": ["id", "label"]},
    )
    assert triples(st) == {
        ("stg.s.id", "dw.t.id", "IDENTITY"),
        ("stg.s.name", "dw.t.label", "IDENTITY"),
        ("stg.s.id", "dw.t.*", "JOIN"),
        ("dw.t.id", "dw.t.*", "JOIN"),
        ("stg.s.active", "dw.t.*", "FILTER"),
    }


def test_merge_positional_insert_after_create_table_in_the_same_script() -> None:
    from atlas_sync.lineage.sql.script import analyze_sql

    create, merge = analyze_sql(
        "CREATE TABLE dw.t (id INT, label VARCHAR);\n"
        "MERGE INTO dw.t t USING stg.s s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.name);",
        dialect="snowflake",
    )
    assert ("stg.s.name", "dw.t.label", "IDENTITY") in triples(merge)
    assert ("stg.s.name", "dw.t.name", "IDENTITY") not in triples(merge)
