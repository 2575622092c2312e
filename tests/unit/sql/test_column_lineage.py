"""Column lineage through query constructs, and the kind of every edge."""

from __future__ import annotations

from .conftest import DIRECT, one, triples


def test_chained_ctes_without_schema_reach_the_base_table() -> None:
    st = one(
        "WITH a AS (SELECT id, v FROM base), b AS (SELECT id, v * 2 AS w FROM a), "
        "c AS (SELECT id, w FROM b) INSERT INTO out SELECT id, w FROM c",
        "spark",
    )
    assert triples(st) == {("base.id", "out.id", "IDENTITY"), ("base.v", "out.w", "TRANSFORMATION")}


def test_a_cte_used_twice_contributes_through_both_uses() -> None:
    st = one(
        "WITH s AS (SELECT k, amount FROM sales WHERE amount > 0) "
        "INSERT INTO out SELECT x.k, x.amount + y.amount AS total FROM s x JOIN s y ON x.k = y.k",
        "postgres",
    )
    assert triples(st, DIRECT) == {
        ("sales.k", "out.k", "IDENTITY"),
        ("sales.amount", "out.total", "TRANSFORMATION"),
    }
    assert triples(st, {"JOIN", "FILTER"}) == {
        ("sales.k", "out.*", "JOIN"),
        ("sales.amount", "out.*", "FILTER"),
    }


def test_recursive_cte_takes_lineage_from_anchor_and_recursive_member() -> None:
    st = one(
        "WITH RECURSIVE r AS (SELECT id, name FROM tree WHERE parent IS NULL "
        "UNION ALL SELECT t.id, t.name FROM tree t JOIN r ON t.parent = r.id) "
        "INSERT INTO flat SELECT id, name FROM r",
        "postgres",
    )
    assert triples(st, DIRECT) == {("tree.id", "flat.id", "IDENTITY"), ("tree.name", "flat.name", "IDENTITY")}
    assert ("tree.parent", "flat.*", "FILTER") in triples(st)
    assert ("tree.parent", "flat.*", "JOIN") in triples(st)


def test_derived_tables_and_subqueries_in_where_and_select() -> None:
    st = one(
        "INSERT INTO out SELECT d.k, (SELECT max(p.price) FROM prices p WHERE p.k = d.k) AS top "
        "FROM (SELECT k FROM items WHERE active) d "
        "WHERE d.k IN (SELECT k FROM allowed)",
        "spark",
    )
    got = triples(st)
    assert ("items.k", "out.k", "IDENTITY") in got
    assert ("prices.price", "out.top", "AGGREGATION") in got
    # The correlated condition joins the scalar subquery to the outer row: it shapes only that column.
    assert ("prices.k", "out.top", "JOIN") in got
    assert ("items.active", "out.*", "FILTER") in got
    assert ("allowed.k", "out.*", "FILTER") in got
    assert ("items.k", "out.*", "FILTER") in got


def test_set_operations_match_columns_by_position() -> None:
    st = one("INSERT INTO out SELECT a AS x, b AS y FROM t1 UNION ALL SELECT c, d FROM t2", "spark")
    assert triples(st) == {
        ("t1.a", "out.x", "IDENTITY"),
        ("t2.c", "out.x", "IDENTITY"),
        ("t1.b", "out.y", "IDENTITY"),
        ("t2.d", "out.y", "IDENTITY"),
    }


def test_except_and_intersect_take_values_from_the_left_and_filter_with_the_right() -> None:
    st = one(
        "INSERT INTO out SELECT a AS x FROM t1 UNION SELECT c FROM t2 EXCEPT SELECT e FROM t3",
        "postgres",
    )
    assert triples(st) == {
        ("t1.a", "out.x", "IDENTITY"),
        ("t2.c", "out.x", "IDENTITY"),
        ("t3.e", "out.*", "FILTER"),
    }
    both = one("INSERT INTO out SELECT id FROM users INTERSECT SELECT user_id FROM logins", "spark")
    assert triples(both) == {("users.id", "out.id", "IDENTITY"), ("logins.user_id", "out.*", "FILTER")}


