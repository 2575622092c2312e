"""Attribute value validation, normalisation, defaults and equality (contract §3.3 steps 5-8)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.types import Attr, parse_type

if TYPE_CHECKING:
    from atlas_sync.emulator.types import Registry

INTS = {"byte", "short", "int", "long", "biginteger"}
FLOATS = {"float", "double", "bigdecimal"}


class InvalidValue(ValueError):
    """A value that does not fit its attribute type."""


def normalize_primitive(type_name: str, value: Any) -> Any:
    """Normalise a primitive value the way Atlas's built-in types do; raise InvalidValue if impossible."""
    if value is None:
        return None
    if type_name == "string":
        if isinstance(value, dict | list):
            raise InvalidValue(type_name)
        if isinstance(value, bool):
            return "true" if value else "false"
        return value if isinstance(value, str) else str(value)
    if type_name in INTS:
        if isinstance(value, bool):
            raise InvalidValue(type_name)
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return int(value)
        if isinstance(value, str):
            try:
                return int(Decimal(value.strip()))
            except (InvalidOperation, ValueError) as exc:
                raise InvalidValue(type_name) from exc
        raise InvalidValue(type_name)
    if type_name in FLOATS:
        if isinstance(value, bool):
            raise InvalidValue(type_name)
        if isinstance(value, int | float):
            return value
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError as exc:
                raise InvalidValue(type_name) from exc
        raise InvalidValue(type_name)
    if type_name == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise InvalidValue(type_name)
    if type_name == "date":
        return normalize_date(value)
    return value


def normalize_date(value: Any) -> int:
    if isinstance(value, bool):
        raise InvalidValue("date")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            return int(text)
        for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d"):
            try:
                parsed = dt.datetime.strptime(text, fmt).replace(tzinfo=dt.UTC)
            except ValueError:
                continue
            return int(parsed.timestamp() * 1000)
    raise InvalidValue("date")


def normalize_value(reg: Registry, type_name: str, value: Any) -> Any:
    """Normalise a non-reference value of any attribute type (primitives, enums, arrays, maps, structs)."""
    if value is None:
        return None
    parsed = parse_type(type_name)
    if parsed[0] == "array":
        if not isinstance(value, list):
            value = [value]
        return [normalize_value(reg, parsed[1], v) for v in value]
    if parsed[0] == "map":
        if not isinstance(value, dict):
            raise InvalidValue(type_name)
        return {str(k): normalize_value(reg, parsed[2], v) for k, v in value.items()}
    name = parsed[1]
    if name in INTS or name in FLOATS or name in ("string", "boolean", "date"):
        return normalize_primitive(name, value)
    cat = reg.category(name)
    if cat == "ENUM":
        values = [e.get("value") for e in reg.defs[name].get("elementDefs") or []]
        if isinstance(value, int) and not isinstance(value, bool):
            for e in reg.defs[name].get("elementDefs") or []:
                if e.get("ordinal") == value:
                    return e.get("value")
        if value not in values:
            raise InvalidValue(name)
        return value
    if cat == "STRUCT":
        if not isinstance(value, dict):
            raise InvalidValue(name)
        attrs = value.get("attributes") if "attributes" in value else value
        if not isinstance(attrs, dict):
            raise InvalidValue(name)
        return {"typeName": name, "attributes": attrs}
    return value


def default_for(reg: Registry, attr: Attr) -> Any:
    """The value a CREATE writes for an attribute the request did not send."""
    if attr.has_default:
        try:
            return normalize_value(reg, attr.type_name, attr.default)
        except InvalidValue:
            return attr.default
    return null_value(attr)


def null_value(attr: Attr) -> Any:
    """What an explicit null (or nothing, for an optional attribute) reads back as."""
    if attr.kind != "primitive":
        return None
    if attr.type_name in INTS or attr.type_name in FLOATS:
        return 0
    if attr.type_name == "boolean":
        return False
    if attr.type_name == "date":
        return 0
    return None


def values_equal(attr: Attr, a: Any, b: Any) -> bool:
    """Atlas's ``areEqualValues``: numbers by value, SET arrays order-insensitive."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        if attr.cardinality == "SET":
            rest = list(b)
            for x in a:
                for i, y in enumerate(rest):
                    if x == y:
                        del rest[i]
                        break
                else:
                    return False
            return True
        return a == b
    return bool(a == b)
