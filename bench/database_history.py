"""The database reader's query-history pass on a real PostgreSQL: N distinct INSERT ... SELECT
statements run for real (so ``pg_stat_statements`` holds them), then read as a user would, in one
run next to the same statements as a query-log CSV:

* ``atlas-sync lineage database --db-url ... -o passes=queries -o query_limit=N``;
* ``atlas-sync lineage query-log history.csv`` (the same texts, exported from pg_stat_statements).

Wall time, rows/s and peak RSS (GNU time, as ``resource_bounds.py``) of each, and their ratio.

    .venv/bin/python bench/database_history.py --statements 10000

Uses ``ATLAS_SYNC_TEST_PG_URL`` / ``ATLAS_SYNC_TEST_PG_PASSWORD_FILE`` when set, else starts a
throwaway server (``tests.support.real_postgres``) and stops it at the end.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from resource_bounds import measure  # noqa: E402

from tests.support.real_postgres import Server  # noqa: E402

TARGETS = 10


def fill(url: str, password: str, n: int) -> float:
    """A database ``bench_history`` whose history holds ``n`` distinct INSERT ... SELECTs (sources
    x targets: pg_stat_statements tells statements apart by the tables they name)."""
    import psycopg

    who, _, hostport = url.partition("://")[2].partition("@")
    host, _, port = hostport.split("/", 1)[0].partition(":")

    def conn(db: str) -> Any:
        return psycopg.connect(
            host=host, port=int(port), user=who, password=password, dbname=db, autocommit=True
        )

    with conn("postgres") as c:
        c.execute("DROP DATABASE IF EXISTS bench_history WITH (FORCE)")
        c.execute("CREATE DATABASE bench_history")
    sources = -(-n // TARGETS)
    t0 = time.perf_counter()
    with conn("bench_history") as c:
        c.execute("CREATE EXTENSION pg_stat_statements; CREATE SCHEMA raw; CREATE SCHEMA mart")
        for j in range(TARGETS):
            c.execute(f"CREATE TABLE mart.t{j} (a int, c int, e text)")
        for k in range(sources):
            c.execute(f"CREATE TABLE raw.s{k} (a int, b int, d text, x int)")
        c.execute(
            "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)"
        )
        done = 0
        with c.pipeline():
            for k in range(sources):
                for j in range(TARGETS):
                    if done == n:
                        break
                    c.execute(
                        f"INSERT INTO mart.t{j} (a, c, e) SELECT a, b + 1, upper(d) FROM raw.s{k} WHERE x > 3"
                    )
                    done += 1
        rows = c.execute(
            "SELECT s.query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
            "WHERE d.datname = current_database() AND s.query LIKE 'INSERT%'"
        ).fetchall()
    print(f"ran {done} statements in {time.perf_counter() - t0:.1f} s; the history holds {len(rows)} INSERTs")
    return len(rows)


def export_csv(url: str, password: str, path: Path) -> None:
    import psycopg

    who, _, hostport = url.partition("://")[2].partition("@")
    host, _, port = hostport.split("/", 1)[0].partition(":")
    with (
        psycopg.connect(host=host, port=int(port), user=who, password=password, dbname="bench_history") as c,
        path.open("w", encoding="utf-8", newline="") as fh,
    ):
        w = csv.writer(fh)
        w.writerow(["query_text", "user_name", "database_name"])
        for (query,) in c.execute(
            "SELECT s.query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
            "WHERE d.datname = current_database() AND s.query LIKE 'INSERT%'"
        ):
            w.writerow([query, who, "bench_history"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--statements", type=int, default=10000)
    ap.add_argument("--limit", type=float, default=900.0, help="seconds per command")
    ap.add_argument("--out", default=str(HERE / "results" / "database_history.json"))
    args = ap.parse_args(argv)
    url, pw_file = (
        os.environ.get("ATLAS_SYNC_TEST_PG_URL"),
        os.environ.get("ATLAS_SYNC_TEST_PG_PASSWORD_FILE"),
    )
    server = None
    home = None
    if not url or not pw_file:
        home = Path(tempfile.mkdtemp(prefix="atlas-sync-pg-bench-"))
        server = Server(home)
        url = str(server.start()["url"])
        pw_file = str(server.password_file)
    password = Path(pw_file).read_text(encoding="utf-8").splitlines()[0]
    try:
        held = fill(url, password, args.statements)
        db_url = url.rsplit("/", 1)[0] + "/bench_history"
        with tempfile.TemporaryDirectory() as tmp:
            csv_path = Path(tmp) / "history.querylog.csv"
            export_csv(url, password, csv_path)
            env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
            common = ["--format", "json", "--out", os.devnull]
            cases = {
                "database (pg_stat_statements)": [
                    "lineage",
                    "database",
                    "--db-url",
                    db_url,
                    "--db-password-file",
                    pw_file,
                    "-o",
                    "passes=queries",
                    "-o",
                    f"query_limit={args.statements + 100}",
                    *common,
                ],  # fmt: skip
                "query-log CSV of the same statements": ["lineage", "query-log", str(csv_path), *common],
            }
            results: dict[str, Any] = {"statements": held}
            print(f"{'case':<42} {'exit':>5} {'wall s':>8} {'rows/s':>8} {'peak RSS MB':>12}")
            for label, cmd in cases.items():
                r = measure(cmd, args.limit, env=env)
                r["rows_per_s"] = round(held / r["wall_s"], 1) if r["wall_s"] else None
                results[label] = r
                print(
                    f"{label:<42} {r['exit']!s:>5} {r['wall_s']:>8} {r['rows_per_s']!s:>8} {r['peak_rss_mb']!s:>12}"
                )
            a, b = results["database (pg_stat_statements)"], results["query-log CSV of the same statements"]
            if a["wall_s"] and b["wall_s"]:
                print(f"wall ratio database / query-log CSV: {a['wall_s'] / b['wall_s']:.2f}")
                results["wall_ratio_database_over_csv"] = round(a["wall_s"] / b["wall_s"], 2)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    finally:
        if server is not None:
            server.stop()
            shutil.rmtree(home or "", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
