"""Shared pytest setup. Keep this file small; add fixtures in the test folders' own conftest files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["atlas_sync.emulator.testing"]

_CONTRACT_DIR = Path(__file__).parent / "contract"


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the contract suite's Atlas target when tests/contract/conftest.py has not done so.

    Under pytest-xdist, run from the repository root, the controller never loads that conftest (the
    workers collect), so its header line would be missing.
    """
    if any(
        Path(str(getattr(p, "__file__", ""))) == _CONTRACT_DIR / "conftest.py"
        for p in config.pluginmanager.get_plugins()
    ):
        return []
    args = [Path(a.split("::")[0]).resolve() for a in (config.args or [])]
    if args and not any(
        a == _CONTRACT_DIR or _CONTRACT_DIR in a.parents or a in _CONTRACT_DIR.parents for a in args
    ):
        return []
    if os.environ.get("ATLAS_URL"):
        target = f"real Atlas at {os.environ['ATLAS_URL']} (ATLAS_URL)"
    elif os.environ.get("CONTRACT_TARGET", "").lower() == "http":
        target = "atlas-sync emulator over HTTP on 127.0.0.1 (CONTRACT_TARGET=http)"
    else:
        target = "atlas-sync emulator in-process (EmulatorAdapter)"
    if not os.environ.get("ATLAS_URL") and os.environ.get("CONTRACT_DB"):
        target += f", state in {os.environ['CONTRACT_DB']}"
    return [f"atlas contract target: {target}"]
