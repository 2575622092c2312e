"""What the ``database`` reader asks a MySQL-protocol server (MySQL, MariaDB, Apache Doris; PyMySQL
through SQLAlchemy): columns and their types (``information_schema.COLUMNS``), view definitions
(``information_schema.VIEWS``), the bodies of stored procedures and functions
(``information_schema.ROUTINES`` with ``PARAMETERS``), and the query history: Doris's audit log
(``__internal_schema.audit_log``) on Doris, else ``performance_schema.events_statements_history_long``.

Names: MySQL and MariaDB have no catalog level, so a table is ``db.table`` (as the SQL reader names
``db.table`` in the ``mysql`` dialect); on Doris it is ``catalog.db.table`` (``internal.shop.orders``),
as Doris's audit log names it. System schemas are left out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from atlas_sync.lineage.database.postgres import Definition, Relation
from atlas_sync.lineage.model import Problem
from atlas_sync.lineage.sql.script import split_statements

#: Doris's own catalog, the prefix of its tables' names in the audit log.
DORIS_CATALOG = "internal"
SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys", "__internal_schema")
_NOT_SYSTEM = "NOT IN (" + ", ".join(f"'{s}'" for s in SYSTEM_SCHEMAS) + ")"

#: The MySQL / MariaDB history template (``-o query_template=FILE`` replaces it): the statements
#: the Performance Schema keeps (``performance_schema = ON`` at server start and the
#: ``events_statements_history_long`` consumer enabled), top-level only, those that failed left
#: out, those run with the URL's database as the default one (when the URL names one). The table is a ring buffer (``performance_schema_events_statements_history_long_size``,
#: 10,000 by default) with no wall-clock time, so the window does not apply; the user is known only
#: while the session that ran it is connected (``threads``); statements longer than
#: ``performance_schema_max_sql_text_length`` (1024) are cut and then fail to parse.
HISTORY_TEMPLATE = """\
SELECT h.SQL_TEXT AS query_text,
       t.PROCESSLIST_USER AS user_name,
       h.CURRENT_SCHEMA AS schema_name,
       h.TIMER_WAIT / 1000000000000 AS duration
FROM performance_schema.events_statements_history_long h
LEFT JOIN performance_schema.threads t ON t.THREAD_ID = h.THREAD_ID
WHERE h.SQL_TEXT IS NOT NULL AND h.MYSQL_ERRNO = 0 AND h.NESTING_EVENT_LEVEL = 0
  AND (DATABASE() IS NULL OR h.CURRENT_SCHEMA = DATABASE())
  AND LOWER(h.SQL_TEXT) REGEXP CONCAT('^[', CHAR(9, 10, 13, 32 USING utf8mb4), ']*(insert|replace|update|delete|with|create)')
  {filters}
ORDER BY h.TIMER_START DESC
LIMIT {result_limit}
"""

#: Doris's audit log (its current audit schema names every queried table in
#: ``queried_tables_and_views`` and the materialized views the optimizer chose in ``chosen_m_views``). Columns as Doris names
#: them; the reader maps them onto the query-log ones as it does for an audit-log CSV export.
#: ``{start_time}`` / ``{end_time}`` are the server's own clock (``NOW()``) minus the window; as
#: for the Performance Schema, only statements run in the URL's database when it names one.
DORIS_AUDIT_TEMPLATE = """\
SELECT `stmt`, `user`, `time`, `catalog`, `db`, `state`, `query_time`, `is_query`, `is_internal`,
       `stmt_type`, `queried_tables_and_views`, `chosen_m_views`
FROM `__internal_schema`.`audit_log`
WHERE `time` >= {start_time} AND `time` < {end_time}
  AND `state` <> 'ERR' AND (`is_internal` IS NULL OR `is_internal` = 0)
  AND (DATABASE() IS NULL OR `db` = DATABASE())
  {filters}
