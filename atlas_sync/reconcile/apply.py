"""Execute a Plan with the fewest requests: creates and updates in dependency order, then deletes.

Small plans go in one bulk request (new entities referenced by placeholder guid). Larger plans go
tier by tier (datasets, then what references them, ...). Write batches, of ``apply`` and of ``sync``
(:mod:`atlas_sync.reconcile.stream`) alike, go through one :class:`WriteScheduler`: up to ``parallel``
at once but never two that touch the same entity (write it or refer to it: a dataset read by
processes of two batches, a column and its table): a real Atlas (JanusGraph) then times out on
locks; and a batch only after every earlier batch it touches has finished. When a write fails in a
way that signals contention, the rest goes one batch at a time and the failed batch is retried
alone. Deletes follow the writes: processes before datasets.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.atlas.errors import AtlasError, NotFoundError
from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.atlas.retry import signals_contention
from atlas_sync.reconcile.actual import Key
from atlas_sync.reconcile.plan import Plan, PlanItem
from atlas_sync.render.renderer import DesiredEntity

ApplyClient = AtlasApi


@dataclass
class ApplyResult:
    created: int = 0
    updated: int = 0
    deleted: int = 0
    purged: int = 0
    requests: int = 0
    guids: dict[Key, str] = field(default_factory=dict)
    metadata: int = 0  # entities whose classifications, labels, terms or business attributes changed

    def count_written(self, items: Iterable[PlanItem], requests: int) -> None:
        """Fold in one finished write batch: its creates and updates, and the requests it took."""
        self.requests += requests
        for it in items:
            if it.action == "create":
                self.created += 1
            else:
                self.updated += 1

    def to_json(self) -> dict[str, int]:
        return {
            "created": self.created,
            "updated": self.updated,
            "deleted": self.deleted,
            "purged": self.purged,
            "requests": self.requests,
            **({"metadata": self.metadata} if self.metadata else {}),
        }


Progress = Callable[[int, int], None]

log = logging.getLogger("atlas_sync.reconcile")


class _Flight:
    """Write batches in flight: how many may run, and one-at-a-time after contention.

    A batch whose request failed with a contention signal calls :meth:`contention` before its
    retry: from then on one batch runs at a time, and the retry waits until every other batch in
    flight has finished (or is itself waiting to retry), so it is the only write the server sees.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.cond = threading.Condition()
        self.active = 0
        self.parked = 0
        self.solo: int | None = None  # thread retrying alone

    def begin(self) -> None:
        with self.cond:
            self.active += 1

    def end(self) -> None:
        with self.cond:
            self.active -= 1
            if self.solo == threading.get_ident():
                self.solo = None
            self.cond.notify_all()

    def before_retry(self, status: int | None, body: str) -> None:
        if not signals_contention(status, body):
            return
        me = threading.get_ident()
        with self.cond:
            if self.limit > 1:
                log.warning("Atlas signals write contention (HTTP %s); writing one batch at a time", status)
            self.limit = 1
            if self.solo == me:
                return
            self.parked += 1
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.solo is None)
            self.solo = me
            self.parked -= 1
            self.cond.wait_for(lambda: self.active - self.parked <= 1)


def _touched(items: list[PlanItem], desired: Mapping[Key, DesiredEntity]) -> set[Key]:
    """Entities a batch writes or refers to (Atlas locks both ends of a relationship)."""
    out: set[Key] = set()
    for it in items:
        out.add(it.key)
        e = desired.get(it.key)
        for v in e.refs.values() if e else ():
            if isinstance(v, list):
                out.update(v)
            elif v:
                out.add(v)
    return out


@dataclass
class WriteBatch:
    """One bulk write: its plan items (creates and updates), their desired entities, and every entity
    it writes or refers to."""

    items: list[PlanItem]
    desired: dict[Key, DesiredEntity]
    touched: set[Key] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.touched:
            self.touched = _touched(self.items, self.desired)

    def refs(self) -> set[Key]:
        return self.touched - {it.key for it in self.items}


