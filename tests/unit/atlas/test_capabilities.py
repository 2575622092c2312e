"""The three Atlas clients (REST, the embedded emulator's, the ATLAS_HOOK one built by the factory) say
where they differ through ``capabilities``, and the hook client is built in ``atlas_sync.factory``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.atlas import AtlasClient
from atlas_sync.atlas.errors import BadRequestError
from atlas_sync.atlas.interface import Capabilities
from atlas_sync.errors import AtlasSyncError, ConfigError
from atlas_sync.factory import embedded_client, hook_client
from atlas_sync.reconcile.actual import search_roots


class Recording:
    """A Kafka producer that keeps what it is given (delivery is tested on a real Atlas's Kafka)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    def produce(self, topic: str, value: bytes, key: bytes, on_delivery: Any) -> None:
        self.sent.append((topic, value))
        on_delivery(None, None)

    def flush(self, timeout: float) -> int:
        return 0

    def poll(self, timeout: float) -> int:
        return 0


def test_a_rest_client_takes_the_servers_clock_from_its_date_header() -> None:
    assert AtlasClient("http://atlas:21000").capabilities == Capabilities(server_clock="date-header")


def test_the_embedded_emulators_client_shares_this_process_clock() -> None:
    caps = embedded_client(None).capabilities
    assert caps == Capabilities(server_clock="in-process")
    assert not caps.queued_writes and caps.purge and caps.relationship_writes


def test_the_hook_client_queues_writes_and_has_no_purge_or_relationship_write() -> None:
    client = hook_client(embedded_client(None), "kafka:9092", producer=Recording())
    assert client.capabilities == Capabilities(
        hook_transport=True,
        queued_writes=True,
        server_clock="in-process",
        relationship_writes=False,
        purge=False,
    )
    with pytest.raises(AtlasSyncError, match="relationship"):
        client.create_relationship({"typeName": "t", "end1": {}, "end2": {}})
    with pytest.raises(AtlasSyncError, match="purge"):
        client.purge_entities(["g1"])


def test_the_factory_builds_the_hook_client_with_its_topic_and_kafka_settings(tmp_path: Path) -> None:
    props = tmp_path / "client.properties"
    props.write_text("# security\nsecurity.protocol=SASL_SSL\nsasl.username = etl\n", encoding="utf-8")
    producer = Recording()
    rest = embedded_client(None)
    client = hook_client(rest, "kafka:9092", topic="MY_HOOK", kafka_config=props, producer=producer)
    assert client.rest is rest
    assert client.producer.config.bootstrap_servers == "kafka:9092"
    assert dict(client.producer.config.kafka_config) == {
        "security.protocol": "SASL_SSL",
        "sasl.username": "etl",
    }
    client.upsert_entities([{"typeName": "DataSet", "guid": "-1", "attributes": {"qualifiedName": "a@d"}}])
    [(topic, value)] = producer.sent
    assert topic == "MY_HOOK"
    assert json.loads(value)["message"]["type"] == "ENTITY_CREATE_V2"
    assert client.target.endswith("writes to Kafka topic MY_HOOK")


def test_a_kafka_settings_file_that_is_not_key_value_is_refused_without_showing_the_line(
    tmp_path: Path,
) -> None:
    props = tmp_path / "client.properties"
    props.write_text("sasl.password secret\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"client.properties:1: expected key=value") as err:
        hook_client(embedded_client(None), "kafka:9092", kafka_config=props, producer=Recording())
    assert "secret" not in str(err.value)


class Atlas21(AtlasClient):
    """Answers a basic search for joined type names as Atlas 2.1 does."""

    def __init__(self) -> None:
        super().__init__("http://atlas:21000")
        self.asked: list[str] = []

    def search_basic(self, type_name: str, **kw: Any) -> Any:
        self.asked.append(type_name)
        if "," in type_name:
            raise BadRequestError("HTTP 400", status=400, error_code="ATLAS-400-00-00A")
        return iter([{"guid": type_name, "typeName": type_name}])


@pytest.mark.parametrize("through_hook", [False, True], ids=["rest", "hook"])
def test_a_refused_joined_type_search_is_remembered_by_the_client(through_hook: bool) -> None:
    rest = Atlas21()
    client = hook_client(rest, "kafka:9092", producer=Recording()) if through_hook else rest
    assert client.capabilities.joined_type_search
    assert sorted(h["guid"] for h in search_roots(client, ["a", "b"])) == ["a", "b"]
    assert not client.capabilities.joined_type_search and not rest.capabilities.joined_type_search
    list(search_roots(client, ["a", "b"]))
    # joined once, then each type on its own (read at once: in any order)
    assert rest.asked[0] == "a,b" and sorted(rest.asked[1:]) == ["a", "a", "b", "b"]
