"""A big job's unchanged re-sync is answered by its receipt (reconcile.receipt, docs/resync.md).

The receipt vouches that Atlas holds what the job's last sync of this very input left there; any
change to the job's entities in Atlas since (an edit, a delete, a purge), to the input, or another
sync of the job running meanwhile makes the next sync compare in full. ``RECEIPT_MIN`` is lowered so
the small document of resync_support counts as big. Over HTTP against the emulator and, when
``ATLAS_URL`` names one, a real Atlas.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from resync_support import DOC, PROCESS, TOTAL, edit_in_atlas, entity, graph, resync

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile import receipt as receipts
from atlas_sync.reconcile.bookkeeping import Bookkeeping, job_key
from atlas_sync.reconcile.receipt import RECEIPT_TYPE, JobReceipt
from atlas_sync.render.profile import load_profile as _load_profile

JOB = "nightly"
BOOKKEEPING = Bookkeeping.of(_load_profile("lineage").bookkeeping)


@pytest.fixture(autouse=True)
def small_is_big(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(receipts, "RECEIPT_MIN", 1)


@pytest.fixture
def domain(client: AtlasClient) -> Iterator[str]:
    name = "dr" + uuid.uuid4().hex[:10]
    yield name
    Publisher(client, domain=name).teardown(purge=True)


def held(client: AtlasClient, domain: str) -> dict[str, Any] | None:
    return client.get_entity_by_unique(RECEIPT_TYPE, job_key(domain, JOB))


def changed_doc() -> dict[str, Any]:
    doc = {**DOC, "datasets": [dict(d) for d in DOC["datasets"]]}
    doc["datasets"][0]["kind"] = "view"
    return doc


def test_an_unchanged_resync_reads_the_receipt_and_one_search_per_root_type(
    client: AtlasClient, domain: str
) -> None:
    Publisher(client, domain=domain).sync(graph())
    again = resync(client, domain)
    assert again.plan.by_receipt
    assert again.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": TOTAL}
    assert again.applied is None
    assert client.stats["entity_write"].requests == 0
    assert client.stats["entity_read"].requests == 1  # the receipt
    roots = Publisher(client, domain=domain).profile.root_types()
    assert client.stats["search"].requests == len(roots)


def test_a_changed_input_compares_in_full_and_leaves_a_new_receipt(client: AtlasClient, domain: str) -> None:
    Publisher(client, domain=domain).sync(graph())
    changed = resync(client, domain, changed_doc())
    assert not changed.plan.by_receipt
    assert changed.plan.counts["update"] == 1
    assert entity(client, "lineage_dataset", f"raw.orders@{domain}")["attributes"]["kind"] == "view"
    assert resync(client, domain, changed_doc()).plan.by_receipt
    back = resync(client, domain)  # the first input again: its receipt was replaced
    assert not back.plan.by_receipt and back.plan.counts["update"] == 1


def test_an_edit_in_atlas_after_the_receipt_makes_the_next_sync_compare_in_full(
    client: AtlasClient, domain: str
) -> None:
    Publisher(client, domain=domain).sync(graph())
    qn = f"raw.orders@{domain}"
    edit_in_atlas(client, "lineage_dataset", qn, kind="edited")
    after = resync(client, domain)
    assert not after.plan.by_receipt
    assert after.plan.counts["unchanged"] == TOTAL  # the digest compare keeps the edit (docs/resync.md)
    assert resync(client, domain).plan.by_receipt  # and that sync vouched for Atlas again


def test_an_entity_deleted_in_atlas_is_created_again(client: AtlasClient, domain: str) -> None:
    Publisher(client, domain=domain).sync(graph())
    guid = entity(client, "lineage_dataset", f"mart.revenue@{domain}")["guid"]
    client.delete_entities([guid])
    after = resync(client, domain)
    assert not after.plan.by_receipt
    assert after.plan.counts["create"] >= 1
    assert entity(client, "lineage_dataset", f"mart.revenue@{domain}")["status"] == "ACTIVE"


def test_an_entity_purged_in_atlas_is_created_again(client: AtlasClient, domain: str) -> None:
    # a purge leaves no modification time behind: the count of the job's entities tells
    Publisher(client, domain=domain).sync(graph())
    Publisher(client, domain=domain).sync(graph(changed_doc()))  # (a receipt written after an update)
    guid = entity(client, "lineage_column", f"raw.regions.name@{domain}")["guid"]
    client.delete_entities([guid])
    # the delete alone is seen by its modification time: vouch again, so only the purge is left
    assert not resync(client, domain, changed_doc()).plan.by_receipt
    assert resync(client, domain, changed_doc()).plan.by_receipt
    gone = entity(client, "lineage_column", f"raw.regions.name@{domain}")["guid"]
    client.delete_entities([gone])
    client.purge_entities([gone])
    assert client.get_entity(gone) is None
    after = resync(client, domain, changed_doc())
    assert not after.plan.by_receipt
    assert after.plan.counts["create"] >= 1


def stamp_of_another_sync(client: AtlasClient, domain: str, roots: list[str], spool: Any) -> None:
    """What another sync of the job sends with its first write: a stamp of the receipt naming its run."""
    other = JobReceipt(client, domain, JOB, roots, BOOKKEEPING, "another input", spool=spool)
    bodies = other.ride(False, 0)
    assert other.rode == receipts.STAMP
    client.upsert_entities(bodies)


def test_another_sync_of_the_job_running_meanwhile_leaves_no_receipt(
    client: AtlasClient, domain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    Publisher(client, domain=domain).sync(graph())
    finish = JobReceipt.finish

    def overlapped(self: JobReceipt, spool: Any) -> bool:
        stamp_of_another_sync(client, domain, self.root_types, spool)  # started before this one ended
        return finish(self, spool)

    monkeypatch.setattr(JobReceipt, "finish", overlapped)
    assert resync(client, domain, changed_doc()).plan.counts["update"] == 1
    monkeypatch.setattr(JobReceipt, "finish", finish)
    receipt = held(client, domain)
    assert receipt is not None and not receipt["attributes"]["atlasSyncInput"]
    after = resync(client, domain, changed_doc())
    assert not after.plan.by_receipt and after.plan.counts["unchanged"] == TOTAL
    assert resync(client, domain, changed_doc()).plan.by_receipt


def test_another_sync_of_the_job_stamping_before_a_sync_that_writes_nothing_ends_leaves_no_receipt(
    client: AtlasClient, domain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the sync writes nothing (Atlas already holds its input): no stamp of its own, so the receipt must
    # be the one it read at its start
    Publisher(client, domain=domain).sync(graph())
    edit_in_atlas(client, "lineage_dataset", f"raw.regions@{domain}", kind="edited")
    finish = JobReceipt.finish

    def overlapped(self: JobReceipt, spool: Any) -> bool:
        assert self.rode is None  # (nothing was written)
        stamp_of_another_sync(client, domain, self.root_types, spool)
        return finish(self, spool)

    monkeypatch.setattr(JobReceipt, "finish", overlapped)
    quiet = resync(client, domain)
    assert quiet.applied is None and not quiet.plan.by_receipt
    monkeypatch.setattr(JobReceipt, "finish", finish)
    receipt = held(client, domain)
    assert receipt is not None and not receipt["attributes"]["atlasSyncInput"]
    assert not resync(client, domain).plan.by_receipt


def test_a_sync_stopped_after_its_first_write_leaves_the_receipt_void(
    client: AtlasClient, domain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # its first write carried a stamp: a sync whose writes are more than one request (here: deletes
    # after its write) vouches for nothing until its end
    Publisher(client, domain=domain).sync(graph())
    fewer = without_process(changed_doc())

    def killed(self: JobReceipt, spool: Any) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(JobReceipt, "finish", killed)
    with pytest.raises(KeyboardInterrupt):
        resync(client, domain, fewer)
    monkeypatch.undo()
    monkeypatch.setattr(receipts, "RECEIPT_MIN", 1)
    receipt = held(client, domain)
    assert receipt is not None and not receipt["attributes"]["atlasSyncInput"]
    # the first input again: Atlas no longer holds it, whatever the old receipt said
    back = resync(client, domain)
    assert not back.plan.by_receipt and back.plan.counts["update"] == 1 and back.plan.counts["create"] == 3


def test_a_sync_stopped_after_its_only_write_leaves_a_receipt_of_what_that_write_left(
    client: AtlasClient, domain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the receipt went with the sync's one write, in the same request: Atlas holds exactly what it says
    Publisher(client, domain=domain).sync(graph())

    def killed(self: JobReceipt, spool: Any) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(JobReceipt, "finish", killed)
    with pytest.raises(KeyboardInterrupt):
        resync(client, domain, changed_doc())
    monkeypatch.undo()
    monkeypatch.setattr(receipts, "RECEIPT_MIN", 1)
    assert resync(client, domain, changed_doc()).plan.by_receipt
    full = resync(client, domain, changed_doc(), refresh=True)
    assert full.plan.counts["unchanged"] == TOTAL and full.applied is None


def test_refresh_compares_in_full_whatever_the_receipt_says(client: AtlasClient, domain: str) -> None:
    Publisher(client, domain=domain).sync(graph())
    again = resync(client, domain, refresh=True)
    assert not again.plan.by_receipt and again.plan.counts["unchanged"] == TOTAL


def test_a_small_input_keeps_no_receipt(
    client: AtlasClient, domain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(receipts, "RECEIPT_MIN", 500)
    Publisher(client, domain=domain).sync(graph())
    again = resync(client, domain)
    assert not again.plan.by_receipt
    if client.get_typedef_by_name(RECEIPT_TYPE) is not None:
        assert held(client, domain) is None


def test_teardown_deletes_the_domains_receipts(client: AtlasClient, domain: str) -> None:
    Publisher(client, domain=domain).sync(graph())
    assert held(client, domain) is not None
    Publisher(client, domain=domain).teardown(purge=True)
    assert held(client, domain) is None


def test_a_teardown_of_the_job_deletes_its_receipt_and_a_resync_writes_it_all_again(
    client: AtlasClient, domain: str
) -> None:
    pub = Publisher(client, domain=domain)
    pub.sync(graph(), JOB)
    assert held(client, domain) is not None
    gone = pub.teardown_job(JOB, purge=True)
    assert gone.applied is not None and gone.applied.deleted == TOTAL
    assert held(client, domain) is None
    again = Publisher(client, domain=domain).sync(graph(), JOB)
    assert not again.plan.by_receipt and again.plan.counts["create"] == TOTAL


def test_a_job_synced_to_nothing_keeps_no_receipt(client: AtlasClient, domain: str) -> None:
    pub = Publisher(client, domain=domain)
    pub.sync(graph(), JOB)
    empty = pub.sync(LineageGraph(), JOB, allow_empty=True, force=True)
    assert empty.applied is not None and empty.applied.deleted == TOTAL
    assert held(client, domain) is None


def test_a_server_that_refuses_the_receipt_gets_full_syncs_not_failed_ones(
    client: AtlasClient, domain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. a user allowed to write entities of the profile's types, not to register or write others
    from atlas_sync.atlas.errors import AuthError

    upsert = client.upsert_entities

    def refuse_receipts(entities: Any, **kw: Any) -> Any:
        if any(e.get("typeName") == RECEIPT_TYPE for e in entities):
            raise AuthError("403 Forbidden: not allowed", status=403)
        return upsert(entities, **kw)

    monkeypatch.setattr(client, "upsert_entities", refuse_receipts)
    first = Publisher(client, domain=domain).sync(graph())
    assert first.plan.counts["create"] == TOTAL
    again = resync(client, domain)
    assert not again.plan.by_receipt and again.plan.counts["unchanged"] == TOTAL
    assert held(client, domain) is None


# ---------------------------------------------------------------- a changed input: the receipt's listing


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The jobs whose entities a sync searched Atlas for (reconcile.holdings' listing by job key)."""
    from atlas_sync.reconcile import holdings

    calls: list[str] = []
    inner = holdings.iter_job

    def iter_job(client: Any, root_types: list[str], domain: str, job: str, **kw: Any) -> Any:
        calls.append(job)
        return inner(client, root_types, domain, job, **kw)

    monkeypatch.setattr(holdings, "iter_job", iter_job)
    return calls


