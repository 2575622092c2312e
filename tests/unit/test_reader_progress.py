"""Progress reporting of the query-log reader when stderr is not a terminal (plain lines), and none
when progress is turned off. A fake clock makes every update due, so no test depends on timing."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from atlas_sync.lineage.readers.query_log import READER
from atlas_sync.lineage.readers.spark_plan import TEXT_READER


def _log(path: Path, n: int) -> Path:
    rows = ["query_text,user_name"]
    rows += [f'"INSERT INTO mart.t{i} SELECT a FROM raw.s{i}",etl' for i in range(n)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def fast_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each call is 10 s after the previous one: every update is past the 2 s interval.
    ticks = itertools.count(step=10.0)
    monkeypatch.setattr("atlas_sync.progress.time.monotonic", lambda: next(ticks))


def test_query_log_prints_plain_progress_lines_per_chunk(
    tmp_path: Path, fast_clock: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _log(tmp_path / "q.querylog.csv", 5)
    graph = READER.read([str(path)], workers=1, chunk_size=2, progress=True)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("query-log statements:")]
    # 5 distinct statements in chunks of 2: after 2, 4 and 5 statements.
    assert [ln.split()[2] for ln in lines] == ["2/5", "4/5", "5/5"]
    assert len(graph.processes) == 5


def test_query_log_progress_ends_with_the_total_without_a_fake_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _log(tmp_path / "q.querylog.csv", 3)
    READER.read([str(path)], workers=1, progress=True)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("query-log statements:")]
    assert lines and lines[-1].split()[2] == "3/3"


@pytest.mark.parametrize("off", [False, "false"])  # "false": as text from `-o progress=false`
def test_query_log_prints_nothing_when_progress_is_off(
    tmp_path: Path, fast_clock: None, capsys: pytest.CaptureFixture[str], off: bool
) -> None:
    path = _log(tmp_path / "q.querylog.csv", 5)
    READER.read([str(path)], workers=1, chunk_size=2, progress=off)
    assert capsys.readouterr().err == ""


def test_query_log_with_workers_keeps_log_order_and_reports_the_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _log(tmp_path / "q.querylog.csv", 7)
    graph = READER.read([str(path)], workers=2, chunk_size=2, progress=True)
    # Processes follow the log's rows although chunks may finish out of order.
    firsts = [p.attributes["firstRow"] for p in graph.processes]
    assert firsts == list(range(2, 9))
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("query-log statements:")]
    assert lines[-1].split()[2] == "7/7"


def test_query_log_small_log_prints_no_progress_by_default(
    tmp_path: Path, fast_clock: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _log(tmp_path / "q.querylog.csv", 5)
    READER.read([str(path)], workers=1, chunk_size=2)
    assert capsys.readouterr().err == ""


def _plan(path: Path, branches: int) -> Path:
    # A Union of projections over relations: 1 + 2 * branches lines.
    lines = ["Union false, false"]
    for k in range(branches):
        marker, pad = (":- ", ":  ") if k < branches - 1 else ("+- ", "   ")
        lines.append(f"{marker}Project [a#{3 * k + 1} AS b#{3 * k + 2}]")
        lines.append(f"{pad}+- Relation db.t{k}[a#{3 * k + 1}] parquet")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_spark_plan_reports_parsed_lines_when_asked(
    tmp_path: Path, fast_clock: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _plan(tmp_path / "u.plan.txt", 300)  # 601 lines: an update after 256 and 512 lines and at the end
    graph = TEXT_READER.read([str(path)], progress=True)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("spark-plan lines:")]
    assert [ln.split()[2] for ln in lines] == ["256/601", "512/601", "601/601"]
    assert len(graph.edges) == 300  # each branch feeds the single output column: one edge per branch


@pytest.mark.parametrize("value", [None, False, "off"])
def test_spark_plan_small_or_quiet_prints_nothing(
    tmp_path: Path, fast_clock: None, capsys: pytest.CaptureFixture[str], value: bool | None
) -> None:
    path = _plan(tmp_path / "u.plan.txt", 300)
    TEXT_READER.read([str(path)], progress=value)
    assert capsys.readouterr().err == ""


def test_a_reporter_given_by_the_caller_receives_the_updates_and_nothing_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[str, int, int]] = []

    @contextmanager
    def recorder(label: str) -> Iterator[Callable[[int, int], None]]:
        yield lambda done, total: seen.append((label, done, total))

    path = _log(tmp_path / "q.querylog.csv", 5)
    READER.read([str(path)], workers=1, chunk_size=2, progress=True, reporter=recorder)
    assert seen == [
        ("query-log statements", 2, 5),
        ("query-log statements", 4, 5),
        ("query-log statements", 5, 5),
    ]
    assert capsys.readouterr().err == ""


def test_the_lineage_layer_does_not_import_the_cli() -> None:
    # Progress is a protocol the caller implements; the readers never reach up into atlas_sync.cli.
    code = (
        "import sys; import atlas_sync.lineage.readers.query_log, atlas_sync.lineage.readers.spark_plan; "
        "print(sorted(m for m in sys.modules if m.startswith('atlas_sync.cli')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
