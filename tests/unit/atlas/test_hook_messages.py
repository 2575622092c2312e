"""Atlas hook notification messages built by the atlas-hook write path (format checked against Atlas's
``HookNotification`` / ``AtlasNotificationMessage`` sources; delivery is tested on a real Atlas in
tests/e2e/test_real_atlas_hook.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from atlas_sync.atlas.hook import (
    AtlasHookClient,
    HookConfig,
    HookError,
    HookProducer,
    delete_messages,
    entity_messages,
    envelope,
)
from atlas_sync.atlas.interface import Capabilities
from atlas_sync.errors import AtlasSyncError


def ds(guid: str, name: str, **refs: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "typeName": "lineage_dataset",
        "guid": guid,
        "attributes": {"qualifiedName": name},
    }
    if refs:
        body["relationshipAttributes"] = refs
    return body


def test_new_entities_go_in_a_create_message_and_existing_ones_in_a_full_update_message() -> None:
    a = ds("-1", "a@d")
    b = ds("3f6c-guid", "b@d", inputs=[{"guid": "-1", "typeName": "lineage_dataset"}])
    [create, update] = entity_messages([a, b], "etl-user")
    assert create == {
        "type": "ENTITY_CREATE_V2",
        "user": "etl-user",
        "entities": {"entities": [a], "referredEntities": {}},
    }
    assert update["type"] == "ENTITY_FULL_UPDATE_V2"
    # the update cannot refer to the create message's placeholder: it names the entity instead
    assert update["entities"]["entities"][0]["relationshipAttributes"]["inputs"] == [
        {"typeName": "lineage_dataset", "uniqueAttributes": {"qualifiedName": "a@d"}}
    ]


def test_messages_stay_under_the_size_limit_and_refer_across_messages_by_qualified_name() -> None:
    entities = [
        ds(f"-{i}", f"t{i:03d}@d", inputs=[{"guid": "-1", "typeName": "lineage_dataset"}])
        for i in range(1, 60)
    ]
    entities[0].pop("relationshipAttributes")
    limit = 2_000
    messages = entity_messages(entities, "u", max_bytes=limit)
    assert len(messages) > 3
    assert all(len(json.dumps(m, separators=(",", ":")).encode()) <= limit for m in messages)
    sent = [e for m in messages for e in m["entities"]["entities"]]
    assert [e["attributes"]["qualifiedName"] for e in sent] == [f"t{i:03d}@d" for i in range(1, 60)]
    first_guids = {e["guid"] for e in messages[0]["entities"]["entities"]}
    assert "-1" in first_guids
    for m in messages[1:]:
        for e in m["entities"]["entities"]:
            assert e["relationshipAttributes"]["inputs"] == [
                {"typeName": "lineage_dataset", "uniqueAttributes": {"qualifiedName": "t001@d"}}
            ]


def test_an_entity_too_big_for_one_message_is_an_error_naming_it() -> None:
    big = ds("-1", "huge@d")
    big["attributes"]["description"] = "x" * 5_000
    with pytest.raises(HookError, match="huge@d"):
        entity_messages([big], "u", max_bytes=2_000)


def test_deletes_name_entities_by_type_and_qualified_name() -> None:
    [m] = delete_messages([("lineage_process", "job:p@d"), ("lineage_dataset", "t@d")], "u")
    assert m == {
        "type": "ENTITY_DELETE_V2",
        "user": "u",
        "entities": [
            {"typeName": "lineage_process", "uniqueAttributes": {"qualifiedName": "job:p@d"}},
            {"typeName": "lineage_dataset", "uniqueAttributes": {"qualifiedName": "t@d"}},
        ],
    }


def test_envelope_is_atlas_notification_message_version_1_uncompressed_and_unsplit() -> None:
    e = envelope({"type": "ENTITY_CREATE_V2"}, created_at_ms=1234, source="10.0.0.1")
    assert e["version"] == {"version": "1.0.0", "versionParts": [1]}
    assert (e["msgCompressionKind"], e["msgSplitIdx"], e["msgSplitCount"]) == ("NONE", 1, 1)
    assert (e["msgCreationTime"], e["msgSourceIP"], e["spooled"]) == (1234, "10.0.0.1", False)
    assert e["message"] == {"type": "ENTITY_CREATE_V2"}


class FakeProducer:
    """Records what would go to Kafka (the real producer runs in the real-Atlas test)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, bytes]] = []

    def produce(self, topic: str, value: bytes, key: bytes, on_delivery: Any) -> None:
        self.sent.append((topic, key, value))
        on_delivery(None, None)

    def flush(self, timeout: float) -> int:
        return 0

    def poll(self, timeout: float) -> int:
        return 0


class FakeRest:
    username = "admin"
    target = "Atlas at http://atlas"
    capabilities = Capabilities()

    def __init__(self) -> None:
        self.reads: list[list[str]] = []

    def get_entities(self, guids: list[str], **_kw: Any) -> list[dict[str, Any]]:
        self.reads.append(guids)
        return [
            {
                "guid": g,
                "typeName": "lineage_dataset",
                "status": "ACTIVE",
                "attributes": {"qualifiedName": f"{g}@d"},
            }
            for g in guids
        ]

    def search_basic(self, *a: Any, **kw: Any) -> list[Any]:
        return ["read through REST"]


def hook_client() -> tuple[AtlasHookClient, FakeProducer, FakeRest]:
    fake, rest = FakeProducer(), FakeRest()
    return AtlasHookClient(rest, HookProducer(HookConfig("kafka:9092"), producer=fake)), fake, rest


def test_client_writes_go_to_the_hook_topic_with_one_key_and_reads_to_rest() -> None:
    client, fake, rest = hook_client()
    res = client.upsert_entities([ds("-1", "a@d"), ds("g2", "b@d")])
    client.delete_entities(["g7"])
    assert [t for t, _k, _v in fake.sent] == ["ATLAS_HOOK"] * 3
    assert {k for _t, k, _v in fake.sent} == {b"atlas-sync"}
    types = [json.loads(v)["message"]["type"] for _t, _k, v in fake.sent]
    assert types == ["ENTITY_CREATE_V2", "ENTITY_FULL_UPDATE_V2", "ENTITY_DELETE_V2"]
    assert all(json.loads(v)["message"]["user"] == "admin" for _t, _k, v in fake.sent)
    assert res.guid_assignments == {} and res.requests == 2
    assert client.queued.to_json() == {"created": 1, "updated": 1, "deleted": 1, "messages": 3}
    assert rest.reads == [["g7"]]
    assert client.search_basic("x") == ["read through REST"]
    # reconcile's REST relationship repair is skipped
    assert not client.capabilities.relationship_writes and client.capabilities.queued_writes


def test_purge_is_refused_on_the_hook_path() -> None:
    client, fake, _ = hook_client()
    with pytest.raises(AtlasSyncError, match="purge"):
        client.purge_entities(["g1"])
    assert fake.sent == []


def test_unacknowledged_messages_are_an_error() -> None:
    class Lost(FakeProducer):
        def flush(self, timeout: float) -> int:
            return 1

    client = AtlasHookClient(
        FakeRest(), HookProducer(HookConfig("kafka:9092", flush_timeout=0.1), producer=Lost())
    )
    with pytest.raises(HookError, match="not acknowledged"):
        client.upsert_entities([ds("-1", "a@d")])
