"""Parser of the plan JSON form (``TreeNode.toJSON()``), Spark 3.x and 4.x, into the same tree as the text.

The JSON is an array of node objects in pre-order; each has ``class`` and ``num-children`` and one key
per constructor field. Expressions use the same scheme one level down (an expression is an array, a
``Seq[Expression]`` an array of arrays). Plans held outside ``children`` (subqueries, the query of a
CTAS command, a V2 write's target relation) are embedded as complete arrays. Fields are looked up by
name and unknown keys ignored, so both Spark versions (and later ones) read the same.

What the JSON form loses (file paths, formats of file reads, V2 table names, write modes) can be filled
from the text of the same plan (``explain`` output): see :func:`enrich_from_text`.
"""

from __future__ import annotations

import re
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.spark.expr import AGG_FUNCS, Expr, render, split_top, subqueries
from atlas_sync.lineage.spark.plan import (
    KNOWN,
    LOCAL_RELATIONS,
    RELATIONS,
    WRITE_COMMANDS,
    PlanNode,
    canonical,
    identifier_target,
    require_known_operator,
)
from atlas_sync.wording import counted

_PRINTED = {"LogicalRelation": "Relation", "RelationV2": "RelationV2", "UnresolvedWith": "CTE"}
_BINARY = {
    "EqualTo": "=", "EqualNullSafe": "<=>", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "LessThan": "<",
    "LessThanOrEqual": "<=", "And": "AND", "Or": "OR", "Add": "+", "Subtract": "-", "Multiply": "*",
    "Divide": "/", "Remainder": "%", "IntegralDivide": "div", "BitwiseAnd": "&", "BitwiseOr": "|",
    "BitwiseXor": "^", "Like": "LIKE", "RLike": "RLIKE",
}  # fmt: skip
_SUBQUERY = {"ListQuery": "list", "Exists": "exists", "ScalarSubquery": "scalar-subquery",
             "LateralSubquery": "lateral-subquery"}  # fmt: skip
_FUNC_NAMES = {"Average": "avg", "CurrentTimestamp": "current_timestamp", "IsNotNull": "isnotnull",
               "IsNull": "isnull", "Upper": "upper", "Lower": "lower", "Concat": "concat",
               "RowNumber": "row_number", "StaticInvoke": "staticinvoke", "PivotFirst": "pivotfirst",
               "ReplicateRows": "replicaterows"}  # fmt: skip


def _simple(cls: Any) -> str:
    return str(cls).rsplit(".", 1)[-1].rstrip("$")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _strlist(v: Any) -> list[str]:
    """A ``Seq[String]`` field: a JSON list, or Spark's one-string form ``"[a, b]"``."""
    if v is None:
        return []
    if isinstance(v, list):
        return [str(x) for x in v]
    s = str(v).strip()
    if s.startswith("[") and s.endswith("]"):
        return [x for x in split_top(s[1:-1]) if x]
    return [s] if s else []


def _object_name(v: Any) -> str:
    if isinstance(v, dict):
        if "object" in v:
            return _simple(v["object"])
        if "product-class" in v:
            return _simple(v["product-class"])
    return str(v) if v is not None else ""


def _table_name(ident: Any) -> str | None:
    """TableIdentifier {table, database, catalog} / Identifier {namespace, name} -> dotted name."""
    if not isinstance(ident, dict):
        return None
    if "table" in ident:
        parts = [ident.get("catalog"), ident.get("database"), ident.get("table")]
        return ".".join(str(p) for p in parts if p)
    if "name" in ident:
        return ".".join([*_strlist(ident.get("namespace")), str(ident["name"])])
    return None


def parse_json_plans(doc: Any, *, file: str | None = None) -> list[PlanNode]:
    """One plan (an array of node objects) or several (an array of such arrays)."""
    if isinstance(doc, list) and doc and all(isinstance(x, list) for x in doc):
        plans = [_plan(x, file, f"$[{i}]") for i, x in enumerate(doc)]
    elif not isinstance(doc, list) or not doc:
        raise InputError(
            "a Spark plan JSON must be a non-empty array of plan nodes (the output of plan.toJSON())",
            file=file,
            path="$",
        )
    else:
        plans = [_plan(doc, file, "$")]
    require_known_operator(plans, file=file)
    return plans


