"""EN — entity writes (checklist rows EN-001 … EN-043)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from contract_helpers import (
    CT_DS,
    CT_DS2,
    CT_PROC,
    UUID_RE,
    Api,
    E,
    P,
    expect_error,
    expect_ok,
    expect_plain_500,
    fresh,
    headers_of,
    mutated,
    oid,
    qn,
    random_guid,
    ref,
)

pytestmark = pytest.mark.contract


def _one(api: Api, **attrs) -> tuple[str, str]:
    """Create one ct_ds; return (short name, guid)."""
    x = fresh("a")
    (g,) = api.create(E(x, **attrs))
    return x, g


# ---------------------------------------------------------------------------------------------- create


def test_EN_001_bulk_create_returns_header_and_guid_assignment(api: Api) -> None:
    x = fresh("a")
    body = api.upsert(E(x, "-1"))
    created = headers_of(body, "CREATE")
    assert len(created) == 1
    h = created[0]
    assert h["typeName"] == CT_DS
    assert h["status"] == "ACTIVE"
    assert UUID_RE.match(h["guid"]), h["guid"]
    assert body["guidAssignments"] == {"-1": h["guid"]}


def test_EN_002_mutation_header_renders_null_header_attributes_as_empty(api: Api) -> None:
    x = fresh("a")
    h = headers_of(api.upsert(E(x)), "CREATE")[0]
    attrs = h["attributes"]
    assert attrs["qualifiedName"] == qn(x)
    assert attrs["name"] == x
    assert attrs["description"] == ""
    assert attrs["owner"] == ""
    assert h["displayText"] == x
    assert h["classificationNames"] == []
    assert h["isIncomplete"] is False


def test_EN_003_single_entity_post_has_same_shape(api: Api) -> None:
    x = fresh("b")
    body = expect_ok(api.post("/v2/entity", {"entity": E(x, "-1")}))
    created = headers_of(body, "CREATE")
    assert len(created) == 1 and created[0]["typeName"] == CT_DS
    assert body["guidAssignments"] == {"-1": created[0]["guid"]}


def test_EN_004_unchanged_repeat_is_a_noop(api: Api) -> None:
    x, g = _one(api)
    before = api.entity(g)
    time.sleep(0.02)
    body = api.upsert(E(x, "-1"))
    assert "mutatedEntities" not in body
    assert body["guidAssignments"] == {"-1": g}
    assert api.entity(g)["updateTime"] == before["updateTime"]


def test_EN_005_changed_repeat_is_an_update(api: Api) -> None:
    x, g = _one(api)
    body = api.upsert(E(x, "-1", description="d2"))
    assert mutated(body, "UPDATE") == [g]
    assert body["mutatedEntities"]["UPDATE"][0]["classifications"] == []  # the request's own entity
    assert "CREATE" not in body["mutatedEntities"]
    assert body["guidAssignments"]["-1"] == g


def test_EN_006_only_changed_entities_are_listed(api: Api) -> None:
    xs = [fresh("a") for _ in range(3)]
    guids = api.create(*(E(x, f"-{i + 1}") for i, x in enumerate(xs)))
    body = api.upsert(E(xs[0], "-1"), E(xs[1], "-2", description="changed"), E(xs[2], "-3"))
    assert mutated(body, "UPDATE") == [guids[1]]
    assert "CREATE" not in body["mutatedEntities"]
    assert body["guidAssignments"] == {"-1": guids[0], "-2": guids[1], "-3": guids[2]}


def test_EN_007_entity_without_guid_gets_a_server_placeholder(api: Api) -> None:
    body = api.upsert(E(fresh("a"), guid=None))
    created = headers_of(body, "CREATE")
    assert len(created) == 1
    keys = list(body["guidAssignments"])
    assert len(keys) == 1 and keys[0].startswith("-")
    assert body["guidAssignments"][keys[0]] == created[0]["guid"]


def test_EN_008_sending_the_stored_guid_gives_no_assignment(api: Api) -> None:
    x, g = _one(api)
    body = api.upsert(E(x, g, description="d8"))
    assert mutated(body, "UPDATE") == [g]
    assert body["guidAssignments"] == {}


def test_EN_009_client_chosen_guid_for_a_new_entity_is_404_00_00A(api: Api) -> None:
    n, u = fresh("n"), random_guid()
    expect_error(
        api.post("/v2/entity/bulk", {"entities": [E(n, u)]}),
        404,
        "ATLAS-404-00-00A",
        contains=f"Referenced entity {u} is not found",
    )
    expect_error(api.by_qn(CT_DS, n), 404, "ATLAS-404-00-009")


def test_EN_010_unknown_guid_of_an_existing_entity_matches_by_qualified_name(api: Api) -> None:
    x, g = _one(api)
    u = random_guid()
    body = api.upsert(E(x, u))
    assert body["guidAssignments"] == {u: g}
    assert not mutated(body, "CREATE")


def test_EN_011_placeholder_references_inside_one_request(api: Api) -> None:
    x, p = fresh("x"), fresh("p")
    body = api.upsert(E(x, "-1"), P(p, "-2", outputs=[{"guid": "-1", "typeName": CT_DS}]))
    assert set(body["guidAssignments"]) == {"-1", "-2"}
    assert set(mutated(body, "CREATE")) == set(body["guidAssignments"].values())


def test_EN_012_unknown_placeholder_reference_is_404_00_00A(api: Api) -> None:
    r = api.post(
        "/v2/entity/bulk", {"entities": [P(fresh("p"), "-1", inputs=[{"guid": "-9", "typeName": CT_DS}])]}
    )
    expect_error(r, 404, "ATLAS-404-00-00A", contains="Referenced entity -9 is not found")


def test_EN_013_reference_by_unique_attributes_to_existing_entity(api: Api) -> None:
    a, ga = _one(api)
    p = fresh("p")
    (gp,) = api.create(P(p, inputs=[ref(a)]))
    inputs = api.entity(gp)["relationshipAttributes"]["inputs"]
    assert [i["guid"] for i in inputs] == [ga]


def test_EN_014_unique_reference_to_entity_of_same_request_is_404_00_00A(api: Api) -> None:
    n, p = fresh("n"), fresh("p")
    r = api.post("/v2/entity/bulk", {"entities": [E(n, "-1"), P(p, "-2", inputs=[ref(n)])]})
    expect_error(r, 404, "ATLAS-404-00-00A")
    expect_error(api.by_qn(CT_DS, n), 404, "ATLAS-404-00-009")
    expect_error(api.by_qn(CT_PROC, p), 404, "ATLAS-404-00-009")


def test_EN_015_unique_reference_to_missing_entity_creates_no_shell(api: Api) -> None:
    missing = fresh("missing")
    r = api.post("/v2/entity/bulk", {"entities": [P(fresh("p"), inputs=[ref(missing)])]})
    expect_error(r, 404, "ATLAS-404-00-00A")
    expect_error(api.by_qn(CT_DS, missing), 404, "ATLAS-404-00-009")


def test_EN_016_unique_reference_to_soft_deleted_entity_is_404_00_00A(api: Api) -> None:
    d, gd = _one(api)
    api.delete_entity(gd)
    r = api.post("/v2/entity/bulk", {"entities": [P(fresh("p"), inputs=[ref(d)])]})
    expect_error(r, 404, "ATLAS-404-00-00A")


def test_EN_017_object_id_without_guid_or_unique_attributes_is_400_00_021(api: Api) -> None:
    r = api.post("/v2/entity/bulk", {"entities": [P(fresh("p"), inputs=[{"typeName": CT_DS}])]})
    expect_error(
        r,
        400,
        "ATLAS-400-00-021",
        contains=f"ObjectId is not valid AtlasObjectId{{guid='null', typeName='{CT_DS}', uniqueAttributes={{}}}}",
    )


def test_EN_018_unknown_entity_type_is_400_00_014(api: Api) -> None:
    r = api.post("/v2/entity/bulk", {"entities": [E(fresh("x"), type_="no_such_type")]})
    expect_error(r, 400, "ATLAS-400-00-014", contains="Type ENTITY with name no_such_type does not exist")


def test_EN_019_missing_name_is_404_00_007(api: Api) -> None:
    e = E(fresh("x"))
    del e["attributes"]["name"]
    body = expect_error(
        api.post("/v2/entity/bulk", {"entities": [e]}),
        404,
        "ATLAS-404-00-007",
        contains="Invalid instance creation/updation parameters passed",
    )
    # only the first problem is reported, without brackets (each message is a separate MessageFormat argument)
    assert body["errorMessage"] == (
        f"Invalid instance creation/updation parameters passed : {CT_DS}.name: mandatory attribute value "
        "missing in type Asset"
    )


def test_EN_020_missing_qualified_name_is_404_00_007(api: Api) -> None:
    e = E(fresh("x"))
    del e["attributes"]["qualifiedName"]
    expect_error(
        api.post("/v2/entity/bulk", {"entities": [e]}),
        404,
        "ATLAS-404-00-007",
        contains="qualifiedName: mandatory attribute value missing in type Referenceable",
    )


def test_EN_021_full_update_without_name_is_404_00_007(api: Api) -> None:
    x, _ = _one(api)
    e = E(x, description="upd")
    del e["attributes"]["name"]
    expect_error(api.post("/v2/entity/bulk", {"entities": [e]}), 404, "ATLAS-404-00-007")


def test_EN_022_wrong_value_type_is_404_00_007(api: Api) -> None:
    r = api.post("/v2/entity/bulk", {"entities": [E(fresh("x"), count="abc")]})
    expect_error(r, 404, "ATLAS-404-00-007", contains=f"{CT_DS}.count=abc: invalid value for type int")


def test_EN_023_unknown_attribute_is_ignored(api: Api) -> None:
    _, g = _one(api, nosuch=1)
    assert "nosuch" not in api.entity(g)["attributes"]


def test_EN_024_adding_only_an_unknown_attribute_is_a_noop(api: Api) -> None:
    x, _ = _one(api)
    body = api.upsert(E(x, nosuch=2))
    assert "mutatedEntities" not in body


def test_EN_025_unset_optional_primitives_get_type_defaults(api: Api) -> None:
    _, g = _one(api)
    a = api.entity(g)["attributes"]
    assert a["count"] == 0
    assert a["flag"] is False
    assert a["born"] == 0
    assert a["note"] is None


def test_EN_026_attribute_default_value_applies_on_create(api: Api) -> None:
    _, g = _one(api)
    assert api.entity(g)["attributes"]["tier"] == "bronze"


def test_EN_027_date_accepts_iso_string_and_epoch_ms(api: Api) -> None:
    iso = "2024-01-02T03:04:05.000Z"
    epoch_ms = int(datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp() * 1000)
    x, g = _one(api, born=iso)
    assert api.entity(g)["attributes"]["born"] == epoch_ms
    body = api.upsert(E(x, born=epoch_ms))
    assert "mutatedEntities" not in body


def test_EN_028_explicit_null_clears_optional_string(api: Api) -> None:
    x, g = _one(api, note="x")
    body = api.upsert(E(x, note=None))
    assert mutated(body, "UPDATE") == [g]
    assert api.entity(g)["attributes"]["note"] is None


def test_EN_029_update_writes_only_the_keys_sent(api: Api) -> None:
    x, g = _one(api, note="x")
    api.upsert(E(x, description="other"))
    a = api.entity(g)["attributes"]
    assert a["note"] == "x"
    assert a["description"] == "other"


def test_EN_030_full_update_with_null_name_is_404_00_007(api: Api) -> None:
    x, _ = _one(api)
    expect_error(api.post("/v2/entity/bulk", {"entities": [E(x, name=None)]}), 404, "ATLAS-404-00-007")


def test_EN_031_empty_entities_is_400_00_01A(api: Api) -> None:
    expect_error(
        api.post("/v2/entity/bulk", {"entities": []}),
        400,
        "ATLAS-400-00-01A",
        contains="invalid parameters: no entities to create/update.",
    )


def test_EN_032_bulk_without_entities_key_is_plain_500(api: Api) -> None:
    expect_plain_500(api.post("/v2/entity/bulk", {}))


def test_EN_033_same_qualified_name_twice_in_one_request_resolves_to_one_entity(api: Api) -> None:
    x = fresh("x")
    body = api.upsert(E(x, "-1"), E(x, "-2", description="two"))
    ga = body["guidAssignments"]
    assert ga["-1"] == ga["-2"]
    assert mutated(body, "CREATE") == [ga["-1"]]
    e = expect_ok(api.by_qn(CT_DS, x))["entity"]
    assert e["guid"] == ga["-1"]
    assert e["attributes"]["description"] == "two"


def test_EN_034_qualified_name_is_unique_per_concrete_type(api: Api) -> None:
    x = fresh("x")
    body = api.upsert(E(x, "-1"), E(x, "-2", type_=CT_DS2))
    g1, g2 = body["guidAssignments"]["-1"], body["guidAssignments"]["-2"]
    assert g1 != g2
    assert expect_ok(api.by_qn(CT_DS, x))["entity"]["guid"] == g1
    assert expect_ok(api.by_qn(CT_DS2, x))["entity"]["guid"] == g2


# ---------------------------------------------------------------------------------------------- partial updates


def _partial(api: Api, x: str, attrs: dict, params: dict | None = None):
    if params is None:
        params = {"attr:qualifiedName": qn(x)}
    return api.put(
        f"/v2/entity/uniqueAttribute/type/{CT_DS}",
        {"entity": {"typeName": CT_DS, "attributes": attrs}},
        params=params,
    )


def test_EN_035_partial_update_by_unique_attribute(api: Api) -> None:
    x, g = _one(api, note="keep")
    body = expect_ok(_partial(api, x, {"description": "p"}))
    assert mutated(body, "PARTIAL_UPDATE") == [g]
    # EntityMutationResponse.getPartialUpdatedEntities() lacks @JsonIgnore, so the list shows twice
    assert [h["guid"] for h in body["partialUpdatedEntities"]] == [g]
    a = api.entity(g)["attributes"]
    assert a["description"] == "p"
    assert a["name"] == x
    assert a["note"] == "keep"


def test_EN_036_unchanged_partial_update_has_no_mutated_entities(api: Api) -> None:
    x, _ = _one(api)
    expect_ok(_partial(api, x, {"description": "p"}))
    body = expect_ok(_partial(api, x, {"description": "p"}))
    assert "mutatedEntities" not in body
    assert body.get("guidAssignments") == {}


@pytest.mark.parametrize("state", ["missing", "deleted"])
def test_EN_037_partial_update_of_missing_or_deleted_is_404_00_009(api: Api, state: str) -> None:
    if state == "missing":
        x = fresh("missing")
    else:
        x, g = _one(api)
        api.delete_entity(g)
    expect_error(
        _partial(api, x, {"description": "p"}),
        404,
        "ATLAS-404-00-009",
        contains=f"Instance {CT_DS} with unique attribute {{qualifiedName={qn(x)}}} does not exist",
    )
    expect_error(api.by_qn(CT_DS, x), 404, "ATLAS-404-00-009")


@pytest.mark.parametrize("kind", ["no-attr", "attr-name"])
def test_EN_038_partial_update_without_unique_attribute_is_400_00_013(api: Api, kind: str) -> None:
    x, _ = _one(api)
    params = {} if kind == "no-attr" else {"attr:name": x}
    expect_error(_partial(api, x, {"description": "p"}, params), 400, "ATLAS-400-00-013")


def test_EN_039_partial_update_can_rename_qualified_name(api: Api) -> None:
    x, g = _one(api)
    b = fresh("b")
    expect_ok(_partial(api, x, {"qualifiedName": qn(b)}))
    assert expect_ok(api.by_qn(CT_DS, b))["entity"]["guid"] == g
    expect_error(api.by_qn(CT_DS, x), 404, "ATLAS-404-00-009")


def test_EN_040_put_single_attribute_by_guid(api: Api) -> None:
    _, g = _one(api)
    body = expect_ok(api.put(f"/v2/entity/guid/{g}", "text", params={"name": "description"}))
    assert mutated(body, "PARTIAL_UPDATE") == [g]
    assert api.entity(g)["attributes"]["description"] == "text"


def test_EN_041_put_unknown_attribute_by_guid_is_400_00_023(api: Api) -> None:
    _, g = _one(api)
    expect_error(
        api.put(f"/v2/entity/guid/{g}", 1, params={"name": "nosuch"}),
        400,
        "ATLAS-400-00-023",
        contains=f"Attribute nosuch not found for type {CT_DS}",
    )


def test_EN_042_put_array_attribute_by_guid_is_400_00_027(api: Api) -> None:
    (gp,) = api.create(P(fresh("p")))
    expect_error(
        api.put(f"/v2/entity/guid/{gp}", [], params={"name": "inputs"}),
        400,
        "ATLAS-400-00-027",
        # the attribute's resolved type is printed: entity types resolve to objectid
        contains="inputs.array<objectid> : attribute update not supported",
    )


def test_EN_043_inbound_system_fields_are_ignored(api: Api) -> None:
    e = E(fresh("x"))
    e.update({"status": "DELETED", "createdBy": "someone", "createTime": 0})
    (g,) = api.create(e)
    got = api.entity(g)
    assert got["status"] == "ACTIVE"
    assert got["createdBy"] == api.username
    now_ms = time.time() * 1000
    assert (
        abs(got["createTime"] - now_ms) < 3600 * 1000
    )  # "now", allowing for clock skew with a remote server


def test_EN_011_placeholder_output_is_linked(api: Api) -> None:
    """EN-011: the placeholder-referenced output is the process's output after the request."""
    x, p = fresh("x"), fresh("p")
    gx, gp = api.create(E(x, "-1"), P(p, "-2", outputs=[oid("-1")]))
    outs = api.entity(gp)["relationshipAttributes"]["outputs"]
    assert [o["guid"] for o in outs] == [gx]
