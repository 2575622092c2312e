"""A re-sync decides "unchanged" from the domain listing and the digest stored with each entity.

Every entity the lineage profile writes carries ``atlasSyncDigest`` (docs/resync.md). A re-sync lists
the domain with that attribute and reads in full only what may have changed: entities whose digest
differs, and entities that refer to one Atlas no longer holds. These run over HTTP against the emulator
and, when ``ATLAS_URL`` names one (CI's real-Atlas step), against a real Atlas.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator

import pytest
from resync_support import DOC, PROCESS, TOTAL, active_inputs, edit_in_atlas, entity, graph, resync

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator import Emulator
from atlas_sync.emulator.http import serve
from atlas_sync.render.profile import load_profile


@pytest.fixture
def domain(client: AtlasClient) -> Iterator[str]:
    name = "dg" + uuid.uuid4().hex[:10]
    yield name
    Publisher(client, domain=name).teardown(purge=True)


def test_every_written_entity_carries_the_digest_of_what_was_written(
    client: AtlasClient, domain: str
) -> None:
    Publisher(client, domain=domain).sync(graph())
    digest = entity(client, "lineage_dataset", f"raw.orders@{domain}")["attributes"]["atlasSyncDigest"]
    assert isinstance(digest, str) and digest.startswith("1:") and len(digest) == 13
    other = entity(client, "lineage_dataset", f"raw.regions@{domain}")["attributes"]["atlasSyncDigest"]
    assert other != digest  # the digest is of the entity, not of the run


def test_an_unchanged_resync_reads_only_the_listing(client: AtlasClient, domain: str) -> None:
    Publisher(client, domain=domain).sync(graph())
    again = resync(client, domain)
    assert again.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": TOTAL}
    assert again.applied is None
    assert client.stats["entity_write"].requests == 0
    assert client.stats["entity_read"].requests == 0  # no entity read back in full
    assert client.stats["search"].requests >= 1


def test_a_changed_entity_is_the_only_one_read_back_and_written(client: AtlasClient, domain: str) -> None:
    Publisher(client, domain=domain).sync(graph())
    doc = {**DOC, "datasets": [dict(d) for d in DOC["datasets"]]}
    doc["datasets"][0]["kind"] = "view"
    again = resync(client, domain, doc)
    assert again.plan.counts == {"create": 0, "update": 1, "delete": 0, "unchanged": TOTAL - 1}
    (item,) = again.plan.by_action("update")
    assert item.qualified_name == f"raw.orders@{domain}"
    assert [c.attribute for c in item.changes] == ["kind"]  # the digest's own change is not listed
    assert client.stats["entity_write"].requests == 1
    assert client.stats["entity_read"].requests == 1  # one bulk GET, of that one entity
    assert entity(client, "lineage_dataset", f"raw.orders@{domain}")["attributes"]["kind"] == "view"
    assert resync(client, domain, doc).plan.counts["unchanged"] == TOTAL


def test_an_edit_made_in_atlas_is_kept_until_a_refresh(client: AtlasClient, domain: str) -> None:
    # what the Atlas UI does when a user edits an attribute: the entity's plain attributes written
    # back with one changed (the digest attribute goes back unchanged with the rest)
    Publisher(client, domain=domain).sync(graph())
    qn = f"raw.orders@{domain}"
    edit_in_atlas(client, "lineage_dataset", qn, kind="edited")
    plain = resync(client, domain)
    assert plain.plan.counts["update"] == 0 and client.stats["entity_write"].requests == 0
    assert entity(client, "lineage_dataset", qn)["attributes"]["kind"] == "edited"
    full = resync(client, domain, refresh=True)
    assert full.plan.counts == {"create": 0, "update": 1, "delete": 0, "unchanged": TOTAL - 1}
    assert [(c.attribute, c.before, c.after) for c in full.plan.by_action("update")[0].changes] == [
        ("kind", "edited", "table")
    ]
    assert client.stats["entity_read"].requests >= 1
    assert entity(client, "lineage_dataset", qn)["attributes"]["kind"] == "table"


def test_a_dataset_deleted_in_atlas_is_created_again_and_its_lineage_relinked(
    client: AtlasClient, domain: str
) -> None:
    Publisher(client, domain=domain).sync(graph())
    proc = f"{PROCESS}@{domain}"
    assert active_inputs(client, proc) == {"orders", "regions"}
    gone = entity(client, "lineage_dataset", f"raw.regions@{domain}")["guid"]
    client.delete_entities([gone])
    assert active_inputs(client, proc) == {"orders"}
    again = resync(client, domain)
    created = {i.qualified_name for i in again.plan.by_action("create")}
    updated = {i.qualified_name for i in again.plan.by_action("update")}
    assert f"raw.regions@{domain}" in created
    # the process that read it is compared in full (its digest alone would say "unchanged")
    assert proc in updated
    assert active_inputs(client, proc) == {"orders", "regions"}
    assert resync(client, domain).plan.counts["unchanged"] == TOTAL


def test_entities_written_without_a_digest_get_one_once(client: AtlasClient, domain: str) -> None:
    # as an atlas-sync before digests wrote them: the first re-sync records each digest, the next reads nothing
    lineage = load_profile("lineage")
    no_digest = dataclasses.replace(
        lineage, bookkeeping=dataclasses.replace(lineage.bookkeeping, digest=None)
    )
    Publisher(client, profile=no_digest, domain=domain).sync(graph())
    assert (
        entity(client, "lineage_dataset", f"raw.orders@{domain}")["attributes"].get("atlasSyncDigest") is None
    )
    first = resync(client, domain)
    assert first.plan.counts == {"create": 0, "update": TOTAL, "delete": 0, "unchanged": 0}
    assert {c.attribute for i in first.plan.items for c in i.changes} == {"atlasSyncDigest"}
    second = resync(client, domain)
    assert second.plan.counts["unchanged"] == TOTAL
    assert client.stats["entity_read"].requests == 0 and client.stats["entity_write"].requests == 0


def test_a_plan_saved_from_a_digest_decision_is_refused_once_atlas_moved_on(
    client: AtlasClient, domain: str
) -> None:
    pub = Publisher(client, domain=domain)
    pub.sync(graph())
    doc = {**DOC, "datasets": [dict(d) for d in DOC["datasets"]]}
    doc["datasets"][0]["kind"] = "view"
    plan = pub.plan(graph(doc), stream=False)
    assert any(i.fingerprint.startswith("digest:") for i in plan.by_action("unchanged"))
    # another run writes a different version of an entity the plan found unchanged
    other = {**DOC, "datasets": [dict(d) for d in DOC["datasets"]]}
    other["datasets"][1]["kind"] = "view"
    pub.sync(graph(other))
    with pytest.raises(Exception, match="no longer matches Atlas"):
        pub.apply(plan)


@pytest.mark.parametrize(
    "lacking", [{"atlasSyncDigest"}, {"atlasSyncDigest", "atlasSyncKey"}], ids=["digest", "digest+key"]
)
def test_a_server_whose_types_lack_the_digest_attribute_is_compared_in_full(lacking: set[str]) -> None:
    # typedefs registered by an atlas-sync before digests (and domain keys), and a sync told not to
    # update them: nothing is written with the missing attributes, and a re-sync writes nothing
    import json
    from pathlib import Path

    bundle = json.loads(
        (Path(__file__).resolve().parents[2] / "typedefs/lineage/0010-lineage_model.json").read_text()
    )
    for d in bundle["entityDefs"]:
        d["attributeDefs"] = [a for a in d["attributeDefs"] if a["name"] not in lacking]
    emu = Emulator()
    server = serve(emu)
    try:
        client = AtlasClient(server.url, auth=("admin", "admin"))
        client.create_typedefs(bundle)
        pub = Publisher(client, domain="old")
        first = pub.sync(graph(), ensure_typedefs=False)
        assert first.plan.counts["create"] == TOTAL
        stored = entity(client, "lineage_dataset", "raw.orders@old")["attributes"]
        assert all(stored.get(name) is None for name in lacking)
        client.stats.reset()
        again = Publisher(client, domain="old").sync(graph(), ensure_typedefs=False)
        assert again.plan.counts["unchanged"] == TOTAL  # no endless digest updates
        assert client.stats["entity_write"].requests == 0 and client.stats["entity_read"].requests >= 1
    finally:
        server.shutdown()
        emu.close()
