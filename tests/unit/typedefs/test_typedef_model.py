"""Typedef models and type-name parsing."""

from __future__ import annotations

import pytest

from atlas_sync.typedefs.model import (
    AttributeDef,
    EntityDef,
    RelationshipDef,
    referenced_names,
    to_atlas,
)
from atlas_sync.typenames import TypeNameError


@pytest.mark.parametrize(
    ("type_name", "expected"),
    [
        ("string", []),
        ("array<string>", []),
        ("my_ds", ["my_ds"]),
        ("array<my_ds>", ["my_ds"]),
        ("map<string,my_struct>", ["my_struct"]),
        ("map<my_enum, array<my_ds>>", ["my_enum", "my_ds"]),
        ("array<map<string,array<map<k_enum,v_struct>>>>", ["k_enum", "v_struct"]),
    ],
)
def test_referenced_names_finds_types_inside_array_and_map(type_name: str, expected: list[str]) -> None:
    assert referenced_names(type_name) == expected


@pytest.mark.parametrize("bad", ["array<string", "map<string>", "map<a,b,c>", "a,b", "", "array<>"])
def test_referenced_names_rejects_malformed_type_names(bad: str) -> None:
    with pytest.raises(TypeNameError):
        referenced_names(bad)


def test_attribute_without_is_optional_is_mandatory_as_in_atlas() -> None:
    a = AttributeDef.model_validate({"name": "x", "typeName": "string"})
    assert a.isOptional is False
    assert a.cardinality == "SINGLE"


def test_relationship_defaults_follow_atlas() -> None:
    r = RelationshipDef.model_validate(
        {"name": "r", "endDef1": {"type": "a", "name": "bs"}, "endDef2": {"type": "b", "name": "a"}}
    )
    assert r.relationshipCategory == "ASSOCIATION"
    assert r.propagateTags == "NONE"
    assert r.endDef1.isContainer is False and r.endDef1.cardinality == "SINGLE"


def test_server_fields_are_accepted_but_never_sent() -> None:
    d = EntityDef.model_validate(
        {
            "name": "t",
            "guid": "1234",
            "version": 3,
            "createTime": 1700000000000,
            "createdBy": "admin",
            "category": "ENTITY",
            "subTypes": ["u"],
            "relationshipAttributeDefs": [],
            "superTypes": ["DataSet"],
            "attributeDefs": [],
        }
    )
    sent = to_atlas(d)
    for key in (
        "guid",
        "version",
        "createTime",
        "createdBy",
        "category",
        "subTypes",
        "relationshipAttributeDefs",
    ):
        assert key not in sent
    assert sent["superTypes"] == ["DataSet"]
