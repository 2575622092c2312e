"""`atlas-sync sync --from database --db-url mysql://...` as a user runs it, against a real MariaDB
and the embedded emulator: a re-sync writes nothing, a dropped view is deleted on the next sync,
bad credentials and an unreachable server publish nothing, and the password is in no output (nor
in argv: it is given as a file or in MYSQL_PWD)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .conftest import MySQLDatabase


def cli(
    *args: str, data: Path, env: dict[str, str] | None = None, timeout: int = 180
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ATLAS_", "MYSQL"))}
    clean["ATLAS_SYNC_DATA_DIR"] = str(data)  # no ATLAS_URL: the embedded emulator, state in data/
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def sync(db: MySQLDatabase, data: Path, *extra: str, password_file: str | None = None):
    args = ["sync", "--domain", "shop", "--from", "database", "--db-url", db.url, "--json", *extra]
    return cli(*args, "--db-password-file", password_file or db.server.password_file, data=data)


def summary(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_sync_resync_and_a_dropped_view(myshop: MySQLDatabase, tmp_path: Path) -> None:
    data = tmp_path / "atlas"
    first = summary(sync(myshop, data))
    assert first["applied"]["created"] == first["plan"]["create"] > 0
    assert first["plan"]["delete"] == 0
    again = summary(sync(myshop, data))
    assert again["plan"] == {"create": 0, "update": 0, "delete": 0, "unchanged": first["plan"]["create"]}
    assert again["applied"] is None  # nothing written
    myshop.execute("DROP VIEW top_customers")
    after = summary(sync(myshop, data))
    assert after["plan"]["delete"] > 0 and after["plan"]["create"] == 0
    assert after["applied"]["deleted"] == after["plan"]["delete"]
    show = cli("show", "--domain", "shop", "--format", "json", data=data)
    assert show.returncode == 0, show.stderr
    assert "top_customers" not in show.stdout and "customer_revenue" in show.stdout


def test_bad_credentials_publish_nothing_and_never_show_the_password(
    myshop: MySQLDatabase, tmp_path: Path
) -> None:
    data = tmp_path / "atlas"
    wrong = tmp_path / "wrong"
    wrong.write_text("wrong-db-password-4417\n", encoding="utf-8")
    wrong.chmod(0o600)
    proc = sync(myshop, data, "-vv", password_file=str(wrong))
    assert proc.returncode == 1
    out = proc.stdout + proc.stderr
    assert f"error: cannot connect to {myshop.url}: Access denied for user 'atlas'" in out
    assert "wrong-db-password-4417" not in out and myshop.server.password not in out
    assert "Traceback" not in out
    # the password from MySQL's own variable: in the environment, not argv
    ok = cli(
        "sync",
        "--domain",
        "shop",
        "--from",
        "database",
        "--db-url",
        myshop.url,
        "--json",
        "-vv",
        data=data,
        env={"MYSQL_PWD": myshop.server.password},
    )
    assert ok.returncode == 0, ok.stderr
    assert myshop.server.password not in ok.stdout + ok.stderr
    # the failed run sent nothing: the first good run creates everything
    assert summary(ok)["plan"]["update"] == 0 and summary(ok)["plan"]["delete"] == 0
    assert summary(ok)["plan"]["unchanged"] == 0


def test_unreachable_server_is_one_clear_line(myshop: MySQLDatabase, tmp_path: Path) -> None:
    closed = myshop.url.replace(myshop.server.host_port, "127.0.0.1:9")
    proc = cli(
        "lineage",
        "database",
        "--db-url",
        closed,
        "-o",
        "connect_timeout=3",
        data=tmp_path / "atlas",
        timeout=60,
    )
    assert proc.returncode == 1
    assert f"error: cannot connect to mysql://atlas@127.0.0.1:9/{myshop.name}: Can't connect" in proc.stderr
    assert "hint: is the server running" in proc.stderr
    assert "Traceback" not in proc.stderr
