"""Set difference and semi / anti joins: the result's rows depend on the other side's columns.

Plans in ``tests/data/spark/setdiff/`` are written in the form Spark prints them (analyzed and optimized
logical plans, text and ``toJSON``), each for a query named in its test; the expected edges are derived
by hand from the query. ``intersect_except`` is a real pyspark 4.0.1 plan (``tests/data/spark/more``).
"""

from __future__ import annotations

import pytest
from spark_test_support import DATA, MORE, direct_edges, indirect_edges, read_json_plan, read_text_plan

from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.spark.expr import parse_expr

SETDIFF = DATA / "setdiff"
ID, T = "IDENTITY", "TRANSFORMATION"
SALES = "spark_catalog.sales"
SHOP = "spark_catalog.shop"
TPCDS = "spark_catalog.tpcds"


def per_column(g: LineageGraph) -> set[tuple[str, str, str, str]]:
    return {
        (e.source.dataset, str(e.source.column), str(e.target.column), e.kind)
        for e in g.edges
        if e.target.column is not None and e.kind not in (ID, T, "AGGREGATION")
    }


def no_unknown_operator(g: LineageGraph) -> bool:
    return not [p for p in g.problems if p.code == "spark-unknown-operator"]


# SELECT id, region FROM sales.orders EXCEPT SELECT id, region FROM sales.archive WHERE year = 2024
EXCEPT_ROWS = {
    (f"{SALES}.orders", "id", "JOIN"),
    (f"{SALES}.orders", "region", "JOIN"),
    (f"{SALES}.archive", "id", "JOIN"),
    (f"{SALES}.archive", "region", "JOIN"),
    (f"{SALES}.archive", "year", "FILTER"),
    (f"{SALES}.orders", "id", "GROUP_BY"),  # EXCEPT (DISTINCT) deduplicates
    (f"{SALES}.orders", "region", "GROUP_BY"),
}


@pytest.mark.parametrize("section", ["analyzed", "optimized"])
def test_except_compares_both_sides_and_takes_values_from_the_left(section: str) -> None:
    g = read_text_plan(SETDIFF / "except_distinct.explain.txt", section=section)
    assert direct_edges(g) == {
        (f"{SALES}.orders", "id", "id", ID),
        (f"{SALES}.orders", "region", "region", ID),
    }
    assert indirect_edges(g) == EXCEPT_ROWS
    assert set(g.processes[0].inputs) == {f"{SALES}.orders", f"{SALES}.archive"}


@pytest.mark.parametrize("section", ["analyzed", "optimized"])
def test_real_intersect_except_plan_reads_the_same_before_and_after_the_optimizer(section: str) -> None:
    # SELECT cid FROM orders INTERSECT SELECT cid FROM cust EXCEPT SELECT mgr FROM emp; the optimizer
    # turns the set operations into LeftSemi / LeftAnti joins on `<=>` under a grouping Aggregate
    g = read_text_plan(MORE / "intersect_except" / "explain.txt", section=section)
    orders, cust, emp = (f"spark_catalog.default.{t}" for t in ("orders", "cust", "emp"))
    assert direct_edges(g) == {(orders, "cid", "cid", ID)}
    assert indirect_edges(g) == {
        (orders, "cid", "JOIN"),
        (orders, "cid", "GROUP_BY"),
        (cust, "cid", "JOIN"),
        (emp, "mgr", "JOIN"),
    }


# df_cart.select("cust_id", "sku").exceptAll(df_purchases.select("cust_id", "sku"))
EXCEPT_ALL_DIRECT = {(f"{SHOP}.cart", "cust_id", "cust_id", ID), (f"{SHOP}.cart", "sku", "sku", ID)}
EXCEPT_ALL_ROWS = {
    (f"{SHOP}.cart", "cust_id", "JOIN"),
    (f"{SHOP}.cart", "sku", "JOIN"),
    (f"{SHOP}.purchases", "cust_id", "JOIN"),
    (f"{SHOP}.purchases", "sku", "JOIN"),
}


