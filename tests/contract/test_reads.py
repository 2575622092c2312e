"""RD — entity reads (checklist rows RD-001 … RD-020)."""

from __future__ import annotations

import pytest
from contract_helpers import (
    CT_DS,
    CT_DS2,
    Api,
    E,
    end,
    entity_def,
    expect_error,
    expect_ok,
    fresh,
    fresh_type,
    qn,
    random_guid,
    rel_def,
)

pytestmark = pytest.mark.contract


@pytest.fixture(scope="module")
def a(_session_api: Api) -> tuple[str, str]:
    """One ACTIVE ct_ds ``a``: (short name, guid). Read-only for the tests of this module."""
    x = fresh("a")
    (g,) = _session_api.create(E(x))
    return x, g


@pytest.fixture(scope="module")
def d(_session_api: Api) -> tuple[str, str]:
    """One soft-deleted ct_ds ``d``."""
    x = fresh("d")
    (g,) = _session_api.create(E(x))
    _session_api.delete_entity(g)
    return x, g


def test_RD_001_get_by_guid_shape(api: Api, a: tuple[str, str]) -> None:
    body = expect_ok(api.get(f"/v2/entity/guid/{a[1]}"))
    assert body["referredEntities"] == {}
    e = body["entity"]
    assert e["typeName"] == CT_DS
    assert e["guid"] == a[1]
    assert e["status"] == "ACTIVE"
    assert e["version"] == 0
    assert e["createdBy"] == api.username and e["updatedBy"] == api.username
    assert isinstance(e["createTime"], int) and isinstance(e["updateTime"], int)
    assert e["isIncomplete"] is False


def test_RD_002_attributes_list_every_attribute_with_nulls(api: Api, a: tuple[str, str]) -> None:
    attrs = api.entity(a[1])["attributes"]
    expected = {
        "qualifiedName",
        "name",
        "description",
        "owner",
        "displayName",
        "userDescription",
        "replicatedFrom",
        "replicatedTo",
        "count",
        "flag",
        "born",
        "note",
        "tier",
    }
    assert expected <= set(attrs)
    for unset in ("description", "owner", "displayName", "userDescription", "note"):
        assert attrs[unset] is None, unset
    assert attrs["qualifiedName"] == qn(a[0]) and attrs["name"] == a[0]


def test_RD_003_relationship_attributes_present_and_empty(api: Api, a: tuple[str, str]) -> None:
    e = api.entity(a[1])
    rel = e["relationshipAttributes"]
    for key in ("inputToProcesses", "outputFromProcesses", "meanings"):
        assert rel[key] == [], key
    assert "classifications" not in e


def test_RD_004_ignore_relationships_drops_relationship_attributes(api: Api, a: tuple[str, str]) -> None:
    full = api.entity(a[1])
    slim = api.entity(a[1], ignoreRelationships="true")
    assert "relationshipAttributes" not in slim
    assert slim["attributes"] == full["attributes"]


def test_RD_005_unknown_guid_is_404_00_005(api: Api) -> None:
    g = random_guid()
    expect_error(
        api.get(f"/v2/entity/guid/{g}"),
        404,
        "ATLAS-404-00-005",
        contains=f"Given instance guid {g} is invalid/not found",
    )


def test_RD_006_header_by_guid(api: Api, a: tuple[str, str]) -> None:
    h = expect_ok(api.get(f"/v2/entity/guid/{a[1]}/header"))
    assert h["typeName"] == CT_DS
    assert h["guid"] == a[1]
    assert h["status"] == "ACTIVE"
    assert h["displayText"] == a[0]
    assert h["attributes"]["qualifiedName"] == qn(a[0])
    assert h["attributes"]["description"] == ""
    assert h["attributes"]["owner"] == ""
    assert h["classifications"] == []  # getHeaderById uses toAtlasEntityHeaderWithClassifications


def test_RD_007_get_by_unique_attribute_equals_get_by_guid(api: Api, a: tuple[str, str]) -> None:
    by_guid = expect_ok(api.get(f"/v2/entity/guid/{a[1]}"))
    by_qn = expect_ok(api.by_qn(CT_DS, a[0]))
    assert by_qn == by_guid


def test_RD_008_missing_unique_attribute_is_404_00_009(api: Api) -> None:
    m = fresh("missing")
    expect_error(
        api.by_qn(CT_DS, m),
        404,
        "ATLAS-404-00-009",
        contains=f"Instance {CT_DS} with unique attribute {{qualifiedName={qn(m)}}} does not exist",
    )


def test_RD_009_unknown_type_in_unique_lookup_is_400_00_014(api: Api, a: tuple[str, str]) -> None:
    expect_error(api.by_qn("no_such_type", a[0]), 400, "ATLAS-400-00-014")


