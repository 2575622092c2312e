"""Bootstrap and teardown of typedef bundles against Atlas (or the emulator).

* :func:`plan_typedefs` reads the server's defs of the bundle's types (a request per serviceType,
  else by name; not Atlas's whole type system) and, when something is to be written, of the types
  they refer to, and diffs the bundle.
* :func:`apply_typedefs` POSTs every missing type in one request (Atlas resolves a batch together),
  then PUTs every changed type in one request, merged with what the server has; nothing when nothing
  changed (a PUT bumps the server's ``version``). A 409 "already exists" from a racing writer makes it
  re-read and re-plan. Incompatible changes are refused before any write.
* :func:`ensure_typedefs` = plan + apply; zero writes when all is registered.
* :func:`delete_typedefs` refuses while instances exist (counted per type and domain) unless asked
  to delete and purge them, and deletes all the bundle's types in one DELETE body (Atlas handles
  subtypes, relationshipDefs and mutually referencing types together in one body).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas_sync.errors import AtlasSyncError
from atlas_sync.typedefs.bundle import Bundle, ServerTypes
from atlas_sync.typedefs.diff import TypedefPlan, holds, plan_against
from atlas_sync.typedefs.model import CATEGORY_LISTS, referenced_names
from atlas_sync.wording import counted

if TYPE_CHECKING:
    from atlas_sync.atlas.interface import AtlasApi

ALREADY_EXISTS = "ATLAS-409-00-001"
LOCK_TIMEOUT = "ATLAS-500-00-005"


class IncompatibleTypedefsError(AtlasSyncError):
    """The bundle changes types in ways Atlas refuses; nothing was written."""

    def __init__(self, plan: TypedefPlan) -> None:
        bad = plan.incompatible
        first = bad[0]
        what = "; ".join(f"{p.message} ({p.code})" for p in first.problems)
        more = f" (and {counted(len(bad) - 1, 'more type')})" if len(bad) > 1 else ""
        super().__init__(
            f"{first.name}: {what}{more}; nothing was written",
            hint=first.problems[0].hint if first.problems else None,
        )
        self.plan = plan


class TypedefsInUseError(AtlasSyncError):
    """Types cannot be deleted: instances or other types still use them; nothing was deleted."""


@dataclass
class ApplyResult:
    """What :func:`apply_typedefs` did. ``writes`` counts write requests (POST/PUT)."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    writes: int = 0
    reads: int = 0
    replans: int = 0
    plan: TypedefPlan | None = None

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)

    def to_dict(self) -> dict[str, Any]:
        return {
            "created": list(self.created),
            "updated": list(self.updated),
            "unchanged": list(self.unchanged),
            "writes": self.writes,
            "reads": self.reads,
            "replans": self.replans,
        }

    def summary(self) -> str:
        return (
            f"Applied: {len(self.created)} created, {len(self.updated)} updated, "
            f"{len(self.unchanged)} unchanged ({counted(self.writes, 'write request')})."
        )


@dataclass
class DeletePlan:
    """What :func:`delete_typedefs` would delete and what stands in the way."""

    present: list[str]  # bundle types on the server, in deletion order (dependents first)
    absent: list[str]  # bundle types the server does not have
    blockers: list[str]  # plain-words reasons other server types prevent the delete
    instances: dict[str, Counter[str]]  # type -> domain -> count (deleted ones included)
    guids: dict[str, str] = field(default_factory=dict)  # guid -> status, for --with-entities
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def instance_count(self) -> int:
        return sum(sum(c.values()) for c in self.instances.values())

    def describe_instances(self) -> str:
        parts = []
        for t in sorted(self.instances):
            per = ", ".join(f"{n} in domain {d}" for d, n in sorted(self.instances[t].items()))
            parts.append(f"{t}: {per}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "delete": list(self.present),
            "absent": list(self.absent),
            "blockers": list(self.blockers),
            "instances": {t: dict(c) for t, c in sorted(self.instances.items())},
        }

    def render(self) -> str:
        lines = [f"  - {n}" for n in self.present]
        lines += [f"  (absent) {n}" for n in self.absent]
        for b in self.blockers:
            lines.append(f"  ! {b}")
        if self.instances:
            use = "uses" if self.instance_count == 1 else "use"
            lines.append(
                f"  ! {counted(self.instance_count, 'entity')} {use} these types: {self.describe_instances()}"
            )
        lines.append(
            f"Delete plan: {len(self.present)} to delete, {len(self.absent)} absent, "
            f"{counted(self.instance_count, 'entity')} in use."
        )
        return "\n".join(lines)


