"""Entity upserts in batches: split by count and bytes, placeholders rewritten across batches."""

from __future__ import annotations

import json
from typing import Any

import pytest
import responses
from atlas_test_support import API

from atlas_sync.atlas import AtlasClient, AtlasError, NotFoundError
from atlas_sync.atlas.mutation import MutationResult, entity_size, order_for_batching, split_batches

BULK = API + "/v2/entity/bulk"


def ds(n: int, **attrs: Any) -> dict[str, Any]:
    return {
        "typeName": "demo_dataset",
        "guid": f"-{n}",
        "attributes": {"qualifiedName": f"ds{n}@demo", "name": f"ds{n}", **attrs},
    }


def proc(n: int, inputs: list[int], outputs: list[int]) -> dict[str, Any]:
    return {
        "typeName": "demo_process",
        "guid": f"-{n}",
        "attributes": {
            "qualifiedName": f"p{n}@demo",
            "name": f"p{n}",
            "inputs": [{"guid": f"-{i}", "typeName": "demo_dataset"} for i in inputs],
            "outputs": [{"guid": f"-{o}", "typeName": "demo_dataset"} for o in outputs],
        },
    }


class FakeAtlas:
    """Answers bulk POSTs like Atlas: every placeholder becomes 'g<n>' and is reported as created;
    assigned guids referenced by an entity are reported as updated (the other end of a relationship)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        self.bodies.append(body)
        assigned: dict[str, str] = {}
        created, updated = [], []
        for e in body["entities"]:
            if e["guid"].startswith("-"):
                assigned[e["guid"]] = "g" + e["guid"][1:]
                created.append({"guid": assigned[e["guid"]], "typeName": e["typeName"]})
            for ref in e["attributes"].get("inputs", []) + e["attributes"].get("outputs", []):
                if not ref["guid"].startswith("-"):
                    updated.append({"guid": ref["guid"], "typeName": ref["typeName"]})
                elif ref["guid"] not in {x["guid"] for x in body["entities"]}:
                    return 404, {}, json.dumps({"errorCode": "ATLAS-404-00-00A"})
        mutated: dict[str, Any] = {"CREATE": created}
        if updated:
            mutated["UPDATE"] = updated
        return 200, {}, json.dumps({"mutatedEntities": mutated, "guidAssignments": assigned})


@pytest.fixture
def fake() -> Any:
    with responses.RequestsMock() as mock:
        atlas = FakeAtlas()
        mock.add_callback(responses.POST, BULK, callback=atlas)
        yield atlas


def test_batches_split_by_entity_count(client: AtlasClient, fake: FakeAtlas) -> None:
    result = client.upsert_entities([ds(i) for i in range(1, 6)], batch_size=2)
    assert [len(b["entities"]) for b in fake.bodies] == [2, 2, 1]
    assert result.requests == 3
    assert result.guid_assignments == {f"-{i}": f"g{i}" for i in range(1, 6)}
    assert result.created_guids == [f"g{i}" for i in range(1, 6)]


def test_batches_split_by_payload_bytes(client: AtlasClient, fake: FakeAtlas) -> None:
    entities = [ds(i, description="x" * 1000) for i in range(1, 11)]
    one = entity_size(entities[0])
    client.upsert_entities(entities, batch_size=500, max_bytes=3 * one + 10)
    assert [len(b["entities"]) for b in fake.bodies] == [3, 3, 3, 1]
    for body in fake.bodies:
        assert len(json.dumps(body["entities"], separators=(",", ":"))) <= 3 * one + 10


def test_oversized_entity_is_sent_alone(client: AtlasClient, fake: FakeAtlas) -> None:
    client.upsert_entities([ds(1), ds(2, description="y" * 5000), ds(3)], max_bytes=2000)
    assert [len(b["entities"]) for b in fake.bodies] == [1, 1, 1]


def test_placeholders_of_earlier_batches_are_rewritten_to_real_guids(
    client: AtlasClient, fake: FakeAtlas
) -> None:
    entities = [ds(1), ds(2), proc(3, inputs=[1], outputs=[2])]
    result = client.upsert_entities(entities, batch_size=2)
    second = fake.bodies[1]["entities"][0]
    assert second["guid"] == "-3"  # its own placeholder is kept
    assert second["attributes"]["inputs"] == [{"guid": "g1", "typeName": "demo_dataset"}]
    assert second["attributes"]["outputs"] == [{"guid": "g2", "typeName": "demo_dataset"}]
    # The caller's dicts are not modified.
    assert entities[2]["attributes"]["inputs"][0]["guid"] == "-1"
    # g1/g2 were created by batch 1 and reported updated by batch 2: listed once, as created.
    assert result.created_guids == ["g1", "g2", "g3"]
    assert result.updated_guids == []


def test_forward_references_are_reordered_so_batches_never_dangle(
    client: AtlasClient, fake: FakeAtlas
) -> None:
    # The process comes first but references datasets listed after it.
    client.upsert_entities([proc(3, inputs=[1], outputs=[2]), ds(1), ds(2)], batch_size=1)
    assert [b["entities"][0]["guid"] for b in fake.bodies] == ["-1", "-2", "-3"]


def test_failure_midway_reports_what_was_applied(client: AtlasClient) -> None:
    with responses.RequestsMock() as mock:
        mock.post(
            BULK, json={"mutatedEntities": {"CREATE": [{"guid": "g1"}]}, "guidAssignments": {"-1": "g1"}}
        )
        mock.post(BULK, status=404, json={"errorCode": "ATLAS-404-00-007", "errorMessage": "missing"})
        with pytest.raises(NotFoundError) as info:
            client.upsert_entities([ds(1), ds(2)], batch_size=1)
    partial = info.value.partial
    assert isinstance(partial, MutationResult)
    assert partial.guid_assignments == {"-1": "g1"}
    assert "batch 2 failed; 1 earlier batches were applied" in (info.value.hint or "")


def test_empty_upsert_sends_nothing(client: AtlasClient) -> None:
    with responses.RequestsMock():  # any request would fail: none is registered
        result = client.upsert_entities([])
    assert result.requests == 0 and result.guid_assignments == {}


def test_noop_response_without_mutated_entities_is_merged(client: AtlasClient) -> None:
    with responses.RequestsMock() as mock:
        mock.post(BULK, json={"guidAssignments": {"-1": "g1"}})
        result = client.upsert_entities([ds(1)])
    assert result.created == [] and result.updated == []
    assert result.guid_assignments == {"-1": "g1"}


def test_split_batches_keeps_order_and_every_entity() -> None:
    entities = [ds(i) for i in range(1, 8)]
    batches = list(split_batches(entities, 3, 10**9))
    assert [e for b in batches for e in b] == entities
    assert [len(b) for b in batches] == [3, 3, 1]


def test_order_for_batching_leaves_cycles_in_given_order() -> None:
    a = {"typeName": "t", "guid": "-1", "attributes": {"peer": {"guid": "-2"}}}
    b = {"typeName": "t", "guid": "-2", "attributes": {"peer": {"guid": "-1"}}}
    c = {"typeName": "t", "guid": "-3", "attributes": {}}
    assert order_for_batching([a, b, c]) == [c, a, b]
    assert order_for_batching([c, a]) == [c, a]


def test_batches_are_sized_on_the_bytes_sent_after_guids_replace_placeholders(client: AtlasClient) -> None:
    # Real guids (36 characters) are longer than placeholders ("-12"): a batch sized before the
    # replacement would go over the limit once references to earlier batches are rewritten.
    bodies: list[bytes] = []

    def atlas(request: Any) -> tuple[int, dict[str, str], str]:
        bodies.append(request.body)
        body = json.loads(request.body)
        assigned = {e["guid"]: f"{int(e['guid'][1:]):036d}" for e in body["entities"] if e["guid"][0] == "-"}
        return 200, {}, json.dumps({"guidAssignments": assigned})

    entities = [ds(i) for i in range(1, 21)] + [proc(100 + i, list(range(1, 21)), [i]) for i in range(1, 6)]
    limit = 2 * entity_size(proc(100, list(range(1, 21)), [1])) + 100
    with responses.RequestsMock() as mock:
        mock.add_callback(responses.POST, BULK, callback=atlas)
        client.upsert_entities(entities, max_bytes=limit)
    procs = [b for b in bodies if b"demo_process" in b]
    assert procs and all(b'"guid":"-1"' not in b for b in procs)  # references were rewritten
    assert all(len(b) <= limit + 20 for b in bodies)  # + the '{"entities":[]}' envelope


def test_a_413_splits_the_batch_and_names_an_entity_too_big_alone() -> None:
    from atlas_sync.emulator import Emulator
    from atlas_sync.emulator.http import serve

    emu = Emulator()
    server = serve(emu, max_body_bytes=3000)
    try:
        client = AtlasClient(server.url, auth=("admin", "admin"), retry=None)
        client.create_typedefs({"entityDefs": [{"name": "demo_dataset", "superTypes": ["DataSet"]}]})
        small = [ds(i, description="d" * 300) for i in range(1, 9)]  # ~3.2 KB together
        result = client.upsert_entities(small)
        assert len(result.guid_assignments) == 8 and result.requests >= 2
        with pytest.raises(AtlasError) as info:
            client.upsert_entities([ds(20), ds(21, description="x" * 5000)])
        assert info.value.status == 413
        assert "demo_dataset 'ds21@demo'" in str(info.value)
        assert "earlier batches were applied" in (info.value.hint or "")
    finally:
        server.shutdown()
        emu.close()


@pytest.mark.parametrize(
    "body",
    [
        # Atlas's order: the entity headers, then the assignments (read without parsing the headers)
        {"mutatedEntities": {"CREATE": [{"guid": "g1", "attributes": {"m": {"guidAssignments": {"-9": "x"}}}}]},
         "guidAssignments": {"-1": "g1"}},
        # another order, or a key of that name inside an attribute: the whole body is parsed
        {"guidAssignments": {"-1": "g1"},
         "mutatedEntities": {"CREATE": [{"guid": "g1", "attributes": {"guidAssignments": {"-9": "x"}}}]}},
        {"mutatedEntities": {"CREATE": [{"guid": "g1", "attributes": {"qualifiedName": '"guidAssignments": {"-9":"x"}}'}}]},
         "guidAssignments": {"-1": "g1"}},
    ],
)  # fmt: skip
def test_an_upsert_without_headers_keeps_exactly_the_guid_assignments(body: dict[str, Any]) -> None:
    from atlas_sync.atlas.mutation import guid_assignments_only

    for raw in (json.dumps(body), json.dumps(body, indent=2)):
        assert guid_assignments_only(raw.encode()) == {"guidAssignments": {"-1": "g1"}}
    assert guid_assignments_only(b'{"mutatedEntities": {"UPDATE": []}}') == {"guidAssignments": {}}


@responses.activate
def test_upsert_entities_with_headers_false_returns_the_assignments_and_no_headers() -> None:
    answer = {
        "mutatedEntities": {"CREATE": [{"guid": "g1", "typeName": "demo_dataset"}]},
        "guidAssignments": {"-1": "g1"},
    }
    responses.add(responses.POST, BULK, json=answer)
    client = AtlasClient("http://atlas.test:21000", auth=("u", "p"))
    res = client.upsert_entities([ds(1)], headers=False)
    assert res.guid_assignments == {"-1": "g1"} and res.created == [] and res.requests == 1
    responses.add(responses.POST, BULK, json=answer)
    assert client.upsert_entities([ds(1)]).created_guids == ["g1"]


def test_a_batch_sent_unordered_in_one_request_is_put_in_dependency_order_when_a_413_splits_it() -> None:
    from atlas_sync.emulator import Emulator
    from atlas_sync.emulator.http import serve

    emu = Emulator()
    server = serve(emu, max_body_bytes=1500)
    try:
        client = AtlasClient(server.url, auth=("admin", "admin"), retry=None)
        client.create_typedefs({"entityDefs": [{"name": "demo_dataset", "superTypes": ["DataSet"]}]})
        client.create_typedefs({"entityDefs": [{"name": "demo_process", "superTypes": ["Process"]}]})
        # the process comes first and refers to datasets sent after it; all fit one request of 4 MB
        entities = [proc(9, [1, 2], [3])] + [ds(i, description="d" * 400) for i in (1, 2, 3)]
        result = client.upsert_entities(entities)
        assert result.requests >= 2, "the server's 413 split the batch"
        assert set(result.guid_assignments) == {"-9", "-1", "-2", "-3"}
    finally:
        server.shutdown()
        emu.close()
