"""Execute a Plan with the fewest requests: creates and updates in dependency order, then deletes.

Small plans go in one bulk request (new entities referenced by placeholder guid). Larger plans go
tier by tier (datasets, then what references them, ...). Batches of one tier may run in parallel
(up to ``parallel``) but never two that touch the same entity (write it or refer to it: a dataset
read by processes of two batches, a column and its table): a real Atlas (JanusGraph) then times out
on locks. When a write fails in a way that signals contention, the rest goes one batch at a time and
the failed batch is retried alone. Deletes follow the writes: processes before datasets.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from atlas_sync.atlas.retry import signals_contention
from atlas_sync.reconcile.actual import Key
from atlas_sync.reconcile.plan import Plan, PlanItem
from atlas_sync.render.renderer import DesiredEntity


class ApplyClient(Protocol):
    def upsert_entities(self, entities: list[dict[str, Any]], **kw: Any) -> Any: ...

    def delete_entities(self, guids: list[str]) -> Any: ...

    def purge_entities(self, guids: list[str]) -> Any: ...


@dataclass
class ApplyResult:
    created: int = 0
    updated: int = 0
    deleted: int = 0
    purged: int = 0
    requests: int = 0
    guids: dict[Key, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, int]:
        return {
            "created": self.created,
            "updated": self.updated,
            "deleted": self.deleted,
            "purged": self.purged,
            "requests": self.requests,
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


def _touched(items: list[PlanItem], plan: Plan) -> set[Key]:
    """Entities a batch writes or refers to (Atlas locks both ends of a relationship)."""
    out: set[Key] = set()
    for it in items:
        out.add(it.key)
        e = plan.desired.get(it.key)
        for v in e.refs.values() if e else ():
            if isinstance(v, list):
                out.update(v)
            elif v:
                out.add(v)
    return out


class _Batcher:
    """Builds entity payloads, referring to known entities by guid and to new ones by placeholder."""

    def __init__(self, known: dict[Key, str]) -> None:
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
            return {"guid": placeholders[key], "typeName": key[0]}
        if key in self.known:
            return {"guid": self.known[key], "typeName": key[0]}
        return {"typeName": key[0], "uniqueAttributes": {"qualifiedName": key[1]}}


def _assignments(result: Any) -> dict[str, str]:
    if result is None:
        return {}
    ga = getattr(result, "guid_assignments", None)
    if ga is None and isinstance(result, dict):
        ga = result.get("guidAssignments")
    return dict(ga or {})


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
    writes = [i for i in plan.items if i.action in ("create", "update")]
    deletes = [i for i in plan.items if i.action == "delete"]
    total = len(writes) + len(deletes)
    done = 0
    batcher = _Batcher(known_guids)
    for i in writes:
        if i.action == "update" and i.guid:
            batcher.known[i.key] = i.guid

    flight = _Flight(parallel)

    def run_batch(items: list[PlanItem]) -> tuple[dict[Key, str], int]:
        placeholders: dict[Key, str] = {}
        bodies = []
        for it in items:
            if it.action == "create":
                placeholders[it.key] = batcher.placeholder()
        for it in items:
            e = plan.desired[it.key]
            guid = placeholders.get(it.key) or it.guid or batcher.placeholder()
            bodies.append(batcher.payload(e, guid, placeholders, it.action == "create"))
        res = client.upsert_entities(bodies, batch_size=max(len(bodies), 1), before_retry=flight.before_retry)
        ga = _assignments(res)
        assigned = {k: ga[p] for k, p in placeholders.items() if p in ga}
        return assigned, int(getattr(res, "requests", 1) or 1)

    def finished(batch: list[PlanItem], outcome: tuple[dict[Key, str], int]) -> None:
        nonlocal done
        assigned, nreq = outcome
        batcher.known.update(assigned)
        result.requests += nreq
        for it in batch:
            if it.action == "create":
                result.created += 1
            else:
                result.updated += 1
        done += len(batch)
        if progress:
            progress(done, total)

    if writes:
        if len(writes) <= batch_size:
            groups = [[writes]]
        else:
            by_tier: dict[int, list[PlanItem]] = defaultdict(list)
            for it in writes:
                by_tier[it.tier].append(it)
            groups = [
                [items[j : j + batch_size] for j in range(0, len(items), batch_size)]
                for _, items in sorted(by_tier.items())
            ]
        if parallel <= 1 or all(len(g) == 1 for g in groups):
            for group in groups:
                for batch in group:
                    finished(batch, run_batch(batch))
        else:
            with ThreadPoolExecutor(max_workers=parallel) as pool:
                for group in groups:
                    _run_group(pool, flight, group, [_touched(b, plan) for b in group], run_batch, finished)

    result.requests += _relink(client, plan, writes, batcher.known)

    if deletes:
        for tier in sorted({d.tier for d in deletes}):
            guids = [d.guid for d in deletes if d.tier == tier and d.guid]
            res = client.delete_entities(guids)
            result.requests += int(getattr(res, "requests", 1) or 1)
            result.deleted += len(guids)
            done += len(guids)
            if progress:
                progress(done, total)
        if purge:
            guids = [d.guid for d in deletes if d.guid]
            res = client.purge_entities(guids)
            result.requests += int(getattr(res, "requests", 1) or 1)
            result.purged += len(guids)
    result.guids = batcher.known
    return result


def _run_group(
    pool: ThreadPoolExecutor,
    flight: _Flight,
    group: list[list[PlanItem]],
    touched: list[set[Key]],
    run: Callable[[list[PlanItem]], tuple[dict[Key, str], int]],
    finished: Callable[[list[PlanItem], tuple[dict[Key, str], int]], None],
) -> None:
    """Run one tier's batches: in order, at most ``flight.limit`` at once, and a batch only when it
    touches no entity of a batch in flight. Results are folded in as batches finish; the first
    error is raised once every batch in flight has ended (nothing new starts after it)."""
    pending = list(range(len(group)))
    running: dict[Future[tuple[dict[Key, str], int]], int] = {}
    error: BaseException | None = None

    def job(i: int) -> tuple[dict[Key, str], int]:
        try:
            return run(group[i])
        finally:
            flight.end()

    while running or (pending and error is None):
        if error is None:
            busy: set[Key] = set().union(*(touched[i] for i in running.values()))
            for i in list(pending):
                if len(running) >= flight.limit:
                    break
                if touched[i].isdisjoint(busy):
                    pending.remove(i)
                    busy |= touched[i]
                    flight.begin()
                    running[pool.submit(job, i)] = i
        done_now, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for fut in done_now:
            i = running.pop(fut)
            exc = fut.exception()
            if exc is not None:
                error = error or exc
            else:
                finished(group[i], fut.result())
    if error is not None:
        raise error


def _relink(client: Any, plan: Plan, writes: list[PlanItem], known: dict[Key, str]) -> int:
    """Bring back references that Atlas 2.4.0 left DELETED after an update; returns the requests made.

    When an updated entity lists again a reference it had before, Atlas 2.4.0 may reuse the old, DELETED
    relationship instead of making a new one, so the reference never comes back (docs/real-atlas-
    differences.md RA-04) and every later plan would repeat the update. Updated entities whose reference
    lists changed are read back once; each wanted reference that has only a DELETED relationship gets a new
    one through ``client.create_relationship`` (POST /v2/relationship). Clients without that method skip this.
    """
    create = getattr(client, "create_relationship", None)
    read = getattr(client, "get_entities", None)
    get_def = getattr(client, "get_typedef_by_name", None)
    if create is None or read is None or get_def is None:
        return 0
    todo: dict[str, tuple[DesiredEntity, list[str]]] = {}
    for it in writes:
        if it.action != "update" or not it.guid:
            continue
        e = plan.desired[it.key]
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
        desired, names = todo.get(ent.get("guid", ""), (None, []))
        if desired is None:
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
            wanted = desired.refs.get(name)
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
