"""NM / LB / CL — Atlas's own models, entity labels and classifications (rows in ``extension_ids.txt``).

These are the behaviours the ``atlas`` profile relies on to publish onto what Atlas's hooks created
(docs/existing-atlas.md): the native types exist with their mandatory attributes and relationships, labels
mark ownership and are searchable, classifications attached by others are returned with the entity and
survive an update that does not mention them. Against a real Atlas the complete model set must be loaded
(``.ci/real-atlas.sh`` loads Atlas 2.1.0's ``addons/models`` from ``tests/data/atlas-models``).
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Api, expect_error, expect_ok, expect_status, fresh, fresh_type, mutated, qn

pytestmark = pytest.mark.contract

NATIVE_TYPES = [
    "hive_db",
    "hive_table",
    "hive_column",
    "hive_storagedesc",
    "hive_process",
    "hive_column_lineage",
    "spark_application",
    "spark_process",
    "spark_column_lineage",
    "fs_path",
    "hdfs_path",
    "aws_s3_v2_bucket",
    "aws_s3_v2_directory",
    "kafka_topic",
    "rdbms_table",
    "hbase_table",
]


def ref(type_: str, qualified_name: str) -> dict[str, Any]:
    return {"typeName": type_, "uniqueAttributes": {"qualifiedName": qualified_name}}


def hive_table(api: Api, *, columns: tuple[str, ...] = ("id", "amount"), **extra: Any) -> dict[str, str]:
    """A hive_db, a hive_table with columns and a storage descriptor, named as the Hive hook names them."""
    ns = qn(fresh("cm")).split("@", 1)[1] + fresh("n")
    db, table = fresh("sales"), fresh("orders")
    tqn = f"{db}.{table}@{ns}"
    entities: list[dict[str, Any]] = [
        {
            "typeName": "hive_db",
            "guid": "-1",
            "attributes": {"qualifiedName": f"{db}@{ns}", "name": db, "clusterName": ns, "owner": "hive"},
        },
        {
            "typeName": "hive_table",
            "guid": "-2",
            "attributes": {
                "qualifiedName": tqn,
                "name": table,
                "owner": "hive",
                "tableType": "MANAGED_TABLE",
            },
            "relationshipAttributes": {"db": {"guid": "-1", "typeName": "hive_db"}},
            **extra,
        },
        {
            "typeName": "hive_storagedesc",
            "guid": "-3",
            "attributes": {
                "qualifiedName": f"{tqn}_storage",
                "compressed": False,
                "location": f"hdfs://nn:8020/warehouse/{db}.db/{table}",
            },
            "relationshipAttributes": {"table": {"guid": "-2", "typeName": "hive_table"}},
        },
    ]
    for i, c in enumerate(columns):
        entities.append(
            {
                "typeName": "hive_column",
                "guid": f"-{10 + i}",
                "attributes": {
                    "qualifiedName": f"{db}.{table}.{c}@{ns}",
                    "name": c,
                    "type": "int",
                    "position": i,
                },
                "relationshipAttributes": {"table": {"guid": "-2", "typeName": "hive_table"}},
            }
        )
    guids = api.create(*entities)
    return {"ns": ns, "db": db, "table": table, "qn": tqn, "db_guid": guids[0], "guid": guids[1]}


def test_NM_001_native_model_types_exist(api: Api) -> None:
    for name in NATIVE_TYPES:
        body = expect_ok(api.get(f"/v2/types/entitydef/name/{name}"))
        assert body["name"] == name


def test_NM_002_native_mandatory_attributes_are_enforced(api: Api) -> None:
    ns = fresh("ns")
    cases = [
        ("hive_column", {"qualifiedName": f"d.t.c@{ns}", "name": "c"}, "type"),
        ("hive_db", {"qualifiedName": f"d@{ns}", "name": "d"}, "clusterName"),
        ("kafka_topic", {"qualifiedName": f"t@{ns}", "name": "t", "uri": "t"}, "topic"),
        ("hdfs_path", {"qualifiedName": f"hdfs://nn/p@{ns}", "name": "/p"}, "path"),
        ("hive_column_lineage", {"qualifiedName": f"q:c@{ns}", "name": "q:c"}, "depenendencyType"),
    ]
    for type_, attrs, missing in cases:
        resp = api.post("/v2/entity/bulk", {"entities": [{"typeName": type_, "attributes": attrs}]})
        expect_error(resp, 404, "ATLAS-404-00-007", contains=missing)


def test_NM_003_native_qualified_name_is_unique_per_type(api: Api) -> None:
    t = hive_table(api)
    again = {"typeName": "hive_table", "attributes": {"qualifiedName": t["qn"], "name": t["table"]}}
    body = api.upsert(again)
    assert mutated(body, "CREATE") == []
    got = expect_ok(
        api.get("/v2/entity/uniqueAttribute/type/hive_table", params={"attr:qualifiedName": t["qn"]})
    )
    assert got["entity"]["guid"] == t["guid"]


def test_NM_004_hive_table_relationships_db_columns_storage(api: Api) -> None:
    t = hive_table(api, columns=("id", "amount", "day"))
    table = api.entity(t["guid"])
    rel = table["relationshipAttributes"]
    assert rel["db"]["guid"] == t["db_guid"]
    assert sorted(c["displayText"] for c in rel["columns"]) == ["amount", "day", "id"]
    assert rel["sd"]["typeName"] == "hive_storagedesc"
    db = api.entity(t["db_guid"])
    assert t["guid"] in {x["guid"] for x in db["relationshipAttributes"]["tables"]}
    col = expect_ok(
        api.get(
            "/v2/entity/uniqueAttribute/type/hive_column",
            params={"attr:qualifiedName": f"{t['db']}.{t['table']}.id@{t['ns']}"},
        )
    )["entity"]
    assert col["relationshipAttributes"]["table"]["guid"] == t["guid"]


def _hive_process(name: str, ns: str, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> dict:
    return {
        "typeName": "hive_process",
        "attributes": {
            "qualifiedName": f"{name}@{ns}",
            "name": name,
            "startTime": 0,
            "endTime": 0,
            "userName": "",
            "operationType": "QUERY",
            "queryText": "insert into b select * from a",
            "queryPlan": "Not Supported",
            "queryId": "",
            "inputs": inputs,
            "outputs": outputs,
        },
    }


def test_NM_005_process_between_existing_tables_by_unique_attributes(api: Api) -> None:
    a, b = hive_table(api), hive_table(api)
    proc = _hive_process(fresh("q"), a["ns"], [ref("hive_table", a["qn"])], [ref("hive_table", b["qn"])])
    [pguid] = api.create({**proc, "guid": "-1"})
    lineage = api.lineage(b["guid"], direction="INPUT", depth=3)
    assert {a["guid"], pguid} <= set(lineage["guidEntityMap"])
    table_a = api.entity(a["guid"])
    assert [p["guid"] for p in table_a["relationshipAttributes"]["inputToProcesses"]] == [pguid]


def test_NM_006_hive_column_lineage_links_columns_to_its_query(api: Api) -> None:
    a, b = hive_table(api), hive_table(api)
    ns = a["ns"]
    pname = fresh("q")
    proc = _hive_process(pname, ns, [ref("hive_table", a["qn"])], [ref("hive_table", b["qn"])])
    col_lineage = {
        "typeName": "hive_column_lineage",
        "guid": "-2",
        "attributes": {
            "qualifiedName": f"{pname}@{ns}:amount",
            "name": f"{pname}@{ns}:amount",
            "depenendencyType": "SIMPLE",
            "expression": None,
            "inputs": [ref("hive_column", f"{a['db']}.{a['table']}.amount@{ns}")],
            "outputs": [ref("hive_column", f"{b['db']}.{b['table']}.amount@{b['ns']}")],
        },
        "relationshipAttributes": {"query": {"guid": "-1", "typeName": "hive_process"}},
    }
    pguid, cguid = api.create({**proc, "guid": "-1"}, col_lineage)
    got = api.entity(cguid)
    assert got["attributes"]["depenendencyType"] == "SIMPLE"
    assert got["relationshipAttributes"]["query"]["guid"] == pguid
    assert cguid in {x["guid"] for x in api.entity(pguid)["relationshipAttributes"]["columnLineages"]}


def test_LB_001_labels_sent_on_create_are_returned_with_entity_and_header(api: Api) -> None:
    t = hive_table(api, labels=["atlas-sync", "atlas-sync-d_prod"])
    assert sorted(api.entity(t["guid"])["labels"]) == ["atlas-sync", "atlas-sync-d_prod"]
    header = expect_ok(api.get(f"/v2/entity/guid/{t['guid']}/header"))
    assert sorted(header["labels"]) == ["atlas-sync", "atlas-sync-d_prod"]


def test_LB_002_label_endpoints_set_add_remove(api: Api) -> None:
    t = hive_table(api)
    path = f"/v2/entity/guid/{t['guid']}/labels"
    expect_status(api.post(path, ["a", "b"]), 204)
    assert sorted(api.entity(t["guid"])["labels"]) == ["a", "b"]
    expect_status(api.put(path, ["c"]), 204)
    assert sorted(api.entity(t["guid"])["labels"]) == ["a", "b", "c"]
    expect_status(api.delete(path, json=["a"]), 204)
    assert sorted(api.entity(t["guid"])["labels"]) == ["b", "c"]
    expect_status(api.post(path, ["z"]), 204)
    assert api.entity(t["guid"])["labels"] == ["z"]


def test_LB_003_invalid_labels_are_400(api: Api) -> None:
    t = hive_table(api)
    path = f"/v2/entity/guid/{t['guid']}/labels"
    expect_error(api.post(path, ["a.b"]), 400, "ATLAS-400-00-090", contains="a.b")
    expect_error(api.post(path, ["x" * 51]), 400, "ATLAS-400-00-08F")
    body = {
        "typeName": "hive_db",
        "attributes": {"qualifiedName": qn(fresh("d")), "name": "d", "clusterName": "c"},
    }
    expect_error(
        api.post("/v2/entity/bulk", {"entities": [{**body, "labels": ["a@b"]}]}), 400, "ATLAS-400-00-090"
    )


def test_LB_004_update_with_other_labels_in_body_keeps_labels(api: Api) -> None:
    t = hive_table(api, labels=["mine"])
    again = {
        "typeName": "hive_table",
        "attributes": {"qualifiedName": t["qn"], "name": t["table"], "comment": "changed"},
        "labels": ["theirs"],
    }
    api.upsert(again)
    got = api.entity(t["guid"])
    assert got["attributes"]["comment"] == "changed"
    assert got["labels"] == ["mine"]


def test_LB_005_basic_search_filters_on_labels(api: Api) -> None:
    label = f"lbl_{fresh('x')}_{qn('').split('@')[1]}"[:50]
    t = hive_table(api, labels=[label])
    hive_table(api)
    body = {
        "typeName": "hive_table",
        "excludeDeletedEntities": True,
        "entityFilters": {"attributeName": "__labels", "operator": "contains", "attributeValue": label},
        "limit": 10,
    }
    found = api.search(body, until=lambda r: bool(r.get("entities")))
    assert [e["guid"] for e in found.get("entities", [])] == [t["guid"]]
    assert found["entities"][0]["labels"] == [label]


@pytest.fixture(scope="module")
def tag(_session_api: Api) -> str:
    name = fresh_type("ct_tag")
    _session_api.create_types(
        classificationDefs=[
            {
                "name": name,
                "superTypes": [],
                "attributeDefs": [{"name": "level", "typeName": "string", "isOptional": True}],
            }
        ]
    )
    return name


def test_CL_001_classification_added_by_guid_is_returned_with_entity(api: Api, tag: str) -> None:
    t = hive_table(api)
    expect_status(
        api.post(
            f"/v2/entity/guid/{t['guid']}/classifications",
            [{"typeName": tag, "attributes": {"level": "pii"}}],
        ),
        204,
    )
    got = api.entity(t["guid"])
    [c] = got["classifications"]
    assert (c["typeName"], c["attributes"], c["entityGuid"]) == (tag, {"level": "pii"}, t["guid"])
    header = expect_ok(api.get(f"/v2/entity/guid/{t['guid']}/header"))
    assert header["classificationNames"] == [tag]
    listed = expect_ok(api.get(f"/v2/entity/guid/{t['guid']}/classifications"))
    assert [x["typeName"] for x in listed["list"]] == [tag]


def test_CL_002_classification_sent_on_create_is_attached(api: Api, tag: str) -> None:
    t = hive_table(api, classifications=[{"typeName": tag}])
    assert [c["typeName"] for c in api.entity(t["guid"])["classifications"]] == [tag]


def test_CL_003_duplicate_or_unknown_classification_is_refused(api: Api, tag: str) -> None:
    t = hive_table(api, classifications=[{"typeName": tag}])
    path = f"/v2/entity/guid/{t['guid']}/classifications"
    # AtlasEntityStoreV2 answers INVALID_PARAMETERS, not CLASSIFICATION_ALREADY_ASSOCIATED (real 2.1.0)
    expect_error(api.post(path, [{"typeName": tag}]), 400, "ATLAS-400-00-01A", contains="already associated")
    expect_error(api.post(path, [{"typeName": fresh_type("ct_nope")}]), 404, "ATLAS-404-00-008")


def test_CL_004_update_without_classifications_keeps_them(api: Api, tag: str) -> None:
    t = hive_table(api, classifications=[{"typeName": tag}])
    api.upsert(
        {
            "typeName": "hive_table",
            "attributes": {"qualifiedName": t["qn"], "name": t["table"], "comment": "x"},
        }
    )
    got = api.entity(t["guid"])
    assert got["attributes"]["comment"] == "x"
    assert [c["typeName"] for c in got["classifications"]] == [tag]


def test_CL_005_basic_search_by_classification(api: Api, tag: str) -> None:
    t = hive_table(api, classifications=[{"typeName": tag}])
    found = api.search(
        {"classification": tag, "typeName": "hive_table", "excludeDeletedEntities": True, "limit": 50},
        until=lambda r: t["guid"] in {e["guid"] for e in r.get("entities", [])},
    )
    guids = {e["guid"] for e in found.get("entities", [])}
    assert t["guid"] in guids
    assert all(tag in e["classificationNames"] for e in found["entities"])


def test_CL_006_delete_classification(api: Api, tag: str) -> None:
    t = hive_table(api, classifications=[{"typeName": tag}])
    expect_status(api.delete(f"/v2/entity/guid/{t['guid']}/classification/{tag}"), 204)
    assert not api.entity(t["guid"]).get("classifications")
    # none left: EntityGraphMapper.deleteClassification's NO_CLASSIFICATIONS_FOUND_FOR_ENTITY (real 2.1.0)
    expect_error(api.delete(f"/v2/entity/guid/{t['guid']}/classification/{tag}"), 404, "ATLAS-404-00-003")