@dataclass
class BatchOutcome:
    assigned: dict[Key, str]  # guids Atlas gave the batch's new entities
    requests: int
    # entities the batch referred to by a guid Atlas no longer had (another sync deleted its copy of a
    # name both had created): sent again by unique attribute; their guids are stale
    gone: set[Key] = field(default_factory=set)
    # the server refused the batch with what rode with it (write_batch's ``extra``), took it without
    refused: AtlasError | None = None


class WriteScheduler:
    """Runs write batches, given in dependency order, conflict-free and at most ``parallel`` at once.

    A batch starts only when it touches (writes or refers to) no entity of a batch in flight or of an
    earlier batch not yet finished: a real Atlas (JanusGraph/BerkeleyJE) times out on locks when two
    writes touch the same entities, and an entity one batch refers to must have been committed by the
    earlier batch that creates it. After a contention signal one batch runs at a time
    (:class:`_Flight`). At most ``parallel`` + 1 batches are held: :meth:`submit` returns once at most
    ``parallel`` are waiting or in flight.

    ``prepare(batch)`` and ``finished(batch, outcome)`` run on the calling thread (the one that calls
    :meth:`submit` and :meth:`close`), so they may use what is not thread-safe (a SQLite spool);
    ``prepare`` returns the work done on a worker thread. The first error stops new batches, lets
    those in flight end (their results are folded in) and is raised; batches not started are dropped.
    """

    def __init__(
        self,
        parallel: int,
        prepare: Callable[[WriteBatch, _Flight], Callable[[], BatchOutcome]],
        finished: Callable[[WriteBatch, BatchOutcome], None],
    ) -> None:
        self.hold = max(1, parallel)
        self.flight = _Flight(self.hold)
        self.prepare = prepare
        self.finished = finished
        self.pool = ThreadPoolExecutor(max_workers=self.hold) if self.hold > 1 else None
        self.waiting: list[WriteBatch] = []
        self.running: dict[Future[BatchOutcome], WriteBatch] = {}
        self.error: BaseException | None = None
        self.generation = 0  # changes whenever a batch starts or ends (what is in flight changed)
        self._busy: tuple[int, set[Key]] = (0, set())
        # batches ended on a worker, and how many of those :meth:`_reap` had seen when it last looked:
        # room() is asked once per item handed over, and looks at the futures only after an end
        self._ends: list[None] = []  # (list.append is atomic: two workers may end at once)
        self._ends_seen = 0

    def __enter__(self) -> WriteScheduler:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is not None:
            self.error = self.error or RuntimeError("stopped")
            self.waiting.clear()
            with contextlib.suppress(BaseException):
                self._drain()
        if self.pool is not None:
            self.pool.shutdown(wait=True)

    def submit(self, batch: WriteBatch) -> None:
        """Queue ``batch``; start what may start; wait while more than ``parallel`` batches are held."""
        self._raise_if_failed()
        self.waiting.append(batch)
        self._start()
        while len(self.waiting) + len(self.running) > self.hold:
            self._wait_one()
            self._start()
        self._raise_if_failed()

    def room(self) -> int:
        """How many more batches may start now (0 while the running ones fill the flight)."""
        self._reap()
        self._raise_if_failed()
        return 0 if self.waiting else max(0, self.flight.limit - len(self.running))

    def busy(self) -> set[Key]:
        """What the batches in flight write or refer to: a batch started now must touch none of it."""
        if self._busy[0] != self.generation:
            self._busy = (self.generation, set().union(*(b.touched for b in self.running.values())))
        return self._busy[1]

    def running_count(self) -> int:
        return len(self.running)

    def wait_any(self) -> None:
        """Wait until a batch in flight ends (fold it in, start what may start); raise the first error."""
        self._wait_one()
        self._start()
        self._raise_if_failed()

    def wait(self) -> None:
        """Run every batch queued so far to its end (more may be submitted after); raise the first error."""
        self._drain()
        self._raise_if_failed()

    def close(self) -> None:
        """Run every queued batch to its end; raise the first error."""
        try:
            self._drain()
            self._raise_if_failed()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)

    def _drain(self) -> None:
        self._start()
        while self.running or (self.waiting and self.error is None):
            self._wait_one()
            self._start()

    def _raise_if_failed(self) -> None:
        if self.error is None:
            return
        self.waiting.clear()
        while self.running:
            self._wait_one()
        raise self.error

    def _start(self) -> None:
        self._reap()  # a batch that failed meanwhile stops everything not started yet
        if self.error is not None:
            return
        busy: set[Key] = set().union(*(b.touched for b in self.running.values()))
        for batch in list(self.waiting):
            if len(self.running) >= self.flight.limit:
                break
            if batch.touched.isdisjoint(busy):
                self.waiting.remove(batch)
                work = self.prepare(batch, self.flight)
                if self.pool is None:  # one at a time: in this thread
                    try:
                        outcome = work()
                    except BaseException as exc:  # noqa: BLE001 - raised by submit/close
                        self.error = exc
                        return
                    self.finished(batch, outcome)
                    continue
                self.flight.begin()
                fut = self.pool.submit(self._job, work)
                self.running[fut] = batch
                fut.add_done_callback(self._ended)
                self.generation += 1
            # an earlier batch not yet finished keeps what it touches from later ones
            busy |= batch.touched

    def _job(self, work: Callable[[], BatchOutcome]) -> BatchOutcome:
        try:
            return work()
        finally:
            self.flight.end()

    def _wait_one(self) -> None:
        if not self.running:
            return
        done_now, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
        self._reap(done_now)

    def _ended(self, _fut: Future[BatchOutcome]) -> None:
        self._ends.append(None)  # (on a worker thread)

    def _reap(self, done_now: Iterable[Future[BatchOutcome]] | None = None) -> None:
        """Fold in the batches that have ended (``done_now``, or any found done)."""
        if done_now is None:
            if len(self._ends) == self._ends_seen:
                return  # nothing ended since the last look
            self._ends_seen = len(self._ends)  # (an end from now on is seen by the next look)
        for fut in list(self.running) if done_now is None else done_now:
            if not fut.done():
                continue
            batch = self.running.pop(fut)
            self.generation += 1
            exc = fut.exception()
            if exc is not None:
                self.error = self.error or exc
            else:
                self.finished(batch, fut.result())


