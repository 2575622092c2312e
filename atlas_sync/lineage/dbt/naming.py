"""Names of dbt relations and columns, as the SQL reader gives them for the same tables.

A relation is named by parsing the ``relation_name`` dbt renders into the compiled SQL (quoted and
cased as the adapter does it) with the SQL reader's own rules: unquoted parts lower-cased, quoted
parts kept. So ``"jaffle"."main"."orders"`` (DuckDB) is ``jaffle.main.orders`` and
``ANALYTICS.DBT.ORDERS`` (Snowflake) is ``analytics.dbt.orders``, the ids the SQL reader gives those
tables when it reads SQL that names them.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.errors import SqlglotError

from atlas_sync.errors import InputError
from atlas_sync.lineage.sql.analyze import Context, TableRef, table_ref
from atlas_sync.lineage.sql.dialects import resolve_dialect
from atlas_sync.lineage.sql.schema import SchemaStore

# dbt adapter types that are not a sqlglot dialect or connection type of their own.
ADAPTER_DIALECT = {
    "synapse": "tsql",
    "glue": "spark",
    "fabricspark": "spark",
    "materialize": "postgres",
    "risingwave": "postgres",
    "dremio": "",
}
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def adapter_dialect(adapter: str | None) -> str | None:
    """The sqlglot dialect of a dbt adapter type; None when it is not known."""
    if not adapter:
        return None
    key = adapter.strip().lower()
    if key in ADAPTER_DIALECT:
        return ADAPTER_DIALECT[key]
    try:
        return resolve_dialect(key)
    except InputError:
        return None


class Namer:
    """Dataset ids of relations and SQL-reader names of warehouse columns, for one dialect."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self._ctx = Context.create(dialect, SchemaStore(dialect=dialect), None)
        strategy = Dialect.get_or_raise(dialect or None).NORMALIZATION_STRATEGY
        self._fold = {
            NormalizationStrategy.LOWERCASE: str.lower,
            NormalizationStrategy.UPPERCASE: str.upper,
        }.get(strategy)

    def relation(self, text: str) -> TableRef | None:
        """The dataset a rendered relation name (``"db"."schema"."table"``) stands for."""
        try:
            table = exp.to_table(text, dialect=self.dialect or None)
        except (SqlglotError, ValueError):
            return None
        return table_ref(table, self._ctx) if isinstance(table, exp.Table) else None

    def relation_of(self, node: dict[str, Any], quoting: dict[str, Any]) -> TableRef | None:
        """The relation of a manifest node: its ``relation_name``, else database/schema/alias quoted as
        the node's (or the project's) quoting config says (dbt quotes by default)."""
        text = node.get("relation_name")
        if isinstance(text, str) and text.strip():
            return self.relation(text)
        cfg = {**quoting, **((node.get("config") or {}).get("quoting") or {}), **(node.get("quoting") or {})}
        name = node.get("identifier") or node.get("alias") or node.get("name")
        parts = [("database", node.get("database")), ("schema", node.get("schema")), ("identifier", name)]
        rendered = [self._quote(str(v)) if cfg.get(k, True) else str(v) for k, v in parts if v]
        return self.relation(".".join(rendered)) if rendered else None

    def _quote(self, part: str) -> str:
        return exp.to_identifier(part, quoted=True).sql(dialect=self.dialect or None)

    def column(self, name: str, *, quoted: bool = False) -> str:
        """A warehouse (catalog) or YAML column name as the SQL reader names a column of that name in
        SQL: written unquoted (lower-cased) when an unquoted name reaches the stored one, else kept."""
        if quoted or not _PLAIN.match(name):
            return name
        if self._fold is not None and self._fold(name) != name:
            return name  # e.g. Postgres "MyCol": only a quoted name reaches it
        return name.lower()
