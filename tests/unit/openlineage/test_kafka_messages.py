"""Kafka message values as the consumer reads them (the worker itself runs on a real broker in
tests/kafka_broker)."""

from __future__ import annotations

import json
from pathlib import Path

from atlas_sync.openlineage_server.consumer import Poison, dead_letter_record, decode_message

SPARK = Path(__file__).parents[2] / "data" / "openlineage" / "spark_complete.json"


def test_an_openlineage_event_is_decoded() -> None:
    event = decode_message(SPARK.read_bytes(), where="t[0]@5")
    assert isinstance(event, dict) and event["eventType"] == "COMPLETE"


def test_every_kind_of_bad_value_is_poison_with_a_reason_and_never_raises() -> None:
    cases = {
        None: "empty message",
        b"\xc3\x28": "value is not UTF-8",
        b"{": "invalid JSON",
        b"[" * 100_000 + b"]" * 100_000: "JSON nested too deeply",
        b"42": "not an OpenLineage event",
        json.dumps({"eventType": "COMPLETE", "job": {"namespace": "n"}}).encode(): "not an OpenLineage event",
    }
    for value, reason in cases.items():
        result = decode_message(value, where="t[0]@1")
        assert isinstance(result, Poison), value
        assert result.reason.startswith(reason), result.reason


def test_the_validation_error_names_where_the_message_came_from() -> None:
    result = decode_message(b'{"eventType": "COMPLETE"}', where="openlineage[3]@1234")
    assert isinstance(result, Poison) and "openlineage[3]@1234" in result.reason


class Msg:
    def __init__(self, value: bytes | None, key: bytes | None) -> None:
        self._value, self._key = value, key

    def value(self) -> bytes | None:
        return self._value

    def key(self) -> bytes | None:
        return self._key

    def topic(self) -> str:
        return "ol"

    def partition(self) -> int:
        return 2

    def offset(self) -> int:
        return 17


def test_dead_letter_record_keeps_the_message_and_where_it_was() -> None:
    rec = dead_letter_record(Msg(b"{bad", b"run:ns/job"), "invalid JSON")
    assert {k: rec[k] for k in ("reason", "topic", "partition", "offset", "key", "value")} == {
        "reason": "invalid JSON",
        "topic": "ol",
        "partition": 2,
        "offset": 17,
        "key": "run:ns/job",
        "value": "{bad",
    }
    binary = dead_letter_record(Msg(b"\xff", None), "value is not UTF-8")
    assert binary["value_base64"] == "/w==" and binary["key"] is None and "value" not in binary
