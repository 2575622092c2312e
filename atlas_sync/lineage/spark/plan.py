"""The operator tree both Spark plan forms (text and JSON) are turned into.

A :class:`PlanNode` keeps the operator name, its own printed line, its regular children and its
*inner* children (subquery plans, the query of a CTAS command), plus normalised fields the lineage
needs: expression lists (``exprs``), output attributes (``output``) and plain properties (``props``:
table, format, path, join type, ...). The text parser (``text.py``) and the JSON parser
(``jsonplan.py``) fill the same fields, so everything downstream is form-independent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.spark.expr import Expr

# Printed names (text) and class names (JSON) that differ from the canonical operator name.
CANONICAL: dict[str, str] = {
    "Relation": "LogicalRelation",
    "DataSourceV2Relation": "RelationV2",
    "DataSourceV2ScanRelation": "RelationV2",
    "CTE": "UnresolvedWith",
    "UnresolvedWith": "UnresolvedWith",
    # set operations with ALL print as their class name + "All" (``ExceptAll true``)
    "ExceptAll": "Except",
    "IntersectAll": "Intersect",
}

# Leaves that read data (a dataset each).
RELATIONS = frozenset(
    {
        "LogicalRelation",
        "RelationV2",
        "HiveTableRelation",
        "UnresolvedRelation",
        "StreamingRelation",
        "StreamingRelationV2",
        "StreamingDataSourceV2Relation",
        "InMemoryRelation",
        "UnresolvedCatalogRelation",
    }
)
# Leaves of in-memory rows (anonymous local datasets).
LOCAL_RELATIONS = frozenset({"LocalRelation", "LogicalRDD", "ExternalRDD", "UnresolvedInlineTable", "Range"})
# Commands that write a dataset.
WRITE_COMMANDS = frozenset(
    {
        "InsertIntoHadoopFsRelationCommand",
        "AppendData",
        "OverwriteByExpression",
        "OverwritePartitionsDynamic",
        "CreateTableAsSelect",
        "CreateDataSourceTableAsSelectCommand",
        "ReplaceTableAsSelect",
        "InsertIntoStatement",
        "SaveIntoDataSourceCommand",
        "InsertIntoHiveTable",
        "CreateHiveTableAsSelectCommand",
        "SaveAsV1TableCommand",
        "InsertIntoDataSourceCommand",
        "CreateTableAsSelectStatement",
        "ReplaceTableAsSelectStatement",
        "InsertIntoDir",
        "InsertIntoDataSourceDirCommand",
        "InsertIntoHiveDirCommand",
        "WriteToDataSourceV2",
        "CreateTable",
    }
)
# Operators the lineage understands (everything else is generic and reported as a problem).
KNOWN = frozenset(
    {
        "Project",
        "Filter",
        "Union",
        "Join",
        "Aggregate",
        "Window",
        "Sort",
        "GlobalLimit",
        "LocalLimit",
        "Limit",
        "Tail",
        "Offset",
        "Generate",
        "Distinct",
        "Deduplicate",
        "DeduplicateWithinWatermark",
        "Expand",
        "SubqueryAlias",
        "View",
        "WithCTE",
        "CTERelationDef",
        "CTERelationRef",
        "UnresolvedWith",
        "WriteFiles",
        "OneRowRelation",
        "ResolvedHint",
        "UnresolvedHint",
        "Repartition",
        "RepartitionByExpression",
        "RebalancePartitions",
        "Sample",
        "Intersect",
        "Except",
        "WindowGroupLimit",
        "UnresolvedDeduplicate",
        "Subquery",
        "ResolvedIdentifier",
        "UnresolvedIdentifier",
        "EventTimeWatermark",
        "Pivot",
        "UnresolvedSubqueryColumnAliases",
        "CommandResult",
        "UnresolvedTableValuedFunction",
    }
    | RELATIONS
    | LOCAL_RELATIONS
    | WRITE_COMMANDS
)
# Unary operators whose output is their child's output, unchanged.
PASSTHROUGH = frozenset(
    {
        "SubqueryAlias",
        "View",
        "GlobalLimit",
        "LocalLimit",
        "Limit",
        "Tail",
        "Offset",
        "WriteFiles",
        "ResolvedHint",
        "UnresolvedHint",
        "Repartition",
        "RepartitionByExpression",
        "RebalancePartitions",
        "Sample",
        "Subquery",
        "EventTimeWatermark",
        "WindowGroupLimit",
        "CTERelationDef",
        "UnresolvedSubqueryColumnAliases",
        "CommandResult",
        "UnresolvedDeduplicate",
    }
)


@dataclass(eq=False)
class PlanNode:
    """One operator of a Spark logical plan."""

    op: str
    raw_name: str = ""
    args: str = ""
    unresolved: bool = False
    line: int | None = None
    path: str | None = None
    children: list[PlanNode] = field(default_factory=list)
    inner: list[PlanNode] = field(default_factory=list)
    exprs: dict[str, list[Expr]] = field(default_factory=dict)
    output: list[Expr] = field(default_factory=list)
    props: dict[str, Any] = field(default_factory=dict)
    # filled by levels(): the seed's level expression, made unique; level number (root = 1)
    level: str = ""
    level_num: int = 0
    seed_level: str = ""
    # the text form's sibling marker (':' more siblings follow, '+' the last one)
    marker: str = ""

    @property
    def text(self) -> str:
        """The operator's own line, as Spark prints it (rendered for the JSON form)."""
        name = ("'" if self.unresolved else "") + (self.raw_name or self.op)
        if not self.args:
            return name
        return name + ("" if self.args.startswith("[") and self.op == "RelationV2" else " ") + self.args

    @property
    def all_children(self) -> list[PlanNode]:
        """Regular children first (the seed's numbering), then inner children."""
        return [*self.children, *self.inner]

    def walk(self) -> Iterator[PlanNode]:
        """Pre-order over regular and inner children, without recursion."""
        stack: list[PlanNode] = [self]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.all_children))

    def __repr__(self) -> str:
        return f"PlanNode({self.op} {self.level or ''}: {self.text[:60]!r})"


