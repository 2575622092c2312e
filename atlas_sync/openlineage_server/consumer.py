"""OpenLineage events from Kafka topics, synced to Atlas per job (``atlas-sync openlineage consume``).

Messages are what OpenLineage's own Kafka transports write: the value is one event as JSON (UTF-8); the
key is ``run:<namespace>/<job>`` (the root parent job's, when there is one), ``job:...`` or ``dataset:...``
in openlineage-python and the Java client, so every event of a job (and of its child jobs) lands in one
partition, in order. The consumer never trusts the key: the job is read from the event.

One worker of a consumer group:

1. takes up to ``batch_max`` messages from its assigned partitions;
2. sets aside messages that are not an OpenLineage event (bad UTF-8, bad JSON, fails validation) as
   poison: they go to the dead letter (a JSON-lines file and/or a topic) with the reason;
3. groups the rest per job and syncs each job once with its latest run in the batch, through the HTTP
   endpoint's own :class:`~atlas_sync.openlineage_server.jobsync.JobSyncer` (``Publisher.sync``): a run
   of a job older than one this worker already synced (a producer re-sending late), or the synced run
   again (a batch read twice), is not synced again;
4. commits the batch's offsets only after every job of the batch was synced (or dead-lettered, when the
   sync core refuses it): at-least-once delivery, made harmless by the sync being idempotent - a batch
   seen twice (a worker killed before its commit, a rebalance) writes nothing the second time;
5. when Atlas fails (unreachable, 5xx, timeouts), nothing is committed: the worker rewinds its partitions
   to the batch's first offsets and tries again after a backoff, so lag grows and nothing is lost.

A rebalance only happens inside ``consume()``, between batches, after the previous batch was committed:
partitions move with every finished batch committed and every unfinished one re-read by the new owner.
"""

from __future__ import annotations

import base64
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas_sync.errors import AtlasSyncError, ConfigError, InputError
from atlas_sync.lineage.openlineage import NamespaceMap, validate_event
from atlas_sync.openlineage_server.jobsync import GiveBack, JobSyncer, SyncFn
from atlas_sync.openlineage_server.journal import Entry, Watermark
from atlas_sync.openlineage_server.metrics import EndpointMetrics, consumer_metrics
from atlas_sync.openlineage_server.queue import write_spool

log = logging.getLogger("atlas_sync.openlineage_server.consumer")


def _kafka() -> Any:
    try:
        import confluent_kafka
    except ImportError:  # pragma: no cover - depends on the installation
        raise ConfigError(
            "reading OpenLineage events from Kafka needs the confluent-kafka package",
            hint="pip install 'atlas-sync[kafka]'",
        ) from None
    return confluent_kafka


# librdkafka's timing words in an error (" (after 2ms in state CONNECT)"), which differ between repeats.
_TIMING = re.compile(r" \(after \d+ms in state [A-Z_]+\)")


@dataclass
class ConsumerConfig:
    """Tuning of one consumer worker. ``kafka_config`` (security settings, passwords) is never shown."""

    bootstrap_servers: str
    topics: tuple[str, ...]
    group_id: str = "atlas-sync"
    kafka_config: Mapping[str, str] = field(default_factory=dict, repr=False)
    event_types: tuple[str, ...] = ("COMPLETE",)
    namespace_map: NamespaceMap | None = None
    lenient_events: bool = False  # accept events without eventTime, runIds that are not UUIDs
    batch_max: int = 500
    poll_timeout: float = 0.2  # seconds consume() waits to fill a batch
    retry_base: float = 0.5
    retry_max: float = 30.0
    dead_letter_path: Path | None = Path(".atlas-sync/openlineage-kafka-dead-letter.jsonl")
    dead_letter_topic: str | None = None
    auto_offset_reset: str = "earliest"  # a new group starts at the beginning of the topic
    stats_interval: float = 5.0  # seconds between librdkafka statistics (lag) and log lines
    # seconds to wait at start for a broker to answer before giving up (None: wait for ever)
    startup_timeout: float | None = None

    def consumer_settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": self.group_id,
            "enable.auto.commit": False,  # offsets are committed after the syncs, by hand
            "enable.auto.offset.store": False,
            "auto.offset.reset": self.auto_offset_reset,
            "partition.assignment.strategy": "cooperative-sticky",  # a rebalance moves only what it must
            "statistics.interval.ms": int(self.stats_interval * 1000),
        }
        settings.update(self.kafka_config)
        return settings


