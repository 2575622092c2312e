"""PR — classification propagation along lineage (rows in ``extension_ids.txt``).

Expectations come from Atlas's relationship ``propagateTags`` rules and were each observed on a real Atlas
2.1.0, which propagates in the request; Atlas 2.4.0 can defer propagation to a background task, so every
check on a real server polls (``Api.poll``) until the expected state shows or 15 s pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from contract_helpers import CT_DS, Api, E, P, expect_error, expect_ok, expect_status, fresh, fresh_type, ref
from test_native_models import _hive_process, hive_table
from test_native_models import ref as ref_of

pytestmark = pytest.mark.contract


@pytest.fixture(scope="module")
def tag(_session_api: Api) -> str:
    name = fresh_type("ct_pii")
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


def column(api: Api, qualified_name: str) -> str:
    found = api.get(
        "/v2/entity/uniqueAttribute/type/hive_column", params={"attr:qualifiedName": qualified_name}
    )
    return str(expect_ok(found)["entity"]["guid"])


def sources(api: Api, guid: str, tag: str) -> list[str]:
    """The entityGuid of each classification ``tag`` the entity shows (own or propagated)."""
    got = api.entity(guid).get("classifications") or []
    return sorted(c["entityGuid"] for c in got if c["typeName"] == tag)


def settle(api: Api, check: Callable[[], bool]) -> None:
    api.poll(check, lambda ok: bool(ok))
    assert check()


def chain(api: Api) -> dict[str, str]:
    """a -p1-> b -p2-> c: two ct_proc processes between three ct_ds datasets."""
    a, b, c = fresh("a"), fresh("b"), fresh("c")
    g = dict(zip("abc", api.create(E(a, "-1"), E(b, "-2"), E(c, "-3")), strict=True))
    p1 = P(fresh("p1"), "-1", inputs=[ref(a)], outputs=[ref(b)])
    p2 = P(fresh("p2"), "-2", inputs=[ref(b)], outputs=[ref(c)])
    g["p1"], g["p2"] = api.create(p1, p2)
    return g


def classify(api: Api, guid: str, tag: str, **extra: Any) -> None:
    expect_status(api.post(f"/v2/entity/guid/{guid}/classifications", [{"typeName": tag, **extra}]), 204)


def test_PR_001_classification_on_an_input_reaches_the_processes_and_outputs_downstream(
    api: Api, tag: str
) -> None:
    g = chain(api)
    classify(api, g["a"], tag, attributes={"level": "high"})
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])
    for n in ("p1", "b", "p2", "c"):
        [c] = [x for x in api.entity(g[n])["classifications"] if x["typeName"] == tag]
        assert (c["entityGuid"], c["propagate"], c["attributes"]["level"]) == (g["a"], True, "high")
    header = expect_ok(api.get(f"/v2/entity/guid/{g['c']}/header"))
    assert header["classificationNames"] == [tag]
    listed = expect_ok(api.get(f"/v2/entity/guid/{g['b']}/classifications"))
    assert [(x["typeName"], x["entityGuid"]) for x in listed["list"]] == [(tag, g["a"])]
    # nothing flows upstream: process_dataset_outputs is ONE_TO_TWO, dataset_process_inputs TWO_TO_ONE
    classify(api, g["c"], tag)
    settle(api, lambda: sources(api, g["c"], tag) == sorted([g["a"], g["c"]]))
    assert sources(api, g["p2"], tag) == [g["a"]]


def test_PR_002_classification_on_a_column_flows_through_column_lineage(api: Api, tag: str) -> None:
    a, b = hive_table(api), hive_table(api)
    ns, pname = a["ns"], fresh("q")
    proc = _hive_process(pname, ns, [ref_of("hive_table", a["qn"])], [ref_of("hive_table", b["qn"])])
    src, dst = f"{a['db']}.{a['table']}.amount@{ns}", f"{b['db']}.{b['table']}.amount@{b['ns']}"
    col_lineage = {
        "typeName": "hive_column_lineage",
        "guid": "-2",
        "attributes": {
            "qualifiedName": f"{pname}@{ns}:amount",
            "name": f"{pname}@{ns}:amount",
            "depenendencyType": "SIMPLE",
            "inputs": [ref_of("hive_column", src)],
            "outputs": [ref_of("hive_column", dst)],
        },
        "relationshipAttributes": {"query": {"guid": "-1", "typeName": "hive_process"}},
    }
    api.create({**proc, "guid": "-1"}, col_lineage)
    col, out = column(api, src), column(api, dst)
    classify(api, col, tag)
    settle(api, lambda: sources(api, out, tag) == [col])
    # hive_table_columns does not propagate: neither table gets it, nor the other column of the output
    assert sources(api, a["guid"], tag) == [] and sources(api, b["guid"], tag) == []
    other = column(api, f"{b['db']}.{b['table']}.id@{b['ns']}")
    assert sources(api, other, tag) == []


def test_PR_003_propagate_false_keeps_it_on_the_entity_and_an_update_switches_propagation(
    api: Api, tag: str
) -> None:
    g = chain(api)
    classify(api, g["a"], tag, propagate=False)
    assert sources(api, g["a"], tag) == [g["a"]]
    assert sources(api, g["b"], tag) == []
    put = f"/v2/entity/guid/{g['a']}/classifications"
    expect_status(api.put(put, [{"typeName": tag, "propagate": True}]), 204)
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])
    expect_status(api.put(put, [{"typeName": tag, "propagate": False}]), 204)
    settle(api, lambda: sources(api, g["c"], tag) == [])
    assert [c["propagate"] for c in api.entity(g["a"])["classifications"]] == [False]
    # only a classification the entity has itself can be updated there
    expect_error(
        api.put(f"/v2/entity/guid/{g['b']}/classifications", [{"typeName": tag}]), 400, "ATLAS-400-00-06D"
    )


def test_PR_004_deleting_the_classification_removes_what_it_propagated(api: Api, tag: str) -> None:
    g = chain(api)
    classify(api, g["a"], tag)
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])
    # a propagated classification is not the target's to delete (it has none of its own)
    expect_error(api.delete(f"/v2/entity/guid/{g['b']}/classification/{tag}"), 404, "ATLAS-404-00-003")
    expect_status(api.delete(f"/v2/entity/guid/{g['a']}/classification/{tag}"), 204)
    settle(api, lambda: sources(api, g["c"], tag) == [] and sources(api, g["b"], tag) == [])


def test_PR_005_remove_propagations_on_entity_delete(api: Api, tag: str) -> None:
    kept, removed = chain(api), chain(api)
    classify(api, kept["a"], tag)
    classify(api, removed["a"], tag, removePropagationsOnEntityDelete=True)
    settle(
        api,
        lambda: (
            sources(api, kept["c"], tag) == [kept["a"]] and sources(api, removed["c"], tag) == [removed["a"]]
        ),
    )
    expect_ok(api.delete(f"/v2/entity/guid/{kept['a']}"))
    expect_ok(api.delete(f"/v2/entity/guid/{removed['a']}"))
    settle(api, lambda: sources(api, removed["b"], tag) == [] and sources(api, removed["c"], tag) == [])
    # without the flag the copies stay, pointing at the deleted entity
    [c] = api.entity(kept["c"])["classifications"]
    assert (c["entityGuid"], c["entityStatus"]) == (kept["a"], "DELETED")
    assert [x["entityStatus"] for x in api.entity(removed["a"])["classifications"]] == ["DELETED"]


def _output_relationship(api: Api, process_guid: str) -> dict[str, Any]:
    [out] = api.entity(process_guid)["relationshipAttributes"]["outputs"]
    body = expect_ok(
        api.get(f"/v2/relationship/guid/{out['relationshipGuid']}", params={"extendedInfo": "true"})
    )
    return dict(body["relationship"])


def test_PR_006_blocked_propagation_on_a_relationship(api: Api, tag: str) -> None:
    g = chain(api)
    classify(api, g["a"], tag)
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])
    rel = _output_relationship(api, g["p1"])  # p1 -> b
    assert [(c["typeName"], c["entityGuid"]) for c in rel["propagatedClassifications"]] == [(tag, g["a"])]
    rel.pop("propagatedClassifications", None)
    rel["blockedPropagatedClassifications"] = [{"typeName": tag, "entityGuid": g["a"]}]
    expect_ok(api.put("/v2/relationship", rel))
    settle(api, lambda: sources(api, g["b"], tag) == [] and sources(api, g["c"], tag) == [])
    assert sources(api, g["p1"], tag) == [g["a"]]  # before the blocked relationship: still there
    again = _output_relationship(api, g["p1"])
    assert [(c["typeName"], c["entityGuid"]) for c in again["blockedPropagatedClassifications"]] == [
        (tag, g["a"])
    ]
    assert again["propagatedClassifications"] == []
    again.pop("propagatedClassifications", None)
    again["blockedPropagatedClassifications"] = []
    expect_ok(api.put("/v2/relationship", again))
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])


def test_PR_007_relationship_propagate_tags_none_stops_propagation(api: Api, tag: str) -> None:
    g = chain(api)
    classify(api, g["a"], tag)
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])
    rel = _output_relationship(api, g["p1"])
    rel.pop("propagatedClassifications", None)
    rel.pop("blockedPropagatedClassifications", None)
    assert rel["propagateTags"] == "ONE_TO_TWO"
    expect_ok(api.put("/v2/relationship", dict(rel, propagateTags="NONE")))
    settle(api, lambda: sources(api, g["b"], tag) == [] and sources(api, g["c"], tag) == [])
    assert _output_relationship(api, g["p1"])["propagateTags"] == "NONE"
    expect_ok(api.put("/v2/relationship", dict(rel, propagateTags="ONE_TO_TWO")))
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])


def test_PR_008_a_new_process_propagates_to_its_new_output(api: Api, tag: str) -> None:
    x, y = fresh("x"), fresh("y")
    gx, gy = api.create(E(x, "-1"), E(y, "-2"))
    classify(api, gx, tag)
    api.create(P(fresh("p"), inputs=[ref(x)], outputs=[ref(y)]))
    settle(api, lambda: sources(api, gy, tag) == [gx])


def test_PR_009_what_was_propagated_stays_when_the_process_in_between_is_deleted(api: Api, tag: str) -> None:
    g = chain(api)
    classify(api, g["a"], tag)
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])
    expect_ok(api.delete(f"/v2/entity/guid/{g['p2']}"))
    # seen on a real 2.1.0: soft-deleting the process (and its relationships) leaves the propagated copy
    assert sources(api, g["c"], tag) == [g["a"]]


def test_PR_010_own_and_propagated_classification_of_one_type_coexist(api: Api, tag: str) -> None:
    g = chain(api)
    classify(api, g["a"], tag)
    settle(api, lambda: sources(api, g["b"], tag) == [g["a"]])
    classify(api, g["b"], tag)
    settle(api, lambda: sources(api, g["c"], tag) == sorted([g["a"], g["b"]]))
    assert sources(api, g["b"], tag) == sorted([g["a"], g["b"]])
    expect_status(api.delete(f"/v2/entity/guid/{g['b']}/classification/{tag}"), 204)
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])


def test_PR_011_a_terms_classification_reaches_the_entities_it_is_assigned_to(api: Api, tag: str) -> None:
    glossary = expect_ok(api.post("/v2/glossary", {"name": f"ct_pr_{fresh_type('g')}"}))
    try:
        term = expect_ok(
            api.post("/v2/glossary/term", {"name": "email", "anchor": {"glossaryGuid": glossary["guid"]}})
        )
        [guid] = api.create(E(fresh("assigned")))
        expect_status(api.post(f"/v2/glossary/terms/{term['guid']}/assignedEntities", [{"guid": guid}]), 204)
        classify(api, term["guid"], tag)
        settle(api, lambda: sources(api, guid, tag) == [term["guid"]])
        [assigned] = expect_ok(api.get(f"/v2/glossary/terms/{term['guid']}/assignedEntities"))
        api.delete(
            f"/v2/glossary/terms/{term['guid']}/assignedEntities",
            json=[{"guid": guid, "relationshipGuid": assigned["relationshipGuid"]}],
        )
    finally:
        api.delete(f"/v2/glossary/{glossary['guid']}")


def test_PR_012_search_with_classification_attributes_tells_own_from_propagated(api: Api, tag: str) -> None:
    """Basic search with ``includeClassificationAttributes`` gives each header its ``classifications``
    (own and propagated, each with the ``entityGuid`` it comes from); without it, only
    ``classificationNames`` (Atlas's toAtlasEntityHeader vs toAtlasEntityHeaderWithClassifications)."""
    g = chain(api)
    classify(api, g["a"], tag)
    settle(api, lambda: sources(api, g["c"], tag) == [g["a"]])
    body: dict[str, Any] = {"typeName": CT_DS, "excludeDeletedEntities": True, "limit": 1000}

    def headers(with_tags: bool) -> dict[str, dict[str, Any]]:
        got = api.search(
            {**body, "includeClassificationAttributes": with_tags},
            until=lambda r: {g["a"], g["c"]} <= {h["guid"] for h in r.get("entities") or []},
        )
        return {h["guid"]: h for h in got.get("entities") or [] if h["guid"] in (g["a"], g["b"], g["c"])}

    plain = headers(False)
    assert plain[g["a"]]["classificationNames"] == [tag] == plain[g["c"]]["classificationNames"]
    assert not plain[g["a"]].get("classifications") and not plain[g["c"]].get("classifications")
    full = headers(True)
    for n in ("a", "b", "c"):
        assert [(c["typeName"], c["entityGuid"]) for c in full[g[n]]["classifications"]] == [(tag, g["a"])], n
