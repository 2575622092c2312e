"""Issue 15 at full size through the CLI: `atlas-sync sync --from graph FILE` of N processes.

Writes issue 15's workload (bench/issue_workload.py: N processes, each reading 1-3 of N/2 shared
datasets of 4 columns and writing one dataset of 4 columns, 4 column edges) as a lineage document
file, streamed: the same bytes as ``json.dumps(issue_graph(N).to_document(), indent=2)`` without
building the graph (its process and edge tuples are kept for the document's summary lists); and a
variant where the column data types of 1% of the datasets changed (every column of each). Then it
starts ``atlas-sync emulator serve --memory`` (no latency unless asked) and runs the real CLI,
``atlas-sync sync --domain bench --from graph FILE --json``, as a child process for each phase:

* ``initial``   - empty domain -> 12.5 N entities (lineage profile);
* ``unchanged`` - the same file again: nothing to write;
* ``changed``   - the 1%-changed file: one update per changed column.

Per phase: wall time, the child's CPU (user + system) and peak RSS (``os.wait4``), the requests and
write requests the sync reports (``--json``), and the domain's entity count afterwards (a paged basic
search per root type) next to the expected count.

    .venv/bin/python bench/big_sync.py --processes 10000
    nice -n 10 .venv/bin/python bench/big_sync.py --processes 100000 --phase-limit 3600
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from issue_workload import TYPES, source_count  # noqa: E402
from sync_bench import Server as EmulatorServer  # noqa: E402

from atlas_sync.lineage.model import (  # noqa: E402
    EdgeTuple,
    ProcessTuple,
    SpooledItems,
    summary_columns,
    summary_tables,
    write_document,
)

DOMAIN = "bench"
PHASES = ("initial", "unchanged", "changed")
ROOT_TYPES = ("lineage_dataset", "lineage_column", "lineage_process", "lineage_column_lineage")


# --------------------------------------------------------------------------- the document
def write_issue_document(
    out: IO[str], processes: int, *, seed: int = 0, job: str = "bench", changed: frozenset[int] = frozenset()
) -> dict[str, int]:
    """Write ``issue_graph(processes, seed=seed, job=job).to_document()`` to ``out`` (indent 2), item
    by item. ``changed``: positions of datasets (sources first, then outputs) whose columns get the
    type ``changed_<type>``. Returns the document's counts."""
    rng = random.Random(seed)
    n_sources = source_count(processes)
    proc_tuples: list[ProcessTuple] = []
    edge_tuples: list[EdgeTuple] = []
    kinds: list[tuple[str, str]] = []
    with SpooledItems() as datasets, SpooledItems() as procs, SpooledItems() as edges:

        def dataset(ds_id: str) -> None:
            ns, name = ds_id.split(".", 1)
            types = [rng.choice(TYPES) for _ in range(4)]
            if len(kinds) in changed:
                types = ["changed_" + t for t in types]
            cols = [{"name": f"c{i}", "type": t} for i, t in enumerate(types)]
            datasets.add({"id": ds_id, "namespace": ns, "name": name, "columns": cols})
            kinds.append((ds_id, "table"))

        for i in range(n_sources):
            dataset(f"raw.s{i}")
        for p in range(processes):
            reads = rng.sample(range(n_sources), rng.randint(1, 3))
            out_id = f"mart.t{p}"
            dataset(out_id)
            ins = tuple(f"raw.s{r}" for r in reads)
            procs.add(
                {
                    "id": f"p{p}",
                    "name": f"step {p}",
                    "inputs": list(ins),
                    "outputs": [out_id],
                    "attributes": {"queryText": f"INSERT INTO {out_id} SELECT ... -- {p}"},
                }
            )
            proc_tuples.append((f"p{p}", ins, (out_id,)))
            for i in range(4):
                src = ins[i % len(ins)]
                edges.add(
                    {
                        "source": f"{src}.c{i}",
                        "target": f"{out_id}.c{i}",
                        "kind": "IDENTITY",
                        "process": f"p{p}",
                    }
                )
                edge_tuples.append(((src, f"c{i}"), (out_id, f"c{i}"), "IDENTITY", None, f"p{p}"))
        tables = summary_tables(kinds, proc_tuples)
        counts = {"datasets": len(kinds), "processes": processes, "edges": len(edge_tuples)}
        write_document(
            out,
            tables=tables,
            columns=summary_columns(tables, proc_tuples, edge_tuples),
            statements=[],
            datasets=datasets,
            processes=procs,
            edges=edges,
            problems=[],
            job=job,
        )
    return counts


def changed_datasets(processes: int, fraction: float = 0.01, *, seed: int = 1) -> frozenset[int]:
    """Positions of ``ceil(fraction * datasets)`` datasets of the workload, seeded."""
    total = source_count(processes) + processes
    return frozenset(random.Random(seed).sample(range(total), max(1, math.ceil(total * fraction))))


def expected_entities(counts: dict[str, int]) -> int:
    """Entities the ``lineage`` profile renders: datasets, their 4 columns each, processes and one
    column lineage per (process, target column): every edge of this workload has its own target."""
    return counts["datasets"] * 5 + counts["processes"] + counts["edges"]


# --------------------------------------------------------------------------- running it
class Server(EmulatorServer):
    """sync_bench's emulator child process, with a request log to count requests and entity writes."""

    def __init__(self, latency_ms: float, per_entity_ms: float, per_kib_ms: float, log: Path) -> None:
        self.log = log
        super().__init__(latency_ms, per_entity_ms, per_kib_ms, extra=["--request-log", str(log)])

    def requests(self) -> tuple[int, int]:
        """(requests, entity write requests) logged so far."""
        total = writes = 0
        if self.log.exists():
            with self.log.open(encoding="utf-8") as fh:
                for line in fh:
                    rec = json.loads(line)
                    total += 1
                    path = rec["path"].split("?")[0]
                    if rec["method"] in ("POST", "PUT", "DELETE") and "/v2/entity" in path:
                        writes += 1
        return total, writes


