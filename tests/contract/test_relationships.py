"""RL — relationships, inputs and outputs (checklist rows RL-001 … RL-018)."""

from __future__ import annotations

import time

import pytest
from contract_helpers import (
    CT_DS,
    CT_DS2,
    CT_PROC,
    Api,
    E,
    P,
    expect_error,
    expect_ok,
    fresh,
    mutated,
    oid,
    qn,
    ref,
)

pytestmark = pytest.mark.contract


class Trio:
    """``raw`` and ``out`` DataSets and a process ``p`` with ``inputs [raw]``, ``outputs [out]``."""

    def __init__(self, api: Api) -> None:
        self.raw_name, self.out_name, self.p_name = fresh("raw"), fresh("out"), fresh("p")
        self.batch = [
            E(self.raw_name, "-1"),
            E(self.out_name, "-2"),
            P(self.p_name, "-3", inputs=[oid("-1")], outputs=[oid("-2")]),
        ]
        self.raw, self.out, self.p = api.create(*self.batch)


def _inputs_by_guid(api: Api, gp: str) -> dict[str, dict]:
    return {i["guid"]: i for i in api.entity(gp)["relationshipAttributes"]["inputs"]}


def _attr_input_guids(api: Api, gp: str) -> list[str]:
    return [i["guid"] for i in api.entity(gp)["attributes"]["inputs"]]


def test_RL_001_attributes_inputs_are_object_ids(api: Api) -> None:
    t = Trio(api)
    a = api.entity(t.p)["attributes"]
    assert a["inputs"] == [
        {"guid": t.raw, "typeName": CT_DS, "uniqueAttributes": {"qualifiedName": qn(t.raw_name)}}
    ]
    assert a["outputs"] == [
        {"guid": t.out, "typeName": CT_DS, "uniqueAttributes": {"qualifiedName": qn(t.out_name)}}
    ]


def test_RL_002_relationship_attributes_inputs_are_related_object_ids(api: Api) -> None:
    t = Trio(api)
    (i,) = api.entity(t.p)["relationshipAttributes"]["inputs"]
    assert i["guid"] == t.raw
    assert i["typeName"] == CT_DS
    assert i["entityStatus"] == "ACTIVE"
    assert i["displayText"] == t.raw_name
    assert i["qualifiedName"] == qn(t.raw_name)
    assert isinstance(i["relationshipGuid"], str) and i["relationshipGuid"]
    assert i["relationshipStatus"] == "ACTIVE"
    assert i["relationshipAttributes"] == {"typeName": "dataset_process_inputs"}  # no attributes: none set
    # checklist correction (RA-03): a real 2.4.0 fills relationshipType, as the Atlas docs say
    assert i["relationshipType"] == "dataset_process_inputs"


def test_RL_003_dataset_shows_input_to_processes(api: Api) -> None:
    t = Trio(api)
    raw = api.entity(t.raw)
    rel = raw["relationshipAttributes"]
    assert [x["guid"] for x in rel["inputToProcesses"]] == [t.p]
    assert rel["inputToProcesses"][0]["relationshipStatus"] == "ACTIVE"
    assert rel["outputFromProcesses"] == []
    assert "inputToProcesses" not in raw["attributes"]


def test_RL_004_new_relationship_reports_other_end_as_updated(api: Api) -> None:
    raw = fresh("raw")
    (g_raw,) = api.create(E(raw))
    body = api.upsert(P(fresh("p"), inputs=[ref(raw)]))
    assert len(mutated(body, "CREATE")) == 1
    assert mutated(body, "UPDATE") == [g_raw]
    # the request's own entities get toAtlasEntityHeaderWithClassifications, the far end a plain header
    assert body["mutatedEntities"]["CREATE"][0]["classifications"] == []
    assert "classifications" not in body["mutatedEntities"]["UPDATE"][0]


def test_RL_005_entity_created_in_same_request_is_only_under_create(api: Api) -> None:
    body = api.upsert(E(fresh("raw"), "-1"), P(fresh("p"), "-2", inputs=[{"guid": "-1"}]))
    g_raw = body["guidAssignments"]["-1"]
    assert g_raw in mutated(body, "CREATE")
    assert g_raw not in mutated(body, "UPDATE")


def _replace_inputs(api: Api, t: Trio) -> tuple[str, dict]:
    raw2 = fresh("raw2")
    (g2,) = api.create(E(raw2))
    body = api.upsert(P(t.p_name, inputs=[ref(raw2)]))
    return g2, body


