"""Progress of long operations: a rich bar on a terminal, plain lines in pipes, nothing when quiet."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas_sync.cli.main import cli
from atlas_sync.cli.progress import progress
from atlas_sync.progress import eta

SEED = Path(__file__).resolve().parents[1] / "data" / "spark" / "spark-plan-to-atlas.logical.txt"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_pipe_gets_plain_lines_with_counts_and_rate(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("applying") as update:
        update(3, 10)
        update(10, 10)
    err = capsys.readouterr()
    assert err.out == ""
    lines = err.err.splitlines()
    assert lines[0].startswith("applying: 3/10 (") and "/s, ETA " in lines[0] and lines[0].endswith("s)")
    assert lines[-1].startswith("applying: 10/10 (") and lines[-1].endswith("/s)")  # done: no ETA


def test_eta_is_what_is_left_at_the_rate_so_far() -> None:
    assert eta(25, 100, 5.0) == ", ETA 15s"  # 75 left at 5/s
    assert eta(10, 1000, 1.0) == ", ETA 16m30s"  # 990 s
    assert eta(0, 100, 0.0) == "" and eta(100, 100, 9.0) == ""


def test_terminal_gets_a_bar_on_stderr_only(monkeypatch: pytest.MonkeyPatch) -> None:
    term, out = FakeTerminal(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(sys, "stdout", out)
    with progress("deleting") as update:
        update(7, 20)
    # The bar is transient but its frames went to the terminal; stdout stays clean for results.
    assert "deleting" in term.getvalue() and "7/20" in term.getvalue()
    assert out.getvalue() == ""


def test_quiet_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("applying", quiet=True) as update:
        update(10, 10)
    assert capsys.readouterr() == ("", "")


def test_sync_and_teardown_report_progress_unless_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for var in ("ATLAS_URL", "ATLAS_SYNC_DOMAIN"):
        monkeypatch.delenv(var, raising=False)
    runner = CliRunner()
    base = ["--domain", "p", "--from", "spark-plan", str(SEED)]
    res = runner.invoke(cli, ["sync", *base])
    assert res.exit_code == 0, res.output
    # The seed in job mode is 14 entities (3 datasets, 7 columns, 1 process, 3 column lineages).
    assert "applying: 14/14" in res.stderr
    res = runner.invoke(cli, ["sync", *base])  # writes nothing: no progress drawn
    assert res.exit_code == 0, res.output
    assert "Nothing to do" in res.stdout and "applying" not in res.stderr
    res = runner.invoke(cli, ["teardown", "--domain", "p", "--yes"])
    assert res.exit_code == 0, res.output
    assert "teardown: 14/14" in res.stderr
    res = runner.invoke(cli, ["sync", "--quiet", *base])
    assert res.exit_code == 0, res.output
    assert "applying" not in res.stderr and res.stdout == ""
