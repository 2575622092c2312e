"""Sync benchmark: atlas-sync vs the seed's one-POST-per-entity approach vs pyapacheatlas.

For each size N and each approach, a fresh emulator runs in its own process (``atlas-sync emulator
serve --memory``) with injected latency (issue 15's model, the default: 5 ms per request + 2 ms per
KiB of request body; ``--per-entity-ms`` adds a delay per entity), the profile's typedefs are
registered (untimed), and three phases each run in a fresh worker process (so peak RSS is per phase).
With ``--workload issue`` (default) N is a number of processes, each reading 1-3 shared datasets of 4
columns with 4 column edges (bench/issue_workload.py, ~12.3 entities per process); with
``--workload entities`` N is an entity count (bench/workload.py). Phases:

* ``initial``   - empty domain -> N entities;
* ``unchanged`` - the same input again;
* ``changed``   - 1% of the entities changed (column data types; one update each).

Approaches:

* ``seed``          - the seed design: one ``POST /v2/entity`` per entity, datasets first, then
                      processes; every run re-posts everything;
* ``pyapacheatlas`` - ``pyapacheatlas.core.client.AtlasClient.upload_entities(..., batch_size=B)``
                      with its ``AtlasEntity`` objects; every run re-uploads everything;
* ``atlas-sync``    - ``atlas_sync.api.Publisher.sync`` (plan against Atlas, write only the difference).

All three send the same entities (rendered by the ``lineage`` profile). Requests and bytes are counted
in the worker by wrapping ``requests.Session.send`` (all three use requests); wall time covers
rendering + sending; client CPU is the worker's user + system time over the same span; peak RSS is the
worker's ``ru_maxrss``. After each phase the emulator's domain is counted. Ratios atlas-sync /
other are printed for wall, CPU, requests, bytes sent, bytes received and peak RSS.

    .venv/bin/python bench/sync_bench.py --sizes 1000,10000
    .venv/bin/python bench/sync_bench.py --sizes 100000 --approaches atlas-sync,pyapacheatlas

``--atlas-url URL`` targets an Atlas that is already running (e.g. a real Apache Atlas from
``python -m tests.support.real_atlas``) instead: no emulator is started and no latency injected;
the credentials come from ``ATLAS_USERNAME`` and ``ATLAS_PASSWORD`` or ``ATLAS_PASSWORD_FILE`` (as
for atlas-sync itself; never from argv). Each approach publishes into its own domain
(``<--domain-prefix>-<approach>-<N>``: same entities, names ending in another ``@domain``), which
must be empty before the ``initial`` phase (``--clean-first`` empties it); ``--teardown`` deletes
and purges the bench domains at the end; ``--atlas-log FILE`` (the server's application.log) adds
the server's error lines written during a failed phase to its row.

    eval "$(.venv/bin/python -m tests.support.real_atlas env --home build/real-atlas/home)"
    .venv/bin/python bench/sync_bench.py --atlas-url "$ATLAS_URL" --sizes 1000 \
        --approaches pyapacheatlas,atlas-sync --phase-limit 1800 --teardown \
        --atlas-log build/real-atlas/home/logs/application.log
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

APPROACHES = ("seed", "pyapacheatlas", "atlas-sync")
PHASES = ("initial", "unchanged", "changed")
DOMAIN = "bench"
ROOT_TYPES = "lineage_dataset,lineage_column,lineage_process,lineage_column_lineage"


# --------------------------------------------------------------------------- worker side


def _auth(real: bool) -> tuple[str, str]:
    """The emulator's ``admin``/``admin``, or a real Atlas's user and password from the environment
    (``ATLAS_USERNAME``; ``ATLAS_PASSWORD`` or ``ATLAS_PASSWORD_FILE``), as atlas-sync reads them."""
    if not real:
        return ("admin", "admin")
    from atlas_sync.config import read_password_file

    password = os.environ.get("ATLAS_PASSWORD")
    if password is None and os.environ.get("ATLAS_PASSWORD_FILE"):
        password = read_password_file(os.environ["ATLAS_PASSWORD_FILE"])
    if password is None:
        raise SystemExit("--atlas-url needs ATLAS_PASSWORD or ATLAS_PASSWORD_FILE in the environment")
    return (os.environ.get("ATLAS_USERNAME", "admin"), password)


def _endpoint(method: str, url: str) -> str:
    """``METHOD /v2/path`` with guids and type names replaced, to group requests by endpoint."""
    path = urlsplit(url).path.split("/api/atlas", 1)[-1]
    path = re.sub(r"/guid/[^/]+", "/guid/{guid}", path)
    return method + " " + re.sub(r"/type/[^/]+", "/type/{type}", path)


class Counter:
    """Counts every request sent through ``requests`` in this process; per endpoint too (count and
    seconds spent waiting, which overlap when requests run in parallel), and when each entity write
    started and how long it took (seconds since ``install``)."""

    def __init__(self) -> None:
        self.requests = 0
        self.write_requests = 0
        self.bytes_sent = 0
        self.bytes_received = 0
        self.by_endpoint: dict[str, list[float]] = {}
        self.writes: list[tuple[float, float]] = []
        self.t0 = time.perf_counter()

    def install(self) -> None:
        import requests

        original = requests.Session.send
        counter = self

        def send(session: Any, request: Any, **kw: Any) -> Any:
            body = request.body or b""
            counter.requests += 1
            write = request.method in ("POST", "PUT", "DELETE") and "/v2/entity" in (request.url or "")
            if write:
                counter.write_requests += 1
            counter.bytes_sent += len(body.encode() if isinstance(body, str) else body)
            started = time.perf_counter()
            resp = original(session, request, **kw)
            counter.bytes_received += len(resp.content or b"")
            took = time.perf_counter() - started
            slot = counter.by_endpoint.setdefault(_endpoint(request.method, request.url or ""), [0, 0.0])
            slot[0] += 1
            slot[1] += took
            if write:
                counter.writes.append((round(started - counter.t0, 2), round(took, 2)))
            return resp

        requests.Session.send = send  # type: ignore[method-assign,assignment]
        self.t0 = time.perf_counter()


def _graph(n: int, phase: str, kind: str = "issue") -> Any:
    from issue_workload import issue_graph
    from workload import change_fraction, job_graph, shape_for_entities

    graph = issue_graph(n) if kind == "issue" else job_graph(shape_for_entities(n, seed=0), 0)
    if phase == "changed":
        graph, _ = change_fraction(graph, 0.01, seed=1)
    return graph


def _payloads(graph: Any, *, with_tier: bool = False, domain: str = DOMAIN) -> list[Any]:
    """The profile's entities as Atlas JSON in dependency order, references by unique attributes
    (``with_tier``: ``(tier, body)`` pairs)."""
    from atlas_sync.reconcile.apply import _Batcher
    from atlas_sync.render.profile import load_profile
    from atlas_sync.render.renderer import render

    desired = render(graph, load_profile("lineage"), domain=domain, job=graph.job)
    batcher = _Batcher({})
    ordered = sorted(desired.entities.values(), key=lambda e: e.tier)
    bodies = [(e.tier, batcher.payload(e, batcher.placeholder(), {}, True)) for e in ordered]
    return bodies if with_tier else [b for _, b in bodies]


def run_seed(url: str, graph: Any, batch_size: int, domain: str, auth: tuple[str, str]) -> dict[str, Any]:
    import requests

    session = requests.Session()
    session.auth = auth
    n = 0
    for body in _payloads(graph, domain=domain):
        resp = session.post(url + "/api/atlas/v2/entity", json={"entity": body}, timeout=(10, 120))
        resp.raise_for_status()
        n += 1
    return {"writes": n}


def run_pyapacheatlas(
    url: str, graph: Any, batch_size: int, domain: str, auth: tuple[str, str]
) -> dict[str, Any]:
    from itertools import groupby

    from pyapacheatlas.auth.basic import BasicAuthentication
    from pyapacheatlas.core.client import AtlasClient as PyAtlas
    from pyapacheatlas.core.entity import AtlasEntity

    client = PyAtlas(url + "/api/atlas/v2", BasicAuthentication(username=auth[0], password=auth[1]))
    # pyapacheatlas's batch_dependent_entities only follows negative guids in relationshipAttributes
    # (not a Process's attributes.inputs/outputs) and reorders batches, so placeholder links across
    # batches fail with ATLAS-404-00-00A. The working pattern: references by qualifiedName and one
    # upload_entities call per dependency level (tables, then columns, then processes, ...).
    n = 0
    for _, level in groupby(_payloads(graph, with_tier=True, domain=domain), key=lambda p: p[0]):
        objs = []
        for _, body in level:
            attrs = dict(body["attributes"])
            objs.append(
                AtlasEntity(
                    name=attrs.get("name", attrs["qualifiedName"]),
                    typeName=body["typeName"],
                    qualified_name=attrs["qualifiedName"],
                    guid=body["guid"],
                    attributes=attrs,
                    relationshipAttributes=body.get("relationshipAttributes", {}),
                )
            )
        client.upload_entities(objs, batch_size=batch_size)
        n += len(objs)
    return {"writes": n}


def run_atlas_sync(
    url: str, graph: Any, batch_size: int, domain: str, auth: tuple[str, str]
) -> dict[str, Any]:
    from atlas_sync.api import Publisher
    from atlas_sync.atlas import AtlasClient

    client = AtlasClient(url, auth=auth, timeout=(10, 120), batch_size=batch_size)
    parallel = int(os.environ.get("ATLAS_SYNC_PARALLEL", "2"))
    pub = Publisher(client, profile="lineage", domain=domain, batch_size=batch_size, parallel=parallel)
    result = pub.sync(graph)
    return {
        "plan": result.plan.counts,
        "writes": sum(v for k, v in result.plan.counts.items() if k != "unchanged"),
    }


RUNNERS = {"seed": run_seed, "pyapacheatlas": run_pyapacheatlas, "atlas-sync": run_atlas_sync}


def worker(args: argparse.Namespace) -> int:
    graph = _graph(args.entities, args.phase, args.workload)
    counter = Counter()
    counter.install()
    t0 = time.perf_counter()
    c0 = time.process_time()
    extra = RUNNERS[args.approach](args.url, graph, args.batch_size, args.domain, _auth(args.real))
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "requests": counter.requests,
                "write_requests": counter.write_requests,
                "bytes_sent": counter.bytes_sent,
                "bytes_received": counter.bytes_received,
                "wall_s": round(wall, 3),
                "cpu_s": round(cpu, 3),
                "peak_rss_mb": round(rss_kb / 1024, 1),
                "by_endpoint": {
                    k: [int(n), round(t, 2)] for k, (n, t) in sorted(counter.by_endpoint.items())
                },
                "write_timeline": counter.writes,
                **extra,
            }
        )
    )
    return 0


# --------------------------------------------------------------------------- driver side


class Server:
    """``atlas-sync emulator serve --memory`` in a child process."""

    def __init__(
        self,
        latency_ms: float,
        per_entity_ms: float,
        per_kib_ms: float = 0.0,
        extra: Sequence[str] = (),
        *,
        memory: bool = True,
    ) -> None:
        exe = Path(sys.executable).with_name("atlas-sync")
        cmd = [str(exe), "emulator", "serve", *(["--memory"] if memory else []), "--port", "0"]
        cmd += ["--latency-ms", str(latency_ms), "--latency-per-entity-ms", str(per_entity_ms)]
        cmd += ["--latency-per-kib-ms", str(per_kib_ms), *extra]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 30
        self.url = ""
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                self.url = m.group(1)
                break
            if not line and self.proc.poll() is not None:
                break
        if not self.url:
            self.stop()
            raise RuntimeError("the emulator did not start")

    def rss_mb(self) -> float:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return float("nan")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _client(url: str, real: bool = False) -> Any:
    from atlas_sync.atlas import AtlasClient

    return AtlasClient(url, auth=_auth(real), timeout=(10, 300))


def _prepare(url: str, real: bool = False, domain: str = DOMAIN) -> None:
    from atlas_sync.api import Publisher

    Publisher(_client(url, real), profile="lineage", domain=domain).ensure_typedefs()


def _domain_headers(url: str, domain: str, real: bool, *, deleted: bool = False) -> list[dict[str, Any]]:
    """The domain's entity headers: ACTIVE ones, or with ``deleted`` only the DELETED ones. One search
    per root type (Atlas before 2.2 refuses comma-joined type names); names checked here too."""
    from atlas_sync.reconcile.actual import search_roots

    suffix = "@" + domain
    flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": suffix}
    out = []
    for h in search_roots(
        _client(url, real),
        ROOT_TYPES.split(","),
        entity_filters=flt,
        exclude_deleted=not deleted,
        attributes=["qualifiedName"],
    ):
        qn = (h.get("attributes") or {}).get("qualifiedName", "")
        if isinstance(qn, str) and qn.endswith(suffix) and (h.get("status") == "DELETED") == deleted:
            out.append(h)
    return out


def _domain_count(url: str, real: bool = False, domain: str = DOMAIN) -> int:
    if not real:  # the emulator takes the joined type names (as Atlas 2.2+ does)
        from atlas_sync.atlas import AtlasClient

        client = AtlasClient(url, auth=("admin", "admin"), timeout=(10, 300))
        flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@" + domain}
        return sum(
            1 for _ in client.search_basic(ROOT_TYPES, entity_filters=flt, attributes=["qualifiedName"])
        )
    return len(_domain_headers(url, domain, real))


def _expected_count(n: int, workload: str) -> int:
    """How many entities one approach publishes for size ``n`` (every phase has the same count)."""
    return len(_payloads(_graph(n, "initial", workload)))


# processes and column lineages before the columns and datasets they reference
_DELETE_ORDER = ("lineage_column_lineage", "lineage_process", "lineage_column", "lineage_dataset")


def _teardown(url: str, approach: str, domain: str, real: bool, batch: int) -> dict[str, Any]:
    """Empty a bench domain: atlas-sync's own teardown (with purge) for its domain; for another
    approach's, delete what it published (the domain's entities, found by name) and purge them."""
    t0 = time.perf_counter()
    client = _client(url, real)
    if approach == "atlas-sync":
        from atlas_sync.api import Publisher

        res = Publisher(client, profile="lineage", domain=domain, batch_size=batch).teardown(purge=True)
        done = {"deleted": res.deleted, "purged": res.purged}
    else:
        headers = _domain_headers(url, domain, real)
        rank = {t: i for i, t in enumerate(_DELETE_ORDER)}
        guids = [h["guid"] for h in sorted(headers, key=lambda h: rank.get(h.get("typeName", ""), 0))]
        for j in range(0, len(guids), batch):
            client.delete_entities(guids[j : j + batch])
        gone = [h["guid"] for h in _domain_headers(url, domain, real, deleted=True)]
        for j in range(0, len(gone), 1000):
            client.purge_entities(gone[j : j + 1000])
        done = {"deleted": len(guids), "purged": len(gone)}
    return {
        "domain": domain,
        **done,
        "left": _domain_count(url, real, domain),
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def _log_offset(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0


def _server_errors(path: str | None, offset: int, keep: int = 40) -> list[str]:
    """The server log's ERROR / exception lines written since ``offset`` (the last ``keep``)."""
    if not path:
        return []
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            text = fh.read().decode("utf-8", "replace")
    except OSError as exc:
        return [f"(cannot read {path}: {exc.strerror})"]
    pat = re.compile(r"\b(ERROR|SEVERE)\b|Exception|[Tt]imed? ?out|\b[Ll]ock")
    return [line[:400] for line in text.splitlines() if pat.search(line)][-keep:]


