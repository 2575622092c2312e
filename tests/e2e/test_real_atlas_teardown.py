"""``atlas-sync teardown`` against a real Apache Atlas (run by .ci/real-atlas.sh; skipped without ATLAS_URL).

* SIGKILLed at three points (once the first entities are DELETED, once about half are, once every
  one is and the purge runs) and run again: the domain ends empty, another domain as it was.
* Beside other writers (another domain's sync, and the same domain's other job, both running while it
  deletes): it completes, the other domain's sync lands whole, nothing outside the domain changes.

The domain is issue 15's workload at 32 processes (400 entities: 240 on the dataset side and 160 on
the process side, so 17 delete requests at the default 25 guids each). Counts by hand from
bench/issue_workload.py's rules.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.config import load_settings
from atlas_sync.factory import client_from_settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from issue_workload import entity_count, issue_graph  # noqa: E402

pytestmark = pytest.mark.skipif(not os.environ.get("ATLAS_URL"), reason="needs a real Atlas (ATLAS_URL)")

EXE = str(Path(sys.executable).with_name("atlas-sync"))
PROCESSES = 32
TYPES = ("lineage_dataset", "lineage_column", "lineage_process", "lineage_column_lineage")


def client() -> AtlasClient:
    return client_from_settings(load_settings())


def held(c: AtlasClient, domain: str) -> dict[str, tuple[str, str]]:
    """guid -> (status, typeName) of every entity of ``domain``, ACTIVE and DELETED."""
    flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@" + domain}
    out: dict[str, tuple[str, str]] = {}
    for t in TYPES:
        for h in c.search_basic(
            t, entity_filters=flt, exclude_deleted=False, attributes=["qualifiedName"], include_subtypes=False
        ):
            if str(h["attributes"]["qualifiedName"]).endswith("@" + domain):
                out[h["guid"]] = (h["status"], h["typeName"])
    return out


def versions(c: AtlasClient, domain: str) -> dict[str, Any]:
    """guid -> (status, updateTime, version) of the domain's entities: what a write would change."""
    guids = list(held(c, domain))
    return {
        e["guid"]: (e.get("status"), e.get("updateTime"), e.get("version"))
        for e in c.get_entities(guids, min_ext_info=True, ignore_relationships=True)
    }


def teardown(domain: str, *extra: str) -> subprocess.Popen[str]:
    cmd = [EXE, "teardown", "--domain", domain, "--purge", "--yes", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def sync(domain: str, path: Path) -> subprocess.Popen[str]:
    cmd = [EXE, "sync", "--domain", domain, "--from", "graph", "-q", str(path)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def write(tmp_path: Path, g: Any, name: str) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(g.to_document()), encoding="utf-8")
    return path


def test_a_teardown_killed_three_times_and_run_again_empties_the_domain_on_a_real_atlas() -> None:
    domain, kept = f"tk{uuid.uuid4().hex[:8]}", f"tq{uuid.uuid4().hex[:8]}"
    c = client()
    total = entity_count(PROCESSES)
    Publisher(c, domain=domain).sync(issue_graph(PROCESSES, job="nightly"))
    Publisher(c, domain=kept).sync(issue_graph(4, job="nightly"))
    before = versions(c, kept)
    try:
        assert len(held(c, domain)) == total

        def deleted(state: dict[str, tuple[str, str]]) -> int:
            return sum(1 for s, _ in state.values() if s == "DELETED")

        points = [
            ("the first entities are DELETED", lambda s: deleted(s) > 0),
            ("about half are DELETED", lambda s: deleted(s) >= len(s) // 2),
            ("every one is DELETED (the purge)", lambda s: deleted(s) == len(s) > 0),
        ]
        killed: list[str] = []
        for point, reached in points:
            proc = teardown(domain)
            deadline = time.monotonic() + 240
            while proc.poll() is None and time.monotonic() < deadline:
                if reached(held(c, domain)):
                    break
                time.sleep(0.2)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed.append(point)
            proc.wait(60)
            if not held(c, domain):
                break  # it finished before the kill: the next run has nothing to do
        assert len(killed) >= 2, f"killed only when {killed}: the teardown outran the test"
        final = teardown(domain, "--json")
        out, err = final.communicate(timeout=600)
        assert final.returncode == 0, err
        assert held(c, domain) == {}
        assert versions(c, kept) == before
    finally:
        Publisher(client(), domain=domain).teardown(purge=True)
        Publisher(client(), domain=kept).teardown(purge=True)


def test_a_teardown_beside_other_writers_completes_on_a_real_atlas(tmp_path: Path) -> None:
    domain, other, kept = (f"{p}{uuid.uuid4().hex[:8]}" for p in ("tw", "to", "tq"))
    c = client()
    j0 = issue_graph(PROCESSES, job="nightly")
    Publisher(c, domain=domain).sync(j0)
    Publisher(c, domain=kept).sync(issue_graph(4, job="nightly"))
    before = versions(c, kept)
    # the same domain's other job: reads three of nightly's source tables
    j1 = issue_graph(10, job="hourly", seed=1)
    for d in j0.datasets[:3]:
        j1.add_dataset(d.model_copy(deep=True))
        j1.processes[0].inputs.append(d.id)
    try:
        writers = [
            sync(other, write(tmp_path, issue_graph(PROCESSES, job="other", seed=2), "other")),
            sync(domain, write(tmp_path, j1, "hourly")),
        ]
        time.sleep(2)  # both writers are listing or writing when the teardown starts
        down = teardown(domain, "--json")
        out, err = down.communicate(timeout=600)
        assert down.returncode == 0, err
        for w in writers:
            w.wait(600)
        _, w_err = writers[0].communicate()
        assert writers[0].returncode == 0, w_err  # another domain's sync lands whole
        assert sum(1 for s, _ in held(c, other).values() if s == "ACTIVE") == entity_count(PROCESSES)
        # the other job of the domain may have written after the listing (or failed on a deleted
        # table): a second teardown takes what is left
        again = teardown(domain)
        _, err = again.communicate(timeout=600)
        assert again.returncode == 0, err
        assert held(c, domain) == {}
        assert versions(c, kept) == before
    finally:
        for d in (domain, other, kept):
            Publisher(client(), domain=d).teardown(purge=True)
