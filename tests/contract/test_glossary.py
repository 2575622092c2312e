"""GL — the glossary REST API (rows in ``extension_ids.txt``): what ``atlas-sync glossary`` and term
assignment rely on. Expectations come from Atlas's ``GlossaryService`` / ``GlossaryTermUtils`` (2.1.0 and
2.4.0 sources) and were checked against a real Atlas 2.1.0 (docs/contract-suite.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from contract_helpers import RUN, Api, E, expect_error, expect_ok, expect_status, fresh

pytestmark = pytest.mark.contract


def _name(prefix: str) -> str:
    return f"{prefix}_{RUN}_{fresh('g')}"


def _dissociate_all(api: Api, term_guid: str) -> None:
    r = api.get(f"/v2/glossary/terms/{term_guid}/assignedEntities")
    if r.ok and r.json():
        api.delete(
            f"/v2/glossary/terms/{term_guid}/assignedEntities",
            json=[{"guid": e["guid"], "relationshipGuid": e["relationshipGuid"]} for e in r.json()],
        )


@pytest.fixture
def glossary(api: Api) -> Iterator[dict[str, Any]]:
    """A fresh glossary, deleted again (with its terms and categories) after the test."""
    g = expect_ok(api.post("/v2/glossary", {"name": _name("ct_gl"), "shortDescription": "contract"}))
    yield g
    r = api.get(f"/v2/glossary/{g['guid']}")
    if r.ok and r.json().get("name"):
        for t in r.json().get("terms") or []:
            _dissociate_all(api, t["termGuid"])
        api.delete(f"/v2/glossary/{g['guid']}")


def terms(api: Api, glossary: dict[str, Any], *names: str) -> list[dict[str, Any]]:
    body = [{"name": n, "anchor": {"glossaryGuid": glossary["guid"]}} for n in names]
    return list(expect_ok(api.post("/v2/glossary/terms", body)))


def related(term: dict[str, Any], field: str) -> set[str]:
    return {h["termGuid"] for h in term.get(field) or []}


def test_GL_001_glossary_create_derives_qualified_name_and_refuses_duplicates(api: Api) -> None:
    name = _name("ct_gl")
    g = expect_ok(api.post("/v2/glossary", {"name": name, "longDescription": "long"}))
    try:
        assert (g["qualifiedName"], g["name"], g["longDescription"]) == (name, name, "long")
        assert g["guid"]
        expect_error(api.post("/v2/glossary", {"name": name}), 409, "ATLAS-409-00-007", contains=name)
        expect_error(api.post("/v2/glossary", {"name": name + "@x"}), 400, "ATLAS-400-00-083")
        expect_error(api.post("/v2/glossary", {"name": name + ".x"}), 400, "ATLAS-400-00-083")
        by_qn = expect_ok(
            api.get("/v2/entity/uniqueAttribute/type/AtlasGlossary", params={"attr:qualifiedName": name})
        )
        assert by_qn["entity"]["guid"] == g["guid"]
    finally:
        api.delete(f"/v2/glossary/{g['guid']}")


def test_GL_002_glossary_list_and_get_show_term_and_category_headers(
    api: Api, glossary: dict[str, Any]
) -> None:
    [t] = terms(api, glossary, "revenue")
    c = expect_ok(
        api.post("/v2/glossary/category", {"name": "finance", "anchor": {"glossaryGuid": glossary["guid"]}})
    )
    listed = expect_ok(api.get("/v2/glossary", params={"limit": -1}))
    [mine] = [g for g in listed if g["guid"] == glossary["guid"]]
    assert [(h["termGuid"], h["displayText"]) for h in mine["terms"]] == [(t["guid"], "revenue")]
    assert [(h["categoryGuid"], h["displayText"]) for h in mine["categories"]] == [(c["guid"], "finance")]
    got = expect_ok(api.get(f"/v2/glossary/{glossary['guid']}"))
    assert {h["termGuid"] for h in got["terms"]} == {t["guid"]}
    assert got["shortDescription"] == "contract"


def test_GL_003_terms_are_entities_with_qualified_name_term_at_glossary(
    api: Api, glossary: dict[str, Any]
) -> None:
    a, b = terms(api, glossary, "alpha", "beta")
    gq = glossary["qualifiedName"]
    assert (a["qualifiedName"], b["qualifiedName"]) == (f"alpha@{gq}", f"beta@{gq}")
    assert a["anchor"]["glossaryGuid"] == glossary["guid"]
    found = expect_ok(
        api.get(
            "/v2/entity/uniqueAttribute/type/AtlasGlossaryTerm", params={"attr:qualifiedName": f"alpha@{gq}"}
        )
    )
    assert (found["entity"]["guid"], found["entity"]["typeName"]) == (a["guid"], "AtlasGlossaryTerm")
    expect_error(
        api.post("/v2/glossary/term", {"name": "alpha", "anchor": {"glossaryGuid": glossary["guid"]}}),
        409,
        "ATLAS-409-00-009",
        contains=f"alpha@{gq}",
    )
    expect_error(api.post("/v2/glossary/term", {"name": "no_anchor"}), 400, "ATLAS-400-00-072")


def test_GL_004_term_relations_synonyms_see_also_and_replacement(api: Api, glossary: dict[str, Any]) -> None:
    a, b, c = terms(api, glossary, "client", "customer", "buyer")
    body = {
        "name": "client",
        "anchor": {"glossaryGuid": glossary["guid"]},
        "synonyms": [{"termGuid": b["guid"]}],
        "seeAlso": [{"termGuid": c["guid"]}],
        "replacedBy": [{"termGuid": b["guid"]}],
    }
    updated = expect_ok(api.put(f"/v2/glossary/term/{a['guid']}", body))
    assert related(updated, "synonyms") == {b["guid"]}
    assert related(updated, "seeAlso") == {c["guid"]}
    assert related(updated, "replacedBy") == {b["guid"]}
    other = expect_ok(api.get(f"/v2/glossary/term/{b['guid']}"))
    # both ends of AtlasGlossarySynonym are named synonyms; the replacement pair has two names
    assert related(other, "synonyms") == {a["guid"]}
    assert related(other, "replacementTerms") == {a["guid"]}
    assert related(expect_ok(api.get(f"/v2/glossary/term/{c['guid']}")), "seeAlso") == {a["guid"]}
    self_ref = dict(body, synonyms=[{"termGuid": a["guid"]}])
    expect_error(api.put(f"/v2/glossary/term/{a['guid']}", self_ref), 400, "ATLAS-400-00-07E")


def test_GL_005_term_update_replaces_relations_and_keeps_additional_attributes(
    api: Api, glossary: dict[str, Any]
) -> None:
    a, b = terms(api, glossary, "one", "two")
    anchor = {"glossaryGuid": glossary["guid"]}
    expect_ok(
        api.put(
            f"/v2/glossary/term/{a['guid']}",
            {
                "name": "one",
                "anchor": anchor,
                "synonyms": [{"termGuid": b["guid"]}],
                "additionalAttributes": {"k": "v"},
            },
        )
    )
    again = expect_ok(
        api.put(
            f"/v2/glossary/term/{a['guid']}",
            {"name": "one", "anchor": anchor, "shortDescription": "s", "additionalAttributes": {"k": "v"}},
        )
    )
    assert not again.get("synonyms")  # a relation left out of the body is removed
    assert again["additionalAttributes"] == {"k": "v"}
    assert again["shortDescription"] == "s"
    assert not expect_ok(api.get(f"/v2/glossary/term/{b['guid']}")).get("synonyms")


def test_GL_006_renamed_term_keeps_its_guid_and_its_qualified_name_follows(
    api: Api, glossary: dict[str, Any]
) -> None:
    [a] = terms(api, glossary, "old_name")
    renamed = expect_ok(
        api.put(
            f"/v2/glossary/term/{a['guid']}",
            {"name": "new_name", "anchor": {"glossaryGuid": glossary["guid"]}},
        )
    )
    # the guid is the stable identity; the qualifiedName is derived again (seen on a real 2.1.0)
    assert (renamed["guid"], renamed["name"], renamed["qualifiedName"]) == (
        a["guid"],
        "new_name",
        f"new_name@{glossary['qualifiedName']}",
    )
    [b] = terms(api, glossary, "old_name")  # the old name is free again
    assert b["qualifiedName"] == a["qualifiedName"]
    listed = expect_ok(api.get(f"/v2/glossary/{glossary['guid']}"))
    assert sorted(h["displayText"] for h in listed["terms"]) == ["new_name", "old_name"]


def test_GL_007_nested_categories_and_term_categorization(api: Api, glossary: dict[str, Any]) -> None:
    anchor = {"glossaryGuid": glossary["guid"]}
    parent = expect_ok(api.post("/v2/glossary/category", {"name": "sales", "anchor": anchor}))
    child = expect_ok(
        api.post(
            "/v2/glossary/category",
            {"name": "emea", "anchor": anchor, "parentCategory": {"categoryGuid": parent["guid"]}},
        )
    )
    gq = glossary["qualifiedName"]
    assert parent["qualifiedName"] == f"sales@{gq}"
    assert child["qualifiedName"] == f"emea.sales@{gq}"  # child.parent@glossary (seen on a real 2.1.0)
    assert child["parentCategory"]["categoryGuid"] == parent["guid"]
    got = expect_ok(api.get(f"/v2/glossary/category/{parent['guid']}"))
    assert [h["categoryGuid"] for h in got["childrenCategories"]] == [child["guid"]]
    [t] = terms(api, glossary, "deal")
    t2 = expect_ok(
        api.put(
            f"/v2/glossary/term/{t['guid']}",
            {"name": "deal", "anchor": anchor, "categories": [{"categoryGuid": child["guid"]}]},
        )
    )
    assert [h["categoryGuid"] for h in t2["categories"]] == [child["guid"]]
    assert [h["termGuid"] for h in expect_ok(api.get(f"/v2/glossary/category/{child['guid']}"))["terms"]] == [
        t["guid"]
    ]
    listed = expect_ok(api.get(f"/v2/glossary/{glossary['guid']}"))
    parents = {h["categoryGuid"]: h.get("parentCategoryGuid") for h in listed["categories"]}
    assert parents == {parent["guid"]: None, child["guid"]: parent["guid"]}


def test_GL_008_glossary_terms_full_objects_and_paging(api: Api, glossary: dict[str, Any]) -> None:
    made = terms(api, glossary, "t1", "t2", "t3")
    full = expect_ok(api.get(f"/v2/glossary/{glossary['guid']}/terms", params={"limit": -1}))
    assert {t["guid"] for t in full} == {t["guid"] for t in made}
    assert all(t["anchor"]["glossaryGuid"] == glossary["guid"] for t in full)
    page = expect_ok(api.get(f"/v2/glossary/{glossary['guid']}/terms", params={"limit": 2, "offset": 0}))
    rest = expect_ok(api.get(f"/v2/glossary/{glossary['guid']}/terms", params={"limit": 2, "offset": 2}))
    assert (len(page), len(rest)) == (2, 1)
    assert {t["guid"] for t in page + rest} == {t["guid"] for t in made}


def test_GL_009_term_assignment_shows_as_meanings(api: Api, glossary: dict[str, Any]) -> None:
    [t] = terms(api, glossary, "email")
    [guid] = api.create(E(fresh("assigned")))
    expect_status(api.post(f"/v2/glossary/terms/{t['guid']}/assignedEntities", [{"guid": guid}]), 204)
    [assigned] = expect_ok(api.get(f"/v2/glossary/terms/{t['guid']}/assignedEntities"))
    assert assigned["guid"] == guid and assigned["relationshipGuid"]
    header = expect_ok(api.get(f"/v2/entity/guid/{guid}/header"))
    assert [(m["termGuid"], m["displayText"]) for m in header["meanings"]] == [(t["guid"], "email")]
    assert header["meaningNames"] == ["email"]
    meanings = api.entity(guid)["relationshipAttributes"]["meanings"]
    assert [(m["guid"], m["relationshipGuid"]) for m in meanings] == [
        (t["guid"], assigned["relationshipGuid"])
    ]
    # assigning again is skipped, not duplicated (processTermAssignments)
    expect_status(api.post(f"/v2/glossary/terms/{t['guid']}/assignedEntities", [{"guid": guid}]), 204)
    assert len(expect_ok(api.get(f"/v2/glossary/terms/{t['guid']}/assignedEntities"))) == 1


def test_GL_010_assigned_term_is_not_deleted_until_dissociated(api: Api, glossary: dict[str, Any]) -> None:
    [t] = terms(api, glossary, "phone")
    [guid] = api.create(E(fresh("assigned")))
    path = f"/v2/glossary/terms/{t['guid']}/assignedEntities"
    expect_status(api.post(path, [{"guid": guid}]), 204)
    expect_error(api.delete(f"/v2/glossary/term/{t['guid']}"), 400, "ATLAS-400-00-084")
    expect_error(api.delete(path, json=[{"guid": guid}]), 400, "ATLAS-400-00-078")
    [assigned] = expect_ok(api.get(path))
    expect_status(
        api.delete(path, json=[{"guid": guid, "relationshipGuid": assigned["relationshipGuid"]}]), 204
    )
    assert not expect_ok(api.get(f"/v2/entity/guid/{guid}/header")).get("meanings")
    expect_status(api.delete(f"/v2/glossary/term/{t['guid']}"), 204)
    expect_error(api.get(f"/v2/glossary/term/{t['guid']}"), 404, "ATLAS-404-00-005")


def test_GL_011_glossary_delete_removes_its_terms_and_categories(api: Api) -> None:
    g = expect_ok(api.post("/v2/glossary", {"name": _name("ct_gl")}))
    [t] = terms(api, g, "gone")
    c = expect_ok(
        api.post("/v2/glossary/category", {"name": "gone_c", "anchor": {"glossaryGuid": g["guid"]}})
    )
    expect_status(api.delete(f"/v2/glossary/{g['guid']}"), 204)
    expect_error(api.get(f"/v2/glossary/term/{t['guid']}"), 404, "ATLAS-404-00-005")
    expect_error(api.get(f"/v2/glossary/category/{c['guid']}"), 404, "ATLAS-404-00-005")
    listed = expect_ok(api.get("/v2/glossary", params={"limit": -1}))
    assert g["guid"] not in {x["guid"] for x in listed}
    # the name is free again
    again = expect_ok(api.post("/v2/glossary", {"name": g["name"]}))
    api.delete(f"/v2/glossary/{again['guid']}")


def test_GL_012_glossary_with_an_assigned_term_is_not_deleted(api: Api, glossary: dict[str, Any]) -> None:
    [t] = terms(api, glossary, "kept")
    [guid] = api.create(E(fresh("assigned")))
    expect_status(api.post(f"/v2/glossary/terms/{t['guid']}/assignedEntities", [{"guid": guid}]), 204)
    expect_error(api.delete(f"/v2/glossary/{glossary['guid']}"), 400, "ATLAS-400-00-084")
    # the whole request rolled back: the glossary and its term are still there
    assert expect_ok(api.get(f"/v2/glossary/term/{t['guid']}"))["name"] == "kept"
    assert {h["termGuid"] for h in expect_ok(api.get(f"/v2/glossary/{glossary['guid']}"))["terms"]} == {
        t["guid"]
    }