def _check(obj: Any, file: str | None, path: str) -> tuple[str, int]:
    if not isinstance(obj, dict):
        raise InputError("expected a node object with 'class' and 'num-children'", file=file, path=path)
    cls, n = obj.get("class"), obj.get("num-children")
    if not isinstance(cls, str):
        raise InputError("node without a 'class' string", file=file, path=path + ".class")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise InputError("node without a valid 'num-children'", file=file, path=path + ".num-children")
    return cls, n


def _tree(arr: list[Any], file: str | None, base: str) -> list[tuple[dict[str, Any], list[int], str]]:
    """Pre-order array -> [(object, child indexes, path)] (iterative)."""
    entries: list[tuple[dict[str, Any], list[int], str]] = []
    stack: list[list[int]] = []  # [entry index, remaining children]
    for i, obj in enumerate(arr):
        path = f"{base}[{i}]"
        _, n = _check(obj, file, path)
        if not stack and entries:
            raise InputError(
                "more nodes than the tree has places for (check 'num-children')", file=file, path=path
            )
        entries.append((obj, [], path))
        if stack:
            parent = stack[-1]
            entries[parent[0]][1].append(i)
            parent[1] -= 1
            if parent[1] == 0:
                stack.pop()
        if n:
            stack.append([i, n])
    if stack:
        idx, missing = stack[-1]
        raise InputError(
            f"truncated plan: this node expects {counted(missing, 'more child node')}",
            file=file,
            path=entries[idx][2],
        )
    return entries


def _plan(arr: list[Any], file: str | None, base: str) -> PlanNode:
    entries = _tree(arr, file, base)
    nodes: list[PlanNode] = []
    for obj, _, path in entries:
        nodes.append(_node(obj, file, path))
    for (_, kids, _), node in zip(entries, nodes, strict=True):
        node.children = [nodes[k] for k in kids] + node.children
    return nodes[0]


# ------------------------------------------------------------------------------------------ expressions
def expr(arr: Any, file: str | None, path: str) -> Expr:
    """One expression (a pre-order array of expression nodes) -> :class:`Expr`."""
    if isinstance(arr, dict):
        arr = [arr]
    if not isinstance(arr, list) or not arr:
        raise InputError("expected an expression array", file=file, path=path)
    entries = _tree(arr, file, path)
    built: list[Expr | None] = [None] * len(entries)
    for i in range(len(entries) - 1, -1, -1):  # children come after their parent in pre-order
        obj, kids, p = entries[i]
        built[i] = _expr_node(obj, [built[k] for k in kids], file, p)  # type: ignore[misc]
    out = built[0]
    assert out is not None
    return out


def _exprs(v: Any, file: str | None, path: str) -> list[Expr]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise InputError("expected a list of expressions", file=file, path=path)
    if v and isinstance(v[0], dict):  # a single expression where a list was expected
        return [expr(v, file, path)]
    return [expr(x, file, f"{path}[{i}]") for i, x in enumerate(v)]


def _word(s: str) -> Expr:
    return Expr("word", name=s)


