"""TD — typedef endpoints (checklist rows TD-001 … TD-050)."""

from __future__ import annotations

import time

import pytest
from contract_helpers import (
    CT_DS,
    TYPEDEF_LISTS,
    Api,
    E,
    ct_ds_def,
    end,
    entity_def,
    expect_error,
    expect_ok,
    expect_plain_500,
    fresh,
    fresh_type,
    random_guid,
    rel_def,
    struct_def,
    typedefs,
)

pytestmark = pytest.mark.contract


def _names(defs: list[dict]) -> list[str]:
    return [d["name"] for d in defs]


def _attr(d: dict, name: str) -> dict:
    return next(a for a in d["attributeDefs"] if a["name"] == name)


def _ds_type(api: Api, **extra) -> tuple[str, dict]:
    """A fresh type shaped like ct_ds; returns (name, def as read back)."""
    name = fresh_type()
    d = ct_ds_def(name)
    d.update(extra)
    api.create_types(entityDefs=[d])
    return name, api.get_type(name)


def _put(api: Api, d: dict):
    return api.put("/v2/types/typedefs", typedefs(entityDefs=[d]))


# ---------------------------------------------------------------------------------------------- reads


def test_TD_001_get_all_typedefs_has_six_lists_and_base_model(api: Api) -> None:
    body = expect_ok(api.get("/v2/types/typedefs"))
    for key in TYPEDEF_LISTS:
        assert isinstance(body[key], list), key
    names = set(_names(body["entityDefs"]))
    assert {"Referenceable", "Asset", "DataSet", "Process"} <= names


@pytest.mark.parametrize("type_param", ["ENTITY", "entity", "class"])
def test_TD_002_filter_by_type_and_name(api: Api, type_param: str) -> None:
    body = expect_ok(api.get("/v2/types/typedefs", params={"type": type_param, "name": "DataSet"}))
    assert _names(body["entityDefs"]) == ["DataSet"]
    for key in TYPEDEF_LISTS:
        if key != "entityDefs":
            assert body[key] == [], key


def test_TD_003_supertype_filter_lists_transitive_subtypes_only(api: Api) -> None:
    body = expect_ok(api.get("/v2/types/typedefs", params={"type": "ENTITY", "supertype": "DataSet"}))
    names = _names(body["entityDefs"])
    assert CT_DS in names
    assert "DataSet" not in names


def test_TD_004_headers_are_guid_name_category(api: Api) -> None:
    body = expect_ok(api.get("/v2/types/typedefs/headers"))
    assert isinstance(body, list) and body
    for h in body:
        assert {"guid", "name", "category"} <= set(h)
    ds = [h for h in body if h["name"] == "DataSet"]
    assert len(ds) == 1 and ds[0]["category"] == "ENTITY"
    # built-in types carry serviceType atlas_core, so it shows in their headers
    assert ds[0]["serviceType"] == "atlas_core"
    mine = [h for h in body if h["name"] == CT_DS]
    assert len(mine) == 1 and "serviceType" not in mine[0]


def test_TD_005_get_by_name_returns_the_def(api: Api) -> None:
    d = api.get_type("DataSet")
    assert d["name"] == "DataSet"
    assert d["category"] == "ENTITY"
    assert d["superTypes"] == ["Asset"]


def test_TD_006_unknown_name_is_404_00_001(api: Api) -> None:
    expect_error(
        api.get("/v2/types/typedef/name/no_such_type"),
        404,
        "ATLAS-404-00-001",
        contains="Given typename no_such_type was invalid",
    )


def test_TD_007_primitive_name_is_400_00_024(api: Api) -> None:
    expect_error(
        api.get("/v2/types/typedef/name/string"),
        400,
        "ATLAS-400-00-024",
        contains="PRIMITIVE is a System-type",
    )


def test_TD_008_unknown_entitydef_guid_is_404_00_002(api: Api) -> None:
    g = random_guid()
    expect_error(
        api.get(f"/v2/types/entitydef/guid/{g}"),
        404,
        "ATLAS-404-00-002",
        contains=f"Given type guid {g} was invalid",
    )


