"""The server stack (uvicorn, starlette, anyio, prometheus-client) is the ``[server]`` extra: `sync`, the
README's quick start and the emulator run without it, and the commands that need it say which extra
to install, in one line, without a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER_STACK = ("uvicorn", "starlette", "anyio", "prometheus_client")
# A module set to None in sys.modules cannot be imported: as if it were not installed.
RUN_WITHOUT = (
    "import sys\n"
    "for m in sys.argv[1].split(','): sys.modules[m] = None\n"
    "from atlas_sync.cli.main import main\n"
    "main(sys.argv[2:])\n"
)


def _cli(missing: tuple[str, ...], args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATLAS_", "KAFKA_"))}
    env.update(HOME=str(tmp_path), ATLAS_SYNC_DATA_DIR=str(tmp_path / "data"))
    return subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT, ",".join(missing), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_readme_quick_start_syncs_and_shows_without_the_server_stack(tmp_path: Path) -> None:
    plan = str(ROOT / "examples" / "spark-cars" / "cars.plan.txt")
    synced = _cli(SERVER_STACK, ["sync", "--profile", "pico", "--domain", "picoDomain", plan], tmp_path)
    assert synced.returncode == 0, synced.stderr
    assert "created" in synced.stdout
    shown = _cli(SERVER_STACK, ["show", "--profile", "pico", "--domain", "picoDomain"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in synced.stderr + shown.stderr


@pytest.mark.parametrize("missing", SERVER_STACK)
def test_openlineage_serve_without_the_server_extra_names_the_extra(tmp_path: Path, missing: str) -> None:
    result = _cli((missing,), ["openlineage", "serve", "--domain", "d", "--port", "0"], tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert f"need atlas-sync's [server] extra ({missing} is not installed)" in result.stderr
    assert "pip install 'atlas-sync[server]'" in result.stderr


def test_openlineage_consume_without_the_server_extra_names_both_extras(tmp_path: Path) -> None:
    args = ["openlineage", "consume", "--domain", "d", "--bootstrap-servers", "127.0.0.1:9", "--topic", "t"]
    result = _cli(("prometheus_client",), args, tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "'atlas-sync[server,kafka]'" in result.stderr


def test_the_emulator_server_needs_no_server_stack() -> None:
    code = "import sys\nfor m in sys.argv[1].split(','): sys.modules[m] = None\nimport atlas_sync.emulator.http\n"
    result = subprocess.run(
        [sys.executable, "-c", code, ",".join(SERVER_STACK)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
