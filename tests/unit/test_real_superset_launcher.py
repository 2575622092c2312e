"""Pure parts of the real-Superset launcher (the server itself is exercised by tests/superset_live)."""

from __future__ import annotations

from pathlib import Path

from tests.support.real_superset import CONFIG, REQUIREMENTS, Server, ensure_installed, main


def test_the_recipe_pins_what_superset_6_1_0_needs() -> None:
    # the plain 6.1.0 install breaks on a missing rich, Flask-Caching 2.5's keyword, a missing cachetools
    assert REQUIREMENTS[:5] == ["apache-superset==6.1.0", "flask-caching<2.5", "rich", "cachetools", "duckdb"]
    assert "duckdb-engine" in REQUIREMENTS


def test_the_config_reads_its_secret_and_database_from_the_environment() -> None:
    assert 'SECRET_KEY = os.environ["ATLAS_SYNC_SUPERSET_SECRET"]' in CONFIG
    assert "PREVENT_UNSAFE_DB_CONNECTIONS = False" in CONFIG
    assert "sqlite:///" in CONFIG


def test_an_installed_venv_is_used_as_it_is(tmp_path: Path) -> None:
    exe = tmp_path / "bin" / "superset"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    assert ensure_installed(tmp_path, lambda _m: None) == exe


def test_status_of_an_empty_home_is_stopped_and_env_refuses(tmp_path: Path) -> None:
    server = Server(tmp_path, venv=tmp_path / "venv", log=lambda _m: None)
    assert server.status() == {"home": str(tmp_path), "state": "stopped"}
    assert server.stop() is False
    assert main(["env", "--home", str(tmp_path)]) == 1  # "Superset is not running", no exports
