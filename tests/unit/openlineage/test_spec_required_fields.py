"""The OpenLineage spec's `eventTime` and UUID `runId` are required, unless the user opts out (issue 39 item 11).

`openlineage serve` accepted and published an event with no `eventTime`, or a `runId` that is not a
UUID: both are required by the spec (BaseEvent.eventTime, Run.runId format uuid). Now the endpoint
answers 400 naming the field, the file reader errors the same way, and `--lenient-events`
(`-o lenient_events=true` for the reader) accepts them.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from atlas_sync.errors import InputError
from atlas_sync.lineage.openlineage import validate_event

RUN = "0193f5d2-7c1e-7b7a-9c55-3c7f1e2a9b01"


def _event(**changes: Any) -> dict[str, Any]:
    ev: dict[str, Any] = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-30T06:00:12.000Z",
        "producer": "test",
        "run": {"runId": RUN},
        "job": {"namespace": "etl", "name": "daily"},
        "inputs": [{"namespace": "pg://db:5432", "name": "shop.public.orders"}],
        "outputs": [{"namespace": "pg://db:5432", "name": "shop.public.revenue"}],
    }
    for key, value in changes.items():
        if value is None:
            del ev[key]
        else:
            ev[key] = value
    return ev


NO_TIME = _event(eventTime=None)
BAD_TIME = _event(eventTime="yesterday")
BAD_RUN = _event(run={"runId": "r1"})


@pytest.mark.parametrize(
    ("event", "path", "message"),
    [
        (NO_TIME, "$", "RunEvent: 'eventTime' is required"),
        (BAD_TIME, "$.eventTime", "RunEvent: eventTime 'yesterday' is not an ISO 8601 date-time"),
        (BAD_RUN, "$.run.runId", "RunEvent: runId 'r1' is not a UUID"),
        ({"job": {"namespace": "n", "name": "j"}}, "$", "JobEvent: 'eventTime' is required"),
    ],
)
def test_the_spec_s_required_fields_are_errors_naming_the_field(event: Any, path: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        validate_event(event, file="ev.json")
    assert info.value.path == path
    assert str(info.value) == f"ev.json: {path}: {message}"
    assert "--lenient-events" in (info.value.hint or "")
    validate_event(event, file="ev.json", lenient_events=True)  # the user's choice


def test_a_spec_valid_event_passes() -> None:
    validate_event(_event())


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(cwd / "data")},
    )


def test_the_file_reader_errors_the_same_way_unless_told_lenient(tmp_path: Path) -> None:
    (tmp_path / "ev.json").write_text(json.dumps(BAD_RUN), encoding="utf-8")
    proc = _cli(["lineage", "openlineage", "ev.json", "--format", "text"], tmp_path)
    assert proc.returncode != 0
    assert "ev.json: $.run.runId: RunEvent: runId 'r1' is not a UUID" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = _cli(
        ["lineage", "openlineage", "ev.json", "--format", "text", "-o", "lenient_events=true"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "shop.public.revenue" in proc.stdout


def _serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
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
            *args,
        ],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data")},
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    m = re.search(r"(http://127\.0\.0\.1:\d+)/api/v1/lineage", line)
    assert m, line
    return proc, m.group(1)


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return err


def test_serve_answers_400_naming_the_field_and_publishes_nothing(tmp_path: Path) -> None:
    proc, url = _serve(tmp_path)
    try:
        r = requests.post(url + "/api/v1/lineage", json=NO_TIME, timeout=30)
        assert r.status_code == 400
        assert r.json() == {"error": "$: RunEvent: 'eventTime' is required", "path": "$"}
        r = requests.post(url + "/api/v1/lineage", json=[_event(), BAD_RUN], timeout=30)
        assert r.status_code == 400
        assert r.json()["path"] == "$[1].run.runId"
        assert "is not a UUID" in r.json()["error"]
        assert requests.get(url + "/api/v1/metrics", timeout=30).json()["accepted"] == 0
    finally:
        err = _stop(proc)
    assert "stopped: accepted 0, synced 0" in err


def test_serve_with_lenient_events_accepts_and_publishes_them(tmp_path: Path) -> None:
    proc, url = _serve(tmp_path, "--lenient-events")
    try:
        r = requests.post(url + "/api/v1/lineage", json=NO_TIME, timeout=30)
        assert r.status_code == 201, r.text
        deadline = time.monotonic() + 60
        while requests.get(url + "/api/v1/metrics", timeout=30).json()["synced"] < 1:
            assert time.monotonic() < deadline, "event not synced"
            time.sleep(0.05)  # polling the server's own count, not a guess at timing
    finally:
        _stop(proc)
    show = _cli(["show", "-d", "demo"], tmp_path)
    assert "<- shop.public.orders" in show.stdout and "-> shop.public.revenue" in show.stdout, show.stderr
