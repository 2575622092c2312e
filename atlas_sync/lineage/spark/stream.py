"""The lineage graph of a text plan built while it is parsed, in memory that follows the result.

The text form is a pre-order listing, so an operator's subtree is complete when a line at the same or
a lower depth arrives (:func:`~atlas_sync.lineage.spark.text.parse_tree_lines` tells a sink). Each
completed operator gets its column lineage right away (expression ids -> source columns, see
``lineage.py``); then its own parsed expressions are cleared and, in job mode, its children dropped:
ancestors only read its :class:`~atlas_sync.lineage.spark.lineage.Result` and the lineage of the ids
it defined. Operator mode keeps the tree, stripped to each operator's output names and process
attributes. A 50 MB plan therefore never has its parsed tree, nor a list of its lines, in memory.

The graph is the one :func:`~atlas_sync.lineage.spark.build.build_graph` makes from the whole tree,
in the same order. What the whole-tree build learns before it starts is gathered first or replayed:

- the ids that join/filter predicates read anywhere in a plan (a bare ``isnotnull`` check of such an
  id adds nothing), and the CTE names of a parsed plan: those of the lines read so far answer
  almost always; when they do not, a pre-pass over the lines (only Filter, Join and WITH lines are
  parsed there) gives the whole plan's, once;
- subquery plans (inner children) are printed *before* the operator's regular children but are
  resolved and computed after them (they may read the outer query's columns): an inner subtree is
  kept whole until its operator is complete, then handled like the whole-tree build does;
- leaves are resolved, unknown operators reported and inputs listed in the whole-tree build's order
  (regular children before inner ones); the query text keeps only what fits its size limit;
- the root (and the write below a parsed ``WITH``) keeps its children and their results, and
  identifier nodes keep their table name: the job's target needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import ColumnEdge, LineageGraph
from atlas_sync.lineage.spark.build import (
    QUERY_TEXT_LIMIT,
    Datasets,
    child_alias,
    child_prefixes,
    job_process,
    leaf_dataset,
    name_write_target,
    operator_attributes,
    operator_graph,
    unknown_operator,
    unresolved_plan,
)
from atlas_sync.lineage.spark.lineage import PlanLineage, Result, _apply, add_predicate_ids, post_order
from atlas_sync.lineage.spark.plan import KNOWN, PlanNode, assign_levels
from atlas_sync.lineage.spark.text import (
    _NAME,
    MarkerError,
    ScanInfo,
    TreeSource,
    _node,
    parse_tree_lines,
    tree_lines,
)

_PRESCAN_OPS = frozenset({"Filter", "Join", "CTE", "UnresolvedWith"})
_IDENTIFIERS = ("ResolvedIdentifier", "UnresolvedIdentifier")


@dataclass
class PlanFacts:
    """What the whole-tree build knows about a plan before computing it."""

    predicate_ids: set[int] = field(default_factory=set)
    ctes: set[str] = field(default_factory=set)


def add_facts(facts: PlanFacts, node: PlanNode) -> None:
    """Add what a Filter, Join or WITH node tells to ``facts``."""
    add_predicate_ids(facts.predicate_ids, node)
    if node.op == "UnresolvedWith":
        facts.ctes.update(str(x) for x in node.props.get("names") or [])


class _Known(Container[Any]):
    """A plan's predicate ids or CTE names: those of the lines read so far, and when a value is not
    among them, those of the whole plan (from :func:`prescan`, run once, only then)."""

    def __init__(self, seen: Container[Any], whole: Callable[[], Container[Any]]) -> None:
        self.seen = seen
        self.whole = whole

    def __contains__(self, value: object) -> bool:
        return value in self.seen or value in self.whole()


def prescan(src: TreeSource) -> list[PlanFacts]:
    """Per plan (root line), the ids join/filter predicates read (bare ``isnotnull`` checks aside) and
    the CTE names of its ``WITH`` nodes. Lines the parser will reject are skipped: it reports them."""
    out: list[PlanFacts] = []
    try:
        for _lineno, depth, _marker, text, _indent in tree_lines(src.lines):
            if depth == 0:
                out.append(PlanFacts())
            name = _NAME.match(text)
            if name is None or name.group(2) not in _PRESCAN_OPS:
                continue
            try:
                node = _node(text, None, None)
            except InputError:
                continue
            add_facts(out[-1], node)
    except InputError:
        pass  # a broken layout: the parser reports it; the plans before it are complete
    return out


class _Skeleton:
    """A node of the query text: its line and its kept children (None past the size limit)."""

    __slots__ = ("text", "children", "inner")

    def __init__(self, text: str) -> None:
        self.text = text
        self.children: list[_Skeleton | None] = []
        self.inner: list[_Skeleton | None] = []


class _QueryText:
    """``tree_string(root)`` capped like ``build._cap``, without keeping lines past the cap: the
    length of every line is known when it is read (prefix widths do not depend on the markers)."""

    def __init__(self, limit: int = QUERY_TEXT_LIMIT) -> None:
        self.limit = limit
        self.length = 0
        self.lines = 0
        self.root: _Skeleton | None = None
        self.rest: dict[int, int] = {}  # id(open node) -> width of its descendants' prefix
        self.kept: dict[int, _Skeleton] = {}  # id(open node) -> its skeleton

    def add(self, node: PlanNode, parent: PlanNode | None, kind: str) -> None:
        base = 0 if parent is None else self.rest[id(parent)]
        width = 0 if parent is None else base + (3 if kind == "regular" else 6)
        self.rest[id(node)] = width
        start = self.length + (1 if self.lines else 0)
        text = node.text
        self.length = start + width + len(text)
        self.lines += 1
        skel = _Skeleton(text) if start < self.limit else None
        if parent is None:
            self.root = skel
        else:
            up = self.kept.get(id(parent))
            if up is not None:
                (up.children if kind == "regular" else up.inner).append(skel)
        if skel is not None:
            self.kept[id(node)] = skel

    def closed(self, node: PlanNode) -> None:
        self.rest.pop(id(node), None)
        self.kept.pop(id(node), None)

    def text(self) -> str:
        lines: list[str] = []
        size = 0
        stack: list[tuple[_Skeleton | None, str, str]] = [(self.root, "", "")]
        while stack and size <= self.limit:
            node, own, rest = stack.pop()
            if node is None:
                break  # past the limit: everything after it is too
            lines.append(own + node.text)
            size += len(lines[-1]) + 1
            stack.extend(reversed(child_prefixes(node.children, node.inner, rest)))
        text = "\n".join(lines)
        if self.length <= self.limit:
            return text
        return text[: self.limit] + f"\n... ({self.length - self.limit} more characters)"


@dataclass
class _Plan:
    root: PlanNode
    index: int
    seen: PlanFacts = field(default_factory=PlanFacts)  # of the lines read so far
    ctes: Container[str] = field(default_factory=set)
    pl: PlanLineage = field(default_factory=PlanLineage)
    cte_defs: dict[str, Result] = field(default_factory=dict)
    inputs: dict[str, None] = field(default_factory=dict)
    relation_tables: list[str] = field(default_factory=list)
    query: _QueryText = field(default_factory=_QueryText)


class StreamSink:
    """A :class:`~atlas_sync.lineage.spark.text.TreeSink` that builds the graph (job mode, or with
    ``operator=True`` the pico projection)."""

    def __init__(
        self,
        graph: LineageGraph,
        ds: Datasets,
        src: TreeSource,
        file: str | None,
        *,
        operator: bool = False,
    ) -> None:
        self.graph = graph
        self.src = src
        self.facts: list[PlanFacts] | None = None  # the pre-pass, when a plan needs it
        # operator mode (pico): the tree stays, stripped to names; each operator's output column
        # names and process attributes are kept instead of its expressions
        self.operator = operator
        self.names: dict[int, list[str]] = {}
        self.attrs: dict[int, dict[str, Any]] = {}
        self.ds = ds
        self.file = file
        self.plans: list[_Plan] = []
        self.deferred: set[int] = set()  # ids of nodes in inner subtrees not handled yet
        self.chain: set[int] = set()  # ids of the root and the write below a parsed WITH
        self.any_known = False
        self.unknown: list[tuple[str, str | None, int | None]] = []
        self.unresolved: tuple[str, int | None] | None = None

    # ---------------------------------------------------------------------------------- the sink
    def opened(self, node: PlanNode, parent: PlanNode | None, kind: str) -> None:
        node.level_num = 1 if parent is None else parent.level_num + 1
        if parent is None:
            k = len(self.plans)
            plan = _Plan(node, k)
            # most plans never need the pre-pass: an id a predicate reads is usually read above or
            # before a check of it, and a CTE is named before it is referenced
            plan.pl.predicate_ids = _Known(plan.seen.predicate_ids, lambda: self._facts(k).predicate_ids)
            plan.ctes = _Known(plan.seen.ctes, lambda: self._facts(k).ctes)
            self.plans.append(plan)
        if node.op in ("Filter", "Join", "UnresolvedWith"):
            add_facts(self.plans[-1].seen, node)
        if parent is None:
            self.chain.add(id(node))
            self._visit(node, None)
        else:
            if (
                id(parent) in self.chain
                and parent.op == "UnresolvedWith"
                and kind == "regular"
                and len(parent.children) == 1
            ):
                self.chain.add(id(node))
            if kind == "inner" or id(parent) in self.deferred:
                self.deferred.add(id(node))
            else:
                self._visit(node, child_alias(parent))
        if not self.operator:
            self.plans[-1].query.add(node, parent, kind)

    def closed(self, node: PlanNode) -> None:
        plan = self.plans[-1]
        plan.query.closed(node)
        if id(node) in self.deferred:
            return  # handled with the operator it is a subquery of
        # the whole-tree build resolves and computes inner subtrees after the regular children
        below = child_alias(node)
        for c in node.inner:
            self._visit_tree(c, below)
        for c in node.inner:
            self._compute_tree(c, plan)
        self._apply(node, plan)
        if id(node) not in self.chain:
            # job mode detached a done child's children: a walk is short; operator mode keeps
            # them, and walks only subquery subtrees (done together, below)
            for c in node.children:
                self._drop(c, plan, whole=not self.operator)
            for c in node.inner:
                self._drop(c, plan, whole=True)
            if not self.operator:
                node.children = []
                node.inner = []
        if id(node) not in self.chain and node.op not in _IDENTIFIERS:
            # only the result is read from here on (an identifier's table names a CTAS target)
            node.exprs = {}
            node.output = []
            node.props.pop("projections", None)
            node.args = ""

    # ----------------------------------------------------------------------------------- helpers
    def _visit(self, node: PlanNode, alias: str | None) -> None:
        """What the whole-tree build does for each node in its pre-order (regular children first)."""
        plan = self.plans[-1]
        if node.op in KNOWN:
            self.any_known = True
        else:
            self.unknown.append((node.op, node.path, node.line))
        if node.unresolved and self.unresolved is None:
            self.unresolved = (node.text, node.line)
        leaf_dataset(node, alias, plan.ctes, self.ds)
        for d in self.ds.by_node.get(id(node), ()):
            plan.inputs[d] = None
        if not self.operator:
            self.ds.info.pop(id(node), None)  # read by operator mode only
        if node.op == "RelationV2" and node.props.get("table"):
            plan.relation_tables.append(str(node.props["table"]))

    def _visit_tree(self, top: PlanNode, alias: str | None) -> None:
        stack: list[tuple[PlanNode, str | None]] = [(top, alias)]
        while stack:
            node, a = stack.pop()
            self.deferred.discard(id(node))
            self._visit(node, a)
            below = child_alias(node)
            for c in reversed(node.all_children):
                stack.append((c, below))

    def _compute_tree(self, top: PlanNode, plan: _Plan) -> None:
        """In the order of ``lineage.compute``."""
        for node in post_order(top):
            self._apply(node, plan)

    def _apply(self, node: PlanNode, plan: _Plan) -> None:
        res = _apply(node, plan.pl, self.ds.by_node, plan.cte_defs)
        plan.pl.results[id(node)] = res
        if self.operator:
            names = self.names[id(node)] = [c.name for c in res.out]
            if id(node) not in self.chain:  # the root's attributes may need its write target: at the end
                self.attrs[id(node)] = operator_attributes(node, names, self.ds.info.pop(id(node), {}))

    def _facts(self, k: int) -> PlanFacts:
        if self.facts is None:
            self.facts = prescan(self.src)
        return self.facts[k] if k < len(self.facts) else PlanFacts()

    def _drop(self, top: PlanNode, plan: _Plan, whole: bool) -> None:
        """Forget what is keyed by the ids of a dropped subtree (ids are reused once objects are
        freed). ``whole=False``: only ``top`` (its children were handled when it was done)."""
        for n in top.walk() if whole else (top,):
            plan.pl.results.pop(id(n), None)
            self.ds.by_node.pop(id(n), None)
            self.deferred.discard(id(n))

    # ------------------------------------------------------------------------------------ the end
    def finish(self) -> None:
        """Report what the whole-tree build reports and add one job process per plan."""
        if not self.plans:
            raise InputError("no plan found", file=self.file)
        if not self.any_known:
            first = self.plans[0].root
            raise InputError(
                "no Spark plan operator found (Project, Filter, Relation, ...): this does not look like a "
                "Spark plan",
                file=self.file,
                line=first.line,
                path=first.path,
                hint="give the output of df.queryExecution.analyzed (or explain(extended=True)); JSON goes "
                "to spark-json",
            )
        graph = self.graph
        leaf_problems = graph.problems
        graph.problems = []
        for p in self.plans:
            name_write_target(p.root, graph, p.relation_tables)
        graph.problems.extend(leaf_problems)
        for op, path, line in self.unknown:
            unknown_operator(graph, op, path, line, self.file)
        if self.unresolved is not None:
            unresolved_plan(graph, *self.unresolved)
        if self.operator:
            self._finish_operators()
            return
        multi = len(self.plans) > 1
        known: set[ColumnEdge] = set()
        for k, p in enumerate(self.plans, start=1):
            job_process(
                graph,
                self.ds,
                k,
                multi,
                p.root,
                p.pl,
                list(p.inputs),
                p.query.text(),
                self.file,
                known,
                k == len(self.plans),
            )
        self._problem_files()

    def _problem_files(self) -> None:
        for prob in self.graph.problems:
            if prob.file is None:
                prob.file = self.file

    def _finish_operators(self) -> None:
        graph = self.graph
        # as build_graph: the pico projection names its own datasets, an unknown path is no problem
        graph.datasets = []
        graph.problems = [p for p in graph.problems if p.code != "spark-path-unknown"]
        for p in self.plans:  # the names and attributes are all that is read from here on
            p.pl.env.clear()
            p.pl.results.clear()
            p.cte_defs.clear()
        roots = [p.root for p in self.plans]
        for r in roots:
            assign_levels(r)
        for n in (n for r in roots for n in r.walk()):
            if id(n) not in self.attrs:
                self.attrs[id(n)] = operator_attributes(n, self.names[id(n)], self.ds.info.pop(id(n), {}))
        operator_graph(graph, roots, lambda n: self.names[id(n)], lambda n, _: self.attrs[id(n)])
        self._problem_files()


def build_graph_streaming(
    src: TreeSource,
    *,
    job: str,
    file: str | None = None,
    scans: dict[int, ScanInfo] | None = None,
    paths: list[str] | tuple[str, ...] = (),
    progress: Callable[[int, int], None] | None = None,
    mode: str = "job",
) -> LineageGraph:
    """The graph of a text plan (what ``build_graph(parse_text(...).plans, mode=mode)`` gives), built
    while the lines are parsed. ``progress`` as for ``parse_tree_lines``."""
    graph = LineageGraph(job=job, source=file)
    ds = Datasets(graph, job, scans if scans is not None else src.scans, list(paths))
    ds.columns = mode == "job"
    sink = StreamSink(graph, ds, src, file, operator=mode == "operator")
    try:
        parse_tree_lines(
            src.lines,
            file=file,
            first_line=src.first_line,
            progress=progress,
            total=src.total,
            sink=sink,
        )
    except MarkerError:
        # the whole-tree parser reports the marker error it finds first (this one may be another)
        parse_tree_lines(src.lines, file=file, first_line=src.first_line)
        raise
    sink.finish()
    return graph