def _service_typed(api: Api) -> tuple[str, list[str]]:
    """A fresh serviceType with an entity type and a relationship type of it; (serviceType, names)."""
    service = fresh_type("ct_svc")
    ds, rel = fresh_type(), fresh_type()
    api.create_types(
        entityDefs=[entity_def(ds, serviceType=service)],
        relationshipDefs=[rel_def(rel, end(ds, "ct_a"), end(ds, "ct_b"), serviceType=service)],
    )
    return service, [ds, rel]


def test_TD_051_servicetype_filter_lists_every_category_of_that_service_type_only(api: Api) -> None:
    # what a sync checks its profile's types by (one request): Atlas's FilterUtil, lowercase parameter
    service, (ds, rel) = _service_typed(api)
    body = expect_ok(api.get("/v2/types/typedefs", params={"servicetype": service}))
    assert _names(body["entityDefs"]) == [ds]
    assert _names(body["relationshipDefs"]) == [rel]
    assert all(body[k] == [] for k in TYPEDEF_LISTS if k not in ("entityDefs", "relationshipDefs"))
    assert body["entityDefs"][0]["serviceType"] == service
    assert {a["name"] for a in body["entityDefs"][0]["attributeDefs"]} == set()
    none = expect_ok(api.get("/v2/types/typedefs", params={"servicetype": fresh_type("ct_none")}))
    assert all(none[k] == [] for k in TYPEDEF_LISTS)


def test_TD_052_servicetype_filter_combines_with_type(api: Api) -> None:
    service, (ds, _) = _service_typed(api)
    body = expect_ok(api.get("/v2/types/typedefs", params={"servicetype": service, "type": "entity"}))
    assert _names(body["entityDefs"]) == [ds]
    assert body["relationshipDefs"] == []


@pytest.mark.parametrize("param", ["serviceType", "SERVICETYPE"])
def test_TD_053_servicetype_parameter_is_lowercase_only_other_spellings_are_ignored(
    api: Api, param: str
) -> None:
    # (Atlas's TypesREST keeps parameter names as sent; FilterUtil reads "servicetype")
    service, (ds, _) = _service_typed(api)
    body = expect_ok(api.get("/v2/types/typedefs", params={param: service}))
    names = set(_names(body["entityDefs"]))
    assert {ds, "DataSet", "Referenceable"} <= names


@pytest.mark.parametrize("param", ["servicetype", "name", "supertype", "type"])
def test_TD_054_a_blank_filter_is_no_filter(api: Api, param: str) -> None:
    body = expect_ok(api.get("/v2/types/typedefs", params={param: ""}))
    assert {"DataSet", "Referenceable", CT_DS} <= set(_names(body["entityDefs"]))


def test_TD_055_a_repeated_filter_parameter_counts_its_first_value(api: Api) -> None:
    service, (ds, _) = _service_typed(api)
    first = expect_ok(
        api.get("/v2/types/typedefs", params=[("servicetype", service), ("servicetype", "none")])
    )
    assert _names(first["entityDefs"]) == [ds]
    other = expect_ok(
        api.get("/v2/types/typedefs", params=[("servicetype", "none"), ("servicetype", service)])
    )
    assert other["entityDefs"] == []


# ---------------------------------------------------------------------------------------------- create


def test_TD_009_create_fills_server_fields(api: Api) -> None:
    name = fresh_type()
    body = api.create_types(entityDefs=[ct_ds_def(name)])
    assert len(body["entityDefs"]) == 1
    d = body["entityDefs"][0]
    assert d["name"] == name
    assert isinstance(d["guid"], str) and d["guid"]
    assert d["version"] == 1
    assert d["typeVersion"] == "1.0"
    assert d["description"] == name
    assert d["category"] == "ENTITY"
    assert d["createdBy"] == api.username
    assert isinstance(d["createTime"], int) and d["createTime"] > 0
    for key in TYPEDEF_LISTS:
        if key != "entityDefs":
            assert body[key] == [], key


