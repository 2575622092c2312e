"""Build the test dbt project (``jaffle/``) with a real dbt and keep the artifacts the reader reads.

    python tests/data/dbt/make_artifacts.py --dbt /path/to/venv/bin/dbt --out tests/data/dbt/artifacts/1.10

The project is copied to a temporary folder (so nothing is written next to it) and built against a
fresh DuckDB file, then ``dbt docs generate`` writes the catalog; it compiles every model again, the
incremental one incrementally now that its table exists (as in a daily production run).
``run_results.json`` is the build's; ``manifest.json`` and ``catalog.json`` are docs generate's. ``--drop MODEL`` removes a
model's file first (the "model removed" artifact set). ``--openlineage`` builds with ``dbt-ol``
(openlineage-dbt, beside ``--dbt``) instead, its events written to ``openlineage.jsonl`` by a file
transport. No network: dbt's usage statistics are off.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parent / "jaffle"
ARTIFACTS = ("manifest.json", "catalog.json", "run_results.json")


def make(dbt: str, out: Path, drop: list[str], openlineage: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="jaffle-dbt-") as tmp:
        project = Path(tmp) / "jaffle"
        shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("target", "logs", "*.duckdb"))
        for model in drop:
            hits = list(project.glob(f"models/**/{model}.sql"))
            if not hits:
                sys.exit(f"no model {model!r} to drop")
            for hit in hits:
                hit.unlink()
        env = dict(
            os.environ,
            DBT_PROFILES_DIR=str(project),
            JAFFLE_DUCKDB=str(Path(tmp) / "jaffle.duckdb"),
            DBT_SEND_ANONYMOUS_USAGE_STATS="false",
            DBT_NO_VERSION_CHECK="true",
        )

        def dbt_run(*args: str, exe: str = dbt) -> None:
            subprocess.run([exe, *args], cwd=project, env=env, check=True, stdout=subprocess.DEVNULL)

        out.mkdir(parents=True, exist_ok=True)
        if openlineage:
            events = Path(tmp) / "openlineage.jsonl"
            config = Path(tmp) / "openlineage.yml"
            config.write_text(f"transport:\n  type: file\n  log_file_path: {events}\n  append: true\n")
            env.update(OPENLINEAGE_CONFIG=str(config), OPENLINEAGE_NAMESPACE="jaffle")
            env["PATH"] = str(Path(dbt).parent) + os.pathsep + env.get("PATH", "")  # dbt-ol runs `dbt`
            dbt_run("build", exe=str(Path(dbt).with_name("dbt-ol")))
            shutil.copy(events, out / "openlineage.jsonl")
        else:
            dbt_run("build")
        target = project / "target"
        shutil.copy(target / "run_results.json", out / "run_results.json")
        dbt_run("docs", "generate")
        shutil.copy(target / "manifest.json", out / "manifest.json")
        shutil.copy(target / "catalog.json", out / "catalog.json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dbt", default="dbt", help="the dbt executable (dbt-core with dbt-duckdb)")
    ap.add_argument("--out", required=True, type=Path, help="folder for manifest/catalog/run_results")
    ap.add_argument("--drop", action="append", default=[], help="remove this model first (repeatable)")
    ap.add_argument("--openlineage", action="store_true", help="build with dbt-ol, keep its events")
    args = ap.parse_args()
    make(args.dbt, args.out, args.drop, args.openlineage)


if __name__ == "__main__":
    main()
