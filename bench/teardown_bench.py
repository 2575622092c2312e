"""Teardown benchmark: ``atlas-sync teardown --purge`` vs pyapacheatlas's delete + purge (issue 24).

For each size N (issue 15's workload: N processes, 12.5 N entities with the ``lineage`` profile), in
one run against one server:

1. ``atlas-sync sync --from graph`` publishes the workload into two domains (``<prefix>-as-<N>`` and
   ``<prefix>-pa-<N>``; the same entities under another ``@domain``), each timed as a whole command:
   the initial sync that published them;
2. ``atlas-sync teardown --purge --yes`` of the first domain, timed as a whole command (listing,
   deletes, purge, process start);
3. (after step 4) the pyapacheatlas baseline on the second domain: its guids listed first (untimed: what a user has
   at hand), then ``AtlasClient.delete_entity(guid=[...])`` in batches of 100 (larger batches fail on
   URL length, pyapacheatlas issue #166) in the order one search per type gives them (datasets,
   columns, processes, column lineages), then ``PUT /api/atlas/admin/purge`` of the same guids in
   requests of 1,000 - timed as a whole Python process, as a user's script runs;
4. the first domain is synced again (so the baseline runs beside as many entities as atlas-sync's
   teardown did) and, with ``--rebuild``, ``atlas-sync rebuild`` of it is timed against its teardown
   + initial sync measured before; after the baseline it is torn down once more, alone on the
   server (``cleanup_teardown_s``).

Every domain is checked empty (ACTIVE and DELETED) after its teardown. Ratios: teardown / initial
sync, atlas-sync / pyapacheatlas, rebuild / (teardown + sync).

    .venv/bin/pip install pyapacheatlas
    .venv/bin/python bench/teardown_bench.py --sizes 200                 # emulator with latency
    eval "$(.venv/bin/python -m tests.support.real_atlas env --home build/real-atlas/home)"
    export ATLAS_URL ATLAS_USERNAME ATLAS_PASSWORD_FILE
    .venv/bin/python bench/teardown_bench.py --atlas-url "$ATLAS_URL" --sizes 200,1000 --rebuild

Without ``--atlas-url`` an ``atlas-sync emulator serve --memory`` child runs with latency (5 ms per
request + 2 ms per KiB of request body + ``--per-entity-ms``, sync_bench's model).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from issue_workload import entity_count, issue_graph  # noqa: E402
from sync_bench import ROOT_TYPES, Server, _auth  # noqa: E402

EXE = str(Path(sys.executable).with_name("atlas-sync"))
PYAPACHEATLAS_BATCH = 100
PURGE_BATCH = 1000


def _env(url: str, real: bool) -> dict[str, str]:
    env = {**os.environ, "ATLAS_URL": url}
    if not real:
        env.update({"ATLAS_USERNAME": "admin", "ATLAS_PASSWORD": "admin"})
        env.pop("ATLAS_PASSWORD_FILE", None)
    return env


def _timed(cmd: list[str], env: dict[str, str], limit: float) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
    wall = time.perf_counter() - t0
    print(f"{' '.join(cmd[1:2])} {cmd[-1]}: {wall:.1f} s", file=sys.stderr, flush=True)  # survives a cut run
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[1:4])} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall


def _headers(url: str, real: bool, domain: str, *, deleted: bool | None) -> list[dict[str, Any]]:
    """The domain's headers, one search per root type in ROOT_TYPES order; ``deleted`` None: any."""
    from atlas_sync.atlas import AtlasClient
    from atlas_sync.reconcile.actual import search_roots

    suffix = "@" + domain
    flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": suffix}
    client = AtlasClient(url, auth=_auth(real), timeout=(10, 300))
    out = []
    for h in search_roots(
        client,
        ROOT_TYPES.split(","),
        entity_filters=flt,
        exclude_deleted=deleted is False,
        attributes=["qualifiedName"],
    ):
        qn = (h.get("attributes") or {}).get("qualifiedName", "")
        if not (isinstance(qn, str) and qn.endswith(suffix)):
            continue
        if deleted is None or (h.get("status") == "DELETED") == deleted:
            out.append(h)
    return out


