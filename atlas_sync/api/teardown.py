"""Teardown of a domain or of one job, and what a domain holds (``show``, ``teardown``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atlas_sync.api.options import EMPTY, Progress, check_job
from atlas_sync.api.results import SyncResult, TeardownResult
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.actual import ActualHeader, list_scope
from atlas_sync.reconcile.apply import ApplyResult
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.reconcile.plan import Plan
from atlas_sync.reconcile.teardown import TeardownPlan
from atlas_sync.render.profile import load_profile

if TYPE_CHECKING:
    from atlas_sync.api import Publisher
    from atlas_sync.view.atlas_graph import DomainSource

    def _publisher_is_a_domain_source(pub: Publisher) -> DomainSource:
        return pub  # mypy checks that `show` (atlas_sync.view) gets from a publisher what it reads


# The built-in profiles whose entities carry the domain's key: `show` and `teardown` say what a domain
# holds under them when the profile in use finds nothing there.
OTHER_PROFILES = ("lineage", "pico")


def plan_teardown(pub: Publisher, *, purge: bool = False, batch_size: int | None = None) -> TeardownPlan:
    """What :meth:`teardown` would delete and purge, from one listing of Atlas; nothing is written."""
    from atlas_sync.reconcile.teardown import DELETE_BATCH, TeardownPlan, list_domain

    roots = pub.catalog.existing_root_types()
    entities = list_domain(
        pub.client, roots, pub.domain, labels=pub.native, bookkeeping=pub.catalog.bookkeeping()
    )
    owned = owned_types(pub)
    return TeardownPlan(
        domain=pub.domain,
        profile=pub.profile.name,
        purge=purge,
        entities=entities,
        owned_types=owned,
        process_types=frozenset(pub.process_types),
        batch_size=batch_size or DELETE_BATCH,
    )


def teardown(
    pub: Publisher,
    *,
    purge: bool = False,
    typedefs: bool = False,
    progress: Progress | None = None,
    plan: TeardownPlan | None = None,
    parallel: int | None = None,
    batch_size: int | None = None,
) -> TeardownResult:
    """Delete every entity of the domain; optionally purge them and delete the profile's typedefs
    when nothing else uses them. A teardown stopped at any point and run again finishes the job.
    How it deletes: :mod:`atlas_sync.reconcile.teardown`."""
    from atlas_sync.reconcile.teardown import run_teardown

    result = TeardownResult(domain=pub.domain)
    if plan is None or plan.purge != purge:
        plan = plan_teardown(pub, purge=purge, batch_size=batch_size)
    out = run_teardown(pub.client, plan, parallel=parallel or pub.parallel, progress=progress)
    result.deleted, result.purged, result.requests = out.deleted, out.purged, out.requests
    if not pub.native:  # the jobs' receipts (reconcile.receipt) go with the domain
        from atlas_sync.reconcile.receipt import delete_receipts

        result.requests += delete_receipts(pub.client, pub.domain, purge=purge)
    if typedefs and pub.profile.typedef_sources:
        from atlas_sync.typedefs import delete_typedefs, load_bundle

        bundle = load_bundle(*pub.profile.typedef_sources)
        res = delete_typedefs(pub.client, bundle)
        result.typedefs_deleted = list(res.deleted)
    return result


def plan_teardown_job(pub: Publisher, job: str) -> Plan:
    """What :meth:`teardown_job` would delete: the plan of syncing ``job`` to nothing (nothing is
    written). Its deletes are the job's own entities; a dataset (or column) the job created that
    another entity still refers to stays, and the plan's warnings say how many."""
    from atlas_sync.api.run import run, without_rules
    from atlas_sync.reconcile.writer import RecordingWriter

    return run(
        without_rules(pub), [LineageGraph(job=job)], check_job(job), EMPTY, writer=RecordingWriter
    ).plan


