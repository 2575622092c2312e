"""An M expression -> the warehouse tables (and native queries) it reads (docs/bi.md).

Evaluates just enough of M: steps of ``let`` (by name, lazily), parameters and shared expressions,
string concatenation, the source functions of the common connectors, navigation
(``{[Name=...,Kind=...]}[Data]``, ``{[Schema=...,Item=...]}[Data]``), ``Value.NativeQuery`` /
``Odbc.Query`` / ``[Query=...]``, ``Table.Combine`` / ``Table.Join`` and other ``Table.*`` steps (their
table arguments), ``Table.RenameColumns``, and ``Table.NestedJoin`` + ``Table.ExpandTableColumn`` column
by column (expanded columns from the joined table, the others from the first). Anything else is an
:class:`Unresolved` naming the step, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.lineage.powerbi.mparse import (
    Bin,
    Call,
    Field,
    Func,
    Ident,
    If,
    Item,
    Let,
    ListE,
    Lit,
    Other,
    Rec,
)

# source function -> (connector, index of the server argument, index of the database argument)
CONNECTORS: dict[str, tuple[str, int | None, int | None]] = {
    "Sql.Database": ("sqlserver", 0, 1),
    "Sql.Databases": ("sqlserver", 0, None),
    "Snowflake.Databases": ("snowflake", 0, None),
    "PostgreSQL.Database": ("postgres", 0, 1),
    "Oracle.Database": ("oracle", 0, None),
    "GoogleBigQuery.Database": ("bigquery", None, None),
    "Databricks.Catalogs": ("databricks", 0, None),
    "DatabricksMultiCloud.Catalogs": ("databricks", 0, None),
    "AmazonRedshift.Database": ("redshift", 0, 1),
    "Odbc.DataSource": ("odbc", 0, None),
}
DIALECTS = {
    "sqlserver": "tsql",
    "snowflake": "snowflake",
    "postgres": "postgres",
    "oracle": "oracle",
    "bigquery": "bigquery",
    "databricks": "databricks",
    "redshift": "redshift",
    "odbc": "",
}
_LITERAL_TABLES = {"#table", "Table.FromRows", "Table.FromRecords", "Table.FromList", "Table.FromColumns"}


@dataclass
class Source:
    connector: str
    server: str
    database: str | None
    path: list[str] = field(default_factory=list)  # navigated: [database?, schema?, table?]
    levels: list[str] = field(default_factory=list)  # the kind of each path part


@dataclass
class TableRef:
    connector: str
    server: str
    database: str | None  # from the source function or the navigation
    schema: str | None
    table: str


@dataclass
class Native:
    connector: str
    server: str
    database: str | None
    sql: str


@dataclass(eq=False)
class Tables:
    """What a table-valued step reads; ``exact`` when its columns are the sources' columns by name
    (``renames``: column -> its name before this step's renames).

    After ``Table.NestedJoin`` its other columns come from ``base`` (the first table), ``nested`` holds
    the new column of nested tables (-> the joined table) and ``keys`` the join's key columns; after
    ``Table.ExpandTableColumn`` ``via`` maps each expanded column to (the joined table, its column)."""

    tables: list[TableRef] = field(default_factory=list)
    natives: list[Native] = field(default_factory=list)
    exact: bool = True
    renames: dict[str, str] = field(default_factory=dict)
    base: Tables | None = None
    nested: dict[str, Tables] = field(default_factory=dict)
    via: dict[str, tuple[Tables, str]] = field(default_factory=dict)
    keys: list[tuple[Tables, str]] = field(default_factory=list)

    def with_reads(self, tables: list[TableRef], natives: list[Native], exact: bool) -> Tables:
        """The same columns (renames, join parts) over these reads: a step that keeps its input's columns."""
        return Tables(tables, natives, exact, dict(self.renames), self.base, self.nested, self.via, self.keys)

    def source(self, column: str) -> tuple[Tables, str]:
        """The table without join parts a column comes from, and its name there (renames followed)."""
        t, name = self, column
        for _ in range(100):  # each step is one Tables deeper: bounded by the expression
            name = t.renames.get(name, name)
            if name in t.via:
                t, name = t.via[name]
            elif t.base is not None:
                t = t.base
            else:
                break
        return t, name

    def parts(self) -> list[Tables]:
        """The tables without join parts this one reads (itself when it has none)."""
        if self.base is None and not self.via and not self.nested:
            return [self]
        out: list[Tables] = []
        for p in [self.base, *self.nested.values(), *(t for t, _ in self.via.values())]:
            for leaf in p.parts() if p is not None else []:
                if all(leaf is not x for x in out):
                    out.append(leaf)
        return out


@dataclass
class Unresolved:
    reason: str
    step: str | None = None


class _Stop(Exception):
    def __init__(self, u: Unresolved) -> None:
        self.u = u


class _Broken(_Stop):
    """A name of a shared expression or parameter that does not parse: said wherever it is used (an
    option record's value or a connector's argument included), never read as a missing value."""


class Resolver:
    """Evaluates M against ``globals`` (parameters and shared expressions: name -> AST)."""

    def __init__(self, globals_: Mapping[str, Any], broken: Mapping[str, str] | None = None) -> None:
        self.globals = dict(globals_)
        self.broken = dict(broken or {})  # shared expressions that do not parse: name -> syntax error
        self._global_values: dict[str, Any] = {}
        self._busy: set[str] = set()

    def resolve(self, node: Any) -> Tables | Unresolved:
        try:
            v = self._eval(node, {}, None)
        except _Stop as s:
            return s.u
        if isinstance(v, Tables):
            return v
        if isinstance(v, Source):
            return Unresolved(f"the expression ends at a {v.connector} source, not at a table", None)
        return Unresolved("the expression is not a table of a known connector", None)

    # ------------------------------------------------------------------ evaluation
    def _name(self, name: str, env: dict[str, Any], step: str | None) -> Any:
        if name in env:
            v = env[name]
            if isinstance(v, _Lazy):
                if v.busy:
                    raise _Stop(Unresolved(f"step {name!r} refers to itself", name))
                v.busy = True
                env[name] = self._eval(v.node, v.env, name)
                return env[name]
            return v
        if name in self.globals:
            if name not in self._global_values:
                if name in self._busy:
                    raise _Stop(Unresolved(f"expression {name!r} refers to itself", step))
                self._busy.add(name)
                self._global_values[name] = self._eval(self.globals[name], {}, name)
            return self._global_values[name]
        if name in self.broken:
            raise _Broken(Unresolved(f"shared expression {name!r} does not parse: {self.broken[name]}", step))
        raise _Stop(Unresolved(f"unknown name {name!r}", step))

    def _eval(self, node: Any, env: dict[str, Any], step: str | None) -> Any:
        if isinstance(node, Lit):
            return node.value
        if isinstance(node, Ident):
            return self._name(node.name, env, step)
        if isinstance(node, Let):
            inner = dict(env)
            for name, expr in node.steps:
                inner[name] = _Lazy(expr, inner)
            last = node.body.name if isinstance(node.body, Ident) else step
            return self._eval(node.body, inner, last)
        if isinstance(node, ListE):
            return [self._eval(i, env, step) for i in node.items]
        if isinstance(node, Rec):
            return {k: self._lazy_value(v, env, step) for k, v in node.fields}
        if isinstance(node, Bin):
            if node.op == "&":
                a, b = self._eval(node.left, env, step), self._eval(node.right, env, step)
                if isinstance(a, str) and isinstance(b, str):
                    return a + b
                if isinstance(a, list) and isinstance(b, list):
                    return a + b
            raise _Stop(Unresolved(f"an operator {node.op!r} is not read", step))
        if isinstance(node, If):
            raise _Stop(Unresolved("a conditional (if) step is not read", step))
        if isinstance(node, Func):
            return node
        if isinstance(node, Field):
            return self._field(node, env, step)
        if isinstance(node, Item):
            return self._item(node, env, step)
        if isinstance(node, Call):
            return self._call(node, env, step)
        if isinstance(node, Other):
            return node
        raise _Stop(Unresolved("an expression is not read", step))

    def _lazy_value(self, node: Any, env: dict[str, Any], step: str | None) -> Any:
        try:
            return self._eval(node, env, step)
        except _Broken:
            raise
        except _Stop:
            return None  # an option record's value we do not need (Timeout=#duration(...))

    def _field(self, node: Field, env: dict[str, Any], step: str | None) -> Any:
        target = self._eval(node.target, env, step)
        if isinstance(target, Source | Tables) and node.name in ("Data", ""):
            return target
        if isinstance(target, dict) and node.name in target:
            return target[node.name]
        if isinstance(target, Tables):
            return target  # a column of a table: the table's lineage
        raise _Stop(Unresolved(f"field [{node.name}] is not read", step))

    def _item(self, node: Item, env: dict[str, Any], step: str | None) -> Any:
        target = self._eval(node.target, env, step)
        key = self._eval(node.key, env, step)
        if isinstance(target, Tables):
            return target  # a row of a table
        if not isinstance(target, Source):
            raise _Stop(Unresolved("an item access on something not a source", step))
        if not isinstance(key, dict):
            raise _Stop(Unresolved("a navigation by position ({0}) is not read", step))
        src = Source(target.connector, target.server, target.database, list(target.path), list(target.levels))
        if "Item" in key:
            schema, item = key.get("Schema"), key.get("Item")
            if not isinstance(item, str):
                raise _Stop(Unresolved("a navigation's Item is not text", step))
            return Tables(
                [
                    TableRef(
                        src.connector,
                        src.server,
                        self._db(src),
                        schema if isinstance(schema, str) else None,
                        item,
                    )
                ]
            )
        name = key.get("Name")
        if not isinstance(name, str):
            raise _Stop(Unresolved("a navigation without Name or Item", step))
        kind = str(key.get("Kind") or "").lower()
        if kind in ("table", "view", "function"):
            return self._to_table(src, name)
        if kind in ("database", "catalog"):
            src.path, src.levels = [name], ["database"]
            return src
        if kind == "schema":
            src.path.append(name)
            src.levels.append("schema")
            return src
        # no Kind: the next level of this connector (database, schema, table)
        has_db = "database" in src.levels or src.database is not None
        if not has_db and src.connector in ("snowflake", "databricks", "bigquery", "sqlserver", "odbc"):
            src.path, src.levels = [name], ["database"]
            return src
        if "schema" not in src.levels:
            src.path.append(name)
            src.levels.append("schema")
            return src
        return self._to_table(src, name)

    @staticmethod
    def _db(src: Source) -> str | None:
        return src.path[src.levels.index("database")] if "database" in src.levels else src.database

    def _to_table(self, src: Source, name: str) -> Tables:
        schema = src.path[src.levels.index("schema")] if "schema" in src.levels else None
        return Tables([TableRef(src.connector, src.server, self._db(src), schema, name)])

    def _call(self, node: Call, env: dict[str, Any], step: str | None) -> Any:
        fn = node.fn.name if isinstance(node.fn, Ident) else None
        if fn is None:
            raise _Stop(Unresolved("a call of a computed function is not read", step))
        if fn in CONNECTORS:
            connector, si, di = CONNECTORS[fn]
            args = [self._lazy_value(a, env, step) for a in node.args]
            server = args[si] if si is not None and si < len(args) else ""
            db = args[di] if di is not None and di < len(args) else None
            if si is not None and not isinstance(server, str):
                raise _Stop(Unresolved(f"{fn}: its server is not text", step))
            if db is not None and not isinstance(db, str):
                raise _Stop(Unresolved(f"{fn}: its database is not text", step))
            options = next((a for a in args if isinstance(a, dict)), {})
            if isinstance(options.get("Query"), str):
                return Tables(
                    natives=[Native(connector, str(server or ""), db, options["Query"])], exact=True
                )
            return Source(connector, str(server or ""), db)
        if fn == "Odbc.Query":
            args = [self._eval(a, env, step) for a in node.args[:2]]
            if len(args) < 2 or not all(isinstance(a, str) for a in args):
                raise _Stop(Unresolved("Odbc.Query: its connection string or SQL is not text", step))
            return Tables(natives=[Native("odbc", args[0], None, args[1])])
        if fn == "Value.NativeQuery":
            if len(node.args) < 2:
                raise _Stop(Unresolved("Value.NativeQuery without its SQL", step))
            src = self._eval(node.args[0], env, step)
            sql = self._eval(node.args[1], env, step)
            if not isinstance(src, Source) or not isinstance(sql, str):
                raise _Stop(Unresolved("Value.NativeQuery on something not a source, or SQL not text", step))
            return Tables(natives=[Native(src.connector, src.server, self._db(src), sql)])
        if fn in _LITERAL_TABLES:
            return Tables(exact=False)  # a table typed into the file: no upstream table
        if fn == "Table.NestedJoin" and len(node.args) >= 5:
            joined = self._nested_join(node, env, step)
            if joined is not None:
                return joined
        if fn == "Table.ExpandTableColumn" and len(node.args) >= 3:
            expanded = self._expand(node, env, step)
            if expanded is not None:
                return expanded
        if fn == "Table.RenameColumns" and node.args:
            t = self._eval(node.args[0], env, step)
            pairs = self._lazy_value(node.args[1], env, step) if len(node.args) > 1 else None
            if isinstance(t, Tables):
                renames = dict(t.renames)
                if isinstance(pairs, list) and pairs and isinstance(pairs[0], str):
                    pairs = [pairs]
                for p in pairs if isinstance(pairs, list) else []:
                    if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p):
                        renames[p[1]] = renames.pop(p[0], p[0])
                out = t.with_reads(t.tables, t.natives, t.exact)
                out.renames = renames
                return out
        if fn.startswith("Table.") or fn in ("Value.Buffer", "Table.Buffer"):
            found: list[Tables] = []
            for a in node.args:
                v = self._lazy_value(a, env, step)
                for x in v if isinstance(v, list) else [v]:
                    if isinstance(x, Tables):
                        found.append(x)
            if not found:
                raise _Stop(Unresolved(f"{fn} reads no table this reader resolves", step))
            is_join = fn in (
                "Table.NestedJoin",
                "Table.Join",
                "Table.ExpandTableColumn",
                "Table.AddJoinColumn",
            )
            tables: list[TableRef] = []
            natives: list[Native] = []
            for t in found:
                tables += [x for x in t.tables if x not in tables]
                natives += t.natives
            exact = not is_join and all(t.exact for t in found)
            if len(found) == 1:  # a step on one table keeps its columns (and where they come from)
                return found[0].with_reads(tables, natives, exact)
            # several tables (Table.Combine): columns by name from each, not through join parts
            return Tables(
                tables, natives, exact and all(t.parts() == [t] for t in found), dict(found[0].renames)
            )
        if fn in ("Text.Combine",) and node.args:
            parts = self._eval(node.args[0], env, step)
            sep = self._eval(node.args[1], env, step) if len(node.args) > 1 else ""
            if isinstance(parts, list) and all(isinstance(p, str) for p in parts) and isinstance(sep, str):
                return sep.join(parts)
        if "." in fn and fn.split(".")[0] not in (
            "Table",
            "List",
            "Text",
            "Number",
            "Record",
            "Value",
            "Date",
            "DateTime",
        ):
            raise _Stop(Unresolved(f"unknown connector {fn}", step))
        raise _Stop(Unresolved(f"function {fn} is not read", step))

    def _names(self, node: Any, env: dict[str, Any], step: str | None) -> list[str] | None:
        v = self._lazy_value(node, env, step)
        if isinstance(v, str):
            return [v]
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return list(v)
        return None

    def _nested_join(self, node: Call, env: dict[str, Any], step: str | None) -> Tables | None:
        """``Table.NestedJoin(table1, key1, table2, key2, newColumnName, ...)``: table1's columns and a
        new column of table2's nested rows (None: not read column by column, left to the table level)."""
        t1, t2 = self._lazy_value(node.args[0], env, step), self._lazy_value(node.args[2], env, step)
        k1, k2 = self._names(node.args[1], env, step), self._names(node.args[3], env, step)
        new = self._lazy_value(node.args[4], env, step)
        if not (isinstance(t1, Tables) and isinstance(t2, Tables) and isinstance(new, str)):
            return None
        tables = t1.tables + [x for x in t2.tables if x not in t1.tables]
        return Tables(
            tables,
            t1.natives + t2.natives,
            t1.exact and t2.exact,
            base=t1,
            nested={new: t2},
            keys=t1.keys + t2.keys + [(t1, k) for k in k1 or []] + [(t2, k) for k in k2 or []],
        )

    def _expand(self, node: Call, env: dict[str, Any], step: str | None) -> Tables | None:
        """``Table.ExpandTableColumn(table, column, columnNames, newColumnNames?)``: the named columns
        of the nested table, under their new names; the others stay the table's."""
        t = self._lazy_value(node.args[0], env, step)
        column = self._lazy_value(node.args[1], env, step)
        names = self._names(node.args[2], env, step)
        new = self._names(node.args[3], env, step) if len(node.args) > 3 else names
        if not (
            isinstance(t, Tables) and isinstance(column, str) and names and new and len(new) == len(names)
        ):
            return None
        inner = t.nested.get(t.renames.get(column, column))
        if inner is None:
            return None
        return Tables(
            list(t.tables),
            list(t.natives),
            t.exact,
            base=t,
            via={n: (inner, c) for n, c in zip(new, names, strict=True)},
            keys=t.keys,
        )


@dataclass
class _Lazy:
    node: Any
    env: dict[str, Any]
    busy: bool = False
