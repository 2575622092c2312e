"""The type registry: typedefs resolved into what entity handling needs.

A :class:`Registry` is built from the stored typedefs (name -> def) and validated the way Atlas's
transient registry resolves references (contract §1.5): unknown references, incompatible supertypes,
cycles, re-declared parent attributes, cardinality and relationship-end rules. Registries are immutable
values; a typedef write builds a new one and swaps it in only after its transaction committed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.emulator.errors import AtlasApiError, InternalError
from atlas_sync.typenames import CATEGORY_LISTS, PRIMITIVES, TypeNameError, parse_type_name

CATEGORY_KEYS = CATEGORY_LISTS
KEY_CATEGORIES = {v: k for k, v in CATEGORY_KEYS.items()}
LIST_KEYS = tuple(CATEGORY_KEYS.values())
NAME_RE = re.compile(r"^(__)?[a-zA-Z][a-zA-Z0-9_ ]*$")
MAX_INT = 2147483647


def parse_type(type_name: str) -> tuple[str, ...]:
    """The outer level of a ``typeName`` (see :func:`atlas_sync.typenames.parse_type_name`); a malformed
    one is taken as a plain name, which then fails as an unknown type, as on Atlas."""
    try:
        return parse_type_name(type_name)
    except TypeNameError:
        return ("named", type_name.strip())


@dataclass
class RelEnd:
    """A relationship attribute of an entity type: one end of a relationshipDef."""

    rel_type: str
    name: str
    end: int  # which end of the relationship this entity type is (1 or 2)
    other_type: str
    many: bool
    legacy: bool
    owned: bool  # this end is the container of a COMPOSITION: the other side is owned
    # the child end of a COMPOSITION: an entity without it is refused (mandatory attribute value missing)
    mandatory: bool = False


@dataclass
class Attr:
    """A resolved attribute of a struct or entity type."""

    name: str
    type_name: str
    declaring: str
    optional: bool
    cardinality: str
    unique: bool
    default: Any
    has_default: bool
    kind: str  # primitive | enum | struct | entity | objectid | array | map
    elem: str | None = None  # element type name for arrays (resolved kind in elem_kind)
    elem_kind: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    indexable: bool = False  # isIndexable: Atlas answers a search on it from its index


@dataclass
class EntityType:
    name: str
    supers: frozenset[str]
    subs: frozenset[str]  # transitive subtypes, itself included
    attrs: dict[str, Attr]
    rels: dict[str, list[RelEnd]]
    unique: list[str]
    header: list[str]
    display: str | None

    def is_a(self, other: str) -> bool:
        return other == self.name or other in self.supers


class Registry:
    """Resolved view of all typedefs. ``defs`` maps name -> stored def (with ``category``)."""

    def __init__(self, defs: dict[str, dict[str, Any]]) -> None:
        self.defs = defs
        self.entities: dict[str, EntityType] = {}
        self.structs: dict[str, dict[str, Attr]] = {}
        self.direct_subs: dict[str, list[str]] = {}
        self._resolve()

    # ------------------------------------------------------------------ lookups
    def category(self, name: str) -> str | None:
        d = self.defs.get(name)
        return None if d is None else str(d["category"])

    def entity(self, name: str) -> EntityType | None:
        return self.entities.get(name)

    def kind_of(self, type_name: str) -> str:
        """Kind of an attribute type name, or raise 400-00-029 if it does not resolve."""
        parsed = parse_type(type_name)
        if parsed[0] == "array":
            self.kind_of(parsed[1])
            return "array"
        if parsed[0] == "map":
            self.kind_of(parsed[1])
            self.kind_of(parsed[2])
            return "map"
        name = parsed[1]
        if name in PRIMITIVES:
            return "primitive"
        if name == "objectid":
            return "objectid"
        cat = self.category(name)
        if cat is None:
            raise AtlasApiError("ATLAS-400-00-029", f"Given typename {name} was invalid")
        return cat.lower()

    # ------------------------------------------------------------------ resolution
    def _resolve(self) -> None:
        defs = self.defs
        for name, d in defs.items():
            for s in d.get("superTypes") or []:
                if s not in defs:
                    raise AtlasApiError("ATLAS-400-00-029", f"Given typename {s} was invalid")
                if defs[s]["category"] != d["category"]:
                    raise AtlasApiError("ATLAS-400-00-003", s, name)
                self.direct_subs.setdefault(s, []).append(name)
        supers: dict[str, frozenset[str]] = {}

        def all_supers(n: str, trail: tuple[str, ...]) -> frozenset[str]:
            if n in supers:
                return supers[n]
            acc: set[str] = set()
            for s in defs[n].get("superTypes") or []:
                if s == trail[0] or s in trail:
                    raise AtlasApiError("ATLAS-400-00-002", trail[0], s)
                acc.add(s)
                acc |= all_supers(s, (*trail, s))
            supers[n] = frozenset(acc)
            return supers[n]

        for name, d in defs.items():
            if d["category"] in ("ENTITY", "CLASSIFICATION"):
                all_supers(name, (name,))
        # own attributes (struct-like types)
        own: dict[str, dict[str, Attr]] = {}
        for name, d in defs.items():
            if d["category"] in ("ENTITY", "CLASSIFICATION", "STRUCT", "RELATIONSHIP", "BUSINESS_METADATA"):
                own[name] = {a.name: a for a in (self._attr(name, ad) for ad in d.get("attributeDefs") or [])}
        for name, d in defs.items():
            if d["category"] == "STRUCT":
                self.structs[name] = own[name]
        # entity types: inherited attributes first (supertypes' order), then own
        for name, d in defs.items():
            if d["category"] != "ENTITY":
                continue
            attrs: dict[str, Attr] = {}
            for sup in self._linear_supers(name):
                for a in own[sup].values():
                    attrs.setdefault(a.name, a)
            for a in own[name].values():
                if a.name in attrs:
                    raise AtlasApiError("ATLAS-400-00-09E", name, a.name, attrs[a.name].declaring)
                attrs[a.name] = a
            subs = frozenset(
                {name} | {n for n, s in supers.items() if name in s and defs[n]["category"] == "ENTITY"}
            )
            unique = [a.name for a in attrs.values() if a.unique]
            header = unique + [n for n in ("name", "description", "owner", "createTime") if n in attrs]
            display = (d.get("options") or {}).get("displayTextAttribute")
            self.entities[name] = EntityType(name, supers[name], subs, attrs, {}, unique, header, display)
        for name, d in defs.items():
            if d["category"] == "CLASSIFICATION":
                for a in own[name].values():
                    for s in supers[name]:
                        if a.name in own.get(s, {}):
                            raise AtlasApiError("ATLAS-400-00-09E", name, a.name, s)
        for d in defs.values():
            if d["category"] == "RELATIONSHIP":
                self._resolve_relationship(d)

    def _linear_supers(self, name: str) -> list[str]:
        """Supertypes in Atlas's order: each supertype's own supertypes before it, depth first."""
        out: list[str] = []

        def walk(n: str) -> None:
            for s in self.defs[n].get("superTypes") or []:
                walk(s)
                if s not in out:
                    out.append(s)

        walk(name)
        return out

    def _attr(self, owner: str, ad: dict[str, Any]) -> Attr:
        if ad.get("typeName") is None:
            # Atlas 2.4 dereferences the null type name (NullPointerException -> 500)
            raise InternalError(f"attribute {owner}.{ad.get('name')} has no typeName")
        type_name = str(ad["typeName"])
        kind = self.kind_of(type_name)
        elem = elem_kind = None
        if kind == "array":
            elem = parse_type(type_name)[1]
            elem_kind = self.kind_of(elem)
            if elem_kind in ("classification", "business_metadata"):
                raise AtlasApiError("ATLAS-400-00-081", owner, ad.get("name"))
        if kind == "map" and self.kind_of(parse_type(type_name)[2]) in (
            "classification",
            "business_metadata",
        ):
            raise AtlasApiError(
                "ATLAS-400-00-081", owner, ad.get("name")
            )  # Atlas checks the map's value type
        if kind in ("classification", "business_metadata", "relationship"):
            raise AtlasApiError("ATLAS-400-00-081", owner, ad.get("name"))
        card = ad.get("cardinality") or "SINGLE"
        if card in ("LIST", "SET") and kind != "array":
            raise AtlasApiError("ATLAS-400-00-012", owner, ad.get("name"))
        return Attr(
            name=str(ad.get("name") or ""),
            type_name=type_name,
            declaring=owner,
            optional=bool(ad.get("isOptional", False)),
            cardinality=card,
            unique=bool(ad.get("isUnique", False)),
            default=ad.get("defaultValue"),
            has_default=ad.get("defaultValue") is not None,
            kind=kind,
            elem=elem,
            elem_kind=elem_kind,
            options=dict(ad.get("options") or {}),
            indexable=bool(ad.get("isIndexable", False)),
        )

    def _resolve_relationship(self, d: dict[str, Any]) -> None:
        name = d["name"]
        ends = [d.get("endDef1") or {}, d.get("endDef2") or {}]
        for i, e in enumerate(ends, 1):
            t = e.get("type")
            if not t or t not in self.defs:
                raise AtlasApiError("ATLAS-400-00-029", f"Given typename {t} was invalid")
            if self.defs[t]["category"] != "ENTITY":
                raise AtlasApiError("ATLAS-400-00-035", name, t)
            if not e.get("name"):
                raise AtlasApiError("ATLAS-400-00-02B", f"endDef{i}", "name")
            if e.get("cardinality") == "LIST":
                raise AtlasApiError("ATLAS-400-00-034", name, e.get("name"))
        cat = d.get("relationshipCategory") or "ASSOCIATION"
        c1, c2 = bool(ends[0].get("isContainer")), bool(ends[1].get("isContainer"))
        if c1 and c2:
            raise AtlasApiError("ATLAS-400-00-02D", name)
        if cat == "ASSOCIATION" and (c1 or c2):
            raise AtlasApiError("ATLAS-400-00-030", name, ends[0 if c1 else 1].get("name"))
        if cat == "COMPOSITION" and not (c1 or c2):
            raise AtlasApiError("ATLAS-400-00-031", name)
        if cat == "AGGREGATION" and not (c1 or c2):
            raise AtlasApiError("ATLAS-400-00-032", name)
        if cat == "COMPOSITION":
            child = ends[1] if c1 else ends[0]
            if child.get("cardinality") == "SET":
                raise AtlasApiError("ATLAS-400-00-033", name)
        for i, (e, other) in enumerate(((ends[0], ends[1]), (ends[1], ends[0])), 1):
            end_type = self.entities[e["type"]]
            many = (e.get("cardinality") or "SINGLE") in ("SET", "LIST")
            owned = cat == "COMPOSITION" and bool(e.get("isContainer"))
            mandatory = cat == "COMPOSITION" and bool(other.get("isContainer"))
            for sub in end_type.subs:
                et = self.entities[sub]
                legacy = bool(e.get("isLegacyAttribute")) or e["name"] in et.attrs
                et.rels.setdefault(e["name"], []).append(
                    RelEnd(name, e["name"], i, other["type"], many, legacy, owned, mandatory)
                )

    # ------------------------------------------------------------------ rendering
    def render(self, name: str) -> dict[str, Any]:
        """The def as GET returns it: stored fields plus the computed ones."""
        d = {k: v for k, v in self.defs[name].items()}
        cat = d["category"]
        if cat in ("ENTITY", "CLASSIFICATION"):
            d["subTypes"] = sorted(self.direct_subs.get(name, []))
        if cat == "ENTITY":
            et = self.entities[name]
            rel_defs = []
            for attr_name, ends in et.rels.items():
                for e in ends:
                    rel_defs.append(
                        {
                            "name": attr_name,
                            "typeName": f"array<{e.other_type}>" if e.many else e.other_type,
                            "isOptional": not e.mandatory,
                            "cardinality": "SET" if e.many else "SINGLE",
                            "valuesMinCount": 0,
                            "valuesMaxCount": MAX_INT if e.many else 1,
                            "isUnique": False,
                            "isIndexable": False,
                            "includeInNotification": False,
                            "searchWeight": -1,
                            "relationshipTypeName": e.rel_type,
                            "isLegacyAttribute": e.legacy,
                        }
                    )
            d["relationshipAttributeDefs"] = rel_defs
            d["businessAttributeDefs"] = {}
        return d


def normalize_attribute(ad: dict[str, Any]) -> dict[str, Any]:
    """An attributeDef as Atlas stores and re-reads it (contract §1.4)."""
    card = ad.get("cardinality") or "SINGLE"
    optional = bool(ad.get("isOptional", False))
    if card == "SINGLE":
        min_count, max_count = (0 if optional else 1), 1
    else:
        given_min = ad.get("valuesMinCount") or 0
        given_max = ad.get("valuesMaxCount") or 0
        min_count = 0 if optional else max(1, int(given_min))
        max_count = int(given_max) if int(given_max) >= 2 else MAX_INT
    out: dict[str, Any] = {
        "name": ad.get("name"),
        "typeName": ad.get("typeName"),
        "isOptional": min_count == 0,
        "cardinality": card,
        "valuesMinCount": min_count,
        "valuesMaxCount": max_count,
        "isUnique": bool(ad.get("isUnique", False)),
        "isIndexable": bool(ad.get("isIndexable", False)),
        "includeInNotification": bool(ad.get("includeInNotification", False)),
        "searchWeight": ad.get("searchWeight", -1) if ad.get("searchWeight") is not None else -1,
    }
    for key in ("defaultValue", "description", "displayName", "options", "indexType"):
        if ad.get(key) is not None:
            out[key] = ad[key]
    constraints = [c for c in ad.get("constraints") or [] if c.get("type") in ("ownedRef", "inverseRef")]
    if constraints:
        out["constraints"] = constraints
    return out


def normalize_end(e: dict[str, Any]) -> dict[str, Any]:
    out = {
        "type": e.get("type"),
        "name": e.get("name"),
        "isContainer": bool(e.get("isContainer", False)),
        "cardinality": e.get("cardinality") or "SINGLE",
        "isLegacyAttribute": bool(e.get("isLegacyAttribute", False)),
    }
    if e.get("description") is not None:
        out["description"] = e["description"]
    return out


def check_type_name(name: str, category: str) -> None:
    """Atlas's ``validateType``: a letter then letters, digits, '_' or spaces (or ``__`` + that)."""
    if not NAME_RE.match(name or ""):
        raise AtlasApiError("ATLAS-400-00-019", name, category)
