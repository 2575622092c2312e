"""One desired entity against what Atlas holds of it: its plan item, and what the sync writes for it.

The sync (reconcile.stream) reads what Atlas holds a chunk at a time and asks :func:`compare` about
each desired entity; nothing here reads the spool, calls Atlas or schedules a write, so each rule can
be checked on its own:

* the digest (reconcile.digest, docs/resync.md): the entity is written with its digest, in which
  this job's part replaces its old one and the other jobs' parts stay; the digest's own change is not
  shown beside the others;
* metadata (reconcile.metadata, docs/metadata.md): this job's claims in the record
  (the profile's metadata attribute, or a native profile's business attribute ``metadata_record``), written
  with the entity before the requests, the job's digest part after them;
* a native profile's shared datasets (docs/existing-atlas.md): another tool's is ``referenced``, never
  written (but for what ``foreign = true`` rules add of metadata), and one of ours is written once:
  later syncs send its metadata requests alone;
* another job's entity (its owner, ``atlasSyncJob`` or the job label, is not this job; docs/design.md,
  "Shared datasets"): the job only completes it, writing the attributes and references it lacks, never
  replacing what the owner wrote, and keeps the owner's digest (reconcile.digest.completed): two jobs
  that read one table leave it as its owner wrote it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.reconcile.actual import ActualEntity, Key
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.reconcile.digest import completed, merged, without_metadata
from atlas_sync.reconcile.metadata import (
    MetadataOps,
    claimants,
    encode_record,
    held_metadata,
    minus,
    plan_metadata,
    read_record,
    union,
)
from atlas_sync.reconcile.plan import Change, PlanItem, plan_item, without_refs_to
from atlas_sync.render.renderer import DesiredEntity


@dataclass(frozen=True)
class CompareOptions:
    """What one sync compares with. ``job_key``: this job's key (its claims and digest part);
    ``bookkeeping``: the profile's attributes and those the server's types have (a digest and record
    it lacks are not written, nor is the key it lacks); ``metadata_record``: a native profile's record
    (business metadata, attribute), when the server has it; ``owner``: this job's owner mark (an entity with
    another mark is another job's: only completed); ``term_guids``: term qualifiedName -> guid; ``dry_run``: a plan only."""

    job_key: str
    domain: str
    bookkeeping: Bookkeeping = field(default_factory=Bookkeeping)
    metadata_record: tuple[str, str] | None = None
    owner: str | None = None
    term_guids: Mapping[str, str] = field(default_factory=dict)
    dry_run: bool = False


@dataclass
class MetadataWork:
    """An entity's metadata requests, sent after the entities are written, then its digest and
    record as they are once the requests are in (``None``: nothing to write then)."""

    entity: DesiredEntity
    item: PlanItem
    ops: MetadataOps
    digest: str | None
    record: str | None
    # the entity went to a write batch too (counted there); else its update is these requests alone
    written: bool = True


@dataclass
class Decision:
    """What the sync does about one desired entity: the plan's ``item``, recorded with ``entity``
    (what apply sends; ``None`` for another tool's entity, of which nothing is written); ``write``:
    the entity goes to a write batch now; ``metadata``: its metadata requests, for after the writes."""

    item: PlanItem
    entity: DesiredEntity | None
    write: bool
    metadata: MetadataWork | None = None


