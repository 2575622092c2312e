"""One desired entity against what Atlas holds of it (reconcile.compare), by the rules of
docs/resync.md (the digest and its per-job parts), docs/metadata.md (each job's claims, written
before the requests, the job's digest part after them) and docs/existing-atlas.md (a native
profile's shared datasets): no spool, client or scheduler."""

from __future__ import annotations

import dataclasses
from typing import Any

from atlas_sync.reconcile.actual import ActualEntity
from atlas_sync.reconcile.bookkeeping import Bookkeeping, job_key
from atlas_sync.reconcile.compare import CompareOptions, Decision, compare
from atlas_sync.reconcile.digest import entity_digest, for_other_job, merged, without_metadata
from atlas_sync.reconcile.metadata import encode_record, read_record
from atlas_sync.render.profile import BookkeepingNames
from atlas_sync.render.renderer import DesiredEntity

DOMAIN = "d"
ME = job_key(DOMAIN, "A")  # the syncing job
OTHER = job_key(DOMAIN, "B")  # another job of the domain sharing the dataset
DIGEST = "atlasSyncDigest"
RECORD = "atlasSyncMetadata"
NAMES = BookkeepingNames(digest=DIGEST, key="atlasSyncKey", metadata=RECORD)
OPTIONS = CompareOptions(job_key=ME, domain=DOMAIN, bookkeeping=Bookkeeping.of(NAMES))
# the `atlas` profile: Atlas's own types, no attribute of ours; the record in a business attribute
NATIVE = CompareOptions(job_key=ME, domain=DOMAIN)
NATIVE_RECORD = dataclasses.replace(NATIVE, metadata_record=("atlasSync", "metadata"))

PII = {"classifications": [{"typeName": "PII", "attributes": {}}]}


def table(
    qn: str = "raw.customers@d",
    *,
    type_name: str = "lineage_dataset",
    shared: bool = False,
    metadata: dict[str, Any] | None = None,
    foreign_metadata: dict[str, Any] | None = None,
    **attrs: Any,
) -> DesiredEntity:
    return DesiredEntity(
        type_name,
        qn,
        {"qualifiedName": qn, "name": qn.split("@")[0], **attrs},
        tier=1,
        shared=shared,
        metadata=metadata,
        foreign_metadata=foreign_metadata,
    )


def hive_table(**kw: Any) -> DesiredEntity:
    return table("default.tab1@primary", type_name="hive_table", **kw)


def wanted(e: DesiredEntity) -> DesiredEntity:
    """``e`` as the spool hands it over: carrying the digest it would be written with now."""
    e.attributes[DIGEST] = entity_digest(e, DIGEST)
    return e


def held(
    e: DesiredEntity,
    *,
    guid: str = "g1",
    owner: str = "A",
    classifications: list[dict[str, Any]] | None = None,
    business: dict[str, Any] | None = None,
    **attributes: Any,
) -> ActualEntity:
    """What Atlas holds: ``e``'s attributes (but ``attributes``), and the metadata given."""
    return ActualEntity(
        guid=guid,
        type_name=e.type_name,
        qualified_name=e.qualified_name,
        owner=owner,
        attributes={**e.attributes, **attributes},
        refs=dict(e.refs),
        extras={
            "guid": guid,
            "classifications": classifications or [],
            "labels": [],
            "businessAttributes": business or {},
            "relationshipAttributes": {"meanings": []},
        },
    )


def shown(d: Decision) -> list[tuple[str, Any]]:
    return [(c.attribute, c.after) for c in d.item.changes]


# ------------------------------------------------------------------ the digest (docs/resync.md)
def test_an_entity_held_as_it_would_be_written_now_is_unchanged_and_not_written() -> None:
    e = wanted(table(description="orders"))
    d = compare(e, "g1", held(table(description="orders"), **{DIGEST: e.attributes[DIGEST]}), OPTIONS)
    assert d.item.action == "unchanged" and d.item.guid == "g1"
    assert not d.write and d.metadata is None


