"""Reading a domain back from Atlas: column entities fold into their datasets, column-lineage
processes into column edges, and only operator profiles get operator trees."""

from __future__ import annotations

from pathlib import Path

from atlas_sync.api import Publisher
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import Dataset, LineageGraph, Process
from atlas_sync.view import pictures
from atlas_sync.view.atlas_graph import domain_graph
from atlas_sync.view.fold import fold_columns

ROOT = Path(__file__).resolve().parents[3]
SEED_SQL = ROOT / "examples" / "sql" / "etl.sql"
SEED_PLAN = ROOT / "tests" / "data" / "spark" / "spark-plan-to-atlas.logical.txt"


def edge_set(g: LineageGraph) -> set[tuple[str, str, str]]:
    return {(str(e.target), str(e.source), e.kind) for e in g.edges}


def atlas_like() -> LineageGraph:
    g = LineageGraph()
    for qn, kind in [
        ("t@d", "ds"),
        ("t.a@d", "col"),
        ('t."my col"@d', "col"),
        ("s@d", "ds"),
        ("s.x@d", "col"),
        ("db@d", "ds"),
        ("db.s2@d", "ds"),
    ]:
        g.add_dataset(Dataset(id=qn, name=qn, kind=kind))
    g.add_process(Process(id="job@d", name="job@d", inputs=["s@d"], outputs=["t@d"]))
    g.add_process(
        Process(
            id="job:t.a@d",
            name="n",
            inputs=["s.x@d"],
            outputs=["t.a@d"],
            attributes={"dependencyType": "IDENTITY"},
        )
    )
    g.add_process(Process(id="job:t.*:FILTER@d", name="n", inputs=["s.x@d"], outputs=["t@d"]))
    g.add_process(Process(id="job:t.my@d", name="n", inputs=["s.x@d"], outputs=['t."my col"@d']))
    return g


def test_columns_fold_into_their_datasets_and_lose_the_domain() -> None:
    g = fold_columns(atlas_like(), "d")
    cols = {d.id: d.column_names() for d in g.datasets}
    # db.s2 has the same kind as db: a dataset of its own, not a column.
    assert cols == {"t": ["a", "my col"], "s": ["x"], "db": [], "db.s2": []}


def test_column_lineage_processes_become_edges_with_their_kind() -> None:
    g = fold_columns(atlas_like(), "d")
    assert [(p.id, p.inputs, p.outputs) for p in g.processes] == [("job", ["s"], ["t"])]
    assert edge_set(g) == {
        ("t.a", "s.x", "IDENTITY"),
        ("t.*", "s.x", "FILTER"),
        ('t."my col"', "s.x", "TRANSFORMATION"),  # no kind recorded: a direct dependency
    }


def test_seed_sql_read_back_from_atlas_has_the_seed_column_lineage() -> None:
    pub = Publisher(embedded_client(None), profile="lineage", domain="etl")
    pub.sync(pub.read("sql", [str(SEED_SQL)], dialect="spark"))
    g = domain_graph(pub, None)
    assert {d.id for d in g.datasets} == {"tab1", "tabb2", "tab3"}
    assert set(g.dataset("tab3").column_names()) == {"id", "name", "age"}  # type: ignore[union-attr]
    # From the seed: tab3.id <- tab1.id, tab3.name <- tab1.name, tabb2.name, tab3.age <- tabb2.age.
    direct = {(t, s) for t, s, k in edge_set(g) if k in ("IDENTITY", "TRANSFORMATION", "AGGREGATION")}
    assert direct == {
        ("tab3.id", "tab1.id"),
        ("tab3.name", "tab1.name"),
        ("tab3.name", "tabb2.name"),
        ("tab3.age", "tabb2.age"),
    }
    assert [p.parent for p in g.processes] == [None]


def test_chained_jobs_are_not_an_operator_tree_in_the_lineage_profile() -> None:
    pub = Publisher(embedded_client(None), profile="lineage", domain="x")
    for job, src, dst in [("a", "raw", "mid"), ("b", "mid", "out")]:
        g = LineageGraph(job=job)
        for d in (src, dst):
            g.add_dataset(Dataset(id=d, name=d))
        g.add_process(Process(id=job, name=job, inputs=[src], outputs=[dst]))
        pub.sync(g)
    held = domain_graph(pub, None)
    assert all(p.parent is None and not p.children for p in held.processes)
    # "mid" is a table both jobs share: the picture keeps it.
    assert "<title>mid\n" in pictures.render(held, "svg")


def test_pico_domain_reads_back_as_the_operator_tree() -> None:
    pub = Publisher(embedded_client(None), profile="pico", domain="cars")
    pub.sync(pub.read("spark-plan", [str(SEED_PLAN)]))
    held = domain_graph(pub, None)
    parents = {p.name: p.parent for p in held.processes}
    # The seed plan: 2_0 under 1_0, 3_0 under 2_0, 4_0 under 3_0, 5_0 and 5_1 under 4_0, 6_0 under 5_1.
    assert parents == {
        "pico_project_1_0": None,
        "pico_project_2_0": "pico_project_1_0",
        "pico_filter_3_0": "pico_project_2_0",
        "pico_union_4_0": "pico_filter_3_0",
        "pico_logical_relation_5_0": "pico_union_4_0",
        "pico_project_5_1": "pico_union_4_0",
        "pico_local_relation_6_0": "pico_project_5_1",
    }
    # In the picture the intermediate results between operators fold into arrows: only input and output remain.
    scene = pictures.layout(held)
    assert sorted(n.title for n in scene.nodes.values() if n.role == "dataset") == [
        "pico_spark_data_input",
        "pico_spark_data_output",
    ]


def test_a_whole_dataset_dependency_reads_back_as_one_edge_to_the_dataset_whatever_its_outputs() -> None:
    # Written since issue 39: outputs are the columns the statement writes there (or none), not the dataset.
    g = LineageGraph()
    for qn, kind in [("t@d", "ds"), ("t.a@d", "col"), ("t.b@d", "col"), ("s@d", "ds"), ("s.x@d", "col")]:
        g.add_dataset(Dataset(id=qn, name=qn, kind=kind))
    g.add_process(Process(id="job:t.*:JOIN@d", name="t.*:JOIN", inputs=["s.x@d"], outputs=["t.a@d", "t.b@d"]))
    g.add_process(Process(id="job:t.*:FILTER@d", name="t.*:FILTER", inputs=["s.x@d"], outputs=[]))
    folded = fold_columns(g, "d")
    assert edge_set(folded) == {("t.*", "s.x", "JOIN"), ("t.*", "s.x", "FILTER")}
    assert folded.processes == []
