"""Load test of the OpenLineage endpoint: N events from T threads; events/s accepted and synced.

    .venv/bin/python bench/openlineage_endpoint.py                 # 10,000 events, 8 threads, emulator
    .venv/bin/python bench/openlineage_endpoint.py --sync stub     # endpoint alone (no Atlas work)
    .venv/bin/python bench/openlineage_endpoint.py --events 2000 --jobs 50 --threads 4

Each event is a COMPLETE RunEvent of one of ``--jobs`` jobs (job i reads src_i, writes dst_i with
one column edge). With ``--sync emulator`` the endpoint syncs into an in-memory Atlas emulator
through the real sync core, and the final Atlas state is checked: exactly one process per job and
one column-lineage process per job, nothing lost.
"""

from __future__ import annotations

import argparse
import json
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--queue-size", type=int, default=10_000)
    ap.add_argument("--sync", choices=("emulator", "stub"), default="emulator")
    args = ap.parse_args()

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

    tmp = Path(tempfile.mkdtemp(prefix="ol-bench-"))
    config = EndpointConfig(
        queue_size=args.queue_size, spool_path=tmp / "spool.jsonl", dead_letter_path=tmp / "dead.jsonl"
    )
    server = serve(LineageEndpoint(sync, config), port=0)
    url = server.url + "/api/v1/lineage"
    bodies = [json.dumps(event(i % args.jobs, i)).encode() for i in range(args.events)]
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
    threads = [threading.Thread(target=send, args=(t,)) for t in range(args.threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    accepted_s = time.perf_counter() - start

    def settled() -> int:
        m = server.endpoint.metrics()
        return int(m["synced"] + m["superseded"] + m["dead_lettered"])

    while settled() < args.events:
        time.sleep(0.01)
    synced_s = time.perf_counter() - start
    m = server.endpoint.metrics()
    server.shutdown()

    print(f"events {args.events}, threads {args.threads}, jobs {args.jobs}, sync {args.sync}")
    print(f"accepted: {m['accepted']} in {accepted_s:.2f} s = {m['accepted'] / accepted_s:,.0f} events/s")
    done = m["synced"] + m["superseded"]
    print(
        f"synced:   {done} in {synced_s:.2f} s = {done / synced_s:,.0f} events/s "
        f"({m['synced']} published, {m['superseded']} superseded by a later run of their job in the same batch)"
    )
    print(
        f"job syncs {m['batches']}, 503 answers {sum(retries_503)}, failed attempts {m['failed']}, "
        f"dead-lettered {m['dead_lettered']}"
    )
    lost = args.events - done
    print(f"lost: {lost}")
    if client is not None:
        procs = list(client.search_basic("lineage_process", attributes=["qualifiedName"]))
        expected = min(args.jobs, args.events)
        print(f"Atlas: {len(procs)} lineage_process entities (expected {expected})")
        if len(procs) != expected:
            raise SystemExit("final Atlas state is not exact")
    if lost:
        raise SystemExit("events were lost")


if __name__ == "__main__":
    main()
