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
3. **plan and apply** (reconcile.session's phases) — what Atlas holds for the job (reconcile.holdings: its own entities, listed
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.lineage.model import ColumnEdge, Dataset, LineageGraph, Problem, Process
from atlas_sync.reconcile.actual import Key
from atlas_sync.reconcile.apply import ApplyResult
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.reconcile.catalog import ServerAttributes
from atlas_sync.reconcile.holdings import JobHoldings
from atlas_sync.reconcile.listing import BackgroundListing
from atlas_sync.reconcile.plan import StreamedPlan
from atlas_sync.reconcile.spool import Spool, rows
from atlas_sync.reconcile.writer import SyncWriter
from atlas_sync.render.profile import Profile
from atlas_sync.render.renderer import DesiredState, RenderError, render

Progress = Callable[[int, int], None]

# Processes rendered at once.
RENDER_PROCESSES = 500
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

    ``add_chunk`` for each chunk of the input, then ``start_listing`` and ``render``; the rest
    (checks, comparison, writes) is :class:`~atlas_sync.reconcile.session.SyncSession`'s. ``memory``: the spool is an in-memory database (an ordinary input), else a
    temporary file (a big one).
    """

    def __init__(
        self,
        client: AtlasApi,
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
        self.created_processes: set[str] = set()  # (qualified names: failsafes.file_named_renames)
        self.source: str | None = None
        self.processes = 0
        self.ref_names: set[str] = set()
        self.writer: SyncWriter | None = None
        self._listing: BackgroundListing | None = None
        self.holdings: JobHoldings | None = None

    def __enter__(self) -> StreamSync:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._listing is not None and not self._listing.done:
            self._listing.cancel()
        if self.writer is not None:  # stopped by an error: let the writes in flight end first
            self.writer.abort(*exc)
        self.spool.close()

    def start_listing(
        self,
        root_types: list[str],
        job: str,
        attrs: ServerAttributes,
        refresh: bool = False,
        known: dict[Key, str] | None = None,
    ) -> None:
        """List what ``job`` owns on a thread from now on (reconcile.holdings, reconcile.listing), so
        that rendering overlaps it; ``run`` takes this listing. Call it before anything is written:
        the listing is of Atlas as it is now. ``attrs``: those the server's types have now;
        ``refresh``: without digests, and by owner as well as by key; ``known``: the job's entities
        as its receipt lists them (reconcile.receipt), taken instead of searching Atlas."""
        self.holdings = JobHoldings(
            self.client,
            self.profile,
            self.domain,
            job,
            root_types=root_types,
            bookkeeping=attrs.bookkeeping,
            refresh=refresh,
            known=known,
        )
        self._listing = BackgroundListing(self.holdings.listing)

    def take_listed(self, *, wait: bool) -> None:
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
            self.take_listed(wait=False)
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
        bk = Bookkeeping.of(self.profile.bookkeeping)
        self.ref_names |= self.spool.add_desired(state, bk, bk.create_only(self.domain, job))


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
