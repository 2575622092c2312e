"""Bad dbt artifacts through `atlas-sync sync`: a one-line error naming the file, exit 1, nothing
written to the (embedded) Atlas: no entity and no typedef."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from atlas_sync.cli.common import run_guarded
from atlas_sync.cli.main import cli

from .test_dbt_reader import ARTIFACTS


def _truncate(path: Path) -> None:
    path.write_text(path.read_text()[: path.stat().st_size // 3])


def _version(path: Path) -> None:
    doc = json.loads(path.read_text())
    doc["metadata"]["dbt_schema_version"] = "https://schemas.getdbt.com/dbt/manifest/v20.json"
    path.write_text(json.dumps(doc))


def _foreign(path: Path) -> None:
    doc = json.loads(path.read_text())
    for key in ("nodes", "sources"):
        doc[key] = {k.replace(".jaffle.", ".other."): v for k, v in doc[key].items()}
    path.write_text(json.dumps(doc))


CASES = {
    "truncated manifest": ("manifest.json", _truncate, "invalid JSON"),
    "unknown manifest version": ("manifest.json", _version, "schema v20"),
    "truncated catalog": ("catalog.json", _truncate, "invalid JSON"),
    "catalog of another project": ("catalog.json", _foreign, "another project"),
    "truncated run results": ("run_results.json", _truncate, "invalid JSON"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_artifacts_are_a_clean_error_naming_the_file_with_no_write(case, tmp_path, monkeypatch, capsys):
    name, spoil, words = CASES[case]
    target = tmp_path / "target"
    target.mkdir()
    for f in ("manifest.json", "catalog.json", "run_results.json"):
        shutil.copy(ARTIFACTS / "1.10" / f, target / f)
    spoil(target / name)
    data = tmp_path / "atlas-data"
    monkeypatch.setenv("ATLAS_SYNC_DATA_DIR", str(data))
    for var in ("ATLAS_URL", "ATLAS_SYNC_CONFIG", "ATLAS_SYNC_PROFILE", "ATLAS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    extra = ["--run-results", str(target / name)] if name == "run_results.json" else []
    code = run_guarded(cli, ["sync", "--domain", "bad", "--from", "dbt", *extra, str(target)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 1 and "Traceback" not in text
    error = next(line for line in text.splitlines() if line.startswith("error"))
    assert str(target / name) in error and words in error, error
    if (data / "atlas.db").exists():
        with sqlite3.connect(data / "atlas.db") as conn:
            assert conn.execute("SELECT count(*) FROM entities").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM typedefs WHERE builtin = 0").fetchone()[0] == 0
