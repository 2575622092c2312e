"""SQL of BI files (Tableau custom SQL, Power BI native queries, a table's columns) through the SQL reader.

:func:`query_lineage` reads one query as the body of a view and gives the tables it reads and, for each
output column, the table columns feeding it; the table names get the connection's namespace (the
connection map's value) in front of ``schema.table`` as every BI reader names them (docs/bi.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp

from atlas_sync.lineage.sql.analyze import Context
from atlas_sync.lineage.sql.schema import SchemaStore
from atlas_sync.lineage.sql.script import analyze_sql

_TARGET = "atlas_sync_bi_query"
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: (source table id, source column or None, dependency kind, expression or None)
Source = tuple[str, str | None, str, str | None]


@dataclass
class QueryLineage:
    reads: list[tuple[str, str, str]] = field(default_factory=list)  # (id, namespace, name)
    columns: dict[str, list[Source]] = field(default_factory=dict)  # output column (lower) -> sources
    rows: list[Source] = field(default_factory=list)  # JOIN/FILTER edges into the whole output
    error: str | None = None


def ident(name: str, dialect: str) -> str:
    """A name as SQL writes it: plain names unquoted (folded as any SQL folds them), others quoted."""
    return name if _PLAIN.match(name) else exp.to_identifier(name, quoted=True).sql(dialect=dialect or None)


def table_sql(parts: list[str], columns: list[str], dialect: str) -> str:
    """``SELECT <columns> FROM <parts>``: a table relation as SQL, so its names fold as the SQL reader's."""
    cols = ", ".join(f"{ident(c, dialect)} AS {ident(c, dialect)}" for c in columns) or "*"
    return f"SELECT {cols} FROM {'.'.join(ident(p, dialect) for p in parts)}"


def query_lineage(sql: str, dialect: str, prefix: str | None, schema: str | None = None) -> QueryLineage:
    """What ``sql`` (one query) reads, column by column; ``prefix`` is the connection's namespace."""
    default = ".".join(p for p in (prefix, schema) if p) if schema else None
    ctx = Context.create(dialect, SchemaStore(None, dialect=dialect), default)
    if prefix and not schema:
        ctx.catalog = prefix
    body = sql.strip().rstrip(";").strip()
    try:
        results = [
            r for r in analyze_sql(f"CREATE VIEW {_TARGET} AS {body}", context=ctx) if r.type != "EMPTY"
        ]
    except Exception as exc:  # noqa: BLE001 - the SQL reader reports, a BI file's query must not crash
        return QueryLineage(error=f"its SQL does not parse ({exc})")
    if len(results) != 1:
        return QueryLineage(error="its SQL is not one query")
    st = results[0]
    if st.error or not st.writes:
        err = next((p for p in st.problems if p.get("severity") == "error"), None)
        return QueryLineage(error=f"its SQL does not parse ({err['message'] if err else 'no lineage'})")
    out_id = st.writes[0].id
    out = QueryLineage(reads=[(r.id, r.namespace, r.name) for r in st.reads if r.id != out_id])
    for e in st.edges:
        if e.target != out_id or e.source == out_id:
            continue
        src: Source = (e.source, e.source_column, e.kind, e.expression)
        if e.target_column is None or e.target_column == "*":
            out.rows.append(src)
        else:
            out.columns.setdefault(e.target_column.lower(), []).append(src)
    return out
