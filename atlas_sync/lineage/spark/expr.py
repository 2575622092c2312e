"""Spark expressions: one small tree model for both the text and the JSON form, and its lineage.

Spark prints expressions with ``toString``: attributes as ``name#17`` (``L`` suffix for bigint),
aliases as ``expr AS name#21``, functions as ``name(args)``, binary operators in parentheses, string
literals *without quotes*. A full grammar is impossible on that text, so the parser is tolerant: it
builds a bracket structure (calls, parenthesised groups, bracketed lists, juxtaposed words) and
recognises attributes, aliases, subquery markers and ``CASE WHEN`` keywords, which is all the lineage
needs. Everything is iterative (explicit stacks) so very deep or very long expressions never hit
Python's recursion limit.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any

# Aggregate functions by the name Spark prints (lower case). Used to tell AGGREGATION from
# TRANSFORMATION in the text form; the JSON form marks aggregates by their AggregateExpression wrapper.
AGG_FUNCS: frozenset[str] = frozenset(
    [
        "sum",
        "count",
        "max",
        "min",
        "avg",
        "mean",
        "first",
        "last",
        "first_value",
        "last_value",
        "any_value",
        "collect_list",
        "collect_set",
        "array_agg",
        "stddev",
        "stddev_samp",
        "stddev_pop",
        "std",
        "variance",
        "var_samp",
        "var_pop",
        "kurtosis",
        "skewness",
        "corr",
        "covar_pop",
        "covar_samp",
        "approx_count_distinct",
        "approx_percentile",
        "percentile",
        "percentile_approx",
        "percentile_cont",
        "percentile_disc",
        "median",
        "mode",
        "count_if",
        "count_min_sketch",
        "bool_and",
        "bool_or",
        "every",
        "some",
        "any",
        "bit_and",
        "bit_or",
        "bit_xor",
        "max_by",
        "min_by",
        "listagg",
        "string_agg",
        "histogram_numeric",
        "hll_sketch_agg",
        "hll_union_agg",
        "regr_avgx",
        "regr_avgy",
        "regr_count",
        "regr_intercept",
        "regr_r2",
        "regr_slope",
        "regr_sxx",
        "regr_sxy",
        "regr_syy",
        "product",
        "try_sum",
        "try_avg",
        "grouping",
        "grouping_id",
        "pivotfirst",
    ]
)

# Subquery expressions print as ``list#40 []``, ``exists#41 [emp_id#42]``, ``scalar-subquery#29 []``.
SUBQUERY_NAMES: frozenset[str] = frozenset({"list", "exists", "scalar-subquery", "lateral-subquery"})

# ``name#17``, ``qty#8L``; a struct field access follows directly: ``s#222.a``
_ATTR = re.compile(r"^(?P<name>.+?)#(?P<id>\d+)(?P<suffix>L?)(?P<rest>\.\S*)?$")
_SUFFIX = re.compile(r"^#(?P<id>\d+)(?P<suffix>L?)(?P<rest>\.\S*)?$")
_RANKING = frozenset({"rank", "dense_rank", "percent_rank", "cume_dist", "row_number", "ntile", "n_tile"})
_HAS_ID = re.compile(r"#\d")
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")": "(", "]": "[", "}": "{"}

_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}


@dataclass(eq=False, slots=True)
class Expr:
    """One expression node.

    ``kind`` is one of: ``attr`` (``name``, ``id`` - None when unresolved), ``alias`` (``args=[child]``,
    ``name``, ``id``), ``call`` (function ``name``, ``args``), ``group`` (``( .. )`` with comma items),
    ``list`` (``[ .. ]`` with comma items), ``seq`` (juxtaposed items, e.g. ``a = b`` or ``CASE ...``),
    ``word`` (a literal or keyword) and ``subquery`` (``name`` list/exists/scalar-subquery, ``id``,
    ``index`` = which inner plan, ``plan`` = the plan node for the JSON form).
    """

    kind: str
    name: str = ""
    id: int | None = None
    args: list[Expr] = field(default_factory=list)
    text: str | None = None
    dtype: str | None = None
    agg: bool = False
    plan: Any = None
    index: int | None = None
    # Parse positions and the JSON form's qualifier. Slots, not a per-node __dict__: a big plan has
    # millions of nodes and a dict each cost about half of the reader's memory.
    _start: int | None = field(default=None, init=False, repr=False)
    _end: int | None = field(default=None, init=False, repr=False)
    qualifier: str | None = field(default=None, init=False, repr=False)

    def __repr__(self) -> str:
        return f"Expr({self.kind}, {render(self)!r})"


@dataclass
class ExprDeps:
    """What one expression reads: exprId -> kind, plus the subqueries it uses."""

    direct: dict[int, str] = field(default_factory=dict)  # IDENTITY / TRANSFORMATION / AGGREGATION
    indirect: dict[int, str] = field(default_factory=dict)  # CONDITIONAL / WINDOW
    subqueries: list[tuple[Expr, str, bool]] = field(default_factory=list)  # (expr, role, under agg)

    def all_ids(self) -> list[int]:
        return list(dict.fromkeys([*self.direct, *self.indirect]))


# --------------------------------------------------------------------------------------------- parsing
class ExprSyntaxError(ValueError):
    """Unbalanced brackets in an expression (usually a truncated line)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


