"""The ``database`` reader: lineage read from a live database, as OpenMetadata's lineage source does.

``atlas-sync sync --from database --db-url postgresql://USER@HOST:PORT/DB`` (no input files). Three
passes, each switchable with ``-o passes=views,procedures,queries``:

* **views** -- every view and materialized view's definition from the catalog, parsed with the
  columns the catalog reports (so ``SELECT *`` views resolve): one process per view,
  ``<job>:<db.schema.view>``;
* **procedures** -- the bodies of SQL and PL/pgSQL functions and procedures, analysed as procedural
  SQL (:mod:`atlas_sync.lineage.sql.blocks`): one process per routine, ``<job>:<db.schema.name>``;
* **queries** -- the query history (PostgreSQL: ``pg_stat_statements``; MySQL, MariaDB:
  ``performance_schema.events_statements_history_long``; Doris: its audit log
  ``__internal_schema.audit_log``, also on request with ``-o history=doris_audit_log``, read
  through the query-log reader's audit-log model) from a SQL template the user can replace
  (``-o query_template=FILE``), with ``-o query_filters="AND ..."``, ``-o
  query_limit=N`` (default 1000) and ``-o query_window=HOURS`` (default 24), parsed in chunks in
  parallel with per-statement timeouts by the query-log reader (``workers``, ``timeout``,
  ``chunk_size``); ``CREATE VIEW``/``FUNCTION``/``PROCEDURE`` statements are left to the catalog
  passes. A history that is not there or not readable is a ``no-history`` warning naming the fix
  (the other passes stand), an error only when asked for (``passes`` naming ``queries``,
  ``query_template``, ``history``).

Names are the SQL reader's, fully qualified: ``database.schema.table``. Every table and view of the
lineage gets its columns and their types from the catalog. Options: ``db_url``, ``db_password_file``
(else ``ATLAS_SYNC_DB_PASSWORD_FILE``, else the driver's environment such as ``PGPASSWORD``, or
``MYSQL_PWD``), ``history`` (MySQL-protocol servers: ``performance_schema`` or ``doris_audit_log``),
``passes``, ``schemas`` / ``exclude_schemas`` (comma lists), ``job`` (default: the database name),
``connect_timeout`` (seconds, default 10). See ``docs/database.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.database.connect import (
    MYSQL_BACKENDS,
    connect,
    database_error,
    parse_url,
    password,
)
from atlas_sync.lineage.database.duckdb import DuckDBCatalog
from atlas_sync.lineage.database.mysql import HISTORIES, MySQLCatalog
from atlas_sync.lineage.database.postgres import Definition, PostgresCatalog, Relation
from atlas_sync.lineage.model import Column, LineageGraph, Problem, dotted
from atlas_sync.lineage.readers.options import positive_int
from atlas_sync.lineage.readers.query_log import READER as QUERY_LOG
from atlas_sync.lineage.readers.query_log import audit_row
from atlas_sync.lineage.sql.analyze import Context
from atlas_sync.lineage.sql.build import GraphIndex, add_statement
from atlas_sync.lineage.sql.naming import routine_process_id
from atlas_sync.lineage.sql.schema import SchemaStore
from atlas_sync.lineage.sql.script import analyze_sql

PASSES = ("views", "procedures", "queries")
DEFAULT_LIMIT = 1000
DEFAULT_WINDOW_HOURS = 24.0
_PLACEHOLDER = re.compile(r"\{(filters|result_limit|start_time|end_time)\}")
# Left to the catalog passes: the catalog holds what exists now (a dropped view's CREATE stays in
# the history).
_CATALOG_STATEMENT = re.compile(
    r"^\s*create\s+(or\s+replace\s+)?(algorithm\s*=\s*\w+\s+)?(definer\s*=\s*\S+\s+)?"
    r"(sql\s+security\s+\w+\s+)?(materialized\s+)?(view|procedure|function|trigger)\b",
    re.IGNORECASE,
)
_HIDDEN = "<insufficient privilege>"
_CATALOGS: dict[str, Any] = {
    "postgresql": PostgresCatalog,
    "duckdb": DuckDBCatalog,
    "mysql": MySQLCatalog,
    "mariadb": MySQLCatalog,
}


def _names(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    return [str(v).strip() for v in items if str(v).strip()]


def _passes(value: Any) -> list[str]:
    chosen = _names(value) or list(PASSES)
    bad = [p for p in chosen if p not in PASSES]
    if bad:
        raise InputError(f"unknown pass {bad[0]!r} in option passes", hint="passes=" + ",".join(PASSES))
    return chosen


def render_template(
    template: str, *, filters: str, limit: int, window_hours: float, now: datetime | None = None
) -> str:
    """The history query: the template with its placeholders filled. ``now`` is the server's clock
    when the catalog knows it (MySQL-protocol servers: times without a zone, in the session's);
    else UTC."""
    end = now or datetime.now(UTC)
    start = end - timedelta(hours=window_hours)
    values = {
        "filters": filters,
        "result_limit": str(limit),
        "start_time": f"'{start.isoformat(sep=' ', timespec='seconds')}'",
        "end_time": f"'{end.isoformat(sep=' ', timespec='seconds')}'",
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


class DatabaseReader:
    name = "database"
    extensions: tuple[str, ...] = ()
    description = "a live database (SQLAlchemy; --db-url): views, procedures and query history"
    needs_files = False

    def read(
        self,
        paths: Sequence[str] = (),
        *,
        db_url: str | None = None,
        db_password_file: str | None = None,
        passes: Any = None,
        schemas: Any = None,
        exclude_schemas: Any = None,
        query_template: str | None = None,
        query_filters: str | None = None,
        query_limit: Any = None,
        query_window: Any = None,
        history: str | None = None,
        connect_timeout: Any = None,
        dialect: str | None = None,
        job: str | None = None,
        **options: Any,
    ) -> LineageGraph:
        """Read the database's lineage; see the module docstring for the options."""
        if paths:
            raise InputError(
                "the database reader reads no files", hint="give the connection with --db-url, not files"
            )
        url = parse_url(db_url)
        chosen = _passes(passes)
        include, exclude = set(_names(schemas)), set(_names(exclude_schemas))
        limit = positive_int(query_limit, DEFAULT_LIMIT, "query_limit")
        window = float(query_window) if query_window not in (None, "") else DEFAULT_WINDOW_HOURS
        template = None
        if query_template:
            try:
                template = Path(query_template).read_text(encoding="utf-8")
            except OSError as exc:
                raise InputError(
                    f"cannot read the query template: {exc.strerror}", file=query_template
                ) from None
        backend = url.get_backend_name()
        catalog_class = _CATALOGS.get(backend)
        if catalog_class is None:
            raise InputError(
                f"the database reader does not know {backend} yet",
                hint="supported: " + ", ".join(sorted(_CATALOGS)),
            )
        catalog_args: dict[str, Any] = {}
        if history:
            if backend not in MYSQL_BACKENDS or history not in HISTORIES:
                known = ", ".join(HISTORIES) if backend in MYSQL_BACKENDS else "none for " + backend
                raise InputError(f"unknown history {history!r}", hint=f"-o history= takes: {known}")
            catalog_args["history"] = history
        secret = password(db_password_file, backend=backend)
        timeout = float(connect_timeout) if connect_timeout not in (None, "") else 10.0
        engine, conn = connect(url, secret, timeout=timeout)
        sa_error = engine.dialect.dbapi.Error if engine.dialect.dbapi else Exception
        doing = "reading the catalog of"
        history_hint: str | None = None
        # One rule for every engine: a history that is not there (or not readable by this user) is a
        # warning naming the fix, the other passes published; an error only when asked for explicitly.
        explicit = bool(passes) and "queries" in chosen or template is not None or bool(history)
        missing_history: InputError | None = None
        try:
            from sqlalchemy.exc import SQLAlchemyError

            catalog = catalog_class(conn, **catalog_args)
            history_hint = getattr(catalog, "history_hint", None)
            sql_dialect = dialect or catalog.dialect
            if not include:
                include = set(getattr(catalog, "scope", ()))

            def wanted(schema: str) -> bool:
                return (not include or schema in include) and schema not in exclude

            relations = [r for r in catalog.relations() if wanted(r.schema)]
            views = [v for v in catalog.views() if wanted(v.schema)] if "views" in chosen else []
            routines = [r for r in catalog.routines() if wanted(r.schema)] if "procedures" in chosen else []
            rows: list[dict[str, Any]] = []
            if "queries" in chosen and (template or catalog.history_template):
                doing = "reading the query history of"
                sql = render_template(
                    template or catalog.history_template,
                    filters=query_filters or "",
                    limit=limit,
                    window_hours=window,
                    now=catalog.now() if hasattr(catalog, "now") else None,
                )
                try:
                    rows = catalog.history(sql)
                except (SQLAlchemyError, sa_error) as exc:
                    err = _pass_error(exc, url, secret, doing, template is not None, history_hint)
                    if explicit or not _unavailable(err.message):
                        raise err from None
                    missing_history = err  # the other passes stand: a warning, after them
        except (SQLAlchemyError, sa_error) as exc:
            raise _pass_error(exc, url, secret, doing, template is not None, history_hint) from None
        finally:
            conn.close()
            engine.dispose()
        db = catalog.database
        name = getattr(catalog, "job", None) or db or url.host or backend
        graph = LineageGraph(job=job or name, source="database")
        graph.problems.extend(getattr(catalog, "problems", ()))
        self._catalog_passes(graph, db, catalog.default_schema, sql_dialect, relations, views, routines)
        if missing_history is not None:
            graph.problems.append(
                Problem(
                    message=f"the queries pass is skipped: {missing_history.message} (to read it: "
                    f"{missing_history.hint or 'check the query history'})",
                    severity="warning",
                    code="no-history",
                )
            )
        elif "queries" in chosen and not (template or catalog.history_template):
            fix = "give one with -o query_template=FILE, or leave the pass out: -o passes=views,procedures"
            if explicit:
                raise InputError(f"{backend} keeps no query history (-o passes asks for queries)", hint=fix)
            graph.problems.append(
                Problem(
                    message=f"the queries pass is skipped: {backend} keeps no query history ({fix})",
                    severity="warning",
                    code="no-history",
                )
            )
        elif "queries" in chosen:
            audit = getattr(catalog, "history_kind", None) == "doris_audit_log"
            self._history_pass(
                graph,
                db,
                catalog.default_schema,
                (dialect or "doris") if audit else sql_dialect,
                rows,
                chosen,
                options,
                audit=audit,
            )
        _typed_columns(graph, db, relations)
        graph.statements.append(
            {
                "type": "DATABASE SUMMARY",
                "database": db,
                "passes": chosen,
                "relations": len(relations),
                "views": len(views),
                "routines": len(routines),
                "history_rows": len(rows),
            }
        )
        graph.add_edge_inputs()  # (as the SQL reader: a target a statement reads is an input)
        return graph

    @staticmethod
    def _catalog_passes(
        graph: LineageGraph,
        db: str,
        default_schema: str,
        dialect: str,
        relations: list[Relation],
        views: list[Definition],
        routines: list[Definition],
    ) -> None:
        store = SchemaStore(dialect=dialect)
        for rel in relations:
            store.add((db, rel.schema, rel.name), [c for c, _ in rel.columns])
        ctx = Context.create(dialect, store, f"{db}.{default_schema}")
        ctx.views = {dotted(db, r.schema, r.name) for r in relations if r.kind != "table"}
        ctx.learn = False  # the catalog's columns are the truth, not what a definition says
        index = GraphIndex(graph)
        taken: set[str] = set()
        job = graph.job or db
        for d in [*views, *routines]:
            where = f"{d.kind.lower()} {dotted(db, d.schema, d.name)}"
            ctx.set_default(f"{db}.{d.default_schema or default_schema}")
            for st in analyze_sql(d.sql, dialect=dialect, context=ctx):
                if st.type == "EMPTY":
                    continue
                pid = routine_process_id(job, dotted(db, d.schema, d.name), taken)
                for p in st.problems:
                    p["message"] = f"{where}: {p['message']}"
                add_statement(graph, st, process_id=pid, dialect=dialect, index=index)

    @staticmethod
    def _history_pass(
        graph: LineageGraph,
        db: str,
        default_schema: str,
        dialect: str,
        history: list[dict[str, Any]],
        chosen: list[str],
        options: dict[str, Any],
        *,
        audit: bool = False,
    ) -> None:
        """The history's rows through the query-log reader; ``audit``: rows of Doris's audit log,
        mapped as the reader maps an audit-log CSV export (failed and internal statements left out,
        read-only queries as read lineage, ``chosen_m_views``)."""
        hidden = 0
        skip_catalog = "views" in chosen or "procedures" in chosen

        def rows() -> Iterator[tuple[str | None, int, dict[str, str]]]:
            nonlocal hidden
            for n, row in enumerate(history, start=1):
                fields = {str(k).lower(): "" if v is None else str(v) for k, v in row.items()}
                if audit:
                    marked = audit_row(fields)
                    if marked is None:
                        continue  # failed or internal
                    fields = marked
                text = fields.get("query_text", "")
                if text.strip() == _HIDDEN:
                    hidden += 1
                    continue
                if skip_catalog and _CATALOG_STATEMENT.match(text):
                    continue
                yield None, n, fields

        if not history:
            return
        keep = {
            k: v
            for k, v in options.items()
            if k in ("workers", "timeout", "chunk_size", "report", "progress", "reporter")
        }
        try:
            part = QUERY_LOG.read_rows(
                rows(), dialect=dialect, default_schema=f"{db}.{default_schema}", job=graph.job, **keep
            )
        except InputError as exc:
            if "has no rows" not in exc.message:
                raise
            part = None
        if part is not None:
            for st in part.statements:
                if st.get("type") == "QUERY LOG SUMMARY":
                    st["type"] = "QUERY HISTORY SUMMARY"
            for p in part.problems:
                p.file = None
            graph.merge_into(part)
        if hidden:
            graph.problems.append(
                Problem(
                    message=f"{hidden} statement(s) of the query history are hidden from this user "
                    "(<insufficient privilege>): their lineage is missing",
                    severity="warning",
                    code="history-hidden",
                )
            )


_MISSING = re.compile(r"denied|doesn't exist|does not exist|unknown table|not found")


def _unavailable(message: str) -> bool:
    """The history's source is not there or not readable by this user (not a broken connection)."""
    low = message.lower()
    return bool(_MISSING.search(low)) or "shared_preload_libraries" in low


def _pass_error(
    exc: BaseException,
    url: Any,
    secret: str | None,
    doing: str,
    own_template: bool,
    history_hint: str | None = None,
) -> InputError:
    err = database_error(exc, url, secret, doing)
    low = err.message.lower()
    if "pg_stat_statements" in low and "does not exist" in low:
        err.hint = (
            "CREATE EXTENSION pg_stat_statements in this database (the server needs "
            "shared_preload_libraries = 'pg_stat_statements'), or leave the pass out: -o passes=views,procedures"
        )
    elif "permission denied" in low:
        err.hint = (
            "grant the user the pg_read_all_stats role (query history) and SELECT on the catalog, "
            "or leave the pass out: -o passes=views,procedures"
        )
    elif history_hint and doing.startswith("reading the query history") and _MISSING.search(low):
        err.hint = history_hint
    elif own_template:
        err.hint = "check the query template (-o query_template=FILE)"
    return err


def _typed_columns(graph: LineageGraph, db: str, relations: list[Relation]) -> None:
    """Tables and views of the lineage get every column the catalog lists, with its type, in the
    catalog's order (columns only the lineage names come after)."""
    types = {dotted(db, r.schema, r.name): r for r in relations}
    for ds in graph.datasets:
        rel = types.get(ds.id)
        if rel is None:
            continue
        known = {c: t for c, t in rel.columns}
        extra = [c for c in ds.columns if c.name not in known]
        ds.columns = [Column(name=c, type=t) for c, t in rel.columns] + extra
        if rel.kind != "table" and ds.kind == "table":
            ds.kind = "view"


READER = DatabaseReader()