def _expr_node(o: dict[str, Any], kids: list[Expr], file: str | None, path: str) -> Expr:
    c = _simple(o["class"])
    # expressions held in a non-child field (OuterReference.e) are embedded whole: read them as children
    for k, v in o.items():
        if (
            k != "plan"
            and isinstance(v, list)
            and v
            and isinstance(v[0], dict)
            and ".expressions." in str(v[0].get("class", ""))
        ):
            kids = [*kids, expr(v, file, f"{path}.{k}")]
    if c == "AttributeReference":
        eid = o.get("exprId") or {}
        dt = o.get("dataType")
        return Expr(
            "attr", name=str(o.get("name")), id=eid.get("id"), dtype=dt if isinstance(dt, str) else None
        )
    if c == "UnresolvedAttribute":
        return Expr("attr", name=".".join(_strlist(o.get("nameParts"))), id=None)
    if c == "Alias":
        eid = o.get("exprId") or {}
        return Expr("alias", name=str(o.get("name")), id=eid.get("id"), args=kids[:1])
    if c == "Literal":
        v = o.get("value")
        return _word("null" if v is None else str(v))
    if c == "OuterReference":
        return Expr("call", name="outer", args=kids[:1])
    if c == "AggregateExpression" and kids:
        kids[0].agg = True
        return kids[0]
    if c == "CaseWhen":
        items: list[Expr] = [_word("CASE")]
        pairs = len(kids) // 2
        for b in range(pairs):
            items += [_word("WHEN"), kids[2 * b], _word("THEN"), kids[2 * b + 1]]
        if len(kids) % 2:
            items += [_word("ELSE"), kids[-1]]
        items.append(_word("END"))
        return Expr("seq", args=items)
    if c == "If":
        return Expr("call", name="if", args=kids)
    if c == "WindowExpression":
        return Expr("seq", args=kids)
    if c == "WindowSpecDefinition":
        return Expr("call", name="windowspecdefinition", args=kids)
    if c in _SUBQUERY:
        plan_arr = o.get("plan")
        plan = _plan(plan_arr, file, path + ".plan") if isinstance(plan_arr, list) and plan_arr else None
        eid = o.get("exprId") or {}
        return Expr("subquery", name=_SUBQUERY[c], id=eid.get("id"), args=kids, plan=plan)
    if c == "InSubquery" and kids:
        return Expr("seq", args=[*kids[:-1], _word("IN"), Expr("group", args=kids[-1:])])
    if c == "In" and kids:
        # Spark prints IN lists without spaces: ``x IN (a,b)``
        return Expr("seq", args=[kids[0], _word("IN"), Expr("group", name="in", args=kids[1:])])
    if c in _BINARY and len(kids) == 2:
        return Expr("group", args=[Expr("seq", args=[kids[0], _word(_BINARY[c]), kids[1]])])
    if c == "Not" and kids:
        return Expr("seq", args=[_word("NOT"), kids[0]])
    if c == "Cast" and kids:
        dt = o.get("dataType")
        return Expr("call", name="cast", args=[Expr("seq", args=[kids[0], _word("as"), _word(str(dt))])])
    if c == "SortOrder" and kids:
        direction = "DESC" if "Desc" in _object_name(o.get("direction")) else "ASC"
        nulls = "FIRST" if "First" in _object_name(o.get("nullOrdering")) else "LAST"
        return Expr("seq", args=[kids[0], _word(direction), _word("NULLS"), _word(nulls)])
    if c == "UnresolvedFunction":
        name = ".".join(_strlist(o.get("nameParts"))) or "function"
        return Expr("call", name=name, args=kids, agg=name.lower() in AGG_FUNCS)
    name = _FUNC_NAMES.get(c) or _snake(c)
    # aggregates are marked by their AggregateExpression wrapper, not by name
    return Expr("call", name=name, args=kids)


# ------------------------------------------------------------------------------------------- plan nodes
def _embedded_plan(v: Any, file: str | None, path: str) -> PlanNode | None:
    if isinstance(v, list) and v and isinstance(v[0], dict) and "class" in v[0]:
        return _plan(v, file, path)
    return None


