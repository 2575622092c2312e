"""Which statements move data, and where to: INSERT, CTAS, views, MERGE, UPDATE, multi-insert,
SELECT INTO, COPY, plain SELECT, DDL, VALUES."""

from __future__ import annotations

from atlas_sync.lineage.sql.script import analyze_sql

from .conftest import DIRECT, one, triples


def test_insert_with_column_list_maps_outputs_by_position() -> None:
    st = one("INSERT INTO mart.t (x, y) SELECT b, a FROM raw.s", "postgres")
    assert triples(st) == {("raw.s.b", "mart.t.x", "IDENTITY"), ("raw.s.a", "mart.t.y", "IDENTITY")}
    assert st.writes[0].columns == ["x", "y"]


def test_insert_without_column_list_uses_the_known_target_columns_by_position() -> None:
    st = one("INSERT INTO t SELECT a + 1, b FROM s", "spark", schema={"t": ["p", "q"]})
    assert triples(st) == {("s.a", "t.p", "TRANSFORMATION"), ("s.b", "t.q", "IDENTITY")}


def test_insert_overwrite_with_partition_is_an_insert() -> None:
    st = one("INSERT OVERWRITE TABLE db.t PARTITION (dt='2024-01-01') SELECT a FROM db.s", "hive")
    assert st.type == "INSERT OVERWRITE"
    assert triples(st) == {("db.s.a", "db.t.a", "IDENTITY")}


def test_insert_by_name_maps_by_name() -> None:
    st = one("INSERT INTO t BY NAME SELECT b, a FROM s", "spark", schema={"t": ["a", "b"]})
    assert triples(st) == {("s.a", "t.a", "IDENTITY"), ("s.b", "t.b", "IDENTITY")}


def test_ctas_names_target_columns_after_the_select_and_reports_unnamed_ones() -> None:
    st = one("CREATE TABLE t2 AS SELECT a, sum(b) AS total, a * 2 FROM t1 GROUP BY a", "trino")
    assert st.type == "CREATE TABLE AS SELECT"
    assert triples(st, DIRECT) == {("t1.a", "t2.a", "IDENTITY"), ("t1.b", "t2.total", "AGGREGATION")}
    assert [p["code"] for p in st.problems] == ["unnamed-column"]
    assert st.writes[0].columns == ["a", "total"]


def test_create_view_gives_a_view_dataset_with_column_lineage() -> None:
    st = one("CREATE VIEW v (k, n) AS SELECT id, upper(name) FROM t", "postgres")
    assert st.type == "CREATE VIEW"
    assert st.writes[0].kind == "view"
    assert triples(st) == {("t.id", "v.k", "IDENTITY"), ("t.name", "v.n", "TRANSFORMATION")}


def test_materialized_view_is_typed_as_such() -> None:
    st = one("CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) AS c FROM t GROUP BY a", "postgres")
    assert st.type == "CREATE MATERIALIZED VIEW"
    assert ("t.a", "mv.a", "IDENTITY") in triples(st)
    assert ("t.a", "mv.*", "GROUP_BY") in triples(st)


def test_merge_maps_update_and_insert_branches_and_the_on_condition_is_a_join() -> None:
    st = one(
        "MERGE INTO tgt t USING src s ON t.id = s.id "
        "WHEN MATCHED AND s.deleted = 0 THEN UPDATE SET t.v = s.v * 2 "
        "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)",
        "databricks",
    )
    assert st.type == "MERGE"
    assert triples(st, DIRECT) == {
        ("src.v", "tgt.v", "TRANSFORMATION"),
        ("src.v", "tgt.v", "IDENTITY"),
        ("src.id", "tgt.id", "IDENTITY"),
    }
    assert triples(st, {"JOIN"}) == {("tgt.id", "tgt.*", "JOIN"), ("src.id", "tgt.*", "JOIN")}
    assert triples(st, {"FILTER"}) == {("src.deleted", "tgt.*", "FILTER")}
    assert [w.id for w in st.writes] == ["tgt"]


