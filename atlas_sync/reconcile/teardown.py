"""Teardown of a domain: list it once, delete it the way Atlas deletes fastest, purge what is deleted.

A teardown is a plan (:class:`TeardownPlan`, shown by ``teardown --plan``) computed from what Atlas
holds now, ACTIVE and DELETED alike, so a teardown stopped at any point and run again finishes the
job: what is still ACTIVE is deleted, what is DELETED is purged.

Where a real Atlas 2.1 spends a delete (bench/README.md, "Teardown"): in JanusGraph's Solr index,
``Solr6Index.handleRemovalsFromIndex``, one Solr update per changed document (the entity, each
relationship it ends, each neighbour whose modification time it sets), each a commit that waits for a
new searcher. A hard delete removes documents in one batch instead: a purge, or a delete with
``deleteType=HARD`` on a server with ``atlas.rest.enable.delete.type.override=true``. Hence:

* with purge, deletes ask for ``deleteType=HARD``; when the first answer shows the server honoured
  it (the entity is gone), the rest go ``HARD_BATCH`` at a time; a server that ignores it
  soft-deletes and the purge that follows removes what is DELETED;
* soft deletes go ``DELETE_BATCH`` at a time (bigger requests cost more per entity, and Atlas
  deletes a root's owned entities in the same transaction, so every entity is named and owned
  ones come before their owners: a request changes about as many entities as it names);
* the dataset side first (columns, then datasets), then the process side (column lineages, then
  processes): measured faster than processes first; once the datasets are gone the process side's
  requests share no entity and run ``parallel`` at once;
* every request carries the writes' contention back-off (:class:`atlas_sync.reconcile.apply._Flight`):
  after a lock-timeout signal one request runs at a time and the failed one is retried alone; one
  still failing on contention after the client's retries is split in halves and sent again.

Only guids listed as the domain's are ever named, in deletes and in purges.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.atlas.errors import AtlasError
from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.atlas.mutation import MutationResult
from atlas_sync.atlas.retry import signals_contention
from atlas_sync.reconcile.actual import SCOPE_PAGE, search_roots
from atlas_sync.reconcile.apply import _Flight
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.render.native import DOMAIN_LABEL, label_for
from atlas_sync.wording import counted

log = logging.getLogger(__name__)

DELETE_BATCH = 25  # guids per soft-delete request (bench/README.md, "Teardown")
HARD_BATCH = 300  # guids per hard-delete request: the most a URL takes (MAX_IDS_PER_GET)
PURGE_BATCH = 1000  # atlas.purge.api.max.request.size on newer Atlas
SPLIT_DEPTH = 4  # a batch failing on contention is halved at most this often
SHOWN = 50  # entities a plan's text lists

Progress = Callable[[int, int], None]


TeardownClient = AtlasApi


@dataclass(frozen=True)
class DomainEntity:
    guid: str
    type_name: str
    qualified_name: str
    status: str  # ACTIVE or DELETED


@dataclass
class TeardownPlan:
    """What a teardown of ``domain`` deletes and purges, from one listing of Atlas."""

    domain: str
    profile: str
    purge: bool
    entities: list[DomainEntity]
    owned_types: frozenset[str] = frozenset()  # types Atlas deletes with their owner (composition)
    process_types: frozenset[str] = frozenset()
    batch_size: int = DELETE_BATCH

    @property
    def active(self) -> list[DomainEntity]:
        return [e for e in self.entities if e.status == "ACTIVE"]

    @property
    def to_purge(self) -> list[DomainEntity]:
        return list(self.entities) if self.purge else []

    def order(self) -> tuple[list[DomainEntity], list[DomainEntity]]:
        """The ACTIVE entities in delete order: (the dataset side, then the process side), each with
        owned entities before their owners (columns before datasets, column lineages before processes)."""
        rank = {t: 0 for t in self.owned_types}
        active = sorted(self.active, key=lambda e: rank.get(e.type_name, 1))
        procs = [e for e in active if e.type_name in self.process_types]
        return [e for e in active if e.type_name not in self.process_types], procs

    @property
    def counts(self) -> dict[str, int]:
        data, procs = self.order()
        return {
            "delete": len(self.active),
            "already_deleted": len(self.entities) - len(self.active),
            "purge": len(self.to_purge),
            "delete_requests": _ceil(len(data), self.batch_size) + _ceil(len(procs), self.batch_size),
            "purge_requests": _ceil(len(self.to_purge), PURGE_BATCH),
        }

    @property
    def is_empty(self) -> bool:
        return not self.active and not self.to_purge

    def by_type(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for e in self.entities:
            row = out.setdefault(e.type_name, {"ACTIVE": 0, "DELETED": 0})
            row[e.status] += 1
        return dict(sorted(out.items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "profile": self.profile,
            "purge": self.purge,
            "counts": self.counts,
            "by_type": self.by_type(),
            "entities": [
                {
                    "guid": e.guid,
                    "typeName": e.type_name,
                    "qualifiedName": e.qualified_name,
                    "status": e.status,
                    "action": _action(e, self.purge),
                }
                for e in self.entities
            ],
        }

    def text(self) -> str:
        c = self.counts
        if self.is_empty:
            held = f" ({c['already_deleted']} DELETED, kept without --purge)" if c["already_deleted"] else ""
            return f"Teardown of domain {self.domain}: nothing to delete{held}."
        lines = [f"Teardown of domain {self.domain} (profile {self.profile}):"]
        for e in self.entities[:SHOWN]:
            action = _action(e, self.purge)
            mark = {"delete": "-", "delete+purge": "-", "purge": "x"}.get(action, " ")
            lines.append(f"  {mark} {e.type_name} {e.qualified_name} ({action})")
        if len(self.entities) > SHOWN:
            lines.append(f"  ... and {len(self.entities) - SHOWN} more (--json lists every one)")
        for t, n in self.by_type().items():
            lines.append(f"  {t}: {n['ACTIVE']} to delete, {n['DELETED']} already deleted")
        summary = f"Plan: {c['delete']} to delete in {counted(c['delete_requests'], 'request')}"
        summary += f", {c['purge']} to purge." if self.purge else ", nothing purged (no --purge)."
        lines.append(summary)
        return "\n".join(lines)


def _action(e: DomainEntity, purge: bool) -> str:
    if e.status == "ACTIVE":
        return "delete+purge" if purge else "delete"
    return "purge" if purge else "keep"


def _ceil(n: int, size: int) -> int:
    return -(-n // max(1, size))


# ---------------------------------------------------------------------------------------------- listing


def list_domain(
    client: TeardownClient,
    root_types: Sequence[str],
    domain: str,
    *,
    labels: bool = False,
    bookkeeping: Bookkeeping | None = None,
) -> list[DomainEntity]:
    """Every entity of ``domain`` of the root types (and subtypes), ACTIVE and DELETED, once each: by
    the domain's key on Atlas's index when the server's types have the key attribute, by the
    ``@domain`` suffix otherwise, by the domain label under a native profile."""
    if not root_types:
        return []
    seen: dict[str, DomainEntity] = {}
    for e in _iter_domain(client, list(root_types), domain, labels, bookkeeping or Bookkeeping()):
        seen.setdefault(e.guid, e)
    return list(seen.values())


def _iter_domain(
    client: TeardownClient, roots: list[str], domain: str, labels: bool, bookkeeping: Bookkeeping
) -> Iterator[DomainEntity]:
    suffix = "@" + domain
    by_suffix = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": suffix}
    if labels:
        mark = label_for(DOMAIN_LABEL, domain)
        flt = {"attributeName": "__labels", "operator": "contains", "attributeValue": mark}
        for h in _search(client, roots, flt):
            if mark in (h.get("labels") or []):
                yield from _entity(h, None)
        return
    for h in _search(client, roots, bookkeeping.domain_filter(domain) or by_suffix):
        yield from _entity(h, suffix)


def _search(
    client: TeardownClient, roots: list[str], flt: dict[str, Any], **kw: Any
) -> Iterator[dict[str, Any]]:
    kw.setdefault("page_size", SCOPE_PAGE)
    return search_roots(
        client, roots, entity_filters=flt, exclude_deleted=False, attributes=["qualifiedName"], **kw
    )


def _entity(h: dict[str, Any], suffix: str | None) -> Iterator[DomainEntity]:
    qn = (h.get("attributes") or {}).get("qualifiedName")
    status = h.get("status", "ACTIVE")
    if not isinstance(qn, str) or status not in ("ACTIVE", "DELETED"):
        return
    if suffix is not None and not qn.endswith(suffix):
        return  # the index may match loosely: the suffix is checked here
    yield DomainEntity(str(h["guid"]), str(h["typeName"]), qn, status)


# ---------------------------------------------------------------------------------------------- running


@dataclass
class TeardownOutcome:
    deleted: int = 0  # entities Atlas reported deleted (owned ones included)
    purged: int = 0
    requests: int = 0
    split: int = 0  # batches halved after contention outlasted the client's retries
    again: int = 0  # entities named a second time: no answer listed them as deleted
    guids: set[str] = field(default_factory=set)


class _Run:
    def __init__(
        self,
        client: TeardownClient,
        plan: TeardownPlan,
        parallel: int,
        progress: Progress | None,
        hard: bool,
    ) -> None:
        self.client = client
        self.plan = plan
        self.parallel = max(1, parallel)
        self.progress = progress
        self.hard = hard
        self.out = TeardownOutcome()
        self.flight = _Flight(self.parallel)
        self.total = len(plan.active) + len(plan.to_purge)
        self.done = 0
        self.lock = threading.Lock()
        self.hard_honoured: bool | None = None  # unknown until the first hard delete is answered
        self.hard_batch = HARD_BATCH
        self.ours = {e.guid for e in plan.entities}
        self.sleep: Callable[[float], None] = client.retry.sleep
        self.backoff: Callable[[int], float] = client.retry.backoff

    def tick(self, n: int) -> None:
        self.done = min(self.total, self.done + n)
        if self.progress is not None:
            self.progress(self.done, self.total)

    def delete(self, guids: list[str]) -> None:
        kw: dict[str, Any] = {"hard": True} if self.hard else {}
        res = self.contended(self.client.delete_entities, guids, kw)
        gone = set().union(*(_deleted_guids(r) for r in res)) & self.ours
        with self.lock:
            self.out.requests += sum(r.requests for r in res)
            self.out.guids |= gone
            self.out.deleted += len(gone)
            self.tick(len(gone))

    def purge(self, guids: list[str]) -> None:
        res = self.contended(self.client.purge_entities, guids, {})
        with self.lock:
            self.out.requests += sum(r.requests for r in res)
            self.out.purged += len(guids)
            self.tick(len(guids))

    def contended(
        self, call: Callable[..., MutationResult], guids: list[str], kw: dict[str, Any], depth: int = 0
    ) -> list[MutationResult]:
        """``call(guids)`` with the writes' back-off; on contention that outlasted the client's
        retries, wait and send the two halves (at most ``SPLIT_DEPTH`` times). The answers."""
        try:
            return [call(guids, before_retry=self.flight.before_retry, **kw)]
        except AtlasError as exc:
            if depth >= SPLIT_DEPTH or not signals_contention(exc.status, str(exc)):
                raise
            with self.lock:
                self.out.split += 1
            log.warning("%d entities kept meeting lock contention; sending them in halves", len(guids))
            self.flight.before_retry(exc.status, str(exc))  # one request at a time from here on
            self.sleep(self.backoff(depth + 1))
            half = max(1, len(guids) // 2)
            parts = [guids[:half], guids[half:]] if len(guids) > 1 else [guids]
            return [r for part in parts for r in self.contended(call, part, kw, depth + 1)]

    def batches(self, guids: list[str], parallel: int) -> None:
        if self.hard and self.hard_honoured is None and guids:
            # one request tells whether the server hard-deletes (then bigger requests are cheap)
            first, guids = guids[: self.plan.batch_size], guids[self.plan.batch_size :]
            self.delete(first)
            self.hard_honoured = self.client.get_entity(first[0], min_ext_info=True) is None
            if self.hard_honoured:
                log.info("Atlas hard-deletes on request: %d guids per request from here on", self.hard_batch)
        size = (
            self.hard_batch
            if self.hard_honoured and self.plan.batch_size == DELETE_BATCH
            else self.plan.batch_size
        )
        chunks = [guids[i : i + size] for i in range(0, len(guids), size)]
        if parallel <= 1 or len(chunks) <= 1:
            for c in chunks:
                self.delete(c)
            return

        def job(c: list[str]) -> None:
            self.flight.begin()
            try:
                self.delete(c)
            finally:
                self.flight.end()

        with ThreadPoolExecutor(min(parallel, len(chunks)), thread_name_prefix="atlas-sync-delete") as pool:
            for f in [pool.submit(job, c) for c in chunks]:
                f.result()


def run_teardown(
    client: TeardownClient,
    plan: TeardownPlan,
    *,
    parallel: int = 2,
    progress: Progress | None = None,
    hard: bool | None = None,
) -> TeardownOutcome:
    """Carry out ``plan``: the dataset side, then the process side (``parallel`` at once), then
    (``plan.purge``) the purge of every entity of the plan. ``hard`` (default: ``plan.purge``) asks
    for a hard delete where the server allows it."""
    run = _Run(client, plan, parallel, progress, plan.purge if hard is None else hard)
    data, procs = plan.order()
    # the dataset side first (its deletes end the processes' relationships too), one request at a
    # time; then the process side, whose deletes then share no entity: ``parallel`` at once
    run.batches([e.guid for e in data], 1)
    run.batches([e.guid for e in procs], parallel)
    # entities no answer listed (deleted meanwhile by another, or a write path that does not say):
    # named once more; Atlas ignores what is already deleted
    left = [e.guid for e in plan.active if e.guid not in run.out.guids]
    run.out.again = len(left)
    run.batches(left, parallel)
    run.done = len(plan.active)
    if plan.purge:
        guids = [e.guid for e in plan.to_purge]
        for i in range(0, len(guids), PURGE_BATCH):
            run.purge(guids[i : i + PURGE_BATCH])
    return run.out


def _deleted_guids(res: MutationResult) -> set[str]:
    """Guids a delete response lists as deleted (owned entities included)."""
    return {g for h in res.deleted if isinstance(g := h.get("guid"), str)}


def owned_types(typedefs: Iterable[dict[str, Any]]) -> frozenset[str]:
    """Entity types that are the owned end of a COMPOSITION relationship in ``typedefs`` (Atlas
    relationshipDefs): Atlas deletes them with their owner."""
    out: set[str] = set()
    for r in typedefs:
        if r.get("relationshipCategory") != "COMPOSITION":
            continue
        e1, e2 = r.get("endDef1") or {}, r.get("endDef2") or {}
        for owner, owned in ((e1, e2), (e2, e1)):
            if owner.get("isContainer") and not owned.get("isContainer") and owned.get("type"):
                out.add(str(owned["type"]))
    return frozenset(out)


def count_by_type(entities: Iterable[DomainEntity]) -> Counter[str]:
    return Counter(e.type_name for e in entities)
