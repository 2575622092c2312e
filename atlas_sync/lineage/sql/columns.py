"""Column lineage of one qualified query, walked over sqlglot's scopes.

sqlglot's ``lineage`` module answers one column at a time and needs a schema to follow a CTE that
reads another CTE. Here every scope (CTE, derived table, subquery, UNNEST/LATERAL VIEW, set
operation) is analysed once, memoised, and its output columns are traced to physical table columns
with a dependency kind:

* direct: ``IDENTITY`` (the column itself), ``TRANSFORMATION`` (inside an expression),
  ``AGGREGATION`` (inside an aggregate function);
* indirect, aimed at one output column: ``WINDOW`` (PARTITION BY / ORDER BY of a window),
  ``CONDITIONAL`` (CASE/IF condition, COALESCE fallback);
* indirect, aimed at the whole output: ``FILTER`` (WHERE/HAVING/QUALIFY), ``JOIN`` (ON/USING and
  WHERE conjuncts comparing two sources), ``GROUP_BY``, ``SORT``.

Unqualified columns that sqlglot could not place (several sources, no schema) are placed here when
exactly one source can hold them; otherwise they are reported, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, ScopeType, traverse_scope

Src = tuple[str, str]  # (dataset id, column name)
_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}
_EXPR_MAX = 400


def stronger(a: str, b: str) -> str:
    """The stronger of two direct kinds (AGGREGATION > TRANSFORMATION > IDENTITY)."""
    return a if _RANK[a] >= _RANK[b] else b


@dataclass
class Deps:
    """What one output column (or one expression) depends on, in physical table columns."""

    direct: dict[Src, tuple[str, str | None]] = field(default_factory=dict)  # src -> (kind, expression)
    indirect: dict[tuple[Src, str], str | None] = field(default_factory=dict)  # (src, kind) -> expression

    def add_direct(self, src: Src, kind: str, expr: str | None) -> None:
        old = self.direct.get(src)
        if old is None:
            self.direct[src] = (kind, expr)
        elif _RANK[kind] > _RANK[old[0]]:
            self.direct[src] = (kind, expr if expr is not None else old[1])

    def add_indirect(self, src: Src, kind: str, expr: str | None) -> None:
        self.indirect.setdefault((src, kind), expr)

    def all_sources(self) -> Iterator[Src]:
        yield from self.direct
        for src, _ in self.indirect:
            yield src


@dataclass
class ScopeResult:
    """Output columns (in order; ``None`` where a ``*`` could not be expanded) and row-level deps."""

    names: list[str | None]
    columns: dict[str, Deps]
    dataset: dict[tuple[Src, str], str | None]
    # Positions known: False once an unexpanded star makes later positions unknowable.
    complete: bool = True
    # A table function (LATERAL VIEW inline(x) t, UNNEST(x) t): any column of it comes from x.
    any_column: Deps | None = None
    # Deps by position (two outputs may share a name: SELECT * over a join on a common key).
    positions: list[Deps | None] | None = None

    def output(self, name: str) -> Deps | None:
        return self.columns.get(name)

    def at(self, i: int) -> Deps | None:
        """The deps of output position ``i`` (None when unknown)."""
        if self.positions is not None:
            return self.positions[i] if i < len(self.positions) else None
        name = self.names[i] if i < len(self.names) else None
        return self.columns.get(name) if name is not None else None


class Problems:
    """Collects messages (deduplicated, in order)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []  # (code, message)

    def add(self, code: str, message: str) -> None:
        if (code, message) not in self.items:
            self.items.append((code, message))


