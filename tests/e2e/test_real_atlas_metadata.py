"""The issue's done-when for metadata, on a real Apache Atlas 2.1.0 (run by .ci/real-atlas.sh) and the emulator.

A rules file tags ``raw.customers.email`` PII with propagation and assigns it a glossary term; a
two-statement SQL job (raw.customers -> stage.customers -> mart.contacts) is synced; Atlas propagates
PII along the column lineage to ``stage.customers.email`` and ``mart.contacts.email``. Then a person
adds, by plain REST calls as the UI makes them, a classification and a term assignment on
``mart.contacts.email``; two unchanged re-syncs send nothing (counted), a changed rule sends exactly
what it needs; what the person added survives; removing the rule removes only atlas-sync's PII and
term, and Atlas takes back what it propagated (polled with a bounded wait, as a newer Atlas may do it
in a background task). The glossary, types and domain are run-unique: a real server is shared.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.view.atlas_graph import domain_graph

SQL = """
INSERT INTO stage.customers SELECT id, email FROM raw.customers;
INSERT INTO mart.contacts SELECT id, lower(email) AS email FROM stage.customers;
"""
PII_RULE = """
[[rules]]
columns = ["raw.customers.email"]
classifications = [{ name = "%(pii)s", propagate = true }]
terms = ["Email@%(glossary)s"]
"""
OWNER_RULE = """
[[rules]]
datasets = ["raw.*"]
owners = ["data-stewards"]
"""
# the changed sync: a label on the column the person worked on
LABEL_RULE = """
[[rules]]
columns = ["mart.contacts.email"]
labels = ["contact"]
"""
WAIT = 20.0  # seconds a propagation (or its removal) may take to show


@pytest.fixture
def world(client: AtlasClient) -> Iterator[dict[str, str]]:
    """Run-unique classification types, a glossary with two terms (made through the REST API, as a
    person would), and a domain; all removed afterwards."""
    tag = uuid.uuid4().hex[:8]
    out = {
        "domain": "mdr" + tag,
        "pii": "PII_" + tag,
        "hand": "Reviewed_" + tag,
        "glossary": "Customer_" + tag,
    }
    client.create_typedefs(
        {
            "classificationDefs": [
                {"name": out["pii"], "attributeDefs": [], "superTypes": []},
                {"name": out["hand"], "attributeDefs": [], "superTypes": []},
            ]
        }
    )
    glossary = client._call("test", "POST", "/v2/glossary", body={"name": out["glossary"]})
    for term in ("Email", "Contact point"):
        made = client._call(
            "test",
            "POST",
            "/v2/glossary/term",
            body={"name": term, "anchor": {"glossaryGuid": glossary["guid"]}},
        )
        out["term:" + term] = made["guid"]
    try:
        yield out
    finally:
        Publisher(client, domain=out["domain"]).teardown(purge=True)
        for term in ("Email", "Contact point"):
            client._call("test", "DELETE", f"/v2/glossary/term/{out['term:' + term]}")
        client._call("test", "DELETE", f"/v2/glossary/{glossary['guid']}")


def _files(tmp_path: Path, world: dict[str, str], *rules: str) -> tuple[Path, Path]:
    sql = tmp_path / "job.sql"
    sql.write_text(SQL, encoding="utf-8")
    path = tmp_path / f"rules-{len(rules)}-{uuid.uuid4().hex[:6]}.toml"
    path.write_text("".join(r % world for r in rules), encoding="utf-8")
    return sql, path


def _sync(client: AtlasClient, world: dict[str, str], sql: Path, rules: Path) -> Any:
    client.stats.reset()
    pub = Publisher(client, domain=world["domain"], metadata_rules=rules)
    return pub.sync(pub.read("sql", [str(sql)], dialect="spark"), job="customers")


def _column(client: AtlasClient, world: dict[str, str], name: str) -> dict[str, Any]:
    got = client.get_entity_by_unique("lineage_column", f"{name}@{world['domain']}")
    assert got is not None, name
    return got


def _own(ent: dict[str, Any]) -> set[str]:
    return {
        c["typeName"] for c in ent.get("classifications") or [] if c.get("entityGuid") in (None, ent["guid"])
    }


def _propagated(ent: dict[str, Any]) -> set[str]:
    return {
        c["typeName"]
        for c in ent.get("classifications") or []
        if c.get("entityGuid") not in (None, ent["guid"])
    }


def _terms(ent: dict[str, Any]) -> set[str]:
    """Guids of the glossary terms assigned to the entity (its active ``meanings``)."""
    return {
        m["guid"]
        for m in (ent.get("relationshipAttributes") or {}).get("meanings") or []
        if m.get("relationshipStatus", "ACTIVE") == "ACTIVE"
    }


def _eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {WAIT:.0f} s: {what}")
        time.sleep(0.5)


def _writes(client: AtlasClient) -> int:
    return sum(
        client.stats[k].requests
        for k in (
            "entity_write",
            "entity_delete",
            "purge",
            "typedef_write",
            "metadata_write",
            "glossary_write",
        )
    )


def test_pii_propagates_a_persons_classification_and_term_survive_and_the_rule_goes_cleanly(
    client: AtlasClient, world: dict[str, str], tmp_path: Path
) -> None:
    sql, rules = _files(tmp_path, world, PII_RULE, OWNER_RULE)
    first = _sync(client, world, sql, rules)
    assert first.applied is not None and first.applied.metadata == 1  # raw.customers.email
    # the rule's PII and term on the raw column; 1 bulk classification + 1 term assignment
    assert client.stats["metadata_write"].requests == 2
    raw = _column(client, world, "raw.customers.email")
    assert _own(raw) == {world["pii"]} and _terms(raw) == {world["term:Email"]}
    # Atlas propagates PII along the column lineage; columns not built from email stay untagged
    for name in ("stage.customers.email", "mart.contacts.email"):
        _eventually(lambda n=name: _propagated(_column(client, world, n)) == {world["pii"]}, f"PII on {name}")
        assert not _own(_column(client, world, name)), name
    for name in ("stage.customers.id", "mart.contacts.id"):
        assert not _column(client, world, name).get("classifications"), name
    # what `show` reads back tells the rule's PII from what Atlas propagated (one listing of headers)
    shown = {
        f"{d.id}.{c.name}": {(x.name, x.propagated) for x in c.classifications}
        for d in domain_graph(Publisher(client, domain=world["domain"]), None).datasets
        for c in d.columns
        if c.classifications
    }
    assert shown == {
        "raw.customers.email": {(world["pii"], False)},
        "stage.customers.email": {(world["pii"], True)},
        "mart.contacts.email": {(world["pii"], True)},
    }

    # a person classifies mart.contacts.email and assigns it a term, as the UI does
    target = _column(client, world, "mart.contacts.email")
    client._call(
        "test",
        "POST",
        f"/v2/entity/guid/{target['guid']}/classifications",
        body=[{"typeName": world["hand"]}],
    )
    client._call(
        "test",
        "POST",
        f"/v2/glossary/terms/{world['term:Contact point']}/assignedEntities",
        body=[{"guid": target["guid"]}],
    )

    def persons_work_is_there() -> None:
        now = _column(client, world, "mart.contacts.email")
        assert _own(now) == {world["hand"]}
        assert _terms(now) == {world["term:Contact point"]}

    persons_work_is_there()
    for _ in range(2):  # unchanged: nothing written, no metadata request
        again = _sync(client, world, sql, rules)
        assert again.applied is None
        assert (_writes(client), client.stats["metadata_read"].requests) == (0, 0)
        assert client.stats["entity_read"].requests == 1  # the rules' bulk read of their term, no entity
        persons_work_is_there()
        assert _propagated(_column(client, world, "mart.contacts.email")) == {world["pii"]}

    # changed: a label on the person's column. Its record is written, then its digest (2 entity writes),
    # and one labels request; the person's classification and term are untouched
    _, changed = _files(tmp_path, world, PII_RULE, OWNER_RULE, LABEL_RULE)
    result = _sync(client, world, sql, changed)
    assert result.plan.counts["update"] == 1 and result.plan.counts["create"] == 0
    assert client.stats["metadata_write"].requests == 1
    assert client.stats["entity_write"].requests == 2
    assert client.stats["entity_read"].requests == 2  # the term lookup, the column read in full
    now = _column(client, world, "mart.contacts.email")
    assert now["labels"] == ["contact"]
    persons_work_is_there()
    assert _propagated(now) == {world["pii"]}

    # the PII rule goes: our classification and our term go (2 requests), Atlas takes back what it
    # propagated, the person's classification and term stay
    _, without = _files(tmp_path, world, OWNER_RULE, LABEL_RULE)
    removed = _sync(client, world, sql, without)
    (item,) = removed.plan.by_action("update")
    assert item.qualified_name == f"raw.customers.email@{world['domain']}"
    assert client.stats["metadata_write"].requests == 2
    # one entity write: the record and the digest together (claims are kept until the removal is sent)
    assert (client.stats["entity_write"].requests, client.stats["entity_read"].requests) == (1, 1)
    raw = _column(client, world, "raw.customers.email")
    assert not _own(raw) and not _terms(raw)
    for name in ("stage.customers.email", "mart.contacts.email"):
        _eventually(lambda n=name: not _propagated(_column(client, world, n)), f"PII gone from {name}")
    persons_work_is_there()
    assert _sync(client, world, sql, without).applied is None
    assert _writes(client) == 0