def test_TD_010_attribute_def_is_normalised_on_read(api: Api) -> None:
    d = expect_ok(api.get(f"/v2/types/entitydef/name/{CT_DS}"))
    a = _attr(d, "count")
    assert a["typeName"] == "int"
    assert a["cardinality"] == "SINGLE"
    assert a["valuesMinCount"] == 0
    assert a["valuesMaxCount"] == 1
    assert a["isUnique"] is False
    assert a["isIndexable"] is False
    assert a["searchWeight"] == -1
    assert a["includeInNotification"] is False
    assert a["isOptional"] is True


def test_TD_011_attribute_without_isOptional_is_mandatory(api: Api) -> None:
    name = fresh_type()
    api.create_types(entityDefs=[entity_def(name, attrs=[{"name": "m", "typeName": "string"}])])
    assert _attr(api.get_type(name), "m")["isOptional"] is False


def test_TD_012_misspelled_isOptional_is_ignored_and_attribute_mandatory(api: Api) -> None:
    name = fresh_type()
    api.create_types(
        entityDefs=[entity_def(name, attrs=[{"name": "m", "typeName": "string", "isOptinal": True}])]
    )
    assert _attr(api.get_type(name), "m")["isOptional"] is False


def test_TD_013_order_inside_one_request_is_irrelevant(api: Api) -> None:
    sup, sub, rel = fresh_type("ct_sup"), fresh_type("ct_sub"), fresh_type("ct_rel")
    body = typedefs(
        relationshipDefs=[rel_def(rel, end(sub, "peer"), end(sup, "owner_of"))],
        entityDefs=[entity_def(sub, [sup]), entity_def(sup, ["DataSet"])],
    )
    expect_ok(api.post("/v2/types/typedefs", body))
    for n in (sup, sub, rel):
        expect_ok(api.get(f"/v2/types/typedef/name/{n}"))
    assert api.get_type(sub)["superTypes"] == [sup]


def test_TD_014_post_existing_type_is_409(api: Api) -> None:
    expect_error(
        api.post_bad_typedefs(typedefs(entityDefs=[ct_ds_def()])),
        409,
        "ATLAS-409-00-001",
        contains=f"Given type {CT_DS} already exists",
    )


def test_TD_015_conflict_rolls_back_the_whole_batch(api: Api) -> None:
    x = fresh_type()
    r = api.post_bad_typedefs(typedefs(entityDefs=[entity_def(x), ct_ds_def()]))
    expect_error(r, 409, "ATLAS-409-00-001")
    expect_error(api.get(f"/v2/types/typedef/name/{x}"), 404, "ATLAS-404-00-001")


def test_TD_016_unknown_supertype_is_400_00_029(api: Api) -> None:
    r = api.post_bad_typedefs(typedefs(entityDefs=[entity_def(fresh_type(), ["no_such_super"])]))
    expect_error(r, 400, "ATLAS-400-00-029", contains="Given typename no_such_super was invalid")


@pytest.mark.parametrize("type_name", ["no_such_type", "array<no_such_type>"])
def test_TD_017_unknown_attribute_type_is_400_00_029(api: Api, type_name: str) -> None:
    d = entity_def(fresh_type(), attrs=[{"name": "a", "typeName": type_name, "isOptional": True}])
    expect_error(api.post_bad_typedefs(typedefs(entityDefs=[d])), 400, "ATLAS-400-00-029")


def test_TD_018_attribute_without_typeName_is_plain_500(api: Api) -> None:
    name = fresh_type()
    d = entity_def(name, attrs=[{"name": "a", "isOptional": True}])
    expect_plain_500(api.post_bad_typedefs(typedefs(entityDefs=[d])))
    expect_error(api.get(f"/v2/types/typedef/name/{name}"), 404, "ATLAS-404-00-001")


def test_TD_019_empty_attribute_name_is_400_00_02B(api: Api) -> None:
    d = entity_def(fresh_type(), attrs=[{"name": "", "typeName": "string", "isOptional": True}])
    body = expect_error(
        api.post_bad_typedefs(typedefs(entityDefs=[d])),
        400,
        "ATLAS-400-00-02B",
        startswith="Mandatory field ",
    )
    assert body["errorMessage"].endswith(".name has empty/null value"), body


