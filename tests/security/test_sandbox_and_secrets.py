"""Templates are sandboxed; credentials never leak; TLS is verified by default; servers bind loopback,
require auth when asked and refuse oversized bodies."""

from __future__ import annotations

import base64
import http.server
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from atlas_sync.atlas import AtlasClient
from atlas_sync.cli.common import run_guarded
from atlas_sync.cli.main import cli
from atlas_sync.emulator import Emulator, serve
from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.render.profile import load_profile
from atlas_sync.render.renderer import render

ROOT = Path(__file__).resolve().parents[2]
EXE = str(Path(sys.executable).with_name("atlas-sync"))
GRAPH = {
    "datasets": [
        {"id": "raw.a", "name": "a", "columns": ["x"]},
        {"id": "mart.b", "name": "b", "columns": ["y"]},
    ],
    "processes": [{"id": "p", "name": "p", "inputs": ["raw.a"], "outputs": ["mart.b"]}],
    "edges": [{"source": "raw.a.x", "target": "mart.b.y", "kind": "IDENTITY", "process": "p"}],
}

# ------------------------------------------------------------------ template sandbox

ESCAPES = {
    "class-walk": "{{ ''.__class__.__mro__[1].__subclasses__() | tojson }}",
    "globals": "{{ lipsum.__globals__ | tojson }}",
    "cycler-os": "{{ cycler.__init__.__globals__.os.popen('id').read() | tojson }}",
    "self-context": "{{ self._TemplateReference__context | tojson }}",
    "include-passwd": "{% include '/etc/passwd' %}",
    "include-parent": "{% include '../../../../etc/passwd' %}",
    "import-os": "{% import 'os' as os %}{{ os.getcwd() | tojson }}",
    "config-attr": "{{ config.items() | tojson }}",
    "dunder-dict": "{{ dataset.__dict__ | tojson }}",
    "mutate": "{{ dataset.update({'name': 'x'}) | tojson }}",
    "range-bomb": "{{ range(10**9) | list | length | tojson }}",
}


@pytest.mark.parametrize("payload", list(ESCAPES.values()), ids=list(ESCAPES))
def test_a_template_cannot_escape_its_sandbox(payload, tmp_path) -> None:
    folder = tmp_path / "prof"
    shutil.copytree(ROOT / "templates" / "lineage", folder)
    toml = (folder / "profile.toml").read_text(encoding="utf-8").replace('name = "lineage"', 'name = "prof"')
    (folder / "profile.toml").write_text(toml, encoding="utf-8")
    ds = (folder / "dataset.json.j2").read_text(encoding="utf-8")
    ds = ds.replace('"name":', f'"name": {payload}, "x_name":', 1)
    (folder / "dataset.json.j2").write_text(ds, encoding="utf-8")
    graph = LineageGraph.from_document(GRAPH)
    with pytest.raises(AtlasSyncError) as info:
        render(graph, load_profile(folder), domain="d", job="j")
    text = str(info.value)
    assert "root:" not in text and "uid=" not in text and "/bin/" not in text


# ------------------------------------------------------------------ credentials

SECRET = "s3cr3t-Pa55-word!"


def _secret_forms() -> list[str]:
    basic = base64.b64encode(f"admin:{SECRET}".encode()).decode()
    return [SECRET, basic, basic[:16], SECRET.replace("!", "%21")]


