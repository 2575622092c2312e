"""The checked-in artifacts are what real dbt writes: rebuild the project with the dbt at
``$ATLAS_SYNC_DBT`` (else ``dbt`` on ``PATH``; dbt-core with dbt-duckdb, see tests/data/dbt/README.md)
and check the lineage is the same. Skipped when no dbt is installed (CI installs one: .ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from atlas_sync.lineage import registry

from .test_dbt_reader import ARTIFACTS, DATA, edges, expected_columns


def _dbt() -> str | None:
    found = os.environ.get("ATLAS_SYNC_DBT") or shutil.which("dbt")
    if not found:
        return None
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if out.returncode == 0 and "duckdb" in out.stdout + out.stderr else None


DBT = _dbt()


@pytest.mark.skipif(DBT is None, reason="needs dbt-core with dbt-duckdb (ATLAS_SYNC_DBT or dbt on PATH)")
def test_rebuilt_artifacts_give_the_checked_in_lineage(tmp_path):
    out = tmp_path / "artifacts"
    subprocess.run(
        [sys.executable, str(DATA / "make_artifacts.py"), "--dbt", str(DBT), "--out", str(out)],
        check=True,
        timeout=300,
    )
    fresh = registry.read("dbt", [str(out)])
    kept = registry.read("dbt", [str(ARTIFACTS / "1.10")])
    assert edges(fresh) == expected_columns()
    assert {p.id: sorted(p.inputs) for p in fresh.processes} == {
        p.id: sorted(p.inputs) for p in kept.processes
    }
    assert {d.id: d.column_names() for d in fresh.datasets} == {d.id: d.column_names() for d in kept.datasets}
    assert not fresh.problems
