"""Benchmark: SQL column lineage on bench/sql_corpus/ (>= 200 statements, 12 dialects).

Compares, statement by statement and in the same run:
  * atlas-sync's ``sql`` reader (parse + qualify + column lineage with kinds, one statement at a time),
  * sqlglot's plain ``sqlglot.lineage.lineage`` called once per output column,
  * sqllineage's ``LineageRunner(...).get_column_lineage()`` (skipped with a note if not installed),
then the ``query-log`` reader on a generated 10,000-statement log with 2 workers, and the three
tools' table and column F1 per dialect on the hand-written stored-procedure corpus
(tests/data/sql/procedures/corpus/, see bench/sql_procedures.py).

Prints tables and writes JSON to bench/results/sql_lineage.json.

    .venv/bin/python bench/sql_lineage.py [--quick] [--log-rows 10000] [--workers 2] [--procedures-only]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import platform
import random
import re
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

import sqlglot  # noqa: E402
from sqlglot import exp  # noqa: E402
from sqlglot.lineage import lineage as sqlglot_lineage  # noqa: E402

from atlas_sync.lineage.readers.query_log import READER as QUERY_LOG  # noqa: E402
from atlas_sync.lineage.sql.dialects import resolve_dialect  # noqa: E402
from atlas_sync.lineage.sql.script import analyze_sql, split_statements  # noqa: E402
from bench import sql_procedures  # noqa: E402

# sqlglot dialect -> sqlfluff dialect name used by sqllineage
SQLFLUFF = {
    "": "ansi",
    "spark": "sparksql",
    "databricks": "databricks",
    "hive": "hive",
    "snowflake": "snowflake",
    "postgres": "postgres",
    "tsql": "tsql",
    "bigquery": "bigquery",
    "mysql": "mysql",
    "trino": "trino",
    "duckdb": "duckdb",
    "oracle": "oracle",
    "redshift": "redshift",
}
TIMEOUT_S = 10


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def load_corpus() -> list[tuple[str, str, str]]:
    """(file, dialect, statement) for every statement of the corpus."""
    out = []
    for f in sorted((ROOT / "sql_corpus").glob("*.sql")):
        text = f.read_text(encoding="utf-8")
        m = re.search(r"--\s*dialect:\s*(\S+)", text)
        d = m.group(1) if m and not m.group(1).startswith("(") else ""
        d = resolve_dialect(d)
        for stmt, _line, _col, _tokens in split_statements(text, d):
            stmt = re.sub(r"^\s*--[^\n]*\n", "", stmt).strip()
            if stmt:
                out.append((f.name, d, stmt))
    return out


# ---------------------------------------------------------------------- the three contenders
def run_ours(dialect: str, sql: str) -> int:
    edges = 0
    for st in analyze_sql(sql, dialect=dialect):
        if st.error:
            raise ValueError(st.problems[0]["message"])
        edges += len(st.edges)
    return edges


def run_sqlglot(dialect: str, sql: str) -> int:
    """sqlglot's lineage, column by column, on the statement's query (what a user of sqlglot writes)."""
    tree = sqlglot.parse_one(sql, read=dialect or None)
    query = tree
    if isinstance(tree, (exp.Insert, exp.Create)):
        query = tree.expression
        with_ = tree.args.get("with_")
        if with_ is not None and isinstance(query, exp.Query) and not query.args.get("with_"):
            query = query.copy()
            query.set("with_", with_.copy())
    if isinstance(query, exp.Select) and query.args.get("into"):
        query = query.copy()
        query.set("into", None)
    if not isinstance(query, exp.Query):
        raise ValueError(f"no query in a {type(tree).__name__}")
    # One call for every output column (sqlglot >= 30 accepts column=None and returns them all).
    nodes = sqlglot_lineage(None, query, schema={}, dialect=dialect or None)
    if not isinstance(nodes, dict):
        nodes = {"": nodes}
    edges = 0
    for node in nodes.values():
        edges += sum(1 for n in node.walk() if not n.downstream and isinstance(n.expression, exp.Table))
    return edges


def run_sqllineage(dialect: str, sql: str) -> int:
    import warnings

    from sqllineage.runner import LineageRunner  # type: ignore[import-not-found]

    warnings.filterwarnings("ignore", module="sqllineage")

    runner = LineageRunner(sql, dialect=SQLFLUFF.get(dialect, "ansi"), silent_mode=True)
    return len(runner.get_column_lineage())


def measure(name: str, fn: Callable[[str, str], int], corpus: list[tuple[str, str, str]]) -> dict[str, Any]:
    times: list[float] = []
    failed = with_edges = 0
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for _file, dialect, sql in corpus:
            t0 = time.perf_counter()
            try:
                signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S)
                try:
                    n = fn(dialect, sql)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                if n:
                    with_edges += 1
            except (Exception, _Timeout):  # noqa: BLE001 - a failure is a data point here
                failed += 1
            times.append(time.perf_counter() - t0)
    finally:
        signal.signal(signal.SIGALRM, old)
    times.sort()
    total = sum(times)
    return {
        "tool": name,
        "statements": len(corpus),
        "median_ms": round(statistics.median(times) * 1000, 3),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))] * 1000, 3),
        "total_s": round(total, 3),
        "statements_per_s": round(len(corpus) / total, 1) if total else None,
        "failed": failed,
        "with_column_edges": with_edges,
    }


# ---------------------------------------------------------------------- query log
def generate_log(path: Path, rows: int, seed: int = 7) -> None:
    """A query log of ``rows`` distinct lineage-bearing statements (templates x random names)."""
    rnd = random.Random(seed)
    words = ["orders", "users", "events", "items", "pay", "geo", "sku", "acct", "logs", "clicks"]

    def t() -> str:
        return f"{rnd.choice(['raw', 'ods', 'stg'])}.{rnd.choice(words)}_{rnd.randrange(10_000)}"

    def c() -> str:
        return f"{rnd.choice(['id', 'amt', 'ts', 'kind', 'uid', 'qty', 'price'])}{rnd.randrange(20)}"

    templates = [
        lambda: (
            f"INSERT INTO {t()} SELECT a.{c()}, b.{c()} FROM {t()} a JOIN {t()} b ON a.id = b.id WHERE a.{c()} > {rnd.randrange(99)}"
        ),
        lambda: f"INSERT INTO {t()} SELECT {c()}, sum({c()}) AS total FROM {t()} GROUP BY 1",
        lambda: (
            f"WITH x AS (SELECT id, {c()} AS v FROM {t()}), y AS (SELECT id, v * 2 AS w FROM x) INSERT INTO {t()} SELECT id, w FROM y"
        ),
        lambda: (
            f"CREATE TABLE {t()} AS SELECT id, CASE WHEN {c()} > 0 THEN {c()} ELSE 0 END AS v, row_number() OVER (PARTITION BY {c()} ORDER BY {c()}) AS rn FROM {t()}"
        ),
        lambda: (
            f"MERGE INTO {t()} t USING {t()} s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.{c()} WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.{c()})"
        ),
        lambda: f"UPDATE {t()} SET {c()} = {c()} + 1 WHERE id IN (SELECT id FROM {t()})",
        lambda: f"INSERT INTO {t()} SELECT id, {c()} FROM {t()} UNION ALL SELECT id, {c()} FROM {t()}",
        lambda: f"SELECT * FROM {t()} WHERE id = {rnd.randrange(1000)}",  # not lineage-bearing: skipped
    ]
    seen: set[str] = set()
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["query_text", "user_name", "start_time", "end_time", "database_name", "schema_name", "duration"]
        )
        while len(seen) < rows:
            q = rnd.choice(templates)()
            if q in seen:
                continue
            seen.add(q)
            w.writerow([q, rnd.choice(["etl", "bi", "ds"]), "2024-01-01 00:00:00", "", "prod", "", "1.0"])


def measure_query_log(rows: int, workers: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.csv"
        generate_log(log, rows)
        t0 = time.perf_counter()
        graph = QUERY_LOG.read([str(log)], dialect="spark", workers=workers, progress=False)
        wall = time.perf_counter() - t0
    summary = next(s for s in graph.statements if s.get("type") == "QUERY LOG SUMMARY")
    return {
        "rows": rows,
        "workers": workers,
        "wall_s": round(wall, 2),
        "rows_per_s": round(rows / wall, 1),
        "lineage_statements": summary["distinct_statements"],
        "processes": summary["processes"],
        "failures": summary["failures"],
        "column_edges": len(graph.edges),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="first 40 statements, 1,000-row log")
    ap.add_argument("--log-rows", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "results" / "sql_lineage.json"))
    ap.add_argument("--procedures-only", action="store_true", help="only the stored-procedure corpus")
    args = ap.parse_args()

    procedures = sql_procedures.load()
    proc_tools, proc_notes = sql_procedures.tools()
    proc_report = sql_procedures.score(procedures, proc_tools)
    sql_procedures.print_report(proc_report)
    for n in proc_notes:
        print("note:", n)
    if args.procedures_only:
        return

    corpus = load_corpus()
    if args.quick:
        corpus = corpus[:40]
        args.log_rows = min(args.log_rows, 1000)
    dialects = sorted({d or "(generic)" for _f, d, _s in corpus})
    print(f"corpus: {len(corpus)} statements, dialects: {', '.join(dialects)}")

    contenders: list[tuple[str, Callable[[str, str], int]]] = [
        ("atlas-sync sql reader", run_ours),
        ("sqlglot lineage()", run_sqlglot),
    ]
    notes: list[str] = []
    try:
        import sqllineage  # type: ignore[import-not-found]  # noqa: F401

        contenders.append(("sqllineage", run_sqllineage))
    except ImportError:
        notes.append("sqllineage not installed: column skipped (pip install sqllineage)")

    for _name, fn in contenders:  # warm-up: imports, dialect tables, caches
        for _f, d, s in corpus[:5]:
            with contextlib.suppress(Exception):
                fn(d, s)
    results = [measure(name, fn, corpus) for name, fn in contenders]
    ours = results[0]["total_s"]
    for r in results:
        r["relative_to_ours"] = round(r["total_s"] / ours, 2) if ours else None

    print(
        f"\n{'tool':<24}{'median ms':>11}{'p95 ms':>10}{'stmts/s':>10}{'failed':>8}{'w/ edges':>10}{'x ours':>8}"
    )
    for r in results:
        print(
            f"{r['tool']:<24}{r['median_ms']:>11.2f}{r['p95_ms']:>10.2f}{r['statements_per_s']:>10.1f}"
            f"{r['failed']:>8}{r['with_column_edges']:>10}{r['relative_to_ours']:>8.2f}"
        )
    for n in notes:
        print("note:", n)

    print(f"\nquery-log reader: {args.log_rows} rows, {args.workers} workers ...")
    ql = measure_query_log(args.log_rows, args.workers)
    print(
        f"  wall {ql['wall_s']} s, {ql['rows_per_s']} rows/s, {ql['lineage_statements']} lineage statements, "
        f"{ql['processes']} processes, {ql['failures']} failures, {ql['column_edges']} column edges"
    )

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "sqlglot": sqlglot.__version__,
        "machine": platform.machine(),
        "corpus_statements": len(corpus),
        "dialects": dialects,
        "per_statement": results,
        "query_log": ql,
        "procedures": {"corpus": len(procedures), "per_tool_and_dialect": proc_report},
        "notes": notes + proc_notes,
    }
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten {out}")


if __name__ == "__main__":
    main()
