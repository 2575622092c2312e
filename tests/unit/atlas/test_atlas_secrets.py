"""The password never shows: not in repr/str, exceptions, hints or logs (DEBUG included)."""

from __future__ import annotations

import base64
import logging

import pytest
import requests
import responses
from atlas_test_support import API, BASE
from pydantic import SecretStr

from atlas_sync.atlas import AtlasClient, AuthError, RetryPolicy, TransportError
from atlas_sync.config import Settings
from atlas_sync.errors import ConfigError

PASSWORD = "s3cr3t-pw"
BASIC = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()


def assert_clean(text: str) -> None:
    assert PASSWORD not in text
    assert BASIC not in text


def test_repr_of_client_and_auth_hide_the_password() -> None:
    client = AtlasClient(BASE, auth=("alice", SecretStr(PASSWORD)))
    assert_clean(repr(client))
    assert_clean(str(client))
    assert_clean(repr(client._auth))
    assert_clean(client.target)


def test_password_travels_only_in_the_authorization_header(client: AtlasClient) -> None:
    with responses.RequestsMock() as mock:
        mock.get(API + "/admin/version", json={"Version": "2.4.0"})
        client.version()
        request = mock.calls[0].request
    assert request.headers["Authorization"] == f"Basic {BASIC}"
    assert_clean(request.url)


def test_auth_error_and_debug_logs_never_contain_the_password(
    client: AtlasClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with responses.RequestsMock() as mock:
        mock.get(API + "/admin/status", status=503)
        mock.get(API + "/admin/status", json={"Status": "ACTIVE"})
        mock.get(API + "/admin/version", status=401, body="<html>401</html>", content_type="text/html")
        client.status()
        with pytest.raises(AuthError) as info:
            client.version()
    err = info.value
    for text in (str(err), repr(err), err.hint or "", str(err.body), caplog.text):
        assert_clean(text)
    assert "retry" in caplog.text  # the logs did record the retry, so they were captured


def test_transport_error_does_not_leak_the_password(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    client = AtlasClient(
        BASE, auth=("alice", PASSWORD), retry=RetryPolicy(max_attempts=2, sleep=lambda s: None)
    )
    with responses.RequestsMock() as mock:
        mock.get(API + "/admin/status", body=requests.exceptions.ConnectionError("reset"))
        with pytest.raises(TransportError) as info:
            client.status()
    for text in (str(info.value), repr(info.value), info.value.hint or "", caplog.text):
        assert_clean(text)


def test_url_with_embedded_password_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        AtlasClient(f"https://alice:{PASSWORD}@atlas:21000")
    assert_clean(str(info.value))
    assert "auth=" in (info.value.hint or "")


def test_configured_url_with_embedded_password_is_refused_with_the_env_hint() -> None:
    with pytest.raises(ConfigError) as info:
        Settings(url=f"https://alice:{PASSWORD}@atlas:21000")
    assert_clean(str(info.value))
    assert "ATLAS_PASSWORD" in (info.value.hint or "")
