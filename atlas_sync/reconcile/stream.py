"""The sync: every plan and sync of a graph, whatever its size, goes through here.

Entities wait in a SQLite spool: in memory for an ordinary input, in a temporary file for a big one
(``Publisher.sync(..., stream=True)`` or automatically past ``STREAM_MIN_ENTITIES``). Nothing is written before the input has been read, rendered and checked in full:

1. **read** — the reader's chunks (:func:`atlas_sync.lineage.registry.read_chunks`) go to a
   temporary SQLite spool: their datasets merged into a catalogue (columns from every chunk), their
   processes and column edges in parts of a few hundred processes.
2. **render** — the catalogue's merged datasets (with their columns) are rendered a few thousand at
   a time, then each spooled part's processes and column lineage, referring to those datasets by
   their rendered keys; so every entity renders exactly as it would from the whole graph, and a
   process over 50,000 datasets never holds their entities. Entities go to the spool, deduplicated
   by key. Template errors and name collisions stop the sync here.
3. **plan and apply** — what Atlas holds for the job (reconcile.holdings: its own entities, listed
   while the input renders, and the other entities it wants, read by name) goes to the spool
   (reconcile.spool); the fail-safes (reconcile.failsafes: another job's process, missing datasets,
   the delete percentage) are checked on the whole plan; then desired entities are read back and
   compared a chunk at a time, in dependency order (reconcile.compare, one entity at a time), and
   what differs is written in batches of ``batch_size`` (reconcile.writer); deletes come last. A
   second run with the same input writes nothing.

Memory is bounded by one reader chunk, one rendered part (of at most ``RENDER_PROCESSES`` processes
and, unless one target column has more, ``RENDER_EDGES`` column edges) or batch of
``RENDER_DATASETS`` datasets, and one write batch; the rest is on disk.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from atlas_sync.lineage.model import ColumnEdge, Dataset, LineageGraph, Problem, Process
from atlas_sync.reconcile import failsafes
from atlas_sync.reconcile.actual import (
    ActualEntity,
    Key,
    job_key,
    reference_attributes,
    scope_key,
)
from atlas_sync.reconcile.apply import ApplyResult
from atlas_sync.reconcile.compare import CompareOptions, compare
from atlas_sync.reconcile.digest import DIGEST_MARK
from atlas_sync.reconcile.holdings import JobHoldings
from atlas_sync.reconcile.listing import BackgroundListing
from atlas_sync.reconcile.plan import PlanItem, PlanOptions, StreamedPlan
from atlas_sync.reconcile.spool import GuidKeys, Spool, rows
from atlas_sync.reconcile.writer import SyncWriter
from atlas_sync.render.profile import Profile
from atlas_sync.render.renderer import DesiredEntity, DesiredState, RenderError, render

Progress = Callable[[int, int], None]

# Processes rendered at once, plan items kept for display.
RENDER_PROCESSES = 500
SHOWN_ITEMS = 2000
# Datasets (with their columns) rendered at once; column edges per spooled part (a Spark plan in job
# mode is one process whose edges are all the input's: its part is split by target column).
RENDER_DATASETS = 1000
RENDER_ENTITIES = 5000  # datasets + columns per render call (a dataset with more columns: alone)
RENDER_EDGES = 20_000


@dataclass
class StreamResult:
    plan: StreamedPlan
    applied: ApplyResult | None


class _Part(BaseModel):
    """A part of a chunk as :meth:`StreamSync.add_chunk` spools it."""

    datasets: list[str]
    processes: list[Process]
    edges: list[ColumnEdge]


class StreamSync:
    """One sync (or plan) of a domain for a job. Use as a context manager (it owns the spool).

    ``add_chunk`` for each chunk of the input, then ``render``, then ``run`` (which lists, checks,
    compares and writes). ``memory``: the spool is an in-memory database (an ordinary input), else a
    temporary file (a big one).
    """

    def __init__(
        self,
        client: Any,
        profile: Profile,
        domain: str,
        *,
        spool_dir: str | None = None,
        memory: bool = False,
    ) -> None:
        self.client = client
        self.profile = profile
        self.domain = domain
        self.spool = Spool(spool_dir, memory=memory)
        self.problems: list[Problem] = []
        self.partial = False
        self.job: str | None = None
        self.job_from_name = False  # (the first chunk's: LineageGraph.job_from_name)
        self.process_jobs = False  # (any chunk's: LineageGraph.process_jobs)
        self._created_processes: set[str] = set()  # (qualified names: failsafes.file_named_renames)
        self.source: str | None = None
        self.processes = 0
        self._ref_names: set[str] = set()
        self._writer: SyncWriter | None = None
        self._listing: BackgroundListing | None = None
        self._holdings: JobHoldings | None = None

    def __enter__(self) -> StreamSync:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._listing is not None and not self._listing.done:
            self._listing.cancel()
        if self._writer is not None:  # stopped by an error: let the writes in flight end first
            self._writer.abort(*exc)
        self.spool.close()

    def start_listing(
        self,
        root_types: list[str],
        *,
        job: str,
        digest_attribute: str | None = None,
        scope_attribute: str | None = None,
        job_key_attribute: str | None = None,
        refresh: bool = False,
        known: dict[Key, str] | None = None,
    ) -> None:
        """List what ``job`` owns on a thread from now on (reconcile.holdings, reconcile.listing), so
        that rendering overlaps it; ``run`` takes this listing. Call it before anything is written:
        the listing is of Atlas as it is now. The attributes: those the server's types have now;
        ``refresh``: without digests, and by owner as well as by key; ``known``: the job's entities
        as its receipt lists them (reconcile.receipt), taken instead of searching Atlas."""
        self._holdings = JobHoldings(
            self.client,
            self.profile,
            self.domain,
            job,
            root_types=root_types,
            digest_attribute=digest_attribute,
            scope_attribute=scope_attribute,
            job_key_attribute=job_key_attribute,
            refresh=refresh,
            known=known,
        )
        self._listing = BackgroundListing(self._holdings.listing)

    def _take_listed(self, *, wait: bool) -> None:
        if self._listing is not None:
            # the spool keeps one row per key, so the client need not remember every guid
            self._listing.take(self.spool.add_actual, wait=wait)

    # ------------------------------------------------------------------ pass 1: read
    def add_chunk(self, graph: LineageGraph) -> None:
        """Take one chunk: datasets into the catalogue, processes and edges into the spool (in parts
        of at most ``RENDER_PROCESSES`` processes, so rendering one holds few entities)."""
        if not self.job:
            self.job, self.job_from_name = graph.job, graph.job_from_name
        self.process_jobs = self.process_jobs or graph.process_jobs
        graph.add_edge_inputs()  # (a graph built by hand too: every edge's source is an input of its process)
        self.source = self.source or graph.source
        self.problems.extend(graph.problems)
        self.partial = self.partial or graph.partial  # part of the job's lineage: deletes nothing
        self.spool.merge_datasets(graph.datasets)
        self.spool.add_edge_columns(
            (ref.dataset, ref.column)
            for e in graph.edges
            for ref in (e.source, e.target)
            if ref.column is not None
        )
        self.processes += len(graph.processes)
        # Edges without a process are rendered against their producer in the same graph: keep whole.
        step = (
            RENDER_PROCESSES
            if all(e.process is not None for e in graph.edges)
            else max(1, len(graph.processes))
        )
        # (datasets no process uses are in the catalogue, rendered at the end)
        for part in chunks_of(graph, step, unused_datasets=False):
            first = True
            for processes, edges in _split_edges(part, step == RENDER_PROCESSES):
                doc = {
                    # the part's datasets once; its processes again with each later piece of their edges
                    "datasets": [d.id for d in part.datasets] if first else [],
                    "processes": [p.model_dump(mode="json") for p in processes],
                    "edges": [e.model_dump(mode="json") for e in edges],
                }
                first = False
                # (json's spelling: receipts in Atlas hold fingerprints of this text)
                self.spool.db.execute("INSERT INTO chunk (doc) VALUES (?)", (json.dumps(doc),))

    def _naming(self) -> dict[str, Any]:
        """What names the input's processes (model.process_local_name), for each part rendered."""
        return {"job": self.job, "job_from_name": self.job_from_name, "process_jobs": self.process_jobs}

    @property
    def is_empty(self) -> bool:
        return not (self.processes or self.spool.dataset_count())

    # ------------------------------------------------------------------ pass 2: render
    def render(self, job: str) -> int:
        """Render every spooled chunk for ``job``; returns the number of distinct entities."""
        cur = self.spool.db.execute("SELECT doc FROM chunk ORDER BY id")
        for (raw,) in rows(cur):
            part = _Part.model_validate_json(raw)
            processes, edges = part.processes, part.edges
            ids: dict[str, None] = dict.fromkeys(part.datasets)
            for p in processes:
                ids.update(dict.fromkeys((*p.inputs, *p.outputs)))
            for e in edges:
                ids.update(dict.fromkeys((e.source.dataset, e.target.dataset)))
            self._render_part(job, list(ids), processes, edges)
            self._take_listed(wait=False)
        # Datasets no chunk referenced (rare): render them on their own.
        self._render_datasets(job, self.spool.unrendered_datasets())
        collision = self.spool.first_collision()
        if collision:
            type_name, qn, first, second = collision
            raise RenderError(
                f"name collision: {first} and {second} both render to {type_name} {qn!r}",
                hint="two different nodes must get different qualified names; check the profile's naming",
            )
        return self.spool.desired_count()

    def _render_part(
        self, job: str, dataset_ids: list[str], processes: list[Process], edges: list[ColumnEdge]
    ) -> None:
        """Render the catalogue's datasets ``dataset_ids`` not rendered yet, then ``processes`` and
        ``edges`` referring to those datasets and their columns by key, into the spool."""
        self._render_datasets(job, self.spool.unrendered_datasets(dataset_ids))
        if not (processes or edges):
            return
        pairs = {
            (ref.dataset, ref.column): None
            for e in edges
            for ref in (e.source, e.target)
            if ref.column is not None
        }
        part = LineageGraph(**self._naming(), source=self.source)
        part.processes, part.edges = processes, edges
        self._add_state(
            job, self._render(job, part, rendered=self.spool.rendered_keys(dataset_ids, list(pairs)))
        )

    def _render_datasets(self, job: str, ids: list[str]) -> None:
        """Render the catalogue's datasets ``ids`` with their columns, at most ``RENDER_DATASETS``
        datasets and about ``RENDER_ENTITIES`` datasets and columns at a time."""
        for lo in range(0, len(ids), RENDER_DATASETS):
            datasets, extra = self.spool.datasets(ids[lo : lo + RENDER_DATASETS])
            batch: list[Dataset] = []
            size = 0
            for d in datasets:
                n = 1 + len(d.columns) + len(extra.get(d.id, ()))
                if batch and size + n > RENDER_ENTITIES:
                    self._render_dataset_batch(job, batch, extra)
                    batch, size = [], 0
                batch.append(d)
                size += n
            if batch:
                self._render_dataset_batch(job, batch, extra)

    def _render_dataset_batch(self, job: str, datasets: list[Dataset], extra: dict[str, list[str]]) -> None:
        part = LineageGraph(**self._naming(), source=self.source)
        part.datasets = datasets
        state = self._render(job, part, extra_columns={d.id: extra[d.id] for d in datasets if d.id in extra})
        self._add_state(job, state)
        self.spool.add_keys(state)

    def _render(self, job: str, part: LineageGraph, **options: Any) -> DesiredState:
        return render(
            part, self.profile, domain=self.domain, job=job, single_process=self.processes == 1, **options
        )

    def _add_state(self, job: str, state: DesiredState) -> None:
        attr, key_attr = self.profile.scope_attribute, self.profile.job_key_attribute
        scope = (attr, scope_key(self.domain)) if attr else None
        key = (key_attr, job_key(self.domain, job)) if key_attr else None
        self._ref_names |= self.spool.add_desired(state, self.profile.digest_attribute, scope, key)

    # ------------------------------------------------------------------ pass 3: plan and apply
    def run(
        self,
        *,
        job: str,
        root_types: list[str],
        process_types: set[str],
        options: PlanOptions,
        batch_size: int = 500,
        parallel: int = 2,
        purge: bool = False,
        progress: Progress | None = None,
        dry_run: bool = False,
        listed: int | None = SHOWN_ITEMS,
        digest_attribute: str | None = None,
        scope_attribute: str | None = None,
        job_key_attribute: str | None = None,
        refresh: bool = False,
        metadata_attribute: str | None = None,
        metadata_record: tuple[str, str] | None = None,
        term_guids: Mapping[str, str] | None = None,
    ) -> StreamResult:
        """List what the job holds (unless :meth:`start_listing` did), look up the rest of what it
        wants, check the fail-safes, then compare and write chunk by chunk; deletes last, then the
        job's keys where they are missing.
        ``dry_run``: compare only (the plan, nothing written; ``applied`` is ``None``). ``listed``:
        how many changes the plan lists (``None``: every item, unchanged ones and what apply sends too).
        ``digest_attribute``: the profile's digest attribute, when the server's types have it: written
        with every entity, and an entity whose stored digest matches is unchanged without a full read
        (``refresh``: read and compare every entity in full all the same, e.g. after edits in the UI).
        ``scope_attribute``: the profile's scope attribute, when the server's types have it: the domain
        is counted by its key (for the delete fail-safe).
        ``job_key_attribute``: the profile's job key attribute, when the server's types have it: written
        with what the job creates, and onto the job's entities that lack it (written before job keys),
        once, after the deletes (so a sync killed before then finds them again the same way).
        ``metadata_attribute``: the profile's record of the classifications, labels, terms and business
        attributes atlas-sync added (reconcile.metadata), when the server's types have it; those are
        then reconciled too, after the entities are written (``term_guids``: term name -> guid).
        ``metadata_record``: a native profile's record instead (business metadata, attribute), when the
        server has it: metadata is reconciled on the job's entities, and on other tools' datasets and
        columns as far as ``foreign = true`` rules want it (they are read in full for it)."""
        plan = StreamedPlan(domain=self.domain, job=job, profile=self.profile.name, limit=listed)
        if self._holdings is None:
            self.start_listing(
                root_types,
                job=job,
                digest_attribute=digest_attribute,
                scope_attribute=scope_attribute,
                job_key_attribute=job_key_attribute,
                refresh=refresh,
            )
        holdings = self._holdings
        assert holdings is not None
        # 1. what Atlas holds for the job: its own entities (listed), what it wants of others (by name)
        self._take_listed(wait=True)
        upgrading = holdings.upgrading(self.spool, job_key_attribute)
        outside = holdings.look_up(self.spool, root_types, job_key_attribute)
        # 2. the fail-safes, on the whole plan before anything is written (reconcile.failsafes)
        failsafes.refuse_foreign_processes(self.spool, process_types, holdings.owner, job)
        skipped = failsafes.left_out(self.spool, outside, options, plan) if holdings.native else set()
        by_guid = GuidKeys(self.spool)
        ref_attrs = reference_attributes([self._ref_names])
        deletes = failsafes.deletes(
            self.client,
            self.spool,
            holdings,
            plan,
            options,
            process_types=process_types,
            by_guid=by_guid,
            ref_attrs=ref_attrs,
            ref_names=self._ref_names,
            scope_attribute=scope_attribute,
            dry_run=dry_run,
        )
        # 3. compare chunk by chunk, in dependency order; the writer writes what differs
        writer = self._writer = SyncWriter(
            self.client,
            self.spool,
            holdings,
            plan,
            process_types=process_types,
            batch_size=batch_size,
            parallel=parallel,
            upgrading=upgrading,
            dry_run=dry_run,
            progress=progress,
            total=self.spool.desired_count() + len(deletes),
        )
        key_attr = self.profile.job_key_attribute
        compare_options = CompareOptions(
            job_key=job_key(self.domain, job),  # this job's claims and digest part
            owner=holdings.owner,  # another mark: another job's entity, only completed
            domain=self.domain,
            digest_attribute=digest_attribute,
            metadata_attribute=metadata_attribute,
            metadata_record=metadata_record,
            term_guids=term_guids or {},
            # written at the end, or unknown to the server
            key_attribute_later=key_attr if key_attr and (upgrading or job_key_attribute is None) else None,
            dry_run=dry_run,
        )
        listed_digest = holdings.digest_attribute
        if listed_digest:
            writer.advance(self._same_digest(plan))
        first_created_process: str | None = None
        unknown = self.profile.scope_attribute if scope_attribute is None else None
        for chunk in self.spool.desired_with_guids(
            digest_attribute=digest_attribute, skip_same=bool(listed_digest), drop=unknown
        ):
            existing, theirs = holdings.read(
                self.spool, chunk, by_guid, ref_attrs, theirs=metadata_record is not None
            )
            created = self._compare(
                chunk, existing, theirs, plan, writer, compare_options, process_types, skipped
            )
            first_created_process = first_created_process or created
        # 4. settle, metadata requests (reconcile.writer); 5. deletes; 6. the job's keys
        writer.finish(digest_attribute, metadata_attribute)
        for item in deletes:
            plan.record(item)
        renamed = failsafes.positional_renames(
            job, deletes, first_created_process
        ) or failsafes.file_named_renames(job, deletes, self._created_processes, process_types)
        if renamed:
            plan.warnings.append(renamed)
        writer.delete(deletes, purge=purge)
        applied = writer.applied
        holdings.write_keys(self.spool, plan, applied, dry_run)
        if plan.handover and not dry_run:  # (after the deletes: a sync stopped before finds them again)
            applied.requests += failsafes.hand_over(
                self.client, plan.handover, self.domain, job_key_attribute
            )
        if plan.refused is not None:  # (a dry run: the plan is whole, refused all the same)
            plan.refused.plan = plan
            raise plan.refused
        has_changes = any(plan.totals[a] for a in ("create", "update", "delete")) or applied.keyed
        return StreamResult(plan=plan, applied=applied if has_changes and not dry_run else None)

    def _same_digest(self, plan: StreamedPlan) -> int:
        """Record what we last wrote and would write now as unchanged: decided from the listing,
        nothing read. Returns how many."""
        same = 0
        for type_name, qn, tier, held, stored in self.spool.same_digest():
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
        plan: StreamedPlan,
        writer: SyncWriter,
        options: CompareOptions,
        process_types: set[str],
        skipped: set[Key],
    ) -> str | None:
        """Compare a chunk's entities (but those left out, ``skipped``) with what Atlas holds of them
        (``existing``, ``theirs``: :meth:`JobHoldings.read`), record each in ``plan`` and hand what differs to
        ``writer``. Returns the first process it creates."""
        created: str | None = None
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
                foreign_guid=self.spool.foreign_guid(e.key) if e.shared and guid is None else None,
                foreign_actual=theirs.get(e.key),
            )
            item = decision.item
            plan.record(item, decision.entity)
            if decision.metadata is not None:
                writer.metadata.append(decision.metadata)
            if item.action == "create" and e.type_name in process_types:
                created = created or e.qualified_name
                self._created_processes.add(e.qualified_name)
            if decision.write and decision.entity is not None:
                writer.write(item, decision.entity)
            else:
                unchanged += 1  # (for the progress count: nothing to write here)
        writer.advance(unchanged)
        return created