class QueryAnalyzer:
    """Analyses one qualified query tree. ``table_ref`` maps a physical ``exp.Table`` to its dataset id
    (None for things that are not tables, e.g. table functions); ``col_name`` normalises a column
    identifier; ``known_columns`` gives a table's columns when a schema holds them."""

    def __init__(
        self,
        root: exp.Expr,
        *,
        dialect: str,
        table_ref: Callable[[exp.Table], str | None],
        col_name: Callable[[exp.Identifier | str], str],
        known_columns: Callable[[exp.Table], list[str] | None],
        problems: Problems,
    ) -> None:
        self.dialect = dialect
        self.table_ref = table_ref
        self.col_name = col_name
        self.known_columns = known_columns
        self.problems = problems
        self.scopes: list[Scope] = traverse_scope(root)
        self.by_expr: dict[int, Scope] = {}
        for s in self.scopes:
            self.by_expr[id(s.expression)] = s
            for u in s.set_operation_scopes:
                self.by_expr.setdefault(id(u.expression), u)
        self.root_scope: Scope | None = self.scopes[-1] if self.scopes else None
        self._cache: dict[int, ScopeResult] = {}
        self._busy: set[int] = set()

    # ------------------------------------------------------------------ public
    def result(self) -> ScopeResult:
        if self.root_scope is None:
            return ScopeResult([], {}, {})
        return self.scope_result(self.root_scope)

    def read_tables(self) -> list[exp.Table]:
        """Physical tables read anywhere in the query, in order of appearance."""
        out: list[exp.Table] = []
        seen: set[int] = set()
        visited: set[int] = set()
        # Only what the query reaches: a CTE nobody selects from reads nothing.
        stack = [self.root_scope] if self.root_scope is not None else []
        while stack:
            s = stack.pop()
            if id(s) in visited:
                continue
            visited.add(id(s))
            # sources, not selected_sources: a LEFT SEMI/ANTI JOIN's table is read though not selected.
            for node in s.sources.values():
                if isinstance(node, exp.Table) and id(node) not in seen:
                    seen.add(id(node))
                    out.append(node)
            for src in s.selected_sources.values():
                node = src[1] if isinstance(src, tuple) else src
                if isinstance(node, Scope):
                    stack.append(node)
            for name in s.semi_or_anti_join_tables:
                semi = s.sources.get(name)
                if isinstance(semi, Scope):
                    stack.append(semi)
            for sub in (*s.subquery_scopes, *s.set_operation_scopes, *s.udtf_scopes, *s.derived_table_scopes):
                stack.append(sub)
            for lateral in s.lateral_sources.values():
                if isinstance(lateral, Scope):
                    stack.append(lateral)
        return out

    # ------------------------------------------------------------------ scopes
    def scope_result(self, scope: Scope) -> ScopeResult:
        key = id(scope)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if key in self._busy:  # a recursive CTE reading itself: the anchor carries the lineage
            return ScopeResult([], {}, {})
        self._busy.add(key)
        try:
            if scope.set_operation_scopes and isinstance(scope.expression, exp.SetOperation):
                res = self._set_operation(scope)
            elif scope.scope_type == ScopeType.UDTF:
                res = self._udtf(scope)
            elif isinstance(scope.expression, exp.Select):
                res = self._select(scope)
            else:
                res = ScopeResult([], {}, {})
        finally:
            self._busy.discard(key)
        self._cache[key] = res
        return res

    def _set_operation(self, scope: Scope) -> ScopeResult:
        parts = [self.scope_result(s) for s in scope.set_operation_scopes]
        # Set operations match columns by position; past an unexpanded star positions are unknown.
        cut = min((p.names.index(None) if None in p.names else len(p.names)) for p in parts)
        names: list[str | None] = [n if i < cut else None for i, n in enumerate(parts[0].names)]
        columns: dict[str, Deps] = {}
        positions: list[Deps | None] = [None] * len(names)
        dataset: dict[tuple[Src, str], str | None] = {}
        for part in parts:
            for k, v in part.dataset.items():
                dataset.setdefault(k, v)
        # UNION: every side supplies values. EXCEPT / INTERSECT: values come from the left side;
        # the right side only decides which rows remain (a FILTER on the whole output).
        suppliers = parts
        if isinstance(scope.expression, (exp.Except, exp.Intersect)) and len(parts) > 1:
            suppliers = parts[:1]
            expr = self._sql(scope.expression.expression)
            for part in parts[1:]:
                for right in part.columns.values():
                    for src in right.all_sources():
                        dataset.setdefault((src, "FILTER"), expr)
        for i, name in enumerate(names):
            if name is None:
                continue
            deps = Deps()
            for part in suppliers:
                d = part.at(i)
                if d is not None:
                    _merge(deps, d)
            columns.setdefault(name, deps)
            positions[i] = deps
        order = scope.expression.args.get("order")
        if isinstance(order, exp.Order):  # ... UNION ... ORDER BY an output column
            for o in order.expressions:
                for col in _columns_in(o):
                    out = columns.get(
                        self.col_name(col.this) if isinstance(col.this, exp.Identifier) else col.name
                    )
                    for src in out.all_sources() if out is not None else ():
                        dataset.setdefault((src, "SORT"), self._sql(o))
        return ScopeResult(names, columns, dataset, all(p.complete for p in parts), positions=positions)

    def _udtf(self, scope: Scope) -> ScopeResult:
        node = scope.expression
        alias = node.args.get("alias")
        names: list[str | None] = []
        if isinstance(alias, exp.TableAlias):
            names = [self.col_name(c) for c in alias.columns]
            if not names and alias.this is not None and isinstance(node, exp.Unnest):
                names = [self.col_name(alias.this)]  # BigQuery: UNNEST(x) AS e names the element
        fn = node.this if isinstance(node, exp.Lateral) else node
        inner = fn.this if isinstance(fn, exp.Subquery) else fn
        sub = self.by_expr.get(id(inner)) if isinstance(inner, exp.Query) else None
        if sub is not None:
            # LATERAL (SELECT ...) / CROSS APPLY: the subquery's columns, renamed by the alias if any.
            res = self.scope_result(sub)
            if not names:
                return res
            positions = [res.at(i) for i in range(len(names))]
            cols = {n: d for n, d in zip(names, positions, strict=False) if n is not None and d is not None}
            return ScopeResult(list(names), cols, dict(res.dataset), res.complete, positions=positions)
        deps = Deps()
        expr_sql = self._sql(fn)
        for col in _columns_in(fn):
            base = self.resolve_column(scope, col)
            for src in base.all_sources():
                deps.add_direct(src, "TRANSFORMATION", expr_sql)
        cols = {n: deps for n in names if n is not None}
        return ScopeResult(names, cols, {}, any_column=deps)

    def _select(self, scope: Scope) -> ScopeResult:
        select: exp.Select = scope.expression  # type: ignore[assignment]
        names: list[str | None] = []
        columns: dict[str, Deps] = {}
        positions: list[Deps | None] = []
        complete = True
        for position, proj in enumerate(select.expressions):
            if isinstance(proj, exp.Star) or (
                isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star)
            ):
                complete = False
                names.append(None)
                positions.append(None)
                self._report_star(scope, proj)
                continue
            if isinstance(proj, exp.Alias) and isinstance(proj.args.get("alias"), exp.Identifier):
                name = self.col_name(proj.args["alias"])
            elif isinstance(proj, exp.Column) and isinstance(proj.this, exp.Identifier):
                name = self.col_name(proj.this)
            else:
                name = proj.alias_or_name
            if not name:
                name = f"_col_{position}"  # an unnamed expression, named as sqlglot names them
            inner = proj.this if isinstance(proj, exp.Alias) else proj
            names.append(name)
            earlier = columns if self.dialect in _LATERAL_ALIAS_DIALECTS else None
            deps = self.expression_deps(scope, inner, earlier)
            positions.append(deps)
            columns.setdefault(name, deps)  # a repeated name resolves to its first occurrence
        dataset: dict[tuple[Src, str], str | None] = {}
        # Rows of this scope depend on everything its sources' rows depend on.
        for src in scope.selected_sources.values():
            node = src[1] if isinstance(src, tuple) else src
            if isinstance(node, Scope):
                for k, v in self.scope_result(node).dataset.items():
                    dataset.setdefault(k, v)
        where = select.args.get("where")
        for clause in (where, select.args.get("having"), select.args.get("qualify")):
            if clause is None:
                continue
            for conj in _conjuncts(clause.this):
                kind = "JOIN" if clause is where and self._joins_sources(scope, conj) else "FILTER"
                # WHERE sees input columns only (standard SQL); HAVING/QUALIFY may name outputs.
                outs = None if clause is where else columns
                self._clause(scope, conj, kind, dataset, outputs=outs, output_first=False)
        connect = select.args.get("connect")
        if isinstance(connect, exp.Connect):  # Oracle hierarchies: START WITH / CONNECT BY pick the rows
            for key in ("start", "connect"):
                cond = connect.args.get(key)
                if cond is not None:
                    self._clause(scope, cond, "FILTER", dataset)
        for join in _all_joins(select):
            on = join.args.get("on")
            if on is not None:
                self._clause(scope, on, "JOIN", dataset)
            for using in join.args.get("using") or []:
                name = self.col_name(using.this if isinstance(using, exp.Column) else using)
                for alias in scope.selected_sources:
                    base = self._source_column(scope, alias, name)
                    for s in base.all_sources():
                        dataset.setdefault((s, "JOIN"), f"USING ({name})")
        group = select.args.get("group")
        if group is not None:
            for g in group.expressions or [group]:
                self._clause(scope, g, "GROUP_BY", dataset, outputs=columns, output_first=False)
            for key in ("rollup", "cube", "grouping_sets"):
                for g in group.args.get(key) or []:
                    self._clause(scope, g, "GROUP_BY", dataset, outputs=columns, output_first=False)
        # ORDER BY (and Hive SORT BY / CLUSTER BY) shape the final result, or pick the rows of an
        # inner query with a LIMIT; an inner ORDER BY without one changes nothing.
        outermost = scope is self.root_scope or (
            scope.parent is self.root_scope and scope.scope_type == ScopeType.SET_OPERATION
        )
        if outermost or select.args.get("limit") is not None or select.args.get("offset") is not None:
            for key in ("order", "sort", "cluster"):
                clause_node = select.args.get(key)
                if clause_node is not None:
                    for o in clause_node.expressions:
                        self._clause(scope, o, "SORT", dataset, outputs=columns)
        return ScopeResult(names, columns, dataset, complete, positions=positions)

    def _report_star(self, scope: Scope, proj: exp.Expr) -> None:
        tables = []
        only = proj.table if isinstance(proj, exp.Column) and proj.table else None
        for alias, src in scope.selected_sources.items():
            if only is not None and alias != only:
                continue
            node = src[1] if isinstance(src, tuple) else src
            if isinstance(node, exp.Table):
                ref = self.table_ref(node)
                if ref and self.known_columns(node) is None:
                    tables.append(ref)
            elif isinstance(node, Scope) and not self.scope_result(node).complete:
                tables.append(alias)
        what = ", ".join(tables) if tables else "its sources"
        self.problems.add(
            "unknown-star",
            f"SELECT * over {what} with unknown columns: column lineage through the star is skipped "
            "(give the columns with --schema)",
        )

    # ------------------------------------------------------------------ expressions
    def expression_deps(self, scope: Scope, root: exp.Expr, earlier: dict[str, Deps] | None = None) -> Deps:
        """Dependencies of a SELECT expression: direct kinds plus per-column WINDOW/CONDITIONAL.
        ``earlier``: outputs to the left, which dialects with lateral column aliases let it name."""
        deps = Deps()
        root_sql = self._sql(root)
        for node in _refs_in(root):
            kind, also_conditional = _role(node, root)
            base = None
            if earlier and isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
                alias = earlier.get(self.col_name(node.this))
                if alias is not None and self._alias_wins(scope, node, output_first=False):
                    base = alias  # SELECT a + 1 AS b, b * 2 AS c
            if base is None:
                base = self._node_deps(scope, node)
            expr = None if kind == "IDENTITY" else root_sql
            if kind in _RANK:
                for src, (k2, x2) in base.direct.items():
                    deps.add_direct(src, stronger(kind, k2), expr if kind != "IDENTITY" else x2)
                    if also_conditional:
                        deps.add_indirect(src, "CONDITIONAL", root_sql)
                for (src, k3), x3 in base.indirect.items():
                    deps.add_indirect(src, k3, x3)
            else:
                for src in base.all_sources():
                    deps.add_indirect(src, kind, root_sql)
        # OVER w: the keys of a named window (WINDOW w AS (...)) are WINDOW dependencies too.
        select = scope.expression if isinstance(scope.expression, exp.Select) else None
        named = {w.name: w for w in (select.args.get("windows") or [])} if select is not None else {}
        if named:
            for win in root.find_all(exp.Window):
                ref = win.args.get("alias")
                spec = named.get(ref.name) if isinstance(ref, exp.Identifier) else None
                if spec is None:
                    continue
                for key in [*(spec.args.get("partition_by") or []), spec.args.get("order")]:
                    if key is None:
                        continue
                    for col in _columns_in(key):
                        for src in self.resolve_column(scope, col).all_sources():
                            deps.add_indirect(src, "WINDOW", root_sql)
        return deps

    def _clause(
        self,
        scope: Scope,
        node: exp.Expr,
        kind: str,
        into: dict[tuple[Src, str], str | None],
        outputs: dict[str, Deps] | None = None,
        output_first: bool = True,
    ) -> None:
        expr = self._sql(node)
        for ref in _refs_in(node):
            if outputs is not None and isinstance(ref, exp.Column) and isinstance(ref.this, exp.Identifier):
                # ORDER BY sees the SELECT's aliases first; GROUP BY / HAVING / QUALIFY (where the
                # dialect allows aliases) only when no source is known to have such a column.
                # sqlglot may have pinned the name on a table whose columns it does not know.
                out = outputs.get(self.col_name(ref.this))
                if out is not None and self._alias_wins(scope, ref, output_first):
                    for src in out.all_sources():
                        into.setdefault((src, kind), expr)
                    continue
            for src in self._node_deps(scope, ref).all_sources():
                into.setdefault((src, kind), expr)

    def _node_deps(self, scope: Scope, node: exp.Expr) -> Deps:
        """Base deps of a column reference or a nested query (subquery, EXISTS, IN (SELECT ...))."""
        if isinstance(node, exp.Column):
            return self.resolve_column(scope, node)
        sub = self.by_expr.get(id(node.this if isinstance(node, exp.Subquery) else node))
        if sub is None:
            return Deps()
        res = self.scope_result(sub)
        deps = Deps()
        for name in res.names:
            if name is None:
                continue
            d = res.columns.get(name)
            if d is not None:
                _merge(deps, d)
        for (src, kind), x in res.dataset.items():
            deps.add_indirect(src, kind, x)
        return deps

    # ------------------------------------------------------------------ column resolution
    def resolve_column(self, scope: Scope, col: exp.Column) -> Deps:
        name = self.col_name(col.this) if isinstance(col.this, exp.Identifier) else col.name
        if isinstance(col.this, exp.Star):
            return Deps()
        table = col.table
        if table:
            s: Scope | None = scope
            while s is not None:
                if table in s.sources:
                    pivot = _pivot_of(s.sources[table])
                    if pivot is not None:  # an unaliased PIVOT/UNPIVOT keeps its source's name
                        return self._pivot_column(s, pivot, name)
                    return self._source_column(s, table, name)
                for pivot in s.pivots:
                    if pivot.alias_or_name == table:
                        return self._pivot_column(s, pivot, name)
                s = s.parent
            return self._struct_field(scope, col)
        if self.dialect in _PSEUDO_COLUMNS and name in _PSEUDO_COLUMNS[self.dialect]:
            return Deps()  # LEVEL, ROWNUM, ...: computed by the engine, not read from a table
        array_join = self._array_join_alias(scope, name)
        if array_join is not None:
            return array_join
        # Unqualified: sqlglot could not tell which source holds it; decide when only one can.
        s = scope
        while s is not None:
            alias = self._owner(s, name)
            if alias is not None:
                return self._source_column(s, alias, name)
            if alias is None and self._ambiguous(s, name):
                self.problems.add(
                    "ambiguous-column",
                    f"column {name!r} could come from several sources "
                    f"({', '.join(s.selected_sources)}): no lineage for it (qualify it or give --schema)",
                )
                return Deps()
            s = s.parent
        return Deps()

    def _array_join_alias(self, scope: Scope, name: str) -> Deps | None:
        """ClickHouse ``ARRAY JOIN arr AS x``: ``x`` is an element of ``arr`` (a TRANSFORMATION)."""
        select = scope.expression
        if not isinstance(select, exp.Select):
            return None
        for join in select.args.get("joins") or []:
            target = join.this
            if isinstance(target, exp.Alias) and self.col_name(target.args["alias"]) == name:
                deps = Deps()
                expr = self._sql(target)
                for col in _columns_in(target.this):
                    for src in self.resolve_column(scope, col).all_sources():
                        deps.add_direct(src, "TRANSFORMATION", expr)
                return deps
        return None

    def _struct_field(self, scope: Scope, col: exp.Column) -> Deps:
        """``user.address.city`` where ``user`` is a STRUCT column (or ``t.user.city`` with ``t`` a
        source): the field reads the struct column, as a TRANSFORMATION."""
        quals = [
            q for q in (col.args.get("catalog"), col.args.get("db"), col.args.get("table")) if q is not None
        ]
        names = [self.col_name(q) if isinstance(q, exp.Identifier) else q.name for q in quals]
        base = Deps()
        if len(names) >= 2 and names[0] in scope.sources:
            base = self._source_column(scope, names[0], names[1])
        elif names:
            owner = self._owner(scope, names[0])
            if owner is not None:
                base = self._source_column(scope, owner, names[0])
        out = Deps(indirect=dict(base.indirect))
        expr = self._sql(col)
        for src, (k, _x) in base.direct.items():
            out.add_direct(src, stronger(k, "TRANSFORMATION"), expr)
        return out

    def _pivot_column(self, scope: Scope, pivot: exp.Pivot, name: str) -> Deps:
        """A column of PIVOT/UNPIVOT output: pivoted values aggregate the measure and depend on the
        FOR column; other columns pass through from the pivoted source."""
        parent = pivot.parent
        source_alias = parent.alias_or_name if isinstance(parent, (exp.Table, exp.Subquery)) else ""
        fields = [f.this for f in pivot.args.get("fields") or [] if isinstance(f, exp.In)]
        generated = [
            self._generated_name(c) for c in pivot.args.get("columns") or [] if isinstance(c, exp.Identifier)
        ]
        deps = Deps()
        expr = self._sql(pivot)
        if pivot.args.get("unpivot"):
            values = [
                self.col_name(e) if isinstance(e, exp.Identifier) else e.alias_or_name
                for e in pivot.expressions
            ]
            if name in values:
                for f in pivot.args.get("fields") or []:
                    for c in _columns_in(f):
                        if c is not f.this:
                            for src in self._in_source(scope, source_alias, c).all_sources():
                                deps.add_direct(src, "TRANSFORMATION", expr)
                return deps
            if any(isinstance(f, exp.Expr) and f.name and self.col_name(f.name) == name for f in fields):
                return deps
            return self._source_column(scope, source_alias, name) if source_alias in scope.sources else deps
        if any(name == g or name.endswith("_" + g) or name.startswith(g + "_") for g in generated):
            for agg in pivot.expressions:
                for c in _columns_in(agg):
                    for src in self._in_source(scope, source_alias, c).all_sources():
                        deps.add_direct(src, "AGGREGATION", expr)
            for f in fields:
                for c in _columns_in(f):
                    for src in self._in_source(scope, source_alias, c).all_sources():
                        deps.add_indirect(src, "CONDITIONAL", expr)
            return deps
        return self._source_column(scope, source_alias, name) if source_alias in scope.sources else deps

    def _generated_name(self, ident: exp.Identifier) -> str:
        """A PIVOT output column's name. Snowflake names the columns of ``IN ('Q1', 'Q2')`` after
        the values, quotes included (``'Q1'``): data, so their case is kept whether or not sqlglot
        marks the identifier quoted (sqlglot 30.31 does not, and the query's columns would miss)."""
        text = ident.this
        if len(text) > 1 and text[0] == text[-1] == "'":
            return text
        return self.col_name(ident)

    def _in_source(self, scope: Scope, alias: str, col: exp.Column) -> Deps:
        if col.table and col.table in scope.sources:
            return self._source_column(scope, col.table, self.col_name(col.this))
        if alias in scope.sources:
            return self._source_column(scope, alias, self.col_name(col.this))
        return Deps()

    def _alias_wins(self, scope: Scope, col: exp.Column, output_first: bool = True) -> bool:
        name = self.col_name(col.this)
        if not col.table:
            return output_first or not self._candidates(scope, name)[0]
        src = scope.sources.get(col.table)
        if isinstance(src, exp.Table):
            cols = self.known_columns(src)
            return cols is None or name not in cols
        return False

    def _source_column(self, scope: Scope, alias: str, name: str) -> Deps:
        src = scope.sources.get(alias)
        if isinstance(src, exp.Table):
            ref = self.table_ref(src)
            if ref is None:
                return Deps()
            return Deps(direct={(ref, name): ("IDENTITY", None)})
        if isinstance(src, Scope):
            res = self.scope_result(src)
            out = res.output(name)
            if out is not None:
                return out
            if res.any_column is not None:
                return res.any_column
        return Deps()

    def _candidates(self, scope: Scope, name: str) -> tuple[list[str], list[str]]:
        """Sources known to have ``name``, and sources whose columns are unknown."""
        have: list[str] = []
        unknown: list[str] = []
        for alias, src in scope.selected_sources.items():
            node = src[1] if isinstance(src, tuple) else src
            if isinstance(node, exp.Table):
                cols = self.known_columns(node)
                if cols is None:
                    unknown.append(alias)
                elif name in cols:
                    have.append(alias)
            elif isinstance(node, Scope):
                res = self.scope_result(node)
                if name in res.columns:
                    have.append(alias)
                elif not res.complete:
                    unknown.append(alias)
        return have, unknown

    def _owner(self, scope: Scope, name: str) -> str | None:
        have, unknown = self._candidates(scope, name)
        if len(have) == 1:
            return have[0]
        if not have and len(unknown) == 1:
            return unknown[0]
        return None

    def _ambiguous(self, scope: Scope, name: str) -> bool:
        have, unknown = self._candidates(scope, name)
        return len(have) > 1 or (not have and len(unknown) > 1)

    def _joins_sources(self, scope: Scope, cond: exp.Expr) -> bool:
        """A WHERE conjunct comparing columns of two different sources reads like a join condition."""
        if not isinstance(cond, (exp.EQ, exp.NullSafeEQ)):
            return False
        tables = set()
        for col in _columns_in(cond):
            if col.table and col.table in scope.selected_sources:
                tables.add(col.table)
            elif col.table and self._outer_source(scope, col.table):
                tables.add("outer:" + col.table)  # a correlated condition joins to an outer row
            elif not col.table:
                owner = self._owner(scope, self.col_name(col.this))
                if owner:
                    tables.add(owner)
        return len(tables) >= 2

    @staticmethod
    def _outer_source(scope: Scope, alias: str) -> bool:
        s = scope.parent
        while s is not None:
            if alias in s.sources:
                return True
            s = s.parent
        return False

    def _sql(self, node: exp.Expr) -> str:
        try:
            text = node.sql(dialect=self.dialect or None)
        except Exception:  # noqa: BLE001 - generating SQL for a label must never fail the analysis
            text = str(node)
        return text if len(text) <= _EXPR_MAX else text[: _EXPR_MAX - 3] + "..."


