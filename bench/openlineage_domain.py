"""`atlas-sync openlineage serve` against the size of its domain (issue 23, item 6): how fast new
OpenLineage jobs become visible in Atlas in an empty domain and in one holding 125,000 entities.

Builds the big domain as bench/job_sync.py does (one bulk graph sync of issue 15's workload,
``job_sync.build_domain``, on an emulator without latency), then restarts the emulator on the same
state with the latency model (5 ms per request + 2 ms per KiB of request body). An untimed run of
``--warmup`` jobs into each domain first takes the costs of first uses (a fresh emulator process,
attribute indexes made and statistics gathered again: 2.4 s on the first event at 125,000 entities,
which would fall on whichever domain goes first). Then, for each domain, in a round (``--repeat``
rounds, the order of the domains alternating; medians):

* a fresh ``atlas-sync openlineage serve --domain D`` child process (its own data dir, journal and
  dead-letter file; Atlas from ``ATLAS_URL`` / ``ATLAS_USERNAME`` / ``ATLAS_PASSWORD``, as a user
  runs it), waited for until ``GET /ready`` answers 200;
* ``--events`` E COMPLETE run events of E distinct jobs, posted by ``--producers`` P threads, each
  with openlineage-python's own ``HttpTransport`` (keep-alive, gzip), as fast as they are answered.
  Each event is a small job: inputs ``raw.s<k>`` (one of ``--shared`` datasets the big domain's bulk
  job created and shares; namespace ``hive://metastore:9083``, so the reader names it ``raw.s<k>``
  as the graph document does and the job refers to the existing entity) and a dataset of its own,
  output a dataset of its own, a columnLineage facet of 2 columns (one from each input). In the
  empty domain the first job reading ``raw.s<k>`` creates it. All jobs of a round name their
  columns alike (``<round>_id``, ``<round>_amount``: many jobs have an ``id``); the round in the
  name keeps one round's jobs out of the next round's look at recent copies (15 minutes).

Measured, per run:

* **events/s synced**: E / (when the last event became visible - when the first was posted);
* **event-to-visible** p50/p95: per event, from the moment its producer started posting it to the
  moment it was visible. *Visible* is read from the server's ``synced`` counter (``GET
  /api/v1/metrics``, polled every ``--poll-ms``): it counts an event once its job's sync returned,
  i.e. after Atlas committed the job's entities. The worker syncs the jobs in the order the
  journal accepted them (one job per event here), so the k-th event to be answered 201 is taken as
  the k-th to become visible. Polling the counter touches neither Atlas nor its request log;
  polling Atlas for 200 processes would. The server's own histogram
  (``event_visible_seconds``, from acceptance to commit, interpolated in its buckets) is kept in the
  JSON as a cross-check. After the run every job's process is looked up in Atlas (``found``), with
  the dataset it reads (``from bulk``: how many read the bulk job's entity, E in the big domain);
* **requests, writes and KiB** per event: from the emulator's request log over the same span
  (``GET /admin/status``, the server's readiness probe every 2 s, left out), as job_sync.py reads it;
* **server CPU** per event: the serve process's user + system time over the span (``/proc``; it
  includes answering the polls), and the emulator's, which shares the machine's cores.

Then rate(big) / rate(empty) of each round, and its median (issue 23's done-when: >= 0.8).

    flock /tmp/bench.lock .venv/bin/python bench/openlineage_domain.py --size 125000 --repeat 2
    .venv/bin/python bench/openlineage_domain.py --size 2000 --events 50 --repeat 1   # a small try

``--atlas-url URL`` runs the same against a real Atlas (credentials from ``ATLAS_USERNAME`` and
``ATLAS_PASSWORD_FILE``, as the CLI reads them; no latency added): the big domain is built there
(``<run>D<size>``, left in place; ``--run PREFIX --built`` reuses one built earlier), every run's
empty domain and jobs are new names; requests come from the server's Prometheus counters
(``atlas_requests_total`` but ``admin``) and bytes from its ``-v`` report (whole process).

    .venv/bin/python bench/openlineage_domain.py --atlas-url "$ATLAS_URL" --size 50000 --run ol1
    .venv/bin/python bench/openlineage_domain.py --atlas-url "$ATLAS_URL" --size 50000 --run ol1 --built
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from job_sync import _reported, _requests, _serve, build_domain  # noqa: E402
from sync_bench import _client  # noqa: E402

from atlas_sync.lineage.openlineage import job_key  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
# a Hive metastore's namespace: the reader names its tables `db.table`, as the graph document does
NAMESPACE = "hive://metastore:9083"
JOB_NAMESPACE = "olbench"
PREFIX = "atlas_sync_openlineage_"


# ------------------------------------------------------------------------------- the events
def make_events(tag: str, count: int, shared: int, *, distinct_columns: bool = False) -> list[Any]:
    """``count`` COMPLETE events of distinct jobs ``<tag>.job<i>``: inputs ``raw.s<i % shared>`` and
    ``raw.ol_<tag>_in<i>``, output ``mart.ol_<tag>_out<i>``, 2 columns of column lineage, named
    ``<tag>_id`` and ``<tag>_amount`` in every job (``distinct_columns``: ``..._id<i>`` per job)."""
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import column_lineage_dataset as cl
    from openlineage.client.facet_v2 import schema_dataset as sd

    now = datetime.now(UTC).isoformat()
    events = []

    def field(name: str, column: str, kind: str) -> cl.Fields:
        how = cl.Transformation(type="DIRECT", subtype=kind)
        return cl.Fields(inputFields=[cl.InputField(NAMESPACE, name, column, transformations=[how])])

    for i in range(count):
        own = str(i) if distinct_columns else ""
        ident, amount = f"{tag}_id{own}", f"{tag}_amount{own}"
        schema = sd.SchemaDatasetFacet(
            fields=[
                sd.SchemaDatasetFacetFields(name=ident, type="bigint"),
                sd.SchemaDatasetFacetFields(name=amount, type="double"),
            ]
        )
        src, own_in = f"raw.s{i % shared}", f"raw.ol_{tag}_in{i}"
        lineage = cl.ColumnLineageDatasetFacet(
            fields={ident: field(src, "c0", "IDENTITY"), amount: field(own_in, amount, "TRANSFORMATION")}
        )
        events.append(
            RunEvent(
                eventType=RunState.COMPLETE,
                eventTime=now,
                run=Run(runId=str(uuid.uuid4())),
                job=Job(namespace=JOB_NAMESPACE, name=f"{tag}.job{i}"),
                producer="https://example.invalid/atlas-sync-bench",
                inputs=[
                    InputDataset(NAMESPACE, src),
                    InputDataset(NAMESPACE, own_in, facets={"schema": schema}),
                ],
                outputs=[
                    OutputDataset(
                        NAMESPACE,
                        f"mart.ol_{tag}_out{i}",
                        facets={"schema": schema, "columnLineage": lineage},
                    )
                ],
            )
        )
    return events


def post_all(url: str, events: list[Any], producers: int) -> tuple[list[float], list[float], list[str]]:
    """Each producer thread posts its share of ``events`` (event i to producer i % P) one after the
    other; per event the ``perf_counter`` when its post started and when its 201 came; errors."""
    from openlineage.client.transport.http import HttpCompression, HttpConfig, HttpTransport

    posted = [0.0] * len(events)
    answered = [0.0] * len(events)
    errors: list[str] = []
    transports = []
    for _ in range(producers):
        config = HttpConfig.from_dict({"url": url, "timeout": 60.0})
        config.compression = HttpCompression.GZIP
        transports.append(HttpTransport(config))
    start = threading.Barrier(producers)

    def run(p: int) -> None:
        start.wait()
        for i in range(p, len(events), producers):
            posted[i] = time.perf_counter()
            try:
                transports[p].emit(events[i])
            except Exception as exc:  # noqa: BLE001 - counted and reported; the run goes on
                errors.append(f"{type(exc).__name__}: {exc}")
            answered[i] = time.perf_counter()

    threads = [threading.Thread(target=run, args=(p,), daemon=True) for p in range(producers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return posted, answered, errors


# ------------------------------------------------------------------------------- the server
def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Endpoint:
    """``atlas-sync openlineage serve`` in a child process with its own data dir and journal."""

    def __init__(self, domain: str, env: dict[str, str], work: Path) -> None:
        work.mkdir(parents=True)
        exe = Path(sys.executable).with_name("atlas-sync")
        cmd = [str(exe), "openlineage", "serve", "--domain", domain, "--port", "0", "-v"]
        cmd += ["--journal", str(work / "journal.sqlite"), "--dead-letter", str(work / "dead.jsonl")]
        env = {**env, "ATLAS_SYNC_DATA_DIR": str(work / "data")}
        # cwd: no atlas-sync.toml of the caller's
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env, cwd=work)
        assert self.proc.stderr is not None
        self.lines: list[str] = []
        self.url = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.url:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            self.lines.append(line)
            m = re.search(r"endpoint on (http://\S+)/api/v1/lineage", line)
            self.url = m.group(1) if m else ""
        if not self.url:
            self.stop()
            raise RuntimeError("openlineage serve did not start: " + "".join(self.lines)[-2000:])
        # keep reading its stderr (warnings, the -v report at exit) so that it never blocks on it
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        self.session = requests.Session()
        while time.monotonic() < deadline:
            if self.session.get(self.url + "/ready", timeout=10).status_code == 200:
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("openlineage serve did not become ready")

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def metrics(self) -> dict[str, Any]:
        return dict(self.session.get(self.url + "/api/v1/metrics", timeout=10).json())

    def prometheus(self) -> str:
        return self.session.get(self.url + "/metrics", timeout=10).text

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid)

    def stop(self) -> str:
        """SIGTERM (it drains, then prints its -v report); its whole stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(90)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if hasattr(self, "_reader"):
            self._reader.join(10)
        return "".join(self.lines)


