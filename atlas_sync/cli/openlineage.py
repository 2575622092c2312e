"""``atlas-sync openlineage serve``: an OpenLineage HTTP endpoint that syncs each job to Atlas."""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from atlas_sync.cli.common import (
    client_from_options,
    connection_options,
    is_loopback,
    long_running_process,
    settings_from_options,
    stderr,
)
from atlas_sync.cli.write_path import wrap_client, write_path_options
from atlas_sync.errors import ConfigError
from atlas_sync.wording import counted

if TYPE_CHECKING:
    from atlas_sync.atlas.client import AtlasClient


@dataclass
class Publishing:
    """The flags every OpenLineage command shares: where and how each job is published (one
    definition, so a flag added here is on `serve` and `consume` alike)."""

    domain: str | None
    profile: str | None
    namespace_map: str | None
    event_types: str
    max_delete_percent: float | None
    force: bool
    lenient_events: bool

    def settings(self) -> Any:
        settings = settings_from_options(
            domain=self.domain, profile=self.profile, max_delete_percent=self.max_delete_percent
        )
        if not settings.domain:
            raise click.UsageError(
                "--domain is required (or set ATLAS_SYNC_DOMAIN, or domain in atlas-sync.toml)"
            )
        return settings

    def types(self) -> tuple[str, ...]:
        types = tuple(t.strip().upper() for t in self.event_types.split(",") if t.strip())
        unknown = [t for t in types if t not in ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")]
        if unknown or not types:
            raise click.BadParameter(
                f"unknown event type{'s' if len(unknown) > 1 else ''}: {', '.join(unknown) or '(none)'}",
                param_hint="--event-types",
            )
        return types

    def namespaces(self) -> Any:
        from atlas_sync.lineage.openlineage import load_namespace_map

        return load_namespace_map(self.namespace_map) if self.namespace_map else None


_PUBLISHING_FIELDS = (
    "domain",
    "profile",
    "namespace_map",
    "event_types",
    "max_delete_percent",
    "force",
    "lenient_events",
)


def _publishing_options(func: Any) -> Any:
    """The shared flags (and the connection flags), collected into ``publishing: Publishing``."""

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        publishing = Publishing(**{k: kwargs.pop(k) for k in _PUBLISHING_FIELDS})
        return func(publishing=publishing, **kwargs)

    opts = [
        click.option(
            "--domain", "-d", metavar="DOMAIN", help="domain of every entity [env ATLAS_SYNC_DOMAIN]"
        ),
        click.option(
            "--profile", "-p", metavar="NAME|DIR", help="profile (default lineage) [env ATLAS_SYNC_PROFILE]"
        ),
        click.option(
            "--namespace-map",
            type=click.Path(dir_okay=False),
            help="TOML/JSON map of OpenLineage dataset namespaces to metadata namespaces",
        ),
        click.option(
            "--event-types",
            default="COMPLETE",
            show_default=True,
            help="comma-separated run event types to publish (e.g. COMPLETE,RUNNING); FAIL/ABORT never delete",
        ),
        click.option(
            "--max-delete-percent",
            type=click.FloatRange(0, 100),
            help="refuse a job sync that deletes more than this share of the domain's entities [default: 50]",
        ),
        click.option(
            "--force",
            is_flag=True,
            help="let every run replace what the job's previous run published, beyond --max-delete-percent",
        ),
        click.option(
            "--lenient-events",
            is_flag=True,
            help="accept events without eventTime, or whose runId is not a UUID (the OpenLineage spec "
            "requires both; refused by default, naming the field)",
        ),
    ]
    out: Any = wrapper
    for o in reversed(opts):
        out = o(out)
    return connection_options(out)


@click.group("openlineage")
def openlineage_group() -> None:
    """Receive OpenLineage events (Spark, Flink, Airflow, dbt, Doris...) and publish them to Atlas."""


def _read_key(path: str | None) -> str | None:
    if not path:
        return None
    try:
        key = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read API key file {path}: {exc.strerror}") from None
    if not key:
        raise ConfigError(f"API key file {path} is empty")
    return key


@openlineage_group.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind")
@click.option(
    "--port", default=5000, show_default=True, type=click.IntRange(0, 65535), help="port (0: any free)"
)
@click.option(
    "--queue-size",
    default=10_000,
    show_default=True,
    type=click.IntRange(1),
    help="events accepted and not yet synced before 503",
)
@click.option(
    "--api-key-file",
    type=click.Path(dir_okay=False),
    help="file holding the API key clients must send as 'Authorization: Bearer KEY'",
)
@click.option(
    "--journal",
    type=click.Path(dir_okay=False),
    help="crash-safe journal of accepted, not yet synced events [DATA_DIR/openlineage-journal.sqlite]",
)
@click.option(
    "--journal-max-mb",
    default=1024,
    show_default=True,
    type=click.IntRange(1),
    help="bytes of events the journal holds before 503 (with --queue-size events)",
)
@click.option(
    "--dead-letter",
    type=click.Path(dir_okay=False),
    help="events given up on after --max-attempts [DATA_DIR/openlineage-dead-letter.jsonl]",
)
@click.option(
    "--max-attempts", default=8, show_default=True, type=click.IntRange(1), help="sync attempts per batch"
)
@click.option(
    "--drain-timeout",
    default=30.0,
    show_default=True,
    type=float,
    help="seconds to drain the queue on SIGTERM",
)
@click.option(
    "--ssl-certfile",
    type=click.Path(dir_okay=False),
    help="serve HTTPS with this PEM certificate (chain); with --ssl-keyfile",
)
@click.option("--ssl-keyfile", type=click.Path(dir_okay=False), help="the certificate's PEM private key")
@click.option(
    "--max-requests",
    default=256,
    show_default=True,
    type=click.IntRange(1),
    help="POSTs read or journalled at once before 503 + Retry-After",
)
@click.option(
    "--max-connections",
    default=4096,
    show_default=True,
    type=click.IntRange(1),
    help="open connections before 503 (raise the open-files limit to match)",
)
@click.option(
    "--idle-timeout",
    default=30.0,
    show_default=True,
    type=click.FloatRange(1),
    help="seconds a connection may wait for its first or next request",
)
@click.option(
    "--header-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(0.1),
    help="seconds a request's headers may take to arrive (408 after)",
)
@click.option(
    "--body-timeout",
    default=60.0,
    show_default=True,
    type=click.FloatRange(0.1),
    help="seconds a request's body may take to arrive (408 after)",
)
@click.option(
    "--max-body-mb",
    default=16,
    show_default=True,
    type=click.IntRange(1),
    help="largest request body, also once decompressed (413 beyond)",
)
@_publishing_options
def serve_cmd(
    host: str,
    port: int,
    publishing: Publishing,
    queue_size: int,
    api_key_file: str | None,
    journal: str | None,
    journal_max_mb: int,
    dead_letter: str | None,
    max_attempts: int,
    drain_timeout: float,
    ssl_certfile: str | None,
    ssl_keyfile: str | None,
    max_requests: int,
    max_connections: int,
    idle_timeout: float,
    header_timeout: float,
    body_timeout: float,
    max_body_mb: int,
) -> None:
    """Serve POST /api/v1/lineage (openlineage-python HTTP transport / Marquez compatible).

    Events are validated and written to a crash-safe journal before the answer (201); a worker
    batches them per OpenLineage job and syncs each job (one Atlas process per job, updated on
    every completed run); an event leaves the journal once its job's sync committed. A start
    (after a crash too) first queues what the journal holds. GET /health (alive), GET /ready
    (journal open, Atlas reachable, backlog below --queue-size), GET /metrics (Prometheus) and
    GET /api/v1/metrics (JSON). SIGTERM stops taking connections, lets in-flight requests finish,
    then drains the queue for up to --drain-timeout seconds; what is left stays in the journal.
    A sync that fails is retried with backoff; one the sync core refuses (e.g. more deletes than
    --max-delete-percent) goes to the dead-letter file at once.

    \b
    Point a producer at it, e.g. for openlineage-python:
      OPENLINEAGE_URL=http://127.0.0.1:5000  (and OPENLINEAGE_API_KEY=... with --api-key-file)
    """
    long_running_process()
    from atlas_sync.api import Publisher
    from atlas_sync.openlineage_server import (
        EndpointConfig,
        JournalError,
        LineageEndpoint,
        ServerLimits,
        serve,
    )

    if (ssl_certfile is None) != (ssl_keyfile is None):
        raise click.UsageError("--ssl-certfile and --ssl-keyfile go together")
    settings = publishing.settings()
    api_key = _read_key(api_key_file)
    if not is_loopback(host) and api_key is None:
        stderr(f"warning: listening on {host} without --api-key-file: anyone who can reach it can publish")
    types = publishing.types()
    force = publishing.force
    data_dir = Path(settings.data_dir)
    config = EndpointConfig(
        queue_size=queue_size,
        api_key=api_key,
        event_types=types,
        namespace_map=publishing.namespaces(),
        lenient_events=publishing.lenient_events,
        max_attempts=max_attempts,
        drain_timeout=drain_timeout,
        journal_path=Path(journal) if journal else data_dir / "openlineage-journal.sqlite",
        journal_max_bytes=journal_max_mb * 1024 * 1024,
        dead_letter_path=Path(dead_letter) if dead_letter else data_dir / "openlineage-dead-letter.jsonl",
        max_body_bytes=max_body_mb * 1024 * 1024,
    )
    limits = ServerLimits(
        max_requests=max_requests,
        max_connections=max_connections,
        idle_timeout=idle_timeout,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
    )
    client = client_from_options(settings=settings)
    publisher = Publisher.from_settings(client, settings)

    def sync(graph: Any, job: str) -> Any:
        for p in graph.problems:  # e.g. a malformed facet dropped from an event
            stderr(f"{p.severity}: job {job}: {p}")
        return publisher.sync(graph, job, force=force)

    not_atlas: list[Exception] = []
    endpoint = LineageEndpoint(
        sync,
        config,
        probe=_atlas_probe(client, not_atlas),
        atlas_stats=lambda: client.stats,
    )
    try:
        server = serve(
            endpoint, host=host, port=port, limits=limits, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile
        )
    except JournalError as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror}", hint="pick another --port"
        ) from None
    if not_atlas:  # the start's probe: Atlas may be down for now, but a URL that is no Atlas is wrong
        server.shutdown(drain=False, timeout=5)
        raise not_atlas[0]
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stderr(
        f"OpenLineage endpoint on {server.url}/api/v1/lineage -> {client.target}, domain {settings.domain} "
        f"(queue {queue_size}, events {','.join(types)}, journal {config.journal_path}; "
        f"ready: {server.url}/ready, metrics: {server.url}/metrics)"
    )
    m = endpoint.metrics()
    if m["replayed"]:
        stderr(f"replaying {m['replayed']} accepted events from the journal {config.journal_path}")
    while not stop.wait(0.5):
        pass
    stderr("stopping: draining the queue...")
    left = server.shutdown(drain=True)
    m = endpoint.metrics()
    stderr(
        f"stopped: accepted {m['accepted']}, synced {m['synced']}, skipped {m['skipped']}, "
        f"rejected {m['rejected']}, failed attempts {m['failed']}, dead-lettered {m['dead_lettered']}"
        + (f", {counted(left, 'event')} kept in the journal {config.journal_path}" if left else "")
    )