def domain_count(url: str) -> int:
    from atlas_sync.atlas import AtlasClient

    client = AtlasClient(url, auth=("admin", "admin"), timeout=(10, 600))
    flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@" + DOMAIN}
    return sum(
        1 for _ in client.search_basic(",".join(ROOT_TYPES), entity_filters=flt, attributes=["qualifiedName"])
    )


def run_sync(url: str, path: Path, limit: float, extra: list[str]) -> dict[str, Any]:
    """The CLI in a child process; wall, CPU and peak RSS from ``os.wait4``."""
    exe = Path(sys.executable).with_name("atlas-sync")
    cmd = [str(exe), "sync", "--domain", DOMAIN, "--from", "graph", str(path), "--json", *extra]
    env = dict(os.environ, ATLAS_URL=url, ATLAS_USERNAME="admin", ATLAS_PASSWORD="admin")  # not in argv
    for var in ("ATLAS_SYNC_CONFIG", "ATLAS_SYNC_PROFILE", "ATLAS_SYNC_DOMAIN"):
        env.pop(var, None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        deadline = t0 + limit
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                return {"error": f"over the {limit:g} s limit"}
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    row: dict[str, Any] = {
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "exit": proc.returncode,
    }
    if proc.returncode != 0:
        row["error"] = (stderr.strip().splitlines() or ["?"])[-1][:300]
        return row
    result = json.loads(stdout)
    row["applied"] = result.get("applied")
    row["plan"] = result.get("plan")
    return row


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'N':>7} {'phase':<10} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8} {'requests':>9} "
        f"{'writes':>7} {'entities':>9} {'expected':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['n']:>7} {r['phase']:<10} {r.get('peak_rss_mb', '')!s:>8} error: {r['error']}")
            continue
        lines.append(
            f"{r['n']:>7} {r['phase']:<10} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} {r['peak_rss_mb']:>8.1f} "
            f"{r['requests']!s:>9} {r['write_requests']!s:>7} {r['entities']:>9} {r['expected']:>9}"
        )
    return "\n".join(lines)


def _phases(args: argparse.Namespace, files: dict[str, Path], counts: dict[str, int]) -> Iterator[dict]:
    log = files["initial"].with_name("requests.jsonl")
    log.unlink(missing_ok=True)
    server = Server(args.latency_ms, args.per_entity_ms, args.per_kib_ms, log)
    try:
        for phase in args.phases.split(","):
            path = files["changed" if phase == "changed" else "initial"]
            row: dict[str, Any] = {"n": args.processes, "phase": phase, "file_mb": path.stat().st_size >> 20}
            before = server.requests()
            row |= run_sync(server.url, path, args.phase_limit, args.sync_args.split())
            after = server.requests()
            row["requests"], row["write_requests"] = after[0] - before[0], after[1] - before[1]
            if "error" not in row:
                row["entities"] = domain_count(server.url)
                row["expected"] = expected_entities(counts)
            row["emulator_peak_rss_mb"] = server.rss_mb()
            yield row
            if "error" in row:
                return
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", type=int, default=10_000, help="N: processes of the workload")
    ap.add_argument("--phases", default=",".join(PHASES))
    ap.add_argument("--latency-ms", type=float, default=0.0, help="emulator delay per request")
    ap.add_argument("--per-entity-ms", type=float, default=0.0, help="emulator delay per entity")
    ap.add_argument("--per-kib-ms", type=float, default=0.0, help="emulator delay per KiB of request body")
    ap.add_argument("--phase-limit", type=float, default=3600, help="seconds before a phase is abandoned")
    ap.add_argument("--sync-args", default="", help="more arguments for `atlas-sync sync` (one string)")
    ap.add_argument("--dir", help="folder for the documents [a temporary one]")
    ap.add_argument("--out", help="JSON results file [bench/results/big_sync-<N>-<time>.json]")
    args = ap.parse_args(argv)

    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="big-sync-"))
    work.mkdir(parents=True, exist_ok=True)
    files = {"initial": work / f"issue-{args.processes}.lineage.json"}
    files["changed"] = work / f"issue-{args.processes}-changed.lineage.json"
    t0 = time.perf_counter()
    with files["initial"].open("w", encoding="utf-8") as fh:
        counts = write_issue_document(fh, args.processes)
    with files["changed"].open("w", encoding="utf-8") as fh:
        write_issue_document(fh, args.processes, changed=changed_datasets(args.processes))
    print(
        f"documents: {files['initial'].stat().st_size / 2**20:.0f} MB each, {counts} "
        f"({expected_entities(counts)} entities), written in {time.perf_counter() - t0:.0f} s, in {work}",
        file=sys.stderr,
        flush=True,
    )
    rows = []
    for row in _phases(args, files, counts):
        rows.append(row)
        print(_table([row]).splitlines()[-1], file=sys.stderr, flush=True)
    print(_table(rows))
    out = (
        Path(args.out)
        if args.out
        else HERE / "results" / f"big_sync-{args.processes}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = {k: v for k, v in vars(args).items() if k not in ("out", "dir")} | {"cpus": os.cpu_count()}
    out.write_text(
        json.dumps({"settings": settings, "counts": counts, "rows": rows}, indent=1), encoding="utf-8"
    )
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
