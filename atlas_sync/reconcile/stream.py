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
3. **plan and apply** — the domain is listed into the spool; the fail-safes (another job's process,
   the delete percentage) are checked on the whole plan; then desired entities are read back and
   compared a chunk at a time, in dependency order, and what differs is written in batches of
   ``batch_size``; deletes come last. A second run with the same input writes nothing.

Memory is bounded by one reader chunk, one rendered part (of at most ``RENDER_PROCESSES`` processes
and, unless one target column has more, ``RENDER_EDGES`` column edges) or batch of
``RENDER_DATASETS`` datasets, and one write batch; the rest is on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.lineage.model import ColumnEdge, Dataset, LineageGraph, Problem, Process
from atlas_sync.reconcile.actual import (
    Key,
    count_scope,
    fingerprint,
    iter_job,
    iter_scope,
    job_key,
    lookup_headers,
    read_entities,
    reference_attributes,
    scope_key,
    to_actual,
)
from atlas_sync.reconcile.apply import (
    ApplyResult,
    BatchOutcome,
    WriteBatch,
    WriteScheduler,
    apply_plan,
    write_batch,
)
from atlas_sync.reconcile.digest import DIGEST_MARK, entity_digest
from atlas_sync.reconcile.listing import BackgroundListing
from atlas_sync.reconcile.plan import (
    Plan,
    PlanItem,
    PlanOptions,
    _desired_from_json,
    _desired_json,
    check_deletes,
    find_existing,
    foreign_process,
    missing_to_skip,
    plan_item,
    without_refs_to,
)
from atlas_sync.render.native import JOB_LABEL, label_for
from atlas_sync.render.profile import Profile
from atlas_sync.render.renderer import DesiredEntity, DesiredState, RenderedKeys, RenderError, render

Progress = Callable[[int, int], None]

# Entities compared per read-back request group, processes rendered at once, plan items kept for display.
READ_CHUNK = 1000
# ... and at most about this many bytes of desired JSON per read-back group: an entity with 50,000
# references (a Spark plan's process or column lineage) comes back with 50,000 referred entities.
READ_BYTES = 2_000_000
RENDER_PROCESSES = 500
SHOWN_ITEMS = 2000
# Datasets (with their columns) rendered at once; column edges per spooled part (a Spark plan in job
# mode is one process whose edges are all the input's: its part is split by target column).
RENDER_DATASETS = 1000
RENDER_ENTITIES = 5000  # datasets + columns per render call (a dataset with more columns: alone)
RENDER_EDGES = 20_000


@dataclass
class StreamedPlan(Plan):
    """A plan computed (and applied) chunk by chunk: counts of every action; items of every change,
    or of the first ``limit`` changes; unchanged items too unless ``limit`` is set."""

    totals: dict[str, int] = field(
        default_factory=lambda: {"create": 0, "update": 0, "delete": 0, "unchanged": 0}
    )
    omitted: int = 0
    limit: int | None = None

    @property
    def counts(self) -> dict[str, int]:
        return {a: n for a, n in self.totals.items() if n or a != "referenced"}

    def record(self, item: PlanItem, entity: DesiredEntity | None = None) -> None:
        self.totals[item.action] = self.totals.get(item.action, 0) + 1
        if item.action == "unchanged" and self.limit is not None:
            return
        if self.limit is None or len(self.items) < self.limit:
            self.items.append(item)
            if entity is not None and item.action != "unchanged":
                self.desired[entity.key] = entity  # what apply sends (kept when the whole plan is kept)
        else:
            self.omitted += 1

    def summary(self) -> str:
        more = f" ({self.omitted} more changes not listed)" if self.omitted else ""
        return super().summary() + more


