"""Atlas's type-name grammar: ``name``, ``array<T>`` and ``map<K,V>``, nested.

Shared by the typedef validator (client side) and the emulator (server side), which must read a
``typeName`` the same way Atlas does (``AtlasTypeUtil``: ``array<`` / ``map<`` prefixes, the map's
key and value split at the top-level comma).
"""

from __future__ import annotations

# Atlas's primitive types (AtlasBuiltInTypes); ``objectid`` is built in too but refers to entities.
PRIMITIVES: frozenset[str] = frozenset(
    {
        "boolean",
        "byte",
        "short",
        "int",
        "long",
        "float",
        "double",
        "biginteger",
        "bigdecimal",
        "string",
        "date",
    }
)

# Atlas's type categories as it spells them, with the AtlasTypesDef list that holds each (one table
# for the typedef engine and the emulator).
CATEGORY_LISTS: dict[str, str] = {
    "ENUM": "enumDefs",
    "STRUCT": "structDefs",
    "CLASSIFICATION": "classificationDefs",
    "ENTITY": "entityDefs",
    "RELATIONSHIP": "relationshipDefs",
    "BUSINESS_METADATA": "businessMetadataDefs",
}


class TypeNameError(ValueError):
    """A malformed ``typeName`` such as ``array<string`` or ``map<string>``."""


def parse_type_name(type_name: str) -> tuple[str, ...]:
    """``array<X>`` -> ``("array", "X")``; ``map<K,V>`` -> ``("map", "K", "V")``; else ``("named", name)``.

    Only the outer level is split; raises :class:`TypeNameError` on malformed syntax.
    """
    t = type_name.strip()
    if not t:
        raise TypeNameError("empty type name")
    if t.startswith("array<"):
        if not t.endswith(">"):
            raise TypeNameError(f"unclosed array<...> in {t!r}")
        return ("array", t[len("array<") : -1].strip())
    if t.startswith("map<"):
        if not t.endswith(">"):
            raise TypeNameError(f"unclosed map<...> in {t!r}")
        parts = _split_top_level(t[len("map<") : -1])
        if len(parts) != 2:
            raise TypeNameError(f"map<...> needs a key and a value type in {t!r}")
        return ("map", parts[0].strip(), parts[1].strip())
    if "<" in t or ">" in t or "," in t:
        raise TypeNameError(f"malformed type name {t!r}")
    return ("named", t)


def named_types(type_name: str) -> list[str]:
    """Every plain name inside a ``typeName``: ``array<map<string,my_struct>>`` -> ``["string", "my_struct"]``."""
    parsed = parse_type_name(type_name)
    if parsed[0] == "named":
        return [parsed[1]]
    out: list[str] = []
    for inner in parsed[1:]:
        out.extend(named_types(inner))
    return out


def _split_top_level(s: str) -> list[str]:
    depth = 0
    parts: list[str] = []
    start = 0
    for i, ch in enumerate(s):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(s[start:i])
            start = i + 1
    parts.append(s[start:])
    return parts


__all__ = ["PRIMITIVES", "TypeNameError", "named_types", "parse_type_name"]
