"""Emulator throughput: bulk create rate and basic-search page latency.

    .venv/bin/python bench/emulator_throughput.py [--entities 10000] [--batch 1000] [--http] [--file]

Prints figures; asserts nothing. ``--http`` goes through the HTTP server on 127.0.0.1 instead of the
in-process adapter; ``--file`` uses a SQLite file in a temporary folder instead of memory.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import requests

from atlas_sync.emulator import Emulator
from atlas_sync.emulator.adapter import BASE_URL, emulator_session
from atlas_sync.emulator.http import serve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--http", action="store_true", help="go through the HTTP server")
    ap.add_argument("--file", action="store_true", help="SQLite file instead of memory")
    args = ap.parse_args()

    tmp = tempfile.TemporaryDirectory() if args.file else None
    emu = Emulator(tmp.name if tmp else None)
    server = serve(emu) if args.http else None
    if server is not None:
        session = requests.Session()
        session.auth = ("admin", "admin")
        base = server.url + "/api/atlas"
    else:
        session = emulator_session(emu)
        base = BASE_URL + "/api/atlas"
    face = "http" if args.http else "in-process"
    store = "file" if args.file else "memory"
    try:
        r = session.post(
            base + "/v2/types/typedefs",
            json={
                "entityDefs": [
                    {"name": "bench_ds", "superTypes": ["DataSet"]},
                    {"name": "bench_proc", "superTypes": ["Process"]},
                ]
            },  # fmt: skip
        )
        r.raise_for_status()
        n = args.entities
        entities = [
            {"typeName": "bench_ds", "guid": f"-{i + 1}",
             "attributes": {"qualifiedName": f"db.t{i}@bench", "name": f"t{i}", "description": "bench table"}}
            for i in range(n)
        ]  # fmt: skip
        started = time.perf_counter()
        for i in range(0, n, args.batch):
            session.post(
                base + "/v2/entity/bulk", json={"entities": entities[i : i + args.batch]}
            ).raise_for_status()
        create_s = time.perf_counter() - started
        print(f"bulk create ({face}, {store}): {n} entities in batches of {args.batch}: "
              f"{create_s:.2f} s = {n / create_s:,.0f} entities/s")  # fmt: skip

        started = time.perf_counter()
        for i in range(0, n, args.batch):
            r = session.post(base + "/v2/entity/bulk", json={"entities": entities[i : i + args.batch]})
            assert "mutatedEntities" not in r.json()
        noop_s = time.perf_counter() - started
        print(f"bulk re-send unchanged (no-op skip): {n / noop_s:,.0f} entities/s")

        processes = [
            {"typeName": "bench_proc", "guid": f"-{i + 1}",
             "attributes": {"qualifiedName": f"job{i}@bench", "name": f"job{i}",
                            "inputs": [{"typeName": "bench_ds", "uniqueAttributes": {"qualifiedName": f"db.t{i}@bench"}}],
                            "outputs": [{"typeName": "bench_ds",
                                         "uniqueAttributes": {"qualifiedName": f"db.t{(i + 1) % n}@bench"}}]}}
            for i in range(min(n, 2000))
        ]  # fmt: skip
        started = time.perf_counter()
        for i in range(0, len(processes), 500):
            session.post(
                base + "/v2/entity/bulk", json={"entities": processes[i : i + 500]}
            ).raise_for_status()
        proc_s = time.perf_counter() - started
        print(
            f"bulk create of {len(processes)} processes with inputs/outputs: {len(processes) / proc_s:,.0f} entities/s"
        )

        for label, body in (
            ("page of 100, qualifiedName endsWith", {"typeName": "bench_ds", "excludeDeletedEntities": True, "limit": 100,
             "entityFilters": {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@bench"}}),
            ("page of 1000, no filter", {"typeName": "bench_ds", "limit": 1000}),
            ("page of 100, name = t5000 (JSON attribute filter)", {"typeName": "bench_ds", "limit": 100,
             "entityFilters": {"attributeName": "name", "operator": "=", "attributeValue": "t5000"}}),
        ):  # fmt: skip
            times = []
            for k in range(5):
                t0 = time.perf_counter()
                session.post(base + "/v2/search/basic", json={**body, "offset": k * 100}).raise_for_status()
                times.append((time.perf_counter() - t0) * 1000)
            print(f"basic search {label}: median {statistics.median(times):.1f} ms over {n} entities")

        guid = session.get(
            base + "/v2/entity/uniqueAttribute/type/bench_ds", params={"attr:qualifiedName": "db.t1@bench"}
        ).json()["entity"]["guid"]
        t0 = time.perf_counter()
        for _ in range(200):
            session.get(base + f"/v2/entity/guid/{guid}").raise_for_status()
        print(f"GET entity by guid: {(time.perf_counter() - t0) / 200 * 1000:.2f} ms per request")
    finally:
        if server is not None:
            server.shutdown()
        emu.close()
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