@pytest.mark.parametrize("kind", ["attr-name", "no-attr", "wrong-case"])
def test_RD_010_non_unique_or_missing_attr_is_400_00_013(api: Api, a: tuple[str, str], kind: str) -> None:
    params = {
        "attr-name": {"attr:name": a[0]},
        "no-attr": {},
        "wrong-case": {"attr:qualifiedname": qn(a[0])},
    }[kind]
    expect_error(
        api.get(f"/v2/entity/uniqueAttribute/type/{CT_DS}", params=params),
        400,
        "ATLAS-400-00-013",
        contains=f"Type {CT_DS} with unique attribute",
    )


def test_RD_011_supertype_lookup_falls_back_to_subtypes(api: Api, a: tuple[str, str]) -> None:
    e = expect_ok(api.by_qn("DataSet", a[0]))["entity"]
    assert e["typeName"] == CT_DS
    assert e["guid"] == a[1]


def test_RD_012_no_match_across_sibling_types(api: Api, a: tuple[str, str]) -> None:
    expect_error(api.by_qn(CT_DS2, a[0]), 404, "ATLAS-404-00-009")


def test_RD_013_deleted_entity_readable_by_guid(api: Api, d: tuple[str, str]) -> None:
    assert api.entity(d[1])["status"] == "DELETED"


def test_RD_014_deleted_entity_invisible_to_unique_lookup(api: Api, d: tuple[str, str]) -> None:
    expect_error(api.by_qn(CT_DS, d[0]), 404, "ATLAS-404-00-009")


def test_RD_015_bulk_get_by_guids(api: Api, a: tuple[str, str]) -> None:
    (gb,) = api.create(E(fresh("b")))
    body = expect_ok(api.get("/v2/entity/bulk", params={"guid": [a[1], gb]}))
    assert {e["guid"] for e in body["entities"]} == {a[1], gb}
    assert body["referredEntities"] == {}


def test_RD_015_min_ext_info_returns_an_owned_child_after_its_owner_in_minimal_form(api: Api) -> None:
    # seen on a real 2.4.0 (docs/real-atlas-differences.md RA-06; beyond the checklist row): with
    # minExtInfo=true a child that an earlier entity of the same request owns comes back with qualifiedName
    # and name only and no relationshipAttributes; asked for first, it is complete
    owner_t, child_t, rel = fresh_type(), fresh_type(), fresh_type("ct_rel")
    api.create_types(
        entityDefs=[entity_def(owner_t), entity_def(child_t)],
        relationshipDefs=[
            rel_def(rel, end(owner_t, "parts", "SET", isContainer=True), end(child_t, "whole"), "COMPOSITION")
        ],
    )
    o, c = fresh("owner"), fresh("child")
    owner = E(o, "-1", type_=owner_t)
    child = E(c, "-2", type_=child_t)
    child["relationshipAttributes"] = {"whole": {"guid": "-1", "typeName": owner_t}}
    go, gc = api.create(owner, child)

    def child_in(guids: list[str]) -> dict:
        body = expect_ok(api.get("/v2/entity/bulk", params={"guid": guids, "minExtInfo": "true"}))
        return next(e for e in body["entities"] if e["guid"] == gc)

    late = child_in([go, gc])
    assert late["attributes"] == {"qualifiedName": qn(c), "name": c}
    assert "relationshipAttributes" not in late
    early = child_in([gc, go])
    assert early["relationshipAttributes"]["whole"]["guid"] == go
    assert "description" in early["attributes"]


def test_RD_016_bulk_get_with_one_unknown_guid_is_404_00_005(api: Api, a: tuple[str, str]) -> None:
    expect_error(api.get("/v2/entity/bulk", params={"guid": [a[1], random_guid()]}), 404, "ATLAS-404-00-005")


def test_RD_017_bulk_get_without_guid_is_404_00_005(api: Api) -> None:
    expect_error(api.get("/v2/entity/bulk"), 404, "ATLAS-404-00-005")


def test_RD_018_bulk_unique_lookup_skips_missing(api: Api, a: tuple[str, str]) -> None:
    params = {"attr_0:qualifiedName": qn(a[0]), "attr_1:qualifiedName": qn(fresh("missing"))}
    body = expect_ok(api.get(f"/v2/entity/bulk/uniqueAttribute/type/{CT_DS}", params=params))
    assert [e["guid"] for e in body["entities"]] == [a[1]]


def test_RD_019_bulk_unique_lookup_with_only_missing_has_no_entities_key(api: Api) -> None:
    params = {"attr_0:qualifiedName": qn(fresh("missing")), "attr_1:qualifiedName": qn(fresh("missing"))}
    body = expect_ok(api.get(f"/v2/entity/bulk/uniqueAttribute/type/{CT_DS}", params=params))
    assert "entities" not in body


def test_RD_020_bulk_unique_lookup_on_non_unique_attribute_is_400_00_013(
    api: Api, a: tuple[str, str]
) -> None:
    expect_error(
        api.get(f"/v2/entity/bulk/uniqueAttribute/type/{CT_DS}", params={"attr_0:name": a[0]}),
        400,
        "ATLAS-400-00-013",
    )