def histogram_quantile(text: str, name: str, q: float) -> float | None:
    """Prometheus's ``histogram_quantile`` over one histogram of a scrape (linear in a bucket), in
    milliseconds' precision."""
    buckets = []
    for m in re.finditer(rf'^{re.escape(name)}_bucket{{le="([^"]+)"}} (\S+)$', text, re.M):
        buckets.append((float(m.group(1)), float(m.group(2))))
    if not buckets or buckets[-1][1] == 0:
        return None
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return lower
            return round(lower + (le - lower) * (rank - below) / max(count - below, 1e-9), 3)
        lower, below = le, count
    return None


def atlas_requests(text: str) -> dict[str, float]:
    """``atlas_requests_total`` per call kind from a Prometheus scrape."""
    pattern = rf'^{PREFIX}atlas_requests_total{{kind="([^"]+)"}} (\S+)$'
    return {m.group(1): float(m.group(2)) for m in re.finditer(pattern, text, re.M)}


# ------------------------------------------------------------------------------- one run
def quantile(values: list[float], q: float) -> float:
    """The q-quantile (q in hundredths), linear between the closest ranks."""
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def run_once(
    domain: str,
    size: int,
    tag: str,
    args: argparse.Namespace,
    env: dict[str, str],
    work: Path,
    emulator: Any = None,
    log: Path | None = None,
) -> dict[str, Any]:
    """One serve process, E events into ``domain``: the row of figures."""
    events = make_events(tag, args.events, args.shared, distinct_columns=args.distinct_columns)
    endpoint = Endpoint(domain, env, work / f"serve-{domain}-{tag}")
    try:
        offset = log.stat().st_size if log is not None and log.exists() else 0
        before = atlas_requests(endpoint.prometheus())
        cpu0 = endpoint.cpu()
        emu0 = cpu_seconds(emulator.proc.pid) if emulator is not None else 0.0
        # the producers post while this thread watches the synced counter
        result: dict[str, Any] = {}
        posting = threading.Thread(
            target=lambda: result.update(
                zip(
                    ("posted", "answered", "errors"),
                    post_all(endpoint.url, events, args.producers),
                    strict=True,
                )
            )
        )
        samples: list[tuple[float, int]] = []
        posting.start()
        deadline = time.perf_counter() + args.timeout
        m: dict[str, Any] = {}
        while time.perf_counter() < deadline:
            m = endpoint.metrics()
            samples.append((time.perf_counter(), int(m["synced"])))
            if m["synced"] + m["dead_lettered"] >= args.events:
                break
            time.sleep(args.poll_ms / 1000)
        cpu1 = endpoint.cpu()
        emu1 = cpu_seconds(emulator.proc.pid) if emulator is not None else 0.0
        posting.join()
        scrape = endpoint.prometheus()
    finally:
        report = endpoint.stop()
    if result["errors"]:
        raise RuntimeError(f"{len(result['errors'])} posts failed, e.g. {result['errors'][0]}")
    synced = samples[-1][1]
    if synced < args.events:
        raise RuntimeError(f"{synced} of {args.events} events synced in {args.timeout:g} s: {m}")
    # when the counter first reached k: the k-th event visible
    visible: list[float] = []
    for t, n in samples:
        visible += [t] * (min(n, args.events) - len(visible))
    posted, answered = result["posted"], result["answered"]
    order = sorted(range(args.events), key=lambda i: answered[i])
    to_visible = [visible[rank] - posted[i] for rank, i in enumerate(order)]
    accept = [answered[i] - posted[i] for i in range(args.events)]
    span = visible[-1] - min(posted)
    row: dict[str, Any] = {
        "domain": size,
        "name": domain,
        "tag": tag,
        "events": args.events,
        "synced": synced,
        "failed_attempts": m["failed"],
        "span_s": round(span, 3),
        "events_per_s": round(args.events / span, 2),
        "p50_s": round(quantile(to_visible, 0.5), 3),
        "p95_s": round(quantile(to_visible, 0.95), 3),
        "accept_p50_ms": round(1000 * quantile(accept, 0.5), 1),
        "server_p50_s": histogram_quantile(scrape, PREFIX + "event_visible_seconds", 0.5),
        "server_p95_s": histogram_quantile(scrape, PREFIX + "event_visible_seconds", 0.95),
        "server_cpu_ms": round(1000 * (cpu1 - cpu0) / args.events, 2),
        "polls": len(samples),
        # when each event (in the order answered) became visible, from the first post: the trend
        "visible_s": [round(v - min(posted), 3) for v in visible],
    }
    if emulator is not None and log is not None:
        row["emulator_cpu_ms"] = round(1000 * (emu1 - emu0) / args.events, 2)
        row |= _log_counts(log, offset)
    else:
        after = atlas_requests(scrape)
        row["requests"] = round(sum(v - before.get(k, 0) for k, v in after.items() if k != "admin"))
        row["writes"] = round(after.get("entity_write", 0) - before.get("entity_write", 0))
        sent = _reported(report)  # the whole process's -v report: bytes (probes' are a few dozen)
        row["bytes_sent"], row["bytes_received"] = sent["bytes_sent"], sent["bytes_received"]
    row |= _check(domain, tag, args, real=emulator is None, url=env["ATLAS_URL"])
    print(json.dumps({k: v for k, v in row.items() if k != "visible_s"}), file=sys.stderr, flush=True)
    return row


