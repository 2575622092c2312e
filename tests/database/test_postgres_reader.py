"""The ``database`` reader against a real PostgreSQL (tests/data/database/shop.sql): views on views,
a SELECT * view, a materialized view, PL/pgSQL and SQL routines, pg_stat_statements filled by real
queries. Expectations are written by hand from shop.sql."""

from __future__ import annotations

from typing import Any

import pytest

from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.readers.database import READER

from .conftest import Database

S = "shop"  # every name gets the database's name first; tests replace it with the real one


def read(db: Database, **options: Any) -> LineageGraph:
    return READER.read(db_url=db.url, db_password_file=db.server.password_file, workers=1, **options)


def named(db: Database, text: str) -> str:
    return text.replace("shop.", f"{db.name}.")


def process_lineage(graph: LineageGraph, db: Database) -> dict[str, dict[str, Any]]:
    """process (without the job) -> inputs, outputs, column edges; names with ``shop`` for the db."""

    def short(x: str) -> str:
        return x.replace(f"{db.name}.", "shop.")

    out: dict[str, dict[str, Any]] = {}
    for p in graph.processes:
        out[short(p.id.split(":", 1)[1])] = {
            "inputs": sorted(short(i) for i in p.inputs),
            "outputs": sorted(short(o) for o in p.outputs),
            "columns": {
                (short(str(e.source)), short(str(e.target)), e.kind) for e in graph.edges if e.process == p.id
            },
        }
    return out


VIEWS = {
    "shop.sales.all_orders": {
        "inputs": ["shop.sales.orders"],
        "outputs": ["shop.sales.all_orders"],
        "columns": {
            (f"shop.sales.orders.{c}", f"shop.sales.all_orders.{c}", "IDENTITY")
            for c in ("id", "customer_id", "amount", "status", "ordered_at")
        },
    },
    "shop.sales.paid_orders": {
        "inputs": ["shop.sales.all_orders"],
        "outputs": ["shop.sales.paid_orders"],
        "columns": {
            *(
                (f"shop.sales.all_orders.{c}", f"shop.sales.paid_orders.{c}", "IDENTITY")
                for c in ("id", "customer_id", "amount", "ordered_at")
            ),
            ("shop.sales.all_orders.status", "shop.sales.paid_orders.*", "FILTER"),
        },
    },
    "shop.mart.customer_revenue": {
        "inputs": ["shop.sales.customers", "shop.sales.paid_orders"],
        "outputs": ["shop.mart.customer_revenue"],
        "columns": {
            ("shop.sales.customers.id", "shop.mart.customer_revenue.customer_id", "IDENTITY"),
            ("shop.sales.customers.name", "shop.mart.customer_revenue.name", "IDENTITY"),
            ("shop.sales.paid_orders.amount", "shop.mart.customer_revenue.revenue", "AGGREGATION"),
            ("shop.sales.paid_orders.customer_id", "shop.mart.customer_revenue.*", "JOIN"),
            ("shop.sales.customers.id", "shop.mart.customer_revenue.*", "JOIN"),
            ("shop.sales.customers.id", "shop.mart.customer_revenue.*", "GROUP_BY"),
            ("shop.sales.customers.name", "shop.mart.customer_revenue.*", "GROUP_BY"),
        },
    },
    "shop.mart.top_customers": {
        "inputs": ["shop.mart.customer_revenue"],
        "outputs": ["shop.mart.top_customers"],
        "columns": {
            ("shop.mart.customer_revenue.customer_id", "shop.mart.top_customers.customer_id", "IDENTITY"),
            ("shop.mart.customer_revenue.name", "shop.mart.top_customers.name", "TRANSFORMATION"),
            ("shop.mart.customer_revenue.revenue", "shop.mart.top_customers.*", "FILTER"),
        },
    },
    "shop.mart.country_orders": {
        "inputs": ["shop.sales.customers", "shop.sales.orders"],
        "outputs": ["shop.mart.country_orders"],
        "columns": {
            ("shop.sales.customers.country", "shop.mart.country_orders.country", "IDENTITY"),
            ("shop.sales.customers.id", "shop.mart.country_orders.*", "JOIN"),
            ("shop.sales.orders.customer_id", "shop.mart.country_orders.*", "JOIN"),
            ("shop.sales.customers.country", "shop.mart.country_orders.*", "GROUP_BY"),
        },
    },
    "shop.public.recent_events": {
        "inputs": ["shop.public.events"],
        "outputs": ["shop.public.recent_events"],
        "columns": {
            ("shop.public.events.id", "shop.public.recent_events.id", "IDENTITY"),
            ("shop.public.events.kind", "shop.public.recent_events.kind", "IDENTITY"),
            ("shop.public.events.id", "shop.public.recent_events.*", "FILTER"),
        },
    },
}

