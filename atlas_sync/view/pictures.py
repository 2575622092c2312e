"""Lineage pictures: Graphviz DOT, standalone SVG and a self-contained HTML page.

The SVG is laid out here in pure Python (no Graphviz, no network): datasets and processes flow left
to right in layers (longest-path layering, cycles broken by a DFS, long edges routed through dummy
points, barycentre ordering sweeps, and vertical placement by isotonic regression so each node sits
as close as it can to the middle of its neighbours without overlapping). ``columns=True`` lists the
columns inside each dataset and draws the column lineage between them. Operator trees (the pico
profile: processes with ``parent``/``children``) read as a tree because the intermediate results
between operators are folded into the arrows (or drawn as small nodes with ``columns=True``).

Every name that reaches the output is escaped for its format (XML/HTML text and attributes, DOT
quoted strings and HTML-like labels); characters XML cannot carry are replaced.

>>> from atlas_sync.lineage.model import LineageGraph, Dataset, Process
>>> g = LineageGraph()
>>> _ = g.add_dataset(Dataset(id="a", name="a"))
>>> _ = g.add_process(Process(id="p", name="p", inputs=["a"]))
>>> render(g, "dot").startswith("digraph")
True
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from atlas_sync.errors import InputError
from atlas_sync.lineage.bi import bi_kind
from atlas_sync.lineage.model import Classification, ColumnEdge, Dataset, LineageGraph, Process
from atlas_sync.wording import counted

FORMATS = ("dot", "svg", "html")

# Geometry (px). Text is set in a monospace font so widths can be computed without a font engine.
FONT = "'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace"
TITLE_SIZE = 12
SMALL_SIZE = 10
# The smallest text an HTML page opens with (the smallest drawn text is SMALL_SIZE at scale 1): a
# picture wider than the window at that size scrolls instead of shrinking to unreadable text.
MIN_TEXT_PX = 9
CHAR_W = 0.62  # advance of one monospace character, in em (DejaVu Sans Mono: 0.602)
PAD_X = 10
HEADER_H = 38
ROW_H = 17
LAYER_GAP = 70
NODE_GAP = 18
DUMMY_GAP = 9
MARGIN = 20
MAX_LABEL = 44

# Fill colours per dataset kind / process kind; anything else gets the default.
DATASET_FILL = {
    "table": "#dbeafe",
    "view": "#e0e7ff",
    "file": "#dcfce7",
    "local": "#f1f5f9",
    "intermediate": "#f3e8ff",
    "query": "#fef9c3",
    "topic": "#ffe4e6",
}
PROCESS_FILL = "#fed7aa"
# BI objects (lineage/bi.py) are nodes of their own kind: fill, a sign before the kind, and a border
BI_STYLE = {
    "bi_dataset": ("#ccfbf1", "\u25eb", "BI dataset", "#0f766e", 1.5),
    "chart": ("#fde68a", "\u25d4", "chart", "#a16207", 2.0),
    "dashboard": ("#fecaca", "\u25a6", "dashboard", "#991b1b", 3.0),
}
# Metadata marks after a dataset's kind line or a column's name: the sign tells the kind in a
# picture seen without colour too; colour and style repeat it. kind -> (sign, colour, weight, style, words)
MARKS = {
    "own": ("\u25cf", "#b91c1c", "bold", "normal", "own classification"),
    "propagated": ("\u25cb", "#dc2626", "normal", "italic", "propagated classification"),
    "term": ("\u25aa", "#15803d", "normal", "normal", "glossary term"),
}
DIRECT_COLOUR = "#2563eb"
INDIRECT_COLOUR = "#9333ea"
FLOW_COLOUR = "#64748b"

_XML_BAD = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# ---------------------------------------------------------------------------------------- escaping
def clean(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry (controls, lone surrogates)."""
    return _XML_BAD.sub("\ufffd", text)


def xml_escape(text: str) -> str:
    """Escape for XML/HTML text and double- or single-quoted attribute values."""
    return html.escape(clean(text), quote=True)


def dot_string(text: str) -> str:
    """A DOT double-quoted string. Backslashes are doubled so Graphviz escapes (\\N, \\l) stay text."""
    t = clean(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + t.replace("\r", "").replace("\n", "\\n") + '"'


def text_width(text: str, size: float) -> float:
    """Width of ``text`` set in the monospace font at ``size`` px (wide CJK characters count twice)."""
    units = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return units * size * CHAR_W


def shorten(text: str, limit: int = MAX_LABEL) -> str:
    """Cut the middle out of long labels: both ends of a qualified name carry meaning."""
    text = " ".join(clean(text).split())
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (limit - 1 - head) :]


