"""Typedef diff: desired (bundle) vs actual (server), per type.

Server responses carry fields a client never sent (guid, version, createTime, subTypes, ...) and
normalised defaults (cardinality, valuesMinCount/MaxCount, isIndexable, searchWeight, a description
that defaults to the type name). Both sides are normalised the same way so an unchanged type
compares equal, and a field the bundle leaves unset is never reported as a change.

Each type is classified ``create``, ``update`` (with the exact changes), ``unchanged`` or
``incompatible`` (with the Atlas error the request would cause and what to do instead).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from atlas_sync.typedefs.bundle import Bundle, ServerTypes, TypeEntry, describe
from atlas_sync.typedefs.model import CATEGORY_LISTS

Action = Literal["create", "update", "unchanged", "incompatible"]
SYMBOLS: dict[str, str] = {"create": "+", "update": "~", "unchanged": "=", "incompatible": "!"}

REBUILD_HINT = (
    "Atlas cannot make this change in place. Keep the old shape (add a new attribute name instead), "
    "or for a demo domain tear it down and rebuild: atlas-sync typedefs delete --with-entities, then apply"
)

# Attribute fields compared, with the value Atlas uses when they are absent.
_ATTR_DEFAULTS: dict[str, Any] = {
    "isOptional": False,
    "cardinality": "SINGLE",
    "isUnique": False,
    "isIndexable": False,
    "includeInNotification": False,
    "searchWeight": -1,
}
# Compared only when the bundle sets them (the server may fill or keep them otherwise).
_ATTR_OPTIONAL_FIELDS = ("description", "defaultValue", "options", "indexType", "displayName")
_END_FIELDS = ("type", "name", "isContainer", "cardinality")


@dataclass(frozen=True)
class Incompatibility:
    """A change Atlas would refuse: which Atlas error, in words, and what to do."""

    message: str
    code: str
    hint: str = REBUILD_HINT

    def to_dict(self) -> dict[str, str]:
        return {"message": self.message, "atlasError": self.code, "hint": self.hint}


@dataclass
class TypeChange:
    """The plan for one type."""

    name: str
    category: str
    action: Action
    file: str
    summary: str
    changes: list[str] = field(default_factory=list)
    problems: list[Incompatibility] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    desired: dict[str, Any] = field(default_factory=dict)
    current: dict[str, Any] | None = None
    body: dict[str, Any] | None = None  # what POST/PUT would send for this type

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.action]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "category": self.category,
            "action": self.action,
            "file": self.file,
            "changes": list(self.changes),
        }
        if self.problems:
            out["incompatible"] = [p.to_dict() for p in self.problems]
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def line(self) -> str:
        if self.action == "create":
            detail = self.summary
        elif self.action == "update":
            detail = "; ".join(self.changes)
        elif self.action == "incompatible":
            detail = "; ".join(f"{p.message} ({p.code})" for p in self.problems)
        else:
            detail = ""
        return f"{self.symbol} {self.name}" + (f": {detail}" if detail else "")


@dataclass
class TypedefPlan:
    """What ``apply_typedefs`` would do, per type, in dependency order."""

    bundle: Bundle
    items: list[TypeChange]
    target: str = ""

    @property
    def order(self) -> list[str]:
        return [i.name for i in self.items]

    def by_action(self, action: Action) -> list[TypeChange]:
        return [i for i in self.items if i.action == action]

    @property
    def creates(self) -> list[TypeChange]:
        return self.by_action("create")

    @property
    def updates(self) -> list[TypeChange]:
        return self.by_action("update")

    @property
    def incompatible(self) -> list[TypeChange]:
        return self.by_action("incompatible")

    @property
    def has_changes(self) -> bool:
        return any(i.action != "unchanged" for i in self.items)

    def counts(self) -> dict[str, int]:
        c: Counter[str] = Counter(i.action for i in self.items)
        return {a: c[a] for a in SYMBOLS}

    def summary(self) -> str:
        c = self.counts()
        return (
            f"Plan: {c['create']} to create, {c['update']} to update, {c['unchanged']} unchanged, "
            f"{c['incompatible']} incompatible."
        )

    def create_body(self) -> dict[str, Any]:
        return _typesdef(i for i in self.items if i.action == "create")

    def update_body(self) -> dict[str, Any]:
        return _typesdef(i for i in self.items if i.action == "update")

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "sources": list(self.bundle.sources),
            "order": self.order,
            "types": [i.to_dict() for i in self.items],
            "summary": self.counts(),
        }

    def render(self, *, verbose: bool = False) -> str:
        lines = []
        head = f"Typedef plan for {', '.join(self.bundle.sources)}"
        if self.target:
            head += f" against {self.target}"
        lines.append(head)
        lines.append("Order: " + " -> ".join(self.order))
        for i in self.items:
            lines.append("  " + i.line())
            if i.action == "incompatible":
                for p in i.problems:
                    lines.append(f"      what to do: {p.hint}")
            if verbose or i.action != "unchanged":
                for n in i.notes:
                    lines.append(f"      note: {n}")
        lines.append(self.summary())
        return "\n".join(lines)


def _typesdef(items: Iterator[TypeChange] | Any) -> dict[str, Any]:
    body: dict[str, Any] = {lst: [] for lst in CATEGORY_LISTS.values()}
    for i in items:
        if i.body is not None:
            body[CATEGORY_LISTS[i.category]].append(i.body)
    return body


# -- planning --------------------------------------------------------------------------------


def plan_against(bundle: Bundle, server: ServerTypes | Mapping[str, Any], *, target: str = "") -> TypedefPlan:
    """Plan ``bundle`` against the server's typedefs (a :class:`ServerTypes` or the raw
    ``AtlasTypesDef`` of ``GET /v2/types/typedefs``). Pure: no request. Raises
    :class:`~atlas_sync.typedefs.bundle.BundleError` for dangling references, cycles and other
    problems, before anything is sent. A server that holds every type as the bundle defines it
    resolved their references itself: the types they refer to (DataSet, ...) need not be in ``server``."""
    st = server if isinstance(server, ServerTypes) else ServerTypes(server)
    items = [diff_type(bundle.entries[name], st) for name in bundle.order()]
    bundle.resolve(st, strict=not _all_unchanged(items))
    return TypedefPlan(bundle=bundle, items=items, target=target)


def holds(bundle: Bundle, server: ServerTypes) -> bool:
    """Whether ``server`` has every type of ``bundle`` as the bundle defines it (nothing to write)."""
    return _all_unchanged(diff_type(e, server) for e in bundle.entries.values())


def _all_unchanged(items: Iterable[TypeChange]) -> bool:
    return all(i.action == "unchanged" for i in items)


def diff_type(entry: TypeEntry, server: ServerTypes) -> TypeChange:
    """Classify one type against the server's copy."""
    desired = entry.atlas()
    current = server.get(entry.name)
    tc = TypeChange(
        name=entry.name,
        category=entry.category,
        action="create",
        file=entry.file,
        summary=describe(entry),
        desired=desired,
        current=current,
    )
    if current is None:
        tc.body = desired
        return tc
    cur_cat = server.categories[entry.name]
    if cur_cat != entry.category:
        tc.action = "incompatible"
        tc.problems.append(
            Incompatibility(
                f"exists on the server as a {cur_cat} type, the bundle defines a {entry.category} type",
                "POST: 409 ATLAS-409-00-001 already exists; PUT: 404 ATLAS-404-00-001",
                "rename the type in the bundle, or delete the server's type first",
            )
        )
        return tc
    changes, problems, notes = _compare(entry.category, desired, current)
    tc.changes, tc.problems, tc.notes = changes, problems, notes
    if problems:
        tc.action = "incompatible"
    elif changes:
        tc.action = "update"
        tc.body = merged_update(entry.category, desired, current)
    else:
        tc.action = "unchanged"
    return tc


