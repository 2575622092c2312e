"""Procedural SQL: stored procedures, functions, triggers and anonymous blocks.

sqlglot parses the statements of SQL, not the control flow around them (T-SQL ``IF``/``WHILE``/
``TRY...CATCH`` without semicolons, PL/pgSQL ``$$`` bodies, Snowflake Scripting, Oracle PL/SQL), so
blocks are taken apart here on sqlglot's own tokens:

* ``block_end`` keeps a block whole when a script is split into statements (its inner semicolons
  do not end it): ``CREATE [OR REPLACE|OR ALTER] PROCEDURE|FUNCTION|TRIGGER ... BEGIN ... END``
  (and T-SQL bodies without ``BEGIN``, which run to ``GO`` or the end of the script), ``BEGIN ...
  END`` and ``DECLARE ... BEGIN ... END`` blocks, Postgres ``DO``;
* ``flatten`` turns a body into its simple statements: ``BEGIN [TRY|CATCH] ... END [TRY|CATCH]`` are
  entered, the headers of ``IF``/``ELSIF``/``ELSE``/``WHILE``/``FOR``/``LOOP``/``CASE``/``WHEN``/
  ``EXCEPTION`` are skipped, ``END IF``/``END LOOP``/... close nothing we opened, declaration
  sections name variables; in T-SQL, where semicolons are optional, a statement also ends where
  another must begin;
* ``dynamic_sql``: ``EXEC(@sql)``, ``EXECUTE format(...)``, ``EXECUTE IMMEDIATE v`` run SQL known
  only at run time: a ``dynamic-sql`` warning naming the statement, not a guess (one string literal
  is known SQL, and analysed).

:mod:`.blocks` analyses the statements found and merges them into one lineage per block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from atlas_sync.lineage.sql.analyze import ident_name

_ROUTINES = {"PROC", "PROCEDURE", "FUNCTION", "TRIGGER"}
_CREATE_MODIFIERS = {"OR", "REPLACE", "ALTER", "EDITIONABLE", "NONEDITIONABLE", "SECURE", "TEMP", "TEMPORARY"}
# BEGIN followed by these starts a transaction, not a block.
_TRANSACTION = {"TRAN", "TRANSACTION", "WORK", "DISTRIBUTED", "ISOLATION", "READ", "DEFERRED", "IMMEDIATE"}
_TRANSACTION |= {"EXCLUSIVE"}
# END followed by these closes a construct whose opener is not counted (IF, LOOP, WHILE, FOR, REPEAT).
_UNCOUNTED_END = {"IF", "LOOP", "WHILE", "FOR", "REPEAT"}
TSQL = {"tsql", "fabric"}
# Dialects where a script's DECLARE opens an anonymous block (DECLARE ... BEGIN ... END); elsewhere
# (BigQuery, T-SQL, Postgres cursors) it is a statement of its own.
_DECLARE_BLOCKS = {"oracle", "snowflake"}
_DECLARE_SECTIONS = _DECLARE_BLOCKS | {"postgres", "redshift", "materialize", "risingwave"}
_POSTGRES = {"postgres", "redshift", "materialize", "risingwave"}
# Statements whose lineage is analysed; other statements of a body (assignments, RAISE, RETURN,
# PRINT, SET, COMMIT, ...) move no data between tables.
DATA_WORDS = frozenset(
    [
        "SELECT",
        "WITH",
        "INSERT",
        "UPDATE",
        "DELETE",
        "MERGE",
        "CREATE",
        "REPLACE",
        "UPSERT",
        "COPY",
        "VALUES",
        "TRUNCATE",
        "DROP",
        "ALTER",
    ]
)
# Words that start a statement in a T-SQL body (semicolons are optional there).
_TSQL_STARTERS = DATA_WORDS | frozenset(
    [
        "DECLARE",
        "SET",
        "EXEC",
        "EXECUTE",
        "IF",
        "WHILE",
        "BEGIN",
        "END",
        "ELSE",
        "RETURN",
        "PRINT",
        "RAISERROR",
        "THROW",
        "OPEN",
        "CLOSE",
        "FETCH",
        "DEALLOCATE",
        "BREAK",
        "CONTINUE",
        "GOTO",
        "COMMIT",
        "ROLLBACK",
        "WAITFOR",
        "BULK",
        "SAVE",
    ]
)
_DDL_OBJECTS = {"TABLE", "VIEW", "PROCEDURE", "PROC", "FUNCTION", "INDEX", "SCHEMA", "DATABASE", "TRIGGER"}
# Languages whose bodies are SQL (other bodies, Python, JavaScript, Java, C, are not read).
SQL_LANGUAGES = {"SQL", "PLPGSQL", "PLSQL", "SCRIPTING"}
STRING_TOKENS = {TokenType.STRING, TokenType.HEREDOC_STRING, TokenType.RAW_STRING}
# Tokens whose text is data or a quoted name, never a keyword: 'DELETE', N'END', [SELECT], "GO".
NOT_WORDS = STRING_TOKENS | {
    TokenType.NATIONAL_STRING,
    TokenType.NATIONAL_RAW_STRING,
    TokenType.UNICODE_STRING,
    TokenType.BIT_STRING,
    TokenType.HEX_STRING,
    TokenType.BYTE_STRING,
    TokenType.IDENTIFIER,
}


@lru_cache(maxsize=32)
def _tokenizer_class(dialect: str) -> type:
    d = Dialect.get_or_raise(dialect or None)
    # sqlglot reads what follows a "command" word (T-SQL END, Postgres DECLARE/EXECUTE, FETCH) after a
    # semicolon or BEGIN as one string, up to the next semicolon: right for a script's opaque commands,
    # wrong inside a body, where END closes a block and DECLARE opens declarations.
    return type(f"{type(d).__name__}BodyTokenizer", (d.tokenizer_class,), {"COMMANDS": set()})


def body_tokens(sql: str, dialect: str) -> list[Token]:
    """Tokens of procedural SQL: the dialect's tokens, no word swallowing the rest of its statement."""
    tokens: list[Token] = _tokenizer_class(dialect)(dialect=dialect or None).tokenize(sql)
    return tokens


