"""A small parser of Power Query M (the formula language of Power BI's partitions and shared expressions).

Enough of M for lineage: ``let ... in`` expressions, records, lists, function calls, item access
(``Source{[Schema="s",Item="t"]}``), field access (``[Data]``), strings with ``""`` escapes, quoted names
(``#"Changed Type"``), ``each`` / function literals, ``if``, ``try ... otherwise``, ``meta`` and binary
operators. What it does not understand is a :class:`MSyntaxError` with its line, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


class MSyntaxError(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"{message} (line {line})")
        self.line = line


@dataclass
class Tok:
    kind: str  # name | qname | str | num | op | kw | eof
    value: str
    pos: int
    end: int
    line: int


_KEYWORDS = {
    "let", "in", "each", "if", "then", "else", "true", "false", "null", "meta", "type", "as", "is", "not",
    "and", "or", "try", "otherwise", "error", "section", "shared",
}  # fmt: skip
_OPS = (
    "=>",
    "<=",
    ">=",
    "<>",
    "..",
    "??",
    "=",
    ",",
    ";",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "&",
    "+",
    "-",
    "*",
    "/",
    "<",
    ">",
    "?",
    "@",
    "!",
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_NUM = re.compile(r"(?:0[xX][0-9A-Fa-f]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)")


def tokenize(text: str) -> list[Tok]:
    out: list[Tok] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace() or c == "\ufeff":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise MSyntaxError("unterminated comment", line)
            line += text.count("\n", i, j)
            i = j + 2
        elif c == '"' or text.startswith('#"', i):
            start = i
            i += 2 if c == "#" else 1
            buf: list[str] = []
            while True:
                if i >= n:
                    raise MSyntaxError("unterminated string", line)
                if text[i] == '"':
                    if text.startswith('""', i):
                        buf.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                if text[i] == "\n":
                    line += 1
                buf.append(text[i])
                i += 1
            out.append(Tok("qname" if c == "#" else "str", _escapes("".join(buf)), start, i, line))
        elif c == "#" and _NAME.match(text, i + 1):
            m = _NAME.match(text, i + 1)
            assert m is not None
            out.append(Tok("name", "#" + m.group(0), i, m.end(), line))
            i = m.end()
        elif c.isdigit():
            m = _NUM.match(text, i)
            assert m is not None
            out.append(Tok("num", m.group(0), i, m.end(), line))
            i = m.end()
        elif _NAME.match(text, i):
            m = _NAME.match(text, i)
            assert m is not None
            word = m.group(0)
            out.append(Tok("kw" if word in _KEYWORDS else "name", word, i, m.end(), line))
            i = m.end()
        else:
            op = next((o for o in _OPS if text.startswith(o, i)), None)
            if op is None:
                raise MSyntaxError(f"unexpected character {c!r}", line)
            out.append(Tok("op", op, i, i + len(op), line))
            i += len(op)
    out.append(Tok("eof", "", n, n, line))
    return out


_ESCAPE = re.compile(r"#\(([^()]*)\)")
_NAMED = {"lf": "\n", "cr": "\r", "tab": "\t", "#": "#"}


def _escapes(text: str) -> str:
    """M's character escapes in a string: ``#(lf)``, ``#(cr,lf)``, ``#(tab)``, ``#(#)``, ``#(000D)``."""

    def sub(m: re.Match[str]) -> str:
        out = []
        for part in m.group(1).split(","):
            p = part.strip()
            if p.lower() in _NAMED:
                out.append(_NAMED[p.lower()])
            elif re.fullmatch(r"[0-9A-Fa-f]{4}|[0-9A-Fa-f]{8}", p):
                out.append(chr(int(p, 16)))
            else:
                return m.group(0)
        return "".join(out)

    return _ESCAPE.sub(sub, text) if "#(" in text else text


# ---------------------------------------------------------------------------- AST
@dataclass
class Let:
    steps: list[tuple[str, Any]]
    body: Any


@dataclass
class Ident:
    name: str


@dataclass
class Lit:
    value: Any  # str, float, bool or None


@dataclass
class Call:
    fn: Any
    args: list[Any]


@dataclass
class ListE:
    items: list[Any]


@dataclass
class Rec:
    fields: list[tuple[str, Any]]


@dataclass
class Item:
    target: Any
    key: Any


@dataclass
class Field:
    target: Any
    name: str


@dataclass
class Func:
    body: Any


@dataclass
class If:
    cond: Any
    then: Any
    other: Any


@dataclass
class Bin:
    op: str
    left: Any
    right: Any