def _compare(
    category: str, desired: Mapping[str, Any], current: Mapping[str, Any]
) -> tuple[list[str], list[Incompatibility], list[str]]:
    changes: list[str] = []
    problems: list[Incompatibility] = []
    notes: list[str] = []
    name = desired["name"]

    # Def-level fields: only those the bundle sets (Atlas keeps the old value when a PUT omits them).
    for key in ("description", "typeVersion", "serviceType"):
        want = desired.get(key)
        if want is not None and want != current.get(key):
            changes.append(f"{key} {_show(current.get(key))} -> {_show(want)}")
    if desired.get("options") is not None and (desired.get("options") or {}) != (
        current.get("options") or {}
    ):
        changes.append(f"options {_show(current.get('options'))} -> {_show(desired.get('options'))}")

    if category in ("ENTITY", "CLASSIFICATION"):
        want_s = list(desired.get("superTypes") or [])
        have_s = list(current.get("superTypes") or [])
        for s in have_s:
            if s not in want_s:
                problems.append(
                    Incompatibility(
                        f"removes supertype {s}", "400 ATLAS-400-00-00E superType remove not supported"
                    )
                )
        added = [s for s in want_s if s not in have_s]
        if added:
            changes.append("add supertype " + ", ".join(added))
            notes.append("existing instances are not re-tagged with a supertype added by update")
    if category == "CLASSIFICATION":
        want_e = sorted(desired.get("entityTypes") or [])
        have_e = sorted(current.get("entityTypes") or [])
        if want_e != have_e:
            changes.append(f"entityTypes {_show(have_e)} -> {_show(want_e)}")

    if category == "ENUM":
        have_v = [e.get("value") for e in current.get("elementDefs") or []]
        want_v = [e.get("value") for e in desired.get("elementDefs") or []]
        added = [v for v in want_v if v not in have_v]
        if added:
            changes.append("add enum value " + ", ".join(map(str, added)))
        dropped = [v for v in have_v if v not in want_v]
        if dropped:
            # Atlas's own loader merges old elements back; so do we.
            notes.append(
                ("enum values" if len(dropped) > 1 else "enum value")
                + " not in the bundle "
                + ("are" if len(dropped) > 1 else "is")
                + " kept on the server: "
                + ", ".join(map(str, dropped))
            )
        if desired.get("defaultValue") is not None and desired.get("defaultValue") != current.get(
            "defaultValue"
        ):
            changes.append(
                f"defaultValue {_show(current.get('defaultValue'))} -> {_show(desired['defaultValue'])}"
            )

    if category == "RELATIONSHIP":
        cat_want = desired.get("relationshipCategory") or "ASSOCIATION"
        cat_have = current.get("relationshipCategory") or "ASSOCIATION"
        if cat_want != cat_have:
            problems.append(
                Incompatibility(
                    f"changes relationshipCategory {cat_have} -> {cat_want}",
                    "400 ATLAS-400-00-039 relationshipCategory update not allowed",
                )
            )
        for key in ("endDef1", "endDef2"):
            w, h = _norm_end(desired.get(key) or {}), _norm_end(current.get(key) or {})
            diffs = [f for f in _END_FIELDS if w[f] != h[f]]
            if diffs:
                problems.append(
                    Incompatibility(
                        f"changes {key} " + ", ".join(f"{f} {_show(h[f])} -> {_show(w[f])}" for f in diffs),
                        "400 ATLAS-400-00-037/038 relationship end update not allowed",
                    )
                )
            elif w["isLegacyAttribute"] != h["isLegacyAttribute"]:
                changes.append(
                    f"{key}.isLegacyAttribute {h['isLegacyAttribute']} -> {w['isLegacyAttribute']}"
                )
        pt_want = desired.get("propagateTags") or "NONE"
        pt_have = current.get("propagateTags") or "NONE"
        if pt_want != pt_have:
            changes.append(f"propagateTags {pt_have} -> {pt_want}")
        label = desired.get("relationshipLabel")
        if label is not None and label != current.get("relationshipLabel"):
            problems.append(
                Incompatibility(
                    f"changes relationshipLabel {_show(current.get('relationshipLabel'))} -> {_show(label)}",
                    "not refused by Atlas, but existing relationships keep the old edge label",
                )
            )

    if category != "ENUM":
        c2, p2 = _compare_attributes(
            name, desired.get("attributeDefs") or [], current.get("attributeDefs") or []
        )
        changes.extend(c2)
        problems.extend(p2)
    return changes, problems, notes


