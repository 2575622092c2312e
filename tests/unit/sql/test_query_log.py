"""The query-log reader: CSV rows -> one process per distinct lineage-bearing statement."""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.readers import query_log
from atlas_sync.lineage.readers.query_log import READER, fingerprint

HEADER = ["query_text", "user_name", "start_time", "end_time", "database_name", "schema_name", "duration"]


def write_log(tmp_path: Path, rows: list[list[Any]], name: str = "log.csv") -> str:
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    return str(path)


def test_only_lineage_bearing_statements_become_processes(tmp_path: Path) -> None:
    path = write_log(
        tmp_path,
        [
            ["INSERT INTO mart.t SELECT a FROM raw.s", "alice", "2024-01-01 10:00", "", "prod", "raw", "1"],
            ["SELECT * FROM raw.s", "bob", "2024-01-01 11:00", "", "prod", "raw", "0.2"],
            ["CREATE TABLE x AS SELECT k FROM y", "bob", "2024-01-01 12:00", "", "prod", "stage", "3"],
            ["INSERT INTO t VALUES (1)", "bob", "2024-01-01 12:00", "", "prod", "stage", "3"],
            ["DROP TABLE old", "bob", "2024-01-01 12:00", "", "prod", "stage", "3"],
        ],
    )
    graph = READER.read([path], dialect="postgres", workers=1)
    assert sorted(p.attributes["statementType"] for p in graph.processes) == [
        "CREATE TABLE AS SELECT",
        "INSERT",
    ]
    # schema_name qualifies unqualified tables of that row.
    assert {(str(e.source), str(e.target)) for e in graph.edges} == {
        ("raw.s.a", "mart.t.a"),
        ("stage.y.k", "stage.x.k"),
    }


def test_runs_of_the_same_statement_are_one_process_with_counts(tmp_path: Path) -> None:
    path = write_log(
        tmp_path,
        [
            [
                "INSERT INTO t SELECT a FROM s WHERE dt = '2024-01-01'",
                "alice",
                "2024-01-01",
                "",
                "",
                "",
                "1.5",
            ],
            [
                "insert into t\n  select a from s where dt = '2024-01-02'",
                "bob",
                "2024-01-02",
                "",
                "",
                "",
                "2",
            ],
            ["INSERT INTO t SELECT a FROM s WHERE dt = '2024-01-03'", "alice", "2023-12-31", "", "", "", ""],
        ],
    )
    graph = READER.read([path], workers=1)
    [proc] = graph.processes
    assert proc.attributes["runs"] == 3
    assert proc.attributes["users"] == ["alice", "bob"]
    assert (
        proc.attributes["firstStartTime"] == "2023-12-31" and proc.attributes["lastStartTime"] == "2024-01-02"
    )
    assert proc.attributes["totalDuration"] == 3.5
    assert proc.attributes["queryText"].startswith("INSERT INTO t SELECT a FROM s WHERE dt = '2024-01-01'")


def test_process_ids_are_stable_across_runs_and_logs(tmp_path: Path) -> None:
    a = write_log(tmp_path, [["INSERT INTO t SELECT a FROM s", "", "", "", "", "", ""]], "a.csv")
    b = write_log(
        tmp_path,
        [["SELECT 1", "", "", "", "", "", ""], ["INSERT INTO t  SELECT a FROM s;", "", "", "", "", "", ""]],
        "b.csv",
    )
    ida = [p.id for p in READER.read([a], job="etl", workers=1).processes]
    idb = [p.id for p in READER.read([b], job="etl", workers=1).processes]
    assert ida == idb and len(ida) == 1 and ida[0].startswith("etl:")


def test_failures_are_warnings_and_go_to_the_report(tmp_path: Path) -> None:
    path = write_log(
        tmp_path,
        [
            ["INSERT INTO t SELECT a FROM s", "", "", "", "", "", ""],
            ["INSERT INTO SELECT a FROM s", "", "", "", "", "", ""],
            ["UPDATE t SET a = (SELECT FROM", "", "", "", "", "", ""],
        ],
    )
    report = tmp_path / "report.json"
    graph = READER.read([path], workers=1, report=str(report))
    assert len(graph.processes) == 1
    assert [p.severity for p in graph.problems] == ["warning", "warning"]
    assert [p.line for p in graph.problems] == [3, 4]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["failures"] == 2 and data["summary"]["processes"] == 1
    assert [f["statement"] for f in data["failures"]] == [
        "INSERT INTO SELECT a FROM s",
        "UPDATE t SET a = (SELECT FROM",
    ]
    assert all(f["error"] for f in data["failures"])