def _atlas_probe(client: AtlasClient, not_atlas: list[Exception] | None = None) -> Callable[[], None]:
    """``GET /api/atlas/admin/status`` once, without the client's retries (GET /ready must tell
    at once that Atlas is down), ACTIVE or it raises; an answer that is no Atlas's is also kept in
    ``not_atlas``."""
    import copy

    from atlas_sync.atlas import NotAtlasError
    from atlas_sync.atlas.retry import RetryPolicy

    probe = copy.copy(client)
    probe.retry = RetryPolicy.none()
    probe.timeout = (2.0, 5.0)

    def check() -> None:
        try:
            state = probe.status()
        except NotAtlasError as exc:
            if not_atlas is not None:
                not_atlas.append(exc)
            raise
        if state != "ACTIVE":
            raise ConfigError(f"Atlas is {state}, not ACTIVE")

    return check


def _refuse_no_atlas(client: AtlasClient) -> None:
    """One probe at start: a URL that answers but is no Atlas is an error now, not at the first
    event; Atlas down for now is a warning (the worker waits for it)."""
    from atlas_sync.atlas import AtlasError, NotAtlasError

    probe = _atlas_probe(client)
    try:
        probe()
    except NotAtlasError:
        raise
    except (AtlasError, ConfigError) as exc:
        stderr(f"warning: Atlas cannot take writes yet ({exc}): the events wait for it")