def _compare_attributes(
    type_name: str, desired: list[Mapping[str, Any]], current: list[Mapping[str, Any]]
) -> tuple[list[str], list[Incompatibility]]:
    changes: list[str] = []
    problems: list[Incompatibility] = []
    have = {a.get("name"): a for a in current}
    want = {a.get("name"): a for a in desired}
    for n, a in want.items():
        h = have.get(n)
        if h is None:
            if a.get("isOptional", False):
                changes.append(f"add optional attribute {n}: {a.get('typeName')}")
            else:
                problems.append(
                    Incompatibility(
                        f"adds mandatory attribute {n}",
                        f"400 ATLAS-400-00-00C {type_name}.{n} : can not add mandatory attribute",
                        'make it optional ("isOptional": true), or (demo domains only) remove the types with their entities and apply again: atlas-sync typedefs delete --with-entities, then atlas-sync typedefs apply',
                    )
                )
            continue
        if _norm_type(a.get("typeName")) != _norm_type(h.get("typeName")):
            problems.append(
                Incompatibility(
                    f"changes the type of attribute {n} {h.get('typeName')} -> {a.get('typeName')}",
                    "400 ATLAS-400-00-029 Data type update for attribute is not supported",
                    "add a new attribute with another name instead, or (demo domains only) remove the types with their entities and apply again: atlas-sync typedefs delete --with-entities, then atlas-sync typedefs apply",
                )
            )
            continue
        for f, default in _ATTR_DEFAULTS.items():
            w = a.get(f, default)
            hv = h.get(f, default)
            w = default if w is None else w
            hv = default if hv is None else hv
            if w != hv:
                changes.append(f"{n}.{f} {_show(hv)} -> {_show(w)}")
        for f in _ATTR_OPTIONAL_FIELDS:
            w = a.get(f)
            if w is not None and w != h.get(f):
                changes.append(f"{n}.{f} {_show(h.get(f))} -> {_show(w)}")
    for n in have:
        if n not in want:
            problems.append(
                Incompatibility(
                    f"removes attribute {n}",
                    f"400 ATLAS-400-00-00D {type_name}.{n} : attribute delete not supported",
                    f"put {n!r} back in the bundle (Atlas keeps it anyway), or (demo domains only) remove the types with their entities and apply again: atlas-sync typedefs delete --with-entities, then atlas-sync typedefs apply",
                )
            )
    return changes, problems


