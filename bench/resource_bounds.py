"""Resource bounds of the readers on big inputs: wall time and peak RSS of `atlas-sync lineage`.

Cases (each a fresh `atlas-sync lineage READER FILE --format json > /dev/null` process, measured with
``resource.getrusage(RUSAGE_CHILDREN)``; stderr is kept to show progress reporting):

* ``spark-plan``: a Union of K projections over K relations, written as Spark's text plan, scaled to
  about ``--plan-mb`` MB (default 50);
* ``query-log``:  a CSV query log of ``--statements`` distinct INSERT ... SELECT statements (default
  100,000);
* ``query-log-sync``: ``atlas-sync sync`` of that query log into the embedded emulator (a fresh
  data folder), then the same sync again (unchanged: writes nothing) — the streaming sync, so the
  lineage profile's ~10 entities per statement never sit in memory at once;
* ``spark-plan-sync``: ``atlas-sync sync`` of a ``--sync-plan-mb`` MB Spark plan (default 5) into
  the embedded emulator (a fresh data folder), then again (unchanged): one process over thousands of
  datasets, streamed with its datasets rendered in batches (the embedded emulator's own memory is
  part of the figure);
* ``sql-deep``:   one statement whose select expression is ``a + a + ... + a`` with T terms, for T in
  ``--deep-terms`` (shows how time grows with one long expression).

    .venv/bin/python bench/resource_bounds.py --plan-mb 50 --statements 100000
    .venv/bin/python bench/resource_bounds.py --plan-mb 50 --statements 100000 --read-only   # readers alone
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXE = str(Path(sys.executable).with_name("atlas-sync"))


def spark_plan(path: Path, mb: float) -> int:
    """Write a text plan of about ``mb`` MB; returns the number of union branches."""
    target = int(mb * 1024 * 1024)
    cols = 20
    with path.open("w", encoding="utf-8") as fh:
        fh.write("Union false, false\n")
        size = 0
        k = 0
        branch_size = 0
        while size + branch_size < target:
            base = 10 * cols * k + 1
            ids = [f"c{i}#{base + i}" for i in range(cols)]
            outs = [f"(c{i}#{base + i} + 1) AS o{i}#{base + cols + i}" for i in range(cols)]
            text = f":- Project [{', '.join(outs)}]\n:  +- Relation db.t{k}[{','.join(ids)}] parquet\n"
            fh.write(text)
            branch_size = len(text)
            size += branch_size
            k += 1
        base = 10 * cols * k + 1
        ids = [f"c{i}#{base + i}" for i in range(cols)]
        outs = [f"(c{i}#{base + i} + 1) AS o{i}#{base + cols + i}" for i in range(cols)]
        fh.write(f"+- Project [{', '.join(outs)}]\n   +- Relation db.t{k}[{','.join(ids)}] parquet\n")
    return k + 1


def query_log(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["query_text", "user_name", "start_time"])
        for i in range(n):
            w.writerow(
                [
                    f"INSERT INTO mart.t{i} SELECT a, b + {i % 7} AS c, upper(d) AS e FROM raw.s{i % 1000} "
                    f"WHERE x > {i % 13}",
                    "etl",
                    "2026-11-30T00:00:00Z",
                ]
            )


# --read-only: the reader alone, no rendering (``registry.read`` in a fresh interpreter), so the
# figures show what the reader holds apart from the JSON document the CLI builds afterwards.
READ_ONLY = (
    "import sys; from atlas_sync.lineage import registry; "
    "g = registry.read(sys.argv[1], sys.argv[2:]); "
    "print(len(g.datasets), len(g.processes), len(g.edges), file=sys.stderr)"
)


def measure(
    args: list[str], limit: float, read_only: bool = False, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``atlas-sync ARGS`` (or, with ``read_only``, only its reader) under GNU time (its max RSS
    over the process and its workers) and return exit, wall, peak RSS, progress lines."""
    cmd = [sys.executable, "-c", READ_ONLY, args[1], args[2]] if read_only else [EXE, *args]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(["/usr/bin/time", "-f", "MAXRSS_KB=%M", *cmd], capture_output=True, text=True,
                           timeout=limit, check=False, env=env)  # fmt: skip
        code: int | str = r.returncode
        err = r.stderr
    except subprocess.TimeoutExpired:
        code, err = "timeout", ""
    wall = time.perf_counter() - t0
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.strip()]
    rss = next((int(ln.split("=", 1)[1]) for ln in reversed(lines) if ln.startswith("MAXRSS_KB=")), None)
    lines = [ln for ln in lines if not ln.startswith("MAXRSS_KB=")]
    return {
        "exit": code,
        "wall_s": round(wall, 2),
        "peak_rss_mb": round(rss / 1024, 1) if rss else None,
        "progress_lines": sum(1 for ln in lines if "/" in ln or "%" in ln),
        "stderr_tail": lines[-2:],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan-mb", type=float, default=50)
    ap.add_argument("--statements", type=int, default=100_000)
    ap.add_argument("--sync-plan-mb", type=float, default=5, help="plan size of the spark-plan-sync case")
    ap.add_argument("--deep-terms", default="500,1000,2000")
    ap.add_argument("--limit", type=float, default=900, help="seconds per case")
    ap.add_argument("--cases", default="spark-plan,query-log,sql-deep")
    ap.add_argument("--out", help="JSON results [bench/results/resource_bounds-<time>.json]")
    ap.add_argument("--read-only", action="store_true", help="measure the readers alone (no JSON rendering)")
    args = ap.parse_args(argv)
    cases = args.cases.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)

        def case(
            label: str, args_: list[str], read_only: bool = False, env: dict[str, str] | None = None
        ) -> None:
            rows.append({"case": label, **measure(args_, args.limit, read_only, env)})
            print(rows[-1], flush=True)

        def lineage(reader: str, p: Path, label: str) -> None:
            out = str(tmp / "out.json")
            case(label, ["lineage", reader, str(p), "--format", "json", "--out", out], args.read_only)

        def sync(p: Path, label: str) -> None:
            # a fresh embedded emulator per input, synced twice: initial, then unchanged
            env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
            env["ATLAS_SYNC_DATA_DIR"] = str(tmp / f"atlas-data-{p.stem}")
            for phase in ("initial", "unchanged"):
                case(f"sync {label}, {phase}", ["sync", "--domain", "rb", str(p), "--json"], env=env)

        def size(p: Path) -> str:
            return f"{p.stat().st_size / 1024 / 1024:.0f} MB"

        if "spark-plan" in cases:
            p = tmp / "big.plan.txt"
            k = spark_plan(p, args.plan_mb)
            lineage("spark-plan", p, f"spark-plan {size(p)} ({k} union branches)")
        if "query-log" in cases:
            p = tmp / "big.querylog.csv"
            query_log(p, args.statements)
            lineage("query-log", p, f"query-log {args.statements} statements ({size(p)})")
        if "query-log-sync" in cases:
            p = tmp / "sync.querylog.csv"
            query_log(p, args.statements)
            sync(p, f"query-log {args.statements} statements")
        if "spark-plan-sync" in cases:
            p = tmp / "sync.plan.txt"
            k = spark_plan(p, args.sync_plan_mb)
            sync(p, f"spark-plan {size(p)} ({k} union branches)")
        if "sql-deep" in cases:
            for t in [int(x) for x in args.deep_terms.split(",")]:
                p = tmp / f"deep{t}.sql"
                p.write_text("INSERT INTO t SELECT " + "a + " * t + "a AS x FROM s\n", encoding="utf-8")
                lineage("sql", p, f"sql one expression of {t} terms ({p.stat().st_size // 1024} KB)")
    print()
    print(f"{'case':<58} {'exit':>7} {'wall s':>8} {'peak RSS MB':>12} {'progress':>9}")
    for r in rows:
        print(
            f"{r['case']:<58} {r['exit']!s:>7} {r['wall_s']:>8} {r['peak_rss_mb']!s:>12} {r['progress_lines']:>9}"
        )
    out = (
        Path(args.out)
        if args.out
        else HERE / "results" / f"resource_bounds-{time.strftime('%Y%m%dT%H%M%S')}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows}, indent=1), encoding="utf-8")
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