def test_this_jobs_write_keeps_the_other_jobs_digest_parts() -> None:
    e = wanted(table(description="new"))
    mine = e.attributes[DIGEST]
    theirs = f"{OTHER}=kkkkkkkkkkk"
    stored = f"{entity_digest(table(description='old'), DIGEST)} {theirs}"
    d = compare(e, "g1", held(table(description="old"), **{DIGEST: stored}), OPTIONS)
    assert d.item.action == "update" and d.write and d.entity is e
    assert e.attributes[DIGEST] == f"{mine} {theirs}"
    # the digest changes with every change: not shown beside a real one
    assert shown(d) == [("description", "new")]


def test_an_entity_written_without_a_digest_is_an_update_of_the_digest_alone() -> None:
    e = wanted(table())
    d = compare(e, "g1", held(table()), OPTIONS)
    assert d.item.action == "update" and d.write
    assert shown(d) == [(DIGEST, e.attributes[DIGEST])]


def test_an_entity_atlas_lacks_is_created_with_its_key_unless_the_server_lacks_the_key() -> None:
    e = wanted(table())
    e.create_only = {"atlasSyncJob": "A", "atlasSyncKey": "dkeyjkey"}
    d = compare(e, None, None, OPTIONS)
    assert d.item.action == "create" and d.write and d.entity is e
    assert e.create_only["atlasSyncKey"] == "dkeyjkey"
    # a server whose types lack the key attribute would refuse it: the entity is written without
    later = wanted(table())
    later.create_only = {"atlasSyncJob": "A", "atlasSyncKey": "dkeyjkey"}
    keyless = Bookkeeping.of(NAMES, lambda name: name != "atlasSyncKey")
    compare(later, None, None, dataclasses.replace(OPTIONS, bookkeeping=keyless))
    assert later.create_only == {"atlasSyncJob": "A"}


def test_references_to_entities_left_out_are_dropped() -> None:
    # --missing-datasets skip: a process still written refers to no left-out dataset
    a, b = ("hive_table", "a@p"), ("hive_table", "b@p")
    process = DesiredEntity("spark_process", "job:p@p", {"qualifiedName": "job:p@p"}, refs={"inputs": [a, b]})
    d = compare(process, None, None, NATIVE, skipped={b})
    assert d.entity is not None and d.entity.refs["inputs"] == [a]


# ------------------------------------------------------------------ another job's entity (docs/design.md)
AS_A = dataclasses.replace(OPTIONS, owner="A")  # this job's owner mark (atlasSyncJob)


def test_another_jobs_column_described_otherwise_keeps_the_owners_values_and_digest() -> None:
    # B (dbt) created the column as the sixth of its table; A (SQL) knows two columns and numbers it 1
    e = wanted(table("c.lifetime_value@d", type_name="lineage_column", position=1))
    mine = e.attributes[DIGEST]
    actual = held(
        table("c.lifetime_value@d", type_name="lineage_column", position=5, description="LTV"),
        owner="B",
        **{DIGEST: "1:OwnerDigest"},
    )
    d = compare(e, "g1", actual, AS_A)
    # written once: A's part of the digest (what A wanted), beside the owner's, which stays
    assert d.item.action == "update" and d.write
    assert d.entity is not None
    assert shown(d) == [(DIGEST, f"1:OwnerDigest {ME}={mine[1:]}")]
    assert d.entity.attributes["position"] == 5  # (the owner's, sent back as Atlas holds it)
    # A's next sync compares what it wants with its part: unchanged, decided from the listing
    assert for_other_job(d.entity.attributes[DIGEST], ME) == mine
    written = dataclasses.replace(
        actual, attributes={**actual.attributes, DIGEST: d.entity.attributes[DIGEST]}
    )
    again = compare(
        wanted(table("c.lifetime_value@d", type_name="lineage_column", position=1)), "g1", written, AS_A
    )
    assert again.item.action == "unchanged" and not again.write


def test_another_jobs_entity_is_completed_with_what_it_lacks_only() -> None:
    e = wanted(table(description="from the SQL job", comment="mine"))
    actual = held(table(comment="the owner's"), owner="B", **{DIGEST: f"1:OwnerDigest {OTHER}=kkkkkkkkkkk"})
    d = compare(e, "g1", actual, AS_A)
    assert d.item.action == "update" and d.write
    assert shown(d) == [("description", "from the SQL job")]
    assert d.entity is not None and d.entity.attributes["comment"] == "the owner's"
    assert d.entity.attributes[DIGEST].startswith(f"1:OwnerDigest {OTHER}=kkkkkkkkkkk {ME}=:")


