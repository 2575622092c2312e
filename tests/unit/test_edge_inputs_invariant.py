"""The lineage model's invariant: every column edge's source dataset is an input of its process (a
MERGE's or UPDATE's target that the statement reads is an input as well as an output). A property test
over the model, then each reader's own output and the registry's (what every consumer reads)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atlas_sync.lineage import registry
from atlas_sync.lineage.model import ColumnEdge, ColumnRef, Dataset, LineageGraph, Process

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ["d0", "d1", "d2", "d3", "d4"]


@st.composite
def graphs(draw: Any) -> LineageGraph:
    n = draw(st.integers(min_value=1, max_value=4))
    processes = [
        Process(
            id=f"p{i}",
            name=f"p{i}",
            inputs=draw(st.lists(st.sampled_from(DATASETS), unique=True, max_size=3)),
            outputs=draw(st.lists(st.sampled_from(DATASETS), unique=True, min_size=1, max_size=2)),
        )
        for i in range(n)
    ]
    edges = [
        ColumnEdge(
            source=ColumnRef(
                dataset=draw(st.sampled_from(DATASETS)), column=draw(st.sampled_from(["a", "b"]))
            ),
            target=ColumnRef(
                dataset=draw(st.sampled_from(DATASETS)), column=draw(st.sampled_from(["a", None]))
            ),
            kind=draw(st.sampled_from(["IDENTITY", "TRANSFORMATION", "JOIN", "FILTER"])),
            # an edge names its process, or leaves it to the graph's only one / its target's producer
            process=draw(st.sampled_from([None, *(p.id for p in processes)])),
        )
        for _ in range(draw(st.integers(min_value=0, max_value=8)))
    ]
    return LineageGraph(
        datasets=[Dataset(id=d, name=d, columns=["a", "b"]) for d in DATASETS],
        processes=processes,
        edges=edges,
    )


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_adding_edge_inputs_makes_the_invariant_hold_and_only_adds_edge_sources(graph: LineageGraph) -> None:
    before = {p.id: list(p.inputs) for p in graph.processes}
    missing = graph.missing_edge_inputs()
    assert graph.add_edge_inputs() == len(missing)
    assert graph.missing_edge_inputs() == []
    for p in graph.processes:
        # what it had first, in order, then sources of its own edges; no duplicates
        assert p.inputs[: len(before[p.id])] == before[p.id]
        assert len(set(p.inputs)) == len(p.inputs)
        added = p.inputs[len(before[p.id]) :]
        assert set(added) == {d for pid, d in missing if pid == p.id}
    # every edge's source is an input of the process it renders under
    for e, p in graph.edge_processes():
        assert p is None or e.source.dataset in p.inputs
    assert graph.add_edge_inputs() == 0  # idempotent


def test_an_edge_without_a_process_belongs_to_the_first_process_writing_its_target() -> None:
    g = LineageGraph(
        datasets=[Dataset(id=d, name=d, columns=["a"]) for d in ("s", "t", "u")],
        processes=[
            Process(id="p1", name="p1", inputs=["s"], outputs=["t"]),
            Process(id="p2", name="p2", inputs=["s"], outputs=["u"]),
        ],
        edges=[
            ColumnEdge(
                source=ColumnRef(dataset="t", column="a"), target=ColumnRef(dataset="t"), kind="FILTER"
            )
        ],
    )
    assert g.missing_edge_inputs() == [("p1", "t")]
    g.add_edge_inputs()
    assert g.process("p1").inputs == ["s", "t"] and g.process("p2").inputs == ["s"]


MERGE = """
MERGE INTO t.tgt USING t.src ON t.tgt.id = t.src.id
WHEN MATCHED THEN UPDATE SET v = t.src.v
WHEN NOT MATCHED THEN INSERT (id, v) VALUES (t.src.id, t.src.v);
"""
UPDATE = "UPDATE t.tgt SET v = v + 1 WHERE id > 3;"
OVERWRITE = "INSERT OVERWRITE TABLE t.x SELECT id, v FROM t.x WHERE v > 0;"


@pytest.mark.parametrize(
    ("sql", "target"),
    [(MERGE, "t.tgt"), (UPDATE, "t.tgt"), (OVERWRITE, "t.x")],
    ids=["merge", "update", "overwrite"],
)
def test_a_statement_reading_its_own_target_lists_it_as_an_input(
    tmp_path: Path, sql: str, target: str
) -> None:
    path = tmp_path / "s.sql"
    path.write_text(sql, encoding="utf-8")
    graph = registry.get("sql").read([str(path)], dialect="spark")
    [proc] = graph.processes
    assert target in proc.inputs and proc.outputs == [target]
    assert graph.missing_edge_inputs() == []


def test_a_dbt_incremental_model_reading_itself_lists_itself_as_an_input() -> None:
    graph = registry.get("dbt").read([str(ROOT / "tests/data/dbt/artifacts/1.10")])
    proc = graph.process("model.jaffle.fct_order_events")
    assert proc is not None and "jaffle.main_marts.fct_order_events" in proc.inputs
    assert graph.missing_edge_inputs() == []


def test_an_openlineage_column_source_the_event_does_not_list_is_an_input(tmp_path: Path) -> None:
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2024-05-01T10:00:00Z",
        "run": {"runId": "3f5e8c3a-1111-4111-8111-111111111111"},
        "job": {"namespace": "a", "name": "j"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "s.a"}],
        "outputs": [
            {
                "namespace": "postgres://db:5432",
                "name": "s.t",
                "facets": {
                    "columnLineage": {
                        "_producer": "x",
                        "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/ColumnLineageDatasetFacet.json",
                        "fields": {
                            "c": {
                                "inputFields": [
                                    {"namespace": "postgres://db:5432", "name": "s.a", "field": "c"},
                                    {"namespace": "postgres://db:5432", "name": "s.b", "field": "c"},
                                ]
                            }
                        },
                    }
                },
            }
        ],
        "producer": "https://example.com/producer",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
    }
    path = tmp_path / "e.ol.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    graph = registry.get("openlineage").read([str(path)])
    [proc] = graph.processes
    assert proc.inputs == ["s.a", "s.b"]
    assert graph.missing_edge_inputs() == []


def _fixtures() -> list[tuple[str, str, dict[str, Any]]]:
    cases: list[tuple[str, str, dict[str, Any]]] = []
    for f in sorted((ROOT / "tests/data/spark/fixtures").glob("*/analyzed.txt")):
        cases += [("spark-plan", str(f), {}), ("spark-plan", str(f), {"mode": "operator"})]
    for f in sorted((ROOT / "tests/data/spark/fixtures").glob("*/logical.json")):
        cases.append(("spark-json", str(f), {}))
    for f in sorted((ROOT / "tests/data/seatunnel").glob("*.conf")):
        if f.name != "variables.conf":  # (needs its variables)
            cases.append(("seatunnel", str(f), {}))
    cases.append(("whaletunnel", str(ROOT / "examples/whaletunnel/customer.whaletunnel.json"), {}))
    for f in sorted((ROOT / "tests/data/openlineage").glob("*.json*")):
        cases.append(("openlineage", str(f), {}))
    for f in sorted((ROOT / "tests/data/sql/procedures").glob("*.sql")):
        cases.append(("sql", str(f), {}))
    cases += [
        ("sql", str(ROOT / "examples/sql/etl.sql"), {"dialect": "spark"}),
        ("hive-lineage", str(ROOT / "tests/data/seeds/spark-sql-field-lineage.edges.json"), {}),
    ]
    for f in sorted((ROOT / "tests/data/dbt/artifacts").iterdir()):
        cases.append(("dbt", str(f), {}))
    return cases


@pytest.mark.parametrize(
    ("reader", "path", "options"),
    _fixtures(),
    ids=lambda v: Path(v).name if isinstance(v, str) and "/" in v else None,
)
def test_every_readers_graph_keeps_the_invariant(reader: str, path: str, options: dict[str, Any]) -> None:
    graph = registry.get(reader).read([path], **options)  # the reader's own output
    assert graph.missing_edge_inputs() == []
