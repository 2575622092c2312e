"""A domain ends every qualified name: one with '@', a control character or blanks at an end is
refused before anything is read back or written; a blank inside is a valid domain (Atlas 2.1.0's
searches match such names exactly, measured on the launcher's Atlas)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas_sync.cli.common import run_guarded
from atlas_sync.cli.main import cli


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for var in ("ATLAS_URL", "ATLAS_SYNC_DOMAIN"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "job.sql").write_text("INSERT INTO mart.x SELECT a FROM raw.y;\n")
    return tmp_path


@pytest.mark.parametrize("domain", [" prod", "prod ", "pr\tod", "pr\nod", "a@b"])
@pytest.mark.parametrize("command", ["sync", "plan", "teardown"])
def test_a_domain_no_qualified_name_should_end_with_is_refused(
    workdir: Path, capsys: pytest.CaptureFixture[str], command: str, domain: str
) -> None:
    args = ["--domain", domain] + (["--yes"] if command == "teardown" else ["--from", "sql", "job.sql"])
    assert run_guarded(cli, [command, *args]) == 1
    err = capsys.readouterr().err
    assert f"error: invalid domain {domain!r}" in err
    assert "hint: a domain ends every qualified name" in err and "Traceback" not in err


def test_a_blank_inside_a_domain_is_fine(workdir: Path) -> None:
    runner = CliRunner()
    args = ["--domain", "has space", "--from", "sql", "job.sql"]
    assert runner.invoke(cli, ["sync", *args]).exit_code == 0
    again = runner.invoke(cli, ["plan", *args])
    assert (
        again.exit_code == 0 and "Plan: 0 to create, 0 to update, 0 to delete, 6 unchanged." in again.stdout
    )