def test_a_slow_statement_times_out_and_the_rest_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = query_log.analyze_sql
    finished: list[str] = []

    def slow(text: str, **kw: Any) -> Any:
        if "slow_table" in text:
            # waits for an event nobody sets: only the reader's timeout ends it early (30 s is a
            # deadline for the test, not a measure)
            threading.Event().wait(30)
            finished.append(text)
        return real(text, **kw)

    monkeypatch.setattr(query_log, "analyze_sql", slow)
    path = write_log(
        tmp_path,
        [
            ["INSERT INTO a SELECT x FROM slow_table", "", "", "", "", "", ""],
            ["INSERT INTO b SELECT x FROM fast", "", "", "", "", "", ""],
        ],
    )
    report = tmp_path / "r.json"
    graph = READER.read([path], workers=1, timeout=0.3, report=str(report))
    assert finished == [], "the slow statement ran to its end: the timeout did not cut it off"
    assert [p.outputs for p in graph.processes] == [["b"]]
    [failure] = json.loads(report.read_text())["failures"]
    assert "timed out" in failure["error"] and "slow_table" in failure["statement"]


def test_parallel_workers_give_the_same_graph_as_one_worker(tmp_path: Path) -> None:
    rows = [
        [f"INSERT INTO t{i % 7} SELECT c{i % 5}, d FROM s{i % 11} WHERE k = {i}", "", "", "", "", "", ""]
        for i in range(60)
    ]
    path = write_log(tmp_path, rows)
    one = READER.read([path], workers=1)
    two = READER.read([path], workers=2, chunk_size=5)
    assert [p.id for p in one.processes] == [p.id for p in two.processes]
    assert {str(e) for e in one.edges} == {str(e) for e in two.edges}
    # 7 x 5 x 11 combinations repeat every 385 rows: 60 rows are 60 distinct statements modulo the literal k.
    assert len(one.processes) == len({(i % 7, i % 5, i % 11) for i in range(60)})


def test_a_log_without_query_text_column_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("sql,user\nselect 1,a\n", encoding="utf-8")
    with pytest.raises(InputError, match="query_text") as info:
        READER.read([str(path)])
    assert info.value.line == 1


def test_fingerprint_ignores_case_whitespace_and_literals_but_not_names() -> None:
    assert fingerprint("INSERT INTO t SELECT a FROM s WHERE x = 'A'") == fingerprint(
        "insert into t\nselect a from s where x = 'b';"
    )
    assert fingerprint("INSERT INTO t1 SELECT a FROM s") != fingerprint("INSERT INTO t2 SELECT a FROM s")


def test_a_log_with_a_header_and_no_rows_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("query_text,user_name\n", encoding="utf-8")
    with pytest.raises(InputError, match="no rows"):
        READER.read([str(path)])


def test_an_unclosed_quote_is_an_input_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text('query_text\n"INSERT INTO t SELECT a FROM s\n', encoding="utf-8")
    with pytest.raises(InputError, match="invalid CSV") as info:
        READER.read([str(path)])
    assert info.value.line is not None


def test_views_in_the_log_are_view_datasets_with_column_lineage(tmp_path: Path) -> None:
    path = write_log(
        tmp_path,
        [
            [
                "CREATE VIEW v_big AS SELECT id, amount * 2 AS dbl FROM orders WHERE amount > 10",
                "",
                "",
                "",
                "",
                "sales",
                "",
            ]
        ],
    )
    graph = READER.read([path], workers="1", progress="false", timeout="5")  # text options, as from `-o`
    view = graph.dataset("sales.v_big")
    assert view is not None and view.kind == "view" and view.column_names() == ["id", "dbl"]
    assert {(str(e.source), str(e.target), e.kind) for e in graph.edges} == {
        ("sales.orders.id", "sales.v_big.id", "IDENTITY"),
        ("sales.orders.amount", "sales.v_big.dbl", "TRANSFORMATION"),
        ("sales.orders.amount", "sales.v_big.*", "FILTER"),
    }
