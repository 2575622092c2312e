"""Prometheus metrics of the endpoint and the Kafka consumer (``GET /metrics``, text format).

Each endpoint or consumer has a registry of its own (not ``prometheus_client``'s global one), so
several run in one process (tests, an embedding service) without mixing their figures. The counts
are the ones the JSON metrics show, read when Prometheus scrapes (a custom collector: no second
set of counters to keep in step); the sync and event-to-visible latencies are histograms, observed
by the shared :class:`~.jobsync.JobSyncer`; the Atlas client's request counters are read per call
kind (``entity_write``, ``search``, ...).

Families, all prefixed ``atlas_sync_openlineage_``: ``events_accepted_total``,
``events_refused_total{reason}``, ``events_duplicate_total``, ``events_synced_total``,
``events_skipped_total``, ``events_superseded_total``, ``events_dead_lettered_total``,
``events_replayed_total``, ``job_syncs_total``, ``sync_failures_total``, ``journal_events``,
``journal_bytes``, ``journal_file_bytes``, ``journal_commits_total``, ``queue_events``, ``ready``,
``sync_seconds{outcome}`` and ``event_visible_seconds`` (histograms),
``atlas_requests_total{kind}``, ``atlas_request_errors_total{kind}``,
``atlas_request_retries_total{kind}``, ``atlas_request_seconds_total{kind}``; the consumer adds
``kafka_messages_consumed_total``, ``kafka_messages_committed_total``, ``kafka_poison_total``,
``kafka_rewinds_total``, ``kafka_commit_errors_total``, ``kafka_assigned_partitions`` and
``kafka_lag``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from atlas_sync.openlineage_server.journal import Entry

__all__ = ["CONTENT_TYPE_LATEST", "EndpointMetrics", "SyncTimings", "consumer_metrics", "endpoint_metrics"]

PREFIX = "atlas_sync_openlineage_"
# a job's sync: a few ms on the emulator, seconds on a loaded Atlas
SYNC_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# accepted -> in Atlas: the batch linger, the queue, retries while Atlas is down
VISIBLE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900)


class SyncTimings:
    """The histograms the syncer observes (a :class:`~.jobsync.SyncObserver`)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.sync_seconds = Histogram(
            PREFIX + "sync_seconds",
            "Duration of one job's sync attempt, by outcome (ok, atlas_error, refused, input_error, error)",
            ["outcome"],
            registry=registry,
            buckets=SYNC_BUCKETS,
        )
        self.visible_seconds = Histogram(
            PREFIX + "event_visible_seconds",
            "From an event's acceptance (Kafka: its message timestamp) to its job's sync committed in Atlas",
            registry=registry,
            buckets=VISIBLE_BUCKETS,
        )

    def sync_attempt(self, seconds: float, outcome: str) -> None:
        self.sync_seconds.labels(outcome).observe(seconds)

    def visible(self, entries: Sequence[Entry]) -> None:
        now = time.time()
        for e in entries:
            if e.received is not None:
                self.visible_seconds.observe(max(0.0, now - e.received))


class _Figures(Collector):
    """Counters and gauges read from a JSON metrics dict at scrape time."""

    def __init__(
        self,
        figures: Callable[[], dict[str, Any]],
        counters: Sequence[tuple[str, str, str]],
        gauges: Sequence[tuple[str, str, str]],
        atlas_stats: Callable[[], Any] | None,
    ) -> None:
        self.figures = figures
        self.counters = counters
        self.gauges = gauges
        self.atlas_stats = atlas_stats

    def collect(self) -> Iterator[Any]:
        m = self.figures()
        for name, key, doc in self.counters:
            yield CounterMetricFamily(PREFIX + name, doc, value=float(m.get(key) or 0))
        for name, key, doc in self.gauges:
            if m.get(key) is not None:
                yield GaugeMetricFamily(PREFIX + name, doc, value=float(m[key]))
        if "rejected_by" in m:
            refused = CounterMetricFamily(
                PREFIX + "events_refused",
                "Events (or unreadable requests) refused, by reason",
                labels=["reason"],
            )
            for reason, n in sorted(m["rejected_by"].items()):
                refused.add_metric([reason], float(n))
            yield refused
        yield from self._atlas()

    def _atlas(self) -> Iterator[Any]:
        stats = self.atlas_stats() if self.atlas_stats is not None else None
        if stats is None:
            return
        families = {
            "requests": CounterMetricFamily(
                PREFIX + "atlas_requests",
                "HTTP requests sent to Atlas (retries included), by call kind",
                labels=["kind"],
            ),
            "errors": CounterMetricFamily(
                PREFIX + "atlas_request_errors",
                "Atlas calls that ended in an error after retries, by call kind",
                labels=["kind"],
            ),
            "retries": CounterMetricFamily(
                PREFIX + "atlas_request_retries",
                "Atlas requests that repeated a failed attempt",
                labels=["kind"],
            ),
            "seconds": CounterMetricFamily(
                PREFIX + "atlas_request_seconds",
                "Seconds spent in Atlas requests and their backoff",
                labels=["kind"],
            ),
        }
        for kind, s in stats.as_dict().items():
            if kind == "total":
                continue
            for field, family in families.items():
                family.add_metric([kind], float(s[field]))
        yield from families.values()