def without_process(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without its process and column edges: its datasets stay."""
    return {**doc, "processes": [], "edges": []}


def test_a_changed_input_takes_the_jobs_entities_from_the_receipt_and_reads_only_what_changed(
    client: AtlasClient, domain: str, searched: list[str]
) -> None:
    Publisher(client, domain=domain).sync(graph())
    searched.clear()
    changed = resync(client, domain, changed_doc())
    assert searched == [], "the job's entities were searched for, not taken from the receipt"
    assert changed.plan.counts == {"create": 0, "update": 1, "delete": 0, "unchanged": TOTAL - 1}
    # read: the receipt and its listing, the changed entity by name and in full, the receipt at the end
    assert client.stats["entity_read"].requests == 5
    assert entity(client, "lineage_dataset", f"raw.orders@{domain}")["attributes"]["kind"] == "view"
    # and Atlas holds exactly the changed input: a full compare finds nothing to do
    full = resync(client, domain, changed_doc(), refresh=True)
    assert full.plan.counts["unchanged"] == TOTAL and full.applied is None


def test_a_changed_input_that_drops_a_process_deletes_it_through_the_receipts_listing(
    client: AtlasClient, domain: str, searched: list[str]
) -> None:
    Publisher(client, domain=domain).sync(graph())
    searched.clear()
    process = entity(client, "lineage_process", f"{PROCESS}@{domain}")["guid"]
    fewer = resync(client, domain, without_process(DOC))
    assert searched == []
    assert fewer.plan.counts["delete"] == 3  # the process and its two column lineages
    assert (client.get_entity(process) or {}).get("status", "DELETED") == "DELETED"
    back = resync(client, domain)  # the process again, from the receipt of the smaller input
    assert searched == [] and back.plan.counts["create"] == 3
    full = resync(client, domain, refresh=True)
    assert full.plan.counts["unchanged"] == TOTAL and full.applied is None


def test_an_edit_in_atlas_after_the_receipt_makes_a_changed_input_list_the_job_in_atlas(
    client: AtlasClient, domain: str, searched: list[str]
) -> None:
    Publisher(client, domain=domain).sync(graph())
    edit_in_atlas(client, "lineage_dataset", f"raw.regions@{domain}", kind="edited")
    searched.clear()
    changed = resync(client, domain, changed_doc())
    assert searched == [JOB]
    assert changed.plan.counts["update"] == 1


def test_a_changed_input_writes_its_changes_and_the_receipt_in_one_request(
    client: AtlasClient, domain: str, searched: list[str]
) -> None:
    Publisher(client, domain=domain).sync(graph())
    changed = resync(client, domain, changed_doc())
    assert changed.plan.counts["update"] == 1
    assert client.stats["entity_write"].requests == 1
    receipt = held(client, domain)
    assert receipt is not None and receipt["attributes"]["atlasSyncEntities"] == TOTAL
    # and it vouches: the same input again is answered by it, nothing written
    again = resync(client, domain, changed_doc())
    assert again.plan.by_receipt and client.stats["entity_write"].requests == 0


def test_a_write_to_the_job_between_the_receipt_check_and_the_sync_s_write_voids_the_receipt(
    client: AtlasClient, domain: str, searched: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # another sync of the job (or a user) wrote after this sync checked the receipt: the receipt's
    # listing it took may be stale, so the receipt that went with its write must not vouch
    Publisher(client, domain=domain).sync(graph())
    listed = JobReceipt.listed

    def late(self: JobReceipt) -> Any:
        found = listed(self)
        edit_in_atlas(client, "lineage_dataset", f"mart.revenue@{domain}", kind="edited")
        return found

    monkeypatch.setattr(JobReceipt, "listed", late)
    searched.clear()
    changed = resync(client, domain, changed_doc())
    assert searched == [] and changed.plan.counts["update"] == 1
    receipt = held(client, domain)
    assert receipt is not None and not receipt["attributes"]["atlasSyncInput"]
    monkeypatch.setattr(JobReceipt, "listed", listed)
    after = resync(client, domain, changed_doc())  # compares in full: the edit is found and kept
    assert searched == [JOB] and not after.plan.by_receipt


def test_a_write_to_the_job_after_the_sync_s_write_voids_the_receipt_that_went_with_it(
    client: AtlasClient, domain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    Publisher(client, domain=domain).sync(graph())
    confirm = JobReceipt._confirm

    def edited(self: JobReceipt) -> bool:
        edit_in_atlas(client, "lineage_dataset", f"mart.revenue@{domain}", kind="edited")
        return confirm(self)

    monkeypatch.setattr(JobReceipt, "_confirm", edited)
    assert resync(client, domain, changed_doc()).plan.counts["update"] == 1
    receipt = held(client, domain)
    assert receipt is not None and not receipt["attributes"]["atlasSyncInput"]


def listing_of(client: AtlasClient, domain: str) -> str:
    base = client.get_entity_by_unique(RECEIPT_TYPE, job_key(domain, JOB) + receipts.BASE_SUFFIX)
    assert base is not None
    return str(base["attributes"][receipts.LISTING])


def test_a_changed_input_writes_only_its_changes_to_the_receipt(
    client: AtlasClient, domain: str, searched: list[str]
) -> None:
    Publisher(client, domain=domain).sync(graph())
    first = listing_of(client, domain)
    assert len(receipts.decode_listing(first) or {}) == TOTAL
    resync(client, domain, changed_doc())
    assert listing_of(client, domain) == first, "the listing was written again"
    receipt = held(client, domain)
    assert receipt is not None
    ref, _, changes = receipt["attributes"][receipts.LISTING].partition(":")
    assert ref == receipts.listing_ref(first)
    assert list(receipts.decode_listing(changes) or {}) == [("lineage_dataset", f"raw.orders@{domain}")]
    searched.clear()
    back = resync(client, domain)  # the first input again: from the listing and its changes
    assert searched == [] and back.plan.counts["update"] == 1
    assert (
        receipts.decode_listing(held(client, domain)["attributes"][receipts.LISTING].partition(":")[2]) == {}
    )


def test_a_listing_that_is_not_the_one_the_receipt_names_makes_the_sync_list_in_atlas(
    client: AtlasClient, domain: str, searched: list[str]
) -> None:
    Publisher(client, domain=domain).sync(graph())
    other = receipts.encode_listing([])
    client.upsert_entities(
        [
            {
                "typeName": RECEIPT_TYPE,
                "attributes": {
                    "qualifiedName": job_key(domain, JOB) + receipts.BASE_SUFFIX,
                    "name": "tampered",
                    receipts.LISTING: other,
                },
            }
        ]
    )
    searched.clear()
    changed = resync(client, domain, changed_doc())
    assert searched == [JOB]
    assert changed.plan.counts["update"] == 1
    full = resync(client, domain, changed_doc(), refresh=True)
    assert full.plan.counts["unchanged"] == TOTAL and full.applied is None
