"""MD — what atlas-sync's metadata rules send (rows in ``extension_ids.txt``): one classification added
to several entities at once, a classification's settings changed, business metadata set, merged and
removed (EntityREST, AtlasEntityStoreV2 / EntityGraphMapper in Atlas 2.1.0)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from contract_helpers import Api, expect_error, expect_status, fresh, fresh_type, qn

pytestmark = pytest.mark.contract


@pytest.fixture(scope="module")
def kinds(_session_api: Api) -> dict[str, str]:
    """A DataSet subtype, a classification and a business metadata that applies to the subtype."""
    ds, tag, bm = fresh_type("ct_mds"), fresh_type("ct_mdtag"), fresh_type("ct_mdbm")
    _session_api.create_types(entityDefs=[{"name": ds, "superTypes": ["DataSet"], "attributeDefs": []}])
    applicable = {"applicableEntityTypes": json.dumps([ds]), "maxStrLength": "50"}
    _session_api.create_types(
        classificationDefs=[
            {
                "name": tag,
                "superTypes": [],
                "attributeDefs": [{"name": "level", "typeName": "string", "isOptional": True}],
            }
        ],
        businessMetadataDefs=[
            {
                "name": bm,
                "attributeDefs": [
                    {
                        "name": "costCentre",
                        "typeName": "string",
                        "isOptional": True,
                        "cardinality": "SINGLE",
                        "options": applicable,
                    },
                    {
                        "name": "retentionDays",
                        "typeName": "int",
                        "isOptional": True,
                        "cardinality": "SINGLE",
                        "options": applicable,
                    },
                ],
            }
        ],
    )
    return {"ds": ds, "tag": tag, "bm": bm}


def _entities(api: Api, type_name: str, n: int) -> list[str]:
    return api.create(
        *[
            {
                "typeName": type_name,
                "guid": str(-1 - i),
                "attributes": {"qualifiedName": qn(fresh("md")), "name": "m"},
            }
            for i in range(n)
        ]
    )


def _classes(api: Api, guid: str) -> dict[str, dict[str, Any]]:
    return {c["typeName"]: c for c in api.entity(guid).get("classifications") or []}


def test_MD_001_bulk_classification_adds_one_classification_to_every_entity(
    api: Api, kinds: dict[str, str]
) -> None:
    a, b = _entities(api, kinds["ds"], 2)
    body = {
        "classification": {"typeName": kinds["tag"], "attributes": {"level": "high"}, "propagate": False},
        "entityGuids": [a, b],
    }
    expect_status(api.post("/v2/entity/bulk/classification", body), 204)
    for guid in (a, b):
        c = _classes(api, guid)[kinds["tag"]]
        assert (c["attributes"], c["propagate"], c["entityGuid"]) == ({"level": "high"}, False, guid)


def test_MD_002_classification_update_changes_attributes_and_propagate(
    api: Api, kinds: dict[str, str]
) -> None:
    (a,) = _entities(api, kinds["ds"], 1)
    path = f"/v2/entity/guid/{a}/classifications"
    expect_status(
        api.post(path, [{"typeName": kinds["tag"], "attributes": {"level": "low"}, "propagate": True}]), 204
    )
    expect_status(
        api.put(path, [{"typeName": kinds["tag"], "attributes": {"level": "high"}, "propagate": False}]), 204
    )
    c = _classes(api, a)[kinds["tag"]]
    assert (c["attributes"], c["propagate"]) == ({"level": "high"}, False)


def test_MD_003_business_metadata_set_merges_and_shows_on_the_entity(api: Api, kinds: dict[str, str]) -> None:
    (a,) = _entities(api, kinds["ds"], 1)
    path, bm = f"/v2/entity/guid/{a}/businessmetadata", kinds["bm"]
    expect_status(api.post(path, {bm: {"costCentre": "CC-1"}}, params={"isOverwrite": "false"}), 204)
    expect_status(api.post(path, {bm: {"retentionDays": 30}}, params={"isOverwrite": "false"}), 204)
    assert api.entity(a)["businessAttributes"] == {bm: {"costCentre": "CC-1", "retentionDays": 30}}
    expect_status(api.post(path, {bm: {"retentionDays": 7}}, params={"isOverwrite": "true"}), 204)
    assert api.entity(a)["businessAttributes"] == {bm: {"retentionDays": 7}}


def test_MD_004_business_metadata_delete_removes_only_the_given_attributes(
    api: Api, kinds: dict[str, str]
) -> None:
    (a,) = _entities(api, kinds["ds"], 1)
    path, bm = f"/v2/entity/guid/{a}/businessmetadata", kinds["bm"]
    expect_status(api.post(path, {bm: {"costCentre": "CC-1", "retentionDays": 30}}), 204)
    expect_status(api.delete(path, json={bm: {"costCentre": None}}), 204)
    assert api.entity(a)["businessAttributes"] == {bm: {"retentionDays": 30}}


def test_MD_005_business_metadata_not_applicable_or_unknown_is_refused(
    api: Api, kinds: dict[str, str]
) -> None:
    other = api.fresh_entity_type()
    (a,) = _entities(api, other, 1)
    (b,) = _entities(api, kinds["ds"], 1)
    expect_error(
        api.post(f"/v2/entity/guid/{a}/businessmetadata", {kinds["bm"]: {"costCentre": "x"}}),
        404,
        "ATLAS-404-00-007",
    )
    expect_error(
        api.post(f"/v2/entity/guid/{b}/businessmetadata", {kinds["bm"]: {"retentionDays": "x"}}),
        404,
        "ATLAS-404-00-007",
    )
    assert not api.entity(b).get("businessAttributes")