def compare(
    e: DesiredEntity,
    guid: str | None,
    actual: ActualEntity | None,
    options: CompareOptions,
    *,
    skipped: set[Key] | None = None,
    foreign_guid: str | None = None,
    foreign_actual: ActualEntity | None = None,
) -> Decision:
    """Decide about ``e``, which Atlas holds under ``guid`` (``None``: not in the job's listing nor
    found by name) as ``actual`` (read in full; ``None``: to create, or not read). ``e`` is changed
    in place to what is written (its digest and record). ``skipped``: entities left out
    (``--missing-datasets skip``), references to which are dropped; ``foreign_guid``, ``foreign_actual``:
    another tool's entity of ``e``'s name (a native profile's shared dataset outside the domain), and
    that entity read in full when its metadata is reconciled."""
    o = options
    bk = o.bookkeeping
    if bk.profile.key is not None and bk.key is None:  # (a server whose types lack it)
        e.create_only.pop(bk.profile.key, None)
    e = without_refs_to(e, skipped or set())
    others = actual is not None and o.owner is not None and actual.owner not in (None, o.owner)
    if others:
        assert actual is not None
        e = _completing(e, actual, {bk.digest, bk.metadata, OWNER})
    theirs = foreign_guid if e.shared and guid is None else None
    meta = _metadata_of(e, guid, actual, theirs, o)
    ops = meta.ops if meta is not None else None
    digest_name = bk.digest
    wanted: str | None = e.attributes.get(digest_name) if digest_name else None
    held_digest = actual.attributes.get(digest_name) if actual and digest_name else None
    if others and digest_name and wanted is not None:
        # the owner's digest stays (its next sync finds the entity as it wrote it), with this job's
        # part: what it wanted, so that its next sync decides from the listing too
        wanted = completed(held_digest, wanted)
        if wanted is None:
            e.attributes.pop(digest_name)
    drop = meta.invalidate if meta is not None else set()
    if wanted is not None and digest_name:
        # this job's part of the stored digest; the other jobs' parts stay as they are
        e.attributes[digest_name] = merged(held_digest, o.job_key, wanted, drop=drop)
    if theirs is not None:
        return _theirs(e, theirs, foreign_actual, o)
    item = plan_item(e, actual)
    if len(item.changes) > 1 and digest_name:
        # the digest changes with every other change: not worth a line of the plan
        item.changes = [c for c in item.changes if c.attribute != digest_name]
    if meta is not None and not ops:
        # claims changed without a request (another job's item joined or left): shown so
        shown = [c for c in item.changes if c.attribute != bk.metadata]
        if len(shown) < len(item.changes):
            item.changes = shown + meta.claim_changes()
    first_write = True
    work: MetadataWork | None = None
    if ops:
        assert meta is not None
        real = [c for c in item.changes if c.attribute != digest_name]
        # written before the requests: an entity to create, other attributes, or the record
        # of what is ours (claimed before it is added, and what is to be removed still
        # claimed, so a sync killed in between still knows it is ours); the job's digest
        # part is written once the metadata it covers is in Atlas (a sync killed in between
        # reads the entity in full next time)
        first_write = item.action == "create" or bool(real)
        # the record's change is shown as what it records: `classifications: +PII`
        item.changes = [c for c in real if c.attribute != bk.metadata] + ops.changes()
        if item.action == "unchanged":
            item.action = "update"
        item.metadata = ops.to_json()
        later_digest = e.attributes.get(digest_name) if digest_name else None
        if wanted is not None and digest_name and (first_write or o.dry_run):
            # (a saved plan's apply writes the entity, then the requests: without this
            # job's part, the next sync reads it in full and writes it once all is in)
            e.attributes[digest_name] = merged(held_digest, o.job_key, without_metadata(wanted), drop=drop)
        work = MetadataWork(e, item, ops, later_digest, meta.post)
    if e.shared and item.action == "update":
        # a shared dataset is written once, minimally: what a hook adds later is not fought
        # over (its metadata requests are made all the same)
        kept = ops.changes() or (meta.claim_changes() if meta else []) if ops else []
        item = PlanItem(
            "update" if ops else "unchanged",
            e.type_name,
            e.qualified_name,
            item.guid,
            kept,
            item.tier,
            item.fingerprint,
            metadata=item.metadata,
        )
        if work is not None:
            work.item = item
            first_write = False
    # metadata only (not first_write): its requests, then the digest (after the writes)
    if work is not None:
        work.written = item.action != "unchanged" and first_write
    return Decision(item, e, item.action != "unchanged" and first_write, work)


def _completing(e: DesiredEntity, actual: ActualEntity, kept: set[str | None]) -> DesiredEntity:
    """``e`` as a job writes another job's entity: what ``actual`` lacks (an empty or unset attribute
    or reference) as the job wants it, the rest as the owner wrote it (Atlas wants the mandatory
    ones in every write; a reader that knows part of a table numbers its columns otherwise, and
    describes less); ``kept``: bookkeeping, written as for the job's own entities."""

    def missing(value: Any) -> bool:
        return value is None or value == "" or value == [] or value == {}

    attributes = {
        k: v if k in kept or missing(actual.attributes.get(k)) else actual.attributes[k]
        for k, v in e.attributes.items()
    }
    refs = {k: v if missing(actual.refs.get(k)) else actual.refs[k] for k, v in e.refs.items()}
    return dataclasses.replace(e, attributes=attributes, refs=refs)


def _metadata_of(
    e: DesiredEntity,
    guid: str | None,
    actual: ActualEntity | None,
    theirs: str | None,
    o: CompareOptions,
) -> _EntityMetadata | None:
    """What the sync does about ``e``'s metadata (``theirs``: another tool's entity: see
    :func:`_theirs`); the record to write with the entity goes into its attributes."""
    record_attribute = o.bookkeeping.metadata
    if record_attribute and not e.shared:
        held_record = actual.attributes.get(record_attribute) if actual else None
        meta = _plan_metadata(e.metadata, actual, held_record, o.term_guids, o.job_key, o.domain, _owner(e))
        if meta is not None:
            e.attributes[record_attribute] = meta.pre
            _clear_owner(e, meta)
        return meta
    if o.metadata_record is not None and (guid is None or actual is not None) and not theirs:
        meta = _native_metadata(
            e.metadata, actual, o.metadata_record, o.term_guids, o.job_key, o.domain, _owner(e)
        )
        if meta is not None:
            _clear_owner(e, meta)
        return meta
    return None


OWNER = "owner"  # the attribute a rule's (or a reader's) owners are written to


def _owner(e: DesiredEntity) -> str | None:
    value = e.attributes.get(OWNER)
    return value if isinstance(value, str) and value else None


def _clear_owner(e: DesiredEntity, meta: _EntityMetadata) -> None:
    """The owner this job wrote and no longer sets, unchanged since and claimed by no other job:
    written empty (Atlas clears an optional string given ``null``)."""
    if meta.clear_owner:
        e.attributes[OWNER] = None


