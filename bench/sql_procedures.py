"""Stored procedures: table and column F1 of atlas-sync, sqllineage and sqlglot per dialect on the
hand-written procedure corpus (tests/data/sql/procedures/corpus/, issue 43; its README gives the
format and the conventions the expectations follow).

Each tool gets the whole file, as a user would give it; ``$$``/``$tag$`` bodies (PL/pgSQL,
Snowflake) are also given to sqllineage and sqlglot on their own, since neither looks inside a
string. The same normalisation is applied to every tool's answer before scoring: names lower-cased
without quotes/brackets/backticks (sqllineage's ``<default>.`` prefix dropped), the intermediates
the expectations name (temporary tables, table variables) composed away (edges through them
joined up, the intermediates themselves dropped), a table that is written not also counted as read.
Column edges are (target column, source column) pairs; for sqllineage every step of its paths,
for sqlglot ``lineage()`` on each INSERT/CREATE ... AS query (it has no lineage for UPDATE/MERGE).
F1 is micro-averaged over the procedures of a dialect; a tool that raises on a file gets nothing
for it. Run by ``bench/sql_lineage.py`` (``--procedures-only`` for this part alone).
"""

from __future__ import annotations

import re
import signal
import tomllib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel
from sqlglot.lineage import lineage as sqlglot_lineage

from atlas_sync.lineage.model import DIRECT_KINDS
from atlas_sync.lineage.sql.script import analyze_sql

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "sql" / "procedures" / "corpus"
DIALECTS = ("tsql", "snowflake", "postgres", "mysql")
SQLFLUFF = {"tsql": "tsql", "snowflake": "snowflake", "postgres": "postgres", "mysql": "mysql"}
TIMEOUT_S = 20


@dataclass
class Lineage:
    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    columns: set[tuple[str, str]] = field(default_factory=set)  # (target column, source column)
    rejected: bool = False  # atlas-sync: a statement was an error
    problems: int = 0


@dataclass
class Procedure:
    dialect: str
    file: str
    sql: str
    expected: Lineage
    intermediates: set[str]


def load() -> list[Procedure]:
    out = []
    for dialect in DIALECTS:
        spec = tomllib.loads((CORPUS / dialect / "expected.toml").read_text(encoding="utf-8"))
        for p in spec["procedure"]:
            cols = {(t, s) for t, sources in p.get("columns", {}).items() for s in sources}
            out.append(
                Procedure(
                    dialect,
                    p["file"],
                    (CORPUS / dialect / p["file"]).read_text(encoding="utf-8"),
                    Lineage(set(p["reads"]), set(p["writes"]), cols),
                    set(p.get("intermediates", [])),
                )
            )
    return out


def norm(name: str) -> str:
    name = name.strip().lower()
    name = re.sub(r"^<default>\.", "", name)
    return re.sub(r"[\"`\[\]]", "", name)


def _table_of(column: str) -> str:
    return column.rsplit(".", 1)[0]


def normalise(raw: Lineage, intermediates: set[str]) -> Lineage:
    """The same treatment for every tool (see the module docstring)."""
    reads = {norm(t) for t in raw.reads} - intermediates
    writes = {norm(t) for t in raw.writes} - intermediates
    edges = {(norm(t), norm(s)) for t, s in raw.columns if not s.endswith(".*")}  # COUNT(*)
    into: dict[str, set[str]] = {}
    for t, s in edges:
        into.setdefault(t, set()).add(s)

    def sources(col: str, depth: int = 0) -> set[str]:
        if _table_of(col) not in intermediates:
            return {col}
        if depth > 16:
            return set()
        out: set[str] = set()
        for s in into.get(col, ()):
            if s != col:
                out |= sources(s, depth + 1)
        return out

    columns = set()
    for t, s in edges:
        if _table_of(t) in intermediates:
            continue
        columns |= {(t, x) for x in sources(s)}
    return Lineage(reads - writes, writes, columns, raw.rejected, raw.problems)


# ---------------------------------------------------------------------- the three tools
def ours(p: Procedure) -> Lineage:
    out = Lineage()
    for st in analyze_sql(p.sql, dialect=p.dialect):
        out.reads |= {r.id for r in st.reads}
        out.writes |= {w.id for w in st.writes}
        out.columns |= {
            (f"{e.target}.{e.target_column}", f"{e.source}.{e.source_column}")
            for e in st.edges
            if e.target_column is not None and e.kind in DIRECT_KINDS
        }
        out.rejected |= st.error or any(x["severity"] == "error" for x in st.problems)
        out.problems += len(st.problems)
    return out


_DOLLAR_BODY = re.compile(r"(\$[A-Za-z_]*\$)(.*?)\1", re.S)


