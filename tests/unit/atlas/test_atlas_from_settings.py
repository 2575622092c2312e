"""AtlasClient.from_settings: which target, auth, TLS and timeouts the settings give."""

from __future__ import annotations

import logging
import sys
import types
from pathlib import Path

import pytest
import responses
from atlas_test_support import API, BASE

from atlas_sync.config import Settings
from atlas_sync.errors import ConfigError
from atlas_sync.factory import client_from_settings


def test_no_url_means_the_embedded_emulator(tmp_path: Path) -> None:
    client = client_from_settings(Settings(data_dir=tmp_path / "d"))
    assert client.emulator is not None
    assert client.status() == "ACTIVE"
    assert (tmp_path / "d" / "atlas.db").is_file()


def test_url_settings_give_timeouts_retries_and_batching() -> None:
    s = Settings(
        url=BASE,
        password="pw",
        connect_timeout=3,
        read_timeout=7,
        retries=2,
        batch_size=9,
        max_batch_bytes=5000,
    )
    client = client_from_settings(s)
    assert client.timeout == (3, 7)
    assert client.retry.max_attempts == 3
    assert (client.batch_size, client.max_batch_bytes) == (9, 5000)
    assert client.verify is True  # TLS verification on by default
    assert client.username == "admin"


def test_ca_bundle_is_used_for_verification(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    client = client_from_settings(Settings(url=BASE, password="pw", ca_bundle=ca))
    assert client.verify == str(ca)


def test_insecure_turns_verification_off_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="atlas_sync"):
        client = client_from_settings(Settings(url=BASE, password="pw", insecure=True))
    assert client.verify is False
    assert "verification is OFF" in caplog.text


@responses.activate
def test_username_and_password_file_reach_the_request(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("from-file\n")
    pw.chmod(0o600)
    responses.get(API + "/admin/version", json={"Version": "2.4.0"})
    client = client_from_settings(Settings(url=BASE, username="etl", password_file=pw))
    client.version()
    import base64

    assert (
        responses.calls[0].request.headers["Authorization"]
        == "Basic " + base64.b64encode(b"etl:from-file").decode()
    )


def test_kerberos_without_requests_kerberos_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "requests_kerberos", None)  # import fails
    with pytest.raises(ConfigError) as info:
        client_from_settings(Settings(url=BASE, kerberos=True))
    assert "pip install requests-kerberos" in (info.value.hint or "")


def test_kerberos_uses_requests_kerberos_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    from requests.auth import AuthBase

    class FakeKerberosAuth(AuthBase):
        def __init__(self, mutual_authentication: object) -> None:
            self.mutual = mutual_authentication

    fake = types.ModuleType("requests_kerberos")
    fake.HTTPKerberosAuth = FakeKerberosAuth  # type: ignore[attr-defined]
    fake.OPTIONAL = "optional"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "requests_kerberos", fake)
    client = client_from_settings(Settings(url=BASE, kerberos=True))  # no password needed
    assert isinstance(client._auth, FakeKerberosAuth)
    assert "Kerberos" in client.target


def test_unusable_data_dir_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError) as info:
        client_from_settings(Settings(data_dir=blocker / "sub"))
    assert str(blocker / "sub") in str(info.value)
    assert "ATLAS_SYNC_DATA_DIR" in (info.value.hint or "")
