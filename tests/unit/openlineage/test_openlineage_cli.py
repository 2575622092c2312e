"""``atlas-sync openlineage serve`` as a user runs it: a process, events in, SIGTERM out."""

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

SPARK = Path(__file__).parents[2] / "data" / "openlineage" / "spark_complete.json"


def start(tmp_path, *args, env=None):
    env_cmd = [sys.executable, "-m", "atlas_sync.cli.main", "openlineage", "serve", "--port", "0", *args]
    proc = subprocess.Popen(
        env_cmd,
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env or {"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data")},
    )
    line = proc.stderr.readline()
    m = re.search(r"(http://127\.0\.0\.1:\d+)/api/v1/lineage", line)
    assert m, line + proc.stderr.read()
    return proc, m.group(1)


def test_serve_syncs_an_event_and_stops_cleanly_on_sigterm(tmp_path):
    key = tmp_path / "key"
    key.write_text("k3y\n")
    proc, url = start(tmp_path, "--domain", "demo", "--api-key-file", str(key))
    try:
        r = requests.post(
            url + "/api/v1/lineage", data=SPARK.read_bytes(), headers={"Authorization": "Bearer k3y"}
        )
        assert r.status_code == 201
        deadline = time.monotonic() + 30
        while requests.get(url + "/api/v1/metrics").json()["synced"] < 1:
            assert time.monotonic() < deadline, "event not synced"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "stopped: accepted 1, synced 1" in err
    assert "k3y" not in err + out
    # the embedded emulator holds the job's process now
    show = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", "show", "-d", "demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data")},
    )
    assert "daily_revenue.execute_insert_into_hive_table" in show.stdout, show.stderr