def test_RL_006_replacing_inputs_marks_old_relationship_deleted(api: Api) -> None:
    t = Trio(api)
    g2, body = _replace_inputs(api, t)
    # checklist correction (RA-02): the new input's end is reported, the removed one (raw) is not
    assert sorted(mutated(body, "UPDATE")) == sorted([t.p, g2])
    inputs = _inputs_by_guid(api, t.p)
    assert inputs[t.raw]["relationshipStatus"] == "DELETED"
    assert inputs[t.raw]["entityStatus"] == "ACTIVE"
    assert inputs[g2]["relationshipStatus"] == "ACTIVE"
    assert set(_attr_input_guids(api, t.p)) == {t.raw, g2}


def test_RL_007_empty_list_removes_all_inputs(api: Api) -> None:
    t = Trio(api)
    api.upsert(P(t.p_name, inputs=[]))
    inputs = api.entity(t.p)["relationshipAttributes"]["inputs"]
    assert inputs
    assert all(i["relationshipStatus"] == "DELETED" for i in inputs)


def test_RL_008_null_inputs_are_dropped(api: Api) -> None:
    t = Trio(api)
    body = api.upsert(P(t.p_name, inputs=None))
    assert "mutatedEntities" not in body
    inputs = _inputs_by_guid(api, t.p)
    assert list(inputs) == [t.raw]
    assert inputs[t.raw]["relationshipStatus"] == "ACTIVE"


def test_RL_009_relationship_attributes_win_over_attributes(api: Api) -> None:
    raw, raw2, p = fresh("raw"), fresh("raw2"), fresh("p")
    g_raw, g_raw2 = api.create(E(raw, "-1"), E(raw2, "-2"))
    (gp,) = api.create(P(p, inputs=[ref(raw2)]))
    e = P(p, inputs=[ref(raw2)])
    e["relationshipAttributes"] = {"inputs": [ref(raw)]}
    api.upsert(e)
    inputs = _inputs_by_guid(api, gp)
    active = {g for g, i in inputs.items() if i["relationshipStatus"] == "ACTIVE"}
    assert active == {g_raw}
    assert inputs[g_raw2]["relationshipStatus"] == "DELETED"


def test_RL_010_re_adding_a_removed_input_leaves_it_deleted(api: Api) -> None:
    # Atlas 2.4.0 reuses raw's old (DELETED) edge instead of making a new one, so after [raw] -> [raw2] ->
    # [raw] the process has no ACTIVE input at all (RA-04; seen on 2.4.0, 2.1.0 brings raw back ACTIVE)
    t = Trio(api)
    g2, _ = _replace_inputs(api, t)
    body = api.upsert(P(t.p_name, inputs=[ref(t.raw_name)]))
    assert mutated(body, "UPDATE") == [t.p]
    assert "CREATE" not in body["mutatedEntities"]
    p = api.entity(t.p)
    inputs = p["relationshipAttributes"]["inputs"]
    assert sorted((i["guid"], i["relationshipStatus"]) for i in inputs) == sorted(
        [(t.raw, "DELETED"), (g2, "DELETED")]
    )
    assert all(i["entityStatus"] == "ACTIVE" for i in inputs)
    assert sorted(i["guid"] for i in p["attributes"]["inputs"]) == sorted([t.raw, g2])


def test_RL_010_re_adding_a_removed_input_again_is_still_deleted(api: Api) -> None:
    t = Trio(api)
    _replace_inputs(api, t)
    for _ in range(2):
        api.upsert(P(t.p_name, inputs=[ref(t.raw_name)]))
    assert _inputs_by_guid(api, t.p)[t.raw]["relationshipStatus"] == "DELETED"


