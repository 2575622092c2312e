"""When a sync keeps a receipt, and what its fingerprint covers (reconcile.receipt).

What a receipt answers, end to end on the emulator and a real Atlas: tests/e2e/test_resync_receipt.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher, SyncOptions
from atlas_sync.api.run import job_receipt
from atlas_sync.atlas.interface import Capabilities
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile import receipt as receipts
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.reconcile.receipt import (
    RECEIPT_MIN,
    REMOVED,
    JobReceipt,
    decode_listing,
    encode_listing,
    fingerprint,
    listing_hash,
)
from atlas_sync.reconcile.stream import StreamSync
from atlas_sync.render.profile import load_profile
from atlas_sync.resources import builtin_dir

ATTRS = Bookkeeping.of(load_profile("lineage").bookkeeping)


def doc(n: int, kind: str = "table") -> dict[str, Any]:
    return {
        "datasets": [
            {"id": f"raw.t{i}", "namespace": "raw", "name": f"t{i}", "kind": kind} for i in range(n)
        ],
        "processes": [{"id": "p", "name": "p", "inputs": ["raw.t0"], "outputs": [f"raw.t{n - 1}"]}],
    }


def spooled(document: dict[str, Any], *, partial: bool = False) -> StreamSync:
    graph = LineageGraph.from_document(document)
    graph.job, graph.partial = "nightly", partial
    s = StreamSync(None, load_profile("lineage"), "demo", memory=True)
    s.add_chunk(graph)
    return s


class Rest:
    """A client the eligibility check never calls."""

    capabilities = Capabilities()


class Hook(Rest):
    capabilities = Capabilities(hook_transport=True, queued_writes=True)


def receipt_of(client: Any, s: StreamSync, **options: Any) -> Any:
    pub = Publisher(client, domain="demo")
    return job_receipt(pub, s, "nightly", pub.profile.root_types(), ATTRS, SyncOptions(**options), {})


def test_a_big_whole_input_over_rest_keeps_a_receipt() -> None:
    with spooled(doc(RECEIPT_MIN)) as s:
        assert isinstance(receipt_of(Rest(), s), JobReceipt)


@pytest.mark.parametrize(
    ("client", "size", "partial", "options"),
    [
        (Rest(), RECEIPT_MIN - 2, False, {}),  # small: its own listing is as cheap
        (Hook(), RECEIPT_MIN, False, {}),  # ATLAS_HOOK: writes applied later
        (Rest(), RECEIPT_MIN, True, {}),  # part of the job's lineage
        (Rest(), RECEIPT_MIN, False, {"refresh": True}),
    ],
    ids=["small", "hook", "partial", "refresh"],
)
def test_no_receipt(client: Any, size: int, partial: bool, options: dict[str, Any]) -> None:
    with spooled(doc(size), partial=partial) as s:
        assert receipt_of(client, s, **options) is None


def test_no_receipt_where_the_server_lacks_the_job_key() -> None:
    with spooled(doc(RECEIPT_MIN)) as s:
        pub = Publisher(Rest(), domain="demo")
        attrs = Bookkeeping.of(ATTRS.profile, lambda name: name != "atlasSyncKey")
        assert job_receipt(pub, s, "nightly", pub.profile.root_types(), attrs, SyncOptions(), {}) is None


def test_the_fingerprint_follows_the_input_and_the_context() -> None:
    context = {"profile": "p", "domain": "demo", "job": "nightly"}
    with spooled(doc(3)) as a, spooled(doc(3)) as same, spooled(doc(3, kind="view")) as other:
        first = fingerprint(a.spool, context)
        assert first == fingerprint(same.spool, context)
        assert first != fingerprint(other.spool, context)
        assert first != fingerprint(a.spool, {**context, "job": "hourly"})


def test_the_fingerprinted_input_text_stays_what_earlier_versions_wrote() -> None:
    # Receipts in Atlas hold fingerprints of this text: another spelling of the same input (a faster
    # JSON encoder's) would make every big job's next sync compare in full once.
    graph = LineageGraph.from_document(doc(3))
    with spooled(doc(3)) as s:
        chunk = next(s.spool.input_parts())
    assert chunk == json.dumps(
        {
            "datasets": ["raw.t0", "raw.t2"],  # those its processes use (raw.t1 is rendered apart)
            "processes": [p.model_dump(mode="json") for p in graph.processes],
            "edges": [],
        }
    )


def test_the_profile_fingerprint_follows_its_templates(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    shutil.copytree(builtin_dir("templates") / "lineage", folder)
    (folder / "typedefs").symlink_to(builtin_dir("typedefs") / "lineage")
    before = load_profile(folder).fingerprint()
    assert before == load_profile(folder).fingerprint()
    template = folder / "dataset.json.j2"
    template.write_text(template.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert load_profile(folder).fingerprint() != before


# ---------------------------------------------------------------- the receipt's listing of the job


def test_the_listing_keeps_each_entitys_name_and_a_hash_of_its_digest() -> None:
    entities = [
        ("lineage_column", "raw.t0.c0@demo", listing_hash("1:aaa")),
        ("lineage_dataset", "raw.t0@demo", listing_hash("1:bbb j0123=x")),
        ("lineage_column", "raw.t0.c1@demo", REMOVED),
    ]
    text = encode_listing(entities)
    assert text is not None and text.startswith("1:")
    assert decode_listing(text) == {(t, qn): h for t, qn, h in entities}
    assert decode_listing(encode_listing([]) or "") == {}
    assert listing_hash("1:aaa") != listing_hash("1:aab") and len(listing_hash("1:aaa")) == 8


def test_no_listing_for_a_name_with_a_tab_or_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    assert encode_listing([("lineage_dataset", "raw\tt0@demo", "h")]) is None
    monkeypatch.setattr(receipts, "LISTING_MAX", 40)
    assert (
        encode_listing([("lineage_dataset", f"raw.t{i}@demo", listing_hash(str(i))) for i in range(50)])
        is None
    )


@pytest.mark.parametrize(
    "text", ["", "2:eJwDAAAAAAE=", "1:not base64!", "1:" + "eJwrSS0u0U1KzMnMSy0qSsxLTwUAPbMGxA=="]
)
def test_a_listing_it_cannot_read_is_none(text: str) -> None:
    assert decode_listing(text) is None