def pyapacheatlas_teardown(url: str, real: bool, guids: list[str]) -> dict[str, Any]:
    """What a pyapacheatlas user writes: ``delete_entity(guid=batch)`` per 100, then the admin purge."""
    import requests
    from pyapacheatlas.auth.basic import BasicAuthentication
    from pyapacheatlas.core.client import AtlasClient as PyAtlas

    user, password = _auth(real)
    client = PyAtlas(url + "/api/atlas/v2", BasicAuthentication(username=user, password=password))
    t0 = time.perf_counter()
    for i in range(0, len(guids), PYAPACHEATLAS_BATCH):
        client.delete_entity(guid=guids[i : i + PYAPACHEATLAS_BATCH])
    t1 = time.perf_counter()
    for i in range(0, len(guids), PURGE_BATCH):
        resp = requests.put(
            url + "/api/atlas/admin/purge",
            json=guids[i : i + PURGE_BATCH],
            auth=(user, password),
            timeout=600,
        )
        resp.raise_for_status()
    t2 = time.perf_counter()
    return {"delete_s": round(t1 - t0, 1), "purge_s": round(t2 - t1, 1)}


def _check_empty(url: str, real: bool, domain: str) -> None:
    left = _headers(url, real, domain, deleted=None)
    if left:
        raise SystemExit(f"domain {domain} still holds {len(left)} entities after its teardown")


def run_size(url: str, real: bool, n: int, prefix: str, args: argparse.Namespace) -> dict[str, Any]:
    env = _env(url, real)
    total = entity_count(n)
    ours, theirs = f"{prefix}-as-{n}", f"{prefix}-pa-{n}"
    for d in (ours, theirs):
        if _headers(url, real, d, deleted=None):
            raise SystemExit(f"domain {d} is not empty: choose another --domain-prefix")
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "workload.lineage.json"
        doc.write_text(json.dumps(issue_graph(n, job="bench").to_document()), encoding="utf-8")
        sync = [EXE, "sync", "--from", "graph", "-q", str(doc), "--domain"]
        row: dict[str, Any] = {"N": n, "entities": total}
        row["sync_s"] = round(_timed([*sync, ours], env, args.limit), 1)
        row["sync_pa_domain_s"] = round(_timed([*sync, theirs], env, args.limit), 1)
        for d in (ours, theirs):
            held = len(_headers(url, real, d, deleted=False))
            if held != total:
                raise SystemExit(f"domain {d} holds {held} entities after its sync, not {total}")
        down = [EXE, "teardown", "--purge", "--yes", "-q", "--domain", ours]
        # every timed teardown runs while the other domain's 12.5 N entities are held too (a soft
        # delete's cost grows with Atlas's index): ours with theirs present, theirs with ours again
        row["teardown_s"] = round(_timed(down, env, args.limit), 1)
        _check_empty(url, real, ours)
        row["sync_again_s"] = round(_timed([*sync, ours], env, args.limit), 1)
        if args.rebuild:
            rebuild = [EXE, "rebuild", "--from", "graph", "-q", "--yes", str(doc), "--domain", ours]
            row["rebuild_s"] = round(_timed(rebuild, env, args.limit), 1)
            row["rebuild_vs_teardown_plus_sync"] = round(
                row["rebuild_s"] / (row["teardown_s"] + row["sync_s"]), 3
            )
            held = len(_headers(url, real, ours, deleted=None))
            if held != total:
                raise SystemExit(f"domain {ours} holds {held} entities after the rebuild, not {total}")
        t0 = time.perf_counter()
        guids = [h["guid"] for h in _headers(url, real, theirs, deleted=False)]
        row["pyapacheatlas_listing_s"] = round(time.perf_counter() - t0, 1)
        listed = Path(tmp) / "guids.json"
        listed.write_text(json.dumps(guids), encoding="utf-8")
        # the baseline as a user runs it too: a Python process (start, import, deletes, purge)
        worker = [sys.executable, __file__, "--pyapacheatlas-worker", str(listed), "--url", url]
        worker += ["--real"] if real else []
        t0 = time.perf_counter()
        proc = subprocess.run(worker, env=env, capture_output=True, text=True, timeout=args.limit)
        if proc.returncode != 0:
            raise SystemExit(f"the pyapacheatlas baseline failed:\n{proc.stderr[-3000:]}")
        pa = {"wall_s": round(time.perf_counter() - t0, 1), **json.loads(proc.stdout)}
        print(f"pyapacheatlas {theirs}: {pa}", file=sys.stderr, flush=True)
        row.update({f"pyapacheatlas_{k}": v for k, v in pa.items()})
        _check_empty(url, real, theirs)
        row["teardown_vs_sync"] = round(row["teardown_s"] / row["sync_s"], 3)
        row["teardown_vs_pyapacheatlas"] = round(row["teardown_s"] / pa["wall_s"], 3)
        row["cleanup_teardown_s"] = round(_timed(down, env, args.limit), 1)  # alone on the server
        _check_empty(url, real, ours)
    print(json.dumps(row), flush=True)
    return row


