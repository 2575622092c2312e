"""A real PostgreSQL server for the tests in this folder.

``ATLAS_SYNC_TEST_PG_URL`` (and ``ATLAS_SYNC_TEST_PG_PASSWORD_FILE``) point at a running server
(.ci/run starts one for the whole run, ``python -m tests.support.real_postgres``); without them the
session starts its own (Debian's ``postgresql`` package, a fresh cluster on 127.0.0.1) and stops it at
the end. Only an infrastructure failure (PostgreSQL not installable, SQLAlchemy or psycopg missing)
skips, with the reason; a server that was installed but does not start fails the tests. Every test
gets a database of its own, made from tests/data/database/shop.sql.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.real_atlas import InfrastructureError

SHOP_SQL = Path(__file__).resolve().parents[1] / "data" / "database" / "shop.sql"


@dataclass(frozen=True)
class Server:
    url: str  # postgresql://USER@127.0.0.1:PORT/postgres, no password
    password_file: str

    @property
    def password(self) -> str:
        return Path(self.password_file).read_text(encoding="utf-8").splitlines()[0]

    def database_url(self, name: str, user: str | None = None) -> str:
        base, _, _db = self.url.rpartition("/")
        if user:
            scheme, _, rest = base.partition("://")
            base = f"{scheme}://{user}@{rest.split('@', 1)[-1]}"
        return f"{base}/{name}"

    def connect(self, database: str = "postgres", user: str | None = None, password: str | None = None):
        import psycopg

        _scheme, _, rest = self.url.partition("://")
        who, _, hostport = rest.partition("@")
        host, _, port = hostport.split("/", 1)[0].partition(":")
        return psycopg.connect(
            host=host,
            port=int(port),
            user=user or who,
            password=password or self.password,
            dbname=database,
            autocommit=True,
        )


@pytest.fixture(scope="session")
def pg() -> Iterator[Server]:
    try:
        import psycopg  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"the database tests need SQLAlchemy and psycopg (pip install -e '.[test]'): {exc}")
    explicit = os.environ.get("ATLAS_SYNC_TEST_PG_URL")
    if explicit:
        yield Server(explicit, os.environ["ATLAS_SYNC_TEST_PG_PASSWORD_FILE"])
        return
    from tests.support.real_postgres import Server as Launcher

    home = Path(tempfile.mkdtemp(prefix="atlas-sync-pg-"))
    launcher = Launcher(home, log=lambda _msg: None)
    try:
        info = launcher.start()
    except InfrastructureError as exc:
        shutil.rmtree(home, ignore_errors=True)
        pytest.skip(f"real PostgreSQL not available (infrastructure): {exc}")
    try:
        yield Server(str(info["url"]), str(launcher.password_file))
    finally:
        launcher.stop()
        shutil.rmtree(home, ignore_errors=True)


@dataclass(frozen=True)
class Database:
    server: Server
    name: str

    @property
    def url(self) -> str:
        return self.server.database_url(self.name)

    def execute(self, *statements: str) -> None:
        with self.server.connect(self.name) as conn:
            for sql in statements:
                conn.execute(sql)


@pytest.fixture
def shop(pg: Server) -> Iterator[Database]:
    """A fresh database holding tests/data/database/shop.sql, its query history emptied."""
    name = f"shop_{uuid.uuid4().hex[:10]}"
    with pg.connect() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    db = Database(pg, name)
    try:
        with pg.connect(name) as conn:
            conn.execute(SHOP_SQL.read_text(encoding="utf-8"))
            # this database's history only: other tests run at the same time
            conn.execute(
                "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)"
            )
        yield db
    finally:
        with pg.connect() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# ----------------------------------------------------------------- MySQL protocol (MariaDB)

SHOP_MYSQL_SQL = SHOP_SQL.with_name("shop_mysql.sql")
DORIS_AUDIT_SQL = SHOP_SQL.with_name("doris_audit_log.sql")


@dataclass(frozen=True)
class MySQLServer:
    """A real MariaDB (``ATLAS_SYNC_TEST_MYSQL_URL``, else started for the session by
    ``tests.support.real_mariadb``)."""

    url: str  # mysql://USER@127.0.0.1:PORT/, no password
    password_file: str

    @property
    def password(self) -> str:
        return Path(self.password_file).read_text(encoding="utf-8").splitlines()[0]

    @property
    def host_port(self) -> str:
        return self.url.split("@", 1)[1].split("/", 1)[0]

    def database_url(self, name: str, user: str | None = None) -> str:
        return f"mysql://{user or self.url.split('://')[1].split('@')[0]}@{self.host_port}/{name}"

    def connect(self, database: str | None = None, user: str | None = None, password: str | None = None):
        import pymysql
        from pymysql.constants import CLIENT

        host, _, port = self.host_port.partition(":")
        return pymysql.connect(
            host=host,
            port=int(port),
            user=user or self.url.split("://")[1].split("@")[0],
            password=password or self.password,
            database=database,
            autocommit=True,
            client_flag=CLIENT.MULTI_STATEMENTS,
        )


@pytest.fixture(scope="session")
def mysql_server() -> Iterator[MySQLServer]:
    try:
        import pymysql  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError as exc:
        pytest.skip(
            f"the MySQL-protocol database tests need SQLAlchemy and PyMySQL (pip install -e '.[test]'): {exc}"
        )
    explicit = os.environ.get("ATLAS_SYNC_TEST_MYSQL_URL")
    if explicit:
        yield MySQLServer(explicit, os.environ["ATLAS_SYNC_TEST_MYSQL_PASSWORD_FILE"])
        return
    from tests.support.real_mariadb import Server as Launcher

    # Under /tmp: as root the server runs as the mysql user, who must reach its folder.
    home = Path(tempfile.mkdtemp(prefix="atlas-sync-mariadb-", dir="/tmp" if os.path.isdir("/tmp") else None))
    launcher = Launcher(home, log=lambda _msg: None)
    try:
        info = launcher.start()
    except InfrastructureError as exc:
        shutil.rmtree(home, ignore_errors=True)
        pytest.skip(f"real MariaDB not available (infrastructure): {exc}")
    try:
        yield MySQLServer(str(info["url"]), str(launcher.password_file))
    finally:
        launcher.stop()
        shutil.rmtree(home, ignore_errors=True)


@dataclass(frozen=True)
class MySQLDatabase:
    server: MySQLServer
    name: str

    @property
    def url(self) -> str:
        return self.server.database_url(self.name)

    def execute(self, *statements: str) -> None:
        with self.server.connect(self.name) as conn, conn.cursor() as cur:
            for sql in statements:
                cur.execute(sql)


@pytest.fixture
def myshop(mysql_server: MySQLServer) -> Iterator[MySQLDatabase]:
    """A fresh MariaDB database holding tests/data/database/shop_mysql.sql."""
    name = f"shop_{uuid.uuid4().hex[:10]}"
    with mysql_server.connect() as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}`")
    db = MySQLDatabase(mysql_server, name)
    try:
        with mysql_server.connect(name) as conn, conn.cursor() as cur:
            cur.execute(SHOP_MYSQL_SQL.read_text(encoding="utf-8"))
            while cur.nextset():
                pass
        yield db
    finally:
        with mysql_server.connect() as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.fixture
def doris_audit(mysql_server: MySQLServer) -> MySQLServer:
    """The server with Doris's ``__internal_schema.audit_log`` table (tests write its rows)."""
    with mysql_server.connect() as conn, conn.cursor() as cur:
        cur.execute(DORIS_AUDIT_SQL.read_text(encoding="utf-8"))
        while cur.nextset():
            pass
    return mysql_server
