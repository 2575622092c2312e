"""The ``database`` reader's second engine: DuckDB in-process (duckdb-engine). Views on views, a
SELECT * view, a view whose unqualified names are those of its own schema. Expectations by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.readers.database import READER

pytest.importorskip("duckdb_engine", reason="the DuckDB tests need duckdb and duckdb-engine ([test] extra)")


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    import duckdb

    path = tmp_path / "wh.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        """
        CREATE SCHEMA sales;
        CREATE TABLE sales.orders (id BIGINT, customer_id INTEGER, amount DECIMAL(12, 2), status VARCHAR);
        CREATE TABLE main.customers (id INTEGER, name VARCHAR);
        CREATE VIEW sales.all_orders AS SELECT * FROM orders;  -- sales.orders: the view's own schema
        CREATE VIEW main.revenue AS
            SELECT c.name, sum(o.amount) AS revenue
            FROM sales.all_orders o JOIN customers c ON c.id = o.customer_id
            WHERE o.status = 'paid' GROUP BY c.name;
        """
    )
    con.close()
    return f"duckdb:///{path}"


def test_duckdb_views_and_column_types(warehouse: str) -> None:
    graph = READER.read(db_url=warehouse, passes="views")
    assert sorted(p.id for p in graph.processes) == ["wh:wh.main.revenue", "wh:wh.sales.all_orders"]
    all_orders = graph.process("wh:wh.sales.all_orders")
    assert all_orders is not None and all_orders.inputs == ["wh.sales.orders"]
    revenue = graph.process("wh:wh.main.revenue")
    assert revenue is not None and sorted(revenue.inputs) == ["wh.main.customers", "wh.sales.all_orders"]
    edges = {(str(e.source), str(e.target), e.kind) for e in graph.edges}
    assert edges == {
        *(
            (f"wh.sales.orders.{c}", f"wh.sales.all_orders.{c}", "IDENTITY")
            for c in ("id", "customer_id", "amount", "status")
        ),
        ("wh.main.customers.name", "wh.main.revenue.name", "IDENTITY"),
        ("wh.sales.all_orders.amount", "wh.main.revenue.revenue", "AGGREGATION"),
        ("wh.main.customers.id", "wh.main.revenue.*", "JOIN"),
        ("wh.sales.all_orders.customer_id", "wh.main.revenue.*", "JOIN"),
        ("wh.sales.all_orders.status", "wh.main.revenue.*", "FILTER"),
        ("wh.main.customers.name", "wh.main.revenue.*", "GROUP_BY"),
    }
    orders = graph.dataset("wh.sales.orders")
    assert orders is not None
    assert [(c.name, c.type) for c in orders.columns] == [
        ("id", "BIGINT"),
        ("customer_id", "INTEGER"),
        ("amount", "DECIMAL(12,2)"),
        ("status", "VARCHAR"),
    ]
    assert graph.dataset("wh.main.revenue").kind == "view"  # type: ignore[union-attr]


def test_duckdb_has_no_history_and_a_missing_file_is_an_error(warehouse: str, tmp_path: Path) -> None:
    # every pass by default: DuckDB's missing history is a warning naming the fix, the views are read
    graph = READER.read(db_url=warehouse)
    (warning,) = graph.problems
    assert (warning.code, warning.severity) == ("no-history", "warning")
    assert "duckdb keeps no query history (give one with -o query_template=FILE" in warning.message
    assert graph.processes
    # asked for explicitly, it is an error
    with pytest.raises(InputError, match="duckdb keeps no query history") as err:
        READER.read(db_url=warehouse, passes="queries")
    assert "-o query_template=FILE" in (err.value.hint or "")
    with pytest.raises(InputError, match="no DuckDB database at"):
        READER.read(db_url=f"duckdb:///{tmp_path / 'typo.duckdb'}")
    assert not (tmp_path / "typo.duckdb").exists()
