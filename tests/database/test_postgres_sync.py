"""`atlas-sync sync --from database` as a user runs it, against a real PostgreSQL and the embedded
emulator: a re-sync writes nothing, a dropped view is deleted on the next sync, errors publish
nothing, and the password is in no output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .conftest import Database


def sync(
    db: Database, data: Path, *extra: str, password_file: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATLAS_", "PG"))}
    env["ATLAS_SYNC_DATA_DIR"] = str(data)  # no ATLAS_URL: the embedded emulator, state in data/
    args = ["sync", "--domain", "shop", "--from", "database", "--db-url", db.url, "--json", *extra]
    args += ["--db-password-file", password_file or db.server.password_file]
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def summary(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_sync_resync_and_a_dropped_view(shop: Database, tmp_path: Path) -> None:
    data = tmp_path / "atlas"
    first = summary(sync(shop, data))
    assert first["applied"]["created"] == first["plan"]["create"] > 0
    assert first["plan"]["delete"] == 0
    again = summary(sync(shop, data))
    assert again["plan"] == {"create": 0, "update": 0, "delete": 0, "unchanged": first["plan"]["create"]}
    assert again["applied"] is None  # nothing written
    shop.execute("DROP VIEW mart.top_customers")
    after = summary(sync(shop, data))
    # the view's process, its dataset, its two columns and its three column-lineage entities
    assert after["plan"]["delete"] > 0 and after["plan"]["create"] == 0
    assert after["applied"]["deleted"] == after["plan"]["delete"]
    show = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", "show", "--domain", "shop", "--format", "json"],
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")},
            "ATLAS_SYNC_DATA_DIR": str(data),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert show.returncode == 0, show.stderr
    assert "top_customers" not in show.stdout and "customer_revenue" in show.stdout


def test_bad_credentials_publish_nothing_and_never_show_the_password(shop: Database, tmp_path: Path) -> None:
    data = tmp_path / "atlas"
    wrong = tmp_path / "wrong"
    wrong.write_text("wrong-db-password-4417\n", encoding="utf-8")
    wrong.chmod(0o600)
    proc = sync(shop, data, "-vv", password_file=str(wrong))
    assert proc.returncode == 1
    out = proc.stdout + proc.stderr
    assert "password authentication failed" in out
    assert "wrong-db-password-4417" not in out and shop.server.password not in out
    assert "Traceback" not in out
    ok = sync(shop, data, "-vv")
    assert ok.returncode == 0
    assert shop.server.password not in ok.stdout + ok.stderr
    # the failed run sent nothing: the first good run creates everything
    assert summary(ok)["plan"]["update"] == 0 and summary(ok)["plan"]["delete"] == 0


def test_unreachable_server_is_one_clear_line(shop: Database, tmp_path: Path) -> None:
    host_port = shop.url.split("@")[1].split("/")[0]
    closed = Database(shop.server, shop.name)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "atlas_sync.cli.main",
            "lineage",
            "database",
            "--db-url",
            closed.url.replace(host_port, "127.0.0.1:9"),
            "-o",
            "connect_timeout=3",
        ],
        env={k: v for k, v in os.environ.items() if not k.startswith(("ATLAS_", "PG"))},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert "error: cannot connect to postgresql://atlas@127.0.0.1:9/" in proc.stderr
    assert "hint: is the server running" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_without_pg_stat_statements_the_views_and_procedures_are_synced_with_a_warning(
    shop: Database, tmp_path: Path
) -> None:
    """One rule for every engine (issue 39 item 12): a query history that is not there is a warning
    naming the fix, the other passes published; an error only when `-o passes=` asks for queries."""
    shop.execute("DROP EXTENSION pg_stat_statements")
    data = tmp_path / "atlas"
    proc = sync(shop, data)
    doc = summary(proc)
    assert doc["applied"]["created"] > 0
    warning = [line for line in proc.stderr.splitlines() if "the queries pass is skipped" in line]
    assert len(warning) == 1, proc.stderr
    assert 'relation "pg_stat_statements" does not exist' in warning[0]
    assert "CREATE EXTENSION pg_stat_statements" in warning[0]
    show = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", "show", "--domain", "shop"],
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")},
            "ATLAS_SYNC_DATA_DIR": str(data),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    # a view's process and a procedure's process, both from the catalog
    assert f"-> {shop.name}.mart.top_customers" in show.stdout, show.stdout
    assert f"-> {shop.name}.mart.customer_totals" in show.stdout
    # asked for explicitly, the missing history is an error and nothing is published
    data2 = tmp_path / "atlas2"
    proc = sync(shop, data2, "-o", "passes=views,procedures,queries")
    assert proc.returncode != 0
    assert "pg_stat_statements" in proc.stderr and "hint: CREATE EXTENSION pg_stat_statements" in proc.stderr
    assert "Traceback" not in proc.stderr