@dataclass
class ConsumerCounters:
    """What the worker did since it started (``/metrics`` and the periodic log line)."""

    consumed: int = 0  # messages taken from Kafka (every delivery counts: a re-read batch counts twice)
    synced: int = 0  # events whose job was synced
    job_syncs: int = 0  # syncs of one job (a batch syncs each of its jobs once)
    skipped: int = 0  # events not synced by design (event type not selected, DatasetEvents)
    superseded: int = 0  # events of an older run of a job than one synced with or before them
    duplicates: int = 0  # events of a run this worker already synced (a batch read again, a re-send)
    poison: int = 0  # messages that are not an OpenLineage event (dead-lettered)
    dead_lettered: int = 0  # messages in the dead letter (poison and refused syncs)
    failed: int = 0  # failed sync attempts (each retry counts)
    rewinds: int = 0  # batches given back to Kafka because Atlas failed
    batches: int = 0  # batches whose offsets were committed
    committed: int = 0  # messages whose offsets were committed
    commit_errors: int = 0
    rebalances: int = 0
    assigned_partitions: int = 0
    lag: int | None = None  # messages behind the end of the assigned partitions (librdkafka statistics)
    last_error: str | None = None
    started_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "started_at"}
        uptime = max(time.time() - self.started_at, 1e-9)
        d["uptime_seconds"] = round(uptime, 3)
        d["committed_per_second"] = round(self.committed / uptime, 2)
        return d


@dataclass
class Poison:
    """A message that is not an OpenLineage event, and why."""

    reason: str


