"""What the ``database`` reader asks DuckDB (``duckdb:///file.duckdb``, in-process through
duckdb-engine): columns and types (``duckdb_columns()``) and view definitions (``duckdb_views()``,
the ``CREATE VIEW`` as written). DuckDB keeps no query history: the queries pass reads one only
from a template the user gives (``-o query_template=FILE``); its macros are not read."""

from __future__ import annotations

from typing import Any

from atlas_sync.lineage.database.postgres import Definition, Relation

COLUMNS = """
SELECT schema_name AS schema, table_name AS name, column_name AS column, data_type AS type
FROM duckdb_columns() WHERE NOT internal AND database_name = current_database()
ORDER BY schema_name, table_name, column_index
"""
VIEWS = """
SELECT schema_name AS schema, view_name AS name, sql
FROM duckdb_views() WHERE NOT internal AND database_name = current_database()
ORDER BY schema_name, view_name
"""


class DuckDBCatalog:
    dialect = "duckdb"
    history_template: str | None = None

    def __init__(self, conn: Any) -> None:
        from sqlalchemy import text

        self.conn = conn
        self._text = text
        self.database: str = conn.execute(text("SELECT current_database()")).scalar_one()
        self.default_schema: str = conn.execute(text("SELECT current_schema()")).scalar_one() or "main"

    def _rows(self, sql: str) -> list[Any]:
        return list(self.conn.execute(self._text(sql)).mappings())

    def relations(self) -> list[Relation]:
        views = {(r["schema"], r["name"]) for r in self._rows(VIEWS)}
        out: dict[tuple[str, str], Relation] = {}
        for r in self._rows(COLUMNS):
            key = (r["schema"], r["name"])
            rel = out.get(key)
            if rel is None:
                rel = out[key] = Relation(r["schema"], r["name"], "view" if key in views else "table", [])
            rel.columns.append((r["column"], r["type"]))
        return list(out.values())

    def views(self) -> list[Definition]:
        # A view's unqualified names are those of its own schema (DuckDB binds them there).
        return [
            Definition(r["schema"], r["name"], "VIEW", (r["sql"] or "").strip(), default_schema=r["schema"])
            for r in self._rows(VIEWS)
        ]

    def routines(self) -> list[Definition]:
        return []

    def history(self, sql: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self._rows(sql)]
