"""Interruption and concurrency against an HTTP emulator with latency, through the real CLI.

* A ``atlas-sync sync`` process is killed with SIGKILL at a random moment while it applies; the next
  sync converges to exactly the desired state.
* Two ``atlas-sync sync`` processes of different jobs of one domain (sharing one input dataset) run at
  the same time; both end correct.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator import Emulator, EmulatorServer, serve

from .helpers import assert_exact_state, expected_keys, graph_a, graph_b, rows

DOMAIN = "rel"
EXE = str(Path(sys.executable).with_name("atlas-sync"))


@pytest.fixture()
def server() -> Iterator[EmulatorServer]:
    emu = Emulator(None)
    srv = serve(emu)
    try:
        yield srv
    finally:
        srv.shutdown()
        emu.close()


def _cli_sync(url: str, doc_path: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "ATLAS_PASSWORD": "admin", "ATLAS_RETRIES": "2", "ATLAS_SYNC_BATCH_SIZE": "40"}
    env.pop("ATLAS_URL", None)
    cmd = [EXE, "sync", "--url", url, "--domain", DOMAIN, "--from", "graph", "-q", str(doc_path), *extra]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _write(tmp_path: Path, graph, name: str) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(graph.to_document()), encoding="utf-8")
    return path


def _entity_writes(emu: Emulator) -> int:
    return sum(1 for r in emu.request_log if r.method in ("POST", "DELETE") and "/v2/entity" in r.path)


@pytest.mark.parametrize("mode", [[], ["--stream"]], ids=["whole", "streamed"])
def test_a_sync_killed_during_apply_is_completed_by_the_next_sync(server, tmp_path, mode) -> None:
    emu = server.emulator
    a = graph_a(200, job=0)
    b = graph_b(a)
    client = AtlasClient(server.url, auth=("admin", "admin"))
    Publisher(client, domain=DOMAIN).sync(a)
    # Each write request takes 30 ms + 0.5 ms per entity: an apply of several batches lasts long
    # enough to be cut in the middle.
    emu.set_latency(30, 0.5)
    rng = random.Random(11)
    killed_mid_apply = 0
    for attempt in range(4):
        target = a if attempt % 2 else b  # alternate so that every round has work to do
        path = _write(tmp_path, target, f"round{attempt}")
        emu.clear_log()
        proc = _cli_sync(server.url, path, *mode)
        deadline = time.monotonic() + 60
        while _entity_writes(emu) == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.25))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed_mid_apply += 1
        proc.wait(30)
        # the next sync (no faults) converges
        emu.set_latency(0, 0)
        nxt = _cli_sync(server.url, path, *mode)
        out, err = nxt.communicate(timeout=120)
        assert nxt.returncode == 0, err
        assert_exact_state(emu, target, DOMAIN)
        again = _cli_sync(server.url, path, "--json", *mode)
        out, err = again.communicate(timeout=120)
        assert again.returncode == 0, err
        assert json.loads(out)["applied"] is None, "a converged domain needs no writes"
        emu.set_latency(30, 0.5)
    assert killed_mid_apply >= 2, "the kills landed after the syncs had finished; slow the emulator down"


def test_two_jobs_of_one_domain_synced_at_the_same_time_both_end_correct(server, tmp_path) -> None:
    emu = server.emulator
    emu.set_latency(10, 0.1)
    j0 = graph_a(150, job=0)
    j1 = graph_a(150, job=1)
    # job1 also reads one of job0's source tables: both syncs want that dataset to exist
    shared = j0.datasets[0]
    j1.add_dataset(shared.model_copy(deep=True))
    j1.processes[0].inputs.append(shared.id)
    p0 = _cli_sync(server.url, _write(tmp_path, j0, "j0"))
    p1 = _cli_sync(server.url, _write(tmp_path, j1, "j1"))
    for p in (p0, p1):
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    active = [r for r in rows(emu, DOMAIN) if r["status"] == "ACTIVE"]
    keys = Counter((r["type_name"], r["qualified_name"]) for r in active)
    assert [k for k, n in keys.items() if n > 1] == []
    assert set(keys) == expected_keys(j0, DOMAIN) | expected_keys(j1, DOMAIN)
    owner = {(r["type_name"], r["qualified_name"]): r["attrs"]["atlasSyncJob"] for r in active}
    assert owner[("lineage_dataset", f"{shared.id}@{DOMAIN}")] in ("job0000", "job0001")
    # each job re-synced alone now has nothing to do
    for g in (j0, j1):
        result = Publisher(AtlasClient(server.url, auth=("admin", "admin")), domain=DOMAIN).plan(g)
        assert not result.has_changes, f"{g.job}: {result.counts}"