def test_TD_020_struct_as_entity_supertype_is_400_00_003(api: Api) -> None:
    s, x = fresh_type("ct_struct"), fresh_type()
    body = typedefs(structDefs=[struct_def(s)], entityDefs=[entity_def(x, [s])])
    expect_error(
        api.post_bad_typedefs(body),
        400,
        "ATLAS-400-00-003",
        contains=f"{s}: incompatible supertype {x}",
    )


def test_TD_021_process_subtype_redeclaring_inputs_is_400_00_09E(api: Api) -> None:
    x = fresh_type()
    d = entity_def(x, ["Process"], [{"name": "inputs", "typeName": f"array<{CT_DS}>", "isOptional": True}])
    expect_error(
        api.post_bad_typedefs(typedefs(entityDefs=[d])),
        400,
        "ATLAS-400-00-09E",
        contains=f"Invalid attribute name: {x}.inputs. Attribute already exists in another parent type: Process",
    )


@pytest.mark.parametrize(("attr", "parent"), [("name", "Asset"), ("qualifiedName", "Referenceable")])
def test_TD_022_dataset_subtype_redeclaring_parent_attribute_is_400_00_09E(
    api: Api, attr: str, parent: str
) -> None:
    x = fresh_type()
    d = entity_def(x, ["DataSet"], [{"name": attr, "typeName": "string", "isOptional": True}])
    expect_error(
        api.post_bad_typedefs(typedefs(entityDefs=[d])),
        400,
        "ATLAS-400-00-09E",
        contains=f"Attribute already exists in another parent type: {parent}",
    )


def test_TD_023_set_cardinality_on_string_is_400_00_012(api: Api) -> None:
    x = fresh_type()
    d = entity_def(
        x, attrs=[{"name": "tags", "typeName": "string", "cardinality": "SET", "isOptional": True}]
    )
    expect_error(
        api.post_bad_typedefs(typedefs(entityDefs=[d])),
        400,
        "ATLAS-400-00-012",
        contains=f"Cardinality of attribute {x}.tags requires a list or set type",
    )


def test_TD_024_classification_as_attribute_type_is_400_00_081(api: Api) -> None:
    tag, x = fresh_type("ct_tag"), fresh_type()
    body = typedefs(
        classificationDefs=[{"name": tag, "attributeDefs": []}],
        entityDefs=[entity_def(x, attrs=[{"name": "t", "typeName": tag, "isOptional": True}])],
    )
    expect_error(
        api.post_bad_typedefs(body),
        400,
        "ATLAS-400-00-081",
        contains=f"{x}.t: invalid attribute type. Attribute cannot be of type classification",
    )


@pytest.mark.parametrize("prefix", ["ct.dot", "ct-dash", "1ct", "_ct"])
def test_TD_025_invalid_type_names_are_400_00_019(api: Api, prefix: str) -> None:
    name = fresh_type(prefix)
    expect_error(
        api.post_bad_typedefs(typedefs(entityDefs=[entity_def(name)])),
        400,
        "ATLAS-400-00-019",
        startswith=f"{name}: invalid name for ENTITY.",
        # two spaces after the period; MessageFormat turns the template's '_' into a bare _
        contains="Names must consist of a letter followed by a sequence of letter, number, space, or _ characters",
    )


@pytest.mark.parametrize("prefix", ["ct with space", "__ct_int"])
def test_TD_026_space_and_double_underscore_names_are_accepted(api: Api, prefix: str) -> None:
    name = fresh_type(prefix)
    api.create_types(entityDefs=[entity_def(name)])
    assert api.get_type(name)["name"] == name


@pytest.mark.parametrize("name", ["servicetype", "description", "version", "options"])
def test_TD_027_reserved_type_names_fail_with_plain_500(api: Api, name: str) -> None:
    expect_plain_500(api.post_bad_typedefs(typedefs(entityDefs=[entity_def(name)])))
    expect_error(api.get(f"/v2/types/typedef/name/{name}"), 404, "ATLAS-404-00-001")