def _run_phase(
    approach: str,
    phase: str,
    url: str,
    n: int,
    batch: int,
    limit: float,
    workload: str,
    client_path: str | None = None,
    parallel: int = 0,
    domain: str = DOMAIN,
    real: bool = False,
) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", approach, "--phase", phase, "--url", url]
    cmd += ["--entities", str(n), "--batch-size", str(batch), "--workload", workload, "--domain", domain]
    if real:
        cmd.append("--real")
    env = dict(os.environ)
    if parallel:
        env["ATLAS_SYNC_PARALLEL"] = str(parallel)
    if client_path:  # another atlas-sync checkout for the worker (before/after comparisons)
        env["PYTHONPATH"] = client_path + os.pathsep + env.get("PYTHONPATH", "")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, check=False, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"over the {limit:g} s limit"}
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines() or ["?"]
        return {"error": lines[-1][:200], "stderr_tail": [x[:400] for x in lines[-15:]]}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _pyapacheatlas_available() -> str | None:
    try:
        import pyapacheatlas  # noqa: F401
    except ImportError:
        return "pyapacheatlas is not installed (.venv/bin/pip install pyapacheatlas)"
    return None


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def _table(rows: list[dict[str, Any]]) -> str:
    head = f"{'N':>7} {'approach':<16} {'phase':<10} {'requests':>9} {'writes':>7} {'sent':>9} {'received':>9} {'wall s':>8} {'CPU s':>7} {'RSS MB':>7}"
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['n']:>7} {r['approach']:<16} {r['phase']:<10} {r['error']}")
            continue
        lines.append(
            f"{r['n']:>7} {r['approach']:<16} {r['phase']:<10} {r['requests']:>9} {r['write_requests']:>7} "
            f"{_fmt_bytes(r['bytes_sent']):>9} {_fmt_bytes(r['bytes_received']):>9} {r['wall_s']:>8.2f} "
            f"{r.get('cpu_s', float('nan')):>7.2f} {r['peak_rss_mb']:>7.1f}"
        )
    return "\n".join(lines)


