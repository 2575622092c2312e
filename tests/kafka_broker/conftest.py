"""A real Kafka broker for the tests in this folder.

``KAFKA_BOOTSTRAP_SERVERS`` points at a running broker (.ci/run starts one for the whole run); without it the
session starts its own (``tests.support.real_kafka``: Kafka's jars from Maven Central, KRaft on
127.0.0.1) and stops it at the end. Only an infrastructure failure (nothing to download the jars or a
Java from) skips, with the reason; a broker that was installed but does not start fails the tests.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from tests.support.real_kafka import Broker, InfrastructureError, default_layout


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    explicit = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if explicit:
        yield explicit
        return
    broker = Broker(default_layout(home=tmp_path_factory.mktemp("kafka-home")), log=lambda _msg: None)
    try:
        info = broker.start()
    except InfrastructureError as exc:
        pytest.skip(f"real Kafka broker not available (infrastructure): {exc}")
    try:
        yield str(info["bootstrap"])
    finally:
        broker.stop()


@pytest.fixture
def topic_name() -> str:
    """A topic no other test uses (tests share one broker)."""
    return f"ol-{uuid.uuid4().hex[:12]}"
