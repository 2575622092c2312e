"""The dbt reader on a generated project of N models (manifest only): wall time and peak RSS.

A project of N models in layers, like a dbt shop's: N/10 sources, 3N/10 staging views (each a
source's columns renamed and cast), 2N/10 ephemeral models (two staging models joined), and 5N/10
marts (an ephemeral model joined to a staging model and aggregated, or ``select *`` of a mart before
it), ten columns each, with the compiled SQL dbt would write and no catalog. Each case runs a fresh
process under GNU time, as a user runs it:

* ``dbt-lineage``: ``atlas-sync lineage dbt target/ --format json`` (read only);
* ``sql-lineage``: ``atlas-sync lineage sql --dialect duckdb run/*.sql --format json`` on the same
  models as ``create table|view ... as <compiled SQL>`` files (what dbt writes in target/run/): the
  other way to get this lineage, without dbt's graph (ephemeral models inlined either way);
* ``dbt-plan``: ``atlas-sync plan --domain bench target/`` into an empty embedded emulator (read,
  render, list, diff: everything a first sync does before writing).

    .venv/bin/python bench/dbt_manifest.py --models 500,2000

Prints one row per case and size, and the ratios dbt/sql and 2000/500 (memory is bounded when peak
RSS grows with the project, not faster); JSON in bench/results/dbt_manifest.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXE = str(Path(sys.executable).with_name("atlas-sync"))
COLS = 10


def _rel(schema: str, name: str) -> str:
    return f'"warehouse"."{schema}"."{name}"'


def project(n: int) -> tuple[dict[str, Any], dict[str, str]]:
    """(manifest, {file name: create statement}) of a project of ``n`` models."""
    nodes: dict[str, Any] = {}
    sources: dict[str, Any] = {}
    statements: dict[str, str] = {}
    cols = [f"c{i}" for i in range(COLS)]
    n_src, n_stg, n_eph = max(1, n // 10), max(1, 3 * n // 10), max(1, 2 * n // 10)
    n_mart = max(1, n - n_stg - n_eph)
    for i in range(n_src):
        uid = f"source.bench.raw.s{i}"
        sources[uid] = {
            "unique_id": uid,
            "resource_type": "source",
            "name": f"s{i}",
            "source_name": "raw",
            "package_name": "bench",
            "database": "warehouse",
            "schema": "raw",
            "identifier": f"s{i}",
            "relation_name": _rel("raw", f"s{i}"),
            "columns": {c: {"name": c, "description": f"column {c}"} for c in cols},
            "fqn": ["bench", "raw", f"s{i}"],
            "tags": [],
            "meta": {},
            "config": {},
            "original_file_path": "models/sources.yml",
        }

    def model(uid: str, name: str, schema: str, materialized: str, deps: list[str], code: str) -> None:
        nodes[uid] = {
            "unique_id": uid,
            "resource_type": "model",
            "name": name,
            "package_name": "bench",
            "database": "warehouse",
            "schema": schema,
            "alias": name,
            "relation_name": None if materialized == "ephemeral" else _rel(schema, name),
            "config": {"materialized": materialized, "meta": {"owner": "team@bench.test"}, "tags": []},
            "tags": [schema],
            "meta": {"owner": "team@bench.test"},
            "description": f"The {name} model.",
            "depends_on": {"nodes": deps, "macros": []},
            "columns": {},
            "fqn": ["bench", schema, name],
            "original_file_path": f"models/{schema}/{name}.sql",
            "compiled_code": code,
            "language": "sql",
        }

    def ctes(code_deps: list[str]) -> str:
        """The ephemeral models' CTEs dbt injects ahead of a query that refs them."""
        return ",\n".join(
            f"__dbt__cte__{nodes[d]['name']} as (\n{nodes[d]['compiled_code']}\n)"
            for d in code_deps
            if nodes[d]["config"]["materialized"] == "ephemeral"
        )

    for i in range(n_stg):
        src = f"source.bench.raw.s{i % n_src}"
        select = ",\n    ".join(
            f"cast({c} as varchar) as {c}" if j % 3 == 0 else c for j, c in enumerate(cols)
        )
        code = f"select\n    {select}\nfrom {sources[src]['relation_name']}\nwhere c0 is not null"
        model(f"model.bench.stg{i}", f"stg{i}", "staging", "view", [src], code)
    for i in range(n_eph):
        a, b = f"model.bench.stg{i % n_stg}", f"model.bench.stg{(i * 7 + 1) % n_stg}"
        select = ",\n    ".join(f"a.{c}" if j < 5 else f"b.{c}" for j, c in enumerate(cols))
        code = (
            f"select\n    {select}\nfrom {nodes[a]['relation_name']} as a\n"
            f"join {nodes[b]['relation_name']} as b on a.c0 = b.c0"
        )
        model(f"model.bench.int{i}", f"int{i}", "intermediate", "ephemeral", [a, b], code)
    for i in range(n_mart):
        if i % 5 == 4 and i > 0:  # select * from an earlier mart
            dep = f"model.bench.mart{i - 1}"
            code = f"select * from {nodes[dep]['relation_name']} where c1 > 0"
            deps = [dep]
        else:
            eph, stg = f"model.bench.int{i % n_eph}", f"model.bench.stg{(i * 3) % n_stg}"
            deps = [eph, stg]
            aggs = ",\n    ".join(f"sum(e.{c}) as {c}" if j > 1 else f"e.{c}" for j, c in enumerate(cols))
            name = nodes[eph]["name"]
            code = (
                f"with {ctes([eph])}\nselect\n    {aggs}\nfrom __dbt__cte__{name} as e\n"
                f"left join {nodes[stg]['relation_name']} as s on e.c0 = s.c0\ngroup by e.c0, e.c1"
            )
        model(f"model.bench.mart{i}", f"mart{i}", "marts", "table", deps, code)
    for node in nodes.values():
        if node["relation_name"]:
            kind = "view" if node["config"]["materialized"] == "view" else "table"
            statements[node["name"] + ".sql"] = (
                f"create {kind} {node['relation_name']} as (\n{node['compiled_code']}\n);\n"
            )
    parent_map = {uid: list(n["depends_on"]["nodes"]) for uid, n in nodes.items()}
    parent_map.update({uid: [] for uid in sources})
    manifest = {
        "metadata": {
            "dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
            "dbt_version": "1.10.23",
            "project_name": "bench",
            "adapter_type": "duckdb",
        },
        "nodes": nodes,
        "sources": sources,
        "parent_map": parent_map,
    }
    return manifest, statements


