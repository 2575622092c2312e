"""Atlas before 2.2 takes one type name per basic search (`"a,b"` is `400 ATLAS-400-00-00A`, see
tests/contract/older_servers.py); sync, plan, streamed sync and teardown list a domain there too."""

from __future__ import annotations

from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.atlas.errors import BadRequestError
from atlas_sync.atlas.interface import Capabilities
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.actual import search_roots
from atlas_sync.reconcile.stream import chunks_of

DOC = {
    "datasets": [
        {"id": "raw.orders", "namespace": "raw", "name": "orders", "columns": ["id", "amount"]},
        {"id": "mart.revenue", "namespace": "mart", "name": "revenue", "columns": ["total"]},
    ],
    "processes": [{"id": "daily", "name": "daily", "inputs": ["raw.orders"], "outputs": ["mart.revenue"]}],
    "edges": [{"source": "raw.orders.amount", "target": "mart.revenue.total", "kind": "AGGREGATION"}],
}
# 2 datasets + 3 columns + 1 process + 1 column lineage
TOTAL = 7


class OneTypePerSearch(AtlasClient):
    """The embedded emulator answering basic searches as Atlas 2.1.0 does."""

    searches: list[str]

    def search_basic(self, type_name: str, **kw: Any) -> Any:
        self.searches.append(type_name)
        if "," in type_name:
            raise BadRequestError(
                f"POST /api/atlas/v2/search/basic failed: HTTP 400 ATLAS-400-00-00A: {type_name}: "
                "Unknown/invalid typename",
                status=400,
                error_code="ATLAS-400-00-00A",
            )
        return super().search_basic(type_name, **kw)


def old_client(emu: Emulator) -> OneTypePerSearch:
    base = embedded_client(emulator=emu)
    base.__class__ = OneTypePerSearch
    client: OneTypePerSearch = base  # type: ignore[assignment]
    client.searches = []
    return client


def graph() -> LineageGraph:
    g = LineageGraph.from_document(DOC)
    g.job = "daily"
    return g


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_sync_and_resync_on_a_server_without_multi_type_search(stream: bool) -> None:
    emu = Emulator(None)
    client = old_client(emu)
    pub = Publisher(client, domain="old")
    first = pub.sync(graph(), stream=stream)
    assert first.plan.counts["create"] == TOTAL
    again = (
        Publisher(client, domain="old").sync_chunks(chunks_of(graph(), 1)) if stream else pub.sync(graph())
    )
    assert again.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": TOTAL}
    assert again.applied is None
    # the joined name was refused once, then each root type was searched on its own
    assert sum("," in s for s in client.searches) == 1
    assert {s for s in client.searches if "," not in s} >= {"lineage_dataset", "lineage_process"}


def test_teardown_with_purge_on_a_server_without_multi_type_search() -> None:
    emu = Emulator(None)
    client = old_client(emu)
    pub = Publisher(client, domain="old")
    pub.sync(graph())
    result = pub.teardown(purge=True)
    assert result.deleted == TOTAL and result.purged == TOTAL


def test_other_search_errors_are_not_hidden() -> None:
    class Refusing:
        capabilities = Capabilities()

        def search_basic(self, type_name: str, **kw: Any) -> Any:
            raise BadRequestError("bad filter", status=400, error_code="ATLAS-400-00-01D")

    with pytest.raises(BadRequestError, match="bad filter"):
        list(search_roots(Refusing(), ["a", "b"]))  # type: ignore[arg-type]
