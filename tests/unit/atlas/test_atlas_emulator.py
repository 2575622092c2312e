"""The client against the emulator: in-process (EmulatorAdapter) and over HTTP, with injected faults."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from atlas_test_support import SleepRecorder

from atlas_sync.atlas import AtlasClient, AuthError, RetryPolicy, ServerError, TransportError
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client

DS = "acl_ds"
PROC = "acl_proc"
TYPEDEFS = {
    "entityDefs": [
        {"name": DS, "superTypes": ["DataSet"], "attributeDefs": []},
        {"name": PROC, "superTypes": ["Process"], "attributeDefs": []},
    ]
}
BULK = "/api/atlas/v2/entity/bulk"


def ds(n: int) -> dict[str, Any]:
    return {"typeName": DS, "guid": f"-{n}", "attributes": {"qualifiedName": f"ds{n}@t", "name": f"ds{n}"}}


def proc(n: int, inputs: list[int], outputs: list[int]) -> dict[str, Any]:
    return {
        "typeName": PROC,
        "guid": f"-{n}",
        "attributes": {
            "qualifiedName": f"p{n}@t",
            "name": f"p{n}",
            "inputs": [{"guid": f"-{i}", "typeName": DS} for i in inputs],
            "outputs": [{"guid": f"-{o}", "typeName": DS} for o in outputs],
        },
    }


@pytest.fixture
def emu() -> Emulator:
    return Emulator(None)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def client(emu: Emulator, sleeps: SleepRecorder) -> AtlasClient:
    policy = RetryPolicy(max_attempts=4, sleep=sleeps, rng=random.Random(3))
    c = embedded_client(emulator=emu, retry=policy)
    c.create_typedefs(TYPEDEFS)
    emu.clear_log()
    return c


def requests_to(emu: Emulator, path: str) -> list[Any]:
    return [r for r in emu.request_log if r.path.startswith(path)]


def test_embedded_client_describes_its_target(tmp_path: Any) -> None:
    client = embedded_client(tmp_path / "state")
    assert client.status() == "ACTIVE"
    assert (tmp_path / "state" / "atlas.db").is_file()
    assert "embedded emulator" in client.target and "atlas.db" in client.target


def test_batched_upsert_links_later_batches_to_earlier_placeholders(
    client: AtlasClient, emu: Emulator
) -> None:
    result = client.upsert_entities([ds(1), ds(2), proc(3, inputs=[1], outputs=[2])], batch_size=2)
    assert len(requests_to(emu, BULK)) == 2
    g = result.guid_assignments
    assert set(g) == {"-1", "-2", "-3"}
    assert sorted(result.created_guids) == sorted(g.values())
    process = client.get_entity(g["-3"])
    assert process is not None
    assert [r["guid"] for r in process["relationshipAttributes"]["inputs"]] == [g["-1"]]
    assert [r["guid"] for r in process["relationshipAttributes"]["outputs"]] == [g["-2"]]
    info = client.lineage(g["-1"], direction="OUTPUT", depth=1)
    assert {"fromEntityId": g["-1"], "toEntityId": g["-3"]}.items() <= info["relations"][0].items()


def test_repeated_upsert_matches_by_qualified_name(client: AtlasClient) -> None:
    first = client.upsert_entities([ds(1), ds(2)])
    again = client.upsert_entities([ds(1), ds(2)])
    assert again.created == [] and again.updated == []  # unchanged: skipped by Atlas
    assert again.guid_assignments == first.guid_assignments


def test_reads_by_guid_and_unique_attribute(client: AtlasClient) -> None:
    g = client.upsert_entities([ds(i) for i in range(1, 6)]).guid_assignments
    guids = [g[f"-{i}"] for i in range(1, 6)]
    got = client.get_entities([*guids, "00000000-0000-4000-8000-000000000000"])
    assert sorted(e["guid"] for e in got) == sorted(guids)
    by_qn = client.get_entities_by_unique(DS, ["ds1@t", "ds4@t", "missing@t"])
    assert sorted(e["attributes"]["qualifiedName"] for e in by_qn) == ["ds1@t", "ds4@t"]
    one = client.get_entity_by_unique(DS, "ds2@t")
    assert one is not None and one["guid"] == g["-2"]
    assert client.get_entity_by_unique(DS, "nope@t") is None


def test_search_pages_through_everything(client: AtlasClient, emu: Emulator) -> None:
    client.upsert_entities([ds(i) for i in range(1, 8)])
    emu.clear_log()
    flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@t"}
    found = list(client.search_basic(DS, entity_filters=flt, page_size=3, sort_by="name"))
    assert sorted(h["attributes"]["qualifiedName"] for h in found) == sorted(f"ds{i}@t" for i in range(1, 8))
    assert len(requests_to(emu, "/api/atlas/v2/search/basic")) == 3  # 3 + 3 + 1


def test_delete_then_purge(client: AtlasClient) -> None:
    g = client.upsert_entities([ds(1), ds(2)]).guid_assignments
    deleted = client.delete_entities([g["-1"]])
    assert deleted.deleted_guids == [g["-1"]]
    assert [h["guid"] for h in client.search_basic(DS)] == [g["-2"]]  # deleted ones excluded
    assert {h["guid"] for h in client.search_basic(DS, exclude_deleted=False)} == {g["-1"], g["-2"]}
    purged = client.purge_entities([g["-1"], g["-2"]])  # ACTIVE -2 is ignored by Atlas
    assert purged.purged_guids == [g["-1"]]
    assert client.get_entity(g["-1"]) is None
    assert client.get_entity(g["-2"]) is not None


def test_typedef_calls_round_trip(client: AtlasClient) -> None:
    names = {h["name"] for h in client.get_typedef_headers()}
    assert {DS, PROC, "DataSet", "Process"} <= names
    assert client.get_typedef_by_name(DS)["superTypes"] == ["DataSet"]
    assert [d["name"] for d in client.get_typedefs(type_="ENTITY", supertype="DataSet")["entityDefs"]].count(
        DS
    ) == 1
    client.delete_typedefs({"entityDefs": [{"name": PROC}]})
    assert client.get_typedef_by_name(PROC) is None


# ------------------------------------------------------------------ injected faults


def test_injected_503_is_retried(client: AtlasClient, emu: Emulator, sleeps: SleepRecorder) -> None:
    emu.inject_fault("status", status=503, at=1, path_prefix=BULK)
    result = client.upsert_entities([ds(1)])
    assert result.guid_assignments.keys() == {"-1"}
    assert [r.status for r in requests_to(emu, BULK)] == [503, 200]
    assert len(sleeps.waits) == 1
    assert client.stats["entity_write"].retries == 1


def test_injected_429_waits_retry_after(client: AtlasClient, emu: Emulator, sleeps: SleepRecorder) -> None:
    emu.inject_fault("status", status=429, retry_after=3, at=1, path_prefix="/api/atlas/admin/status")
    assert client.status() == "ACTIVE"
    assert sleeps.waits == [3.0]


@pytest.mark.parametrize("kind", ["reset", "timeout", "lost_response"])
def test_transport_faults_on_upsert_are_retried_without_duplicates(
    client: AtlasClient, emu: Emulator, kind: str
) -> None:
    emu.inject_fault(kind, at=1, path_prefix=BULK)
    result = client.upsert_entities([ds(1), ds(2)])
    assert set(result.guid_assignments) == {"-1", "-2"}
    assert client.stats["entity_write"].retries == 1
    # However often the batch was applied, each qualifiedName exists once.
    names = [h["attributes"]["qualifiedName"] for h in client.search_basic(DS, exclude_deleted=False)]
    assert sorted(names) == ["ds1@t", "ds2@t"]


def test_lost_typedef_create_answer_is_recovered(client: AtlasClient, emu: Emulator) -> None:
    emu.inject_fault("lost_response", at=1, path_prefix="/api/atlas/v2/types/typedefs", method="POST")
    out = client.create_typedefs({"entityDefs": [{"name": "acl_more", "superTypes": ["DataSet"]}]})
    assert [d["name"] for d in out["entityDefs"]] == ["acl_more"]


def test_persistent_fault_gives_up_with_server_error(client: AtlasClient, emu: Emulator) -> None:
    emu.inject_fault("status", status=500, probability=1.0, path_prefix=BULK)
    with pytest.raises(ServerError) as info:
        client.upsert_entities([ds(1)])
    assert len(requests_to(emu, BULK)) == 4
    assert info.value.status == 500


def test_persistent_timeout_gives_up_with_transport_error(client: AtlasClient, emu: Emulator) -> None:
    emu.inject_fault("timeout", probability=1.0, path_prefix="/api/atlas/v2/types")
    with pytest.raises(TransportError):
        client.get_typedef_headers()
    assert client.stats["typedef_read"].requests == 4


def test_random_faults_still_converge(client: AtlasClient, emu: Emulator) -> None:
    emu.inject_fault("status", status=503, probability=0.3, seed=11)
    emu.inject_fault("lost_response", probability=0.2, seed=12, path_prefix=BULK)
    client.retry.max_attempts = 12
    entities = [ds(i) for i in range(1, 31)] + [
        proc(100 + i, inputs=[i], outputs=[i + 1]) for i in range(1, 30)
    ]
    result = client.upsert_entities(entities, batch_size=7)
    emu.clear_faults()
    assert len(result.guid_assignments) == len(entities)
    datasets = [h["attributes"]["qualifiedName"] for h in client.search_basic(DS, exclude_deleted=False)]
    processes = [h["attributes"]["qualifiedName"] for h in client.search_basic(PROC, exclude_deleted=False)]
    assert sorted(datasets) == sorted(f"ds{i}@t" for i in range(1, 31))
    assert sorted(processes) == sorted(f"p{100 + i}@t" for i in range(1, 30))


# ------------------------------------------------------------------ over HTTP


@pytest.fixture
def http_emu() -> Iterator[tuple[Emulator, Any]]:
    from atlas_sync.emulator import serve

    emu = Emulator(None)
    server = serve(emu, host="127.0.0.1", port=0)
    try:
        yield emu, server
    finally:
        server.shutdown()


def test_client_over_http(http_emu: tuple[Emulator, Any], sleeps: SleepRecorder) -> None:
    emu, server = http_emu
    client = AtlasClient(server.url, auth=("admin", "admin"), retry=RetryPolicy(sleep=sleeps))
    assert client.status() == "ACTIVE"
    assert client.version()["Version"]
    client.create_typedefs(TYPEDEFS)
    emu.inject_fault("reset", at=1, path_prefix=BULK)
    result = client.upsert_entities([ds(1), ds(2), proc(3, [1], [2])], batch_size=2)
    assert len(result.guid_assignments) == 3
    assert client.stats["entity_write"].retries == 1


def test_wrong_password_over_http_is_auth_error(
    http_emu: tuple[Emulator, Any], caplog: pytest.LogCaptureFixture
) -> None:
    import base64
    import logging

    _, server = http_emu
    caplog.set_level(logging.DEBUG)  # urllib3's connection logs included
    client = AtlasClient(server.url, auth=("admin", "wrong-pw-123"), retry=RetryPolicy.none())
    assert client.status() == "ACTIVE"  # /admin/status needs no credentials
    with pytest.raises(AuthError) as info:
        client.version()
    assert info.value.status == 401
    assert server.url in (info.value.hint or "")
    assert "urllib3" in caplog.text or "/admin/version" in caplog.text  # logging was captured
    for secret in ("wrong-pw-123", base64.b64encode(b"admin:wrong-pw-123").decode()):
        assert secret not in caplog.text
        assert secret not in str(info.value) + repr(info.value) + (info.value.hint or "")


def test_lost_typedef_delete_answer_counts_as_done(client: AtlasClient, emu: Emulator) -> None:
    emu.inject_fault("lost_response", at=1, path_prefix="/api/atlas/v2/types/typedef/name/", method="DELETE")
    client.delete_typedef_by_name(PROC)
    assert client.get_typedef_by_name(PROC) is None
    emu.inject_fault("lost_response", at=1, path_prefix="/api/atlas/v2/types/typedefs", method="DELETE")
    client.delete_typedefs({"entityDefs": [{"name": DS}]})
    assert client.get_typedef_by_name(DS) is None


def test_delete_of_unknown_type_is_still_not_found(client: AtlasClient) -> None:
    from atlas_sync.atlas import NotFoundError

    with pytest.raises(NotFoundError):
        client.delete_typedef_by_name("acl_never_existed")


def test_create_relationship_adds_an_input_and_a_duplicate_is_a_conflict() -> None:
    from atlas_sync.atlas import ConflictError

    client = embedded_client(emulator=Emulator(None))
    client.create_typedefs(TYPEDEFS)
    res = client.upsert_entities([ds(1), ds(2), proc(3, [1], [])])
    g = res.guid_assignments
    body = {
        "typeName": "dataset_process_inputs",
        "end1": {"guid": g["-3"], "typeName": PROC},
        "end2": {"guid": g["-2"], "typeName": DS},
    }
    client.create_relationship(body)
    p = client.get_entity(g["-3"])
    assert p is not None
    active = {r["guid"] for r in p["relationshipAttributes"]["inputs"] if r["relationshipStatus"] == "ACTIVE"}
    assert active == {g["-1"], g["-2"]}
    with pytest.raises(ConflictError):
        client.create_relationship(body)
