"""Column lineage over a Spark plan through expression ids.

Bottom-up (iteratively, so deep plans are fine) every operator gets its output columns; each output
exprId gets a :class:`Lin`: the source columns it is computed from (IDENTITY / TRANSFORMATION /
AGGREGATION) and the source columns that decide its value indirectly (CONDITIONAL, WINDOW). Row-level
dependencies (FILTER, JOIN, GROUP_BY, SORT) accumulate per operator and apply to every output column.

Rules: Projects follow aliases; Union maps columns by position onto its first child's ids; a
CTERelationRef maps its attributes by position to its definition's output; subquery plans (inner
children) feed FILTER (in predicates) or their value (scalar subqueries); write commands map target
columns by position to their query's output.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.lineage.spark.expr import (
    Expr,
    ExprDeps,
    all_refs_deps,
    analyze,
    as_alias,
    conjuncts,
    output_of,
    refs,
    render,
    subqueries,
)
from atlas_sync.lineage.spark.plan import LOCAL_RELATIONS, PASSTHROUGH, RELATIONS, WRITE_COMMANDS, PlanNode

Src = tuple[str, str]  # (dataset id, column name)
_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}


# Slots: a plan has one Lin per expression id and one OutCol per operator column (hundreds of
# thousands in a big plan); a __dict__ each was a large share of the reader's memory.
@dataclass(slots=True)
class Lin:
    """Where one column's values come from."""

    direct: dict[Src, str] = field(default_factory=dict)
    # (source, kind) pairs: one source may matter in several ways (FILTER and GROUP_BY)
    indirect: dict[tuple[Src, str], None] = field(default_factory=dict)
    expr: str | None = None

    def merge(self, other: Lin) -> None:
        for s, k in other.direct.items():
            _put_direct(self.direct, s, k)
        self.indirect.update(other.indirect)
        self.expr = self.expr or other.expr

    def all_sources(self) -> list[Src]:
        return list(dict.fromkeys([*self.direct, *(s for s, _ in self.indirect)]))


@dataclass(slots=True)
class OutCol:
    name: str
    id: int | None
    dtype: str | None = None


@dataclass(slots=True)
class Result:
    """One operator's output columns and the row-level dependencies below it."""

    out: list[OutCol] = field(default_factory=list)
    rows: dict[tuple[Src, str], None] = field(default_factory=dict)
    # a two-sided Join (or an alias / hint right above one): the results of its two sides, so a Filter
    # above can tell join predicates without looking at nodes that may already be dropped
    join: tuple[Result, Result] | None = None


def _put_direct(d: dict[Src, str], s: Src, k: str) -> None:
    old = d.get(s)
    if old is None or _RANK[k] > _RANK[old]:
        d[s] = k


# A column read from one source without conditions (every relation column, most projections):
# (source, kind, expression) instead of a Lin with two dicts, about a fifth of the memory.
_Single = tuple[Src, str, str | None]


class Env(dict[int, "Lin | _Single"]):
    """exprId -> :class:`Lin`. A big plan defines millions of ids, most read from a single source:
    those are stored as a tuple and handed out as a new Lin. (A Lin taken out and changed must be
    stored again.)"""

    def __setitem__(self, i: int, lin: Lin | _Single) -> None:
        if isinstance(lin, Lin) and len(lin.direct) == 1 and not lin.indirect:
            [(src, kind)] = lin.direct.items()
            lin = (src, kind, lin.expr)
        super().__setitem__(i, lin)

    def get(self, i: int, default: Any = None) -> Any:
        v = super().get(i)
        if v is None:
            return default
        if isinstance(v, tuple):
            return Lin(direct={v[0]: v[1]}, expr=v[2])
        return v

    def setdefault(self, i: int, default: Any = None) -> Any:
        v = self.get(i)
        if v is None:
            v = default
        super().__setitem__(i, v)  # the Lin itself: the caller changes it
        return v


