"""What rides with a write batch (atlas_sync.reconcile.apply.write_batch's ``extra``: the job's receipt).

Against the embedded emulator: the riders go in the batch's own request; a server that refuses them
gets the batch again without them (the outcome says so); a batch the server refuses for its own sake
is not sent again without them.
"""

from __future__ import annotations

from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.atlas.errors import AtlasError, AuthError
from atlas_sync.factory import embedded_client
from atlas_sync.reconcile.apply import WriteBatch, _Flight, write_batch
from atlas_sync.reconcile.plan import PlanItem
from atlas_sync.reconcile.receipt import RECEIPT_TYPE, receipt_typedef
from atlas_sync.render.renderer import DesiredEntity

DATASET = "lineage_dataset"


@pytest.fixture
def client() -> AtlasClient:
    c = embedded_client(None)
    Publisher(c, domain="d").ensure_typedefs()
    c.create_typedefs(receipt_typedef())
    c.stats.reset()
    return c


def batch(*names: str) -> WriteBatch:
    items = [PlanItem("create", DATASET, n) for n in names]
    desired = {
        it.key: DesiredEntity(DATASET, it.qualified_name, {"qualifiedName": it.qualified_name, "name": "n"})
        for it in items
    }
    return WriteBatch(items, desired)


def rider(name: str) -> dict[str, Any]:
    return {"typeName": RECEIPT_TYPE, "attributes": {"qualifiedName": name, "name": name}}


def test_riders_go_in_the_batch_s_own_request(client: AtlasClient) -> None:
    out = write_batch(client, batch("a@d", "b@d"), {}, _Flight(1), [rider("r1")])
    assert client.stats["entity_write"].requests == 1 and out.requests == 1
    assert out.refused is None
    assert set(out.assigned) == {(DATASET, "a@d"), (DATASET, "b@d")}
    assert client.get_entity_by_unique(RECEIPT_TYPE, "r1") is not None


def test_a_server_refusing_the_riders_gets_the_batch_without_them(
    client: AtlasClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    upsert = client.upsert_entities

    def refuse_riders(entities: Any, **kw: Any) -> Any:
        if any(e.get("typeName") == RECEIPT_TYPE for e in entities):
            raise AuthError("403 Forbidden: not allowed", status=403)
        return upsert(entities, **kw)

    monkeypatch.setattr(client, "upsert_entities", refuse_riders)
    out = write_batch(client, batch("a@d"), {}, _Flight(1), [rider("r1")])
    assert isinstance(out.refused, AuthError)
    assert out.requests == 2  # (the refused one counted)
    assert set(out.assigned) == {(DATASET, "a@d")}
    assert client.get_entity_by_unique(RECEIPT_TYPE, "r1") is None


def test_a_batch_refused_for_its_own_sake_is_an_error_with_or_without_riders(client: AtlasClient) -> None:
    bad = batch("a@d")
    del bad.desired[bad.items[0].key].attributes["qualifiedName"]  # (a mandatory attribute missing)
    with pytest.raises(AtlasError):
        write_batch(client, bad, {}, _Flight(1), [rider("r1")])
    assert client.get_entity_by_unique(RECEIPT_TYPE, "r1") is None