def may_hold_blocks(tokens: list[Token]) -> bool:
    """A cheap test before the block-aware split: some token could start a block."""
    return any(t.token_type == TokenType.BEGIN or upper_text(t) in _BLOCK_WORDS for t in tokens)


_BLOCK_WORDS = {"PROCEDURE", "PROC", "FUNCTION", "TRIGGER", "DO", "DECLARE", "BEGIN", "GO"}


def upper_text(tok: Token) -> str:
    """The keyword a token spells, upper-cased; "" for a string literal or quoted identifier
    (``'DELETE'``, ``[END]``: data and names never open, end or split statements)."""
    return "" if tok.token_type in NOT_WORDS else tok.text.upper()


def word_at(tokens: list[Token], i: int) -> str:
    return upper_text(tokens[i]) if 0 <= i < len(tokens) else ""


def _is_go(tok: Token, dialect: str) -> bool:
    return dialect in TSQL and tok.token_type == TokenType.COMMAND and upper_text(tok) == "GO"


def _block_begin(tokens: list[Token], i: int) -> bool:
    """Whether ``tokens[i]`` opens a block (``BEGIN``, not ``BEGIN TRANSACTION`` or ``BEGIN;``)."""
    if upper_text(tokens[i]) != "BEGIN":
        return False
    if i + 1 >= len(tokens) or tokens[i + 1].token_type == TokenType.SEMICOLON:
        return False
    return word_at(tokens, i + 1) not in _TRANSACTION


def _closes(tokens: list[Token], i: int) -> bool:
    """``END`` closing a counted opener (BEGIN, CASE), not ``END IF``/``END LOOP``/..."""
    return upper_text(tokens[i]) == "END" and word_at(tokens, i + 1) not in _UNCOUNTED_END


def matching_end(tokens: list[Token], i: int, stop: int | None = None) -> int:
    """Index of the ``END`` closing the ``BEGIN``/``CASE`` at ``i`` (``stop`` when unbalanced)."""
    stop = len(tokens) if stop is None else stop
    depth = 0
    for j in range(i, stop):
        w = upper_text(tokens[j])
        if w == "CASE" or (w == "BEGIN" and _block_begin(tokens, j)):
            depth += 1
        elif w == "END" and _closes(tokens, j):
            depth -= 1
            if depth == 0:
                return j
    return stop


