"""Whole processes, as users run them: `atlas-sync sync --from graph FILE` against a pyapacheatlas script.

Issue 23 item 5, issue 40 item 8. Both approaches read the same lineage document (issue 15's workload,
bench/issue_workload.py: N processes, ~12.3 N entities with the lineage profile) and publish the same
types and relationships into their own domain of one emulator
(``atlas-sync emulator serve --memory`` with the latency model: 5 ms per request + 2 ms per KiB of
request body), and each phase is one whole process timed from its start to its exit: interpreter
start-up, imports, reading the input file, the typedef check, rendering, planning and every request.

* ``atlas-sync``: ``atlas-sync sync --domain D --from graph FILE -q`` (FILE: the workload's lineage
  document; the credentials in the environment, as users pass them);
* ``pyapacheatlas``: ``python bench/pyapacheatlas_publish.py URL FILE D B``, a pyapacheatlas user's
  script: it reads the same FILE, builds the ``lineage`` profile's types and relationships (columns in
  their dataset, column lineages in their process, through the compositions) with pyapacheatlas's
  ``AtlasEntity`` / ``AtlasProcess``, without atlas-sync's bookkeeping (no ``atlasSync*`` attribute),
  references by unique attribute, and sends them with ``AtlasClient.upload_entities(batch_size=B)``,
  one call per dependency level (datasets; columns and processes; column lineages); every run
  re-uploads everything, as its users do. The types are registered once, untimed, by atlas-sync
  (``lineage_*``, whose ``atlasSync*`` attributes are optional: the baseline leaves them unset).

Phases: ``initial`` (empty domain), ``unchanged`` (the same input again), ``changed`` (1% of the
entities changed: column data types). Per phase and approach: wall, client CPU (user + system, from
``os.wait4``) and peak RSS; ratios atlas-sync / pyapacheatlas of the same round. ``--repeat R`` runs
R rounds, each on fresh domains, alternating which approach goes first; medians are reported.
``--more-changes K`` adds K more 1%-changed runs per round (the first and the changed input in
turn: each is a 1% change from the state before), paired run by run.

    .venv/bin/pip install pyapacheatlas
    .venv/bin/python bench/whole_process.py --sizes 1000 --repeat 2
    .venv/bin/python bench/whole_process.py --atlas-url "$ATLAS_URL" --sizes 1000   # a real Atlas
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import sync_bench  # noqa: E402  (the emulator launcher, the workload and pyapacheatlas's payloads)

PHASES = ("initial", "unchanged", "changed")
APPROACHES = ("pyapacheatlas", "atlas-sync")

# The baseline: a pyapacheatlas user's script reading the same lineage document (see its docstring).
PYAPACHEATLAS_SCRIPT = HERE / "pyapacheatlas_publish.py"

# What each side publishes, said with the report.
PUBLISHES = """\
atlas-sync:    `atlas-sync sync --domain D --from graph FILE -q`, the `lineage` profile: lineage_dataset,
               lineage_column (composition lineage_dataset_columns), lineage_process, lineage_column_lineage
               (composition lineage_process_column_lineages), with its bookkeeping attributes (atlasSync*);
               plans against Atlas and writes only the difference.