def test_another_jobs_entity_seen_as_its_owner_wrote_it_is_not_written() -> None:
    e = wanted(table(description="orders"))
    d = compare(e, "g1", held(table(description="orders"), owner="B", **{DIGEST: e.attributes[DIGEST]}), AS_A)
    assert d.item.action == "unchanged" and not d.write


def test_another_jobs_entity_without_a_digest_is_completed_without_one() -> None:
    e = wanted(table(description="d"))
    d = compare(e, "g1", held(table(), owner="B"), AS_A)
    assert shown(d) == [("description", "d")]
    assert d.entity is not None and DIGEST not in d.entity.attributes


def test_the_jobs_own_entity_is_still_rewritten_as_it_wants_it() -> None:
    e = wanted(table("c.x@d", type_name="lineage_column", position=1))
    d = compare(e, "g1", held(table("c.x@d", type_name="lineage_column", position=5), owner="A"), AS_A)
    assert d.item.action == "update" and ("position", 1) in shown(d)


# ------------------------------------------------------------------ metadata (docs/metadata.md)
def test_new_metadata_is_claimed_with_the_entity_before_the_requests_and_digested_after() -> None:
    e = wanted(table(metadata=PII))
    want = e.attributes[DIGEST]
    d = compare(e, "g1", held(table(), **{DIGEST: entity_digest(table(), DIGEST)}), OPTIONS)
    # written first: the record with the new claim (claimed before it is added) and the entity's
    # digest without this job's part (a sync killed before the requests reads it in full next time)
    assert d.write and d.item.action == "update"
    assert read_record(e.attributes[RECORD]) == {ME: {"c": ["PII"]}}
    assert e.attributes[DIGEST] == without_metadata(want)
    # then the requests, then this job's digest part and the record as it stays
    assert d.metadata is not None
    assert [c["typeName"] for c in d.metadata.ops.add_classifications] == ["PII"]
    assert d.metadata.digest == merged(None, ME, want) and d.metadata.digest != without_metadata(want)
    assert read_record(d.metadata.record) == {ME: {"c": ["PII"]}}
    # the plan shows what the record records
    assert shown(d) == [("classifications", "+PII")] and d.item.metadata


def test_an_item_another_job_added_is_claimed_without_a_request() -> None:
    e = wanted(table(metadata=PII))
    record = encode_record({OTHER: {"c": ["PII"]}})
    d = compare(e, "g1", held(table(), classifications=[{"typeName": "PII"}], **{RECORD: record}), OPTIONS)
    assert d.metadata is None  # nothing to send
    assert d.write and read_record(e.attributes[RECORD]) == {ME: {"c": ["PII"]}, OTHER: {"c": ["PII"]}}
    assert shown(d) == [("claims", "+PII")]


def test_a_wanted_classification_a_person_added_stays_theirs() -> None:
    e = wanted(table(metadata=PII))
    stored = merged(None, ME, e.attributes[DIGEST])
    a = held(table(), classifications=[{"typeName": "PII"}], **{DIGEST: stored})
    d = compare(e, "g1", a, OPTIONS)
    # neither added again, nor claimed (so not removed when the rule goes)
    assert d.item.action == "unchanged" and not d.write and d.metadata is None
    assert e.attributes.get(RECORD) is None


def test_a_claim_let_go_that_another_job_shares_sends_nothing_and_drops_its_digest_part() -> None:
    e = wanted(table())  # this job's rules no longer want PII
    entity = e.attributes[DIGEST]
    record = encode_record({ME: {"c": ["PII"]}, OTHER: {"c": ["PII"]}})
    stored = f"{entity} {ME}=mmmmmmmmmmm {OTHER}=kkkkkkkkkkk"
    a = held(table(), classifications=[{"typeName": "PII"}], **{RECORD: record, DIGEST: stored})
    d = compare(e, "g1", a, OPTIONS)
    assert d.metadata is None  # PII stays: the other job claims it
    assert d.write and read_record(e.attributes[RECORD]) == {OTHER: {"c": ["PII"]}}
    # PII's settings are the other job's to put now: its next sync reads the entity in full
    assert e.attributes[DIGEST] == entity
    assert shown(d) == [("claims", "-PII")]


