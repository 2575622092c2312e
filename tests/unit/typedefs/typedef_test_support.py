"""Test helpers: a hand-written model of how Atlas returns a def it stored (contract §1.4)."""

from __future__ import annotations

import copy
from typing import Any

from atlas_sync.typedefs import Bundle

_LISTS = {
    "enumDefs": "ENUM",
    "structDefs": "STRUCT",
    "classificationDefs": "CLASSIFICATION",
    "entityDefs": "ENTITY",
    "relationshipDefs": "RELATIONSHIP",
    "businessMetadataDefs": "BUSINESS_METADATA",
}


def as_server(d: dict[str, Any], category: str, version: int = 1) -> dict[str, Any]:
    """What GET returns for a def POSTed as ``d``: server fields added, defaults filled in."""
    out = copy.deepcopy(d)
    out.update(
        category=category,
        guid=f"guid-{d['name']}",
        createdBy="admin",
        updatedBy="admin",
        createTime=1_700_000_000_000,
        updateTime=1_700_000_000_000,
        version=version,
    )
    out.setdefault("typeVersion", "1.0")
    out.setdefault("description", d["name"])  # Atlas defaults the description to the name
    attrs = []
    for a in out.get("attributeDefs") or []:
        a = dict(a)
        a.setdefault("isOptional", False)
        a.setdefault("cardinality", "SINGLE")
        a.setdefault("isUnique", False)
        a.setdefault("isIndexable", False)
        a.setdefault("includeInNotification", False)
        a.setdefault("searchWeight", -1)
        single = a["cardinality"] == "SINGLE"
        a["valuesMinCount"] = 0 if a["isOptional"] else 1
        a["valuesMaxCount"] = 1 if single else 2147483647
        attrs.append(a)
    if category != "ENUM":
        out["attributeDefs"] = attrs
    if category == "ENTITY":
        out.setdefault("superTypes", [])
        out["subTypes"] = []
        out["relationshipAttributeDefs"] = [
            {"name": "meanings", "typeName": "array<AtlasGlossaryTerm>", "relationshipTypeName": "x"}
        ]
        out["businessAttributeDefs"] = {}
    if category == "RELATIONSHIP":
        out.setdefault("relationshipCategory", "ASSOCIATION")
        out.setdefault("propagateTags", "NONE")
        for key in ("endDef1", "endDef2"):
            end = dict(out[key])
            end.setdefault("cardinality", "SINGLE")
            end.setdefault("isContainer", False)
            end.setdefault("isLegacyAttribute", False)
            out[key] = end
    return out


def server_typesdef(bundle: Bundle, *, skip: set[str] = frozenset(), base: bool = True) -> dict[str, Any]:  # type: ignore[assignment]
    """The AtlasTypesDef a server returns after the whole bundle was applied (plus Atlas's base types)."""
    from atlas_sync.typedefs.builtin import atlas_base_typedefs

    out: dict[str, Any] = atlas_base_typedefs() if base else {k: [] for k in _LISTS}
    sent = bundle.typesdef()
    for lst, category in _LISTS.items():
        for d in sent[lst]:
            if d["name"] not in skip:
                out[lst].append(as_server(d, category))
    return out


def find(typesdef: dict[str, Any], name: str) -> dict[str, Any]:
    for lst in _LISTS:
        for d in typesdef.get(lst) or []:
            if d["name"] == name:
                return d
    raise KeyError(name)