def _norm_type(t: Any) -> str:
    return "".join(str(t or "").split())


def _norm_end(end: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": end.get("type"),
        "name": end.get("name"),
        "isContainer": bool(end.get("isContainer", False)),
        "cardinality": end.get("cardinality") or "SINGLE",
        "isLegacyAttribute": bool(end.get("isLegacyAttribute", False)),
    }


def _show(v: Any) -> str:
    if v is None:
        return "(unset)"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


# -- update bodies ---------------------------------------------------------------------------

_SERVER_ONLY = (
    "guid",
    "createdBy",
    "updatedBy",
    "createTime",
    "updateTime",
    "version",
    "category",
    "subTypes",
    "relationshipAttributeDefs",
    "businessAttributeDefs",
    "attributeDefOverrides",
    "dateFormatter",
)


def merged_update(category: str, desired: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """The PUT body for one type: the bundle's def, plus every attribute and supertype the server
    has that the bundle lacks (Atlas refuses to drop them), plus the server's ``options`` when the
    bundle sets none (a PUT without ``options`` would clear them)."""
    body = {k: v for k, v in desired.items() if k not in _SERVER_ONLY}
    if category != "ENUM":
        attrs = list(body.get("attributeDefs") or [])
        names = {a.get("name") for a in attrs}
        for a in current.get("attributeDefs") or []:
            if a.get("name") not in names:
                attrs.append({k: v for k, v in a.items() if v is not None})
        body["attributeDefs"] = attrs
    else:
        els = list(body.get("elementDefs") or [])
        values = {e.get("value") for e in els}
        next_ordinal = max([e.get("ordinal") or 0 for e in els] + [-1]) + 1
        for e in current.get("elementDefs") or []:
            if e.get("value") not in values:
                kept = dict(e)
                if any(x.get("ordinal") == kept.get("ordinal") for x in els):
                    kept["ordinal"] = next_ordinal
                    next_ordinal += 1
                els.append(kept)
        body["elementDefs"] = els
    if category in ("ENTITY", "CLASSIFICATION"):
        supers = list(body.get("superTypes") or [])
        for s in current.get("superTypes") or []:
            if s not in supers:
                supers.append(s)
        body["superTypes"] = supers
    if body.get("options") is None and current.get("options"):
        body["options"] = dict(current["options"])
    return body
