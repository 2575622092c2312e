"""``atlas-sync openlineage serve`` SIGKILLed again and again while producers post: accepted means kept.

Real processes over real HTTP: an ``atlas-sync emulator serve`` with latency (so syncs take time
and accepted events wait in the journal), an ``atlas-sync openlineage serve`` SIGKILLed at random
moments at least 20 times and restarted on the same port and journal, and producer threads posting
events in a loop the way an HTTP transport does (a fresh connection per event).

What a producer learns decides what it does and what must hold at the end:

* 201: the event was accepted; its job must end in Atlas, once, with its latest run's lineage;
* connection refused, 503 or 400: the event was not accepted; "probe" events are then given up, and
  nothing of them may be in Atlas (ordinary events are re-sent until accepted);
* the connection broke after the request was sent (reset, no answer): unknown - it may have been
  journaled; the producer re-sends it until it gets an answer, and a re-sent event must be harmless.

Some producers also re-send an older run of a job after a newer one was accepted (a late retry):
the job must keep the newer run's lineage.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.atlas import AtlasClient

pytestmark = pytest.mark.slow

EXE = str(Path(sys.executable).with_name("atlas-sync"))
DOMAIN = "crash"
KILLS = 22
THREADS = 4


def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "ATLAS_PASSWORD": "admin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data")}
    env.pop("ATLAS_URL", None)
    return env


@pytest.fixture()
def emulator_url(tmp_path: Path) -> Iterator[str]:
    # 2 ms per request and 0.2 ms per entity: a job's sync takes tens of milliseconds
    proc = subprocess.Popen(
        [EXE, "emulator", "serve", "--memory", "--port", "0", "--latency-ms", "2"]
        + ["--latency-per-entity-ms", "0.2"],
        env=_env(tmp_path),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = None
        for _ in range(5):
            m = re.search(r"listening on (http://\S+)", proc.stderr.readline())
            if m:
                url = m.group(1)
                break
        assert url, "the emulator did not start"
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def event(job: str, run: int, *, column_type: str = "int") -> dict[str, Any]:
    """A COMPLETE event of ``job``'s run ``run``: reads src_<job>, writes dst_<job>.id typed ``column_type``."""
    src, dst = f"crm.public.src_{job}", f"mart.dst_{job}"
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-12-01T10:{run // 60:02d}:{run % 60:02d}.000Z",
        "producer": "https://example.invalid/crash-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": f"{zlib.crc32(job.encode()):08x}-0000-4000-8000-{run:012d}"},
        "job": {"namespace": DOMAIN, "name": job},
        "inputs": [{"namespace": "postgres://pg:5432", "name": src}],
        "outputs": [
            {
                "namespace": "hive://hms:9083",
                "name": dst,
                "facets": {
                    "schema": {"fields": [{"name": "id", "type": column_type}]},
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


def post(port: int, body: bytes) -> str:
    """One delivery attempt: "201", "400", "503", "refused" (never sent) or "unknown" (sent, no answer)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        try:
            conn.connect()
        except OSError:
            return "refused"
        try:
            conn.request("POST", "/api/v1/lineage", body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
        except (OSError, http.client.HTTPException):
            return "unknown"
        if r.status not in (201, 400, 503):
            raise AssertionError(f"unexpected answer {r.status}")
        return str(r.status)
    finally:
        conn.close()


@dataclass
class Ledger:
    """What the producers were told."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    last_run: dict[str, int] = field(default_factory=dict)  # accepted job -> its newest accepted run
    given_up: set[str] = field(default_factory=set)  # probe jobs never accepted
    invalid: set[str] = field(default_factory=set)  # jobs of events answered 400
    outcomes: Counter[str] = field(default_factory=Counter)
    resent_older: int = 0


def producer(t: int, port: int, stop: threading.Event, ledger: Ledger) -> None:
    rng = random.Random(1000 + t)
    multi = [f"t{t}_multi{k}" for k in range(4)]
    runs = dict.fromkeys(multi, 0)
    n = 0

    def deliver(body: bytes, *, give_up: bool) -> bool:
        """Send until accepted; a probe (``give_up``) stops at a definite refusal."""
        unknown = False
        while True:
            outcome = post(port, body)
            with ledger.lock:
                ledger.outcomes[outcome] += 1
            if outcome == "201":
                return True
            if outcome == "400":
                raise AssertionError("a valid event was answered 400")
            unknown = unknown or outcome == "unknown"
            if give_up and not unknown:
                return False  # refused or 503: certainly not accepted
            time.sleep(0.2 if outcome == "503" else 0.1)  # 503: Retry-After, shortened

    while not stop.is_set():
        n += 1
        roll = rng.random()
        if roll < 0.25:  # a new run of a long-lived job: the column type changes run to run
            job = rng.choice(multi)
            runs[job] += 1
            run = runs[job]
            deliver(json.dumps(event(job, run, column_type=f"v{run}")).encode(), give_up=False)
            with ledger.lock:
                ledger.last_run[job] = run
            if run > 1 and rng.random() < 0.3:  # a late retry of the previous run: must not win
                deliver(json.dumps(event(job, run - 1, column_type=f"v{run - 1}")).encode(), give_up=False)
                with ledger.lock:
                    ledger.resent_older += 1
        elif roll < 0.45:  # a probe: given up when refused
            job = f"t{t}_probe{n}"
            if deliver(json.dumps(event(job, 0)).encode(), give_up=True):
                with ledger.lock:
                    ledger.last_run[job] = 0
            else:
                with ledger.lock:
                    ledger.given_up.add(job)
        elif roll < 0.48:  # an invalid event (no job name): 400, never published
            job = f"t{t}_invalid{n}"
            bad = event(job, 0)
            del bad["job"]["name"]
            bad["outputs"][0]["name"] = f"mart.dst_{job}"
            while (outcome := post(port, json.dumps(bad).encode())) != "400":
                assert outcome in ("refused", "unknown", "503"), outcome
                time.sleep(0.1)
            with ledger.lock:
                ledger.invalid.add(job)
        else:  # a one-off job
            job = f"t{t}_once{n}"
            deliver(json.dumps(event(job, 0)).encode(), give_up=False)
            with ledger.lock:
                ledger.last_run[job] = 0
        time.sleep(rng.uniform(0, 0.02))


class Endpoint:
    """The endpoint process, started again on the same port and journal after each kill."""

    def __init__(self, tmp_path: Path, emulator_url: str, port: int) -> None:
        self.tmp_path, self.port = tmp_path, port
        self.cmd = [EXE, "openlineage", "serve", "--port", str(port), "--url", emulator_url]
        self.cmd += ["--domain", DOMAIN, "--journal", str(tmp_path / "journal.sqlite")]
        self.cmd += ["--queue-size", "10", "--dead-letter", str(tmp_path / "dead.jsonl")]
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = open(self.tmp_path / f"endpoint-{self.starts}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(self.cmd, env=_env(self.tmp_path), stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 60
        while True:  # ready once /health answers
            assert self.proc.poll() is None, (self.tmp_path / f"endpoint-{self.starts}.log").read_text()
            try:
                self.metrics()
                return
            except OSError:
                assert time.monotonic() < deadline, "the endpoint did not start"
                time.sleep(0.05)

    def metrics(self) -> dict[str, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", "/api/v1/metrics")
            return dict(json.loads(conn.getresponse().read()))
        except http.client.HTTPException as exc:
            raise OSError(str(exc)) from None
        finally:
            conn.close()

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


def test_every_accepted_event_survives_repeated_sigkills_exactly_once(tmp_path, emulator_url) -> None:
    port = _free_port()
    ep = Endpoint(tmp_path, emulator_url, port)
    ep.start()
    ledger = Ledger()
    stop = threading.Event()
    errors: list[BaseException] = []

    def run(t: int) -> None:
        try:
            producer(t, port, stop, ledger)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,), daemon=True) for t in range(THREADS)]
    for th in threads:
        th.start()
    rng = random.Random(5)
    depth_at_kill: list[int] = []
    replayed: list[int] = []
    try:
        for _ in range(KILLS):
            time.sleep(rng.uniform(0.4, 1.6))
            try:
                depth_at_kill.append(int(ep.metrics()["journal_depth"]))
            except OSError:
                depth_at_kill.append(-1)
            ep.kill()
            time.sleep(rng.uniform(0, 0.3))  # producers meet a closed port meanwhile
            ep.start()
            replayed.append(int(ep.metrics()["replayed"]))
            assert not errors, errors
        time.sleep(1)
    finally:
        stop.set()
        for th in threads:
            th.join(60)
    assert not errors, errors
    # every accepted event is synced: the journal empties
    deadline = time.monotonic() + 90
    while (m := ep.metrics())["journal_depth"]:
        assert time.monotonic() < deadline, m
        time.sleep(0.1)
    assert ep.terminate() == 0

    print(  # shown with -s: how much this run exercised
        f"kills {len(depth_at_kill)}, journal depth at kill {depth_at_kill}, replayed {replayed}, "
        f"outcomes {dict(ledger.outcomes)}, jobs accepted {len(ledger.last_run)}, given up "
        f"{len(ledger.given_up)}, invalid {len(ledger.invalid)}, older runs re-sent {ledger.resent_older}"
    )
    atlas = AtlasClient(emulator_url, auth=("admin", "admin"))
    procs = list(atlas.search_basic("lineage_process", attributes=["qualifiedName", "atlasSyncJob"]))
    per_job = Counter(p["attributes"]["atlasSyncJob"] for p in procs)
    assert not [j for j, n in per_job.items() if n > 1], "duplicate processes"
    accepted = {f"{DOMAIN}/{j}" for j in ledger.last_run}
    missing = accepted - set(per_job)
    assert not missing, f"{len(missing)} accepted jobs not in Atlas: {sorted(missing)[:5]}"
    not_accepted = {f"{DOMAIN}/{j}" for j in ledger.given_up | ledger.invalid}
    assert set(per_job) == accepted, sorted(set(per_job) & not_accepted)[:5]
    datasets = {
        h["attributes"]["qualifiedName"]
        for h in atlas.search_basic("lineage_dataset", attributes=["qualifiedName"])
    }
    leaked = [qn for qn in datasets if any(f"_{j}@" in qn for j in ledger.given_up | ledger.invalid)]
    assert not leaked, leaked[:5]
    # each job holds its newest accepted run: a late older run never wins
    columns = {
        h["attributes"]["qualifiedName"]: h["attributes"].get("dataType")
        for h in atlas.search_basic("lineage_column", attributes=["qualifiedName", "dataType"])
    }
    for job, run in ledger.last_run.items():
        if "_multi" in job:
            assert columns[f"mart.dst_{job}.id@{DOMAIN}"] == f"v{run}", job

    # the test did what it claims: kills with events waiting, restarts replaying them, every outcome seen
    assert len(depth_at_kill) >= 20
    assert sum(1 for d in depth_at_kill if d > 0) >= 5, depth_at_kill
    assert sum(1 for r in replayed if r > 0) >= 5, replayed
    assert ledger.outcomes["201"] >= 50 and ledger.outcomes["refused"] > 0, ledger.outcomes
    assert ledger.given_up and ledger.invalid and ledger.resent_older, ledger
    assert not (tmp_path / "dead.jsonl").exists(), (tmp_path / "dead.jsonl").read_text()
