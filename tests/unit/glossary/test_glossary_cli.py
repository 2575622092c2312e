"""The ``atlas-sync glossary`` commands as a user runs them (in-process, the embedded emulator in a temp dir)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atlas_sync.cli.common import run_guarded
from atlas_sync.cli.main import cli

DATA = Path(__file__).resolve().parents[2] / "data" / "glossary"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("ATLAS_SYNC_DATA_DIR", str(tmp_path / "atlas-data"))
    for var in ("ATLAS_URL", "ATLAS_SYNC_CONFIG", "ATLAS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)

    def go(*argv: str) -> tuple[int, str]:
        code = run_guarded(cli, list(argv))
        out = capsys.readouterr()
        return code, out.out + out.err

    return go


def test_apply_prints_counts_and_a_second_apply_changes_nothing(run) -> None:
    code, out = run("glossary", "apply", str(DATA / "small.toml"))
    assert code == 0, out
    assert "+ term Ops/Job" in out
    assert out.strip().splitlines()[-1] == "6 created, 0 updated, 0 unchanged"
    code, out = run("glossary", "apply", str(DATA / "small.toml"))
    assert (code, out.strip().splitlines()[-1]) == (0, "0 created, 0 updated, 6 unchanged")


def test_plan_json_and_detailed_exit_code(run, tmp_path: Path) -> None:
    code, out = run("glossary", "plan", "--json", "--detailed-exitcode", str(DATA / "small.yaml"))
    assert code == 2
    plan = json.loads(out)
    assert (plan["create"], plan["update"], plan["owner"]) == (6, 0, "small")
    run("glossary", "apply", str(DATA / "small.yaml"))
    code, out = run("glossary", "plan", "--detailed-exitcode", str(DATA / "small.yaml"))
    assert code == 0
    assert "Plan: 0 to create, 0 to update, 6 unchanged." in out


def test_teardown_needs_confirmation_and_then_removes_the_files_glossary(run) -> None:
    run("glossary", "apply", str(DATA / "small.toml"))
    code, out = run("glossary", "teardown", str(DATA / "small.toml"))
    assert code != 0 and "--yes" in out
    code, out = run("glossary", "teardown", "--yes", str(DATA / "small.toml"))
    assert (code, out.strip()) == (0, "Deleted 1 glossary (0 were absent).")
    code, out = run("glossary", "plan", str(DATA / "small.toml"))
    assert "Plan: 6 to create" in out