def test_except_all_text_plan_keeps_duplicates_so_no_grouping() -> None:
    g = read_text_plan(SETDIFF / "except_all.analyzed.txt")
    assert no_unknown_operator(g)  # printed `ExceptAll true`
    assert direct_edges(g) == EXCEPT_ALL_DIRECT
    assert indirect_edges(g) == EXCEPT_ALL_ROWS


def test_except_all_json_plan_reads_as_the_text_plan() -> None:
    g = read_json_plan(SETDIFF / "except_all.analyzed.json")
    assert direct_edges(g) == EXCEPT_ALL_DIRECT
    assert indirect_edges(g) == EXCEPT_ALL_ROWS


def test_not_in_rewritten_as_anti_join_reads_the_null_aware_condition_and_the_right_filter() -> None:
    # INSERT INTO shop.open_orders SELECT order_id, cust_id, amount FROM shop.orders
    # WHERE cust_id NOT IN (SELECT id FROM shop.customers WHERE blocked)
    g = read_text_plan(SETDIFF / "not_in_anti_join.optimized.txt")
    assert g.processes[0].outputs == [f"{SHOP}.open_orders"]
    assert direct_edges(g) == {
        (f"{SHOP}.orders", c, c, ID) for c in ("order_id", "cust_id", "amount")
    }  # nothing of customers reaches a value
    assert indirect_edges(g) == {
        (f"{SHOP}.orders", "cust_id", "JOIN"),
        (f"{SHOP}.customers", "id", "JOIN"),
        (f"{SHOP}.customers", "blocked", "FILTER"),
    }


def test_left_semi_join_keeps_the_right_sides_grouping_and_its_aggregate_in_the_condition() -> None:
    # orders.join(history.groupBy("cust_id").agg(avg("amount").alias("avg_amount")),
    #             (o.cust_id == h.cust_id) & (o.amount > h.avg_amount), "left_semi").select("order_id", "amount")
    g = read_text_plan(SETDIFF / "left_semi_join.analyzed.txt")
    assert direct_edges(g) == {
        (f"{SHOP}.orders", "order_id", "order_id", ID),
        (f"{SHOP}.orders", "amount", "amount", ID),
    }
    assert indirect_edges(g) == {
        (f"{SHOP}.orders", "cust_id", "JOIN"),
        (f"{SHOP}.orders", "amount", "JOIN"),
        (f"{SHOP}.history", "cust_id", "JOIN"),
        (f"{SHOP}.history", "amount", "JOIN"),  # avg_amount is computed from it
        (f"{SHOP}.history", "cust_id", "GROUP_BY"),
    }


def test_existence_joins_under_an_or_filter_reach_the_rows_through_the_filter() -> None:
    # TPC-DS q10 shape: WHERE EXISTS (store_sales) AND (EXISTS (web_sales x date_dim 2002) OR
    # EXISTS (catalog_sales)), joined to customer_demographics, GROUP BY cd_gender, count(*)
    g = read_text_plan(SETDIFF / "exists_or_exists.optimized.txt")
    assert no_unknown_operator(g)
    assert direct_edges(g) == {(f"{TPCDS}.customer_demographics", "cd_gender", "cd_gender", ID)}
    assert indirect_edges(g) == {
        (f"{TPCDS}.customer_demographics", "cd_gender", "GROUP_BY"),
        (f"{TPCDS}.customer", "c_current_cdemo_sk", "JOIN"),
        (f"{TPCDS}.customer_demographics", "cd_demo_sk", "JOIN"),
        # EXISTS (store_sales): a LeftSemi join
        (f"{TPCDS}.customer", "c_customer_sk", "JOIN"),
        (f"{TPCDS}.store_sales", "ss_customer_sk", "JOIN"),
        (f"{TPCDS}.store_sales", "ss_quantity", "FILTER"),
        # the two ExistenceJoins keep every row; `Filter (exists#2 OR exists#1)` is what filters
        (f"{TPCDS}.customer", "c_customer_sk", "FILTER"),
        (f"{TPCDS}.web_sales", "ws_bill_customer_sk", "FILTER"),
        (f"{TPCDS}.web_sales", "ws_sold_date_sk", "FILTER"),
        (f"{TPCDS}.date_dim", "d_date_sk", "FILTER"),
        (f"{TPCDS}.date_dim", "d_year", "FILTER"),
        (f"{TPCDS}.catalog_sales", "cs_ship_customer_sk", "FILTER"),
    }
    assert set(g.processes[0].inputs) == {
        f"{TPCDS}.{t}"
        for t in (
            "customer",
            "store_sales",
            "web_sales",
            "date_dim",
            "catalog_sales",
            "customer_demographics",
        )
    }


