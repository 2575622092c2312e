"""The spark-plan reader's job mode computes lineage while the text is parsed and drops finished
subtrees (atlas_sync/lineage/spark/stream.py). These tests check that what ancestors still need
survives the dropping, and that the streamed graph is the whole-tree build's graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.readers.spark_plan import TEXT_READER
from atlas_sync.lineage.spark.build import QUERY_TEXT_LIMIT, Datasets, build_graph
from atlas_sync.lineage.spark.stream import StreamSink, build_graph_streaming
from atlas_sync.lineage.spark.text import parse_text, parse_tree_lines, tree_source

DATA = Path(__file__).resolve().parents[1] / "data" / "spark"
TEXT_PLANS = sorted(p for p in DATA.rglob("*.txt") if p.is_file())


def _read(tmp_path: Path, text: str) -> LineageGraph:
    path = tmp_path / "j.plan.txt"
    path.write_text(text, encoding="utf-8")
    return TEXT_READER.read([str(path)])


def _column_edges(g: LineageGraph) -> set[tuple[str, str | None, str, str, str | None]]:
    return {
        (
            e.source.dataset + "." + str(e.source.column),
            e.target.column,
            e.kind,
            e.target.dataset,
            e.expression,
        )
        for e in g.edges
        if e.target.column is not None
    }


def _row_edges(g: LineageGraph) -> set[tuple[str, str]]:
    return {
        (e.source.dataset + "." + str(e.source.column), e.kind) for e in g.edges if e.target.column is None
    }


# A Project reading ids produced four levels down, and a Filter above an alias above a Join: by the
# time they are computed, the Join's sides and the relations below have been dropped.
FAR_ABOVE = """\
Project [a#1, (b#2 + c#5) AS s#10]
+- Filter ((a#1 = c#5) AND (a#1 > 0))
   +- SubqueryAlias j
      +- Join Inner, (k#3 = k#6)
         :- SubqueryAlias x
         :  +- Filter (b#2 > 1)
         :     +- Relation db.l[a#1,b#2,k#3] parquet
         +- Relation db.r[c#5,k#6] parquet
"""


def test_ids_used_far_above_their_producer_keep_their_sources(tmp_path: Path) -> None:
    g = _read(tmp_path, FAR_ABOVE)
    target = "result:j/result"
    assert _column_edges(g) == {
        ("db.l.a", "a", "IDENTITY", target, None),
        ("db.l.b", "s", "TRANSFORMATION", target, "(b#2 + c#5)"),
        ("db.r.c", "s", "TRANSFORMATION", target, "(b#2 + c#5)"),
    }


def test_a_filter_above_an_alias_of_a_join_still_tells_join_predicates(tmp_path: Path) -> None:
    g = _read(tmp_path, FAR_ABOVE)
    # a#1 = c#5 reads both join sides (JOIN); a#1 > 0 one side (FILTER); the join keys (JOIN); the
    # filter below the join (FILTER)
    assert _row_edges(g) == {
        ("db.l.a", "JOIN"),
        ("db.r.c", "JOIN"),
        ("db.l.a", "FILTER"),
        ("db.l.k", "JOIN"),
        ("db.r.k", "JOIN"),
        ("db.l.b", "FILTER"),
    }


# The subquery plan is printed before the Filter's regular child, but reads the outer query's
# customer id (outer(id#1)), which that child defines.
OUTER_REFERENCE = """\
Project [id#1, name#2]
+- Filter exists#20 [id#1]
   :  +- Project [oid#10]
   :     +- Filter (outer(id#1) = cid#11)
   :        +- Relation db.orders[oid#10,cid#11] parquet
   +- Relation db.customers[id#1,name#2] parquet
"""


def test_a_subquery_printed_before_the_outer_query_still_reads_its_outer_reference(tmp_path: Path) -> None:
    g = _read(tmp_path, OUTER_REFERENCE)
    assert _row_edges(g) == {
        ("db.orders.oid", "FILTER"),
        ("db.customers.id", "FILTER"),
        ("db.orders.cid", "FILTER"),
    }
    assert _column_edges(g) == {
        ("db.customers.id", "id", "IDENTITY", "result:j/result", None),
        ("db.customers.name", "name", "IDENTITY", "result:j/result", None),
    }
    # inputs in the whole-tree order: the outer query's relation before the subquery's
    assert g.processes[0].inputs == ["db.customers", "db.orders"]


def test_finished_subtrees_are_dropped_while_parsing() -> None:
    src = tree_source(FAR_ABOVE)
    graph = LineageGraph(job="j")
    sink = StreamSink(graph, Datasets(graph, "j", {}, []), src, None)
    [root] = parse_tree_lines(src.lines, sink=sink, total=src.total)
    # the root keeps its child (the job's target reads it), the child keeps nothing below it
    [child] = root.children
    assert child.children == [] and child.inner == [] and child.exprs == {}


def test_operator_mode_keeps_each_operators_attributes_and_columns(tmp_path: Path) -> None:
    path = tmp_path / "j.plan.txt"
    path.write_text(FAR_ABOVE, encoding="utf-8")
    g = TEXT_READER.read([str(path)], mode="operator")
    procs = {str(p.level): p for p in g.processes}
    # levels: Project 1_0, Filter 2_0, alias j 3_0, Join 4_0, alias x 5_0, Relation r 5_1,
    # Filter 6_0, Relation l 7_0 (each seed name used once)
    assert sorted(procs) == ["1_0", "2_0", "3_0", "4_0", "5_0", "5_1", "6_0", "7_0"]
    assert procs["1_0"].attributes["columns"] == ["a#1", "(b#2 + c#5) AS s#10"]
    assert procs["2_0"].attributes["condition"] == "((a#1 = c#5) AND (a#1 > 0))"
    assert procs["4_0"].attributes["condition"] == "(k#3 = k#6)"
    assert procs["7_0"].attributes["table"] == "db.l"
    assert procs["7_0"].attributes["columns"] == ["a", "b", "k"]
    between = g.dataset("1_0-2_0")
    assert between is not None
    # the Filter passes the Join's columns on: a, b, k (left), c, k (right), names once each
    assert between.column_names() == ["a", "b", "k", "c"]


@pytest.mark.parametrize("mode", ["job", "operator"])
@pytest.mark.parametrize("path", TEXT_PLANS, ids=lambda p: str(p.relative_to(DATA)))
def test_streamed_graph_is_the_whole_tree_graph(path: Path, mode: str) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        doc = parse_text(text, file=str(path))
    except InputError as exc:
        with pytest.raises(InputError) as failed:
            build_graph_streaming(tree_source(text, file=str(path)), job="j", file=str(path), mode=mode)
        assert (str(failed.value), failed.value.line) == (str(exc), exc.line)
        return
    whole = build_graph(doc.plans, mode=mode, job="j", file=str(path), scans=doc.scans)
    streamed = build_graph_streaming(tree_source(text, file=str(path)), job="j", file=str(path), mode=mode)
    assert streamed.to_document() == whole.to_document()


@pytest.mark.parametrize("mode", ["job", "operator"])
def test_several_plans_in_one_file_give_the_whole_tree_graph(mode: str) -> None:
    text = FAR_ABOVE + "\n" + OUTER_REFERENCE + "\n" + FAR_ABOVE
    doc = parse_text(text)
    whole = build_graph(doc.plans, mode=mode, job="j", scans=doc.scans)
    streamed = build_graph_streaming(tree_source(text), job="j", mode=mode)
    assert streamed.to_document() == whole.to_document()
    assert len(streamed.processes) == (3 if mode == "job" else 8 + 6 + 8)


def test_query_text_past_the_limit_is_the_plan_text_cut_with_a_note(tmp_path: Path) -> None:
    branch = ":- Project [{cols}]\n:  +- Relation db.t{k}[{ids}] parquet\n"
    cols = ", ".join(f"(c{i}#{i + 1} + 1) AS o{i}#{100 + i}" for i in range(20))
    ids = ",".join(f"c{i}#{i + 1}" for i in range(20))
    lines = ["Union false, false"]
    k = 0
    while sum(len(x) + 1 for x in lines) < QUERY_TEXT_LIMIT + 5000:
        lines.extend(branch.format(cols=cols, ids=ids, k=k).splitlines())
        k += 1
    lines.append(f"+- Relation db.last[{ids}] parquet")
    text = "\n".join(lines)
    g = _read(tmp_path, text + "\n")
    expected = text[:QUERY_TEXT_LIMIT] + f"\n... ({len(text) - QUERY_TEXT_LIMIT} more characters)"
    assert g.processes[0].attributes["queryText"] == expected


def test_a_truncated_plan_is_reported_at_the_line_announcing_a_sibling(tmp_path: Path) -> None:
    text = "Union false, false\n:- LocalRelation [a#1]\n:- LocalRelation [a#2]\n"
    with pytest.raises(InputError, match="truncated plan") as exc:
        _read(tmp_path, text)
    assert exc.value.line == 3


# A not-null check of an id that a predicate further down the text also reads adds no dependency
# (the optimizer's inferred checks): the second branch is not read yet when the first is done.
LATER_PREDICATE = """\
Union false, false
:- Filter isnotnull(a#1)
:  +- Relation db.s[a#1] parquet
+- Filter (a#1 > 0)
   +- Relation db.u[a#1] parquet
"""


def test_a_not_null_check_of_an_id_filtered_later_in_the_text_adds_nothing(tmp_path: Path) -> None:
    g = _read(tmp_path, LATER_PREDICATE)
    # only the second branch's filter; the Union's column takes the last definition of a#1
    assert _row_edges(g) == {("db.u.a", "FILTER")}
    assert _column_edges(g) == {("db.u.a", "a", "IDENTITY", "result:j/result", None)}
