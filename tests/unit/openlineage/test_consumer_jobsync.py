"""The Kafka consumer's batches go through the endpoint's JobSyncer: per-job sync, the older-run
watermark, offsets committed only once the whole batch is settled, dead letters as before.

The Kafka client is a small fake here (what is checked is the worker's logic); the same worker runs on
a real broker in tests/kafka_broker.
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.atlas import AtlasError
from atlas_sync.errors import AtlasSyncError
from atlas_sync.openlineage_server.consumer import ConsumerConfig, KafkaLineageConsumer

pytest.importorskip("confluent_kafka")

SPARK = Path(__file__).parents[2] / "data" / "openlineage" / "spark_complete.json"


class Msg:
    def __init__(self, value: bytes, offset: int, partition: int = 0) -> None:
        self._value, self._offset, self._partition = value, offset, partition

    def value(self) -> bytes:
        return self._value

    def key(self) -> bytes | None:
        return None

    def topic(self) -> str:
        return "ol"

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def error(self) -> None:
        return None

    def timestamp(self) -> tuple[int, int]:
        return (1, 1_700_000_000_000)


class FakeKafka:
    """Records commits and seeks."""

    def __init__(self) -> None:
        self.commits: list[list[tuple[str, int, int]]] = []
        self.seeks: list[tuple[str, int, int]] = []

    def commit(self, offsets: list[Any], asynchronous: bool) -> None:
        self.commits.append([(tp.topic, tp.partition, tp.offset) for tp in offsets])

    def seek(self, tp: Any) -> None:
        self.seeks.append((tp.topic, tp.partition, tp.offset))


class Recorder:
    def __init__(self, fail: list[Exception] | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.fail = list(fail or [])
        self.lock = threading.Lock()

    def __call__(self, graph: Any, job: str) -> None:
        with self.lock:
            if self.fail:
                raise self.fail.pop(0)
            self.calls.append((job, graph))

    def runs(self) -> list[tuple[str, str]]:
        """(job, run name as :func:`event` was given it)."""
        names = {_run_id(n): n for n in ("r1", "r2", "run-1", "run-2")}
        return [(job, names.get(g.processes[0].attributes["runId"], "?")) for job, g in self.calls]


def _run_id(name: str) -> str:
    """A UUID for a run's name in these tests (the spec's runId is a UUID)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def event(job: str, run: str, minute: int) -> dict[str, Any]:
    ev = json.loads(SPARK.read_text())
    ev["job"]["name"] = job
    ev["run"]["runId"] = _run_id(run)
    ev["eventTime"] = f"2026-11-30T10:{minute:02d}:00Z"
    return ev


def msgs(*events: dict[str, Any], first: int = 0) -> list[Msg]:
    return [Msg(json.dumps(e).encode(), first + i) for i, e in enumerate(events)]


def worker(tmp_path: Path, sync: Any) -> tuple[KafkaLineageConsumer, FakeKafka]:
    kafka = FakeKafka()
    config = ConsumerConfig(
        "unused:9092", ("ol",), dead_letter_path=tmp_path / "dead.jsonl", retry_base=0.0, retry_max=0.0
    )
    return KafkaLineageConsumer(sync, config, consumer=kafka), kafka


def test_an_older_run_read_after_a_newer_one_was_synced_is_not_synced_again(tmp_path: Path) -> None:
    rec = Recorder()
    w, kafka = worker(tmp_path, rec)
    assert w.process(msgs(event("j", "run-2", 2)))
    # a producer re-sends run 1 late: a later batch, the job has moved on
    assert w.process(msgs(event("j", "run-1", 1), first=1))
    assert rec.runs() == [("spark-prod/j", "run-2")]
    assert kafka.commits == [[("ol", 0, 1)], [("ol", 0, 2)]]
    m = w.metrics()
    assert (m["synced"], m["superseded"], m["job_syncs"], m["batches"], m["committed"]) == (1, 1, 1, 2, 2)