class _Spool:
    """A temporary SQLite file: spooled chunks, desired entities, and the domain's headers."""

    def __init__(self, directory: str | None = None, *, memory: bool = False) -> None:
        self.path = ":memory:"
        if not memory:
            fd, self.path = tempfile.mkstemp(prefix="atlas-sync-spool-", suffix=".sqlite", dir=directory)
            os.close(fd)
        self.db = sqlite3.connect(self.path)
        self.db.executescript(
            """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            PRAGMA temp_store = FILE;
            PRAGMA cache_size = -16000;
            CREATE TABLE chunk (id INTEGER PRIMARY KEY, doc TEXT NOT NULL);
            CREATE TABLE dataset (
                seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL,
                rendered INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE edge_column (
                seq INTEGER PRIMARY KEY, ds TEXT NOT NULL, col TEXT NOT NULL, UNIQUE (ds, col));
            CREATE TABLE ds_key (
                ds TEXT PRIMARY KEY, type TEXT NOT NULL, qn TEXT NOT NULL, tier INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE col_key (
                ds TEXT NOT NULL, col TEXT NOT NULL, type TEXT NOT NULL, qn TEXT NOT NULL,
                tier INTEGER NOT NULL, PRIMARY KEY (ds, col)) WITHOUT ROWID;
            CREATE TABLE desired (
                type TEXT NOT NULL, qn TEXT NOT NULL, tier INTEGER NOT NULL, origin TEXT NOT NULL,
                body TEXT NOT NULL, conflict TEXT, shared INTEGER NOT NULL DEFAULT 0, digest TEXT,
                PRIMARY KEY (type, qn)) WITHOUT ROWID;
            CREATE TABLE desired_ref (
                type TEXT NOT NULL, qn TEXT NOT NULL, rtype TEXT NOT NULL, rqn TEXT NOT NULL,
                PRIMARY KEY (type, qn, rtype, rqn)) WITHOUT ROWID;
            CREATE TABLE actual (
                type TEXT NOT NULL, qn TEXT NOT NULL, guid TEXT NOT NULL, owner TEXT, digest TEXT,
                keyed INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (type, qn)) WITHOUT ROWID;
            CREATE INDEX actual_guid ON actual (guid);
            CREATE TABLE foreign_ (
                type TEXT NOT NULL, qn TEXT NOT NULL, guid TEXT NOT NULL, PRIMARY KEY (type, qn)
            ) WITHOUT ROWID;
            CREATE INDEX foreign_guid ON foreign_ (guid);
            """
        )
        # The open connection keeps the file; without a name it cannot outlive a killed sync
        # (POSIX; where an open file cannot be removed, close() removes it).
        if not memory:
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def close(self) -> None:
        self.db.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    # ------------------------------------------------------------------ catalogue
    def merge_datasets(self, datasets: Iterable[Dataset]) -> None:
        """Add datasets, merging columns into one already stored (as ``LineageGraph.add_dataset``)."""
        for d in datasets:
            row = self.db.execute("SELECT doc FROM dataset WHERE id = ?", (d.id,)).fetchone()
            if row is None:
                self.db.execute("INSERT INTO dataset (id, doc) VALUES (?, ?)", (d.id, d.model_dump_json()))
                continue
            have = Dataset.model_validate_json(row[0])
            names = set(have.column_names())
            new = [c for c in d.columns if c.name not in names]
            # as the SQL readers do: a later CREATE VIEW tells what an earlier read was
            refined = have.kind == "table" and d.kind in ("view", "intermediate")
            if new or refined:
                have.columns.extend(new)
                if refined:
                    have.kind = d.kind
                self.db.execute("UPDATE dataset SET doc = ? WHERE id = ?", (have.model_dump_json(), d.id))

    def add_edge_columns(self, pairs: Iterable[tuple[str, str]]) -> None:
        self.db.executemany("INSERT OR IGNORE INTO edge_column (ds, col) VALUES (?, ?)", pairs)

    def datasets(self, ids: list[str]) -> tuple[list[Dataset], dict[str, list[str]]]:
        """The stored datasets among ``ids`` (in that order), and the columns that edges anywhere in
        the input use on them but no reader listed (in edge order), marking them rendered."""
        out: list[Dataset] = []
        extra: dict[str, list[str]] = {}
        for lo in range(0, len(ids), 500):
            part = ids[lo : lo + 500]
            marks = ",".join("?" * len(part))
            found = {
                r[0]: Dataset.model_validate_json(r[1])
                for r in self.db.execute(f"SELECT id, doc FROM dataset WHERE id IN ({marks})", part)
            }
            out.extend(found[i] for i in part if i in found)
            for ds, col in self.db.execute(
                f"SELECT ds, col FROM edge_column WHERE ds IN ({marks}) ORDER BY seq", part
            ):
                d = found.get(ds)
                if d is not None and not d.has_column(col):
                    extra.setdefault(ds, []).append(col)
            self.db.execute(f"UPDATE dataset SET rendered = 1 WHERE id IN ({marks})", part)
        return out, extra

    def unrendered_datasets(self, ids: list[str] | None = None) -> list[str]:
        """The catalogue's datasets not rendered yet: all, or those among ``ids`` (in that order)."""
        if ids is None:
            return [r[0] for r in self.db.execute("SELECT id FROM dataset WHERE rendered = 0 ORDER BY seq")]
        out: list[str] = []
        for lo in range(0, len(ids), 500):
            part = ids[lo : lo + 500]
            marks = ",".join("?" * len(part))
            todo = {
                r[0]
                for r in self.db.execute(
                    f"SELECT id FROM dataset WHERE rendered = 0 AND id IN ({marks})", part
                )
            }
            out.extend(i for i in part if i in todo)
        return out

    def add_keys(self, state: DesiredState) -> None:
        """Remember which key (and tier) each dataset and column of ``state`` rendered to."""
        tiers = {k: e.tier for k, e in state.entities.items()}
        self.db.executemany(
            "INSERT OR REPLACE INTO ds_key (ds, type, qn, tier) VALUES (?, ?, ?, ?)",
            ((ds, k[0], k[1], tiers[k]) for ds, k in state.dataset_keys.items()),
        )
        self.db.executemany(
            "INSERT OR REPLACE INTO col_key (ds, col, type, qn, tier) VALUES (?, ?, ?, ?, ?)",
            ((ds, col, k[0], k[1], tiers[k]) for (ds, col), k in state.column_keys.items()),
        )

    def rendered_keys(self, ids: list[str], columns: list[tuple[str, str]]) -> RenderedKeys:
        """The rendered keys of datasets ``ids`` and of the columns ``columns`` (dataset, column)."""
        out = RenderedKeys()
        for lo in range(0, len(ids), 500):
            part = ids[lo : lo + 500]
            marks = ",".join("?" * len(part))
            for ds, t, qn, tier in self.db.execute(
                f"SELECT ds, type, qn, tier FROM ds_key WHERE ds IN ({marks})", part
            ):
                out.datasets[ds] = (t, qn)
                out.tiers[(t, qn)] = tier
        for pair in columns:
            row = self.db.execute(
                "SELECT type, qn, tier FROM col_key WHERE ds = ? AND col = ?", pair
            ).fetchone()
            if row is not None:
                out.columns[pair] = (row[0], row[1])
                out.tiers[(row[0], row[1])] = row[2]
        return out

    def dataset_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM dataset").fetchone()[0])

    # ------------------------------------------------------------------ desired
    def add_desired(
        self,
        state: DesiredState,
        digest_attribute: str | None = None,
        scope: tuple[str, str] | None = None,
        job_key: tuple[str, str] | None = None,
    ) -> set[str]:
        """Store rendered entities; an entity already stored from the same origin is kept as is.
        With ``digest_attribute``, each one's digest (reconcile.digest) and the keys it refers to;
        ``scope``: (attribute, value) every entity carries (the domain's key, which the digest covers);
        ``job_key``: (attribute, value) written when an entity is created, with its owner (so the
        digest does not cover it). Returns the names of the reference attributes seen."""
        rows = []
        refs: list[tuple[str, str, str, str]] = []
        ref_names: set[str] = set()
        for e in state.entities.values():
            ref_names.update(e.refs)
            if scope is not None:
                e.attributes[scope[0]] = scope[1]
            if job_key is not None:
                e.create_only[job_key[0]] = job_key[1]
            digest = None
            if digest_attribute is not None:
                digest = entity_digest(e, digest_attribute)
                refs.extend(
                    (e.type_name, e.qualified_name, k[0], k[1])
                    for v in e.refs.values()
                    for k in (v if isinstance(v, list) else ([v] if v else []))
                )
            rows.append(
                (
                    e.type_name,
                    e.qualified_name,
                    e.tier,
                    e.origin,
                    json.dumps(_desired_json(e)),
                    int(e.shared),
                    digest,
                )
            )
        # Same key from another origin: two nodes render to one name (reported before any write).
        self.db.executemany(
            "INSERT INTO desired (type, qn, tier, origin, body, shared, digest) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (type, qn) DO UPDATE SET conflict = COALESCE(conflict, excluded.origin) "
            "WHERE desired.origin != excluded.origin",
            rows,
        )
        self.db.executemany("INSERT OR IGNORE INTO desired_ref VALUES (?, ?, ?, ?)", refs)
        return ref_names

    def first_collision(self) -> tuple[str, str, str, str] | None:
        row = self.db.execute(
            "SELECT type, qn, origin, conflict FROM desired WHERE conflict IS NOT NULL LIMIT 1"
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3])

    def desired_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM desired").fetchone()[0])

    def is_desired(self, key: Key) -> bool:
        return self.db.execute("SELECT 1 FROM desired WHERE type = ? AND qn = ?", key).fetchone() is not None

    # A desired entity whose stored digest is the one it would be written with, and that refers to
    # nothing Atlas lacks (a deleted entity's relationships went with it: they must be written again).
    _SAME = (
        "a.digest IS NOT NULL AND a.digest = d.digest AND NOT EXISTS ("
        " SELECT 1 FROM desired_ref r WHERE r.type = d.type AND r.qn = d.qn"
        " AND NOT EXISTS (SELECT 1 FROM actual x WHERE x.type = r.rtype AND x.qn = r.rqn)"
        " AND NOT EXISTS (SELECT 1 FROM foreign_ f WHERE f.type = r.rtype AND f.qn = r.rqn))"
    )

    def same_digest(self) -> Iterator[tuple[str, str, int, str, str]]:
        """(type, qualifiedName, tier, guid, digest) of the desired entities found unchanged by digest."""
        cur = self.db.execute(
            "SELECT d.type, d.qn, d.tier, a.guid, a.digest FROM desired d "
            f"JOIN actual a ON a.type = d.type AND a.qn = d.qn WHERE {self._SAME} ORDER BY d.tier, d.type, d.qn"
        )
        yield from _rows(cur)

    def desired_with_guids(
        self, *, digest_attribute: str | None = None, skip_same: bool = False, drop: str | None = None
    ) -> Iterator[list[tuple[DesiredEntity, str | None]]]:
        """Desired entities in dependency order, with the guid Atlas holds them under, in chunks of
        at most ``READ_CHUNK`` entities and about ``READ_BYTES`` of JSON; ``digest_attribute``: each
        carrying its digest; ``skip_same``: without those :meth:`same_digest` gives; ``drop``: an
        attribute to leave out (one the server's types lack)."""
        where = f"WHERE NOT (a.guid IS NOT NULL AND {self._SAME}) " if skip_same else ""
        cur = self.db.execute(
            "SELECT d.body, d.tier, a.guid, d.digest FROM desired d "
            f"LEFT JOIN actual a ON a.type = d.type AND a.qn = d.qn {where}ORDER BY d.tier, d.type, d.qn"
        )
        out: list[tuple[DesiredEntity, str | None]] = []
        size = 0
        for body, tier, guid, digest in _rows(cur):
            if out and (len(out) >= READ_CHUNK or size + len(body) > READ_BYTES):
                yield out
                out, size = [], 0
            e = _desired_from_json(json.loads(body))
            e.tier = tier
            if digest_attribute is not None and digest is not None:
                e.attributes[digest_attribute] = digest
            if drop is not None:
                e.attributes.pop(drop, None)
            out.append((e, guid))
            size += len(body)
        if out:
            yield out

    # ------------------------------------------------------------------ actual
    def add_actual(self, rows: Iterable[tuple[str, str, str, str | None, str | None, bool]]) -> None:
        """Listed entities: (type, qualifiedName, guid, owner, stored digest, carries its job key); a
        key listed again (or written) keeps its first owner and digest and takes the new guid."""
        self.db.executemany(
            "INSERT INTO actual (type, qn, guid, owner, digest, keyed) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (type, qn) DO UPDATE SET guid = excluded.guid",
            rows,
        )

    def actual_count(self, owner: str | None = None) -> int:
        """Entities listed (or looked up), or only those ``owner`` owns."""
        if owner is None:
            return int(self.db.execute("SELECT count(*) FROM actual").fetchone()[0])
        return int(self.db.execute("SELECT count(*) FROM actual WHERE owner = ?", (owner,)).fetchone()[0])

    def unlisted_desired(self, *, shared: bool = True) -> list[Key]:
        """Desired entities the listing did not give (``shared``: shared ones too): to look up."""
        cond = "" if shared else " AND d.shared = 0"
        return [
            (r[0], r[1])
            for r in self.db.execute(
                "SELECT d.type, d.qn FROM desired d WHERE NOT EXISTS "
                f"(SELECT 1 FROM actual a WHERE a.type = d.type AND a.qn = d.qn){cond} ORDER BY d.type, d.qn"
            )
        ]

    def unkeyed(self, owner: str) -> list[tuple[str, str, str]]:
        """(type, qualifiedName, guid) of ``owner``'s entities that lack its job key."""
        return [
            (r[0], r[1], r[2])
            for r in self.db.execute(
                "SELECT type, qn, guid FROM actual WHERE owner = ? AND keyed = 0 ORDER BY type, qn", (owner,)
            )
        ]

    def forget_actual(self, guids: Iterable[str]) -> None:
        self.db.executemany("DELETE FROM actual WHERE guid = ?", ((g,) for g in guids))

    def guids_of(self, keys: Iterable[Key]) -> dict[Key, str]:
        out: dict[Key, str] = {}
        for k in set(keys):
            row = self.db.execute("SELECT guid FROM actual WHERE type = ? AND qn = ?", k).fetchone()
            row = row or self.db.execute("SELECT guid FROM foreign_ WHERE type = ? AND qn = ?", k).fetchone()
            if row:
                out[k] = row[0]
        return out

    def key_of_guid(self, guid: str) -> Key | None:
        row = self.db.execute("SELECT type, qn FROM actual WHERE guid = ?", (guid,)).fetchone()
        row = row or self.db.execute("SELECT type, qn FROM foreign_ WHERE guid = ?", (guid,)).fetchone()
        return None if row is None else (row[0], row[1])

    # ------------------------------------------------------------------ native profiles
    def shared_outside(self) -> list[Key]:
        """Desired shared (dataset) entities not in the domain's listing: made by others, or missing."""
        return [
            (r[0], r[1])
            for r in self.db.execute(
                "SELECT d.type, d.qn FROM desired d WHERE d.shared = 1 AND NOT EXISTS "
                "(SELECT 1 FROM actual a WHERE a.type = d.type AND a.qn = d.qn) ORDER BY d.type, d.qn"
            )
        ]

    def add_foreign(self, found: Mapping[Key, str]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO foreign_ (type, qn, guid) VALUES (?, ?, ?)",
            [(k[0], k[1], g) for k, g in found.items()],
        )

    def foreign_guid(self, key: Key) -> str | None:
        row = self.db.execute("SELECT guid FROM foreign_ WHERE type = ? AND qn = ?", key).fetchone()
        return None if row is None else str(row[0])

    def desired_outputs(self) -> dict[Key, list[Key]]:
        """Each desired entity's ``outputs`` references (what --missing-datasets skip follows)."""
        out: dict[Key, list[Key]] = {}
        for t, qn, body in self.db.execute("SELECT type, qn, body FROM desired"):
            v = json.loads(body).get("refs", {}).get("outputs")
            if isinstance(v, list) and v:
                out[(t, qn)] = [(x[0], x[1]) for x in v]
        return out

    def foreign_processes(self, process_types: set[str], job: str) -> tuple[str, str, str] | None:
        """A desired process that Atlas holds under another job's ownership."""
        if not process_types:
            return None
        marks = ",".join("?" * len(process_types))
        row = self.db.execute(
            f"SELECT d.type, d.qn, a.owner FROM desired d JOIN actual a ON a.type = d.type AND a.qn = d.qn "
            f"WHERE d.type IN ({marks}) AND a.owner IS NOT NULL AND a.owner != ? LIMIT 1",
            (*sorted(process_types), job),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def stale(self, job: str) -> list[tuple[str, str, str]]:
        """(type, qualifiedName, guid) of this job's entities that the input no longer produces."""
        return [
            (r[0], r[1], r[2])
            for r in self.db.execute(
                "SELECT a.type, a.qn, a.guid FROM actual a WHERE a.owner = ? AND NOT EXISTS "
                "(SELECT 1 FROM desired d WHERE d.type = a.type AND d.qn = a.qn) ORDER BY a.type, a.qn",
                (job,),
            )
        ]


class _GuidKeys(Mapping[str, Key]):
    """guid -> key over the spool's listing, for normalising references read back from Atlas."""

    def __init__(self, spool: _Spool) -> None:
        self.spool = spool
        self.cache: dict[str, Key | None] = {}

    def _get(self, guid: str) -> Key | None:
        if guid not in self.cache:
            if len(self.cache) > 50_000:
                self.cache.clear()
            self.cache[guid] = self.spool.key_of_guid(guid)
        return self.cache[guid]

    def __getitem__(self, guid: str) -> Key:
        k = self._get(guid)
        if k is None:
            raise KeyError(guid)
        return k

    def __contains__(self, guid: object) -> bool:
        return isinstance(guid, str) and self._get(guid) is not None

    def __iter__(self) -> Iterator[str]:
        raise TypeError("not iterable")

    def __len__(self) -> int:
        return self.spool.actual_count()


@dataclass
class StreamResult:
    plan: StreamedPlan
    applied: ApplyResult | None


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
        self.spool = _Spool(spool_dir, memory=memory)
        self.problems: list[Problem] = []
        self.job: str | None = None
        self.source: str | None = None
        self.processes = 0
        self._ref_names: set[str] = set()
        self._writes: WriteScheduler | None = None
        self._listing: BackgroundListing | None = None
        self._listed_digest: str | None = None
        self._listed_job: str | None = None  # the job whose own entities the listing holds (None: domain)
        self._roots: list[str] = []
        self._scope_attribute: str | None = None

    def __enter__(self) -> StreamSync:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._listing is not None and not self._listing.done:
            self._listing.cancel()
        if self._writes is not None:  # stopped by an error: let the writes in flight end first
            self._writes.__exit__(*exc)
        self.spool.close()

    def start_listing(
        self,
        root_types: list[str],
        *,
        job: str | None = None,
        digest_attribute: str | None = None,
        scope_attribute: str | None = None,
        job_key_attribute: str | None = None,
        refresh: bool = False,
    ) -> None:
        """List on a thread from now on (reconcile.listing), so that rendering overlaps it; ``run``
        takes this listing. Call it before anything is written: the listing is of Atlas as it is now.
        ``job``: list only what that job owns (reconcile.actual.iter_job; ``run`` then looks up the
        other entities it wants by unique attribute), else the whole domain.
        ``digest_attribute``, ``scope_attribute``, ``job_key_attribute``: those the server's types
        have now (``None`` lists without them, which is never wrong: entities are then compared in
        full); ``refresh``: without digests, and by name as well as by key."""
        native = self.profile.mapping_file is not None
        self._listed_digest = None if refresh else digest_attribute
        self._listed_job = job
        self._roots, self._scope_attribute = root_types, scope_attribute
        digest, scope = self._listed_digest, None if refresh else scope_attribute
        if job is not None:
            self._listing = BackgroundListing(
                lambda: iter_job(
                    self.client,
                    root_types,
                    self.domain,
                    job,
                    job_key_attribute=job_key_attribute,
                    labels=native,
                    digest_attribute=digest,
                    scope_attribute=scope_attribute,
                    refresh=refresh,
                    dedupe=False,
                )
            )
            return
        self._listing = BackgroundListing(
            lambda: iter_scope(
                self.client,
                root_types,
                self.domain,
                labels=native,
                digest_attribute=digest,
                scope_attribute=scope,
                dedupe=False,
            )
        )

    def _take_listed(self, *, wait: bool) -> None:
        if self._listing is not None:
            # the spool keeps one row per key, so the client need not remember every guid
            self._listing.take(self.spool.add_actual, wait=wait)

    # ------------------------------------------------------------------ pass 1: read
    def add_chunk(self, graph: LineageGraph) -> None:
        """Take one chunk: datasets into the catalogue, processes and edges into the spool (in parts
        of at most ``RENDER_PROCESSES`` processes, so rendering one holds few entities)."""
        self.job = self.job or graph.job
        self.source = self.source or graph.source
        self.problems.extend(graph.problems)
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
                self.spool.db.execute("INSERT INTO chunk (doc) VALUES (?)", (json.dumps(doc),))

    @property
    def is_empty(self) -> bool:
        return not (self.processes or self.spool.dataset_count())

    # ------------------------------------------------------------------ pass 2: render
    def render(self, job: str) -> int:
        """Render every spooled chunk for ``job``; returns the number of distinct entities."""
        cur = self.spool.db.execute("SELECT doc FROM chunk ORDER BY id")
        for (raw,) in _rows(cur):
            doc = json.loads(raw)
            processes = [Process.model_validate(p) for p in doc["processes"]]
            edges = [ColumnEdge.model_validate(e) for e in doc["edges"]]
            ids: dict[str, None] = dict.fromkeys(doc["datasets"])
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
        part = LineageGraph(job=self.job, source=self.source)
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
        part = LineageGraph(job=self.job, source=self.source)
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
    ) -> StreamResult:
        """List the domain (unless :meth:`start_listing` did), check the fail-safes, then compare and
        write chunk by chunk; deletes last.
        ``dry_run``: compare only (the plan, nothing written; ``applied`` is ``None``). ``listed``:
        how many changes the plan lists (``None``: every item, unchanged ones and what apply sends too).
        ``digest_attribute``: the profile's digest attribute, when the server's types have it: written
        with every entity, and an entity whose stored digest matches is unchanged without a full read
        (``refresh``: read and compare every entity in full all the same, e.g. after edits in the UI).
        ``scope_attribute``: the profile's scope attribute, when the server's types have it: the domain
        is listed by its key (reconcile.actual.iter_scope; ``refresh`` lists by name all the same).
        ``job_key_attribute``: the profile's job key attribute, when the server's types have it: written
        with what the job creates, and onto the job's entities that lack it (written before job keys),
        once, after the deletes (so a sync killed before then finds them again the same way)."""
        plan = StreamedPlan(domain=self.domain, job=job, profile=self.profile.name, limit=listed)
        # a native profile's scope is the domain's label and its owner mark the job's label
        native = self.profile.mapping_file is not None
        owner = label_for(JOB_LABEL, job) if native else job
        if self._listing is None:
            self.start_listing(
                root_types,
                job=job,
                digest_attribute=digest_attribute,
                scope_attribute=scope_attribute,
                job_key_attribute=job_key_attribute,
                refresh=refresh,
            )
        self._take_listed(wait=True)
        listed_digest = self._listed_digest
        key_attr = self.profile.job_key_attribute
        # entities of the job listed without its key (written by an earlier atlas-sync): what this sync
        # creates gets the key only with them, at the end, so a killed sync lists them all again
        upgrading = bool(self._listed_job and job_key_attribute and self.spool.unkeyed(owner))
        self._roots, self._scope_attribute = root_types, scope_attribute
        outside: dict[Key, str] | None = None
        if self._listed_job is not None and root_types:  # (no root types: the server has none of them)
            # what the job wants but does not own: read by unique attribute (other jobs' and hooks' entities)
            outside = {}
            looked_up = lookup_headers(
                self.client,
                self.spool.unlisted_desired(),
                self.domain,
                labels=native,
                digest_attribute=listed_digest,
                job_key_attribute=job_key_attribute,
                outside=outside,
            )
            self.spool.add_actual(
                (h.type_name, h.qualified_name, h.guid, h.owner, h.digest, h.keyed) for h in looked_up
            )
        foreign = self.spool.foreign_processes(process_types, owner)
        if foreign:
            raise foreign_process(*foreign, owner)
        skipped: set[Key] = set()
        if native:
            # datasets that exist outside the domain (a hook made them) are referenced, never written
            shared = self.spool.shared_outside()
            if outside is None:
                found = find_existing(self.client, shared)
            else:  # the lookup above read them
                found = {k: outside[k] for k in shared if k in outside}
            self.spool.add_foreign(found)
            policy = options.missing_datasets
            missing = {k for k in shared if k not in found}
            outputs = self.spool.desired_outputs() if policy == "skip" and missing else {}
            skipped = missing_to_skip(missing, outputs, policy)  # "fail" refuses before any write
            if skipped:
                plan.warnings.append(
                    f"{len(skipped)} entities left out: datasets missing from Atlas (--missing-datasets skip) "
                    "and what only writes them, e.g. " + " ".join(sorted(qn for _, qn in skipped)[:3])
                )
        by_guid = _GuidKeys(self.spool)
        ref_attrs = reference_attributes([self._ref_names])
        deletes = self._deletes(owner, process_types, plan, options, by_guid, ref_attrs)
        total = self.spool.desired_count() + len(deletes)
        applied = ApplyResult()
        pending = Plan(domain=self.domain, job=job, profile=self.profile.name)
        done = 0
        first_created_process: str | None = None

        # Write batches go through apply's conflict-free scheduler: up to ``parallel`` at once, a batch
        # only after every earlier one it touches has finished (batches span tiers: a column batch
        # refers to datasets an earlier batch creates). The spool is used on this thread only.
        def prepare(batch: WriteBatch, flight: Any) -> Callable[[], BatchOutcome]:
            known = self.spool.guids_of(batch.refs())  # the batches it depends on have finished
            return lambda: write_batch(self.client, batch, known, flight)

        def finished(batch: WriteBatch, outcome: BatchOutcome) -> None:
            nonlocal done
            self.spool.add_actual(
                (k[0], k[1], g, owner, None, not upgrading) for k, g in outcome.assigned.items()
            )
            applied.count_written(batch.items, outcome.requests)
            done += len(batch.items)
            if progress:
                progress(done, total)

        scheduler = self._writes = WriteScheduler(parallel, prepare, finished)

        def flush() -> None:
            if not pending.items:
                return
            if not dry_run:
                scheduler.submit(WriteBatch(list(pending.items), dict(pending.desired)))
            pending.items.clear()
            pending.desired.clear()

        if listed_digest:
            # what we last wrote is what we would write now: decided from the listing, nothing read
            for type_name, qn, tier, held, stored in self.spool.same_digest():
                plan.record(
                    PlanItem(
                        "unchanged", type_name, qn, guid=held, tier=tier, fingerprint=DIGEST_MARK + stored
                    )
                )
                done += 1
            if progress and done:
                progress(done, total)
        unknown = self.profile.scope_attribute if scope_attribute is None else None
        for chunk in self.spool.desired_with_guids(
            digest_attribute=digest_attribute, skip_same=bool(listed_digest), drop=unknown
        ):
            existing = read_entities(self.client, [g for _, g in chunk if g], by_guid, ref_attrs)
            unchanged = 0
            for e, guid in chunk:
                if e.key in skipped:
                    continue
                if key_attr and (upgrading or job_key_attribute is None):
                    e.create_only.pop(key_attr, None)  # written at the end, or unknown to the server
                e = without_refs_to(e, skipped)
                if e.shared and guid is None:
                    theirs = self.spool.foreign_guid(e.key)
                    if theirs is not None:
                        plan.record(
                            PlanItem("referenced", e.type_name, e.qualified_name, guid=theirs, tier=e.tier)
                        )
                        unchanged += 1
                        continue
                item = plan_item(e, existing.get(e.key) if guid else None)
                if len(item.changes) > 1 and digest_attribute:
                    # the digest changes with every other change: not worth a line of the plan
                    item.changes = [c for c in item.changes if c.attribute != digest_attribute]
                if e.shared and item.action == "update":
                    # a shared dataset is written once, minimally: what a hook adds later is not fought over
                    item = PlanItem(
                        "unchanged", e.type_name, e.qualified_name, item.guid, [], item.tier, item.fingerprint
                    )
                plan.record(item, e)
                if item.action == "create" and first_created_process is None and e.type_name in process_types:
                    first_created_process = e.qualified_name
                if item.action == "unchanged":
                    unchanged += 1
                    continue
                pending.items.append(item)
                pending.desired[e.key] = e
                if len(pending.items) >= batch_size:
                    flush()
            done += unchanged
            if progress and unchanged:
                progress(done, total)
        flush()
        scheduler.close()
        self._writes = None

        for item in deletes:
            plan.record(item)
        renamed = _positional_renames(job, deletes, first_created_process)
        if renamed:
            plan.warnings.append(renamed)
        if deletes and not dry_run:
            res = apply_plan(
                self.client,
                Plan(domain=self.domain, job=job, profile=self.profile.name, items=deletes),
                known_guids={},
                batch_size=batch_size,
                purge=purge,
            )
            _add(applied, res)
            self.spool.forget_actual(i.guid for i in deletes if i.guid)
            done += len(deletes)
            if progress:
                progress(done, total)
        if self._listed_job is not None and key_attr and job_key_attribute and not native:
            self._write_job_keys(job, job_key_attribute, batch_size, plan, applied, dry_run)
        has_changes = any(plan.totals[a] for a in ("create", "update", "delete")) or applied.keyed
        return StreamResult(plan=plan, applied=applied if has_changes and not dry_run else None)

    def _write_job_keys(
        self,
        job: str,
        attribute: str,
        batch_size: int,
        plan: StreamedPlan,
        applied: ApplyResult,
        dry_run: bool,
    ) -> None:
        """Write the job's key onto what it owns without it (written by an atlas-sync before job keys):
        once, last, so that a sync killed before this point finds them again by owner. Each entity is
        read and sent back with its own plain attributes (Atlas checks the mandatory ones on a bulk
        write) and the key; references are left out, so Atlas keeps them."""
        todo = self.spool.unkeyed(job)
        if not todo:
            return
        plan.warnings.append(
            f"{len(todo)} entities of job {job!r} {'would get' if dry_run else 'get'} the job's key "
            f"({attribute}), once: they were written before job keys"
        )
        if dry_run:
            return
        key = job_key(self.domain, job)
        bodies = []
        for lo in range(0, len(todo), READ_CHUNK):
            part = todo[lo : lo + READ_CHUNK]
            for ent in self.client.get_entities([g for _, _, g in part], ignore_relationships=True):
                if ent.get("status", "ACTIVE") != "ACTIVE":
                    continue
                attrs = {k: v for k, v in (ent.get("attributes") or {}).items() if not _is_reference(v)}
                attrs[attribute] = key
                bodies.append({"typeName": ent["typeName"], "guid": ent["guid"], "attributes": attrs})
            applied.requests += 1 + (len(part) - 1) // 300
        res = self.client.upsert_entities(bodies, batch_size=batch_size, headers=False)
        applied.requests += int(getattr(res, "requests", 1) or 1)
        applied.keyed += len(bodies)

    def _deletes(
        self,
        job: str,
        process_types: set[str],
        plan: Plan,
        options: PlanOptions,
        by_guid: _GuidKeys,
        ref_attrs: set[str],
    ) -> list[PlanItem]:
        """This job's entities the input no longer produces (datasets only when nothing else refers
        to them), with the same fail-safes as a whole plan; decided before anything is written."""
        stale = self.spool.stale(job)
        if not stale:
            return []
        gone = {g for _, _, g in stale}
        out: list[PlanItem] = []
        for lo in range(0, len(stale), READ_CHUNK):
            part = stale[lo : lo + READ_CHUNK]
            ents = {e["guid"]: e for e in self.client.get_entities([g for _, _, g in part])}
            for type_name, qn, guid in part:
                raw = ents.get(guid)
                if raw is None or raw.get("status", "ACTIVE") != "ACTIVE":
                    continue
                a = to_actual(raw, by_guid, ref_attrs)
                tier = 0 if type_name in process_types else 1
                if tier == 1 and self._still_used(a, gone, by_guid):
                    continue
                out.append(
                    PlanItem("delete", type_name, qn, guid=guid, tier=tier, fingerprint=fingerprint(a))
                )
        if not out:
            return []
        plan.deletes_blocked = check_deletes(
            len(out),
            self._domain_size(),
            self.spool.desired_count() > 0,
            self.domain,
            job,
            options,
        )
        if plan.deletes_blocked:
            plan.warnings.append(plan.deletes_blocked)
            return []
        return out

    def _domain_size(self) -> int:
        """How many entities the domain holds: the listing's rows, or (a job's listing) Atlas's count."""
        if self._listed_job is None:
            return self.spool.actual_count()
        native = self.profile.mapping_file is not None
        counted = count_scope(
            self.client, self._roots, self.domain, labels=native, scope_attribute=self._scope_attribute
        )
        return max(counted, self.spool.actual_count())  # (keyless entities are not counted by key)

    def _still_used(self, a: Any, gone: set[str], by_guid: _GuidKeys) -> bool:
        """A dataset stays while an entity outside this job's plan (not its container) refers to it.
        Desired entities never refer to a stale one after the sync: their references are desired."""
        # Only references the profile renders (a column's dataset) make a container; reverse ones
        # such as a dataset's inputToProcesses are other entities that keep it alive.
        containers = {
            k
            for name, v in a.refs.items()
            if name in self._ref_names
            for k in (v if isinstance(v, list) else ([v] if v else []))
        }
        for r in a.referrers:
            if r in gone:
                continue
            key = by_guid.get(r)
            if key is None:
                return True  # outside the domain's listing: another domain or profile points here
            if self.spool.is_desired(key):
                continue
            if key not in containers:
                return True
        return False