# ---------------------------------------------------------------------------------------- scene
@dataclass
class Node:
    """A box in the picture: a dataset or a process (or a routing point of a long edge)."""

    key: str
    role: str  # "dataset" | "process" | "dummy"
    title: str = ""
    subtitle: str = ""
    tooltip: str = ""
    fill: str = "#ffffff"
    css: str = ""
    rows: list[str] = field(default_factory=list)
    # metadata marks (kind, name) of the dataset itself (key None) and of its columns (by name)
    marks: dict[str | None, list[tuple[str, str]]] = field(default_factory=dict)
    width: float = 0.0
    height: float = 0.0
    layer: int = 0
    x: float = 0.0
    y: float = 0.0

    @property
    def cy(self) -> float:
        return self.y + self.height / 2

    def row_y(self, row: int | None) -> float:
        """Vertical middle of column ``row`` (None: the header)."""
        if row is None or row < 0:
            return self.y + HEADER_H / 2
        return self.y + HEADER_H + row * ROW_H + ROW_H / 2


@dataclass
class Link:
    """An arrow: data flow between a dataset and a process, or column lineage between two columns."""

    src: str
    dst: str
    kind: str = "flow"  # "flow" or a column dependency kind (IDENTITY, FILTER, ...)
    src_row: int | None = None
    dst_row: int | None = None
    tooltip: str = ""
    points: list[tuple[float, float]] = field(default_factory=list)

    @property
    def is_column(self) -> bool:
        return self.kind != "flow"


@dataclass
class Scene:
    """The laid-out picture: positioned nodes and routed links."""

    nodes: dict[str, Node]
    links: list[Link]
    title: str
    width: float = 0.0
    height: float = 0.0
    problems: list[str] = field(default_factory=list)


def _marks(classifications: Iterable[Classification], terms: Iterable[str]) -> list[tuple[str, str]]:
    """(kind, name) of each classification (own or propagated) and glossary term, each once."""
    out = [("propagated" if c.propagated else "own", c.name) for c in classifications]
    out += [("term", t) for t in terms]
    return list(dict.fromkeys(out))


def marks_text(marks: Iterable[tuple[str, str]]) -> str:
    """The marks as the picture writes them after a name (`` ●PII ○PII ▪Email``, no-break spaces)."""
    return "".join(f"\u00a0{MARKS[kind][0]}{name}" for kind, name in marks)


def _marks_tip(marks: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name} ({MARKS[kind][4]})" for kind, name in marks)


def _dataset_node(d: Dataset, key: str, columns: bool) -> Node:
    bk = bi_kind(d.kind)
    shown = f"{BI_STYLE[bk][1]} {BI_STYLE[bk][2]}" if bk else d.kind
    sub = shown if not d.namespace else f"{shown} · {d.namespace}"
    marks: dict[str | None, list[tuple[str, str]]] = {}
    if d.classifications or d.terms:
        marks[None] = _marks(d.classifications, d.terms)
    for c in d.columns:
        if c.classifications or c.terms:
            marks[c.name] = _marks(c.classifications, c.terms)
    # without --columns, the columns that carry metadata are still listed, with their marks
    cols = [c.name for c in d.columns if columns or c.name in marks]
    tip = [d.id, f"kind: {d.kind}"]
    if d.namespace:
        tip.append(f"namespace: {d.namespace}")
    if d.columns:
        tip.append("columns: " + ", ".join(c.name for c in d.columns))
    if None in marks:
        tip.append("classified: " + _marks_tip(marks[None]))
    tip += [f"{name}: {_marks_tip(m)}" for name, m in marks.items() if name is not None]
    return Node(
        key=key,
        role="dataset",
        title=d.name or d.id,
        subtitle=sub,
        tooltip="\n".join(tip),
        fill=BI_STYLE[bk][0] if bk else DATASET_FILL.get(d.kind, "#e2e8f0"),
        css=("dataset classified" if marks else "dataset") + (f" bi {bk}" if bk else ""),
        rows=cols,
        marks=marks,
    )


def _process_node(p: Process, key: str) -> Node:
    if not p.operator:
        # a job or statement: headed by its name; its kind (or Atlas type) is the small line
        name = p.name or p.id
        head, detail = name, p.kind if p.kind != name else ""
    else:
        head = p.operator + (f" [{p.level}]" if p.level else "")
        detail = str(p.attributes.get("planText") or p.name)
        first, _, rest = detail.partition(" ")
        if rest and p.operator.endswith(first):
            detail = rest  # the title already names the operator ("Relation ..." under LogicalRelation)
        if detail in (head, p.operator):
            detail = p.name if p.name != head else ""
    tip = [p.id, f"kind: {p.kind}"]
    if p.operator:
        tip.append(f"operator: {p.operator}")
    if p.attributes.get("planText"):
        tip.append(str(p.attributes["planText"]))
    return Node(
        key=key,
        role="process",
        title=head,
        subtitle=detail,
        tooltip="\n".join(tip),
        fill=PROCESS_FILL,
        css="process",
    )


