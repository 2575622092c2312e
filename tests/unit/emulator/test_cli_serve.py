"""``atlas-sync emulator serve`` as a user runs it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests
from click.testing import CliRunner

from atlas_sync.cli.main import cli


def _start(args: list[str], cwd: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "atlas_sync.cli.main", "emulator", "serve", "--port", "0", *args],
        cwd=cwd,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    lines = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            return proc, m.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("server did not start: " + "".join(lines))


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_serve_persists_state_and_logs_requests(tmp_path: Path) -> None:
    password = tmp_path / "pw"
    password.write_text("pa55\n")
    log = tmp_path / "requests.jsonl"
    args = ["--data", "state", "--user", "ops", "--password-file", str(password), "--request-log", str(log)]
    proc, url = _start(args, tmp_path)
    try:
        assert requests.get(url + "/api/atlas/admin/status", timeout=5).json() == {"Status": "ACTIVE"}
        created = requests.post(
            url + "/api/atlas/v2/types/typedefs", json={"entityDefs": [{"name": "cli_t"}]}, auth=("ops", "pa55"),
            timeout=5,
        )  # fmt: skip
        assert created.status_code == 200
        assert requests.get(url + "/api/atlas/v2/types/typedefs/headers", auth=("admin", "admin"),
                            timeout=5).status_code == 401  # fmt: skip
    finally:
        _stop(proc)
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(e["method"], e["status"]) for e in entries] == [("GET", 200), ("POST", 200), ("GET", 401)]
    proc, url = _start(args, tmp_path)
    try:
        again = requests.get(url + "/api/atlas/v2/types/typedef/name/cli_t", auth=("ops", "pa55"), timeout=5)
        assert again.status_code == 200
    finally:
        _stop(proc)


def test_serve_without_password_for_a_named_user_is_a_one_line_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("ATLAS_EMULATOR_PASSWORD", raising=False)
    result = CliRunner().invoke(cli, ["emulator", "serve", "--user", "ops"], standalone_mode=False)
    assert result.exception is not None and "no password for user ops" in str(result.exception)


def test_serve_rejects_a_bad_fault_spec() -> None:
    result = CliRunner().invoke(
        cli, ["emulator", "serve", "--memory", "--fault", "explode"], standalone_mode=False
    )
    assert result.exception is not None and "kind must be one of" in str(result.exception)


def test_serve_on_a_file_that_is_not_a_database_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "state.db"
    bad.write_text("not sqlite")
    result = CliRunner().invoke(cli, ["emulator", "serve", "--data", str(bad)], standalone_mode=False)
    assert result.exception is not None and "cannot open the emulator state" in str(result.exception)
