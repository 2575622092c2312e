"""`show QUALIFIED_NAME` after a process was deleted and created again (issue 39 item 8).

Atlas's lineage call walks soft-deleted entities too: after v1, v2 (which deletes v1's process) and v1
again, the lineage of `m.t` holds v1's process twice under one qualifiedName, once DELETED. `show` must
draw only what is ACTIVE, in every format. Runs on the emulator over HTTP, and on a real Atlas when
``ATLAS_URL`` is set (``ATLAS_USERNAME``, ``ATLAS_PASSWORD`` or ``ATLAS_PASSWORD_FILE``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(params=["emulator", "real"])
def env(request: pytest.FixtureRequest) -> dict[str, str]:
    if request.param == "real":
        if not os.environ.get("ATLAS_URL"):
            pytest.skip("needs a real Atlas (ATLAS_URL)")
        return dict(os.environ)
    server: Any = request.getfixturevalue("emulator_server")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    return {**clean, "ATLAS_URL": server.url, "ATLAS_PASSWORD": "admin"}


def test_show_of_a_table_whose_process_was_deleted_and_created_again(
    env: dict[str, str], tmp_path: Path
) -> None:
    domain = f"truth{uuid.uuid4().hex[:8]}"
    (tmp_path / "v1.sql").write_text("INSERT INTO m.t SELECT a FROM m.s;\n", encoding="utf-8")
    (tmp_path / "v2.sql").write_text("INSERT INTO m.t SELECT a FROM m.u;\n", encoding="utf-8")
    try:
        for step in (["v1.sql"], ["--force", "v2.sql"], ["--force", "v1.sql"]):
            proc = _run(["sync", "-q", "-d", domain, "-j", "j", "--dialect", "ansi", *step], env, tmp_path)
            assert proc.returncode == 0, proc.stderr

        proc = _run(["show", "-d", domain, "m.t"], env, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        out = proc.stdout
        # one process (v1's, ACTIVE) reading m.s into m.t; v2's deleted process and m.u are gone
        assert out.count("lineage_process ") == 1, out
        assert "<- m.s" in out and "-> m.t" in out
        assert "m.u" not in out

        proc = _run(["show", "-d", domain, "m.t", "--format", "html", "--out", "m.html"], env, tmp_path)
        assert proc.returncode == 0, proc.stderr
        html = (tmp_path / "m.html").read_text(encoding="utf-8")
        assert "m.s" in html and "m.u" not in html
    finally:
        _run(["teardown", "-q", "-d", domain, "--purge", "--yes"], env, tmp_path)
