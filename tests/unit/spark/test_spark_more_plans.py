"""Real pyspark 4.0.1 plans for node kinds the shared fixtures lack (tests/data/spark/more/).

Each expectation is derived by hand from the case's query in ``tests/data/spark/more/generate.py``:
tables ``emp(id, name, dept, salary, mgr)``, ``orders(oid, cid, amount, region)``, ``cust(cid, cname,
country)`` in ``spark_catalog.default``; files under ``/tmp/sparkdata2``.
"""

from __future__ import annotations

import pytest
from spark_test_support import MORE, direct_edges, read_json_plan, read_text_plan

from atlas_sync.lineage.model import LineageGraph

ID, T, A = "IDENTITY", "TRANSFORMATION", "AGGREGATION"
EMP, ORDERS, CUST = (f"spark_catalog.default.{t}" for t in ("emp", "orders", "cust"))
ARR = "file:/tmp/sparkdata2/arr.parquet"
HSRC, V2SRC = "spark_catalog.default.hsrc", "jdb.app.src"

# case -> (sources, target or None for the result, direct edges, per-column indirect edges, row-level edges)
CASES: dict[str, tuple[set[str], str | None, set[tuple[str, str, str, str]], set[tuple[str, str, str, str]], set[tuple[str, str, str]]]] = {
    # row_number() over (partition by dept order by salary desc) AS rn, sum(salary) over (partition by dept)
    # AS dept_total, where rn <= 2
    "window_rank": (
        {EMP},
        None,
        {(EMP, "name", "name", ID), (EMP, "dept", "dept", ID), (EMP, "salary", "salary", ID),
         (EMP, "salary", "dept_total", A)},
        {(EMP, "dept", "rn", "WINDOW"), (EMP, "salary", "rn", "WINDOW"), (EMP, "dept", "dept_total", "WINDOW")},
        # the filter on rn depends on what rn is computed from
        {(EMP, "dept", "FILTER"), (EMP, "salary", "FILTER")},
    ),
    # select id, explode(items) AS item
    "explode_generate": ({ARR}, None, {(ARR, "id", "id", ID), (ARR, "items", "item", T)}, set(), set()),
    "lateral_view": ({ARR}, None, {(ARR, "id", "id", ID), (ARR, "items", "item", T)}, set(), set()),
    # GROUP BY ROLLUP(dept, name): sum(salary) AS total
    "rollup_expand": (
        {EMP},
        None,
        {(EMP, "dept", "dept", ID), (EMP, "name", "name", ID), (EMP, "salary", "total", A)},
        set(),
        {(EMP, "dept", "GROUP_BY"), (EMP, "name", "GROUP_BY")},
    ),
    # CREATE TABLE dept_summary AS SELECT dept, count(*) AS headcount, sum(salary) AS total_salary GROUP BY dept
    "ctas_agg": (
        {EMP},
        "spark_catalog.default.dept_summary",
        {(EMP, "dept", "dept", ID), (EMP, "salary", "total_salary", A)},
        set(),
        {(EMP, "dept", "GROUP_BY")},
    ),
    # CASE WHEN amount >= 1000 THEN 'gold' WHEN region = 'EU' THEN 'silver' ELSE 'bronze' END AS tier,
    # if(amount > 500, amount, 0) AS big
    "case_when": (
        {ORDERS},
        None,
        {(ORDERS, "oid", "oid", ID), (ORDERS, "amount", "big", T)},
        {(ORDERS, "amount", "tier", "CONDITIONAL"), (ORDERS, "region", "tier", "CONDITIONAL"),
         (ORDERS, "amount", "big", "CONDITIONAL")},
        set(),
    ),
    # orders o LEFT JOIN cust_v c (a temp view over cust) ON o.cid = c.cid: coalesce(c.cname, 'unknown')
    "left_join_view": (
        {ORDERS, CUST},
        None,
        {(ORDERS, "oid", "oid", ID), (CUST, "cname", "cname", T)},
        set(),
        {(ORDERS, "cid", "JOIN"), (CUST, "cid", "JOIN")},
    ),
    # SELECT cid FROM orders INTERSECT SELECT cid FROM cust EXCEPT SELECT mgr FROM emp: a row is kept by
    # comparing its columns with the other side's (JOIN, both sides); INTERSECT / EXCEPT without ALL
    # also deduplicate, as DISTINCT (GROUP_BY)
    "intersect_except": (
        {ORDERS, CUST, EMP},
        None,
        {(ORDERS, "cid", "cid", ID)},
        set(),
        {(ORDERS, "cid", "JOIN"), (ORDERS, "cid", "GROUP_BY"), (CUST, "cid", "JOIN"), (EMP, "mgr", "JOIN")},
    ),
    # SELECT c.cid, (SELECT max(o.amount) FROM orders o WHERE o.cid = c.cid) AS max_amount FROM cust c
    "scalar_subquery": (
        {CUST, ORDERS},
        None,
        {(CUST, "cid", "cid", ID), (ORDERS, "amount", "max_amount", A)},
        {(ORDERS, "cid", "max_amount", "FILTER"), (CUST, "cid", "max_amount", "FILTER")},
        set(),
    ),
    # select id, s.a AS sa, s.b + 1 AS sb
    "struct_field": (
        {"file:/tmp/sparkdata2/st.json"},
        None,
        {("file:/tmp/sparkdata2/st.json", "id", "id", ID), ("file:/tmp/sparkdata2/st.json", "s", "sa", T),
         ("file:/tmp/sparkdata2/st.json", "s", "sb", T)},
        set(),
        set(),
    ),
    # WITH big AS (SELECT * FROM orders WHERE amount > 50) SELECT a.oid, b.amount FROM big a JOIN big b ON a.oid = b.oid
    "cte_twice": (
        {ORDERS},
        None,
        {(ORDERS, "oid", "oid", ID), (ORDERS, "amount", "amount", ID)},
        set(),
        {(ORDERS, "amount", "FILTER"), (ORDERS, "oid", "JOIN")},
    ),
    # orders(oid, region) unionByName cust(cid AS oid), allowMissingColumns
    "union_by_name": (
        {ORDERS, CUST},
        None,
        {(ORDERS, "oid", "oid", ID), (CUST, "cid", "oid", ID), (ORDERS, "region", "region", ID)},
        set(),
        set(),
    ),
    # groupBy(cid).pivot(region, [EU, US]).sum(amount)
    "pivot": (
        {ORDERS},
        None,
        {(ORDERS, "cid", "cid", ID), (ORDERS, "amount", "EU", A), (ORDERS, "amount", "US", A)},
        {(ORDERS, "region", "EU", "CONDITIONAL"), (ORDERS, "region", "US", "CONDITIONAL")},
        {(ORDERS, "cid", "GROUP_BY"), (ORDERS, "region", "GROUP_BY")},
    ),
    # lag(amount, 1) OVER (PARTITION BY cid ORDER BY oid) AS prev_amount
    "lag_window": (
        {ORDERS},
        None,
        {(ORDERS, "oid", "oid", ID), (ORDERS, "amount", "prev_amount", T)},
        {(ORDERS, "cid", "prev_amount", "WINDOW"), (ORDERS, "oid", "prev_amount", "WINDOW")},
        set(),
    ),
    # SELECT o.oid, c.cname FROM orders o CROSS JOIN cust c
    "cross_join": ({ORDERS, CUST}, None, {(ORDERS, "oid", "oid", ID), (CUST, "cname", "cname", ID)}, set(), set()),
    # dropDuplicates(["cid"])
    "drop_duplicates_subset": (
        {ORDERS},
        None,
        {(ORDERS, c, c, ID) for c in ("oid", "cid", "amount", "region")},
        set(),
        {(ORDERS, "cid", "GROUP_BY")},
    ),
    # SELECT cid FROM orders UNION SELECT cid FROM cust (UNION DISTINCT)
    "sql_union_distinct": (
        {ORDERS, CUST},
        None,
        {(ORDERS, "cid", "cid", ID), (CUST, "cid", "cid", ID)},
        set(),
        {(ORDERS, "cid", "GROUP_BY"), (CUST, "cid", "GROUP_BY")},
    ),
    # repartition(4, cid).sample(0.5).select(oid): neither changes values
    "repartition_sample": ({ORDERS}, None, {(ORDERS, "oid", "oid", ID)}, set(), set()),
    # WHERE region IN ('EU', 'a,b', 'x+- y') AND amount > 1: literals with commas and a tree marker
    "in_list_strings": (
        {ORDERS}, None, {(ORDERS, "oid", "oid", ID)}, set(), {(ORDERS, "region", "FILTER"), (ORDERS, "amount", "FILTER")}
    ),
    # INSERT OVERWRITE TABLE part_t PARTITION (dt='2026') SELECT oid, region FROM orders (casts to the table types)
    "insert_overwrite_partition": (
        {ORDERS},
        "spark_catalog.default.part_t",
        {(ORDERS, "oid", "id", T), (ORDERS, "region", "v", T)},
        set(),
        set(),
    ),
    # orders.write.partitionBy(region).csv(/tmp/sparkdata2/out_csv)
    "write_csv_partitioned": (
        {ORDERS},
        "file:/tmp/sparkdata2/out_csv",
        {(ORDERS, c, c, ID) for c in ("oid", "cid", "amount", "region")},
        set(),
        set(),
    ),
    # orders.where(amount > 10).select(oid, amount).write.saveAsTable(big_orders): the listener's first event
    # is the file write, which names the table's folder, not the table
    "save_as_table": (
        {ORDERS},
        "file:/tmp/sparkdata2/warehouse/big_orders",
        {(ORDERS, "oid", "oid", ID), (ORDERS, "amount", "amount", ID)},
        set(),
        {(ORDERS, "amount", "FILTER")},
    ),
    # Hive tables (generate_hive_v2.py): hsrc(id, name)
    "hive_select": (  # SELECT id, upper(name) AS uname FROM hsrc WHERE id > 1
        {HSRC}, None, {(HSRC, "id", "id", ID), (HSRC, "name", "uname", T)}, set(), {(HSRC, "id", "FILTER")}
    ),
    "hive_insert": (  # INSERT INTO htgt SELECT id, name FROM hsrc
        {HSRC}, "spark_catalog.default.htgt", {(HSRC, "id", "id", ID), (HSRC, "name", "name", ID)}, set(), set()
    ),
    "hive_ctas": (  # CREATE TABLE hctas AS SELECT id, concat(name, '!') AS n FROM hsrc
        {HSRC}, "spark_catalog.default.hctas", {(HSRC, "id", "id", ID), (HSRC, "name", "n", T)}, set(), set()
    ),
    # V2 JDBC catalog jdb: src(id, name, country)
    "v2_ctas": (  # CREATE TABLE jdb.app.dst AS SELECT id, lower(name) AS name FROM jdb.app.src WHERE country = 'NL'
        {V2SRC}, "jdb.app.dst", {(V2SRC, "id", "id", ID), (V2SRC, "name", "name", T)}, set(),
        {(V2SRC, "country", "FILTER")},
    ),
    "v2_overwrite": (  # INSERT OVERWRITE jdb.app.dst SELECT id, name FROM jdb.app.src (name cast to the target type)
        {V2SRC}, "jdb.app.dst", {(V2SRC, "id", "id", ID), (V2SRC, "name", "name", T)}, set(), set()
    ),
    "one_row_and_values": (set(), None, set(), set(), set()),  # SELECT 1 AS one, current_date() AS d
    # generate_udf.py: createDataFrame rows (id, name); select(id, up(name) AS uname).where(up(name) != 'A')
    "python_udf": (
        {"LOCAL"}, None, {("LOCAL", "id", "id", ID), ("LOCAL", "name", "uname", T)}, set(), {("LOCAL", "name", "FILTER")}
    ),
}  # fmt: skip