def teardown_job(
    pub: Publisher,
    job: str,
    *,
    purge: bool = False,
    progress: Progress | None = None,
    parallel: int | None = None,
    batch_size: int | None = None,
    plan: Plan | None = None,
) -> SyncResult:
    """Delete what ``job`` owns in the domain, as :meth:`plan_teardown_job` (or ``plan``, from it)
    says, the way a teardown deletes (:mod:`atlas_sync.reconcile.teardown`: owned entities first,
    ``batch_size`` guids a request, ``purge``: hard-deleted and purged too); what other jobs still
    use passes to one of them; then the job's receipt goes. Other jobs' entities are never
    named. Stopped at any point, the same call finishes the job (with ``purge``, what an earlier
    run deleted is purged)."""
    from atlas_sync.reconcile import failsafes
    from atlas_sync.reconcile.actual import search_roots
    from atlas_sync.reconcile.teardown import DELETE_BATCH, DomainEntity, TeardownPlan, run_teardown

    job = check_job(job)
    if plan is None or plan.job != job:
        plan = plan_teardown_job(pub, job)
    gone = [
        DomainEntity(i.guid, i.type_name, i.qualified_name, "ACTIVE")
        for i in plan.by_action("delete")
        if i.guid
    ]
    todo = TeardownPlan(
        domain=pub.domain,
        profile=pub.profile.name,
        purge=purge,
        entities=gone,
        owned_types=owned_types(pub),
        process_types=frozenset(pub.process_types),
        batch_size=batch_size or DELETE_BATCH,
    )
    out = run_teardown(pub.client, todo, parallel=parallel or pub.parallel, progress=progress)
    applied = ApplyResult(deleted=out.deleted, purged=out.purged, requests=out.requests)
    roots = pub.catalog.existing_root_types()
    bk = pub.catalog.bookkeeping() if roots else Bookkeeping()
    if plan.handover:  # (after the deletes: a run stopped before finds them again)
        applied.requests += failsafes.hand_over(pub.client, plan.handover, pub.domain, bk)
    flt = bk.job_filter(pub.domain, job)
    if purge and flt is not None:
        # what an earlier teardown (or sync) of the job deleted without purging: purged now
        hits = search_roots(
            pub.client, roots, entity_filters=flt, exclude_deleted=False, attributes=["qualifiedName"]
        )
        deleted = [str(h["guid"]) for h in hits if h.get("status") == "DELETED"]
        for lo in range(0, len(deleted), 1000):
            applied.requests += pub.client.purge_entities(deleted[lo : lo + 1000]).requests
        applied.purged += len(deleted)
    if not pub.native and roots:
        from atlas_sync.reconcile.receipt import delete_receipts

        applied.requests += delete_receipts(pub.client, pub.domain, purge=purge, job=job)
    done = applied.deleted or applied.purged or plan.handover
    return SyncResult(plan=plan, applied=applied if done else None)


def owned_types(pub: Publisher) -> frozenset[str]:
    """Entity types of the profile Atlas deletes with their owner (a dataset's columns)."""
    if not pub.profile.typedef_sources:
        return frozenset()
    from atlas_sync.reconcile.teardown import owned_types
    from atlas_sync.typedefs import load_bundle

    bundle = load_bundle(*pub.profile.typedef_sources)
    return owned_types(e.atlas() for e in bundle if e.category == "RELATIONSHIP")


def list_domain(pub: Publisher) -> dict[tuple[str, str], ActualHeader]:
    """Every ACTIVE entity of the domain, as headers (guid, type, qualifiedName, owner) by
    (type, qualifiedName): what ``show`` draws and ``teardown`` deletes. Lists the whole domain
    (by its key on Atlas's index); a job's sync never needs this."""
    return list_scope_of(pub, pub.catalog.existing_root_types())


def held_under_other_profiles(pub: Publisher) -> dict[str, int]:
    """The built-in profiles other than this publisher's under which the domain holds ACTIVE
    entities, and how many: counted by the domain's key on Atlas's index (one header of a search
    per root type the server has; a type it lacks counts nothing). Under the ``atlas`` profile
    the domain is a label, which Atlas's index cannot match (a scan of every dataset and process):
    that profile is not counted. What ``show`` and ``teardown`` say when this profile finds
    nothing, or leaves something."""
    from atlas_sync.atlas.errors import BadRequestError, NotFoundError

    out: dict[str, int] = {}
    for name in OTHER_PROFILES:
        if name == pub.profile.name:
            continue
        other = load_profile(name)
        flt = Bookkeeping.of(other.bookkeeping).domain_filter(pub.domain)
        if flt is None or set(other.root_types()) & set(pub.profile.root_types()):
            continue
        total = 0
        for t in other.root_types():
            try:
                total += pub.client.search_count(t, entity_filters=flt) or 0
            except (BadRequestError, NotFoundError):
                continue  # the server lacks the type (or its key): nothing of it there
        if total:
            out[name] = total
    return out


def list_scope_of(pub: Publisher, roots: list[str]) -> dict[tuple[str, str], ActualHeader]:
    """The domain's entities of ``roots`` (by the domain's key when the server's types have it)."""
    return list_scope(pub.client, roots, pub.domain, labels=pub.native, bookkeeping=pub.catalog.bookkeeping())


def rebuild(
    pub: Publisher,
    graph: LineageGraph,
    job: str | None,
    *,
    progress: tuple[Progress | None, Progress | None],
    parallel: int | None,
    plan: TeardownPlan | Plan | None,
    batch: int | None,
    sync_job: str | None = None,
) -> SyncResult:
    """:meth:`Publisher.rebuild`: the teardown of the domain (or of ``job``; ``progress[0]``), then
    the sync of ``sync_job`` (``progress[1]``)."""
    down, up = progress
    if job is None:
        whole = plan if isinstance(plan, TeardownPlan) else None
        teardown(pub, purge=True, progress=down, plan=whole, parallel=parallel, batch_size=batch)
        return pub.sync(graph, sync_job, progress=up, parallel=parallel)
    gone = teardown_job(
        pub,
        job,
        purge=True,
        progress=down,
        parallel=parallel,
        batch_size=batch,
        plan=plan if isinstance(plan, Plan) else None,
    )
    result = pub.sync(graph, job, progress=up, parallel=parallel)
    result.teardown = gone
    return result
