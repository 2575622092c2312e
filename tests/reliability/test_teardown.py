"""Teardown stopped and contended, through the real CLI against an emulator served over HTTP.

* ``atlas-sync teardown --purge`` SIGKILLed at several points (after the first delete request, among
  the dataset deletes, during the purge) and run again: the domain ends empty, every other domain as
  it was.
* A teardown beside other writers in the emulator's contention mode (a write touching an entity of
  a write in flight gets Atlas's lock-timeout 500): beside another domain's sync and beside the same
  domain's other job. The teardown backs off and completes; nothing outside its domain changes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator import Emulator, EmulatorServer, serve

from .helpers import graph_a, rows, snapshot

EXE = str(Path(sys.executable).with_name("atlas-sync"))
DOMAIN = "down"


@pytest.fixture()
def server() -> Iterator[EmulatorServer]:
    emu = Emulator(None)
    srv = serve(emu)
    try:
        yield srv
    finally:
        srv.shutdown()
        emu.close()


def _env() -> dict[str, str]:
    env = {**os.environ, "ATLAS_PASSWORD": "admin", "ATLAS_RETRIES": "3"}
    env.pop("ATLAS_URL", None)
    return env


def _teardown(url: str, *extra: str) -> subprocess.Popen[str]:
    cmd = [
        EXE,
        "teardown",
        "--url",
        url,
        "--domain",
        DOMAIN,
        "--purge",
        "--yes",
        "--delete-batch",
        "10",
        *extra,
    ]
    return subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _count(emu: Emulator, method: str, path: str) -> int:
    return sum(1 for r in emu.request_log if r.method == method and r.path.startswith(path))


def _other_domain(emu: Emulator) -> dict[str, tuple[str, str, int]]:
    return snapshot(emu, lambda r: not r["qualified_name"].endswith("@" + DOMAIN))


@pytest.mark.parametrize(
    ("point", "method", "path", "n"),
    [
        ("after the first delete", "DELETE", "/api/atlas/v2/entity/bulk", 1),
        ("among the dataset deletes", "DELETE", "/api/atlas/v2/entity/bulk", 6),
        ("after the last delete, in the purge", "DELETE", "/api/atlas/v2/entity/bulk", 0),
    ],
)
def test_a_teardown_killed_midway_and_run_again_finishes_the_job(server, point, method, path, n) -> None:
    emu = server.emulator
    client = AtlasClient(server.url, auth=("admin", "admin"))
    g = graph_a(300, job=0)
    Publisher(client, domain=DOMAIN).sync(g)
    Publisher(client, domain="kept").sync(graph_a(60, job=1))
    kept = _other_domain(emu)
    total = len(rows(emu, DOMAIN))
    n = n or Publisher(client, domain=DOMAIN).plan_teardown(batch_size=10).counts["delete_requests"]
    # each delete and purge takes 40 ms + 1 ms per entity: the kill lands in the middle
    emu.set_latency(40, 1.0)
    emu.clear_log()
    # the purge is one request: it is held unanswered (and not applied) until the kill, so a loaded
    # machine cannot let it end between the last delete and the kill
    held = (
        emu.inject_fault("timeout", at=1, method="PUT", path_prefix="/api/atlas/admin/purge")
        if point.endswith("in the purge")
        else None
    )
    proc = _teardown(server.url)
    deadline = time.monotonic() + 60
    while _count(emu, method, path) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    while held is not None and not held.fired and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert proc.poll() is None, f"the teardown ended before the kill point ({point}): {proc.communicate()}"
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    left = rows(emu, DOMAIN)
    assert len(left) > 0 and (len(left) < total or any(r["status"] == "DELETED" for r in left)), point
    emu.set_latency(0, 0)
    again = _teardown(server.url, "--json")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert rows(emu, DOMAIN) == []
    assert _other_domain(emu) == kept
    # and a third run has nothing to do
    third = _teardown(server.url, "--plan")
    out, err = third.communicate(timeout=60)
    assert third.returncode == 0 and "nothing to delete" in out, out + err


def _sync(url: str, domain: str, path: Path) -> subprocess.Popen[str]:
    env = {**_env(), "ATLAS_SYNC_BATCH_SIZE": "20", "ATLAS_RETRIES": "6"}
    cmd = [EXE, "sync", "--url", url, "--domain", domain, "--from", "graph", "-q", str(path)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("writer", ["another domain", "the same domain's other job"])
def test_a_teardown_beside_a_writer_backs_off_and_completes(server, tmp_path, writer) -> None:
    import json

    emu = server.emulator
    client = AtlasClient(server.url, auth=("admin", "admin"))
    # on before the domain is written: the model learns which guid is which entity from the writes
    contention = emu.set_contention(hold_ms=150)
    assert contention is not None
    j0 = graph_a(300, job=0)
    Publisher(client, domain=DOMAIN).sync(j0)
    # the writer: a new job of 800 entities in batches of 20, each write holding its entities 150 ms
    j1 = graph_a(800, job=1)
    if writer != "another domain":
        shared = j0.datasets
        for d in shared:  # every process of job1 also reads 3 of job0's tables: both touch them
            j1.add_dataset(d.model_copy(deep=True))
        for i, proc in enumerate(j1.processes):
            proc.inputs.extend(shared[(3 * i + k) % len(shared)].id for k in range(3))
    target = "busy" if writer == "another domain" else DOMAIN
    Publisher(client, domain="kept").sync(graph_a(60, job=2))
    kept = snapshot(emu, lambda r: r["qualified_name"].endswith("@kept"))
    doc = tmp_path / "j1.json"
    doc.write_text(json.dumps(j1.to_document()), encoding="utf-8")
    emu.set_latency(5, 0.2)
    emu.clear_log()
    writing = _sync(server.url, target, doc)
    deadline = time.monotonic() + 30
    while _count(emu, "POST", "/api/atlas/v2/entity/bulk") == 0 and time.monotonic() < deadline:
        time.sleep(0.002)
    down = _teardown(server.url, "--json")
    out, err = down.communicate(timeout=180)
    assert down.returncode == 0, err
    result = json.loads(out)
    w_out, w_err = writing.communicate(timeout=180)
    emu.set_contention(False)
    if writer == "another domain":
        assert writing.returncode == 0, w_err
        assert result["deleted"] == result["purged"] == len(_keys(j0))
        assert rows(emu, DOMAIN) == []
        assert {
            r["qualified_name"] for r in rows(emu, "busy") if r["status"] == "ACTIVE"
        }  # the writer's, kept
    else:
        # what the teardown listed is gone; what the other job wrote after the listing may remain:
        # a second teardown takes it, and the domain is empty
        again = _teardown(server.url)
        _, err = again.communicate(timeout=120)
        assert again.returncode == 0, err
        assert rows(emu, DOMAIN) == []
    assert snapshot(emu, lambda r: r["qualified_name"].endswith("@kept")) == kept
    if writer != "another domain":  # the emulator's locks are per entity: only shared ones collide
        assert contention.collisions >= 1, "the teardown never met the writer: the test proves nothing"


def _keys(g) -> list[str]:
    from .helpers import expected_keys

    return sorted(qn for _, qn in expected_keys(g, DOMAIN))


@pytest.mark.parametrize(
    ("point", "method", "path"),
    [
        ("in its teardown", "DELETE", "/api/atlas/v2/entity/bulk"),
        ("in its sync", "POST", "/api/atlas/v2/entity/bulk"),
    ],
)
def test_a_rebuild_killed_midway_and_run_again_ends_with_exactly_the_input(
    server, tmp_path, point, method, path
):
    import json

    from .helpers import assert_exact_state

    emu = server.emulator
    client = AtlasClient(server.url, auth=("admin", "admin"))
    old = graph_a(300, job=0)
    Publisher(client, domain=DOMAIN).sync(old)
    Publisher(client, domain="kept").sync(graph_a(60, job=1))
    kept = _other_domain(emu)
    new = graph_a(250, job=0, seed=9)  # another shape: what the rebuild must leave
    doc = tmp_path / "new.json"
    doc.write_text(json.dumps(new.to_document()), encoding="utf-8")
    env = {**_env(), "ATLAS_SYNC_BATCH_SIZE": "20"}
    cmd = [EXE, "rebuild", "--url", server.url, "--domain", DOMAIN, "--from", "graph", "--yes", "-q"]
    cmd += ["--delete-batch", "10", "--job", new.job, str(doc)]
    emu.set_latency(30, 0.5)
    emu.clear_log()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _count(emu, method, path) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert proc.poll() is None, f"the rebuild ended before the kill point ({point}): {proc.communicate()}"
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    emu.set_latency(0, 0)
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert_exact_state(emu, new, DOMAIN)
    assert {r["status"] for r in rows(emu, DOMAIN)} == {"ACTIVE"}  # the old entities are purged
    assert _other_domain(emu) == kept