@pytest.fixture()
def secured_server():
    emu = Emulator(None, users={"admin": SECRET})
    server = serve(emu)
    try:
        yield server
    finally:
        server.shutdown()
        emu.close()


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")} | env
    return subprocess.run([EXE, *args], env=full, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("how", ["env", "password-file"])
def test_credentials_never_appear_in_output_logs_plans_or_process_listing(
    secured_server, tmp_path, how
) -> None:
    doc = tmp_path / "job.lineage.json"
    doc.write_text(json.dumps(GRAPH), encoding="utf-8")
    env = {"ATLAS_URL": secured_server.url, "ATLAS_SYNC_DOMAIN": "sec"}
    if how == "env":
        env["ATLAS_PASSWORD"] = SECRET
    else:
        pw = tmp_path / "pw"
        pw.write_text(SECRET + "\n", encoding="utf-8")
        pw.chmod(0o600)
        env["ATLAS_PASSWORD_FILE"] = str(pw)
    plan_file = tmp_path / "plan.json"
    outputs: list[str] = []
    runs = [
        ["sync", "-vv", "--from", "graph", str(doc)],
        ["plan", "-vv", "--from", "graph", str(doc), "--out", str(plan_file), "--json"],
        ["sync", "--json", "--from", "graph", str(doc)],
        ["status", "-vv"],
        ["config", "show"],
    ]
    for args in runs:
        r = _run(args, env, tmp_path)
        outputs += [r.stdout, r.stderr]
    # a failing call (server error, retried and logged at -vv) and a wrong password
    secured_server.emulator.inject_fault("status", status=500, probability=1.0)
    r = _run(["sync", "-vv", "--from", "graph", str(doc)], env | {"ATLAS_RETRIES": "1"}, tmp_path)
    assert r.returncode != 0
    outputs += [r.stdout, r.stderr]
    secured_server.emulator.clear_faults()
    wrong = env | {"ATLAS_PASSWORD": SECRET + "x"} if how == "env" else env
    if how == "password-file":
        (tmp_path / "pw").write_text(SECRET + "x\n", encoding="utf-8")
    r = _run(["sync", "-vv", "--from", "graph", str(doc)], wrong, tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    outputs += [r.stdout, r.stderr]
    # the process listing of a running sync: argv only (ps shows /proc/<pid>/cmdline)
    proc = subprocess.Popen([EXE, "sync", "--from", "graph", str(doc)], env={**os.environ, **env}, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        time.sleep(0.3)
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode(errors="replace")
    except FileNotFoundError:
        cmdline = ""
    finally:
        proc.wait(60)
    outputs.append(cmdline)
    outputs.append(plan_file.read_text(encoding="utf-8"))
    outputs += [
        p.read_text(encoding="utf-8", errors="replace")
        for p in tmp_path.rglob("*")
        if p.is_file() and p.name != "pw"
    ]
    blob = "\n".join(outputs)
    assert "requests:" in blob, "the -vv runs did not log (the check would be vacuous)"
    for form in _secret_forms():
        assert form not in blob, f"credential form {form!r} leaked"


def test_credentials_never_appear_in_exceptions_or_reprs() -> None:
    client = AtlasClient("http://127.0.0.1:9", auth=("admin", SECRET), timeout=(0.2, 0.2))
    client.retry.max_attempts = 1
    assert SECRET not in repr(client) and SECRET not in repr(client._auth)
    with pytest.raises(AtlasSyncError) as info:
        client.version()
    assert all(f not in f"{info.value} {info.value.hint} {info.value!r}" for f in _secret_forms())


def test_a_password_flag_does_not_exist(tmp_path, capsys) -> None:
    code = run_guarded(cli, ["sync", "--password", SECRET, "--domain", "x", "f.lineage.json"])
    out = capsys.readouterr()
    assert code != 0
    assert SECRET not in out.out + out.err


# ------------------------------------------------------------------ TLS


def test_tls_verification_is_on_by_default_and_insecure_warns(caplog) -> None:
    assert AtlasClient("https://atlas.example:21000").verify is True
    with caplog.at_level(logging.WARNING, logger="atlas_sync"):
        client = AtlasClient("https://atlas.example:21000", verify=False)
    assert client.verify is False
    assert any("verification is OFF" in r.getMessage() for r in caplog.records)


def test_the_cli_insecure_flag_prints_a_warning(tmp_path) -> None:
    r = _run(["status", "--url", "https://127.0.0.1:9", "--insecure", "--timeout", "0.5"],
             {"ATLAS_PASSWORD": "x", "ATLAS_RETRIES": "0"}, tmp_path)  # fmt: skip
    assert r.returncode != 0
    assert "insecure" in r.stderr.lower() or "verification is off" in r.stderr.lower()


def test_a_self_signed_server_is_refused_without_a_ca_bundle(tmp_path) -> None:
    ssl = pytest.importorskip("ssl")
    trustme = pytest.importorskip("trustme", reason="trustme makes a throwaway CA")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    emu = Emulator(None)
    server = serve(emu)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(ctx)
    server._server.socket = ctx.wrap_socket(server._server.socket, server_side=True)
    url = server.url.replace("http://", "https://")
    try:
        with pytest.raises(AtlasSyncError, match="TLS") as info:
            AtlasClient(url, auth=("admin", "admin"), retry=None).version()
        assert "--ca-bundle" in (info.value.hint or "")
        with ca.cert_pem.tempfile() as pem:
            assert AtlasClient(url, auth=("admin", "admin"), verify=pem).version()
    finally:
        server.shutdown()
        emu.close()


def test_https_at_a_plain_http_server_hints_at_the_scheme_and_sends_it_no_credentials(tmp_path) -> None:
    seen: list[dict[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
            seen.append(dict(self.headers))
            self.send_response(404)
            self.end_headers()

        do_GET = do_HEAD  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        with pytest.raises(AtlasSyncError, match="TLS handshake") as info:
            AtlasClient(f"https://127.0.0.1:{port}/atlas", auth=("admin", "pw"), retry=None).version()
        hint = info.value.hint or ""
        assert f"use http://127.0.0.1:{port}/atlas" in hint
        assert "--ca-bundle" not in hint
        r = _run(["status", "--url", f"https://127.0.0.1:{port}"], {"ATLAS_PASSWORD": "pw"}, tmp_path)
        assert r.returncode == 1
        assert f"hint: the server answers plain HTTP, not HTTPS: use http://127.0.0.1:{port}" in r.stderr
        assert seen and all("Authorization" not in headers for headers in seen)
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------ servers: loopback, auth, body limit


def test_the_emulator_binds_loopback_by_default_and_requires_auth_when_asked() -> None:
    emu = Emulator(None, users={"alice": "pw1"})
    server = serve(emu)
    try:
        assert server.host == "127.0.0.1"
        url = server.url + "/api/atlas/v2/types/typedefs/headers"
        assert requests.get(url, timeout=5).status_code == 401
        assert requests.get(url, auth=("alice", "wrong"), timeout=5).status_code == 401
        assert requests.get(url, auth=("admin", "admin"), timeout=5).status_code == 401
        assert requests.get(url, auth=("alice", "pw1"), timeout=5).status_code == 200
    finally:
        server.shutdown()
        emu.close()


def test_the_cli_servers_default_to_loopback() -> None:
    for group, cmd in (("emulator", "serve"), ("openlineage", "serve")):
        command = cli.commands[group].commands[cmd]  # type: ignore[attr-defined]
        host = next(p for p in command.params if p.name == "host")
        assert host.default == "127.0.0.1", f"{group} {cmd} binds {host.default}"


def test_the_emulator_rejects_a_body_over_its_limit_with_413() -> None:
    emu = Emulator(None)
    server = serve(emu, max_body_bytes=10_000)
    try:
        body = json.dumps(
            {"entities": [{"typeName": "DataSet", "attributes": {"qualifiedName": "x" * 20_000}}]}
        )
        r = requests.post(server.url + "/api/atlas/v2/entity/bulk", data=body, auth=("admin", "admin"),
                          headers={"Content-Type": "application/json"}, timeout=10)  # fmt: skip
        assert r.status_code == 413
        assert emu.store.conn.execute("SELECT count(*) FROM entities").fetchone()[0] == 0
    finally:
        server.shutdown()
        emu.close()


def test_the_openlineage_endpoint_requires_its_api_key_when_set() -> None:
    from atlas_sync.openlineage_server.endpoint import EndpointConfig, LineageEndpoint

    seen: list[str] = []
    endpoint = LineageEndpoint(lambda graph, job: seen.append(job), EndpointConfig(api_key="k3y"))
    event = json.dumps({"eventType": "COMPLETE", "job": {"namespace": "n", "name": "j"}}).encode()
    status, headers, _ = endpoint.submit(event, {"Authorization": "Bearer wrong"})
    assert status == 401 and headers.get("WWW-Authenticate") == "Bearer"
    status, _, _ = endpoint.submit(event, {})
    assert status == 401
    assert "k3y" not in repr(endpoint.config)
