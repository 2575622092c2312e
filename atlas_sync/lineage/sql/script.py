"""Multi-statement SQL scripts: split on top-level semicolons (and T-SQL ``GO``), parse each
statement on its own (one bad statement must not hide the others), and analyse them in order so
later statements see the tables, views and columns earlier ones created. Procedures, functions and
anonymous blocks are kept whole and analysed by :mod:`.procedural`."""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable, Mapping

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError
from sqlglot.tokens import Token, TokenType

from atlas_sync.lineage.sql import tsql
from atlas_sync.lineage.sql.analyze import Context, StatementLineage, StatementRejected, analyze_statement
from atlas_sync.lineage.sql.blocks import analyze_block
from atlas_sync.lineage.sql.delimiter import client_delimiters
from atlas_sync.lineage.sql.opaque import command_kind, incomplete, reduce_create
from atlas_sync.lineage.sql.procedural import (
    BLOCK_STARTS,
    TSQL,
    Header,
    block_end,
    block_header,
    body_tokens,
    dynamic_problem,
    dynamic_sql,
    flatten,
    literal_sql,
    may_hold_blocks,
    upper_text,
)
from atlas_sync.lineage.sql.schema import SchemaStore

# sqlglot logs a warning for every statement it falls back to parsing as an opaque command; we
# record those as problems ourselves.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def split_statements(sql: str, dialect: str) -> list[tuple[str, int, int, list[Token] | None]]:
    """(text, line, column, tokens) of each statement; tokens is None when the script could not be
    tokenized (then statements are split on semicolons at line ends and parsed one by one)."""
    sql = client_delimiters(sql)
    d = Dialect.get_or_raise(dialect or None)
    try:
        tokens = d.tokenize(sql)
    except (TokenError, SqlglotError):
        return _naive_split(sql)
    # T-SQL ends statements without semicolons too: its scripts are always split on the scan.
    tsql = (dialect or "") in ("tsql", "fabric")
    blocks = tsql or may_hold_blocks(tokens)
    scan = tokens
    if blocks:
        try:
            scan = body_tokens(sql, dialect)
        except (TokenError, SqlglotError):
            scan, blocks = tokens, False
    starts = [t.start for t in tokens] if blocks else []
    out: list[tuple[str, int, int, list[Token] | None]] = []
    for chunk, is_block in _chunks(scan, dialect, blocks):
        if not chunk:
            continue
        if is_block or not blocks:
            out.append(_statement(sql, chunk, chunk, blocks))
            continue
        # T-SQL: a chunk may hold several statements and control flow (IF ..., BEGIN TRAN, ...).
        parts = [chunk[p.start : p.end] for p in flatten(chunk, dialect)] if tsql else [chunk]
        for part in parts:
            if not part:
                continue
            # Other statements are parsed from the dialect's own tokens (its opaque commands);
            # where those differ from the scan's, the statement is tokenized again on its own.
            lo = bisect.bisect_left(starts, part[0].start)
            hi = bisect.bisect_right(starts, part[-1].end)
            mine = tokens[lo:hi]
            same = len(mine) == len(part) and all(x.text == y.text for x, y in zip(mine, part, strict=True))
            out.append(_statement(sql, part, mine if same else None, blocks))
    return out


def _statement(
    sql: str, chunk: list[Token], own: list[Token] | None, blocks: bool
) -> tuple[str, int, int, list[Token] | None]:
    first, last = chunk[0], chunk[-1]
    text = sql[first.start : last.end + 1]
    col = max(1, first.col - (first.end - first.start))
    line = first.line if not blocks else sql.count("\n", 0, first.start) + 1
    return text, line, col, own