def write_batch(
    client: ApplyClient,
    batch: WriteBatch,
    known: Mapping[Key, str],
    flight: _Flight,
    extra: Sequence[dict[str, Any]] = (),
) -> BatchOutcome:
    """Send one batch (new entities by placeholder guid, known ones by guid, the rest by unique
    attributes) and ``extra`` entity bodies with it (by unique attributes: what rides with a sync's
    first write), then bring back references Atlas 2.4.0 left DELETED (:func:`_relink`)."""
    batcher = _Batcher(known)
    for it in batch.items:
        if it.action == "update" and it.guid:
            batcher.known[it.key] = it.guid
    placeholders = {it.key: batcher.placeholder() for it in batch.items if it.action == "create"}
    own = {it.key for it in batch.items}
    gone: set[Key] = set()
    failed = 0  # requests refused for a reference deleted meanwhile
    refused: AtlasError | None = None
    while True:
        bodies = []
        for it in batch.items:
            e = batch.desired[it.key]
            guid = placeholders.get(it.key) or it.guid or batcher.placeholder()
            bodies.append(batcher.payload(e, guid, placeholders, it.action == "create"))
        bodies.extend({**body, "guid": batcher.placeholder()} for body in extra)
        try:
            res = client.upsert_entities(
                bodies, batch_size=max(len(bodies), 1), before_retry=flight.before_retry, headers=False
            )
            break
        except NotFoundError as exc:
            # A reference to an entity deleted meanwhile: where two syncs created one name at once,
            # the one whose copy lost deletes it (reconcile.holdings). Atlas names the guid; refer to
            # the name instead, which Atlas resolves to the copy kept.
            stale = _missing_references(exc, batcher.known, own)
            if not stale or stale <= gone:
                raise
            failed += 1
            gone |= stale
            for k in stale:
                del batcher.known[k]
        except AtlasError as exc:
            if not extra:
                raise
            # what rode with the batch is not the batch's business: send the batch without it
            refused, extra = exc, ()
            failed += 1
    ga = res.guid_assignments
    assigned = {k: ga[p] for k, p in placeholders.items() if p in ga}
    batcher.known.update(assigned)
    requests = res.requests
    requests += _relink(client, batch.desired, batch.items, batcher.known)
    return BatchOutcome(assigned, requests + failed, gone, refused)


_GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _missing_references(exc: NotFoundError, known: Mapping[Key, str], own: set[Key]) -> set[Key]:
    """The referenced entities (not the batch's own) whose guid Atlas answered is not found."""
    if exc.error_code != "ATLAS-404-00-00A":
        return set()
    named = set(_GUID.findall(f"{exc.error_message or ''} {exc.message}"))
    return {k for k, g in known.items() if g in named and k not in own}


class _Batcher:
    """Builds entity payloads, referring to known entities by guid and to new ones by placeholder."""

    def __init__(self, known: Mapping[Key, str]) -> None:
        self.known = dict(known)
        self._next = 0

    def placeholder(self) -> str:
        self._next -= 1
        return str(self._next)

    def payload(
        self, e: DesiredEntity, guid: str, placeholders: dict[Key, str], create: bool
    ) -> dict[str, Any]:
        attrs: dict[str, Any] = dict(e.attributes)
        if create:
            attrs.update(e.create_only)
        rels: dict[str, Any] = {}
        for name, v in e.refs.items():
            if isinstance(v, list):
                value: Any = [self._ref(k, placeholders) for k in v]
            else:
                value = self._ref(v, placeholders) if v else None
            (rels if name in e.rel_attrs else attrs)[name] = value
        body: dict[str, Any] = {"typeName": e.type_name, "guid": guid, "attributes": attrs}
        if create and e.labels:
            body["labels"] = e.labels  # ownership under a native profile; Atlas keeps them on updates
        if rels:
            body["relationshipAttributes"] = rels
        return body

    def _ref(self, key: Key, placeholders: dict[Key, str]) -> dict[str, Any]:
        if key in placeholders:
            return {"guid": placeholders[key]}
        if key in self.known:
            return {"guid": self.known[key]}
        return {"typeName": key[0], "uniqueAttributes": {"qualifiedName": key[1]}}


def apply_plan(
    client: ApplyClient,
    plan: Plan,
    *,
    known_guids: dict[Key, str],
    batch_size: int = 500,
    parallel: int = 2,
    purge: bool = False,
    progress: Progress | None = None,
) -> ApplyResult:
    """Apply ``plan``. ``known_guids`` maps the keys Atlas already holds (unchanged ones included) to guids."""
    result = ApplyResult()
    # (an item with metadata requests alone on another tool's entity has no entity to write)
    writes = [
        i
        for i in plan.items
        if i.action in ("create", "update") and not (i.metadata and i.key not in plan.desired)
    ]
    deletes = [i for i in plan.items if i.action == "delete"]
    total = len(writes) + len(deletes)
    done = 0
    known = dict(known_guids)
    for i in writes:
        if i.action == "update" and i.guid:
            known[i.key] = i.guid

    def prepare(batch: WriteBatch, flight: _Flight) -> Callable[[], BatchOutcome]:
        refs = {k: known[k] for k in batch.refs() if k in known}
        return lambda: write_batch(client, batch, refs, flight)

    def finished(batch: WriteBatch, outcome: BatchOutcome) -> None:
        nonlocal done
        known.update(outcome.assigned)
        result.count_written(batch.items, outcome.requests)
        done += len(batch.items)
        if progress:
            progress(done, total)

    if writes:
        # tier by tier (datasets, then what refers to them, ...); the scheduler runs independent batches at once
        ordered = sorted(writes, key=lambda it: it.tier) if len(writes) > batch_size else writes
        with WriteScheduler(parallel, prepare, finished) as scheduler:
            lo = 0
            while lo < len(ordered):
                hi = min(lo + batch_size, len(ordered))
                if len(writes) > batch_size:  # a batch holds one tier
                    hi = next((j for j in range(lo, hi) if ordered[j].tier != ordered[lo].tier), hi)
                items = ordered[lo:hi]
                scheduler.submit(WriteBatch(items, {it.key: plan.desired[it.key] for it in items}))
                lo = hi
            scheduler.close()

    if deletes:
        for tier in sorted({d.tier for d in deletes}):
            guids = [d.guid for d in deletes if d.tier == tier and d.guid]
            res = client.delete_entities(guids)
            result.requests += res.requests
            result.deleted += len(guids)
            done += len(guids)
            if progress:
                progress(done, total)
        if purge:
            guids = [d.guid for d in deletes if d.guid]
            res = client.purge_entities(guids)
            result.requests += res.requests
            result.purged += len(guids)
    result.guids = known
    return result


