"""The write side of one sync (reconcile.stream): what the comparison hands over, written to Atlas.

* entities to create or update go in batches of ``batch_size`` through apply's conflict-free
  :class:`~atlas_sync.reconcile.apply.WriteScheduler` (up to ``parallel`` at once, a batch only after
  every earlier one it touches has finished: batches span tiers, a column batch refers to datasets an
  earlier batch creates), packed when they can start so that batches in flight together touch
  disjoint entities (reconcile.packing); what Atlas assigns goes to the spool, which is used on the
  sync's thread only;
* once the datasets and columns are written, before the first process is, copies another sync created
  at the same moment are settled (reconcile.holdings), and looked at again after the writes;
* then the metadata requests, and the digests and records written after them (reconcile.compare);
* the deletes last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from atlas_sync.atlas.errors import AtlasError
from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.reconcile import failsafes
from atlas_sync.reconcile.actual import Key
from atlas_sync.reconcile.apply import (
    ApplyResult,
    BatchOutcome,
    WriteBatch,
    WriteScheduler,
    _Flight,
    apply_plan,
    write_batch,
)
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.reconcile.compare import MetadataWork
from atlas_sync.reconcile.holdings import JobHoldings
from atlas_sync.reconcile.metadata import apply_metadata
from atlas_sync.reconcile.packing import BatchPacker
from atlas_sync.reconcile.plan import Plan, PlanItem
from atlas_sync.reconcile.spool import Spool
from atlas_sync.render.renderer import DesiredEntity

Progress = Callable[[int, int], None]


class Rider(Protocol):
    """What rides with a sync's first entity write, in the same request (the job's receipt,
    reconcile.receipt)."""

    def ride(self, only: bool, creates: int) -> list[dict[str, Any]]:
        """The entity bodies to send with the sync's first write (``only``: its only write, nothing
        written after it; ``creates``: how many entities it creates)."""
        ...

    def refused(self, exc: AtlasError) -> None:
        """The server refused the write with them and took it without them."""
        ...


# Plan items kept for display by a streamed plan.
SHOWN_ITEMS = 2000


@dataclass(frozen=True)
class WriteSettings:
    """How a sync writes: ``batch_size`` entities a request, ``parallel`` batches in flight at most,
    ``purge`` what it deletes, ``progress(done, total)``; ``listed``: how many changes its plan lists
    (``None``: every item, unchanged ones and what apply sends too)."""

    batch_size: int = 500
    parallel: int = 2
    purge: bool = False
    progress: Progress | None = None
    listed: int | None = SHOWN_ITEMS


class SyncWriter:
    """Writes one sync's changes, in the order they are handed over (dependency order). ``plan``:
    the sync's plan (the settle's warnings go there); ``total``: entities in all, for ``progress``.
    :class:`RecordingWriter`: the same, writing nothing (a plan)."""

    recording = False  # True: nothing is written (a plan)

    def __init__(
        self,
        client: AtlasApi,
        spool: Spool,
        holdings: JobHoldings,
        plan: Plan,
        settings: WriteSettings,
        *,
        process_types: set[str],
        total: int,
    ) -> None:
        self.client = client
        self.spool = spool
        self.holdings = holdings
        self.plan = plan
        self.process_types = process_types
        self.batch_size = settings.batch_size
        self.progress = settings.progress
        self.total = total
        self.done = 0
        self._drawing = False  # progress is drawn from the first write or delete on: none for a no-op
        self.applied = ApplyResult()
        self.metadata: list[MetadataWork] = []
        self._scheduler = WriteScheduler(settings.parallel, self._prepare, self._finished)
        self._packer = BatchPacker(self._scheduler, settings.batch_size)
        self._closed = False
        # (a hook write path queues writes: Atlas applies them later, one message at a time)
        self.settled = self.recording or client.capabilities.queued_writes
        self._looked = self._wrote_after_looking = False  # the settle's first look, and writes after it
        self.rider: Rider | None = None
        self.deletes_follow = False  # the sync deletes after its writes (no write of it is the last)
        self._rode = self._only = False
        self._handed = 0  # items handed to the packer

    def _ride(self, only: bool, creates: int) -> list[dict[str, Any]]:
        """What rides with this write, the sync's first (nothing after the first)."""
        if self.rider is None or self._rode:
            return []
        self._rode = True
        return self.rider.ride(only, creates)

    def _stamp_alone(self) -> None:
        """Before a write that is not an entity batch, where none went before: what rides, alone."""
        bodies = self._ride(False, 0)
        if bodies and self.rider is not None:
            try:
                self.client.upsert_entities(bodies)
            except AtlasError as exc:
                self.rider.refused(exc)

    # ------------------------------------------------------------------ the scheduler's callbacks
    def _prepare(self, batch: WriteBatch, flight: Any) -> Callable[[], BatchOutcome]:
        known = self.spool.guids_of(batch.refs())  # the batches it depends on have finished
        extra = self._ride(self._only, sum(1 for it in batch.items if it.action == "create"))
        return lambda: write_batch(self.client, batch, known, flight, extra)

    def _finished(self, batch: WriteBatch, outcome: BatchOutcome) -> None:
        if outcome.refused is not None and self.rider is not None:
            self.rider.refused(outcome.refused)
        owner = self.holdings.owner
        self.spool.add_actual((k[0], k[1], g, owner, None) for k, g in outcome.assigned.items())
        self.spool.add_created((k[0], k[1], g) for k, g in outcome.assigned.items())
        if outcome.gone:  # another sync's copy it referred to was deleted: read the kept one
            for h in self.holdings.refreshed(outcome.gone):
                self.spool.repoint(h.key, h.guid, h.owner)
        self.applied.count_written(batch.items, outcome.requests)
        self.advance(len(batch.items))

    # ------------------------------------------------------------------ what the comparison hands over
    def advance(self, n: int) -> None:
        """``n`` more entities done (written, or nothing to write)."""
        self.done += n
        if self.progress and n and self._drawing:
            self.progress(self.done, self.total)

    def write(self, item: PlanItem, entity: DesiredEntity) -> None:
        """Write ``entity`` (its plan item: a create or an update) in a coming batch."""
        self._wrote_after_looking = self._wrote_after_looking or self._looked
        self._drawing = True
        self._handed += 1
        self._packer.add(item, entity)

    def flush(self) -> None:
        """Hand every item given so far to the scheduler."""
        self._packer.flush()

    def before_process(self) -> None:
        """Called before a process is handed over: the first time, datasets and columns are all
        written, so settle copies another sync made at the same moment before processes refer to
        them (a sync killed from here on still has processes to create, so its re-run settles too)."""
        if self.settled:
            return
        self.flush()
        self._settle()
        self.settled = self._looked = True

    def _settle(self, **kw: Any) -> None:
        self._scheduler.wait()
        self.holdings.settle_duplicates(
            self.spool, self.process_types, self.batch_size, self.plan, self.applied, **kw
        )

    # ------------------------------------------------------------------ after the comparison
    def settle(self) -> None:
        """Write what is left and settle copies a concurrent sync made; no entity write after this."""
        # the sync's only write: no batch sent yet, what is left fits one, nothing written after it
        self._only = (
            self._handed == len(self._packer) <= self.batch_size
            and not self.metadata
            and not self.deletes_follow
            and not self.plan.handover
        )
        self.flush()
        if not self.settled:
            self._settle()
        elif self._wrote_after_looking and self.holdings.finds_copies:
            # a copy whose create had not committed at the first look: look again at what this sync
            # created, now that its processes are written (they are repointed too if its copy lost)
            self._settle(created_only=True)
        self._scheduler.close()
        self._closed = True

    def abort(self, *exc: Any) -> None:
        """Stopped by an error: let the writes in flight end first."""
        if not self._closed:
            self._scheduler.__exit__(*exc)

    def write_metadata(self, bookkeeping: Bookkeeping) -> None:
        """Send the metadata requests of the entities just written, then their digests and final
        records where the server's types have those attributes (``bookkeeping``; a bulk write of
        those entities, ``batch_size`` at a time)."""
        digest_name, record_name = bookkeeping.digest, bookkeeping.metadata
        todo = self.metadata
        if not todo:
            return
        self._stamp_alone()
        applied = self.applied
        guids = self.spool.guids_of(w.entity.key for w in todo)
        # (another tool's entity is not in the spool's listing: its guid is the plan item's)
        guids.update({w.entity.key: w.item.guid for w in todo if w.item.guid and w.entity.key not in guids})
        send_metadata(
            self.client, [(guids[w.entity.key], w.ops) for w in todo if w.entity.key in guids], applied
        )
        # an update whose only change is its metadata is updated by these requests
        applied.updated += sum(
            1 for w in todo if not w.written and w.item.action == "update" and w.entity.key in guids
        )
        if not (digest_name or record_name):
            return  # a native profile's record went with the requests
        for start in range(0, len(todo), self.batch_size):
            part = todo[start : start + self.batch_size]
            items: list[PlanItem] = []
            desired: dict[Key, DesiredEntity] = {}
            for w in part:
                e = w.entity
                if e.key not in guids:
                    continue
                if record_name:
                    if not digest_name and e.attributes.get(record_name) == w.record:
                        continue  # nothing left to write
                    e.attributes[record_name] = w.record
                if digest_name:
                    e.attributes[digest_name] = w.digest
                items.append(
                    PlanItem("update", e.type_name, e.qualified_name, guid=guids[e.key], tier=e.tier)
                )
                desired[e.key] = e
            if items:
                batch = WriteBatch(items, desired)
                outcome = write_batch(self.client, batch, self.spool.guids_of(batch.refs()), _Flight(1))
                applied.requests += outcome.requests

    def delete(self, deletes: list[PlanItem], *, purge: bool) -> None:
        """Delete ``deletes`` (processes before datasets; ``purge``: then purge them)."""
        if not deletes:
            return
        self._drawing = True
        self._stamp_alone()
        res = apply_plan(
            self.client,
            Plan(domain=self.plan.domain, job=self.plan.job, profile=self.plan.profile, items=deletes),
            known_guids={},
            batch_size=self.batch_size,
            purge=purge,
        )
        _add(self.applied, res)
        self.spool.forget_actual(i.guid for i in deletes if i.guid)
        self.advance(len(deletes))

    def hand_over(self, bookkeeping: Bookkeeping) -> None:
        """What a job synced to nothing leaves to the jobs that use it (after the deletes: a sync
        stopped before finds them again)."""
        if self.plan.handover:
            self._stamp_alone()
            self.applied.requests += failsafes.hand_over(
                self.client, self.plan.handover, self.plan.domain, bookkeeping
            )