def test_merge_using_a_subquery_traces_through_it() -> None:
    st = one(
        "MERGE INTO tgt USING (SELECT id, amount * 100 AS cents FROM raw) s ON tgt.id = s.id "
        "WHEN MATCHED THEN UPDATE SET cents = s.cents",
        "snowflake",
    )
    assert ("raw.amount", "tgt.cents", "TRANSFORMATION") in triples(st)
    assert ("raw.id", "tgt.*", "JOIN") in triples(st)


def test_update_from_reads_the_other_table() -> None:
    st = one("UPDATE acc SET bal = acc.bal + p.amt FROM pay p WHERE acc.id = p.acc_id AND p.ok", "postgres")
    assert st.type == "UPDATE"
    assert triples(st, DIRECT) == {
        ("acc.bal", "acc.bal", "TRANSFORMATION"),
        ("pay.amt", "acc.bal", "TRANSFORMATION"),
    }
    assert triples(st, {"JOIN"}) == {("acc.id", "acc.*", "JOIN"), ("pay.acc_id", "acc.*", "JOIN")}
    assert triples(st, {"FILTER"}) == {("pay.ok", "acc.*", "FILTER")}


def test_mysql_update_join_and_tsql_update_alias_find_the_real_target() -> None:
    mysql = one("UPDATE t JOIN s ON t.id = s.id SET t.v = s.v", "mysql")
    assert triples(mysql, DIRECT) == {("s.v", "t.v", "IDENTITY")}
    tsql = one("UPDATE x SET v = s.v FROM dbo.t AS x JOIN dbo.s AS s ON x.id = s.id", "tsql")
    assert [w.id for w in tsql.writes] == ["dbo.t"]
    assert triples(tsql, DIRECT) == {("dbo.s.v", "dbo.t.v", "IDENTITY")}


def test_snowflake_insert_all_with_conditions_writes_each_target() -> None:
    st = one(
        "INSERT ALL WHEN amt > 100 THEN INTO big (id, amt) VALUES (id, amt) "
        "ELSE INTO small (id, amt) VALUES (id, amt) "
        "SELECT o.id, o.amount AS amt FROM orders o",
        "snowflake",
    )
    assert [w.id for w in st.writes] == ["big", "small"]
    assert ("orders.amount", "big.amt", "IDENTITY") in triples(st)
    assert ("orders.id", "small.id", "IDENTITY") in triples(st)
    assert ("orders.amount", "big.*", "FILTER") in triples(st)
    assert ("orders.amount", "small.*", "FILTER") in triples(st)


def test_hive_multi_insert_shares_the_from_clause() -> None:
    st = one(
        "FROM src s INSERT OVERWRITE TABLE a SELECT s.x WHERE s.k > 1 "
        "INSERT INTO TABLE b SELECT s.y, count(*) AS n GROUP BY s.y",
        "hive",
    )
    assert [w.id for w in st.writes] == ["a", "b"]
    assert triples(st) == {
        ("src.x", "a.x", "IDENTITY"),
        ("src.k", "a.*", "FILTER"),
        ("src.y", "b.y", "IDENTITY"),
        ("src.y", "b.*", "GROUP_BY"),
    }


def test_select_into_creates_the_target() -> None:
    st = one("SELECT a, b + 1 AS c INTO newt FROM old WHERE flag = 1", "tsql")
    assert st.type == "SELECT INTO"
    assert triples(st) == {
        ("old.a", "newt.a", "IDENTITY"),
        ("old.b", "newt.c", "TRANSFORMATION"),
        ("old.flag", "newt.*", "FILTER"),
    }


def test_copy_loads_files_into_a_table_and_unloads_a_query_to_files() -> None:
    load = one("COPY INTO mytable FROM 's3://bucket/in/' FILE_FORMAT = (TYPE = CSV)", "snowflake")
    assert [(r.name, r.kind) for r in load.reads] == [("s3://bucket/in/", "file")]
    assert [w.id for w in load.writes] == ["mytable"]
    unload = one("COPY (SELECT a FROM t) TO '/tmp/out.csv'", "postgres")
    assert [r.id for r in unload.reads] == ["t"]
    assert [(w.name, w.kind) for w in unload.writes] == [("/tmp/out.csv", "file")]