def _is_reference(value: Any) -> bool:
    """An attribute value that refers to entities (an object id, or a list of them)."""
    if isinstance(value, list):
        return any(isinstance(v, dict) for v in value)
    return isinstance(value, dict) and ("guid" in value or "typeName" in value)


def _positional_renames(job: str, deletes: list[PlanItem], created: str | None) -> str | None:
    """Say so when statement processes named by position (``<job>:<index>``, before stable names) give
    way to content-named ones: Atlas sees a delete and a create, and the history starts again."""
    legacy = re.compile(rf"^{re.escape(job)}:(?:[^:@]+:)?\d+@")
    old = [i.qualified_name for i in deletes if i.tier == 0 and legacy.match(i.qualified_name)]
    if not old or created is None:
        return None
    return (
        f"{len(old)} statement process(es) named by position (e.g. {old[0]}) are renamed to names that "
        f"stay stable when the script changes (e.g. {created}): deleted and created again, so their "
        "Atlas history starts anew; later syncs keep the new names"
    )


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


def _rows(cur: sqlite3.Cursor) -> Iterator[Any]:
    while True:
        rows = cur.fetchmany(64)
        if not rows:
            return
        yield from rows


def _add(total: ApplyResult, part: ApplyResult) -> None:
    total.created += part.created
    total.updated += part.updated
    total.deleted += part.deleted
    total.purged += part.purged
    total.requests += part.requests


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
