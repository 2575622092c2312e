"""Statements sqlglot keeps opaque or accepts although they are cut short.

sqlglot parses a statement it has no grammar for into an ``exp.Command`` (and logs "contains
unsupported syntax"); its parser also accepts some truncated statements (``... JOIN b ON`` becomes
``ON TRUE``). Three rules sit on top of the parser:

* ``reduce_create``: a ``CREATE TABLE|VIEW|MATERIALIZED VIEW`` whose storage, refresh or
  time-travel options sqlglot does not know is reduced to its lineage-bearing core (``CREATE
  [TEMPORARY] <kind> name [(cols)] [TO t] AS query``, ``... CLONE s``, ``... LIKE s``) and parsed
  again. The options dropped (``WITH (...)``, ``TABLESPACE``, ``BUILD IMMEDIATE REFRESH ...``,
  ``ENGINE = ...``, ``FOR SYSTEM_TIME AS OF``, ``VERSION AS OF``, ``SHALLOW``/``DEEP``,
  ``WITH [NO] DATA``) do not change where data comes from.
* ``command_kind``: an opaque command that is a statement kind the reader analyses (a query or DML,
  a ``CREATE`` table/view from a query or another table) is an error, never an empty lineage.
* ``truncated``: a data-moving statement whose last token cannot end a statement (an operator, a
  comma, a clause keyword such as ``ON``/``WHERE``/``BY``) is an error.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, SqlglotError
from sqlglot.tokens import Token, TokenType

from atlas_sync.lineage.sql.procedural import upper_text

# CREATE modifiers before the object kind (Snowflake SECURE/TRANSIENT, BigQuery SNAPSHOT, Teradata
# VOLATILE/MULTISET, Postgres UNLOGGED, Hive EXTERNAL, ...): none changes the data flow.
_MODIFIERS = {
    "OR",
    "REPLACE",
    "SECURE",
    "TRANSIENT",
    "SNAPSHOT",
    "EXTERNAL",
    "UNLOGGED",
    "MULTISET",
    "SET",
    "RECURSIVE",
    "FORCE",
    "NOFORCE",
    "LOCAL",
    "GLOBAL",
    "ICEBERG",
    "DYNAMIC",
    "STREAMING",
    "LIVE",
}
_TEMPORARY = {"TEMP", "TEMPORARY", "VOLATILE"}
_QUERY_START = {TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN, TokenType.VALUES, TokenType.FROM}
_NAME = {TokenType.VAR, TokenType.IDENTIFIER}


def _upper(tok: Token) -> str:
    return upper_text(tok)  # "" for strings and quoted names: never a keyword


def _name_end(tokens: list[Token], i: int) -> int:
    """Index after a dotted object name starting at ``i`` (``i`` itself when there is none)."""
    if i >= len(tokens) or tokens[i].token_type not in _NAME:
        return i
    j = i + 1
    while j + 1 < len(tokens) and tokens[j].token_type == TokenType.DOT and tokens[j + 1].text.strip():
        j += 2  # after a dot, any word is a name part (``db.data``)
    return j


def _parens_end(tokens: list[Token], i: int) -> int:
    """Index after the balanced parenthesis group opening at ``i``."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[j].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(tokens)


def _span(sql: str, tokens: list[Token], start: int, end: int) -> str:
    if start >= end:
        return ""
    return sql[tokens[start].start : tokens[end - 1].end + 1]


