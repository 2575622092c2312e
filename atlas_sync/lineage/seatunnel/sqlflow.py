"""Column lineage of a SELECT used in a job (Sql transform, a source's ``query``).

The SQL reader (``atlas_sync.lineage.readers.sql``, looked up through the registry) does the real
work: aliases, CTEs, derived tables, joins, dependency kinds. When it is not installed or cannot
read the statement we fall back to a simple projection analysis with sqlglot (one SELECT, no
CTEs) and say so in a problem.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage.model import LineageGraph, split_dotted

OUT = "__seatunnel_out"


@dataclass
class SqlField:
    name: str
    # (table as written in the query, column, kind, expression)
    sources: list[tuple[str, str, str, str | None]] = field(default_factory=list)


@dataclass
class SqlLineage:
    fields: list[SqlField] | None  # None: the projection could not be resolved (e.g. SELECT *)
    indirect: list[tuple[str, str, str]] = field(default_factory=list)  # (table, column, kind)
    tables: list[str] = field(default_factory=list)
    star: bool = False  # SELECT * of a single input: pass its fields through
    via: str = "sql-reader"
    problems: list[str] = field(default_factory=list)


def analyze(
    query: str, *, dialect: str | None = None, schema: Mapping[str, list[str]] | None = None
) -> SqlLineage:
    """Lineage of ``query`` (a SELECT): output fields in order, their sources, indirect dependencies.

    ``schema`` (``{"table": ["col", ...]}``) tells the SQL reader the fields of the inputs, so that
    ``SELECT *`` and unqualified columns resolve.
    """
    q = query.strip().rstrip(";").strip()
    if not schema and _is_star(q, dialect):
        return _fallback(q, dialect)  # SELECT * needs the upstream field list, which only we know
    problems: list[str] = []
    try:
        result = _with_sql_reader(q, dialect, schema)
        if result is not None:
            return result
        problems.append("the SQL reader is not installed; used a simple projection analysis")
    except _Unusable as exc:
        problems.append(f"the SQL reader could not read the query ({exc}); used a simple projection analysis")
    except AtlasSyncError as exc:
        problems.append(f"the SQL reader could not read the query ({exc}); used a simple projection analysis")
    result = _fallback(q, dialect)
    result.problems = problems + result.problems
    return result


class _Unusable(Exception):
    """The SQL reader read the query but its result has no usable lineage."""


def _with_sql_reader(
    q: str, dialect: str | None, schema: Mapping[str, list[str]] | None
) -> SqlLineage | None:
    from atlas_sync.lineage import registry

    try:
        reader = registry.get("sql")
    except AtlasSyncError:
        return None
    fd, path = tempfile.mkstemp(suffix=".sql", prefix="seatunnel-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"CREATE TABLE {OUT} AS {q};\n")
        options: dict[str, Any] = {"dialect": dialect} if dialect else {}
        if schema:
            options["schema"] = dict(schema)
        graph = reader.read([path], **options)
    finally:
        os.unlink(path)
    errors = [p.message for p in graph.problems if p.severity == "error"]
    if errors:
        raise _Unusable(errors[0])
    result = _from_graph(graph)
    if result is None:
        raise _Unusable("no result columns")
    return result


def _from_graph(g: LineageGraph) -> SqlLineage | None:
    target = next((d for d in g.datasets if split_dotted(d.id)[-1].lower() == OUT), None)
    if target is None:
        return None
    edges = g.end_to_end_edges() or [e for e in g.edges if e.target.dataset == target.id]
    names = target.column_names()
    for e in edges:
        if e.target.dataset == target.id and e.target.column and e.target.column not in names:
            names.append(e.target.column)
    fields = {n: SqlField(n) for n in names}
    indirect: list[tuple[str, str, str]] = []
    tables: list[str] = []
    for e in edges:
        if e.target.dataset != target.id or e.source.dataset == target.id:
            continue
        if e.source.dataset not in tables:
            tables.append(e.source.dataset)
        if e.source.column is None:
            continue
        if e.target.column is None:
            indirect.append((e.source.dataset, e.source.column, e.kind))
        else:
            fields[e.target.column].sources.append((e.source.dataset, e.source.column, e.kind, e.expression))
    for d in g.datasets:
        used = any(d.id in p.inputs for p in g.processes)
        if used and d.id != target.id and d.kind != "intermediate" and d.id not in tables:
            tables.append(d.id)
    return SqlLineage(fields=list(fields.values()), indirect=indirect, tables=tables, via="sql-reader")


def _is_star(q: str, dialect: str | None) -> bool:
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(q, read=dialect)
    except Exception:  # noqa: BLE001 - not ours to judge here
        return False
    return isinstance(tree, exp.Select) and any(isinstance(e, exp.Star) for e in tree.expressions)


def _fallback(q: str, dialect: str | None) -> SqlLineage:
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(q, read=dialect)
    except Exception as exc:  # noqa: BLE001 - sqlglot raises ParseError/TokenError/...
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return SqlLineage(fields=None, via="fallback", problems=[f"cannot parse the query: {msg}"])
    tables: list[str] = []
    alias: dict[str, str] = {}
    for t in tree.find_all(exp.Table):
        name = ".".join(p for p in (t.catalog, t.db, t.name) if p)
        if name not in tables:
            tables.append(name)
        alias[(t.alias_or_name or t.name).lower()] = name
        alias[t.name.lower()] = name
    if not isinstance(tree, exp.Select) or tree.args.get("with"):
        return SqlLineage(
            fields=None,
            tables=tables,
            via="fallback",
            problems=["only a single SELECT is analysed without the SQL reader; table-level lineage only"],
        )

    def table_of(col: exp.Column) -> str:
        if col.table:
            return alias.get(col.table.lower(), col.table)
        return tables[0] if len(tables) == 1 else ""

    star = False
    fields: list[SqlField] = []
    for e in tree.expressions:
        if isinstance(e, exp.Star):
            star = True
            continue
        inner = e.unalias() if isinstance(e, exp.Alias) else e
        if isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star):
            star = True
            continue
        kind = (
            "IDENTITY"
            if isinstance(inner, exp.Column)
            else "AGGREGATION"
            if inner.find(exp.AggFunc)
            else "TRANSFORMATION"
        )
        sql = None if kind == "IDENTITY" else inner.sql(dialect=dialect)
        f = SqlField(e.alias_or_name)
        for col in inner.find_all(exp.Column):
            f.sources.append((table_of(col), col.name, kind, sql))
        fields.append(f)
    indirect: list[tuple[str, str, str]] = []
    for key, kind in (("where", "FILTER"), ("group", "GROUP_BY"), ("order", "SORT"), ("having", "FILTER")):
        node = tree.args.get(key)
        if node is not None:
            for col in node.find_all(exp.Column):
                indirect.append((table_of(col), col.name, kind))
    for j in tree.args.get("joins") or []:
        on = j.args.get("on")
        if on is not None:
            for col in on.find_all(exp.Column):
                indirect.append((table_of(col), col.name, "JOIN"))
    return SqlLineage(fields=fields, indirect=indirect, tables=tables, star=star, via="fallback")