@dataclass
class DeleteResult:
    """What :func:`delete_typedefs` did."""

    deleted: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    entities_deleted: int = 0
    entities_purged: int = 0
    writes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "deleted": list(self.deleted),
            "absent": list(self.absent),
            "entities_deleted": self.entities_deleted,
            "entities_purged": self.entities_purged,
            "writes": self.writes,
        }


# -- plan / apply ----------------------------------------------------------------------------


def read_server_types(client: AtlasApi) -> ServerTypes:
    """All typedefs of the server, in one request."""
    return ServerTypes(client.get_typedefs())


TYPE_READERS = 4  # typedefs read by name at once


def read_types_by_name(client: AtlasApi, names: Iterable[str], *, supertypes: bool = True) -> ServerTypes:
    """The server's defs of ``names`` and, transitively (unless not ``supertypes``), of their
    supertypes, one small read per type (a few at once), each read once: without Atlas's whole type
    system (the complete 2.4.0 model set is about 450 KiB). Names the server lacks are left out."""
    found: dict[str, dict[str, Any]] = {}
    todo = set(names)
    with ThreadPoolExecutor(TYPE_READERS, thread_name_prefix="atlas-sync-types") as pool:
        while todo:
            batch = sorted(todo)
            todo = set()
            for name, d in zip(batch, pool.map(client.get_typedef_by_name, batch), strict=True):
                found[name] = d or {}
                if supertypes:
                    todo.update(
                        s
                        for s in (d or {}).get("superTypes") or []
                        if isinstance(s, str) and s not in found and s not in batch
                    )
    doc: dict[str, list[dict[str, Any]]] = {}
    for d in found.values():
        key = CATEGORY_LISTS.get(str(d.get("category")))
        if key is not None:
            doc.setdefault(key, []).append(d)
    return ServerTypes(doc)


def read_bundle_types(client: AtlasApi, bundle: Bundle, *, by_name: bool = False) -> ServerTypes:
    """What the server holds of ``bundle``'s types: a request per serviceType when each has one
    (``servicetype=``; a built-in bundle has its own), else (or ``by_name``: a type may hold another
    serviceType on the server) one read per type. The types they refer to
    (Atlas's DataSet, Process and their supertypes) are read only when the server does not hold every
    type as the bundle defines it: what checking the bundle's references before a write needs."""
    services = None if by_name else bundle.service_types()
    if services is not None:
        own = ServerTypes()
        for service in services:
            own = own.merged(ServerTypes(client.get_typedefs(service_type=service)))
    else:
        own = read_types_by_name(client, bundle.entries, supertypes=False)
    if holds(bundle, own):
        return own
    return own.merged(read_types_by_name(client, [n for n in bundle.external_references() if n not in own]))


def plan_typedefs(client: AtlasApi, bundle: Bundle) -> TypedefPlan:
    """Diff ``bundle`` against the server (its types and those they refer to, read by name).
    Dangling references, cycles and other bundle errors raise
    :class:`~atlas_sync.typedefs.bundle.BundleError` before any write."""
    return plan_against(bundle, read_bundle_types(client, bundle), target=client.target)