def _node(o: dict[str, Any], file: str | None, path: str) -> PlanNode:
    c = _simple(o["class"])
    op = canonical(c)
    node = PlanNode(
        op=op,
        raw_name=_PRINTED.get(op, c),
        unresolved=c.startswith("Unresolved") and c != "UnresolvedWith",
        path=path,
    )
    p = node.props

    def ex(key: str) -> list[Expr]:
        return _exprs(o.get(key), file, f"{path}.{key}")

    if op == "Project":
        node.exprs["projectList"] = ex("projectList")
    elif op == "Filter":
        node.exprs["condition"] = ex("condition")
    elif op == "Join":
        jt = o.get("joinType")
        p["joinType"] = _object_name(jt) or "Inner"
        node.exprs["condition"] = ex("condition")
        if isinstance(jt, dict) and jt.get("exists") is not None:  # ExistenceJoin(exists: Attribute)
            node.exprs["exists"] = _exprs(jt["exists"], file, f"{path}.joinType.exists")
            p["joinType"] += "(" + ", ".join(render(e) for e in node.exprs["exists"]) + ")"  # as printed
    elif op == "Aggregate":
        node.exprs["groupingExpressions"] = ex("groupingExpressions")
        node.exprs["aggregateExpressions"] = ex("aggregateExpressions")
    elif op == "Window":
        for k in ("windowExpressions", "partitionSpec", "orderSpec"):
            node.exprs[k] = ex(k)
    elif op == "WindowGroupLimit":
        for k in ("partitionSpec", "orderSpec"):
            node.exprs[k] = ex(k)
    elif op == "Sort":
        node.exprs["order"] = ex("order")
        p["isGlobal"] = bool(o.get("global", True))
    elif op in ("GlobalLimit", "LocalLimit", "Limit", "Tail", "Offset"):
        le = ex("limitExpr") or ex("offsetExpr")
        p["limit"] = render(le[0]) if le else ""
    elif op == "Union":
        p["byName"] = bool(o.get("byName"))
        p["allowMissingCol"] = bool(o.get("allowMissingCol"))
    elif op in ("Intersect", "Except"):
        p["isAll"] = bool(o.get("isAll"))
        node.args = str(p["isAll"]).lower()  # as printed: ``ExceptAll true``, ``Except false``
        if p["isAll"]:
            node.raw_name = op + "All"
    elif op == "SubqueryAlias":
        ident = o.get("identifier") or {}
        p["alias"] = ".".join([*_strlist(ident.get("qualifier")), str(ident.get("name", ""))])
    elif op == "View":
        desc = o.get("desc") or {}
        p["alias"] = _table_name(desc.get("identifier")) or ""
    elif op == "Generate":
        node.exprs["generator"] = ex("generator")
        node.output = ex("generatorOutput")
        p["outer"] = bool(o.get("outer"))
    elif op == "Expand":
        projs = o.get("projections") or []
        p["projections"] = [_exprs(pr, file, f"{path}.projections[{i}]") for i, pr in enumerate(projs)]
        node.output = ex("output")
    elif op in ("Deduplicate", "DeduplicateWithinWatermark"):
        node.exprs["keys"] = ex("keys")
    elif op == "CTERelationDef":
        p["cteId"] = str(o.get("id", ""))
    elif op == "CTERelationRef":
        p["cteId"] = str(o.get("cteId", ""))
        node.output = ex("output")
    elif op == "UnresolvedWith":
        p["names"] = [str(r.get("_1")) for r in o.get("cteRelations") or [] if isinstance(r, dict)]
        for i, rel in enumerate(o.get("cteRelations") or []):
            if isinstance(rel, dict):
                sub = _embedded_plan(rel.get("_2"), file, f"{path}.cteRelations[{i}]._2")
                if sub is not None:
                    node.inner.append(sub)
    elif op == "LogicalRelation":
        node.output = ex("output")
        ct = o.get("catalogTable")
        if isinstance(ct, dict):
            p["table"] = _table_name(ct.get("identifier"))
            if ct.get("provider"):
                p["format"] = str(ct["provider"]).lower()
    elif op == "RelationV2":
        node.output = ex("output")
        name = _table_name(o.get("identifier"))
        if name and o.get("catalog") and isinstance(o["catalog"], str):
            name = o["catalog"] + "." + name
        if name:
            p["table"] = name
    elif op == "HiveTableRelation":
        meta = o.get("tableMeta") or {}
        p["table"] = _table_name(meta.get("identifier"))
        p["format"] = "hive"
        node.output = ex("dataCols") + ex("partitionCols")
    elif op in LOCAL_RELATIONS or op == "InMemoryRelation":
        node.output = ex("output")
    elif op == "UnresolvedRelation":
        p["table"] = ".".join(_strlist(o.get("multipartIdentifier")))
    elif op == "UnresolvedIdentifier":
        p["table"] = ".".join(_strlist(o.get("nameParts")))
    elif op == "ResolvedIdentifier":
        p["table"] = _table_name(o.get("identifier"))
    elif op in WRITE_COMMANDS:
        _write(node, o, file, path)
    elif op not in KNOWN:
        args: list[str] = []
        for k, v in o.items():
            if k in ("class", "num-children") or v is None or isinstance(v, int | bool) and k != "limit":
                continue
            if isinstance(v, list) and v and isinstance(v[0], list):
                try:
                    items = _exprs(v, file, f"{path}.{k}")
                except InputError:
                    continue
                node.exprs.setdefault("arguments", []).append(Expr("list", args=items))
                args.append("[" + ", ".join(render(e) for e in items) + "]")
            elif isinstance(v, str | float):
                args.append(str(v))
        node.args = ", ".join(args)
    _qualify_attrs(node, o)
    # the text marks a node unresolved (``'Project``) when it or its expressions are
    if not node.unresolved and node.op != "UnresolvedWith":
        node.unresolved = any(
            x.kind == "attr" and x.id is None
            for exprs in node.exprs.values()
            for e in exprs
            for x in _walk(e)
        )
    # subquery plans are inner children of the operator whose expressions hold them (as in the text)
    for exprs in node.exprs.values():
        for e in exprs:
            for sq in subqueries(e):
                if isinstance(sq.plan, PlanNode):
                    node.inner.append(sq.plan)
    if not node.args:
        node.args = json_args(node)
    return node