def test_a_newer_run_after_a_synced_one_is_synced(tmp_path: Path) -> None:
    rec = Recorder()
    w, _kafka = worker(tmp_path, rec)
    assert w.process(msgs(event("j", "run-1", 1)))
    assert w.process(msgs(event("j", "run-2", 2), first=1))
    assert rec.runs() == [("spark-prod/j", "run-1"), ("spark-prod/j", "run-2")]


def test_atlas_failing_gives_the_batch_back_uncommitted_and_a_job_synced_before_is_not_synced_twice(
    tmp_path: Path,
) -> None:
    # job a syncs, job b fails: nothing is committed, the partition is rewound to the batch's start
    rec = Recorder(fail=[])
    calls: list[str] = []

    def sync(graph: Any, job: str) -> None:
        calls.append(job)
        if job.endswith("/b") and calls.count(job) == 1:
            raise AtlasError("503 from Atlas")
        rec(graph, job)

    w, kafka = worker(tmp_path, sync)
    batch = msgs(event("a", "ra", 1), event("b", "rb", 1), first=10)
    assert not w.process(batch)
    assert kafka.commits == [] and kafka.seeks == [("ol", 0, 10)]
    assert w.metrics()["failed"] == 1 and w.metrics()["rewinds"] == 1
    assert "503 from Atlas" in w.metrics()["last_error"]
    # the batch is read again: a's run is recognised as synced, b is synced, then all is committed
    assert w.process(batch)
    assert calls == ["spark-prod/a", "spark-prod/b", "spark-prod/b"]
    assert kafka.commits == [[("ol", 0, 12)]]
    assert w.metrics()["duplicates"] == 1
    assert not (tmp_path / "dead.jsonl").exists()  # Atlas failures are never dead-lettered


def test_a_refusal_of_the_sync_core_is_dead_lettered_with_the_message_and_committed(tmp_path: Path) -> None:
    w, kafka = worker(tmp_path, Recorder(fail=[AtlasSyncError("would delete 80%")]))
    assert w.process(msgs(event("big", "r1", 1), first=7))
    [dead] = [json.loads(line) for line in (tmp_path / "dead.jsonl").read_text().splitlines()]
    assert (dead["reason"], dead["offset"], dead["partition"]) == ("refused: would delete 80%", 7, 0)
    assert json.loads(dead["value"])["job"]["name"] == "big"
    assert kafka.commits == [[("ol", 0, 8)]]
    m = w.metrics()
    assert (m["dead_lettered"], m["failed"], m["rewinds"], m["synced"]) == (1, 1, 0, 0)


def test_poison_and_skipped_events_are_counted_and_committed_with_the_batch(tmp_path: Path) -> None:
    start = event("j", "r1", 1)
    start["eventType"] = "START"
    batch = [Msg(b"{nope", 0), *msgs(start, event("j", "r1", 2), first=1)]
    rec = Recorder()
    w, kafka = worker(tmp_path, rec)
    assert w.process(batch)
    assert rec.runs() == [("spark-prod/j", "r1")]
    m = w.metrics()
    assert (m["poison"], m["dead_lettered"], m["skipped"], m["synced"]) == (1, 1, 1, 1)
    assert kafka.commits == [[("ol", 0, 3)]]
    [dead] = [json.loads(line) for line in (tmp_path / "dead.jsonl").read_text().splitlines()]
    assert dead["reason"].startswith("invalid JSON") and dead["offset"] == 0


def test_a_dead_letter_topic_that_does_not_acknowledge_gives_the_batch_back(tmp_path: Path) -> None:
    class Unacked:
        def produce(self, *a: Any, **kw: Any) -> None:
            pass

        def flush(self, timeout: float) -> int:
            return 1

    kafka = FakeKafka()
    config = ConsumerConfig(
        "unused:9092", ("ol",), dead_letter_path=None, dead_letter_topic="dead", retry_base=0.0
    )
    rec = Recorder(fail=[AtlasSyncError("refused")])
    w = KafkaLineageConsumer(rec, config, consumer=kafka, producer=Unacked())
    assert not w.process(msgs(event("j", "r1", 1), first=3))
    assert kafka.commits == [] and kafka.seeks == [("ol", 0, 3)]
    assert w.metrics()["dead_lettered"] == 0