def _table(rows: list[dict[str, Any]]) -> str:
    cols = [
        ("entities", "entities"),
        ("sync_s", "sync s"),
        ("teardown_s", "teardown+purge s"),
        ("pyapacheatlas_wall_s", "pyapacheatlas s"),
        ("teardown_vs_sync", "vs sync"),
        ("teardown_vs_pyapacheatlas", "vs pyapacheatlas"),
        ("rebuild_s", "rebuild s"),
        ("rebuild_vs_teardown_plus_sync", "rebuild vs td+sync"),
    ]
    out = ["  ".join(f"{h:>18}" for _, h in cols)]
    for r in rows:
        out.append("  ".join(f"{r.get(k, '-')!s:>18}" for k, _ in cols))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--atlas-url", help="a running Atlas (credentials from ATLAS_USERNAME/ATLAS_PASSWORD[_FILE])"
    )
    p.add_argument(
        "--sizes", default="200", help="processes per workload, comma-separated (200: 2,500 entities)"
    )
    p.add_argument("--domain-prefix", default="td")
    p.add_argument("--rebuild", action="store_true", help="also time `atlas-sync rebuild` of the domain")
    p.add_argument("--latency-ms", type=float, default=5.0)
    p.add_argument("--per-kib-ms", type=float, default=2.0)
    p.add_argument("--per-entity-ms", type=float, default=0.0)
    p.add_argument("--limit", type=float, default=3600, help="seconds one command may take")
    p.add_argument("--out", help="write the rows as JSON here")
    p.add_argument("--pyapacheatlas-worker", metavar="GUIDS", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--real", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.pyapacheatlas_worker:
        guids = json.loads(Path(args.pyapacheatlas_worker).read_text(encoding="utf-8"))
        print(json.dumps(pyapacheatlas_teardown(args.url, args.real, guids)))
        return 0
    try:
        import pyapacheatlas  # noqa: F401
    except ImportError:
        raise SystemExit("needs pyapacheatlas: .venv/bin/pip install pyapacheatlas") from None
    server = None
    real = bool(args.atlas_url)
    url = args.atlas_url
    if not real:
        server = Server(args.latency_ms, args.per_entity_ms, args.per_kib_ms)
        url = server.url
    try:
        from atlas_sync.api import Publisher
        from atlas_sync.atlas import AtlasClient

        Publisher(AtlasClient(url, auth=_auth(real)), domain="bench").ensure_typedefs()  # untimed
        load = os.getloadavg()
        rows = [run_size(url, real, int(n), args.domain_prefix, args) for n in args.sizes.split(",")]
    finally:
        if server is not None:
            server.stop()
    print(f"server: {'Atlas at ' + url if real else 'emulator with latency'}; load before: {load[0]:.1f}")
    print(_table(rows))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"rows": rows, "load_before": load}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
