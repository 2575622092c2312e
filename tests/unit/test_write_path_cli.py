"""Command-line checks of the Kafka options that need no broker: they fail before connecting."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas_sync.atlas.errors import NotAtlasError
from atlas_sync.cli.main import cli

SQL = "insert into mart.t select id from raw.s"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATLAS_SYNC_DATA_DIR", str(tmp_path / "data"))
    for var in (
        "ATLAS_URL",
        "ATLAS_HOOK_BOOTSTRAP_SERVERS",
        "ATLAS_SYNC_WRITE_PATH",
        "KAFKA_BOOTSTRAP_SERVERS",
    ):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "etl.sql").write_text(SQL)

    def invoke(*args: str):
        return CliRunner().invoke(cli, list(args))

    return invoke


def test_atlas_hook_without_brokers_is_a_usage_error_naming_the_flag(run) -> None:
    res = run("sync", "-d", "demo", "--from", "sql", "etl.sql", "--write-path", "atlas-hook")
    assert res.exit_code == 2
    assert "--hook-bootstrap-servers" in res.output
    assert "Queued" not in res.output and "Applied" not in res.output


def test_wait_without_the_hook_path_is_a_usage_error(run) -> None:
    res = run("sync", "-d", "demo", "--from", "sql", "etl.sql", "--wait", "5")
    assert res.exit_code == 2
    assert "--wait goes with --write-path atlas-hook" in res.output


def test_rest_write_path_is_the_default_and_applies_at_once(run) -> None:
    res = run("sync", "-d", "demo", "--from", "sql", "etl.sql")
    assert res.exit_code == 0, res.output
    assert "Applied:" in res.output and "Queued" not in res.output


def test_consume_needs_a_domain_and_known_event_types(run) -> None:
    res = run("openlineage", "consume", "-b", "127.0.0.1:1", "-t", "ol")
    assert res.exit_code == 2 and "--domain is required" in res.output
    res = run("openlineage", "consume", "-b", "127.0.0.1:1", "-t", "ol", "-d", "x", "--event-types", "DONE")
    assert res.exit_code == 2 and "unknown event type: DONE" in res.output


def test_consume_kafka_config_file_errors_name_the_line(run, tmp_path: Path) -> None:
    bad = tmp_path / "client.properties"
    bad.write_text("# security\nsecurity.protocol=SASL_SSL\nsasl.password: s3cret\n")
    res = run(
        "openlineage", "consume", "-b", "127.0.0.1:1", "-t", "ol", "-d", "x", "--kafka-config", str(bad)
    )
    assert res.exit_code != 0
    assert f"{bad}:3: expected key=value" in str(res.exception)
    assert "s3cret" not in str(res.exception) + res.output


@pytest.fixture
def web_server(tmp_path: Path) -> Iterator[str]:
    """A plain web server (no Atlas): every API path is its 404 page."""
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


def test_consume_on_the_hook_path_probes_atlas_through_rest(
    run, web_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("confluent_kafka")
    monkeypatch.setenv("ATLAS_PASSWORD", "pw")
    res = run(
        "openlineage", "consume", "-b", "127.0.0.1:1", "-t", "ol", "-d", "x", "--url", web_server,
        "--write-path", "atlas-hook", "--hook-bootstrap-servers", "127.0.0.1:1",
    )  # fmt: skip
    # the probe's answer, before any Kafka connection: the web server is no Atlas
    assert isinstance(res.exception, NotAtlasError), res.exception
    assert str(res.exception).startswith(
        f"no Atlas at {web_server} (GET /api/atlas/admin/status answered HTTP 404"
    )
