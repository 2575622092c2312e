"""LN — lineage (checklist rows LN-001 … LN-019).

Fixtures: *chain* ``raw →p1→ mid →p2→ out`` and *long chain* ``ds0 →pA→ ds1 →pB→ ds2 →pC→ ds3 →pD→ ds4``.
Tests that change lineage build their own chain.
"""

from __future__ import annotations

import pytest
from contract_helpers import (
    CT_DS,
    CT_INF,
    Api,
    E,
    P,
    expect_error,
    expect_ok,
    expect_plain_500,
    fresh,
    oid,
    qn,
    random_guid,
    relation_pairs,
)

pytestmark = pytest.mark.contract


def make_chain(api: Api, n_datasets: int) -> tuple[list[str], list[str], list[str]]:
    """``n_datasets`` DataSets linked by ``n_datasets - 1`` Processes: (dataset guids, process guids, names)."""
    names = [fresh("ds") for _ in range(n_datasets)]
    entities = [E(n, f"-{i + 1}") for i, n in enumerate(names)]
    for i in range(n_datasets - 1):
        pn = fresh("p")
        names.append(pn)
        entities.append(P(pn, f"-{100 + i}", inputs=[oid(f"-{i + 1}")], outputs=[oid(f"-{i + 2}")]))
    guids = api.create(*entities)
    return guids[:n_datasets], guids[n_datasets:], names


class Chain:
    def __init__(self, api: Api) -> None:
        (self.raw, self.mid, self.out), (self.p1, self.p2), names = make_chain(api, 3)
        self.mid_name = names[1]

    @property
    def all(self) -> set[str]:
        return {self.raw, self.p1, self.mid, self.p2, self.out}


@pytest.fixture(scope="module")
def chain(_session_api: Api) -> Chain:
    return Chain(_session_api)


@pytest.fixture(scope="module")
def long_chain(_session_api: Api) -> tuple[list[str], list[str]]:
    ds, ps, _ = make_chain(_session_api, 5)
    return ds, ps


def test_LN_001_lineage_both_directions_default_depth(api: Api, chain: Chain) -> None:
    c = chain
    body = api.lineage(c.mid)
    assert body["baseEntityGuid"] == c.mid
    assert body["lineageDirection"] == "BOTH"
    assert body["lineageDepth"] == 3
    assert relation_pairs(body) == {(c.raw, c.p1), (c.p1, c.mid), (c.mid, c.p2), (c.p2, c.out)}
    assert len(body["relations"]) == 4
    assert set(body["guidEntityMap"]) == c.all
    for g, h in body["guidEntityMap"].items():
        assert h["guid"] == g
        assert "classifications" not in h  # lineage maps use toAtlasEntityHeader (classifications null)


def test_LN_002_relation_ids_are_the_relationship_guids(api: Api, chain: Chain) -> None:
    c = chain
    body = api.lineage(c.mid)
    rel_ids = {(r["fromEntityId"], r["toEntityId"]): r["relationshipId"] for r in body["relations"]}
    p1 = api.entity(c.p1)["relationshipAttributes"]
    (inp,) = p1["inputs"]
    (outp,) = p1["outputs"]
    # input edge: DataSet -> Process; output edge: Process -> DataSet
    assert rel_ids[(c.raw, c.p1)] == inp["relationshipGuid"]
    assert rel_ids[(c.p1, c.mid)] == outp["relationshipGuid"]


def test_LN_003_input_direction(api: Api, chain: Chain) -> None:
    c = chain
    assert relation_pairs(api.lineage(c.mid, direction="INPUT")) == {(c.raw, c.p1), (c.p1, c.mid)}


def test_LN_004_output_direction(api: Api, chain: Chain) -> None:
    c = chain
    assert relation_pairs(api.lineage(c.mid, direction="OUTPUT")) == {(c.mid, c.p2), (c.p2, c.out)}


def _hops(ds: list[str], ps: list[str], n: int) -> set[tuple[str, str]]:
    """The relations of the first ``n`` DataSet→Process→DataSet hops of a chain."""
    pairs = set()
    for i in range(n):
        pairs |= {(ds[i], ps[i]), (ps[i], ds[i + 1])}
    return pairs


def test_LN_005_depth_counts_dataset_process_dataset_hops(
    api: Api, long_chain: tuple[list[str], list[str]]
) -> None:
    ds, ps = long_chain
    assert relation_pairs(api.lineage(ds[0], direction="OUTPUT", depth=1)) == _hops(ds, ps, 1)
    default = api.lineage(ds[0], direction="OUTPUT")
    assert relation_pairs(default) == _hops(ds, ps, 3)
    assert len(default["relations"]) == 6


def test_LN_006_depth_zero_is_unlimited(api: Api, long_chain: tuple[list[str], list[str]]) -> None:
    ds, ps = long_chain
    body = api.lineage(ds[0], direction="OUTPUT", depth=0)
    assert relation_pairs(body) == _hops(ds, ps, 4)
    assert len(body["relations"]) == 8
    assert body["lineageDepth"] == 0