def test_TD_027_type_named_name_is_created_and_answers_as_brackets(api: Api) -> None:
    # checklist correction (docs/real-atlas-differences.md RA-05): on a real 2.4.0 the `name` case is not a
    # 500. The create answers 200 with the def's name "[]" and description "name", and the type reads back
    # under "name" with the same guid. A create while that "[]" def exists is a plain 500.
    leftover = api.get("/v2/types/typedef/name/[]").status_code == 200  # an interrupted earlier run
    resp = api.post("/v2/types/typedefs", typedefs(entityDefs=[entity_def("name")]))
    try:
        if leftover:
            expect_plain_500(resp)
            return
        (d,) = expect_ok(resp)["entityDefs"]
        assert (d["name"], d["description"]) == ("[]", "name")
        got = expect_ok(api.get("/v2/types/typedef/name/name"))
        assert (got["name"], got["guid"]) == ("name", d["guid"])
        expect_plain_500(api.post("/v2/types/typedefs", typedefs(entityDefs=[entity_def("name")])))
    finally:
        # a real 2.4.0 deletes the "[]" def (GET by "name" keeps answering, a later create works again);
        # the emulator stores the type as "name" and deletes that
        for alias in ("[]", "name"):
            api.delete("/v2/types/typedefs", json=typedefs(entityDefs=[{"name": alias}]))


def test_TD_028_relationship_end_of_unknown_type_is_400_00_029(api: Api) -> None:
    r = rel_def(fresh_type("ct_rel"), end("no_such_type", "a"), end(CT_DS, "b"))
    expect_error(api.post_bad_typedefs(typedefs(relationshipDefs=[r])), 400, "ATLAS-400-00-029")


def test_TD_029_relationship_end_without_name_is_400_00_02B(api: Api) -> None:
    a = fresh_type()
    r = rel_def(fresh_type("ct_rel"), end(a, None), end(CT_DS, "back"))
    expect_error(
        api.post_bad_typedefs(typedefs(entityDefs=[entity_def(a)], relationshipDefs=[r])),
        400,
        "ATLAS-400-00-02B",
        contains="Mandatory field endDef1.name has empty/null value",
    )


@pytest.mark.parametrize("category", ["ASSOCIATION", None])
def test_TD_030_association_with_container_end_is_400_00_030(api: Api, category: str | None) -> None:
    a, b = fresh_type(), fresh_type()
    rel = fresh_type("ct_rel")
    r = rel_def(rel, end(a, "bs", "SET", isContainer=True), end(b, "a_of"), category)
    body = typedefs(entityDefs=[entity_def(a), entity_def(b)], relationshipDefs=[r])
    expect_error(
        api.post_bad_typedefs(body),
        400,
        "ATLAS-400-00-030",
        contains=f"ASSOCIATION relationshipDef {rel} creation attempted with an end specifying isContainer",
    )


def test_TD_031_aggregation_without_container_end_is_400_00_032(api: Api) -> None:
    a, b = fresh_type(), fresh_type()
    rel = fresh_type("ct_rel")
    r = rel_def(rel, end(a, "bs", "SET"), end(b, "a_of"), "AGGREGATION")
    body = typedefs(entityDefs=[entity_def(a), entity_def(b)], relationshipDefs=[r])
    expect_error(
        api.post_bad_typedefs(body),
        400,
        "ATLAS-400-00-032",
        contains=f"AGGREGATION relationshipDef {rel} creation attempted without an end specifying isContainer",
    )


# ---------------------------------------------------------------------------------------------- update


def test_TD_032_put_never_creates(api: Api) -> None:
    name = fresh_type()
    expect_error(_put(api, entity_def(name)), 404, "ATLAS-404-00-001")
    expect_error(api.get(f"/v2/types/typedef/name/{name}"), 404, "ATLAS-404-00-001")