@dataclass
class Other:
    what: str = field(default="")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    @property
    def t(self) -> Tok:
        return self.toks[self.i]

    def is_(self, value: str, kind: str | None = None) -> bool:
        return self.t.value == value and (kind is None or self.t.kind == kind) and self.t.kind in ("op", "kw")

    def take(self, value: str) -> Tok:
        if not self.is_(value):
            raise MSyntaxError(f"expected {value!r}, found {self.t.value or 'the end'!r}", self.t.line)
        tok = self.t
        self.i += 1
        return tok

    def expr(self) -> Any:
        if self.is_("let"):
            self.i += 1
            steps = []
            while True:
                name = self.gen_name("=")
                self.take("=")
                steps.append((name, self.expr()))
                if self.is_(","):
                    self.i += 1
                    continue
                break
            self.take("in")
            return Let(steps, self.expr())
        if self.is_("each"):
            self.i += 1
            return Func(self.expr())
        if self.is_("if"):
            self.i += 1
            c = self.expr()
            self.take("then")
            a = self.expr()
            self.take("else")
            return If(c, a, self.expr())
        if self.is_("try"):
            self.i += 1
            body = self.expr()
            if self.is_("otherwise"):
                self.i += 1
                self.expr()
            return body
        if self.is_("error"):
            self.i += 1
            self.expr()
            return Other("error")
        if self.is_("(") and self._is_function():
            self._skip_params()
            self.take("=>")
            return Func(self.expr())
        return self.binary()

    def _is_function(self) -> bool:
        depth, j = 0, self.i
        while self.toks[j].kind != "eof":
            v = self.toks[j]
            if v.kind == "op" and v.value == "(":
                depth += 1
            elif v.kind == "op" and v.value == ")":
                depth -= 1
                if depth == 0:
                    k = j + 1
                    if self.toks[k].kind == "kw" and self.toks[k].value == "as":
                        k += 2  # a return type: (x) as table =>
                        while self.toks[k].kind == "name" or (
                            self.toks[k].kind == "kw" and self.toks[k].value == "nullable"
                        ):
                            k += 1
                    return self.toks[k].kind == "op" and self.toks[k].value == "=>"
            j += 1
        return False

    def _skip_params(self) -> None:
        self.take("(")
        depth = 1
        while depth and self.t.kind != "eof":
            if self.is_("("):
                depth += 1
            elif self.is_(")"):
                depth -= 1
            self.i += 1
        while not self.is_("=>") and self.t.kind != "eof":
            self.i += 1

    def binary(self) -> Any:
        left = self.unary()
        while (
            self.t.kind == "op"
            and self.t.value in ("&", "+", "-", "*", "/", "=", "<>", "<", ">", "<=", ">=", "??")
        ) or (self.t.kind == "kw" and self.t.value in ("and", "or", "as", "is", "meta")):
            op = self.t.value
            self.i += 1
            if op in ("as", "is"):
                self.type_expr()
                continue
            right = self.unary()
            left = left if op == "meta" else Bin(op, left, right)
        return left

    def type_expr(self) -> None:
        """A type (``nullable text``, ``table [a = text]``, ``{number}``, ``Int64.Type``): skipped."""
        while self.t.kind == "name" and self.t.value in (
            "nullable",
            "optional",
            "table",
            "record",
            "list",
            "function",
        ):
            self.i += 1
            if self.is_("[") or self.is_("{") or self.is_("("):
                break
        if self.is_("[") or self.is_("{") or self.is_("("):
            self.primary()
        elif self.t.kind in ("name", "qname"):
            self.postfix()

    def unary(self) -> Any:
        if self.t.kind == "op" and self.t.value in ("-", "+"):
            self.i += 1
            return self.unary()
        if self.is_("not"):
            self.i += 1
            return Bin("not", Lit(None), self.unary())
        if self.is_("type"):
            self.i += 1
            self.type_expr()
            return Other("type")
        return self.postfix()

    def postfix(self) -> Any:
        node = self.primary()
        while True:
            if self.is_("("):
                self.i += 1
                args = []
                while not self.is_(")"):
                    args.append(self.expr())
                    if self.is_(","):
                        self.i += 1
                    elif not self.is_(")"):
                        raise MSyntaxError(f"expected ',' or ')', found {self.t.value!r}", self.t.line)
                self.i += 1
                node = Call(node, args)
            elif self.is_("{"):
                self.i += 1
                key = self.expr()
                self.take("}")
                if self.is_("?"):
                    self.i += 1
                node = Item(node, key)
            elif self.is_("["):
                self.i += 1
                if self.is_("["):  # [[a],[b]]: a projection
                    while not self.is_("]") and self.t.kind != "eof":
                        self.i += 1
                        self.gen_name("]")
                        self.take("]")
                        if self.is_(","):
                            self.i += 1
                    self.take("]")
                    node = Field(node, "")
                else:
                    name = self.gen_name("]")
                    self.take("]")
                    node = Field(node, name)
                if self.is_("?"):
                    self.i += 1
            else:
                return node

    def _implicit_field(self) -> bool:
        """Whether the ``[`` here opens ``[name]`` (a field of ``_``) rather than a record."""
        j = self.i + 1
        while self.toks[j].kind != "eof":
            v = self.toks[j]
            if v.kind == "op" and v.value in ("=", "["):
                return False
            if v.kind == "op" and v.value == "]":
                return j > self.i + 1
            j += 1
        return False

    def gen_name(self, stop: str) -> str:
        """A generalized identifier (``Data``, ``Column Name``, ``#"x"``) up to ``stop``."""
        if self.t.kind == "qname":
            tok = self.t
            self.i += 1
            return tok.value
        start = self.t.pos
        end = start
        while not (self.t.kind == "op" and self.t.value == stop) and self.t.kind != "eof":
            if self.t.kind not in ("name", "kw", "num") and not (
                self.t.kind == "op" and self.t.value in (".", "-")
            ):
                raise MSyntaxError(f"unexpected {self.t.value!r} in a name", self.t.line)
            end = self.t.end
            self.i += 1
        if end == start:
            raise MSyntaxError(f"expected a name, found {self.t.value or 'the end'!r}", self.t.line)
        return self.text[start:end].strip()

    def primary(self) -> Any:
        t = self.t
        if t.kind == "str":
            self.i += 1
            return Lit(t.value)
        if t.kind == "num":
            self.i += 1
            return Lit(float(int(t.value, 16)) if t.value.lower().startswith("0x") else float(t.value))
        if t.kind in ("name", "qname"):
            self.i += 1
            return Ident(t.value)
        if t.kind == "kw" and t.value in ("true", "false", "null"):
            self.i += 1
            return Lit({"true": True, "false": False, "null": None}[t.value])
        if self.is_("@"):
            self.i += 1
            return self.primary()
        if self.is_("("):
            self.i += 1
            e = self.expr()
            self.take(")")
            return e
        if self.is_("{"):
            self.i += 1
            items = []
            while not self.is_("}"):
                items.append(self.expr())
                if self.is_(".."):
                    self.i += 1
                    self.expr()
                if self.is_(","):
                    self.i += 1
                elif not self.is_("}"):
                    raise MSyntaxError(f"expected ',' or '}}', found {self.t.value!r}", self.t.line)
            self.i += 1
            return ListE(items)
        if self.is_("[") and self._implicit_field():
            self.i += 1
            name = self.gen_name("]")
            self.take("]")
            return Field(Ident("_"), name)  # [a] in an each: a field of the row
        if self.is_("["):
            self.i += 1
            fields = []
            while not self.is_("]"):
                name = self.gen_name("=")
                self.take("=")
                fields.append((name, self.expr()))
                if self.is_(","):
                    self.i += 1
                elif not self.is_("]"):
                    raise MSyntaxError(f"expected ',' or ']', found {self.t.value!r}", self.t.line)
            self.i += 1
            return Rec(fields)
        raise MSyntaxError(f"unexpected {t.value or 'end of the expression'!r}", t.line)