def _relink(
    client: AtlasApi, desired: Mapping[Key, DesiredEntity], writes: list[PlanItem], known: Mapping[Key, str]
) -> int:
    """Bring back references that Atlas 2.4.0 left DELETED after an update; returns the requests made.

    When an updated entity lists again a reference it had before, Atlas 2.4.0 may reuse the old, DELETED
    relationship instead of making a new one, so the reference never comes back (docs/real-atlas-
    differences.md RA-04) and every later plan would repeat the update. Updated entities whose reference
    lists changed are read back once; each wanted reference that has only a DELETED relationship gets a new
    one through ``client.create_relationship`` (POST /v2/relationship). A client without relationship
    writes (the hook write path) skips this.
    """
    if not client.capabilities.relationship_writes:
        return 0
    create, read, get_def = client.create_relationship, client.get_entities, client.get_typedef_by_name
    todo: dict[str, tuple[DesiredEntity, list[str]]] = {}
    for it in writes:
        if it.action != "update" or not it.guid:
            continue
        e = desired[it.key]
        names = [c.attribute for c in it.changes if isinstance(e.refs.get(c.attribute), list)]
        if names:
            todo[it.guid] = (e, names)
    if not todo:
        return 0
    by_guid = {g: k for k, g in known.items()}

    def key_of(entry: dict[str, Any]) -> Key:
        return by_guid.get(entry.get("guid", "")) or (
            str(entry.get("typeName")),
            str(entry.get("qualifiedName")),
        )

    end1_names: dict[str, str | None] = {}
    requests = 1
    for ent in read(list(todo)):
        want_entity, names = todo.get(ent.get("guid", ""), (None, []))
        if want_entity is None:
            continue
        for name in names:
            entries = [
                x for x in (ent.get("relationshipAttributes") or {}).get(name) or [] if isinstance(x, dict)
            ]
            active = {
                key_of(x)
                for x in entries
                if x.get("relationshipStatus", "ACTIVE") == "ACTIVE"
                and x.get("entityStatus", "ACTIVE") == "ACTIVE"
            }
            wanted = want_entity.refs.get(name)
            for want in wanted if isinstance(wanted, list) else []:
                stale = next(
                    (
                        x
                        for x in entries
                        if key_of(x) == want
                        and x.get("relationshipStatus") == "DELETED"
                        and x.get("entityStatus", "ACTIVE") == "ACTIVE"
                        and x.get("relationshipType")
                    ),
                    None,
                )
                if want in active or stale is None:
                    continue
                rel_type = str(stale["relationshipType"])
                if rel_type not in end1_names:
                    rdef = get_def(rel_type) or {}
                    requests += 1
                    end1_names[rel_type] = (rdef.get("endDef1") or {}).get("name")
                me = {"guid": ent["guid"], "typeName": ent["typeName"]}
                other = {"guid": stale["guid"], "typeName": stale["typeName"]}
                end1, end2 = (me, other) if end1_names[rel_type] == name else (other, me)
                create({"typeName": rel_type, "end1": end1, "end2": end2})
                requests += 1
                active.add(want)
    return requests
