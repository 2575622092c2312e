"""Names stay stable when an input grows: a re-sync after an unrelated edit plans only creates."""

from __future__ import annotations

import copy
from pathlib import Path

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import LineageGraph

SCRIPT = """
CREATE TEMPORARY VIEW cleaned AS SELECT id, amount, region FROM raw.orders WHERE amount > 0;
INSERT INTO mart.revenue SELECT region, SUM(amount) AS total FROM cleaned GROUP BY region;
INSERT INTO mart.counts SELECT region, COUNT(*) AS n FROM raw.orders GROUP BY region;
"""
NEW_FIRST = "INSERT INTO mart.audit SELECT id, amount FROM raw.refunds WHERE amount < 0;\n"


def _changes(pub: Publisher, graph: LineageGraph) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in pub.plan(graph).items:
        if item.action != "unchanged":
            out.setdefault(item.action, []).append(item.qualified_name)
    return out


def test_inserting_a_statement_at_the_top_of_a_synced_script_plans_only_its_creates(tmp_path: Path) -> None:
    pub = Publisher(embedded_client(emulator=Emulator(None)), profile="lineage", domain="etl")
    script = tmp_path / "nightly.sql"
    script.write_text(SCRIPT, encoding="utf-8")
    pub.sync(pub.read("sql", [str(script)], dialect="spark"))

    script.write_text(NEW_FIRST + SCRIPT, encoding="utf-8")
    changes = _changes(pub, pub.read("sql", [str(script)], dialect="spark"))
    assert set(changes) == {"create"}
    created = changes["create"]
    # the new statement's process, its column lineage, and the two tables it alone touches with their columns
    assert any(qn.startswith("nightly:mart.audit:") for qn in created)
    assert {qn for qn in created if qn.startswith("raw.refunds") or qn.startswith("mart.audit")} == {
        "raw.refunds@etl",
        "raw.refunds.id@etl",
        "raw.refunds.amount@etl",
        "mart.audit@etl",
        "mart.audit.id@etl",
        "mart.audit.amount@etl",
    }
    assert not [qn for qn in created if qn.startswith(("nightly:mart.revenue", "nightly:mart.counts"))]


DOC = {
    "job": "loader",
    "datasets": [
        {"id": "raw.a", "namespace": "raw", "name": "a", "columns": ["x"]},
        {"id": "mart.b", "namespace": "mart", "name": "b", "columns": ["x"]},
        {"id": "mart.c", "namespace": "mart", "name": "c", "columns": ["x"]},
    ],
    "processes": [{"id": "load_b", "name": "load b", "inputs": ["raw.a"], "outputs": ["mart.b"]}],
    "edges": [{"source": "raw.a.x", "target": "mart.b.x", "kind": "IDENTITY", "process": "load_b"}],
}


def test_a_job_growing_from_one_process_to_two_plans_only_the_new_one() -> None:
    pub = Publisher(embedded_client(emulator=Emulator(None)), profile="lineage", domain="d")
    pub.sync(LineageGraph.from_document(DOC))

    grown = copy.deepcopy(DOC)
    grown["processes"].append({"id": "load_c", "name": "load c", "inputs": ["raw.a"], "outputs": ["mart.c"]})
    grown["edges"].append(
        {"source": "raw.a.x", "target": "mart.c.x", "kind": "IDENTITY", "process": "load_c"}
    )
    changes = _changes(pub, LineageGraph.from_document(grown))
    # mart.c and its column were published already (the document lists them); the first process keeps
    # its name (it was not renamed from <job>@d when it was the job's only one)
    assert {k: sorted(v) for k, v in changes.items()} == {
        "create": ["loader:load_c:mart.c.x@d", "loader:load_c@d"]
    }


def test_a_domain_synced_with_file_named_statement_names_is_renamed_once_and_the_plan_says_so(
    tmp_path: Path,
) -> None:
    pub = Publisher(embedded_client(emulator=Emulator(None)), profile="lineage", domain="etl")
    a, b = tmp_path / "a.sql", tmp_path / "b.sql"
    a.write_text("INSERT INTO m.t SELECT x FROM m.s;\n", encoding="utf-8")
    b.write_text("INSERT INTO m.u SELECT x FROM m.t;\n", encoding="utf-8")
    graph = pub.read("sql", [str(a), str(b)])
    # what the build before named them, synced with --job x: x:a:<file>:<target>:<digest>
    doc = LineageGraph.from_document(graph.to_document()).to_document()
    doc.pop("job_from_name")  # (names as the build before gave them, for job x)
    renames = {p["id"]: p["id"].replace("a:", "a:a:", 1) for p in doc["processes"]}
    renames[doc["processes"][1]["id"]] = doc["processes"][1]["id"].replace("a:", "a:b:", 1)
    for p in doc["processes"]:
        p["id"] = p["name"] = renames[p["id"]]
    for e in doc["edges"]:
        e["process"] = renames[e["process"]]
    pub.sync(LineageGraph.from_document(doc), "x")

    plan = pub.plan(graph, "x")
    deleted = sorted(
        i.qualified_name for i in plan.items if i.action == "delete" and i.type_name == "lineage_process"
    )
    assert [q.split(":")[:4] for q in deleted] == [["x", "a", "a", "m.t"], ["x", "a", "b", "m.u"]]
    [warning] = plan.warnings
    assert warning.startswith("2 process(es) named with their input file's name (e.g. x:a:a:m.t:")
    pub.sync(graph, "x")
    again = pub.plan(graph, "x")
    assert not again.has_changes and again.warnings == []


def test_a_statement_replaced_by_one_whose_digest_is_all_digits_is_not_called_a_positional_rename(
    tmp_path: Path,
) -> None:
    # v2's process is j:m.t:90969694 (its sha1 digest happens to hold no letter): going back to v1
    # deletes it, which is an ordinary change of statement, not a rename from a position
    pub = Publisher(embedded_client(emulator=Emulator(None)), profile="lineage", domain="d")
    v1, v2 = tmp_path / "v1.sql", tmp_path / "v2.sql"
    v1.write_text("INSERT INTO m.t SELECT id FROM s.a;\n", encoding="utf-8")
    v2.write_text("INSERT INTO m.t SELECT id, name FROM s.b;\n", encoding="utf-8")
    pub.sync(pub.read("sql", [str(v2)]), job="j", force=True)
    plan = pub.plan(pub.read("sql", [str(v1)]), job="j", force=True)
    deleted = {
        i.qualified_name for i in plan.items if i.action == "delete" and i.type_name == "lineage_process"
    }
    assert deleted == {"j:m.t:90969694@d"}
    assert plan.warnings == []