class RecordingWriter(SyncWriter):
    """A plan's writer: takes what a sync would write (the plan records it) and writes nothing."""

    recording = True

    def write(self, item: PlanItem, entity: DesiredEntity) -> None:
        self._wrote_after_looking = self._wrote_after_looking or self._looked

    def write_metadata(self, bookkeeping: Bookkeeping) -> None:
        return

    def delete(self, deletes: list[PlanItem], *, purge: bool) -> None:
        return

    def hand_over(self, bookkeeping: Bookkeeping) -> None:
        return


def send_metadata(client: AtlasApi, work: list[tuple[str, Any]], applied: ApplyResult) -> None:
    """The metadata requests (guid, reconcile.metadata's ops) after the entities are written: the
    one place a sync and a saved plan's apply send them."""
    if work:
        applied.requests += apply_metadata(client, work)
        applied.metadata += len(work)


def write_saved(
    client: AtlasApi,
    plan: Plan,
    known: dict[Key, str],
    settings: WriteSettings,
) -> ApplyResult:
    """Write a saved plan (checked against Atlas: ``known``, the guids it holds): its creates, updates
    and deletes (reconcile.apply, the write scheduler a sync's batches go through), then the
    metadata requests it lists, as a sync sends them."""
    from atlas_sync.reconcile.metadata import MetadataOps

    result = apply_plan(
        client,
        plan,
        known_guids=known,
        batch_size=settings.batch_size,
        parallel=settings.parallel,
        purge=settings.purge,
        progress=settings.progress,
    )
    send_metadata(
        client,
        [
            (guid, MetadataOps.from_json(i.metadata))
            for i in plan.items
            if i.metadata and (guid := i.guid or result.guids.get(i.key) or known.get(i.key))
        ],
        result,
    )
    return result


def _add(total: ApplyResult, part: ApplyResult) -> None:
    total.created += part.created
    total.updated += part.updated
    total.deleted += part.deleted
    total.purged += part.purged
    total.requests += part.requests
