"""The OpenLineage endpoint's HTTP server, old against new, in one run: events/s accepted, accept
latency, RSS, CPU, with and without hostile clients.

    .venv/bin/python bench/openlineage_endpoint.py                      # 8/32/64 producers, 5 s each
    .venv/bin/python bench/openlineage_endpoint.py --repeat 3 --seconds 4
    .venv/bin/python bench/openlineage_endpoint.py --idle 2000 --slow 20  # the abuse phase's size
    .venv/bin/python bench/openlineage_endpoint.py --journal memory     # the front door without fsync
    .venv/bin/python bench/openlineage_endpoint.py --journal-alone      # the journals alone (no HTTP)
    git worktree add /tmp/main-wt main                                  # before / after a change:
    .venv/bin/python bench/openlineage_endpoint.py --servers old,new,new@base --base-checkout /tmp/main-wt

Servers: ``old`` is the ``http.server.ThreadingHTTPServer`` front door the endpoint had before
(``bench/legacy_http_server.py``, thread per connection), ``new`` the product's ASGI app on uvicorn
(``atlas_sync.openlineage_server.serve``). Both run the same :class:`LineageEndpoint` core (journal,
worker, per-job sync), each in a process of its own (so RSS and CPU are the server's alone), with
the crash-safe SQLite journal by default (fsync'd before each 201) and a stub sync (``--sync
emulator``: the real sync core into an in-memory emulator in the server process).

Producers are openlineage-python's own ``HttpTransport`` (keep-alive session, gzip), N threads
shared out to ``--producer-procs`` processes (:mod:`tests.support.ol_load`; one process would
be limited by its own GIL before the server is), each emitting COMPLETE events of its own
jobs as fast as it is answered, for ``--seconds``. Per producer count, old and new are measured one
after the other (``--repeat`` rounds, medians); then 64 producers alone and beside ``--idle``
connections that never send a byte plus ``--slow`` clients sending a body one byte a second.
The new server runs with ``--idle-timeout`` longer than the run so that it, like the old one, holds
every idle connection for the whole phase (its default, 30 s, would close them: like with like).

Printed per run: events/s, p50/p95/p99 accept latency (ms, as the producer sees it), server CPU per
event, events per journal commit (the group commit), server RSS; then ratios new / old.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests

HERE = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------------------- the server process
def run_server(args: argparse.Namespace) -> None:
    from atlas_sync.openlineage_server import EndpointConfig, LineageEndpoint, ServerLimits, serve

    sync: Any
    if args.sync == "emulator":
        from atlas_sync.api import Publisher
        from atlas_sync.factory import embedded_client

        publisher = Publisher(embedded_client(None), profile="lineage", domain="bench")
        publisher.ensure_typedefs()

        def sync(graph: Any, job: str) -> Any:
            return publisher.sync(graph, job, ensure_typedefs=False, force=True)
    else:

        def sync(graph: Any, job: str) -> Any:
            return None

    config = EndpointConfig(
        queue_size=1_000_000,
        journal_path=Path(args.journal_path) if args.journal_path else None,
        dead_letter_path=Path(tempfile.mkdtemp(prefix="ol-bench-dead-")) / "dead.jsonl",
    )
    endpoint = LineageEndpoint(sync, config)
    if args.serve == "old":
        sys.path.insert(0, str(HERE))
        import legacy_http_server

        server: Any = legacy_http_server.serve(endpoint, port=0)
    else:
        limits = ServerLimits(idle_timeout=args.idle_timeout, max_connections=args.idle + 1000)
        server = serve(endpoint, port=0, limits=limits)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(server.url, flush=True)
    stop.wait()
    server.shutdown(timeout=5)


class Server:
    """A server process: ``url``, its CPU seconds, RSS, JSON metrics."""

    def __init__(self, kind: str, args: argparse.Namespace, tmp: Path) -> None:
        self.kind = kind
        serve = kind.removesuffix("@base")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", serve, "--sync", args.sync]
        cmd += ["--idle-timeout", str(args.idle_timeout), "--idle", str(args.idle)]
        if args.journal == "sqlite":
            cmd += ["--journal-path", str(tmp / f"journal-{kind.replace('@', '-')}.sqlite")]
        env = dict(os.environ)
        if kind.endswith("@base"):  # the same server from another checkout (e.g. main, before a change)
            if not args.base_checkout:
                raise SystemExit(f"{kind} needs --base-checkout DIR")
            env["PYTHONPATH"] = str(Path(args.base_checkout).resolve())
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            raise SystemExit(f"the {kind} server did not start")

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime

    def rss_mb(self) -> tuple[float, float]:
        """(current, peak) resident set size in MiB."""
        status = dict(
            line.split(":", 1)
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines()
            if ":" in line
        )
        return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024

    def metrics(self) -> dict[str, Any]:
        return dict(requests.get(self.url + "/api/v1/metrics", timeout=30).json())

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)


# ------------------------------------------------------------------------------- one measurement
def measure(
    server: Server, producers: int, args: argparse.Namespace, abuse: tuple[int, int] | None = None
) -> dict[str, Any]:
    sys.path.insert(0, str(HERE.parent))  # the repository's root: tests.support
    from tests.support.ol_load import IdleConnections, SlowBodies, produce

    m0, cpu0 = server.metrics(), server.cpu_seconds()
    held = None
    if abuse:
        idle_n, slow_n = abuse
        with IdleConnections(server.url, idle_n) as idle, SlowBodies(server.url, slow_n):
            time.sleep(1)  # let the server take them all before the producers start
            r = produce(server.url, producers, args.seconds, processes=args.producer_procs)
            held = idle.open_count()
            rss = server.rss_mb()
    else:
        r = produce(server.url, producers, args.seconds, processes=args.producer_procs)
        rss = server.rss_mb()
    m1, cpu1 = server.metrics(), server.cpu_seconds()
    accepted = m1["accepted"] - m0["accepted"]
    commits = m1["journal_commits"] - m0["journal_commits"]
    return {
        "events_per_s": r.per_second,
        "p50": r.p50_ms,
        "p95": r.p95_ms,
        "p99": r.p99_ms,
        "errors": r.errors,
        "cpu_ms": 1000 * (cpu1 - cpu0) / max(1, accepted),
        "per_commit": accepted / commits if commits else 0.0,
        "rss": rss[0],
        "peak_rss": rss[1],
        "idle_held": held,
        "accepted": accepted,
        "events": r.events,
    }


def show(kind: str, label: str, f: dict[str, Any]) -> None:
    held = f" idle held {f['idle_held']}" if f["idle_held"] is not None else ""
    print(
        f"  {kind:3s} {label:>22s}: {f['events_per_s']:7,.0f} events/s  p50 {f['p50']:6.1f}  p95 {f['p95']:6.1f}  "
        f"p99 {f['p99']:6.1f} ms  server CPU {f['cpu_ms']:.2f} ms/event  {f['per_commit']:4.1f} events/commit  "
        f"RSS {f['rss']:.0f} MiB (peak {f['peak_rss']:.0f}){held}  errors {f['errors']}",
        flush=True,
    )


def median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


# ------------------------------------------------------------------------------- journals alone
def journal_alone(threads_list: list[int], events: int) -> None:
    """Appends per second into each journal, without HTTP or validation: the cost of the fsync."""
    from atlas_sync.openlineage_server import MemoryJournal, SqliteJournal

    evs = [
        {"eventType": "COMPLETE", "eventTime": f"2026-12-01T00:00:{i % 60:02d}Z", "run": {"runId": f"00000000-0000-4000-8000-{i:012d}"},
         "job": {"namespace": "bench", "name": f"job{i % 100}"}, "producer": "bench"}
        for i in range(events)
    ]  # fmt: skip
    for threads in threads_list:
        rates = {}
        for mode in ("memory", "journal"):
            tmp = Path(tempfile.mkdtemp(prefix="ol-bench-j-"))
            j = (
                SqliteJournal(tmp / "j.sqlite", events + 1)
                if mode == "journal"
                else MemoryJournal(events + 1)
            )

            def append(t: int, j: Any = j, threads: int = threads) -> None:
                for ev in evs[t::threads]:
                    j.append([ev])

            start = time.perf_counter()
            ts = [threading.Thread(target=append, args=(t,)) for t in range(threads)]
            for th in ts:
                th.start()
            for th in ts:
                th.join()
            rates[mode] = events / (time.perf_counter() - start)
            per = f", {events / max(1, j.commits):.1f} events per commit" if j.commits else ""
            j.close()
            print(f"journal alone [{mode}] {threads} thread(s): {rates[mode]:,.0f} appends/s{per}")
        print(
            f"journal alone, {threads} thread(s): journal / memory {rates['journal'] / rates['memory']:.3f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--producers", default="8,32,64", help="comma-separated producer counts")
    ap.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    ap.add_argument("--producer-procs", type=int, default=4, help="processes the producers are shared out to")
    ap.add_argument("--repeat", type=int, default=1, help="rounds (medians are compared)")
    ap.add_argument("--idle", type=int, default=2000, help="idle connections in the abuse phase (0: skip it)")
    ap.add_argument("--slow", type=int, default=20, help="slow-body clients in the abuse phase")
    ap.add_argument(
        "--servers",
        default="old,new",
        help="old, new, and old@base / new@base: the same from --base-checkout (before and after a change)",
    )
    ap.add_argument("--base-checkout", help="another checkout of the project (e.g. a worktree of main)")
    ap.add_argument("--journal", choices=("sqlite", "memory"), default="sqlite")
    ap.add_argument("--sync", choices=("stub", "emulator"), default="stub")
    ap.add_argument("--idle-timeout", type=float, default=600.0, help="the new server's, in this bench")
    ap.add_argument("--journal-alone", action="store_true", help="only time the journals alone")
    ap.add_argument("--serve", choices=("old", "new"), help=argparse.SUPPRESS)
    ap.add_argument("--journal-path", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        run_server(args)
        return
    if args.journal_alone:
        journal_alone([1, 8, 32], 3000)
        return
    kinds = args.servers.split(",")
    counts = [int(n) for n in args.producers.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="ol-bench-"))
    servers = {k: Server(k, args, tmp) for k in kinds}
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        print(f"journal {args.journal}, sync {args.sync}, {args.seconds:g} s per run, {args.repeat} round(s)")
        for rnd in range(args.repeat):
            print(f"round {rnd + 1}")
            for n in counts:
                for k in kinds:
                    f = measure(servers[k], n, args)
                    show(k, f"{n} producers", f)
                    results.setdefault((k, f"{n} producers"), []).append(f)
            if args.idle or args.slow:
                n = max(counts)
                label = f"{n} + {args.idle} idle + {args.slow} slow"
                for k in kinds:
                    alone = measure(servers[k], n, args)
                    show(k, f"{n} producers alone", alone)
                    beside = measure(servers[k], n, args, (args.idle, args.slow))
                    show(k, label, beside)
                    results.setdefault((k, f"{n} alone"), []).append(alone)
                    results.setdefault((k, label), []).append(beside)
        print("medians" + (f" of {args.repeat} rounds" if args.repeat > 1 else ""))
        labels = list(dict.fromkeys(label for _, label in results))
        for label in labels:
            for k in kinds:
                runs = results[(k, label)]
                print(
                    f"  {k:3s} {label:>26s}: {median(runs, 'events_per_s'):7,.0f} events/s  p50 {median(runs, 'p50'):6.1f}  "
                    f"p95 {median(runs, 'p95'):6.1f}  p99 {median(runs, 'p99'):6.1f} ms  "
                    f"CPU {median(runs, 'cpu_ms'):.2f} ms/event  RSS {median(runs, 'rss'):.0f} MiB"
                )
            for a, b in (("new", "old"), ("new", "new@base"), ("old", "old@base")):
                if a in kinds and b in kinds:
                    o, w = results[(b, label)], results[(a, label)]
                    print(
                        f"  {a} / {b} {label:>20s}: events/s {median(w, 'events_per_s') / median(o, 'events_per_s'):.2f}x, "
                        f"p99 {median(w, 'p99') / median(o, 'p99'):.2f}x, RSS {median(w, 'rss') / median(o, 'rss'):.2f}x"
                    )
        if args.idle or args.slow:
            n = max(counts)
            label = f"{n} + {args.idle} idle + {args.slow} slow"
            for k in kinds:
                a, b = results[(k, f"{n} alone")], results[(k, label)]
                print(
                    f"  {k:3s} beside idle+slow / alone: p95 {median(b, 'p95') / median(a, 'p95'):.2f}x, "
                    f"p99 {median(b, 'p99') / median(a, 'p99'):.2f}x, events/s "
                    f"{median(b, 'events_per_s') / median(a, 'events_per_s'):.2f}x"
                )
    finally:
        for s in servers.values():
            s.stop()


if __name__ == "__main__":
    main()