_TOKEN = re.compile(r"[()\[\]{},]|(?:`[^`]*`?|[^\s()\[\]{},`])+")


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Split into bracket, comma and word tokens: (token, start, end). Backquotes group a word."""
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


@dataclass
class _Frame:
    kind: str  # root / call / group / list
    name: str
    start: int
    open: str = ""
    items: list[list[Expr]] = field(default_factory=lambda: [[]])


def parse_list(text: str) -> list[Expr]:
    """Parse a comma-separated expression list (the inside of ``[...]`` or a node's argument string)."""
    frames: list[_Frame] = [_Frame("root", "", 0)]
    for tok, start, end in _tokens(text):
        top = frames[-1]
        cur = top.items[-1]
        if tok in _OPEN:
            name = ""
            kind = "group" if tok == "(" else "list"
            fstart = start
            # ``name(`` with no space is a call (``'max(`` unresolved); ``)`` right before ``(`` is not.
            if (
                tok == "("
                and cur
                and (cur[-1].kind == "word" or (cur[-1].kind == "attr" and cur[-1].id is None))
                and _end(cur[-1]) == start
            ):
                prev = cur.pop()
                raw = prev.text or prev.name
                fstart = start - len(raw)
                name = raw[1:] if raw.startswith("'") else raw
                kind = "call"
            frames.append(_Frame(kind, name, fstart, tok))
            continue
        if tok in _CLOSE:
            if len(frames) == 1 or frames[-1].open != _CLOSE[tok]:
                raise ExprSyntaxError(f"unbalanced {tok!r}", start)
            fr = frames.pop()
            args = [_seq(it, text) for it in fr.items]
            if len(args) == 1 and args[0] is None:
                args = []
            node = Expr(fr.kind, name=fr.name, args=[a for a in args if a is not None])
            node.text = text[fr.start : end]
            node._start = fr.start
            node._end = end
            frames[-1].items[-1].append(node)
            continue
        if tok == ",":
            top.items.append([])
            continue
        # a word
        m = _SUFFIX.match(tok)
        if m and cur and _end(cur[-1]) == start:
            prev = cur[-1]
            pstart = start if prev._start is None else prev._start
            name = text[pstart:start]
            if _HAS_ID.search(name):
                # ``<lambda>(name#1)#2``: a Python UDF call with its result id; its inputs are what count
                prev.text = text[pstart:end]
                prev._end = end
                continue
            # ``max(age)#40``: an attribute whose generated name contains brackets (generated names never
            # hold expression ids)
            cur.pop()
            node = _field(Expr("attr", name=name, id=int(m["id"]), dtype="long" if m["suffix"] else None), m)
            start = pstart
            node.text = text[start:end]
        else:
            # The token is the node's text: no second copy. Interned: a big plan repeats the same
            # keywords, literals and operators in every expression.
            tok = sys.intern(tok)
            node = _word(tok)
            node.text = tok
        node._start = start
        node._end = end
        cur.append(node)
    if len(frames) != 1:
        raise ExprSyntaxError(f"unclosed {frames[-1].open!r}", frames[-1].start)
    items = [_seq(it, text) for it in frames[0].items]
    out = [as_alias(x) for x in items if x is not None]
    # The positions are only for parsing; dropped, they cost nothing in the plan kept until the end.
    stack = list(out)
    while stack:
        x = stack.pop()
        x._start = x._end = None
        stack.extend(x.args)
    return out


def parse_expr(text: str) -> Expr:
    """Parse one expression (commas at top level, if any, make a ``group``-less ``seq`` of items)."""
    items = parse_list(text)
    if len(items) == 1:
        return items[0]
    e = Expr("seq", args=items)
    e.text = text
    return e


def _start(e: Expr, default: int = -1) -> int:
    return default if e._start is None else e._start


def _end(e: Expr) -> int:
    return -1 if e._end is None else e._end


def _word(tok: str) -> Expr:
    if tok.startswith("'") and len(tok) > 1 and not tok.startswith("''"):
        # unresolved attribute ('name, 'e.dept_id) or unresolved function name ('max before '(')
        return Expr("attr", name=tok[1:], id=None)
    m = _ATTR.match(tok)
    if m:
        name = m["name"]
        if name in SUBQUERY_NAMES:
            return Expr("subquery", name=name, id=int(m["id"]))
        attr = Expr(
            "attr",
            name=sys.intern(name.lstrip("-~!")),
            id=int(m["id"]),
            dtype="long" if m["suffix"] else None,
        )
        return _field(attr, m)
    return Expr("word", name=tok)


def _field(attr: Expr, m: re.Match[str]) -> Expr:
    """``s#222.a``: reading a struct field is a transformation of the column, not the column itself."""
    if not m["rest"]:
        return attr
    return Expr("call", name="getfield", args=[attr])


def _seq(items: list[Expr], src: str) -> Expr | None:
    if not items:
        return None
    # a subquery marker swallows its ``[outer refs]`` list
    merged: list[Expr] = []
    marked: set[int] = set()
    for it in items:
        if it.kind == "list" and merged and merged[-1].kind == "subquery" and id(merged[-1]) not in marked:
            merged[-1].args = it.args
            merged[-1].text = src[_start(merged[-1]) : _end(it)]
            merged[-1]._end = _end(it)
            marked.add(id(merged[-1]))
            continue
        merged.append(it)
    for it in merged:
        if it.kind == "subquery" and id(it) not in marked:
            # Spark always prints a subquery's ``[outer refs]``, even empty: without one this is an
            # attribute of that name, e.g. the ``exists#1`` column an ExistenceJoin adds
            it.kind = "attr"
    for it in merged:
        if it.kind == "call" and it.name.lower() in AGG_FUNCS:
            it.agg = True
    if len(merged) == 1:
        return merged[0]
    e = Expr("seq", args=merged)
    e._start = _start(merged[0], 0)
    e._end = _end(merged[-1])
    e.text = src[_start(e) : _end(e)]
    return e


def as_alias(e: Expr) -> Expr:
    """``expr AS name#id`` at the top level of an item -> an alias node (else ``e`` unchanged)."""
    if e.kind == "seq" and len(e.args) >= 3:
        last, kw = e.args[-1], e.args[-2]
        if kw.kind == "word" and kw.name == "AS" and last.kind == "attr":
            body = e.args[:-2]
            child = body[0] if len(body) == 1 else Expr("seq", args=body)
            if child is not body[0] and e.text is not None:
                # the original text up to the `` AS ``
                cut = e.text.rfind(" AS ")
                child.text = e.text[:cut] if cut > 0 else None
            a = Expr("alias", name=last.name, id=last.id, args=[child], dtype=last.dtype)
            a.text = e.text
            return a
    return e


_SPECIAL = re.compile(r"`[^`]*`?|[()\[\]{},]")


def split_top(text: str) -> list[str]:
    """Split a node's argument string on top-level commas (brackets and backquotes respected)."""
    parts: list[str] = []
    depth = 0
    start = 0
    for m in _SPECIAL.finditer(text):
        ch = m.group()
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start : m.start()].strip())
            start = m.end()
    last = text[start:].strip()
    if last or parts:
        parts.append(last)
    return parts