def test_TD_033_put_omitting_an_attribute_is_400_00_00D(api: Api) -> None:
    name, _ = _ds_type(api)
    d = ct_ds_def(name)
    d["attributeDefs"] = [a for a in d["attributeDefs"] if a["name"] != "note"]
    expect_error(
        _put(api, d), 400, "ATLAS-400-00-00D", contains=f"{name}.note : attribute delete not supported"
    )


def test_TD_034_put_adding_mandatory_attribute_is_400_00_00C(api: Api) -> None:
    name, _ = _ds_type(api)
    d = ct_ds_def(name)
    d["attributeDefs"].append({"name": "extra", "typeName": "string"})
    expect_error(
        _put(api, d), 400, "ATLAS-400-00-00C", contains=f"{name}.extra : can not add mandatory attribute"
    )


def test_TD_035_put_adding_optional_attribute_bumps_version(api: Api) -> None:
    name, before = _ds_type(api)
    d = ct_ds_def(name)
    d["attributeDefs"].append({"name": "extra", "typeName": "string", "isOptional": True})
    body = expect_ok(_put(api, d))
    assert body["entityDefs"][0]["version"] == before["version"] + 1
    after = api.get_type(name)
    assert _attr(after, "extra")["isOptional"] is True


def test_TD_036_put_unchanged_still_bumps_version_and_update_time(api: Api) -> None:
    name, before = _ds_type(api)
    time.sleep(0.02)  # updateTime has millisecond resolution
    body = expect_ok(_put(api, ct_ds_def(name)))
    d = body["entityDefs"][0]
    assert d["version"] == before["version"] + 1
    assert d["updateTime"] > before["updateTime"]


def test_TD_037_put_def_as_returned_by_get_is_accepted(api: Api) -> None:
    name, before = _ds_type(api)
    body = expect_ok(_put(api, dict(before)))
    d = body["entityDefs"][0]
    assert d["guid"] == before["guid"]
    assert d["version"] == before["version"] + 1


def test_TD_038_put_changing_attribute_type_is_400_00_029(api: Api) -> None:
    name, _ = _ds_type(api)
    d = ct_ds_def(name)
    _attr(d, "count")["typeName"] = "long"
    expect_error(
        _put(api, d), 400, "ATLAS-400-00-029", contains="Data type update for attribute is not supported"
    )


@pytest.mark.parametrize("omit", [False, True], ids=["empty", "omitted"])
def test_TD_039_put_removing_supertype_is_400_00_00E(api: Api, omit: bool) -> None:
    name, _ = _ds_type(api)
    d = ct_ds_def(name)
    if omit:
        del d["superTypes"]
    else:
        d["superTypes"] = []
    expect_error(_put(api, d), 400, "ATLAS-400-00-00E", contains="superType remove not supported")


def test_TD_040_put_without_description_keeps_it_and_clears_options(api: Api) -> None:
    name, before = _ds_type(api, description="d1", options={"k": "v"})
    assert before["description"] == "d1"
    assert before["options"] == {"k": "v"}
    expect_ok(_put(api, ct_ds_def(name)))
    after = api.get_type(name)
    assert after["description"] == "d1"
    assert "options" not in after


def test_TD_041_put_relationship_end_name_change_is_400_00_037(api: Api) -> None:
    a, b, rel = fresh_type(), fresh_type(), fresh_type("ct_rel")
    r = rel_def(rel, end(a, "bs", "SET"), end(b, "a_of"))
    api.create_types(entityDefs=[entity_def(a), entity_def(b)], relationshipDefs=[r])
    changed = rel_def(rel, end(a, "bees", "SET"), end(b, "a_of"))
    # the message quotes AtlasRelationshipEndDef.toString() of the new and the existing end
    expect_error(
        api.put("/v2/types/typedefs", typedefs(relationshipDefs=[changed])),
        400,
        "ATLAS-400-00-037",
        startswith=f"invalid update for relationshipDef {rel}: new end1 AtlasRelationshipEndDef{{type='{a}', "
        "name==>'bees'",
    )


# ---------------------------------------------------------------------------------------------- delete


def test_TD_042_delete_unknown_name_is_404_00_001(api: Api) -> None:
    expect_error(api.delete("/v2/types/typedef/name/no_such_type"), 404, "ATLAS-404-00-001")