def _chunks(tokens: list[Token], dialect: str, blocks: bool) -> list[tuple[list[Token], bool]]:
    """Statements' tokens and whether each is a block: split on semicolons (and T-SQL ``GO``),
    blocks kept whole."""
    chunks: list[tuple[list[Token], bool]] = [([], False)]
    tsql = (dialect or "") in ("tsql", "fabric")
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        current = chunks[-1][0]
        if tok.token_type == TokenType.SEMICOLON or (
            tsql and tok.token_type == TokenType.COMMAND and tok.text.upper() == "GO"
        ):
            chunks.append(([], False))
            i += 1
            continue
        if blocks and not current and upper_text(tok) in BLOCK_STARTS:
            # A procedure or block: its inner semicolons do not end it.
            if block_header(tokens, dialect, i) is not None:
                chunks[-1] = (current, True)  # a body in one string: it ends at a semicolon
            end = block_end(tokens, dialect, i)
            if end is not None and end > i:
                chunks[-1] = (tokens[i:end], True)
                chunks.append(([], False))
                i = end
                if i < n and tokens[i].token_type == TokenType.SEMICOLON:
                    i += 1
                if dialect == "oracle" and i < n and tokens[i].token_type == TokenType.SLASH:
                    i += 1  # SQL*Plus runs the block with a / line
                continue
        current.append(tok)
        i += 1
    return chunks


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
    sql = client_delimiters(sql)  # positions kept: statements' texts and tokens index it
    results: list[StatementLineage] = []
    for index, (text, line, col, tokens) in enumerate(split_statements(sql, ctx.dialect), start=1):
        header = block_header(tokens, ctx.dialect) if tokens else None
        if header is not None and tokens is not None:
            results.append(analyze_block(header, text, tokens, sql, index, line, col, ctx, analyze_text))
            continue
        if tokens and dynamic_sql(tokens, ctx.dialect):
            results.append(_dynamic(text, index, line, col, tokens, sql, ctx))
            continue
        results.append(analyze_text(text, index, line, col, ctx, tokens=tokens, full_sql=sql))
    return results


def _dynamic(
    text: str, index: int, line: int | None, col: int | None, tokens: list[Token], sql: str, ctx: Context
) -> StatementLineage:
    """``EXEC(@sql)``, ``EXECUTE IMMEDIATE v``: a warning naming the statement, never a guess; when
    the SQL run is one string literal it is known, and analysed."""
    try:
        tokens = body_tokens(text, ctx.dialect)  # the dialect's own tokens read EXECUTE's rest as one string
        sql = text
    except SqlglotError:
        pass
    literal = literal_sql(tokens)
    if literal is not None:
        header = Header(kind="BLOCK", string_body=literal, language="SQL")
        return analyze_block(
            header, text, tokens, sql, index, line, col, ctx, analyze_text, first_line=line or 1
        )
    result = StatementLineage(index=index, line=line, column=col, text=text.strip(), type="DYNAMIC SQL")
    result.problems.append(dynamic_problem(text, line))
    return result


def analyze_text(
    text: str,
    index: int,
    line: int | None,
    col: int | None,
    ctx: Context,
    *,
    tokens: list[Token] | None = None,
    full_sql: str | None = None,
    rewrite: Callable[[exp.Expr], exp.Expr] | None = None,
) -> StatementLineage:
    """Parse and analyse one statement; errors become an ``error`` problem on the result.
    ``rewrite`` adapts the parsed statement first (procedure bodies: variables are not columns)."""
    result = StatementLineage(index=index, line=line, column=col, text=text.strip())
    tsql_parts = tsql.rewrite(text, tokens, ctx.dialect) if ctx.dialect in TSQL else None
    if tsql_parts is not None:
        text, tokens, full_sql = tsql_parts.text, None, None
    expr, err = parse_statement(text, ctx.dialect, tokens, full_sql or text)
    replace = _REPLACE_INTO.match(text)
    if replace and (err is not None or isinstance(expr, exp.Command)):
        # MySQL/Doris/SQLite REPLACE INTO ... SELECT moves data like INSERT; sqlglot keeps it
        # opaque (a script's statement) or refuses it (a body's, read without command words).
        as_insert, _err = parse_statement("INSERT" + text[replace.end() :], ctx.dialect, None, "")
        if as_insert is not None and not isinstance(as_insert, exp.Command):
            expr, err = as_insert, None
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
    for tok in tokens:
        other = _NOT_IN_DIALECT.get(ctx.dialect, {}).get(tok.token_type)
        if other is not None:
            result.problem(
                f"{_dialect_name(ctx.dialect)} has no {tok.text.upper()} (it has {other}): "
                "analysed as written, check the statement's dialect",
                code="dialect-syntax",
                line=_shift(tok.line, line) if relative else tok.line,
                column=max(1, tok.col - (tok.end - tok.start)),
            )
            break
    try:
        fold_quoted(expr, ctx.dialect)
        if rewrite is not None:
            expr = rewrite(expr)
        analyze_statement(expr, ctx, result)
        if tsql_parts is not None:
            _tsql_extras(tsql_parts, expr, result, ctx, rewrite)
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