def build_scene(graph: LineageGraph, *, columns: bool = False) -> Scene:
    """Nodes and links of ``graph`` (not yet positioned)."""
    nodes: dict[str, Node] = {}
    links: list[Link] = []
    dkey = {d.id: f"d{i}" for i, d in enumerate(graph.datasets)}
    pkey = {p.id: f"p{i}" for i, p in enumerate(graph.processes)}

    producers: dict[str, list[str]] = {}
    consumers: dict[str, list[str]] = {}
    for p in graph.processes:
        for o in p.outputs:
            producers.setdefault(o, []).append(p.id)
        for i in p.inputs:
            consumers.setdefault(i, []).append(p.id)

    # Intermediate results between two operators become a plain arrow unless columns are wanted:
    # datasets of kind "intermediate", and (read back from Atlas) a dataset a child operator writes
    # and only its parent operator reads.
    parent_of = {p.id: p.parent for p in graph.processes}

    def between_operators(ds_id: str) -> bool:
        made, used = producers.get(ds_id, []), consumers.get(ds_id, [])
        return bool(made and used) and all(parent_of.get(m) in used for m in made) and len(used) == 1

    folded = {
        d.id
        for d in graph.datasets
        if not columns
        and producers.get(d.id)
        and consumers.get(d.id)
        and (d.kind == "intermediate" or between_operators(d.id))
    }
    folded_tip = {
        d.id: f"{d.name}: " + ", ".join(c.name for c in d.columns) for d in graph.datasets if d.id in folded
    }

    for d in graph.datasets:
        if d.id not in folded:
            nodes[dkey[d.id]] = _dataset_node(d, dkey[d.id], columns)

    def dataset_key(ds_id: str) -> str:
        # Readers may name datasets they did not declare; draw them anyway.
        if ds_id not in dkey:
            dkey[ds_id] = f"d{len(dkey)}"
        key = dkey[ds_id]
        if key not in nodes and ds_id not in folded:
            nodes[key] = _dataset_node(Dataset(id=ds_id, name=ds_id, kind="unknown"), key, columns)
        return key

    for p in graph.processes:
        nodes[pkey[p.id]] = _process_node(p, pkey[p.id])

    pairs: set[tuple[str, str]] = set()

    def flow(a: str, b: str, tip: str = "") -> None:
        if (a, b) not in pairs:
            pairs.add((a, b))
            links.append(Link(a, b, tooltip=tip))

    for p in graph.processes:
        for i in p.inputs:
            if i in folded:
                for src in producers[i]:
                    flow(pkey[src], pkey[p.id], folded_tip[i])
            else:
                flow(dataset_key(i), pkey[p.id])
        for o in p.outputs:
            if o not in folded:
                flow(pkey[p.id], dataset_key(o))

    # Operator trees whose reader did not link operators through datasets: child feeds parent.
    via: dict[str, set[str]] = {}
    for a, b in pairs:
        via.setdefault(a, set()).add(b)
    for p in graph.processes:
        for c in p.children:
            if c not in pkey:
                continue
            ck, pk = pkey[c], pkey[p.id]
            reach = via.get(ck, set())
            if pk not in reach and not any(pk in via.get(m, set()) for m in reach):
                flow(ck, pk)

    if columns:
        _column_links(graph, nodes, links, dataset_key)

    title = graph.job or graph.source or "lineage"
    problems = [f"{p.severity}: {p}" for p in graph.problems]
    return Scene(nodes=nodes, links=links, title=title, problems=problems)


def _column_links(
    graph: LineageGraph, nodes: dict[str, Node], links: list[Link], dataset_key: object
) -> None:
    assert callable(dataset_key)
    seen: set[tuple[str, int | None, str, int | None, str]] = set()

    def row(key: str, column: str | None) -> int | None:
        if column is None or column == "*":
            return None
        rows = nodes[key].rows
        if column not in rows:
            rows.append(column)
        return rows.index(column)

    edges: Iterable[ColumnEdge] = graph.edges
    for e in edges:
        sk, tk = dataset_key(e.source.dataset), dataset_key(e.target.dataset)
        if sk not in nodes or tk not in nodes:
            continue
        sr, tr = row(sk, e.source.column), row(tk, e.target.column)
        ident = (sk, sr, tk, tr, e.kind)
        if ident in seen:
            continue
        seen.add(ident)
        tip = f"{e.target} ← {e.source} ({e.kind})" + (f"\n{e.expression}" if e.expression else "")
        links.append(Link(sk, tk, kind=e.kind, src_row=sr, dst_row=tr, tooltip=tip))


# ---------------------------------------------------------------------------------------- layout
def _size(n: Node) -> None:
    if n.role == "dummy":
        n.width, n.height = 0.0, 0.0
        return
    texts = [
        text_width(shorten(n.title), TITLE_SIZE),
        text_width(shorten(n.subtitle) + marks_text(n.marks.get(None, ())), SMALL_SIZE),
        *(text_width(shorten(r) + marks_text(n.marks.get(r, ())), SMALL_SIZE + 1) for r in n.rows),
    ]
    n.width = max(90.0, max(texts) + 2 * PAD_X + (8 if n.role == "process" else 0))
    n.height = HEADER_H + len(n.rows) * ROW_H + (4 if n.rows else 0)


def _break_cycles(keys: list[str], succ: dict[str, list[str]]) -> set[tuple[str, str]]:
    """Edges to reverse so the graph is acyclic (back edges of an iterative DFS)."""
    state: dict[str, int] = {}
    back: set[tuple[str, str]] = set()
    for root in keys:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(succ.get(root, ())))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(succ.get(nxt, ()))))
            elif state[nxt] == 1:
                back.add((node, nxt))
    return back