def parse(text: str) -> Any:
    """The AST of one M expression; :class:`MSyntaxError` when it does not parse."""
    p = _Parser(text)
    node = p.expr()
    if p.t.kind != "eof":
        raise MSyntaxError(f"unexpected {p.t.value!r} after the expression", p.t.line)
    return node


def section_members(text: str) -> dict[str, str]:
    """The members of an M section document (``section Section1; shared Name = expr; ...``, as a .pbix's
    DataMashup holds its queries): name -> the text of its expression. Nothing when it does not tokenize."""
    try:
        toks = tokenize(text)
    except MSyntaxError:
        return {}
    out: dict[str, str] = {}
    i = 0
    if len(toks) > 2 and toks[0].value == "section" and toks[0].kind == "kw":
        i = 3  # section Name ;
    while i < len(toks) and toks[i].kind != "eof":
        if toks[i].kind == "kw" and toks[i].value == "shared":
            i += 1
        if not (i + 1 < len(toks) and toks[i].kind in ("name", "qname") and toks[i + 1].value == "="):
            return out  # not a member: stop rather than guess
        name, start, j, depth = toks[i].value, toks[i + 1].end, i + 2, 0
        while toks[j].kind != "eof" and not (depth == 0 and toks[j].kind == "op" and toks[j].value == ";"):
            if toks[j].kind == "op" and toks[j].value in ("(", "[", "{"):
                depth += 1
            elif toks[j].kind == "op" and toks[j].value in (")", "]", "}"):
                depth -= 1
            j += 1
        out[name] = text[start : toks[j].pos].strip()
        i = j + 1
    return out
