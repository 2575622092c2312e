"""SR — search (checklist rows SR-001 … SR-027).

A module fixture creates a fresh DataSet subtype ``S`` (shaped like ct_ds) with four ACTIVE entities
``s1..s4`` whose qualified names end with a module-unique suffix, one soft-deleted ``sdel`` with that suffix and
one ACTIVE ``o1`` with another suffix. Against a real Atlas every search polls until the index caught up.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from contract_helpers import (
    CT_DS,
    RUN,
    Api,
    E,
    ct_ds_def,
    expect_error,
    expect_ok,
    fresh_type,
)

pytestmark = pytest.mark.contract


@dataclass
class SearchWorld:
    type_: str
    suffix: str
    active: dict[str, str]  # name -> guid (s1..s4)
    deleted: dict[str, str]  # sdel
    other: dict[str, str]  # o1, different suffix

    def qn(self, name: str) -> str:
        return f"{name}{self.suffix}"

    @property
    def all_guids(self) -> set[str]:
        return set(self.active.values()) | set(self.deleted.values()) | set(self.other.values())


@pytest.fixture(scope="module")
def world(_session_api: Api) -> SearchWorld:
    api = _session_api
    t = fresh_type("ct_sr")
    api.create_types(entityDefs=[ct_ds_def(t)])
    suffix = f"@ct_{RUN}_sr"

    def ent(name: str, q: str, guid: str) -> dict:
        e = E(name, guid, type_=t)
        e["attributes"]["qualifiedName"] = q
        return e

    names = ["s1", "s2", "s3", "s4"]
    entities = [ent(n, f"{n}{suffix}", f"-{i + 1}") for i, n in enumerate(names)]
    entities.append(ent("sdel", f"sdel{suffix}", "-5"))
    entities.append(ent("o1", f"o1@ct_{RUN}_other", "-6"))
    guids = api.create(*entities)
    api.delete_entity(guids[4])
    w = SearchWorld(t, suffix, dict(zip(names, guids[:4], strict=True)), {"sdel": guids[4]}, {"o1": guids[5]})
    # a real server's index lags: wait until every entity (including the deleted one) is searchable
    api.search({"typeName": t, "limit": 100}, until=lambda r: _guids(r) == w.all_guids, timeout=60)
    return w


def _guids(result: dict) -> set[str]:
    return {e["guid"] for e in result.get("entities", [])}


def _leaf(attr: str, op: str, value: str) -> dict:
    return {"attributeName": attr, "operator": op, "attributeValue": value}


def _search(api: Api, body: dict, expected: set[str] | None = None) -> dict:
    """Search; on a real Atlas poll until the expected guids show (if given)."""
    return api.search(body, until=None if expected is None else (lambda r: _guids(r) == expected))


def test_SR_001_basic_search_shape(api: Api, world: SearchWorld) -> None:
    expected = set(world.active.values()) | set(world.other.values())
    body = {"typeName": world.type_, "excludeDeletedEntities": True, "limit": 100}
    r = _search(api, body, expected)
    assert r["queryType"] == "BASIC"
    assert _guids(r) == expected
    assert r["searchParameters"]["typeName"] == world.type_
    assert isinstance(r["approximateCount"], int)
    for h in r["entities"]:
        assert h["typeName"] == world.type_ and h["status"] == "ACTIVE"
        # search headers come from toAtlasEntityHeader: classifications stay null, hence absent
        assert "classifications" not in h
        assert h["classificationNames"] == []


def test_SR_002_deleted_entities_included_by_default(api: Api, world: SearchWorld) -> None:
    r = _search(api, {"typeName": world.type_}, world.all_guids)
    assert _guids(r) == world.all_guids
    (deleted,) = [h for h in r["entities"] if h["guid"] == world.deleted["sdel"]]
    assert deleted["status"] == "DELETED"


def test_SR_003_exclude_deleted_entities(api: Api, world: SearchWorld) -> None:
    r = _search(api, {"typeName": world.type_, "excludeDeletedEntities": True})
    assert world.deleted["sdel"] not in _guids(r)
    assert set(world.active.values()) <= _guids(r)


def test_SR_004_supertype_search_includes_subtypes(api: Api, world: SearchWorld) -> None:
    expected = set(world.active.values())
    body = {
        "typeName": "DataSet",
        "excludeDeletedEntities": True,
        "entityFilters": _leaf("qualifiedName", "endsWith", world.suffix),
    }
    r = _search(api, body, expected)
    assert _guids(r) == expected


def test_SR_005_unknown_names_in_type_list_are_dropped(api: Api, world: SearchWorld) -> None:
    r = _search(api, {"typeName": f"{world.type_},no_such_type"}, world.all_guids)
    assert _guids(r) == world.all_guids


def test_SR_006_unknown_type_is_400_00_00A(api: Api) -> None:
    expect_error(
        api.post("/v2/search/basic", {"typeName": "no_such_type"}),
        400,
        "ATLAS-400-00-00A",
        contains="no_such_type: Unknown/invalid typename",
    )


def test_SR_007_limit_above_max_becomes_default(api: Api, world: SearchWorld) -> None:
    r = _search(api, {"typeName": world.type_, "limit": 20000})
    assert r["searchParameters"]["limit"] == 100
    assert len(r.get("entities", [])) <= 100


@pytest.mark.parametrize("limit", [0, None])
def test_SR_008_zero_or_missing_limit_becomes_default(
    api: Api, world: SearchWorld, limit: int | None
) -> None:
    body: dict = {"typeName": world.type_}
    if limit is not None:
        body["limit"] = limit
    assert _search(api, body)["searchParameters"]["limit"] == 100


@pytest.mark.parametrize("field", ["limit", "offset"])
def test_SR_009_negative_limit_or_offset_is_400_00_029(api: Api, world: SearchWorld, field: str) -> None:
    expect_error(
        api.post("/v2/search/basic", {"typeName": world.type_, field: -1}),
        400,
        "ATLAS-400-00-029",
        contains="Limit/offset should be non-negative",
    )


def test_SR_010_ends_with_filter(api: Api, world: SearchWorld) -> None:
    expected = set(world.active.values()) | set(world.deleted.values())
    body = {"typeName": world.type_, "entityFilters": _leaf("qualifiedName", "endsWith", world.suffix)}
    assert _guids(_search(api, body, expected)) == expected


def test_SR_011_ends_with_is_case_sensitive(api: Api, world: SearchWorld) -> None:
    body = {
        "typeName": world.type_,
        "entityFilters": _leaf("qualifiedName", "endsWith", world.suffix.upper()),
    }
    assert "entities" not in _search(api, body)


@pytest.mark.parametrize("op", ["=", "eq"])
def test_SR_012_equality_operator_spellings(api: Api, world: SearchWorld, op: str) -> None:
    expected = {world.active["s1"]}
    body = {"typeName": world.type_, "entityFilters": _leaf("name", op, "s1")}
    r = _search(api, body, expected)
    assert _guids(r) == expected
    # the echo serialises the operator enum as its first symbol (Operator.getSymbol is the @JsonValue)
    assert r["searchParameters"]["entityFilters"]["operator"] == "="


def test_SR_013_starts_with_operator_spellings(api: Api, world: SearchWorld) -> None:
    expected = set(world.active.values())
    results = []
    for op in ("startsWith", "STARTSWITH", "begins_with", "BEGINS_WITH"):
        body = {
            "typeName": world.type_,
            "excludeDeletedEntities": True,
            "entityFilters": _leaf("qualifiedName", op, "s"),
        }
        results.append(_guids(_search(api, body, expected)))
    assert results == [expected] * 4


def test_SR_014_ends_with_operator_spellings(api: Api, world: SearchWorld) -> None:
    expected = set(world.active.values())
    results = []
    for op in ("endsWith", "ENDSWITH", "ends_with", "ENDS_WITH"):
        body = {
            "typeName": world.type_,
            "excludeDeletedEntities": True,
            "entityFilters": _leaf("qualifiedName", op, world.suffix),
        }
        results.append(_guids(_search(api, body, expected)))
    assert results == [expected] * 4


@pytest.mark.parametrize("op", ["EQ", "STARTS_WITH", "=="])
def test_SR_015_unknown_operator_spelling_drops_the_filter(api: Api, world: SearchWorld, op: str) -> None:
    body = {"typeName": world.type_, "entityFilters": _leaf("name", op, "s1")}
    r = expect_ok(api.post("/v2/search/basic", body))
    assert _guids(r) == world.all_guids


def test_SR_016_composite_and_filter(api: Api, world: SearchWorld) -> None:
    expected = {world.active["s1"]}
    body = {
        "typeName": world.type_,
        "entityFilters": {
            "condition": "AND",
            "criterion": [_leaf("qualifiedName", "endsWith", world.suffix), _leaf("name", "=", "s1")],
        },
    }
    assert _guids(_search(api, body, expected)) == expected


def test_SR_017_composite_without_condition_is_ignored(api: Api, world: SearchWorld) -> None:
    body = {
        "typeName": world.type_,
        "entityFilters": {"criterion": [_leaf("name", "=", "s1"), _leaf("name", "=", "s2")]},
    }
    r = expect_ok(api.post("/v2/search/basic", body))
    assert _guids(r) == world.all_guids


def test_SR_018_filter_on_unknown_attribute_is_400_00_023(api: Api, world: SearchWorld) -> None:
    body = {"typeName": world.type_, "entityFilters": _leaf("nosuch", "=", "x")}
    expect_error(
        api.post("/v2/search/basic", body),
        400,
        "ATLAS-400-00-023",
        contains=f"Attribute nosuch not found for type {world.type_}",
    )


def test_SR_019_entity_filters_without_type_is_400_00_029(api: Api) -> None:
    body = {"query": "s1", "entityFilters": _leaf("name", "=", "s1")}
    expect_error(
        api.post("/v2/search/basic", body),
        400,
        "ATLAS-400-00-029",
        contains="EntityFilters specified without Type name",
    )


def test_SR_020_empty_body_is_400_00_047(api: Api) -> None:
    expect_error(
        api.post("/v2/search/basic", {}), 400, "ATLAS-400-00-047", startswith="No search parameter was found."
    )


@pytest.mark.parametrize("field", ["attributes", "sortBy"])
def test_SR_021_unknown_attribute_in_attributes_or_sort_is_400_00_023(
    api: Api, world: SearchWorld, field: str
) -> None:
    body: dict = {"typeName": world.type_}
    body[field] = ["nosuch"] if field == "attributes" else "nosuch"
    expect_error(api.post("/v2/search/basic", body), 400, "ATLAS-400-00-023")


def test_SR_022_no_match_has_no_entities_key(api: Api, world: SearchWorld) -> None:
    body = {"typeName": world.type_, "entityFilters": _leaf("name", "=", "nothing_has_this_name")}
    r = _search(api, body)
    assert "entities" not in r


def test_SR_023_offset_paging_in_sort_order(api: Api, world: SearchWorld) -> None:
    expected = set(world.active.values())
    base = {
        "typeName": world.type_,
        "excludeDeletedEntities": True,
        "entityFilters": _leaf("qualifiedName", "endsWith", world.suffix),
        "sortBy": "name",
        "sortOrder": "ASCENDING",
    }
    _search(api, {**base, "limit": 10}, expected)  # wait for the index on a real server
    page1 = expect_ok(api.post("/v2/search/basic", {**base, "limit": 2, "offset": 0}))["entities"]
    page2 = expect_ok(api.post("/v2/search/basic", {**base, "limit": 2, "offset": 2}))["entities"]
    g1, g2 = [h["guid"] for h in page1], [h["guid"] for h in page2]
    assert len(g1) == 2 and len(g2) == 2
    assert not set(g1) & set(g2)
    by_name = [world.active[n] for n in sorted(world.active)]
    assert g1 + g2 == by_name


def test_SR_024_marker_with_offset_is_400_00_029(api: Api, world: SearchWorld) -> None:
    expect_error(
        api.post("/v2/search/basic", {"typeName": world.type_, "marker": "*", "offset": 5}),
        400,
        "ATLAS-400-00-029",
        contains="Marker can be used only if offset=0.",
    )


def test_SR_025_attribute_search_is_a_prefix_match_including_deleted(api: Api, world: SearchWorld) -> None:
    expected = set(world.active.values()) | set(world.deleted.values())
    params = {"attrValuePrefix": "s", "typeName": world.type_}
    r = api.poll(
        lambda: expect_ok(api.get("/v2/search/attribute", params=params)), lambda r: _guids(r) == expected
    )
    assert _guids(r) == expected


def test_SR_026_dsl_type_query_includes_deleted(api: Api, world: SearchWorld) -> None:
    r = api.poll(
        lambda: expect_ok(api.get("/v2/search/dsl", params={"typeName": world.type_})),
        lambda r: _guids(r) == world.all_guids,
    )
    assert r["queryType"] == "DSL"
    assert _guids(r) == world.all_guids


def test_SR_027_dsl_unknown_type_is_400_00_059(api: Api) -> None:
    expect_error(
        api.get("/v2/search/dsl", params={"query": "no_such_type"}),
        400,
        "ATLAS-400-00-059",
        contains="no_such_type type not found",
        startswith="Invalid DSL query: ",
    )


def test_SR_001_search_parameters_echo_type(api: Api) -> None:
    """SR-001: searchParameters echo the request (checked on the shared ct_ds type)."""
    r = expect_ok(
        api.post("/v2/search/basic", {"typeName": CT_DS, "excludeDeletedEntities": True, "limit": 5})
    )
    assert r["searchParameters"]["typeName"] == CT_DS
    assert r["searchParameters"]["excludeDeletedEntities"] is True


def test_SR_001_search_parameters_echo_serialises_default_flags(api: Api) -> None:
    """SR-001: the echoed SearchParameters carries its primitive flags with their defaults."""
    sp = expect_ok(api.post("/v2/search/basic", {"typeName": CT_DS, "limit": 5}))["searchParameters"]
    assert sp["excludeDeletedEntities"] is False
    assert sp["includeSubTypes"] is True
    assert sp["includeSubClassifications"] is True
    assert sp["includeClassificationAttributes"] is False
    assert sp["excludeHeaderAttributes"] is False
    assert sp["offset"] == 0


def test_SR_001_requested_attributes_are_added_only_when_set(api: Api, world: SearchWorld) -> None:
    """SR-001 headers plus requested ``attributes``: an unset one is left out (not null, not "")."""
    body = {"typeName": world.type_, "excludeDeletedEntities": True, "attributes": ["note", "count"]}
    r = _search(api, body, set(world.active.values()) | set(world.other.values()))
    assert r["entities"]
    for h in r["entities"]:
        assert h["attributes"]["count"] == 0  # unset optional int reads 0 after create (EN-025)
        assert "note" not in h["attributes"]


def test_SR_001_system_attributes_asked_for_come_back_and_sort_newest_first(
    api: Api, world: SearchWorld
) -> None:
    """SR-001 headers plus requested system attributes (what a job's receipt reads, reconcile.receipt):
    ``__modificationTimestamp`` and ``__timestamp`` come back as ms numbers; sorted by the first,
    descending, the entity modified last comes first (the soft-deleted one: its delete is its last
    change), and ``approximateCount`` counts deleted entities when they are not excluded."""
    body = {
        "typeName": world.type_,
        "excludeDeletedEntities": False,
        "limit": 1,
        "attributes": ["__modificationTimestamp", "__timestamp"],
        "sortBy": "__modificationTimestamp",
        "sortOrder": "DESCENDING",
    }
    r = api.search(body, until=lambda r: _guids(r) == set(world.deleted.values()))
    (h,) = r["entities"]
    stamps = h["attributes"]
    assert isinstance(stamps["__modificationTimestamp"], int) and isinstance(stamps["__timestamp"], int)
    assert stamps["__modificationTimestamp"] > stamps["__timestamp"]
    assert r["approximateCount"] == len(world.all_guids)