def canonical(name: str) -> str:
    """The canonical operator name of a printed name or (simple) class name."""
    return CANONICAL.get(name, name)


def assign_levels(root: PlanNode) -> None:
    """Number the tree as the seed does, then make the level expressions unique.

    The seed names the root ``1_0`` and a node's children ``<level+1>_<childIndex>``. That repeats
    (the two children of a Join each have ``3_0`` children), so a seed name used by more than one node
    is extended with its parent's (already unique) name: ``<parent>.<seed>``, e.g. ``4_0`` under ``3_1``
    becomes ``3_1.4_0``. Names used once stay exactly as the seed has them.
    """
    root.level_num = 1
    root.seed_level = "1_0"
    order: list[PlanNode] = []
    parents: dict[int, PlanNode] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        order.append(n)
        for i, c in enumerate(n.all_children):
            c.level_num = n.level_num + 1
            c.seed_level = f"{c.level_num}_{i}"
            parents[id(c)] = n
        stack.extend(reversed(n.all_children))
    counts: dict[str, int] = {}
    for n in order:
        counts[n.seed_level] = counts.get(n.seed_level, 0) + 1
    for n in order:  # pre-order: a parent is named before its children
        if counts[n.seed_level] == 1 or id(n) not in parents:
            n.level = n.seed_level
        else:
            n.level = parents[id(n)].level + "." + n.seed_level


def identifier_target(
    root: PlanNode, relation_tables: Iterable[str] | None = None
) -> tuple[str, bool, int | None] | None:
    """The table a V2 CTAS / REPLACE TABLE AS SELECT writes, from its identifier child.

    The identifier prints the catalog as an object (``JDBCTableCatalog@6e46d2f3, app.dst``). When the
    plan reads exactly one catalog's tables in the same namespace (``jdb.app.src``), that catalog is
    taken for the target. Returns (name, catalog inferred?, line) or None. ``relation_tables``: the
    tables of the plan's RelationV2 nodes, when the tree below the root is no longer there.
    """
    ident = next(
        (
            c
            for c in root.all_children
            if c.op in ("ResolvedIdentifier", "UnresolvedIdentifier") and c.props.get("table")
        ),
        None,
    )
    if ident is None:
        return None
    name = str(ident.props["table"])
    if ident.op != "ResolvedIdentifier" or name.startswith("spark_catalog."):
        return name, False, ident.line
    ns = name.rpartition(".")[0]
    if relation_tables is None:
        relation_tables = [
            str(n.props["table"]) for n in root.walk() if n.op == "RelationV2" and n.props.get("table")
        ]
    catalogs = {
        t.split(".")[0]
        for t in relation_tables
        if t.count(".") == name.count(".") + 1 and t.split(".", 1)[1].rpartition(".")[0] == ns
    }
    if len(catalogs) == 1:
        return catalogs.pop() + "." + name, True, ident.line
    return name, False, ident.line


def require_known_operator(roots: list[PlanNode], *, file: str | None = None) -> None:
    """Refuse input in which no operator is one Spark has: it is not a plan (unknown operators inside a
    real plan are kept and reported, but a file of them is something else)."""
    for r in roots:
        for n in r.walk():
            if n.op in KNOWN:
                return
    first = roots[0] if roots else None
    raise InputError(
        "no Spark plan operator found (Project, Filter, Relation, ...): this does not look like a Spark plan",
        file=file,
        line=first.line if first else None,
        path=first.path if first else None,
        hint="give the output of df.queryExecution.analyzed (or explain(extended=True)); JSON goes to spark-json",
    )
