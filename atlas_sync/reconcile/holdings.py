"""What Atlas holds for one job's sync, read at a cost that follows the job, not its domain.

A sync of job J (reconcile.stream) needs, of everything Atlas holds:

* J's own entities, which it may update or delete: listed by J's key on Atlas's index
  (:func:`~atlas_sync.reconcile.actual.iter_job`);
* the other entities J's input wants (shared datasets another job created, hook-made tables): read by
  unique attribute (:func:`~atlas_sync.reconcile.actual.lookup_headers`);
* while the sync compares, a chunk at a time, those of them it wants read in full (:meth:`JobHoldings.read`);
* the domain's size, for the delete fail-safe: counted on Atlas's index, only when there are deletes;
* after the writes, one entity per name where another sync created the same one at the same moment
  (:meth:`JobHoldings.settle_duplicates`).

Everything goes into the sync's spool (reconcile.spool), which the plan is computed from.
"""

from __future__ import annotations

import contextlib
import functools
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import replace

from atlas_sync.atlas.errors import ConflictError, NotFoundError
from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.reconcile.actual import (
    NAMES_PER_SEARCH,
    ActualEntity,
    ActualHeader,
    Key,
    count_scope,
    created_by_others,
    domain_is_empty,
    index_safe,
    iter_job,
    lookup_headers,
    read_entities,
)
from atlas_sync.reconcile.apply import ApplyResult, apply_plan
from atlas_sync.reconcile.bookkeeping import Bookkeeping, job_key
from atlas_sync.reconcile.digest import for_job, for_other_job
from atlas_sync.reconcile.plan import Plan, PlanItem
from atlas_sync.reconcile.receipt import listing_hash
from atlas_sync.reconcile.spool import UNREAD, Spool
from atlas_sync.render.native import JOB_LABEL, label_for
from atlas_sync.render.profile import Profile
from atlas_sync.render.renderer import DesiredEntity
from atlas_sync.wording import counted

# How long before a sync started another sync's create of the same name may have begun (its request
# may wait on locks and be retried; Atlas stamps an entity with its request's start)
COPY_WINDOW_MS = 15 * 60_000
# The first page of other jobs' recent creates read before narrowing by name (at least this many, or
# twice the job's own names): a window this small costs less whole than by names
WINDOW_PROBE = 100
# Names to look up from which a job that owns nothing first checks whether its domain is empty (two
# searches; about four lookups by unique attribute, one per root type, read 1,000 names)
EMPTY_CHECK_MIN = 1000


