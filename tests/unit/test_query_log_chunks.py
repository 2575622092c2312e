"""The query-log reader's chunks: together they are exactly the graph ``read()`` gives, each chunk is
self-contained, input-wide items and failures come at the end, and consumed entries are freed."""

from __future__ import annotations

import csv
import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.readers import query_log
from atlas_sync.lineage.readers.query_log import READER

HEADER = ["query_text", "user_name", "start_time", "end_time", "database_name", "schema_name", "duration"]
BAD = Path(__file__).parents[1] / "data" / "bad" / "query-log"


def _row(
    text: str, user: str = "", start: str = "", db: str = "", schema: str = "", dur: str = ""
) -> list[str]:
    return [text, user, start, "", db, schema, dur]


# The inputs of tests/unit/sql/test_query_log.py, plus cases aimed at chunk boundaries.
LOGS: dict[str, list[list[str]]] = {
    "lineage-bearing-only": [
        _row("INSERT INTO mart.t SELECT a FROM raw.s", "alice", "2024-01-01 10:00", "prod", "raw", "1"),
        _row("SELECT * FROM raw.s", "bob", "2024-01-01 11:00", "prod", "raw", "0.2"),
        _row("CREATE TABLE x AS SELECT k FROM y", "bob", "2024-01-01 12:00", "prod", "stage", "3"),
        _row("INSERT INTO t VALUES (1)", "bob", "2024-01-01 12:00", "prod", "stage", "3"),
        _row("DROP TABLE old", "bob", "2024-01-01 12:00", "prod", "stage", "3"),
    ],
    "runs": [
        _row("INSERT INTO t SELECT a FROM s WHERE dt = '2024-01-01'", "alice", "2024-01-01", dur="1.5"),
        _row("insert into t\n  select a from s where dt = '2024-01-02'", "bob", "2024-01-02", dur="2"),
        _row("INSERT INTO t SELECT a FROM s WHERE dt = '2024-01-03'", "alice", "2023-12-31"),
    ],
    "ids": [_row("SELECT 1"), _row("INSERT INTO t  SELECT a FROM s;")],
    "failures": [
        _row("INSERT INTO t SELECT a FROM s"),
        _row("INSERT INTO SELECT a FROM s"),
        _row("UPDATE t SET a = (SELECT FROM"),
    ],
    "repeats": [
        _row(f"INSERT INTO t{i % 7} SELECT c{i % 5}, d FROM s{i % 11} WHERE k = {i}") for i in range(60)
    ],
    "view": [
        _row(
            "CREATE VIEW v_big AS SELECT id, amount * 2 AS dbl FROM orders WHERE amount > 10", schema="sales"
        )
    ],
    # Chunk boundaries: a source table whose columns grow over chunks, runs of one statement spread
    # over the whole log, two statements in one entry, a failure between good ones, an intermediate.
    "boundaries": [
        _row("INSERT INTO a SELECT x FROM src"),
        _row("INSERT INTO b SELECT y, x FROM src", "u1", "2024-02-01"),
        _row("INSERT INTO a SELECT x FROM src", "u2", "2024-01-01", dur="4"),
        _row("INSERT INTO c SELECT z AS q FROM src WHERE y > 1; INSERT INTO d SELECT q FROM c"),
        _row("INSERT INTO SELECT broken FROM"),
        _row("INSERT INTO e SELECT sum(q) AS s FROM c JOIN b ON c.q = b.y GROUP BY b.x"),
        _row("INSERT INTO b SELECT w, x FROM src2"),
        _row("INSERT INTO a SELECT x FROM src", "u1", "2024-03-01"),
    ],
}


def write_log(path: Path, rows: list[list[str]]) -> str:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    return str(path)


def merged(chunks: list[LineageGraph]) -> LineageGraph:
    out = chunks[0]
    for c in chunks[1:]:
        out = out.merge(c)
    return out


def assert_contract(chunks: list[LineageGraph], whole: LineageGraph) -> None:
    """The chunk contract of registry.read_chunks, checked against ``read()`` of the same input."""
    assert merged(chunks).to_document() == whole.to_document()
    # In input order, each process in exactly one chunk.
    assert [p.id for c in chunks for p in c.processes] == [p.id for p in whole.processes]
    for c in chunks:
        assert c.check() == []  # self-contained: every referenced dataset and process is in the chunk
        pids = {p.id for p in c.processes}
        assert all(e.process in pids for e in c.edges)
        assert (c.job, c.source) == (whole.job, whole.source)
    summaries = [[s["type"] for s in c.statements] for c in chunks]
    assert summaries[-1] == ["QUERY LOG SUMMARY"] and all(s == [] for s in summaries[:-1])


@pytest.mark.parametrize("name", sorted(LOGS))
@pytest.mark.parametrize("per_chunk", [1, 2, 5000])
def test_merged_chunks_equal_read_on_every_test_log(tmp_path: Path, name: str, per_chunk: int) -> None:
    path = write_log(tmp_path / f"{name}.csv", LOGS[name])
    whole = READER.read([path], workers=1)
    chunks = list(READER.read_chunks([path], workers=1, chunk_statements=per_chunk))
    assert_contract(chunks, whole)