def test_every_more_plan_has_expectations() -> None:
    assert {p.name for p in MORE.iterdir() if p.is_dir()} == set(CASES)


def _check(g: LineageGraph, case: str) -> None:
    sources, target, direct, per_column, rows = CASES[case]
    local = [d.id for d in g.datasets if d.kind == "local"]
    if local:  # the one anonymous in-memory source, whatever its generated name
        [name] = local

        def fix(x: str) -> str:
            return name if x == "LOCAL" else x

        sources = {fix(x) for x in sources}
        direct = {(fix(a), b, c, k) for a, b, c, k in direct}
        rows = {(fix(a), b, k) for a, b, k in rows}
    [proc] = g.processes
    assert set(proc.inputs) == sources
    [out] = proc.outputs
    if target is None:
        out_ds = g.dataset(out)
        assert out_ds is not None and out_ds.kind == "query"
    else:
        assert out == target
    assert direct_edges(g) == direct
    assert {
        (e.source.dataset, str(e.source.column), str(e.target.column), e.kind)
        for e in g.edges
        if e.target.column is not None and e.kind not in (ID, T, A)
    } == per_column
    assert {
        (e.source.dataset, str(e.source.column), e.kind) for e in g.edges if e.target.column is None
    } == rows
    assert g.check() == []
    assert not [p for p in g.problems if p.code == "spark-unknown-operator"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_more_plans_text(case: str) -> None:
    _check(read_text_plan(MORE / case / "explain.txt"), case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_more_plans_json(case: str) -> None:
    _check(read_json_plan(MORE / case / "analyzed.json", explain=str(MORE / case / "explain.txt")), case)


def test_v2_ctas_target_catalog_is_inferred_and_reported() -> None:
    g = read_text_plan(MORE / "v2_ctas" / "analyzed.txt")
    assert [p.code for p in g.problems] == ["spark-catalog-inferred"]
    ops = read_text_plan(MORE / "v2_ctas" / "analyzed.txt", mode="operator")
    assert [(p.id, p.operator) for p in ops.processes] == [
        ("1_0", "CreateTableAsSelect"),
        ("2_0", "ResolvedIdentifier"),
        ("2_1", "Project"),
        ("3_0", "Filter"),
        ("4_0", "SubqueryAlias"),
        ("5_0", "RelationV2"),
    ]


def test_ctas_query_is_an_inner_child_and_still_an_operator() -> None:
    g = read_text_plan(MORE / "ctas_agg" / "analyzed.txt", mode="operator")
    ops = {p.id: (p.operator, p.inputs, p.outputs) for p in g.processes}
    assert ops["1_0"] == ("CreateDataSourceTableAsSelectCommand", ["1_0-2_0"], ["output"])
    assert ops["2_0"][0] == "Aggregate"
    attrs = next(p.attributes for p in g.processes if p.id == "1_0")
    assert attrs["target"] == "spark_catalog.default.dept_summary"
    assert attrs["mode"] == "ErrorIfExists"
    assert attrs["columns"] == ["dept", "headcount", "total_salary"]


def test_window_operator_attributes() -> None:
    g = read_text_plan(MORE / "lag_window" / "analyzed.txt", mode="operator")
    [w] = [p for p in g.processes if p.operator == "Window"]
    assert w.attributes["partitionSpec"] == [next(iter(w.attributes["partitionSpec"]))]
    assert w.attributes["partitionSpec"][0].startswith("cid#")
    assert w.attributes["orderSpec"][0].startswith("oid#") and w.attributes["orderSpec"][0].endswith(
        "ASC NULLS FIRST"
    )
    assert w.attributes["windowExpressions"][0].startswith("lag(amount#")
