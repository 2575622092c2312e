"""What the ``database`` reader asks PostgreSQL: columns and their types, view definitions, the
bodies of SQL and PL/pgSQL functions and procedures, and the query history of
``pg_stat_statements``. System schemas (``pg_*``, ``information_schema``) and objects that belong
to extensions are left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The query-history template (``-o query_template=FILE`` replaces it). Placeholders: ``{filters}``
#: (``-o query_filters="AND ..."``), ``{result_limit}`` (``-o query_limit=N``), and ``{start_time}``
#: / ``{end_time}`` (quoted timestamps of ``-o query_window=HOURS``; pg_stat_statements keeps totals
#: since its last reset, not a time per run, so this template does not use them). Columns are named
#: as the query-log CSV's: query_text, user_name, database_name, schema_name, start_time, duration,
#: and runs (how many times it ran).
HISTORY_TEMPLATE = """\
SELECT s.query AS query_text,
       r.rolname AS user_name,
       d.datname AS database_name,
       s.calls AS runs,
       s.total_exec_time / 1000.0 AS duration
FROM pg_stat_statements s
JOIN pg_database d ON d.oid = s.dbid
LEFT JOIN pg_roles r ON r.oid = s.userid
WHERE d.datname = current_database()
  AND s.query ~* '^\\s*(insert|update|delete|merge|copy)\\M|^\\s*(with|select)\\M.*\\minto\\M|^\\s*create\\M.*\\m(as|like)\\M'
  {filters}
ORDER BY s.total_exec_time DESC
LIMIT {result_limit}
"""

_SYSTEM = "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'"
_NOT_EXTENSION = "NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.objid = {oid} AND dep.deptype = 'e')"

COLUMNS = f"""
SELECT n.nspname AS schema, c.relname AS name, c.relkind AS kind, a.attname AS column,
       format_type(a.atttypid, a.atttypmod) AS type
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND a.attnum > 0 AND NOT a.attisdropped
  AND {_SYSTEM} AND {_NOT_EXTENSION.format(oid="c.oid")}
ORDER BY n.nspname, c.relname, a.attnum
"""

VIEWS = f"""
SELECT n.nspname AS schema, c.relname AS name, c.relkind AS kind,
       pg_get_viewdef(c.oid, true) AS definition
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('v', 'm') AND {_SYSTEM} AND {_NOT_EXTENSION.format(oid="c.oid")}
ORDER BY n.nspname, c.relname
"""

ROUTINES = f"""
SELECT n.nspname AS schema, p.proname AS name, p.prokind AS kind, l.lanname AS language,
       pg_get_function_identity_arguments(p.oid) AS arguments,
       pg_get_functiondef(p.oid) AS definition
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang
WHERE p.prokind IN ('f', 'p') AND l.lanname IN ('sql', 'plpgsql')
  AND {_SYSTEM} AND {_NOT_EXTENSION.format(oid="p.oid")}
ORDER BY n.nspname, p.proname, arguments
"""


@dataclass
class Relation:
    schema: str
    name: str
    kind: str  # table, view, materialized view
    columns: list[tuple[str, str]]  # (name, type)


@dataclass
class Definition:
    schema: str
    name: str
    kind: str  # VIEW, MATERIALIZED VIEW, FUNCTION, PROCEDURE
    sql: str  # a statement the SQL reader analyses
    default_schema: str | None = None  # of its unqualified names (else the session's)


_KINDS = {"v": "view", "m": "materialized view"}


class PostgresCatalog:
    """The catalog queries, run on one SQLAlchemy connection. Each query sees names as written:
    the session's ``search_path`` is ``pg_catalog`` only, so view definitions name every table
    with its schema."""

    dialect = "postgres"
    history_template = HISTORY_TEMPLATE

    def __init__(self, conn: Any) -> None:
        from sqlalchemy import text

        self.conn = conn
        self._text = text
        self.database: str = conn.execute(text("SELECT current_database()")).scalar_one()
        self.default_schema: str = conn.execute(text("SELECT current_schema()")).scalar_one() or "public"
        conn.execute(text("SET search_path = pg_catalog"))

    def _rows(self, sql: str) -> list[Any]:
        return list(self.conn.execute(self._text(sql)).mappings())

    def relations(self) -> list[Relation]:
        out: dict[tuple[str, str], Relation] = {}
        for r in self._rows(COLUMNS):
            key = (r["schema"], r["name"])
            rel = out.get(key)
            if rel is None:
                rel = out[key] = Relation(r["schema"], r["name"], _KINDS.get(r["kind"], "table"), [])
            rel.columns.append((r["column"], r["type"]))
        return list(out.values())

    def views(self) -> list[Definition]:
        out = []
        for r in self._rows(VIEWS):
            kind = "MATERIALIZED VIEW" if r["kind"] == "m" else "VIEW"
            body = (r["definition"] or "").strip().rstrip(";")
            name = f"{quote(r['schema'])}.{quote(r['name'])}"
            out.append(Definition(r["schema"], r["name"], kind, f"CREATE {kind} {name} AS {body}"))
        return out

    def routines(self) -> list[Definition]:
        return [
            Definition(
                r["schema"],
                r["name"],
                "PROCEDURE" if r["kind"] == "p" else "FUNCTION",
                (r["definition"] or "").strip(),
            )
            for r in self._rows(ROUTINES)
        ]

    def history(self, sql: str) -> list[dict[str, Any]]:
        """The history template's rows, run with the user's own search_path (where the extension's
        view is)."""
        self.conn.execute(self._text("RESET search_path"))
        return [dict(r) for r in self._rows(sql)]


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
