"""The CLI turns CPython's cyclic garbage collector off for one-shot commands (a sync allocates
millions of objects that live until it ends and makes almost no cyclic garbage) and back on for
the servers, which live long; at the end it leaves what the command allocated to the OS."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from atlas_sync.cli import main as cli_main


@pytest.fixture(autouse=True)
def collector_back_on() -> Iterator[None]:
    try:
        yield
    finally:
        gc.enable()  # whatever a test did: the test process keeps collecting
        gc.unfreeze()


def test_a_command_runs_with_the_collector_off(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(cli_main, "run_guarded", lambda _cli, _argv: seen.append(gc.isenabled()) or 0)
    with pytest.raises(SystemExit) as exc:
        cli_main.main(["status"])
    assert exc.value.code == 0
    assert seen == [False]


def test_the_process_exits_without_walking_what_the_command_allocated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept: list[Any] = []
    monkeypatch.setattr(
        cli_main, "run_guarded", lambda _cli, _argv: kept.append([[n] for n in range(1000)]) or 3
    )
    gc.unfreeze()
    with pytest.raises(SystemExit) as exc:
        cli_main.main(["status"])
    assert exc.value.code == 3  # the command's exit code, as before
    assert gc.get_freeze_count() >= 1000  # the interpreter's last collection skips it


class _Started(Exception):
    pass


def _recorder(seen: list[bool]) -> Any:
    def record(*_a: Any, **_kw: Any) -> Any:
        seen.append(gc.isenabled())
        raise _Started

    return record


@pytest.mark.parametrize(
    ("argv", "module", "name"),
    [
        (["emulator", "serve", "--memory", "--port", "0"], "atlas_sync.emulator.http", "serve"),
        (
            ["openlineage", "serve", "--port", "0", "--domain", "demo"],
            "atlas_sync.openlineage_server",
            "serve",
        ),
        (
            [
                "openlineage",
                "consume",
                "--domain",
                "demo",
                "--bootstrap-servers",
                "127.0.0.1:9",
                "--topic",
                "ol",
            ],
            "atlas_sync.openlineage_server.consumer",
            "KafkaLineageConsumer",
        ),
    ],
    ids=["emulator serve", "openlineage serve", "openlineage consume"],
)
def test_a_server_turns_the_collector_back_on(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, argv: list[str], module: str, name: str
) -> None:
    import importlib

    monkeypatch.chdir(tmp_path)
    seen: list[bool] = []
    monkeypatch.setattr(importlib.import_module(module), name, _recorder(seen))
    gc.disable()  # as main() leaves it
    result = CliRunner().invoke(cli_main.cli, argv)
    assert isinstance(result.exception, _Started), result.output
    assert seen == [True]


def test_the_embedded_atlas_is_closed_when_the_command_exits(tmp_path: Any) -> None:
    """What a command allocated is left to the OS, but the embedded Atlas's database is still closed:
    its write-ahead log is folded into ``atlas.db`` (a copy of that file alone holds everything)."""
    import os
    import subprocess
    import sys

    (tmp_path / "job.sql").write_text("INSERT INTO mart.daily SELECT id, amount FROM raw.orders;\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    cmd = [
        sys.executable,
        "-m",
        "atlas_sync.cli.main",
        "sync",
        "--domain",
        "demo",
        "--from",
        "sql",
        "job.sql",
    ]
    first = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    state = tmp_path / ".atlas-sync"
    assert sorted(p.name for p in state.iterdir()) == ["atlas.db"]
    show = [sys.executable, "-m", "atlas_sync.cli.main", "show", "--domain", "demo"]
    shown = subprocess.run(show, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "mart.daily" in shown.stdout
    assert sorted(p.name for p in state.iterdir()) == ["atlas.db"]  # (show holds the store's connection)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / ".atlas-sync").mkdir()
    (moved / ".atlas-sync" / "atlas.db").write_bytes((state / "atlas.db").read_bytes())
    (moved / "job.sql").write_text((tmp_path / "job.sql").read_text())
    again = subprocess.run(cmd, cwd=moved, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "Nothing to do" in again.stdout
