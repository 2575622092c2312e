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
* **Overlapping syncs.** A sync that compares in full first stamps the receipt with its run (which
  voids it); at its end it writes the receipt only if the stamp is still its own, and clears it
  otherwise. So two syncs of one job that overlapped leave no receipt, and the next compares in full.

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


class JobReceipt:
    """The receipt of ``job`` in ``domain``: check it (:meth:`holds`), stamp it before a full sync
    (:meth:`stamp`), write it after one (:meth:`finish`)."""

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
        self.stamped = False
        self.disabled = False
        self.typedef_writes = 0
        self._may_list = False  # another input, and the receipt has a listing (reconcile: listed())
        self._base: tuple[str, dict[tuple[str, str], str]] | None = None  # the listing read: (ref, entries)

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

    def _newest_calls(self) -> list[Callable[[], tuple[int | None, int | None]]]:
        # one small search per root type (Atlas before 2.2 takes one type name per search)
        return [
            functools.partial(self.client.search_newest, t, entity_filters=self.by_key)
            for t in self.root_types
        ]

    def _newest(self) -> tuple[int | None, int | None]:
        """How many entities carry the job's key (deleted ones too) and when the newest of them was
        modified; ``(None, None)`` where the server does not say."""
        return _summed(_at_once(self._newest_calls()))

    def holds(self) -> bool:
        """Whether Atlas holds what the last sync of this input left there, untouched since. For
        another input, whether the receipt's listing may serve (:meth:`listed`)."""
        try:
            held = self.held = self.read()
            if held is None or held.updated is None or held.count is None:
                why = "none yet" if held is None else "none vouched for"
                log.info("job receipt of %s: %s; comparing in full", self.job, why)
                return False
            if held.input != self.input:
                # another input: whether Atlas is unchanged since is checked once, after the stamp
                self._may_list = held.listing is not None
                why = "its listing is checked after the stamp" if self._may_list else "comparing in full"
                log.info("job receipt of %s: another input; %s", self.job, why)
                return False
            count, newest = self._newest()
        except AtlasError as exc:
            self._give_up("read", exc)
            return False
        if not self._unchanged(count, newest):
            log.info(
                "job receipt of %s: the job's entities changed in Atlas since; comparing in full", self.job
            )
            return False
        log.info("job receipt of %s: same input, Atlas unchanged since; nothing to compare", self.job)
        return True

    def _unchanged(self, count: int | None, newest: int | None) -> bool:
        held = self.held
        return (
            held is not None
            and held.updated is not None
            and count == held.count
            and newest is not None
            and newest < held.updated
        )

    def listed(self) -> dict[tuple[str, str], str] | None:
        """For another input than the receipt's, once this sync has stamped it: the job's entities
        as the receipt lists them (key -> :func:`listing_hash` of the digest that sync rendered),
        where Atlas still holds them unchanged (checked after the stamp, so a sync of the job that
        wrote before it is seen, and one after it voids the stamp); ``None``: list them in Atlas."""
        if not self._may_list or not self.stamped or self.held is None or self.held.listing is None:
            return None
        try:
            count, newest = self._newest()
        except AtlasError as exc:
            log.info("job receipt of %s: not checked (%s); listing in full", self.job, exc.message)
            return None
        if not self._unchanged(count, newest):
            log.info(
                "job receipt of %s: the job's entities changed in Atlas since; listing in full", self.job
            )
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
    def _write(
        self,
        *,
        run: str,
        input_fingerprint: str,
        count: int | None,
        entities: int | None,
        listing: str | None = None,
    ) -> None:
        if self.type_known is None:
            self.held = self.read()
        if not self.type_known:
            if not self.may_register:
                return
            try:
                self.client.create_typedefs(receipt_typedef())
                self.typedef_writes += 1
            except ConflictError:
                pass  # registered meanwhile by another sync
            self.type_known = True
        attributes: dict[str, Any] = {RUN: run, INPUT: input_fingerprint, COUNT: count, ENTITIES: entities}
        attributes[LISTING] = listing  # (cleared where there is none)
        self._upsert("", "", attributes)

    def _upsert(self, suffix: str, what: str, attributes: dict[str, Any]) -> None:
        """Write the receipt's entity (``suffix`` ``BASE_SUFFIX``: its listing's) with ``attributes``."""
        name = f"{self.job} ({self.domain})" + (f": {what}" if what else "")
        common = {
            "qualifiedName": self.key + suffix,
            "name": name,
            SCOPE: scope_key(self.domain),
            JOB: self.job,
        }
        self.client.upsert_entities(
            [{"typeName": RECEIPT_TYPE, "guid": "-1", "attributes": common | attributes}]
        )

    def _listing(self, spool: Spool) -> str | None:
        """The receipt's LISTING for what ``spool`` desires: the changes since the listing this sync
        read, or (new, or too many changes) a listing written now and no changes."""
        now: dict[tuple[str, str], str] = {}
        for t, qn, digest in spool.desired_digests():
            if not digest:
                return None
            now[(t, qn)] = listing_hash(digest)
        if self._base is not None:
            ref, old = self._base
            delta = [(k, h) for k, h in now.items() if old.get(k) != h]
            delta += [(k, REMOVED) for k in old if k not in now]
            if len(delta) <= max(DELTA_MIN, len(now) // 8):
                text = encode_listing((t, qn, h) for (t, qn), h in sorted(delta))
                return None if text is None else f"{ref}:{text}"
        full = encode_listing((t, qn, h) for (t, qn), h in sorted(now.items()))
        none = encode_listing([])
        if full is None or none is None:
            return None
        self._upsert(BASE_SUFFIX, "listing", {LISTING: full})
        return f"{listing_ref(full)}:{none}"

    def stamp(self, *, early: bool = False) -> None:
        """Before a sync that compares in full writes anything: the receipt names this run and
        vouches for nothing (a sync killed from here on leaves it so). ``early``: before the job's
        entities are listed, and only where a receipt exists (nothing is created before the input
        has rendered); else once, before the first write."""
        if self.disabled or self.stamped or (early and self.held is None):
            return
        try:
            self._write(run=self.run, input_fingerprint="", count=None, entities=None)
        except AtlasError as exc:
            self._give_up("written", exc)
            return
        self.stamped = True

    def unchanged_plan(self, profile: str) -> StreamedPlan:
        """The plan of a sync the receipt answered: every entity unchanged, none listed."""
        plan = StreamedPlan(domain=self.domain, job=self.job, profile=profile, limit=0, by_receipt=True)
        plan.totals["unchanged"] = (self.held.entities if self.held else None) or 0
        return plan

    def finish(self, spool: Spool) -> bool:
        """After the sync's last write: write the receipt if Atlas now holds exactly the job's desired
        entities (each one the job's own, and as many with its key: nothing kept beside them) and no
        other sync stamped it meanwhile; clear it otherwise. Returns whether it was written."""
        if self.disabled or not self.stamped:
            return False
        try:
            return self._finish(spool)
        except AtlasError as exc:
            self._give_up("written", exc)
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
        if held is None or held.run != self.run:
            # another sync of this job ran meanwhile: neither may vouch for what Atlas holds
            log.info("job receipt of %s: another sync of the job ran meanwhile; voided", self.job)
            self._write(run="", input_fingerprint="", count=None, entities=None)
            return False
        desired = spool.desired_count()
        exact = (
            spool.held_by_others(self.job) == 0
            and all(c is not None for c in counts)
            and sum(c or 0 for c in counts) == desired
        )
        if not exact or total is None:
            log.info("job receipt of %s: Atlas holds more or other than the input; voided", self.job)
            self._write(run="", input_fingerprint="", count=None, entities=None)
            return False
        listing = self._listing(spool)
        self._write(
            run=self.run, input_fingerprint=self.input, count=total, entities=desired, listing=listing
        )
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


def _int(v: Any) -> int | None:
    """A long attribute or timestamp as Atlas gives it (a JSON integer); ``None`` otherwise."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None
