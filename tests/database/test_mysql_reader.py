"""The ``database`` reader against a real MariaDB over the MySQL protocol (PyMySQL):
tests/data/database/shop_mysql.sql gives views on views, a SELECT * view, stored procedures (one
with dynamic SQL) and a function; the Performance Schema's statement history is filled by running
real statements. Expectations are written by hand from shop_mysql.sql and the statements run."""

from __future__ import annotations

from typing import Any

import pytest

from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.readers.database import READER

from .conftest import MySQLDatabase


def read(db: MySQLDatabase, **options: Any) -> LineageGraph:
    return READER.read(db_url=db.url, db_password_file=db.server.password_file, workers=1, **options)


def named(db: MySQLDatabase, text: str) -> str:
    return text.replace("shop.", f"{db.name}.")


def process_lineage(graph: LineageGraph, db: MySQLDatabase, prefix: str = "") -> dict[str, dict[str, Any]]:
    """process (without the job) -> inputs, outputs, column edges; ``shop`` for the database's name
    (after ``prefix``, the catalog part of the names)."""

    def short(x: str) -> str:
        return x.replace(f"{prefix}{db.name}.", "shop.")

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
    "shop.all_orders": {  # SELECT *: the columns the server reports
        "inputs": ["shop.orders"],
        "outputs": ["shop.all_orders"],
        "columns": {
            (f"shop.orders.{c}", f"shop.all_orders.{c}", "IDENTITY")
            for c in ("id", "customer_id", "amount", "status", "ordered_at")
        },
    },
    "shop.paid_orders": {
        "inputs": ["shop.all_orders"],
        "outputs": ["shop.paid_orders"],
        "columns": {
            *(
                (f"shop.all_orders.{c}", f"shop.paid_orders.{c}", "IDENTITY")
                for c in ("id", "customer_id", "amount", "ordered_at")
            ),
            ("shop.all_orders.status", "shop.paid_orders.*", "FILTER"),
        },
    },
    "shop.customer_revenue": {
        "inputs": ["shop.customers", "shop.paid_orders"],
        "outputs": ["shop.customer_revenue"],
        "columns": {
            ("shop.customers.id", "shop.customer_revenue.customer_id", "IDENTITY"),
            ("shop.customers.name", "shop.customer_revenue.name", "IDENTITY"),
            ("shop.paid_orders.amount", "shop.customer_revenue.revenue", "AGGREGATION"),
            ("shop.paid_orders.customer_id", "shop.customer_revenue.*", "JOIN"),
            ("shop.customers.id", "shop.customer_revenue.*", "JOIN"),
            ("shop.customers.id", "shop.customer_revenue.*", "GROUP_BY"),
            ("shop.customers.name", "shop.customer_revenue.*", "GROUP_BY"),
        },
    },
    "shop.top_customers": {
        "inputs": ["shop.customer_revenue"],
        "outputs": ["shop.top_customers"],
        "columns": {
            ("shop.customer_revenue.customer_id", "shop.top_customers.customer_id", "IDENTITY"),
            ("shop.customer_revenue.name", "shop.top_customers.name", "TRANSFORMATION"),
            ("shop.customer_revenue.revenue", "shop.top_customers.*", "FILTER"),
        },
    },
}

ROUTINES = {
    "shop.refresh_daily": {
        "inputs": ["shop.orders"],  # through the temporary table recent
        "outputs": ["shop.daily_revenue", "shop.refresh_log"],
        "columns": {
            ("shop.orders.ordered_at", "shop.daily_revenue.day", "IDENTITY"),
            ("shop.orders.amount", "shop.daily_revenue.revenue", "AGGREGATION"),
            ("shop.orders.ordered_at", "shop.daily_revenue.*", "GROUP_BY"),
            ("shop.orders.status", "shop.daily_revenue.*", "FILTER"),
            ("shop.orders.ordered_at", "shop.daily_revenue.*", "FILTER"),  # >= p_since
            # refresh_log gets VALUES (NOW(), v_rows): no column of a table
        },
    },
    "shop.load_customer_totals": {
        "inputs": ["shop.orders"],
        "outputs": ["shop.customer_totals"],
        "columns": {
            ("shop.orders.customer_id", "shop.customer_totals.customer_id", "IDENTITY"),
            ("shop.orders.amount", "shop.customer_totals.total", "AGGREGATION"),
            ("shop.orders.customer_id", "shop.customer_totals.*", "GROUP_BY"),
        },
    },
    # order_count only reads: no process
}


