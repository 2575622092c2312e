"""The fail-safes of a sync (reconcile.stream), checked on the whole plan before anything is written.

* a process of another job in the input refuses the plan (a job never changes another job's processes);
* under a native profile, datasets that exist outside the domain (a hook made them) are referenced,
  never written, and those missing from Atlas are created, left out or refuse the plan, as
  ``--missing-datasets`` says (docs/existing-atlas.md);
* the deletes: the job's entities its input no longer produces (processes; a dataset or column only
  when nothing outside this job's plan refers to it any more), skipped or refused as
  :func:`~atlas_sync.reconcile.plan.check_deletes` says (``--no-delete``, an input with errors or
  that produced nothing, more than ``--max-delete-percent`` of the domain).

They read the spool (what the job holds and wants) and, for the delete candidates, Atlas (one read in
full of those entities, for their referrers; the domain's size only when there are deletes).
"""

from __future__ import annotations

from collections.abc import Collection, Set
from dataclasses import dataclass

from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.reconcile.actual import ActualEntity, Key, fingerprint, to_actual
from atlas_sync.reconcile.bookkeeping import OWNER_ATTRIBUTE, Bookkeeping, entity_key
from atlas_sync.reconcile.holdings import JobHoldings
from atlas_sync.reconcile.plan import (
    Plan,
    PlanItem,
    PlanOptions,
    PlanRefused,
    check_deletes,
    foreign_process,
    missing_to_skip,
)
from atlas_sync.reconcile.spool import READ_CHUNK, GuidKeys, Spool
from atlas_sync.render.native import JOB_LABEL
from atlas_sync.wording import counted


def refuse_foreign_processes(spool: Spool, process_types: set[str], owner: str, job: str) -> None:
    """Raise :class:`~atlas_sync.reconcile.plan.PlanRefused` when a process the job wants is
    another job's (``owner``: this job's owner mark, its label under a native profile; ``job``: its
    name, as the message gives it)."""
    foreign = spool.foreign_processes(process_types, owner)
    if foreign:
        type_name, qualified_name, theirs = foreign
        raise foreign_process(type_name, qualified_name, _job_of(theirs), job)


def _job_of(owner: str) -> str:
    """A job's name from its owner mark: a native profile's ``atlas-sync-j_<job>`` label gives the
    job (as the label spells it), the attribute's value is the name."""
    return owner[len(JOB_LABEL) :] if owner.startswith(JOB_LABEL) else owner


def left_out(spool: Spool, outside: dict[Key, str], options: PlanOptions, plan: Plan) -> set[Key]:
    """Under a native profile: record the shared datasets found outside the domain (``outside``: what
    the lookup by name read) as others', referenced; of those missing from Atlas, what to leave out
    (with what only writes them) under ``--missing-datasets skip`` (a warning on ``plan`` says so);
    ``fail`` refuses the plan."""
    shared = spool.shared_outside()
    found = {k: outside[k] for k in shared if k in outside}  # the lookup read them
    spool.add_foreign(found)
    policy = options.missing_datasets
    missing = {k for k in shared if k not in found}
    outputs = spool.desired_outputs() if policy == "skip" and missing else {}
    skipped = missing_to_skip(missing, outputs, policy)  # "fail" refuses before any write
    if skipped:
        plan.left_out = len(skipped)
        plan.warnings.append(
            f"{counted(len(skipped), 'entity')} left out: datasets missing from Atlas (--missing-datasets skip) "
            "and what only writes them, e.g. " + " ".join(sorted(qn for _, qn in skipped)[:3])
        )
    return skipped


@dataclass(frozen=True)
class References:
    """How a sync reads references back: guids to keys (the spool's), the reference attributes to
    read, and those the profile renders."""

    by_guid: GuidKeys
    attrs: set[str]
    names: Set[str]