def test_plain_select_reads_tables_only() -> None:
    st = one("SELECT o.a FROM orders o JOIN (SELECT id FROM customers) c ON o.cid = c.id", "mysql")
    assert st.type == "SELECT"
    assert {r.id for r in st.reads} == {"orders", "customers"}
    assert st.writes == [] and st.edges == [] and not st.lineage_bearing


def test_ddl_without_data_flow_gives_nothing() -> None:
    results = analyze_sql(
        "CREATE TABLE t (a INT); ALTER TABLE t ADD COLUMN b INT; DROP TABLE old; TRUNCATE TABLE t",
        dialect="postgres",
    )
    assert all(not r.reads and not r.writes and not r.edges and not r.error for r in results)


def test_values_only_insert_is_a_write_without_lineage() -> None:
    st = one("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')", "mysql")
    assert st.type == "INSERT VALUES"
    assert [w.id for w in st.writes] == ["t"]
    assert st.reads == [] and st.edges == []


def test_insert_overwrite_directory_writes_a_file_dataset() -> None:
    st = one("INSERT OVERWRITE DIRECTORY '/data/out' SELECT a FROM t", "hive")
    assert [(w.name, w.kind) for w in st.writes] == [("/data/out", "file")]
    assert [r.id for r in st.reads] == ["t"]


def test_clickhouse_materialized_view_to_a_table_writes_that_table() -> None:
    st = one(
        "CREATE MATERIALIZED VIEW mv TO db.target AS SELECT a, count() AS c FROM db.src GROUP BY a",
        "clickhouse",
    )
    assert [w.id for w in st.writes] == ["db.target"]
    assert ("db.src.a", "db.target.a", "IDENTITY") in triples(st)


def test_clone_and_insert_table_copy_every_column() -> None:
    clone, insert = analyze_sql(
        "CREATE TABLE t2 CLONE t1; INSERT INTO t3 TABLE t1",
        dialect="snowflake",
        schema={"t1": ["a", "b"], "t3": ["x", "y"]},
    )
    assert clone.type == "CREATE TABLE CLONE"
    assert triples(clone) == {("t1.a", "t2.a", "IDENTITY"), ("t1.b", "t2.b", "IDENTITY")}
    assert triples(insert) == {("t1.a", "t3.x", "IDENTITY"), ("t1.b", "t3.y", "IDENTITY")}


def test_select_into_a_variable_is_a_plain_read() -> None:
    st = one("SELECT a INTO @v FROM t", "mysql")
    assert st.type == "SELECT" and [r.id for r in st.reads] == ["t"] and st.writes == [] and not st.error


def test_static_partition_columns_are_not_filled_by_the_query() -> None:
    st = one(
        "INSERT OVERWRITE TABLE t PARTITION (dt='2024-01-01') SELECT x, y FROM s",
        "hive",
        schema={"t": ["a", "b", "dt"]},
    )
    assert triples(st) == {("s.x", "t.a", "IDENTITY"), ("s.y", "t.b", "IDENTITY")}
    assert st.problems == []


def test_spark_cache_table_as_select_is_a_temporary_view() -> None:
    cache, insert = analyze_sql(
        "CACHE TABLE c AS SELECT a FROM s; INSERT INTO t SELECT a FROM c", dialect="spark"
    )
    assert cache.type == "CACHE TABLE" and cache.writes[0].kind == "intermediate"
    assert triples(insert) == {("c.a", "t.a", "IDENTITY")}


def test_update_with_tuple_assignment_maps_each_column() -> None:
    st = one("UPDATE t SET (a, b) = (SELECT x, y FROM s WHERE s.id = t.id), c = d + 1", "postgres")
    assert triples(st, DIRECT) == {
        ("s.x", "t.a", "IDENTITY"),
        ("s.y", "t.b", "IDENTITY"),
        ("t.d", "t.c", "TRANSFORMATION"),
    }
    assert ("s.id", "t.a", "JOIN") in triples(st)


def test_mysql_replace_into_select_moves_data_like_insert() -> None:
    st = one("REPLACE INTO r (id, name) SELECT cid, cname FROM c", "mysql")
    assert triples(st) == {("c.cid", "r.id", "IDENTITY"), ("c.cname", "r.name", "IDENTITY")}
