"""The text and the JSON form of one plan give the same graph; the seed's plan in operator mode."""

from __future__ import annotations

from typing import Any

import pytest
from spark_test_support import CASES, FIXTURES, SEED, read_json_plan, read_text_plan

from atlas_sync.lineage.model import LineageGraph


def _shape(g: LineageGraph) -> dict[str, Any]:
    """Everything but the rendered expression texts (the JSON form re-renders them)."""
    return {
        "datasets": sorted((d.id, d.kind, tuple(d.column_names())) for d in g.datasets),
        "processes": sorted(
            (
                p.id,
                p.kind,
                p.operator,
                p.level,
                tuple(p.inputs),
                tuple(p.outputs),
                p.parent,
                tuple(p.children),
            )
            for p in g.processes
        ),
        "edges": sorted((str(e.source), str(e.target), e.kind, e.process or "") for e in g.edges),
        "attributes": sorted(
            (p.id, k)
            for p in g.processes
            for k in p.attributes
            if k not in ("planText", "queryText", "sourceFile")
        ),
        "problems": sorted(str(p.code) for p in g.problems),
    }


@pytest.mark.parametrize("mode", ["job", "operator"])
@pytest.mark.parametrize("case", CASES)
def test_text_and_json_forms_give_the_same_graph(case: str, mode: str) -> None:
    explain = str(FIXTURES / case / "explain.txt")
    text = read_text_plan(FIXTURES / case / "analyzed.txt", mode=mode, explain=explain, job=case)
    js = read_json_plan(FIXTURES / case / "analyzed.json", mode=mode, explain=explain, job=case)
    assert _shape(text) == _shape(js)


@pytest.mark.parametrize("case", CASES)
def test_json_alone_keeps_the_tree_and_column_lineage(case: str) -> None:
    """Without explain the JSON lacks paths and some names, but not the operators or the lineage shape."""
    text = read_text_plan(FIXTURES / case / "analyzed.txt", mode="operator", job=case)
    js = read_json_plan(FIXTURES / case / "analyzed.json", mode="operator", job=case)
    assert _shape(text)["processes"] == _shape(js)["processes"]
    text_job = read_text_plan(FIXTURES / case / "analyzed.txt", job=case)
    js_job = read_json_plan(FIXTURES / case / "analyzed.json", job=case)
    assert {(e.source.column, e.target.column, e.kind) for e in text_job.edges} == {
        (e.source.column, e.target.column, e.kind) for e in js_job.edges
    }


# The seed (spark-plan-to-atlas.txt) plan:
#   Project [model#17, manufacturer#18, ... AS processedDDTM#36]      1_0
#   +- Project [model#17, manufacturer#18]                            2_0
#      +- Filter NOT (manufacturer#18 = Audi)                         3_0
#         +- Union false, false                                       4_0
#            :- Relation [model#17,manufacturer#18] csv               5_0
#            +- Project [_1#23 AS model#28, _2#24 AS manufacturer#29] 5_1
#               +- LocalRelation [_1#23, _2#24]                       6_0
# Per the seed, a node's inputs are data_<own>-<child> (or data_input for a leaf) and its output is
# data_<parent>-<own> (or data_output for the root).
SEED_PROCESSES = {
    "1_0": ("Project", ["1_0-2_0"], ["output"]),
    "2_0": ("Project", ["2_0-3_0"], ["1_0-2_0"]),
    "3_0": ("Filter", ["3_0-4_0"], ["2_0-3_0"]),
    "4_0": ("Union", ["4_0-5_0", "4_0-5_1"], ["3_0-4_0"]),
    "5_0": ("LogicalRelation", ["input"], ["4_0-5_0"]),
    "5_1": ("Project", ["5_1-6_0"], ["4_0-5_1"]),
    "6_0": ("LocalRelation", ["input"], ["5_1-6_0"]),
}


def test_seed_plan_in_operator_mode_gives_the_seed_entity_set() -> None:
    g = read_text_plan(SEED, mode="operator")
    assert {p.id: (p.operator, p.inputs, p.outputs) for p in g.processes} == SEED_PROCESSES
    assert all(p.kind == "operator" and p.level == p.id for p in g.processes)
    intermediates = {d.id: d.facets["levels"] for d in g.datasets if d.kind == "intermediate"}
    assert intermediates == {
        f"{a}-{b}": [a, b]
        for a, b in [
            ("1_0", "2_0"),
            ("2_0", "3_0"),
            ("3_0", "4_0"),
            ("4_0", "5_0"),
            ("4_0", "5_1"),
            ("5_1", "6_0"),
        ]
    }
    assert {d.id for d in g.datasets if d.kind != "intermediate"} == {"input", "output"}
    assert g.check() == [] and g.problems == []


def test_seed_operator_attributes_follow_the_profile_spec() -> None:
    g = read_text_plan(SEED, mode="operator")
    by = {p.id: p.attributes for p in g.processes}
    assert by["3_0"] == {
        "levelNum": 3,
        "planText": "Filter NOT (manufacturer#18 = Audi)",
        "condition": "NOT (manufacturer#18 = Audi)",
    }
    assert by["4_0"] == {"levelNum": 4, "planText": "Union false, false", "isAll": True, "byName": False}
    assert by["2_0"]["columns"] == ["model#17", "manufacturer#18"]
    assert by["5_0"]["columns"] == ["model", "manufacturer"] and by["5_0"]["format"] == "csv"
    assert by["6_0"]["columns"] == ["_1", "_2"]
    assert by["1_0"]["levelNum"] == 1 and by["6_0"]["levelNum"] == 6


def test_seed_lineage_walks_from_output_back_to_input_through_every_operator() -> None:
    g = read_text_plan(SEED, mode="operator")
    producers = {o: p for p in g.processes for o in p.outputs}
    seen: set[str] = set()
    frontier = ["output"]
    while frontier:
        ds = frontier.pop()
        p = producers.get(ds)
        if p is None:
            continue
        seen.add(p.id)
        frontier.extend(p.inputs)
    assert seen == set(SEED_PROCESSES)


def test_seed_plan_in_job_mode_has_column_lineage() -> None:
    g = read_text_plan(SEED, path="src/main/resources/cars.csv")
    [proc] = g.processes
    assert proc.id == "spark-plan-to-atlas" and g.job == "spark-plan-to-atlas"
    direct = {(e.source.column, e.target.column, e.kind) for e in g.edges if e.target.column}
    # the local rows' _1/_2 are renamed to model/manufacturer before the Union
    assert direct == {
        ("model", "model", "IDENTITY"),
        ("manufacturer", "manufacturer", "IDENTITY"),
        ("_1", "model", "IDENTITY"),
        ("_2", "manufacturer", "IDENTITY"),
    }


def test_reading_twice_gives_the_same_document() -> None:
    for mode in ("job", "operator"):
        a = read_text_plan(SEED, mode=mode).to_document()
        b = read_text_plan(SEED, mode=mode).to_document()
        assert a == b


def test_editing_one_operator_changes_only_that_operator(tmp_plan: Any) -> None:
    """What makes a second sync of an edited plan update one process only."""
    before = read_text_plan(SEED, mode="operator")
    edited = read_text_plan(tmp_plan(SEED.read_text().replace("Audi", "BMW"), SEED.name), mode="operator")
    old = {p.id: p.model_dump() for p in before.processes}
    new = {p.id: p.model_dump() for p in edited.processes}
    assert old.keys() == new.keys()
    assert [k for k in old if old[k] != new[k]] == ["3_0"]
    assert [d.model_dump() for d in before.datasets] == [d.model_dump() for d in edited.datasets]