def test_LN_007_process_depth_one_is_its_own_datasets(api: Api, chain: Chain) -> None:
    c = chain
    assert relation_pairs(api.lineage(c.p1, depth=1)) == {(c.raw, c.p1), (c.p1, c.mid)}


def test_LN_008_process_output_depth_two(api: Api, chain: Chain) -> None:
    c = chain
    body = api.lineage(c.p1, direction="OUTPUT", depth=2)
    assert relation_pairs(body) == {(c.p1, c.mid), (c.mid, c.p2), (c.p2, c.out)}


def test_LN_009_isolated_dataset_has_empty_lineage(api: Api) -> None:
    (g,) = api.create(E(fresh("iso")))
    body = api.lineage(g)
    assert body["baseEntityGuid"] == g
    assert body["guidEntityMap"] == {}
    assert body["relations"] == []


def test_LN_010_unknown_guid_is_404_00_005(api: Api) -> None:
    expect_error(api.get(f"/v2/lineage/{random_guid()}"), 404, "ATLAS-404-00-005")


def test_LN_011_non_lineage_type_is_404_00_011(api: Api) -> None:
    (g,) = api.create(E(fresh("inf"), type_=CT_INF))
    expect_error(
        api.get(f"/v2/lineage/{g}"),
        404,
        "ATLAS-404-00-011",
        contains=f"Given instance guid {g} with type {CT_INF} is not a valid lineage entity type.",
    )


@pytest.mark.parametrize(
    "params", [{"direction": "both"}, {"depth": "abc"}], ids=["lowercase-direction", "depth-abc"]
)
def test_LN_012_unconvertible_query_params_are_plain_500(api: Api, chain: Chain, params: dict) -> None:
    expect_plain_500(api.get(f"/v2/lineage/{chain.mid}", params=params))


def test_LN_013_deleted_entities_stay_in_lineage(api: Api) -> None:
    c = Chain(api)
    api.delete_entity(c.mid)
    body = api.lineage(c.raw, direction="OUTPUT", depth=0)
    assert relation_pairs(body) == {(c.raw, c.p1), (c.p1, c.mid), (c.mid, c.p2), (c.p2, c.out)}
    assert body["guidEntityMap"][c.mid]["status"] == "DELETED"


def test_LN_014_removed_inputs_stay_in_lineage(api: Api) -> None:
    c = Chain(api)
    p1 = api.entity(c.p1)["attributes"]
    raw2 = fresh("raw2")
    (g_raw2,) = api.create(E(raw2))
    api.upsert(P(p1["name"], inputs=[oid(g_raw2)], outputs=[oid(c.mid)]))
    body = api.lineage(c.p1, direction="INPUT", depth=1)
    assert {(c.raw, c.p1), (g_raw2, c.p1)} <= relation_pairs(body)


def test_LN_015_producer_without_inputs_is_not_upstream(api: Api) -> None:
    z, pz = fresh("z"), fresh("pz")
    gz, gpz = api.create(E(z, "-1"), P(pz, "-2", outputs=[oid("-1")]))
    body = api.lineage(gz, direction="INPUT")
    assert body["relations"] == []
    assert gpz not in body["guidEntityMap"]


def test_LN_016_cycles_terminate(api: Api) -> None:
    d1, d2, pa, pb = fresh("ds"), fresh("ds"), fresh("pa"), fresh("pb")
    g1, g2, gpa, gpb = api.create(
        E(d1, "-1"),
        E(d2, "-2"),
        P(pa, "-3", inputs=[oid("-1")], outputs=[oid("-2")]),
        P(pb, "-4", inputs=[oid("-2")], outputs=[oid("-1")]),
    )
    body = api.lineage(g1, depth=0)
    assert relation_pairs(body) == {(g1, gpa), (gpa, g2), (g2, gpb), (gpb, g1)}


def _normalised(body: dict) -> dict:
    b = dict(body)
    b["relations"] = sorted(body["relations"], key=lambda r: (r["fromEntityId"], r["toEntityId"]))
    return b


def test_LN_017_lineage_by_unique_attribute_equals_by_guid(api: Api, chain: Chain) -> None:
    by_guid = api.lineage(chain.mid)
    by_qn = expect_ok(
        api.get(
            f"/v2/lineage/uniqueAttribute/type/{CT_DS}", params={"attr:qualifiedName": qn(chain.mid_name)}
        )
    )
    assert _normalised(by_qn) == _normalised(by_guid)


@pytest.mark.parametrize("state", ["missing", "deleted"])
def test_LN_018_lineage_by_missing_or_deleted_unique_attribute_is_404_00_009(api: Api, state: str) -> None:
    x = fresh("ln")
    if state == "deleted":
        (g,) = api.create(E(x))
        api.delete_entity(g)
    r = api.get(f"/v2/lineage/uniqueAttribute/type/{CT_DS}", params={"attr:qualifiedName": qn(x)})
    expect_error(r, 404, "ATLAS-404-00-009")


def test_LN_019_lineage_on_demand_disabled_is_400_00_100(api: Api, chain: Chain) -> None:
    expect_error(api.post(f"/v2/lineage/{chain.mid}", {}), 400, "ATLAS-400-00-100")
