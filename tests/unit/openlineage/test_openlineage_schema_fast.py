"""The fast validator (jsonschema-rs) answers "valid?" exactly as jsonschema does for the same schemas:
it only decides that an event is valid, jsonschema still words why one is not."""

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atlas_sync.lineage.openlineage import schema

DATA = Path(__file__).resolve().parents[2] / "data" / "openlineage"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=12,
)
BASE: dict[str, Any] = {
    "eventType": "COMPLETE",
    "eventTime": "2026-12-01T00:00:00Z",
    "run": {"runId": "r1"},
    "job": {"namespace": "ns", "name": "j", "facets": {"sql": {"query": "select 1"}}},
    "inputs": [
        {"namespace": "postgres://h:1", "name": "db.t", "facets": {"schema": {"fields": [{"name": "a"}]}}}
    ],
    "outputs": [{"namespace": "s3://b", "name": "out", "facets": {}}],
}
# where a mutation lands: the core keys and the facets the strict schemas check
SPOTS = [
    ("eventType",), ("eventTime",), ("run",), ("run", "runId"), ("job",), ("job", "name"),
    ("job", "facets"), ("job", "facets", "sql"), ("job", "facets", "sql", "query"), ("inputs",),
    ("inputs", 0), ("inputs", 0, "namespace"), ("inputs", 0, "facets", "schema", "fields"),
    ("inputs", 0, "facets", "schema", "fields", 0, "name"), ("outputs", 0, "facets"),
]  # fmt: skip


def agree(event: Any) -> None:
    kind = schema.event_kind(event) if isinstance(event, dict) else None
    if kind is None:
        return
    for fast, slow in ((schema._FAST_CORE, schema._CORE), (schema._FAST_STRICT, schema._STRICT)):
        assert schema._fast_valid(fast[kind], event) == slow[kind].is_valid(event), event


def test_the_two_validators_agree_on_the_test_data_s_events() -> None:
    n = 0
    for path in sorted(DATA.rglob("*.json*")):
        text = path.read_text()
        if path.suffix == ".jsonl":
            evs = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
            evs = data if isinstance(data, list) else [data]
        for ev in evs:
            agree(ev)
            n += 1
    assert n >= 10


def test_a_number_beyond_64_bits_is_left_to_jsonschema() -> None:
    agree({**BASE, "run": {"runId": 10**40}})
    agree({**BASE, "extra": 10**40})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spot=st.sampled_from(SPOTS), value=json_values)
def test_the_two_validators_agree_on_mutated_events(spot: tuple[Any, ...], value: Any) -> None:
    event = json.loads(json.dumps(BASE))
    node = event
    for key in spot[:-1]:
        node = node[key]
    node[spot[-1]] = value
    agree(event)