def _log_counts(log: Path, offset: int) -> dict[str, int]:
    """Requests, writes and bytes from the emulator's log since ``offset``, without the readiness
    probes (``GET /admin/status`` every 2 s: they follow the run's length, not its events)."""
    end, counts = _requests(log, offset)
    with log.open("rb") as fh:
        fh.seek(offset)
        for line in fh.read(end - offset).splitlines():
            rec = json.loads(line)
            if rec["path"] == "/api/atlas/admin/status":
                counts["requests"] -= 1
                counts["bytes_received"] -= rec.get("bytes_out", 0)
    return counts


def _check(domain: str, tag: str, args: argparse.Namespace, *, real: bool, url: str) -> dict[str, int]:
    """Every job's process in Atlas, and how many read the dataset the bulk job created."""
    client = _client(url, real)
    names = [f"{job_key(JOB_NAMESPACE, f'{tag}.job{i}')}@{domain}" for i in range(args.events)]
    procs = client.get_entities_by_unique("lineage_process", names)
    shared = client.get_entities_by_unique(
        "lineage_dataset", [f"raw.s{k}@{domain}" for k in range(args.shared)]
    )
    bulk = {d["guid"] for d in shared if d["attributes"].get("atlasSyncJob") == "bulk"}
    reads_bulk = sum(
        1 for p in procs if any(ref.get("guid") in bulk for ref in p["attributes"].get("inputs") or [])
    )
    return {"found": len(procs), "from_bulk": reads_bulk}


