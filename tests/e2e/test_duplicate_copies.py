"""Two copies of one name, as two syncs creating it at the same moment leave them on a real Atlas.

The emulator makes them with racing creates (``Emulator.set_racing_creates``); its lookup by unique
attribute then names either copy, as Atlas's does. What a sync does about it
(reconcile.holdings.JobHoldings.settle_duplicates, reconcile.apply.write_batch):

* every sync that holds one of the copies keeps the same one, the oldest, found among what other
  jobs of the domain created lately (by the domain key, the creation time and the job key);
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
from atlas_sync.reconcile.apply import WriteBatch, _Flight, write_batch
from atlas_sync.reconcile.bookkeeping import Bookkeeping, entity_key
from atlas_sync.reconcile.holdings import JobHoldings
from atlas_sync.reconcile.plan import PlanItem
from atlas_sync.render.profile import load_profile
from atlas_sync.render.renderer import DesiredEntity

DOMAIN = "demo"
TABLE = f"raw.orders@{DOMAIN}"


@pytest.fixture
def emu() -> Iterator[Emulator]:
    e = Emulator()
    e.set_racing_creates(60_000, index_loss=True)
    yield e
    e.close()


@pytest.fixture
def client(emu: Emulator) -> AtlasClient:
    c = embedded_client(emulator=emu)
    Publisher(c, domain=DOMAIN).ensure_typedefs()
    return c


def _create_copy(client: AtlasClient, job: str, qn: str = TABLE, name: str = "orders") -> str:
    """One more ACTIVE lineage_dataset named ``qn``, as job ``job``'s sync creates it."""
    body = {
        "typeName": "lineage_dataset",
        "guid": "-1",
        "attributes": {
            "qualifiedName": qn,
            "name": name,
            "atlasSyncJob": job,
            "atlasSyncKey": entity_key(DOMAIN, job),
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
        bookkeeping=Bookkeeping.of(load_profile("lineage").bookkeeping),
    )


def _kept(client: AtlasClient, job: str, guid: str) -> dict[Any, Any]:
    """What job ``job``'s settle keeps for TABLE, holding ``guid``: from what other jobs created lately."""
    h = _holdings(client, job)
    return h._kept([("lineage_dataset", TABLE, guid)], h._created_by_others({"lineage_process"}))


def test_copies_made_before_the_window_are_not_looked_at(client: AtlasClient, monkeypatch: Any) -> None:
    _create_copy(client, "a")
    newer = _create_copy(client, "b")
    h = _holdings(client, "b")
    monkeypatch.setattr("atlas_sync.reconcile.holdings.COPY_WINDOW_MS", -60_000)  # a window that starts later
    assert h._kept([("lineage_dataset", TABLE, newer)], h._created_by_others(set())) == {}


def _big_job(client: AtlasClient, n: int) -> None:
    """What a big job of the domain created just before: ``n`` datasets of other names."""
    bodies = [
        {
            "typeName": "lineage_dataset",
            "guid": str(-1 - i),
            "attributes": {
                "qualifiedName": f"big.t{i}@{DOMAIN}",
                "name": f"t{i}",
                "atlasSyncJob": "big",
                "atlasSyncKey": entity_key(DOMAIN, "big"),
            },
        }
        for i in range(n)
    ]
    client.upsert_entities(bodies)


def _searched(client: AtlasClient, look: Any) -> tuple[Any, int, int]:
    """What ``look()`` returns, with the searches it made and the bytes they read."""
    before = client.stats["search"]
    requests, received = before.requests, before.bytes_received
    out = look()
    after = client.stats["search"]
    return out, after.requests - requests, after.bytes_received - received


def test_a_job_synced_after_a_big_one_reads_only_copies_of_its_own_names(client: AtlasClient) -> None:
    _big_job(client, 400)
    theirs = _create_copy(client, "a")
    h = _holdings(client, "b")
    whole, _, whole_bytes = _searched(client, lambda: h._created_by_others(set()))
    assert len(whole) == 401  # what the narrowing saves: the window holds the big job's creates
    narrowed, searches, narrowed_bytes = _searched(client, lambda: h._created_by_others(set(), ["orders"]))
    assert {k: [c.guid for c in v] for k, v in narrowed.items()} == {("lineage_dataset", TABLE): [theirs]}
    assert searches == 1
    assert narrowed_bytes * 50 < whole_bytes


def test_many_names_and_a_small_window_read_the_window_once(client: AtlasClient) -> None:
    theirs = _create_copy(client, "a")
    names = ["orders", *(f"n{i}" for i in range(150))]  # more than one search by name holds
    h = _holdings(client, "b")
    found, searches, _ = _searched(client, lambda: h._created_by_others(set(), names))
    assert [c.guid for c in found[("lineage_dataset", TABLE)]] == [theirs]
    assert searches == 1


def test_many_names_and_a_big_window_are_searched_by_name(client: AtlasClient) -> None:
    _big_job(client, 400)
    theirs = _create_copy(client, "a")
    names = ["orders", *(f"n{i}" for i in range(150))]
    h = _holdings(client, "b")
    found, searches, _ = _searched(client, lambda: h._created_by_others(set(), names))
    assert list(found) == [("lineage_dataset", TABLE)]
    assert [c.guid for c in found[("lineage_dataset", TABLE)]] == [theirs]
    assert searches == 3  # the window's first page (too many), then the 151 names in two searches


def test_a_name_off_the_index_falls_back_to_the_whole_window(client: AtlasClient) -> None:
    _big_job(client, 400)
    qn = f"raw.my-orders@{DOMAIN}"
    theirs = _create_copy(client, "a", qn=qn, name="my-orders")
    h = _holdings(client, "b")
    found = h._created_by_others(set(), ["my-orders"])
    assert [c.guid for c in found[("lineage_dataset", qn)]] == [theirs]
    assert len(found) == 401


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
    kept_by_a = _kept(client, "a", older)
    kept_by_b = _kept(client, "b", newer)
    assert kept_by_a[("lineage_dataset", TABLE)].guid == older
    assert kept_by_b[("lineage_dataset", TABLE)].guid == older
    assert kept_by_b[("lineage_dataset", TABLE)].owner == "a"


def test_deleting_one_of_two_copies_leaves_the_other_unfound_by_name_until_named_again(
    client: AtlasClient,
) -> None:
    older, newer = _create_copy(client, "a"), _create_copy(client, "b")
    client.delete_entities([newer])
    assert client.get_entity_by_unique("lineage_dataset", TABLE) is None  # Atlas 2.1.0's unique index
    h = _holdings(client, "b")
    assert h.index_again({("lineage_dataset", TABLE): older}) == 3
    assert client.get_entity_by_unique("lineage_dataset", TABLE)["guid"] == older
    assert h.index_again({("lineage_dataset", TABLE): older}) == 1  # found: nothing to do


def test_a_single_copy_is_not_contested(client: AtlasClient) -> None:
    only = _create_copy(client, "a")
    assert _kept(client, "a", only) == {}


def test_what_another_job_refers_to_in_the_lost_copy_moves_to_the_kept_one(client: AtlasClient) -> None:
    older, newer = _create_copy(client, "a"), _create_copy(client, "b")
    # job c looked the table up while both existed, and got the copy that loses
    proc = _process(client, "c", newer)
    requests = _holdings(client, "b")._move_references({newer: older}, lambda g: False, set())
    client.delete_entities([newer])
    client.purge_entities([newer])
    assert _active_inputs(client, proc) == {older}
    assert requests == 3  # the read of the copy, then the relationship read and made again


def test_what_was_written_between_that_look_and_the_delete_moves_too(client: AtlasClient) -> None:
    older, newer = _create_copy(client, "a"), _create_copy(client, "b")
    mine = _process(client, "b", newer)  # the losing job's own process: rewritten by its sync, not here
    h, moved = _holdings(client, "b"), set()
    h._move_references({newer: older}, lambda g: g == mine, moved)
    late = _process(client, "c", newer)  # job c writes after that look
    client.delete_entities([newer])
    h._move_references({newer: older}, lambda g: g == mine, moved, ended=True)
    client.purge_entities([newer])
    assert _active_inputs(client, late) == {older}
    assert _active_inputs(client, mine) == set()  # (its sync points it at the kept copy itself)


def test_a_write_referring_to_a_copy_deleted_meanwhile_is_sent_again_by_name(client: AtlasClient) -> None:
    older, newer = _create_copy(client, "a"), _create_copy(client, "b")
    client.delete_entities([newer])
    client.purge_entities([newer])
    key = ("lineage_dataset", TABLE)
    _holdings(client, "b").index_again({key: older})  # as the sync that deleted its copy does
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


def test_a_shared_dataset_whose_copy_was_deleted_meanwhile_is_looked_up_again(client: AtlasClient) -> None:
    from atlas_sync.reconcile.spool import Spool
    from atlas_sync.render.renderer import DesiredState

    key = ("lineage_dataset", TABLE)
    looked_up = _create_copy(client, "a")  # what this sync looked the name up as
    spool = Spool(memory=True)
    state = DesiredState(DOMAIN, "b")
    state.entities[key] = DesiredEntity(
        type_name="lineage_dataset",
        qualified_name=TABLE,
        attributes={"qualifiedName": TABLE, "name": "orders"},
    )
    spool.add_desired(state)
    spool.add_actual([(*key, looked_up, "a", None)])
    h = _holdings(client, "b")
    assert h._gone_references(spool, {"lineage_process"}) == set()  # alive: nothing to do
    kept = _create_copy(client, "c")
    client.delete_entities([looked_up])  # the other sync lost and deleted its copy
    client.purge_entities([looked_up])
    assert client.get_entity_by_unique("lineage_dataset", TABLE) is None  # which took the index entry
    assert _holdings(client, "a").index_again({key: kept}) == 3  # as that sync does after its purge
    assert h._gone_references(spool, {"lineage_process"}) == {key}
    assert spool.guids_of([key]) == {key: kept}
    assert spool.owner_of(key) == "c"
    spool.close()
