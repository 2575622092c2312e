"""One consumer worker on the real broker: poison messages, Atlas failures, offsets committed after syncs."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from atlas_sync.atlas import AtlasError
from atlas_sync.errors import AtlasSyncError
from atlas_sync.openlineage_server.consumer import ConsumerConfig, KafkaLineageConsumer

from .helpers import at_end, committed_vs_end, create_topic, ol_client, run_event, wait_for


class Recorder:
    """A sync that records (job, run ids) and fails the first ``fail_times`` calls with ``exc``."""

    def __init__(self, fail_times: int = 0, exc: Exception | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.fail_times = fail_times
        self.exc = exc or AtlasError("503 from Atlas")
        self.lock = threading.Lock()

    def __call__(self, graph: Any, job: str) -> None:
        with self.lock:
            if self.fail_times:
                self.fail_times -= 1
                raise self.exc
            self.calls.append((job, graph))


@pytest.fixture
def worker(kafka_bootstrap: str, topic_name: str, tmp_path: Path):
    started: list[tuple[KafkaLineageConsumer, threading.Thread]] = []

    def start(sync: Any, **kw: Any) -> KafkaLineageConsumer:
        kw.setdefault("dead_letter_path", tmp_path / "dead.jsonl")
        kw.setdefault("retry_base", 0.05)
        kw.setdefault("poll_timeout", 0.2)
        config = ConsumerConfig(kafka_bootstrap, (topic_name,), group_id=topic_name, **kw)
        w = KafkaLineageConsumer(sync, config)
        t = threading.Thread(target=w.run, daemon=True)
        t.start()
        started.append((w, t))
        return w

    yield start
    for w, t in started:
        w.stop()
        t.join(30)


def test_poison_messages_go_to_the_dead_letter_with_the_reason_and_offsets_move_past_them(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path, worker: Any
) -> None:
    create_topic(kafka_bootstrap, topic_name, 1)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic_name, key=b"run:x/y", value=b"{not json")
    producer.produce(topic_name, key=b"run:x/y", value=json.dumps({"eventType": "COMPLETE"}).encode())
    producer.produce(topic_name, value=b"\xff\xfe")
    assert producer.flush(30) == 0
    ol_client(kafka_bootstrap, topic_name).emit(run_event("good", 1))
    rec = Recorder()
    w = worker(rec)
    assert wait_for(lambda: w.metrics()["committed"] == 4)
    assert at_end(kafka_bootstrap, topic_name, topic_name)
    assert [job for job, _ in rec.calls] == ["spark-prod/good"]
    dead = [json.loads(line) for line in (tmp_path / "dead.jsonl").read_text().splitlines()]
    assert [(d["offset"], d["reason"].split(":")[0]) for d in dead] == [
        (0, "invalid JSON"),
        (1, "not an OpenLineage event"),
        (2, "value is not UTF-8"),
    ]
    assert dead[0]["value"] == "{not json" and dead[0]["key"] == "run:x/y" and dead[0]["topic"] == topic_name
    assert dead[2]["value_base64"] == "//4="
    assert w.metrics()["poison"] == 3


def test_while_atlas_fails_nothing_is_committed_and_the_batch_is_read_again(
    kafka_bootstrap: str, topic_name: str, worker: Any
) -> None:
    create_topic(kafka_bootstrap, topic_name, 1)
    client = ol_client(kafka_bootstrap, topic_name)
    for job in ("a", "b"):
        client.emit(run_event(job, 1))
    gate = threading.Event()
    rec = Recorder(fail_times=2)

    def sync(graph: Any, job: str) -> None:
        gate.wait(30)
        rec(graph, job)

    w = worker(sync)
    assert wait_for(lambda: w.metrics()["consumed"] >= 2)
    # a sync in progress: nothing committed yet
    assert [c for _p, c, _end in committed_vs_end(kafka_bootstrap, topic_name, topic_name)] == [-1001]
    gate.set()
    assert wait_for(lambda: w.metrics()["committed"] == 2)
    m = w.metrics()
    assert m["failed"] == 2 and m["rewinds"] == 2
    assert m["consumed"] == 6  # the batch of 2 read three times
    assert sorted(job for job, _ in rec.calls) == ["spark-prod/a", "spark-prod/b"]
    assert at_end(kafka_bootstrap, topic_name, topic_name)


def test_a_refusal_of_the_sync_core_is_dead_lettered_and_committed(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path, worker: Any
) -> None:
    create_topic(kafka_bootstrap, topic_name, 1)
    ol_client(kafka_bootstrap, topic_name).emit(run_event("big_delete", 1))
    rec = Recorder(fail_times=1, exc=AtlasSyncError("would delete 80% of the job's entities"))
    w = worker(rec)
    assert wait_for(lambda: w.metrics()["committed"] == 1)
    assert rec.calls == [] and w.metrics()["rewinds"] == 0
    [dead] = [json.loads(line) for line in (tmp_path / "dead.jsonl").read_text().splitlines()]
    assert dead["reason"] == "refused: would delete 80% of the job's entities"
    assert json.loads(dead["value"])["job"]["name"] == "big_delete"


def test_a_job_s_runs_in_one_batch_sync_only_the_latest_and_other_event_types_are_skipped(
    kafka_bootstrap: str, topic_name: str, worker: Any
) -> None:
    from openlineage.client.event_v2 import RunState

    create_topic(kafka_bootstrap, topic_name, 1)
    client = ol_client(kafka_bootstrap, topic_name)
    client.emit(run_event("j", 1, RunState.START))
    client.emit(run_event("j", 1))
    client.emit(run_event("j", 2))
    gate = threading.Event()
    rec = Recorder()

    def sync(graph: Any, job: str) -> None:
        gate.wait(30)
        rec(graph, job)

    w = worker(sync, batch_max=10, poll_timeout=2.0)
    gate.set()
    assert wait_for(lambda: w.metrics()["committed"] == 3)
    m = w.metrics()
    # the three events come in one batch (the worker starts after they were produced)
    [(job, graph)] = rec.calls
    assert job == "spark-prod/j"
    assert graph.processes[0].outputs == ["mart.j_v2"]
    assert (m["superseded"], m["skipped"], m["synced"]) == (1, 1, 1)


def test_dead_letters_also_go_to_a_dead_letter_topic_with_the_reason_in_headers(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path, worker: Any
) -> None:
    from confluent_kafka import Consumer

    create_topic(kafka_bootstrap, topic_name, 1)
    dead_topic = topic_name + "-dead"
    create_topic(kafka_bootstrap, dead_topic, 1)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic_name, key=b"run:x/y", value=b"not json at all")
    assert producer.flush(30) == 0
    w = worker(Recorder(), dead_letter_topic=dead_topic)
    assert wait_for(lambda: w.metrics()["committed"] == 1)
    reader = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": dead_topic, "auto.offset.reset": "earliest"}
    )
    reader.subscribe([dead_topic])
    try:
        msg = None
        for _ in range(60):
            msg = reader.poll(1.0)
            if msg is not None and msg.error() is None:
                break
        assert msg is not None and msg.error() is None
        assert (msg.key(), msg.value()) == (b"run:x/y", b"not json at all")
        headers = dict(msg.headers() or [])
        assert headers["atlas-sync-reason"].decode().startswith("invalid JSON")
        assert headers["atlas-sync-source"] == f"{topic_name}[0]@0".encode()
    finally:
        reader.close()
    assert (tmp_path / "dead.jsonl").exists()  # the file too
