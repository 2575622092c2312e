"""Just enough of a typedef bundle to validate rendered entities before anything is sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Attributes of Atlas's built-in supertypes (contract §2) — the bundle's types inherit them.
_BUILTIN: dict[str, tuple[list[str], dict[str, tuple[str, bool]]]] = {
    "Referenceable": ([], {"qualifiedName": ("string", False)}),
    "Asset": (
        ["Referenceable"],
        {
            "name": ("string", False),
            "displayName": ("string", True),
            "userDescription": ("string", True),
            "owner": ("string", True),
            "description": ("string", True),
        },
    ),
    "DataSet": (["Asset"], {}),
    "Process": (["Asset"], {"inputs": ("array<DataSet>", True), "outputs": ("array<DataSet>", True)}),
    "Infrastructure": (["Asset"], {}),
}
_BUILTIN_RELATIONSHIP_ATTRS = {
    "DataSet": {"inputToProcesses", "outputFromProcesses"},
    "Referenceable": {"meanings"},
}


@dataclass
class AttributeSpec:
    type_name: str
    optional: bool
    declared_in: str


@dataclass
class EntitySchema:
    """Entity types of a bundle with their inherited attributes and relationship attribute names."""

    supertypes: dict[str, list[str]] = field(default_factory=dict)
    own_attributes: dict[str, dict[str, AttributeSpec]] = field(default_factory=dict)
    relationship_attributes: dict[str, set[str]] = field(default_factory=dict)
    # the child end of a COMPOSITION relationship (a hive_column_lineage's query, an rdbms_table's db):
    # an Atlas refuses an entity without it (mandatory attribute value missing), whatever the end's def
    mandatory_relationships: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def with_builtins(cls) -> EntitySchema:
        """A schema holding Atlas's built-in supertypes; add a bundle with :meth:`add_typedefs`."""
        schema = cls()
        for name, (supers, attrs) in _BUILTIN.items():
            schema.supertypes[name] = supers
            schema.own_attributes[name] = {a: AttributeSpec(t, opt, name) for a, (t, opt) in attrs.items()}
        for name, rels in _BUILTIN_RELATIONSHIP_ATTRS.items():
            schema.relationship_attributes.setdefault(name, set()).update(rels)
        return schema

    def add_typedefs(self, doc: dict[str, Any]) -> None:
        for d in doc.get("entityDefs") or []:
            name = d["name"]
            self.supertypes[name] = list(d.get("superTypes") or [])
            self.own_attributes[name] = {
                a["name"]: AttributeSpec(a.get("typeName", "string"), bool(a.get("isOptional", False)), name)
                for a in d.get("attributeDefs") or []
            }
        for r in doc.get("relationshipDefs") or []:
            ends = [r.get(end) or {} for end in ("endDef1", "endDef2")]
            for e in ends:
                if e.get("type") and e.get("name"):
                    self.relationship_attributes.setdefault(e["type"], set()).add(e["name"])
            if r.get("relationshipCategory") == "COMPOSITION":
                for e, other in ((ends[0], ends[1]), (ends[1], ends[0])):
                    if (
                        other.get("isContainer")
                        and not e.get("isContainer")
                        and e.get("type")
                        and e.get("name")
                    ):
                        self.mandatory_relationships.setdefault(e["type"], {})[e["name"]] = str(r.get("name"))

    def knows(self, type_name: str) -> bool:
        return type_name in self.supertypes

    def lineage_of(self, type_name: str) -> list[str]:
        """The type and all its supertypes, nearest first."""
        out: list[str] = []
        stack = [type_name]
        while stack:
            t = stack.pop(0)
            if t in out:
                continue
            out.append(t)
            stack.extend(self.supertypes.get(t, []))
        return out

    def is_a(self, type_name: str, ancestor: str) -> bool:
        return ancestor in self.lineage_of(type_name)

    def attributes(self, type_name: str) -> dict[str, AttributeSpec]:
        """Own and inherited attributes (computed once per type; do not modify the result)."""
        cache: dict[str, dict[str, AttributeSpec]] = self.__dict__.setdefault("_attributes", {})
        merged = cache.get(type_name)
        if merged is None:
            merged = {}
            for t in reversed(self.lineage_of(type_name)):
                merged.update(self.own_attributes.get(t, {}))
            cache[type_name] = merged
        return merged

    def mandatory_relationship_names(self, type_name: str) -> dict[str, str]:
        """The relationship attributes an entity of the type must have (name -> relationship), its
        supertypes' too."""
        out: dict[str, str] = {}
        for t in self.lineage_of(type_name):
            out.update(self.mandatory_relationships.get(t, {}))
        return out

    def relationship_names(self, type_name: str) -> set[str]:
        """Relationship attribute names of the type and its supertypes (once per type; do not modify)."""
        cache: dict[str, set[str]] = self.__dict__.setdefault("_relationship_names", {})
        names = cache.get(type_name)
        if names is None:
            names = set()
            for t in self.lineage_of(type_name):
                names |= self.relationship_attributes.get(t, set())
            cache[type_name] = names
        return names


_SIMPLE: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "int": (int,),
    "long": (int,),
    "short": (int,),
    "byte": (int,),
    "float": (int, float),
    "double": (int, float),
    "date": (int,),
}


def check_value(type_name: str, value: Any) -> str | None:
    """Why ``value`` does not fit the Atlas attribute type ``type_name`` (None when it fits)."""
    if value is None:
        return None
    if type_name.startswith("array<"):
        if not isinstance(value, list):
            return f"expected a list ({type_name}), got {type(value).__name__}"
        inner = type_name[6:-1]
        for v in value:
            why = check_value(inner, v)
            if why:
                return why
        return None
    if type_name.startswith("map<"):
        return None if isinstance(value, dict) else f"expected an object ({type_name})"
    simple = _SIMPLE
    if type_name in simple:
        ok = isinstance(value, simple[type_name]) and not (
            type_name not in ("boolean",) and isinstance(value, bool)
        )
        return None if ok else f"expected {type_name}, got {type(value).__name__} {value!r}"[:200]
    if isinstance(value, dict) and ("typeName" in value or "guid" in value):
        return None  # object reference
    return None  # enums, structs: left to the server