def test_RL_010_relationship_api_brings_a_stuck_input_back_active(api: Api) -> None:
    # the way back on 2.4.0 (seen there; beyond the checklist row): POST /v2/relationship makes a new ACTIVE
    # edge next to the DELETED one, and re-posting the same inputs is then a no-op
    t = Trio(api)
    _replace_inputs(api, t)
    api.upsert(P(t.p_name, inputs=[ref(t.raw_name)]))
    stuck = _inputs_by_guid(api, t.p)[t.raw]
    assert stuck["relationshipStatus"] == "DELETED"
    rel = {
        "typeName": stuck["relationshipType"],
        "end1": {"guid": t.p, "typeName": CT_PROC},
        "end2": {"guid": t.raw, "typeName": CT_DS},
    }
    body = expect_ok(api.post("/v2/relationship", rel))
    assert (body["typeName"], body["status"]) == ("dataset_process_inputs", "ACTIVE")
    assert (body["end1"]["guid"], body["end2"]["guid"]) == (t.p, t.raw)
    assert body["guid"] != stuck["relationshipGuid"]
    expect_error(api.post("/v2/relationship", rel), 409, "ATLAS-409-00-004")
    assert "mutatedEntities" not in api.upsert(P(t.p_name, inputs=[ref(t.raw_name)]))
    raw_entries = [i for i in api.entity(t.p)["relationshipAttributes"]["inputs"] if i["guid"] == t.raw]
    assert sorted(i["relationshipStatus"] for i in raw_entries) == ["ACTIVE", "DELETED"]


def test_RL_011_deleting_an_input_dataset_leaves_the_process(api: Api) -> None:
    t = Trio(api)
    before = api.entity(t.p)["updateTime"]
    time.sleep(0.02)
    api.delete_entity(t.raw)
    p = api.entity(t.p)
    assert p["status"] == "ACTIVE"
    assert p["updateTime"] == before
    (i,) = [x for x in p["relationshipAttributes"]["inputs"] if x["guid"] == t.raw]
    assert i["entityStatus"] == "DELETED"
    assert i["relationshipStatus"] == "DELETED"
    assert t.raw in [x["guid"] for x in p["attributes"]["inputs"]]


def test_RL_012_same_input_by_unique_attributes_is_a_noop(api: Api) -> None:
    t = Trio(api)
    body = api.upsert(P(t.p_name, inputs=[ref(t.raw_name)]))
    assert t.p not in mutated(body, "UPDATE")
    assert "mutatedEntities" not in body


def test_RL_013_reference_by_supertype_name_is_never_a_noop(api: Api) -> None:
    t = Trio(api)
    for _ in range(2):
        body = api.upsert(P(t.p_name, inputs=[ref(t.raw_name, "DataSet")]))
        assert t.p in mutated(body, "UPDATE")
    inputs = _inputs_by_guid(api, t.p)
    assert inputs[t.raw]["relationshipStatus"] == "ACTIVE"


def test_RL_014_repeating_the_creation_batch_is_a_noop(api: Api) -> None:
    t = Trio(api)
    body = api.upsert(*t.batch)
    assert "mutatedEntities" not in body
    assert body["guidAssignments"] == {"-1": t.raw, "-2": t.out, "-3": t.p}


def test_RL_015_process_as_input_is_400_00_036(api: Api) -> None:
    t = Trio(api)
    r = api.post("/v2/entity/bulk", {"entities": [P(fresh("p"), inputs=[{"guid": t.p}])]})
    expect_error(
        r,
        400,
        "ATLAS-400-00-036",
        startswith="invalid relationshipDef: dataset_process_inputs: end type 1: DataSet, end type 2:",
    )


def test_RL_016_any_dataset_subtype_is_accepted_as_input(api: Api) -> None:
    a, b = fresh("a"), fresh("b")
    ga, gb = api.create(E(a, "-1"), E(b, "-2", type_=CT_DS2))
    (gp,) = api.create(P(fresh("p"), inputs=[ref(a), ref(b, CT_DS2)]))
    inputs = _inputs_by_guid(api, gp)
    assert set(inputs) == {ga, gb}
    assert all(i["relationshipStatus"] == "ACTIVE" for i in inputs.values())


def test_RL_017_process_without_io_reads_empty_lists(api: Api) -> None:
    (gp,) = api.create(P(fresh("p")))
    e = api.entity(gp)
    assert e["attributes"]["inputs"] == []
    assert e["attributes"]["outputs"] == []
    assert e["relationshipAttributes"]["inputs"] == []


def test_RL_018_builtin_lineage_relationship_defs(api: Api) -> None:
    for name, end_name in (("dataset_process_inputs", "inputs"), ("process_dataset_outputs", "outputs")):
        d = expect_ok(api.get(f"/v2/types/typedef/name/{name}"))
        assert d["endDef1"]["type"] == "Process"
        assert d["endDef1"]["name"] == end_name
        assert d["endDef1"]["isLegacyAttribute"] is True
    expect_error(api.get("/v2/types/typedef/name/process_dataset_inputs"), 404, "ATLAS-404-00-001")