def _after_end(tokens: list[Token], j: int, stop: int) -> int:
    """Index after ``END [TRY|CATCH|CASE|label]`` at ``j``."""
    k = j + 1
    if k < stop and word_at(tokens, k) in ("TRY", "CATCH", "CASE", *_UNCOUNTED_END):
        return k + 1
    if (
        k < stop
        and tokens[k].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        and tokens[k].line == tokens[j].line
        and (k + 1 >= stop or tokens[k + 1].token_type == TokenType.SEMICOLON)
    ):
        return k + 1  # END label; (PL/SQL, PL/pgSQL)
    return k


@dataclass
class Header:
    """What a block statement is: its kind and name, where its body is, its parameters."""

    kind: str  # PROCEDURE, FUNCTION, TRIGGER, BLOCK
    name: str | None = None  # the routine's name as written
    body: int | None = None  # token index where a token-level body starts
    string_body: Token | None = None  # the body as one string token ($$ ... $$, '...')
    language: str | None = None
    parameters: list[str] = field(default_factory=list)
    declarations: bool = False  # the body opens with a declaration section (PL/SQL IS/AS)
    table: str | None = None  # a T-SQL trigger's table (its inserted/deleted rows)
    unread: int | None = None  # token index of a body the reader cannot take apart


def block_header(tokens: list[Token], dialect: str, start: int = 0) -> Header | None:
    """The header of a block statement starting at ``tokens[start]``, or None for other
    statements. Token indexes in it are indexes of ``tokens``."""
    if start >= len(tokens):
        return None
    first = upper_text(tokens[start])
    if first == "BEGIN" and _block_begin(tokens, start):
        return Header(kind="BLOCK", body=start)
    if first == "DECLARE" and dialect in _DECLARE_BLOCKS:
        return Header(kind="BLOCK", body=start)  # Oracle / Snowflake DECLARE ... BEGIN ... END
    if first == "DO" and dialect in _POSTGRES:
        stop = _statement_stop(tokens, start)
        body = next((t for t in tokens[start + 1 : stop] if t.token_type in STRING_TOKENS), None)
        return Header(kind="BLOCK", string_body=body, language=_language(tokens, start, stop) or "PLPGSQL")
    if first not in ("CREATE", "ALTER"):
        return None
    i = start + 1
    while i < len(tokens) and upper_text(tokens[i]) in _CREATE_MODIFIERS:
        i += 1
    if first == "ALTER" and i != start + 1:
        return None
    if word_at(tokens, i) == "DEFINER":  # MySQL DEFINER = user@host
        i += 3
        while i + 1 < len(tokens) and tokens[i].token_type in (TokenType.PARAMETER, TokenType.DOT):
            i += 2
    kind = word_at(tokens, i)
    if kind not in _ROUTINES:
        return None
    header = Header(kind="PROCEDURE" if kind == "PROC" else kind)
    i += 1
    if [word_at(tokens, i + k) for k in range(3)] == ["IF", "NOT", "EXISTS"]:
        i += 3
    end = _name_end(tokens, i)
    header.name = _name_text(tokens, i, end)
    header.parameters = _parameters(tokens, end)
    stop = _statement_stop(tokens, start)
    if header.kind == "TRIGGER" and word_at(tokens, end) == "ON":  # T-SQL: CREATE TRIGGER t ON table
        header.table = _name_text(tokens, end + 1, _name_end(tokens, end + 1))
    header.language = _language(tokens, start, stop)
    depth = 0
    for j in range(end, stop):
        tok = tokens[j]
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth:
            continue
        elif upper_text(tok) == "BEGIN" and _block_begin(tokens, j):
            header.body = j  # MySQL / BigQuery / Postgres BEGIN ATOMIC: no AS before the block
            return header
        elif upper_text(tok) == "AS" and word_at(tokens, j - 1) == "EXECUTE":
            continue  # EXECUTE AS CALLER|OWNER|'user' (Snowflake, T-SQL): whose rights, not the body
        elif upper_text(tok) in ("AS", "IS"):
            nxt = tokens[j + 1] if j + 1 < len(tokens) else None
            if nxt is None:
                return header
            if nxt.token_type in STRING_TOKENS:
                header.string_body = nxt
                return header
            if upper_text(nxt) in ("BEGIN", "DECLARE") or dialect in TSQL or dialect == "oracle":
                header.body = j + 1
                header.declarations = upper_text(nxt) == "DECLARE" or (
                    dialect == "oracle" and upper_text(nxt) != "BEGIN"
                )
                return header
            if nxt.token_type != TokenType.L_PAREN and upper_text(nxt) not in ("SELECT", "WITH"):
                header.unread = j + 1  # e.g. $$ outside a dialect that quotes with it
            return header  # BigQuery AS (expression), a macro: not a body of statements
        elif upper_text(tok) == "RETURN" and dialect not in TSQL:
            return header  # SQL-standard RETURN expr body (Postgres, Databricks): no statements
    return header


