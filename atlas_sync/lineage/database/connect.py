"""Connections of the ``database`` reader: a SQLAlchemy URL without a password, the password from a
file or the driver's own environment, and database errors as one-line input errors.

The password is never in the URL, argv, logs or errors: a URL holding one is refused; it comes from
``db_password_file`` (``--db-password-file``), ``ATLAS_SYNC_DB_PASSWORD_FILE``, or the driver's
environment (``PGPASSWORD``, ``~/.pgpass`` for PostgreSQL; ``MYSQL_PWD``, which PyMySQL does not
read itself, and the ``[client]`` section of ``~/.my.cnf`` for MySQL-protocol servers), and is
scrubbed from every error text.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Mapping
from typing import Any

from atlas_sync.errors import ConfigError, InputError
from atlas_sync.secrets import read_secret_file

PASSWORD_FILE_ENV = "ATLAS_SYNC_DB_PASSWORD_FILE"
MYSQL_BACKENDS = ("mysql", "mariadb")
MYSQL_OPTION_FILE = "~/.my.cnf"

#: SQLAlchemy backend name -> sqlglot dialect.
DIALECTS = {
    "postgresql": "postgres",
    "postgres": "postgres",
    "redshift": "redshift",
    "duckdb": "duckdb",
    "mysql": "mysql",
    "mariadb": "mysql",
    "mssql": "tsql",
    "oracle": "oracle",
    "snowflake": "snowflake",
    "sqlite": "sqlite",
    "trino": "trino",
    "databricks": "databricks",
    "bigquery": "bigquery",
    "clickhouse": "clickhouse",
    "doris": "doris",
    "starrocks": "starrocks",
}


def import_sqlalchemy() -> Any:
    try:
        import sqlalchemy
    except ImportError:
        raise InputError(
            "the database reader needs SQLAlchemy and a driver",
            hint="pip install 'atlas-sync[database]' (SQLAlchemy and psycopg for PostgreSQL; "
            "'atlas-sync[mysql]' for MySQL, MariaDB, Doris)",
        ) from None
    return sqlalchemy


def parse_url(url: str | None) -> Any:
    """The SQLAlchemy URL object of ``url``; refused when missing, malformed or holding a password."""
    sa = import_sqlalchemy()
    if not url:
        raise InputError(
            "the database reader needs a connection URL",
            hint="--db-url postgresql://USER@HOST:PORT/DB (the password in a file: --db-password-file)",
        )
    try:
        parsed = sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        raise InputError(
            "not a database URL (expected e.g. postgresql://USER@HOST:PORT/DB)",
            hint="the URL as SQLAlchemy spells it; no password in it",
        ) from None
    if parsed.password:
        raise ConfigError(
            "the database URL holds a password",
            hint=f"remove it from the URL; put it in a file (--db-password-file, {PASSWORD_FILE_ENV}) "
            "or the driver's environment (PGPASSWORD, MYSQL_PWD)",
        )
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3, the driver of the extra
    elif parsed.drivername in ("mysql", "mariadb"):
        parsed = parsed.set(drivername=f"{parsed.drivername}+pymysql")  # the [mysql] extra's driver
    return parsed


def password(
    password_file: str | None, env: Mapping[str, str] | None = None, *, backend: str | None = None
) -> str | None:
    """The password: the file given, else ``$ATLAS_SYNC_DB_PASSWORD_FILE``, else, for MySQL-protocol
    servers, ``$MYSQL_PWD`` (the MySQL client's variable, which PyMySQL does not read), else None
    (the driver then reads its own environment, e.g. ``PGPASSWORD``)."""
    env = os.environ if env is None else env
    path = password_file or env.get(PASSWORD_FILE_ENV)
    if path:
        return read_secret_file(path, hint=f"check --db-password-file / {PASSWORD_FILE_ENV}")
    if backend in MYSQL_BACKENDS and env.get("MYSQL_PWD"):
        return env["MYSQL_PWD"]
    return None


def shown(url: Any) -> str:
    """The URL as errors name it: never a password, never our driver suffix."""
    text: str = url.set(password=None).render_as_string(hide_password=True)
    for ours in ("postgresql+psycopg", "mysql+pymysql", "mariadb+pymysql"):
        text = text.replace(f"{ours}://", ours.split("+")[0] + "://")
    return text


def connect(url: Any, secret: str | None, *, timeout: float = 10.0) -> tuple[Any, Any]:
    """(engine, connection) for ``url`` with ``secret`` as the password; errors are input errors."""
    sa = import_sqlalchemy()
    target = url.set(password=secret) if secret else url
    args: dict[str, Any] = {}
    if url.get_backend_name() == "postgresql":
        args = {"connect_timeout": max(1, int(timeout)), "application_name": "atlas-sync"}
    option_file = None
    if url.get_backend_name() in MYSQL_BACKENDS:
        args = {"connect_timeout": max(1, int(timeout))}
        if url.get_driver_name() == "pymysql":
            args["program_name"] = "atlas-sync"
            # The MySQL client's option file, as libpq reads ~/.pgpass: its [client] password (and
            # whatever the URL leaves out)
            option_file = os.path.expanduser(MYSQL_OPTION_FILE)
            if secret is None and os.path.isfile(option_file):
                args["read_default_file"] = option_file
    if url.get_backend_name() == "duckdb":
        path = url.database or ""
        if path and path != ":memory:" and not os.path.exists(path):
            # DuckDB would create an empty database there: a typo must not read as "no lineage"
            raise InputError(
                f"no DuckDB database at {path}", hint="check the path in --db-url duckdb:///PATH"
            )
        args = {"read_only": True}
    try:
        engine = sa.create_engine(target, connect_args=args, poolclass=sa.pool.NullPool)
        conn = engine.connect()
    except ImportError as exc:
        raise InputError(
            f"no driver for {url.drivername}: {exc}",
            hint="pip install 'atlas-sync[database]' (psycopg for PostgreSQL), 'atlas-sync[mysql]' "
            "(PyMySQL for MySQL, MariaDB, Doris) or the engine's driver",
        ) from None
    except sa.exc.SQLAlchemyError as exc:
        raise database_error(exc, url, secret, "cannot connect to") from None
    except configparser.Error:
        # its message quotes the file's lines, which may hold the password
        raise InputError(
            f"cannot read the MySQL option file {option_file}",
            hint="a [client] section with password=... (or give the password with --db-password-file)",
        ) from None
    return engine, conn


_NOISE = re.compile(r"\(Background on this error at: [^)]*\)|\[SQL: .*?\]|\[parameters: .*?\]", re.DOTALL)
_PREFIX = re.compile(r"^\([\w.]+\)\s*")


def error_text(exc: BaseException, secret: str | None) -> str:
    """The driver's message on one line: SQLAlchemy's wrapper and SQL echo left out, the password
    (and its URL-encoded form) replaced."""
    orig = getattr(exc, "orig", None)
    args: tuple[Any, ...] = tuple(getattr(orig, "args", ()))
    if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str):
        text = f"{args[1]} (error {args[0]})"  # PyMySQL: (code, message)
    else:
        text = str(orig if orig is not None else exc)
    text = _NOISE.sub("", text)
    text = _PREFIX.sub("", text.strip())
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # libpq: 'connection failed: connection to server at "h" (1.2.3.4), port 1 failed: FATAL: ...'
    message = " ".join(lines[:2]) if lines else type(exc).__name__
    if secret:
        from urllib.parse import quote

        for form in {secret, quote(secret, safe=""), quote(secret)}:
            message = message.replace(form, "***")
    return message


def database_error(exc: BaseException, url: Any, secret: str | None, doing: str) -> InputError:
    message = error_text(exc, secret)
    hint = None
    low = message.lower()
    if "password authentication failed" in low or "no password supplied" in low or "(using password" in low:
        hint = f"check the user and the password ({PASSWORD_FILE_ENV}, --db-password-file, PGPASSWORD or MYSQL_PWD)"
    elif (
        "connection refused" in low
        or "could not translate host" in low
        or "timeout" in low
        or "timed out" in low
        or "can't connect" in low
    ):
        hint = "is the server running, and is the host and port in --db-url right?"
    elif ("does not exist" in low and "database" in low) or "unknown database" in low:
        hint = "check the database name at the end of --db-url"
    return InputError(f"{doing} {shown(url)}: {message}", hint=hint)
