"""The database reader's Doris audit-log pass over a real MySQL-protocol connection, next to the same
rows as an audit-log CSV export, in one run:

* ``atlas-sync lineage database --db-url mysql://.../bench_audit -o history=doris_audit_log
  -o passes=queries -o query_limit=N``;
* ``atlas-sync lineage query-log audit_log.csv`` (the same rows, exported from the table).

The server is a throwaway MariaDB (``tests.support.real_mariadb``; Doris itself cannot run
here) holding Doris's ``__internal_schema.audit_log`` (tests/data/database/doris_audit_log.sql)
with N rows in Doris's format: distinct INSERT ... SELECTs (9 in 10) and read-only queries of a few
users (1 in 10). Wall time, rows/s and peak RSS (GNU time, as ``resource_bounds.py``) of each, and
their ratio.

    .venv/bin/python bench/database_audit_log.py --rows 10000

Uses ``ATLAS_SYNC_TEST_MYSQL_URL`` / ``ATLAS_SYNC_TEST_MYSQL_PASSWORD_FILE`` when set, else starts a
server and stops it at the end.
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

from tests.support.real_mariadb import Server  # noqa: E402

DB = "bench_audit"
TARGETS = 10
AUDIT_SQL = HERE.parent / "tests" / "data" / "database" / "doris_audit_log.sql"


def connect(url: str, password: str, database: str | None = None) -> Any:
    import pymysql
    from pymysql.constants import CLIENT

    who, _, hostport = url.partition("://")[2].partition("@")
    host, _, port = hostport.split("/", 1)[0].partition(":")
    return pymysql.connect(
        host=host,
        port=int(port),
        user=who,
        password=password,
        database=database,
        autocommit=True,
        client_flag=CLIENT.MULTI_STATEMENTS,
    )


def fill(url: str, password: str, n: int) -> int:
    """Database ``bench_audit`` with its tables, and ``n`` audit rows of it."""
    sources = -(-n // TARGETS)
    t0 = time.perf_counter()
    with connect(url, password) as c, c.cursor() as cur:
        cur.execute(AUDIT_SQL.read_text(encoding="utf-8"))
        while cur.nextset():
            pass
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
        cur.execute(f"DELETE FROM __internal_schema.audit_log WHERE db = '{DB}'")
        for j in range(TARGETS):
            cur.execute(f"CREATE TABLE {DB}.t{j} (a INT, c INT, e TEXT)")
        for k in range(sources):
            cur.execute(f"CREATE TABLE {DB}.s{k} (a INT, b INT, d TEXT, x INT)")
        rows = []
        for i in range(n):
            k, j = divmod(i, TARGETS)
            if i % 10 == 9:  # a read-only query
                stmt = f"SELECT a, d FROM s{k} WHERE x > {i}"
                rows.append((i, f"user{i % 7}", "EOF", 1, "SELECT", f'["internal.{DB}.s{k}"]', stmt))
            else:
                stmt = f"INSERT INTO t{j} (a, c, e) SELECT a, b + 1, upper(d) FROM s{k} WHERE x > 3"
                rows.append((i, "etl", "OK", 0, "INSERT", f'["internal.{DB}.s{k}"]', stmt))
        cur.executemany(
            "INSERT INTO __internal_schema.audit_log (query_id, `time`, `user`, `catalog`, db, state, "
            "query_time, is_query, is_internal, stmt_type, queried_tables_and_views, chosen_m_views, stmt) "
            f"VALUES (CONCAT('bench-', %s), NOW(3) - INTERVAL 1 HOUR, %s, 'internal', '{DB}', %s, 120, %s, 0, "
            "%s, %s, '[]', %s)",
            rows,
        )
    print(f"wrote {n} audit rows in {time.perf_counter() - t0:.1f} s")
    return n


def export_csv(url: str, password: str, path: Path) -> None:
    import pymysql.cursors

    with (
        connect(url, password) as c,
        c.cursor(pymysql.cursors.DictCursor) as cur,
        path.open("w", encoding="utf-8", newline="") as fh,
    ):
        cur.execute(f"SELECT * FROM __internal_schema.audit_log WHERE db = '{DB}'")
        rows = cur.fetchall()
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows({k: "" if v is None else v for k, v in r.items()} for r in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--limit", type=float, default=900.0, help="seconds per command")
    ap.add_argument("--out", default=str(HERE / "results" / "database_audit_log.json"))
    args = ap.parse_args(argv)
    url = os.environ.get("ATLAS_SYNC_TEST_MYSQL_URL")
    pw_file = os.environ.get("ATLAS_SYNC_TEST_MYSQL_PASSWORD_FILE")
    server = None
    home = None
    if not url or not pw_file:
        home = Path(tempfile.mkdtemp(prefix="atlas-sync-mariadb-bench-", dir="/tmp"))
        server = Server(home)
        url = str(server.start()["url"])
        pw_file = str(server.password_file)
    password = Path(pw_file).read_text(encoding="utf-8").splitlines()[0]
    try:
        held = fill(url, password, args.rows)
        db_url = url.rstrip("/") + f"/{DB}"
        with tempfile.TemporaryDirectory() as tmp:
            csv_path = Path(tmp) / "audit_log.csv"
            export_csv(url, password, csv_path)
            env = {k: v for k, v in os.environ.items() if not k.startswith("MYSQL")}
            common = ["--format", "json", "--out", os.devnull]
            cases = {
                "database (Doris audit_log, live)": [
                    "lineage",
                    "database",
                    "--db-url",
                    db_url,
                    "--db-password-file",
                    pw_file,
                    "-o",
                    "history=doris_audit_log",
                    "-o",
                    "passes=queries",
                    "-o",
                    f"query_limit={args.rows + 100}",
                    "--job",
                    DB,
                    *common,
                ],  # fmt: skip
                "query-log CSV export of the same rows": [
                    "lineage",
                    "query-log",
                    str(csv_path),
                    "--job",
                    DB,
                    *common,
                ],  # fmt: skip
            }
            results: dict[str, Any] = {"rows": held}
            print(f"{'case':<42} {'exit':>5} {'wall s':>8} {'rows/s':>8} {'peak RSS MB':>12}")
            for label, cmd in cases.items():
                r = measure(cmd, args.limit, env=env)
                r["rows_per_s"] = round(held / r["wall_s"], 1) if r["wall_s"] else None
                results[label] = r
                print(
                    f"{label:<42} {r['exit']!s:>5} {r['wall_s']:>8} {r['rows_per_s']!s:>8} {r['peak_rss_mb']!s:>12}"
                )
            a = results["database (Doris audit_log, live)"]
            b = results["query-log CSV export of the same rows"]
            if a["wall_s"] and b["wall_s"]:
                print(f"wall ratio database / CSV export: {a['wall_s'] / b['wall_s']:.2f}")
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