def _theirs(e: DesiredEntity, theirs: str, other: ActualEntity | None, o: CompareOptions) -> Decision:
    """Another tool's entity of ``e``'s name (``theirs``, read in full as ``other`` when its
    metadata is reconciled): referenced, never written; only what ``foreign = true`` rules want of
    metadata, and our record of it, are sent."""
    if other is not None and o.metadata_record is not None:
        fmeta = _native_metadata(
            e.foreign_metadata, other, o.metadata_record, o.term_guids, o.job_key, o.domain
        )
        if fmeta is not None and fmeta.ops:
            item = PlanItem(
                "update",
                e.type_name,
                e.qualified_name,
                guid=theirs,
                changes=fmeta.ops.changes() or fmeta.claim_changes(),
                tier=e.tier,
            )
            item.metadata = fmeta.ops.to_json()
            # (no entity: nothing of it is written)
            return Decision(item, None, False, MetadataWork(e, item, fmeta.ops, None, None))
    return Decision(
        PlanItem("referenced", e.type_name, e.qualified_name, guid=theirs, tier=e.tier), None, False
    )


@dataclass
class _EntityMetadata:
    """What a sync does about one entity's metadata: the requests, the record as it is (``held``),
    as written before the requests (``pre``: this job's old and new claims, so that what is to be
    removed is still claimed if the sync stops before it is) and after them (``post``), and the other
    jobs whose digest part is dropped (they shared a claim this job dropped: their next sync reads
    the entity in full, and a classification's or business attribute's settings become theirs)."""

    ops: MetadataOps
    held: str | None
    pre: str | None
    post: str | None
    invalidate: set[str]
    joined: list[str]
    left: list[str]
    clear_owner: bool = False

    def claim_changes(self) -> list[Any]:
        """The plan's line for claims changed without a request: ``claims: +PII -gdpr``."""
        text = " ".join([*(f"+{x}" for x in self.joined), *(f"-{x}" for x in self.left)])
        return [Change("claims", None, text or "upgraded")]


def _native_metadata(
    desired: dict[str, Any] | None,
    actual: Any,
    record: tuple[str, str],
    term_guids: Mapping[str, str],
    me: str,
    domain: str,
    owner: str | None = None,
) -> _EntityMetadata | None:
    """:func:`_plan_metadata` under a native profile: the record is a business attribute (``record``),
    written by requests of its own, before the others (claims) and after them (claims let go)."""
    bm, attr = record
    business = (actual.extras.get("businessAttributes") or {}) if actual is not None else {}
    held = (business.get(bm) or {}).get(attr) if isinstance(business, dict) else None
    meta = _plan_metadata(desired, actual, held, term_guids, me, domain, owner)
    if meta is None:
        return None
    if meta.pre != meta.held:
        meta.ops.record_before = [bm, attr, meta.pre]
    if meta.post != meta.pre:
        meta.ops.record_after = [bm, attr, meta.post]
    return meta


def _plan_metadata(
    desired: dict[str, Any] | None,
    actual: Any,
    held_record: Any,
    term_guids: Mapping[str, str],
    me: str,
    domain: str,
    owner: str | None = None,
) -> _EntityMetadata | None:
    """What an entity needs to carry ``desired`` as job ``me`` (its job key) wants it, given what it
    holds (``actual``, ``None`` for one to create) and its record (``held_record``): the requests, and
    the record of every job's claims to write before and after them (``None`` when nothing is, nor
    was, claimed). ``owner``: the ``owner`` attribute the job writes (an attribute, written with the entity): recorded
    as the job's claim, and cleared once the job no longer sets it (``clear_owner``), unless another
    job claims one or someone changed it since."""
    sections = read_record(held_record)
    if not desired and not sections and owner is None:
        return None
    mine = sections.pop(me, {})
    others = union(*sections.values())
    held = held_metadata(actual.extras) if actual is not None else None
    ops, new = plan_metadata(desired, held, mine, term_guids, others)
    clear = False
    if owner is not None:
        new["o"] = owner
    elif mine.get("o") is not None and others.get("o") is None and actual is not None:
        clear = actual.attributes.get(OWNER) == mine["o"]  # (changed since: someone else's now)
    post = encode_record({**sections, me: new})
    pre = encode_record({**sections, me: union(mine, new)}) if ops else post
    dropped = minus(mine, new)
    invalidate = claimants(sections, {"c": dropped["c"], "b": dropped["b"]})
    flat = union(new)
    old = union(mine)
    joined = [*(c for c in flat["c"] if c not in old["c"]), *(x for x in flat["l"] if x not in old["l"])]
    joined += [t for t in flat["t"] if t not in old["t"]]
    left = [*dropped["c"], *dropped["l"], *dropped["t"]]
    if flat.get("o") is not None and old.get("o") != flat["o"]:
        joined.append(f"owner={flat['o']}")
    if dropped.get("o") is not None and flat.get("o") is None:
        left.append(f"owner={dropped['o']}")
    return _EntityMetadata(ops, held_record, pre, post, invalidate, joined, left, clear)