def test_lag_and_lead_pick_values_they_do_not_aggregate() -> None:
    st = one(
        "INSERT INTO out SELECT amount - lag(amount) OVER (PARTITION BY uid ORDER BY ts) AS delta FROM p",
        "spark",
    )
    assert triples(st) == {
        ("p.amount", "out.delta", "TRANSFORMATION"),
        ("p.uid", "out.delta", "WINDOW"),
        ("p.ts", "out.delta", "WINDOW"),
    }


def test_join_on_and_using_are_join_dependencies_on_the_whole_target() -> None:
    st = one(
        "INSERT INTO out SELECT o.v, c.n FROM o JOIN c ON o.cid = c.id LEFT JOIN r USING (rid)",
        "trino",
        schema={"o": ["v", "cid", "rid"], "c": ["n", "id"], "r": ["rid", "z"]},
    )
    assert triples(st, {"JOIN"}) == {
        ("o.cid", "out.*", "JOIN"),
        ("c.id", "out.*", "JOIN"),
        ("o.rid", "out.*", "JOIN"),
        ("r.rid", "out.*", "JOIN"),
    }


def test_aggregation_group_by_having_and_order_by_kinds() -> None:
    st = one(
        "INSERT INTO out SELECT region, sum(amount) AS total, count(DISTINCT cid) AS n FROM sales "
        "WHERE year = 2024 GROUP BY region HAVING sum(amount) > 10 ORDER BY total DESC",
        "bigquery",
    )
    assert triples(st) == {
        ("sales.region", "out.region", "IDENTITY"),
        ("sales.amount", "out.total", "AGGREGATION"),
        ("sales.cid", "out.n", "AGGREGATION"),
        ("sales.year", "out.*", "FILTER"),
        ("sales.amount", "out.*", "FILTER"),
        ("sales.region", "out.*", "GROUP_BY"),
        ("sales.amount", "out.*", "SORT"),
    }


def test_window_keys_are_window_dependencies_of_that_column_only() -> None:
    st = one(
        "INSERT INTO out SELECT id, sum(v) OVER (PARTITION BY g ORDER BY ts) AS running, "
        "row_number() OVER (PARTITION BY g ORDER BY ts DESC) AS rn FROM t",
        "snowflake",
    )
    assert triples(st) == {
        ("t.id", "out.id", "IDENTITY"),
        ("t.v", "out.running", "AGGREGATION"),
        ("t.g", "out.running", "WINDOW"),
        ("t.ts", "out.running", "WINDOW"),
        ("t.g", "out.rn", "WINDOW"),
        ("t.ts", "out.rn", "WINDOW"),
    }


def test_case_if_and_coalesce_conditions_are_conditional_on_the_column() -> None:
    st = one(
        "INSERT INTO out SELECT CASE WHEN status = 'x' THEN a ELSE b END AS c1, "
        "IF(flag, p, q) AS c2, COALESCE(m, n) AS c3 FROM t",
        "spark",
    )
    assert triples(st) == {
        ("t.a", "out.c1", "TRANSFORMATION"),
        ("t.b", "out.c1", "TRANSFORMATION"),
        ("t.status", "out.c1", "CONDITIONAL"),
        ("t.p", "out.c2", "TRANSFORMATION"),
        ("t.q", "out.c2", "TRANSFORMATION"),
        ("t.flag", "out.c2", "CONDITIONAL"),
        ("t.m", "out.c3", "TRANSFORMATION"),
        ("t.n", "out.c3", "TRANSFORMATION"),
        ("t.m", "out.c3", "CONDITIONAL"),
    }


def test_aggregate_over_a_case_keeps_the_condition_conditional() -> None:
    st = one("INSERT INTO out SELECT sum(CASE WHEN ok THEN amt ELSE 0 END) AS good FROM t", "postgres")
    assert triples(st) == {("t.amt", "out.good", "AGGREGATION"), ("t.ok", "out.good", "CONDITIONAL")}


