"""One sync (or plan) of a job, in explicit phases: each phase takes the value the one before it
returns, so none can run before the one it needs.

1. :meth:`SyncSession.read` - the input's chunks into the spool (reconcile.stream): nothing of Atlas
   read or written yet. -> :class:`Spooled`
2. :meth:`SyncSession.list_job` - what the job holds is listed on a thread from now on (reconcile.holdings,
   reconcile.listing): of Atlas **before any write**. -> :class:`Listed`
3. :meth:`SyncSession.render` - every entity rendered and checked (templates, name collisions)
   while the listing runs: **before the typedefs**, so a template error leaves nothing behind. -> :class:`Rendered`
4. :meth:`SyncSession.typedefs` - the profile's typedefs (and a native profile's metadata record)
   registered: the first writes. Returns the attributes the server's types now hold. -> :class:`Typed`
5. :meth:`SyncSession.check` - the listing taken, what the job wants of others looked up, the fail-safes
   (reconcile.failsafes) on the whole plan: refused here, nothing is written. -> :class:`Checked`
6. :meth:`SyncSession.write` - compared a chunk at a time in dependency order, what differs written
   (reconcile.writer), **copies a concurrent sync made settled** before the first process. -> :class:`Written`
7. :meth:`SyncSession.describe` - the metadata requests, then **the digests** (and records) written
   after them: a digest says what the entity holds with its metadata. -> :class:`Described`
8. :meth:`SyncSession.delete` - the job's stale entities, processes first. -> :class:`Deleted`
9. :meth:`SyncSession.finish` - **last**, what a job synced to nothing hands over to the jobs that
   use it: a sync stopped before this point finds them again.

A plan is the same phases with a :class:`~atlas_sync.reconcile.writer.RecordingWriter`: every phase
runs, nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.lineage.model import LineageGraph, Problem
from atlas_sync.reconcile import failsafes
from atlas_sync.reconcile.actual import ActualEntity, Key, reference_attributes
from atlas_sync.reconcile.bookkeeping import job_key
from atlas_sync.reconcile.catalog import ServerAttributes
from atlas_sync.reconcile.compare import CompareOptions, compare
from atlas_sync.reconcile.digest import DIGEST_MARK
from atlas_sync.reconcile.failsafes import References
from atlas_sync.reconcile.plan import PlanItem, PlanOptions, StreamedPlan
from atlas_sync.reconcile.spool import GuidKeys
from atlas_sync.reconcile.stream import StreamResult, StreamSync
from atlas_sync.reconcile.writer import SHOWN_ITEMS, RecordingWriter, Rider, SyncWriter, WriteSettings
from atlas_sync.render.profile import Profile
from atlas_sync.render.renderer import DesiredEntity

__all__ = ["SHOWN_ITEMS", "ServerAttributes", "SyncSession", "SyncTarget", "WriteSettings"]


@dataclass(frozen=True)
class SyncTarget:
    """What the sync is of: the job, the root types to list it by, the profile's process types, the
    plan's options; ``refresh``: compare every entity in full (no digests)."""

    job: str
    root_types: tuple[str, ...]
    process_types: frozenset[str]
    options: PlanOptions
    refresh: bool = False


# ---------------------------------------------------------------------------- what each phase returns
@dataclass(frozen=True)
class Spooled:
    """Phase 1's: the whole input is in the spool."""

    job: str | None
    problems: list[Problem]
    partial: bool
    is_empty: bool


@dataclass(frozen=True)
class Listed:
    """Phase 2's: the listing runs, of Atlas before this sync writes anything."""

    target: SyncTarget


@dataclass(frozen=True)
class Rendered:
    """Phase 3's: every entity rendered and checked; ``entities``: how many."""

    target: SyncTarget
    entities: int


@dataclass(frozen=True)
class Typed:
    """Phase 4's: the typedefs in place; what the server's types hold now; their writes."""

    target: SyncTarget
    attrs: ServerAttributes
    typedef_writes: int


@dataclass(frozen=True)
class Checked:
    """Phase 5's: the fail-safes passed (or, planning, ``plan.refused`` kept); the deletes decided."""

    typed: Typed
    deletes: list[PlanItem]
    skipped: set[Key]
    refs: References


@dataclass(frozen=True)
class Written:
    """Phase 6's: every entity compared and written, copies settled."""

    checked: Checked


@dataclass(frozen=True)
class Described:
    """Phase 7's: metadata requests sent, digests written after them."""

    written: Written


@dataclass(frozen=True)
class Deleted:
    """Phase 8's: the stale entities deleted."""

    described: Described