# ---------------------------------------------------------------------- helpers
def _navigation(fn: exp.Expr) -> bool:
    """LAG/LEAD/NTH_VALUE (and FIRST/LAST_VALUE over a window) pick a value from another row: a
    transformation, not an aggregation, though sqlglot files them under AggFunc."""
    if isinstance(fn, (exp.Lag, exp.Lead, exp.NthValue)):
        return True
    return isinstance(fn, (exp.FirstValue, exp.LastValue)) and isinstance(fn.parent, exp.Window)


def _pivot_of(source: exp.Table | Scope) -> exp.Pivot | None:
    node = source.expression.parent if isinstance(source, Scope) else source
    if isinstance(node, (exp.Table, exp.Subquery)):
        for p in node.args.get("pivots") or []:
            if isinstance(p, exp.Pivot) and (not p.alias or p.alias == node.alias_or_name):
                return p
    return None


def _merge(into: Deps, other: Deps) -> None:
    for src, (k, x) in other.direct.items():
        into.add_direct(src, k, x)
    for (src, k), x in other.indirect.items():
        into.add_indirect(src, k, x)


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    if isinstance(node, exp.Paren):
        inner = node.this
        if isinstance(inner, exp.And):
            return _conjuncts(inner)
    return [node]


# Dialects where a SELECT item may name an alias defined to its left (lateral column aliases).
_LATERAL_ALIAS_DIALECTS = {"snowflake", "spark", "databricks", "duckdb", "redshift", "teradata", "clickhouse"}

