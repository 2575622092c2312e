"""A job's receipt: Atlas's own record of what the job's last sync left there.

An unchanged re-sync of a big job would list every entity the job owns only to find nothing to do
(Atlas 2.1.0: 1.6-2.5 s for 12,500 entities, about what re-posting them all costs), and render its
whole input first. The receipt lets it read one entity and one small search per root type instead:

* **What it holds.** One entity of type ``atlas_sync_receipt`` per job of a domain (qualifiedName:
  the job key), written by the job's last sync that left Atlas holding exactly what its input says:
  the fingerprint of that input (:func:`fingerprint`: what the reader read, the profile's files and
  the render code, the domain, the job, the metadata rules and the terms they name) and how many
  entities carry the job's key, deleted ones too.
* **When it holds.** Atlas changed none of those since: no entity with the job's key was modified
  after the receipt was written (``__modificationTimestamp``, Atlas's clock: creates, updates,
  deletes and classification changes all set it) and as many carry the key (a purge leaves no
  timestamp). Then a sync of the same input has nothing to write, and says so without rendering.
* **A changed input.** The receipt also keeps the job's entities as that sync left them (type,
  qualifiedName and a hash of the digest it rendered: about 13 characters an entity, compressed, up
  to ``LISTING_MAX``; in an entity of its own, ``BASE_SUFFIX``, the receipt holding the changes
  since it). A sync of another input that finds Atlas unchanged since takes them as the
  job's listing instead of searching Atlas for them (a real Atlas 2.1.0 lists 12,500 entities in
  1.4-3 s): an entity it renders alike is unchanged; those it renders otherwise, and those it no
  longer has, are read by unique attribute and compared, written or deleted as usual.
* **Overlapping syncs.** A sync's first entity write carries a stamp of the receipt naming its run
  (which voids it), in the same request: two syncs of one job that overlapped leave no receipt,
  since each checks at its end that the stamp is still its own. A sync whose writes are one request
  and nothing else (a small change: no deletes, no metadata requests after) sends the receipt
  itself in that request instead, vouching for what the request leaves; it then checks, by reading,
  that nothing else touched the job's entities between its check of the receipt and that request,
  nor since, and voids the receipt otherwise. So a sync's receipt costs no request of its own where
  its changes fit in one.

Only inputs of ``RECEIPT_MIN`` datasets and processes or more use receipts (a small job's own
listing is as cheap as the check), and only where the profile's job key and digest are on the
server's types and writes are answered when applied (not the ``ATLAS_HOOK`` transport).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import logging
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from atlas_sync.atlas.errors import AtlasError, BadRequestError, ConflictError
from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.reconcile.actual import UNKNOWN_TYPE
from atlas_sync.reconcile.bookkeeping import Bookkeeping, job_key, scope_key
from atlas_sync.reconcile.plan import StreamedPlan
from atlas_sync.reconcile.spool import Spool

RECEIPT_TYPE = "atlas_sync_receipt"
RECEIPT_MIN = 500
FORMAT = 1
SCOPE, JOB, RUN, INPUT, COUNT, ENTITIES, LISTING = (
    "atlasSyncScope",
    "atlasSyncJob",
    "atlasSyncRun",
    "atlasSyncInput",
    "atlasSyncCount",
    "atlasSyncEntities",
    "atlasSyncListing",
)
# The encoded listing a receipt keeps, at most (about 50,000 entities): a bigger job lists in full.
LISTING_MAX = 2_000_000
LISTING_FORMAT = "1"
# The listing itself is a second entity of the receipt's type (qualifiedName: the job key and this),
# written when it is new or the changes since pass an eighth of it; the receipt keeps those changes
# (its LISTING: "<listing_ref of the listing>:<changes>", a removed entity's hash REMOVED).
BASE_SUFFIX = "#listing"
REMOVED = "-"
DELTA_MIN = 1000
# (what it keeps of each: the type, the name and 48 bits of its digest: another input whose entity
# rendered differently but hashes alike, 1 in 2.8e14, would leave that entity as it was)

log = logging.getLogger(__name__)


def receipt_typedef() -> dict[str, Any]:
    """The receipt's entity type (registered by the first sync that writes one)."""

    def attr(name: str, type_name: str = "string", *, indexed: bool = False) -> dict[str, Any]:
        return {
            "name": name,
            "typeName": type_name,
            "isOptional": True,
            "cardinality": "SINGLE",
            "valuesMinCount": 0,
            "valuesMaxCount": 1,
            "isUnique": False,
            "isIndexable": indexed,
        }

    return {
        "entityDefs": [
            {
                "category": "ENTITY",
                "name": RECEIPT_TYPE,
                "description": "atlas-sync: what a job's last sync left in Atlas (reconcile.receipt)",
                "typeVersion": "1.1",
                "superTypes": ["Referenceable"],
                "attributeDefs": [
                    attr(SCOPE, indexed=True),
                    attr(JOB),
                    attr(RUN),
                    attr(INPUT),
                    attr(COUNT, "long"),
                    attr(ENTITIES, "long"),
                    attr(LISTING),
                ],
            }
        ]
    }


