"""What one small job's sync costs as its domain grows (issue 23): the same job, whole CLI commands.

Builds domains of several sizes on one emulator with a bulk graph sync each (issue 15's workload,
bench/issue_workload.py: about 12.5 entities per process), without latency; then restarts the emulator
on the same state with the latency model (5 ms per request + 2 ms per KiB of request body by default)
and, for each domain, runs as a user does:

* ``new``       - ``atlas-sync sync --domain D --job small-N --from sql small.sql`` (a job never synced:
  one INSERT ... SELECT reading one of the domain's shared datasets and one table of its own);
* ``unchanged`` - the same command again: nothing to write.

Per run: wall time and client CPU of the child process (``os.wait4``), and, from the emulator's request
log, the requests, writes and bytes both ways. ``--repeat`` rounds, each over every domain in turn (a new
job each time); medians, and ratios against the same job into the empty domain ``D0`` of the same server
(which holds every other domain: cost must follow neither the domain nor the Atlas).

    .venv/bin/python bench/job_sync.py --sizes 0,12500,125000
    .venv/bin/python bench/job_sync.py --sizes 0,12500,125000,1250000 --out bench/results/job_sync.json

``--atlas-url URL`` runs the same against a real Atlas (credentials from ``ATLAS_USERNAME`` and
``ATLAS_PASSWORD_FILE``, as the CLI reads them): domains are built there (by the same bulk sync,
in domains named after the run, left in place), no latency is added, and the requests and bytes
come from each command's own ``-v`` report (what the client sent and read).

    .venv/bin/python bench/job_sync.py --atlas-url "$ATLAS_URL" --sizes 0,12500,50000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from big_sync import write_issue_document  # noqa: E402
from sync_bench import Server  # noqa: E402

ENTITIES_PER_PROCESS = 12.5
SQL = """INSERT INTO mart.small_{i}
SELECT s.c0 AS id, o.amount AS amount
FROM raw.s1 s JOIN raw.own_{i} o ON s.c0 = o.id;
"""


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """A child process timed as a whole, with its CPU from the kernel's accounting."""
    exe = Path(sys.executable).with_name("atlas-sync")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({code}): {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, subprocess.CompletedProcess(proc.args, code, out, err)


def build_domain(env: dict[str, str], work: Path, domain: str, size: int) -> float:
    """``domain`` filled with about ``size`` entities by one bulk graph sync of issue 15's workload
    (job ``bulk``: shared datasets ``raw.s<i>``, outputs ``mart.t<i>``), as a user builds it; the
    seconds the sync took."""
    doc = work / f"bulk{size}.json"
    with doc.open("w", encoding="utf-8") as fh:
        write_issue_document(fh, round(size / ENTITIES_PER_PROCESS), job="bulk")
    t0 = time.perf_counter()
    _run(["sync", "--domain", domain, "--job", "bulk", "--from", "graph", str(doc), "--quiet"], env)
    return time.perf_counter() - t0


def _requests(log: Path, offset: int) -> tuple[int, dict[str, int]]:
    with log.open("rb") as fh:
        fh.seek(offset)
        data = fh.read()
    out = {"requests": 0, "writes": 0, "bytes_sent": 0, "bytes_received": 0}
    for line in data.decode().splitlines():
        rec = json.loads(line)
        out["requests"] += 1
        out["writes"] += rec["method"] == "POST" and rec["path"].endswith("/entity/bulk")
        out["bytes_sent"] += rec.get("bytes_in", 0)
        out["bytes_received"] += rec.get("bytes_out", 0)
    return offset + len(data), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="0,12500,125000", help="domain sizes in entities (0: empty)")
    ap.add_argument("--latency-ms", type=float, default=5.0)
    ap.add_argument("--per-kib-ms", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=3, help="rounds of (new job, unchanged) per domain")
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    ap.add_argument("--atlas-url", default=None, help="a real Atlas instead of the emulator")
    ap.add_argument("--run", default=None, help="with --atlas-url: the domains' prefix (default: r<time>)")
    ap.add_argument(
        "--built",
        action="store_true",
        help="the domains exist (with --atlas-url and --run, or on the emulator with --work): time only",
    )
    ap.add_argument(
        "--work",
        default=None,
        help="the emulator's folder (kept; a later run with --built reuses its domains)",
    )
    ap.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="time from the restarted emulator's first sync (by default one untimed job per domain goes first)",
    )
    args = ap.parse_args(argv)
    if args.atlas_url:
        return _real(args)
    sizes = [int(s) for s in args.sizes.split(",")]
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="atlas-sync-jobsync-"))
    data, log = work / "emulator", work / "requests.jsonl"
    env = {**os.environ, "ATLAS_USERNAME": "admin", "ATLAS_PASSWORD": "admin"}  # not in argv
    env.pop("ATLAS_URL", None)

    print(f"building domains {sizes} (no latency) in {work}", file=sys.stderr)
    results: dict[str, Any] = {
        "sizes": sizes,
        "latency": {"ms": args.latency_ms, "per_kib_ms": args.per_kib_ms},
    }
    builder = _serve(data, log, 0, 0)
    try:
        env["ATLAS_URL"] = builder.url
        for size in sizes:
            if size and not args.built:
                took = build_domain(env, work, f"D{size}", size)
                print(f"  D{size}: built in {took:.1f} s", file=sys.stderr)
    finally:
        builder.stop()

    server = _serve(data, log, args.latency_ms, args.per_kib_ms)
    rows: list[dict[str, Any]] = []
    try:
        env["ATLAS_URL"] = server.url
        offset = log.stat().st_size if log.exists() else 0
        n = int(time.time()) % 1_000_000 * 100 if args.built else 0  # jobs never synced in these domains
        if args.warm_up:
            # one untimed new job per domain first: the restarted emulator builds its expression indexes
            # on the first searches of each shape, which would fall on whichever domain came first
            for size in sizes:
                sql = work / f"warm{n}.sql"
                sql.write_text(SQL.format(i=n), encoding="utf-8")
                _run(["sync", "--domain", f"D{size}", "--job", f"warm-{n}", "--from", "sql", str(sql)], env)
                n += 1
            offset = log.stat().st_size if log.exists() else 0
        for rnd in range(args.repeat):
            # rounds interleave the domains, so that a slower moment of the machine hits them all alike
            for size in sizes:
                sql = work / f"small{n}.sql"
                sql.write_text(SQL.format(i=n), encoding="utf-8")
                for phase in ("new", "unchanged"):
                    wall, cpu, done = _run(
                        [
                            "sync",
                            "--domain",
                            f"D{size}",
                            "--job",
                            f"small-{n}",
                            "--from",
                            "sql",
                            str(sql),
                            "--json",
                        ],
                        env,
                    )
                    offset, counts = _requests(log, offset)
                    row = {"domain": size, "round": rnd, "phase": phase, "wall_s": round(wall, 3)}
                    rows.append({**row, "cpu_s": round(cpu, 3), **counts})
                    print(json.dumps(rows[-1]), file=sys.stderr)
                n += 1
    finally:
        server.stop()
    results["rows"] = rows
    print(_table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


def _real(args: argparse.Namespace) -> int:
    """The same rounds against a real Atlas: counts from each command's ``-v`` report."""
    sizes = [int(s) for s in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="atlas-sync-jobsync-real-"))
    env = {**os.environ, "ATLAS_URL": args.atlas_url}
    run = args.run or f"r{int(time.time())}"
    for size in sizes:
        if size and not args.built:
            took = build_domain(env, work, f"{run}D{size}", size)
            print(f"  {run}D{size}: built in {took:.1f} s", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    n = int(time.time()) % 1_000_000 * 100  # jobs (and their tables) never synced before in these domains
    for rnd in range(args.repeat):
        for size in sizes:
            sql = work / f"small{n}.sql"
            sql.write_text(SQL.format(i=n), encoding="utf-8")
            for phase in ("new", "unchanged"):
                cmd = [
                    "sync",
                    "--domain",
                    f"{run}D{size}",
                    "--job",
                    f"small-{n}",
                    "--from",
                    "sql",
                    str(sql),
                    "-v",
                ]
                wall, cpu, done = _run(cmd, env)
                rows.append(
                    {
                        "domain": size,
                        "round": rnd,
                        "phase": phase,
                        "wall_s": round(wall, 3),
                        "cpu_s": round(cpu, 3),
                    }
                    | _reported(done.stdout + done.stderr)
                )
                print(json.dumps(rows[-1]), file=sys.stderr)
            n += 1
    print(_table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps({"sizes": sizes, "atlas": True, "rows": rows}, indent=2) + "\n")
    return 0


_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}  # the -v report divides by 1024 (atlas.stats)


