"""TMDL (Power BI's Tabular Model Definition Language, the ``*.SemanticModel/definition`` of a PBIP)
-> tables, their columns, measures and partitions, and the shared expressions / parameters.

Indentation-based: an object is ``<keyword> <name>[ = <expression>]``, its properties ``name: value``
(``source =`` / ``expression =`` followed by a deeper-indented block, or a block fenced with ```` ``` ````)
and its child objects one level deeper. Names may be quoted (``'Total Sales'``, ``''`` an escaped quote).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADER = re.compile(
    r"^(?:createOrReplace\s+)?([A-Za-z]+)\s+('(?:[^']|'')*'|[^=:'\s][^=:]*?)\s*(?:=\s*(.*))?$"
)
_PROP = re.compile(r"^([A-Za-z][A-Za-z0-9]*)\s*(:|=)\s*(.*)$")
_OBJECTS = {
    "table", "column", "measure", "partition", "expression", "hierarchy", "level", "calculationGroup",
    "calculationItem", "relationship", "annotation", "model", "database", "role", "culture", "perspective",
    "ref", "dataSource", "queryGroup", "tablePermission", "changedProperty", "extendedProperty",
    "linguisticMetadata", "perspectiveTable", "perspectiveColumn", "perspectiveMeasure", "member",
    "functions", "function", "calendar",
}  # fmt: skip


class TmdlError(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class Node:
    keyword: str
    name: str
    value: str | None  # the text after '=' (a whole block for a multi-line expression)
    line: int
    props: dict[str, str] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)

    def all(self, keyword: str) -> list[Node]:
        return [c for c in self.children if c.keyword == keyword]


def unquote(name: str) -> str:
    n = name.strip()
    if len(n) >= 2 and n[0] == "'" and n[-1] == "'":
        return n[1:-1].replace("''", "'")
    return n


def _indent(line: str) -> int:
    n = 0
    for ch in line:
        if ch == "\t":
            n += 4
        elif ch == " ":
            n += 1
        else:
            break
    return n


def parse_tmdl(text: str) -> list[Node]:
    """The top-level objects of one TMDL file; :class:`TmdlError` (with its line) when malformed."""
    lines = text.replace("\r\n", "\n").lstrip("\ufeff").split("\n")
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("///") or stripped.startswith("//"):
            i += 1
            continue
        ind = _indent(raw)
        lineno = i + 1
        value, i = _value_after(lines, i, ind)
        while stack and stack[-1][0] >= ind:
            stack.pop()
        head = stripped
        if head in _OBJECTS:  # a nameless object: `database`
            head += " ''"
        m = _HEADER.match(head)
        keyword = m.group(1) if m else ""
        if m and keyword in _OBJECTS:
            node = Node(keyword, unquote(m.group(2)), value, lineno)
            if stack:
                stack[-1][1].children.append(node)
            elif keyword in ("column", "measure", "partition", "hierarchy", "level", "calculationItem"):
                raise TmdlError(f"{keyword} {m.group(2).strip()} outside a table", lineno)
            else:
                roots.append(node)
            stack.append((ind, node))
            continue
        if not stack and m:
            # another top-level object (cultureInfo, a newer keyword): kept, not read
            node = Node(keyword, unquote(m.group(2)), value, lineno)
            roots.append(node)
            stack.append((ind, node))
            continue
        p = _PROP.match(head)
        if p and stack:
            stack[-1][1].props[p.group(1)] = value if value is not None else p.group(3).strip()
            continue
        if not stack:
            raise TmdlError(f"unexpected text {stripped[:40]!r}", lineno)
        # a bare word (isHidden, isKey): a flag property
        stack[-1][1].props[stripped] = "true"
    return roots


def _value_after(lines: list[str], i: int, ind: int) -> tuple[str | None, int]:
    """The value a line gives after '=' or ':' (a block of deeper lines or a ``` fence when the line
    ends there); returns the value (None for none) and the next line's index."""
    stripped = lines[i].strip()
    m = re.search(r"(=|:)\s*(.*)$", stripped)
    if not m:
        return None, i + 1
    rest = m.group(2)
    if rest.startswith("```"):
        body: list[str] = [rest[3:]] if rest[3:].strip() else []
        j = i + 1
        while j < len(lines) and "```" not in lines[j]:
            body.append(lines[j])
            j += 1
        if j >= len(lines):
            raise TmdlError("a ``` block is not closed", i + 1)
        return _dedent(body), j + 1
    if rest:
        return rest, i + 1
    j = i + 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j >= len(lines) or _indent(lines[j]) <= ind:
        return "", i + 1
    first = _indent(lines[j])
    j = i + 1
    body = []
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) >= first):
        body.append(lines[j])
        j += 1
    while body and not body[-1].strip():
        body.pop()
        j -= 1
    return _dedent(body), j


def _dedent(lines: list[str]) -> str:
    live = [ln for ln in lines if ln.strip()]
    if not live:
        return ""
    cut = min(_indent(ln) for ln in live)
    out = []
    for ln in lines:
        n, k = 0, 0
        while k < len(ln) and n < cut and ln[k] in " \t":
            n += 4 if ln[k] == "\t" else 1
            k += 1
        out.append(ln[k:])
    return "\n".join(out).strip("\n")