@pytest.mark.parametrize("form", ["text", "json"])
def test_exists_in_select_is_a_boolean_column_computed_from_the_condition(form: str) -> None:
    # SELECT order_id, EXISTS (SELECT 1 FROM shop.returns r WHERE r.order_id = o.order_id
    #                          AND r.reason = 'damaged') AS returned FROM shop.orders o
    if form == "text":
        g = read_text_plan(SETDIFF / "exists_in_select.optimized.txt")
    else:
        g = read_json_plan(SETDIFF / "exists_in_select.optimized.json")
    assert direct_edges(g) == {
        (f"{SHOP}.orders", "order_id", "order_id", ID),
        (f"{SHOP}.orders", "order_id", "returned", T),
        (f"{SHOP}.returns", "order_id", "returned", T),
    }
    result = g.processes[0].outputs[0]
    assert per_column(g) == {(f"{SHOP}.returns", "reason", "returned", "FILTER")}
    assert indirect_edges(g) == set()  # no row is removed
    assert result.startswith("result:")


def test_a_subquery_marker_needs_its_outer_reference_list_otherwise_it_is_a_column() -> None:
    assert parse_expr("exists#41 [emp_id#42]").kind == "subquery"
    assert parse_expr("list#40 []").kind == "subquery"
    column = parse_expr("exists#1")
    assert (column.kind, column.name, column.id) == ("attr", "exists", 1)
    both = parse_expr("(exists#2 OR exists#41 [emp_id#42])").args[0].args
    assert [(x.kind, x.id) for x in both if x.kind != "word"] == [("attr", 2), ("subquery", 41)]


@pytest.mark.parametrize(
    ("name", "form"),
    [("exists_in_select.optimized", "json"), ("except_all.analyzed", "json")],
)
def test_operator_mode_describes_the_join_and_set_operation_as_the_text_form(name: str, form: str) -> None:
    text = read_text_plan(SETDIFF / f"{name}.txt", mode="operator")
    js = read_json_plan(SETDIFF / f"{name}.{form}", mode="operator")
    top = {p.id: p for p in text.processes}
    assert top["1_0"].attributes["planText"] in (
        "ExceptAll true",
        "Project [order_id#0, exists#40 AS returned#41]",
    )
    assert [(p.id, p.operator, p.attributes) for p in js.processes] == [
        (p.id, p.operator, p.attributes) for p in text.processes
    ]


def test_optimized_except_all_reads_as_its_union_with_values_by_position() -> None:
    # the optimizer's EXCEPT ALL: both sides tagged 1 / -1, summed per row, replicaterows(sum, ...)
    # copies the surviving rows. Not recognised as a set difference (docs/spark-reader.md): it reads as
    # the union it is, but replicaterows maps each output to its own argument, not to all of them
    g = read_text_plan(SETDIFF / "except_all.optimized.txt")
    assert direct_edges(g) == {
        (f"{SHOP}.{t}", c, c, ID) for t in ("cart", "purchases") for c in ("cust_id", "sku")
    }
    assert indirect_edges(g) == {
        (f"{SHOP}.{t}", c, "GROUP_BY") for t in ("cart", "purchases") for c in ("cust_id", "sku")
    }