@dataclass
class PlanLineage:
    """The lineage of one plan: per-node results, the env of exprIds, the datasets read."""

    results: dict[int, Result] = field(default_factory=dict)
    env: Env = field(default_factory=Env)
    # ids that some join or filter predicate reads, apart from bare isnotnull() checks
    predicate_ids: Container[int] = field(default_factory=set)

    def result(self, node: PlanNode) -> Result:
        return self.results.get(id(node)) or Result()

    def lin(self, col: OutCol) -> Lin:
        if col.id is None:
            return Lin()
        return self.env.get(col.id) or Lin()


def query_children(node: PlanNode) -> list[PlanNode]:
    """The children that carry data (write commands: their query, wherever Spark printed it)."""
    ident = ("ResolvedIdentifier", "UnresolvedIdentifier")
    kids = [c for c in node.children if c.op not in ident]
    if node.op in WRITE_COMMANDS and not kids:
        return [c for c in node.inner if c.op not in ident]
    return kids


def compute(root: PlanNode, datasets: dict[int, list[str]]) -> PlanLineage:
    """Run the column lineage over one plan. ``datasets`` maps id(leaf node) -> dataset ids it reads."""
    pl = PlanLineage()
    pl.predicate_ids = _predicate_ids(root)
    cte_defs: dict[str, Result] = {}
    for node in post_order(root):
        pl.results[id(node)] = _apply(node, pl, datasets, cte_defs)
    return pl