pyapacheatlas: bench/pyapacheatlas_publish.py, reading the same FILE: the same types and relationships built
               with AtlasEntity / AtlasProcess, no atlasSync* attribute, references by unique attribute,
               upload_entities(batch_size=B) per dependency level; every run uploads everything."""


# A small Python process forks the command and reports its rusage. On Linux a child's ru_maxrss
# starts from its parent's RSS at the fork (and vfork, which subprocess uses, passes on the whole
# parent's peak): forked from this benchmark, which holds both approaches' payloads, every command
# reported this process's 670 MB.
LAUNCH = """
import json, os, sys, time
report, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(report, "w") as fh:
    json.dump({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss}, fh)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def timed(cmd: list[str], env: dict[str, str], limit: float) -> dict[str, Any]:
    """Run ``cmd`` to its end: wall from its start to its exit, its CPU and peak RSS (``os.wait4`` in
    a small launcher, :data:`LAUNCH`)."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile(suffix=".json") as report,
    ):
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, report.name, *cmd],
            stdout=out,
            stderr=err,
            env=env,
            start_new_session=True,
        )
        killer = threading.Timer(limit, os.killpg, (proc.pid, 9))
        killer.start()
        try:
            code = proc.wait()
        finally:
            killer.cancel()
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        try:
            usage = json.loads(Path(report.name).read_text() or "{}")
        except ValueError:
            usage = {}
    row: dict[str, Any] = {
        "wall_s": round(usage.get("wall", float("nan")), 2),
        "cpu_s": round(usage.get("cpu", float("nan")), 2),
        "peak_rss_mb": round(usage.get("maxrss_kib", float("nan")) / 1024, 1),
    }
    if code != 0:
        row["error"] = (stderr.strip().splitlines() or [f"exit {code}"])[-1][:300]
    return row


def precompile() -> None:
    """Write atlas-sync's bytecode before the clock starts, as ``pip install`` does for a regular
    install (and for pyapacheatlas here): with ``PYTHONDONTWRITEBYTECODE`` set, an editable install
    would otherwise compile every module again in every timed process (~0.25 s each)."""
    import compileall

    import atlas_sync

    compileall.compile_dir(str(Path(atlas_sync.__file__).parent), quiet=1)


def prepare_inputs(n: int, folder: Path) -> dict[str, Path]:
    """Each phase's input, the same file for both approaches: the lineage document, written to
    ``folder``."""
    files: dict[str, Path] = {}
    for phase in ("initial", "changed"):
        doc = folder / f"graph-{n}-{phase}.json"
        doc.write_text(json.dumps(sync_bench._graph(n, phase).to_document()), encoding="utf-8")
        files[phase] = doc
    files["unchanged"] = files["initial"]
    return files


def run_phase(
    approach: str,
    phase: str,
    url: str,
    graph: Path,
    domain: str,
    batch: int,
    limit: float,
    real: bool,
) -> dict[str, Any]:
    user, password = sync_bench._auth(real)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_SYNC_")}
    env.update(ATLAS_URL=url, ATLAS_USERNAME=user, ATLAS_PASSWORD=password)
    if approach == "atlas-sync":
        exe = str(Path(sys.executable).with_name("atlas-sync"))
        cmd = [exe, "sync", "--domain", domain, "--from", "graph", str(graph), "-q"]
        env["ATLAS_SYNC_BATCH_SIZE"] = str(batch)
    else:
        cmd = [sys.executable, str(PYAPACHEATLAS_SCRIPT), url, str(graph), domain, str(batch)]
    return timed(cmd, env, limit)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes", default="1000", help="comma-separated numbers of processes (~12.3 entities each)"
    )
    ap.add_argument("--repeat", type=int, default=1, help="rounds, each on fresh domains (medians reported)")
    ap.add_argument("--batch-size", type=int, default=500, help="entities per request, both approaches")
    ap.add_argument("--latency-ms", type=float, default=5.0, help="emulator delay per request")
    ap.add_argument("--per-kib-ms", type=float, default=2.0, help="emulator delay per KiB of request body")
    ap.add_argument("--phase-limit", type=float, default=1800, help="seconds before a phase is abandoned")
    ap.add_argument("--atlas-url", help="an Atlas already running (no emulator, no injected latency)")
    ap.add_argument("--domain-prefix", default="wp", help="domains are <prefix><round>-<approach>-<N>")
    ap.add_argument(
        "--more-changes",
        type=int,
        default=0,
        help="after each round's phases, this many more 1%%-changed runs (the first and the changed input "
        "in turn), counted in the 1%% changed phase",
    )
    ap.add_argument("--out", help="JSON results file [bench/results/whole_process-<time>.json]")
    args = ap.parse_args(argv)
    missing = sync_bench._pyapacheatlas_available()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    real = bool(args.atlas_url)
    server = None if real else sync_bench.Server(args.latency_ms, 0.0, args.per_kib_ms)
    url = args.atlas_url or server.url  # type: ignore[union-attr]
    rows: list[dict[str, Any]] = []
    try:
        sync_bench._prepare(url, real)
        precompile()
        with tempfile.TemporaryDirectory() as tmp:
            for n in (int(x) for x in args.sizes.split(",")):
                expected = sync_bench._expected_count(n, "issue")
                for rnd in range(args.repeat):
                    order = APPROACHES if rnd % 2 == 0 else APPROACHES[::-1]
                    domains = {a: f"{args.domain_prefix}{rnd}-{a.replace('-', '')}-{n}" for a in APPROACHES}
                    inputs = prepare_inputs(n, Path(tmp))
                    steps = [(p, p, 0) for p in PHASES] + [
                        ("initial" if k % 2 == 0 else "changed", "changed", k + 1)
                        for k in range(args.more_changes)
                    ]
                    for given, phase, step in steps:
                        for a in order:
                            row = run_phase(
                                a,
                                phase,
                                url,
                                inputs[given],
                                domains[a],
                                args.batch_size,
                                args.phase_limit,
                                real,
                            )
                            row.update(n=n, round=rnd, step=step, approach=a, phase=phase, entities=expected)
                            row["domain_count"] = sync_bench._domain_count(url, real, domains[a])
                            rows.append(row)
                            print(json.dumps(row), file=sys.stderr, flush=True)
    finally:
        if server is not None:
            server.stop()
    print(PUBLISHES)
    print(report(rows))
    out = Path(args.out or HERE / "results" / f"whole_process-{time.strftime('%Y%m%d-%H%M%S')}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"settings": vars(args), "rows": rows}, indent=1), encoding="utf-8")
    print(f"results: {out}", file=sys.stderr)
    return 0


def report(rows: list[dict[str, Any]]) -> str:
    """Medians per size, phase and approach, and the paired ratios atlas-sync / pyapacheatlas."""
    head = f"{'N':>6} {'phase':<10} {'atlas-sync s':>12} {'pyapacheatlas s':>15} {'ratio':>6} {'CPU ms/entity':>13} {'RSS MB':>7}"
    lines = [head, "-" * len(head)]
    for n in sorted({r["n"] for r in rows}):
        for phase in PHASES:
            mine = [r for r in rows if r["n"] == n and r["phase"] == phase and r["approach"] == "atlas-sync"]
            base = [
                r for r in rows if r["n"] == n and r["phase"] == phase and r["approach"] == "pyapacheatlas"
            ]
            if any("error" in r for r in mine + base):
                errs = {r["approach"]: r["error"] for r in mine + base if "error" in r}
                lines.append(f"{n:>6} {phase:<10} error: {errs}")
                continue
            ratios = [
                m["wall_s"] / b["wall_s"]
                for m in mine
                for b in base
                if (m["round"], m.get("step", 0)) == (b["round"], b.get("step", 0)) and b["wall_s"]
            ]
            wall = statistics.median(r["wall_s"] for r in mine)
            cpu = statistics.median(r["cpu_s"] for r in mine) * 1000 / max(mine[0]["entities"], 1)
            lines.append(
                f"{n:>6} {phase:<10} {wall:>12.2f} {statistics.median(r['wall_s'] for r in base):>15.2f} "
                f"{statistics.median(ratios):>6.2f} {cpu:>13.3f} {max(r['peak_rss_mb'] for r in mine):>7.0f}"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
