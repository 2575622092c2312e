"""Business metadata values on entities (Atlas 2.1+ ``EntityREST``):
``POST /v2/entity/guid/{guid}/businessmetadata?isOverwrite=`` and ``DELETE`` of the same path.

Values live in the entity row's ``extra["businessAttributes"]`` (``{bm: {attr: value}}``) and come
back as ``businessAttributes`` on a full entity read. Behaviour follows ``EntityGraphMapper``:
without ``isOverwrite`` the given attributes are set (a ``null`` value removes one, an empty map
removes the whole business metadata) and the others are kept; with it the given map replaces them
all. A business metadata not applicable to the entity's type, an attribute its def lacks or a value
of the wrong type is ``ATLAS-404-00-007`` (``INSTANCE_CRUD_INVALID_PARAMS``), nothing changed.
DELETE removes the given attributes (their values are ignored; an empty map removes all of that
business metadata).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.errors import AtlasApiError, BadJsonError
from atlas_sync.emulator.tags import _entity, _touch

if TYPE_CHECKING:
    from atlas_sync.emulator.repo import Row
    from atlas_sync.emulator.state import State

_PRIMITIVE: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "boolean": bool,
    "int": int,
    "long": int,
    "short": int,
    "byte": int,
    "float": (int, float),
    "double": (int, float),
    "date": int,
}


def business_of(row: Row) -> dict[str, dict[str, Any]]:
    return {bm: dict(a) for bm, a in (row.extra.get("businessAttributes") or {}).items() if a}


def _applicable(state: State, row: Row) -> dict[str, dict[str, dict[str, Any]]]:
    """The business metadata defs that apply to the row's type: name -> attribute name -> def."""
    et = state.registry.entity(row.type_name)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, d in state.registry.defs.items():
        if d.get("category") != "BUSINESS_METADATA":
            continue
        attrs: dict[str, dict[str, Any]] = {}
        for ad in d.get("attributeDefs") or []:
            raw = (ad.get("options") or {}).get("applicableEntityTypes") or "[]"
            try:
                types = json.loads(raw) if isinstance(raw, str) else list(raw)
            except ValueError:
                types = []
            if et is not None and any(et.is_a(t) for t in types):
                attrs[ad["name"]] = ad
        if attrs:
            out[name] = attrs
    return out


def _check_value(field: str, ad: dict[str, Any], value: Any, messages: list[str]) -> None:
    type_name = str(ad.get("typeName", "string"))
    if type_name.startswith("array<"):
        elem = type_name[6:-1]
        if not isinstance(value, list):
            messages.append(f"{field}={value}: invalid value for type array<{elem}>")
            return
        for v in value:
            _check_value(field, {"typeName": elem}, v, messages)
        return
    want = _PRIMITIVE.get(type_name)
    if want is None:
        return  # an enum: Atlas checks the element; the emulator keeps what it is given
    ok = isinstance(value, want) and not (want is not bool and isinstance(value, bool))
    if not ok:
        messages.append(f"{field}={value}: invalid value for type {type_name}")


def _parse(body: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(body, dict) or not all(isinstance(v, dict) or v is None for v in body.values()):
        raise BadJsonError("Cannot deserialize value of type `java.util.HashMap` from non-object value")
    return {bm: dict(v or {}) for bm, v in body.items()}


def set_business(state: State, guid: str, body: Any, overwrite: bool) -> None:
    """POST ``/v2/entity/guid/{guid}/businessmetadata``."""
    repo, row = _entity(state, guid)
    given = _parse(body)
    if not given and not overwrite:
        raise AtlasApiError("ATLAS-400-00-01A", "businessAttributes is null/empty")
    applicable = _applicable(state, row)
    messages: list[str] = []
    for bm, attrs in given.items():
        defs = applicable.get(bm)
        if defs is None:
            messages.append(f"{bm}: invalid business-metadata for entity type {row.type_name}")
            continue
        for attr, value in attrs.items():
            field = f"{row.type_name}.{bm}.{attr}"
            if attr not in defs:
                messages.append(f"{field}: invalid business-metadata attribute")
            elif value is not None:
                _check_value(field, defs[attr], value, messages)
    if messages:
        raise AtlasApiError("ATLAS-404-00-007", str(messages))
    current = business_of(row)
    if overwrite:
        new = {bm: {a: v for a, v in attrs.items() if v is not None} for bm, attrs in given.items()}
    else:
        new = {bm: dict(a) for bm, a in current.items()}
        for bm, attrs in given.items():
            if not attrs:
                new.pop(bm, None)
                continue
            merged = new.setdefault(bm, {})
            for attr, value in attrs.items():
                if value is None:
                    merged.pop(attr, None)
                else:
                    merged[attr] = value
    new = {bm: a for bm, a in new.items() if a}
    if new != current:
        row.extra["businessAttributes"] = new
        _touch(state, repo, row)


def remove_business(state: State, guid: str, body: Any) -> None:
    """DELETE ``/v2/entity/guid/{guid}/businessmetadata``."""
    repo, row = _entity(state, guid)
    given = _parse(body) if body is not None else {}
    current = business_of(row)
    new = {bm: dict(a) for bm, a in current.items()}
    for bm, attrs in given.items():
        if bm not in new:
            continue
        if not attrs:
            del new[bm]
            continue
        for attr in attrs:
            new[bm].pop(attr, None)
    new = {bm: a for bm, a in new.items() if a}
    if new != current:
        row.extra["businessAttributes"] = new
        _touch(state, repo, row)