def _statement_stop(tokens: list[Token], start: int) -> int:
    """Index of the first semicolon outside parentheses after ``start`` (or the end)."""
    depth = 0
    for j in range(start, len(tokens)):
        tt = tokens[j].token_type
        if tt == TokenType.L_PAREN:
            depth += 1
        elif tt == TokenType.R_PAREN:
            depth -= 1
        elif tt == TokenType.SEMICOLON and depth <= 0:
            return j
    return len(tokens)


def _name_end(tokens: list[Token], i: int) -> int:
    """Index after a dotted routine name at ``i`` (keywords can be names: ``load``, ``refresh``)."""
    stops = (TokenType.L_PAREN, TokenType.ALIAS, TokenType.SEMICOLON, TokenType.PARAMETER, *STRING_TOKENS)
    if i >= len(tokens) or tokens[i].token_type in stops:
        return i
    j = i + 1
    while j + 1 < len(tokens) and tokens[j].token_type == TokenType.DOT:
        j += 2
    return j


def _name_text(tokens: list[Token], i: int, end: int) -> str | None:
    if end <= i:
        return None
    return ".".join(
        t.text if t.token_type != TokenType.IDENTIFIER else f'"{t.text}"' for t in tokens[i:end:2]
    )


def _parameters(tokens: list[Token], i: int) -> list[str]:
    """Names of the parameters in the parenthesis group at ``i`` (modes IN/OUT/INOUT skipped)."""
    if i >= len(tokens) or tokens[i].token_type != TokenType.L_PAREN:
        # T-SQL: @a INT, @b DATE without parentheses (they are @-parameters: never columns anyway)
        return []
    names: list[str] = []
    depth, expect = 0, True
    for tok in tokens[i:]:
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
            continue
        if tok.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                break
            continue
        if depth != 1:
            continue
        if tok.token_type == TokenType.COMMA:
            expect = True
        elif expect and upper_text(tok) not in ("IN", "OUT", "INOUT", "VARIADIC"):
            if tok.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
                names.append(
                    ident_name(exp.to_identifier(tok.text, quoted=tok.token_type == TokenType.IDENTIFIER))
                )
            expect = False
    return names


def _language(tokens: list[Token], start: int, stop: int) -> str | None:
    for j in range(start, min(stop, len(tokens) - 1)):
        if upper_text(tokens[j]) == "LANGUAGE":
            return tokens[j + 1].text.upper().strip("'\"")
    return None


def block_end(tokens: list[Token], dialect: str, start: int = 0) -> int | None:
    """For a script's tokens and a statement starting at ``start``, the index after the block's
    last token when the statement is a block whose body is made of tokens (its inner semicolons do
    not end it; a T-SQL body without BEGIN runs to ``GO`` or the end); None for other statements and
    for bodies that are one string token (they end at the next semicolon as usual)."""
    if upper_text(tokens[start]) not in BLOCK_STARTS:
        return None
    header = block_header(tokens, dialect, start)
    if header is None or header.string_body is not None or header.body is None:
        return None
    anonymous_declare = header.kind == "BLOCK" and upper_text(tokens[start]) == "DECLARE"
    if dialect in TSQL and header.kind != "BLOCK" and not _block_begin(tokens, header.body):
        # CREATE PROCEDURE p AS <statements>: the body is the rest of the batch
        return next((j for j in range(header.body, len(tokens)) if _is_go(tokens[j], dialect)), len(tokens))
    for j in range(header.body, len(tokens)):
        tok = tokens[j]
        if _is_go(tok, dialect):
            return j
        if upper_text(tok) == "BEGIN" and _block_begin(tokens, j):
            return _after_end(tokens, matching_end(tokens, j), len(tokens))
        if tok.token_type == TokenType.SEMICOLON and not (
            dialect in TSQL or header.declarations or anonymous_declare
        ):
            return j
    return len(tokens)


BLOCK_STARTS = {"CREATE", "ALTER", "BEGIN", "DECLARE", "DO"}