def fingerprint(spool: Spool, context: Mapping[str, Any]) -> str:
    """What decides a sync's entities: the input as read (the spool's chunks and datasets) and
    ``context`` (the profile's fingerprint, domain, job, rules, ...; JSON-serialisable)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps([FORMAT, context], sort_keys=True, default=str).encode())
    for part in spool.input_parts():
        h.update(b"\x00")
        h.update(part.encode())
    return f"{FORMAT}:{h.hexdigest()}"


def listing_hash(digest: str) -> str:
    """What a receipt's listing keeps of an entity's digest: 48 bits of its hash (8 characters)."""
    return base64.urlsafe_b64encode(hashlib.blake2b(digest.encode(), digest_size=6).digest()).decode("ascii")


def listing_ref(text: str) -> str:
    """How a receipt names the listing its changes are relative to (a hash of its text)."""
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def encode_listing(entries: Iterable[tuple[str, str, str]]) -> str | None:
    """Entries (type, qualifiedName, :func:`listing_hash` of the digest, or ``REMOVED``) as a receipt
    keeps them: compressed lines of the type's number, the name and the hash; ``None`` for a name
    with a tab or newline, or past ``LISTING_MAX``."""
    types: dict[str, int] = {}
    lines = []
    for t, qn, h in entries:
        if "\t" in qn or "\n" in qn or "\t" in t or "\n" in t:
            return None
        lines.append(f"{types.setdefault(t, len(types))}\t{qn}\t{h}")
    raw = "\n".join(["\t".join(types), *lines]).encode()
    text = f"{LISTING_FORMAT}:{base64.b64encode(zlib.compress(raw, 6)).decode('ascii')}"
    return text if len(text) <= LISTING_MAX else None


def decode_listing(text: str) -> dict[tuple[str, str], str] | None:
    """(type, qualifiedName) -> hash (or ``REMOVED``), as :func:`encode_listing` kept them; ``None``
    for what it cannot read."""
    fmt, _, packed = text.partition(":")
    if fmt != LISTING_FORMAT:
        return None
    try:
        head, *lines = zlib.decompress(base64.b64decode(packed, validate=True)).decode().split("\n")
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        return None
    types = head.split("\t")
    out: dict[tuple[str, str], str] = {}
    for line in lines:
        parts = line.split("\t")
        if len(parts) != 3 or not parts[0].isdigit() or int(parts[0]) >= len(types):
            return None
        out[(types[int(parts[0])], parts[1])] = parts[2]
    return out


@dataclass
class Held:
    """A receipt as Atlas holds it."""

    run: str
    input: str
    count: int | None
    entities: int | None
    updated: int | None  # Atlas's updateTime of the receipt, ms
    listing: str | None = None  # the job's entities as the sync that wrote it left them


# What rode with a sync's first entity write (:meth:`JobReceipt.rider`)
STAMP, FINAL = "stamp", "final"
TIME = "__modificationTimestamp"


class JobReceipt:
    """The receipt of ``job`` in ``domain``: check it (:meth:`holds`), ride with the sync's first
    entity write (:meth:`ride`), write it, or check the one that rode, after the last (:meth:`finish`)."""

    def __init__(
        self,
        client: AtlasApi,
        domain: str,
        job: str,
        root_types: list[str],
        bookkeeping: Bookkeeping,
        input_fingerprint: str,
        *,
        may_register: bool = True,
        spool: Spool | None = None,
    ) -> None:
        self.client = client
        self.input = input_fingerprint
        self.domain = domain
        self.job = job
        self.root_types = root_types
        self.key = job_key(domain, job)
        by_key = bookkeeping.job_filter(domain, job)
        assert by_key is not None  # (a receipt is kept only where the server's types have the key)
        self.by_key = by_key
        self.may_register = may_register
        self.run = uuid.uuid4().hex
        self.type_known: bool | None = None
        self.held: Held | None = None
        self.start: Held | None = None  # the receipt as this sync first read it
        # (count, newest) of the job's entities when this sync checked the receipt, before listing them
        self.checked: tuple[int, int] | None = None
        self.rode: str | None = None  # what rode with the sync's first entity write: STAMP or FINAL
        self.disabled = False
        self.typedef_writes = 0
        self._may_list = False  # another input, and the receipt's listing may serve (listed())
        self._listed: int | None = None  # how many entities the receipt's listing gave this sync
        self._base: tuple[str, dict[tuple[str, str], str]] | None = None  # the listing read: (ref, entries)
        self._final: tuple[int, int] | None = None  # the count and entities a FINAL receipt said
        self.spool = spool  # the sync's (what :meth:`ride` vouches for)

    # ------------------------------------------------------------------ reading
    def read(self) -> Held | None:
        """The receipt Atlas holds, or ``None`` (none yet, or no receipt type on the server)."""
        try:
            e = self.client.get_entity_by_unique(
                RECEIPT_TYPE, self.key, min_ext_info=True, ignore_relationships=True
            )
        except BadRequestError as exc:
            if exc.error_code != UNKNOWN_TYPE:
                raise
            self.type_known = False
            return None
        self.type_known = True
        if not e:
            return None
        a = e.get("attributes") or {}
        listing = a.get(LISTING)
        return Held(
            run=str(a.get(RUN) or ""),
            input=str(a.get(INPUT) or ""),
            count=_int(a.get(COUNT)),
            entities=_int(a.get(ENTITIES)),
            updated=_int(e.get("updateTime")),
            listing=listing if isinstance(listing, str) and listing else None,
        )

    def _newest_calls(self, criteria: list[dict[str, Any]] | None = None) -> list[Callable[[], Any]]:
        # one small search per root type (Atlas before 2.2 takes one type name per search)
        filters = self.by_key if not criteria else {"condition": "AND", "criterion": [self.by_key, *criteria]}
        return [
            functools.partial(self.client.search_newest, t, entity_filters=filters) for t in self.root_types
        ]

    def _newest(self) -> tuple[int | None, int | None]:
        """How many entities carry the job's key (deleted ones too) and when the newest of them was
        modified; ``(None, None)`` where the server does not say."""
        return _summed(_at_once(self._newest_calls()))

    def holds(self) -> bool:
        """Whether Atlas holds what the last sync of this input left there, untouched since. For
        another input, whether the receipt's listing may serve (:meth:`listed`)."""
        try:
            held = self.held = self.start = self.read()
            if held is None or held.updated is None or held.count is None:
                why = "none yet" if held is None else "none vouched for"
                log.info("job receipt of %s: %s; comparing in full", self.job, why)
                return False
            count, newest = self._newest()
        except AtlasError as exc:
            self._give_up("read", exc)
            return False
        if count is not None and newest is not None:
            self.checked = (count, newest)  # (before the job is listed: what changes after is seen)
        unchanged = self._unchanged(count, newest)
        if held.input != self.input:
            self._may_list = unchanged and held.listing is not None
            why = "its listing serves" if self._may_list else "comparing in full"
            log.info("job receipt of %s: another input; %s", self.job, why)
            return False
        if not unchanged:
            log.info(
                "job receipt of %s: the job's entities changed in Atlas since; comparing in full", self.job
            )
            return False
        log.info("job receipt of %s: same input, Atlas unchanged since; nothing to compare", self.job)
        return True

    def _unchanged(self, count: int | None, newest: int | None) -> bool:
        # (a receipt that rode with the sync's write has that write's time: Atlas stamps every entity
        # of one request with the request's time)
        held = self.held
        return (
            held is not None
            and held.updated is not None
            and count == held.count
            and newest is not None
            and newest <= held.updated
        )

    def listed(self) -> dict[tuple[str, str], str] | None:
        """For another input than the receipt's, where Atlas held the job's entities unchanged since
        the receipt when :meth:`holds` checked: the job's entities as the receipt lists them (key ->
        :func:`listing_hash` of the digest that sync rendered); ``None``: list them in Atlas. (A write
        to the job after that check is found at the end: :meth:`finish` voids the receipt.)"""
        if not self._may_list or self.held is None or self.held.listing is None:
            return None
        found = self._held_listing()
        if found is None or len(found) != self.held.entities:
            log.info("job receipt of %s: its listing is missing or unreadable; listing in full", self.job)
            return None
        log.info(
            "job receipt of %s: another input, Atlas unchanged since: the receipt lists the job's %d entities",
            self.job,
            len(found),
        )
        self._listed = len(found)
        return found

    def _held_listing(self) -> dict[tuple[str, str], str] | None:
        """The listing the receipt refers to (read: one request), with the receipt's changes."""
        assert self.held is not None and self.held.listing is not None
        ref, _, changes = self.held.listing.partition(":")
        try:
            e = self.client.get_entity_by_unique(
                RECEIPT_TYPE, self.key + BASE_SUFFIX, min_ext_info=True, ignore_relationships=True
            )
        except AtlasError:
            return None
        text = ((e or {}).get("attributes") or {}).get(LISTING)
        if not isinstance(text, str) or listing_ref(text) != ref:
            return None
        base, delta = decode_listing(text), decode_listing(changes)
        if base is None or delta is None:
            return None
        self._base = (ref, base)
        found = dict(base)
        for k, h in delta.items():
            if h == REMOVED:
                found.pop(k, None)
            else:
                found[k] = h
        return found

    def _give_up(self, what: str, exc: AtlasError) -> None:
        # A receipt only saves work: a server that refuses it (a user without the right to register
        # types or write the receipt's type, ...) gets full syncs, never a failed one. Safe: a sync's
        # own writes are newer than any receipt it could not void.
        log.info("job receipt not %s (%s): this sync compares in full", what, exc.message)
        self.disabled = True

    # ------------------------------------------------------------------ writing
    def _type_ready(self) -> bool:
        """Whether the server has the receipt's type (registered here where it may)."""
        if self.type_known is None:
            self.held = self.read()
        if not self.type_known:
            if not self.may_register:
                return False
            try:
                self.client.create_typedefs(receipt_typedef())
                self.typedef_writes += 1
            except ConflictError:
                pass  # registered meanwhile by another sync
            self.type_known = True
        return True

    def _body(
        self,
        *,
        run: str,
        input_fingerprint: str,
        count: int | None,
        entities: int | None,
        listing: str | None,
    ) -> dict[str, Any]:
        attributes: dict[str, Any] = {RUN: run, INPUT: input_fingerprint, COUNT: count, ENTITIES: entities}
        attributes[LISTING] = listing  # (cleared where there is none)
        return self._entity("", "", attributes)

    def _entity(self, suffix: str, what: str, attributes: dict[str, Any]) -> dict[str, Any]:
        """The receipt's entity (``suffix`` ``BASE_SUFFIX``: its listing's) with ``attributes``."""
        name = f"{self.job} ({self.domain})" + (f": {what}" if what else "")
        common = {
            "qualifiedName": self.key + suffix,
            "name": name,
            SCOPE: scope_key(self.domain),
            JOB: self.job,
        }
        return {"typeName": RECEIPT_TYPE, "attributes": common | attributes}

    def _void(self) -> None:
        """Write the receipt vouching for nothing."""
        if self._type_ready():
            body = self._body(run="", input_fingerprint="", count=None, entities=None, listing=None)
            self.client.upsert_entities([body])

    def _listing(self, spool: Spool) -> tuple[str | None, list[dict[str, Any]]]:
        """The receipt's LISTING for what ``spool`` desires: the changes since the listing this sync
        read, or (new, or too many changes) a listing written now (the entity to write with the
        receipt) and no changes."""
        now: dict[tuple[str, str], str] = {}
        for t, qn, digest in spool.desired_digests():
            if not digest:
                return None, []
            now[(t, qn)] = listing_hash(digest)
        if self._base is not None:
            ref, old = self._base
            delta = [(k, h) for k, h in now.items() if old.get(k) != h]
            delta += [(k, REMOVED) for k in old if k not in now]
            if len(delta) <= max(DELTA_MIN, len(now) // 8):
                text = encode_listing((t, qn, h) for (t, qn), h in sorted(delta))
                return (None if text is None else f"{ref}:{text}"), []
        full = encode_listing((t, qn, h) for (t, qn), h in sorted(now.items()))
        none = encode_listing([])
        if full is None or none is None:
            return None, []
        return f"{listing_ref(full)}:{none}", [self._entity(BASE_SUFFIX, "listing", {LISTING: full})]

    def ride(self, only: bool, creates: int) -> list[dict[str, Any]]:
        """The receipt's entities that ride with the sync's first entity write, in the same request.
        ``only``: that write is the sync's only one (nothing deleted or written after it), creating
        ``creates`` entities: where this sync took the job's entities from the receipt's listing and
        the request leaves Atlas holding exactly the job's desired entities, the receipt itself,
        vouching for what the request leaves; else a stamp naming this run, vouching for nothing (a
        sync stopped from here on leaves it so)."""
        spool = self.spool
        if self.disabled or self.rode is not None or spool is None:
            return []
        try:
            if not self._type_ready():
                return []
        except AtlasError as exc:
            self._give_up("written", exc)
            return []
        desired = spool.desired_count()
        if (
            only
            and self.checked is not None
            and self._listed is not None
            and self._listed + creates == desired
            and spool.held_by_others(self.job) == 0
        ):
            listing, bodies = self._listing(spool)
            count = self.checked[0] + creates
            self._final = (count, desired)
            self.rode = FINAL
            body = self._body(
                run=self.run, input_fingerprint=self.input, count=count, entities=desired, listing=listing
            )
            return [*bodies, body]
        self.rode = STAMP
        return [self._body(run=self.run, input_fingerprint="", count=None, entities=None, listing=None)]

    def refused(self, exc: AtlasError) -> None:
        """The server took the write this receipt rode with only without it."""
        self._give_up("written", exc)

    def unchanged_plan(self, profile: str) -> StreamedPlan:
        """The plan of a sync the receipt answered: every entity unchanged, none listed."""
        plan = StreamedPlan(domain=self.domain, job=self.job, profile=profile, limit=0, by_receipt=True)
        plan.totals["unchanged"] = (self.held.entities if self.held else None) or 0
        return plan

    def finish(self, spool: Spool) -> bool:
        """After the sync's last write: where the receipt rode with it, check that nothing else
        touched the job's entities since this sync checked the receipt (void it otherwise); else
        write the receipt if Atlas now holds exactly the job's desired entities (each one the job's
        own, and as many with its key: nothing kept beside them) and no other sync wrote the receipt
        meanwhile; void it otherwise. Returns whether the receipt vouches for this sync."""
        if self.disabled:
            return False
        try:
            return self._confirm() if self.rode == FINAL else self._finish(spool)
        except AtlasError as exc:
            self._give_up("written", exc)
            return False

    def _confirm(self) -> bool:
        """The receipt rode with the sync's only write: it vouches if it is still this sync's and no
        entity of the job was modified after the check (:meth:`holds`) but by that write, nor purged.
        (The check found the job's entities as the receipt's listing says; the write left the job's
        desired entities; a create, update or delete by anyone else since would carry another time.)"""
        assert self._final is not None and self.checked is not None
        count, desired = self._final
        held = self.held = self.read()
        written = held.updated if held is not None and held.run == self.run else None
        if written is not None:
            between = {
                "condition": "AND",
                "criterion": [
                    self.by_key,
                    {"attributeName": TIME, "operator": "gt", "attributeValue": str(self.checked[1])},
                    {"attributeName": TIME, "operator": "lt", "attributeValue": str(written)},
                ],
            }
            others = [
                functools.partial(self.client.search_count, t, entity_filters=between, exclude_deleted=False)
                for t in self.root_types
            ]
            answers = _at_once([*others, *self._newest_calls()])
            total, newest = _summed(answers[len(others) :])
            if answers[: len(others)] == [0] * len(others) and total == count and newest == written:
                log.info("job receipt of %s: written with the sync's write (%d entities)", self.job, desired)
                return True
        log.info("job receipt of %s: the job changed in Atlas during the sync; voided", self.job)
        self._void()
        return False

    def _finish(self, spool: Spool) -> bool:
        # the receipt, and the job's entities counted (active ones; all): read at once
        active = [
            functools.partial(self.client.search_count, t, entity_filters=self.by_key)
            for t in self.root_types
        ]
        answers = _at_once([self.read, *active, *self._newest_calls()])
        held, counts = answers[0], answers[1 : 1 + len(active)]
        total, _ = _summed(answers[1 + len(active) :])
        # stamped: the stamp is still this sync's; nothing written: the receipt as this sync first read it
        ours = (held is not None and held.run == self.run) if self.rode == STAMP else _same(held, self.start)
        self.held = held
        if not ours:
            # another sync of this job ran meanwhile: neither may vouch for what Atlas holds
            log.info("job receipt of %s: another sync of the job ran meanwhile; voided", self.job)
            self._void()
            return False
        desired = spool.desired_count()
        exact = (
            spool.held_by_others(self.job) == 0
            and all(c is not None for c in counts)
            and sum(c or 0 for c in counts) == desired
        )
        if not exact or total is None:
            log.info("job receipt of %s: Atlas holds more or other than the input; voided", self.job)
            self._void()
            return False
        if not self._type_ready():
            return False
        listing, bodies = self._listing(spool)
        body = self._body(
            run=self.run, input_fingerprint=self.input, count=total, entities=desired, listing=listing
        )
        self.client.upsert_entities([*bodies, body])  # (one request: the listing with the receipt)
        log.info(
            "job receipt of %s: written (%d entities%s)",
            self.job,
            desired,
            f"; listing {len(listing)} characters" if listing else "",
        )
        return True


def delete_receipts(client: AtlasApi, domain: str, *, purge: bool = False, job: str | None = None) -> int:
    """Delete (and ``purge``) the receipts of every job of ``domain`` (a teardown), or of ``job``
    alone (its receipt and its listing); returns the number of requests made."""
    by_scope = {"attributeName": SCOPE, "operator": "eq", "attributeValue": scope_key(domain)}
    # (a domain holds one receipt per job: its receipts are listed by the domain's key, then picked)
    names = None if job is None else {job_key(domain, job) + s for s in ("", BASE_SUFFIX)}
    try:
        guids = [
            str(h["guid"])
            for h in client.search_basic(
                RECEIPT_TYPE,
                entity_filters=by_scope,
                exclude_deleted=not purge,
                attributes=[] if names is None else ["qualifiedName"],
            )
            if names is None or (h.get("attributes") or {}).get("qualifiedName") in names
        ]
    except BadRequestError as exc:
        if exc.error_code in (UNKNOWN_TYPE, "ATLAS-400-00-00A"):  # no receipt type on the server
            return 1
        raise
    requests = 1
    if guids:
        try:
            requests += client.delete_entities(guids).requests
            if purge:
                requests += client.purge_entities(guids).requests
        except AtlasError as exc:  # (left behind, a receipt vouches for nothing: its job's entities are gone)
            log.warning("the domain's job receipts were not deleted: %s", exc.message)
    return requests


def _at_once(calls: list[Callable[[], Any]]) -> list[Any]:
    """Each call's answer, the calls made at once (small searches and reads: they wait on the server)."""
    if len(calls) <= 1:
        return [c() for c in calls]
    with ThreadPoolExecutor(max_workers=len(calls), thread_name_prefix="atlas-sync-receipt") as pool:
        return list(pool.map(lambda c: c(), calls))


def _summed(found: list[tuple[int | None, int | None]]) -> tuple[int | None, int | None]:
    """Per root type (count, newest modification) summed up: all the counts and the newest of all;
    ``(None, None)`` where the server gave no count, or entities without a time."""
    if any(count is None or (count and newest is None) for count, newest in found):
        return None, None
    stamps = [newest for _, newest in found if newest is not None]
    return sum(count or 0 for count, _ in found), max(stamps, default=0)


def _same(a: Held | None, b: Held | None) -> bool:
    """Whether two reads of a receipt found the same write of it (or none twice)."""
    return (a is None) == (b is None) and (a is None or b is None or (a.run, a.updated) == (b.run, b.updated))


def _int(v: Any) -> int | None:
    """A long attribute or timestamp as Atlas gives it (a JSON integer); ``None`` otherwise."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None