def test_views_lineage_from_information_schema(myshop: MySQLDatabase) -> None:
    graph = read(myshop, passes="views")
    assert process_lineage(graph, myshop) == VIEWS
    assert graph.job == myshop.name
    assert [p.id for p in graph.processes][0] == f"{myshop.name}:{myshop.name}.all_orders"
    views = {d.id for d in graph.datasets if d.kind == "view"}
    assert {named(myshop, v) for v in VIEWS} <= views
    assert named(myshop, "shop.orders") not in views


def test_procedures_from_information_schema_routines(myshop: MySQLDatabase) -> None:
    graph = read(myshop, passes="procedures")
    assert process_lineage(graph, myshop) == ROUTINES
    dynamic = [p for p in graph.problems if p.code == "dynamic-sql"]
    assert len(dynamic) == 1 and "load_customer_totals" in dynamic[0].message
    assert not [p for p in graph.problems if p.severity == "error"]


def test_column_types_come_from_information_schema(myshop: MySQLDatabase) -> None:
    graph = read(myshop, passes="views")
    orders = graph.dataset(named(myshop, "shop.orders"))
    assert orders is not None and orders.kind == "table"
    assert [(c.name, c.type) for c in orders.columns] == [
        ("id", "bigint(20)"),
        ("customer_id", "int(11)"),
        ("amount", "decimal(12,2)"),
        ("status", "varchar(20)"),
        ("ordered_at", "date"),
    ]
    view = graph.dataset(named(myshop, "shop.customer_revenue"))
    assert view is not None and view.kind == "view"
    assert [c.name for c in view.columns] == ["customer_id", "name", "revenue"]
    assert [c.type for c in view.columns][:2] == ["int(11)", "varchar(100)"]


def test_only_the_urls_database_is_read(myshop: MySQLDatabase) -> None:
    other = MySQLDatabase(myshop.server, f"{myshop.name}_x")
    myshop.execute(f"CREATE DATABASE `{other.name}`", f"CREATE VIEW `{other.name}`.v AS SELECT 1 AS one")
    try:
        graph = read(myshop, passes="views")
        assert not [p for p in graph.processes if other.name in p.id]
        both = read(myshop, passes="views", schemas=f"{myshop.name},{other.name}")
        assert both.process(f"{myshop.name}:{other.name}.v") is not None
    finally:
        myshop.execute(f"DROP DATABASE `{other.name}`")


