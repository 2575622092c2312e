"""Typedef diff against a server: normalisation, classification, update bodies (no server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typedef_test_support import find, server_typesdef

from atlas_sync.typedefs import BundleError, load_bundle, plan_against
from atlas_sync.typedefs.builtin import atlas_base_typedefs

DATA = Path(__file__).resolve().parents[2] / "data" / "typedefs"


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "b.json").write_text(json.dumps(doc))
    return tmp_path


def _ds(*attrs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    d = {"name": "t_ds", "superTypes": ["DataSet"], "attributeDefs": list(attrs)}
    d.update(extra)
    return {"entityDefs": [d]}


NOTE = {"name": "note", "typeName": "string", "isOptional": True}


def test_empty_server_plans_every_type_as_create_in_dependency_order() -> None:
    bundle = load_bundle(DATA / "base")
    plan = plan_against(bundle, atlas_base_typedefs())
    assert [i.action for i in plan.items] == ["create"] * 5
    assert plan.order == bundle.order()
    body = plan.create_body()
    assert {d["name"] for d in body["entityDefs"]} == {"t_dataset", "t_job"}
    assert [d["name"] for d in body["relationshipDefs"]] == ["t_job_targets"]
    assert plan.counts() == {"create": 5, "update": 0, "unchanged": 0, "incompatible": 0}


@pytest.mark.parametrize("profile", ["lineage", "pico"])
def test_types_as_the_server_returns_them_compare_unchanged(profile: str) -> None:
    bundle = load_bundle(profile)
    plan = plan_against(bundle, server_typesdef(bundle))
    assert not plan.has_changes, plan.render()
    assert plan.create_body()["entityDefs"] == [] and plan.update_body()["entityDefs"] == []


def test_unset_description_is_not_a_change_although_the_server_fills_it_in(tmp_path: Path) -> None:
    bundle = load_bundle(_write(tmp_path, _ds(NOTE)))
    server = server_typesdef(bundle)
    assert find(server, "t_ds")["description"] == "t_ds"
    assert not plan_against(bundle, server).has_changes


def test_added_optional_attribute_is_an_update_that_keeps_existing_attributes(tmp_path: Path) -> None:
    old = load_bundle(_write(tmp_path / "old", _ds(NOTE)))
    server = server_typesdef(old)
    extra = {"name": "extra", "typeName": "int", "isOptional": True}
    new = load_bundle(_write(tmp_path / "new", _ds(NOTE, extra)))
    plan = plan_against(new, server)
    (item,) = [i for i in plan.items]
    assert item.action == "update"
    assert item.changes == ["add optional attribute extra: int"]
    body = plan.update_body()["entityDefs"][0]
    assert {a["name"] for a in body["attributeDefs"]} == {"note", "extra"}
    assert body["superTypes"] == ["DataSet"]
    for server_only in ("guid", "version", "createTime", "subTypes", "relationshipAttributeDefs"):
        assert server_only not in body


def test_changed_description_is_an_update(tmp_path: Path) -> None:
    old = load_bundle(_write(tmp_path / "old", _ds(NOTE, description="old words")))
    new = load_bundle(_write(tmp_path / "new", _ds(NOTE, description="new words")))
    (item,) = plan_against(new, server_typesdef(old)).items
    assert item.action == "update"
    assert item.changes == ['description "old words" -> "new words"']


def test_update_keeps_server_options_when_bundle_sets_none(tmp_path: Path) -> None:
    old = load_bundle(_write(tmp_path / "old", _ds(NOTE, options={"k": "v"})))
    new = load_bundle(_write(tmp_path / "new", _ds(NOTE, description="changed")))
    plan = plan_against(new, server_typesdef(old))
    assert plan.update_body()["entityDefs"][0]["options"] == {"k": "v"}  # a PUT without options clears them


@pytest.mark.parametrize(
    ("new_doc", "fragment", "code"),
    [
        (_ds(), "removes attribute note", "ATLAS-400-00-00D"),
        (
            _ds({"name": "note", "typeName": "int", "isOptional": True}),
            "changes the type",
            "ATLAS-400-00-029",
        ),
        (
            _ds(NOTE, {"name": "must", "typeName": "string"}),
            "adds mandatory attribute must",
            "ATLAS-400-00-00C",
        ),
        (
            {"entityDefs": [{"name": "t_ds", "superTypes": ["Asset"], "attributeDefs": [NOTE]}]},
            "removes supertype DataSet",
            "ATLAS-400-00-00E",
        ),
    ],
)
def test_incompatible_changes_name_the_atlas_error(
    tmp_path: Path, new_doc: dict[str, Any], fragment: str, code: str
) -> None:
    old = load_bundle(_write(tmp_path / "old", _ds(NOTE)))
    new = load_bundle(_write(tmp_path / "new", new_doc))
    plan = plan_against(new, server_typesdef(old))
    (item,) = plan.items
    assert item.action == "incompatible"
    assert any(fragment in p.message and code in p.code for p in item.problems), item.problems
    assert item.body is None
    assert plan.update_body()["entityDefs"] == [] and plan.create_body()["entityDefs"] == []
    assert "!" in plan.render()


def test_changed_relationship_end_is_incompatible() -> None:
    bundle = load_bundle(DATA / "base")
    server = server_typesdef(bundle)
    find(server, "t_job_targets")["endDef2"]["name"] = "oldName"
    item = {i.name: i for i in plan_against(bundle, server).items}["t_job_targets"]
    assert item.action == "incompatible"
    assert "endDef2" in item.problems[0].message and "ATLAS-400-00-037" in item.problems[0].code


def test_type_of_another_category_on_the_server_is_incompatible(tmp_path: Path) -> None:
    bundle = load_bundle(_write(tmp_path, _ds(NOTE)))
    server = atlas_base_typedefs()
    server["structDefs"].append({"name": "t_ds", "attributeDefs": []})
    (item,) = plan_against(bundle, server).items
    assert item.action == "incompatible"
    assert "STRUCT" in item.problems[0].message


def test_added_enum_value_is_an_update_and_dropped_values_are_kept() -> None:
    bundle = load_bundle(DATA / "base")
    server = server_typesdef(bundle)
    find(server, "t_tier")["elementDefs"] = [
        {"value": "bronze", "ordinal": 0},
        {"value": "tin", "ordinal": 1},
    ]
    plan = plan_against(bundle, server)
    item = {i.name: i for i in plan.items}["t_tier"]
    assert item.action == "update"
    assert item.changes == ["add enum value gold"]
    values = [e["value"] for e in plan.update_body()["enumDefs"][0]["elementDefs"]]
    assert sorted(values) == ["bronze", "gold", "tin"]
    ordinals = [e["ordinal"] for e in plan.update_body()["enumDefs"][0]["elementDefs"]]
    assert len(set(ordinals)) == 3


def test_dangling_reference_is_found_before_planning() -> None:
    bundle = load_bundle(DATA / "ext")
    with pytest.raises(BundleError):
        plan_against(bundle, atlas_base_typedefs())
    # ... and resolves once the server has the base bundle.
    base = load_bundle(DATA / "base")
    plan = plan_against(bundle, server_typesdef(base))
    assert [i.action for i in plan.items] == ["create"]


def test_plan_json_lists_order_types_and_summary() -> None:
    bundle = load_bundle(DATA / "base")
    doc = plan_against(bundle, atlas_base_typedefs(), target="test").to_dict()
    assert doc["order"] == bundle.order()
    assert doc["summary"]["create"] == 5
    assert {t["name"] for t in doc["types"]} == set(bundle.names)
    json.dumps(doc)  # serialisable


def test_plan_text_has_one_line_per_type_and_a_summary(tmp_path: Path) -> None:
    old = load_bundle(_write(tmp_path / "old", _ds(NOTE)))
    new = load_bundle(_write(tmp_path / "new", _ds(NOTE, description="d")))
    text = plan_against(new, server_typesdef(old)).render()
    lines = text.splitlines()
    assert any(line.strip().startswith("~ t_ds") for line in lines)
    assert lines[-1] == "Plan: 0 to create, 1 to update, 0 unchanged, 0 incompatible."


def test_a_server_holding_every_type_unchanged_needs_none_of_the_types_they_refer_to(tmp_path: Path) -> None:
    # what one request by serviceType answers: the bundle's types, without DataSet & co
    bundle = load_bundle(_write(tmp_path, _ds(NOTE)))
    plan = plan_against(bundle, server_typesdef(bundle, base=False))
    assert [i.action for i in plan.items] == ["unchanged"]


def test_a_change_still_needs_the_types_they_refer_to(tmp_path: Path) -> None:
    old = load_bundle(_write(tmp_path / "old", _ds(NOTE)))
    new = load_bundle(
        _write(tmp_path / "new", _ds(NOTE, {"name": "x", "typeName": "int", "isOptional": True}))
    )
    with pytest.raises(BundleError, match="unknown type 'DataSet'"):
        plan_against(new, server_typesdef(old, base=False))
    assert [i.action for i in plan_against(new, server_typesdef(old)).items] == ["update"]


def test_a_missing_type_needs_the_types_they_refer_to(tmp_path: Path) -> None:
    bundle = load_bundle(_write(tmp_path, _ds(NOTE)))
    with pytest.raises(BundleError, match="unknown type 'DataSet'"):
        plan_against(bundle, server_typesdef(bundle, skip={"t_ds"}, base=False))
