"""T-SQL clauses sqlglot does not parse where T-SQL allows them, rewritten before parsing.

* ``UPDATE|DELETE|INSERT TOP (n) [PERCENT]``: the TOP clause is blanked (it limits how many rows
  change, not which columns feed which);
* ``OUTPUT ... [INTO target [(cols)]]`` of INSERT/UPDATE/DELETE/MERGE: blanked from the statement;
  with ``INTO`` it is a second flow, from the changed rows (``inserted.c``/``deleted.c`` are the
  statement's target, MERGE's source columns its source) into ``target``;
* ``INSERT ... EXEC proc`` / ``EXEC ('SELECT ...')``: the rows come from a procedure's result set (a
  warning, the target is still written) or from a literal query (analysed as ``INSERT ... SELECT``).

Blanks keep every other character's line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from atlas_sync.lineage.sql.procedural import body_tokens, upper_text

_DML = ("UPDATE", "DELETE", "INSERT", "MERGE")
# Where an OUTPUT clause without INTO ends: the next clause of its statement.
_AFTER_OUTPUT = {"FROM", "WHERE", "SELECT", "VALUES", "DEFAULT", "EXEC", "EXECUTE", "WITH", "OPTION"}
_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER, TokenType.DOT, TokenType.PARAMETER, TokenType.HASH)


@dataclass
class Rewritten:
    """A T-SQL statement's text with the clauses sqlglot cannot read taken out."""

    text: str
    output_into: str | None = None  # OUTPUT's target as written (``@t``, ``dw.log``)
    output_columns: list[str] = field(default_factory=list)  # its column list, as written
    output_exprs: list[str] = field(default_factory=list)  # what OUTPUT returns, as written
    exec_call: str | None = None  # INSERT ... EXEC proc: the call, when its SQL is unknown


def rewrite(text: str, tokens: list[Token] | None, dialect: str) -> Rewritten | None:
    """The statement without TOP/OUTPUT/EXEC clauses, or None when it has none."""
    base = 0  # where the text starts in the SQL the tokens index
    if tokens is None:
        try:
            tokens = body_tokens(text, dialect)
        except SqlglotError:
            return None
    elif tokens:
        base = tokens[0].start - (len(text) - len(text.lstrip()))
    if len(tokens) < 3 or upper_text(tokens[0]) not in (*_DML, "WITH"):
        return None
    chars = list(text)
    out = Rewritten(text)
    changed = False

    def blank(lo: int, hi: int) -> None:  # token indexes, inclusive
        for k in range(tokens[lo].start - base, tokens[hi].end + 1 - base):
            if chars[k] != "\n":
                chars[k] = " "

    if upper_text(tokens[1]) == "TOP" and tokens[2].token_type == TokenType.L_PAREN:
        close = _close(tokens, 2)
        if close is not None:
            if upper_text(tokens[min(close + 1, len(tokens) - 1)]) == "PERCENT":
                close += 1
            blank(1, close)
            changed = True
    first_dml = next((k for k, t in enumerate(tokens) if upper_text(t) in _DML), 0)
    output = _output_clause(tokens)
    if output is not None:
        start, end, into = output
        out.output_exprs = _items(text, tokens, start + 1, into if into is not None else end + 1, base)
        if into is not None:
            name_end = into + 1
            while name_end < len(tokens) and tokens[name_end].token_type in _NAME_TOKENS:
                name_end += 1
            out.output_into = text[tokens[into + 1].start - base : tokens[name_end - 1].end + 1 - base]
            if name_end < len(tokens) and tokens[name_end].token_type == TokenType.L_PAREN:
                close = _close(tokens, name_end)
                if close is not None:
                    out.output_columns = _items(text, tokens, name_end + 1, close, base)
        blank(start, end)
        changed = True
    if upper_text(tokens[first_dml]) == "INSERT":
        for k in range(first_dml + 1, len(tokens)):
            if upper_text(tokens[k]) in ("EXEC", "EXECUTE") and _depth(tokens, k) == 0:
                call = text[tokens[k].start - base : tokens[-1].end + 1 - base]
                literal = [
                    t for t in tokens[k + 1 :] if t.token_type not in (TokenType.L_PAREN, TokenType.R_PAREN)
                ]
                if len(literal) == 1 and literal[0].token_type in (
                    TokenType.STRING,
                    TokenType.NATIONAL_STRING,
                ):
                    query = literal[0].text  # EXEC ('SELECT ...'): known SQL
                else:
                    query, out.exec_call = "VALUES (NULL)", call  # rows of a result set nobody can see
                head = "".join(chars)[: tokens[k].start - base]
                out.text = head + query
                return out
    if not changed:
        return None
    out.text = "".join(chars)
    return out


def _close(tokens: list[Token], i: int) -> int | None:
    depth = 0
    for k in range(i, len(tokens)):
        if tokens[k].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[k].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return k
    return None


def _depth(tokens: list[Token], i: int) -> int:
    depth = 0
    for t in tokens[:i]:
        if t.token_type == TokenType.L_PAREN:
            depth += 1
        elif t.token_type == TokenType.R_PAREN:
            depth -= 1
    return depth


def _output_clause(tokens: list[Token]) -> tuple[int, int, int | None] | None:
    """(OUTPUT index, last index of the clause, INTO index or None) of a top-level OUTPUT clause."""
    depth = 0
    start: int | None = None
    for k, tok in enumerate(tokens):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth:
            continue
        elif start is None:
            if upper_text(tok) == "OUTPUT" and _clause_word(tokens, k):
                start = k
        elif upper_text(tok) == "INTO":
            end = k + 1
            while end < len(tokens) and tokens[end].token_type in _NAME_TOKENS:
                end += 1
            if end < len(tokens) and tokens[end].token_type == TokenType.L_PAREN:
                close = _close(tokens, end)
                end = close + 1 if close is not None else end
            return start, end - 1, k
        elif upper_text(tok) in _AFTER_OUTPUT or tok.token_type == TokenType.SEMICOLON:
            return start, k - 1, None
    if start is None:
        return None
    return start, len(tokens) - 1, None


def _clause_word(tokens: list[Token], k: int) -> bool:
    """Whether OUTPUT at ``k`` opens a clause, not names a column (``SET output = 1``, ``t.output``)."""
    before = tokens[k - 1].token_type if k else None
    after = tokens[k + 1].token_type if k + 1 < len(tokens) else None
    if before in (TokenType.SET, TokenType.COMMA, TokenType.DOT, TokenType.L_PAREN, TokenType.SELECT):
        return False
    return after not in (None, TokenType.EQ, TokenType.COMMA, TokenType.DOT, TokenType.R_PAREN)


def _items(text: str, tokens: list[Token], lo: int, hi: int, base: int) -> list[str]:
    """The comma-separated items of tokens[lo:hi] at depth 0, as written."""
    items: list[str] = []
    depth, first = 0, lo
    for k in range(lo, hi):
        tt = tokens[k].token_type
        if tt == TokenType.L_PAREN:
            depth += 1
        elif tt == TokenType.R_PAREN:
            depth -= 1
        elif tt == TokenType.COMMA and depth == 0:
            items.append(text[tokens[first].start - base : tokens[k - 1].end + 1 - base])
            first = k + 1
    if first < hi:
        items.append(text[tokens[first].start - base : tokens[hi - 1].end + 1 - base])
    return [re.sub(r"\s+", " ", i).strip() for i in items if i.strip()]