def _texts(p: Procedure) -> list[str]:
    """The file, and its ``$$`` bodies for the tools that do not look inside strings."""
    return [p.sql, *(m.group(2) for m in _DOLLAR_BODY.finditer(p.sql))]


def _chunks(text: str) -> list[str]:
    """The fallback when a tool refuses a whole text: its ``;``-separated pieces, a leading
    ``BEGIN [TRY|TRAN...]`` taken off (generous to the tools: they have no procedural reader)."""
    out = []
    for chunk in text.split(";"):
        chunk = re.sub(r"^\s*(BEGIN(\s+(TRY|CATCH|TRAN|TRANSACTION))?\b)", "", chunk.strip(), flags=re.I)
        if chunk.strip():
            out.append(chunk)
    return out


def run_sqllineage(p: Procedure) -> Lineage:
    from sqllineage.runner import LineageRunner  # type: ignore[import-not-found]

    warnings.filterwarnings("ignore", module="sqllineage")
    out = Lineage()
    failed = 0
    texts = _texts(p)

    def one(text: str) -> bool | None:
        """True: tables found; False: refused; None: nothing found."""
        try:
            runner = LineageRunner(text, dialect=SQLFLUFF[p.dialect], silent_mode=True)
            reads = {str(t) for t in runner.source_tables}
            writes = {str(t) for t in runner.target_tables}
            paths = runner.get_column_lineage(exclude_path_ending_in_subquery=True)
        except Exception:  # noqa: BLE001 - a failure is a data point here
            return False
        out.reads |= reads
        out.writes |= writes
        for path in paths:
            for a, b in zip(path, path[1:], strict=False):
                out.columns.add((str(b), str(a)))
        return True if reads or writes else None

    for text in texts:
        found = one(text)
        failed += found is False
        if not found:
            for chunk in _chunks(text):
                one(chunk)
    out.rejected = failed == len(texts)
    return out


def _parse(text: str, dialect: str) -> list[exp.Expr] | None:
    """sqlglot's statements of a text (None when it refuses it); texts it refuses or finds no
    data statement in are parsed again piece by piece (see _chunks)."""
    try:
        whole = [t for t in sqlglot.parse(text, read=dialect) if t is not None]
        dml = (exp.Insert, exp.Update, exp.Merge, exp.Delete, exp.Into)
        if any(
            t.find(*dml) or (isinstance(t, exp.Create) and isinstance(t.expression, exp.Query)) for t in whole
        ):
            return whole
    except Exception:  # noqa: BLE001
        pass
    trees: list[exp.Expr] = []
    for chunk in _chunks(text):
        try:
            trees += [
                t for t in sqlglot.parse(chunk, read=dialect, error_level=ErrorLevel.RAISE) if t is not None
            ]
        except Exception:  # noqa: BLE001
            continue
    return trees or None


def _target(node: exp.Expr) -> exp.Table | None:
    this = node.args.get("into") if isinstance(node, exp.Select) else node.this
    if isinstance(this, exp.Into):
        this = this.this
    if isinstance(this, exp.Schema):
        this = this.this
    return this if isinstance(this, exp.Table) else None


def _name(t: exp.Table) -> str:
    """The table's name as written: T-SQL ``#t`` / ``##t`` and ``@t`` keep their sign."""
    parts = []
    for part in t.parts:
        if isinstance(part, exp.Identifier) and part.args.get("temporary"):
            parts.append("#" + part.name)
        elif isinstance(part, exp.Identifier) and part.args.get("global_"):
            parts.append("##" + part.name)
        elif isinstance(part, (exp.Parameter, exp.Var)) and not isinstance(part, exp.Identifier):
            parts.append("@" + part.name)
        else:
            parts.append(part.name)
    return ".".join(parts)


def run_sqlglot(p: Procedure) -> Lineage:
    """Tables from the parsed statements (the DML nodes found in them), columns from lineage()."""
    out = Lineage()
    kinds = (exp.Insert, exp.Update, exp.Merge, exp.Delete, exp.Create, exp.Select)
    texts = _texts(p)
    parsed = [_parse(text, p.dialect) for text in texts]
    out.rejected = all(trees is None for trees in parsed)
    for trees in parsed:
        for tree in trees or []:
            for node in tree.find_all(*kinds):
                if isinstance(node, exp.Select) and not node.args.get("into"):
                    if node.parent is None or isinstance(node.parent, exp.Block):
                        ctes = {c.alias_or_name.lower() for c in node.find_all(exp.CTE)}
                        out.reads |= {
                            _name(t) for t in node.find_all(exp.Table) if t.name.lower() not in ctes
                        }
                    continue
                if isinstance(node, exp.Create) and not isinstance(node.expression, exp.Query):
                    continue
                target = _target(node)
                if target is None:
                    continue
                tname = _name(target)
                out.writes.add(tname)
                ctes = {c.alias_or_name.lower() for c in node.find_all(exp.CTE)}
                out.reads |= {
                    _name(t)
                    for t in node.find_all(exp.Table)
                    if t is not target and t.name.lower() not in ctes
                }
                out.columns |= _sqlglot_columns(node, tname, p.dialect)
    return out