def deletes(
    client: AtlasApi,
    spool: Spool,
    holdings: JobHoldings,
    plan: Plan,
    options: PlanOptions,
    *,
    process_types: set[str],
    refs: References,
    bookkeeping: Bookkeeping,
) -> list[PlanItem]:
    """This job's entities the input no longer produces (datasets only when nothing else refers
    to them), with the same fail-safes as a whole plan (why they are skipped: ``plan.deletes_blocked``
    and a warning); decided before anything is written. ``ref_names``: the reference attributes the
    profile renders; ``bookkeeping``: the server's key, for counting the domain. A refusal of too
    many deletes is kept in ``plan.refused`` and the deletes are planned: a sync raises it before
    anything is written, a plan with the whole plan, for the user to see what tripped it."""
    by_guid, ref_attrs, ref_names = refs.by_guid, refs.attrs, refs.names
    kept: list[tuple[str, str, set[str]]] = []
    out = _stale(client, spool, holdings.owner, process_types, by_guid, ref_attrs, ref_names, kept)
    if kept and spool.desired_count() == 0 and options.allow_delete and options.allow_empty:
        # a job synced to nothing (a teardown of the job): what it leaves, why, and to whom
        if not holdings.native:
            plan.handover = heirs(client, kept, holdings.job, holdings.domain)
        to = sorted(set(plan.handover.values()))
        plan.warnings.append(
            f"{counted(len(kept), 'entity')} of job {holdings.job!r} stay: other entities still refer to them "
            f"(datasets other jobs use, and their columns), e.g. {kept[0][0]}; "
            + (
                f"they pass to job {' and '.join(repr(j) for j in to)}, which uses them"
                if to
                else "they go with the next teardown of the job once nothing does"
            )
        )
    if not out:
        return []
    try:
        plan.deletes_blocked = check_deletes(
            len(out),
            holdings.domain_size(spool, bookkeeping),
            spool.desired_count() > 0,
            holdings.domain,
            holdings.job,
            options,
        )
    except PlanRefused as exc:
        plan.refused = exc
        return out
    if plan.deletes_blocked:
        plan.warnings.append(plan.deletes_blocked)
        return []
    return out


def _stale(
    client: AtlasApi,
    spool: Spool,
    job: str,
    process_types: set[str],
    by_guid: GuidKeys,
    ref_attrs: set[str],
    ref_names: Set[str],
    kept: list[tuple[str, str, set[str]]] | None = None,
) -> list[PlanItem]:
    """The delete items of what ``job`` (its owner mark) holds and no longer wants: processes (tier 0),
    and the datasets and columns nothing else still uses (tier 1; the others go to ``kept``: name,
    guid, and the guids of what refers to them)."""
    stale = spool.stale(job)
    if not stale:
        return []
    gone = {g for _, _, g in stale}
    out: list[PlanItem] = []
    for lo in range(0, len(stale), READ_CHUNK):
        part = stale[lo : lo + READ_CHUNK]
        ents = {e["guid"]: e for e in client.get_entities([g for _, _, g in part])}
        for type_name, qn, guid in part:
            raw = ents.get(guid)
            if raw is None or raw.get("status", "ACTIVE") != "ACTIVE":
                continue
            a = to_actual(raw, by_guid, ref_attrs)
            tier = 0 if type_name in process_types else 1
            if tier == 1 and _still_used(a, gone, by_guid, spool, ref_names):
                if kept is not None:
                    kept.append((qn, guid, a.referrers - gone))
                continue
            out.append(PlanItem("delete", type_name, qn, guid=guid, tier=tier, fingerprint=fingerprint(a)))
    return out


def _still_used(
    a: ActualEntity, gone: set[str], by_guid: GuidKeys, spool: Spool, ref_names: Set[str]
) -> bool:
    """A dataset stays while an entity outside this job's plan (not its container) refers to it.
    Desired entities never refer to a stale one after the sync: their references are desired."""
    # Only references the profile renders (a column's dataset) make a container; reverse ones
    # such as a dataset's inputToProcesses are other entities that keep it alive.
    containers = {
        k
        for name, v in a.refs.items()
        if name in ref_names
        for k in (v if isinstance(v, list) else ([v] if v else []))
    }
    for r in a.referrers:
        if r in gone:
            continue
        key = by_guid.get(r)
        if key is None:
            return True  # outside the domain's listing: another domain or profile points here
        if spool.is_desired(key):
            continue
        if key not in containers:
            return True
    return False