def test_performance_schema_history_finds_the_writes_and_nothing_of_other_kinds(
    myshop: MySQLDatabase,
) -> None:
    myshop.execute(
        "INSERT INTO customers VALUES (1, 'ann', 'FR'), (2, 'bob', 'DE')",
        "INSERT INTO orders VALUES (10, 1, 120.5, 'paid', '2024-01-02'), (11, 2, 9, 'open', '2024-01-02')",
        # lineage-bearing: the second runs twice (one process, runs = 2)
        "INSERT INTO customer_totals (customer_id, total) "
        "SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id",
        "INSERT INTO daily_revenue (day, revenue, orders) "
        "SELECT ordered_at, SUM(amount), COUNT(*) FROM orders WHERE status = 'paid' GROUP BY ordered_at",
        "DELETE FROM daily_revenue",
        "INSERT INTO daily_revenue (day, revenue, orders) "
        "SELECT ordered_at, SUM(amount), COUNT(*) FROM orders WHERE status = 'paid' GROUP BY ordered_at",
        "UPDATE refresh_log r JOIN customer_totals t ON t.customer_id = 1 SET r.rows_loaded = t.total",
        # excluded kinds: reads, DDL, writes of values only, a CREATE VIEW (the views pass has it)
        "SELECT * FROM customer_revenue",
        "CREATE TABLE scratch (a INT)",
        "INSERT INTO refresh_log (rows_loaded) VALUES (3)",
        "CREATE VIEW v_scratch AS SELECT a FROM scratch",
    )
    with pytest.raises(Exception, match="doesn't exist"):  # a failed statement is not history
        myshop.execute("INSERT INTO customer_totals SELECT id, amount FROM no_such_table")
    graph = read(myshop)  # all passes: views and routines from the catalog, the rest from the history
    history = [p for p in graph.processes if "runs" in p.attributes]
    by_target = {tuple(p.outputs): p for p in history}
    assert sorted(by_target) == sorted(
        [(named(myshop, f"shop.{t}"),) for t in ("customer_totals", "daily_revenue", "refresh_log")]
    )
    totals = by_target[(named(myshop, "shop.customer_totals"),)]
    daily = by_target[(named(myshop, "shop.daily_revenue"),)]
    log = by_target[(named(myshop, "shop.refresh_log"),)]
    assert totals.inputs == daily.inputs == [named(myshop, "shop.orders")]
    assert log.inputs == [named(myshop, "shop.customer_totals")]
    assert daily.attributes["runs"] == 2 and totals.attributes["runs"] == 1
    # the Performance Schema knows a statement's user only while its session is connected (threads)
    assert "users" not in daily.attributes
    cols = {(str(e.source), str(e.target), e.kind) for e in graph.edges if e.process == daily.id}
    assert cols == {
        (named(myshop, "shop.orders.ordered_at"), named(myshop, "shop.daily_revenue.day"), "IDENTITY"),
        (named(myshop, "shop.orders.amount"), named(myshop, "shop.daily_revenue.revenue"), "AGGREGATION"),
        (named(myshop, "shop.orders.ordered_at"), named(myshop, "shop.daily_revenue.*"), "GROUP_BY"),
        (named(myshop, "shop.orders.status"), named(myshop, "shop.daily_revenue.*"), "FILTER"),
    }
    # the CREATE VIEW of the history is left to the views pass (which finds the view)
    assert not any("v_scratch" in o for p in history for o in p.outputs)
    assert graph.process(f"{myshop.name}:{myshop.name}.v_scratch") is not None


def test_a_history_limited_to_one_row_reads_one_statement(myshop: MySQLDatabase) -> None:
    myshop.execute(
        "INSERT INTO customer_totals SELECT customer_id, amount FROM orders",
        "INSERT INTO refresh_log (rows_loaded) SELECT COUNT(*) FROM customers",
    )
    assert len(read(myshop, passes="queries", query_limit=1).processes) == 1
    assert read(myshop, passes="queries", query_filters="AND t.PROCESSLIST_USER = 'nobody'").processes == []


def test_errors_name_the_server_and_never_the_password(myshop: MySQLDatabase, tmp_path: Any) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password-7731\n", encoding="utf-8")
    with pytest.raises(AtlasSyncError) as bad:
        READER.read(db_url=myshop.url, db_password_file=str(wrong))
    text = f"{bad.value} {bad.value.hint}"
    assert f"cannot connect to mysql://atlas@{myshop.server.host_port}/{myshop.name}" in text
    assert "Access denied for user 'atlas'" in text and "check the user and the password" in text
    assert "not-the-password-7731" not in text and myshop.server.password not in text
    closed = myshop.url.replace(myshop.server.host_port, "127.0.0.1:9")
    with pytest.raises(AtlasSyncError) as unreachable:
        READER.read(db_url=closed, db_password_file=myshop.server.password_file, connect_timeout=3)
    assert f"cannot connect to mysql://atlas@127.0.0.1:9/{myshop.name}" in str(unreachable.value)
    assert "is the server running" in (unreachable.value.hint or "")
    assert myshop.server.password not in str(unreachable.value)
    with pytest.raises(AtlasSyncError) as in_url:
        READER.read(db_url=myshop.url.replace("atlas@", "atlas:secret@"))
    assert "holds a password" in str(in_url.value) and "secret" not in str(in_url.value)
    with pytest.raises(AtlasSyncError, match="unknown history 'binlog'"):
        READER.read(db_url=myshop.url, db_password_file=myshop.server.password_file, history="binlog")


