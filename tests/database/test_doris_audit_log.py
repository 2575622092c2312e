"""The ``database`` reader's Doris audit-log pass (``-o history=doris_audit_log``) over a real
MySQL-protocol connection.

Apache Doris itself cannot run here (no Docker, not in Debian), so the server is a real MariaDB:
the connection, the catalog reads, the audit-log query and the SQL are real, and the statements
are run for real on it; the rows of ``__internal_schema.audit_log`` (created with Doris's own column
list, tests/data/database/doris_audit_log.sql) are written by the test, in Doris's format (catalog
``internal``, ``queried_tables_and_views`` / ``chosen_m_views`` as the JSON-like arrays Doris
returns, ``state`` EOF/OK/ERR, ``query_time`` in milliseconds). Expectations are written by hand.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pymysql.cursors

from atlas_sync.lineage.database.mysql import is_doris
from atlas_sync.lineage.readers.database import READER
from atlas_sync.lineage.readers.query_log import READER as QUERY_LOG

from .conftest import MySQLDatabase, MySQLServer
from .test_mysql_reader import process_lineage

DAILY = (
    "INSERT INTO daily_revenue (day, revenue, orders) "
    "SELECT ordered_at, SUM(amount), COUNT(*) FROM orders WHERE status = '{status}' GROUP BY ordered_at"
)
TOTALS = "INSERT INTO customer_totals (customer_id, total) SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id"


def t(db: MySQLDatabase, *names: str) -> str:
    """A Doris array of catalog-qualified names, as the audit log holds it."""
    return "[" + ",".join(f'"internal.{db.name}.{n}"' for n in names) + "]"


def audit_rows(db: MySQLDatabase) -> list[dict[str, Any]]:
    """The statements of a day on the shop, as Doris's audit log records them."""
    return [
        # writes (one of them twice, with another literal; one served by a materialized view)
        dict(
            user="etl",
            stmt=DAILY.format(status="paid"),
            state="OK",
            is_query=0,
            stmt_type="INSERT",
            queried=t(db, "orders"),
            mvs="[]",
            minutes_ago=50,
        ),
        dict(
            user="etl",
            stmt=DAILY.format(status="shipped"),
            state="OK",
            is_query=0,
            stmt_type="INSERT",
            queried=t(db, "orders"),
            mvs="[]",
            minutes_ago=40,
        ),
        dict(
            user="etl",
            stmt=TOTALS,
            state="OK",
            is_query=0,
            stmt_type="INSERT",
            queried=t(db, "orders"),
            mvs=t(db, "mv_customer_totals"),
            minutes_ago=30,
        ),
        # read-only queries: read lineage of their users
        dict(
            user="analyst",
            stmt="SELECT * FROM paid_orders WHERE amount > 100",
            state="EOF",
            is_query=1,
            stmt_type="SELECT",
            queried=t(db, "paid_orders"),
            mvs="[]",
            minutes_ago=20,
        ),
        dict(
            user="analyst",
            stmt="SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id",
            state="EOF",
            is_query=1,
            stmt_type="SELECT",
            queried=t(db, "orders"),
            mvs=t(db, "mv_customer_totals"),
            minutes_ago=15,
        ),
        dict(
            user="bi",
            stmt="SELECT c.name, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id",
            state="EOF",
            is_query=1,
            stmt_type="SELECT",
            queried=t(db, "customers", "orders"),
            mvs="[]",
            minutes_ago=10,
        ),
        # left out: failed, internal, older than the window (24 h)
        dict(
            user="analyst",
            stmt="SELECT * FROM secret_table",
            state="ERR",
            is_query=1,
            stmt_type="SELECT",
            queried="[]",
            mvs="[]",
            minutes_ago=5,
        ),
        dict(
            user="root",
            stmt="INSERT INTO __internal_schema.column_statistics SELECT id FROM orders",
            state="OK",
            is_query=0,
            stmt_type="INSERT",
            queried=t(db, "orders"),
            mvs="[]",
            minutes_ago=5,
            internal=1,
        ),
        dict(
            user="old",
            stmt="SELECT * FROM customers",
            state="EOF",
            is_query=1,
            stmt_type="SELECT",
            queried=t(db, "customers"),
            mvs="[]",
            minutes_ago=48 * 60,
        ),
    ]