ORDER BY `time` DESC
LIMIT {result_limit}
"""

HISTORIES = {"performance_schema": HISTORY_TEMPLATE, "doris_audit_log": DORIS_AUDIT_TEMPLATE}
#: What a history that cannot be read needs.
HISTORY_HINTS = {
    "performance_schema": "GRANT SELECT ON performance_schema.* to the user (the server needs "
    "performance_schema = ON and the events_statements_history_long consumer), or leave the pass out: "
    "-o passes=views,procedures",
    "doris_audit_log": "GRANT SELECT_PRIV ON __internal_schema.audit_log to the user, or leave the "
    "pass out: -o passes=views,procedures",
}

COLUMNS = f"""
SELECT c.TABLE_SCHEMA AS `schema`, c.TABLE_NAME AS name, t.TABLE_TYPE AS kind,
       c.COLUMN_NAME AS `column`, c.COLUMN_TYPE AS type
FROM information_schema.COLUMNS c
JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
WHERE c.TABLE_SCHEMA {_NOT_SYSTEM}
ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION
"""
VIEWS = f"""
SELECT TABLE_SCHEMA AS `schema`, TABLE_NAME AS name, VIEW_DEFINITION AS definition
FROM information_schema.VIEWS
WHERE TABLE_SCHEMA {_NOT_SYSTEM}
ORDER BY TABLE_SCHEMA, TABLE_NAME
"""
ROUTINES = f"""
SELECT ROUTINE_SCHEMA AS `schema`, ROUTINE_NAME AS name, ROUTINE_TYPE AS kind,
       SPECIFIC_NAME AS specific_name, DTD_IDENTIFIER AS `returns`, ROUTINE_BODY AS `body`,
       ROUTINE_DEFINITION AS definition
FROM information_schema.ROUTINES
WHERE ROUTINE_SCHEMA {_NOT_SYSTEM}
ORDER BY ROUTINE_SCHEMA, ROUTINE_NAME
"""
PARAMETERS = f"""
SELECT SPECIFIC_SCHEMA AS `schema`, SPECIFIC_NAME AS specific_name, ROUTINE_TYPE AS kind,
       PARAMETER_MODE AS `mode`, PARAMETER_NAME AS name, DTD_IDENTIFIER AS type