def _ratios(rows: list[dict[str, Any]], batch: int) -> list[str]:
    by = {(r["n"], r["approach"], r["phase"]): r for r in rows if "error" not in r}
    out = []
    mine = sorted({r["approach"] for r in rows if r["approach"].startswith("atlas-sync")})
    for n in sorted({r["n"] for r in rows}):
        for phase, label in ((ph, lb) for ph in PHASES for lb in mine):
            ours = by.get((n, label, phase))
            if not ours:
                continue
            for other in ("seed", "pyapacheatlas"):
                theirs = by.get((n, other, phase))
                if not theirs:
                    continue

                def ratio(key: str, a: dict[str, Any] = ours, b: dict[str, Any] = theirs) -> str:
                    return f"{a.get(key, 0) / max(b.get(key, 0), 1e-9):.3f}"

                out.append(
                    f"N={n:<7} {phase:<10} {label}/{other:<13} wall {ratio('wall_s')}  cpu {ratio('cpu_s')}"
                    f"  requests {ratio('requests')}  sent {ratio('bytes_sent')}"
                    f"  received {ratio('bytes_received')}  rss {ratio('peak_rss_mb')}"
                )
            changed = ours.get("writes", 0)
            bound = math.ceil(changed / batch) if changed else 0
            out.append(
                f"N={n:<7} {phase:<10} {label} write requests {ours['write_requests']} "
                f"vs bound ceil({changed}/{batch}) = {bound}"
            )
    return out


