"""Two ``atlas-sync openlineage consume`` workers in one group on the real broker, one SIGKILLed mid-batch.

Events are produced by openlineage-python's own Kafka transport; Atlas is the emulator over HTTP. At the end
Atlas holds exactly every job's last completed run (one process per job, writing the last run's dataset),
and the group's committed offsets are at the end of every partition.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests
from openlineage.client.event_v2 import RunState

from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator.http import EmulatorServer

from .helpers import at_end, committed_vs_end, create_topic, ol_client, run_event, wait_for

DOMAIN = "kafkatest"
JOBS = [f"job{i:02d}" for i in range(12)]
RUNS = 4


def start_worker(tmp_path: Path, name: str, bootstrap: str, topic: str, atlas_url: str) -> tuple[Any, str]:
    props = tmp_path / "client.properties"
    # a killed worker's partitions move after the session timeout (the broker's minimum is 6 s)
    props.write_text("session.timeout.ms=6000\nheartbeat.interval.ms=1000\n")
    cmd = [
        sys.executable, "-m", "atlas_sync.cli.main", "openlineage", "consume",
        "-b", bootstrap, "-t", topic, "--group", topic, "--domain", DOMAIN,
        "--kafka-config", str(props), "--batch-size", "5", "--metrics-port", "0", "--force",
        "--stats-interval", "1", "--dead-letter", str(tmp_path / f"{name}-dead.jsonl"),
    ]  # fmt: skip
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "ATLAS_URL": atlas_url,
        "ATLAS_USERNAME": "admin",
        "ATLAS_PASSWORD": "admin",
        "ATLAS_SYNC_DATA_DIR": str(tmp_path / name),
    }
    log = open(tmp_path / f"{name}.log", "w+")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, env=env, text=True)
    assert wait_for(lambda: "metrics: http" in (tmp_path / f"{name}.log").read_text(), timeout=60), (
        tmp_path / f"{name}.log"
    ).read_text()
    m = re.search(r"metrics: (http://127\.0\.0\.1:\d+)/metrics", (tmp_path / f"{name}.log").read_text())
    assert m
    return proc, m.group(1)


def metrics(url: str) -> dict[str, Any]:
    return dict(requests.get(url + "/api/v1/metrics", timeout=5).json())


def test_two_workers_one_killed_mid_batch_atlas_holds_every_job_s_last_run_once(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path, emulator_server: EmulatorServer
) -> None:
    emulator_server.emulator.set_latency(fixed_ms=30)  # a sync takes a while: the kill lands mid-batch
    create_topic(kafka_bootstrap, topic_name, 4)
    client = ol_client(kafka_bootstrap, topic_name)
    a, a_url = start_worker(tmp_path, "a", kafka_bootstrap, topic_name, emulator_server.url)
    b, b_url = start_worker(tmp_path, "b", kafka_bootstrap, topic_name, emulator_server.url)
    try:
        # both workers share the partitions...
        assert wait_for(
            lambda: (
                metrics(a_url)["assigned_partitions"] + metrics(b_url)["assigned_partitions"] == 4
                and metrics(a_url)["assigned_partitions"] > 0
                and metrics(b_url)["assigned_partitions"] > 0
            )
        )
        for run in range(1, 3):
            for job in JOBS:
                client.emit(run_event(job, run, RunState.START))
                client.emit(run_event(job, run))
        # ...then A is killed while it holds a batch it has not committed
        killed_with: dict[str, Any] = {}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = metrics(a_url)
            if m["synced"] > 0 and m["consumed"] > m["committed"]:
                a.send_signal(signal.SIGKILL)
                killed_with = m
                break
            time.sleep(0.005)
        assert killed_with, "worker A never held an uncommitted batch"
        a.wait(10)
        for run in range(3, RUNS + 1):
            for job in JOBS:
                client.emit(run_event(job, run, RunState.START))
                client.emit(run_event(job, run))
        # B takes A's partitions over and catches up to the end of the topic
        assert wait_for(lambda: at_end(kafka_bootstrap, topic_name, topic_name), timeout=180), (
            committed_vs_end(kafka_bootstrap, topic_name, topic_name)
        )
        b_metrics = metrics(b_url)
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        b.wait(30)
    assert b.returncode == 0, (tmp_path / "b.log").read_text()
    assert "stopped: consumed" in (tmp_path / "b.log").read_text()
    assert b_metrics["dead_lettered"] == 0 and killed_with["dead_lettered"] == 0

    atlas = AtlasClient(emulator_server.url, auth=("admin", "admin"))
    procs = atlas.search_basic("lineage_process", attributes=["qualifiedName", "outputs"])
    names = [h["attributes"]["qualifiedName"] for h in procs]
    assert sorted(names) == sorted(f"spark-prod/{job}@{DOMAIN}" for job in JOBS)  # once each, none twice
    for hit in procs:
        entity = atlas.get_entity(hit["guid"])
        live = [
            o for o in entity["attributes"]["outputs"] if atlas.get_entity(o["guid"])["status"] == "ACTIVE"
        ]
        job = hit["attributes"]["qualifiedName"].split("/")[1].split("@")[0]
        assert [o["uniqueAttributes"]["qualifiedName"] for o in live] == [f"mart.{job}_v{RUNS}@{DOMAIN}"]
    # the earlier runs' datasets are gone, the shared input exists once
    datasets = {h["attributes"]["qualifiedName"] for h in atlas.search_basic("lineage_dataset")}
    assert datasets == {f"mart.src@{DOMAIN}"} | {f"mart.{job}_v{RUNS}@{DOMAIN}" for job in JOBS}
