"""Building the test Superset's content through its REST API, as a user's scripts would: a DuckDB
warehouse (the dbt test project's table names), a database, physical and virtual datasets, charts and a
dashboard. What the tests expect of them is written by hand in the tests."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

# The warehouse: tables the dbt test project (tests/data/dbt) builds, same schemas and columns, in a
# DuckDB file named jaffle.duckdb (catalog `jaffle`, as dbt-duckdb names it).
WAREHOUSE_SQL = """
CREATE SCHEMA main_marts;
CREATE TABLE main_marts.customers (customer_id INTEGER, first_name VARCHAR, last_name VARCHAR,
    first_order DATE, number_of_orders BIGINT, lifetime_value DOUBLE);
INSERT INTO main_marts.customers VALUES (1, 'Ann', 'Lee', DATE '2024-01-02', 3, 120.5),
    (2, 'Bo', 'Ng', DATE '2024-02-03', 1, 20.0);
CREATE TABLE main_marts.fct_orders (order_id INTEGER, customer_id INTEGER, order_date DATE, status VARCHAR,
    product_name VARCHAR, credit_card_amount DOUBLE, amount DOUBLE);
INSERT INTO main_marts.fct_orders VALUES (10, 1, DATE '2024-01-02', 'shipped', 'tea', 10.0, 12.5),
    (11, 2, DATE '2024-02-03', 'placed', 'cake', 0.0, 20.0);
"""

VIRTUAL_SQL = (
    "SELECT c.customer_id, c.first_name, o.amount AS order_amount\n"
    "FROM main_marts.customers AS c JOIN main_marts.fct_orders AS o ON o.customer_id = c.customer_id\n"
    "WHERE o.amount > 0 /* for {{ current_username() }} */"
)


def make_warehouse(folder: Path) -> Path:
    import duckdb

    path = folder / "jaffle.duckdb"
    con = duckdb.connect(str(path))
    try:
        con.execute(WAREHOUSE_SQL)
    finally:
        con.close()
    return path


@dataclass
class Api:
    url: str
    session: requests.Session = field(default_factory=requests.Session)

    def login(self, username: str, password: str) -> None:
        r = self.session.post(
            f"{self.url}/api/v1/security/login",
            json={"username": username, "password": password, "provider": "db", "refresh": True},
            timeout=30,
        )
        r.raise_for_status()
        self.session.headers["Authorization"] = "Bearer " + r.json()["access_token"]

    def call(self, method: str, path: str, body: Any = None) -> Any:
        r = self.session.request(method, f"{self.url}/api/v1/{path}", json=body, timeout=60)
        if r.status_code >= 400:
            raise AssertionError(f"{method} {path}: {r.status_code} {r.text[:500]}")
        return r.json() if r.content else None


def dataset_columns(api: Api, dataset_id: int) -> list[str]:
    return [c["column_name"] for c in api.call("GET", f"dataset/{dataset_id}")["result"]["columns"]]


def build_content(api: Api, warehouse: Path, prefix: str = "t") -> dict[str, Any]:
    """The objects the tests read back; names start with ``prefix`` so runs do not collide."""
    db = api.call(
        "POST",
        "database/",
        {
            "database_name": f"{prefix}-Warehouse",
            "sqlalchemy_uri": f"duckdb:///{warehouse}",
            "expose_in_sqllab": True,
        },
    )["id"]
    customers = api.call(
        "POST", "dataset/", {"database": db, "schema": "main_marts", "table_name": "customers"}
    )["id"]
    orders = api.call(
        "POST", "dataset/", {"database": db, "schema": "main_marts", "table_name": "fct_orders"}
    )["id"]
    # a saved metric on customers
    api.call(
        "PUT",
        f"dataset/{customers}",
        {"metrics": [{"metric_name": "total_ltv", "expression": "SUM(lifetime_value)"}]},
    )
    virtual = api.call(
        "POST",
        "dataset/",
        {"database": db, "schema": "main_marts", "table_name": f"{prefix}_big_customers", "sql": VIRTUAL_SQL},
    )["id"]
    api.call("PUT", f"dataset/{virtual}/refresh")
    charts = {}
    charts["ltv"] = _chart(
        api,
        "Lifetime value by name",
        customers,
        "table",
        {"groupby": ["first_name"], "metrics": ["total_ltv"], "query_mode": "aggregate"},
    )
    charts["amount"] = _chart(
        api,
        "Order amount",
        orders,
        "big_number_total",
        {
            "metric": {
                "expressionType": "SIMPLE",
                "column": {"column_name": "amount"},
                "aggregate": "SUM",
                "label": "SUM(amount)",
            }
        },
    )
    charts["big"] = _chart(
        api,
        "Big customers",
        virtual,
        "table",
        {"all_columns": ["first_name", "order_amount"], "query_mode": "raw"},
    )
    dash = api.call(
        "POST", "dashboard/", {"dashboard_title": f"{prefix} Customer overview", "published": True}
    )["id"]
    position: dict[str, Any] = {
        "DASHBOARD_VERSION_KEY": "v2",
        "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID", "children": ["GRID_ID"]},
        "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": ["ROW-1"], "parents": ["ROOT_ID"]},
        "ROW-1": {
            "type": "ROW",
            "id": "ROW-1",
            "children": [],
            "parents": ["ROOT_ID", "GRID_ID"],
            "meta": {},
        },
    }
    for key, chart_id in charts.items():
        node = f"CHART-{key}"
        position["ROW-1"]["children"].append(node)
        position[node] = {
            "type": "CHART",
            "id": node,
            "children": [],
            "parents": ["ROOT_ID", "GRID_ID", "ROW-1"],
            "meta": {"chartId": chart_id, "width": 4, "height": 50},
        }
        api.call("PUT", f"chart/{chart_id}", {"dashboards": [dash]})
    api.call("PUT", f"dashboard/{dash}", {"position_json": json.dumps(position)})
    return {
        "prefix": prefix,
        "database_name": f"{prefix}-Warehouse",
        "database": db,
        "datasets": {"customers": customers, "orders": orders, "virtual": virtual},
        "charts": charts,
        "dashboard": dash,
    }


def _chart(api: Api, name: str, dataset: int, viz: str, params: dict[str, Any]) -> int:
    body = {
        "slice_name": name,
        "viz_type": viz,
        "datasource_id": dataset,
        "datasource_type": "table",
        "params": json.dumps({"viz_type": viz, "datasource": f"{dataset}__table", **params}),
    }
    return int(api.call("POST", "chart/", body)["id"])


def export_zip(api: Api, dashboard_ids: list[int], out: Path) -> Path:
    r = api.session.get(
        f"{api.url}/api/v1/dashboard/export/",
        params={"q": "!(" + ",".join(map(str, dashboard_ids)) + ")"},
        timeout=60,
    )
    r.raise_for_status()
    out.write_bytes(r.content)
    return out
