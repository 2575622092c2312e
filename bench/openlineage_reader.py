"""OpenLineage reader speed: files/s over event files in the shape of OpenLineage's integration tests.

    .venv/bin/python bench/openlineage_reader.py [--files 300] [--repeat 5] [--bad-every 4]

Writes ``--files`` event files (one Spark-style COMPLETE event each: two inputs with schema and
symlinks facets, one output with schema and column lineage over 20 columns) to a temporary folder;
every ``--bad-every``-th file has one malformed facet (a symlinks identifier without ``namespace``).
Prints the median CPU time of this process (``time.process_time``: steadier than wall time on a shared
machine) of reading them all, one file per ``read`` call as a CLI run does, as files/s, for the default (lenient: the bad facet is dropped) and the ``strict`` reader in the same
run, and their ratio. ``strict`` skips the bad files (each is an error), so it reads only the good
ones: both figures are over the good files only, like with like. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

COLUMNS = 20


def _dataset(ns: str, name: str, table: str, bad: bool) -> dict[str, Any]:
    ident: dict[str, Any] = {"name": table, "type": "TABLE"}
    if not bad:
        ident["namespace"] = "hive://metastore:9083"
    return {
        "namespace": ns,
        "name": name,
        "facets": {
            "schema": {
                "_producer": "p",
                "_schemaURL": "s",
                "fields": [{"name": f"c{i}", "type": "string"} for i in range(COLUMNS)],
            },
            "symlinks": {"_producer": "p", "_schemaURL": "s", "identifiers": [ident]},
        },
    }


def event(n: int, bad: bool) -> dict[str, Any]:
    inputs = [
        _dataset("hdfs://nn:8020", f"/warehouse/raw.db/src{n}_{k}", f"raw.src{n}_{k}", bad and k == 0)
        for k in range(2)
    ]
    out = _dataset("hdfs://nn:8020", f"/warehouse/mart.db/dst{n}", f"mart.dst{n}", False)
    out["facets"]["columnLineage"] = {
        "_producer": "p",
        "_schemaURL": "s",
        "fields": {
            f"c{i}": {
                "inputFields": [
                    {
                        "namespace": "hdfs://nn:8020",
                        "name": f"/warehouse/raw.db/src{n}_{i % 2}",
                        "field": f"c{i}",
                        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                    }
                ]
            }
            for i in range(COLUMNS)
        },
    }
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-28T08:00:00.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.26.0/integration/spark",
        "run": {"runId": f"00000000-0000-4000-8000-{n:012d}"},
        "job": {"namespace": "spark-bench", "name": f"job_{n}", "facets": {"sql": {"query": "INSERT ..."}}},
        "inputs": inputs,
        "outputs": [out],
    }


def _read_all(paths: list[str], **options: Any) -> int:
    reader = registry.get("openlineage")
    ok = 0
    for p in paths:
        try:
            reader.read([p], **options)
            ok += 1
        except InputError:
            pass
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--bad-every", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        good: list[str] = []
        bad: list[str] = []
        for n in range(args.files):
            is_bad = args.bad_every > 0 and n % args.bad_every == 0
            path = Path(tmp) / f"e{n}.ol.json"
            path.write_text(json.dumps(event(n, is_bad)), encoding="utf-8")
            (bad if is_bad else good).append(str(path))
        modes: dict[str, dict[str, Any]] = {"lenient": {}, "strict": {"strict": True}}
        times: dict[str, list[float]] = {mode: [] for mode in modes}
        for _ in range(args.repeat):  # interleaved, so load on the machine hits both alike
            for mode, options in modes.items():
                t = time.process_time()
                _read_all(good, **options)
                times[mode].append(time.process_time() - t)
        lenient_bad = _read_all(bad)
        strict_bad = _read_all(bad, strict=True)
    print(f"{len(good)} good files, {len(bad)} with one malformed facet; {COLUMNS} columns per dataset")
    rates = {}
    for mode in modes:
        med = statistics.median(times[mode])
        rates[mode] = len(good) / med
        print(f"  {mode:<8} {rates[mode]:8.0f} files/s  (median CPU time of {args.repeat}: {med:.3f} s)")
    print(f"  lenient/strict: {rates['lenient'] / rates['strict']:.2f}")
    print(
        f"  files with a malformed facet read: lenient {lenient_bad}/{len(bad)}, strict {strict_bad}/{len(bad)}"
    )


if __name__ == "__main__":
    main()
