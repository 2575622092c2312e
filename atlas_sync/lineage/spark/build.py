"""Turn parsed Spark plans into a :class:`LineageGraph`: datasets, then one of two projections.

- ``job`` mode (the ``lineage`` profile): one ``Process(kind="job")`` per plan, from the datasets the
  plan reads to the dataset it writes (or an anonymous result dataset), with column edges.
- ``operator`` mode (the ``pico`` profile, the seed's design): one ``Process(kind="operator")`` per
  operator; between a parent and each child an intermediate dataset ``<parentLevel>-<childLevel>``
  (``facets["levels"] = [parentLevel, childLevel]``); leaves read the base dataset ``input``, the root
  writes the base dataset ``output``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from typing import Any, TypeVar

from atlas_sync.lineage.model import Column, ColumnEdge, ColumnRef, Dataset, LineageGraph, Process, dotted
from atlas_sync.lineage.spark.expr import render
from atlas_sync.lineage.spark.lineage import PlanLineage, compute, target_lins
from atlas_sync.lineage.spark.plan import (
    KNOWN,
    LOCAL_RELATIONS,
    RELATIONS,
    WRITE_COMMANDS,
    PlanNode,
    assign_levels,
    identifier_target,
)
from atlas_sync.lineage.spark.text import ScanInfo

_T = TypeVar("_T")

LOGICAL_RELATION_OPS = frozenset(
    {"LogicalRelation", "LogicalRDD", "RelationV2", "HiveTableRelation", "Relation"}
)
LIMIT_OPS = frozenset({"GlobalLimit", "LocalLimit", "Limit", "Tail"})
DISTINCT_OPS = frozenset({"Distinct", "Deduplicate", "DeduplicateWithinWatermark"})
CTE_OPS = frozenset({"WithCTE", "CTERelationDef", "CTERelationRef"})
WRITE_TYPE_OPS = frozenset(
    {
        "InsertIntoHadoopFsRelationCommand",
        "AppendData",
        "OverwriteByExpression",
        "OverwritePartitionsDynamic",
        "CreateTableAsSelect",
        "CreateDataSourceTableAsSelectCommand",
        "ReplaceTableAsSelect",
        "WriteFiles",
        "InsertIntoStatement",
        "SaveIntoDataSourceCommand",
        "InsertIntoHiveTable",
        "CreateHiveTableAsSelectCommand",
    }
)


def split_uri(path: str) -> tuple[str, str, str]:
    """``file:/tmp/x`` -> (id ``file:/tmp/x``, namespace ``file``, name ``/tmp/x``); ``hdfs://nn/x`` ->
    namespace ``hdfs://nn``. A bare path is a local file."""
    p = path.strip()
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):(//[^/]*)?(.*)$", p)
    if not m or len(m.group(1)) == 1:  # no scheme (or a Windows drive letter)
        return "file:" + p, "file", p
    scheme, authority, rest = m.group(1), m.group(2) or "", m.group(3) or "/"
    ns = scheme + (":" + authority if authority else "")
    return p, ns, rest


# Every relation column sets all fields: its instances can share one fields-set (a set each was
# almost half of a column's memory, and a big plan reads millions of columns).


class Datasets:
    """Decides which dataset(s) each leaf reads, deterministically (pre-order over the plans)."""

    def __init__(self, graph: LineageGraph, job: str, scans: dict[int, ScanInfo], paths: list[str]) -> None:
        self.graph = graph
        self.job = job
        self.scans = scans
        self.paths = list(paths)
        self.counts: dict[str, int] = {}
        self.by_node: dict[int, list[str]] = {}
        self.info: dict[int, dict[str, Any]] = {}
        # relation columns on the datasets (operator mode drops these datasets: no need to fill them)
        self.columns = True

    def _unique(self, base: str) -> str:
        n = self.counts.get(base, 0)
        self.counts[base] = n + 1
        return base if n == 0 else f"{base}_{n + 1}"

    def table(
        self, name: str, *, fmt: str | None = None, location: str | None = None, kind: str = "table"
    ) -> str:
        parts = [p for p in name.replace("`", "").split(".") if p]
        ds_id = dotted(*parts) if parts else name
        facets: dict[str, Any] = {}
        if fmt:
            facets["format"] = fmt
        if location:
            facets["location"] = location
        self.graph.add_dataset(
            Dataset(
                id=ds_id,
                namespace=".".join(parts[:-1]),
                name=parts[-1] if parts else name,
                kind=kind,
                facets=facets,
            )
        )
        return ds_id

    def file(self, path: str, *, fmt: str | None = None) -> str:
        ds_id, ns, name = split_uri(path)
        facets: dict[str, Any] = {"location": ds_id}
        if fmt:
            facets["format"] = fmt
        self.graph.add_dataset(Dataset(id=ds_id, namespace=ns, name=name, kind="file", facets=facets))
        return ds_id

    def leaf(self, node: PlanNode, alias: str | None) -> None:
        op = node.op
        cols = [Column.unchecked(a.name, a.dtype) for a in (node.output if self.columns else ())]
        ids: list[str] = []
        info: dict[str, Any] = {}
        scan = next((self.scans[a.id] for a in node.output if a.id is not None and a.id in self.scans), None)
        fmt = node.props.get("format") or (scan.format if scan else None)
        if op in LOCAL_RELATIONS or op == "InMemoryRelation":
            name = self._unique(f"{self.job}/{alias or 'local_rows'}")
            ds_id = "local:" + name
            self.graph.add_dataset(Dataset(id=ds_id, namespace="local", name=name, kind="local"))
            ids = [ds_id]
        elif node.props.get("table"):
            loc = scan.paths[0] if scan and scan.paths else None
            ids = [self.table(str(node.props["table"]), fmt=fmt, location=loc)]
            info["table"] = node.props["table"]
            if loc:
                info["location"] = loc
        elif scan and scan.paths:
            ids = [self.file(p, fmt=fmt) for p in scan.paths]
            info["location"] = ", ".join(scan.paths)
        elif self.paths:
            p = self.paths.pop(0)
            ids = [self.file(p, fmt=fmt)]
            info["location"] = ids[0]
        else:
            name = self._unique(f"{self.job}/source")
            ds_id = "unknown:" + name
            self.graph.add_dataset(
                Dataset(
                    id=ds_id,
                    namespace="unknown",
                    name=name,
                    kind="file",
                    facets={"format": fmt} if fmt else {},
                )
            )
            ids = [ds_id]
            self.graph.problem(
                f"the plan does not say where this {fmt or ''} relation reads from; named {ds_id!r}".replace(
                    "  ", " "
                ),
                code="spark-path-unknown",
                line=node.line,
                file=None,
            )
        if fmt:
            info["format"] = fmt
        for ds_id in ids:
            d = self.graph.dataset(ds_id)
            if d is not None:
                _add_columns(d, cols)
        self.by_node[id(node)] = ids
        self.info[id(node)] = info

    def target(self, node: PlanNode, names: list[str], index: int, multi: bool) -> str:
        p = node.props
        fmt = p.get("format")
        if p.get("target"):
            loc = p.get("path")
            ds_id = self.table(str(p["target"]), fmt=fmt, location=str(loc) if loc else None)
        elif p.get("path"):
            ds_id = self.file(str(p["path"]), fmt=fmt)
        else:
            name = f"{self.job}/{node.op}_target" + (f"_{index}" if multi else "")
            ds_id = "unknown:" + name
            self.graph.add_dataset(Dataset(id=ds_id, namespace="unknown", name=name, kind="table"))
            self.graph.problem(
                f"the plan does not name the dataset {node.op} writes; named {ds_id!r}",
                code="spark-target-unknown",
                line=node.line,
            )
        d = self.graph.dataset(ds_id)
        if d is not None:
            if p.get("mode"):
                d.facets.setdefault("writeMode", p["mode"])
            _add_columns(d, [Column(name=n) for n in names])
        return ds_id


def _add_columns(d: Dataset, cols: list[Column]) -> None:
    """Append the columns a dataset does not have yet (a set, so very wide relations stay linear)."""
    have = set(d.column_names())
    for c in cols:
        if c.name not in have:
            have.add(c.name)
            d.columns.append(c)


def name_write_target(root: PlanNode, graph: LineageGraph, relation_tables: list[str] | None = None) -> None:
    """Name the table a V2 CTAS writes from its identifier child (see ``identifier_target``)."""
    if root.op not in WRITE_COMMANDS or root.props.get("target"):
        return
    found = identifier_target(root, relation_tables)
    if found is None:
        return
    name, inferred, line = found
    if inferred:
        graph.problem(
            f"the plan does not name the target's catalog; took {name!r} from the tables it reads",
            code="spark-catalog-inferred",
            line=line,
        )
    root.props["target"] = name


def leaf_dataset(node: PlanNode, alias: str | None, ctes: Container[str], ds: Datasets) -> None:
    """Resolve the dataset(s) a leaf reads (nothing for other nodes and for references to CTEs)."""
    if node.op == "UnresolvedRelation" and str(node.props.get("table")) in ctes:
        return
    if node.op in RELATIONS or node.op in LOCAL_RELATIONS or node.op == "InMemoryRelation":
        ds.leaf(node, alias)


def child_alias(node: PlanNode) -> str | None:
    """The alias a SubqueryAlias gives the relations right below it."""
    alias = node.props.get("alias") if node.op == "SubqueryAlias" else None
    return str(alias) if alias else None


def _resolve_leaves(roots: list[PlanNode], ds: Datasets) -> None:
    for root in roots:
        # parsed plans refer to their CTEs by name ('UnresolvedRelation [A]'): those are not datasets
        ctes = {str(x) for n in root.walk() if n.op == "UnresolvedWith" for x in n.props.get("names") or []}
        stack: list[tuple[PlanNode, str | None]] = [(root, None)]
        while stack:
            node, alias = stack.pop()
            leaf_dataset(node, alias, ctes, ds)
            below = child_alias(node)
            for c in reversed(node.all_children):
                stack.append((c, below))


def unknown_operator(
    graph: LineageGraph, op: str, path: str | None, line: int | None, file: str | None
) -> None:
    graph.problem(
        f"unknown Spark operator {op!r}"
        + (f" at {path}" if path and line is None else "")
        + " kept as a generic operator (its children's columns are passed through; only the "
        "aliases in its arguments are followed)",
        code="spark-unknown-operator",
        file=file,
        line=line,
    )


def unresolved_plan(graph: LineageGraph, text: str, line: int | None) -> None:
    graph.problem(
        f"the plan is not analyzed ({text[:60]!r} is unresolved): table lineage only where names "
        "are known, no column lineage through unresolved operators; use the analyzed plan",
        code="spark-unresolved-plan",
        line=line,
    )


def build_graph(
    roots: Sequence[PlanNode],
    *,
    mode: str = "job",
    job: str,
    file: str | None = None,
    scans: dict[int, ScanInfo] | None = None,
    paths: Sequence[str] = (),
) -> LineageGraph:
    """The lineage graph of one or more plans (one job process per plan, or one process per operator)."""
    if mode not in ("job", "operator"):
        from atlas_sync.errors import InputError

        raise InputError(
            f"unknown mode {mode!r}", hint="mode is 'job' (lineage profile) or 'operator' (pico)"
        )
    graph = LineageGraph(job=job, source=file)
    ds = Datasets(graph, job, scans or {}, list(paths))
    ds.columns = mode == "job"
    roots = list(roots)
    for r in roots:
        name_write_target(r, graph)
    _resolve_leaves(roots, ds)
    lineages = [compute(r, ds.by_node) for r in roots]
    for r in roots:
        assign_levels(r)
        for n in r.walk():
            if n.op not in KNOWN:
                unknown_operator(graph, n.op, n.path, n.line, file)
    unresolved = next((n for r in roots for n in r.walk() if n.unresolved), None)
    if unresolved is not None:
        unresolved_plan(graph, unresolved.text, unresolved.line)
    if mode == "job":
        _job_mode(graph, roots, lineages, ds, file)
    else:
        # the pico projection names its own datasets (input, output, intermediates); where a relation
        # reads from is only an attribute there, so an unknown path is not a problem
        graph.datasets = []
        graph.problems = [p for p in graph.problems if p.code != "spark-path-unknown"]
        _operator_mode(graph, roots, lineages, ds)
    for p in graph.problems:
        if p.file is None:
            p.file = file
    return graph


# ------------------------------------------------------------------------------------------ job mode
def _job_mode(
    graph: LineageGraph, roots: list[PlanNode], lineages: list[PlanLineage], ds: Datasets, file: str | None
) -> None:
    multi = len(roots) > 1
    known: set[ColumnEdge] = set(graph.edges)
    for k, (root, pl) in enumerate(zip(roots, lineages, strict=True), start=1):
        inputs = list(dict.fromkeys(d for n in root.walk() for d in ds.by_node.get(id(n), [])))
        job_process(
            graph, ds, k, multi, root, pl, inputs, _cap(tree_string(root)), file, known, k == len(roots)
        )


def job_top(root: PlanNode) -> PlanNode:
    """The node a plan's job writes from: the root, or the write below a parsed ``WITH``."""
    top = root
    while top.op == "UnresolvedWith" and top.children:  # parsed WITH ... INSERT: the write is below
        top = top.children[0]
    return top


def job_process(
    graph: LineageGraph,
    ds: Datasets,
    k: int,
    multi: bool,
    root: PlanNode,
    pl: PlanLineage,
    inputs: list[str],
    query_text: str,
    file: str | None,
    known: set[ColumnEdge],
    last: bool,
) -> None:
    """The job process of plan number ``k``, its target dataset and its column edges (edges already
    in ``known`` are left out; ``known`` grows unless this is the ``last`` plan)."""
    top = job_top(root)
    names, lins, rows = target_lins(top, pl)
    # the plan's lineage is not read again: free it before the edges are made
    pl.env.clear()
    pl.results.clear()
    pid = ds.job
    if top.op in WRITE_COMMANDS:
        target = ds.target(top, names, k, multi)
        if multi and not target.startswith("unknown:"):
            # one of several plans that writes a named dataset: named by it, not by its place in the
            # file (`<job>:<target>`, `:2`... for another plan writing it), so adding a plan renames none
            pid = base = f"{ds.job}:{target}"
            n = 1
            while graph.process(pid) is not None:
                n += 1
                pid = f"{base}:{n}"
        elif multi:
            pid = f"{ds.job}:{k}"
    else:
        pid = f"{ds.job}:{k}" if multi else ds.job
        name = f"{ds.job}/result" + (f"_{k}" if multi else "")
        target = "result:" + name
        graph.add_dataset(
            Dataset(
                id=target,
                namespace="result",
                name=name,
                kind="query",
                columns=[Column(name=n) for n in dict.fromkeys(names)],
            )
        )
    attrs: dict[str, Any] = {"queryText": query_text}
    if file:
        attrs["sourceFile"] = file
    if top.op in WRITE_COMMANDS:
        attrs["operation"] = top.op
        if top.props.get("mode"):
            attrs["writeMode"] = top.props["mode"]
    graph.add_process(
        Process(id=pid, name=pid, kind="job", inputs=inputs, outputs=[target], attributes=attrs)
    )
    made: list[ColumnEdge] = []
    for name, lin in zip(names, lins, strict=False):
        tgt = ColumnRef(dataset=target, column=name)
        for src, kind in lin.direct.items():
            made.append(_edge(src, tgt, kind, lin.expr if kind != "IDENTITY" else None, pid))
        for src, kind in lin.indirect:
            made.append(_edge(src, tgt, kind, None, pid))
    whole = ColumnRef(dataset=target, column=None)
    for src, kind in rows:
        made.append(_edge(src, whole, kind, None, pid))
    # Within one target column the (source, kind) pairs are distinct, so only a repeated column name
    # or an earlier plan can repeat an edge; else no set of (possibly a million) edges is needed.
    # (LineageGraph.add_edge checks the whole list per edge; very wide plans need a set)
    if known or len(set(names)) != len(names):
        edges = dict.fromkeys(made)  # ordered set
        graph.edges.extend(e for e in edges if e not in known)
        if not last:
            known.update(edges)
    else:
        graph.edges.extend(made)
        if not last:
            known.update(made)


QUERY_TEXT_LIMIT = 200_000


def _cap(text: str) -> str:
    """Keep an attribute value to a size Atlas stores comfortably (plans can be megabytes)."""
    if len(text) <= QUERY_TEXT_LIMIT:
        return text
    return text[:QUERY_TEXT_LIMIT] + f"\n... ({len(text) - QUERY_TEXT_LIMIT} more characters)"


# Every edge sets the same fields; both models are frozen, so their instances can share one set
# instead of a set each (about half of an edge's memory).
_EDGE_FIELDS = {"source", "target", "kind", "expression", "process"}
_REF_FIELDS = {"dataset", "column"}


def _edge(src: tuple[str, str], target: ColumnRef, kind: str, expr: str | None, pid: str) -> ColumnEdge:
    # built without validation: every value here is already of the right type and kind (wide plans
    # make hundreds of thousands of these)
    return ColumnEdge.model_construct(
        _EDGE_FIELDS,
        source=ColumnRef.model_construct(_REF_FIELDS, dataset=src[0], column=src[1]),
        target=target,
        kind=kind,
        expression=expr,
        process=pid,
    )


# ------------------------------------------------------------------------------------- operator mode
def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _exprs(node: PlanNode, key: str) -> list[str]:
    return [render(e) for e in node.exprs.get(key, [])]


def operator_attributes(node: PlanNode, out_names: list[str], info: dict[str, Any]) -> dict[str, Any]:
    """The pico profile's attributes of one operator (see the profile spec), ``None`` values left out."""
    op, p = node.op, node.props
    a: dict[str, Any] = {"levelNum": node.level_num, "planText": node.text}
    if op == "Project":
        a["columns"] = _exprs(node, "projectList")
    elif op == "Filter":
        a["condition"] = " ".join(_exprs(node, "condition")) or None
    elif op == "Union":
        a["isAll"] = True  # a Spark Union keeps duplicates; UNION DISTINCT is a Distinct above it
        a["byName"] = bool(p.get("byName"))
    elif op in LOGICAL_RELATION_OPS:
        a["columns"] = [o.name for o in node.output]
        a["format"] = info.get("format")
        a["location"] = info.get("location")
        a["table"] = info.get("table")
    elif op == "LocalRelation":
        a["columns"] = [o.name for o in node.output]
    elif op == "Join":
        a["joinType"] = str(p.get("joinType", "Inner"))
        a["condition"] = " ".join(_exprs(node, "condition")) or None
    elif op == "Aggregate":
        a["groupingExpressions"] = _exprs(node, "groupingExpressions")
        a["aggregateExpressions"] = _exprs(node, "aggregateExpressions")
    elif op == "Window":
        a["windowExpressions"] = _exprs(node, "windowExpressions")
        a["partitionSpec"] = _exprs(node, "partitionSpec")
        a["orderSpec"] = _exprs(node, "orderSpec")
    elif op == "Sort":
        a["order"] = _exprs(node, "order")
        a["isGlobal"] = bool(p.get("isGlobal", True))
    elif op in LIMIT_OPS:
        a["limit"] = str(p.get("limit", "")) or None
    elif op == "Generate":
        a["generator"] = " ".join(_exprs(node, "generator")) or None
        a["outputColumns"] = [o.name for o in node.output]
    elif op in DISTINCT_OPS:
        keys = _exprs(node, "keys")
        a["keys"] = keys or out_names
    elif op == "SubqueryAlias":
        a["alias"] = p.get("alias")
    elif op == "Expand":
        a["projections"] = [
            "[" + ", ".join(render(e) for e in proj) + "]" for proj in p.get("projections") or []
        ]
    elif op in CTE_OPS:
        a["cteId"] = str(p["cteId"]) if p.get("cteId") not in (None, "") else None
    elif op in WRITE_TYPE_OPS:
        a["command"] = op
        a["target"] = p.get("target") or p.get("path")
        a["format"] = p.get("format")
        a["mode"] = p.get("mode")
        a["columns"] = list(p.get("columns") or out_names)
    else:
        a["arguments"] = node.args or None
    return {k: v for k, v in a.items() if v is not None}


def _operator_mode(
    graph: LineageGraph, roots: list[PlanNode], lineages: list[PlanLineage], ds: Datasets
) -> None:
    by_node = {id(n): pl for r, pl in zip(roots, lineages, strict=True) for n in r.walk()}
    operator_graph(
        graph,
        roots,
        lambda n: [c.name for c in by_node[id(n)].result(n).out],
        lambda n, names: operator_attributes(n, names, ds.info.get(id(n), {})),
    )


def operator_graph(
    graph: LineageGraph,
    roots: list[PlanNode],
    out_names: Callable[[PlanNode], list[str]],
    attributes: Callable[[PlanNode, list[str]], dict[str, Any]],
) -> None:
    """The pico projection of level-numbered plans: one process per operator, an intermediate
    dataset per parent-child pair. ``out_names(node)``: the node's output column names;
    ``attributes(node, names)``: its process attributes."""
    multi = len(roots) > 1
    graph.add_dataset(Dataset(id="input", name="input", kind="local", facets={"role": "input"}))
    graph.add_dataset(Dataset(id="output", name="output", kind="local", facets={"role": "output"}))
    for k, root in enumerate(roots, start=1):
        prefix = f"p{k}." if multi else ""

        def lid(n: PlanNode, prefix: str = prefix) -> str:
            return prefix + n.level

        parent_of: dict[int, PlanNode] = {}
        for n in root.walk():
            for c in n.all_children:
                parent_of[id(c)] = n
        for n in root.walk():
            names = out_names(n)
            kids = n.all_children
            inputs: list[str] = []
            for c in kids:
                did = f"{lid(n)}-{lid(c)}"
                cols = [Column(name=x) for x in dict.fromkeys(out_names(c))]
                # level names are unique, so these ids are too: append without add_dataset's lookup
                graph.datasets.append(
                    Dataset(
                        id=did,
                        name=did,
                        kind="intermediate",
                        columns=cols,
                        facets={"levels": [lid(n), lid(c)]},
                    )
                )
                inputs.append(did)
            if not kids:
                inputs = ["input"]
            parent = parent_of.get(id(n))
            outputs = [f"{lid(parent)}-{lid(n)}"] if parent is not None else ["output"]
            graph.processes.append(
                Process(
                    id=lid(n),
                    name=f"pico_{_snake(n.op)}_{lid(n)}",
                    kind="operator",
                    inputs=inputs,
                    outputs=outputs,
                    attributes=attributes(n, names),
                    operator=n.op,
                    level=lid(n),
                    parent=lid(parent) if parent is not None else None,
                    children=[lid(c) for c in kids],
                )
            )


# -------------------------------------------------------------------------------------------- text
def tree_string(root: PlanNode) -> str:
    """The plan printed back in Spark's tree layout (inner children two levels deeper, as Spark does)."""
    lines: list[str] = []
    # (node, prefix for its own line, prefix for its descendants)
    stack: list[tuple[PlanNode, str, str]] = [(root, "", "")]
    while stack:
        node, own, rest = stack.pop()
        lines.append(own + node.text)
        stack.extend(reversed(child_prefixes(node.children, node.inner, rest)))
    return "\n".join(lines)


def child_prefixes(children: Sequence[_T], inner: Sequence[_T], rest: str) -> list[tuple[_T, str, str]]:
    """The children of a node whose descendants are prefixed by ``rest``, in print order, each with
    the prefix of its own line and that of its descendants: inner children first, two levels deeper
    (below the regular children's rail when there are any), then the regular children."""
    entries: list[tuple[_T, str, str]] = []
    inner_base = rest + (":  " if children else "   ")
    for i, c in enumerate(inner):
        last = i == len(inner) - 1
        entries.append((c, inner_base + ("+- " if last else ":- "), inner_base + ("   " if last else ":  ")))
    for i, c in enumerate(children):
        last = i == len(children) - 1
        entries.append((c, rest + ("+- " if last else ":- "), rest + ("   " if last else ":  ")))
    return entries