# ---------------------------------------------------------------------- flattening a body
@dataclass
class Piece:
    """One simple statement of a body: tokens[start:end], and what kind it is."""

    start: int
    end: int
    declaration: bool = False  # in a declaration section (DECLARE ... BEGIN, PL/SQL IS ...)
    rewrite: str | None = None  # text replacing the first token (PERFORM -> SELECT)


def flatten(tokens: list[Token], dialect: str, *, declarations: bool = False) -> list[Piece]:
    """The simple statements of a body, control flow taken away (see the module docstring)."""
    out: list[Piece] = []
    _flatten(tokens, 0, len(tokens), dialect, out, declarations)
    return out


def _flatten(tokens: list[Token], i: int, stop: int, dialect: str, out: list[Piece], declaring: bool) -> None:
    tsql = dialect in TSQL
    while i < stop:
        tok = tokens[i]
        w = upper_text(tok)
        if tok.token_type == TokenType.SEMICOLON or _is_go(tok, dialect):
            i += 1
            continue
        if w == "BEGIN" and _block_begin(tokens, i):
            end = matching_end(tokens, i, stop)
            inner = i + 1
            if word_at(tokens, inner) in ("TRY", "CATCH", "ATOMIC"):
                inner += 1
            _flatten(tokens, inner, end, dialect, out, False)
            declaring = False
            i = _after_end(tokens, end, stop) if end < stop else stop
            continue
        if w == "END":
            i = _after_end(tokens, i, stop)
            continue
        if w == "DECLARE" and dialect in _DECLARE_SECTIONS:
            declaring = True  # a section of declarations, up to the block's BEGIN
            i += 1
            continue
        if w == "DECLARE" and not tsql:  # MySQL, BigQuery: one declaration per statement
            end = _statement_end(tokens, i + 1, stop, dialect) if i + 1 < stop else stop
            out.append(Piece(i + 1, end, declaration=True))
            i = end
            continue
        if w in ("ELSE", "LOOP", "EXCEPTION", "REPEAT") or (w == "DO" and dialect not in _POSTGRES):
            i += 1
            continue
        if tok.token_type == TokenType.LT and word_at(tokens, i + 1) == "<":  # <<label>>
            i = min(stop, i + 5)
            continue
        if (
            tok.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
            and i + 1 < stop
            and tokens[i + 1].token_type == TokenType.COLON
            and not declaring
        ):
            i += 2  # label: (T-SQL, Snowflake, MySQL)
            continue
        if w in ("FOR", "FOREACH", "FORALL") and i + 1 < stop and tokens[i + 1].token_type == TokenType.VAR:
            out.append(Piece(i + 1, i + 2, declaration=True))  # the loop variable is a value
        if w in ("IF", "ELSIF", "ELSEIF", "WHILE", "WHEN", "UNTIL", "CASE", "FOR", "FOREACH"):
            i = _skip_header(tokens, i, stop, dialect, out)
            continue
        if w == "FORALL":  # PL/SQL FORALL i IN lo .. hi [SAVE EXCEPTIONS] <one DML statement>
            dml = next(
                (
                    j
                    for j in range(i + 1, stop)
                    if upper_text(tokens[j]) in ("INSERT", "UPDATE", "DELETE", "MERGE")
                ),
                stop,
            )
            i = dml
            continue
        if w == "RETURN" and word_at(tokens, i + 1) == "QUERY":  # PL/pgSQL RETURN QUERY SELECT ...
            i += 2
            continue
        if w == "RETURN" and i + 1 < stop and tokens[i + 1].token_type == TokenType.L_PAREN:
            close = _paren_close(tokens, i + 1, stop)
            if word_at(tokens, i + 2) in ("SELECT", "WITH"):
                out.append(Piece(i + 2, close))  # T-SQL inline function RETURN (SELECT ...): a read
            i = close + 1
            continue
        if w == "RETURN" and word_at(tokens, i + 1) in ("SELECT", "WITH"):
            i += 1
            continue
        if w == "OPEN" and word_at(tokens, i + 2) == "FOR":
            i += 3  # OPEN cursor FOR SELECT ...
            continue
        end = _statement_end(tokens, i, stop, dialect)
        piece = Piece(i, end, declaration=declaring)
        if w == "PERFORM":
            piece.rewrite = "SELECT"
        out.append(piece)
        i = end


def _paren_close(tokens: list[Token], i: int, stop: int) -> int:
    """Index of the parenthesis closing the one at ``i`` (``stop`` when unbalanced)."""
    depth = 0
    for j in range(i, stop):
        if tokens[j].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[j].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return j
    return stop