ROUTINES = {
    "shop.mart.refresh_daily": {
        "inputs": ["shop.sales.orders"],  # through the temporary table recent
        "outputs": ["shop.mart.daily_revenue", "shop.mart.refresh_log"],
        "columns": {
            ("shop.sales.orders.ordered_at", "shop.mart.daily_revenue.day", "IDENTITY"),
            ("shop.sales.orders.amount", "shop.mart.daily_revenue.revenue", "AGGREGATION"),
            ("shop.sales.orders.ordered_at", "shop.mart.daily_revenue.*", "GROUP_BY"),
            ("shop.sales.orders.ordered_at", "shop.mart.daily_revenue.*", "FILTER"),  # >= p_since
            # refresh_log gets VALUES (now(), v_rows): no column of a table
        },
    },
    "shop.mart.load_customer_totals": {
        "inputs": ["shop.sales.orders"],
        "outputs": ["shop.mart.customer_totals"],
        "columns": {
            ("shop.sales.orders.customer_id", "shop.mart.customer_totals.customer_id", "IDENTITY"),
            ("shop.sales.orders.amount", "shop.mart.customer_totals.total", "AGGREGATION"),
            ("shop.sales.orders.customer_id", "shop.mart.customer_totals.*", "GROUP_BY"),
        },
    },
    # mart.order_count only reads: no process
}


def test_views_lineage_from_the_catalog(shop: Database) -> None:
    graph = read(shop, passes="views")
    assert process_lineage(graph, shop) == VIEWS
    assert graph.job == shop.name
    assert [p.id for p in graph.processes][0].startswith(f"{shop.name}:{shop.name}.")
    views = {d.id for d in graph.datasets if d.kind == "view"}
    assert {named(shop, v) for v in VIEWS} <= views
    assert named(shop, "shop.sales.orders") not in views


def test_procedures_and_functions_from_the_catalog(shop: Database) -> None:
    graph = read(shop, passes="procedures")
    assert process_lineage(graph, shop) == ROUTINES
    dynamic = [p for p in graph.problems if p.code == "dynamic-sql"]
    assert len(dynamic) == 1 and "load_customer_totals" in dynamic[0].message
    assert not [p for p in graph.problems if p.severity == "error"]


def test_column_types_come_from_the_catalog(shop: Database) -> None:
    graph = read(shop, passes="views")
    orders = graph.dataset(named(shop, "shop.sales.orders"))
    assert orders is not None
    assert [(c.name, c.type) for c in orders.columns] == [
        ("id", "bigint"),
        ("customer_id", "integer"),
        ("amount", "numeric(12,2)"),
        ("status", "character varying(20)"),
        ("ordered_at", "date"),
    ]
    view = graph.dataset(named(shop, "shop.mart.customer_revenue"))
    assert view is not None and view.kind == "view"
    assert [(c.name, c.type) for c in view.columns] == [
        ("customer_id", "integer"),
        ("name", "text"),
        ("revenue", "numeric"),
    ]


def test_query_history_finds_the_insert_selects_and_nothing_of_other_kinds(shop: Database) -> None:
    shop.execute(
        "INSERT INTO sales.customers VALUES (1, 'ann', 'FR', now()), (2, 'bob', 'DE', now())",
        "INSERT INTO sales.orders VALUES (10, 1, 120.5, 'paid', '2024-01-02'), (11, 2, 9, 'open', '2024-01-02')",
        # the two lineage-bearing statements (the second runs twice: one process, runs = 2)
        "INSERT INTO mart.customer_totals (customer_id, total) "
        "SELECT customer_id, sum(amount) FROM sales.orders GROUP BY customer_id",
        "INSERT INTO mart.daily_revenue (day, revenue, orders) "
        "SELECT ordered_at, sum(amount), count(*) FROM sales.orders WHERE status = 'paid' GROUP BY ordered_at",
        "DELETE FROM mart.daily_revenue",
        "INSERT INTO mart.daily_revenue (day, revenue, orders) "
        "SELECT ordered_at, sum(amount), count(*) FROM sales.orders WHERE status = 'paid' GROUP BY ordered_at",
        # excluded kinds: reads, DDL, writes from values only, a DELETE of the table's own rows
        "SELECT * FROM mart.customer_revenue",
        "CREATE TABLE public.scratch (a int)",
        "UPDATE mart.refresh_log SET rows_loaded = 0",
        "CREATE VIEW public.v_scratch AS SELECT a FROM public.scratch",
    )
    graph = read(shop)  # all passes: views and routines come from the catalog, the rest from the history
    history = [p for p in graph.processes if "runs" in p.attributes]
    assert len(history) == 2
    by_target = {tuple(p.outputs): p for p in history}
    totals = by_target[(named(shop, "shop.mart.customer_totals"),)]
    daily = by_target[(named(shop, "shop.mart.daily_revenue"),)]
    assert totals.inputs == daily.inputs == [named(shop, "shop.sales.orders")]
    assert daily.attributes["runs"] == 2 and totals.attributes["runs"] == 1
    assert daily.attributes["users"] == ["atlas"]
    cols = {(str(e.source), str(e.target), e.kind) for e in graph.edges if e.process == daily.id}
    assert (
        named(shop, "shop.sales.orders.amount"),
        named(shop, "shop.mart.daily_revenue.revenue"),
        "AGGREGATION",
    ) in cols
    # the CREATE VIEW of the history is left to the views pass (which finds the view)
    assert not any("v_scratch" in o for p in history for o in p.outputs)
    assert graph.process(f"{shop.name}:{shop.name}.public.v_scratch") is not None