def test_kinds_compose_through_ctes_strongest_direct_kind_wins() -> None:
    st = one(
        "WITH s AS (SELECT k, sum(v) AS total FROM t GROUP BY k) INSERT INTO out SELECT k, total / 100 AS pct FROM s",
        "duckdb",
    )
    assert triples(st, DIRECT) == {("t.k", "out.k", "IDENTITY"), ("t.v", "out.pct", "AGGREGATION")}


def test_lateral_view_explode_traces_the_exploded_array() -> None:
    st = one("INSERT INTO out SELECT a, tag FROM t LATERAL VIEW explode(tags) x AS tag", "hive")
    assert triples(st, DIRECT) == {("t.a", "out.a", "IDENTITY"), ("t.tags", "out.tag", "TRANSFORMATION")}


def test_unnest_in_bigquery_and_trino() -> None:
    bq = one("CREATE TABLE ds.out AS SELECT t.a, e FROM ds.t CROSS JOIN UNNEST(t.arr) AS e", "bigquery")
    assert triples(bq, DIRECT) == {
        ("ds.t.a", "ds.out.a", "IDENTITY"),
        ("ds.t.arr", "ds.out.e", "TRANSFORMATION"),
    }
    trino = one("INSERT INTO out SELECT t.a, u.e FROM t CROSS JOIN UNNEST(t.arr) AS u(e)", "trino")
    assert ("t.arr", "out.e", "TRANSFORMATION") in triples(trino)


def test_star_is_expanded_with_a_schema() -> None:
    st = one(
        "INSERT INTO out SELECT * FROM db.src", "spark", schema={"db.src": ["a", "b"], "out": ["x", "y"]}
    )
    assert triples(st) == {("db.src.a", "out.x", "IDENTITY"), ("db.src.b", "out.y", "IDENTITY")}


def test_star_over_an_unknown_table_gives_table_lineage_only_and_a_problem() -> None:
    st = one("INSERT INTO out SELECT * FROM src", "spark")
    assert [r.id for r in st.reads] == ["src"] and [w.id for w in st.writes] == ["out"]
    assert st.edges == []
    assert [p["code"] for p in st.problems] == ["unknown-star"]
    assert "src" in st.problems[0]["message"]


def test_star_before_named_columns_leaves_later_positions_unmapped() -> None:
    # Without the star's width, position 2 of the target is unknowable; nothing is guessed.
    st = one("INSERT INTO out SELECT *, b FROM src", "spark", schema={"out": ["p", "q", "r"]})
    assert triples(st, DIRECT) == set()


def test_unqualified_column_over_two_unknown_tables_is_reported_not_guessed() -> None:
    st = one("INSERT INTO out SELECT a, t1.b FROM t1 JOIN t2 ON t1.id = t2.id", "spark")
    assert triples(st, DIRECT) == {("t1.b", "out.b", "IDENTITY")}
    assert any(p["code"] == "ambiguous-column" and "'a'" in p["message"] for p in st.problems)


def test_unqualified_column_is_placed_by_the_schema() -> None:
    st = one(
        "INSERT INTO out SELECT a, b FROM t1 JOIN t2 ON t1.id = t2.id",
        "spark",
        schema={"t1": ["id", "a"], "t2": ["id", "b"]},
    )
    assert triples(st, DIRECT) == {("t1.a", "out.a", "IDENTITY"), ("t2.b", "out.b", "IDENTITY")}


def test_unqualified_column_next_to_a_cte_that_lacks_it_belongs_to_the_table() -> None:
    st = one(
        "WITH c AS (SELECT k FROM base) INSERT INTO out SELECT c.k, v FROM c JOIN raw ON c.k = raw.k", "spark"
    )
    assert ("raw.v", "out.v", "IDENTITY") in triples(st)


def test_snowflake_unquoted_names_are_lowercased_and_quoted_names_keep_their_case() -> None:
    st = one('INSERT INTO DB.OUT SELECT "MixedCase", COL2 FROM DB.SRC', "snowflake")
    assert triples(st) == {
        ("db.src.MixedCase", "db.out.MixedCase", "IDENTITY"),
        ("db.src.col2", "db.out.col2", "IDENTITY"),
    }