def apply_typedefs(client: AtlasApi, plan: TypedefPlan, *, max_replans: int = 5) -> ApplyResult:
    """Apply a plan: one POST for what is missing, then one PUT for what changed, nothing otherwise.

    Raises :class:`IncompatibleTypedefsError` (before any write) if any type is incompatible. A
    409 "already exists" (another writer created a type since the plan was made) or Atlas's
    type-lock timeout makes it re-read the server and re-plan, up to ``max_replans`` times.
    """
    from atlas_sync.atlas import AtlasError, ConflictError

    result = ApplyResult()
    attempt = 0
    while True:
        if plan.incompatible:
            raise IncompatibleTypedefsError(plan)
        creates = [i.name for i in plan.creates]
        try:
            if creates:
                result.writes += 1
                client.create_typedefs(plan.create_body())
                result.created.extend(creates)
            updates = [i.name for i in plan.updates]
            if updates:
                result.writes += 1
                client.update_typedefs(plan.update_body())
                result.updated.extend(updates)
        except AtlasError as exc:
            racing = (isinstance(exc, ConflictError) and exc.error_code in (ALREADY_EXISTS, None)) or (
                exc.error_code == LOCK_TIMEOUT
            )
            if not racing or attempt >= max_replans:
                raise
            attempt += 1
            result.replans += 1
            if exc.error_code == LOCK_TIMEOUT:
                time.sleep(min(2.0, 0.2 * attempt))
            result.reads += 1
            # (by name: a type the filtered read missed may hold another serviceType on the server)
            plan = plan_against(
                plan.bundle, read_bundle_types(client, plan.bundle, by_name=True), target=client.target
            )
            continue
        break
    result.unchanged = [i.name for i in plan.items if i.action == "unchanged"]
    result.plan = plan
    return result


def ensure_typedefs(client: AtlasApi, bundle: Bundle, server: ServerTypes | None = None) -> ApplyResult:
    """Make the server hold the bundle's types: its types (and those they refer to) read by name,
    unless ``server`` holds them already, and writes only for what is missing or changed.
    Idempotent: a second call makes zero writes."""
    if server is None:
        server = read_bundle_types(client, bundle)
    plan = plan_against(bundle, server, target=client.target)
    if not plan.has_changes:
        return ApplyResult(unchanged=plan.order, reads=1, plan=plan)
    result = apply_typedefs(client, plan)
    result.reads += 1
    return result


# -- delete ----------------------------------------------------------------------------------


def plan_delete(client: AtlasApi, bundle: Bundle) -> DeletePlan:
    """Which of the bundle's types exist, which server types outside the bundle depend on them,
    and how many entities (deleted ones included: Atlas counts them) use them, per domain."""
    server = read_server_types(client)
    order = bundle.order()
    present = [n for n in order if n in server and server.categories[n] == bundle.entries[n].category]
    absent = [n for n in order if n not in present]
    present_set = set(present)
    blockers = _blockers(server, present_set)
    instances: dict[str, Counter[str]] = {}
    guids: dict[str, str] = {}
    roots = [
        n
        for n in present
        if server.categories[n] == "ENTITY"
        and not any(s in present_set for s in (server.get(n) or {}).get("superTypes") or [])
    ]
    for root in roots:
        for h in client.search_basic(root, exclude_deleted=False, include_subtypes=True, attributes=None):
            t = str(h.get("typeName"))
            if t not in present_set:
                continue
            guid = h.get("guid")
            if not guid or guid in guids:
                continue
            guids[guid] = str(h.get("status") or "ACTIVE")
            qn = str((h.get("attributes") or {}).get("qualifiedName") or "")
            domain = qn.rsplit("@", 1)[1] if "@" in qn else "(none)"
            instances.setdefault(t, Counter())[domain] += 1
    body: dict[str, Any] = {lst: [] for lst in CATEGORY_LISTS.values()}
    for n in reversed(present):
        body[CATEGORY_LISTS[server.categories[n]]].append(server.get(n))
    return DeletePlan(
        present=list(reversed(present)),
        absent=absent,
        blockers=blockers,
        instances=instances,
        guids=guids,
        body=body,
    )


