"""atlas-sync itself against a real Apache Atlas (run by .ci/real-atlas.sh; skipped without ATLAS_URL).

The contract suite checks Atlas's behaviour call by call; this checks that the publisher's whole
path works on that server: a sync (whole and streamed) creates what the input says, a second run
writes nothing, the streamed and whole plans agree, and a teardown with purge removes it all; and
that a workload of issue 15's shape big enough for several write batches at the default batch size
(1,250 entities) lands exactly, re-syncs without a write and writes a small change in one batch.
Expected counts are derived by hand from DOC and the lineage profile's rules (docs/profiles.md).
"""

from __future__ import annotations

import math
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.config import load_settings
from atlas_sync.factory import client_from_settings
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.stream import chunks_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from issue_workload import entity_count, issue_graph  # noqa: E402

pytestmark = pytest.mark.skipif(not os.environ.get("ATLAS_URL"), reason="needs a real Atlas (ATLAS_URL)")

DOC = {
    "datasets": [
        {"id": "raw.orders", "namespace": "raw", "name": "orders", "columns": ["id", "amount"]},
        {"id": "raw.regions", "namespace": "raw", "name": "regions", "columns": ["id", "name"]},
        {"id": "mart.revenue", "namespace": "mart", "name": "revenue", "columns": ["region", "total"]},
        {"id": "mart.top", "namespace": "mart", "name": "top", "columns": ["region"]},
    ],
    "processes": [
        {"id": "rev", "name": "rev", "inputs": ["raw.orders", "raw.regions"], "outputs": ["mart.revenue"]},
        {"id": "top", "name": "top", "inputs": ["mart.revenue"], "outputs": ["mart.top"]},
    ],
    "edges": [
        {"source": "raw.regions.name", "target": "mart.revenue.region", "kind": "IDENTITY", "process": "rev"},
        {
            "source": "raw.orders.amount",
            "target": "mart.revenue.total",
            "kind": "AGGREGATION",
            "process": "rev",
        },
        {"source": "mart.revenue.region", "target": "mart.top.region", "kind": "IDENTITY", "process": "top"},
    ],
}
# 4 datasets + 7 columns + 2 processes + 3 column lineages (one per target column)
TOTAL = 16


def client() -> AtlasClient:
    # ATLAS_URL, ATLAS_USERNAME, ATLAS_PASSWORD or ATLAS_PASSWORD_FILE, as the CLI reads them
    return client_from_settings(load_settings())


def graph() -> LineageGraph:
    g = LineageGraph.from_document(DOC)
    g.job = "nightly"
    return g


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_sync_resync_plan_and_teardown_on_a_real_atlas(stream: bool) -> None:
    domain = f"e2e{uuid.uuid4().hex[:8]}"
    pub = Publisher(client(), domain=domain, batch_size=5)  # several write batches
    try:
        first = pub.sync(graph(), stream=stream)
        assert first.plan.counts["create"] == TOTAL
        assert first.applied is not None and first.applied.created == TOTAL
        again = (
            Publisher(client(), domain=domain).sync_chunks(chunks_of(graph(), 1))
            if stream
            else pub.sync(graph())
        )
        assert again.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": TOTAL}
        assert again.applied is None
        other = Publisher(client(), domain=domain)
        whole_plan = other.plan(graph(), stream=False)
        streamed_plan = other.plan(graph(), stream=True)
        assert whole_plan.counts == streamed_plan.counts == again.plan.counts
        # drop the column edge of the second process: its one column lineage entity goes
        smaller = graph()
        smaller.edges = smaller.edges[:2]
        gone = pub.sync(smaller, stream=stream)
        assert gone.plan.counts["delete"] == 1
        assert gone.plan.counts["create"] == gone.plan.counts["update"] == 0
    finally:
        down = Publisher(client(), domain=domain).teardown(purge=True)
    assert down.purged == TOTAL


# --------------------------------------------------------------------------- several write batches

ISSUE_PROCESSES = 100  # 1,250 entities: three write batches or more at the default batch size (500)
DEFAULT_BATCH = 500


class WriteCounter:
    """Counts entity write requests (POST / PUT / DELETE under ``/v2/entity``) a client sends, seen on
    its HTTP session, not as the client reports them."""

    def __init__(self, c: AtlasClient) -> None:
        self.writes = 0
        c.session.hooks.setdefault("response", []).append(self._seen)

    def _seen(self, resp: Any, *args: Any, **kwargs: Any) -> None:
        req = resp.request
        if req.method in ("POST", "PUT", "DELETE") and "/api/atlas/v2/entity" in (req.url or ""):
            self.writes += 1

    def take(self) -> int:
        n, self.writes = self.writes, 0
        return n