def strip_brackets(text: str) -> str | None:
    """The inside of ``[...]`` when ``text`` is exactly one bracketed list, else None."""
    t = text.strip()
    if not (t.startswith("[") and t.endswith("]")):
        return None
    depth = 0
    for m in _SPECIAL.finditer(t):
        ch = m.group()
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0 and m.end() != len(t):
                return None
    return t[1:-1]


# ------------------------------------------------------------------------------------------- rendering
def render(e: Expr) -> str:
    """Spark-like text of an expression (the original text when it was parsed from text)."""
    out: list[str] = []
    stack: list[Any] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.append(x)
            continue
        if x.text is not None:
            out.append(x.text)
            continue
        k = x.kind
        if k == "attr":
            out.append(
                x.name + (f"#{x.id}" + ("L" if x.dtype in ("long", "bigint") else ""))
                if x.id is not None
                else "'" + x.name
            )
        elif k == "word":
            out.append(x.name)
        elif k == "alias":
            stack.extend([f" AS {x.name}#{x.id}" + ("L" if x.dtype in ("long", "bigint") else ""), x.args[0]])
        elif k == "subquery":
            inner = ", ".join(render(a) for a in x.args)
            out.append(f"{x.name}#{x.id} [{inner}]")
        else:
            opener, closer = {"call": (x.name + "(", ")"), "group": ("(", ")"), "list": ("[", "]")}.get(
                k, ("", "")
            )
            sep = " " if k == "seq" else "," if (k == "group" and x.name == "in") else ", "
            parts: list[Any] = [opener]
            for i, a in enumerate(x.args):
                if i:
                    parts.append(sep)
                parts.append(a)
            parts.append(closer)
            stack.extend(reversed(parts))
    return "".join(out)


