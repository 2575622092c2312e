"""The checked-in artifacts are what real dbt writes: rebuild the project with the dbt at
``$ATLAS_SYNC_DBT`` (else ``dbt`` on ``PATH``; dbt-core with dbt-duckdb, see tests/data/dbt/README.md)
and check the lineage is the same; with dbt-ol (openlineage-dbt) beside it, build with dbt-ol and
check its events name the tables as the dbt reader does. Skipped when no dbt is installed (CI
installs the [dbt] extra: .ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from atlas_sync.lineage import registry

from .test_dbt_reader import ARTIFACTS, DATA, edges, expected_columns
from .test_openlineage_parity import OPENLINEAGE_ONLY, ids, openlineage


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
DBT_OL = Path(DBT).with_name("dbt-ol") if DBT is not None else None


@pytest.mark.skipif(DBT is None, reason="needs dbt-core with dbt-duckdb (ATLAS_SYNC_DBT or dbt on PATH)")
def test_rebuilt_artifacts_give_the_checked_in_lineage(tmp_path):
    out = tmp_path / "artifacts"
    with_ol = DBT_OL is not None and DBT_OL.exists()
    subprocess.run(
        [sys.executable, str(DATA / "make_artifacts.py"), "--dbt", str(DBT), "--out", str(out)]
        + (["--openlineage"] if with_ol else []),
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
    if with_ol:  # the same run's OpenLineage events: the same table names
        assert ids(openlineage(out / "openlineage.jsonl")) - ids(fresh) == OPENLINEAGE_ONLY
