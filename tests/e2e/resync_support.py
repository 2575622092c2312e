"""What the re-sync e2e tests share: a small lineage document and helpers (the ``client`` fixture they
use is in conftest.py)."""

from __future__ import annotations

from typing import Any

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.lineage.model import LineageGraph

DOC: dict[str, Any] = {
    "datasets": [
        {"id": "raw.orders", "namespace": "raw", "name": "orders", "columns": ["id", "amount"]},
        {"id": "raw.regions", "namespace": "raw", "name": "regions", "columns": ["id", "name"]},
        {"id": "mart.revenue", "namespace": "mart", "name": "revenue", "columns": ["region", "total"]},
    ],
    "processes": [
        {"id": "rev", "name": "rev", "inputs": ["raw.orders", "raw.regions"], "outputs": ["mart.revenue"]},
    ],
    "edges": [
        {"source": "raw.regions.name", "target": "mart.revenue.region", "kind": "IDENTITY", "process": "rev"},
        {
            "source": "raw.orders.amount",
            "target": "mart.revenue.total",
            "kind": "AGGREGATION",
            "process": "rev",
        },
    ],
}
# 3 datasets + 6 columns + 1 process + 2 column lineages (one per target column)
TOTAL = 12
PROCESS = "nightly:rev"


def graph(doc: dict[str, Any] = DOC) -> LineageGraph:
    g = LineageGraph.from_document(doc)
    g.job = "nightly"
    return g


def entity(client: AtlasClient, type_name: str, qn: str) -> dict[str, Any]:
    got = client.get_entity_by_unique(type_name, qn)
    assert got is not None, f"{type_name} {qn} missing"
    return got


def active_inputs(client: AtlasClient, qn: str) -> set[str]:
    ent = entity(client, "lineage_process", qn)
    return {
        r["displayText"] if "displayText" in r else r["uniqueAttributes"]["qualifiedName"]
        for r in ent["relationshipAttributes"]["inputs"]
        if r.get("relationshipStatus", "ACTIVE") == "ACTIVE" and r.get("entityStatus", "ACTIVE") == "ACTIVE"
    }


def edit_in_atlas(client: AtlasClient, type_name: str, qn: str, **changes: Any) -> None:
    """What the Atlas UI does when a user edits attributes: the entity's plain attributes written back
    with some changed (the digest attribute goes back unchanged with the rest)."""
    attrs = {
        k: v
        for k, v in entity(client, type_name, qn)["attributes"].items()
        if v is not None and not isinstance(v, (dict, list))
    }
    client.upsert_entities([{"typeName": type_name, "attributes": {**attrs, **changes}}])


def resync(client: AtlasClient, domain: str, doc: dict[str, Any] = DOC, **options: Any) -> Any:
    client.stats.reset()
    return Publisher(client, domain=domain).sync(graph(doc), **options)