@openlineage_group.command("consume")
@click.option(
    "--bootstrap-servers",
    "-b",
    envvar="KAFKA_BOOTSTRAP_SERVERS",
    required=True,
    metavar="HOST:PORT[,...]",
    help="Kafka brokers [env KAFKA_BOOTSTRAP_SERVERS]",
)
@click.option("--topic", "-t", "topics", multiple=True, required=True, help="topic to read (repeatable)")
@click.option(
    "--group", default="atlas-sync", show_default=True, help="consumer group: workers share its partitions"
)
@click.option(
    "--kafka-config",
    type=click.Path(dir_okay=False),
    help="key=value file of extra librdkafka settings (security.protocol, sasl.*, ssl.*)",
)
@click.option(
    "--batch-size",
    default=500,
    show_default=True,
    type=click.IntRange(1),
    help="messages per batch (one commit)",
)
@click.option(
    "--batch-wait",
    default=0.2,
    show_default=True,
    type=click.FloatRange(0.01),
    help="seconds to wait for a batch to fill (latency vs fewer syncs under load)",
)
@click.option(
    "--dead-letter",
    type=click.Path(dir_okay=False),
    help="messages given up on, with the reason [DATA_DIR/openlineage-kafka-dead-letter.jsonl]",
)
@click.option("--dead-letter-topic", metavar="TOPIC", help="also produce dead letters to this topic")
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    help="serve GET /metrics (Prometheus), /api/v1/metrics (JSON) and /health on 127.0.0.1:PORT (0: any free)",
)
@click.option(
    "--stats-interval",
    default=30.0,
    show_default=True,
    type=click.FloatRange(0.5),
    help="seconds between progress lines (consumed, synced, lag, throughput)",
)
@click.option(
    "--startup-timeout",
    default=60.0,
    show_default=True,
    type=click.FloatRange(0),
    metavar="SECONDS",
    help="exit with an error (code 1) when no broker answers within SECONDS of the start; 0 waits for ever. "
    "Later outages are waited out (one line per change of state)",
)
@_publishing_options
@write_path_options(wait=False)
def consume_cmd(
    bootstrap_servers: str,
    topics: tuple[str, ...],
    group: str,
    kafka_config: str | None,
    publishing: Publishing,
    batch_size: int,
    batch_wait: float,
    dead_letter: str | None,
    dead_letter_topic: str | None,
    metrics_port: int | None,
    stats_interval: float,
    startup_timeout: float,
) -> None:
    """Read OpenLineage events from Kafka (OpenLineage's Kafka transport) and sync each job to Atlas.

    Run several workers with the same --group, on one or many machines: they share the topics'
    partitions. Offsets are committed only after the batch's jobs were synced to Atlas, so a worker
    killed at any moment loses nothing (the next owner reads the batch again; the sync writes nothing
    twice). Messages that are not OpenLineage events go to the dead letter with the reason. When
    Atlas fails, the batch is read again after a backoff. SIGTERM finishes the batch, commits and
    leaves the group.

    \b
    Point a producer at the topic, e.g. openlineage-python's openlineage.yml:
      transport: {type: kafka, topic: openlineage, config: {bootstrap.servers: HOST:9092}}
    """
    long_running_process()
    from atlas_sync.api import Publisher
    from atlas_sync.config import load_client_properties
    from atlas_sync.openlineage_server.consumer import (
        ConsumerConfig,
        KafkaLineageConsumer,
        serve_metrics,
    )

    settings = publishing.settings()
    types = publishing.types()
    force = publishing.force
    config = ConsumerConfig(
        bootstrap_servers=bootstrap_servers,
        topics=topics,
        group_id=group,
        kafka_config=load_client_properties(kafka_config) if kafka_config else {},
        event_types=types,
        namespace_map=publishing.namespaces(),
        lenient_events=publishing.lenient_events,
        batch_max=batch_size,
        poll_timeout=batch_wait,
        dead_letter_path=Path(dead_letter)
        if dead_letter
        else Path(settings.data_dir) / "openlineage-kafka-dead-letter.jsonl",
        dead_letter_topic=dead_letter_topic,
        stats_interval=stats_interval,
        startup_timeout=startup_timeout or None,
    )
    rest = client_from_options(settings=settings)
    client = wrap_client(rest)
    publisher = Publisher.from_settings(client, settings)

    def sync(graph: Any, job: str) -> Any:
        # (after an Atlas error the publisher reads the server's types and terms again itself)
        return publisher.sync(graph, job, force=force)

    _refuse_no_atlas(rest)  # (the hook client reads through it too)
    worker = KafkaLineageConsumer(sync, config, atlas_stats=lambda: client.stats)

    def on_signal(signum: int, frame: Any) -> None:
        worker.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    metrics_url = ""
    if metrics_port is not None:
        server = serve_metrics(worker, port=metrics_port)
        metrics_url = f"; metrics: {server.url}/metrics"
    stderr(
        f"consuming {','.join(topics)} from {bootstrap_servers} as group {group} -> {client.target}, "
        f"domain {settings.domain} (events {','.join(types)}{metrics_url})"
    )

    def progress(m: dict[str, Any]) -> None:
        stderr(
            f"consumed {m['consumed']}, synced {m['synced']}, committed {m['committed']} "
            f"({m['committed_per_second']}/s), dead-lettered {m['dead_lettered']}, "
            f"lag {'?' if m['lag'] is None else m['lag']}, "
            f"partitions {m['assigned_partitions']}"
        )

    worker.run(on_stats=progress)
    if metrics_port is not None:
        server.stop()
    m = worker.metrics()
    stderr(
        f"stopped: consumed {m['consumed']}, synced {m['synced']}, skipped {m['skipped']}, "
        f"committed {m['committed']}, failed attempts {m['failed']}, dead-lettered {m['dead_lettered']}"
    )


COMMANDS = [openlineage_group]
