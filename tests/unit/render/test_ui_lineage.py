"""What Atlas's UI draws from what a sync renders (issue 39, item 4).

- A table's lineage stays table-level: no column-lineage entity has a dataset among its inputs or
  outputs; an indirect dependency on a whole dataset (target `*`: a JOIN, FILTER, GROUP_BY of the
  statement) goes to the columns the statement writes there, in both built-in profiles.
- A statement is named for people (`<job>: <statement type> <targets>`), its digest kept in the
  qualifiedName; a column names its table for the UI's node label (`tab1.name`, not `name`).
- `show` (reading Atlas back) still reports the indirect dependencies on `tab3.*`.

Expected values are written by hand from examples/sql/etl.sql (the seed statement).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from atlas_sync.api import Publisher
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.registry import read
from atlas_sync.render import load_profile, render
from atlas_sync.render.renderer import DesiredState
from atlas_sync.resources import builtin_dir
from atlas_sync.view.atlas_graph import domain_graph

ROOT = Path(__file__).resolve().parents[3]
ETL_SQL = ROOT / "examples" / "sql" / "etl.sql"
DATASET_TYPES = {"lineage_dataset", "hive_table"}
COLUMN_LINEAGE_TYPES = {"lineage_column_lineage", "hive_column_lineage"}


def seed_state(profile: str) -> DesiredState:
    graph = read("sql", [str(ETL_SQL)], dialect="spark")
    return render(graph, load_profile(profile), domain="ui", job="etl")


def refs(ent: object, name: str) -> list[tuple[str, str]]:
    return list(getattr(ent, "refs").get(name) or [])  # noqa: B009


def test_no_column_lineage_entity_reads_or_writes_a_dataset_in_either_profile() -> None:
    for profile in ("lineage", "atlas"):
        state = seed_state(profile)
        cls = [e for e in state.entities.values() if e.type_name in COLUMN_LINEAGE_TYPES]
        assert len(cls) == 6, profile  # tab3.id, tab3.name, tab3.age; tab3.* JOIN, FILTER, GROUP_BY
        for e in cls:
            for ref_type, qn in refs(e, "inputs") + refs(e, "outputs"):
                assert ref_type not in DATASET_TYPES, (profile, e.qualified_name, qn)


def test_an_indirect_dependency_on_the_whole_table_goes_to_the_columns_the_statement_writes() -> None:
    state = seed_state("lineage")
    [proc] = [e for e in state.entities.values() if e.type_name == "lineage_process"]
    join = state.entities[("lineage_column_lineage", f"{proc.qualified_name[:-3]}:tab3.*:JOIN@ui")]
    assert join.attributes["name"] == "tab3.*:JOIN"
    assert sorted(refs(join, "inputs")) == [
        ("lineage_column", "tab1.id@ui"),
        ("lineage_column", "tabb2.id@ui"),
    ]
    assert sorted(refs(join, "outputs")) == [
        ("lineage_column", "tab3.age@ui"),
        ("lineage_column", "tab3.id@ui"),
        ("lineage_column", "tab3.name@ui"),
    ]


def test_the_atlas_profile_keeps_its_names_and_sends_the_dependency_to_hive_columns() -> None:
    state = seed_state("atlas")
    [proc] = [e for e in state.entities.values() if e.type_name == "hive_process"]
    # the name as before (Atlas's hook convention `<process>:<target>:<KIND>`), only the outputs moved
    qn = f"{proc.qualified_name}:default.tab3:FILTER"
    flt = state.entities[("hive_column_lineage", qn)]
    assert sorted(refs(flt, "inputs")) == [
        ("hive_column", "default.tab1.id@primary"),
        ("hive_column", "default.tabb2.age@primary"),
    ]
    assert sorted(refs(flt, "outputs")) == [
        ("hive_column", "default.tab3.age@primary"),
        ("hive_column", "default.tab3.id@primary"),
        ("hive_column", "default.tab3.name@primary"),
    ]


def test_a_whole_table_dependency_with_no_column_written_has_no_outputs() -> None:
    doc = {
        "datasets": [
            {"id": "s", "name": "s", "columns": ["a"]},
            {"id": "t", "name": "t"},
        ],
        "processes": [{"id": "p", "name": "p", "inputs": ["s"], "outputs": ["t"]}],
        "edges": [{"source": "s.a", "target": "t.*", "kind": "FILTER", "process": "p"}],
    }
    state = render(LineageGraph.from_document(doc), load_profile("lineage"), domain="ui", job="p")
    flt = state.entities[("lineage_column_lineage", "p:t.*:FILTER@ui")]
    assert refs(flt, "inputs") == [("lineage_column", "s.a@ui")]
    assert refs(flt, "outputs") == []


def test_a_statement_is_named_for_people_with_its_job_type_and_target_in_both_profiles() -> None:
    lineage = seed_state("lineage")
    [proc] = [e for e in lineage.entities.values() if e.type_name == "lineage_process"]
    assert re.fullmatch(
        r"etl:(.+:)?tab3:[0-9a-f]{8}@ui", proc.qualified_name
    )  # the identity keeps its digest
    assert proc.attributes["name"] == "etl: INSERT tab3"
    [hive] = [e for e in seed_state("atlas").entities.values() if e.type_name == "hive_process"]
    assert hive.attributes["name"] == "etl: INSERT tab3"


def test_a_process_that_is_not_a_statement_keeps_the_readers_name() -> None:
    doc = {
        "datasets": [{"id": "a", "name": "a"}, {"id": "b", "name": "b"}],
        "processes": [
            {"id": "daily", "name": "daily revenue", "kind": "job", "inputs": ["a"], "outputs": ["b"]}
        ],
    }
    state = render(LineageGraph.from_document(doc), load_profile("lineage"), domain="ui", job="daily")
    assert state.entities[("lineage_process", "daily@ui")].attributes["name"] == "daily revenue"


def test_a_column_names_its_table_where_atlas_ui_labels_it() -> None:
    state = seed_state("lineage")
    labels = {
        e.qualified_name: e.attributes["displayName"]
        for e in state.entities.values()
        if e.type_name == "lineage_column"
    }
    assert labels["tab1.name@ui"] == "tab1.name"
    assert labels["tabb2.name@ui"] == "tabb2.name"
    assert state.entities[("lineage_column", "tab1.name@ui")].attributes["name"] == "name"
    # Atlas's displayText (its UI's node label) is the type's displayTextAttribute, else `name`
    bundle = json.loads((builtin_dir("typedefs") / "lineage" / "0010-lineage_model.json").read_text())
    [column] = [d for d in bundle["entityDefs"] if d["name"] == "lineage_column"]
    assert column["options"] == {"displayTextAttribute": "displayName"}


def test_atlas_lineage_of_the_table_is_table_level_and_show_still_reports_the_indirect_ones() -> None:
    pub = Publisher(embedded_client(None), profile="lineage", domain="ui")
    pub.sync(pub.read("sql", [str(ETL_SQL)], dialect="spark"), job="etl")
    info = pub.client.lineage_by_unique("lineage_dataset", "tab3@ui", direction="BOTH", depth=3)
    drawn = {(h["typeName"], h.get("displayText")) for h in info["guidEntityMap"].values()}
    assert drawn == {
        ("lineage_dataset", "tab1"),
        ("lineage_dataset", "tabb2"),
        ("lineage_dataset", "tab3"),
        ("lineage_process", "etl: INSERT tab3"),
    }
    column = pub.client.lineage_by_unique("lineage_column", "tab3.name@ui", direction="BOTH", depth=3)
    sources = {
        h.get("displayText") for h in column["guidEntityMap"].values() if h["typeName"] == "lineage_column"
    }
    assert sources == {"tab1.id", "tab1.name", "tabb2.age", "tabb2.id", "tabb2.name", "tab3.name"}
    shown = {(str(e.target), str(e.source), e.kind) for e in domain_graph(pub, None).edges}
    assert {e for e in shown if e[0] == "tab3.*"} == {
        ("tab3.*", "tabb2.age", "FILTER"),
        ("tab3.*", "tab1.id", "FILTER"),
        ("tab3.*", "tab1.id", "GROUP_BY"),
        ("tab3.*", "tab1.name", "GROUP_BY"),
        ("tab3.*", "tab1.id", "JOIN"),
        ("tab3.*", "tabb2.id", "JOIN"),
    }
