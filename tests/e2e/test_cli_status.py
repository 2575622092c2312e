"""`atlas-sync status` and `atlas-sync config show` run as a user would, as processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests


def run(
    args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin if stdin is not None else "",
    )


@pytest.fixture()
def clean_env() -> dict[str, str]:
    """The environment without any ATLAS_* setting (the developer's own must not leak in)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}


@pytest.fixture()
def server_env(emulator_server: Any, clean_env: dict[str, str]) -> dict[str, str]:
    return {**clean_env, "ATLAS_URL": emulator_server.url, "ATLAS_PASSWORD": "admin"}


def test_status_works_against_the_embedded_emulator_without_a_server(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    proc = run(["status"], clean_env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(":", 1) for line in proc.stdout.strip().splitlines())
    assert "embedded emulator" in lines["target"]
    assert lines["status"].strip() == "ACTIVE"
    assert "ENTITY" in lines["typedefs"]  # Atlas's built-in entity types are preloaded
    assert (tmp_path / ".atlas-sync" / "atlas.db").is_file()  # state lives in the data dir


def test_status_json_over_http_reports_what_the_server_holds(
    server_env: dict[str, str],
    emulator_server: Any,
    tmp_path: Path,
) -> None:
    proc = run(["status", "--json"], server_env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    # What the server says, asked directly:
    headers = requests.get(
        emulator_server.url + "/api/atlas/v2/types/typedefs/headers", auth=("admin", "admin"), timeout=30
    ).json()
    version = requests.get(
        emulator_server.url + "/api/atlas/admin/version", auth=("admin", "admin"), timeout=30
    )
    assert info["status"] == "ACTIVE"
    assert info["url"] == emulator_server.url
    assert info["embedded"] is False
    assert info["version"] == version.json()["Version"]
    assert info["typedefs"]["total"] == len(headers)
    assert info["typedefs"]["ENTITY"] == sum(1 for h in headers if h["category"] == "ENTITY")


def test_status_with_a_wrong_password_says_which_user_and_how_to_fix(
    server_env: dict[str, str],
    emulator_server: Any,
    tmp_path: Path,
) -> None:
    env = {**server_env, "ATLAS_PASSWORD": "not-the-password", "ATLAS_USERNAME": "admin"}
    proc = run(["status"], env, tmp_path)
    assert proc.returncode not in (0, 2)
    assert "Traceback" not in proc.stderr
    assert "error:" in proc.stderr and "401" in proc.stderr
    assert "'admin'" in proc.stderr and emulator_server.url in proc.stderr
    assert "ATLAS_PASSWORD" in proc.stderr
    assert "not-the-password" not in proc.stdout + proc.stderr


def test_status_against_a_url_without_password_fails_with_a_hint(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    env = dict(server_env)
    del env["ATLAS_PASSWORD"]
    proc = run(["status"], env, tmp_path)  # stdin is not a terminal: no prompt
    assert proc.returncode != 0
    assert "no password for Atlas user 'admin'" in proc.stderr
    assert "ATLAS_PASSWORD_FILE" in proc.stderr


def test_password_file_flag_is_used(server_env: dict[str, str], tmp_path: Path) -> None:
    env = dict(server_env)
    del env["ATLAS_PASSWORD"]
    pw = tmp_path / "pw"
    pw.write_text("admin\n")
    pw.chmod(0o600)
    proc = run(["status", "--password-file", str(pw)], env, tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_unreachable_url_fails_fast_with_advice(clean_env: dict[str, str], tmp_path: Path) -> None:
    env = {**clean_env, "ATLAS_URL": "http://127.0.0.1:9", "ATLAS_PASSWORD": "x", "ATLAS_RETRIES": "0"}
    proc = run(["status"], env, tmp_path)
    assert proc.returncode != 0
    assert "could not connect to http://127.0.0.1:9" in proc.stderr
    assert "hint:" in proc.stderr and "Traceback" not in proc.stderr


def test_verbose_prints_request_counters(server_env: dict[str, str], tmp_path: Path) -> None:
    proc = run(["status", "-v"], server_env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "requests:" in proc.stderr
    # status, version and typedef headers: one admin pair and one typedef read
    rows = {
        p[0]: p[1]
        for p in (line.split() for line in proc.stderr.splitlines())
        if len(p) > 1 and p[1].isdigit()
    }
    assert rows.get("admin") == "2" and rows.get("typedef_read") == "1"


def test_config_show_lists_sources_and_masks_the_password(clean_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "atlas-sync.toml").write_text('profile = "pico"\ndomain = "from_file"\n')
    env = {**clean_env, "ATLAS_SYNC_DOMAIN": "from_env", "ATLAS_PASSWORD": "hunter2"}
    proc = run(["config", "show", "--json", "--url", "http://atlas.example:21000"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["url"] == {"value": "http://atlas.example:21000", "source": "flag --url"}
    assert shown["domain"] == {"value": "from_env", "source": "env ATLAS_SYNC_DOMAIN"}
    assert shown["profile"]["value"] == "pico" and shown["profile"]["source"].startswith("file ")
    assert shown["batch_size"] == {"value": 500, "source": "default"}
    assert shown["password"]["value"] == "********"
    assert "hunter2" not in proc.stdout + proc.stderr

    text = run(["config", "show"], env, tmp_path)
    assert "hunter2" not in text.stdout and "env ATLAS_PASSWORD" in text.stdout


def test_config_error_in_file_is_one_line_with_the_key(clean_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "atlas-sync.toml").write_text("batch_sise = 3\n")
    proc = run(["config", "show"], clean_env, tmp_path)
    assert proc.returncode != 0
    assert "unknown key 'batch_sise'" in proc.stderr and "Traceback" not in proc.stderr