def reduce_create(text: str, dialect: str) -> exp.Expr | None:
    """The lineage-bearing core of an opaque ``CREATE`` statement, parsed; None when it has none."""
    d = Dialect.get_or_raise(dialect or None)
    try:
        tokens = d.tokenize(text)
    except SqlglotError:
        return None
    if not tokens or tokens[0].token_type != TokenType.CREATE:
        return None
    i, temporary = 1, False
    while i < len(tokens) and (_upper(tokens[i]) in _MODIFIERS or _upper(tokens[i]) in _TEMPORARY):
        temporary = temporary or _upper(tokens[i]) in _TEMPORARY
        i += 1
    kind = ""
    if i + 1 < len(tokens) and _upper(tokens[i]) == "MATERIALIZED" and _upper(tokens[i + 1]) == "VIEW":
        kind, i = "MATERIALIZED VIEW", i + 2
    elif i < len(tokens) and _upper(tokens[i]) in ("TABLE", "VIEW"):
        kind, i = _upper(tokens[i]), i + 1
    else:
        return None
    if [_upper(t) for t in tokens[i : i + 3]] == ["IF", "NOT", "EXISTS"]:
        i += 3
    end = _name_end(tokens, i)
    if end == i:
        return None
    name = _span(text, tokens, i, end)
    i = end
    columns = ""
    if i < len(tokens) and tokens[i].token_type == TokenType.L_PAREN:
        close = _parens_end(tokens, i)
        inner = tokens[i + 1 : close - 1]
        # A column list (names, commas), not a table definition or an options group.
        if inner and all(t.token_type in (*_NAME, TokenType.DOT, TokenType.COMMA) for t in inner):
            columns, i = " " + _span(text, tokens, i, close), close
    head = f"CREATE {'TEMPORARY ' if temporary else ''}{kind} {name}{columns}"
    to_table = ""
    depth = 0
    j = i
    while j < len(tokens):
        tok = tokens[j]
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0:
            word = _upper(tok)
            copy_grants = word == "COPY" and j + 1 < len(tokens) and _upper(tokens[j + 1]) == "GRANTS"
            if word in ("CLONE", "COPY") and kind == "TABLE" and not copy_grants:
                src_end = _name_end(tokens, j + 1)
                if src_end > j + 1:
                    return _parse(f"{head} CLONE {_span(text, tokens, j + 1, src_end)}", d)
            if word == "LIKE" and kind == "TABLE":
                src_end = _name_end(tokens, j + 1)
                if src_end > j + 1 and not _has_query_after(tokens, src_end):
                    return _parse(f"{head} LIKE {_span(text, tokens, j + 1, src_end)}", d)
            if word == "TO" and kind == "MATERIALIZED VIEW" and not to_table:
                # ClickHouse: the view writes into another table.
                to_end = _name_end(tokens, j + 1)
                if to_end > j + 1:
                    to_table = " TO " + _span(text, tokens, j + 1, to_end)
            if (
                tok.token_type == TokenType.ALIAS
                and j + 1 < len(tokens)
                and tokens[j + 1].token_type in _QUERY_START
            ):
                query = _span(text, tokens, j + 1, _without_data_clause(tokens))
                return _parse(f"{head}{to_table} AS {query}", d)
        j += 1
    return None


def _has_query_after(tokens: list[Token], i: int) -> bool:
    return any(
        t.token_type == TokenType.ALIAS and k + 1 < len(tokens) and tokens[k + 1].token_type in _QUERY_START
        for k, t in enumerate(tokens[i:], start=i)
    )


def _without_data_clause(tokens: list[Token]) -> int:
    """End of the query, without a trailing ``WITH [NO] DATA`` (Postgres, Teradata)."""
    words = [_upper(t) for t in tokens[-3:]]
    if words[-2:] == ["WITH", "DATA"]:
        return len(tokens) - 2
    if words == ["WITH", "NO", "DATA"]:
        return len(tokens) - 3
    return len(tokens)


def _parse(sql: str, d: Dialect) -> exp.Expr | None:
    try:
        parsed = d.parser(error_level=ErrorLevel.RAISE).parse(d.tokenize(sql), sql)
    except (SqlglotError, RecursionError):
        return None
    expr = parsed[0] if parsed else None
    return expr if isinstance(expr, exp.Create) else None


