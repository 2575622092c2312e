"""Known table columns: from a schema file ``{"db.table": ["col", ...]}`` (or ``{"db.table":
{"col": "type"}}``), from Atlas, and from DDL/CTAS/CREATE VIEW seen earlier in the same script."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlglot.schema import MappingSchema

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import split_dotted

SchemaInput = Mapping[str, Any] | str | None


def load_schema_file(path: str) -> dict[str, list[str]]:
    """Read a schema file; errors name the file and, for bad JSON, the line and column."""
    from atlas_sync.inputs import load_json

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
    """Table columns known so far, and the same as a sqlglot ``MappingSchema`` for star expansion.

    sqlglot wants every table at one depth; names shorter than the deepest one are padded with empty
    parts, so a schema may mix ``t``, ``db.t`` and ``catalog.db.t`` keys (sqlglot matches a shorter
    reference on its tail when that is unambiguous).
    """

    def __init__(self, tables: Mapping[str, list[str]] | None = None, *, dialect: str = "") -> None:
        self.dialect = dialect
        self.tables: dict[tuple[str, ...], list[str]] = {}
        self._names: dict[tuple[str, ...], tuple[str, ...]] = {}  # lower-cased key -> parts as given
        self._mapping: MappingSchema | None = None
        for name, cols in (tables or {}).items():
            self.add(tuple(split_dotted(name)), cols)

    @property
    def mapping(self) -> MappingSchema:
        """The sqlglot schema, rebuilt after tables were added."""
        if self._mapping is None:
            self._mapping = self._build()
        return self._mapping

    def _build(self) -> MappingSchema:
        depth = max((len(p) for p in self._names.values()), default=1)
        nested: dict[str, Any] = {}
        for key, parts in self._names.items():
            padded = ("",) * (depth - len(parts)) + parts
            node = nested
            for part in padded[:-1]:
                node = node.setdefault(part, {})
            node[padded[-1]] = {c: "UNKNOWN" for c in self.tables[key]}
        try:
            return MappingSchema(nested, dialect=self.dialect or None, normalize=True)
        except Exception:  # noqa: BLE001 - an odd name must not stop the reader; lookups still work
            return MappingSchema(dialect=self.dialect or None, normalize=True)

    def add(self, parts: tuple[str, ...], columns: list[str]) -> None:
        """Record (or replace) the columns of a table; ``parts`` are (catalog, db, table) tails."""
        parts = tuple(p for p in parts if p)
        if not columns or not parts or len(parts) > 3:
            return
        key = tuple(p.lower() for p in parts)
        self.tables[key] = list(columns)
        self._names[key] = parts
        self._mapping = None

    def columns(self, parts: tuple[str, ...]) -> list[str] | None:
        """Columns of a table by (catalog, db, table) parts, matching on the shortest unique tail."""
        key = tuple(p.lower() for p in parts)
        if key in self.tables:
            return self.tables[key]
        hits = [cols for k, cols in self.tables.items() if k[-len(key) :] == key or key[-len(k) :] == k]
        return hits[0] if len(hits) == 1 else None