def test_the_consumer_serves_the_endpoint_s_metric_families_plus_kafka_lag(tmp_path: Path) -> None:
    import requests
    from prometheus_client.parser import text_string_to_metric_families

    from atlas_sync.openlineage_server.consumer import serve_metrics

    w, _kafka = worker(tmp_path, Recorder(fail=[AtlasError("503 from Atlas")]))
    assert not w.process(msgs(event("j", "r1", 1)))  # a failed attempt, rewound
    assert w.process(msgs(event("j", "r1", 1)))
    w._on_stats(
        json.dumps({"topics": {"ol": {"partitions": {"0": {"fetch_state": "active", "consumer_lag": 7}}}}})
    )
    server = serve_metrics(w)
    try:
        r = requests.get(server.url + "/metrics", timeout=5)
        assert r.headers["Content-Type"].startswith("text/plain")
        fams = {f.name: f for f in text_string_to_metric_families(r.text)}
        value = {s.name: s.value for f in fams.values() for s in f.samples if not s.labels}
        p = "atlas_sync_openlineage_"
        assert value[p + "events_synced_total"] == 1
        assert value[p + "sync_failures_total"] == 1
        assert value[p + "events_dead_lettered_total"] == 0
        assert value[p + "kafka_messages_consumed_total"] == 2
        assert value[p + "kafka_messages_committed_total"] == 1
        assert value[p + "kafka_rewinds_total"] == 1
        assert value[p + "kafka_lag"] == 7
        outcomes = {
            s.labels["outcome"]: s.value
            for s in fams[p + "sync_seconds"].samples
            if s.name.endswith("_count")
        }
        assert outcomes == {"ok": 1, "atlas_error": 1}
        visible = [s.value for s in fams[p + "event_visible_seconds"].samples if s.name.endswith("_count")]
        assert visible == [1]  # from the message's timestamp
        assert requests.get(server.url + "/api/v1/metrics", timeout=5).json()["lag"] == 7
        assert requests.get(server.url + "/health", timeout=5).status_code == 200
    finally:
        server.stop()


def test_the_consumer_exports_atlas_request_counters_by_call_kind(tmp_path: Path) -> None:
    import requests
    from prometheus_client.parser import text_string_to_metric_families

    from atlas_sync.api import Publisher
    from atlas_sync.factory import embedded_client
    from atlas_sync.openlineage_server.consumer import serve_metrics

    atlas = embedded_client(None)
    publisher = Publisher(atlas, profile="lineage", domain="kafka-metrics")
    config = ConsumerConfig("unused:9092", ("ol",), dead_letter_path=tmp_path / "dead.jsonl")
    w = KafkaLineageConsumer(
        lambda graph, job: publisher.sync(graph, job),
        config,
        consumer=FakeKafka(),
        atlas_stats=lambda: atlas.stats,
    )
    assert w.process(msgs(event("j", "r1", 1)))
    server = serve_metrics(w)
    try:
        text = requests.get(server.url + "/metrics", timeout=5).text
    finally:
        server.stop()
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    p = "atlas_sync_openlineage_"
    writes = [s.value for s in fams[p + "atlas_requests"].samples if s.labels == {"kind": "entity_write"}]
    assert writes and writes[0] >= 1
    errors = [
        s.value for s in fams[p + "atlas_request_errors"].samples if s.labels == {"kind": "entity_write"}
    ]
    assert errors == [0]
    assert value_of(fams, p + "events_synced_total") == 1


def value_of(fams: dict[str, Any], sample: str) -> float:
    return next(s.value for f in fams.values() for s in f.samples if s.name == sample and not s.labels)
