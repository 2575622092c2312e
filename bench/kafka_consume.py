"""``atlas-sync openlineage consume`` on a real broker: throughput with 1 vs 2 workers, end-to-end latency.

    .venv/bin/python bench/kafka_consume.py                          # 2,000 events, 200 jobs, 4 partitions
    .venv/bin/python bench/kafka_consume.py --events 4000 --latency-ms 20
    KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:9092 .venv/bin/python bench/kafka_consume.py   # an existing broker

Setup, the same for every case: one Kafka broker (``tests.support.real_kafka``, or
``$KAFKA_BOOTSTRAP_SERVERS``), one Atlas emulator in its own process (``atlas-sync emulator serve --memory``,
``--latency-ms`` added to every answer to stand for a remote Atlas), workers as ``atlas-sync openlineage
consume`` processes. Events are COMPLETE run events of ``--jobs`` jobs (job i reads src, writes dst_i),
produced with openlineage-python's own ``KafkaTransport`` (key ``run:<namespace>/<job>``).

* **throughput**: the workers start and join the group first; then all events are produced to a fresh
  topic and the clock runs until the group's committed offsets reach the end of every partition.
  1 worker and 2 workers read the same number of events into the same emulator (a fresh domain each).
* **latency**: one worker idles on a fresh topic; events of fresh jobs are produced one at a time; each is
  timed from ``emit()`` to its process being readable through Atlas's REST API (polled every 10 ms).

Figures are printed and written to ``bench/results/kafka_consume.json``. Not a test: nothing asserts a speed.
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
import time
import uuid
from pathlib import Path
from typing import Any

import requests
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient

EXE = Path(sys.executable).with_name("atlas-sync")
RESULTS = Path(__file__).with_name("results")


def emulator(latency_ms: float, log: Path) -> tuple[subprocess.Popen[str], str]:
    cmd = [str(EXE), "emulator", "serve", "--memory", "--port", "0", "--latency-ms", str(latency_ms)]
    fh = open(log, "w")  # noqa: SIM115 - lives as long as the process
    proc = subprocess.Popen(cmd, stderr=fh, stdout=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = re.search(r"listening on (http://\S+)", log.read_text())
        if m:
            return proc, m.group(1)
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the emulator did not start: " + log.read_text())


def worker(tmp: Path, name: str, bootstrap: str, topic: str, atlas: str, domain: str) -> tuple[Any, str]:
    log = tmp / f"{name}.log"
    cmd = [
        str(EXE), "openlineage", "consume", "-b", bootstrap, "-t", topic, "--group", topic,
        "--domain", domain, "--metrics-port", "0", "--batch-size", "200", "--stats-interval", "5",
        "--dead-letter", str(tmp / f"{name}-dead.jsonl"),
    ]  # fmt: skip
    env = dict(os.environ, ATLAS_URL=atlas, ATLAS_USERNAME="admin", ATLAS_PASSWORD="admin")
    env["ATLAS_SYNC_DATA_DIR"] = str(tmp / name)
    fh = open(log, "w")  # noqa: SIM115 - lives as long as the process
    proc = subprocess.Popen(cmd, stderr=fh, stdout=subprocess.DEVNULL, env=env, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = re.search(r"metrics: (http://\S+)/metrics", log.read_text())
        if m:
            return proc, m.group(1)
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"worker {name} did not start: " + log.read_text())


def metrics(url: str) -> dict[str, Any]:
    return dict(requests.get(url + "/api/v1/metrics", timeout=5).json())


def event(job: str, n: int) -> RunEvent:
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=f"2026-11-30T10:{n // 60 % 60:02d}:{n % 60:02d}Z",
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="bench", name=job),
        inputs=[InputDataset(namespace="hive://warehouse", name="raw.src")],
        outputs=[OutputDataset(namespace="hive://warehouse", name=f"mart.{job}")],
        producer="https://github.com/OpenLineage/OpenLineage/tree/1.0.0/client/python",
    )


def new_topic(bootstrap: str, partitions: int) -> str:
    topic = f"bench-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)]).values():
        f.result(30)
    return topic


def at_end(bootstrap: str, topic: str) -> bool:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, "enable.auto.commit": False})
    try:
        parts = sorted(c.list_topics(topic, timeout=30).topics[topic].partitions)
        committed = c.committed([TopicPartition(topic, p) for p in parts], timeout=30)
        return all(tp.offset == c.get_watermark_offsets(tp, timeout=30)[1] for tp in committed)
    finally:
        c.close()


def stop(procs: list[Any]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()


def throughput(
    args: argparse.Namespace, tmp: Path, bootstrap: str, atlas: str, workers: int
) -> dict[str, Any]:
    topic = new_topic(bootstrap, args.partitions)
    domain = f"b{workers}w{uuid.uuid4().hex[:6]}"
    started = [worker(tmp, f"{topic}-{i}", bootstrap, topic, atlas, domain) for i in range(workers)]
    procs = [p for p, _ in started]
    try:
        deadline = time.monotonic() + 60
        while sum(metrics(u)["assigned_partitions"] for _, u in started) < args.partitions:
            if time.monotonic() > deadline:
                raise RuntimeError("the workers did not get every partition")
            time.sleep(0.2)
        client = OpenLineageClient(
            transport=KafkaTransport(
                KafkaConfig(config={"bootstrap.servers": bootstrap}, topic=topic, flush=False)
            )
        )
        t0 = time.monotonic()
        for n in range(args.events):
            client.emit(event(f"job{n % args.jobs}", n))
        client.transport.producer.flush(60)  # type: ignore[attr-defined]
        produced = time.monotonic() - t0
        while not at_end(bootstrap, topic):
            time.sleep(0.1)
        elapsed = time.monotonic() - t0
        final = [metrics(u) for _, u in started]
    finally:
        stop(procs)
    atlas_client = AtlasClient(atlas, auth=("admin", "admin"))
    procs_in_atlas = sum(
        1
        for h in atlas_client.search_basic("lineage_process", attributes=["qualifiedName"])
        if h["attributes"]["qualifiedName"].endswith("@" + domain)
    )
    return {
        "workers": workers,
        "events": args.events,
        "jobs": args.jobs,
        "seconds": round(elapsed, 2),
        "produce_seconds": round(produced, 2),
        "events_per_second": round(args.events / elapsed, 1),
        "job_syncs": sum(m["job_syncs"] for m in final),
        "job_syncs_per_second": round(sum(m["job_syncs"] for m in final) / elapsed, 1),
        "committed_per_worker": [m["committed"] for m in final],
        "processes_in_atlas": procs_in_atlas,
    }


def latency(args: argparse.Namespace, tmp: Path, bootstrap: str, atlas: str) -> dict[str, Any]:
    topic = new_topic(bootstrap, args.partitions)
    domain = f"lat{uuid.uuid4().hex[:6]}"
    proc, url = worker(tmp, f"{topic}-lat", bootstrap, topic, atlas, domain)
    atlas_client = AtlasClient(atlas, auth=("admin", "admin"))
    client = OpenLineageClient(
        transport=KafkaTransport(
            KafkaConfig(config={"bootstrap.servers": bootstrap}, topic=topic, flush=True)
        )
    )
    samples: list[float] = []
    try:
        deadline = time.monotonic() + 60
        while metrics(url)["assigned_partitions"] < args.partitions:
            if time.monotonic() > deadline:
                raise RuntimeError("the worker did not get its partitions")
            time.sleep(0.2)
        client.emit(event("warmup", 0))  # the first sync registers the profile's typedefs
        while atlas_client.get_entity_by_unique("lineage_process", f"bench/warmup@{domain}") is None:
            time.sleep(0.05)
        for n in range(args.latency_samples):
            job = f"lat{n}"
            t0 = time.monotonic()
            client.emit(event(job, n))
            while atlas_client.get_entity_by_unique("lineage_process", f"bench/{job}@{domain}") is None:
                if time.monotonic() - t0 > 60:
                    raise RuntimeError(f"event {n} not visible after 60 s")
                time.sleep(0.01)
            samples.append(time.monotonic() - t0)
            time.sleep(0.1)
    finally:
        stop([proc])
    samples.sort()
    return {
        "samples": len(samples),
        "median_ms": round(statistics.median(samples) * 1000, 1),
        "p95_ms": round(samples[max(0, int(len(samples) * 0.95) - 1)] * 1000, 1),
        "max_ms": round(samples[-1] * 1000, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--latency-ms", type=float, default=20.0, help="emulator delay per answer")
    ap.add_argument("--latency-samples", type=int, default=40)
    ap.add_argument(
        "--repeat", type=int, default=1, help="runs per worker count (alternating 1, 2, 2, 1, ...)"
    )
    args = ap.parse_args()
    broker = None
    bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    with tempfile.TemporaryDirectory(prefix="kafka-bench-") as d:
        tmp = Path(d)
        if not bootstrap:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's root
            from tests.support.real_kafka import Broker, default_layout

            broker = Broker(default_layout(home=tmp / "kafka"))
            bootstrap = str(broker.start()["bootstrap"])
        emu, atlas = emulator(args.latency_ms, tmp / "emulator.log")
        try:
            # the profile's typedefs first: the first case must not pay for registering them
            Publisher(AtlasClient(atlas, auth=("admin", "admin")), domain="warmup").ensure_typedefs()
            results: dict[str, Any] = {"latency_ms_per_atlas_answer": args.latency_ms}
            order = [1, 2, 2, 1] * args.repeat  # alternate: a drift of the machine's load hits both
            runs = [throughput(args, tmp, bootstrap, atlas, n) for n in order[: 2 * args.repeat]]
            results["throughput"] = runs
            med = {
                n: {
                    k: statistics.median(r[k] for r in runs if r["workers"] == n)
                    for k in ("events_per_second", "job_syncs_per_second", "seconds")
                }
                for n in (1, 2)
            }
            results["median"] = med
            results["speedup_2_vs_1"] = round(med[2]["events_per_second"] / med[1]["events_per_second"], 2)
            results["end_to_end"] = latency(args, tmp, bootstrap, atlas)
        finally:
            stop([emu])
            if broker is not None:
                broker.stop()
    for row in results["throughput"]:
        print(
            f"{row['workers']} worker(s): {row['events']} events ({row['jobs']} jobs) in {row['seconds']} s = "
            f"{row['events_per_second']} events/s, {row['job_syncs']} job syncs ({row['job_syncs_per_second']}/s); "
            f"committed per worker {row['committed_per_worker']}; {row['processes_in_atlas']} processes in Atlas"
        )
    for n, m in results["median"].items():
        print(
            f"median, {n} worker(s): {m['events_per_second']} events/s, {m['job_syncs_per_second']} job syncs/s"
        )
    print(f"2 workers vs 1 (median events/s): x{results['speedup_2_vs_1']}")
    e = results["end_to_end"]
    print(
        f"produce -> visible in Atlas: median {e['median_ms']} ms, p95 {e['p95_ms']} ms ({e['samples']} events)"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "kafka_consume.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