def fill(db: MySQLDatabase, server: MySQLServer) -> None:
    """Run the day's statements for real, then write their audit rows."""
    db.execute(
        "INSERT INTO customers VALUES (1, 'ann', 'FR'), (2, 'bob', 'DE')",
        "INSERT INTO orders VALUES (10, 1, 120.5, 'paid', '2024-01-02'), (11, 2, 9, 'shipped', '2024-01-02')",
    )
    rows = audit_rows(db)
    for row in rows:
        if row["state"] != "ERR" and not row.get("internal"):
            db.execute(row["stmt"])
    with server.connect() as conn, conn.cursor() as cur:
        for n, row in enumerate(rows):
            cur.execute(
                "INSERT INTO __internal_schema.audit_log (query_id, `time`, client_ip, `user`, frontend_ip, "
                "`catalog`, db, state, error_code, error_message, query_time, scan_rows, return_rows, "
                "stmt_type, stmt_id, is_query, is_nereids, is_internal, queried_tables_and_views, "
                "chosen_m_views, sql_hash, stmt) VALUES (%s, NOW(3) - INTERVAL %s MINUTE, '10.0.0.7:51234', "
                "%s, '10.0.0.2', 'internal', %s, %s, %s, %s, %s, 12, 3, %s, %s, %s, 1, %s, %s, %s, MD5(%s), %s)",
                (
                    f"{db.name[-8:]}-{n:04d}-0000-0000-000000000000",
                    row["minutes_ago"],
                    row["user"],
                    db.name,
                    row["state"],
                    1105 if row["state"] == "ERR" else 0,
                    "errCode = 2, detailMessage = Table [secret_table] does not exist"
                    if row["state"] == "ERR"
                    else "",
                    250 + n,
                    row["stmt_type"],
                    n + 1,
                    row["is_query"],
                    row.get("internal", 0),
                    row["queried"],
                    row["mvs"],
                    row["stmt"],
                    row["stmt"],
                ),
            )


def read(db: MySQLDatabase, **options: Any):
    return READER.read(
        db_url=db.url,
        db_password_file=db.server.password_file,
        history="doris_audit_log",  # the audit table is the server's, shared by the tests: the
        # default template reads only this database's (the URL's) rows
        workers=1,
        **options,
    )


WRITES = {
    "DAILY": {
        "inputs": ["shop.orders"],
        "outputs": ["shop.daily_revenue"],
        "columns": {
            ("shop.orders.ordered_at", "shop.daily_revenue.day", "IDENTITY"),
            ("shop.orders.amount", "shop.daily_revenue.revenue", "AGGREGATION"),
            ("shop.orders.ordered_at", "shop.daily_revenue.*", "GROUP_BY"),
            ("shop.orders.status", "shop.daily_revenue.*", "FILTER"),
        },
    },
    "TOTALS": {
        "inputs": ["shop.mv_customer_totals", "shop.orders"],  # the MV the optimizer chose is read
        "outputs": ["shop.customer_totals"],
        "columns": {
            ("shop.orders.customer_id", "shop.customer_totals.customer_id", "IDENTITY"),
            ("shop.orders.amount", "shop.customer_totals.total", "AGGREGATION"),
            ("shop.orders.customer_id", "shop.customer_totals.*", "GROUP_BY"),
        },
    },
}
READS = {
    "reads:analyst": {
        "inputs": ["shop.mv_customer_totals", "shop.orders", "shop.paid_orders"],
        "outputs": [],
        "columns": set(),
    },
    "reads:bi": {"inputs": ["shop.customers", "shop.orders"], "outputs": [], "columns": set()},
}