def post_order(root: PlanNode) -> Iterator[PlanNode]:
    """The nodes of a plan in the order their lineage is computed: regular children, then inner
    children (they may read the outer query's columns), then the node. Iterative: deep plans are fine."""
    stack: list[tuple[PlanNode, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            yield node
            continue
        stack.append((node, True))
        for c in reversed(node.all_children):
            stack.append((c, False))


def _is_not_null_check(c: Expr) -> int | None:
    """The attribute id of a bare ``isnotnull(x#1)`` conjunct, else None."""
    if c.kind == "call" and c.name.lower() == "isnotnull" and len(c.args) == 1 and c.args[0].kind == "attr":
        return c.args[0].id
    return None


def _predicate_ids(root: PlanNode) -> set[int]:
    out: set[int] = set()
    for n in root.walk():
        add_predicate_ids(out, n)
    return out


def add_predicate_ids(ids: set[int], node: PlanNode) -> None:
    """Add to ``ids`` those a Filter or Join node's condition reads, apart from bare ``isnotnull`` checks."""
    if node.op in ("Filter", "Join"):
        for e in node.exprs.get("condition", []):
            for c in conjuncts(e):
                if _is_not_null_check(c) is None:
                    ids.update(refs(c))


def _inferred_not_null(c: Expr, predicate_ids: Container[int]) -> bool:
    """The optimizer adds ``isnotnull(x)`` for columns other predicates already test (join keys,
    filtered columns): such a check adds no dependency of its own."""
    i = _is_not_null_check(c)
    return i is not None and i in predicate_ids


def _lin_of(e: Expr, pl: PlanLineage, sub: dict[int, Result]) -> Lin:
    deps = analyze(e)
    return _lin_from_deps(e, deps, pl, sub)


def _lin_from_deps(e: Expr, deps: ExprDeps, pl: PlanLineage, sub: dict[int, Result]) -> Lin:
    lin = Lin()
    identity = len(deps.direct) == 1 and next(iter(deps.direct.values())) == "IDENTITY" and not deps.indirect
    for i, kind in deps.direct.items():
        src = pl.env.get(i)
        if src is None:
            continue
        for s, k in src.direct.items():
            _put_direct(lin.direct, s, k if _RANK[k] > _RANK[kind] else kind)
        lin.indirect.update(src.indirect)
        if identity:
            lin.expr = src.expr
    for i, kind in deps.indirect.items():
        src = pl.env.get(i)
        if src is None:
            continue
        for s in src.direct:
            lin.indirect[(s, kind)] = None
        lin.indirect.update(src.indirect)
    for sq, role, agg in deps.subqueries:
        res = sub.get(id(sq))
        if res is None:
            continue
        if role in ("value", "identity") and res.out:
            first = pl.lin(res.out[0])
            for s, k in first.direct.items():
                kk = (
                    k
                    if role == "identity"
                    else ("AGGREGATION" if agg else ("TRANSFORMATION" if k == "IDENTITY" else k))
                )
                _put_direct(lin.direct, s, kk)
            lin.indirect.update(first.indirect)
            lin.indirect.update(res.rows)
        else:
            kind = "CONDITIONAL" if role == "cond" else "WINDOW" if role == "window" else "FILTER"
            for s in _subquery_sources(res, pl):
                lin.indirect[(s, kind)] = None
    if not identity:
        inner = e.args[0] if e.kind == "alias" and e.args else e
        lin.expr = render(inner)
    return lin


def _subquery_sources(res: Result, pl: PlanLineage) -> list[Src]:
    out: dict[Src, None] = {}
    for c in res.out:
        for s in pl.lin(c).all_sources():
            out[s] = None
    for s, _ in res.rows:
        out[s] = None
    return list(out)


def _sources_of(exprs: list[Expr], pl: PlanLineage, sub: dict[int, Result]) -> list[Src]:
    """Every source column a predicate / key list reads (directly or indirectly, subqueries too)."""
    out: dict[Src, None] = {}
    for e in exprs:
        deps = all_refs_deps(e)
        for i in deps.direct:
            src = pl.env.get(i)
            if src:
                for s in src.all_sources():
                    out[s] = None
        for sq, _, _ in deps.subqueries:
            res = sub.get(id(sq))
            if res is not None:
                for s in _subquery_sources(res, pl):
                    out[s] = None
    return list(out)


def _subquery_results(node: PlanNode, pl: PlanLineage) -> dict[int, Result]:
    """id(subquery expr) -> the result of the inner plan it refers to."""
    out: dict[int, Result] = {}
    k = 0
    for exprs in node.exprs.values():
        for e in exprs:
            for sq in subqueries(e):
                plan = sq.plan if sq.plan is not None else (node.inner[k] if k < len(node.inner) else None)
                k += 1
                if plan is not None:
                    out[id(sq)] = pl.result(plan)
    return out


def _rows_union(results: list[Result]) -> dict[tuple[Src, str], None]:
    rows: dict[tuple[Src, str], None] = {}
    for r in results:
        rows.update(r.rows)
    return rows


def _add_rows(rows: dict[tuple[Src, str], None], sources: list[Src], kind: str) -> None:
    for s in sources:
        rows[(s, kind)] = None


def _define(pl: PlanLineage, e: Expr, sub: dict[int, Result]) -> OutCol | None:
    o = output_of(e)
    if o is None:
        return None
    name, i, dtype = o
    col = OutCol(name, i, dtype)
    if e.kind == "alias" and i is not None:
        pl.env[i] = _lin_of(e, pl, sub)
    return col


def _join_sides(node: PlanNode, pl: PlanLineage) -> tuple[set[int], set[int]] | None:
    """A Filter right above a Join (``FROM a, b WHERE a.x = b.y``): the ids of the join's two sides."""
    below = pl.results.get(id(node.children[0])) if node.children else None
    if below is None or below.join is None:
        return None
    left, right = below.join
    return {c.id for c in left.out if c.id is not None}, {c.id for c in right.out if c.id is not None}


def _apply(
    node: PlanNode, pl: PlanLineage, datasets: dict[int, list[str]], cte_defs: dict[str, Result]
) -> Result:
    op = node.op
    kids = [pl.result(c) for c in query_children(node)]
    child = kids[0] if kids else Result()
    sub = _subquery_results(node, pl)
    res = Result(rows=_rows_union(kids))
    if id(node) in datasets or op in RELATIONS or op in LOCAL_RELATIONS:
        ds = datasets.get(id(node), [])
        for a in node.output:
            res.out.append(OutCol(a.name, a.id, a.dtype))
            if a.id is not None:
                pl.env[a.id] = Lin(direct={(d, a.name): "IDENTITY" for d in ds})
        return res
    if op == "Project":
        for e in node.exprs.get("projectList", []):
            col = _define(pl, e, sub)
            if col is not None:
                res.out.append(col)
        return res
    if op == "Filter":
        res.out = list(child.out)
        sides = _join_sides(node, pl)
        for c in (x for e in node.exprs.get("condition", []) for x in conjuncts(e)):
            if _inferred_not_null(c, pl.predicate_ids):
                continue
            ids = set(refs(c))
            kind = "JOIN" if sides and ids & sides[0] and ids & sides[1] else "FILTER"
            _add_rows(res.rows, _sources_of([c], pl, sub), kind)
        return res
    if op == "Join":
        jt = str(node.props.get("joinType", "Inner"))
        left = kids[0] if kids else Result()
        right = kids[1] if len(kids) > 1 else Result()
        cond = _sources_of(node.exprs.get("condition", []), pl, sub)
        if jt.startswith("ExistenceJoin"):
            # keeps every left row and adds a boolean column (EXISTS / IN under an OR, or in SELECT):
            # the dependency is that column's, computed from the condition and the right side's rows,
            # and reaches what reads it (a Filter above: FILTER)
            res.out = list(left.out)
            res.rows = dict(left.rows)
            for e in node.exprs.get("exists", []):
                o = output_of(e)
                if o is None:
                    continue
                res.out.append(OutCol(*o))
                if o[1] is not None:
                    pl.env[o[1]] = Lin(
                        direct=dict.fromkeys(cond, "TRANSFORMATION"), indirect=dict(right.rows)
                    )
            return res
        # a semi / anti join keeps the left rows that have (have not) a match: its condition reads
        # both sides (JOIN), and the right side's own row dependencies stay (the rows union above)
        if jt.startswith(("LeftSemi", "LeftAnti")):
            res.out = list(left.out)
        else:
            res.out = [*left.out, *right.out]
        _add_rows(res.rows, cond, "JOIN")
        if len(node.children) == 2:
            res.join = (pl.result(node.children[0]), pl.result(node.children[1]))
        return res
    if op == "Aggregate":
        _add_rows(res.rows, _sources_of(node.exprs.get("groupingExpressions", []), pl, sub), "GROUP_BY")
        for e in node.exprs.get("aggregateExpressions", []):
            col = _define(pl, e, sub)
            if col is not None:
                res.out.append(col)
        return res
    if op == "Window":
        res.out = list(child.out)
        spec = _sources_of(node.exprs.get("partitionSpec", []) + node.exprs.get("orderSpec", []), pl, sub)
        for e in node.exprs.get("windowExpressions", []):
            col = _define(pl, e, sub)
            if col is not None:
                res.out.append(col)
                if col.id is not None:
                    lin = pl.env.setdefault(col.id, Lin())
                    for s in spec:
                        lin.indirect[(s, "WINDOW")] = None
        return res
    if op == "WindowGroupLimit":
        res.out = list(child.out)
        _add_rows(
            res.rows,
            _sources_of(node.exprs.get("partitionSpec", []) + node.exprs.get("orderSpec", []), pl, sub),
            "WINDOW",
        )
        return res
    if op == "Sort":
        res.out = list(child.out)
        _add_rows(res.rows, _sources_of(node.exprs.get("order", []), pl, sub), "SORT")
        return res
    if op in ("Deduplicate", "DeduplicateWithinWatermark"):
        res.out = list(child.out)
        keys = node.exprs.get("keys") or []
        if keys:
            _add_rows(res.rows, _sources_of(keys, pl, sub), "GROUP_BY")
        else:
            _add_rows(res.rows, [s for c in child.out for s in pl.lin(c).direct], "GROUP_BY")
        return res
    if op == "Distinct":
        res.out = list(child.out)
        _add_rows(res.rows, [s for c in child.out for s in pl.lin(c).direct], "GROUP_BY")
        return res
    if op == "Union":
        res.out = list(child.out)
        for pos, col in enumerate(res.out):
            merged = Lin()
            for k in kids:
                if pos < len(k.out):
                    merged.merge(pl.lin(k.out[pos]))
            if col.id is not None:
                pl.env[col.id] = merged
        return res
    if op in ("Intersect", "Except"):
        # rows are kept by comparing all their columns with the other side's (Spark rewrites them
        # into semi / anti joins on ``l <=> r`` for every column): both sides' columns are JOIN;
        # without ALL the result is also deduplicated, as DISTINCT (GROUP_BY)
        res.out = list(child.out)
        if len(kids) > 1:
            _add_rows(res.rows, [s for k in kids[:2] for c in k.out for s in pl.lin(c).all_sources()], "JOIN")
        if not node.props.get("isAll"):
            _add_rows(res.rows, [s for c in child.out for s in pl.lin(c).direct], "GROUP_BY")
        return res
    if op == "Generate":
        res.out = list(child.out)
        gen = node.exprs.get("generator", [])
        if len(gen) == 1 and gen[0].kind == "call" and gen[0].name.lower() == "replicaterows":
            # replicaterows(n, c1, ..., ck) (the optimizer's EXCEPT ALL / INTERSECT ALL): n copies of
            # each row, output i is c(i+1) unchanged; n decides whether the row is kept at all
            count, values = gen[0].args[:1], gen[0].args[1:]
            _add_rows(res.rows, _sources_of(count, pl, sub), "FILTER")
            for pos, a in enumerate(node.output):
                res.out.append(OutCol(a.name, a.id, a.dtype))
                if a.id is not None and pos < len(values):
                    pl.env[a.id] = _lin_of(values[pos], pl, sub)
            return res
        lin = Lin()
        for g in gen:
            deps = analyze(g)
            deps.direct = {i: ("TRANSFORMATION" if k == "IDENTITY" else k) for i, k in deps.direct.items()}
            lin.merge(_lin_from_deps(g, deps, pl, sub))
        for a in node.output:
            res.out.append(OutCol(a.name, a.id, a.dtype))
            if a.id is not None:
                pl.env[a.id] = Lin(dict(lin.direct), dict(lin.indirect), lin.expr)
        return res
    if op == "Expand":
        projections: list[list[Expr]] = node.props.get("projections") or []
        for pos, a in enumerate(node.output):
            merged = Lin()
            for proj in projections:
                if pos < len(proj):
                    merged.merge(_lin_of(proj[pos], pl, sub))
            res.out.append(OutCol(a.name, a.id, a.dtype))
            if a.id is not None:
                pl.env[a.id] = merged
        return res
    if op == "WithCTE":
        last = kids[-1] if kids else Result()
        return Result(out=list(last.out), rows=dict(last.rows))
    if op == "CTERelationDef":
        res.out = list(child.out)
        cte_defs[str(node.props.get("cteId", ""))] = res
        return res
    if op == "CTERelationRef":
        d = cte_defs.get(str(node.props.get("cteId", "")))
        res.rows = dict(d.rows) if d else {}
        for pos, a in enumerate(node.output):
            res.out.append(OutCol(a.name, a.id, a.dtype))
            if d is not None and pos < len(d.out) and a.id is not None and a.id != d.out[pos].id:
                pl.env[a.id] = pl.lin(d.out[pos])
        return res
    if op == "OneRowRelation":
        return res
    if op in WRITE_COMMANDS:
        res.out = list(child.out)
        return res
    if op in PASSTHROUGH or op == "UnresolvedWith":
        res.out = list(child.out)
        if op in ("SubqueryAlias", "ResolvedHint") and node.children:
            res.join = pl.result(node.children[0]).join
        return res
    # an operator we do not know: pass its children's columns through, define what it aliases
    for k in kids:
        res.out.extend(k.out)
    for e in node.exprs.get("arguments", []):
        items = [as_alias(x) for x in e.args] if e.kind == "list" else [e]
        for it in items:
            if it.kind == "alias":
                col = _define(pl, it, sub)
                if col is not None:
                    res.out.append(col)
    return res


def target_lins(node: PlanNode, pl: PlanLineage) -> tuple[list[str], list[Lin], dict[tuple[Src, str], None]]:
    """The written (or returned) columns of a plan root: names, their lineage, row-level dependencies."""
    res = pl.result(node)
    if node.op in WRITE_COMMANDS:
        qs = query_children(node)
        q = pl.result(qs[0]) if qs else Result()
        names = list(node.props.get("columns") or [])
        lins = [pl.lin(c) for c in q.out]
        if len(names) != len(q.out):
            names = [c.name for c in q.out] if not names or len(q.out) else names
            if len(lins) < len(names):
                lins += [Lin() for _ in range(len(names) - len(lins))]
        return names, lins[: len(names)], dict(q.rows)
    return [c.name for c in res.out], [pl.lin(c) for c in res.out], dict(res.rows)