def heirs(client: AtlasApi, kept: list[tuple[str, str, set[str]]], job: str, domain: str) -> dict[str, str]:
    """The job each of ``kept`` passes to when ``job`` goes (guid -> job): the first, by name, of the
    other jobs of ``domain`` that created what refers to it (read once, by guid); an entity kept only
    by other kept ones (a dataset by its columns) passes to the first of all those jobs. Nothing for
    what only another domain or tool refers to: it stays ``job``'s."""
    ours = {guid for _, guid, _ in kept}
    wanted = sorted({r for _, _, refs in kept for r in refs} - ours)
    owner: dict[str, str] = {}
    for lo in range(0, len(wanted), READ_CHUNK):
        # (not minExtInfo: Atlas answers an owned entity asked after its owner with its name alone)
        for e in client.get_entities(wanted[lo : lo + READ_CHUNK], ignore_relationships=True):
            attrs = e.get("attributes") or {}
            who, qn = attrs.get(OWNER_ATTRIBUTE), attrs.get("qualifiedName")
            if isinstance(who, str) and who != job and isinstance(qn, str) and qn.endswith("@" + domain):
                owner[str(e["guid"])] = who
    every = sorted(set(owner.values()))
    out: dict[str, str] = {}
    for _, guid, refs in kept:
        mine = sorted({owner[r] for r in refs if r in owner})
        if mine:
            out[guid] = mine[0]
        elif every and refs <= ours:  # (kept alive by other kept entities alone)
            out[guid] = every[0]
    return out


def hand_over(client: AtlasApi, handover: dict[str, str], domain: str, bookkeeping: Bookkeeping) -> int:
    """Write each entity's new owning job (``atlasSyncJob``, and the key of the domain and that job,
    where the server's types have it): two partial updates an entity (no other attribute is
    written). Returns the number of requests."""
    requests = 0
    for guid, heir in sorted(handover.items()):
        client.set_entity_attribute(guid, OWNER_ATTRIBUTE, heir)
        requests += 1
        if bookkeeping.key:
            client.set_entity_attribute(guid, bookkeeping.key, entity_key(domain, heir))
            requests += 1
    return requests


def file_named_renames(
    job: str, deletes: list[PlanItem], created: Collection[str], process_types: Collection[str]
) -> str | None:
    """Say so when processes whose names held their input file's name (``<job>:<file>:<rest>``, or
    ``<job>:<first file>:<file>:<rest>`` under ``--job``, before a name depended only on the process) give
    way to ``<job>:<rest>``: a delete and a create in Atlas."""
    pairs: list[tuple[str, str]] = []
    for item in deletes:
        if item.type_name not in process_types or "@" not in item.qualified_name:
            continue
        local, domain = item.qualified_name.rsplit("@", 1)
        if not local.startswith(job + ":"):
            continue
        parts = local[len(job) + 1 :].split(":")
        # (`<job>:<file>:...`, or `<job>:<first file>:<file>:...` synced with --job)
        for n in (1, 2):
            new = ":".join([job, *parts[n:]]) + "@" + domain
            if len(parts) > n and new in created:
                pairs.append((item.qualified_name, new))
                break
    # the processes, not the column lineages named after them (`<process>:<column>`)
    locals_ = {o.rsplit("@", 1)[0] for o, _ in pairs}
    pairs = [(o, n) for o, n in pairs if not _under_any(o.rsplit("@", 1)[0], locals_)]
    if not pairs:
        return None
    old, new = pairs[0]
    return (
        f"{len(pairs)} process(es) named with their input file's name (e.g. {old}) are renamed to names "
        f"that depend only on the process (e.g. {new}): deleted and created again, so their Atlas "
        "history starts anew; later syncs keep the new names, whatever the files are called"
    )


def _under_any(local: str, names: Set[str]) -> bool:
    """Whether ``local`` is ``<one of names>:...``."""
    at = local.find(":")
    while at >= 0:
        if local[:at] in names:
            return True
        at = local.find(":", at + 1)
    return False