def _reported(text: str) -> dict[str, int]:
    """Requests, writes and bytes from the ``-v`` report's table (``total`` and ``entity_write`` rows)."""
    out = {"requests": 0, "writes": 0, "bytes_sent": 0, "bytes_received": 0}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 9 and f[0] in ("total", "entity_write"):
            if f[0] == "entity_write":
                out["writes"] = int(f[1])
            else:
                out["requests"] = int(f[1])
                out["bytes_sent"] = round(float(f[4]) * _UNITS[f[5]])
                out["bytes_received"] = round(float(f[6]) * _UNITS[f[7]])
    return out


class _FileServer(Server):
    """The bench's emulator on a state folder that survives the restart between building and timing."""

    def __init__(self, data: Path, log: Path, latency_ms: float, per_kib_ms: float) -> None:
        super().__init__(
            latency_ms, 0, per_kib_ms, extra=["--request-log", str(log), "--data", str(data)], memory=False
        )


def _serve(data: Path, log: Path, latency_ms: float, per_kib_ms: float) -> Server:
    return _FileServer(data, log, latency_ms, per_kib_ms)


def _table(rows: list[dict[str, Any]]) -> str:
    """Medians per (domain, phase), and their ratios to the same job into the empty domain."""
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["domain"], r["phase"]), []).append(r)

    def med(key: tuple[int, str], field: str) -> float:
        return float(statistics.median(r[field] for r in groups[key]))

    lines = [
        "| domain entities | phase | wall s (median) | x empty | requests | x empty | KiB read | x empty | KiB sent | CPU s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (size, phase), _ in sorted(groups.items()):
        k, b = (size, phase), (0, phase)
        lines.append(
            f"| {size:,} | {phase} | {med(k, 'wall_s'):.2f} | {med(k, 'wall_s') / med(b, 'wall_s'):.2f} | "
            f"{med(k, 'requests'):.0f} | {med(k, 'requests') - med(b, 'requests'):+.0f} | "
            f"{med(k, 'bytes_received') / 1024:.0f} | {med(k, 'bytes_received') / med(b, 'bytes_received'):.2f} | "
            f"{med(k, 'bytes_sent') / 1024:.1f} | {med(k, 'cpu_s'):.2f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