def _save(
    args: argparse.Namespace, doc: dict[str, Any], rows: list[dict[str, Any]], notes: list[str]
) -> None:
    print(_table(rows))
    print()
    for line in _ratios(rows, args.batch_size):
        print(line)
    for note in notes:
        print("note:", note)
    out = (
        Path(args.out) if args.out else HERE / "results" / f"sync_bench-{time.strftime('%Y%m%dT%H%M%S')}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {**doc, "rows": rows, "ratios": _ratios(rows, args.batch_size), "notes": notes}
    out.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    print(f"results: {out}")


def main_atlas(args: argparse.Namespace) -> int:
    """The phases against an Atlas that is already running: one domain per approach and size."""
    url = args.atlas_url.rstrip("/")
    sizes = [int(s.replace("k", "000")) for s in args.sizes.split(",") if s]
    approaches = [a for a in args.approaches.split(",") if a]
    phases = [p for p in args.phases.split(",") if p]
    if unknown := [p for p in phases if p not in PHASES]:
        raise SystemExit(f"unknown phase(s) {unknown}; choose from {', '.join(PHASES)}")
    notes = []
    if "pyapacheatlas" in approaches and (why := _pyapacheatlas_available()):
        approaches.remove("pyapacheatlas")
        notes.append(f"pyapacheatlas column skipped: {why}")
    version = _client(url, True).version().get("Version", "?")
    t0 = time.perf_counter()
    _prepare(url, True)  # the lineage profile's typedefs, untimed (every domain shares them)
    notes.append(f"typedefs ensured before the phases in {time.perf_counter() - t0:.1f} s (untimed)")
    rows: list[dict[str, Any]] = []
    teardowns: list[dict[str, Any]] = []
    for n in sizes:
        expected = _expected_count(n, args.workload)
        for approach in approaches:
            domain = f"{args.domain_prefix}-{approach}-{n}"
            if args.clean_first:
                teardowns.append(
                    {"when": "before", **_teardown(url, approach, domain, True, args.batch_size)}
                )
            for phase in phases:
                row: dict[str, Any] = {"n": n, "approach": approach, "phase": phase, "domain": domain}
                if phase == "initial" and (held := _domain_count(url, True, domain)):
                    row["error"] = f"domain {domain} already holds {held} entities (use --clean-first)"
                    rows.append(row)
                    break
                offset = _log_offset(args.atlas_log)
                started = time.strftime("%Y-%m-%dT%H:%M:%S")
                r = _run_phase(
                    approach,
                    phase,
                    url,
                    n,
                    args.batch_size,
                    args.phase_limit,
                    args.workload,
                    args.client_path if approach == "atlas-sync" else None,
                    domain=domain,
                    real=True,
                )
                row.update(r, started=started)
                if "error" in r:
                    row["server_log"] = _server_errors(args.atlas_log, offset)
                row["domain_entities_after"] = _domain_count(url, True, domain)
                row["domain_entities_expected"] = expected
                rows.append(row)
                print(_table([row]).splitlines()[-1], file=sys.stderr, flush=True)
                if row["domain_entities_after"] != expected and "error" not in r:
                    notes.append(
                        f"{approach} {phase}: the domain holds {row['domain_entities_after']} entities, "
                        f"expected {expected}"
                    )
                if "error" in r:
                    break
    if args.teardown:
        for n in sizes:
            for approach in approaches:
                domain = f"{args.domain_prefix}-{approach}-{n}"
                teardowns.append({"when": "after", **_teardown(url, approach, domain, True, args.batch_size)})
                print(f"teardown {teardowns[-1]}", file=sys.stderr, flush=True)
    doc = {
        "settings": {
            "target": "atlas",
            "atlas_url": url,
            "atlas_version": version,
            "sizes": sizes,
            "approaches": approaches,
            "phases": phases,
            "latency": "none injected",
            "workload": args.workload,
            "batch_size": args.batch_size,
            "atlas_sync_parallel": int(os.environ.get("ATLAS_SYNC_PARALLEL", "2")),
            "phase_limit_s": args.phase_limit,
            "cpus": os.cpu_count(),
        },
        "teardowns": teardowns,
    }
    _save(args, doc, rows, notes)
    return 1 if any("error" in r for r in rows) else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated sizes (see --workload)")
    ap.add_argument(
        "--workload", choices=("issue", "entities"), default="issue", help="sizes are processes / entities"
    )
    ap.add_argument("--approaches", default=",".join(APPROACHES))
    ap.add_argument("--latency-ms", type=float, default=5.0, help="emulator delay per request")
    ap.add_argument("--per-entity-ms", type=float, default=0.0, help="emulator delay per entity")
    ap.add_argument("--per-kib-ms", type=float, default=2.0, help="emulator delay per KiB of request body")
    ap.add_argument("--batch-size", type=int, default=500)
    ap.add_argument(
        "--parallel",
        help="comma-separated write parallelism for atlas-sync, one column each in the same run "
        "(e.g. 1,2,4) [default: ATLAS_SYNC_PARALLEL or 2]",
    )
    ap.add_argument(
        "--phases",
        default=",".join(PHASES),
        help="comma-separated phases to run, in order (with --atlas-url a domain must be empty before 'initial')",
    )
    ap.add_argument("--phase-limit", type=float, default=900, help="seconds before a phase is abandoned")
    ap.add_argument("--out", help="JSON results file [bench/results/sync_bench-<time>.json]")
    ap.add_argument(
        "--client-path",
        help="run the atlas-sync approach with the atlas_sync package found in DIR (e.g. an older checkout)",
    )
    real = ap.add_argument_group("an Atlas that is already running (e.g. a real Apache Atlas)")
    real.add_argument(
        "--atlas-url",
        help="publish to this Atlas instead of emulators (no latency injected); credentials from "
        "ATLAS_USERNAME and ATLAS_PASSWORD or ATLAS_PASSWORD_FILE",
    )
    real.add_argument(
        "--domain-prefix", default=DOMAIN, help="each approach's domain is PREFIX-<approach>-<N> [bench]"
    )
    real.add_argument(
        "--clean-first", action="store_true", help="empty the bench domains before the first phase"
    )
    real.add_argument("--teardown", action="store_true", help="delete and purge the bench domains at the end")
    real.add_argument(
        "--atlas-log", help="the server's log file: its error lines go into a failed phase's row"
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--entities", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--domain", default=DOMAIN, help=argparse.SUPPRESS)
    ap.add_argument("--real", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        args.approach = args.worker
        return worker(args)
    if args.atlas_url:
        return main_atlas(args)

    sizes = [int(s.replace("k", "000")) for s in args.sizes.split(",") if s]
    approaches = [a for a in args.approaches.split(",") if a]
    notes = []
    if "pyapacheatlas" in approaches and (why := _pyapacheatlas_available()):
        approaches.remove("pyapacheatlas")
        notes.append(f"pyapacheatlas column skipped: {why}")
    parallels = [
        int(x) for x in (args.parallel or os.environ.get("ATLAS_SYNC_PARALLEL", "2")).split(",") if x
    ]
    phases = [x for x in args.phases.split(",") if x]
    # atlas-sync once per parallel setting ("atlas-sync p2"), each with its own emulator
    columns = [(a, p) for a in approaches for p in (parallels if a == "atlas-sync" else [0])]
    rows: list[dict[str, Any]] = []
    for n in sizes:
        for approach, par in columns:
            label = f"{approach} p{par}" if par else approach
            server = Server(args.latency_ms, args.per_entity_ms, args.per_kib_ms)
            try:
                _prepare(server.url)
                for phase in phases:
                    r = _run_phase(
                        approach,
                        phase,
                        server.url,
                        n,
                        args.batch_size,
                        args.phase_limit,
                        args.workload,
                        args.client_path if approach == "atlas-sync" else None,
                        par,
                    )
                    row = {"n": n, "approach": label, "parallel": par or None, "phase": phase, **r}
                    if "error" not in r:
                        row["domain_entities_after"] = _domain_count(server.url)
                    rows.append(row)
                    print(_table([row]).splitlines()[-1], file=sys.stderr, flush=True)
                    if "error" in r:
                        break
                for row in rows:
                    if row["n"] == n and row["approach"] == label:
                        row["emulator_peak_rss_mb"] = server.rss_mb()
            finally:
                server.stop()
    doc = {
        "settings": {
            "sizes": sizes,
            "approaches": approaches,
            "latency_ms": args.latency_ms,
            "per_entity_ms": args.per_entity_ms,
            "per_kib_ms": args.per_kib_ms,
            "workload": args.workload,
            "batch_size": args.batch_size,
            "parallel": parallels,
            "phases": phases,
            "cpus": os.cpu_count(),
        }
    }
    _save(args, doc, rows, notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
