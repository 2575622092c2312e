"""Real clients for load and abuse runs of the OpenLineage endpoint (tests and ``bench/``).

* producers: ``python -m tests.support.ol_load URL --producers N --seconds S`` runs N threads,
  each an ``OpenLineageClient`` with openlineage-python's own ``HttpTransport`` (one keep-alive
  session per producer, gzip unless ``--no-gzip``), emitting COMPLETE events of its own jobs for S
  seconds; it prints one JSON line: the accept latency of every event (ms), errors, seconds.
  :func:`produce` runs them in separate processes (so the clients share neither the server's GIL
  nor one GIL among themselves) and sums up: events/s, p50/p95/p99/max.
* :class:`IdleConnections`: N connections that connect and never send anything.
* :class:`SlowBodies`: N clients that announce a body and send it one byte every ``interval`` seconds,
  connecting again whenever the server closes on them.

Needs ``openlineage-python`` (the ``test`` extra) for the producers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


@dataclass
class LoadResult:
    events: int
    errors: int
    seconds: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float

    @property
    def per_second(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def _summary(values: list[float], errors: int, seconds: float) -> LoadResult:
    values = sorted(values)
    return LoadResult(
        events=len(values),
        errors=errors,
        seconds=seconds,
        p50_ms=statistics.median(values) if values else 0.0,
        p95_ms=_percentile(values, 0.95),
        p99_ms=_percentile(values, 0.99),
        max_ms=values[-1] if values else 0.0,
    )


def _run_producers(
    url: str,
    producers: int,
    seconds: float,
    api_key: str | None,
    gzip: bool,
    ca: str | None,
    start_at: float,
    tag: str,
) -> tuple[list[float], int, float]:
    """Latencies (ms), errors and the elapsed seconds of ``producers`` threads from ``start_at``."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
    from openlineage.client.transport.http import HttpCompression, HttpConfig, HttpTransport

    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    latencies: list[list[float]] = [[] for _ in range(producers)]
    errors = [0] * producers
    deadline = start_at + seconds

    def run(p: int) -> None:
        params: dict[str, Any] = {"url": url, "timeout": 30.0}
        if api_key:
            params["auth"] = {"type": "api_key", "apiKey": api_key}
        if ca:
            params["verify"] = ca
        config = HttpConfig.from_dict(params)
        if gzip:
            config.compression = HttpCompression.GZIP
        client = OpenLineageClient(transport=HttpTransport(config))
        mine = latencies[p]
        n = 0
        time.sleep(max(0.0, start_at - time.time()))
        while time.time() < deadline:
            event = RunEvent(
                eventType=RunState.COMPLETE,
                eventTime=(t0 + timedelta(seconds=n)).isoformat(),
                run=Run(runId=str(uuid.uuid4())),
                job=Job(namespace="load", name=f"{tag}p{p}_job{n % 10}"),
                producer="https://example.invalid/atlas-sync-load",
                inputs=[InputDataset(namespace="postgres://pg:5432", name=f"crm.public.src{p}")],
                outputs=[OutputDataset(namespace="hive://hms:9083", name=f"mart.dst{p}_{n % 10}")],
            )
            start = time.perf_counter()
            try:
                client.emit(event)
            except Exception:  # noqa: BLE001 - counted; a load run reports, it does not stop
                errors[p] += 1
            else:
                mine.append((time.perf_counter() - start) * 1000)
            n += 1

    threads = [threading.Thread(target=run, args=(p,), daemon=True) for p in range(producers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(max(0.0, deadline - time.time()) + 60)
    elapsed = max(time.time(), deadline) - start_at
    return [v for per in latencies for v in per], sum(errors), elapsed


def produce(
    url: str,
    producers: int,
    seconds: float,
    *,
    processes: int = 1,
    api_key: str | None = None,
    gzip: bool = True,
    ca: str | None = None,
) -> LoadResult:
    """Run the producers in ``processes`` processes of their own (threads shared out), all starting
    at one moment; their figures together."""
    env = dict(os.environ)
    # ``-m tests.support.ol_load`` resolves from the repository's root, wherever the caller runs
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    if api_key:
        env["OL_LOAD_API_KEY"] = api_key  # not in argv
    procs = []
    for i in range(processes):
        share = producers // processes + (1 if i < producers % processes else 0)
        if not share:
            continue
        cmd = [sys.executable, "-m", "tests.support.ol_load", url, "--producers", str(share)]
        cmd += ["--seconds", str(seconds), "--start-at", "-", "--tag", f"{uuid.uuid4().hex[:6]}_{i}_"]
        cmd += ([] if gzip else ["--no-gzip"]) + (["--ca", ca] if ca else [])
        procs.append(
            subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
        )
    for proc in procs:  # each says "ready" once openlineage-python is imported
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the producers did not start: {proc.communicate(timeout=30)[1][-2000:]}")
    start_at = time.time() + 0.2
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(f"{start_at!r}\n")
        proc.stdin.close()
    values: list[float] = []
    errors, elapsed = 0, 0.0
    for proc in procs:
        assert proc.stdout is not None and proc.stderr is not None
        out = proc.stdout.read()
        err = proc.stderr.read()
        proc.wait(seconds + 120)
        if proc.returncode != 0:
            raise RuntimeError(f"the producers failed: {err[-2000:]}")
        part = json.loads(out.strip().splitlines()[-1])
        values += part["latencies_ms"]
        errors += part["errors"]
        elapsed = max(elapsed, part["seconds"])
    return _summary(values, errors, elapsed)


def _connect(url: str, ca: str | None) -> socket.socket:
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=10)
    if parts.scheme == "https":
        ctx = ssl.create_default_context(cafile=ca)
        sock = ctx.wrap_socket(sock, server_hostname=parts.hostname)
    return sock


class IdleConnections:
    """``n`` connections that never send a byte (``with`` closes them); :meth:`open_count` tells how
    many the server still holds."""

    def __init__(self, url: str, n: int, ca: str | None = None) -> None:
        self.socks = [_connect(url, ca) for _ in range(n)]

    def open_count(self) -> int:
        alive = 0
        for s in self.socks:
            try:
                s.setblocking(False)
                alive += 1 if s.recv(1, socket.MSG_PEEK) else 0  # b"": closed by the server
            except BlockingIOError:
                alive += 1  # nothing to read: still open
            except OSError:
                pass
        return alive

    def close(self) -> None:
        for s in self.socks:
            s.close()

    def __enter__(self) -> IdleConnections:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SlowBodies:
    """``n`` clients posting a body one byte every ``interval`` seconds (one thread for all)."""

    def __init__(self, url: str, n: int, *, interval: float = 1.0, size: int = 4096, ca: str | None = None):
        self.url, self.n, self.interval, self.size, self.ca = url, n, interval, size, ca
        self.sent = 0
        self.reconnects = 0
        self._stop = threading.Event()
        self._socks: list[socket.socket] = []
        self._thread = threading.Thread(target=self._run, name="slow-bodies", daemon=True)

    def _open(self) -> socket.socket:
        parts = urlsplit(self.url)
        s = _connect(self.url, self.ca)
        head = (
            f"POST /api/v1/lineage HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {self.size}\r\n\r\n"
        )
        s.sendall(head.encode())
        return s

    def _run(self) -> None:
        socks = self._socks
        while not self._stop.wait(self.interval):
            for i, s in enumerate(socks):
                try:
                    s.send(b" ")
                    self.sent += 1
                except OSError:
                    s.close()
                    self.reconnects += 1
                    with contextlib.suppress(OSError):
                        socks[i] = self._open()
        for s in socks:
            s.close()

    def __enter__(self) -> SlowBodies:
        self._socks = [self._open() for _ in range(self.n)]
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def main() -> None:
    ap = argparse.ArgumentParser(description="OpenLineage producers (openlineage-python HttpTransport)")
    ap.add_argument("url")
    ap.add_argument("--producers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--start-at", help="epoch second to start at; '-': say ready, read it from stdin")
    ap.add_argument("--tag", default="", help="prefix of the job names (distinct jobs per process)")
    ap.add_argument("--no-gzip", action="store_true")
    ap.add_argument("--ca", help="CA bundle of an https URL")
    args = ap.parse_args()
    import openlineage.client.transport.http  # noqa: F401 - imported before "ready"

    if args.start_at == "-":
        print("ready", flush=True)
        start_at = float(sys.stdin.readline())
    else:
        start_at = float(args.start_at) if args.start_at else time.time()
    values, errors, elapsed = _run_producers(
        args.url,
        args.producers,
        args.seconds,
        os.environ.get("OL_LOAD_API_KEY"),
        not args.no_gzip,
        args.ca,
        start_at,
        args.tag,
    )
    print(json.dumps({"latencies_ms": [round(v, 3) for v in values], "errors": errors, "seconds": elapsed}))


if __name__ == "__main__":
    main()
