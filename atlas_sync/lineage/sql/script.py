"""Multi-statement SQL scripts: split on top-level semicolons, parse each statement on its own (one
bad statement must not hide the others), and analyse them in order so later statements see the
tables, views and columns earlier ones created."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError
from sqlglot.tokens import Token, TokenType

from atlas_sync.lineage.sql.analyze import Context, StatementLineage, StatementRejected, analyze_statement
from atlas_sync.lineage.sql.opaque import command_kind, incomplete, reduce_create
from atlas_sync.lineage.sql.schema import SchemaStore

# sqlglot logs a warning for every statement it falls back to parsing as an opaque command; we
# record those as problems ourselves.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def split_statements(sql: str, dialect: str) -> list[tuple[str, int, int, list[Token] | None]]:
    """(text, line, column, tokens) of each statement; tokens is None when the script could not be
    tokenized (then statements are split on semicolons at line ends and parsed one by one)."""
    d = Dialect.get_or_raise(dialect or None)
    try:
        tokens = d.tokenize(sql)
    except (TokenError, SqlglotError):
        return _naive_split(sql)
    chunks: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            chunks.append([])
        else:
            chunks[-1].append(tok)
    out: list[tuple[str, int, int, list[Token] | None]] = []
    for chunk in chunks:
        if not chunk:
            continue
        first, last = chunk[0], chunk[-1]
        text = sql[first.start : last.end + 1]
        col = max(1, first.col - (first.end - first.start))
        out.append((text, first.line, col, chunk))
    return out


def _naive_split(sql: str) -> list[tuple[str, int, int, list[Token] | None]]:
    out: list[tuple[str, int, int, list[Token] | None]] = []
    pos = 0
    for m in re.finditer(r";[ \t]*(?:\n|$)|$", sql):
        text = sql[pos : m.start()]
        if text.strip():
            lead = len(text) - len(text.lstrip())
            line = sql.count("\n", 0, pos + lead) + 1
            out.append((text.strip(), line, 1, None))
        pos = m.end()
        if pos >= len(sql):
            break
    return out


def parse_statement(
    text: str, dialect: str, tokens: list[Token] | None, full_sql: str
) -> tuple[exp.Expr | None, dict[str, object] | None]:
    """Parse one statement: (expression, None) or (None, {message, line, column})."""
    d = Dialect.get_or_raise(dialect or None)
    try:
        if tokens is None:
            tokens = d.tokenize(text)
            full_sql = text
        parser = d.parser(error_level=ErrorLevel.RAISE)
        exprs = [e for e in parser.parse(tokens, full_sql) if e is not None]
    except ParseError as exc:
        err = exc.errors[0] if exc.errors else {}
        return None, {
            "message": clean_message(str(err.get("description") or exc)),
            "line": err.get("line"),
            "column": err.get("col"),
        }
    except (TokenError, SqlglotError) as exc:
        return None, {"message": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    except RecursionError:
        return None, {"message": "statement nested too deeply to parse"}
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        # sqlglot's parser itself failed on this odd token sequence (e.g. tsql `SELECT INTO =`):
        # the statement is unreadable, as with a ParseError
        return None, {"message": f"the SQL parser failed on this statement ({type(exc).__name__}: {exc})"}
    if not exprs:
        return None, None
    return exprs[0], None


_REPLACE_INTO = re.compile(r"\s*replace(?=\s+into\b)", re.IGNORECASE)
_TOKEN = re.compile(
    r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, col: \d+, start: \d+, end: \d+, comments: \[.*?\]>"
)


_REQUIRED = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")


def clean_message(message: str) -> str:
    """sqlglot's message on one line, with token reprs shown as the text a user typed and
    sqlglot's class names as the clause they stand for."""
    first = message.strip().splitlines()[0] if message.strip() else "syntax error"
    first = _REQUIRED.sub(lambda m: f"incomplete {m.group(2).upper()} clause", first)
    return _TOKEN.sub(
        lambda m: "the end of the statement" if m.group(1) == "SENTINEL" else repr(m.group(2)), first
    )