def _walk(e: Expr) -> list[Expr]:
    out: list[Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(x.args)
    return out


def _qualify_attrs(node: PlanNode, o: dict[str, Any]) -> None:
    """Keep each output attribute's qualifier (it names a V2 table the JSON otherwise lost)."""
    out = o.get("output")
    if not isinstance(out, list) or not node.output:
        return
    for a, arr in zip(node.output, out, strict=False):
        if isinstance(arr, list) and arr and isinstance(arr[0], dict):
            q = _strlist(arr[0].get("qualifier"))
            if q:
                a.qualifier = ".".join(q)
    if node.op == "RelationV2" and not node.props.get("table"):
        quals = [a.qualifier for a in node.output if a.qualifier]
        if quals:
            node.props["table"] = quals[0]


def _write(node: PlanNode, o: dict[str, Any], file: str | None, path: str) -> None:
    p, op = node.props, node.op
    for key in ("catalogTable", "table", "tableDesc"):
        v = o.get(key)
        if isinstance(v, dict) and "identifier" in v:
            p["target"] = _table_name(v.get("identifier"))
            if v.get("provider"):
                p["format"] = str(v["provider"]).lower()
        elif isinstance(v, list):
            rel = _embedded_plan(v, file, f"{path}.{key}")
            if rel is not None:
                p["target"] = rel.props.get("table")
                if rel.output:
                    p["columns"] = [a.name for a in rel.output]
    if isinstance(o.get("outputPath"), str):
        p["path"] = o["outputPath"]
    if o.get("outputColumnNames") is not None:
        p["columns"] = _strlist(o.get("outputColumnNames"))
    mode = o.get("mode")
    if isinstance(mode, str):
        p["mode"] = mode
    elif isinstance(mode, dict):
        p["mode"] = _object_name(mode)
    elif op == "AppendData":
        p["mode"] = "Append"
    elif op.startswith("Overwrite"):
        p["mode"] = "Overwrite"
    elif op == "InsertIntoStatement":
        p["mode"] = "Overwrite" if o.get("overwrite") else "Append"
    # V2 CTAS: the target identifier and the query are embedded plans (the text prints both as inner
    # children, identifier first)
    ident = _embedded_plan(o.get("name"), file, f"{path}.name")
    if ident is not None:
        node.inner.append(ident)
    q = o.get("query")
    sub = _embedded_plan(q, file, f"{path}.query")
    if sub is not None:
        node.inner.append(sub)


def json_args(node: PlanNode) -> str:
    """An approximation of the text form's argument string, from the normalised fields."""
    op, p = node.op, node.props

    def lst(key: str) -> str:
        return "[" + ", ".join(render(e) for e in node.exprs.get(key, [])) + "]"

    def outs() -> str:
        return ", ".join(render(a) for a in node.output)

    if op == "Project":
        return lst("projectList")
    if op == "Filter":
        return " ".join(render(e) for e in node.exprs.get("condition", []))
    if op == "Join":
        cond = node.exprs.get("condition", [])
        return str(p.get("joinType")) + (", " + render(cond[0]) if cond else "")
    if op == "Aggregate":
        return (lst("groupingExpressions") + ", " if node.exprs.get("groupingExpressions") else "") + lst(
            "aggregateExpressions"
        )
    if op == "Window":
        return ", ".join(lst(k) for k in ("windowExpressions", "partitionSpec", "orderSpec"))
    if op == "Sort":
        return lst("order") + ", " + str(p.get("isGlobal", True)).lower()
    if op in ("GlobalLimit", "LocalLimit", "Limit", "Tail", "Offset"):
        return str(p.get("limit", ""))
    if op == "Union":
        return f"{str(p.get('byName', False)).lower()}, {str(p.get('allowMissingCol', False)).lower()}"
    if op in ("Intersect", "Except"):
        return str(bool(p.get("isAll"))).lower()
    if op == "SubqueryAlias":
        return str(p.get("alias", ""))
    if op == "LogicalRelation":
        return (str(p.get("table") or "") + "[" + ",".join(render(a) for a in node.output) + "]") + (
            " " + str(p["format"]) if p.get("format") else ""
        )
    if op == "RelationV2":
        return "[" + outs() + "]" + (" " + str(p["table"]) if p.get("table") else "")
    if op in ("LocalRelation", "LogicalRDD"):
        return "[" + outs() + "]"
    if op == "CTERelationDef":
        return str(p.get("cteId", ""))
    if op == "CTERelationRef":
        return f"{p.get('cteId', '')}, true, [{outs()}]"
    if op == "Deduplicate":
        return lst("keys")
    if op == "Generate":
        return ", ".join(render(e) for e in node.exprs.get("generator", [])) + f", [{outs()}]"
    if op == "UnresolvedRelation":
        return "[" + ", ".join(str(p.get("table", "")).split(".")) + "]"
    if op in WRITE_COMMANDS:
        parts = [str(x) for x in (p.get("path"), p.get("format"), p.get("mode"), p.get("target")) if x]
        if p.get("columns"):
            parts.append("[" + ", ".join(p["columns"]) + "]")
        return ", ".join(parts)
    return ""


# ---------------------------------------------------------------------------------- text enrichment
def enrich_from_text(json_plans: list[PlanNode], text_plans: list[PlanNode]) -> None:
    """Fill what the JSON lost (table names, formats, write targets and modes) from the text of the
    same plan (e.g. the analyzed section of explain output), matching relations by expression ids."""
    by_id: dict[int, PlanNode] = {}
    for t in text_plans:
        for n in t.walk():
            if n.op in RELATIONS or n.op in LOCAL_RELATIONS:
                for a in n.output:
                    if a.id is not None:
                        by_id.setdefault(a.id, n)
    for j in json_plans:
        for n in j.walk():
            if n.op in RELATIONS:
                match = next((by_id[a.id] for a in n.output if a.id is not None and a.id in by_id), None)
                if match is not None:
                    for k in ("table", "format"):
                        if match.props.get(k) and not n.props.get(k):
                            n.props[k] = match.props[k]
                    n.args = json_args(n)
    for j, t in zip(json_plans, text_plans, strict=False):
        if j.op in WRITE_COMMANDS and t.op in WRITE_COMMANDS:
            found = identifier_target(t) if not t.props.get("target") else None
            if found is not None:
                t.props["target"] = found[0]
            for k in ("target", "path", "format", "mode", "columns"):
                if t.props.get(k) and not j.props.get(k):
                    j.props[k] = t.props[k]
            j.args = json_args(j)