def _tsql_extras(
    parts: tsql.Rewritten,
    expr: exp.Expr,
    result: StatementLineage,
    ctx: Context,
    rewrite: Callable[[exp.Expr], exp.Expr] | None,
) -> None:
    """What :func:`atlas_sync.lineage.sql.tsql.rewrite` took out of a statement: ``INSERT ... EXEC
    proc`` is a warning; ``OUTPUT ... INTO t`` a second flow, from the rows the statement changed
    (its target's columns as ``inserted``/``deleted``, a MERGE's source by its alias) into ``t``."""
    if parts.exec_call is not None:
        result.problem(
            f"rows from a procedure's result set not analysed: {' '.join(parts.exec_call.split())[:100]}",
            code="unsupported-statement",
            line=result.line,
        )
    if parts.output_into is None or not parts.output_exprs:
        return
    target = expr.this.this if isinstance(expr.this, exp.Schema) else expr.this
    if not isinstance(target, exp.Table):
        return
    name = target.copy()
    name.set("alias", None)
    name.set("hints", None)  # WITH (HOLDLOCK) locks the target; in the FROM of the flow it is not SQL
    dialect = ctx.dialect or None
    sources = [f"{name.sql(dialect)} AS inserted", f"{name.sql(dialect)} AS deleted"]
    using = expr.args.get("using") if isinstance(expr, exp.Merge) else None
    if isinstance(using, exp.Expr):
        sources.append(using.sql(dialect))
    exprs = [re.sub(r"(?i)^\$action\b", "NULL", e) for e in parts.output_exprs]
    columns = f" ({', '.join(parts.output_columns)})" if parts.output_columns else ""
    sql = f"INSERT INTO {parts.output_into}{columns} SELECT {', '.join(exprs)} FROM {' CROSS JOIN '.join(sources)}"
    extra = analyze_text(sql, result.index, result.line, None, ctx, rewrite=rewrite)
    for p in extra.problems:
        result.problems.append({**p, "line": result.line})
    have = {r.id for r in result.reads}
    result.reads += [r for r in extra.reads if r.id not in have]
    result.writes += [w for w in extra.writes if all(w.id != x.id for x in result.writes)]
    result.edges += extra.edges


def fold_quoted(expr: exp.Expr, dialect: str) -> None:
    """Quoted identifiers that the dialect's case rules make equal to an unquoted one are unquoted
    (atlas-sync lower-cases unquoted names): Snowflake/Oracle ``"TOTALPRICE"`` is ``TotalPrice``,
    ``"TotalPrice"`` stays itself; in case-insensitive dialects (T-SQL, Spark, DuckDB, Trino,
    Redshift) every quoted name is. Case-sensitive dialects keep quoted names as written."""
    strategy = Dialect.get_or_raise(dialect or None).NORMALIZATION_STRATEGY
    if strategy not in (NormalizationStrategy.UPPERCASE, NormalizationStrategy.CASE_INSENSITIVE):
        return
    upper = strategy == NormalizationStrategy.UPPERCASE
    for ident in expr.find_all(exp.Identifier):
        if ident.quoted and (not upper or ident.this == ident.this.upper()):
            ident.set("this", ident.this.lower())
            ident.set("quoted", False)


# Keywords sqlglot's parser accepts in a dialect that does not have them: analysed, with a warning.
_NOT_IN_DIALECT: dict[str, dict[TokenType, str]] = {
    "tsql": {TokenType.LIMIT: "TOP and OFFSET ... FETCH"},
    "fabric": {TokenType.LIMIT: "TOP and OFFSET ... FETCH"},
    "oracle": {TokenType.LIMIT: "FETCH FIRST n ROWS ONLY"},
}


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
