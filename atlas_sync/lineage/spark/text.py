"""Parser of the plan TEXT form (``TreeNode.treeString``) and of ``explain(extended=True)`` output.

Layout: one node per line; a node at depth d > 0 is prefixed by d-1 groups of ``":  "`` / ``"   "``
and its marker ``":- "`` (more siblings follow) or ``"+- "`` (last sibling). Inner children (subquery
plans, the query of a CTAS command) are printed right after their node, two levels deeper, before the
regular children. The parser is iterative (deep trees are fine) and checks the markers, so a truncated
tree or broken indentation is reported with its line number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from atlas_sync.errors import InputError
from atlas_sync.lineage.spark.expr import (
    Expr,
    ExprSyntaxError,
    parse_expr,
    parse_list,
    split_top,
    strip_brackets,
)
from atlas_sync.lineage.spark.plan import KNOWN, PlanNode, canonical, require_known_operator

_SECTION = re.compile(r"^== (.+?) ==\s*$")
# operator names are Scala class names: a capital letter first
_NAME = re.compile(r"^(')?([A-Z][A-Za-z0-9_$]*)")
_MODES = {"Append", "Overwrite", "ErrorIfExists", "Ignore"}
_LOCATION = re.compile(r"Location: (?P<idx>[A-Za-z]+)(?:\((?P<n>[^)]*)\))?\[(?P<paths>[^\]]*)\]")
_FILESCAN = re.compile(r"FileScan (?P<fmt>[A-Za-z0-9_]+) (?P<table>[^\s\[]*)\[(?P<attrs>[^\]]*)\]")
_IDS = re.compile(r"#(\d+)L?\b")


@dataclass
class ScanInfo:
    """What a physical scan tells about a relation: format, file paths, table."""

    format: str | None = None
    paths: list[str] = field(default_factory=list)
    table: str | None = None


@dataclass
class TextDocument:
    """A parsed text input: the plans of the chosen section plus the physical plan's scan facts."""

    plans: list[PlanNode]
    scans: dict[int, ScanInfo]  # exprId -> scan facts (from a physical plan, if present)
    section: str | None = None
    plan_text: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------- sections
def split_sections(text: str) -> dict[str, tuple[int, list[str]]]:
    """``explain(extended=True)`` sections by lower-case title -> (first line number, lines)."""
    sections: dict[str, tuple[int, list[str]]] = {}
    current: str | None = None
    for i, line in enumerate(text.splitlines(), start=1):
        m = _SECTION.match(line.strip())
        if m:
            current = m.group(1).strip().lower()
            sections[current] = (i + 1, [])
            continue
        if current is not None:
            sections[current][1].append(line)
    return sections


def _pick(sections: dict[str, tuple[int, list[str]]], want: str | None) -> str | None:
    names = list(sections)
    order = [want] if want else ["analyzed", "optimized", "parsed"]
    for w in order:
        if w is None:
            continue
        for n in names:
            if w.lower() in n and "physical" not in n:
                return n
    return None


def scan_facts(lines: list[str]) -> dict[int, ScanInfo]:
    """exprId -> scan facts, from physical-plan lines (``FileScan ... Location: ...[paths]``)."""
    out: dict[int, ScanInfo] = {}
    for line in lines:
        loc = _LOCATION.search(line)
        fs = _FILESCAN.search(line)
        if not loc and not fs:
            continue
        info = ScanInfo()
        if loc:
            paths = [p.strip() for p in split_top(loc["paths"]) if p.strip()]
            info.paths = [p for p in paths if not p.startswith("...") and " more" not in p]
        ids: list[int] = []
        if fs:
            info.format = fs["fmt"].lower()
            info.table = fs["table"] or None
            ids = [int(x) for x in _IDS.findall(fs["attrs"])]
        else:
            ids = [int(x) for x in _IDS.findall(line.split("Location:")[0])]
        for i in ids:
            out.setdefault(i, info)
    return out