def _sqlglot_columns(node: exp.Expr, target: str, dialect: str) -> set[tuple[str, str]]:
    query: Any = node.expression if isinstance(node, (exp.Insert, exp.Create)) else node
    if isinstance(node, exp.Select):
        query = node.copy()
        query.set("into", None)
    if not isinstance(query, exp.Query):
        return set()
    names: list[str] | None = None
    if isinstance(node, exp.Insert) and isinstance(node.this, exp.Schema):
        names = [c.name for c in node.this.expressions]
    try:
        nodes = sqlglot_lineage(None, query, schema={}, dialect=dialect)
    except Exception:  # noqa: BLE001
        return set()
    if not isinstance(nodes, dict):
        return set()
    out = set()
    for i, (column, root) in enumerate(nodes.items()):
        name = names[i] if names and i < len(names) else column
        for n in root.walk():
            if not n.downstream and isinstance(n.expression, exp.Table):
                out.add((f"{target}.{name}", f"{_name(n.expression)}.{n.name.split('.')[-1]}"))
    return out


# ---------------------------------------------------------------------- scoring
class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _guarded(fn: Callable[[Procedure], Lineage], p: Procedure) -> Lineage:
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S)
        return fn(p)
    except (Exception, _Timeout):  # noqa: BLE001 - a failure is a data point here
        return Lineage(rejected=True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _f1(tp: int, fp: int, fn: int) -> float:
    return round(2 * tp / (2 * tp + fp + fn), 3) if tp + fp + fn else 1.0


def score(procedures: list[Procedure], tools: dict[str, Callable[[Procedure], Lineage]]) -> dict[str, Any]:
    """Per tool and dialect: table F1, column F1, procedures exact, rejected, empty without a problem."""
    report: dict[str, Any] = {}
    for tool, fn in tools.items():
        per: dict[str, Any] = {}
        for dialect in DIALECTS:
            counts = {"t": [0, 0, 0], "c": [0, 0, 0]}
            n = exact = rejected = silent = 0
            for p in (p for p in procedures if p.dialect == dialect):
                n += 1
                raw = _guarded(fn, p)
                got = normalise(raw, p.intermediates)
                want = p.expected
                rejected += raw.rejected
                silent += not (raw.reads or raw.writes or raw.problems)
                g_t = {("r", t) for t in got.reads} | {("w", t) for t in got.writes}
                w_t = {("r", t) for t in want.reads} | {("w", t) for t in want.writes}
                for key, g, w in (("t", g_t, w_t), ("c", got.columns, want.columns)):
                    counts[key][0] += len(g & w)
                    counts[key][1] += len(g - w)
                    counts[key][2] += len(w - g)
                exact += g_t == w_t and got.columns == want.columns
            per[dialect] = {
                "procedures": n,
                "table_f1": _f1(*counts["t"]),
                "column_f1": _f1(*counts["c"]),
                "exact": exact,
                "rejected": rejected,
                "empty_without_problem": silent,
            }
        report[tool] = per
    return report


def tools() -> tuple[dict[str, Callable[[Procedure], Lineage]], list[str]]:
    found: dict[str, Callable[[Procedure], Lineage]] = {"atlas-sync": ours}
    notes = []
    try:
        import sqllineage  # type: ignore[import-not-found]  # noqa: F401

        found["sqllineage"] = run_sqllineage
    except ImportError:
        notes.append("sqllineage not installed: its procedure figures skipped (pip install sqllineage)")
    found["sqlglot"] = run_sqlglot
    return found, notes


def print_report(report: dict[str, Any]) -> None:
    names = list(report)
    print("\nstored procedures (tests/data/sql/procedures/corpus): table F1 / column F1, exact, rejected")
    print(f"{'dialect':<11}{'n':>4}" + "".join(f"{n:>28}" for n in names))
    for dialect in DIALECTS:
        row = report[names[0]][dialect]
        cells = []
        for n in names:
            r = report[n][dialect]
            cells.append(f"{r['table_f1']:.3f} / {r['column_f1']:.3f} {r['exact']:>3} {r['rejected']:>3}")
        print(f"{dialect:<11}{row['procedures']:>4}" + "".join(f"{c:>28}" for c in cells))
    silent = {n: sum(report[n][d]["empty_without_problem"] for d in DIALECTS) for n in names}
    print(f"empty without a problem: {silent}")
