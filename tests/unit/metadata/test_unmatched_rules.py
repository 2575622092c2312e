"""A metadata rule that matches nothing in the input is a warning naming the rule (a typo in a
pattern would otherwise pass silently)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas_sync.cli.main import cli

RULES = """\
[[rules]]
datasets = ["raw.*"]
owners = ["data-stewards"]

[[rules]]
name = "typo"
columns = ["raw.custmers.email"]
labels = ["pii"]
"""


def test_a_rule_that_matches_nothing_is_a_warning_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for var in ("ATLAS_URL", "ATLAS_SYNC_DOMAIN", "ATLAS_SYNC_METADATA_RULES"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "job.sql").write_text("INSERT INTO mart.x SELECT email FROM raw.customers;\n")
    (tmp_path / "rules.toml").write_text(RULES)
    args = ["--domain", "um", "--from", "sql", "--metadata-rules", "rules.toml", "job.sql"]
    runner = CliRunner()
    warning = "warning: metadata rules rules.toml: rule 2 (typo) (line 5) matches nothing in the input"
    for command in ("plan", "sync", "sync"):  # the last one writes nothing
        res = runner.invoke(cli, [command, *args])
        assert res.exit_code == 0, res.output
        assert warning in res.stdout.splitlines(), (command, res.stdout)
        assert "rule 1" not in res.stdout
    res = runner.invoke(cli, ["plan", "--json", *args])
    assert json.loads(res.stdout)["warnings"] == [warning.removeprefix("warning: ")]