class JobHoldings:
    """What Atlas holds for ``job`` in ``domain``. ``bookkeeping``: the attributes the server's types
    have when the listing starts (one it lacks is listed without, which is never wrong: entities are
    then compared in full); ``refresh``: no digests."""

    def __init__(
        self,
        client: AtlasApi,
        profile: Profile,
        domain: str,
        job: str,
        *,
        root_types: list[str],
        bookkeeping: Bookkeeping | None = None,
        refresh: bool = False,
        known: dict[Key, str] | None = None,
    ) -> None:
        self.client = client
        self.profile = profile
        # the job's entities as its receipt lists them (key -> digest hash; reconcile.receipt)
        self.known = known
        self.domain = domain
        self.job = job
        self.native = profile.mapping_file is not None
        # a native profile's owner mark is the job's label
        self.owner = label_for(JOB_LABEL, job) if self.native else job
        self.root_types = root_types
        bk = bookkeeping or Bookkeeping()
        self.bookkeeping = bk.without_digest() if refresh else bk  # (digests the listing holds)
        self.refresh = refresh
        self._started = time.monotonic()  # the settle's window starts before this sync did
        # set by the listing: the job owned nothing when this sync started
        self.owns_nothing = False

    def listing(self) -> Iterator[ActualHeader]:
        """The job's own entities (run on the listing's thread while the input renders)."""
        if self.known is not None:  # (taken in look_up, once the input has rendered)
            self.owns_nothing = not self.known
            return
        found = False
        for h in self._own_digests(
            iter_job(
                self.client,
                self.root_types,
                self.domain,
                self.job,
                bookkeeping=self.bookkeeping,
                labels=self.native,
                dedupe=False,
            )
        ):
            found = True
            yield h
        self.owns_nothing = not found

    def _own_digests(self, headers: Iterable[ActualHeader]) -> Iterator[ActualHeader]:
        """Headers with the stored digest as this job compares it: the entity's, and this job's part
        of it (reconcile.digest: other jobs' parts are theirs)."""
        key = job_key(self.domain, self.job)
        for h in headers:
            # (another job's entity: the job's part says what it wanted when it last completed it)
            theirs = h.owner is not None and h.owner != self.owner
            h.digest = for_other_job(h.digest, key) if theirs else for_job(h.digest, key)
            yield h

    def look_up(self, spool: Spool, root_types: list[str], bookkeeping: Bookkeeping) -> dict[Key, str]:
        """Read the desired entities the listing lacks by unique attribute into ``spool`` (other jobs'
        entities, with their owners); returns the guids of those outside the domain (a native profile's
        hook-made datasets). ``root_types``, ``bookkeeping``: what the server's types hold now."""
        outside: dict[Key, str] = {}
        if not root_types:  # the server has none of the profile's types: nothing of them exists
            return outside
        if self.root_types or self.native or self.refresh:
            # (where the server had none of the types when this sync started, nothing of them existed
            # then: nothing to look up; what a sync registering them at the same moment creates is
            # the settle's business)
            gone = self._take_known(spool)
            wanted = spool.unlisted_desired() + gone
            # (nothing to look up where the domain held nothing when this sync started)
            if len(wanted) < EMPTY_CHECK_MIN or not self._domain_empty():
                found = self._own_digests(
                    lookup_headers(
                        self.client,
                        wanted,
                        self.domain,
                        labels=self.native,
                        bookkeeping=self.bookkeeping,
                        outside=outside,
                    )
                )
                spool.add_actual((h.type_name, h.qualified_name, h.guid, h.owner, h.digest) for h in found)
        # what the server's types hold from now on; the digests stay those the listing read
        self.root_types = root_types
        digest = self.bookkeeping.digest
        self.bookkeeping = Bookkeeping(bookkeeping.profile, replace(bookkeeping.server, digest=digest))
        return outside

    def _take_known(self, spool: Spool) -> list[Key]:
        """The job's entities its receipt lists (``known``): those the input renders as the receipt's
        sync rendered them go to ``spool`` as the job's, unchanged and not read (guid ``UNREAD``);
        the others the input renders are left to the lookup, as the new ones are. Returns those it no
        longer renders: to look up too (the deletes need their guids)."""
        if self.known is None:
            return []
        left = dict(self.known)
        same = []
        for t, qn, digest in spool.desired_digests():
            held = left.pop((t, qn), None)
            if held is not None and digest is not None and listing_hash(digest) == held:
                same.append((t, qn, UNREAD, self.owner, digest))
        spool.add_actual(same)
        return sorted(left)

    def _domain_empty(self) -> bool:
        """Whether the domain holds nothing at all, where the job owns nothing (a first sync into a
        new domain: a bootstrap, a rebuild): one search instead of a lookup of every name."""
        if not self.owns_nothing or self.native or self.refresh or self.bookkeeping.key is None:
            return False
        return bool(self.root_types) and domain_is_empty(
            self.client, self.root_types, self.domain, self.bookkeeping
        )

    def read(
        self,
        spool: Spool,
        chunk: list[tuple[DesiredEntity, str | None]],
        by_guid: Mapping[str, Key],
        ref_attrs: set[str],
        *,
        theirs: bool = False,
    ) -> tuple[dict[Key, ActualEntity], dict[Key, ActualEntity]]:
        """What Atlas holds of a chunk of desired entities (each with the guid it is held under, or
        ``None``), read in full; with ``theirs`` (a native profile's record), the other tools' datasets
        and columns among them as well (``spool``'s foreign ones: what they carry, and our record)."""
        existing = read_entities(self.client, [g for _, g in chunk if g], by_guid, ref_attrs)
        others: dict[Key, ActualEntity] = {}
        if theirs:
            guids = [spool.foreign_guid(e.key) for e, g in chunk if e.shared and g is None]
            others = read_entities(self.client, [g for g in guids if g], by_guid, ref_attrs)
        return existing, others

    def domain_size(self, spool: Spool, bookkeeping: Bookkeeping) -> int:
        """How many entities the domain holds (the delete fail-safe's denominator): Atlas's count by
        the domain's key, or what the spool holds where that is more."""
        counted = count_scope(
            self.client, self.root_types, self.domain, labels=self.native, bookkeeping=bookkeeping
        )
        return max(counted, spool.actual_count())

    def settle_duplicates(
        self,
        spool: Spool,
        process_types: set[str],
        batch_size: int,
        plan: Plan,
        applied: ApplyResult,
        *,
        created_only: bool = False,
    ) -> None:
        """Leave one entity per name where another sync created the same one at the same moment.

        A real Atlas creates an entity twice when two requests create the same qualifiedName at once
        (neither transaction sees the other's; seen on Atlas 2.1.0 with eight jobs sharing datasets),
        and its lookup by unique attribute then names either copy, not always the same one. So a sync
        that creates anything, once its datasets and columns are written and before its processes
        are, lists what other jobs of the domain created since shortly before it started
        (:func:`~atlas_sync.reconcile.actual.created_by_others`, on Atlas's index: a search per root
        type that costs what the others created meanwhile), and where one of those holds a name its
        job holds (but processes, which are the job's alone), every sync keeps the same copy: the
        oldest (Atlas's ``createTime``, then the guid; one read of the copies). Where that is another
        sync's, it points what it wrote at that one, moves what others refer to in its copy, and
        deletes (and purges) its own. What the job holds, not only what this sync created: a sync
        killed after that point still has processes to create, so its re-run settles its copies too
        (``refresh`` looks at every other job's entities, not only recent ones). ``created_only``:
        the look again after the processes are written, at what this sync created (a copy whose
        create had not committed at the first look). Nothing on syncs that create nothing. Without
        domain and job keys on the server's types (or under a native profile): by unique attribute."""
        lost: list[tuple[Key, str]] = []
        if not (spool.creates() or self.refresh):
            return
        parts = list(  # (read out before the spool changes)
            spool.created_except(self.owner, process_types)
            if created_only
            else spool.owned_except(self.owner, process_types)
        )
        names = spool.names_of((t, qn) for part in parts for t, qn, _ in part) if self.finds_copies else None
        others = self._created_by_others(process_types, names)
        for part in parts:
            canonical = self._kept(part, others)
            for t, qn, guid in part:
                h = canonical.get((t, qn))
                if h is not None and h.guid != guid:
                    spool.repoint(h.key, h.guid, h.owner)
                    lost.append((h.key, guid))
        # what the job refers to of other jobs' recent copies and another sync deleted meanwhile (its
        # copy lost after this sync had looked the name up): refer to the kept one
        gone = self._gone_references(spool, process_types) if created_only and self.finds_copies else set()
        if not lost and not gone:
            return
        keys = {k for k, _ in lost} | gone
        rewrite = [(e, g) for e, g in spool.referring(keys) if e.key not in keys]
        if rewrite:
            fix = Plan(
                domain=self.domain,
                job=self.job,
                profile=self.profile.name,
                items=[
                    PlanItem("update", e.type_name, e.qualified_name, guid=g, tier=e.tier) for e, g in rewrite
                ],
                desired={e.key: e for e, _ in rewrite},
            )
            refs = {
                k
                for e, _ in rewrite
                for v in e.refs.values()
                for k in (v if isinstance(v, list) else [v] if v else [])
            }
            res = apply_plan(self.client, fix, known_guids=spool.guids_of(refs), batch_size=batch_size)
            applied.requests += res.requests
        if not lost:
            return
        ours = [g for _, g in lost]
        kept = {g: spool.guids_of([k])[k] for k, g in lost}
        moved: set[str] = set()

        def mine(guid: str) -> bool:
            key = spool.key_of_guid(guid)
            return key is not None and spool.owner_of(key) == self.owner

        applied.requests += self._move_references(kept, mine, moved)
        applied.requests += self.client.delete_entities(ours).requests
        # what another sync wrote referring to a copy between that read and the delete: its
        # relationships the delete ended
        applied.requests += self._move_references(kept, mine, moved, ended=True)
        applied.requests += self.client.purge_entities(ours).requests
        applied.requests += self.index_again({k: kept[g] for k, g in lost})
        plan.warnings.append(
            f"{counted(len(lost), 'entity')} {'was' if len(lost) == 1 else 'were'} created at the same moment by another sync as well (e.g. "
            f"{lost[0][0][1]}): this sync's copies were deleted and what refers to them now refers to "
            "the one Atlas keeps"
        )

    def index_again(self, kept: dict[Key, str]) -> int:
        """Make Atlas find the kept copies by name again (``kept``: key -> guid). Atlas 2.1.0's unique
        index holds one entry per name, so deleting one of two copies removes the entry the other
        needs: its lookup, and a create or a reference by that name, then miss it (the next sync
        would make a third copy). A name the lookup misses is renamed and named back (two partial
        updates), which writes the entry again. Returns the requests made: one lookup per type."""
        requests = len({t for t, _ in kept})
        found = {h.key: h.guid for h in self.refreshed(set(kept))}
        for key, guid in sorted(kept.items()):
            if key in found:
                continue  # (another copy Atlas names: the sync that holds it settles it)
            aside = f"{key[1]}#settling-{uuid.uuid4().hex[:12]}"
            try:
                self.client.set_entity_attribute(guid, "qualifiedName", aside)
                self.client.set_entity_attribute(guid, "qualifiedName", key[1])
            except NotFoundError:
                pass  # deleted meanwhile: its sync found an older copy, and does this for that one
            requests += 2
        return requests

    def _move_references(
        self, kept: dict[str, str], mine: Callable[[str], bool], moved: set[str], *, ended: bool = False
    ) -> int:
        """Give the copies Atlas keeps what others refer to in the copies this sync deletes
        (``kept``: lost guid -> kept guid): another job may have looked a name up while both copies
        existed and written a process referring to this sync's. Each such relationship (ACTIVE; with
        ``ended``, after the delete: those it ended) is made again with the kept copy at that end;
        not those of this job's own entities (``mine``), which were rewritten already, nor those in
        ``moved`` (done; added to). Returns the requests made: one read of the copies, and two per
        such relationship (rare)."""
        requests = 1
        for ent in self.client.get_entities(list(kept), min_ext_info=True):
            lost = ent.get("guid", "")
            for value in (ent.get("relationshipAttributes") or {}).values():
                for ref in value if isinstance(value, list) else [value]:
                    if not isinstance(ref, dict):
                        continue
                    if not ended and ref.get("relationshipStatus", "ACTIVE") != "ACTIVE":
                        continue
                    rel_guid, other = ref.get("relationshipGuid"), ref.get("guid")
                    if not rel_guid or rel_guid in moved or other in kept or (other and mine(other)):
                        continue  # (a copy being deleted too: its own references go with it)
                    moved.add(rel_guid)
                    rel = self.client.get_relationship(rel_guid)
                    ends = {}
                    for end in ("end1", "end2"):
                        obj = rel.get(end) or {}
                        guid = kept[lost] if obj.get("guid") == lost else obj.get("guid")
                        ends[end] = {"guid": guid, "typeName": obj.get("typeName")}
                    body = {
                        "typeName": rel.get("typeName"),
                        **ends,
                        "attributes": rel.get("attributes") or {},
                    }
                    with contextlib.suppress(ConflictError):  # made already (another sync moved it)
                        self.client.create_relationship(body)
                    requests += 2
        return requests

    def _gone_references(self, spool: Spool, process_types: set[str]) -> set[Key]:
        """Keys this job refers to (not owns) by a guid Atlas no longer holds ACTIVE (another sync
        deleted its copy as the loser after this one looked the name up); repointed in ``spool`` to
        the entity Atlas now names. One bulk GET per ~300 such references."""
        theirs = spool.referred_not_owned(self.owner, process_types)
        if not theirs:
            return set()
        alive = {
            e["guid"]
            for e in self.client.get_entities(
                list(theirs.values()), min_ext_info=True, ignore_relationships=True
            )
            if e.get("status", "ACTIVE") == "ACTIVE"
        }
        stale = {k for k, g in theirs.items() if g not in alive}
        fixed: set[Key] = set()
        for h in self.refreshed(stale) if stale else []:
            spool.repoint(h.key, h.guid, h.owner)
            fixed.add(h.key)
        return fixed

    def refreshed(self, keys: set[Key]) -> list[ActualHeader]:
        """``keys`` read again by unique attribute (their guid went stale, or a copy settles)."""
        return lookup_headers(
            self.client,
            sorted(keys),
            self.domain,
            labels=self.native,
        )

    @property
    def finds_copies(self) -> bool:
        """Whether copies other syncs made are found by the domain's and jobs' keys (else by name)."""
        return not self.native and self.bookkeeping.key is not None

    def _created_by_others(
        self, process_types: set[str], names: Collection[object] | None = None
    ) -> dict[Key, list[ActualHeader]] | None:
        """What other jobs of the domain created lately (None: no keys to find them by). ``names``:
        the short names of what the job holds; with them the search reads only entities of those
        names where the window holds more than the job (a job synced just after a big one)."""
        if not self.finds_copies:
            return None
        now = self.client.server_time_ms()
        since = 0 if self.refresh else now - int((time.monotonic() - self._started) * 1000) - COPY_WINDOW_MS
        search = functools.partial(
            created_by_others,
            self.client,
            [t for t in self.root_types if t not in process_types],
            self.domain,
            self.job,
            since_ms=since,
            bookkeeping=self.bookkeeping,
        )
        if names is None:
            return search()
        if not names:
            return {}
        safe = all(index_safe(n) for n in names)
        distinct = {n for n in names if isinstance(n, str)}
        if safe and len(distinct) <= NAMES_PER_SEARCH:
            return search(names=distinct)
        window = search(limit=max(WINDOW_PROBE, 2 * len(names)))
        if window is not None:
            return window
        return search(names=distinct) if safe else search()

    def _kept(
        self, part: list[tuple[str, str, str]], others: dict[Key, list[ActualHeader]] | None
    ) -> dict[Key, ActualHeader]:
        """The entity each name of ``part`` (type, qualifiedName, the guid this job holds) keeps;
        ``others``: what other jobs created lately (None: look the names up by unique attribute)."""
        if others is None:
            return {h.key: h for h in self.refreshed({(t, qn) for t, qn, _ in part})}
        ours = {(t, qn): guid for t, qn, guid in part}
        contested: dict[Key, dict[str, ActualHeader]] = {}
        for key, guid in ours.items():
            found = others.get(key)
            if found and any(h.guid != guid for h in found):
                copies_of = {h.guid: h for h in found}
                copies_of.setdefault(guid, ActualHeader(guid, key[0], key[1], self.owner))
                contested[key] = copies_of
        if not contested:
            return {}
        read = self.client.get_entities(
            [g for copies_of in contested.values() for g in copies_of],
            min_ext_info=True,
            ignore_relationships=True,
        )
        created = {
            e["guid"]: e.get("createTime") if isinstance(e.get("createTime"), int) else 2**63
            for e in read
            if e.get("status", "ACTIVE") == "ACTIVE"
        }
        kept: dict[Key, ActualHeader] = {}
        for key, copies_of in contested.items():
            alive = [h for g, h in copies_of.items() if g in created]
            if alive:
                kept[key] = min(alive, key=lambda h: (created[h.guid], h.guid))
        return kept
