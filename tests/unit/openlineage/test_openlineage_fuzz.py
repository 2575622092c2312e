"""Property tests: whatever a client sends, the endpoint answers 201 or a 4xx, and the reader either
builds a sound graph or raises InputError - never anything else."""

import contextlib
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atlas_sync.errors import InputError
from atlas_sync.lineage.openlineage import NamespaceMap, events_to_graph
from atlas_sync.openlineage_server import EndpointConfig, LineageEndpoint, MemoryJournal

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
names = st.text(min_size=1, max_size=12)
dataset = st.fixed_dictionaries(
    {"namespace": st.sampled_from(["postgres://h:1", "s3://b", "file", "kafka://k", "weird"]), "name": names}
)
events = st.fixed_dictionaries(
    {
        "eventType": st.sampled_from(["START", "COMPLETE", "FAIL"]),
        "eventTime": st.sampled_from(["2026-01-01T00:00:00Z", "not a time"]),
        "run": st.fixed_dictionaries({"runId": names}),
        "job": st.fixed_dictionaries({"namespace": names, "name": names}),
        "inputs": st.lists(dataset, max_size=3),
        "outputs": st.lists(dataset, max_size=3),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=json_values)
def test_submit_answers_201_or_4xx_for_any_json(body, tmp_path_factory):
    ep = LineageEndpoint(lambda g, j: None, EndpointConfig(journal_path=None))
    ep.journal = MemoryJournal(10_000)  # no worker needed: only the request path is under test
    ep._accepting = True
    status, _, payload = ep.submit(json.dumps(body).encode(), {})
    assert status in (200, 201, 400)
    assert isinstance(payload, dict)


@settings(max_examples=150, deadline=None)
@given(evs=st.lists(events, min_size=1, max_size=4))
def test_valid_events_always_give_a_sound_graph(evs):
    # any runId and eventTime: what --lenient-events lets through must convert soundly too
    g = events_to_graph(evs, lenient_events=True)
    assert g.check() == []
    assert {p.id for p in g.processes} <= {
        f"{e['job']['namespace']}/{e['job']['name']}".replace("@", "_") for e in evs
    }


@settings(max_examples=200, deadline=None)
@given(namespace=st.text(max_size=20), name=st.text(min_size=1, max_size=20))
def test_identity_is_total_and_deterministic(namespace, name):
    m = NamespaceMap({"postgres://*": "pg"})
    a, b = m.identity(namespace, name), m.identity(namespace, name)
    assert a == b and a.id


@settings(max_examples=100, deadline=None)
@given(body=json_values)
def test_reader_raises_only_input_errors(body, tmp_path_factory):
    from atlas_sync.lineage import registry

    f = tmp_path_factory.mktemp("ol") / "e.json"
    f.write_text(json.dumps(body))
    with contextlib.suppress(InputError):
        registry.get("openlineage").read([str(f)])