def test_star_of_one_table_names_only_that_table() -> None:
    st = one("CREATE TABLE x AS SELECT a.id, b.* FROM a JOIN b ON a.id = b.id", "spark")
    assert ("a.id", "x.id", "IDENTITY") in triples(st)
    [problem] = st.problems
    assert "over b " in problem["message"] and "a," not in problem["message"]


def test_pivot_values_aggregate_the_measure_and_depend_on_the_for_column() -> None:
    st = one(
        "INSERT INTO out SELECT k, a_total, b_total FROM src "
        "PIVOT (sum(v) AS total FOR cat IN ('a' AS a, 'b' AS b)) p",
        "spark",
    )
    assert triples(st) == {
        ("src.k", "out.k", "IDENTITY"),
        ("src.v", "out.a_total", "AGGREGATION"),
        ("src.cat", "out.a_total", "CONDITIONAL"),
        ("src.v", "out.b_total", "AGGREGATION"),
        ("src.cat", "out.b_total", "CONDITIONAL"),
    }


def test_unpivot_value_column_comes_from_every_unpivoted_column() -> None:
    st = one(
        "INSERT INTO out SELECT id, attr, val FROM wide UNPIVOT (val FOR attr IN (c1, c2)) u", "snowflake"
    )
    assert triples(st) == {
        ("wide.id", "out.id", "IDENTITY"),
        ("wide.c1", "out.val", "TRANSFORMATION"),
        ("wide.c2", "out.val", "TRANSFORMATION"),
    }


def test_nested_struct_field_reads_the_struct_column() -> None:
    st = one("INSERT INTO out SELECT s.addr.city AS city FROM people s", "spark")
    assert triples(st) == {("people.addr", "out.city", "TRANSFORMATION")}


def test_exists_subquery_filters_the_whole_target() -> None:
    st = one(
        "INSERT INTO out SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id AND b.flag)",
        "postgres",
    )
    assert triples(st) == {
        ("a.id", "out.id", "IDENTITY"),
        ("b.aid", "out.*", "FILTER"),
        ("a.id", "out.*", "FILTER"),
        ("b.flag", "out.*", "FILTER"),
    }


def test_snowflake_flatten_traces_the_flattened_column() -> None:
    st = one(
        "INSERT INTO out SELECT t.id, f.value:name::string AS nm FROM raw t, LATERAL FLATTEN(input => t.items) f",
        "snowflake",
    )
    assert triples(st) == {("raw.id", "out.id", "IDENTITY"), ("raw.items", "out.nm", "TRANSFORMATION")}


def test_bigquery_struct_column_qualifier_is_a_field_of_that_column() -> None:
    st = one(
        "INSERT INTO out SELECT user.id AS uid, user.address.city AS city FROM raw.users_nested",
        "bigquery",
    )
    assert triples(st) == {
        ("raw.users_nested.user", "out.uid", "TRANSFORMATION"),
        ("raw.users_nested.user", "out.city", "TRANSFORMATION"),
    }


def test_file_table_functions_are_read_as_file_datasets() -> None:
    st = one("CREATE TABLE o AS SELECT count(*) AS n FROM read_parquet('trips/*.parquet')", "duckdb")
    assert [(r.name, r.kind) for r in st.reads] == [("trips/*.parquet", "file")]
    spark = one("INSERT INTO o SELECT a FROM parquet.`/data/x`", "spark")
    assert [(r.name, r.kind) for r in spark.reads] == [("/data/x", "file")]


def test_cross_apply_and_lateral_subqueries_pass_their_columns_through() -> None:
    tsql = one(
        "INSERT INTO r SELECT c.CustomerID, x.OrderID FROM dbo.Customers c CROSS APPLY "
        "(SELECT TOP 1 OrderID FROM dbo.Orders o WHERE o.CustomerID = c.CustomerID ORDER BY OrderDate DESC) x",
        "tsql",
    )
    assert triples(tsql, DIRECT) == {
        ("dbo.customers.customerid", "r.customerid", "IDENTITY"),
        ("dbo.orders.orderid", "r.orderid", "IDENTITY"),
    }
    assert ("dbo.orders.customerid", "r.*", "JOIN") in triples(tsql)
    pg = one(
        "INSERT INTO top3 SELECT c.id, t.amount FROM customers c CROSS JOIN LATERAL "
        "(SELECT o.amount FROM orders o WHERE o.customer_id = c.id ORDER BY o.amount DESC LIMIT 3) t",
        "postgres",
    )
    assert triples(pg, DIRECT) == {
        ("customers.id", "top3.id", "IDENTITY"),
        ("orders.amount", "top3.amount", "IDENTITY"),
    }
    assert ("orders.customer_id", "top3.*", "JOIN") in triples(pg)


