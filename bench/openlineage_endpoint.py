"""Load test of the OpenLineage endpoint: N events from T threads; events/s accepted and synced.

    .venv/bin/python bench/openlineage_endpoint.py                 # 10,000 events, 8 threads, emulator
    .venv/bin/python bench/openlineage_endpoint.py --sync stub     # endpoint alone (no Atlas work)
    .venv/bin/python bench/openlineage_endpoint.py --events 2000 --jobs 50 --threads 4

Each run is made twice in one process, on the same events: ``memory`` (no journal: what is
accepted is lost on a crash) and ``journal`` (the crash-safe SQLite journal, fsync'd before each
201), and the ratio journal / memory is printed: the cost of durability (``--modes`` to choose).
First the journals alone are compared (appends per second, 1 thread and ``--threads``, no HTTP):
one thread waits for one fsync per event; concurrent appends share commits.

Each event is a COMPLETE RunEvent of one of ``--jobs`` jobs (job i reads src_i, writes dst_i with
one column edge). With ``--sync emulator`` the endpoint syncs into an in-memory Atlas emulator
through the real sync core, and the final Atlas state is checked: exactly one process per job and
one column-lineage process per job, nothing lost.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests

from atlas_sync.factory import embedded_client
from atlas_sync.openlineage_server import EndpointConfig, LineageEndpoint, serve


def event(job: int, run: int) -> dict[str, Any]:
    src, dst = f"crm.public.src{job}", f"mart.dst{job}"
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-11-30T10:00:{run % 60:02d}.000Z",
        "producer": "bench",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": f"00000000-0000-4000-8000-{run:012d}"},
        "job": {"namespace": "bench", "name": f"job{job}"},
        "inputs": [{"namespace": "postgres://pg:5432", "name": src}],
        "outputs": [
            {
                "namespace": "hive://hms:9083",
                "name": dst,
                "facets": {
                    "schema": {"fields": [{"name": "id", "type": "int"}]},
                    "columnLineage": {
                        "fields": {
                            "id": {
                                "inputFields": [
                                    {
                                        "namespace": "postgres://pg:5432",
                                        "name": src,
                                        "field": "id",
                                        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                                    }
                                ]
                            }
                        }
                    },
                },
            }
        ],
    }


def run(args: argparse.Namespace, mode: str, bodies: list[bytes]) -> dict[str, Any]:
    """One load run against a fresh endpoint (and a fresh in-memory Atlas); its figures."""
    client: Any = None
    if args.sync == "emulator":
        from atlas_sync.api import Publisher

        client = embedded_client(None)
        publisher = Publisher(client, profile="lineage", domain="bench")
        publisher.ensure_typedefs()

        def sync(graph: Any, job: str) -> Any:
            return publisher.sync(graph, job, ensure_typedefs=False)
    else:

        def sync(graph: Any, job: str) -> Any:
            return None

    tmp = Path(tempfile.mkdtemp(prefix="ol-bench-", dir=args.journal_dir))
    config = EndpointConfig(
        queue_size=args.queue_size,
        journal_path=tmp / "journal.sqlite" if mode == "journal" else None,
        dead_letter_path=tmp / "dead.jsonl",
    )
    server = serve(LineageEndpoint(sync, config), port=0)
    url = server.url + "/api/v1/lineage"
    retries_503 = [0] * args.threads

    def send(t: int) -> None:
        s = requests.Session()
        for body in bodies[t :: args.threads]:
            while True:
                r = s.post(url, data=body, headers={"Content-Type": "application/json"})
                if r.status_code == 201:
                    break
                if r.status_code != 503:
                    raise SystemExit(f"unexpected {r.status_code}: {r.text}")
                retries_503[t] += 1
                time.sleep(float(r.headers.get("Retry-After", "1")) / 10)

    start = time.perf_counter()
    cpu0 = time.process_time()  # clients and endpoint share this process: the same in every mode
    threads = [threading.Thread(target=send, args=(t,)) for t in range(args.threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    accepted_s = time.perf_counter() - start
    cpu_ms = (time.process_time() - cpu0) * 1000 / args.events
    while server.endpoint.metrics()["journal_depth"]:
        time.sleep(0.01)
    synced_s = time.perf_counter() - start
    m = server.endpoint.metrics()
    server.shutdown()

    done = m["synced"] + m["superseded"]
    print(f"[{mode}] events {args.events}, threads {args.threads}, jobs {args.jobs}, sync {args.sync}")
    print(
        f"  accepted: {m['accepted']} in {accepted_s:.2f} s = {m['accepted'] / accepted_s:,.0f} events/s "
        f"({cpu_ms:.2f} ms CPU per event, clients included)"
    )
    print(
        f"  synced:   {done} in {synced_s:.2f} s = {done / synced_s:,.0f} events/s "
        f"({m['synced']} published, {m['superseded']} superseded by a later run of their job in the same batch)"
    )
    print(
        f"  job syncs {m['batches']}, 503 answers {sum(retries_503)}, failed attempts {m['failed']}, "
        f"dead-lettered {m['dead_lettered']}"
        + (
            f", journal commits {m['journal_commits']} ({m['accepted'] / max(1, m['journal_commits']):.1f} "
            "events per commit, with the settles)"
            if mode == "journal"
            else ""
        )
    )
    lost = args.events - done
    print(f"  lost: {lost}")
    if client is not None:
        procs = list(client.search_basic("lineage_process", attributes=["qualifiedName"]))
        expected = min(args.jobs, args.events)
        print(f"  Atlas: {len(procs)} lineage_process entities (expected {expected})")
        if len(procs) != expected:
            raise SystemExit("final Atlas state is not exact")
    if lost:
        raise SystemExit("events were lost")
    return {"accepted_per_s": m["accepted"] / accepted_s, "synced_per_s": done / synced_s, "cpu_ms": cpu_ms}


def journal_alone(args: argparse.Namespace, bodies: list[bytes]) -> None:
    """Appends per second into each journal, without HTTP or validation: 1 thread, then --threads."""
    from atlas_sync.openlineage_server import MemoryJournal, SqliteJournal

    events = [json.loads(b) for b in bodies]
    for threads in sorted({1, args.threads}):
        rates = {}
        for mode in ("memory", "journal"):
            tmp = Path(tempfile.mkdtemp(prefix="ol-bench-j-", dir=args.journal_dir))
            j = (
                SqliteJournal(tmp / "journal.sqlite", len(events) + 1)
                if mode == "journal"
                else MemoryJournal(len(events) + 1)
            )

            def append(t: int, j: Any = j, threads: int = threads) -> None:
                for ev in events[t::threads]:
                    j.append([ev])

            start = time.perf_counter()
            ts = [threading.Thread(target=append, args=(t,)) for t in range(threads)]
            for th in ts:
                th.start()
            for th in ts:
                th.join()
            rates[mode] = len(events) / (time.perf_counter() - start)
            commits = f", {len(events) / max(1, j.commits):.1f} events per commit" if j.commits else ""
            j.close()
            print(f"journal alone [{mode}] {threads} thread(s): {rates[mode]:,.0f} appends/s{commits}")
        print(
            f"journal alone, {threads} thread(s): journal / memory {rates['journal'] / rates['memory']:.3f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--queue-size", type=int, default=10_000)
    ap.add_argument("--sync", choices=("emulator", "stub"), default="emulator")
    ap.add_argument(
        "--modes",
        default="memory,journal",
        help="comma-separated: memory (no journal), journal (SQLite, fsync'd); run in this order",
    )
    ap.add_argument("--journal-dir", help="folder for the journal (default: the temp folder)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of all modes (medians are compared)")
    args = ap.parse_args()
    bodies = [json.dumps(event(i % args.jobs, i)).encode() for i in range(args.events)]
    journal_alone(args, bodies)
    modes = args.modes.split(",")
    results: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    for _ in range(args.repeat):
        for mode in modes:
            results[mode].append(run(args, mode, bodies))

    def median(mode: str, key: str) -> float:
        return statistics.median(r[key] for r in results[mode])

    for mode in modes:
        print(
            f"{mode:8s} median of {args.repeat}: accepted {median(mode, 'accepted_per_s'):,.0f} events/s, "
            f"synced {median(mode, 'synced_per_s'):,.0f} events/s, {median(mode, 'cpu_ms'):.2f} ms CPU per event"
        )
    if "memory" in results and "journal" in results:
        a = median("journal", "accepted_per_s") / median("memory", "accepted_per_s")
        s = median("journal", "synced_per_s") / median("memory", "synced_per_s")
        c = median("journal", "cpu_ms") / median("memory", "cpu_ms")
        print(f"journal / memory: accepted {a:.2f}x, synced {s:.2f}x, CPU per accepted event {c:.2f}x")


if __name__ == "__main__":
    main()
