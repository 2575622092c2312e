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