FROM information_schema.PARAMETERS
WHERE SPECIFIC_SCHEMA {_NOT_SYSTEM} AND ORDINAL_POSITION > 0
ORDER BY SPECIFIC_SCHEMA, SPECIFIC_NAME, ORDINAL_POSITION
"""


def is_doris(version_comment: str | None, version: str | None) -> bool:
    """Doris answers ``@@version_comment`` with ``Doris version doris-3.0.x-...``."""
    return "doris" in f"{version_comment or ''} {version or ''}".lower()


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class MySQLCatalog:
    """The catalog queries of a MySQL-protocol server, run on one SQLAlchemy connection."""

    def __init__(self, conn: Any, *, history: str | None = None, catalog: str | None = None) -> None:
        from sqlalchemy import text

        self.conn = conn
        self._text = text
        row = conn.execute(text("SELECT @@version_comment, VERSION(), DATABASE()")).one()
        self.doris = is_doris(row[0], row[1])
        self.history_kind = history or ("doris_audit_log" if self.doris else "performance_schema")
        self.history_template: str | None = HISTORIES[self.history_kind]
        self.history_hint = HISTORY_HINTS[self.history_kind]
        self.dialect = "doris" if self.doris else "mysql"
        # The audit log names tables catalog.db.table: so do its datasets wherever it is read.
        default_catalog = DORIS_CATALOG if self.doris or self.history_kind == "doris_audit_log" else ""
        self.database: str = default_catalog if catalog is None else catalog
        self.default_schema: str = row[2] or ""
        #: Only the URL's database is read when it names one (a MySQL database is a schema).
        self.scope: list[str] = [row[2]] if row[2] else []
        self.job: str = row[2] or ""  # the default job: the URL's database
        self.problems: list[Problem] = []

    def _rows(self, sql: str) -> list[Any]:
        return list(self.conn.execute(self._text(sql)).mappings())

    def now(self) -> datetime:
        """The server's clock, in its session time zone (that of its history's times)."""
        value = self.conn.execute(self._text("SELECT NOW()")).scalar_one()
        return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))

    def relations(self) -> list[Relation]:
        out: dict[tuple[str, str], Relation] = {}
        for r in self._rows(COLUMNS):
            key = (r["schema"], r["name"])
            rel = out.get(key)
            if rel is None:
                kind = str(r["kind"] or "").upper()
                named = (
                    "materialized view" if "MATERIALIZED" in kind else "view" if "VIEW" in kind else "table"
                )
                rel = out[key] = Relation(r["schema"], r["name"], named, [])
            rel.columns.append((r["column"], str(r["type"])))
        return list(out.values())

    def views(self) -> list[Definition]:
        out = []
        for r in self._rows(VIEWS):
            body = (r["definition"] or "").strip().rstrip(";")
            if not body:
                self._hidden("view", r["schema"], r["name"])
                continue
            name = f"{quote(r['schema'])}.{quote(r['name'])}"
            # MySQL and MariaDB qualify every name of a stored view; Doris keeps the text as written,
            # whose unqualified names are those of the view's own database.
            out.append(
                Definition(r["schema"], r["name"], "VIEW", f"CREATE VIEW {name} AS {body}", r["schema"])
            )
        return out

    def routines(self) -> list[Definition]:
        if self.doris:
            return []  # Doris's routines are not SQL/PSM stored in information_schema: not read
        params: dict[tuple[str, str], list[str]] = {}
        for p in self._rows(PARAMETERS):
            mode = f"{p['mode']} " if p["mode"] and p["kind"] == "PROCEDURE" else ""
            params.setdefault((p["schema"], p["specific_name"]), []).append(
                f"{mode}{quote(p['name'])} {p['type']}"
            )
        out = []
        for r in self._rows(ROUTINES):
            body = (r["definition"] or "").strip()
            if str(r["body"] or "SQL").upper() != "SQL":
                continue  # external routines (UDFs in C): no SQL to read
            if not body:
                self._hidden(str(r["kind"]).lower(), r["schema"], r["name"])
                continue
            kind = "PROCEDURE" if str(r["kind"]).upper() == "PROCEDURE" else "FUNCTION"
            args = ", ".join(params.get((r["schema"], r["specific_name"]), []))
            returns = f" RETURNS {r['returns']}" if kind == "FUNCTION" and r["returns"] else ""
            name = f"{quote(r['schema'])}.{quote(r['name'])}"
            sql = f"CREATE {kind} {name}({args}){returns}\n{body}"
            out.append(Definition(r["schema"], r["name"], kind, sql, r["schema"]))
        return out

    def _hidden(self, kind: str, schema: str, name: str) -> None:
        self.problems.append(
            Problem(
                message=f"the definition of {kind} {schema}.{name} is hidden from this user: its lineage "
                "is missing (MySQL shows it to the definer and to users with SHOW VIEW / SHOW_ROUTINE "
                "or SELECT on mysql.proc)",
                severity="warning",
                code="definition-hidden",
            )
        )

    def history(self, sql: str) -> list[dict[str, Any]]:
        rows = [dict(r) for r in self._rows(sql)]
        if self.history_kind == "performance_schema":
            for row in rows:
                row["query_text"] = first_statement(row.get("query_text"), self.dialect)
        return rows


def first_statement(text: Any, dialect: str) -> Any:
    """An event's own statement: for each statement of a multi-statement request the Performance
    Schema keeps the rest of the request from that statement on."""
    if not isinstance(text, str) or ";" not in text.rstrip().rstrip(";"):
        return text
    statements = split_statements(text, dialect)
    return statements[0][0] if statements else text
