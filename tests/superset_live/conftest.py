"""A real Apache Superset for the tests in this folder.

``ATLAS_SYNC_TEST_SUPERSET_URL`` (with ``ATLAS_SYNC_TEST_SUPERSET_USERNAME`` and ``..._PASSWORD_FILE``) points at a
running one (.ci/run starts one, ``python -m tests.support.real_superset``); without it the session
starts its own from the installed venv (``build/superset-venv``, ~15 s from the cached metadata
database) and stops it at the end. Superset not installed skips, saying how to install it; installed
but not starting fails. The session builds its content once (Superset's SQLite metadata keeps table
names unique across databases), in a DuckDB warehouse of its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from superset_live.support import Api, build_content, make_warehouse


@dataclass
class Superset:
    url: str
    username: str
    password_file: str
    api: Api
    content: dict[str, Any]
    warehouse: Path


@pytest.fixture(scope="session")
def superset() -> Iterator[Superset]:
    try:
        import duckdb  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"the Superset tests need duckdb (pip install -e '.[test]'): {exc}")
    folder = Path(tempfile.mkdtemp(prefix="atlas-sync-bi-"))
    launcher = None
    explicit = os.environ.get("ATLAS_SYNC_TEST_SUPERSET_URL")
    if explicit:
        url, user = explicit, os.environ.get("ATLAS_SYNC_TEST_SUPERSET_USERNAME", "admin")
        password_file = os.environ["ATLAS_SYNC_TEST_SUPERSET_PASSWORD_FILE"]
    else:
        from tests.support.real_superset import Server, default_venv, superset_bin

        if not superset_bin(default_venv()).is_file():
            shutil.rmtree(folder, ignore_errors=True)
            pytest.skip(
                "real Apache Superset not installed (infrastructure): run "
                "`python -m tests.support.real_superset install` (about 35 s) or .ci/run"
            )
        launcher = Server(folder / "superset", log=lambda _msg: None)
        info = launcher.start()
        url, user, password_file = str(info["url"]), "admin", str(launcher.password_file)
    try:
        api = Api(url)
        api.login(user, Path(password_file).read_text(encoding="utf-8").splitlines()[0])
        warehouse = make_warehouse(folder)
        content = build_content(api, warehouse, prefix="t" + os.urandom(3).hex())
        yield Superset(url, user, password_file, api, content, warehouse)
    finally:
        if launcher is not None:
            launcher.stop()
        shutil.rmtree(folder, ignore_errors=True)
