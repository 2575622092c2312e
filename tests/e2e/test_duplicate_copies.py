"""Two copies of one name, as two syncs creating it at the same moment leave them on a real Atlas.

The emulator makes them with racing creates (``Emulator.set_racing_creates``); its lookup by unique
attribute then names either copy, as Atlas's does. What a sync does about it
(reconcile.holdings.JobHoldings.settle_duplicates, reconcile.apply.write_batch):

* every sync that holds one of the copies keeps the same one, the oldest, found by the name key;
* what another job wrote referring to the copy that is deleted is moved to the kept one;
* a write that refers to a copy deleted meanwhile is sent again by name.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.atlas.errors import NotFoundError
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.reconcile.actual import name_key, scope_key
from atlas_sync.reconcile.apply import WriteBatch, _Flight, write_batch
from atlas_sync.reconcile.holdings import JobHoldings
from atlas_sync.reconcile.plan import PlanItem
from atlas_sync.render.profile import load_profile
from atlas_sync.render.renderer import DesiredEntity

DOMAIN = "demo"
TABLE = f"raw.orders@{DOMAIN}"


@pytest.fixture
def emu() -> Iterator[Emulator]:
    e = Emulator()
    e.set_racing_creates(60_000)
    yield e
    e.close()


@pytest.fixture
def client(emu: Emulator) -> AtlasClient:
    c = embedded_client(emulator=emu)
    Publisher(c, domain=DOMAIN).ensure_typedefs()
    return c


def _create_copy(client: AtlasClient, job: str) -> str:
    """One more ACTIVE lineage_dataset named TABLE, as job ``job``'s sync creates it."""
    body = {
        "typeName": "lineage_dataset",
        "guid": "-1",
        "attributes": {
            "qualifiedName": TABLE,
            "name": "orders",
            "atlasSyncJob": job,
            "atlasSyncScope": scope_key(DOMAIN),
            "atlasSyncNameKey": name_key("lineage_dataset", TABLE),
        },
    }
    res = client.upsert_entities([body])
    (guid,) = res.guid_assignments.values()
    time.sleep(0.005)  # a later createTime for the next copy
    return str(guid)


def _holdings(client: AtlasClient, job: str) -> JobHoldings:
    return JobHoldings(
        client,
        load_profile("lineage"),
        DOMAIN,
        job,
        root_types=["lineage_dataset"],
        job_key_attribute="atlasSyncJobKey",
        name_key_attribute="atlasSyncNameKey",
    )


def _process(client: AtlasClient, name: str, input_guid: str) -> str:
    body = {
        "typeName": "lineage_process",
        "guid": "-1",
        "attributes": {"qualifiedName": f"{name}@{DOMAIN}", "name": name, "atlasSyncJob": name},
        "relationshipAttributes": {"inputs": [{"guid": input_guid}], "outputs": []},
    }
    (guid,) = client.upsert_entities([body]).guid_assignments.values()
    return str(guid)


def _active_inputs(client: AtlasClient, guid: str) -> set[str]:
    (ent,) = client.get_entities([guid])
    return {
        r["guid"]
        for r in ent["relationshipAttributes"]["inputs"]
        if r.get("relationshipStatus", "ACTIVE") == "ACTIVE"
    }


def test_racing_creates_leave_two_copies_and_a_lookup_names_either(client: AtlasClient) -> None:
    first, second = _create_copy(client, "a"), _create_copy(client, "b")
    assert first != second
    named = {client.get_entity_by_unique("lineage_dataset", TABLE)["guid"] for _ in range(60)}  # type: ignore[index]
    assert named == {first, second}


def test_both_holders_of_a_copy_keep_the_oldest_one(client: AtlasClient) -> None:
    older, newer = _create_copy(client, "a"), _create_copy(client, "b")
    kept_by_a = _holdings(client, "a")._kept([("lineage_dataset", TABLE, older)])
    kept_by_b = _holdings(client, "b")._kept([("lineage_dataset", TABLE, newer)])
    assert kept_by_a[("lineage_dataset", TABLE)].guid == older
    assert kept_by_b[("lineage_dataset", TABLE)].guid == older
    assert kept_by_b[("lineage_dataset", TABLE)].owner == "a"


def test_a_single_copy_is_not_contested(client: AtlasClient) -> None:
    only = _create_copy(client, "a")
    assert _holdings(client, "a")._kept([("lineage_dataset", TABLE, only)]) == {}


def test_what_another_job_refers_to_in_the_lost_copy_moves_to_the_kept_one(client: AtlasClient) -> None:
    older, newer = _create_copy(client, "a"), _create_copy(client, "b")
    # job c looked the table up while both existed, and got the copy that loses
    proc = _process(client, "c", newer)
    requests = _holdings(client, "b")._move_references({newer: older})
    client.delete_entities([newer])
    client.purge_entities([newer])
    assert _active_inputs(client, proc) == {older}
    assert requests == 3  # the read of the copy, then the relationship read and made again


def test_a_write_referring_to_a_copy_deleted_meanwhile_is_sent_again_by_name(client: AtlasClient) -> None:
    older, newer = _create_copy(client, "a"), _create_copy(client, "b")
    client.delete_entities([newer])
    client.purge_entities([newer])
    key = ("lineage_dataset", TABLE)
    proc = DesiredEntity(
        type_name="lineage_process",
        qualified_name=f"c@{DOMAIN}",
        attributes={"qualifiedName": f"c@{DOMAIN}", "name": "c", "atlasSyncJob": "c"},
        refs={"inputs": [key], "outputs": []},
        rel_attrs={"inputs", "outputs"},
    )
    item = PlanItem("create", proc.type_name, proc.qualified_name, tier=0)
    outcome = write_batch(client, WriteBatch([item], {proc.key: proc}), {key: newer}, _Flight(1))
    assert outcome.gone == {key}
    assert outcome.requests == 2  # refused once for the deleted copy, then sent by name
    (guid,) = outcome.assigned.values()
    assert _active_inputs(client, guid) == {older}


def test_a_reference_missing_by_name_too_fails_after_one_more_try(client: AtlasClient) -> None:
    key = ("lineage_dataset", TABLE)
    proc = DesiredEntity(
        type_name="lineage_process",
        qualified_name=f"c@{DOMAIN}",
        attributes={"qualifiedName": f"c@{DOMAIN}", "name": "c"},
        refs={"inputs": [key], "outputs": []},
        rel_attrs={"inputs", "outputs"},
    )
    item = PlanItem("create", proc.type_name, proc.qualified_name, tier=0)
    unknown: dict[Any, str] = {key: "00000000-0000-4000-8000-000000000000"}
    calls = []
    real = client.upsert_entities

    def counting(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*a, **kw)

    client.upsert_entities = counting  # type: ignore[method-assign]
    with pytest.raises(NotFoundError, match=r"uniqueAttributes=\{qualifiedName:raw\.orders@demo\}"):
        # the guid was never known to this Atlas: sent again by name, there is no such table either
        write_batch(client, WriteBatch([item], {proc.key: proc}), unknown, _Flight(1))
    assert len(calls) == 2