# Statement kinds whose lineage the reader analyses: as opaque commands they are errors.
_LINEAGE_VERBS = {"SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "VALUES"}


def command_kind(command: exp.Command, dialect: str) -> str | None:
    """The statement kind an opaque command stands for, when the reader would analyse it."""
    verb = str(command.this or "").upper()
    if verb in _LINEAGE_VERBS:
        return verb
    if verb != "CREATE":
        return None
    d = Dialect.get_or_raise(dialect or None)
    try:
        tokens = d.tokenize(f"CREATE {command.expression or ''}")
    except SqlglotError:
        return None
    words = [_upper(t) for t in tokens[1:8]]
    kind = next((w for w in words if w in ("TABLE", "VIEW")), None)
    if kind is None or any(
        w not in _MODIFIERS | _TEMPORARY | {"MATERIALIZED", kind} for w in words[: words.index(kind)]
    ):
        return None
    depth = 0
    for k, tok in enumerate(tokens):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and (
            _upper(tok) in ("CLONE", "LIKE")
            or (
                tok.token_type == TokenType.ALIAS
                and k + 1 < len(tokens)
                and tokens[k + 1].token_type in _QUERY_START
            )
        ):
            return f"CREATE {'MATERIALIZED VIEW' if 'MATERIALIZED' in words else kind}"
    return None


# Tokens after which a statement cannot end: binary operators, commas, and clause keywords that
# need what follows them.
_DANGLING = {
    TokenType.COMMA,
    TokenType.DOT,
    TokenType.EQ,
    TokenType.NEQ,
    TokenType.NULLSAFE_EQ,
    TokenType.GT,
    TokenType.GTE,
    TokenType.LT,
    TokenType.LTE,
    TokenType.PLUS,
    TokenType.DASH,
    TokenType.SLASH,
    TokenType.MOD,
    TokenType.DPIPE,
    TokenType.CARET,
    TokenType.AMP,
    TokenType.PIPE,
    TokenType.L_PAREN,
    TokenType.AND,
    TokenType.OR,
    TokenType.NOT,
    TokenType.ON,
    TokenType.USING,
    TokenType.WHERE,
    TokenType.FROM,
    TokenType.JOIN,
    TokenType.SELECT,
    TokenType.SET,
    TokenType.GROUP_BY,
    TokenType.ORDER_BY,
    TokenType.PARTITION_BY,
    TokenType.SORT_BY,
    TokenType.CLUSTER_BY,
    TokenType.DISTRIBUTE_BY,
    TokenType.HAVING,
    TokenType.QUALIFY,
    TokenType.WHEN,
    TokenType.THEN,
    TokenType.ELSE,
    TokenType.CASE,
    TokenType.IN,
    TokenType.IS,
    TokenType.LIKE,
    TokenType.ILIKE,
    TokenType.BETWEEN,
    TokenType.UNION,
    TokenType.EXCEPT,
    TokenType.INTERSECT,
    TokenType.INTO,
    TokenType.VALUES,
    TokenType.WITH,
    TokenType.ALIAS,
}
_DATA_MOVING = (exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.MultitableInserts)


# Clause keywords that need an operand, and the clause starts that cannot be one: ``JOIN b ON WHERE``,
# ``GROUP BY ORDER BY`` lost their operand (sqlglot reads an empty ON as TRUE, an empty GROUP BY as none).
_NEEDS_OPERAND = {
    TokenType.ON,
    TokenType.WHERE,
    TokenType.GROUP_BY,
    TokenType.ORDER_BY,
    TokenType.HAVING,
    TokenType.QUALIFY,
    TokenType.AND,
    TokenType.OR,
    TokenType.SORT_BY,
    TokenType.CLUSTER_BY,
    TokenType.DISTRIBUTE_BY,
}
_CLAUSE_START = {
    TokenType.WHERE,
    TokenType.GROUP_BY,
    TokenType.ORDER_BY,
    TokenType.HAVING,
    TokenType.QUALIFY,
    TokenType.LIMIT,
    TokenType.UNION,
    TokenType.EXCEPT,
    TokenType.INTERSECT,
    TokenType.JOIN,
    TokenType.WINDOW,
    TokenType.ON,
    TokenType.R_PAREN,
}

# Dialects whose documentation allows a trailing comma at the end of the SELECT list.
_TRAILING_COMMA_DIALECTS = {"bigquery", "duckdb", "snowflake"}


def incomplete(expr: exp.Expr, tokens: list[Token], dialect: str) -> tuple[Token, str] | None:
    """(token, reason) when a data-moving statement is cut short, has an empty clause or an empty
    list item, which sqlglot's parser silently accepts (it drops empty items of every comma list)."""
    if not isinstance(expr, _DATA_MOVING) or not tokens:
        return None
    if isinstance(expr, exp.Create) and expr.args.get("expression") is None:
        return None  # DDL: its own grammar (column definitions, options)
    if tokens[-1].token_type in _DANGLING:
        return tokens[-1], f"the statement ends after {tokens[-1].text!r} (it is incomplete)"
    for prev, tok in zip(tokens, tokens[1:], strict=False):
        if prev.token_type in _NEEDS_OPERAND and tok.token_type in _CLAUSE_START:
            return tok, f"nothing between {prev.text!r} and {tok.text!r} (a condition or list is missing)"
        if prev.token_type != TokenType.COMMA:
            continue
        if tok.token_type == TokenType.COMMA or (
            tok.token_type == TokenType.FROM and dialect not in _TRAILING_COMMA_DIALECTS
        ):
            return tok, f"an empty list item before {tok.text!r}"
    return None
