"""Lineage of one parsed SQL statement: the tables it reads and writes and its column edges.

Every data-moving statement is reduced to one or more *flows* -- a query whose output columns land
in the columns of a target table -- so a single column-lineage engine (:mod:`.columns`) serves
INSERT ... SELECT, CTAS, CREATE VIEW, SELECT INTO, multi-table inserts, MERGE and UPDATE alike:
``UPDATE t SET a = s.b FROM s WHERE c`` is analysed as ``SELECT s.b AS a FROM t, s WHERE c``
into ``t``, and each MERGE branch as a SELECT over ``target JOIN source ON ...``.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from atlas_sync.lineage.model import dotted
from atlas_sync.lineage.sql.columns import Deps, Problems, QueryAnalyzer, ScopeResult
from atlas_sync.lineage.sql.schema import SchemaStore

_GENERATED = re.compile(r"^_col_\d+$")


class StatementRejected(Exception):
    """A statement that parses but cannot mean what it says (e.g. ``INSERT INTO SELECT ...``)."""


@dataclass
class TableRef:
    """A dataset a statement reads or writes."""

    id: str
    namespace: str
    name: str
    kind: str = "table"  # table, view, file, intermediate
    columns: list[str] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)  # column -> type, when DDL gives them
    # COMMENT ON TABLE / COLUMN, CREATE TABLE ... COMMENT: the table's and its columns' descriptions
    description: str | None = None
    descriptions: dict[str, str] = field(default_factory=dict)


@dataclass
class Edge:
    source: str
    source_column: str
    target: str
    target_column: str | None  # None = the whole target (indirect dependency on its rows)
    kind: str
    expression: str | None = None


@dataclass
class StatementLineage:
    """Plain, picklable result for one statement (query-log workers send these between processes)."""

    index: int
    line: int | None = None
    column: int | None = None
    text: str = ""
    type: str = "OTHER"
    reads: list[TableRef] = field(default_factory=list)
    writes: list[TableRef] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)  # message, severity, code, line, column
    error: bool = False
    routine: str | None = None  # a procedure's/function's name: its process is named after it
    defines: list[TableRef] = field(default_factory=list)  # CREATE TABLE t (cols): a dataset, no flow

    @property
    def lineage_bearing(self) -> bool:
        return bool(self.writes) and not self.error

    def problem(self, message: str, *, code: str, severity: str = "warning", **kw: Any) -> None:
        self.problems.append({"message": message, "code": code, "severity": severity, **kw})


@dataclass
class Context:
    """What statements of one script share: dialect, known columns, default schema, temp objects."""

    dialect: str
    schema: SchemaStore
    db: str | None = None
    catalog: str | None = None
    views: set[str] = field(default_factory=set)
    temporary: set[str] = field(default_factory=set)
    # Learn columns from DDL/CTAS for later statements (off for independent query-log entries).
    learn: bool = True

    @classmethod
    def create(cls, dialect: str, schema: SchemaStore, default_schema: str | None) -> Context:
        ctx = cls(dialect=dialect, schema=schema)
        ctx.set_default(default_schema)
        return ctx

    def set_default(self, default_schema: str | None) -> None:
        if not default_schema:
            self.db = self.catalog = None
            return
        parts = [p for p in default_schema.split(".") if p]
        self.db = parts[-1] if parts else None
        self.catalog = parts[-2] if len(parts) > 1 else None


@dataclass
class Flow:
    target: exp.Table
    query: exp.Expr
    columns: list[str] | None = None  # explicit target column list
    by_name: bool = False  # map outputs to target columns by name (CTAS, BY NAME, MERGE)
    creates: bool = False  # the statement creates the target (its columns become known)
    static: list[str] = field(default_factory=list)  # PARTITION (dt='x'): filled by value, not by the query
    dynamic: list[str] = field(default_factory=list)  # PARTITION (dt): the query's last outputs, in order
    rows_only: bool = False  # DELETE: which rows remain, no column values
    values: bool = False  # INSERT ... VALUES: positions holding only literals need no name


# ---------------------------------------------------------------------- naming
def ident_name(ident: exp.Expr | str | None) -> str:
    """A column/table identifier as atlas-sync names it: unquoted names lower-cased, quoted kept."""
    if ident is None:
        return ""
    if isinstance(ident, str):
        return ident.lower()
    if isinstance(ident, exp.Identifier):
        return ident.this if ident.quoted else ident.this.lower()
    return ident.name.lower()


def _default(part: str | None) -> str | None:
    return ident_name(part) if part else None


def _table_parts(table: exp.Table, ctx: Context, *, apply_default: bool = True) -> tuple[str, ...] | None:
    if not isinstance(table.this, exp.Identifier):
        return None  # a table function, stage, variable: not a named table
    name = ident_name(table.this)
    if table.this.args.get("temporary") or table.this.args.get("global_"):
        # T-SQL #t / ##t: sqlglot keeps the marks aside; the name is the temporary table's own
        return (("##" if table.this.args.get("global_") else "#") + name,)
    db = ident_name(table.args.get("db")) if table.args.get("db") else None
    catalog = ident_name(table.args.get("catalog")) if table.args.get("catalog") else None
    if apply_default and db is None and ctx.db and name not in ctx.temporary:
        db = ident_name(ctx.db)
        catalog = catalog or (ident_name(ctx.catalog) if ctx.catalog else None)
    elif apply_default and db is not None and catalog is None and ctx.catalog:
        # schema.table in a session of catalog c is c.schema.table (as sqlglot qualifies the tables
        # a query reads): targets and sources get one name
        catalog = ident_name(ctx.catalog)
    if name in ctx.temporary and db == _default(ctx.db) and catalog in (None, _default(ctx.catalog)):
        return (name,)  # a temporary table, qualified with the defaults by sqlglot: still itself
    return tuple(p for p in (catalog, db, name) if p)


# Table functions and Spark's ``format.`path``` read files: table-level lineage from a file dataset.
_FILE_FUNCTIONS = {
    "read_parquet",
    "parquet_scan",
    "read_csv",
    "read_csv_auto",
    "read_json",
    "read_json_auto",
    "read_ndjson",
    "read_ndjson_auto",
    "read_text",
    "read_blob",
    "read_files",
}
_FILE_FORMATS = {"parquet", "csv", "json", "orc", "avro", "delta", "text", "binaryfile"}


def file_of(table: exp.Table) -> TableRef | None:
    """The file a FROM item reads, for ``read_parquet('p')``-style functions and ``parquet.`p```."""
    fn = table.this
    if isinstance(fn, (exp.Anonymous, exp.Func)) and not isinstance(fn, exp.Identifier):
        name = (fn.name if isinstance(fn, exp.Anonymous) else fn.sql_name()).lower()
        args = [fn.this] if not isinstance(fn, exp.Anonymous) else list(fn.expressions)
        args = [a for a in args if a is not None] + list(
            fn.expressions if not isinstance(fn, exp.Anonymous) else []
        )
        first = next((a for a in args if isinstance(a, exp.Literal) and a.is_string), None)
        if name in _FILE_FUNCTIONS and first is not None:
            return _file_ref(first)
    db = table.args.get("db")
    if (
        isinstance(db, exp.Identifier)
        and db.this.lower() in _FILE_FORMATS
        and isinstance(table.this, exp.Identifier)
        and ("/" in table.this.this or ":" in table.this.this)
    ):
        return _file_ref(exp.Literal.string(table.this.this))
    return None


def table_ref(table: exp.Table, ctx: Context) -> TableRef | None:
    f = file_of(table)
    if f is not None:
        return f
    parts = _table_parts(table, ctx)
    if not parts:
        return None
    ident = dotted(*parts)
    kind = "table"
    if ident in ctx.temporary or parts[-1].startswith("#"):
        kind = "intermediate"
    elif ident in ctx.views:
        kind = "view"
    return TableRef(id=ident, namespace=dotted(*parts[:-1]), name=parts[-1], kind=kind)


def _file_ref(node: exp.Expr) -> TableRef:
    path = node.name if isinstance(node, (exp.Literal, exp.Var)) else node.sql()
    if isinstance(node, exp.Table) and isinstance(node.this, (exp.Var, exp.Literal)):
        path = node.this.name
    path = path.strip("'\"")
    return TableRef(id=dotted(path), namespace="", name=path, kind="file")


# ---------------------------------------------------------------------- statements
# Databases cap identifiers at 30-255 characters; a longer one is a broken input, not a name to
# publish (it would also overflow Atlas qualified names).
MAX_IDENTIFIER = 1024


def analyze_statement(expr: exp.Expr, ctx: Context, result: StatementLineage) -> StatementLineage:
    """Fill ``result`` with the lineage of ``expr``; raises StatementRejected for nonsense statements."""
    for ident in expr.find_all(exp.Identifier):
        if len(ident.name) > MAX_IDENTIFIER:
            raise StatementRejected(
                f"an identifier of {len(ident.name)} characters (more than {MAX_IDENTIFIER})"
            )
    expr, changes = _data_modifying_ctes(expr)
    flows: list[Flow] = []
    if isinstance(expr, exp.Insert):
        flows += _insert(expr, ctx, result)
    elif isinstance(expr, exp.MultitableInserts):
        flows += _multi_insert(expr, ctx, result)
    elif isinstance(expr, exp.Create):
        flows += _create(expr, ctx, result)
    elif isinstance(expr, exp.Comment):
        _comment(expr, ctx, result)
    elif isinstance(expr, exp.Merge):
        flows += _merge(expr, result)
    elif isinstance(expr, exp.Update):
        flows += _update(expr, result)
    elif isinstance(expr, exp.Delete):
        flows += _delete(expr, result)
    elif _select_into(expr) is not None:
        query = expr.copy()
        into = _select_into(query)
        assert into is not None
        into.pop()
        if not isinstance(into.this, exp.Table):
            raise StatementRejected("SELECT INTO without a target table")
        result.type = "SELECT INTO"
        if into.args.get("temporary") or into.args.get("unlogged"):
            _mark_temporary(into.this, ctx)
        flows.append(Flow(into.this, query, by_name=True, creates=True))
    elif isinstance(expr, exp.Query):
        result.type = "SELECT"
        if isinstance(expr, exp.Select) and not expr.expressions:
            raise StatementRejected("SELECT without columns")
        _reads_only(expr, ctx, result)
    elif isinstance(expr, exp.Copy):
        _copy(expr, ctx, result)
    elif (
        isinstance(expr, exp.Cache)
        and isinstance(expr.this, exp.Table)
        and isinstance(expr.expression, exp.Query)
    ):
        # Spark: CACHE TABLE c AS SELECT ... is a temporary view.
        result.type = "CACHE TABLE"
        _mark_temporary(expr.this, ctx)
        flows.append(Flow(expr.this, expr.expression, by_name=True, creates=True))
    elif isinstance(expr, exp.Use):
        result.type = "USE"
        if isinstance(expr.this, exp.Table):
            parts = _table_parts(expr.this, ctx, apply_default=False)
            if parts:
                ctx.set_default(".".join(parts))
    elif isinstance(expr, exp.Command):
        result.type = "OTHER"
        if re.search(r"\b(select|insert|merge|update)\b", expr.sql(), re.IGNORECASE):
            result.problem(
                "statement not analysed: sqlglot parses it only as an opaque command",
                code="unsupported-statement",
            )
    else:
        result.type = type(expr).__name__.upper()
    for flow in flows:
        _run_flow(flow, ctx, result)
    if isinstance(expr, exp.Delete) and not _depends_on_others(result):
        # DELETE FROM t WHERE <t's own columns>: no data comes from anywhere else.
        result.reads, result.writes, result.edges = [], [], []
    for change in changes:
        part = analyze_statement(change, ctx, StatementLineage(index=result.index, line=result.line))
        result.reads += [r for r in part.reads if all(r.id != x.id for x in result.reads)]
        result.writes += [w for w in part.writes if all(w.id != x.id for x in result.writes)]
        result.edges += [e for e in part.edges if e not in result.edges]
        result.problems += part.problems
    _drop_self_reads(result)
    return result


_CHANGES = (exp.Insert, exp.Update, exp.Delete)


def _data_modifying_ctes(expr: exp.Expr) -> tuple[exp.Expr, list[exp.Expr]]:
    """Postgres ``WITH m AS (DELETE|UPDATE|INSERT ... RETURNING ...) <statement>``: ``m``'s rows are
    the RETURNING list over the changed table (and an UPDATE's FROM / a DELETE's USING tables,
    under the change's WHERE), a query the statement reads; the change itself is analysed as a statement of its own. Returns the
    statement with such CTEs made queries, and the changes."""
    with_ = expr.args.get("with_") or expr.args.get("with")
    if not isinstance(with_, exp.With) or not any(isinstance(c.this, _CHANGES) for c in with_.expressions):
        return expr, []
    expr = expr.copy()
    with_ = expr.args.get("with_") or expr.args.get("with")
    assert isinstance(with_, exp.With)
    changes: list[exp.Expr] = []
    for cte in with_.expressions:
        change = cte.this
        if not isinstance(change, _CHANGES):
            continue
        returning = change.args.get("returning")
        change = change.copy()
        change.set("returning", None)
        changes.append(change)
        target = change.this.this if isinstance(change.this, exp.Schema) else change.this
        if not isinstance(target, exp.Table):
            continue
        extra = change.args.get("from_") if isinstance(change, exp.Update) else change.args.get("using")
        others = [extra.this, *extra.expressions] if isinstance(extra, exp.From) else []
        if isinstance(extra, list):
            others = extra
        columns = [c.copy() for c in returning.expressions] if isinstance(returning, exp.Returning) else []
        query = exp.select(*(columns or [exp.Star()])).from_(target.copy())
        for other in others:
            if isinstance(other, exp.Expr):
                query = query.join(other.copy())
        where = change.args.get("where")
        if isinstance(where, exp.Where):
            query = query.where(where.this.copy())  # the rows changed are the rows returned
        cte.set("this", query)
    return expr, changes


def _drop_self_reads(result: StatementLineage) -> None:
    """A table the statement writes is not also one of its table-level inputs: in Atlas that makes
    the process its own upstream (a loop on every lineage picture). What the target's own columns
    contribute stays in the column edges (``t.x <- t.x``)."""
    written = {w.id for w in result.writes}
    if written:
        result.reads = [r for r in result.reads if r.id not in written]


def _depends_on_others(result: StatementLineage) -> bool:
    """Whether some target depends on a table other than itself."""
    written = {w.id for w in result.writes}
    return any(r.id not in written for r in result.reads) or any(e.source != e.target for e in result.edges)


def _select_into(expr: exp.Expr) -> exp.Into | None:
    """The ``INTO table`` of ``SELECT ... INTO t``, also over a set operation (``SELECT ... INTO t
    FROM a UNION SELECT ... FROM b``: the INTO sits in the leftmost SELECT)."""
    node: exp.Expr | None = expr
    while isinstance(node, (exp.SetOperation, exp.Subquery)):
        node = node.this
    if node is not expr and not isinstance(expr, exp.SetOperation):
        return None
    if not isinstance(node, exp.Select):
        return None
    into = node.args.get("into")
    if isinstance(into, exp.Into) and not _is_variable(into.this):
        return into
    return None


def _is_variable(node: exp.Expr | None) -> bool:
    """``SELECT ... INTO @v`` / ``INTO :v``: a variable, not a table (no data flow)."""
    if isinstance(node, exp.Table):
        node = node.this
    return isinstance(node, (exp.Parameter, exp.Placeholder, exp.SessionParameter))


def _target_of(this: exp.Expr | None, what: str) -> tuple[exp.Table, list[str] | None]:
    if isinstance(this, exp.Schema) and isinstance(this.this, exp.Table):
        cols = [
            ident_name(c.this if isinstance(c, exp.ColumnDef) else c)
            for c in this.expressions
            if isinstance(c, (exp.ColumnDef, exp.Identifier, exp.Column))  # not LIKE s, constraints
        ]
        _not_a_keyword(this.this, what)
        return this.this, cols or None
    if isinstance(this, exp.Table) and isinstance(this.this, exp.Identifier):
        _not_a_keyword(this, what)
        return this, None
    raise StatementRejected(f"{what} without a target table")


def _not_a_keyword(table: exp.Table, what: str) -> None:
    """``INSERT INTO ALL SELECT ...``, ``INSERT INTO PARTITION (dt) SELECT ...``: sqlglot takes the
    keyword for a table name; SQL reserves it, so the target is missing."""
    ident = table.this
    if isinstance(ident, exp.Identifier) and not ident.quoted and not table.args.get("db"):
        word = ident.this.upper()
        if word in _RESERVED:
            raise StatementRejected(f"{what} without a target table ({word} is a keyword, not a table)")


# Words reserved in standard SQL (and the dialects' INSERT clauses) that sqlglot may still read as an
# unquoted table name.
_RESERVED = frozenset(
    [
        "ALL",
        "AND",
        "ANY",
        "AS",
        "BY",
        "CASE",
        "CROSS",
        "DEFAULT",
        "DISTINCT",
        "ELSE",
        "END",
        "EXCEPT",
        "FROM",
        "FULL",
        "GROUP",
        "HAVING",
        "IN",
        "INNER",
        "INTERSECT",
        "INTO",
        "IS",
        "JOIN",
        "LEFT",
        "LIKE",
        "LIMIT",
        "NATURAL",
        "NOT",
        "NULL",
        "ON",
        "OR",
        "ORDER",
        "OUTER",
        "OVERWRITE",
        "PARTITION",
        "RIGHT",
        "SELECT",
        "SET",
        "TABLE",
        "THEN",
        "TOP",
        "UNION",
        "USING",
        "VALUES",
        "WHEN",
        "WHERE",
        "WITH",
    ]
)


def _query_of(expr: exp.Expr) -> exp.Expr | None:
    q = expr.args.get("expression")
    while isinstance(q, exp.Subquery) and not q.alias:
        q = q.this
    if isinstance(q, exp.Query):
        with_ = expr.args.get("with_") or expr.args.get("with")
        if with_ is not None and not (q.args.get("with_") or q.args.get("with")):
            # Spark/Hive put the WITH before INSERT: move it onto the query (the tree is ours).
            q.set("with_" if "with_" in q.arg_types else "with", with_)
        return q
    return None


def _insert(expr: exp.Insert, ctx: Context, result: StatementLineage) -> list[Flow]:
    result.type = "INSERT OVERWRITE" if expr.args.get("overwrite") else "INSERT"
    this = expr.this
    if isinstance(this, exp.Directory):
        result.writes.append(_file_ref(this.this))
        q = _query_of(expr)
        if q is not None:
            _reads_only(q, ctx, result)
        return []
    target, cols = _target_of(this, "INSERT")
    source = expr.args.get("expression")
    query = _query_of(expr)
    table_source = expr.args.get("source")
    if (
        query is None
        and isinstance(table_source, exp.Table)
        and isinstance(table_source.this, exp.Identifier)
    ):
        # INSERT INTO t TABLE s: every column of s, in order.
        query = exp.Select(expressions=[exp.Star()]).from_(table_source.copy(), copy=False)
    values_query = _values_query(source)
    if query is None and values_query is not None:
        # VALUES rows with scalar subqueries: the subqueries' tables are read, column by column.
        result.type += " VALUES"
        return [Flow(target, values_query, cols, values=True)]
    if query is None:
        if source is None or isinstance(source, (exp.Values, exp.Tuple)) or source.find(exp.Values):
            ref = table_ref(target, ctx)
            if ref is not None:
                result.writes.append(ref)
            result.type += " VALUES"
            return []
        raise StatementRejected("INSERT without a query or VALUES")
    partition = target.args.get("partition")
    static = [
        ident_name(e.this.this)
        for e in (partition.expressions if isinstance(partition, exp.Partition) else [])
        if isinstance(e, exp.EQ)
        and isinstance(e.this, exp.Column)
        and isinstance(e.this.this, exp.Identifier)
    ]
    dynamic = [
        ident_name(e.this if isinstance(e, exp.Column) else e)
        for e in (partition.expressions if isinstance(partition, exp.Partition) else [])
        if isinstance(e, exp.Column) and isinstance(e.this, exp.Identifier) or isinstance(e, exp.Identifier)
    ]
    by_name = bool(expr.args.get("by_name"))
    return [Flow(target, query, cols, by_name=by_name, static=static, dynamic=dynamic)]


def _values_query(source: exp.Expr | None) -> exp.Query | None:
    """``VALUES (1, (SELECT max(x) FROM s)), (...)`` as ``SELECT 1, (SELECT ...) UNION ALL SELECT
    ...`` (positions line up with the target columns) when a row holds a subquery; else None."""
    if not isinstance(source, exp.Values) or not source.find(exp.Query):
        return None
    selects: list[exp.Select] = []
    for row in source.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        selects.append(exp.Select(expressions=[i.copy() for i in items]))
    if not selects or not all(sel.expressions for sel in selects):
        return None
    query: exp.Query = selects[0]
    for sel in selects[1:]:
        query = exp.union(query, sel, distinct=False, copy=False)
    return query


def _multi_insert(expr: exp.MultitableInserts, ctx: Context, result: StatementLineage) -> list[Flow]:
    result.type = "MULTI INSERT"
    source = expr.args.get("source")
    flows: list[Flow] = []
    previous: list[exp.Expr] = []
    for item in expr.expressions:
        cond: exp.Expr | None = None
        insert = item
        if isinstance(item, exp.ConditionalInsert):
            insert = item.this
            cond = item.args.get("expression")
            if item.args.get("else_") and previous:
                cond = exp.not_(exp.or_(*[p.copy() for p in previous]))
            elif cond is not None:
                previous.append(cond)
        if not isinstance(insert, exp.Insert):
            continue
        target, cols = _target_of(insert.this, "INSERT")
        body = insert.args.get("expression")
        query: exp.Query
        if isinstance(body, exp.Select) and not body.args.get("from_") and source is not None:
            # Hive: FROM src INSERT ... SELECT ... -- the shared FROM feeds every insert.
            query = body.copy()
            query.set("from_", exp.From(this=source.copy()))
        elif isinstance(source, exp.Query):
            # INSERT ALL INTO t (cols) VALUES (exprs) ... SELECT ...: the VALUES read the source row.
            sub = exp.Subquery(this=source.copy(), alias=exp.TableAlias(this=exp.to_identifier("_src")))
            if isinstance(body, exp.Values) and body.expressions:
                row = body.expressions[0]
                values = row.expressions if isinstance(row, exp.Tuple) else [row]
                query = exp.Select(expressions=[v.copy() for v in values]).from_(sub, copy=False)
            else:
                query = exp.Select(expressions=[exp.Star()]).from_(sub, copy=False)
            if cond is not None:
                query = query.where(cond.copy(), copy=False)
        elif isinstance(body, exp.Query):
            query = body
        else:
            continue
        flows.append(Flow(target, query, cols))
    return flows


def _mark_temporary(table: exp.Table, ctx: Context) -> None:
    parts = _table_parts(table, ctx, apply_default=False)
    if parts:
        ctx.temporary.add(dotted(*parts))


def _create(expr: exp.Create, ctx: Context, result: StatementLineage) -> list[Flow]:
    kind = (expr.args.get("kind") or "").upper()
    props = expr.args.get("properties")
    prop_types = {type(p) for p in (props.expressions if props else [])}
    materialized = exp.MaterializedProperty in prop_types
    temporary = exp.TemporaryProperty in prop_types
    query = _query_of(expr)
    if query is None and re.search(r"\bAS\s*$", result.text, re.IGNORECASE):
        raise StatementRejected(f"CREATE {kind} ... AS without a query")
    if kind not in ("TABLE", "VIEW") or not isinstance(expr.this, (exp.Table, exp.Schema)):
        result.type = f"CREATE {kind}".strip()
        return []
    like = _like_source(expr)
    target, cols = _target_of(expr.this, f"CREATE {kind}")
    clone = expr.args.get("clone")
    if isinstance(clone, exp.Clone) and isinstance(clone.this, exp.Table) and query is None:
        # CREATE TABLE t CLONE s / COPY s: a copy of s's data, column for column.
        result.type = "CREATE TABLE CLONE"
        if ctx.schema.columns(_table_parts(clone.this, ctx) or ()) is None:
            _table_level(clone.this, target, ctx, result, [])
            result.problem(
                f"columns of {dotted(*(_table_parts(clone.this, ctx) or ('?',)))} unknown: "
                "table-level lineage only (give them with --schema)",
                code="unknown-columns",
            )
            return []
        star = exp.Select(expressions=[exp.Star()]).from_(clone.this.copy(), copy=False)
        return [Flow(target, star, None, by_name=True, creates=True)]
    if like is not None:
        if temporary:
            _mark_temporary(target, ctx)
        if query is None:
            # CREATE TABLE t LIKE s: t gets s's column definitions, not its rows.
            result.type = "CREATE TABLE LIKE"
            own = [c for c in cols or [] if c]
            _table_level(like, target, ctx, result, own)
            return []
        ref = table_ref(like, ctx)
        if ref is not None:  # BigQuery LIKE s AS SELECT: s gives the schema, the query the rows
            result.reads.append(ref)
    if temporary:
        _mark_temporary(target, ctx)
    to_table = next(
        (p.this for p in (props.expressions if props else []) if isinstance(p, exp.ToTableProperty)), None
    )
    if kind == "VIEW" and isinstance(to_table, exp.Table) and query is not None:
        # ClickHouse: CREATE MATERIALIZED VIEW mv TO db.target AS SELECT ... writes into db.target.
        result.type = "CREATE MATERIALIZED VIEW"
        return [Flow(to_table, query, None)]
    if kind == "VIEW":
        parts = _table_parts(target, ctx)
        if parts and not temporary:
            ctx.views.add(dotted(*parts))
        result.type = "CREATE MATERIALIZED VIEW" if materialized else "CREATE VIEW"
    else:
        result.type = "CREATE TABLE AS SELECT" if query is not None else "CREATE TABLE"
    if query is None:
        # Plain DDL: no data flow, but a dataset with those columns, and its columns let later
        # statements expand SELECT *.
        parts = _table_parts(target, ctx)
        if parts and cols and ctx.learn:
            ctx.schema.add(parts, cols)
        ref = table_ref(target, ctx)
        if ref is not None and ref.kind == "table" and kind == "TABLE" and not temporary and cols:
            ref.columns = list(cols)
            ref.types = _column_types(expr.this)
            ref.description = _table_comment(props)
            ref.descriptions = _column_comments(expr.this)
            result.defines.append(ref)
        return []
    described = table_ref(target, ctx)
    if described is not None and not temporary:
        described.description = _table_comment(props)
        described.descriptions = _column_comments(expr.this)
        if described.description or described.descriptions:
            result.defines.append(described)  # CREATE TABLE t (c INT COMMENT '...') COMMENT '...' AS SELECT
    return [Flow(target, query, cols, by_name=cols is None, creates=True)]


def _literal_text(node: Any) -> str | None:
    if isinstance(node, exp.Literal) and node.is_string and node.this.strip():
        return str(node.this)
    return None


def _table_comment(props: exp.Expr | None) -> str | None:
    """``CREATE TABLE ... COMMENT 'text'`` (Hive, Spark, MySQL, Databricks, ...)."""
    for p in props.expressions if props else []:
        if isinstance(p, exp.SchemaCommentProperty):
            return _literal_text(p.this)
    return None


def _column_comments(schema: exp.Expr | None) -> dict[str, str]:
    """Column -> ``COMMENT 'text'`` of a ``CREATE TABLE t (c type COMMENT 'text', ...)``."""
    out: dict[str, str] = {}
    for c in schema.expressions if isinstance(schema, exp.Schema) else []:
        if not isinstance(c, exp.ColumnDef):
            continue
        for con in c.args.get("constraints") or []:
            kind = con.args.get("kind") if isinstance(con, exp.ColumnConstraint) else None
            text = _literal_text(kind.this) if isinstance(kind, exp.CommentColumnConstraint) else None
            if text:
                out[ident_name(c.this)] = text
    return out


def _comment(expr: exp.Comment, ctx: Context, result: StatementLineage) -> None:
    """``COMMENT ON TABLE t IS '...'`` / ``COMMENT ON COLUMN t.c IS '...'`` (PostgreSQL, Oracle,
    Snowflake, Trino, ...): a description of the dataset or column, no data flow."""
    kind = str(expr.args.get("kind") or "").upper()
    result.type = f"COMMENT ON {kind}".strip()
    text = _literal_text(expr.args.get("expression"))
    target = expr.this
    if text is None:
        return
    if kind in ("TABLE", "VIEW") and isinstance(target, exp.Table):
        ref = table_ref(target, ctx)
        if ref is not None:
            ref.description = text
            result.defines.append(ref)
    elif kind == "COLUMN" and isinstance(target, exp.Column) and target.table:
        table = exp.Table(
            this=exp.to_identifier(target.table),
            db=exp.to_identifier(target.args["db"].name) if target.args.get("db") else None,
            catalog=exp.to_identifier(target.args["catalog"].name) if target.args.get("catalog") else None,
        )
        ref = table_ref(table, ctx)
        if ref is not None:
            col = ident_name(target.this)
            ref.columns = [col]
            ref.descriptions = {col: text}
            result.defines.append(ref)


def _column_types(schema: exp.Expr | None) -> dict[str, str]:
    """Column -> type of a ``CREATE TABLE t (c type, ...)`` definition, as the statement spells it."""
    out: dict[str, str] = {}
    for c in schema.expressions if isinstance(schema, exp.Schema) else []:
        kind = c.args.get("kind") if isinstance(c, exp.ColumnDef) else None
        if isinstance(c, exp.ColumnDef) and isinstance(kind, exp.DataType):
            out[ident_name(c.this)] = kind.sql()
    return out


def _with_statement_ctes(stmt: exp.Expr, query: exp.Select) -> exp.Select:
    """``WITH c AS (...) UPDATE/MERGE/DELETE ...``: the CTEs belong to the statement, so the query
    built for it must carry them (else ``c`` reads as a table named c)."""
    with_ = stmt.args.get("with_") or stmt.args.get("with")
    if isinstance(with_, exp.With):
        query.set("with_" if "with_" in query.arg_types else "with", with_.copy())
    return query


def _like_source(expr: exp.Create) -> exp.Table | None:
    """The ``s`` of ``CREATE TABLE t LIKE s`` (Snowflake, BigQuery, Databricks, MySQL, Hive) and
    ``CREATE TABLE t (LIKE s ...)`` (Postgres, MySQL)."""
    props = expr.args.get("properties")
    items = list(props.expressions) if isinstance(props, exp.Properties) else []
    if isinstance(expr.this, exp.Schema):
        items += expr.this.expressions
    like = next((p for p in items if isinstance(p, exp.LikeProperty)), None)
    if like is not None and isinstance(like.this, exp.Table) and isinstance(like.this.this, exp.Identifier):
        return like.this
    return None


def _table_level(
    source: exp.Table, target: exp.Table, ctx: Context, result: StatementLineage, own: list[str]
) -> None:
    """Table-level lineage source -> target; the target learns the source's known columns (plus
    ``own`` columns defined next to them)."""
    src, tgt = table_ref(source, ctx), table_ref(target, ctx)
    if src is None or tgt is None:
        raise StatementRejected("the source or target is not a table")
    known = ctx.schema.columns(_table_parts(source, ctx) or ())
    src.columns = [c.lower() for c in known or []]
    tgt.columns = [*src.columns, *[c for c in own if c not in src.columns]]
    result.reads.append(src)
    result.writes.append(tgt)
    if known is not None and ctx.learn:
        ctx.schema.add(_table_parts(target, ctx) or (), tgt.columns)


def _pop_joins(table: exp.Expr) -> list[exp.Expr]:
    joins = list(table.args.get("joins") or [])
    if joins:
        table.set("joins", None)
    return joins


def _merge(expr: exp.Merge, result: StatementLineage) -> list[Flow]:
    result.type = "MERGE"
    target = expr.this
    using = expr.args.get("using")
    if not isinstance(target, exp.Table) or using is None:
        raise StatementRejected("MERGE without a target table or USING source")
    on = expr.args.get("on")
    whens = expr.args.get("whens")
    flows: list[Flow] = []
    using_alias = using.alias_or_name

    def base() -> exp.Select:
        sel = exp.Select().from_(target.copy(), copy=False)
        sel.append("joins", exp.Join(this=using.copy(), on=on.copy() if on is not None else None))
        return sel

    for when in whens.expressions if whens is not None else []:
        then = when.args.get("then")
        cond = when.args.get("condition")
        sel = base()
        cols: list[str] | None
        if isinstance(then, exp.Update):
            if any(isinstance(e, exp.Star) for e in then.expressions):
                sel.set("expressions", [exp.Column(this=exp.Star(), table=exp.to_identifier(using_alias))])
                cols = None
            else:
                assignments = _assignments(then.expressions)
                sel.set("expressions", [exp.alias_(v, c, copy=False) for c, v in assignments])
                cols = [c for c, _ in assignments]
        elif isinstance(then, exp.Insert):
            if isinstance(then.this, exp.Star):
                sel.set("expressions", [exp.Column(this=exp.Star(), table=exp.to_identifier(using_alias))])
                cols = None
            else:
                names = then.this.expressions if isinstance(then.this, exp.Tuple) else []
                values = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
                if not values:
                    continue
                sel.set("expressions", [v.copy() for v in values])
                cols = [ident_name(n.this if isinstance(n, exp.Column) else n) for n in names] or None
                if cols is None:
                    # INSERT VALUES (s.a, s.b) without a column list fills the target's columns in
                    # order, as INSERT ... SELECT does (by the values' names only when those are unknown)
                    if cond is not None:
                        sel = sel.where(cond.copy(), copy=False)
                    flows.append(Flow(target, _with_statement_ctes(expr, sel), None))
                    continue
        else:
            continue  # DELETE / DO NOTHING: no column flows
        if cond is not None:
            sel = sel.where(cond.copy(), copy=False)
        flows.append(Flow(target, _with_statement_ctes(expr, sel), cols, by_name=cols is None))
    return flows


def _assignments(items: list[exp.Expr]) -> list[tuple[str, exp.Expr]]:
    """SET targets and their value expressions (copies); ``SET (a, b) = (SELECT x, y ...)`` and
    ``SET (a, b) = (1, y)`` give one pair per column."""
    out: list[tuple[str, exp.Expr]] = []
    for e in items:
        if not isinstance(e, exp.EQ):
            continue
        if isinstance(e.this, exp.Tuple):
            names = [ident_name(c.this if isinstance(c, exp.Column) else c) for c in e.this.expressions]
            value = e.expression
            inner = value.this if isinstance(value, exp.Subquery) else None
            for i, name in enumerate(names):
                if isinstance(value, exp.Tuple) and i < len(value.expressions):
                    out.append((name, value.expressions[i].copy()))
                elif isinstance(inner, exp.Select) and i < len(inner.expressions):
                    one = inner.copy()
                    one.set("expressions", [inner.expressions[i].copy()])
                    out.append((name, exp.Subquery(this=one)))
            continue
        name = ident_name(e.this.this if isinstance(e.this, exp.Column) else e.this)
        if name:
            out.append((name, e.expression.copy()))
    return out


def _update(expr: exp.Update, result: StatementLineage) -> list[Flow]:
    result.type = "UPDATE"
    target = expr.this
    if not isinstance(target, exp.Table) or not isinstance(target.this, exp.Identifier):
        raise StatementRejected("UPDATE without a target table")
    assignments = _assignments(expr.expressions)
    if not assignments:
        raise StatementRejected("UPDATE without SET assignments")
    cols = [c for c, _ in assignments]
    sel = exp.Select(expressions=[exp.alias_(v, c, copy=False) for c, v in assignments])
    tgt = target.copy()
    joins = _pop_joins(tgt)  # MySQL: UPDATE t JOIN s ON ... SET ...
    real_target = target
    from_ = expr.args.get("from_") or expr.args.get("from")
    if from_ is not None:
        first = from_.this.copy()
        more = _pop_joins(first)
        sources = [first, *[j.this for j in more]]
        aliased = next(
            (
                s
                for s in sources
                if isinstance(s, exp.Table) and s.alias_or_name == target.name and not target.db
            ),
            None,
        )
        if aliased is not None:
            # T-SQL: UPDATE x SET ... FROM t AS x JOIN s ...: x names the real target.
            real_target = exp.Table(
                this=aliased.this.copy(), db=aliased.args.get("db"), catalog=aliased.args.get("catalog")
            )
            sel = sel.from_(first, copy=False)
        else:
            sel = sel.from_(tgt, copy=False)
            sel.append("joins", exp.Join(this=first))
        for j in more:
            sel.append("joins", j)
    else:
        sel = sel.from_(tgt, copy=False)
    for j in joins:
        sel.append("joins", j)
    where = expr.args.get("where")
    if where is not None:
        sel.set("where", where.copy())
    real = real_target.copy()
    real.set("alias", None)
    real.set("joins", None)
    return [Flow(real, _with_statement_ctes(expr, sel), cols)]


def _delete(expr: exp.Delete, result: StatementLineage) -> list[Flow]:
    """``DELETE FROM t USING s WHERE ...`` / ``DELETE FROM t WHERE x IN (SELECT ... FROM s)`` /
    MySQL ``DELETE t FROM t JOIN s ON ...``: which rows of t remain depends on s (row-level
    dependencies on the whole of t, no column values). A DELETE reading nothing but t gives none."""
    result.type = "DELETE"
    source = expr.this
    if not isinstance(source, exp.Table) or not isinstance(source.this, exp.Identifier):
        raise StatementRejected("DELETE without a target table")
    sel = exp.Select(expressions=[exp.alias_(exp.Literal.number(1), "_rows")])
    first = source.copy()
    joins = _pop_joins(first)  # MySQL/T-SQL: DELETE t FROM t JOIN s ON ...
    sel = sel.from_(first, copy=False)
    for j in joins:
        sel.append("joins", j)
    for item in expr.args.get("using") or []:
        if isinstance(item, exp.Expr):
            used = item.copy()
            more = _pop_joins(used)
            sel.append("joins", exp.Join(this=used))
            for j in more:
                sel.append("joins", j)
    where = expr.args.get("where")
    if where is not None:
        sel.set("where", where.copy())
    sel = _with_statement_ctes(expr, sel)
    in_from = [source, *[j.this for j in source.args.get("joins") or []]]
    named = [t for t in expr.args.get("tables") or [] if isinstance(t, exp.Table)] or [source]
    flows: list[Flow] = []
    for t in named:
        # MySQL/T-SQL DELETE alias FROM t alias ...: find the table behind the alias.
        real = next(
            (s for s in in_from if isinstance(s, exp.Table) and s.alias_or_name == t.name and not t.db),
            t,
        ).copy()
        real.set("alias", None)
        real.set("joins", None)
        flows.append(Flow(real, sel, rows_only=True))
    return flows


def _copy(expr: exp.Copy, ctx: Context, result: StatementLineage) -> None:
    result.type = "COPY"
    files = [_file_ref(f) for f in expr.args.get("files") or []]
    this = expr.this
    loading = bool(expr.args.get("kind"))  # COPY INTO t FROM files (True) / COPY t TO files (False)
    if isinstance(this, exp.Table) and isinstance(this.this, exp.Identifier):
        ref = table_ref(this, ctx)
        if ref is None:
            return
        if loading:
            result.reads.extend(files)
            result.writes.append(ref)
        else:
            result.reads.append(ref)
            result.writes.extend(files)
    elif isinstance(this, exp.Table) and files:
        # Snowflake unload: COPY INTO @stage FROM table|(query)
        result.writes.append(_file_ref(this))
        for f in expr.args.get("files") or []:
            if isinstance(f, exp.Table) and isinstance(f.this, exp.Identifier):
                ref = table_ref(f, ctx)
                if ref:
                    result.reads.append(ref)
            elif isinstance(f, (exp.Subquery, exp.Query)):
                _reads_only(f.this if isinstance(f, exp.Subquery) else f, ctx, result)
        result.reads = [r for r in result.reads if r.kind != "file" or r.id != result.writes[-1].id]
    elif isinstance(this, (exp.Subquery, exp.Query)):
        _reads_only(this.this if isinstance(this, exp.Subquery) else this, ctx, result)
        result.writes.extend(files)


# ---------------------------------------------------------------------- lineage
def _qualified(query: exp.Expr, ctx: Context) -> exp.Expr:
    """A qualified copy of ``query`` (``query`` itself is left untouched)."""
    kw: dict[str, Any] = {
        "dialect": ctx.dialect or None,
        "db": ctx.db,
        "catalog": ctx.catalog,
        "schema": ctx.schema.mapping,
        "validate_qualify_columns": False,
        "quote_identifiers": False,
        "identify": False,
    }
    errors = (SqlglotError, KeyError, ValueError, AttributeError, TypeError, IndexError)
    try:
        return qualify(query.copy(), **kw)
    except errors:
        pass
    tables_only: exp.Expr | None = None
    try:
        tables_only = qualify(query.copy(), qualify_columns=False, **kw)
    except errors:
        return query.copy()
    try:
        # A subquery that could be correlated, over tables of unknown columns, stops sqlglot: it
        # cannot tell an inner column from an outer one. SQL binds a name to the innermost source
        # first, so pin unqualified names of single-source scopes there and try again (keeps star
        # expansion and alias handling); else the column engine places columns itself.
        return qualify(_pin_single_source_columns(tables_only.copy()), **kw)
    except errors:
        return tables_only


_ALIAS_CLAUSES = (exp.Order, exp.Group, exp.Having, exp.Qualify)


def _pin_single_source_columns(tree: exp.Expr) -> exp.Expr:
    for scope in traverse_scope(tree):
        if not isinstance(scope.expression, exp.Select):
            continue
        sources = list(scope.selected_sources)
        if len(sources) != 1:
            continue
        outputs = set(scope.expression.named_selects)
        for col in scope.columns:
            if col.table or not isinstance(col.this, exp.Identifier):
                continue
            if col.name in outputs and col.find_ancestor(*_ALIAS_CLAUSES) is not None:
                continue  # ORDER BY total: an output alias, not a column of the source
            col.set("table", exp.to_identifier(sources[0]))
    return tree


def _analyzer(query: exp.Expr, ctx: Context, problems: Problems) -> QueryAnalyzer:
    def tref(t: exp.Table) -> str | None:
        f = file_of(t)
        if f is not None:
            return f.id
        parts = _table_parts(t, ctx)
        return dotted(*parts) if parts else None

    def known(t: exp.Table) -> list[str] | None:
        parts = _table_parts(t, ctx)
        if not parts:
            return None
        cols = ctx.schema.columns(parts)
        return [c.lower() for c in cols] if cols is not None else None

    return QueryAnalyzer(
        query,
        dialect=ctx.dialect,
        table_ref=tref,
        col_name=ident_name,
        known_columns=known,
        problems=problems,
    )


def passed_tables(query: exp.Expr, dialect: str) -> list[exp.Table]:
    """Tables a query reads through a function rather than a FROM item: a table passed to a table
    function (BigQuery ``ML.PREDICT(MODEL m, TABLE t)``, Snowflake ``TABLE(f(TABLE(t)))``,
    ``SEMANTIC_VIEW(v ...)``) and ClickHouse dictionaries (``dictGet('db.dict', 'attr', key)``)."""
    out: list[exp.Table] = []
    for node in query.find_all(exp.Table, exp.TableFromRows, exp.Anonymous):
        if isinstance(node, exp.Anonymous):
            name = str(node.this).lower()
            first = node.expressions[0] if node.expressions else None
            if name.startswith("dict") and isinstance(first, exp.Literal) and first.is_string:
                with contextlib.suppress(SqlglotError, ValueError):
                    out.append(exp.to_table(first.name, dialect=dialect or None))
            continue
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            continue
        fn = node.this
        if isinstance(node, exp.TableFromRows) and isinstance(fn, exp.Column) and fn.table:
            # TABLE(db.s.t): sqlglot reads the name as a column
            parts = [p for p in (fn.args.get("catalog"), fn.args.get("db"), fn.args.get("table")) if p]
            out.append(
                exp.Table(
                    this=fn.this.copy(),
                    db=parts[-1].copy(),
                    catalog=parts[0].copy() if len(parts) > 1 else None,
                )
            )
            continue
        if not isinstance(fn, exp.Expr):
            continue
        for inner in fn.find_all(exp.Table):
            parent = inner.parent
            if isinstance(parent, exp.Predict) and inner.arg_key == "this":
                continue  # the MODEL, not data
            if isinstance(inner.this, exp.Identifier) and inner.find_ancestor(exp.Subquery) is None:
                out.append(inner)
    return out


def _add_reads(
    qa: QueryAnalyzer, ctx: Context, result: StatementLineage, query: exp.Expr | None = None
) -> None:
    have = {r.id for r in result.reads}
    extra = passed_tables(query, ctx.dialect) if query is not None else []
    for t in [*qa.read_tables(), *extra]:
        ref = table_ref(t, ctx)
        if ref is not None and ref.id not in have:
            have.add(ref.id)
            if ref.kind != "file":
                # Known columns, in the schema's order (the dataset lists them all, not just the used).
                ref.columns = [c.lower() for c in ctx.schema.columns(_table_parts(t, ctx) or ()) or []]
            result.reads.append(ref)


def _reads_only(query: exp.Expr, ctx: Context, result: StatementLineage) -> None:
    problems = Problems()
    q = _qualified(query, ctx)
    qa = _analyzer(q, ctx, problems)
    _add_reads(qa, ctx, result, q)


def _has_deps(deps: Deps | None) -> bool:
    return deps is not None and bool(deps.direct or deps.indirect)


def _check_query(query: exp.Expr) -> None:
    for sel in query.find_all(exp.Select):
        if not sel.expressions:
            raise StatementRejected("SELECT without columns")


def _run_flow(flow: Flow, ctx: Context, result: StatementLineage) -> None:
    _check_query(flow.query)
    problems = Problems()
    q = _qualified(flow.query, ctx)
    qa = _analyzer(q, ctx, problems)
    res: ScopeResult = qa.result()
    _add_reads(qa, ctx, result, q)
    target = table_ref(flow.target, ctx)
    if target is None:
        raise StatementRejected("the target is not a table")
    parts = _table_parts(flow.target, ctx) or ()
    known = ctx.schema.columns(parts)
    known_l = [c.lower() for c in known] if known is not None else None
    if known_l is not None and (flow.static or flow.dynamic):
        # Hive: static partition columns get a literal; the query fills the other columns in order,
        # dynamic partition columns last, in the PARTITION clause's order.
        skip = {*flow.static, *flow.dynamic}
        known_l = [c for c in known_l if c not in skip] + flow.dynamic

    # Which target column each output position lands in.
    cut = res.names.index(None) if None in res.names else len(res.names)
    mapping: list[tuple[int, str]] = []  # (output position, target column)
    outputs = [(i, n) for i, n in enumerate(res.names) if n is not None]
    if flow.values:
        # Literal-only positions of VALUES rows move no data: nothing to name or map.
        outputs = [(i, n) for i, n in outputs if _has_deps(res.at(i))]
    if flow.rows_only:
        pass
    elif flow.columns is not None and not flow.by_name:
        if len(flow.columns) != len(res.names) and res.complete:
            result.problem(
                f"{target.id}: {len(flow.columns)} target columns but the query gives {len(res.names)}",
                code="column-count",
            )
        mapping = [(i, c) for i, c in enumerate(flow.columns[:cut])]
    elif flow.columns is not None and flow.by_name:
        mapping = [(i, n) for i, n in outputs if n in flow.columns]
    elif flow.by_name:
        mapping = [(i, n) for i, n in outputs]
    elif known_l is not None:
        if len(known_l) != len(res.names) and res.complete:
            result.problem(
                f"{target.id}: {len(known_l)} known columns but the query gives {len(res.names)}",
                code="column-count",
            )
        mapping = [(i, known_l[i]) for i in range(min(cut, len(known_l)))]
    else:
        # No column list and no schema: positions carry the query's output names (Hive/Spark insert),
        # but the last ones fill the dynamic partition columns whatever they are called.
        first_dynamic = (
            len(res.names) - len(flow.dynamic) if flow.dynamic and res.complete else len(res.names)
        )
        mapping = [(i, n) for i, n in outputs if i < cut and i < first_dynamic]
        mapping += [(first_dynamic + k, c) for k, c in enumerate(flow.dynamic) if first_dynamic + k < cut]
    if flow.values:
        mapping = [(i, c) for i, c in mapping if _has_deps(res.at(i))]
    named: list[tuple[int, str]] = []
    for out, col in mapping:
        if _GENERATED.match(col):
            result.problem(
                f"{target.id}: output column {int(col[5:]) + 1} has no name; "
                "give a column list, an alias or --schema",
                code="unnamed-column",
            )
            continue
        named.append((out, col))
    if flow.rows_only:
        target.columns = list(known) if known is not None else []
    elif flow.columns is not None and not flow.by_name:
        target.columns = list(flow.columns)
    elif known is not None and not flow.by_name:
        target.columns = list(known)
    else:
        target.columns = [c for _, c in named]
    for code, message in problems.items:
        if not any(p["message"] == message for p in result.problems):  # MERGE branches repeat them
            result.problem(message, code=code)
    # Deduplicated across the statement's flows (MERGE branches share their ON condition).
    seen: set[tuple[str, str, str, str | None, str]] = {
        (e.source, e.source_column, e.target, e.target_column, e.kind) for e in result.edges
    }

    def emit(ds: str, c: str, col: str | None, kind: str, x: str | None) -> None:
        key = (ds, c, target.id, col, kind)
        if key not in seen:
            seen.add(key)
            result.edges.append(Edge(ds, c, target.id, col, kind, x))

    for out, col in named:
        deps = res.at(out)
        if deps is None:
            continue
        for (ds, c), (kind, x) in deps.direct.items():
            emit(ds, c, col, kind, x)
        for ((ds, c), kind), x in deps.indirect.items():
            emit(ds, c, col, kind, x)
    for ((ds, c), kind), x in res.dataset.items():
        emit(ds, c, None, kind, x)
    existing = next((w for w in result.writes if w.id == target.id), None)
    if existing is None:
        result.writes.append(target)
    else:
        existing.columns += [c for c in target.columns if c not in existing.columns]
    # Later statements of the script can expand SELECT * over what this one created.
    if flow.creates and res.complete and target.columns and ctx.learn:
        ctx.schema.add(parts, target.columns)