def test_serve_without_domain_is_a_usage_error(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", "openlineage", "serve", "--port", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert r.returncode != 0 and "--domain" in r.stderr and "Traceback" not in r.stderr


def test_unknown_event_type_is_rejected(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "atlas_sync.cli.main",
            "openlineage",
            "serve",
            "-d",
            "x",
            "--event-types",
            "DONE",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert r.returncode != 0 and "DONE" in r.stderr


def test_events_answered_201_survive_a_sigkill_and_reach_atlas_after_the_restart(tmp_path):
    # the report of issue 16: five events accepted in front of a slow Atlas, then kill -9
    from atlas_sync.atlas import AtlasClient
    from atlas_sync.emulator import Emulator, serve

    emu = Emulator(None)
    atlas = serve(emu)
    emu.set_latency(400, 0)  # every Atlas request takes 0.4 s: nothing is synced before the kill
    env = {"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data"), "ATLAS_PASSWORD": "admin"}
    args = ("--domain", "demo", "--url", atlas.url)
    try:
        proc, url = start(tmp_path, *args, env=env)
        ev = json.loads(SPARK.read_text())
        for i in range(5):
            ev["job"]["name"] = f"job{i}"
            assert requests.post(url + "/api/v1/lineage", json=ev).status_code == 201
        proc.kill()
        proc.communicate(timeout=30)
        written = "SELECT count(*) FROM entities WHERE type_name = 'lineage_process'"
        assert emu.store.conn.execute(written).fetchone()[0] == 0  # killed before any sync
        emu.set_latency(0, 0)
        proc, url = start(tmp_path, *args, env=env)
        assert "replaying 5 accepted events from the journal" in proc.stderr.readline()
        try:
            deadline = time.monotonic() + 60
            while (m := requests.get(url + "/api/v1/metrics").json())["journal_depth"]:
                assert time.monotonic() < deadline, m
                time.sleep(0.05)
            assert m["replayed"] == 5 and m["synced"] == 5
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
        assert (tmp_path / "data" / "openlineage-journal.sqlite").exists()
        client = AtlasClient(atlas.url, auth=("admin", "admin"))
        jobs = sorted(h["attributes"]["qualifiedName"] for h in client.search_basic("lineage_process"))
        assert jobs == [f"spark-prod/job{i}@demo" for i in range(5)]
    finally:
        atlas.shutdown()
        emu.close()


def test_a_second_endpoint_on_the_same_journal_is_refused(tmp_path):
    proc, _ = start(tmp_path, "--domain", "demo")
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "atlas_sync.cli.main",
                "openlineage",
                "serve",
                "--port",
                "0",
                "-d",
                "demo",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data")},
            timeout=60,
        )
        assert r.returncode != 0 and "in use by another process" in r.stderr and "Traceback" not in r.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def _emulator_process(tmp_path, port, env):
    proc = subprocess.Popen(
        [sys.executable, "-m", "atlas_sync.cli.main", "emulator", "serve", "--memory", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    for _ in range(5):
        m = re.search(r"listening on (http://\S+)", proc.stderr.readline())
        if m:
            return proc, m.group(1)
    proc.kill()
    raise AssertionError("the emulator did not start")


def test_serve_over_tls_with_an_api_key_reports_readiness_and_prometheus_metrics(tmp_path):
    """The production setup: HTTPS, an API key, an Atlas process that dies and comes back."""
    import socket

    import trustme
    from prometheus_client.parser import text_string_to_metric_families

    ca = trustme.CA()
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(tmp_path / "tls.pem"))
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    (tmp_path / "key").write_text("k3y\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        atlas_port = s.getsockname()[1]
    env = {"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data"), "ATLAS_PASSWORD": "admin"}
    atlas, atlas_url = _emulator_process(tmp_path, atlas_port, env)
    cmd = [sys.executable, "-m", "atlas_sync.cli.main", "openlineage", "serve", "--port", "0", "-d", "demo"]
    cmd += ["--url", atlas_url, "--api-key-file", str(tmp_path / "key")]
    cmd += ["--ssl-certfile", str(tmp_path / "tls.pem"), "--ssl-keyfile", str(tmp_path / "tls.pem")]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        line = proc.stderr.readline()
        m = re.search(r"(https://127\.0\.0\.1:\d+)/api/v1/lineage", line)
        assert m, line + proc.stderr.read()
        url, ca_file = m.group(1), str(tmp_path / "ca.pem")
        assert requests.get(url + "/ready", verify=ca_file, timeout=10).status_code == 200
        atlas.kill()  # Atlas goes away: not ready
        atlas.wait(10)
        deadline = time.monotonic() + 30
        while (r := requests.get(url + "/ready", verify=ca_file, timeout=10)).status_code != 503:
            assert time.monotonic() < deadline, r.text
            time.sleep(0.1)
        assert "Atlas unreachable" in r.json()["reasons"][0]
        r = requests.post(
            url + "/api/v1/lineage",
            data=SPARK.read_bytes(),
            headers={"Authorization": "Bearer k3y", "Content-Type": "application/json"},
            verify=ca_file,
            timeout=10,
        )
        assert r.status_code == 201  # accepted all the same: it waits in the journal
        atlas, _ = _emulator_process(tmp_path, atlas_port, env)  # back
        while requests.get(url + "/ready", verify=ca_file, timeout=10).status_code != 200:
            assert time.monotonic() < deadline + 30, "not ready again"
            time.sleep(0.1)
        while requests.get(url + "/api/v1/metrics", verify=ca_file, timeout=10).json()["synced"] < 1:
            assert time.monotonic() < deadline + 90, "not synced"
            time.sleep(0.1)
        text = requests.get(url + "/metrics", verify=ca_file, timeout=10).text
        samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
        value = {s.name: s.value for s in samples if not s.labels}
        assert value["atlas_sync_openlineage_events_synced_total"] == 1
        # the sync met a dead Atlas: the client's own retries carried it over (no failed attempt)
        retries = sum(
            s.value for s in samples if s.name == "atlas_sync_openlineage_atlas_request_retries_total"
        )
        assert retries >= 1
        assert value["atlas_sync_openlineage_ready"] == 1
        writes = [
            s.value for s in samples
            if s.name == "atlas_sync_openlineage_atlas_requests_total" and s.labels["kind"] == "entity_write"
        ]  # fmt: skip
        assert writes and writes[0] >= 1
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        atlas.kill()
        atlas.wait(10)
    assert proc.returncode == 0, err
    assert "k3y" not in out + err


def test_a_certificate_without_its_key_is_a_usage_error(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "atlas_sync.cli.main",
            "openlineage",
            "serve",
            "-d",
            "x",
            "--ssl-certfile",
            "c.pem",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert r.returncode != 0 and "--ssl-keyfile" in r.stderr and "Traceback" not in r.stderr