def _split_edges(part: LineageGraph, by_target: bool) -> Iterator[tuple[list[Process], list[ColumnEdge]]]:
    """A part's processes and edges, in pieces of about ``RENDER_EDGES`` edges when ``by_target``
    (every edge has its process): the edges of one (process, target column), which render to one
    column-lineage entity, stay in one piece; later pieces repeat the processes their edges need."""
    if not by_target or len(part.edges) <= RENDER_EDGES:
        yield part.processes, part.edges
        return
    groups: dict[tuple[str | None, str, str | None], list[ColumnEdge]] = {}
    for e in part.edges:
        groups.setdefault((e.process, e.target.dataset, e.target.column), []).append(e)
    by_id = {p.id: p for p in part.processes}
    first = True
    piece: list[ColumnEdge] = []

    def pack() -> tuple[list[Process], list[ColumnEdge]]:
        if first:
            return part.processes, piece
        used = dict.fromkeys(e.process for e in piece)
        return [by_id[i] for i in used if i in by_id], piece

    for group in groups.values():
        if piece and len(piece) + len(group) > RENDER_EDGES:
            yield pack()
            first, piece = False, []
        piece.extend(group)
    yield pack()


def chunks_of(
    graph: LineageGraph, processes_per_chunk: int, *, unused_datasets: bool = True
) -> Iterator[LineageGraph]:
    """Split a graph into chunks that follow the contract of ``registry.read_chunks``: each process
    with its edges and the datasets they use (for tests, and for callers with a graph in hand)."""
    by_process: dict[str | None, list[ColumnEdge]] = {}
    for e in graph.edges:
        by_process.setdefault(e.process, []).append(e)
    procs = graph.processes
    step = max(1, processes_per_chunk)
    for lo in range(0, max(len(procs), 1), step):
        chunk = LineageGraph(job=graph.job, source=graph.source)
        ids: dict[str, None] = {}
        for p in procs[lo : lo + step]:
            chunk.processes.append(p)
            ids.update(dict.fromkeys((*p.inputs, *p.outputs)))
            for e in by_process.get(p.id, []):
                chunk.edges.append(e)
                ids.update(dict.fromkeys((e.source.dataset, e.target.dataset)))
        if lo == 0:
            # Edges without a process, datasets nothing refers to, problems: with the first chunk.
            for e in by_process.get(None, []):
                chunk.edges.append(e)
                ids.update(dict.fromkeys((e.source.dataset, e.target.dataset)))
            if unused_datasets:
                ids.update(dict.fromkeys(d.id for d in graph.datasets if d.id not in ids))
            chunk.problems = list(graph.problems)
            chunk.statements = list(graph.statements)
        chunk.datasets = [d for d in (graph.dataset(i) for i in ids) if d is not None]
        yield chunk
