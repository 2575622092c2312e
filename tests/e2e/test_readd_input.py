"""A job drops an input dataset and later takes it back: the sync must converge (RA-04).

Atlas 2.4.0 keeps a removed input's relationship edge and, when the same entity is posted again at the
edge's old position, reuses that edge *as DELETED* (docs/real-atlas-differences.md RA-04; the emulator does
the same). Syncing v1 (inputs a, b), v2 (input a), then v1 again must still leave b an ACTIVE input and an
empty plan. Runs on the in-process emulator, and also on a real Atlas when ``ATLAS_URL`` is set
(``ATLAS_USERNAME``, ``ATLAS_PASSWORD`` or ``ATLAS_PASSWORD_FILE``).
"""

from __future__ import annotations

import copy
import os
import uuid
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import LineageGraph

V1: dict[str, Any] = {
    "datasets": [
        {"id": "src.a", "namespace": "src", "name": "a", "columns": ["id"]},
        {"id": "src.b", "namespace": "src", "name": "b", "columns": ["id"]},
        {"id": "out.t", "namespace": "out", "name": "t", "columns": ["id"]},
    ],
    "processes": [{"id": "job", "name": "job", "inputs": ["src.a", "src.b"], "outputs": ["out.t"]}],
}


def _v2(keep_b: bool) -> dict[str, Any]:
    doc = copy.deepcopy(V1)
    doc["processes"][0]["inputs"] = ["src.a"]
    if not keep_b:
        doc["datasets"] = [d for d in doc["datasets"] if d["id"] != "src.b"]
    return doc


def _real_client(cls: type[AtlasClient] = AtlasClient) -> AtlasClient:
    password = os.environ.get("ATLAS_PASSWORD")
    if password is None and os.environ.get("ATLAS_PASSWORD_FILE"):
        with open(os.environ["ATLAS_PASSWORD_FILE"], encoding="utf-8") as fh:
            password = fh.read().strip()
    return cls(os.environ["ATLAS_URL"], auth=(os.environ.get("ATLAS_USERNAME", "admin"), password or ""))


TARGETS = ["emulator"] + (["real"] if os.environ.get("ATLAS_URL") else [])


@pytest.fixture(params=TARGETS)
def client(request: pytest.FixtureRequest) -> AtlasClient:
    if request.param == "real":
        return _real_client()
    return embedded_client(emulator=Emulator(None))


def _active_inputs(client: AtlasClient, domain: str) -> set[str]:
    """qualifiedNames of the process's inputs as the lineage API shows them (ACTIVE relationships)."""
    p = client.get_entity_by_unique("lineage_process", f"job@{domain}")
    assert p is not None
    return {
        i["qualifiedName"]
        for i in p["relationshipAttributes"]["inputs"]
        if i.get("relationshipStatus") == "ACTIVE" and i.get("entityStatus") == "ACTIVE"
    }


def _lineage_inputs(client: AtlasClient, domain: str) -> set[str]:
    info = client.lineage_by_unique("lineage_process", f"job@{domain}", direction="INPUT", depth=1)
    by_guid = info["guidEntityMap"]
    p_guid = info["baseEntityGuid"]
    return {
        (by_guid[r["fromEntityId"]].get("attributes") or {}).get("qualifiedName")
        for r in info["relations"]
        if r["toEntityId"] == p_guid and by_guid[r["fromEntityId"]].get("status") == "ACTIVE"
    }


@pytest.mark.parametrize("keep_b", [True, False], ids=["b-kept", "b-dropped"])
def test_re_added_input_converges_and_is_active(client: AtlasClient, keep_b: bool) -> None:
    # b kept: Atlas 2.4.0 may reuse b's DELETED edge (RA-04); apply brings it back with a new relationship
    domain = f"readd{uuid.uuid4().hex[:8]}"
    pub = Publisher(client, profile="lineage", domain=domain)
    a, b = f"src.a@{domain}", f"src.b@{domain}"
    for doc in (V1, _v2(keep_b)):
        pub.sync(LineageGraph.from_document(copy.deepcopy(doc)), job="job", force=True)
    assert _active_inputs(client, domain) == {a}
    pub.sync(LineageGraph.from_document(copy.deepcopy(V1)), job="job", force=True)
    after = pub.plan(LineageGraph.from_document(copy.deepcopy(V1)), job="job")
    assert not after.has_changes, after.counts
    assert _active_inputs(client, domain) == {a, b}
    assert b in _lineage_inputs(client, domain)