def test_a_history_limited_to_one_row_reads_one_statement(shop: Database) -> None:
    shop.execute(
        "INSERT INTO mart.customer_totals SELECT customer_id, amount FROM sales.orders",
        "INSERT INTO mart.refresh_log (rows_loaded) SELECT count(*) FROM sales.customers",
    )
    assert len(read(shop, passes="queries", query_limit=1).processes) == 1
    none = read(shop, passes="queries", query_filters="AND r.rolname = 'nobody'")
    assert none.processes == []


def test_errors_name_the_server_and_never_the_password(pg: Any, shop: Database, tmp_path: Any) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password-7731\n", encoding="utf-8")
    with pytest.raises(AtlasSyncError) as bad:
        READER.read(db_url=shop.url, db_password_file=str(wrong))
    text = f"{bad.value} {bad.value.hint}"
    assert "password authentication failed" in text and "not-the-password-7731" not in text
    assert shop.server.password not in text
    closed = shop.url.replace(shop.url.split("@")[1].split("/")[0], "127.0.0.1:9")
    with pytest.raises(AtlasSyncError) as unreachable:
        READER.read(db_url=closed, db_password_file=pg.password_file, connect_timeout=3)
    assert "cannot connect to postgresql://atlas@127.0.0.1:9/" in str(unreachable.value)
    with pytest.raises(AtlasSyncError) as in_url:
        READER.read(db_url=shop.url.replace("atlas@", "atlas:secret@"))
    assert "holds a password" in str(in_url.value) and "secret" not in str(in_url.value)


def test_missing_permission_on_the_history_is_a_clear_error(shop: Database, tmp_path: Any) -> None:
    role = f"reader_{shop.name[-6:]}"
    secret = "reader-pass-5190"
    shop.execute(
        f"CREATE ROLE {role} LOGIN PASSWORD '{secret}'",
        f"GRANT USAGE ON SCHEMA sales, mart TO {role}",
        "REVOKE ALL ON pg_stat_statements FROM PUBLIC",
    )
    pw = tmp_path / "reader.pw"
    pw.write_text(secret + "\n", encoding="utf-8")
    url = shop.server.database_url(shop.name, user=role)
    try:
        with pytest.raises(AtlasSyncError) as denied:
            READER.read(db_url=url, db_password_file=str(pw), passes="views,queries")  # asked for
        assert "permission denied" in str(denied.value) and "pg_stat_statements" in str(denied.value)
        assert "pg_read_all_stats" in (denied.value.hint or "")
        assert secret not in f"{denied.value} {denied.value.hint}"
        # without the history pass the same user reads the views
        assert (
            process_lineage(READER.read(db_url=url, db_password_file=str(pw), passes="views"), shop) == VIEWS
        )
        # every pass by default: the history this user cannot read is a warning naming the fix
        graph = READER.read(db_url=url, db_password_file=str(pw))
        (warning,) = [p for p in graph.problems if p.code == "no-history"]
        assert warning.severity == "warning" and "permission denied" in warning.message
        assert "pg_read_all_stats" in warning.message and secret not in warning.message
    finally:
        shop.execute("GRANT SELECT ON pg_stat_statements TO PUBLIC")


def test_the_password_may_come_from_the_drivers_environment_or_our_variable(
    shop: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATLAS_SYNC_DB_PASSWORD_FILE", raising=False)
    monkeypatch.setenv("PGPASSWORD", shop.server.password)
    assert len(READER.read(db_url=shop.url, passes="views").processes) == len(VIEWS)
    monkeypatch.delenv("PGPASSWORD")
    monkeypatch.setenv("ATLAS_SYNC_DB_PASSWORD_FILE", shop.server.password_file)
    assert len(READER.read(db_url=shop.url, passes="views").processes) == len(VIEWS)
