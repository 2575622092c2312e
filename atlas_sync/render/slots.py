"""Templates rendered without producing text: a fast path with the same result as Jinja + json.loads.

A profile template that is a JSON document whose only dynamic parts are whole values written as
``{{ <expression> | tojson }}`` (optionally after ``{% set name = <expression> %}`` lines, and nothing
else: no ``if``, ``for``, ``include`` ...) is split once into a skeleton (the JSON with a marker in
each value slot) and one sandboxed Jinja program that evaluates the expressions. Rendering an entity
then evaluates the expressions and puts their JSON values into a copy of the skeleton: the same
dict ``json.loads`` would give for the rendered text, without writing and parsing the text. Any
other template, or one whose skeleton is not JSON with each slot a whole value, renders as before.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import jinja2
from jinja2 import nodes

_MARK = "\x00atlas-sync-slot-{}\x00"
_MARK_RE = re.compile("\x00atlas-sync-slot-([0-9]+)\x00")

Filler = Callable[[dict[str, Any]], Any]


def compile_slots(env: jinja2.Environment, source: str, encode: Callable[[Any], str]) -> Filler | None:
    """A function rendering ``source`` to its parsed JSON for a context, or None when the template
    is not of the simple form. ``encode`` is the ``tojson`` filter (used to reject what it rejects)."""
    tree = env.parse(source)
    assigns: list[nodes.Node] = []
    output: nodes.Output | None = None
    for node in tree.body:
        if isinstance(node, nodes.Assign) and output is None and isinstance(node.target, nodes.Name):
            assigns.append(node)
        elif isinstance(node, nodes.Output) and output is None:
            output = node
        elif isinstance(node, nodes.Output) and all(
            isinstance(c, nodes.TemplateData) and not c.data.strip() for c in node.nodes
        ):
            continue
        else:
            return None
    if output is None:
        return None
    text: list[str] = []
    exprs: list[nodes.Expr] = []
    for child in output.nodes:
        if isinstance(child, nodes.TemplateData):
            text.append(child.data)
        elif (
            isinstance(child, nodes.Filter)
            and child.name == "tojson"
            and child.node is not None
            and not child.args
            and not child.kwargs
            and child.dyn_args is None
            and child.dyn_kwargs is None
        ):
            text.append(json.dumps(_MARK.format(len(exprs))))
            exprs.append(child.node)
        else:
            return None
    try:
        skeleton = json.loads("".join(text))
    except ValueError:
        return None
    found: list[int] = []
    if not _find(skeleton, found) or sorted(found) != list(range(len(exprs))):
        return None
    body = list(assigns) + [
        nodes.Assign(nodes.Name(f"atlas_sync_slot_{i}", "store"), e, lineno=e.lineno)
        for i, e in enumerate(exprs)
    ]
    program = env.from_string(nodes.Template(body, lineno=1))
    # Its globals as one plain dict: a context is made per entity, and Jinja copies the globals into
    # each (a ChainMap of the template's and the environment's, walked twice per context otherwise).
    program.globals = dict(program.globals)
    marks = {_MARK.format(i): f"atlas_sync_slot_{i}" for i in range(len(exprs))}
    build = _compiled_builder(skeleton, marks, encode) or _builder(skeleton, marks, encode)

    def fill(context: dict[str, Any]) -> Any:
        ctx = program.new_context(context)
        for _ in program.root_render_func(ctx):
            pass
        return build(ctx.vars)

    return fill


def _find(value: Any, found: list[int]) -> bool:
    """Collect slot numbers; False when a marker is a key or part of a longer string."""
    if isinstance(value, dict):
        return all("\x00" not in k and _find(v, found) for k, v in value.items())
    if isinstance(value, list):
        return all(_find(v, found) for v in value)
    if isinstance(value, str) and "\x00" in value:
        m = _MARK_RE.fullmatch(value)
        if m is None:
            return False
        found.append(int(m.group(1)))
    return True


def _builder(
    value: Any, marks: dict[str, str], encode: Callable[[Any], str]
) -> Callable[[dict[str, Any]], Any]:
    """A function making a fresh copy of the skeleton ``value`` with each slot's JSON value taken from
    the program's variables: the skeleton is walked once here, not once per entity."""
    if isinstance(value, dict):
        items = [(k, _builder(v, marks, encode)) for k, v in value.items()]
        return lambda values: {k: build(values) for k, build in items}
    if isinstance(value, list):
        parts = [_builder(v, marks, encode) for v in value]
        return lambda values: [build(values) for build in parts]
    if isinstance(value, str) and value.startswith("\x00"):
        name = marks[value]
        return lambda values: _json_value(values[name], encode)
    return lambda values: value  # a JSON scalar: immutable, shared


def _compiled_builder(
    value: Any, marks: dict[str, str], encode: Callable[[Any], str]
) -> Callable[[dict[str, Any]], Any] | None:
    """What :func:`_builder` makes, as one Python expression (a dict and list display per level, no
    call per key): ``lambda V: {C[0]: C[1], C[2]: J(V[C[3]], E), ...}``. Every key, constant and slot
    name is an element of ``C``, never text in the code. None when Python cannot compile it (a
    skeleton nested too deep): :func:`_builder` then."""
    consts: list[Any] = []

    def const(v: Any) -> str:
        consts.append(v)
        return f"C[{len(consts) - 1}]"

    def expr(v: Any) -> str:
        if isinstance(v, dict):
            return "{" + ", ".join(f"{const(k)}: {expr(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(expr(x) for x in v) + "]"
        if isinstance(v, str) and v.startswith("\x00"):
            return f"J(V[{const(marks[v])}], E)"
        return const(v)  # a JSON scalar: immutable, shared

    try:
        code = compile(f"lambda V: {expr(value)}", "<atlas-sync value slots>", "eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    built: Callable[[dict[str, Any]], Any] = eval(code, {"C": consts, "J": _json_value, "E": encode})  # noqa: S307
    return built


def _json_value(value: Any, encode: Callable[[Any], str]) -> Any:
    """``json.loads(encode(value))`` without the round trip for values that are JSON already."""
    if _is_json(value):
        return value
    return json.loads(encode(value))


_LEAVES = (str, bool, int, type(None))


def _is_json(value: Any) -> bool:
    # (loops, not all() over a generator, and strings and numbers inside checked here: one call per
    # container, a third of the cost for the references every process and column lineage holds)
    t = type(value)
    if t in _LEAVES:
        return True
    if t is float:
        return math.isfinite(value)
    if t is list:
        for v in value:  # noqa: SIM110
            if type(v) not in _LEAVES and not _is_json(v):
                return False
        return True
    if t is dict:
        for k, v in value.items():
            if type(k) is not str or (type(v) not in _LEAVES and not _is_json(v)):
                return False
        return True
    return False
