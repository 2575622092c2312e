"""Plain-text views of a LineageGraph: operator trees as indented trees, jobs as input -> output lists."""

from __future__ import annotations

from collections.abc import Iterable

from atlas_sync.lineage.model import Classification, LineageGraph, Process


def graph_text(graph: LineageGraph, *, columns: bool = True) -> str:
    """The graph as text: an operator tree when processes have parents/children, else one block per process."""
    lines: list[str] = []
    by_id = {p.id: p for p in graph.processes}
    roots = [p for p in graph.processes if p.parent is None and (p.children or p.operator)]
    if roots and any(p.children for p in graph.processes):
        for root in roots:
            _tree(root, by_id, lines, "", True, top=True)
    else:
        for p in graph.processes:
            lines.append(f"{p.kind} {p.name}")
            for i in p.inputs:
                lines.append(f"  <- {i}")
            for o in p.outputs:
                lines.append(f"  -> {o}")
    if columns and graph.edges:
        lines.append("column lineage:")
        for e in graph.edges:
            expr = f"  [{e.expression}]" if e.expression else ""
            lines.append(f"  {e.target} <- {e.source} ({e.kind}){expr}")
    tagged: list[tuple[str, list[str], list[str]]] = []
    for d in graph.datasets:
        if d.classifications or d.terms:
            tagged.append((d.id, _names(d.classifications), list(d.terms)))
        for c in d.columns:
            if c.classifications or c.terms:
                tagged.append((f"{d.id}.{c.name}", _names(c.classifications), list(c.terms)))
    if tagged:
        lines.append("classified (own and propagated classifications; glossary terms):")
        for name, names, terms in sorted(tagged):
            lines.append(
                f"  {name}: {', '.join(names) or '-'}" + (f"; terms: {', '.join(terms)}" if terms else "")
            )
    for pr in graph.problems:
        lines.append(f"{pr.severity}: {pr}")
    if not lines:
        lines.append("(no lineage)")
    return "\n".join(lines)


def _label(p: Process) -> str:
    level = f" [{p.level}]" if p.level else ""
    detail = p.attributes.get("planText") or p.name
    return f"{p.operator or p.kind}{level} {detail}" if detail != p.operator else f"{p.operator}{level}"


def _tree(
    p: Process, by_id: dict[str, Process], lines: list[str], prefix: str, last: bool, top: bool = False
) -> None:
    # Iterative over children would need an explicit stack; plan trees are bounded by the reader.
    stack: list[tuple[Process, str, bool, bool]] = [(p, prefix, last, top)]
    while stack:
        node, pre, is_last, is_top = stack.pop()
        text = _label(node)
        lines.append(text if is_top else f"{pre}{'+- ' if is_last else ':- '}{text}")
        child_pre = "" if is_top else pre + ("   " if is_last else ":  ")
        kids = [by_id[c] for c in node.children if c in by_id]
        for i, child in reversed(list(enumerate(kids))):
            stack.append((child, child_pre, i == len(kids) - 1, False))


def _names(classifications: Iterable[Classification]) -> list[str]:
    """Classification names, own and propagated alike, each once."""
    return sorted({c.name for c in classifications})
