"""atlas-sync itself against a real Apache Atlas (run by .ci/real-atlas.sh; skipped without ATLAS_URL).

The contract suite checks Atlas's behaviour call by call; this checks that the publisher's whole
path works on that server: a sync (whole and streamed) creates what the input says, a second run
writes nothing, the streamed and whole plans agree, and a teardown with purge removes it all.
Expected counts are derived by hand from DOC and the lineage profile's rules (docs/profiles.md).
"""

from __future__ import annotations

import os
import uuid

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.stream import chunks_of

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
    password = os.environ.get("ATLAS_PASSWORD")
    if password is None and os.environ.get("ATLAS_PASSWORD_FILE"):
        with open(os.environ["ATLAS_PASSWORD_FILE"], encoding="utf-8") as fh:
            password = fh.read().strip()
    return AtlasClient(
        os.environ["ATLAS_URL"], auth=(os.environ.get("ATLAS_USERNAME", "admin"), password or "")
    )


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
