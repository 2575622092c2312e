"""`plan` shows the plan when the delete fail-safe trips (issue 39 item 10), as a user runs it.

A job synced with three statements, then planned with one: 8 of the domain's 14 entities would go
(2 processes, their 2 column lineages, 2 datasets and their 2 columns), 57% > 50%. The plan is
printed (text and --json), then the refusal with the rule and what would pass it; exit 1; a plan
file is not written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

THREE = (
    "INSERT INTO m.t1 SELECT a FROM m.s;\n"
    "INSERT INTO m.t2 SELECT a FROM m.s;\n"
    "INSERT INTO m.t3 SELECT a FROM m.s;\n"
)
ONE = "INSERT INTO m.t1 SELECT a FROM m.s;\n"
PLAN = ["plan", "-d", "d", "-j", "j", "--dialect", "ansi", "etl.sql"]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}  # the embedded emulator
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "etl.sql").write_text(THREE, encoding="utf-8")
    proc = _run(["sync", "-q", "-d", "d", "-j", "j", "--dialect", "ansi", "etl.sql"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "etl.sql").write_text(ONE, encoding="utf-8")
    return tmp_path


RULE = "the plan would delete 8 of the 14 entities of domain 'd' (job 'j'; 57% > --max-delete-percent 50)"
PASS = "re-run with --force or --max-delete-percent 58 (or --no-delete to skip the deletes)"


def test_plan_prints_the_plan_then_the_tripped_rule_and_what_passes_it(folder: Path) -> None:
    proc = _run([*PLAN, "--out", "etl.plan.json"], folder)
    assert proc.returncode == 1
    out = proc.stdout.splitlines()
    assert "Plan: 0 to create, 0 to update, 8 to delete, 6 unchanged." in out
    for deleted in ("lineage_dataset m.t2@d", "lineage_dataset m.t3@d", "lineage_column m.t3.a@d"):
        assert f"  - {deleted}" in out
    assert f"error: {RULE}" in proc.stderr
    assert PASS in proc.stderr
    assert "etl.plan.json was not written" in proc.stderr
    assert not (folder / "etl.plan.json").exists()
    # the rule's way out passes it
    proc = _run([*PLAN, "--max-delete-percent", "58"], folder)
    assert proc.returncode == 0, proc.stderr
    assert "8 to delete" in proc.stdout


def test_plan_json_holds_the_plan_and_the_refusal(folder: Path) -> None:
    proc = _run([*PLAN, "--json"], folder)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["summary"] == {"create": 0, "update": 0, "delete": 8, "unchanged": 6}
    assert doc["refused"]["error"] == RULE
    assert PASS in doc["refused"]["hint"]


def test_sync_still_refuses_and_writes_nothing(folder: Path) -> None:
    proc = _run(["sync", "-d", "d", "-j", "j", "--dialect", "ansi", "etl.sql"], folder)
    assert proc.returncode == 1
    assert f"error: {RULE}" in proc.stderr and PASS in proc.stderr
    proc = _run([*PLAN, "--json", "--force"], folder)
    assert json.loads(proc.stdout)["summary"]["delete"] == 8  # nothing was deleted