def decode_message(
    value: bytes | None, *, where: str, lenient_events: bool = False
) -> dict[str, Any] | Poison:
    """The event a message value holds, or why it holds none (never raises)."""
    if value is None:
        return Poison("empty message (no value)")
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Poison(f"value is not UTF-8: {exc}")
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        return Poison(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:
        return Poison("JSON nested too deeply")
    try:
        validate_event(event, file=where, lenient_events=lenient_events)
    except InputError as exc:
        return Poison(f"not an OpenLineage event: {exc}")
    return event


def dead_letter_record(msg: Any, reason: str) -> dict[str, Any]:
    """A JSON-able record of a Kafka message given up on (value as text, or base64 when not UTF-8)."""
    value = msg.value()
    key = msg.key()
    record: dict[str, Any] = {
        "reason": reason,
        "topic": msg.topic(),
        "partition": msg.partition(),
        "offset": msg.offset(),
        "key": key.decode("utf-8", "replace") if key is not None else None,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if value is None:
        record["value"] = None
    else:
        try:
            record["value"] = value.decode("utf-8")
        except UnicodeDecodeError:
            record["value_base64"] = base64.b64encode(value).decode()
    return record


class _Rewind(GiveBack):
    """The batch cannot be finished now: give it back to Kafka (no commit) and retry later."""


class _SyncCounts:
    """The shared syncer's counts, in the consumer's counters (its job syncs are ``job_syncs``: the
    consumer's ``batches`` are committed batches)."""

    def __init__(self, worker: KafkaLineageConsumer) -> None:
        self.worker = worker

    def add(self, **deltas: int) -> None:
        self.worker._count(**{("job_syncs" if k == "batches" else k): v for k, v in deltas.items()})

    def error(self, message: str, **deltas: int) -> None:
        self.add(**deltas)
        with self.worker._lock:
            self.worker.counters.last_error = message


class _LibrdkafkaLog:
    """librdkafka's own log lines (``%3|...|FAIL|...``), to our log at DEBUG: at its default they go to
    stderr beside what ``error_cb`` reports, each error twice."""

    def log(self, level: int, msg: str, *args: Any) -> None:
        log.debug("librdkafka: " + msg, *args)


_LIBRDKAFKA_LOG = _LibrdkafkaLog()


class KafkaLineageConsumer:
    """One worker of a consumer group: Kafka -> per-job sync -> commit.

    ``sync(graph, job)`` publishes one job's lineage (``Publisher.sync``). ``run()`` loops until
    ``stop()`` (from a signal handler or another thread); it finishes the batch in hand, commits it and
    leaves the group, so its partitions move at once.
    """

    def __init__(
        self,
        sync: SyncFn,
        config: ConsumerConfig,
        *,
        consumer: Any = None,
        producer: Any = None,
        atlas_stats: Callable[[], Any] | None = None,
    ):
        self.sync = sync
        self.config = config
        self.counters = ConsumerCounters()
        self.prometheus = EndpointMetrics()  # GET /metrics: this worker's own registry
        consumer_metrics(self.prometheus, self.metrics, atlas_stats)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._kafka_errors: set[str] = set()  # logged since Kafka last answered: each once
        self._kafka_cause: str | None = None  # the first of them
        self._consecutive_failures = 0
        self._partition_lag: dict[tuple[str, int], int] = {}
        # per job, the newest run this worker synced (what the endpoint's journal keeps on disk; here
        # it lives as long as the worker: after a restart a re-read batch is synced once more, harmlessly)
        self._marks: dict[str, Watermark] = {}
        self._in_hand: list[Any] = []  # the batch's messages, by Entry.id
        self.syncer = JobSyncer(
            sync,
            counters=_SyncCounts(self),
            stop=self._stop,
            watermark=self._marks.get,
            event_types=config.event_types,
            namespace_map=config.namespace_map,
            give_back=True,  # a failing Atlas: rewind and back off here, polling on
            dead_letter=self._dead_letter_entries,
            observer=self.prometheus,
        )
        kafka: Any = _kafka() if consumer is None or (producer is None and config.dead_letter_topic) else None
        if consumer is None:
            settings = config.consumer_settings()
            settings["stats_cb"] = self._on_stats
            settings["error_cb"] = self._on_error
            settings["logger"] = _LIBRDKAFKA_LOG  # its own lines repeat what error_cb says: -v shows them
            consumer = kafka.Consumer(settings)
        self.consumer = consumer
        if producer is None and config.dead_letter_topic:
            producer = kafka.Producer(
                {
                    **{k: v for k, v in config.kafka_config.items() if not k.startswith(("group.", "auto."))},
                    "bootstrap.servers": config.bootstrap_servers,
                    "enable.idempotence": True,
                }
            )
        self.producer = producer

    # ------------------------------------------------------------------ lifecycle
    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def metrics(self) -> dict[str, Any]:
        with self._lock:
            return self.counters.to_json()

    def _count(self, **deltas: int) -> None:
        with self._lock:
            for k, v in deltas.items():
                setattr(self.counters, k, getattr(self.counters, k) + v)

    def wait_for_broker(self, timeout: float) -> None:
        """Return once a broker answers a metadata request (or :meth:`stop` was called); raise
        :class:`AtlasSyncError` naming the servers and the cause when none does within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        failure: Exception | None = None
        while not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:  # in slices of a second: a SIGTERM meanwhile ends the wait
                self.consumer.list_topics(timeout=min(1.0, left))
            except Exception as exc:  # confluent_kafka.KafkaException: no answer in time
                failure = exc
                continue
            self._kafka_ok()
            return
        if self._stop.is_set():
            return
        self.consumer.poll(0)  # (serves the error callbacks queued meanwhile: they hold the cause)
        arg: Any = failure.args[0] if failure is not None and failure.args else failure
        cause = self._kafka_cause or (arg.str() if hasattr(arg, "str") else str(arg))
        raise AtlasSyncError(
            f"no Kafka broker answered at {self.config.bootstrap_servers} within {timeout:g} s ({cause})",
            hint="check --bootstrap-servers (and --kafka-config) and that the broker is up and reachable "
            "from here; --startup-timeout 0 waits for ever",
        )

    def run(self, *, on_stats: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Consume until stopped; then close the consumer (leaving the group). With
        ``config.startup_timeout``, first :meth:`wait_for_broker` (its error closes the consumer)."""
        if self.config.startup_timeout:
            try:
                self.wait_for_broker(self.config.startup_timeout)
            except AtlasSyncError:
                self._close()
                raise
        self.consumer.subscribe(
            list(self.config.topics), on_assign=self._on_assign, on_revoke=self._on_revoke
        )
        next_stats = time.monotonic() + self.config.stats_interval
        try:
            while not self._stop.is_set():
                messages = self.consumer.consume(self.config.batch_max, timeout=self.config.poll_timeout)
                if messages:
                    if any(m.error() is None for m in messages):
                        self._kafka_ok()
                    self.process(messages)
                if on_stats is not None and time.monotonic() >= next_stats:
                    next_stats = time.monotonic() + self.config.stats_interval
                    on_stats(self.metrics())
        finally:
            self._close()

    def _close(self) -> None:
        self.consumer.close()
        if self.producer is not None:
            self.producer.flush(30)

    # ------------------------------------------------------------------ callbacks
    def _on_assign(self, consumer: Any, partitions: Sequence[Any]) -> None:
        with self._lock:
            self.counters.rebalances += 1
            self.counters.assigned_partitions += len(partitions)
        self._kafka_ok()
        log.info("assigned %s", ", ".join(f"{p.topic}[{p.partition}]" for p in partitions) or "nothing")

    def _on_revoke(self, consumer: Any, partitions: Sequence[Any]) -> None:
        with self._lock:
            self.counters.rebalances += 1
            self.counters.assigned_partitions = max(0, self.counters.assigned_partitions - len(partitions))
            for p in partitions:
                self._partition_lag.pop((p.topic, p.partition), None)
        log.info("revoked %s", ", ".join(f"{p.topic}[{p.partition}]" for p in partitions) or "nothing")

    def _on_error(self, err: Any) -> None:
        # librdkafka reports the same failure at every reconnect (~20 a second for a refused
        # connection): one line per change of state
        text = err.str() if hasattr(err, "str") else str(err)
        with self._lock:
            self.counters.last_error = f"kafka: {text}"
            if not self._kafka_errors:
                self._kafka_cause = text  # (rather than the "all brokers are down" that follows it)
            same = _TIMING.sub("", text)  # ("after 0ms" then "after 2ms": the same failure)
            repeated = same in self._kafka_errors
            self._kafka_errors.add(same)
        if not repeated:
            log.warning("kafka: %s", text)

    def _kafka_ok(self) -> None:
        """Kafka answered (metadata, an assignment, a message): the next error is news again."""
        with self._lock:
            if self._kafka_errors:
                log.warning("kafka: reachable again")
            self._kafka_errors = set()

    def _on_stats(self, stats_json: str) -> None:
        try:
            stats = json.loads(stats_json)
        except ValueError:
            return
        lag: dict[tuple[str, int], int] = {}
        for topic, t in (stats.get("topics") or {}).items():
            for pid, p in (t.get("partitions") or {}).items():
                if pid == "-1" or p.get("fetch_state") in (None, "none", "stopped"):
                    continue
                value = p.get("consumer_lag", -1)  # from the committed offset
                if isinstance(value, int) and value >= 0:
                    lag[(topic, int(pid))] = value
        with self._lock:
            self._partition_lag = lag
            self.counters.lag = sum(lag.values()) if lag else 0

    # ------------------------------------------------------------------ a batch
    def process(self, messages: Sequence[Any]) -> bool:
        """Sync one batch and commit it; False when it was given back to Kafka (Atlas failed)."""
        kafka_errors = [m for m in messages if m.error() is not None]
        for m in kafka_errors:
            log.warning("kafka: %s", m.error())
        messages = [m for m in messages if m.error() is None]
        if not messages:
            return True
        self._count(consumed=len(messages))
        entries: list[Entry] = []
        poison: list[tuple[Any, str]] = []
        self._in_hand = []
        for m in messages:
            decoded = decode_message(
                m.value(),
                where=f"{m.topic()}[{m.partition()}]@{m.offset()}",
                lenient_events=self.config.lenient_events,
            )
            if isinstance(decoded, Poison):
                poison.append((m, decoded.reason))
                continue
            entries.append(Entry(len(self._in_hand), decoded, received=_produced_at(m)))
            self._in_hand.append(m)
        try:
            if poison:
                self._dead_letter(poison)
                self._count(poison=len(poison), dead_lettered=len(poison))
            done = self.syncer.process(entries, self._settle)
        except _Rewind:
            done = False
        if not done:
            self._rewind(messages)
            return False
        self._consecutive_failures = 0
        self._commit(messages)
        return True

    def _settle(self, entries: list[Entry], marks: dict[str, Watermark]) -> None:
        # offsets are committed for the whole batch once every job of it is settled (process)
        self._marks.update(marks)

    def _dead_letter_entries(self, job: str, entries: list[Entry], reason: str) -> None:
        self._dead_letter([(self._in_hand[e.id], reason) for e in entries])

    def _rewind(self, messages: Sequence[Any]) -> None:
        """Seek every partition of the batch back to its first offset, then back off."""
        kafka = _kafka()
        first: dict[tuple[str, int], int] = {}
        for m in messages:
            key = (m.topic(), m.partition())
            first[key] = min(first.get(key, m.offset()), m.offset())
        for (topic, partition), offset in first.items():
            try:
                self.consumer.seek(kafka.TopicPartition(topic, partition, offset))
            except Exception as exc:  # noqa: BLE001 - revoked meanwhile: the new owner re-reads it
                log.info("cannot rewind %s[%d]: %s", topic, partition, exc)
        self._consecutive_failures += 1
        self._count(rewinds=1)
        delay = min(self.config.retry_max, self.config.retry_base * 2 ** (self._consecutive_failures - 1))
        delay *= 0.5 + random.random() / 2  # jitter: the workers of a group must not retry in step
        self._stop.wait(delay)

    def _commit(self, messages: Sequence[Any]) -> None:
        kafka = _kafka()
        last: dict[tuple[str, int], int] = {}
        for m in messages:
            key = (m.topic(), m.partition())
            last[key] = max(last.get(key, -1), m.offset())
        offsets = [kafka.TopicPartition(t, p, o + 1) for (t, p), o in last.items()]
        try:
            self.consumer.commit(offsets=offsets, asynchronous=False)
        except kafka.KafkaException as exc:
            # the partitions moved meanwhile: the new owner re-reads the batch (the sync writes nothing)
            with self._lock:
                self.counters.commit_errors += 1
                self.counters.last_error = f"commit: {exc}"
            log.warning("offset commit failed (the batch will be read again): %s", exc)
            return
        self._count(batches=1, committed=len(messages))

    def _dead_letter(self, items: Sequence[tuple[Any, str]]) -> None:
        """Keep messages aside with their reason, durably, before their offsets can be committed."""
        records = [dead_letter_record(m, reason) for m, reason in items]
        if self.config.dead_letter_path is not None:
            write_spool(self.config.dead_letter_path, records)
        if self.producer is not None and self.config.dead_letter_topic:
            for (m, reason), rec in zip(items, records, strict=True):
                headers = [
                    ("atlas-sync-reason", reason.encode()),
                    ("atlas-sync-source", f"{rec['topic']}[{rec['partition']}]@{rec['offset']}".encode()),
                ]
                self.producer.produce(
                    self.config.dead_letter_topic, value=m.value(), key=m.key(), headers=headers
                )
            left = self.producer.flush(30)
            if left:
                raise _Rewind(f"{left} dead letters not acknowledged by the dead-letter topic")
        with self._lock:
            self.counters.last_error = items[-1][1]
        for m, reason in items:
            log.error("dead letter %s[%d]@%d: %s", m.topic(), m.partition(), m.offset(), reason)


# ---------------------------------------------------------------------------------------- /metrics
def serve_metrics(worker: KafkaLineageConsumer, host: str = "127.0.0.1", port: int = 0) -> Any:
    """Serve ``GET /metrics`` (Prometheus text), ``GET /api/v1/metrics`` (JSON counters) and
    ``GET /health`` on a background thread; the server has ``url``, ``port`` and ``stop()``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from atlas_sync.openlineage_server.metrics import CONTENT_TYPE_LATEST
    from atlas_sync.openlineage_server.server import BackgroundServer, ServerLimits, bind, uvicorn_config

    async def prometheus(request: Request) -> Response:
        return Response(worker.prometheus.text(), media_type=CONTENT_TYPE_LATEST)

    async def figures(request: Request) -> Response:
        return JSONResponse(worker.metrics())

    async def health(request: Request) -> Response:
        return JSONResponse(worker.metrics(), status_code=503 if worker.stopping else 200)

    async def not_found(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": f"no such endpoint: {request.method} {request.url.path}"}, 404)

    routes = [
        Route("/metrics", prometheus, methods=["GET"]),
        Route("/api/v1/metrics", figures, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})
    limits = ServerLimits(max_connections=64, shutdown_grace=1)
    return BackgroundServer(uvicorn_config(app, limits), bind(host, port), tls=False)


def _produced_at(msg: Any) -> float | None:
    """The message's timestamp (producer create time or broker append time) in epoch seconds."""
    try:
        kind, ms = msg.timestamp()
    except (AttributeError, TypeError, ValueError):
        return None
    return ms / 1000 if kind and ms and ms > 0 else None