class SyncSession:
    """One sync (or plan) of ``job`` in ``domain``; a context manager (it owns the spool). ``memory``:
    the spool is an in-memory database (an ordinary input), else a temporary file (a big one)."""

    def __init__(self, client: AtlasApi, profile: Profile, domain: str, *, memory: bool = False) -> None:
        self.client = client
        self.profile = profile
        self.domain = domain
        self.stream = StreamSync(client, profile, domain, memory=memory)
        self.plan: StreamedPlan | None = None
        self._writer: SyncWriter | None = None

    def __enter__(self) -> SyncSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stream.__exit__(*exc)

    # ------------------------------------------------------------------ 1-3: read, list, render
    def read(self, chunks: Iterable[LineageGraph]) -> Spooled:
        """Spool every chunk (none held while the next one is read)."""
        s = self.stream
        for chunk in chunks:
            s.add_chunk(chunk)
            del chunk  # (held while the next one is read, two chunks would be alive at once)
        return Spooled(job=s.job, problems=s.problems, partial=s.partial, is_empty=s.is_empty)

    def list_job(
        self,
        spooled: Spooled,
        target: SyncTarget,
        attrs: ServerAttributes,
        known: dict[Key, str] | None = None,
    ) -> Listed:
        """Start listing what ``target.job`` owns (with the attributes the server's types have now;
        ``known``: the job's entities as its receipt lists them, instead of searching Atlas)."""
        self.stream.start_listing(list(target.root_types), target.job, attrs, target.refresh, known)
        return Listed(target)

    def render(self, listed: Listed) -> Rendered:
        return Rendered(listed.target, self.stream.render(listed.target.job))

    # ------------------------------------------------------------------ 4: typedefs
    def typedefs(
        self, rendered: Rendered, register: Callable[[], tuple[ServerAttributes, int, list[str]]]
    ) -> Typed:
        """Register what the sync needs: ``register`` returns the attributes the server's types hold
        then, the writes it made, and the root types to list by from now on."""
        attrs, writes, roots = register()
        target = rendered.target
        if tuple(roots) != target.root_types:
            target = replace(target, root_types=tuple(roots))
        return Typed(target, attrs, writes)

    # ------------------------------------------------------------------ 5: the fail-safes
    def check(
        self,
        typed: Typed,
        writer_kind: type[SyncWriter],
        settings: WriteSettings,
        rider: Rider | None = None,
    ) -> Checked:
        """Take the listing, look up what the job wants of others, check the fail-safes on the whole
        plan; then the writer (``writer_kind``: :class:`SyncWriter`, or :class:`RecordingWriter` for a
        plan) is made (``rider``: what rides with its first write, the job's receipt)."""
        s, target, attrs = self.stream, typed.target, typed.attrs
        plan = self.plan = StreamedPlan(
            domain=self.domain, job=target.job, profile=self.profile.name, limit=settings.listed
        )
        if s.holdings is None:  # (a caller that did not list first: listed now, before any write)
            s.start_listing(list(target.root_types), target.job, attrs, target.refresh, None)
        holdings = s.holdings
        assert holdings is not None
        s.take_listed(wait=True)
        outside = holdings.look_up(s.spool, list(target.root_types), attrs.bookkeeping)
        failsafes.refuse_foreign_processes(s.spool, set(target.process_types), holdings.owner, target.job)
        options = target.options
        skipped = failsafes.left_out(s.spool, outside, options, plan) if holdings.native else set()
        refs = References(GuidKeys(s.spool), reference_attributes([s.ref_names]), s.ref_names)
        deletes = failsafes.deletes(
            self.client,
            s.spool,
            holdings,
            plan,
            options,
            process_types=set(target.process_types),
            refs=refs,
            bookkeeping=attrs.bookkeeping,
        )
        if plan.refused is not None and writer_kind is not RecordingWriter:
            raise plan.refused  # (a plan keeps it: the whole plan is shown, refused all the same)
        self._writer = writer_kind(
            self.client,
            s.spool,
            holdings,
            plan,
            settings,
            process_types=set(target.process_types),
            total=s.spool.desired_count() + len(deletes),
        )
        self._writer.rider = rider
        self._writer.deletes_follow = bool(deletes)
        s.writer = self._writer
        return Checked(typed, deletes, skipped, refs)

    # ------------------------------------------------------------------ 6: compare and write
    def write(self, checked: Checked) -> Written:
        """Compare chunk by chunk, in dependency order; the writer writes what differs and settles
        copies a concurrent sync made (before the first process, and again after the writes)."""
        s, typed, writer, plan = self.stream, checked.typed, self._writer, self.plan
        assert writer is not None and plan is not None and s.holdings is not None
        target, attrs, holdings = typed.target, typed.attrs, s.holdings
        compare_options = CompareOptions(
            job_key=job_key(self.domain, target.job),  # this job's claims and digest part
            owner=holdings.owner,  # another mark: another job's entity, only completed
            domain=self.domain,
            bookkeeping=attrs.bookkeeping,
            metadata_record=attrs.metadata_record,
            term_guids=attrs.term_guids or {},
            dry_run=writer.recording,
        )
        listed_digest = holdings.bookkeeping.digest
        if listed_digest:
            writer.advance(self._same_digest(plan))
        for chunk in s.spool.desired_with_guids(bookkeeping=attrs.bookkeeping, skip_same=bool(listed_digest)):
            existing, theirs = holdings.read(
                s.spool,
                chunk,
                checked.refs.by_guid,
                checked.refs.attrs,
                theirs=attrs.metadata_record is not None,
            )
            self._compare(chunk, existing, theirs, compare_options, set(target.process_types), checked)
        writer.settle()
        return Written(checked)

    # ------------------------------------------------------------------ 7-9
    def describe(self, written: Written) -> Described:
        """The metadata requests, then the digests and records written after them."""
        attrs = written.checked.typed.attrs
        assert self._writer is not None
        self._writer.write_metadata(attrs.bookkeeping)
        return Described(written)

    def delete(self, described: Described, *, purge: bool) -> Deleted:
        """The job's stale entities (processes before datasets; ``purge``: purged too)."""
        written = described.written
        checked, plan, writer = written.checked, self.plan, self._writer
        assert plan is not None and writer is not None
        job, deletes = checked.typed.target.job, checked.deletes
        for item in deletes:
            plan.record(item)
        process_types = set(checked.typed.target.process_types)
        renamed = failsafes.file_named_renames(job, deletes, self.stream.created_processes, process_types)
        if renamed:
            plan.warnings.append(renamed)
        writer.delete(deletes, purge=purge)
        return Deleted(described)

    def finish(self, deleted: Deleted) -> StreamResult:
        """A job synced to nothing hands over what others use: last, so a sync stopped before finds
        them again."""
        typed = deleted.described.written.checked.typed
        plan, writer, holdings = self.plan, self._writer, self.stream.holdings
        assert plan is not None and writer is not None and holdings is not None
        writer.hand_over(typed.attrs.bookkeeping)
        applied = writer.applied
        if plan.refused is not None:  # (a plan: whole, refused all the same)
            plan.refused.plan = plan
            raise plan.refused
        has_changes = any(plan.totals[a] for a in ("create", "update", "delete"))
        return StreamResult(plan=plan, applied=applied if has_changes and not writer.recording else None)

    # ------------------------------------------------------------------ helpers
    def _same_digest(self, plan: StreamedPlan) -> int:
        """Record what we last wrote and would write now as unchanged: decided from the listing,
        nothing read. Returns how many."""
        same = 0
        for type_name, qn, tier, held, stored in self.stream.spool.same_digest():
            plan.record(
                PlanItem("unchanged", type_name, qn, guid=held, tier=tier, fingerprint=DIGEST_MARK + stored)
            )
            same += 1
        return same

    def _compare(
        self,
        chunk: list[tuple[DesiredEntity, str | None]],
        existing: Mapping[Key, ActualEntity],
        theirs: Mapping[Key, ActualEntity],
        options: CompareOptions,
        process_types: set[str],
        checked: Checked,
    ) -> None:
        """Compare a chunk's entities (but those left out) with what Atlas holds of them (``existing``,
        ``theirs``: :meth:`JobHoldings.read`), record each in the plan and hand what differs to the
        writer."""
        plan, writer, spool = self.plan, self._writer, self.stream.spool
        assert plan is not None and writer is not None
        skipped = checked.skipped
        unchanged = 0
        for e, guid in chunk:
            if e.key in skipped:
                unchanged += 1  # (left out: nothing to write, but done for the progress count)
                continue
            if e.type_name in process_types:
                writer.before_process()  # (the first time: settle copies other syncs made)
            decision = compare(
                e,
                guid,
                existing.get(e.key) if guid else None,
                options,
                skipped=skipped,
                foreign_guid=spool.foreign_guid(e.key) if e.shared and guid is None else None,
                foreign_actual=theirs.get(e.key),
            )
            item = decision.item
            plan.record(item, decision.entity)
            if decision.metadata is not None:
                writer.metadata.append(decision.metadata)
            if item.action == "create" and e.type_name in process_types:
                self.stream.created_processes.add(e.qualified_name)
            if decision.write and decision.entity is not None:
                writer.write(item, decision.entity)
            else:
                unchanged += 1  # (for the progress count: nothing to write here)
        writer.advance(unchanged)
