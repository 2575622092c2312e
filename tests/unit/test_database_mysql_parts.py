"""The MySQL-protocol parts of the ``database`` reader that need no server: URLs and drivers, where
the password comes from, how driver errors read, one statement per Performance Schema event, and
the history window on the server's clock. (The reader itself is tested against a real MariaDB in
tests/database/.)"""

from __future__ import annotations

from datetime import datetime

import pytest

pytest.importorskip("sqlalchemy")

from atlas_sync.errors import AtlasSyncError  # noqa: E402
from atlas_sync.lineage.database.connect import database_error, parse_url, password, shown  # noqa: E402
from atlas_sync.lineage.database.mysql import DORIS_AUDIT_TEMPLATE, first_statement  # noqa: E402
from atlas_sync.lineage.readers.database import render_template  # noqa: E402


def test_mysql_and_mariadb_urls_use_pymysql_and_errors_name_them_as_written() -> None:
    url = parse_url("mysql://etl@db.example.com:3306/shop")
    assert url.drivername == "mysql+pymysql" and url.database == "shop"
    assert shown(url) == "mysql://etl@db.example.com:3306/shop"
    maria = parse_url("mariadb://etl@db:3306/shop")
    assert maria.drivername == "mariadb+pymysql" and shown(maria) == "mariadb://etl@db:3306/shop"
    assert parse_url("mysql+mysqldb://etl@db/shop").drivername == "mysql+mysqldb"  # another driver, as asked


def test_a_mysql_url_holding_a_password_is_refused_without_echoing_it() -> None:
    with pytest.raises(AtlasSyncError) as err:
        parse_url("mysql://etl:s3cret-881@db:3306/shop")
    assert "holds a password" in str(err.value) and "s3cret-881" not in f"{err.value} {err.value.hint}"


def test_mysql_pwd_is_the_password_of_mysql_urls_only_and_our_file_comes_first(tmp_path) -> None:
    env = {"MYSQL_PWD": "from-env"}
    assert password(None, env, backend="mysql") == "from-env"
    assert password(None, env, backend="mariadb") == "from-env"
    assert password(None, env, backend="postgresql") is None  # libpq reads PGPASSWORD itself
    secret = tmp_path / "pw"
    secret.write_text("from-file\n", encoding="utf-8")
    secret.chmod(0o600)
    assert password(str(secret), env, backend="mysql") == "from-file"
    assert password(None, {**env, "ATLAS_SYNC_DB_PASSWORD_FILE": str(secret)}, backend="mysql") == "from-file"


def test_pymysql_errors_read_as_one_line_with_the_right_hint() -> None:
    import pymysql
    import sqlalchemy.exc

    url = parse_url("mysql://etl@db:3306/shop")

    def wrapped(code: int, message: str) -> sqlalchemy.exc.OperationalError:
        return sqlalchemy.exc.OperationalError("SELECT 1", {}, pymysql.err.OperationalError(code, message))

    denied = database_error(
        wrapped(1045, "Access denied for user 'etl'@'10.0.0.7' (using password: YES)"),
        url,
        None,
        "cannot connect to",
    )
    assert denied.message == (
        "cannot connect to mysql://etl@db:3306/shop: Access denied for user 'etl'@'10.0.0.7' "
        "(using password: YES) (error 1045)"
    )
    assert "MYSQL_PWD" in (denied.hint or "")
    refused = database_error(
        wrapped(2003, "Can't connect to MySQL server on 'db' ([Errno 111] Connection refused)"),
        url,
        None,
        "x",
    )
    assert "is the server running" in (refused.hint or "")
    unknown = database_error(wrapped(1049, "Unknown database 'shop'"), url, None, "x")
    assert "database name" in (unknown.hint or "")
    # a password a driver echoes is scrubbed
    echoed = database_error(wrapped(1045, "bad password pw-7731"), url, "pw-7731", "x")
    assert "pw-7731" not in echoed.message and "***" in echoed.message


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (
            "INSERT INTO a SELECT * FROM b;\nCREATE VIEW v AS SELECT 1;\nDROP TABLE c",
            "INSERT INTO a SELECT * FROM b",
        ),
        ("INSERT INTO a SELECT ';' FROM b; DELETE FROM c", "INSERT INTO a SELECT ';' FROM b"),
        ("INSERT INTO a SELECT x FROM b", "INSERT INTO a SELECT x FROM b"),
        ("INSERT INTO a SELECT x FROM b;", "INSERT INTO a SELECT x FROM b;"),
        (None, None),
    ],
)
def test_a_performance_schema_event_is_its_own_statement_only(text: str | None, first: str | None) -> None:
    assert first_statement(text, "mysql") == first


def test_the_doris_window_is_on_the_servers_clock_without_a_zone() -> None:
    sql = render_template(
        DORIS_AUDIT_TEMPLATE,
        filters="AND db = 'dw'",
        limit=50,
        window_hours=2,
        now=datetime(2026, 3, 4, 10, 30),
    )
    assert "`time` >= '2026-03-04 08:30:00' AND `time` < '2026-03-04 10:30:00'" in sql
    assert "AND db = 'dw'" in sql and sql.rstrip().endswith("LIMIT 50")