def test_oracle_connect_by_filters_rows_and_level_is_not_a_column() -> None:
    st = one(
        "INSERT INTO dw.hier SELECT employee_id, LEVEL AS lvl FROM hr.employees "
        "START WITH manager_id IS NULL CONNECT BY PRIOR employee_id = manager_id",
        "oracle",
    )
    assert triples(st) == {
        ("hr.employees.employee_id", "dw.hier.employee_id", "IDENTITY"),
        ("hr.employees.manager_id", "dw.hier.*", "FILTER"),
        ("hr.employees.employee_id", "dw.hier.*", "FILTER"),
    }


def test_group_by_and_having_may_name_output_aliases_where_may_not() -> None:
    st = one(
        "INSERT INTO t SELECT upper(a) AS ua, sum(b) AS total FROM s WHERE ua <> 'x' GROUP BY ua HAVING total > 1",
        "spark",
    )
    assert ("s.a", "t.*", "GROUP_BY") in triples(st)
    assert ("s.b", "t.*", "FILTER") in triples(st)  # HAVING total > 1
    assert ("s.ua", "t.*", "FILTER") in triples(st)  # WHERE ua: an input column of s
    assert ("s.ua", "t.*", "GROUP_BY") not in triples(st)


def test_a_cte_nobody_reads_reads_nothing() -> None:
    st = one("WITH unused AS (SELECT * FROM secret) INSERT INTO t SELECT a FROM s", "spark")
    assert [r.id for r in st.reads] == ["s"]


def test_unaliased_unpivot_still_traces_the_value_column() -> None:
    st = one(
        "INSERT INTO u SELECT id, metric, value FROM w UNPIVOT (value FOR metric IN (clicks, views))",
        "snowflake",
    )
    assert triples(st) == {
        ("w.id", "u.id", "IDENTITY"),
        ("w.clicks", "u.value", "TRANSFORMATION"),
        ("w.views", "u.value", "TRANSFORMATION"),
    }


def test_decode_and_nvl2_tests_are_conditional() -> None:
    st = one(
        "INSERT INTO o SELECT DECODE(status, 1, name, 'other') AS s, NVL2(a, b, c) AS n FROM t", "oracle"
    )
    assert triples(st) == {
        ("t.status", "o.s", "CONDITIONAL"),
        ("t.name", "o.s", "TRANSFORMATION"),
        ("t.a", "o.n", "CONDITIONAL"),
        ("t.b", "o.n", "TRANSFORMATION"),
        ("t.c", "o.n", "TRANSFORMATION"),
    }


def test_named_window_keys_are_window_dependencies() -> None:
    st = one(
        "INSERT INTO o SELECT id, sum(amount) OVER w AS s FROM orders WINDOW w AS (PARTITION BY cid ORDER BY ts)",
        "postgres",
    )
    assert triples(st) == {
        ("orders.id", "o.id", "IDENTITY"),
        ("orders.amount", "o.s", "AGGREGATION"),
        ("orders.cid", "o.s", "WINDOW"),
        ("orders.ts", "o.s", "WINDOW"),
    }


def test_clickhouse_array_join_alias_is_an_element_of_the_array() -> None:
    st = one("INSERT INTO t SELECT tag FROM events ARRAY JOIN tags AS tag WHERE tag = 'x'", "clickhouse")
    assert triples(st) == {("events.tags", "t.tag", "TRANSFORMATION"), ("events.tags", "t.*", "FILTER")}


