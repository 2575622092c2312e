"""DL — deletes and purge (checklist rows DL-001 … DL-021)."""

from __future__ import annotations

import time

import pytest
from contract_helpers import (
    CT_DS,
    Api,
    E,
    P,
    expect_error,
    expect_ok,
    fresh,
    mutated,
    oid,
    qn,
    random_guid,
    ref,
)

pytestmark = pytest.mark.contract


def _ds(api: Api) -> tuple[str, str]:
    x = fresh("d")
    (g,) = api.create(E(x))
    return x, g


def _deleted(api: Api) -> tuple[str, str]:
    x, g = _ds(api)
    api.delete_entity(g)
    return x, g


def test_DL_001_delete_by_guid_lists_the_entity(api: Api) -> None:
    _, g = _ds(api)
    body = expect_ok(api.delete(f"/v2/entity/guid/{g}"))
    assert mutated(body, "DELETE") == [g]
    assert "UPDATE" not in body["mutatedEntities"]
    # DELETE headers are plain toAtlasEntityHeader ones: no classifications key
    assert "classifications" not in body["mutatedEntities"]["DELETE"][0]


def test_DL_002_deleted_entity_reads_as_deleted(api: Api) -> None:
    _, g = _deleted(api)
    assert api.entity(g)["status"] == "DELETED"


def test_DL_003_repeat_delete_is_idempotent_empty_body(api: Api) -> None:
    _, g = _deleted(api)
    assert expect_ok(api.delete(f"/v2/entity/guid/{g}")) == {}


def test_DL_004_delete_unknown_guid_is_200_empty(api: Api) -> None:
    assert expect_ok(api.delete(f"/v2/entity/guid/{random_guid()}")) == {}


def test_DL_005_bulk_delete_ignores_unknown_guids(api: Api) -> None:
    _, g = _ds(api)
    body = expect_ok(api.delete("/v2/entity/bulk", params={"guid": [g, random_guid()]}))
    assert mutated(body, "DELETE") == [g]


def test_DL_006_bulk_delete_without_guid_is_400_00_01A(api: Api) -> None:
    expect_error(
        api.delete("/v2/entity/bulk"),
        400,
        "ATLAS-400-00-01A",
        contains="invalid parameters: Guid(s) not specified",
    )


def test_DL_007_delete_by_unique_attribute(api: Api) -> None:
    x, g = _ds(api)
    body = expect_ok(
        api.delete(f"/v2/entity/uniqueAttribute/type/{CT_DS}", params={"attr:qualifiedName": qn(x)})
    )
    assert mutated(body, "DELETE") == [g]


def test_DL_008_delete_by_missing_unique_attribute_is_200_empty(api: Api) -> None:
    r = api.delete(
        f"/v2/entity/uniqueAttribute/type/{CT_DS}", params={"attr:qualifiedName": qn(fresh("missing"))}
    )
    assert expect_ok(r) == {}


def test_DL_009_delete_by_unique_attribute_without_attr_is_404_00_009(api: Api) -> None:
    expect_error(api.delete(f"/v2/entity/uniqueAttribute/type/{CT_DS}"), 404, "ATLAS-404-00-009")


def test_DL_010_unvalidated_attr_key_deletes_first_active_entity(api: Api) -> None:
    t = api.fresh_entity_type()
    (g,) = api.create(E(fresh("e"), type_=t))
    body = expect_ok(api.delete(f"/v2/entity/uniqueAttribute/type/{t}", params={"attr:qualifiedname": "zzz"}))
    assert mutated(body, "DELETE") == [g]


def _process_with_io(api: Api) -> tuple[str, str, str]:
    i, o, p = fresh("i"), fresh("o"), fresh("p")
    gi, go, gp = api.create(E(i, "-1"), E(o, "-2"), P(p, "-3", inputs=[oid("-1")], outputs=[oid("-2")]))
    return gi, go, gp


def test_DL_011_deleting_a_process_lists_only_the_process(api: Api) -> None:
    # checklist correction (docs/real-atlas-differences.md RA-01): a real 2.4.0 (and 2.1.0) answers
    # DELETE [p] with no UPDATE key; the checklist row says UPDATE contains i and o
    gi, go, gp = _process_with_io(api)
    body = api.delete_entity(gp)
    assert mutated(body, "DELETE") == [gp]
    assert "UPDATE" not in body["mutatedEntities"]
    assert api.entity(gi)["status"] == "ACTIVE"
    assert api.entity(go)["status"] == "ACTIVE"


def test_DL_012_deleting_a_processes_only_output_leaves_the_process(api: Api) -> None:
    _, go, gp = _process_with_io(api)
    before = api.entity(gp)["updateTime"]
    time.sleep(0.02)
    body = api.delete_entity(go)
    assert mutated(body, "DELETE") == [go]
    assert gp not in mutated(body, "UPDATE")
    p = api.entity(gp)
    assert p["status"] == "ACTIVE"
    assert p["updateTime"] == before


def test_DL_013_delete_type_override_is_ignored_by_default(api: Api) -> None:
    _, g = _ds(api)
    expect_ok(api.delete(f"/v2/entity/guid/{g}", params={"deleteType": "hard"}))
    assert api.entity(g)["status"] == "DELETED"


def test_DL_014_recreating_a_deleted_entity_gets_a_new_guid(api: Api) -> None:
    x, old = _deleted(api)
    body = api.upsert(E(x))
    (new,) = mutated(body, "CREATE")
    assert new != old
    assert api.entity(old)["status"] == "DELETED"
    assert expect_ok(api.by_qn(CT_DS, x))["entity"]["guid"] == new


def test_DL_015_purge_removes_a_deleted_entity(api: Api) -> None:
    _, g = _deleted(api)
    body = api.purge([g])
    assert mutated(body, "PURGE") == [g]
    expect_error(api.get(f"/v2/entity/guid/{g}"), 404, "ATLAS-404-00-005")


def test_DL_016_purge_ignores_active_entities(api: Api) -> None:
    _, g = _ds(api)
    assert api.purge([g]) == {}
    assert api.entity(g)["status"] == "ACTIVE"


def test_DL_017_purge_ignores_unknown_and_malformed_guids(api: Api) -> None:
    assert api.purge([random_guid(), "not-a-uuid"]) == {}


def test_DL_018_purge_of_empty_list_is_400_00_01A(api: Api) -> None:
    expect_error(
        api.put("/admin/purge", []),
        400,
        "ATLAS-400-00-01A",
        contains="invalid parameters: Guid(s) not specified",
    )


def test_DL_019_purge_mixed_lists_only_purged_and_no_failure_keys(api: Api) -> None:
    _, gd = _deleted(api)
    _, ga = _ds(api)
    body = api.purge([gd, ga])
    assert mutated(body, "PURGE") == [gd]
    assert "failedEntities" not in body
    assert "summary" not in body


def test_DL_020_purge_has_no_request_size_cap(api: Api) -> None:
    assert api.purge([random_guid() for _ in range(1001)]) == {}


def test_DL_021_purged_input_disappears_from_the_process(api: Api) -> None:
    i, p = fresh("i"), fresh("p")
    (gi,) = api.create(E(i))
    (gp,) = api.create(P(p, inputs=[ref(i)]))
    api.delete_entity(gi)
    api.purge([gi])
    e = api.entity(gp)
    assert gi not in [x["guid"] for x in e["attributes"]["inputs"]]
    assert gi not in [x["guid"] for x in e["relationshipAttributes"]["inputs"]]