def test_a_change_of_metadata_alone_writes_the_entity_only_after_its_requests() -> None:
    before = {"classifications": [{"typeName": "PII", "attributes": {}, "propagate": True}]}
    after = {"classifications": [{"typeName": "PII", "attributes": {}, "propagate": False}]}
    stored = merged(None, ME, wanted(table(metadata=before)).attributes[DIGEST])
    record = encode_record({ME: {"c": ["PII"]}})
    a = held(
        table(), classifications=[{"typeName": "PII", "propagate": True}], **{RECORD: record, DIGEST: stored}
    )
    e = wanted(table(metadata=after))
    want = e.attributes[DIGEST]
    d = compare(e, "g1", a, OPTIONS)
    assert d.item.action == "update" and not d.write  # nothing to write before the request
    assert shown(d) == [("classifications", "~PII")]
    assert d.metadata is not None and d.metadata.ops.update_classifications == after["classifications"]
    assert d.metadata.digest == merged(stored, ME, want)
    # a saved plan's apply writes the entity, then the requests: the entity goes without this job's
    # part then, so the next sync reads it in full and writes the part once all is in
    e = wanted(table(metadata=after))
    compare(e, "g1", a, dataclasses.replace(OPTIONS, dry_run=True))
    assert e.attributes[DIGEST] == merged(stored, ME, without_metadata(want))


# ------------------------------------------------------------------ shared datasets (docs/existing-atlas.md)
def test_another_tools_dataset_is_referenced_never_written() -> None:
    d = compare(hive_table(shared=True, description="ours"), None, None, NATIVE, foreign_guid="hook-1")
    assert d.item.action == "referenced" and d.item.guid == "hook-1"
    assert not d.write and d.entity is None and d.metadata is None
    # a rule without `foreign = true` adds nothing there
    theirs = held(hive_table(), guid="hook-1", owner="")
    e = hive_table(shared=True, metadata=PII)
    d = compare(e, None, None, NATIVE_RECORD, foreign_guid="hook-1", foreign_actual=theirs)
    assert d.item.action == "referenced" and d.metadata is None


def test_foreign_rules_send_metadata_requests_alone_to_another_tools_dataset() -> None:
    theirs = held(hive_table(), guid="hook-1", owner="", classifications=[{"typeName": "HookTag"}])
    e = hive_table(shared=True, foreign_metadata=PII)
    d = compare(e, None, None, NATIVE_RECORD, foreign_guid="hook-1", foreign_actual=theirs)
    assert d.item.action == "update" and d.item.guid == "hook-1"
    assert not d.write and d.entity is None  # its attributes and relationships are never written
    assert shown(d) == [("classifications", "+PII")]
    assert d.metadata is not None
    ops = d.metadata.ops
    assert [c["typeName"] for c in ops.add_classifications] == ["PII"] and not ops.remove_classifications
    # our record of it, in the business attribute, before the classification is added
    bm, attr, text = ops.record_before
    assert (bm, attr) == ("atlasSync", "metadata") and read_record(text) == {ME: {"c": ["PII"]}}


def test_a_shared_dataset_missing_from_atlas_is_created() -> None:
    d = compare(hive_table(shared=True), None, None, NATIVE)
    assert d.item.action == "create" and d.write


def test_a_shared_dataset_of_ours_is_written_once_then_left_as_the_hook_makes_it() -> None:
    e = hive_table(shared=True, description="from the input")
    d = compare(e, "g1", held(hive_table(description="the hook's")), NATIVE)
    assert d.item.action == "unchanged" and not d.write


def test_a_shared_dataset_of_ours_gets_its_metadata_requests_alone() -> None:
    e = hive_table(shared=True, description="from the input", metadata=PII)
    d = compare(e, "g1", held(hive_table(description="the hook's")), NATIVE_RECORD)
    assert d.item.action == "update" and not d.write
    assert shown(d) == [("classifications", "+PII")]  # not the description
    assert d.metadata is not None and d.metadata.item is d.item
