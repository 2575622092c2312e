"""The `superset` reader's live mode fails cleanly before any lineage: credentials only from the
environment (never argv), a Superset that cannot be reached named by URL. The live reading itself is
tested against a real Superset (tests/superset_live)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from atlas_sync.errors import ConfigError, InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.superset.api import credentials


def test_credentials_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SUPERSET_USERNAME", raising=False)
    with pytest.raises(ConfigError, match="SUPERSET_USERNAME"):
        credentials()
    monkeypatch.setenv("SUPERSET_USERNAME", "bi")
    monkeypatch.delenv("SUPERSET_PASSWORD", raising=False)
    monkeypatch.delenv("SUPERSET_PASSWORD_FILE", raising=False)
    with pytest.raises(ConfigError, match="SUPERSET_PASSWORD_FILE"):
        credentials()
    monkeypatch.setenv("SUPERSET_PASSWORD", "from-env")
    assert credentials() == ("bi", "from-env")
    pw = tmp_path / "pw"
    pw.write_text("from-file\n")
    pw.chmod(0o600)
    monkeypatch.setenv("SUPERSET_PASSWORD_FILE", str(pw))
    assert credentials() == ("bi", "from-file")  # the file wins


def test_an_unreachable_superset_is_a_clean_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("SUPERSET_USERNAME", "bi")
    monkeypatch.setenv("SUPERSET_PASSWORD", "secret-value")
    with pytest.raises(InputError) as exc:
        registry.read("superset", [], superset_url=f"http://127.0.0.1:{port}", progress=False)
    assert f"127.0.0.1:{port}" in str(exc.value)
    assert "secret-value" not in str(exc.value)


def test_files_and_a_url_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not both"):
        registry.read("superset", [str(tmp_path)], superset_url="http://127.0.0.1:1")