def _layers(keys: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering, then every node moves right next to its nearest consumer."""
    succ: dict[str, list[str]] = {k: [] for k in keys}
    pred: dict[str, list[str]] = {k: [] for k in keys}
    for a, b in edges:
        succ[a].append(b)
        pred[b].append(a)
    indeg = {k: len(pred[k]) for k in keys}
    order = [k for k in keys if indeg[k] == 0]
    layer = dict.fromkeys(keys, 0)
    i = 0
    while i < len(order):
        k = order[i]
        i += 1
        for s in succ[k]:
            layer[s] = max(layer[s], layer[k] + 1)
            indeg[s] -= 1
            if indeg[s] == 0:
                order.append(s)
    # Then as late as possible: a branch that joins late sits next to where it joins (tree-like).
    for k in reversed(order):
        if succ[k]:
            layer[k] = min(layer[s] for s in succ[k]) - 1
    return layer


def _crossings(upper: list[str], lower_pos: dict[str, int], succ: dict[str, list[str]]) -> int:
    """Edge crossings between two adjacent layers: inversions of the lower endpoints."""
    seq = [lower_pos[s] for u in upper for s in sorted(succ.get(u, ()), key=lower_pos.__getitem__)]
    return _inversions(seq)


def _inversions(seq: list[int]) -> int:
    if len(seq) < 2:
        return 0
    mid = len(seq) // 2
    left, right = seq[:mid], seq[mid:]
    count = _inversions(left) + _inversions(right)
    left.sort()
    right.sort()
    j = 0
    for v in left:
        while j < len(right) and right[j] < v:
            j += 1
        count += j
    return count


def _isotonic(target: list[float]) -> list[float]:
    """Least-squares non-decreasing fit of ``target`` (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [sum, count]
    for t in target:
        blocks.append([t, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    out: list[float] = []
    for s, c in blocks:
        out.extend([s / c] * int(c))
    return out


def layout(graph: LineageGraph, *, columns: bool = False) -> Scene:
    """Build the scene of ``graph`` and give every node a position and every link a route."""
    scene = build_scene(graph, columns=columns)
    nodes, links = scene.nodes, scene.links
    for n in nodes.values():
        _size(n)
    keys = list(nodes)

    # Ranking constraints: data flow, plus column lineage between datasets (readers without processes).
    rank_edges: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for lk in links:
        pair = (lk.src, lk.dst)
        if lk.src != lk.dst and pair not in seen:
            seen.add(pair)
            rank_edges.append(pair)
    succ0: dict[str, list[str]] = {}
    for a, b in rank_edges:
        succ0.setdefault(a, []).append(b)
    back = _break_cycles(keys, succ0)
    dag = [(b, a) if (a, b) in back else (a, b) for a, b in rank_edges]
    dag = list(dict.fromkeys(dag))
    layer = _layers(keys, dag)
    for k, n in nodes.items():
        n.layer = layer[k]

    # Long flow edges pass through dummy points, one per layer they cross.
    chains: dict[tuple[str, str], list[str]] = {}
    succ: dict[str, list[str]] = {k: [] for k in keys}
    pred: dict[str, list[str]] = {k: [] for k in keys}
    flow_pairs = {(lk.src, lk.dst) for lk in links if not lk.is_column}
    for a, b in dag:
        real = (a, b) in flow_pairs or (b, a) in flow_pairs
        span = layer[b] - layer[a]
        chain = [a]
        if real and span > 1:
            for step in range(1, span):
                dk = f"_{a}_{b}_{step}"
                nodes[dk] = Node(key=dk, role="dummy", layer=layer[a] + step)
                succ[dk], pred[dk] = [], []
                chain.append(dk)
        chain.append(b)
        if real or span == 1:
            for u, v in zip(chain, chain[1:], strict=False):
                succ[u].append(v)
                pred[v].append(u)
        chains[(a, b)] = chain

    n_layers = max((n.layer for n in nodes.values()), default=0) + 1
    rows: list[list[str]] = [[] for _ in range(n_layers)]
    # Initial order: depth-first from the sources keeps branches of a tree together.
    visited: set[str] = set()
    for start in [k for k in nodes if not pred.get(k)] + list(nodes):
        stack = [start]
        while stack:
            k = stack.pop()
            if k in visited:
                continue
            visited.add(k)
            rows[nodes[k].layer].append(k)
            stack.extend(reversed(succ.get(k, [])))

    def positions() -> dict[str, int]:
        return {k: i for r in rows for i, k in enumerate(r)}

    def total_crossings() -> int:
        pos = positions()
        return sum(_crossings(rows[i], pos, succ) for i in range(n_layers - 1))

    best = [list(r) for r in rows]
    best_c = total_crossings()
    for it in range(8):
        down = it % 2 == 0
        rng = range(1, n_layers) if down else range(n_layers - 2, -1, -1)
        for li in rng:
            pos = positions()
            neigh = pred if down else succ

            def bary(k: str, pos: dict[str, int] = pos, neigh: dict[str, list[str]] = neigh) -> float:
                ns = neigh.get(k, [])
                return sum(pos[x] for x in ns) / len(ns) if ns else float(pos[k])

            rows[li].sort(key=bary)
        c = total_crossings()
        if c < best_c:
            best, best_c = [list(r) for r in rows], c
        if best_c == 0:
            break
    rows = best

    # x: one column per layer, as wide as its widest node.
    x = float(MARGIN)
    for r in rows:
        w = max((nodes[k].width for k in r if nodes[k].role != "dummy"), default=0.0)
        for k in r:
            n = nodes[k]
            if n.role == "dummy":
                # A long edge crosses the column horizontally, between the column's boxes.
                n.x, n.width = x, w
            else:
                n.x = x + (w - n.width) / 2
        x += w + LAYER_GAP
    # y: stack, then pull each node towards its neighbours' middle without overlaps.
    for r in rows:
        y = 0.0
        for k in r:
            nodes[k].y = y
            y += nodes[k].height + (DUMMY_GAP if nodes[k].role == "dummy" else NODE_GAP)
    for it in range(6):
        down = it % 2 == 0
        order = range(n_layers) if down else range(n_layers - 1, -1, -1)
        for li in order:
            r = rows[li]
            if not r:
                continue
            offsets: list[float] = []
            acc = 0.0
            for k in r:
                offsets.append(acc)
                acc += nodes[k].height + (DUMMY_GAP if nodes[k].role == "dummy" else NODE_GAP)
            want: list[float] = []
            for k, off in zip(r, offsets, strict=True):
                ns = pred.get(k, []) + succ.get(k, [])
                centre = sum(nodes[m].cy for m in ns) / len(ns) if ns else nodes[k].cy
                want.append(centre - nodes[k].height / 2 - off)
            for k, off, z in zip(r, offsets, _isotonic(want), strict=True):
                nodes[k].y = z + off
    top = min((n.y for n in nodes.values()), default=0.0)
    for n in nodes.values():
        n.y += MARGIN - top
    scene.width = max((n.x + n.width for n in nodes.values()), default=0.0) + MARGIN
    scene.height = max((n.y + n.height for n in nodes.values()), default=0.0) + MARGIN

    for lk in links:
        src, dst = nodes[lk.src], nodes[lk.dst]
        # Flow arrows meet a dataset at its header when its columns are listed below it.
        head = (src.x + src.width, src.row_y(lk.src_row) if lk.is_column or src.rows else src.cy)
        tail = (dst.x, dst.row_y(lk.dst_row) if lk.is_column or dst.rows else dst.cy)
        forward = chains.get((lk.src, lk.dst))
        # A link reversed to break a cycle walks its chain backwards.
        via = forward[1:-1] if forward else list(reversed((chains.get((lk.dst, lk.src)) or [])[1:-1]))
        mid: list[tuple[float, float]] = []
        if not lk.is_column:
            for dk in via:
                d = nodes[dk]
                ends = [(d.x, d.cy), (d.x + d.width, d.cy)]
                mid.extend(ends if forward else ends[::-1])
        lk.points = [head, *mid, tail]
    return scene


# ---------------------------------------------------------------------------------------- SVG
def _path(points: list[tuple[float, float]]) -> str:
    (x0, y0), rest = points[0], points[1:]
    d = [f"M{x0:.1f},{y0:.1f}"]
    px, py = x0, y0
    for x, y in rest:
        dx = max(abs(x - px) / 2, 30.0)
        d.append(f"C{px + dx:.1f},{py:.1f} {x - dx:.1f},{y:.1f} {x:.1f},{y:.1f}")
        px, py = x, y
    return " ".join(d)


def _svg_body(scene: Scene) -> tuple[list[str], dict[str, int]]:
    """SVG elements; every node and column row gets an integer key (``data-k``) for the page script."""
    keys: dict[str, int] = {}

    def k(name: str) -> int:
        return keys.setdefault(name, len(keys))

    out: list[str] = []
    out.append('<g class="links">')
    for lk in sorted(scene.links, key=lambda link: link.is_column):
        if lk.is_column:
            colour = (
                DIRECT_COLOUR if lk.kind in ("IDENTITY", "TRANSFORMATION", "AGGREGATION") else INDIRECT_COLOUR
            )
            dash = "" if colour == DIRECT_COLOUR else ' stroke-dasharray="5 3"'
            marker = "arrow-col" if colour == DIRECT_COLOUR else "arrow-ind"
            s = k(f"{lk.src}/{lk.src_row}" if lk.src_row is not None else lk.src)
            t = k(f"{lk.dst}/{lk.dst_row}" if lk.dst_row is not None else lk.dst)
            out.append(
                f'<path class="link col {xml_escape(lk.kind.lower())}" data-s="{s}" data-t="{t}" '
                f'd="{_path(lk.points)}" stroke="{colour}"{dash} marker-end="url(#{marker})">'
                f"<title>{xml_escape(lk.tooltip)}</title></path>"
            )
        else:
            tip = f"<title>{xml_escape(lk.tooltip)}</title>" if lk.tooltip else ""
            out.append(
                f'<path class="link flow" data-s="{k(lk.src)}" data-t="{k(lk.dst)}" '
                f'd="{_path(lk.points)}" stroke="{FLOW_COLOUR}" marker-end="url(#arrow)">{tip}</path>'
            )
    out.append("</g>")
    out.append('<g class="nodes">')
    for n in scene.nodes.values():
        if n.role == "dummy":
            continue
        rx = 16 if n.role == "process" else 4
        stroke, stroke_width = "#475569", 1.0
        bk = next((k for k in BI_STYLE if f" bi {k}" in f" {n.css}"), None)
        if bk is not None:
            stroke, stroke_width = BI_STYLE[bk][3], BI_STYLE[bk][4]
            rx = 0 if bk == "dashboard" else rx
        out.append(
            f'<g class="node {n.css}" data-k="{k(n.key)}"{_mark_data(n.marks.get(None, []))} '
            f'transform="translate({n.x:.1f},{n.y:.1f})">'
            f"<title>{xml_escape(n.tooltip)}</title>"
            f'<rect width="{n.width:.1f}" height="{n.height:.1f}" rx="{rx}" fill="{n.fill}" '
            f'stroke="{stroke}" stroke-width="{stroke_width:g}"/>'
            f'<text class="t" x="{n.width / 2:.1f}" y="17" font-size="{TITLE_SIZE}" '
            f'text-anchor="middle" font-weight="bold">{xml_escape(shorten(n.title))}</text>'
            f'<text class="s" x="{n.width / 2:.1f}" y="31" font-size="{SMALL_SIZE}" '
            f'text-anchor="middle" fill="#475569">{xml_escape(shorten(n.subtitle))}'
            f"{_mark_spans(n.marks.get(None, []))}</text>"
        )
        if n.rows:
            out.append(f'<line x1="0" y1="{HEADER_H}" x2="{n.width:.1f}" y2="{HEADER_H}" stroke="#94a3b8"/>')
        for i, r in enumerate(n.rows):
            ry = HEADER_H + i * ROW_H
            marks = n.marks.get(r, [])
            row_css = "row classified" if marks else "row"
            out.append(
                f'<g class="{row_css}" data-k="{k(f"{n.key}/{i}")}"{_mark_data(marks)}>'
                f'<rect x="1" y="{ry + 1}" '
                f'width="{n.width - 2:.1f}" height="{ROW_H - 2}" fill="transparent"/>'
                f'<text x="{PAD_X}" y="{ry + 12.5:.1f}" font-size="{SMALL_SIZE + 1}">'
                f"{xml_escape(shorten(r))}{_mark_spans(marks)}</text></g>"
            )
        out.append("</g>")
    out.append("</g>")
    return out, keys


def _mark_spans(marks: list[tuple[str, str]]) -> str:
    out = []
    for kind, name in marks:
        sign, colour, weight, style, _ = MARKS[kind]
        out.append(
            f'<tspan class="mark {kind}" dx="3" fill="{colour}" font-weight="{weight}" font-style="{style}">'
            f"\u00a0{sign}{xml_escape(name)}</tspan>"  # a space SVG keeps
        )
    return "".join(out)


def _mark_data(marks: list[tuple[str, str]]) -> str:
    """The marks as data attributes (``data-own``, ``data-propagated``, ``data-terms``: names joined
    by ``|``), for scripts and tests reading the picture."""
    out = ""
    for kind, attr in (("own", "data-own"), ("propagated", "data-propagated"), ("term", "data-terms")):
        names = [n for k, n in marks if k == kind]
        if names:
            out += f' {attr}="{xml_escape("|".join(names))}"'
    return out


_DEFS = (
    "<defs>"
    '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
    f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{FLOW_COLOUR}"/></marker>'
    '<marker id="arrow-col" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
    f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{DIRECT_COLOUR}"/></marker>'
    '<marker id="arrow-ind" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
    f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{INDIRECT_COLOUR}"/></marker>'
    "</defs>"
)


def _svg(scene: Scene, *, standalone: bool) -> str:
    body, _ = _svg_body(scene)
    w, h = max(scene.width, 120.0), max(scene.height, 60.0)
    head = '<?xml version="1.0" encoding="UTF-8"?>\n' if standalone else ""
    empty = (
        [f'<text x="{MARGIN}" y="{MARGIN + 14}" font-size="{TITLE_SIZE}">(no lineage)</text>']
        if not scene.nodes
        else []
    )
    return (
        f'{head}<svg xmlns="http://www.w3.org/2000/svg" class="lineage" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.0f} {h:.0f}" font-family="{xml_escape(FONT)}" role="img">'
        f"<title>{xml_escape(scene.title)}</title>{_DEFS}"
        "<style>.link{fill:none;stroke-width:1.4}.link.col{stroke-width:1.2;opacity:.8}</style>"
        + "".join(body + empty)
        + "</svg>"
    )


def to_svg(graph: LineageGraph, *, columns: bool = False) -> str:
    """A standalone SVG document of ``graph``."""
    return _svg(layout(graph, columns=columns), standalone=True) + "\n"


# ---------------------------------------------------------------------------------------- HTML
_CSS = """
body{margin:0;font:13px/1.4 system-ui,sans-serif;color:#0f172a;background:#fff}
header{padding:10px 16px;border-bottom:1px solid #e2e8f0;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
h1{font-size:16px;margin:0}
.meta{color:#475569}
.legend span{display:inline-block;margin-right:10px}
.legend i{display:inline-block;width:12px;height:12px;border:1px solid #475569;vertical-align:middle;margin-right:4px}
#view{overflow:auto;padding:8px}
.node{cursor:pointer}
svg.focus .node,svg.focus .link{opacity:.15}
svg.focus .node.hl,svg.focus .link.hl{opacity:1}
svg.focus .link.hl{stroke-width:2.4}
.row.hl rect{fill:#fde68a}
.problems{padding:8px 16px;color:#92400e;white-space:pre-wrap;font-family:monospace}
button{font:inherit}
"""

_JS = """
(function(){
  var svg=document.querySelector('#view svg'); if(!svg) return;
  var links=[].slice.call(svg.querySelectorAll('.link'));
  var out={}, inn={};
  links.forEach(function(l){var s=l.getAttribute('data-s'),t=l.getAttribute('data-t');
    (out[s]=out[s]||[]).push([t,l]); (inn[t]=inn[t]||[]).push([s,l]);});
  var els={}; [].slice.call(svg.querySelectorAll('[data-k]')).forEach(function(e){
    var k=e.getAttribute('data-k'); (els[k]=els[k]||[]).push(e);});
  var pinned=null;
  function walk(start,adj,seen,hl){var todo=[start];while(todo.length){var k=todo.pop();
    (adj[k]||[]).forEach(function(p){hl.push(p[1]);if(!seen[p[0]]){seen[p[0]]=1;todo.push(p[0]);}});}}
  function clear(){svg.classList.remove('focus');
    [].slice.call(svg.querySelectorAll('.hl')).forEach(function(e){e.classList.remove('hl');});}
  function focus(k){clear();var seen={},hl=[];seen[k]=1;walk(k,out,seen,hl);walk(k,inn,seen,hl);
    svg.classList.add('focus');
    Object.keys(seen).forEach(function(s){(els[s]||[]).forEach(function(e){e.classList.add('hl');
      var g=e.closest('.node'); if(g) g.classList.add('hl');});});
    hl.forEach(function(l){l.classList.add('hl');});}
  svg.addEventListener('mouseover',function(ev){if(pinned!==null) return;
    var e=ev.target.closest('[data-k]'); if(e) focus(e.getAttribute('data-k')); else clear();});
  svg.addEventListener('mouseleave',function(){if(pinned===null) clear();});
  svg.addEventListener('click',function(ev){var e=ev.target.closest('[data-k]');
    if(!e||pinned===e.getAttribute('data-k')){pinned=null;clear();return;}
    pinned=e.getAttribute('data-k'); focus(pinned);});
  var W=+svg.getAttribute('width'), H=+svg.getAttribute('height'), scale=1;
  function zoom(s){scale=Math.min(4,Math.max(0.05,s));
    svg.setAttribute('width',W*scale); svg.setAttribute('height',H*scale);}
  function fit(){var v=document.getElementById('view').clientWidth-16; zoom(Math.min(1,v/W));}
  // On opening, fit the picture to the window, but never so far that its smallest text falls below
  // MIN_TEXT_PX: a wider picture scrolls (fit and - still shrink it on request).
  function initial(){var v=document.getElementById('view').clientWidth-16;
    zoom(Math.min(1,Math.max(__MIN_SCALE__,v/W)));}
  document.getElementById('zin').onclick=function(){zoom(scale*1.25);};
  document.getElementById('zout').onclick=function(){zoom(scale*0.8);};
  document.getElementById('zfit').onclick=fit;
  initial();
})();
"""


def to_html(graph: LineageGraph, *, columns: bool = False) -> str:
    """A self-contained HTML page: the SVG picture, a legend, hover/click highlight, zoom buttons.

    No external resources are loaded (the page's Content-Security-Policy forbids them).
    """
    scene = layout(graph, columns=columns)
    n_ds = sum(1 for n in scene.nodes.values() if n.role == "dataset")
    n_pr = sum(1 for n in scene.nodes.values() if n.role == "process")
    n_col = sum(1 for lk in scene.links if lk.is_column)
    meta = f"{counted(n_ds, 'dataset')} · {counted(n_pr, 'process')}" + (
        f" · {counted(n_col, 'column link')}" if columns else ""
    )
    present = {n.fill for n in scene.nodes.values()}
    legend = "".join(
        f'<span><i style="background:{fill}"></i>{xml_escape(kind)}</span>'
        for kind, fill in [
            *DATASET_FILL.items(),
            *((style[2], style[0]) for style in BI_STYLE.values()),
            ("other", "#e2e8f0"),
            ("process", PROCESS_FILL),
        ]
        if fill in present
    )
    kinds = {kind for n in scene.nodes.values() for m in n.marks.values() for kind, _ in m}
    legend += "".join(
        f'<span class="mark-legend {kind}" style="color:{colour};font-weight:{weight};font-style:{style}">'
        f"{sign} {words}</span>"
        for kind, (sign, colour, weight, style, words) in MARKS.items()
        if kind in kinds
    )
    if n_col:
        legend += (
            f'<span><i style="background:{DIRECT_COLOUR}"></i>direct</span>'
            f'<span><i style="background:{INDIRECT_COLOUR}"></i>indirect</span>'
        )
    problems = (
        '<section class="problems">' + xml_escape("\n".join(scene.problems)) + "</section>"
        if scene.problems
        else ""
    )
    title = xml_escape(scene.title)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>lineage: {title}</title><style>{_CSS}</style></head><body>"
        f'<header><h1>{title}</h1><span class="meta">{meta}</span>'
        f'<span class="legend">{legend}</span>'
        '<span><button id="zout" title="zoom out">−</button><button id="zfit" title="fit width">fit</button>'
        '<button id="zin" title="zoom in">+</button></span>'
        '<span class="meta">hover: follow the lineage · click: pin</span></header>'
        f'<main id="view">{_svg(scene, standalone=False)}</main>{problems}'
        f"<script>{_JS.replace('__MIN_SCALE__', f'{MIN_TEXT_PX / SMALL_SIZE:g}')}</script></body></html>\n"
    )


# ---------------------------------------------------------------------------------------- DOT
def to_dot(graph: LineageGraph, *, columns: bool = False) -> str:
    """Graphviz DOT (``dot -Tsvg``): left to right, datasets as boxes, processes rounded."""
    scene = build_scene(graph, columns=columns)
    lines = [
        "digraph lineage {",
        f"  graph [rankdir=LR, fontname=Helvetica, label={dot_string(scene.title)}, labelloc=t];",
        "  node [fontname=Helvetica, fontsize=11];",
        f'  edge [color="{FLOW_COLOUR}"];',
    ]
    for n in scene.nodes.values():
        tip = dot_string(n.tooltip)
        if n.role == "dataset" and columns:
            cells = "".join(
                f'<tr><td port="c{i}" align="left">{xml_escape(r + marks_text(n.marks.get(r, ())))}</td></tr>'
                for i, r in enumerate(n.rows)
            )
            label = (
                f'<<table border="1" cellborder="0" cellspacing="0" bgcolor="{n.fill}">'
                f"<tr><td><b>{xml_escape(n.title)}</b></td></tr>"
                f'<tr><td><font point-size="9">{xml_escape(n.subtitle + marks_text(n.marks.get(None, ())))}'
                "</font></td></tr>"
                f"{cells}</table>>"
            )
            lines.append(f"  {n.key} [shape=plain, label={label}, tooltip={tip}];")
        else:
            style = '"rounded,filled"' if n.role == "process" else "filled"
            sub = n.subtitle + marks_text(n.marks.get(None, ()))
            text = n.title + (f"\n{sub}" if sub else "")
            text += "".join(f"\n{r}{marks_text(n.marks.get(r, ()))}" for r in n.rows if n.role == "dataset")
            lines.append(
                f'  {n.key} [shape=box, style={style}, fillcolor="{n.fill}", '
                f"label={dot_string(text)}, tooltip={tip}];"
            )
    # Column arrows must not stretch the ranks, unless nothing else (no processes) orders the datasets.
    constraint = ", constraint=false" if any(not lk.is_column for lk in scene.links) else ""
    for lk in scene.links:
        if lk.is_column:
            direct = lk.kind in ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
            src = f"{lk.src}:c{lk.src_row}:e" if lk.src_row is not None else lk.src
            dst = f"{lk.dst}:c{lk.dst_row}:w" if lk.dst_row is not None else lk.dst
            colour = DIRECT_COLOUR if direct else INDIRECT_COLOUR
            style = "solid" if direct else "dashed"
            lines.append(
                f'  {src} -> {dst} [color="{colour}", style={style}{constraint}, '
                f"tooltip={dot_string(lk.tooltip)}];"
            )
        else:
            attrs = f" [tooltip={dot_string(lk.tooltip)}]" if lk.tooltip else ""
            lines.append(f"  {lk.src} -> {lk.dst}{attrs};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(graph: LineageGraph, fmt: str, *, columns: bool = False) -> str:
    """The picture of ``graph`` in ``fmt`` ("dot", "svg" or "html"); ``columns`` adds column lineage."""
    if fmt == "dot":
        return to_dot(graph, columns=columns)
    if fmt == "svg":
        return to_svg(graph, columns=columns)
    if fmt == "html":
        return to_html(graph, columns=columns)
    raise InputError(f"unknown picture format {fmt!r}", hint="use one of: " + ", ".join(FORMATS))
