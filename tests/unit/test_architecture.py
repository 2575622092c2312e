"""The import rules of docs/architecture.md hold (checked with import-linter's contracts in pyproject.toml):
layers import one way, the lineage layer knows nothing of Atlas, no run-time import cycle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(where: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(where)}  # the copy under test, not the installed package
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(where / "pyproject.toml"), "--no-cache"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_package_keeps_every_import_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "bad_import", "broken"),
    [
        # the transport wiring itself to the emulator: the factory's job
        ("atlas/retry.py", "from atlas_sync.emulator import Emulator", "atlas_sync.atlas is not allowed"),
        # a reader reaching up into the CLI for a progress bar
        ("lineage/model.py", "from atlas_sync.cli import progress", "atlas_sync.lineage is not allowed"),
        # a cycle between two emulator modules
        ("emulator/store.py", "from atlas_sync.emulator import app", "No import cycles"),
        # the runtime reaching the test launchers, which the wheel does not ship
        ("api/run.py", "from tests.support import real_atlas", "atlas_sync is not allowed to import tests"),
    ],
)
def test_an_import_against_the_flow_breaks_a_contract(
    tmp_path: Path, module: str, bad_import: str, broken: str
) -> None:
    shutil.copytree(
        ROOT / "atlas_sync", tmp_path / "atlas_sync", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "atlas_sync" / module
    # A lazy import inside a function counts too: it runs the moment the function does.
    target.write_text(target.read_text() + f"\n\ndef _late():\n    {bad_import}  # noqa\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert broken in result.stdout, result.stdout