def analyze_sql(
    sql: str,
    *,
    dialect: str = "",
    schema: Mapping[str, list[str]] | None = None,
    default_schema: str | None = None,
    context: Context | None = None,
) -> list[StatementLineage]:
    """Lineage of every statement of a script, in order (statement indexes start at 1)."""
    ctx = context or Context.create(dialect, SchemaStore(schema, dialect=dialect), default_schema)
    results: list[StatementLineage] = []
    for index, (text, line, col, tokens) in enumerate(split_statements(sql, ctx.dialect), start=1):
        results.append(analyze_text(text, index, line, col, ctx, tokens=tokens, full_sql=sql))
    return results


def analyze_text(
    text: str,
    index: int,
    line: int | None,
    col: int | None,
    ctx: Context,
    *,
    tokens: list[Token] | None = None,
    full_sql: str | None = None,
) -> StatementLineage:
    """Parse and analyse one statement; errors become an ``error`` problem on the result."""
    result = StatementLineage(index=index, line=line, column=col, text=text.strip())
    expr, err = parse_statement(text, ctx.dialect, tokens, full_sql or text)
    if err is not None:
        result.error = True
        result.type = "ERROR"
        result.problem(
            f"cannot parse: {err['message']}",
            code="sql-parse",
            severity="error",
            line=err.get("line") if tokens is not None else _shift(err.get("line"), line),
            column=err.get("column"),
        )
        return result
    if expr is None:
        result.type = "EMPTY"
        return result
    replace = _REPLACE_INTO.match(text)
    if isinstance(expr, exp.Command) and replace:
        # MySQL/Doris/SQLite REPLACE INTO ... SELECT moves data like INSERT; sqlglot keeps it opaque.
        as_insert, _err = parse_statement("INSERT" + text[replace.end() :], ctx.dialect, None, "")
        if as_insert is not None and not isinstance(as_insert, exp.Command):
            expr = as_insert
    if isinstance(expr, exp.Command) and str(expr.this).upper() == "CREATE":
        expr = reduce_create(text, ctx.dialect) or expr
    if isinstance(expr, exp.Command):
        kind = command_kind(expr, ctx.dialect)
        if kind is not None:
            return _failed(
                result,
                f"not valid {_dialect_name(ctx.dialect)} SQL as far as sqlglot can tell: this {kind} "
                "statement parses only as an opaque command, so no lineage can be given",
                "sql-unsupported",
                line,
                col,
            )
    relative = tokens is None  # lines of our own tokens count from the statement's start
    if tokens is None:
        try:
            tokens = Dialect.get_or_raise(ctx.dialect or None).tokenize(text)
        except SqlglotError:
            tokens = []
    flaw = incomplete(expr, tokens, ctx.dialect)
    if flaw is not None:
        tok, reason = flaw
        return _failed(
            result,
            f"cannot parse: {reason}",
            "sql-parse",
            _shift(tok.line, line) if relative else tok.line,
            tok.col,
        )
    try:
        analyze_statement(expr, ctx, result)
    except StatementRejected as exc:
        result.error = True
        result.type = "ERROR"
        result.reads, result.writes, result.edges = [], [], []
        result.problem(f"rejected: {exc}", code="sql-invalid", severity="error", line=line, column=col)
    except RecursionError:
        result.error = True
        result.type = "ERROR"
        result.problem(
            "statement nested too deeply to analyse", code="sql-invalid", severity="error", line=line
        )
    except Exception as exc:  # noqa: BLE001 - one odd statement must not stop the script
        result.error = True
        result.type = "ERROR"
        result.reads, result.writes, result.edges = [], [], []
        result.problem(
            f"cannot analyse this statement ({type(exc).__name__}: {exc})",
            code="sql-internal",
            severity="error",
            line=line,
            column=col,
        )
    return result


def _dialect_name(dialect: str) -> str:
    return dialect or "generic"


def _failed(
    result: StatementLineage, message: str, code: str, line: int | None, col: int | None
) -> StatementLineage:
    result.error = True
    result.type = "ERROR"
    result.problem(message, code=code, severity="error", line=line, column=col)
    return result


def _shift(err_line: object, start: int | None) -> int | None:
    if not isinstance(err_line, int):
        return start
    return err_line + (start or 1) - 1
