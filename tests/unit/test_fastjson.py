"""atlas_sync.fastjson reads and writes the documents the standard library's json does, faster."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from atlas_sync import fastjson

VALUES: list[Any] = [
    {"typeName": "hive_table", "attributes": {"qualifiedName": "db.t@c", "name": "t", "n": 3, "ok": True}},
    {"é": "naïve ünïcode ✓ 😀", "ctl": '\x00\x01\n\t"\\/', "sep": "\u2028\u2029\x7f"},
    [1e-07, 1e16, 0.1, -0.0, 5e-324, 10**30, -(2**63), None, [], {}],
    {"nested": [[[{"a": [1, 2, {"b": None}]}]]]},
    "plain",
    12,
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_reads_back_as_json_dumps_does(value: Any) -> None:
    assert json.loads(fastjson.dumps(value)) == json.loads(json.dumps(value))
    assert json.loads(fastjson.dumps_text(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize("value", [v for v in VALUES if "1e-07" not in json.dumps(v)])
def test_dumps_is_compact_utf8_without_ascii_escapes(value: Any) -> None:
    # (byte-identical but for float spellings such as 1e-7: digests keep json for that reason)
    assert fastjson.dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("value", VALUES)
def test_loads_gives_what_json_loads_gives(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=2)):
        assert fastjson.loads(text) == json.loads(text)
        assert fastjson.loads(text.encode()) == json.loads(text)


def test_nan_and_infinity_are_written_and_read_as_json_does() -> None:
    value = [math.inf, -math.inf]
    assert fastjson.dumps(value) == b"[Infinity,-Infinity]"
    assert math.isnan(fastjson.loads(fastjson.dumps(float("nan"))))
    assert fastjson.loads("[Infinity,-Infinity]") == value


def test_a_lone_surrogate_goes_through_json() -> None:
    assert fastjson.loads('"\\ud800"') == "\ud800"
    assert fastjson.dumps_text("\ud800") == '"\\ud800"'
    assert fastjson.loads(fastjson.dumps_text({"s": "\ud800"})) == {"s": "\ud800"}
    with pytest.raises(UnicodeEncodeError):  # as json.dumps(...).encode() fails: UTF-8 cannot carry it
        fastjson.dumps("\ud800")


def test_duplicate_keys_keep_the_last_as_json_does() -> None:
    assert fastjson.loads('{"a": 1, "a": 2}') == json.loads('{"a": 1, "a": 2}') == {"a": 2}


def test_what_json_cannot_encode_is_refused() -> None:
    with pytest.raises((TypeError, ValueError)):
        fastjson.dumps({"a": object()})


def test_syntax_errors_raise_json_errors() -> None:
    with pytest.raises(json.JSONDecodeError):
        fastjson.loads('{"a": ')


@pytest.mark.parametrize(
    "raw",
    [b"\xef\xbb\xbf{}", b'{"a": NaN}', b'{"a": Infinity}', b'{"a": "\xff"}', b'{"a": }', b'"\\ud800"'],
    ids=["bom", "nan", "infinity", "bad-utf8", "syntax", "lone-surrogate"],
)
def test_loads_strict_refuses_what_is_not_strict_utf8_json(raw: bytes) -> None:
    with pytest.raises(ValueError):
        fastjson.loads_strict(raw)


def test_loads_strict_reads_utf8_json() -> None:
    raw = json.dumps(VALUES, ensure_ascii=False).encode()
    assert fastjson.loads_strict(raw) == json.loads(raw)
