"""Shared helpers of the Kafka tests: OpenLineage events, the real client's Kafka transport, offsets."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import schema_dataset
from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

NAMESPACE = "spark-prod"
T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics(
        [NewTopic(topic, num_partitions=partitions, replication_factor=1)]
    ).values():
        future.result(30)


def ol_client(bootstrap: str, topic: str) -> OpenLineageClient:
    """openlineage-python's own client with its own Kafka transport (what a Spark/Airflow job runs)."""
    config = KafkaConfig(config={"bootstrap.servers": bootstrap, "acks": "all"}, topic=topic, flush=True)
    return OpenLineageClient(transport=KafkaTransport(config))


def run_event(job: str, run_no: int, state: RunState = RunState.COMPLETE) -> RunEvent:
    """Run ``run_no`` of ``job``: reads mart.src, writes ``mart.<job>_v<run_no>`` (each run writes anew)."""
    schema = schema_dataset.SchemaDatasetFacet(
        fields=[schema_dataset.SchemaDatasetFacetFields(name="id", type="bigint")]
    )
    return RunEvent(
        eventType=state,
        eventTime=(T0 + timedelta(minutes=run_no)).isoformat(),
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace=NAMESPACE, name=job),
        inputs=[InputDataset(namespace="hive://warehouse", name="mart.src", facets={"schema": schema})],
        outputs=[
            OutputDataset(
                namespace="hive://warehouse", name=f"mart.{job}_v{run_no}", facets={"schema": schema}
            )
        ],
        producer="https://github.com/OpenLineage/OpenLineage/tree/1.0.0/client/python",
    )


def committed_vs_end(bootstrap: str, group: str, topic: str) -> list[tuple[int, int, int]]:
    """(partition, committed offset, end offset) of every partition of ``topic`` for ``group``."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        meta = consumer.list_topics(topic, timeout=30)
        parts = sorted(meta.topics[topic].partitions)
        committed = consumer.committed([TopicPartition(topic, p) for p in parts], timeout=30)
        out = []
        for tp in committed:
            _low, high = consumer.get_watermark_offsets(TopicPartition(topic, tp.partition), timeout=30)
            out.append((tp.partition, tp.offset, high))
        return out
    finally:
        consumer.close()


def at_end(bootstrap: str, group: str, topic: str) -> bool:
    return all(c == end for _p, c, end in committed_vs_end(bootstrap, group, topic))


def wait_for(cond: Callable[[], Any], timeout: float = 60.0, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())
