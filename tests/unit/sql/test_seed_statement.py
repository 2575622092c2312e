"""The seed's own statement (spark-sql-field-lineage): a CTE that reads another CTE, no schema."""

from __future__ import annotations

from pathlib import Path

from atlas_sync.lineage.readers.sql import READER

from .conftest import DIRECT, one, triples

SEED = Path(__file__).parents[2] / "data" / "seeds" / "spark-sql-field-lineage.sql"
SEED_SQL = """with A as (select id,name,age from tab1 where id > 100 ) ,
C as (select id,name,max(age) from A group by A.id,A.name) ,
B as (select id,name,age from tabb2 where age > 28)
insert into tab3
select C.id,concat(C.name,B.name) as name, B.age from
B,C where C.id = B.id
"""


def test_seed_direct_edges_are_exactly_the_expected_field_lineage() -> None:
    st = one(SEED_SQL)
    assert triples(st, DIRECT) == {
        ("tab1.id", "tab3.id", "IDENTITY"),
        ("tab1.name", "tab3.name", "TRANSFORMATION"),
        ("tabb2.name", "tab3.name", "TRANSFORMATION"),
        ("tabb2.age", "tab3.age", "IDENTITY"),
    }


def test_seed_predicates_are_indirect_edges_on_the_whole_target() -> None:
    st = one(SEED_SQL)
    # A's WHERE id > 100 and B's WHERE age > 28 filter rows; C.id = B.id compares two sources (a join).
    assert triples(st, {"FILTER"}) == {("tab1.id", "tab3.*", "FILTER"), ("tabb2.age", "tab3.*", "FILTER")}
    assert triples(st, {"JOIN"}) == {("tab1.id", "tab3.*", "JOIN"), ("tabb2.id", "tab3.*", "JOIN")}
    # C groups by A.id, A.name, which are tab1's columns.
    assert triples(st, {"GROUP_BY"}) == {
        ("tab1.id", "tab3.*", "GROUP_BY"),
        ("tab1.name", "tab3.*", "GROUP_BY"),
    }
    predicate_sources = {s for s, _, k in triples(st) if k in ("FILTER", "JOIN")}
    assert predicate_sources == {"tab1.id", "tabb2.id", "tabb2.age"}


def test_seed_file_reads_as_one_statement_process_with_query_text() -> None:
    graph = READER.read([str(SEED)], dialect="spark")
    assert graph.job == "spark-sql-field-lineage"
    [proc] = graph.processes
    assert proc.id.rsplit(":", 1)[0] == "spark-sql-field-lineage:tab3"
    assert proc.kind == "statement"
    assert proc.inputs == ["tab1", "tabb2"]
    assert proc.outputs == ["tab3"]
    assert proc.attributes["queryText"].startswith("with A as")
    tab3 = graph.dataset("tab3")
    assert tab3 is not None and tab3.column_names() == ["id", "name", "age"]
    assert all(e.process == proc.id for e in graph.edges)
    assert graph.problems == []


def test_default_schema_qualifies_table_names() -> None:
    st = one(SEED_SQL, default_schema="default")
    assert ("default.tab1.id", "default.tab3.id", "IDENTITY") in triples(st)
    assert [w.id for w in st.writes] == ["default.tab3"]
    assert st.writes[0].namespace == "default" and st.writes[0].name == "tab3"