def test_chunks_hold_the_given_number_of_distinct_statements(tmp_path: Path) -> None:
    rows = [_row(f"INSERT INTO t{i} SELECT a FROM s{i % 3}") for i in range(10)]
    rows.append(_row("INSERT INTO t0 SELECT a FROM s0"))  # a second run, not a new statement
    path = write_log(tmp_path / "log.csv", rows)
    chunks = list(READER.read_chunks([path], workers=1, chunk_statements="4"))  # text, as from `-o`
    assert [len(c.processes) for c in chunks] == [4, 4, 2]
    # Runs are counted over the whole log before any chunk is made.
    assert chunks[0].processes[0].attributes["runs"] == 2


def test_a_generated_log_over_many_chunks_and_workers_merges_to_read(tmp_path: Path) -> None:
    rows = []
    for i in range(240):
        if i % 37 == 5:
            rows.append(_row(f"INSERT INTO SELECT broken{i} FROM"))
        elif i % 11 == 0:  # a re-run of an earlier statement (same text up to the literal)
            rows.append(
                _row(f"INSERT INTO mart.t{i % 13} SELECT a, b + 1 AS c FROM raw.s{i % 13} WHERE k = {i}")
            )
        else:
            cols = ", ".join(f"c{j}" for j in range(i % 4 + 1))
            rows.append(
                _row(
                    f"INSERT INTO mart.u{i % 50} SELECT {cols}, upper(d) AS e FROM raw.s{i % 17} "
                    f"JOIN raw.k{i % 5} ON raw.s{i % 17}.id = raw.k{i % 5}.id WHERE x > {i}",
                    f"user{i % 3}",
                    f"2024-01-{i % 28 + 1:02d}",
                    dur=str(i % 4),
                )
            )
    path = write_log(tmp_path / "gen.querylog.csv", rows)
    whole = READER.read([path], workers=1)
    chunks = list(READER.read_chunks([path], workers=2, chunk_size=9, chunk_statements=13))
    assert len(chunks) > 10
    assert_contract(chunks, whole)


def test_a_table_created_as_view_in_a_later_chunk_is_a_view_in_that_chunk(tmp_path: Path) -> None:
    # The one documented difference to merging: LineageGraph.merge keeps the first chunk's kind.
    path = write_log(
        tmp_path / "log.csv",
        [_row("INSERT INTO t SELECT a FROM v"), _row("CREATE VIEW v AS SELECT a FROM s")],
    )
    whole = READER.read([path], workers=1)
    first, second = READER.read_chunks([path], workers=1, chunk_statements=1)
    assert whole.dataset("v").kind == "view"  # type: ignore[union-attr]
    assert first.dataset("v").kind == "table"  # type: ignore[union-attr]
    assert second.dataset("v").kind == "view"  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", sorted(p.name for p in BAD.iterdir()))
def test_bad_logs_raise_the_same_input_error_from_the_iterator(bad: str) -> None:
    path = str(BAD / bad)
    with pytest.raises(InputError) as from_read:
        READER.read([path], workers=1)
    with pytest.raises(InputError) as from_chunks:
        list(READER.read_chunks([path], workers=1, chunk_statements=1))
    assert (str(from_chunks.value), from_chunks.value.line) == (str(from_read.value), from_read.value.line)


def test_nothing_analysable_is_raised_after_the_earlier_chunks(tmp_path: Path) -> None:
    path = write_log(tmp_path / "log.csv", [_row(f"INSERT INTO SELECT x{i} FROM") for i in range(3)])
    it = READER.read_chunks([path], workers=1, chunk_statements=1)
    got = [next(it), next(it)]
    assert [len(c.problems) for c in got] == [1, 1]
    with pytest.raises(InputError, match="none of the 3"):
        next(it)


def test_a_csv_error_on_a_late_row_is_raised_before_any_chunk(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    good = "".join(f'"INSERT INTO t{i} SELECT a FROM s",u\n' for i in range(20))
    path.write_text("query_text,user_name\n" + good + '"INSERT INTO x SELECT a FROM s,u\n', encoding="utf-8")
    it = READER.read_chunks([str(path)], workers=1, chunk_statements=2)
    with pytest.raises(InputError, match="invalid CSV") as info:
        next(it)
    assert info.value.line is not None and info.value.line >= 22


@pytest.mark.parametrize("value", [0, "-3", "many"])
def test_chunk_statements_must_be_a_positive_integer(tmp_path: Path, value: Any) -> None:
    path = write_log(tmp_path / "log.csv", LOGS["runs"])
    with pytest.raises(InputError, match="chunk_statements"):
        list(READER.read_chunks([path], chunk_statements=value))


def test_read_ignores_the_chunk_option(tmp_path: Path) -> None:
    path = write_log(tmp_path / "log.csv", LOGS["repeats"])
    assert (
        READER.read([path], workers=1, chunk_statements=2).to_document()
        == READER.read([path], workers=1).to_document()
    )


def test_entries_of_emitted_chunks_are_freed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alive: list[weakref.ref[Any]] = []

    class Tracked(query_log.Entry):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, **kw)
            alive.append(weakref.ref(self))

    monkeypatch.setattr(query_log, "Entry", Tracked)
    path = write_log(tmp_path / "log.csv", [_row(f"INSERT INTO t{i} SELECT a FROM s") for i in range(12)])
    it = READER.read_chunks([path], workers=1, chunk_size=2, chunk_statements=3)
    next(it)
    next(it)
    gc.collect()
    assert len(alive) == 12
    # After two chunks of 3: the 6 consumed entries are gone; the parse pipeline is at most one
    # parse chunk (2 entries) ahead, and the rest wait for their turn.
    assert all(ref() is None for ref in alive[:6])
    assert sum(ref() is not None for ref in alive) == 6
    assert len(list(it)) == 2
