"""Shared helpers of the reliability tests: workloads, expected state derived by hand, emulator state.

Expected qualified names follow the ``lineage`` profile's naming rules as written in docs/profiles.md
(not the renderer's output): dataset ``<id>@<domain>``, column ``<id>.<column>@<domain>``, process
``<job>:<process id>@<domain>`` (a job with several processes), direct column lineage
``<job>:<process id>:<dataset id>.<column>@<domain>``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from atlas_sync.atlas import AtlasClient, RetryPolicy
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import Dataset, LineageGraph, Process

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from issue_workload import issue_graph  # noqa: E402, F401  (re-exported for the tests)
from workload import change_fraction, job_graph, shape_for_entities  # noqa: E402

Key = tuple[str, str]


def graph_a(entities: int = 200, job: int = 0, seed: int = 7) -> LineageGraph:
    """A job's graph of about ``entities`` entities."""
    return job_graph(shape_for_entities(entities, seed=seed), job)


def graph_b(a: LineageGraph) -> LineageGraph:
    """``a`` changed in every way a sync handles: 30% of column types changed (updates), the last
    process and its output datasets dropped (deletes), a new process writing a new dataset (creates)."""
    b, _ = change_fraction(a, 0.3, seed=3)
    last = b.processes[-1]
    dropped = set(last.outputs)
    b.processes = b.processes[:-1]
    b.datasets = [d for d in b.datasets if d.id not in dropped]
    b.edges = [e for e in b.edges if e.process != last.id]
    src = b.datasets[0]
    new_ds = Dataset(id=f"{src.namespace}.fresh", namespace=src.namespace, name="fresh", columns=src.columns)
    b.add_dataset(new_ds)
    b.add_process(Process(id="fresh_step", name="fresh step", inputs=[src.id], outputs=[new_ds.id]))
    return b


def expected_keys(graph: LineageGraph, domain: str) -> set[Key]:
    """The (type, qualifiedName) pairs the lineage profile must produce for ``graph`` (hand-derived)."""
    job = graph.job
    keys: set[Key] = set()
    for d in graph.datasets:
        keys.add(("lineage_dataset", f"{d.id}@{domain}"))
        for c in d.columns:
            keys.add(("lineage_column", f"{d.id}.{c.name}@{domain}"))
    for p in graph.processes:
        keys.add(("lineage_process", f"{job}:{p.id}@{domain}"))
    for e in graph.edges:
        keys.add(
            ("lineage_column_lineage", f"{job}:{e.process}:{e.target.dataset}.{e.target.column}@{domain}")
        )
    return keys


def rows(emu: Emulator, domain: str | None = None) -> list[dict[str, Any]]:
    """Every entity the emulator stores (optionally of one domain), any status."""
    out = []
    for r in emu.store.conn.execute(
        "SELECT guid, type_name, qualified_name, status, attrs, version FROM entities"
    ):
        qn = r["qualified_name"] or ""
        if domain is None or qn.endswith("@" + domain):
            out.append({**dict(r), "attrs": json.loads(r["attrs"])})
    return out


def snapshot(emu: Emulator, keep: Any) -> dict[str, tuple[str, str, int]]:
    """guid -> (status, attrs json, version) of the entities ``keep(row)`` selects."""
    return {
        r["guid"]: (r["status"], json.dumps(r["attrs"], sort_keys=True), r["version"])
        for r in rows(emu)
        if keep(r)
    }


def assert_exact_state(emu: Emulator, graph: LineageGraph, domain: str) -> None:
    """The job's ACTIVE entities are exactly the expected ones, each once, with the input's values."""
    active = [r for r in rows(emu, domain) if r["status"] == "ACTIVE"]
    dupes = [k for k, n in Counter((r["type_name"], r["qualified_name"]) for r in active).items() if n > 1]
    assert not dupes, f"duplicate entities: {dupes[:5]}"
    mine = {
        (r["type_name"], r["qualified_name"]): r
        for r in active
        if r["attrs"].get("atlasSyncJob") == graph.job
    }
    want = expected_keys(graph, domain)
    assert not (want - set(mine)), f"lost entities: {sorted(want - set(mine))[:5]}"
    assert not (set(mine) - want), f"stray entities: {sorted(set(mine) - want)[:5]}"
    for d in graph.datasets:
        for c in d.columns:
            got = mine[("lineage_column", f"{d.id}.{c.name}@{domain}")]["attrs"].get("dataType")
            assert got == c.type, f"{d.id}.{c.name}: dataType {got!r}, input says {c.type!r}"
    for p in graph.processes:
        got = mine[("lineage_process", f"{graph.job}:{p.id}@{domain}")]["attrs"].get("name")
        assert got == p.name


def fast_retry(max_attempts: int = 5) -> tuple[RetryPolicy, list[float]]:
    """A retry policy that records its waits instead of sleeping."""
    waits: list[float] = []
    return RetryPolicy(max_attempts=max_attempts, sleep=waits.append), waits


def client_for(emu: Emulator, retry: RetryPolicy, batch_size: int = 40) -> AtlasClient:
    return embedded_client(emulator=emu, retry=retry, batch_size=batch_size, timeout=(1, 1))
