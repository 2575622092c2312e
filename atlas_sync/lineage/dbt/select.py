"""The part of dbt's node selection syntax that matters for lineage: ``name``, ``tag:t``, ``path:p``,
``source:s[.t]``, ``resource_type:r``, ``package:p``, ``fqn:a.b`` (shell wildcards allowed), with the
graph operators ``+x`` (x and its ancestors), ``x+`` (and descendants), ``n+x`` / ``x+n`` (up to n
steps). Space-separated terms are a union, comma-joined ones an intersection, as in ``dbt --select``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from atlas_sync.errors import InputError

_TERM = re.compile(r"^(?:(\d*)\+)?(.+?)(?:\+(\d*))?$")
_METHODS = ("tag", "path", "source", "resource_type", "package", "fqn", "config.materialized")


def terms(select: str | Sequence[str] | None) -> list[str]:
    """The selection as a list of union terms (``None`` or empty: everything)."""
    if select is None:
        return []
    items = [select] if isinstance(select, str) else list(select)
    return [t for item in items for t in str(item).split() if t]


def _matches(node: Mapping[str, Any], method: str, value: str) -> bool:
    def like(text: Any) -> bool:
        return isinstance(text, str) and fnmatch.fnmatchcase(text, value)

    if method == "tag":
        return any(like(t) for t in node.get("tags") or [])
    if method == "path":
        path = str(node.get("original_file_path") or "").replace("\\", "/")
        want = value.rstrip("/")
        return like(path) or path == want or path.startswith(want + "/")
    if method == "source":
        if node.get("resource_type") != "source":
            return False
        full = f"{node.get('source_name')}.{node.get('name')}"
        return like(str(node.get("source_name"))) or like(full)
    if method == "resource_type":
        return like(node.get("resource_type"))
    if method == "package":
        return like(node.get("package_name"))
    if method == "fqn":
        return like(".".join(node.get("fqn") or []))
    if method == "config.materialized":
        return like((node.get("config") or {}).get("materialized"))
    # A bare name: the node's name, or the last parts of its fqn (dbt matches both).
    fqn = [str(x) for x in node.get("fqn") or []]
    return like(node.get("name")) or any(like(".".join(fqn[i:])) for i in range(len(fqn)))


def _walk(start: Iterable[str], edges: Mapping[str, list[str]], depth: int | None) -> set[str]:
    seen: set[str] = set()
    frontier = set(start)
    step = 0
    while frontier and (depth is None or step < depth):
        nxt = {n for f in frontier for n in edges.get(f, []) if n not in seen}
        seen |= nxt
        frontier = nxt
        step += 1
    return seen


def select_nodes(
    select: str | Sequence[str] | None,
    nodes: Mapping[str, Mapping[str, Any]],
    parents: Mapping[str, list[str]],
    children: Mapping[str, list[str]],
    *,
    file: str | None = None,
) -> set[str] | None:
    """The unique ids a selection names (``None``: no selection, everything)."""
    union_terms = terms(select)
    if not union_terms:
        return None
    chosen: set[str] = set()
    for term in union_terms:
        part_sets: list[set[str]] = []
        for part in term.split(","):
            m = _TERM.match(part)
            if not m or not m.group(2):
                raise InputError(f"cannot read the selection {part!r}", file=file, hint="e.g. tag:nightly")
            up, core, down = m.group(1), m.group(2), m.group(3)
            method, sep, value = core.partition(":")
            if not sep:
                method, value = "", core
            elif method not in _METHODS:
                raise InputError(
                    f"selection method {method!r} is not supported",
                    file=file,
                    hint="use a name, " + ", ".join(m + ":" for m in _METHODS) + " and + operators",
                )
            hit = {uid for uid, node in nodes.items() if _matches(node, method, value)}
            found = set(hit)
            if up is not None:
                found |= _walk(hit, parents, int(up) if up else None)
            if down is not None:
                found |= _walk(hit, children, int(down) if down else None)
            part_sets.append(found)
        chosen |= set.intersection(*part_sets)
    return chosen