def test_fields_of_a_table_function_without_column_names_come_from_its_input() -> None:
    st = one("INSERT INTO o SELECT id, col.sku FROM carts LATERAL VIEW inline(items) col", "databricks")
    assert triples(st) == {("carts.id", "o.id", "IDENTITY"), ("carts.items", "o.sku", "TRANSFORMATION")}


def test_correlated_subquery_over_unknown_tables_keeps_star_expansion_from_the_schema() -> None:
    st = one(
        "INSERT INTO o SELECT * FROM t WHERE EXISTS (SELECT 1 FROM q WHERE q.k = t.k AND z > 1)",
        "spark",
        schema={"t": ["a", "k"], "o": ["x", "y"]},
    )
    assert triples(st) == {
        ("t.a", "o.x", "IDENTITY"),
        ("t.k", "o.y", "IDENTITY"),
        ("q.k", "o.*", "FILTER"),
        ("t.k", "o.*", "FILTER"),
        ("q.z", "o.*", "FILTER"),
    }
    assert st.problems == []


def test_unnamed_outputs_next_to_a_correlated_subquery_are_reported_not_aimed_at_the_table() -> None:
    st = one("INSERT INTO o SELECT a + 1, (SELECT max(b) FROM q WHERE q.k = t.k) FROM t", "spark")
    assert st.edges == []
    assert [p["code"] for p in st.problems] == ["unnamed-column", "unnamed-column"]


def test_star_over_a_join_keeps_both_same_named_columns_in_position() -> None:
    st = one(
        "INSERT INTO o SELECT * FROM t JOIN db.u ON t.id = u.id",
        "spark",
        schema={"t": ["id", "a"], "db.u": ["id", "b"], "o": ["w", "x", "y", "z"]},
    )
    assert triples(st, DIRECT) == {
        ("t.id", "o.w", "IDENTITY"),
        ("t.a", "o.x", "IDENTITY"),
        ("db.u.id", "o.y", "IDENTITY"),
        ("db.u.b", "o.z", "IDENTITY"),
    }


def test_lateral_column_aliases_where_the_dialect_has_them() -> None:
    snow = one("INSERT INTO o SELECT a + 1 AS b, b * 2 AS c FROM s", "snowflake")
    assert triples(snow) == {("s.a", "o.b", "TRANSFORMATION"), ("s.a", "o.c", "TRANSFORMATION")}
    # Postgres has no lateral aliases: b is a column of s.
    pg = one("INSERT INTO o SELECT a + 1 AS b, b * 2 AS c FROM s", "postgres")
    assert triples(pg) == {("s.a", "o.b", "TRANSFORMATION"), ("s.b", "o.c", "TRANSFORMATION")}


def test_semi_and_anti_joined_tables_are_read() -> None:
    st = one(
        "INSERT INTO o SELECT a.id FROM a LEFT SEMI JOIN b ON a.k = b.k LEFT ANTI JOIN c ON a.k = c.k",
        "spark",
    )
    assert [r.id for r in st.reads] == ["a", "b", "c"]
    assert triples(st, {"JOIN"}) == {("a.k", "o.*", "JOIN"), ("b.k", "o.*", "JOIN"), ("c.k", "o.*", "JOIN")}


def test_sort_only_where_order_matters() -> None:
    inner = one("INSERT INTO o SELECT a FROM (SELECT a, b FROM t ORDER BY b) x", "spark")
    assert triples(inner) == {("t.a", "o.a", "IDENTITY")}
    top_n = one("INSERT INTO o SELECT a FROM (SELECT a, b FROM t ORDER BY b LIMIT 5) x", "spark")
    assert ("t.b", "o.*", "SORT") in triples(top_n)
    hive = one("INSERT INTO o SELECT a FROM t DISTRIBUTE BY a SORT BY b", "hive")
    assert ("t.b", "o.*", "SORT") in triples(hive)
    union = one("INSERT INTO o SELECT a AS x FROM t1 UNION ALL SELECT b FROM t2 ORDER BY x", "postgres")
    assert {("t1.a", "o.*", "SORT"), ("t2.b", "o.*", "SORT")} <= triples(union)