def expected_entities(g: LineageGraph, domain: str) -> dict[tuple[str, str], dict[str, set[str]]]:
    """(type, qualifiedName) -> {"inputs", "outputs"} (qualifiedNames), by the lineage profile's naming
    rules (docs/profiles.md): ``<dataset>@d``, ``<dataset>.<column>@d``, ``<job>:<process>@d``,
    ``<job>:<process>:<dataset>.<column>@d`` (one per target column)."""
    out: dict[tuple[str, str], dict[str, set[str]]] = {}
    for d in g.datasets:
        out[("lineage_dataset", f"{d.id}@{domain}")] = {}
        for c in d.columns:
            out[("lineage_column", f"{d.id}.{c.name}@{domain}")] = {}
    for p in g.processes:
        out[("lineage_process", f"{g.job}:{p.id}@{domain}")] = {
            "inputs": {f"{i}@{domain}" for i in p.inputs},
            "outputs": {f"{o}@{domain}" for o in p.outputs},
        }
    for e in g.edges:
        qn = f"{g.job}:{e.process}:{e.target.dataset}.{e.target.column}@{domain}"
        refs = out.setdefault(("lineage_column_lineage", qn), {"inputs": set(), "outputs": set()})
        refs["inputs"].add(f"{e.source.dataset}.{e.source.column}@{domain}")
        refs["outputs"].add(f"{e.target.dataset}.{e.target.column}@{domain}")
    return out


def domain_entities(c: AtlasClient, domain: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The domain's ACTIVE entities as Atlas holds them (one basic search per type, then bulk reads)."""
    flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@" + domain}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for type_name in ("lineage_dataset", "lineage_column", "lineage_process", "lineage_column_lineage"):
        names = [
            h["attributes"]["qualifiedName"]
            for h in c.search_basic(
                type_name, entity_filters=flt, attributes=["qualifiedName"], include_subtypes=False
            )
            if str(h["attributes"]["qualifiedName"]).endswith("@" + domain)
        ]
        for e in c.get_entities_by_unique(type_name, names, min_ext_info=True):
            out[(e["typeName"], e["attributes"]["qualifiedName"])] = e
    return out


def references(entity: dict[str, Any], attribute: str, names: dict[str, str]) -> set[str]:
    """The qualifiedNames an entity's ``inputs`` / ``outputs`` point at (guids resolved by ``names``)."""
    out = set()
    for ref in entity["attributes"].get(attribute) or []:
        unique = ref.get("uniqueAttributes") or {}
        out.add(str(names.get(ref.get("guid", ""), unique.get("qualifiedName"))))
    return out


def test_a_workload_of_several_write_batches_syncs_exactly_then_resyncs_by_its_difference() -> None:
    domain = f"e2eb{uuid.uuid4().hex[:8]}"
    c = client()
    counter = WriteCounter(c)
    g = issue_graph(ISSUE_PROCESSES, job="nightly")
    expected = expected_entities(g, domain)
    total = entity_count(ISSUE_PROCESSES)
    assert len(expected) == total and total > 2 * DEFAULT_BATCH
    pub = Publisher(c, domain=domain)  # the default batch size
    assert pub.batch_size == DEFAULT_BATCH
    try:
        first = pub.sync(g)
        assert first.plan.counts == {"create": total, "update": 0, "delete": 0, "unchanged": 0}
        assert counter.take() >= math.ceil(total / DEFAULT_BATCH)

        held = domain_entities(c, domain)
        assert set(held) == set(expected)
        names = {e["guid"]: qn for (_, qn), e in held.items()}
        for key, refs in expected.items():
            if refs:  # processes and column lineages point at what the input says
                assert references(held[key], "inputs", names) == refs["inputs"], key
                assert references(held[key], "outputs", names) == refs["outputs"], key

        again = pub.sync(issue_graph(ISSUE_PROCESSES, job="nightly"))
        assert again.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": total}
        assert counter.take() == 0

        changed = issue_graph(ISSUE_PROCESSES, job="nightly")
        columns = [(d, col) for d in changed.datasets for col in d.columns][::50]  # 12 of 600
        for _, col in columns:
            col.type = "decimal(38,2)"
        small = pub.sync(changed)
        n = len(columns)
        assert small.plan.counts == {"create": 0, "update": n, "delete": 0, "unchanged": total - n}
        assert counter.take() == math.ceil(n / DEFAULT_BATCH)
        now = c.get_entities_by_unique(
            "lineage_column", [f"{d.id}.{col.name}@{domain}" for d, col in columns]
        )
        assert sorted(e["attributes"]["dataType"] for e in now) == ["decimal(38,2)"] * n
    finally:
        down = Publisher(client(), domain=domain).teardown(purge=True)
    assert down.purged == total