def _skip_header(tokens: list[Token], i: int, stop: int, dialect: str, out: list[Piece]) -> int:
    """Index of the first statement of an IF/WHILE/WHEN/FOR/CASE body (the header skipped); a
    query a FOR loop iterates over becomes a piece of its own (it reads tables)."""
    w = upper_text(tokens[i])
    tsql = dialect in TSQL
    depth = case = 0
    query_start: int | None = None
    j = i + 1
    while j < stop:
        tok = tokens[j]
        u = upper_text(tok)
        if tok.token_type == TokenType.L_PAREN:
            if w in ("IF", "ELSIF", "ELSEIF", "WHILE", "WHEN", "UNTIL") and word_at(tokens, j + 1) in (
                "SELECT",
                "WITH",
            ):
                # IF EXISTS (SELECT ... FROM t): the condition reads t
                out.append(Piece(j + 1, _paren_close(tokens, j, stop)))
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and u == "CASE":
            case += 1
        elif depth == 0 and u == "END" and case:
            case -= 1
        elif depth == 0 and not case:
            if w == "CASE" and u == "WHEN":
                return j
            if w == "UNTIL" and u == "END":
                return j
            if w == "FOR" and u == "IN" and query_start is None:
                nxt = j + 1
                if nxt < stop and tokens[nxt].token_type == TokenType.L_PAREN:
                    nxt += 1
                if word_at(tokens, nxt) in ("SELECT", "WITH"):
                    query_start = nxt
            if u in ("THEN", "LOOP", "DO"):
                if query_start is not None:
                    q_end = j
                    if (
                        tokens[q_end - 1].token_type == TokenType.R_PAREN
                        and tokens[query_start - 1].token_type == TokenType.L_PAREN
                    ):
                        q_end -= 1
                    out.append(Piece(query_start, q_end))
                return j + 1
            if tsql and w in ("IF", "WHILE") and u in _TSQL_STARTERS and u not in ("END", "ELSE"):
                return j  # T-SQL: IF cond statement|BEGIN (no THEN)
            if tok.token_type == TokenType.SEMICOLON:
                return j
        j += 1
    return stop


def _statement_end(tokens: list[Token], i: int, stop: int, dialect: str) -> int:
    """Index after the simple statement starting at ``i``: its semicolon, an ``END``/``ELSE`` of
    the enclosing construct, or (T-SQL) the start of the next statement."""
    tsql = dialect in TSQL
    kind = upper_text(tokens[i])  # WITH becomes the statement it introduces
    depth = 1 if tokens[i].token_type == TokenType.L_PAREN else 0
    case = 0
    source_seen = False  # INSERT: its SELECT/VALUES/EXEC has come; UPDATE: its SET has
    for j in range(i + 1, stop):
        tok = tokens[j]
        u = upper_text(tok)
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
            continue
        if tok.token_type == TokenType.R_PAREN:
            depth -= 1
            continue
        if depth > 0:
            continue
        if tok.token_type == TokenType.SEMICOLON or _is_go(tok, dialect):
            return j
        if u == "CASE":
            case += 1
        elif u == "END" and case:
            case -= 1
        elif case:
            continue
        elif (
            u in ("END", "ELSE", "ELSIF", "ELSEIF")
            or tsql
            and u in _TSQL_STARTERS
            and not _continues(tokens, j, kind, source_seen)
        ):
            return j
        if kind == "WITH" and u in ("SELECT", "INSERT", "UPDATE", "DELETE", "MERGE"):
            kind, source_seen = u, u == "SELECT"
        elif kind == "INSERT" and u in ("SELECT", "VALUES", "EXEC", "EXECUTE"):
            source_seen = True
        elif kind == "UPDATE" and u == "SET":
            if source_seen and tsql:
                return j  # UPDATE t SET ... then SET IDENTITY_INSERT u ON: an UPDATE has one SET
            source_seen = True
    return stop