def _blockers(server: ServerTypes, targets: set[str]) -> list[str]:
    """Server types outside ``targets`` that would make Atlas refuse to delete them (409)."""
    out: list[str] = []
    for name in sorted(server.raw):
        if name in targets:
            continue
        d = server.raw[name]
        for s in d.get("superTypes") or []:
            if s in targets:
                out.append(
                    f"{name} (not in these bundles) is a subtype of {s}; Atlas would refuse with "
                    "409 ATLAS-409-00-002 'has references' - delete it first or include its bundle"
                )
        for a in d.get("attributeDefs") or []:
            try:
                refs = referenced_names(str(a.get("typeName") or ""))
            except ValueError:
                continue
            for r in refs:
                if r in targets:
                    out.append(
                        f"{name}.{a.get('name')} (not in these bundles) has type {a.get('typeName')}; Atlas "
                        "would refuse with 409 ATLAS-409-00-002 'has references' - delete it first"
                    )
        for key in ("endDef1", "endDef2"):
            end = d.get(key) or {}
            if end.get("type") in targets:
                out.append(
                    f"relationshipDef {name} (not in these bundles) uses {end.get('type')} as {key}; Atlas "
                    "would refuse with 409 ATLAS-409-00-005 'has associated relationshipDefs' - delete it first"
                )
        for t in d.get("entityTypes") or []:
            if t in targets:
                out.append(f"classification {name} (not in these bundles) applies to {t}; delete it first")
    return out


def delete_typedefs(
    client: AtlasApi, bundle: Bundle, *, with_entities: bool = False, plan: DeletePlan | None = None
) -> DeleteResult:
    """Delete the bundle's types from the server, in one DELETE body.

    Refuses (:class:`TypedefsInUseError`, nothing deleted) while entities of these types exist,
    saying how many per type and domain, unless ``with_entities`` (then they are deleted and
    purged first, in every domain), and while types outside the bundle depend on them.
    """
    from atlas_sync.atlas import ConflictError

    plan = plan or plan_delete(client, bundle)
    result = DeleteResult(absent=list(plan.absent))
    if not plan.present:
        return result
    if plan.blockers:
        raise TypedefsInUseError(
            "cannot delete the typedefs: "
            + plan.blockers[0]
            + (f" (and {len(plan.blockers) - 1} more)" if len(plan.blockers) > 1 else ""),
            hint="nothing was deleted",
        )
    if plan.instances and not with_entities:
        raise TypedefsInUseError(
            f"refusing to delete typedefs: {counted(plan.instance_count, 'entity')} still "
            f"{'uses' if plan.instance_count == 1 else 'use'} them "
            f"({plan.describe_instances()})",
            hint="Atlas refuses while any instance exists, even soft-deleted (409 ATLAS-409-00-002); "
            "delete and purge them first (`atlas-sync teardown --domain D --purge`), or pass --with-entities "
            "to delete and purge them in every domain",
        )
    if plan.guids:
        active = [g for g, s in plan.guids.items() if s != "DELETED"]
        if active:
            res = client.delete_entities(active)
            result.writes += res.requests
            result.entities_deleted = len(active)
        res = client.purge_entities(list(plan.guids))
        result.writes += res.requests
        result.entities_purged = len(plan.guids)
    try:
        client.delete_typedefs(plan.body)
    except ConflictError as exc:
        raise TypedefsInUseError(
            f"Atlas refused to delete the typedefs: {exc.error_message or exc.message}",
            hint="something still uses them: entities (even soft-deleted ones must be purged), "
            "subtypes, attributes or relationshipDefs of other types",
        ) from None
    result.writes += 1
    result.deleted = list(plan.present)
    return result
