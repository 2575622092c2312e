"""Typedef endpoints (contract §1): GET with filters, headers, by name/guid; POST create; PUT update;
DELETE by body and by name. Functions take the emulator's :class:`~atlas_sync.emulator.state.State` and
return plain JSON values; errors are raised as :class:`AtlasApiError`."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.errors import AtlasApiError, BadJsonError, InternalError
from atlas_sync.emulator.types import (
    CATEGORY_KEYS,
    KEY_CATEGORIES,
    LIST_KEYS,
    PRIMITIVES,
    Registry,
    check_type_name,
    normalize_attribute,
    normalize_end,
    parse_type,
)

if TYPE_CHECKING:
    from atlas_sync.emulator.state import State

# Atlas 2.4 has no reserved-name check; these names clash with type-vertex property keys and fail with
# a 500 (checklist TD-027).
RESERVED_NAMES = {"description", "version", "options", "servicetype"}
# A type named "name" is different on a real 2.4.0 (docs/real-atlas-differences.md RA-05): the create
# answers 200 with the def renamed "[]" and described "name", the type then reads back as "name", and
# creating it again is a plain 500 (not a 409).
NAME_CLASH = "name"
# Creation order inside one request (contract §1.5 step 3).
CREATE_ORDER = (
    "enumDefs",
    "structDefs",
    "classificationDefs",
    "entityDefs",
    "relationshipDefs",
    "businessMetadataDefs",
)
MAX_PARAM = 4096


def empty_types() -> dict[str, list[Any]]:
    return {k: [] for k in LIST_KEYS}


def check_param_length(name: str, value: str) -> None:
    if len(value) > MAX_PARAM:
        raise AtlasApiError("ATLAS-400-00-057", name)


# ---------------------------------------------------------------------- reads
def search_typedefs(state: State, query: dict[str, list[str]]) -> dict[str, list[Any]]:
    reg = state.registry
    # the first value of each parameter (getParameter); a blank one is no filter (StringUtils.isNotBlank)
    q = {k: v[0] for k, v in query.items() if v and v[0].strip()}
    wanted_cat = q.get("type", "").upper()
    wanted_cat = {"CLASS": "ENTITY", "TRAIT": "CLASSIFICATION"}.get(wanted_cat, wanted_cat)
    not_names = {q["notname"]} if "notname" in q else set()
    not_supers = {q["notsupertype"]} if "notsupertype" in q else set()
    if q.get("excludeInternalTypesAndReferences", "").lower() == "true":
        not_names.add("__internal")
        not_supers.add("__internal")
    out = empty_types()
    for name, d in reg.defs.items():
        cat = d["category"]
        if wanted_cat and cat != wanted_cat:
            continue
        if "name" in q and name != q["name"]:
            continue
        if name in not_names:
            continue
        supers = _supers(reg, name)
        if "supertype" in q and q["supertype"] not in supers:
            continue
        if not_supers & supers:
            continue
        if "servicetype" in q and d.get("serviceType") != q["servicetype"]:
            continue
        if "notservicetype" in q and d.get("serviceType") == q["notservicetype"]:
            continue
        out[CATEGORY_KEYS[cat]].append(reg.render(name))
    return out


def _supers(reg: Registry, name: str) -> frozenset[str]:
    et = reg.entities.get(name)
    if et is not None:
        return et.supers
    d = reg.defs[name]
    if d["category"] != "CLASSIFICATION":
        return frozenset()
    acc: set[str] = set()
    todo = list(d.get("superTypes") or [])
    while todo:
        s = todo.pop()
        if s not in acc:
            acc.add(s)
            todo.extend(reg.defs.get(s, {}).get("superTypes") or [])
    return frozenset(acc)


def typedef_headers(state: State, query: dict[str, list[str]]) -> list[dict[str, Any]]:
    found = search_typedefs(state, query)
    out = []
    for key in LIST_KEYS:
        for d in found[key]:
            h = {"guid": d["guid"], "name": d["name"], "category": d["category"]}
            if d.get("serviceType"):
                h["serviceType"] = d["serviceType"]
            out.append(h)
    return out


ENTITY_ROOT = {
    "category": "ENTITY",
    "name": "__ENTITY_ROOT",
    "description": "Root entity for system attributes",
    "typeVersion": "1.0",
    "superTypes": [],
    "attributeDefs": [
        normalize_attribute({"name": n, "typeName": t, "isOptional": True, "isIndexable": True})
        for n, t in (
            ("__guid", "string"),
            ("__typeName", "string"),
            ("__state", "string"),
            ("__createdBy", "string"),
            ("__modifiedBy", "string"),
            ("__timestamp", "date"),
            ("__modificationTimestamp", "date"),
            ("__classificationNames", "string"),
            ("__labels", "string"),
            ("__isIncomplete", "int"),
        )
    ],
}


def typedef_by_name(state: State, name: str, category: str | None = None) -> dict[str, Any]:
    check_param_length("name", name)
    if category == "ENTITY" and name == "_ALL_ENTITY_TYPES":
        return dict(ENTITY_ROOT)
    reg = state.registry
    d = reg.defs.get(name)
    if d is None or (category is not None and d["category"] != category):
        if category is None:
            kind = parse_type(name)[0]
            if kind == "array":
                raise AtlasApiError("ATLAS-400-00-024", "ARRAY")
            if kind == "map":
                raise AtlasApiError("ATLAS-400-00-024", "MAP")
            if name in PRIMITIVES:
                raise AtlasApiError("ATLAS-400-00-024", "PRIMITIVE")
            if name == "objectid":
                raise AtlasApiError("ATLAS-400-00-024", "OBJECT_ID_TYPE")
        raise AtlasApiError("ATLAS-404-00-001", name)
    return reg.render(name)


def typedef_by_guid(state: State, guid: str, category: str | None = None) -> dict[str, Any]:
    check_param_length("guid", guid)
    reg = state.registry
    for name, d in reg.defs.items():
        if d["guid"] == guid and (category is None or d["category"] == category):
            return reg.render(name)
    raise AtlasApiError("ATLAS-404-00-002", guid)


# ---------------------------------------------------------------------- body parsing
def _types_body(body: Any) -> dict[str, list[dict[str, Any]]]:
    if not isinstance(body, dict):
        raise BadJsonError("Cannot deserialize value of type `AtlasTypesDef` from non-object value")
    out: dict[str, list[dict[str, Any]]] = {}
    for key in LIST_KEYS:
        value = body.get(key)
        if value is None:
            out[key] = []
            continue
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            raise BadJsonError(f"Cannot deserialize value of type `java.util.ArrayList` from `{key}`")
        out[key] = value
    return out


def normalize_def(d: dict[str, Any], category: str, user: str, now: int) -> dict[str, Any]:
    """A def as stored at creation: defaults filled in (contract §1.4)."""
    name = d.get("name")
    out: dict[str, Any] = {
        "category": category,
        "guid": d.get("guid") or str(uuid.uuid4()),
        "createdBy": d.get("createdBy") or user,
        "updatedBy": d.get("updatedBy") or user,
        "createTime": d.get("createTime") or now,
        "updateTime": d.get("updateTime") or now,
        "version": d.get("version") or 1,
        "name": name,
        "description": d.get("description") or name,
        "typeVersion": d.get("typeVersion") or "1.0",
    }
    if d.get("serviceType"):
        out["serviceType"] = d["serviceType"]
    if d.get("options") is not None:
        out["options"] = d["options"]
    _category_fields(out, d, category)
    return out


def _category_fields(out: dict[str, Any], d: dict[str, Any], category: str) -> None:
    if category == "ENUM":
        elems = []
        for i, e in enumerate(d.get("elementDefs") or []):
            el = {"value": e.get("value"), "ordinal": e.get("ordinal", i)}
            if e.get("description") is not None:
                el["description"] = e["description"]
            elems.append(el)
        out["elementDefs"] = elems
        if d.get("defaultValue") is not None:
            out["defaultValue"] = d["defaultValue"]
        return
    out["attributeDefs"] = [normalize_attribute(a) for a in d.get("attributeDefs") or []]
    if category in ("ENTITY", "CLASSIFICATION"):
        out["superTypes"] = list(d.get("superTypes") or [])
    if category == "CLASSIFICATION":
        out["entityTypes"] = list(d.get("entityTypes") or [])
    if category == "RELATIONSHIP":
        out["relationshipCategory"] = d.get("relationshipCategory") or "ASSOCIATION"
        if d.get("relationshipLabel"):
            out["relationshipLabel"] = d["relationshipLabel"]
        out["propagateTags"] = d.get("propagateTags") or "NONE"
        out["endDef1"] = normalize_end(d.get("endDef1") or {})
        out["endDef2"] = normalize_end(d.get("endDef2") or {})


def _pre_create_checks(d: dict[str, Any], category: str, existing: dict[str, Any], seen: set[str]) -> None:
    name = d.get("name") or ""
    check_type_name(name, category)
    if name.lower() in RESERVED_NAMES or (name == NAME_CLASH and name in existing):
        raise InternalError(f"type name {name} clashes with a type-vertex property")
    if name in existing or name in seen:
        raise AtlasApiError("ATLAS-409-00-001", name)
    for a in d.get("attributeDefs") or []:
        if not a.get("name"):
            raise AtlasApiError("ATLAS-400-00-02B", name, "name")
        if not a.get("typeName"):
            raise AtlasApiError("ATLAS-400-00-02B", name, "typeName")


# ---------------------------------------------------------------------- writes
def create_typedefs(state: State, body: Any) -> dict[str, list[Any]]:
    """POST /typedefs: all-or-nothing; 409 if any name exists (contract §1.5)."""
    req = _types_body(body)
    reg = state.registry
    now = state.now()
    new_defs: list[tuple[str, dict[str, Any]]] = []
    transient = dict(reg.defs)
    for key in LIST_KEYS:
        cat = KEY_CATEGORIES[key]
        for d in req[key]:
            nd = normalize_def(d, cat, state.user, now)
            transient[str(nd["name"])] = nd
            new_defs.append((key, nd))
    # resolve everything first (order inside the request is irrelevant), then the per-def checks
    Registry(transient)
    seen: set[str] = set()
    for key in CREATE_ORDER:
        for d in req[key]:
            _pre_create_checks(d, KEY_CATEGORIES[key], reg.defs, seen)
            seen.add(str(d.get("name")))
    new_reg = Registry(transient)
    state.save_defs([nd for _, nd in new_defs])
    state.stage_registry(new_reg)
    out = empty_types()
    for key, nd in new_defs:
        rendered = new_reg.render(str(nd["name"]))
        if nd["name"] == NAME_CLASH:
            # the response def's "name" holds "[]" and the name moves to "description" (seen on 2.4.0)
            rendered = {**rendered, "name": "[]", "description": NAME_CLASH}
        out[key].append(rendered)
    return out


def update_typedefs(state: State, body: Any) -> dict[str, list[Any]]:
    """PUT /typedefs: existing types only; attributes and supertypes may only be added."""
    req = _types_body(body)
    reg = state.registry
    now = state.now()
    transient = dict(reg.defs)
    updated: list[tuple[str, dict[str, Any]]] = []
    for key in LIST_KEYS:
        cat = KEY_CATEGORIES[key]
        for d in req[key]:
            old = _find_for_update(reg, d, cat)
            nd = _apply_update(old, d, cat, state.user, now)
            transient[str(nd["name"])] = nd
            updated.append((key, nd))
    new_reg = Registry(transient)
    state.save_defs([nd for _, nd in updated])
    state.stage_registry(new_reg)
    out = empty_types()
    for key, nd in updated:
        out[key].append(new_reg.render(str(nd["name"])))
    return out


def _find_for_update(reg: Registry, d: dict[str, Any], cat: str) -> dict[str, Any]:
    guid = d.get("guid")
    if guid:
        for by_guid in reg.defs.values():
            if by_guid["guid"] == guid:
                if by_guid["category"] != cat:
                    raise AtlasApiError("ATLAS-404-00-002", guid)
                return by_guid
    name = d.get("name")
    old = reg.defs.get(str(name))
    if old is None or old["category"] != cat:
        raise AtlasApiError("ATLAS-404-00-001", name)
    return old


def _apply_update(old: dict[str, Any], d: dict[str, Any], cat: str, user: str, now: int) -> dict[str, Any]:
    name = old["name"]
    nd = {k: v for k, v in old.items() if k in ("category", "guid", "createdBy", "createTime", "name")}
    nd["updatedBy"] = user
    nd["updateTime"] = now
    nd["version"] = int(old.get("version") or 1) + 1
    for key in ("description", "typeVersion", "serviceType"):
        value = d.get(key) if d.get(key) else old.get(key)
        if value:
            nd[key] = value
    if d.get("options") is not None:
        nd["options"] = d["options"]
    _category_fields(nd, d, cat)
    if cat == "ENUM":
        return nd
    old_attrs = {a["name"]: a for a in old.get("attributeDefs") or []}
    new_attrs = {a.get("name"): a for a in d.get("attributeDefs") or []}
    for attr_name, oa in old_attrs.items():
        na = new_attrs.get(attr_name)
        if na is None:
            raise AtlasApiError("ATLAS-400-00-00D", name, attr_name)
        if na.get("typeName") != oa["typeName"]:
            raise AtlasApiError("ATLAS-400-00-029", "Data type update for attribute is not supported")
    for attr_name, na in new_attrs.items():
        if attr_name not in old_attrs:
            if not attr_name:
                raise AtlasApiError("ATLAS-400-00-02B", name, "name")
            if not na.get("isOptional", False):
                raise AtlasApiError("ATLAS-400-00-00C", name, attr_name)
    if cat in ("ENTITY", "CLASSIFICATION") and not set(old.get("superTypes") or []) <= set(nd["superTypes"]):
        raise AtlasApiError("ATLAS-400-00-00E")
    if cat == "RELATIONSHIP":
        if nd["relationshipCategory"] != old["relationshipCategory"]:
            raise AtlasApiError(
                "ATLAS-400-00-039", name, nd["relationshipCategory"], old["relationshipCategory"]
            )
        # AtlasRelationshipDefStoreV2.preUpdateCheck: any change to an end's type, name, isContainer or
        # cardinality is refused, 037 for endDef1 and 038 for endDef2
        for end, code in (("endDef1", "ATLAS-400-00-037"), ("endDef2", "ATLAS-400-00-038")):
            o, n = old[end], nd[end]
            if any(o.get(k) != n.get(k) for k in ("type", "name", "isContainer", "cardinality")):
                raise AtlasApiError(code, name, _end_text(n), _end_text(o))
    return nd


def _java(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _end_text(e: dict[str, Any]) -> str:
    """``AtlasRelationshipEndDef.toString()``, which Atlas puts into its end-update error messages."""
    keys = ("name", "description", "isContainer", "cardinality", "isLegacyAttribute")
    body = ", ".join(f"{k}==>'{_java(e.get(k))}'" for k in keys)
    return "AtlasRelationshipEndDef{type='" + _java(e.get("type")) + "', " + body + "}"


def delete_typedefs(state: State, body: Any) -> None:
    """DELETE /typedefs with a body: the listed defs go together (mutual references allowed)."""
    req = _types_body(body)
    reg = state.registry
    names: list[str] = []
    for key in LIST_KEYS:
        cat = KEY_CATEGORIES[key]
        for d in req[key]:
            guid = d.get("guid")
            found = None
            if d.get("name") in reg.defs and reg.defs[d["name"]]["category"] == cat:
                found = d["name"]
            elif guid:
                found = next(
                    (n for n, x in reg.defs.items() if x["guid"] == guid and x["category"] == cat), None
                )
                if found is None:
                    raise AtlasApiError("ATLAS-404-00-002", guid)
            if found is None:
                raise AtlasApiError("ATLAS-404-00-001", d.get("name"))
            names.append(found)
    _delete(state, names)


def delete_typedef_by_name(state: State, name: str) -> None:
    check_param_length("name", name)
    if name not in state.registry.defs:
        raise AtlasApiError("ATLAS-404-00-001", name)
    _delete(state, [name])


def _delete(state: State, names: list[str]) -> None:
    reg = state.registry
    doomed = set(names)
    # relationshipDefs first, then the others (contract §1.7)
    ordered = sorted(names, key=lambda n: 0 if reg.defs[n]["category"] == "RELATIONSHIP" else 1)
    for name in ordered:
        d = reg.defs[name]
        cat = d["category"]
        if cat == "RELATIONSHIP":
            if state.relationship_type_in_use(name):
                raise AtlasApiError("ATLAS-409-00-002", name)
            continue
        if cat == "ENTITY":
            if state.entity_type_in_use(name):
                raise AtlasApiError("ATLAS-409-00-002", name)
            for other, od in reg.defs.items():
                if od["category"] == "RELATIONSHIP" and other not in doomed:
                    ends = (od.get("endDef1", {}).get("type"), od.get("endDef2", {}).get("type"))
                    if name in ends:
                        raise AtlasApiError("ATLAS-409-00-005", name)
        for other, od in reg.defs.items():
            if other in doomed:
                continue
            if name in (od.get("superTypes") or []) or _references(od, name):
                raise AtlasApiError("ATLAS-409-00-002", name)
    remaining = {n: d for n, d in reg.defs.items() if n not in doomed}
    new_reg = Registry(remaining)
    state.delete_defs(names)
    state.stage_registry(new_reg)


def _references(d: dict[str, Any], name: str) -> bool:
    return any(name in _type_names(str(a.get("typeName") or "")) for a in d.get("attributeDefs") or [])


def _type_names(type_name: str) -> set[str]:
    parsed = parse_type(type_name)
    if parsed[0] == "array":
        return _type_names(parsed[1])
    if parsed[0] == "map":
        return _type_names(parsed[1]) | _type_names(parsed[2])
    return {parsed[1]}


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