_EVENT_COUNTERS = (
    (
        "events_duplicate",
        "duplicates",
        "Re-delivered events recognised (already held, or their run already synced)",
    ),
    ("events_synced", "synced", "Events whose job was synced to Atlas"),
    ("events_skipped", "skipped", "Events not synced by design (event type not selected, DatasetEvents)"),
    (
        "events_superseded",
        "superseded",
        "Events of an older run of a job than one synced with or before them",
    ),
    ("events_dead_lettered", "dead_lettered", "Events given up on (in the dead letter)"),
    ("sync_failures", "failed", "Failed job sync attempts (each retry counts)"),
)


class EndpointMetrics(SyncTimings):
    """The endpoint's registry: its histograms, plus the collector over its JSON figures."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        super().__init__(self.registry)
        self.request_seconds = Histogram(
            PREFIX + "lineage_request_seconds",
            "POST /api/v1/lineage from its headers to its answer, by status (201: journalled)",
            ["status"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )

    def text(self) -> bytes:
        return generate_latest(self.registry)


def endpoint_metrics(
    metrics: EndpointMetrics,
    figures: Callable[[], dict[str, Any]],
    ready: Callable[[], bool],
    atlas_stats: Callable[[], Any] | None = None,
) -> None:
    """Register the endpoint's figures (``LineageEndpoint.metrics``) on ``metrics.registry``."""
    counters = (
        ("events_accepted", "accepted", "Events accepted (journalled, answered 201)"),
        *_EVENT_COUNTERS,
        ("events_replayed", "replayed", "Events found in the journal at start and queued again"),
        ("job_syncs", "batches", "Job syncs that succeeded"),
        ("journal_commits", "journal_commits", "Journal transactions committed (one fsync each)"),
    )
    gauges = (
        ("journal_events", "journal_depth", "Events accepted and not yet settled"),
        ("journal_bytes", "journal_bytes", "Bytes of the events held (their JSON)"),
        ("journal_file_bytes", "journal_file_bytes", "Bytes of the journal on disk (database and WAL)"),
        ("queue_events", "queue_depth", "Events waiting for the sync worker"),
        ("ready", "ready", "1 when GET /ready answers 200"),
    )

    def read() -> dict[str, Any]:
        return {**figures(), "ready": 1 if ready() else 0}

    metrics.registry.register(_Figures(read, counters, gauges, atlas_stats))


def consumer_metrics(
    metrics: EndpointMetrics,
    figures: Callable[[], dict[str, Any]],
    atlas_stats: Callable[[], Any] | None = None,
) -> None:
    """Register a Kafka consumer's figures (``KafkaLineageConsumer.metrics``) on ``metrics.registry``."""
    counters = (
        *_EVENT_COUNTERS,
        ("job_syncs", "job_syncs", "Job syncs that succeeded"),
        ("kafka_messages_consumed", "consumed", "Messages taken from Kafka (a re-read batch counts again)"),
        ("kafka_messages_committed", "committed", "Messages whose offsets were committed"),
        ("kafka_poison", "poison", "Messages that are not an OpenLineage event (dead-lettered)"),
        ("kafka_rewinds", "rewinds", "Batches given back to Kafka because Atlas failed"),
        ("kafka_commit_errors", "commit_errors", "Offset commits that failed"),
        ("kafka_rebalances", "rebalances", "Partition assignments and revocations"),
    )
    gauges = (
        ("kafka_assigned_partitions", "assigned_partitions", "Partitions assigned to this worker"),
        ("kafka_lag", "lag", "Messages behind the end of the assigned partitions (committed offsets)"),
    )
    metrics.registry.register(_Figures(figures, counters, gauges, atlas_stats))