def _continues(tokens: list[Token], j: int, first: str, source_seen: bool) -> bool:
    """Whether the T-SQL statement word at ``j`` belongs to the statement starting at ``i``."""
    u = upper_text(tokens[j])
    prev = upper_text(tokens[j - 1])
    if first in ("GRANT", "DENY", "REVOKE") and prev in ("GRANT", "DENY", "REVOKE", ","):
        return True  # GRANT EXECUTE ON p, GRANT SELECT, INSERT ON t: privileges, not statements
    if u in ("SELECT", "WITH"):
        if u == "WITH" and not (
            j + 2 < len(tokens)
            and tokens[j + 1].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
            and (word_at(tokens, j + 2) == "AS" or tokens[j + 2].token_type == TokenType.L_PAREN)
        ):
            return True  # WITH (NOLOCK), WITH CHECK OPTION: a clause
        if prev in ("UNION", "ALL", "EXCEPT", "INTERSECT", "DISTINCT", "AS", "FOR"):
            return True
        return first in ("INSERT", "WITH", "CREATE", "ALTER", "DECLARE") and not source_seen
    if u in ("INSERT", "UPDATE", "DELETE", "MERGE"):
        if prev == "BULK":
            return True
        if prev in ("THEN", "FOR", "ON", "OF", ",", "INSTEAD", "AFTER") and first != "SET":
            return True  # not after SET NOCOUNT ON, SET IDENTITY_INSERT t ON
        return first == "WITH" and not source_seen
    if u == "SET":
        return first in ("UPDATE", "MERGE", "ALTER", "CREATE") or prev in ("UPDATE", "DELETE")
    if u in ("EXEC", "EXECUTE"):
        return prev in ("AS", "WITH") or (first == "INSERT" and not source_seen)
    if u == "IF":
        return prev in _DDL_OBJECTS
    if u in ("DROP", "CREATE", "ALTER", "TRUNCATE"):
        return first == "ALTER" or prev == ","
    if u == "FETCH":
        return prev in ("ROWS", "ROW")
    if u == "VALUES":
        return True  # INSERT ... VALUES, MERGE ... THEN INSERT (...) VALUES
    if u in ("OPEN", "CLOSE"):
        return prev in ("=",)
    return False


# ---------------------------------------------------------------------- dynamic SQL
def dynamic_sql(tokens: list[Token], dialect: str) -> bool:
    """Whether a statement runs SQL built at run time: ``EXEC(@sql)``, ``EXEC sp_executesql``,
    ``EXECUTE IMMEDIATE``, PL/pgSQL ``EXECUTE format(...)``, MySQL ``PREPARE s FROM @sql``."""
    if not tokens:
        return False
    w = upper_text(tokens[0])
    nxt = tokens[1] if len(tokens) > 1 else None
    if w == "PREPARE":
        return True
    if w not in ("EXEC", "EXECUTE") or nxt is None:
        return False
    if upper_text(nxt) == "IMMEDIATE" or dialect in _POSTGRES:
        return True
    if nxt.token_type in (TokenType.L_PAREN, *STRING_TOKENS, TokenType.NATIONAL_STRING):
        return True
    names = [t.text.lower() for t in tokens[1:4] if t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)]
    if "sp_executesql" in names:
        return True
    # EXEC @proc_name (a procedure chosen at run time), not EXEC @rc = proc (a return code)
    return nxt.token_type == TokenType.PARAMETER and word_at(tokens, 3) != "="


def literal_sql(tokens: list[Token]) -> Token | None:
    """The string a dynamic statement runs when it is one literal (``EXEC ('...')``, ``EXECUTE
    IMMEDIATE '...'``, ``EXECUTE IMMEDIATE $$...$$``): then the SQL is known and analysed."""
    rest = [t for t in tokens[1:] if t.token_type not in (TokenType.L_PAREN, TokenType.R_PAREN)]
    if rest and upper_text(rest[0]) == "IMMEDIATE":
        rest = rest[1:]
    if rest and rest[0].text.lower() == "sp_executesql" and rest[0].token_type == TokenType.VAR:
        rest = rest[1:]  # EXEC sp_executesql N'...' [, N'@p INT', @p = 1]: the parameters bind values
        comma = next((k for k, t in enumerate(rest) if t.token_type == TokenType.COMMA), len(rest))
        rest = rest[:comma]
    if len(rest) == 1 and rest[0].token_type in (*STRING_TOKENS, TokenType.NATIONAL_STRING):
        return rest[0]
    return None


def dynamic_problem(text: str, line: int | None) -> dict[str, object]:
    short = " ".join(text.split())
    short = short if len(short) <= 100 else short[:97] + "..."
    return {
        "message": f"dynamic SQL not analysed (its text is only known at run time): {short}",
        "code": "dynamic-sql",
        "severity": "warning",
        "line": line,
    }