def output_of(e: Expr) -> tuple[str, int | None, str | None] | None:
    """The attribute an output-list item defines: (name, exprId, dataType) or None."""
    if e.kind in ("alias", "attr"):
        return e.name, e.id, e.dtype
    if e.kind == "call" and e.name == "outer" and len(e.args) == 1:
        return output_of(e.args[0])
    return None


def refs(e: Expr) -> list[int]:
    """Every resolved attribute id an expression reads (in order, without duplicates)."""
    seen: dict[int, None] = {}
    stack = [e]
    while stack:
        x = stack.pop()
        if x.kind == "attr" and x.id is not None:
            seen[x.id] = None
        elif x.kind == "subquery":
            continue
        stack.extend(reversed(x.args))
    return list(seen)


def subqueries(e: Expr) -> list[Expr]:
    out: list[Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if x.kind == "subquery":
            out.append(x)
            continue
        stack.extend(reversed(x.args))
    return out


def analyze(e: Expr) -> ExprDeps:
    """Classify what an output expression reads.

    A bare attribute (after stripping the alias) is IDENTITY; an attribute inside an aggregate function
    is AGGREGATION; any other value position is TRANSFORMATION. Attributes in ``CASE WHEN`` conditions or
    the first argument of ``if`` are CONDITIONAL; inside ``windowspecdefinition`` they are WINDOW.
    """
    deps = ExprDeps()
    while e.kind == "alias":
        e = e.args[0]
    bare = e
    while bare.kind == "call" and bare.name == "outer" and len(bare.args) == 1:
        bare = bare.args[0]
    if bare.kind == "attr":
        if bare.id is not None:
            deps.direct[bare.id] = "IDENTITY"
        return deps
    if bare.kind == "subquery":
        deps.subqueries.append((bare, "identity", False))
        return deps
    stack: list[tuple[Expr, str, bool]] = [(e, "value", False)]
    while stack:
        x, role, agg = stack.pop()
        agg = agg or x.agg
        k = x.kind
        if k == "attr":
            if x.id is None:
                continue
            if role == "value":
                kind = "AGGREGATION" if agg else "TRANSFORMATION"
                old = deps.direct.get(x.id)
                if old is None or _RANK[kind] > _RANK[old]:
                    deps.direct[x.id] = kind
            else:
                deps.indirect.setdefault(x.id, "CONDITIONAL" if role == "cond" else "WINDOW")
            continue
        if k == "subquery":
            deps.subqueries.append((x, role, agg))
            continue
        if k == "call":
            lname = x.name.lower()
            if lname in ("if", "iff") and x.args:
                stack.extend((a, role, agg) for a in reversed(x.args[1:]))
                stack.append((x.args[0], "cond" if role == "value" else role, agg))
                continue
            if lname == "pivotfirst" and x.args:
                # pivotfirst(pivotColumn, value, pivot values...): the pivot column picks the cell
                stack.extend((a, role, agg) for a in reversed(x.args[1:]))
                stack.append((x.args[0], "cond" if role == "value" else role, agg))
                continue
            if lname in _RANKING:
                # rank(x) prints its window's ORDER BY columns: they order rows, they are not the value
                stack.extend((a, "window", agg) for a in reversed(x.args))
                continue
            if lname == "windowspecdefinition":
                stack.extend((a, "window", agg) for a in reversed(x.args))
                continue
            stack.extend((a, role, agg) for a in reversed(x.args))
            continue
        if k == "seq":
            # CASE WHEN <cond> THEN <value> ... ELSE <value> END, possibly nested within one sequence
            roles: list[str] = []
            cur = role
            item_roles: list[tuple[Expr, str]] = []
            if_cond = False  # ``if (cond) a else b`` (how Spark prints If)
            for a in x.args:
                if a.kind == "word" and a.name == "if":
                    if_cond = True
                    continue
                if a.kind == "word" and a.name == "else":
                    continue
                if if_cond:
                    item_roles.append((a, "cond" if cur == "value" else cur))
                    if_cond = False
                    continue
                if a.kind == "word":
                    w = a.name
                    if w == "CASE":
                        roles.append(cur)
                    elif w == "WHEN" and roles:
                        cur = "cond" if roles[-1] == "value" else roles[-1]
                    elif w in ("THEN", "ELSE") and roles:
                        cur = roles[-1]
                    elif w == "END" and roles:
                        cur = roles.pop()
                    continue
                item_roles.append((a, cur))
            stack.extend((a, r, agg) for a, r in reversed(item_roles))
            continue
        stack.extend((a, role, agg) for a in reversed(x.args))
    return deps


def all_refs_deps(e: Expr) -> ExprDeps:
    """Every attribute of a predicate/key expression, as plain references (kind decided by the caller)."""
    deps = ExprDeps()
    for i in refs(e):
        deps.direct[i] = "TRANSFORMATION"
    deps.subqueries = [(s, "value", False) for s in subqueries(e)]
    return deps


def conjuncts(e: Expr) -> list[Expr]:
    """Split a predicate on its top-level ``AND``s (outer parentheses removed)."""
    out: list[Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        while x.kind == "group" and len(x.args) == 1:
            x = x.args[0]
        if x.kind == "seq" and any(a.kind == "word" and a.name == "AND" for a in x.args):
            parts: list[list[Expr]] = [[]]
            for a in x.args:
                if a.kind == "word" and a.name == "AND":
                    parts.append([])
                else:
                    parts[-1].append(a)
            subs = [p[0] if len(p) == 1 else Expr("seq", args=p) for p in parts if p]
            stack.extend(reversed(subs))
            continue
        out.append(x)
    return out
