"""Desired vs actual -> a Plan: create / update (attribute-level diff) / delete / unchanged per entity.

Ownership: every entity atlas-sync writes carries ``atlasSyncJob`` (the job that created it; for
datasets shared by several jobs, the first one). A job's sync deletes only entities of its domain
that it owns and no longer produces; a dataset is kept while anything else still references it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from atlas_sync.errors import AtlasSyncError
from atlas_sync.reconcile.actual import (
    ActualEntity,
    Key,
    fingerprint,
)
from atlas_sync.render.renderer import DesiredEntity
from atlas_sync.wording import counted

Action = Literal["create", "update", "delete", "unchanged", "referenced"]
ACTIONS: tuple[Action, ...] = ("create", "update", "delete", "unchanged", "referenced")
MISSING_DATASETS = ("create", "skip", "fail")
PLAN_FORMAT = 1


class PlanRefused(AtlasSyncError):
    """A fail-safe stopped the plan (too many deletes, input with errors, ...). ``plan``: when the
    delete fail-safe refused a plan computed in full (a dry run), that plan, deletes included."""

    plan: Plan | None = None


@dataclass
class Change:
    attribute: str
    before: Any
    after: Any


@dataclass
class PlanItem:
    action: Action
    type_name: str
    qualified_name: str
    guid: str | None = None
    changes: list[Change] = field(default_factory=list)
    tier: int = 0
    fingerprint: str = "absent"
    # the classification / label / term / business-metadata requests (reconcile.metadata.MetadataOps)
    metadata: dict[str, Any] | None = None

    @property
    def key(self) -> Key:
        return (self.type_name, self.qualified_name)


@dataclass
class Plan:
    domain: str
    job: str
    profile: str
    items: list[PlanItem] = field(default_factory=list)
    # Entities to send for creates/updates, keyed by "type\tqualifiedName" (kept for apply).
    desired: dict[Key, DesiredEntity] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    deletes_blocked: str | None = None
    # a dry run's delete fail-safe refusal, kept to be raised once the plan is whole (not saved)
    refused: PlanRefused | None = field(default=None, repr=False, compare=False)
    # entities of the input left out (--missing-datasets skip): Atlas does not hold them after a sync
    left_out: int = 0
    # a job synced to nothing: its entities other jobs still use, by guid, and the job each passes to
    handover: dict[str, str] = field(default_factory=dict)

    def by_action(self, action: Action) -> list[PlanItem]:
        return [i for i in self.items if i.action == action]

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {a: len(self.by_action(a)) for a in ACTIONS}
        if not out["referenced"]:
            del out["referenced"]  # only native profiles reference what others made
        return out

    @property
    def has_changes(self) -> bool:
        c = self.counts
        return bool(c["create"] or c["update"] or c["delete"])

    def summary(self) -> str:
        c = self.counts
        referenced = f", {c['referenced']} referenced" if c.get("referenced") else ""
        return (
            f"Plan: {c['create']} to create, {c['update']} to update, {c['delete']} to delete, "
            f"{c['unchanged']} unchanged{referenced}."
        )

    # ------------------------------------------------------------------ plan files
    def to_json(self) -> dict[str, Any]:
        return {
            "format": PLAN_FORMAT,
            "domain": self.domain,
            "job": self.job,
            "profile": self.profile,
            "summary": self.counts,
            "warnings": self.warnings,
            "deletes_blocked": self.deletes_blocked,
            "items": [
                {
                    "action": i.action,
                    "typeName": i.type_name,
                    "qualifiedName": i.qualified_name,
                    **({"guid": i.guid} if i.guid else {}),
                    **(
                        {
                            "changes": [
                                {"attribute": c.attribute, "before": c.before, "after": c.after}
                                for c in i.changes
                            ]
                        }
                        if i.changes
                        else {}
                    ),
                    "tier": i.tier,
                    "fingerprint": i.fingerprint,
                    **({"metadata": i.metadata} if i.metadata else {}),
                }
                for i in self.items
            ],
            "entities": [_desired_json(e) for e in self.desired.values()],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Plan:
        if not isinstance(doc, dict) or doc.get("format") != PLAN_FORMAT:
            raise AtlasSyncError(
                "not an atlas-sync plan file (or from another version)",
                hint="re-run `atlas-sync plan --out FILE`",
            )
        plan = cls(
            domain=doc["domain"],
            job=doc["job"],
            profile=doc["profile"],
            warnings=list(doc.get("warnings") or []),
        )
        plan.deletes_blocked = doc.get("deletes_blocked")
        for it in doc["items"]:
            plan.items.append(
                PlanItem(
                    action=it["action"],
                    type_name=it["typeName"],
                    qualified_name=it["qualifiedName"],
                    guid=it.get("guid"),
                    changes=[Change(c["attribute"], c["before"], c["after"]) for c in it.get("changes", [])],
                    tier=it.get("tier", 0),
                    fingerprint=it.get("fingerprint", "absent"),
                    metadata=it.get("metadata") or None,
                )
            )
        for e in doc.get("entities", []):
            d = _desired_from_json(e)
            plan.desired[d.key] = d
        return plan


@dataclass
class StreamedPlan(Plan):
    """A plan computed (and applied) chunk by chunk: counts of every action; items of every change,
    or of the first ``limit`` changes; unchanged items too unless ``limit`` is set."""

    totals: dict[str, int] = field(
        default_factory=lambda: {"create": 0, "update": 0, "delete": 0, "unchanged": 0}
    )
    omitted: int = 0
    limit: int | None = None
    # found unchanged by the job's receipt (reconcile.receipt): nothing rendered, read or listed
    by_receipt: bool = False

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


def _desired_json(e: DesiredEntity) -> dict[str, Any]:
    return {
        "typeName": e.type_name,
        "qualifiedName": e.qualified_name,
        "attributes": e.attributes,
        "refs": {
            k: (list(map(list, v)) if isinstance(v, list) else (list(v) if v else None))
            for k, v in e.refs.items()
        },
        "relationshipAttributes": sorted(e.rel_attrs),
        "createOnly": e.create_only,
        "tier": e.tier,
        **({"labels": e.labels} if e.labels else {}),
        **({"shared": True} if e.shared else {}),
        **({"metadata": e.metadata} if e.metadata else {}),
        **({"foreignMetadata": e.foreign_metadata} if e.foreign_metadata else {}),
    }


def _desired_from_json(d: dict[str, Any]) -> DesiredEntity:
    refs: dict[str, Key | list[Key] | None] = {}
    for k, v in d.get("refs", {}).items():
        if v is None:
            refs[k] = None
        elif v and isinstance(v[0], list):
            refs[k] = [(x[0], x[1]) for x in v]
        elif v == []:
            refs[k] = []
        else:
            refs[k] = (v[0], v[1])
    return DesiredEntity(
        type_name=d["typeName"],
        qualified_name=d["qualifiedName"],
        attributes=d["attributes"],
        refs=refs,
        rel_attrs=set(d.get("relationshipAttributes", [])),
        create_only=d.get("createOnly", {}),
        tier=d.get("tier", 0),
        labels=list(d.get("labels") or []),
        shared=bool(d.get("shared", False)),
        metadata=d.get("metadata") or None,
        foreign_metadata=d.get("foreignMetadata") or None,
    )


# ---------------------------------------------------------------------------------- diff
def _norm(v: Any) -> Any:
    """Compare values as Atlas stores them: ints and floats by value, lists as given."""
    t = type(v)
    if t is str or t is int or v is None or t is bool:  # (most values, as they are)
        return v
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, list):
        return [_norm(x) for x in v]
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    return v


def _ref_norm(v: Key | list[Key] | None) -> Any:
    if isinstance(v, list):
        return sorted(set(v))  # relationship arrays are SETs in our profiles and in Process
    return v


def diff_entity(desired: DesiredEntity, actual: ActualEntity) -> list[Change]:
    """Attribute-level changes needed to make ``actual`` match ``desired`` (only keys the desired sets)."""
    changes: list[Change] = []
    for k, v in desired.attributes.items():
        before = actual.attributes.get(k)
        if _norm(before) != _norm(v) and not (before in (None, "") and v in (None, "")):
            changes.append(Change(k, before, v))
    for k, v in desired.refs.items():
        before = actual.refs.get(k, [] if isinstance(v, list) else None)
        if _ref_norm(before) != _ref_norm(v):
            changes.append(Change(k, _show_refs(before), _show_refs(v)))
    return changes


def _show_refs(v: Any) -> Any:
    if isinstance(v, list):
        return sorted(k[1] for k in v)
    if isinstance(v, tuple):
        return v[1]
    return v


@dataclass
class PlanOptions:
    allow_delete: bool = True
    max_delete_percent: float = 50.0
    force: bool = False
    input_has_errors: bool = False
    # an input that produced nothing deletes the job's entities (sync --allow-empty, teardown --job)
    allow_empty: bool = False
    # the input is part of its job's lineage (a dbt selection or run): it deletes nothing
    partial: bool = False
    # native profiles: a dataset missing from Atlas is created (ours), left out, or refuses the plan
    missing_datasets: str = "create"


def plan_item(e: DesiredEntity, a: ActualEntity | None) -> PlanItem:
    """Create when Atlas lacks ``e``, else update (with the attribute changes) or unchanged."""
    if a is None:
        return PlanItem("create", e.type_name, e.qualified_name, tier=e.tier)
    changes = diff_entity(e, a)
    return PlanItem(
        "update" if changes else "unchanged",
        e.type_name,
        e.qualified_name,
        guid=a.guid,
        changes=changes,
        tier=e.tier,
        fingerprint=fingerprint(a),
    )


def foreign_process(type_name: str, qualified_name: str, owner: str, job: str) -> PlanRefused:
    return PlanRefused(
        f"{type_name} {qualified_name!r} belongs to job {owner!r}, not {job!r}",
        hint="a job never changes another job's processes: give this job its own name with --job, "
        "or another --domain",
    )


def check_deletes(
    count: int, scope: int, has_input: bool, domain: str, job: str, opts: PlanOptions
) -> str | None:
    """The fail-safes on ``count`` deletes out of ``scope`` entities: why they are skipped (``None``:
    they go ahead); raises :class:`PlanRefused` when they are too many."""
    if opts.partial:
        return f"{count} deletes skipped: the input is part of the job's lineage (a selection or a run)"
    if not opts.allow_delete:
        return f"{count} deletes skipped (--no-delete)"
    if opts.input_has_errors:
        return f"{count} deletes skipped: the input had errors"
    if not has_input and not opts.allow_empty:
        return (
            f"{count} deletes skipped: the input produced nothing "
            "(--allow-empty deletes the job's entities it no longer has; `atlas-sync teardown --job` too)"
        )
    pct = 100.0 * count / max(1, scope)
    if pct > opts.max_delete_percent and not opts.force:
        raise PlanRefused(
            f"the plan would delete {count} of the {scope} entities of domain {domain!r} "
            f"(job {job!r}; {pct:.0f}% > --max-delete-percent {opts.max_delete_percent:g})",
            hint="check the input; if this is intended, re-run with --force or --max-delete-percent "
            f"{math.ceil(pct)} (or --no-delete to skip the deletes)",
        )
    return None


_METADATA_LINES = frozenset({"classifications", "labels", "terms", "businessMetadata"})


def plan_text(plan: Plan, *, show_unchanged: bool = False) -> str:
    """Terraform-style rendering: ``+`` create, ``~`` update with changes, ``-`` delete, and a summary."""
    lines: list[str] = []
    sym = {"create": "+", "update": "~", "delete": "-", "unchanged": "=", "referenced": "&"}
    for i in plan.items:
        if i.action == "unchanged" and not show_unchanged:
            continue
        note = "  (exists, not ours: referenced)" if i.action == "referenced" else ""
        lines.append(f"  {sym[i.action]} {i.type_name} {i.qualified_name}{note}")
        for c in i.changes:
            if (
                i.metadata
                and c.before is None
                and isinstance(c.after, str)
                and c.attribute in _METADATA_LINES
            ):
                lines.append(f"      ~ {c.attribute}: {c.after}")  # e.g. `~ classifications: +PII -Old`
                continue
            lines.append(
                f"      {c.attribute}: {json.dumps(c.before, ensure_ascii=False)} -> {json.dumps(c.after, ensure_ascii=False)}"
            )
    for w in plan.warnings:
        lines.append(f"warning: {w}")
    lines.append(plan.summary())
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- native profiles
def missing_to_skip(missing: set[Key], outputs: Mapping[Key, list[Key]], policy: str) -> set[Key]:
    """Under ``--missing-datasets`` ``policy``, what to leave out: nothing for ``create``; for ``skip`` the
    missing datasets and, repeatedly, what only writes left-out ones (``outputs``: an entity's outputs);
    ``fail`` refuses the plan."""
    if policy == "create" or not missing:
        return set()
    if policy == "fail":
        shown = ", ".join(f"{t} {qn}" for t, qn in sorted(missing)[:5])
        raise PlanRefused(
            f"{counted(len(missing), 'dataset')} {'is' if len(missing) == 1 else 'are'} missing from Atlas "
            f"(--missing-datasets fail): {shown}",
            hint="run the hook (or its import script) first, or use --missing-datasets create|skip",
        )
    skipped = set(missing)
    grown = True
    while grown:
        grown = False
        for k, outs in outputs.items():
            if k not in skipped and outs and all(o in skipped for o in outs):
                skipped.add(k)
                grown = True
    return skipped


def without_refs_to(e: DesiredEntity, skipped: set[Key]) -> DesiredEntity:
    """``e`` without references to left-out entities."""
    if not skipped:
        return e
    refs: dict[str, Key | list[Key] | None] = {}
    for name, v in e.refs.items():
        refs[name] = (
            [k for k in v if k not in skipped] if isinstance(v, list) else (None if v in skipped else v)
        )
    return dataclasses.replace(e, refs=refs) if refs != e.refs else e
