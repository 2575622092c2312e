"""`atlas-sync sync --from graph BIG.json` streams a big lineage document through the real CLI, against
the emulator served over HTTP (``atlas-sync emulator serve``): the domain ends with exactly the
workload's entities, a re-run writes nothing, and a bad item at the end of the document publishes
nothing.

Issue 15's workload (bench/issue_workload.py) under the ``lineage`` profile, counted by hand: N
processes write N datasets and read N/2 shared ones (1.5 N datasets), each with 4 columns; one
column-lineage entity per (process, output column): 1.5 N * 5 + N + 4 N = 12.5 N entities.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.atlas import AtlasClient

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from issue_workload import issue_graph  # noqa: E402

N = 1200
CHUNK = 250  # -> 5 chunks
ROOT_TYPES = "lineage_dataset,lineage_column,lineage_process,lineage_column_lineage"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "requests.jsonl"
    cmd = [sys.executable, "-m", "atlas_sync.cli.main", "emulator", "serve", "--memory", "--port", "0"]
    proc = subprocess.Popen([*cmd, "--request-log", str(log)], stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    url = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not url:
        line = proc.stderr.readline()
        if m := re.search(r"listening on (http://\S+)", line):
            url = m.group(1)
        elif not line and proc.poll() is not None:
            break
    try:
        assert url, "the emulator did not start"
        yield url, log
    finally:
        proc.terminate()
        proc.wait(10)


def sync(url: str, domain: str, path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ATLAS_URL=url, ATLAS_USERNAME="admin", ATLAS_PASSWORD="admin")
    for var in ("ATLAS_SYNC_CONFIG", "ATLAS_SYNC_PROFILE", "ATLAS_SYNC_DOMAIN", "ATLAS_SYNC_DATA_DIR"):
        env.pop(var, None)
    cmd = [sys.executable, "-m", "atlas_sync.cli.main", "sync", "--domain", domain, "--from", "graph"]
    cmd += [str(path), "-o", f"chunk_processes={CHUNK}", "--json"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)


def domain_count(url: str, domain: str) -> int:
    client = AtlasClient(url, auth=("admin", "admin"))
    flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@" + domain}
    return sum(1 for _ in client.search_basic(ROOT_TYPES, entity_filters=flt, attributes=["qualifiedName"]))


def entity_writes(log: Path) -> list[str]:
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["method"] in ("POST", "PUT", "DELETE") and "/v2/entity" in rec["path"]:
            out.append(f"{rec['method']} {rec['path']}")
    return out


def test_sync_of_a_big_graph_document_streams_to_exactly_its_entities_and_a_rerun_writes_nothing(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, log = server
    doc = tmp_path / "big.lineage.json"
    doc.write_text(json.dumps(issue_graph(N).to_document(), indent=2), encoding="utf-8")
    first = sync(url, "g", doc)
    assert first.returncode == 0, first.stderr[-3000:]
    assert json.loads(first.stdout)["plan"]["create"] == 12.5 * N
    assert domain_count(url, "g") == 12.5 * N
    writes_before = len(entity_writes(log))
    again = sync(url, "g", doc)
    assert again.returncode == 0, again.stderr[-3000:]
    result = json.loads(again.stdout)
    assert result["applied"] is None
    assert result["plan"]["unchanged"] == 12.5 * N
    assert len(entity_writes(log)) == writes_before
    assert domain_count(url, "g") == 12.5 * N


def test_a_bad_item_at_the_end_of_a_big_graph_document_publishes_nothing(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, log = server
    document = issue_graph(N).to_document()
    document["edges"][-1]["kind"] = "TELEPATHY"
    doc = tmp_path / "late.lineage.json"
    doc.write_text(json.dumps(document, indent=2), encoding="utf-8")
    res = sync(url, "late", doc)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    assert f"late.lineage.json: $.edges[{4 * N - 1}]: unknown dependency kind 'TELEPATHY'" in res.stderr
    # nothing written at all: no entity, not even the profile's typedefs (searches are POSTs that read)
    requests = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r for r in requests if r["method"] != "GET" and "/search/" not in r["path"]] == []


# --------------------------------------------------------------------------- same Atlas as a whole sync
def atlas_state(emu: Any, domain: str) -> tuple[dict[tuple[str, str], Any], set[tuple[Any, ...]]]:
    """ACTIVE entities of the domain (attributes as stored) and ACTIVE relationships between them,
    guids replaced by (type, qualifiedName) so two emulators compare."""
    conn = emu.store.conn
    keys = {r["guid"]: (r["type_name"], r["qualified_name"]) for r in conn.execute("SELECT * FROM entities")}
    ents = {
        (r["type_name"], r["qualified_name"]): json.loads(r["attrs"])
        for r in conn.execute("SELECT * FROM entities WHERE status = 'ACTIVE'")
        if (r["qualified_name"] or "").endswith("@" + domain)
    }
    rels = {
        (r["type_name"], keys.get(r["end1"]), keys.get(r["end2"]))
        for r in conn.execute("SELECT * FROM relationships WHERE status = 'ACTIVE'")
    }
    return ents, rels


def documents() -> Iterator[Any]:
    sys.path.insert(0, str(ROOT / "tests" / "unit"))
    from test_graph_reader_chunks import odd_document

    yield pytest.param(odd_document(), id="odd")
    yield pytest.param(
        ("spark-plan", ["spark/spark-plan-to-atlas.logical.txt"], {"mode": "operator"}), id="spark"
    )
    seatunnel = [
        "mysql_to_pg.conf",
        "sql_transform.conf",
        "two_jdbc_sources.conf",
        "multi_table_placeholders.conf",
    ]
    yield pytest.param(("seatunnel", [f"seatunnel/{f}" for f in seatunnel], {}), id="seatunnel")


@pytest.mark.parametrize("source", list(documents()))
@pytest.mark.parametrize("n", [1, 3])
def test_a_sync_of_the_chunks_leaves_atlas_as_a_sync_of_the_whole_read(tmp_path: Path, source: Any, n: int):
    from atlas_sync.api import Publisher
    from atlas_sync.emulator import Emulator
    from atlas_sync.factory import embedded_client
    from atlas_sync.lineage import registry
    from atlas_sync.lineage.readers.graph import READER

    if isinstance(source, tuple):
        reader, files, options = source
        source = registry.read(
            reader, [str(ROOT / "tests" / "data" / f) for f in files], **options
        ).to_document()
    path = tmp_path / "doc.lineage.json"
    path.write_text(json.dumps(source), encoding="utf-8")
    whole_emu, chunked_emu = Emulator(None), Emulator(None)
    chunks = list(READER.read_chunks([str(path)], chunk_processes=n))
    assert len(chunks) > 1
    Publisher(embedded_client(emulator=whole_emu), profile="lineage", domain="w").sync(
        READER.read([str(path)])
    )
    Publisher(embedded_client(emulator=chunked_emu), profile="lineage", domain="w").sync_chunks(iter(chunks))
    whole = atlas_state(whole_emu, "w")
    assert whole[0], "nothing published"
    assert atlas_state(chunked_emu, "w") == whole