def history_lineage(graph: Any, db: MySQLDatabase) -> dict[str, dict[str, Any]]:
    """As process_lineage, with the statements' hashed ids replaced by DAILY / TOTALS (their target)."""
    out = {}
    for pid, lineage in process_lineage(graph, db, prefix="internal.").items():
        if pid.startswith("reads:"):
            out[pid] = lineage
        elif (
            lineage["outputs"] == ["shop.daily_revenue"]
            and "runs" in graph.process(f"{graph.job}:{pid}").attributes
        ):
            out["DAILY"] = lineage
        elif (
            lineage["outputs"] == ["shop.customer_totals"]
            and "runs" in graph.process(f"{graph.job}:{pid}").attributes
        ):
            out["TOTALS"] = lineage
    return out


def test_audit_log_writes_reads_and_chosen_materialized_views(
    myshop: MySQLDatabase, doris_audit: MySQLServer
) -> None:
    fill(myshop, doris_audit)
    graph = read(myshop, passes="queries")
    assert history_lineage(graph, myshop) == {**WRITES, **READS}
    assert len(graph.processes) == 4  # nothing from the failed, internal or old rows
    job = myshop.name
    daily = next(p for p in graph.processes if p.outputs == [f"internal.{job}.daily_revenue"])
    assert daily.attributes["runs"] == 2 and daily.attributes["users"] == ["etl"]
    # the doris dialect, which parses as MySQL (OpenMetadata's mapping, lineage/sql/dialects.py)
    assert daily.attributes["dialect"] == "mysql"
    assert abs(daily.attributes["totalDuration"] - (0.250 + 0.251)) < 1e-9  # ms in the log, s here
    totals = next(p for p in graph.processes if p.outputs == [f"internal.{job}.customer_totals"])
    assert totals.attributes["materializedViews"] == [f"internal.{job}.mv_customer_totals"]
    analyst = graph.process(f"{job}:reads:analyst")
    assert analyst is not None
    assert analyst.attributes["statementType"] == "READ" and analyst.attributes["queries"] == 2
    assert analyst.attributes["materializedViews"] == [f"internal.{job}.mv_customer_totals"]
    mv = graph.dataset(f"internal.{job}.mv_customer_totals")
    assert mv is not None and mv.kind == "view"
    assert graph.process(f"{job}:reads:old") is None and graph.process(f"{job}:reads:root") is None


def test_audit_log_and_catalog_name_one_dataset(myshop: MySQLDatabase, doris_audit: MySQLServer) -> None:
    fill(myshop, doris_audit)
    graph = read(myshop)  # all passes: the views' datasets are the ones the audit log names
    job = myshop.name
    view = graph.process(f"{job}:internal.{job}.paid_orders")
    assert view is not None and view.inputs == [f"internal.{job}.all_orders"]
    paid = graph.dataset(f"internal.{job}.paid_orders")
    assert paid is not None and paid.kind == "view"
    assert [c.name for c in paid.columns] == ["id", "customer_id", "amount", "ordered_at"]
    assert f"internal.{job}.paid_orders" in graph.process(f"{job}:reads:analyst").inputs
    assert not [d for d in graph.datasets if d.id.startswith(f"{job}.")]  # no second, uncatalogued copy


def test_the_live_audit_log_and_its_csv_export_give_the_same_lineage(
    myshop: MySQLDatabase, doris_audit: MySQLServer, tmp_path: Path
) -> None:
    fill(myshop, doris_audit)
    live = read(myshop, passes="queries")
    with doris_audit.connect() as conn, conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(
            "SELECT * FROM __internal_schema.audit_log WHERE db = %s AND `time` >= NOW() - INTERVAL 1 DAY",
            (myshop.name,),
        )
        rows = cur.fetchall()
    export = tmp_path / "audit_log.csv"
    with export.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)
    exported = QUERY_LOG.read([str(export)], job=myshop.name, workers=1)
    assert history_lineage(exported, myshop) == history_lineage(live, myshop) == {**WRITES, **READS}
    assert json.dumps(sorted(p.id for p in exported.processes)) == json.dumps(
        sorted(p.id for p in live.processes)
    )


def test_doris_is_told_by_its_version_comment() -> None:
    assert is_doris("Doris version doris-3.0.3-rc03-43f06a5e26", "5.7.99")
    assert not is_doris("mariadb.org binary distribution", "10.11.19-MariaDB-0+deb12u1")
    assert not is_doris("MySQL Community Server - GPL", "8.0.36")