def test_missing_permission_on_the_history_is_a_clear_error(myshop: MySQLDatabase, tmp_path: Any) -> None:
    user, secret = f"r_{myshop.name[-8:]}", "reader-pass-5190"
    myshop.execute(
        f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{secret}'",
        f"GRANT SELECT, SHOW VIEW, EXECUTE ON `{myshop.name}`.* TO '{user}'@'127.0.0.1'",
    )
    pw = tmp_path / "reader.pw"
    pw.write_text(secret + "\n", encoding="utf-8")
    url = myshop.server.database_url(myshop.name, user=user)
    try:
        with pytest.raises(AtlasSyncError) as denied:
            READER.read(db_url=url, db_password_file=str(pw), passes="views,queries")  # asked for
        message = str(denied.value)
        assert message.startswith(f"reading the query history of {url}: SELECT command denied")
        assert "events_statements_history_long" in message
        assert "GRANT SELECT ON performance_schema.*" in (denied.value.hint or "")
        assert secret not in f"{denied.value} {denied.value.hint}"
        # Doris's audit table: the same, naming it
        with pytest.raises(AtlasSyncError) as no_audit:
            READER.read(db_url=url, db_password_file=str(pw), history="doris_audit_log")
        assert "SELECT command denied" in str(no_audit.value) and "audit_log" in str(no_audit.value)
        assert "GRANT SELECT_PRIV ON __internal_schema.audit_log" in (no_audit.value.hint or "")
        # every pass by default: the history this user cannot read is a warning naming the fix
        graph = READER.read(db_url=url, db_password_file=str(pw))
        (warning,) = [p for p in graph.problems if p.code == "no-history"]
        assert "SELECT command denied" in warning.message
        assert "GRANT SELECT ON performance_schema.*" in warning.message
        assert process_lineage(graph, myshop) == VIEWS
        # without the history pass the same user reads the views; the routines' bodies are the
        # definer's: hidden from this user, said so
        graph = READER.read(db_url=url, db_password_file=str(pw), passes="views,procedures")
        assert process_lineage(graph, myshop) == VIEWS
        hidden = sorted(
            p.message.split(" is hidden")[0] for p in graph.problems if p.code == "definition-hidden"
        )
        assert hidden == [
            f"the definition of function {myshop.name}.order_count",
            f"the definition of procedure {myshop.name}.load_customer_totals",
            f"the definition of procedure {myshop.name}.refresh_daily",
        ]
        # without SHOW VIEW the server hides the views' definitions too: no lineage, a warning each
        myshop.execute(f"REVOKE SHOW VIEW ON `{myshop.name}`.* FROM '{user}'@'127.0.0.1'")
        blind = READER.read(db_url=url, db_password_file=str(pw), passes="views")
        assert blind.processes == []
        assert sorted(p.message.split(" is hidden")[0] for p in blind.problems) == [
            f"the definition of view {myshop.name}.{v}"
            for v in ("all_orders", "customer_revenue", "paid_orders", "top_customers")
        ]
    finally:
        myshop.execute(f"DROP USER '{user}'@'127.0.0.1'")


def test_the_password_may_come_from_mysql_pwd_my_cnf_or_our_variable(
    myshop: MySQLDatabase, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.delenv("ATLAS_SYNC_DB_PASSWORD_FILE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.my.cnf
    monkeypatch.setenv("MYSQL_PWD", myshop.server.password)
    assert len(READER.read(db_url=myshop.url, passes="views").processes) == len(VIEWS)
    monkeypatch.delenv("MYSQL_PWD")
    with pytest.raises(AtlasSyncError, match="Access denied"):  # no password at all
        READER.read(db_url=myshop.url, passes="views")
    # the MySQL client's option file, as ~/.pgpass for PostgreSQL
    option_file = tmp_path / ".my.cnf"
    option_file.write_text(f"[client]\npassword={myshop.server.password}\n", encoding="utf-8")
    option_file.chmod(0o600)
    assert len(READER.read(db_url=myshop.url, passes="views").processes) == len(VIEWS)
    option_file.write_text(f"password={myshop.server.password}\n", encoding="utf-8")  # no [client]
    with pytest.raises(AtlasSyncError) as bad:
        READER.read(db_url=myshop.url, passes="views")
    assert str(bad.value) == f"cannot read the MySQL option file {option_file}"
    assert myshop.server.password not in f"{bad.value} {bad.value.hint}"
    option_file.unlink()
    monkeypatch.setenv("ATLAS_SYNC_DB_PASSWORD_FILE", myshop.server.password_file)
    assert len(READER.read(db_url=myshop.url, passes="views").processes) == len(VIEWS)
