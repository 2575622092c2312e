"""Relations and columns are named as the SQL reader names the same tables in SQL."""

from __future__ import annotations

import pytest

from atlas_sync.lineage import registry
from atlas_sync.lineage.dbt.naming import Namer, adapter_dialect


@pytest.mark.parametrize(
    ("dialect", "relation", "sql"),
    [
        (
            "snowflake",
            "ANALYTICS.DBT_PROD.FCT_ORDERS",
            "insert into x.y select a from ANALYTICS.DBT_PROD.FCT_ORDERS",
        ),
        ("duckdb", '"jaffle"."main"."orders"', "insert into x.y select a from jaffle.main.orders"),
        (
            "postgres",
            '"warehouse"."Marts"."Orders"',
            'insert into x.y select a from "warehouse"."Marts"."Orders"',
        ),
        ("spark", "analytics.fct_orders", "insert into x.y select a from analytics.fct_orders"),
        ("bigquery", "`proj`.`ds`.`orders`", "insert into x.y select a from `proj`.`ds`.`orders`"),
    ],
)
def test_a_relation_is_the_dataset_the_sql_reader_gives_for_it(dialect, relation, sql, tmp_path):
    ref = Namer(dialect).relation(relation)
    path = tmp_path / "q.sql"
    path.write_text(sql)
    graph = registry.read("sql", [str(path)], dialect=dialect)
    assert ref is not None and ref.id in {d.id for d in graph.datasets}


def test_a_node_without_relation_name_is_quoted_as_the_project_says():
    node = {"database": "Warehouse", "schema": "marts", "alias": "Orders"}
    assert Namer("postgres").relation_of(node, {}).id == "Warehouse.marts.Orders"  # type: ignore[union-attr]  # quoted: case kept
    unquoted = {"database": False, "schema": False, "identifier": False}
    assert Namer("snowflake").relation_of(node, unquoted).id == "warehouse.marts.orders"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("dialect", "stored", "named"),
    [
        ("snowflake", "CUSTOMER_ID", "customer_id"),  # unquoted names are stored upper-case
        ("snowflake", "MixedCase", "MixedCase"),  # only a quoted name reaches it
        ("postgres", "customer_id", "customer_id"),
        ("postgres", "MyCol", "MyCol"),
        ("duckdb", "CustomerId", "customerid"),  # case-insensitive
        ("bigquery", "CustomerId", "customerid"),
        ("duckdb", "order date", "order date"),  # not a plain identifier: always quoted
    ],
)
def test_warehouse_columns_are_named_as_an_unquoted_reference_would_be(dialect, stored, named):
    assert Namer(dialect).column(stored) == named


def test_adapter_dialects():
    assert adapter_dialect("duckdb") == "duckdb"
    assert adapter_dialect("sqlserver") == "tsql"
    assert adapter_dialect("synapse") == "tsql"
    assert adapter_dialect("databricks") == "databricks"
    assert adapter_dialect("glue") == "spark"
    assert adapter_dialect("no-such-adapter") is None