# ------------------------------------------------------------------------------- the rounds
def rounds(
    args: argparse.Namespace, env: dict[str, str], work: Path, big: str, empty_prefix: str, **emu: Any
) -> list[dict[str, Any]]:
    """``--repeat`` rounds over both domains, alternating which goes first; every round's jobs (and
    its empty domain) are new names."""
    stamp = f"t{int(time.time()) % 10**6}"  # new names on every invocation (--built reuses domains)
    if args.warmup:
        # First uses cost once, whichever run meets them: a fresh Atlas process, the attribute
        # indexes the jobs' searches want created and the planner's statistics gathered again (2.4 s
        # on the first event after the restart at 125,000 entities). Untimed runs of a few jobs take them.
        warm = argparse.Namespace(**(vars(args) | {"events": min(args.warmup, args.events)}))
        for domain, size in ((f"{empty_prefix}{stamp}w", 0), (big, args.size)):
            print(f"warm-up into {domain} (not counted):", file=sys.stderr)
            run_once(domain, size, f"{stamp}w", warm, env, work, **emu)
    rows = []
    for rnd in range(args.repeat):
        tag = f"{stamp}r{rnd}"
        runs = [(f"{empty_prefix}{tag}", 0), (big, args.size)]
        for domain, size in runs if rnd % 2 == 0 else runs[::-1]:
            rows.append(run_once(domain, size, tag, args, env, work, **emu) | {"round": rnd})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=None, help="the big domain's entities [125000; 50000 real]")
    ap.add_argument("--events", type=int, default=200, help="E: events per run, each of its own job")
    ap.add_argument("--producers", type=int, default=8, help="P: producer threads posting them")
    ap.add_argument("--shared", type=int, default=8, help="the big domain's datasets the jobs read")
    ap.add_argument(
        "--distinct-columns",
        action="store_true",
        help="each job names its columns apart (default: all jobs of a round name them alike)",
    )
    ap.add_argument("--repeat", type=int, default=2, help="rounds over both domains (order alternating)")
    ap.add_argument("--warmup", type=int, default=10, help="events of the untimed run into each domain first")
    ap.add_argument("--latency-ms", type=float, default=5.0)
    ap.add_argument("--per-kib-ms", type=float, default=2.0)
    ap.add_argument("--poll-ms", type=float, default=20.0, help="how often the synced counter is read")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds a run may take")
    ap.add_argument(
        "--out", default=None, help="JSON results [bench/results/openlineage_domain-<size>-<time>.json]"
    )
    ap.add_argument(
        "--dir", default=None, help="folder for the emulator's state, documents, journals [a temporary one]"
    )
    ap.add_argument("--atlas-url", default=None, help="a real Atlas instead of the emulator")
    ap.add_argument(
        "--run", default=None, help="with --atlas-url: the big domain's prefix (default: r<time>)"
    )
    ap.add_argument(
        "--built", action="store_true", help="with --atlas-url and --run: the big domain exists, time only"
    )
    args = ap.parse_args(argv)
    if args.size is None:
        args.size = 50_000 if args.atlas_url else 125_000
    if args.size < 12.5 * args.shared * 2:
        ap.error("--size too small for --shared datasets")
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="atlas-sync-oldomain-"))
    work.mkdir(parents=True, exist_ok=True)
    # the children get the domain, profile and settings from their flags alone
    env = {k: v for k, v in os.environ.items() if k not in ("ATLAS_SYNC_CONFIG", "ATLAS_SYNC_PROFILE")}
    env.pop("ATLAS_SYNC_DOMAIN", None)
    if args.atlas_url:
        env["ATLAS_URL"] = args.atlas_url
        run = args.run or f"r{int(time.time())}"
        big = f"{run}D{args.size}"
        if not args.built:
            print(f"  {big}: built in {build_domain(env, work, big, args.size):.1f} s", file=sys.stderr)
        rows = rounds(args, env, work, big, f"{run}E")
    else:
        rows = _emulated(args, work, env)
    print(_table(rows, args.size))
    out = (
        Path(args.out)
        if args.out
        else HERE / "results" / f"openlineage_domain-{args.size}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = {k: v for k, v in vars(args).items() if k != "out"} | {"cpus": os.cpu_count()}
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True)
    settings["commit"] = head.stdout.strip() or None  # what was measured
    out.write_text(json.dumps({"settings": settings, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(f"results: {out}")
    return 0


def _emulated(args: argparse.Namespace, work: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """Build on an emulator without latency, time on the same state with the latency model."""
    data, log = work / "emulator", work / "requests.jsonl"
    env = {**env, "ATLAS_USERNAME": "admin", "ATLAS_PASSWORD": "admin"}  # not in argv
    env.pop("ATLAS_PASSWORD_FILE", None)
    builder = _serve(data, log, 0, 0)
    try:
        env["ATLAS_URL"] = builder.url
        took = build_domain(env, work, f"D{args.size}", args.size)
        print(f"  D{args.size}: built in {took:.1f} s (no latency), in {work}", file=sys.stderr)
    finally:
        builder.stop()
    server = _serve(data, log, args.latency_ms, args.per_kib_ms)
    try:
        env["ATLAS_URL"] = server.url
        return rounds(args, env, work, f"D{args.size}", "D0", emulator=server, log=log)
    finally:
        server.stop()


def _table(rows: list[dict[str, Any]], size: int) -> str:
    """Medians per domain, then rate(big) / rate(empty) per round and their median."""

    def med(domain: int, field: str) -> float:
        return float(statistics.median(r[field] for r in rows if r["domain"] == domain))

    emulated = "emulator_cpu_ms" in rows[0]
    lines = [
        "| domain entities | events/s synced | p50 s | p95 s | accept p50 ms | requests/event | writes/event "
        "| KiB sent/event | KiB read/event | server CPU ms/event |"
        + (" emulator CPU ms/event |" if emulated else ""),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if emulated else ""),
    ]
    for d in (0, size):
        e = med(d, "events")
        lines.append(
            f"| {d:,} | {med(d, 'events_per_s'):.2f} | {med(d, 'p50_s'):.2f} | {med(d, 'p95_s'):.2f} | "
            f"{med(d, 'accept_p50_ms'):.1f} | {med(d, 'requests') / e:.1f} | {med(d, 'writes') / e:.2f} | "
            f"{med(d, 'bytes_sent') / e / 1024:.1f} | {med(d, 'bytes_received') / e / 1024:.1f} | "
            f"{med(d, 'server_cpu_ms'):.0f} |" + (f" {med(d, 'emulator_cpu_ms'):.0f} |" if emulated else "")
        )
    ratios = []
    for rnd in sorted({r["round"] for r in rows}):
        rate = {r["domain"]: r["events_per_s"] for r in rows if r["round"] == rnd}
        ratios.append(rate[size] / rate[0])
    verdict = "met" if statistics.median(ratios) >= 0.8 else "not met"
    lines.append(
        f"\nrate({size:,}) / rate(empty): {', '.join(f'{x:.2f}' for x in ratios)} by round, "
        f"median {statistics.median(ratios):.3f} (done-when >= 0.8: {verdict})"
    )
    found = [f"{r['found']}/{r['events']}" for r in rows]
    lines.append(
        f"processes found in Atlas per run: {', '.join(found)}; "
        f"reading the bulk job's dataset in the big domain: {[r['from_bulk'] for r in rows if r['domain']]}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