def parse_text(
    text: str,
    *,
    file: str | None = None,
    section: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TextDocument:
    """Parse a plan tree, several trees, or explain output (its analyzed section by default).
    ``progress(lines done, lines)`` is called now and then while the tree lines are parsed."""
    src = tree_source(text, file=file, section=section)
    plans = parse_tree_lines(
        src.lines, file=file, first_line=src.first_line, progress=progress, total=src.total
    )
    if not plans:
        raise InputError("no plan found", file=file)
    require_known_operator(plans, file=file)
    return TextDocument(plans=plans, scans=src.scans, section=src.section)


@dataclass
class TreeSource:
    """Where the plan tree of a text input is: its lines (re-iterable), first line number, line count,
    the physical plan's scan facts and the explain section chosen (None for a bare tree)."""

    lines: Iterable[str]
    first_line: int
    total: int
    scans: dict[int, ScanInfo]
    section: str | None


class _ChunkedLines:
    """The lines of a big text, as ``text.splitlines()`` gives them, without a list of all of them:
    the text is split at newlines into chunks of about a megabyte and each chunk is split on its own
    (a chunk ends with a line break, so its lines are exactly the whole text's)."""

    CHUNK = 1 << 20

    def __init__(self, text: str) -> None:
        self.text = text

    def __iter__(self) -> Iterator[str]:
        text, pos, n = self.text, 0, len(self.text)
        while pos < n:
            end = text.find("\n", pos + self.CHUNK)
            end = n if end < 0 else end + 1
            yield from text[pos:end].splitlines()
            pos = end


_BREAKS = ("\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def count_lines(text: str) -> int:
    """``len(text.splitlines())`` without building the list."""
    if not text:
        return 0
    n = sum(text.count(b) for b in _BREAKS) - text.count("\r\n")
    return n + (0 if text[-1] in _BREAKS else 1)


def tree_source(text: str, *, file: str | None = None, section: str | None = None) -> TreeSource:
    """Find the tree lines of a text input (explain sections, the schema line) and the scan facts."""
    if not text.strip():
        raise InputError("empty plan", file=file)
    # explain output is small next to the plans it explains; only a bare tree is worth streaming
    sections = split_sections(text) if "==" in text else {}
    scans: dict[int, ScanInfo] = {}
    chosen: str | None = None
    if sections:
        for name, (_, lines) in sections.items():
            if "physical" in name:
                scans = scan_facts(lines)
        chosen = _pick(sections, section)
        if chosen is None:
            raise InputError(
                "explain output without a logical plan section",
                file=file,
                hint="expected '== Analyzed Logical Plan ==' (or Parsed / Optimized)",
            )
        first, lines = sections[chosen]
        lines = _drop_schema_line(lines) if "analyzed" in chosen else lines
        offset = first - 1 + (len(sections[chosen][1]) - len(lines))
        return TreeSource(lines, offset + 1, len(lines), scans, chosen)
    return TreeSource(_ChunkedLines(text), 1, count_lines(text), scans, None)


def _drop_schema_line(lines: list[str]) -> list[str]:
    """The analyzed section starts with an output-schema line (``a: int, b: string``) when the plan has
    output: two un-prefixed lines in a row means the first one is that schema."""
    body = [ln for ln in lines]
    while body and not body[0].strip():
        body.pop(0)
    if len(body) >= 2 and not _is_child(body[1]) and body[1].strip():
        return body[1:]
    if len(body) == 1 and re.match(r"^[^\s\[(]+: ", body[0]) and not _NAME.match(body[0]):
        return []
    return body


# the prefix of a child line: depth-1 groups of ":  " / "   " and a ":- " / "+- " marker
_MARKER = re.compile(r"^((?:[: ]  )*)([:+])- ")


def _is_child(line: str) -> bool:
    return _MARKER.match(line) is not None


def tree_lines(
    lines: Iterable[str],
    *,
    file: str | None = None,
    first_line: int = 1,
    progress: Callable[[int, int], None] | None = None,
    total: int = 0,
) -> Iterator[tuple[int, int, str, str, int]]:
    """The non-blank lines of printed trees as (line number, depth, marker, node text, indent).

    Depth 0 is a root line (marker ``""``); a child's marker is ``":"`` or ``"+"``. ``indent`` is the
    width of the whitespace before the current tree's root line (a tree copied from a log may be
    indented as a whole); a node's text starts at column ``indent + 3 * depth + 1``. Raises
    :class:`InputError` for a line no tree layout allows. ``progress(lines done, total)`` is called
    every 256 lines."""
    indent = ""
    rooted = False
    for k, raw in enumerate(lines):
        if progress is not None and k % 256 == 0 and k:
            progress(k, total)
        lineno = first_line + k
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        body = line[len(indent) :] if line.startswith(indent) else line
        m = _MARKER.match(body)
        if m is None:
            # a root line (possibly indented as a whole, e.g. copied from a log)
            stripped = line.lstrip()
            if _is_child(stripped):
                raise InputError("broken tree indentation", file=file, line=lineno)
            indent = line[: len(line) - len(stripped)]
            rooted = True
            yield lineno, 0, "", stripped, len(indent)
            continue
        if not rooted:
            raise InputError("tree line before any root operator", file=file, line=lineno)
        yield lineno, len(m.group(1)) // 3 + 1, m.group(2), body[m.end() :], len(indent)


# ------------------------------------------------------------------------------------------- the tree
class TreeSink(Protocol):
    """Receives the operators of a tree while it is parsed (see :func:`parse_tree_lines`)."""

    def opened(self, node: PlanNode, parent: PlanNode | None, kind: str) -> None:
        """``node`` was read (already attached to ``parent`` as a ``regular`` or ``inner`` child)."""

    def closed(self, node: PlanNode) -> None:
        """Every line of ``node``'s subtree has been read (called children first: post-order)."""


class MarkerError(InputError):
    """A sibling marker that contradicts the tree (found while streaming)."""


def parse_tree_lines(
    lines: Iterable[str],
    *,
    file: str | None = None,
    first_line: int = 1,
    progress: Callable[[int, int], None] | None = None,
    total: int | None = None,
    sink: TreeSink | None = None,
) -> list[PlanNode]:
    """Build the trees from printed lines. Blank lines and extra un-prefixed lines start new plans.
    ``progress(lines done, lines)`` is called every few hundred lines and at the end.

    With a ``sink``, every node is announced when read and again when its subtree is complete, so the
    sink can work on finished subtrees and drop them (the text is a pre-order listing: a subtree is
    complete when a line at the same or a lower depth arrives). Marker errors are then reported as a
    :class:`MarkerError` as soon as the whole input is read."""
    roots: list[PlanNode] = []
    slots: list[PlanNode | None] = []  # node open at each depth
    if total is None:
        total = len(lines) if isinstance(lines, list) else 0
    marker_error: tuple[str, int | None] | None = None

    def close(upto: int) -> None:
        # the nodes open at depth >= upto are complete: deepest first
        nonlocal marker_error
        for n in reversed(slots[upto:]):
            if n is None:
                continue
            for kids in (n.children, n.inner):
                if kids and kids[-1].marker == ":" and marker_error is None:
                    marker_error = (
                        "truncated plan: this line says another sibling follows (':- '), but none does",
                        kids[-1].line,
                    )
            sink.closed(n)  # type: ignore[union-attr]

    for lineno, depth, marker, text, indent in tree_lines(
        lines, file=file, first_line=first_line, progress=progress, total=total
    ):
        if depth == 0:
            node = _node(text, file, lineno, column=indent + 1)
            if sink is not None:
                close(0)
                sink.opened(node, None, "root")
            roots.append(node)
            slots = [node]
            continue
        node = _node(text, file, lineno, column=indent + 3 * depth + 1)
        node.marker = marker
        parent: PlanNode | None = None
        kind = "regular"
        if depth - 1 < len(slots) and slots[depth - 1] is not None:
            parent = slots[depth - 1]
        elif depth - 2 >= 0 and depth - 2 < len(slots) and slots[depth - 2] is not None:
            parent = slots[depth - 2]
            kind = "inner"
        if parent is None:
            raise InputError(
                f"broken tree indentation: a node at depth {depth} has no parent line",
                file=file,
                line=lineno,
                column=indent + 1,
            )
        if sink is not None:
            close(depth)
        kids = parent.children if kind == "regular" else parent.inner
        if sink is not None and kids and kids[-1].marker == "+" and marker_error is None:
            marker_error = (
                "broken tree indentation: a last-sibling marker '+- ' is followed by a sibling",
                lineno,
            )
        kids.append(node)
        if sink is not None:
            sink.opened(node, parent, kind)
        del slots[depth:]
        while len(slots) < depth:
            slots.append(None)
        slots.append(node)
    if progress is not None:
        progress(total, total)
    if sink is not None:
        close(0)
        if marker_error is not None:
            raise MarkerError(marker_error[0], file=file, line=marker_error[1])
        return roots
    # markers: ':-' must be followed by a sibling, the last sibling has '+-'
    for root in roots:
        for n in root.walk():
            for kids in (n.children, n.inner):
                for i, c in enumerate(kids):
                    mk = c.marker
                    last = i == len(kids) - 1
                    if last and mk == ":":
                        raise InputError(
                            "truncated plan: this line says another sibling follows (':- '), but none does",
                            file=file,
                            line=c.line,
                        )
                    if not last and mk == "+":
                        raise InputError(
                            "broken tree indentation: a last-sibling marker '+- ' is followed by a sibling",
                            file=file,
                            line=kids[i + 1].line,
                        )
    return roots


def _node(text: str, file: str | None, line: int | None, column: int = 1) -> PlanNode:
    m = _NAME.match(text)
    if not m:
        raise InputError(f"not a plan operator: {text[:60]!r}", file=file, line=line, column=column)
    raw = m.group(2)
    args = text[m.end() :].strip()
    node = PlanNode(op=canonical(raw), raw_name=raw, args=args, unresolved=bool(m.group(1)), line=line)
    try:
        fill_fields(node)
    except ExprSyntaxError as exc:
        raise InputError(
            f"cannot read the arguments of {raw}: {exc} (truncated line?)",
            file=file,
            line=line,
            column=column + m.end() + exc.offset,
        ) from None
    return node


# ---------------------------------------------------------------------------------- node arguments
def _exprs(text: str) -> list[Expr]:
    inner = strip_brackets(text)
    return parse_list(inner if inner is not None else text)


def _attrs(text: str) -> list[Expr]:
    return [e for e in _exprs(text) if e.kind == "attr"]


def _bracket_end(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return i
    raise ExprSyntaxError("unclosed '['", start)


def unquote_name(name: str) -> str:
    """``\\`spark_catalog\\`.\\`default\\`.\\`t\\``` -> ``spark_catalog.default.t``."""
    return name.strip().replace("`", "")


def fill_fields(node: PlanNode) -> None:
    """Normalise a text node's arguments into ``exprs``, ``output`` and ``props``."""
    op, args = node.op, node.args
    f = split_top(args) if args else []
    p = node.props
    if op == "Project":
        node.exprs["projectList"] = _exprs(args)
    elif op == "Filter":
        node.exprs["condition"] = [parse_expr(args)] if args else []
    elif op == "Join":
        p["joinType"] = f[0] if f else "Inner"
        cond = [x for x in f[1:] if not re.match(r"^(left|right)Hint=", x)]
        node.exprs["condition"] = [parse_expr(cond[0])] if cond else []
        exists = re.fullmatch(r"ExistenceJoin\((.+)\)", p["joinType"])
        if exists:  # the boolean column the join adds (``ExistenceJoin(exists#41)``)
            node.exprs["exists"] = [parse_expr(exists.group(1))]
    elif op == "Aggregate":
        lists = [x for x in f if strip_brackets(x) is not None]
        if len(lists) >= 2:
            node.exprs["groupingExpressions"] = _exprs(lists[0])
            node.exprs["aggregateExpressions"] = _exprs(lists[1])
        else:
            node.exprs["groupingExpressions"] = []
            node.exprs["aggregateExpressions"] = _exprs(lists[0]) if lists else []
    elif op == "Window":
        # empty lists are not printed: tell the order spec by its sort directions
        lists = [x for x in f if strip_brackets(x) is not None]
        node.exprs["windowExpressions"] = _exprs(lists[0]) if lists else []
        rest = lists[1:]
        order_lists = [x for x in rest if re.search(r" (?:ASC|DESC) NULLS (?:FIRST|LAST)\b", x)]
        partition_lists = [x for x in rest if x not in order_lists]
        node.exprs["partitionSpec"] = _exprs(partition_lists[0]) if partition_lists else []
        node.exprs["orderSpec"] = _exprs(order_lists[0]) if order_lists else []
    elif op == "WindowGroupLimit":
        lists = [x for x in f if strip_brackets(x) is not None] + ["[]", "[]"]
        node.exprs["partitionSpec"] = _exprs(lists[0])
        node.exprs["orderSpec"] = _exprs(lists[1])
    elif op == "Sort":
        node.exprs["order"] = _exprs(f[0]) if f else []
        p["isGlobal"] = (f[1].strip() == "true") if len(f) > 1 else True
    elif op in ("GlobalLimit", "LocalLimit", "Limit", "Tail", "Offset"):
        p["limit"] = args
    elif op == "Union":
        p["byName"] = len(f) > 0 and f[0] == "true"
        p["allowMissingCol"] = len(f) > 1 and f[1] == "true"
    elif op in ("Intersect", "Except"):
        p["isAll"] = (len(f) > 0 and f[-1] == "true") or node.raw_name.endswith("All")
    elif op == "SubqueryAlias":
        p["alias"] = unquote_name(args)
    elif op == "View":
        inner = args[1:-1] if args.startswith("(") and args.endswith(")") else args
        parts = split_top(inner)
        p["alias"] = unquote_name(parts[0]) if parts else ""
        node.output = _attrs(parts[1]) if len(parts) > 1 else []
    elif op == "Generate":
        node.exprs["generator"] = [parse_expr(f[0])] if f else []
        lists = [x for x in f[1:] if strip_brackets(x) is not None]
        node.output = _attrs(lists[-1]) if lists else []
        p["outer"] = "true" in f[1:]
    elif op == "Expand":
        lists = [x for x in f if strip_brackets(x) is not None]
        projections = []
        if lists:
            for item in split_top(strip_brackets(lists[0]) or ""):
                projections.append(_exprs(item))
        p["projections"] = projections
        node.output = _attrs(lists[-1]) if len(lists) > 1 else []
    elif op == "Deduplicate" or op == "DeduplicateWithinWatermark":
        node.exprs["keys"] = _exprs(args) if args else []
    elif op == "CTERelationDef":
        p["cteId"] = f[0] if f else ""
    elif op == "CTERelationRef":
        p["cteId"] = f[0] if f else ""
        lists = [x for x in f if strip_brackets(x) is not None]
        node.output = _attrs(lists[0]) if lists else []
    elif op == "UnresolvedWith":
        p["names"] = [x.strip() for x in split_top(strip_brackets(args) or args)]
    elif op == "LogicalRelation":
        _relation_v1(node)
    elif op == "RelationV2":
        _relation_v2(node)
    elif op == "HiveTableRelation":
        inner = strip_brackets(args) or args
        parts = split_top(inner)
        if parts:
            p["table"] = unquote_name(parts[0])
        p["format"] = "hive"
        out: list[Expr] = []
        for part in parts:
            m = re.match(r"^(Data|Partition) Cols: (\[.*\])$", part)
            if m:
                out.extend(_attrs(m.group(2)))
        node.output = out
    elif op in ("LocalRelation", "LogicalRDD", "InMemoryRelation", "ExternalRDD"):
        lists = [x for x in f if strip_brackets(x) is not None]
        node.output = _attrs(lists[0]) if lists else []
    elif op == "UnresolvedRelation":
        parts = split_top(strip_brackets(f[0]) or "") if f else []
        p["table"] = ".".join(unquote_name(x) for x in parts)
    elif op in ("ResolvedIdentifier", "UnresolvedIdentifier"):
        _identifier(node, f)
    elif op in ("InsertIntoHadoopFsRelationCommand",):
        _insert_fs(node, f)
    elif op in (
        "AppendData",
        "OverwriteByExpression",
        "OverwritePartitionsDynamic",
        "InsertIntoStatement",
        "InsertIntoDataSourceCommand",
    ):
        _write_to_relation(node, args, f)
    elif op in ("CreateDataSourceTableAsSelectCommand", "SaveAsV1TableCommand", "InsertIntoHiveTable"):
        p["target"] = unquote_name(f[0]) if f else None
        p["mode"] = next((x for x in f if x in _MODES), None)
        cols = [x for x in f if strip_brackets(x) is not None and "#" not in x]
        if cols:
            p["columns"] = [c.strip() for c in split_top(strip_brackets(cols[-1]) or "")]
        p["format"] = "hive" if op == "InsertIntoHiveTable" else None
    elif op == "CreateHiveTableAsSelectCommand":
        spec = strip_brackets(f[0]) if f else None
        kv = dict(
            (a.split(":", 1)[0].strip(), a.split(":", 1)[1].strip())
            for a in split_top(spec or "")
            if ":" in a
        )
        db, tbl = kv.get("Database"), kv.get("TableName")
        # V1 commands always write to the session catalog, which other V1 nodes print as spark_catalog
        p["target"] = ".".join(x for x in ("spark_catalog" if db else None, db, tbl) if x) or None
        p["mode"] = next((x for x in f if x in _MODES), None)
        p["format"] = "hive"
    elif op == "SaveIntoDataSourceCommand":
        opts = _options(next((x for x in f if strip_brackets(x) is not None and "=" in x), ""))
        p["target"] = opts.get("path") or opts.get("dbtable") or opts.get("table")
        p["mode"] = next((x for x in f if x in _MODES), None)
        p["options"] = opts
    elif op not in KNOWN and args:
        try:
            node.exprs["arguments"] = parse_list(args)
        except ExprSyntaxError:
            node.exprs["arguments"] = []


def _options(text: str) -> dict[str, str]:
    inner = strip_brackets(text) or ""
    out: dict[str, str] = {}
    for part in split_top(inner):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _relation_v1(node: PlanNode) -> None:
    """``Relation [a#1,b#2] csv`` / ``Relation spark_catalog.db.t[a#1] parquet`` / ``JDBCRelation(t)``."""
    args = node.args
    start = args.find("[")
    if start < 0:
        return
    end = _bracket_end(args, start)
    table = args[:start].strip()
    node.output = _attrs(args[start : end + 1])
    rest = args[end + 1 :].strip()
    if table:
        node.props["table"] = unquote_name(table)
    m = re.match(r"^JDBCRelation\((.*?)\)", rest)
    if m:
        node.props["format"] = "jdbc"
        node.props.setdefault("table", m.group(1))
    elif rest:
        node.props["format"] = rest.split()[0].lower()


def _relation_v2(node: PlanNode) -> None:
    """``RelationV2[a#1, b#2] cat.db.t`` (3.5 adds the connector's own name after a space)."""
    args = node.args
    start = args.find("[")
    if start < 0:
        return
    end = _bracket_end(args, start)
    node.output = _attrs(args[start : end + 1])
    rest = args[end + 1 :].strip()
    if rest:
        node.props["table"] = unquote_name(rest.split()[0].rstrip(","))


def _identifier(node: PlanNode, f: list[str]) -> None:
    if node.op == "UnresolvedIdentifier":
        parts = split_top(strip_brackets(f[0]) or "") if f else []
        node.props["table"] = ".".join(unquote_name(x) for x in parts)
    else:  # ResolvedIdentifier <catalog object>, db.t
        name = unquote_name(f[-1]) if f else ""
        if f and "V2SessionCatalog" in f[0] and name.count(".") == 1:
            name = "spark_catalog." + name
        node.props["table"] = name


def _insert_fs(node: PlanNode, f: list[str]) -> None:
    """``path, [static]?, ifPartitionNotExists, [partCols]?, format, [options], mode, table?, index?, [cols]``."""
    p = node.props
    if not f:
        return
    p["path"] = f[0]
    p["mode"] = next((x for x in f if x in _MODES), None)
    for x in f[1:]:
        if x in ("true", "false") or x in _MODES or strip_brackets(x) is not None:
            continue
        p["format"] = x.split(".")[-1].replace("FileFormat", "").lower()
        break
    opts = next((x for x in f[1:] if strip_brackets(x) is not None and "=" in x), None)
    if opts:
        p["options"] = _options(opts)
    table = next((x for x in f[1:] if re.match(r"^`[^`]*`(\.`[^`]*`)*$", x)), None)
    if table:
        p["target"] = unquote_name(table)
    cols = [x for x in f if strip_brackets(x) is not None and "=" not in x and "#" not in x]
    if cols:
        p["columns"] = [c.strip() for c in split_top(strip_brackets(cols[-1]) or "") if c.strip()]


def _write_to_relation(node: PlanNode, args: str, f: list[str]) -> None:
    """V2 writes and the parsed INSERT: the first field is the target relation, printed inline."""
    p = node.props
    if not f:
        return
    target = _node_or_none(f[0])
    if target is not None:
        p["target"] = target.props.get("table")
        if target.output:
            p["columns"] = [a.name for a in target.output]
        if target.props.get("format"):
            p["format"] = target.props["format"]
    if node.op == "InsertIntoStatement":
        p["mode"] = "Overwrite" if "=INSERT,DELETE" in args else "Append"
    elif node.op == "AppendData":
        p["mode"] = "Append"
    elif node.op.startswith("Overwrite"):
        p["mode"] = "Overwrite"


def _node_or_none(text: str) -> PlanNode | None:
    m = _NAME.match(text.strip())
    if not m:
        return None
    try:
        return _node(text.strip(), None, None)
    except InputError:
        return None