def test_TD_043_delete_unused_type_is_204_without_body(api: Api) -> None:
    name = api.fresh_entity_type()
    r = api.delete(f"/v2/types/typedef/name/{name}")
    assert r.status_code == 204, r.text
    assert r.content == b""
    expect_error(api.get(f"/v2/types/typedef/name/{name}"), 404, "ATLAS-404-00-001")


def test_TD_044_delete_type_with_active_instance_is_409_00_002(api: Api) -> None:
    name = api.fresh_entity_type()
    api.create(E(fresh(), type_=name))
    expect_error(
        api.delete(f"/v2/types/typedef/name/{name}"),
        409,
        "ATLAS-409-00-002",
        contains=f"Given type {name} has references",
    )


def _type_with_deleted_instance(api: Api) -> tuple[str, str]:
    name = api.fresh_entity_type()
    (g,) = api.create(E(fresh(), type_=name))
    api.delete_entity(g)
    return name, g


def test_TD_045_soft_deleted_instance_still_blocks_type_delete(api: Api) -> None:
    name, _ = _type_with_deleted_instance(api)
    expect_error(api.delete(f"/v2/types/typedef/name/{name}"), 409, "ATLAS-409-00-002")


def test_TD_046_purged_instance_unblocks_type_delete(api: Api) -> None:
    name, g = _type_with_deleted_instance(api)
    api.purge([g])
    r = api.delete(f"/v2/types/typedef/name/{name}")
    assert r.status_code == 204, r.text


def test_TD_047_delete_supertype_alone_is_409_00_002(api: Api) -> None:
    sup = api.fresh_entity_type()
    api.fresh_entity_type(supers=[sup])
    expect_error(api.delete(f"/v2/types/typedef/name/{sup}"), 409, "ATLAS-409-00-002")


def test_TD_048_delete_relationship_end_type_is_409_00_005(api: Api) -> None:
    a, b, rel = fresh_type(), fresh_type(), fresh_type("ct_rel")
    r = rel_def(rel, end(a, "bs", "SET"), end(b, "a_of"))
    api.create_types(entityDefs=[entity_def(a), entity_def(b)], relationshipDefs=[r])
    expect_error(
        api.delete(f"/v2/types/typedef/name/{a}"),
        409,
        "ATLAS-409-00-005",
        contains=f"Given type {a} has associated relationshipDefs",
    )


def test_TD_049_delete_mutually_referencing_types_in_one_body(api: Api) -> None:
    a, b, rel = fresh_type(), fresh_type(), fresh_type("ct_rel")
    r = rel_def(rel, end(a, "bs", "SET"), end(b, "a_of"))
    api.create_types(entityDefs=[entity_def(a), entity_def(b, [a])], relationshipDefs=[r])
    body = typedefs(relationshipDefs=[{"name": rel}], entityDefs=[{"name": a}, {"name": b}])
    resp = api.delete("/v2/types/typedefs", json=body)
    assert resp.status_code == 204, resp.text
    for n in (a, b, rel):
        expect_error(api.get(f"/v2/types/typedef/name/{n}"), 404, "ATLAS-404-00-001")


def test_TD_050_relationship_def_with_deleted_instances_is_409_00_002(api: Api) -> None:
    a, b, rel = fresh_type(), fresh_type(), fresh_type("ct_rel")
    r = rel_def(rel, end(a, "bs", "SET"), end(b, "a_of"))
    api.create_types(entityDefs=[entity_def(a), entity_def(b)], relationshipDefs=[r])
    (gb,) = api.create(E(fresh("b"), type_=b))
    (ga,) = api.create(E(fresh("a"), type_=a, bs=[{"guid": gb, "typeName": b}]))
    # the relationship exists before the deletes
    assert [x["guid"] for x in api.entity(ga)["relationshipAttributes"]["bs"]] == [gb]
    api.delete_entity(ga)
    api.delete_entity(gb)
    expect_error(api.delete(f"/v2/types/typedef/name/{rel}"), 409, "ATLAS-409-00-002")
