"""One lineage per procedure, function or anonymous block.

:mod:`.procedural` finds a block's simple statements; here each data statement is analysed with the
script machinery (:func:`atlas_sync.lineage.sql.script.analyze_text`, passed in) and the results are
merged: temporary tables, table variables and temporary views of the block are intermediate
datasets, composed away (their columns' sources reach the real targets, their row-level
dependencies the whole target); a table the block writes is not also one of its inputs; every
statement's problems are kept with their lines. Parameters and declared variables are values, not
columns; outside T-SQL a ``SELECT ... INTO v`` in a body assigns variables (a read).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from atlas_sync.lineage.model import compose_kinds, dotted
from atlas_sync.lineage.sql.analyze import Context, Edge, StatementLineage, TableRef, ident_name, table_ref
from atlas_sync.lineage.sql.procedural import (
    DATA_WORDS,
    SQL_LANGUAGES,
    TSQL,
    Header,
    body_tokens,
    dynamic_problem,
    dynamic_sql,
    flatten,
    literal_sql,
    upper_text,
    word_at,
)

Analyze = Callable[..., StatementLineage]


def _line_of(sql: str, pos: int, base: int) -> int:
    return base + sql.count("\n", 0, pos)


def analyze_block(
    header: Header,
    text: str,
    tokens: list[Token],
    full_sql: str,
    index: int,
    line: int | None,
    col: int | None,
    ctx: Context,
    analyze: Analyze,
    first_line: int = 1,
) -> StatementLineage:
    """The merged lineage of a procedure, function, trigger or anonymous block (see the module
    docstring). ``tokens`` are the statement's tokens within ``full_sql``; ``analyze`` is
    :func:`atlas_sync.lineage.sql.script.analyze_text`; ``first_line`` is the line ``full_sql``
    starts on."""
    result = StatementLineage(index=index, line=line, column=col, text=text.strip())
    result.type = "BLOCK" if header.kind == "BLOCK" else f"CREATE {header.kind}"
    if header.name:
        result.routine = _routine_name(header.name, ctx)
    body_sql, body, base_line = full_sql, tokens, 1
    declarations = header.declarations
    if header.string_body is not None:
        if header.language and header.language not in SQL_LANGUAGES:
            result.problem(
                f"the body is {header.language.lower()}, not SQL: not analysed", code="foreign-body"
            )
            return result
        body_sql = header.string_body.text
        offset = full_sql.find(body_sql, header.string_body.start)
        base_line = _line_of(full_sql, offset if offset >= 0 else header.string_body.start, first_line)
        try:
            body = body_tokens(body_sql, ctx.dialect)
        except SqlglotError as exc:
            result.problem(f"cannot read the body: {exc}", code="sql-parse", severity="error", line=line)
            result.error = True
            return result
    elif header.body is not None:
        body = tokens[header.body :]
    elif header.unread is not None and (header.language is None or header.language in SQL_LANGUAGES):
        tok = tokens[header.unread]
        result.problem(
            f"the body of {result.routine or header.kind.lower()} is not analysed: it starts with "
            f"{tok.text!r} where BEGIN, DECLARE or a quoted body was expected (check the dialect)",
            code="sql-unsupported",
            severity="error",
            line=tok.line,
        )
        result.error = True
        return result
    elif header.kind != "BLOCK":
        return result  # no SQL body (RETURN expr, external language)
    variables = set(header.parameters)
    temps_before = set(ctx.temporary)
    tokenized = body_sql is full_sql  # a string body is analysed statement by statement as text
    parts: list[StatementLineage] = []
    data = failed = 0
    rewrite = _rewriter(variables, ctx, header.table if ctx.dialect in TSQL else None)
    for n, piece in enumerate(flatten(body, ctx.dialect, declarations=declarations), start=1):
        toks = body[piece.start : piece.end]
        if not toks:
            continue
        first = upper_text(toks[0])
        p_text = body_sql[toks[0].start : toks[-1].end + 1]
        p_line = _line_of(body_sql, toks[0].start, base_line)
        if piece.declaration:
            _declare(toks, variables)
            p_query = _cursor_query(toks)
            if p_query is None:
                continue
            toks, p_text = p_query, body_sql[p_query[0].start : p_query[-1].end + 1]
            p_line = _line_of(body_sql, toks[0].start, base_line)
            first = upper_text(toks[0])
        elif first == "DECLARE":  # T-SQL
            p_query = _declare_tsql(toks, ctx)
            if p_query is None:
                continue
            toks, p_text = p_query, body_sql[p_query[0].start : p_query[-1].end + 1]
            first = upper_text(toks[0])
        elif (first == "LET" and len(toks) > 1) or (
            len(toks) > 2 and toks[1].token_type == TokenType.COLON_EQ
        ):
            if first == "LET":  # Snowflake Scripting LET v := ...
                variables.add(toks[1].text.lower())
            p_query = _cursor_query(toks)  # [LET] res [RESULTSET] := (SELECT ...): a read
            if p_query is None:
                continue
            toks, p_text = p_query, body_sql[p_query[0].start : p_query[-1].end + 1]
            p_line = _line_of(body_sql, toks[0].start, base_line)
            first = upper_text(toks[0])
        if dynamic_sql(toks, ctx.dialect):
            literal = literal_sql(toks)
            if literal is not None:  # EXEC ('INSERT ...'): the SQL is known, analyse it
                inner = Header(kind="BLOCK", string_body=literal, language="SQL")
                parts.append(analyze_block(inner, p_text, toks, body_sql, n, p_line, None, ctx, analyze))
            else:
                result.problems.append(dynamic_problem(p_text, p_line))
            continue
        if first not in DATA_WORDS and piece.rewrite is None:
            if _unknown(toks, first):
                result.problem(
                    f"statement not analysed (not one the reader knows moves no data): {_short(p_text)}",
                    code="unsupported-statement",
                    line=p_line,
                )
            continue
        data += 1
        if piece.rewrite is not None:
            text_ = piece.rewrite + body_sql[toks[0].end + 1 : toks[-1].end + 1]
            st = analyze(text_, n, p_line, None, ctx, rewrite=rewrite)
        elif tokenized:
            st = analyze(p_text, n, p_line, None, ctx, tokens=toks, full_sql=body_sql, rewrite=rewrite)
        else:
            st = analyze(p_text, n, p_line, None, ctx, rewrite=rewrite)
        if st.error:
            failed += 1
        parts.append(st)
    _merge(result, parts)
    # The block's temporary tables and table variables are its own: later statements of the
    # script do not see them.
    ctx.temporary.intersection_update(temps_before)
    if data and failed == data:
        result.error = True
    if header.kind == "PROCEDURE" and not (result.reads or result.writes or result.problems):
        # a procedure is there to move data: an empty lineage is said, never left silent
        result.problem(
            f"{result.routine or 'the procedure'}: no lineage: its body reads and writes no table "
            f"({data} data statement{'' if data == 1 else 's'}; a DELETE reading only its target, "
            "for one, moves no data)",
            code="no-lineage",
            line=line,
        )
    return result


# Statements of a body that move no data between tables (control flow, variables, transactions,
# messages, cursors, session settings, calls); any other statement is reported, never skipped silently.
_NO_DATA = frozenset(
    [
        "SET",
        "RETURN",
        "PRINT",
        "RAISERROR",
        "THROW",
        "RAISE",
        "COMMIT",
        "ROLLBACK",
        "BEGIN",
        "START",
        "SAVE",
        "END",
        "CALL",
        "EXEC",
        "EXECUTE",
        "OPEN",
        "CLOSE",
        "FETCH",
        "DEALLOCATE",
        "BREAK",
        "CONTINUE",
        "GOTO",
        "WAITFOR",
        "LET",
        "NULL",
        "EXIT",
        "LEAVE",
        "ITERATE",
        "SIGNAL",
        "RESIGNAL",
        "GET",
        "USE",
        "GRANT",
        "REVOKE",
        "LOCK",
        "ANALYZE",
        "VACUUM",
        "DECLARE",
        "PERFORM",
        "ASSERT",
        "SHOW",
        "DESCRIBE",
        "DESC",
        "UNSET",
        "COMMENT",
        "REFRESH",
        "CHECKPOINT",
        "DBCC",
        "KILL",
        "RECONFIGURE",
        "SHUTDOWN",
        "LOOP",
        "ELSE",
    ]
)


def _unknown(toks: list[Token], first: str) -> bool:
    """A body statement the reader neither analyses nor knows to move no data. Assignments
    (``v := 1``, ``v = 1``) and procedure calls (``pkg.proc(...)``) start with a name."""
    if not first or first in _NO_DATA:
        return False
    if toks[0].token_type in (TokenType.VAR, TokenType.PARAMETER) and len(toks) > 1:
        return toks[1].token_type not in (
            TokenType.COLON_EQ,
            TokenType.EQ,
            TokenType.L_PAREN,
            TokenType.DOT,
            TokenType.COLON,
        )
    return toks[0].token_type not in (TokenType.VAR, TokenType.PARAMETER)


def _short(text: str) -> str:
    short = " ".join(text.split())
    return short if len(short) <= 100 else short[:97] + "..."


def _routine_name(name: str, ctx: Context) -> str:
    try:
        table = exp.to_table(name, dialect=ctx.dialect or None)
    except (SqlglotError, ValueError):
        return name
    ref = table_ref(table, ctx) if isinstance(table, exp.Table) else None
    return ref.id if ref is not None else name


def _declare(toks: list[Token], variables: set[str]) -> None:
    """A declaration (``v_total NUMBER := 0``, ``c CURSOR FOR ...``, ``CURSOR c IS ...``) names a
    variable."""
    name = toks[1] if upper_text(toks[0]) == "CURSOR" and len(toks) > 1 else toks[0]
    if name.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
        variables.add(name.text.lower())


def _cursor_query(toks: list[Token]) -> list[Token] | None:
    """The query of a cursor declaration (``... CURSOR FOR SELECT``, ``CURSOR c IS SELECT``) or
    of a query-valued variable (Snowflake ``res RESULTSET := (SELECT ...)``, ``DEFAULT (...)``)."""
    for k, tok in enumerate(toks[:-1]):
        opens = upper_text(tok) in ("FOR", "IS", "DEFAULT") or tok.token_type == TokenType.COLON_EQ
        if not opens:
            continue
        start = k + 1
        while start < len(toks) and toks[start].token_type == TokenType.L_PAREN:
            start += 1
        if word_at(toks, start) not in ("SELECT", "WITH"):
            continue
        end = len(toks)
        for _ in range(start - k - 1):  # the parentheses around the query
            if toks[end - 1].token_type == TokenType.R_PAREN:
                end -= 1
        return toks[start:end]
    return None


def _declare_tsql(toks: list[Token], ctx: Context) -> list[Token] | None:
    """T-SQL ``DECLARE @t TABLE (cols)``: an intermediate dataset named ``@t`` with those columns;
    ``DECLARE c CURSOR FOR SELECT ...``: its query (a read) is returned."""
    for k in range(1, len(toks) - 2):
        if toks[k].token_type == TokenType.PARAMETER and upper_text(toks[k + 2]) in ("TABLE", "AS"):
            if upper_text(toks[k + 2]) == "AS" and word_at(toks, k + 3) != "TABLE":
                continue
            name = "@" + toks[k + 1].text.lower()
            start = k + 3 if upper_text(toks[k + 2]) == "TABLE" else k + 4
            ctx.temporary.add(dotted(name))
            cols = _column_names(toks, start)
            if cols:
                ctx.schema.add((name,), cols)
            return None
    return _cursor_query(toks)


def _column_names(toks: list[Token], i: int) -> list[str]:
    """The column names of a ``(name type, ...)`` definition list at ``i`` (constraints skipped)."""
    cols: list[str] = []
    depth, expect = 0, False
    for tok in toks[i:]:
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
            expect = depth == 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and tok.token_type == TokenType.COMMA:
            expect = True
        elif expect and depth == 1:
            if upper_text(tok) not in ("PRIMARY", "UNIQUE", "INDEX", "CHECK", "CONSTRAINT", "FOREIGN"):
                cols.append(
                    ident_name(exp.to_identifier(tok.text, quoted=tok.token_type == TokenType.IDENTIFIER))
                )
            expect = False
    return cols


def _rewriter(
    variables: set[str], ctx: Context, trigger_table: str | None = None
) -> Callable[[exp.Expr], exp.Expr]:
    """Adapt a body statement before analysis: T-SQL table variables ``@t`` become tables named
    ``@t``, a T-SQL trigger's ``inserted``/``deleted`` rows are its table's; elsewhere ``SELECT ... INTO v`` assigns variables (a read) and names of parameters and
    declared variables are values, not columns."""
    tsql = ctx.dialect in TSQL

    on: exp.Table | None = None
    if trigger_table:
        with contextlib.suppress(SqlglotError, ValueError):
            on = exp.to_table(trigger_table, dialect=ctx.dialect or None)

    def rewrite(expr: exp.Expr) -> exp.Expr:
        for table in list(expr.find_all(exp.Table)):
            this = table.this
            if (
                on is not None
                and isinstance(this, exp.Identifier)
                and not table.db
                and this.this.lower() in ("inserted", "deleted")
            ):
                alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(this.this))
                table.set("this", on.this.copy())
                for part in ("db", "catalog"):
                    value = on.args.get(part)
                    table.set(part, value.copy() if isinstance(value, exp.Expr) else None)
                table.set("alias", alias)  # inserted.id still names the rows
                continue
            if isinstance(this, exp.Parameter) and isinstance(this.this, (exp.Var, exp.Identifier)):
                table.set("this", exp.to_identifier("@" + this.this.name.lower()))
        if not tsql:
            for sel in list(expr.find_all(exp.Select)):
                into = sel.args.get("into")
                if isinstance(into, exp.Into):
                    into.pop()
        if variables:
            for col in list(expr.find_all(exp.Column)):
                if not isinstance(col.this, exp.Identifier):
                    continue
                name = col.name.lower()
                owner = col.table.lower() if col.table else None
                if (owner is None and name in variables) or (owner is not None and owner in variables):
                    col.replace(exp.Placeholder(this=col.sql()))
        return expr

    return rewrite


def _merge(result: StatementLineage, parts: list[StatementLineage]) -> None:
    """One lineage from a body's statements, in order: intermediate datasets (temporary tables,
    table variables, temporary views) the body writes and reads are composed away, others kept; a
    table the block writes is not also one of its inputs; every statement's problems are kept with
    their lines."""
    intermediate: set[str] = set()
    written: set[str] = set()
    read: set[str] = set()
    for st in parts:
        for ref in [*st.reads, *st.writes]:
            if ref.kind == "intermediate":
                intermediate.add(ref.id)
        written |= {w.id for w in st.writes}
        read |= {r.id for r in st.reads}
        read |= {e.source for e in st.edges if e.source != e.target}
    # Only a temporary dataset the body both writes and reads is composed away; one it only writes
    # (a result left for the session or the caller) or only reads (filled by the caller) is kept,
    # as a temporary dataset of its own.
    kept = {i for i in intermediate if i not in written or i not in read}
    intermediate -= kept
    # Each edge into an intermediate column, by (dataset, column), from earlier statements.
    into: dict[tuple[str, str | None], list[Edge]] = {}
    edges: list[Edge] = []
    seen: set[tuple[str, str, str, str | None, str]] = set()

    def resolve(e: Edge, depth: int = 0) -> list[Edge]:
        if e.source not in intermediate:
            return [e]
        if depth > 32:
            return []
        out: list[Edge] = []
        upstream = into.get((e.source, e.source_column), [])
        whole = into.get((e.source, None), [])
        for u in upstream:
            kind = compose_kinds(e.kind, u.kind)
            out += resolve(
                Edge(u.source, u.source_column, e.target, e.target_column, kind, e.expression), depth + 1
            )
        for u in whole:  # row-level dependencies of the intermediate reach the whole target
            out += resolve(Edge(u.source, u.source_column, e.target, None, u.kind, u.expression), depth + 1)
        return out

    for st in parts:
        for ref in st.reads:
            if ref.id not in intermediate and all(r.id != ref.id for r in result.reads):
                result.reads.append(ref)
        for ref in st.writes:
            if ref.id in intermediate:
                continue
            have = next((w for w in result.writes if w.id == ref.id), None)
            if have is None:
                result.writes.append(TableRef(ref.id, ref.namespace, ref.name, ref.kind, list(ref.columns)))
            else:
                have.columns += [c for c in ref.columns if c not in have.columns]
        new_into: dict[tuple[str, str | None], list[Edge]] = {}
        for e in st.edges:
            resolved = resolve(e)
            if e.target in intermediate:
                for r in resolved:
                    new_into.setdefault((r.target, r.target_column), []).append(r)
                continue
            for r in resolved:
                key = (r.source, r.source_column, r.target, r.target_column, r.kind)
                if key not in seen:
                    seen.add(key)
                    edges.append(r)
        for column, value in new_into.items():  # later statements see what this one put there
            into.setdefault(column, []).extend(value)
        for p in st.problems:
            result.problems.append({**p, "line": p.get("line", st.line)})
    result.edges = edges
    outputs = {w.id for w in result.writes}
    result.reads = [r for r in result.reads if r.id not in outputs]