def measure(args: list[str], limit: float, env: dict[str, str] | None = None) -> dict[str, Any]:
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "MAXRSS_KB=%M", EXE, *args], capture_output=True, text=True,
                       timeout=limit, check=False, env=env)  # fmt: skip
    wall = time.perf_counter() - t0
    m = re.search(r"MAXRSS_KB=(\d+)", r.stderr)
    plan = re.search(r"^Plan: .*$", r.stdout, flags=re.M)
    return {
        **({"plan": plan.group(0)} if plan else {}),
        "exit": r.returncode,
        "wall_s": round(wall, 2),
        "peak_rss_mb": round(int(m.group(1)) / 1024, 1) if m else None,
        "stderr_tail": r.stderr.strip().splitlines()[-2:] if r.returncode else [],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="500,2000", help="project sizes (models), comma-separated")
    ap.add_argument("--limit", type=float, default=1800, help="seconds per case at most")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "dbt_manifest.json")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    for n in [int(x) for x in args.models.split(",") if x]:
        with tempfile.TemporaryDirectory(prefix="dbt-bench-") as tmp:
            root = Path(tmp)
            manifest, statements = project(n)
            (root / "target").mkdir()
            (root / "target" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
            (root / "run").mkdir()
            for name, sql in statements.items():
                (root / "run" / name).write_text(sql, encoding="utf-8")
            mb = (root / "target" / "manifest.json").stat().st_size / 1e6
            out = str(root / "out.json")
            cases = {
                "dbt-lineage": ["lineage", "dbt", str(root / "target"), "--format", "json", "--out", out],
                "sql-lineage": [
                    "lineage",
                    "sql",
                    "--dialect",
                    "duckdb",
                    *sorted(str(p) for p in (root / "run").glob("*.sql")),
                    "--format",
                    "json",
                    "--out",
                    out,
                ],
                "dbt-plan": ["plan", "--domain", "bench", str(root / "target")],
            }
            env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")}
            env["ATLAS_SYNC_DATA_DIR"] = str(root / "emulator")  # an empty embedded emulator
            for case, cmd in cases.items():
                row = {
                    "case": case,
                    "models": n,
                    "manifest_mb": round(mb, 1),
                    **measure(cmd, args.limit, env),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)

    def get(case: str, n: int, key: str) -> float | None:
        return next((r[key] for r in rows if r["case"] == case and r["models"] == n and r["exit"] == 0), None)

    sizes = sorted({r["models"] for r in rows})
    print(f"{'case':<12} {'models':>7} {'wall s':>8} {'peak MB':>8}")
    for r in rows:
        print(f"{r['case']:<12} {r['models']:>7} {r['wall_s']:>8} {r['peak_rss_mb']!s:>8}  exit {r['exit']}")
    for n in sizes:
        d, s = get("dbt-lineage", n, "wall_s"), get("sql-lineage", n, "wall_s")
        if d and s:
            print(f"{n} models: dbt / sql reader wall {d / s:.2f}")
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        for case in cases:
            a, b = get(case, lo, "peak_rss_mb"), get(case, hi, "peak_rss_mb")
            w1, w2 = get(case, lo, "wall_s"), get(case, hi, "wall_s")
            if a and b and w1 and w2:
                print(
                    f"{case}: {hi}/{lo} models ({hi / lo:.0f}x): wall {w2 / w1:.2f}x, peak RSS {b / a:.2f}x"
                )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
