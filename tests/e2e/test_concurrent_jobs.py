"""Eight jobs of one domain synced at the same moment, sharing datasets, through the real CLI.

A job's sync reads only what it owns and looks the shared datasets up by name, so two jobs may both
find a shared dataset missing and both create it: Atlas matches entities by qualifiedName, so they
still end with one entity, one owner, and both jobs' lineage. One of the syncs is killed with SIGKILL
while it writes and is run again. Runs over HTTP against the emulator and, with ``ATLAS_URL`` (CI's
real-Atlas step), against a real Atlas.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.config import load_settings
from atlas_sync.emulator import Emulator
from atlas_sync.emulator.http import serve
from atlas_sync.factory import client_from_settings
from atlas_sync.reconcile.bookkeeping import scope_key

JOBS = 8
EXE = str(Path(sys.executable).with_name("atlas-sync"))
SHARED = ["raw.customers", "raw.orders", "raw.regions"]


def job_doc(i: int) -> dict[str, Any]:
    """Job ``i`` reads two of the shared tables (every pair is read by several jobs) and writes its own."""
    reads = [SHARED[i % 3], SHARED[(i + 1) % 3]]
    out = f"mart.report_{i}"
    cols = ["id", "amount"]

    def ds(ds_id: str) -> dict[str, Any]:
        ns, name = ds_id.split(".")
        return {"id": ds_id, "namespace": ns, "name": name, "columns": cols}

    return {
        "datasets": [ds(r) for r in reads] + [ds(out)],
        "processes": [{"id": "build", "name": "build", "inputs": reads, "outputs": [out]}],
        "edges": [
            {"source": f"{reads[0]}.id", "target": f"{out}.id", "kind": "IDENTITY", "process": "build"},
            {
                "source": f"{reads[1]}.amount",
                "target": f"{out}.amount",
                "kind": "AGGREGATION",
                "process": "build",
            },
        ],
    }


@pytest.fixture(params=["emulator", "real"])
def client(request: pytest.FixtureRequest) -> Iterator[AtlasClient]:
    """The emulator over HTTP with racing creates (a create within 2 s of another request's create of
    the same name makes a second entity, as a real Atlas does under concurrent transactions), or the
    real Atlas that ``ATLAS_URL`` names."""
    if request.param == "real":
        if not os.environ.get("ATLAS_URL"):
            pytest.skip("needs a real Atlas (ATLAS_URL)")
        yield client_from_settings(load_settings())
        return
    emu = Emulator()
    emu.set_racing_creates(2000)
    server = serve(emu)
    try:
        yield AtlasClient(server.url, auth=("admin", "admin"))
    finally:
        server.shutdown()
        emu.close()


@pytest.fixture
def domain(client: AtlasClient) -> Iterator[str]:
    name = "cj" + uuid.uuid4().hex[:10]
    yield name
    Publisher(client, domain=name).teardown(purge=True)


def _env(client: AtlasClient) -> dict[str, str]:
    env = {**os.environ, "ATLAS_URL": client.base_url, "ATLAS_RETRIES": "6"}
    if not os.environ.get("ATLAS_URL"):  # the emulator's user; a real Atlas's come from the environment
        env.update(ATLAS_USERNAME="admin", ATLAS_PASSWORD="admin")
    return env


def _sync(client: AtlasClient, domain: str, path: Path, job: str) -> subprocess.Popen[str]:
    cmd = [EXE, "sync", "--domain", domain, "--job", job, "--from", "graph", "-q", "--json", str(path)]
    return subprocess.Popen(cmd, env=_env(client), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _domain(client: AtlasClient, domain: str) -> list[dict[str, Any]]:
    by_key = {"attributeName": "atlasSyncKey", "operator": "startsWith", "attributeValue": scope_key(domain)}
    out: list[dict[str, Any]] = []
    for t in ("lineage_dataset", "lineage_column", "lineage_process", "lineage_column_lineage"):
        out += client.search_basic(t, entity_filters=by_key, attributes=["qualifiedName", "atlasSyncJob"])
    return out


def test_eight_jobs_sharing_datasets_at_once_end_with_one_entity_one_owner_and_every_lineage(
    client: AtlasClient, domain: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if os.environ.get("ATLAS_URL") and "real" in request.node.name:
        # On the launcher's Atlas 2.1.0, 24 of 25 runs pass since the settle makes Atlas find the kept
        # copy by name again (RA-32 in docs/real-atlas-differences.md). The other one: a sync's
        # reference by name, sent again after its guid was deleted, came in the moment between the
        # other sync's delete and its renaming (404). Waiting and trying again made the emulator's
        # harsher race fail more often, so it is not done; kept an expected failure until then.
        request.applymarker(
            pytest.mark.xfail(
                reason="Atlas 2.1.0 may keep two copies of a dataset two syncs created at once", strict=False
            )
        )
    paths = []
    for i in range(JOBS):
        paths.append(tmp_path / f"job{i}.json")
        paths[-1].write_text(json.dumps(job_doc(i)), encoding="utf-8")
    Publisher(client, domain=domain).ensure_typedefs()  # (all eight would register them too)
    procs = [_sync(client, domain, p, f"job{i}") for i, p in enumerate(paths)]
    # one of them is killed as soon as its first write landed (its process comes in a later batch), while
    # the others write; it is run again afterwards
    deadline = time.monotonic() + 120
    while procs[3].poll() is None and time.monotonic() < deadline:
        if client.get_entity_by_unique("lineage_dataset", f"mart.report_3@{domain}") is not None:
            break
        time.sleep(0.01)
    procs[3].send_signal(signal.SIGKILL)
    for i, p in enumerate(procs):
        _, err = p.communicate(timeout=300)
        if i != 3:
            assert p.returncode == 0, f"job{i}: {err}"
    again = _sync(client, domain, paths[3], "job3")
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err

    headers = [h for h in _domain(client, domain) if h.get("status", "ACTIVE") == "ACTIVE"]
    names = Counter((h["typeName"], h["attributes"]["qualifiedName"]) for h in headers)
    twice = {
        k: [
            (h["guid"], h["attributes"].get("atlasSyncJob"))
            for h in headers
            if h["attributes"]["qualifiedName"] == k[1]
        ]
        for k, n in names.items()
        if n > 1
    }
    assert twice == {}
    # 3 shared tables + 8 reports, 2 columns each; 8 processes with 2 column lineages each
    kinds = Counter(t for t, _ in names)
    assert kinds == {
        "lineage_dataset": 11,
        "lineage_column": 22,
        "lineage_process": 8,
        "lineage_column_lineage": 16,
    }
    owners = {h["attributes"]["qualifiedName"]: h["attributes"].get("atlasSyncJob") for h in headers}
    for table in SHARED:
        assert owners[f"{table}@{domain}"] in {f"job{i}" for i in range(JOBS)}
    by_guid = {h["guid"]: h["attributes"]["qualifiedName"] for h in headers}
    for i in range(JOBS):
        proc = client.get_entity_by_unique("lineage_process", f"job{i}:build@{domain}")
        assert proc is not None
        inputs = {
            by_guid[r["guid"]]
            for r in proc["relationshipAttributes"]["inputs"]
            if r.get("relationshipStatus", "ACTIVE") == "ACTIVE"
        }
        assert inputs == {f"{SHARED[i % 3]}@{domain}", f"{SHARED[(i + 1) % 3]}@{domain}"}
    # every job re-synced now writes nothing
    for i, p in enumerate(paths):
        out, err = _sync(client, domain, p, f"job{i}").communicate(timeout=300)
        assert json.loads(out)["applied"] is None, f"job{i}: {out} {err}"
