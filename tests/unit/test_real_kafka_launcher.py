"""Pure parts of the real-Kafka launcher (the broker itself is exercised by tests/kafka)."""

from __future__ import annotations

import base64
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.real_kafka import cluster_id, is_our_kafka, pom_xml, server_properties


def test_server_properties_listen_on_loopback_only_as_one_kraft_node(tmp_path: Path) -> None:
    props = dict(
        line.split("=", 1) for line in server_properties(1, 9092, 9093, tmp_path).splitlines() if line
    )
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:9093"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["log.dirs"] == str(tmp_path)


def test_pom_asks_for_the_scala_2_13_broker_of_the_given_version() -> None:
    root = ET.fromstring(pom_xml("4.1.1"))
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    deps = {
        (d.findtext("m:artifactId", namespaces=ns), d.findtext("m:version", namespaces=ns))
        for d in root.iterfind("m:dependencies/m:dependency", ns)
    }
    assert ("kafka_2.13", "4.1.1") in deps


def test_cluster_id_is_a_uuid_in_url_safe_base64() -> None:
    value = cluster_id()
    assert len(value) == 22
    assert len(base64.urlsafe_b64decode(value + "==")) == 16
    assert cluster_id() != value


def test_a_cluster_id_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    # kafka-storage format -t -AbC... reads the id as an option ("expected one argument")
    draws = iter([uuid.UUID(bytes=b"\xf8" + bytes(15)), uuid.UUID(bytes=b"\x10" + bytes(15))])
    monkeypatch.setattr(uuid, "uuid4", lambda: next(draws))
    assert cluster_id() == base64.urlsafe_b64encode(b"\x10" + bytes(15)).decode().rstrip("=")


def test_only_a_broker_of_this_home_is_ours(tmp_path: Path) -> None:
    cmd = ["java", "-cp", "x", "kafka.Kafka", str(tmp_path / "server.properties")]
    assert is_our_kafka(cmd, tmp_path)
    assert not is_our_kafka(cmd, tmp_path / "other")
    assert not is_our_kafka(["sleep", "100"], tmp_path)
    assert not is_our_kafka(None, tmp_path)
