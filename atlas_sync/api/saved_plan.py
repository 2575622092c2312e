"""A saved plan (``atlas-sync plan --out``) applied: checked against Atlas first, then written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atlas_sync.api.teardown import list_domain
from atlas_sync.errors import AtlasSyncError
from atlas_sync.reconcile.apply import ApplyResult
from atlas_sync.reconcile.plan import Plan
from atlas_sync.reconcile.writer import WriteSettings, write_saved
from atlas_sync.wording import counted

if TYPE_CHECKING:
    from atlas_sync.api import Progress, Publisher


def apply_saved(
    pub: Publisher, plan: Plan, *, purge: bool = False, progress: Progress | None = None
) -> ApplyResult:
    """Apply a plan (a saved one, or one from :meth:`plan`): refused when Atlas changed since
    planning; then written as a sync writes (reconcile.writer: entities, then the metadata requests)."""
    known = verify(pub, plan)
    settings = WriteSettings(batch_size=pub.batch_size, parallel=pub.parallel, purge=purge, progress=progress)
    return write_saved(pub.client, plan, known, settings)


def verify(pub: Publisher, plan: Plan) -> dict[tuple[str, str], str]:
    from atlas_sync.reconcile.actual import fingerprint, read_entities, reference_attributes
    from atlas_sync.reconcile.bookkeeping import job_key
    from atlas_sync.reconcile.digest import DIGEST_MARK, for_job

    if plan.domain != pub.domain:
        raise AtlasSyncError(f"the plan is for domain {plan.domain!r}, not {pub.domain!r}")
    headers = list_domain(pub)  # (the root types the server has: a native profile names more)
    # (other tools' entities: referenced, or given metadata only)
    by_guid = {i.guid: i.key for i in plan.items if i.guid and _theirs(i, plan)}
    by_guid.update({h.guid: k for k, h in headers.items()})
    guids = [headers[i.key].guid for i in plan.items if i.action != "create" and i.key in headers]
    ref_attrs = reference_attributes(e.refs for e in plan.desired.values())
    current = read_entities(pub.client, guids, by_guid, ref_attrs)
    stale: list[str] = []
    for i in plan.items:
        if _theirs(i, plan):
            continue  # not ours: never written (only its metadata requests), so nothing to protect
        if i.action == "create":
            if i.key in headers:
                stale.append(f"{i.type_name} {i.qualified_name} now exists")
        elif i.fingerprint.startswith(DIGEST_MARK):
            # decided by the stored digest: Atlas moved on if it holds another one now
            now = current.get(i.key)
            attr = pub.profile.bookkeeping.digest
            if (
                now is None
                or attr is None
                # (as the plan's job compared it: the entity's digest and that job's part)
                or for_job(now.attributes.get(attr), job_key(plan.domain, plan.job))
                != i.fingerprint[len(DIGEST_MARK) :]
            ):
                stale.append(f"{i.type_name} {i.qualified_name} changed")
        elif fingerprint(current.get(i.key)) != i.fingerprint:
            stale.append(f"{i.type_name} {i.qualified_name} changed")
    if stale:
        raise AtlasSyncError(
            f"the saved plan no longer matches Atlas ({counted(len(stale), 'entity')} "
            f"{'differs' if len(stale) == 1 else 'differ'}, e.g. {stale[0]})",
            hint="re-run `atlas-sync plan` and apply the new plan",
        )
    return {k: h.guid for k, h in headers.items()}


def _theirs(item: Any, plan: Plan) -> bool:
    """A saved plan's item for another tool's entity: referenced, or given metadata requests only."""
    return bool(item.action == "referenced" or (item.metadata and item.key not in plan.desired))