_PSEUDO_COLUMNS = {
    "oracle": {
        "level",
        "rownum",
        "rowid",
        "sysdate",
        "systimestamp",
        "connect_by_isleaf",
        "connect_by_iscycle",
    },
}

_QUERY_TYPES = (exp.Subquery, exp.Select, exp.SetOperation)


def _refs_in(root: exp.Expr) -> Iterator[exp.Expr]:
    """Columns and nested queries under ``root``, without descending into the nested queries."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node is not root and isinstance(node, _QUERY_TYPES):
            yield node
            continue
        if isinstance(node, exp.Column):
            yield node
            continue
        if isinstance(root, _QUERY_TYPES) and node is root:
            yield node
            continue
        for child in reversed(list(node.iter_expressions())):
            stack.append(child)


def _columns_in(root: exp.Expr) -> Iterator[exp.Column]:
    for node in _refs_in(root):
        if isinstance(node, exp.Column):
            yield node


def _role(node: exp.Expr, root: exp.Expr) -> tuple[str, bool]:
    """How ``node`` feeds ``root``: a direct kind, or an indirect kind for one column; and whether it
    is also a COALESCE fallback test (CONDITIONAL besides its direct kind)."""
    agg = False
    conditional_too = False
    child = node
    parent = node.parent
    while child is not root and parent is not None:
        if isinstance(parent, exp.Window) and child is not parent.this:
            return "WINDOW", False
        if isinstance(parent, exp.If) and child is parent.this:
            return "CONDITIONAL", False
        if isinstance(parent, exp.Case) and child is parent.this:
            return "CONDITIONAL", False
        if isinstance(parent, exp.Filter) and child is parent.expression:
            return "CONDITIONAL", False
        if isinstance(parent, exp.Nvl2) and child is parent.this:
            return "CONDITIONAL", False
        if isinstance(parent, exp.DecodeCase):
            # DECODE(expr, search1, result1, ..., default): expr and the searches decide.
            args = parent.expressions
            pos = next((i for i, a in enumerate(args) if a is child), -1)
            if pos == 0 or (pos > 0 and pos % 2 == 1 and pos != len(args) - 1):
                return "CONDITIONAL", False
        if isinstance(parent, exp.Coalesce):
            args = [parent.this, *parent.expressions]
            if args and child is not args[-1]:
                conditional_too = True
        if isinstance(parent, exp.AggFunc) and not _navigation(parent):
            agg = True
        child, parent = parent, parent.parent
    if agg:
        return "AGGREGATION", conditional_too
    if node is root and isinstance(node, exp.Column):
        return "IDENTITY", conditional_too
    if node is root:  # a scalar subquery as the whole expression passes its kinds through
        return "IDENTITY", conditional_too
    return "TRANSFORMATION", conditional_too


def _all_joins(select: exp.Select) -> list[exp.Join]:
    """The select's joins and those of parenthesized join groups in its FROM (``FROM (a JOIN b ON
    ...)``, as DuckDB and Postgres render view definitions): their tables are the select's sources."""
    out: list[exp.Join] = [j for j in select.args.get("joins") or [] if isinstance(j, exp.Join)]
    from_ = select.args.get("from_") or select.args.get("from")
    stack: list[exp.Expr] = [from_.this] if isinstance(from_, exp.From) else []
    stack += [j.this for j in out]
    while stack:
        item = stack.pop()
        while (
            isinstance(item, exp.Subquery)
            and not item.alias
            and isinstance(item.this, (exp.Table, exp.Subquery))
        ):
            item = item.this
        if isinstance(item, exp.Table) and item.args.get("joins"):
            for j in item.args["joins"]:
                if isinstance(j, exp.Join):
                    out.append(j)
                    stack.append(j.this)
    return out
