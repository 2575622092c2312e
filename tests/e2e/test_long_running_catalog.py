"""A long-running publisher (``openlineage serve`` / ``consume`` keep one for their whole life) after
someone deletes a glossary term its metadata rules assign and creates it again (a new guid): the
sync that meets the stale guid fails (Atlas answers 404), and the retry works with the new guid.

Every server-derived value the publisher keeps (types, attributes present, term guids, the
metadata record: reconcile.catalog's ``ServerCatalog``) is read again after an Atlas error.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient, AtlasError

RULE = """
[[rules]]
columns = ["raw.*.email"]
terms = ["Email@%(glossary)s"]
"""


def _term(client: AtlasClient, glossary_guid: str) -> str:
    made = client._call(
        "test", "POST", "/v2/glossary/term", body={"name": "Email", "anchor": {"glossaryGuid": glossary_guid}}
    )
    return str(made["guid"])


@pytest.fixture
def world(client: AtlasClient) -> Iterator[dict[str, str]]:
    tag = uuid.uuid4().hex[:8]
    out = {"domain": "cat" + tag, "glossary": "Catalog_" + tag}
    glossary = client._call("test", "POST", "/v2/glossary", body={"name": out["glossary"]})
    out["glossary_guid"] = glossary["guid"]
    out["term"] = _term(client, glossary["guid"])
    try:
        yield out
    finally:
        Publisher(client, domain=out["domain"]).teardown(purge=True)
        client._call("test", "DELETE", f"/v2/glossary/term/{out['term']}")
        client._call("test", "DELETE", f"/v2/glossary/{glossary['guid']}")


def _terms_of(client: AtlasClient, qn: str) -> set[str]:
    got = client.get_entity_by_unique("lineage_column", qn)
    assert got is not None, qn
    return {m.get("guid") for m in (got.get("relationshipAttributes") or {}).get("meanings") or []}


def _graph(pub: Publisher, tmp_path: Path, sql: str) -> Any:
    path = tmp_path / f"{uuid.uuid4().hex[:6]}.sql"
    path.write_text(sql, encoding="utf-8")
    return pub.read("sql", [str(path)], dialect="spark")


def test_a_long_running_publisher_keeps_working_after_a_term_is_deleted_and_created_again(
    client: AtlasClient, world: dict[str, str], tmp_path: Path
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(RULE % world, encoding="utf-8")
    pub = Publisher(client, domain=world["domain"], metadata_rules=rules)  # one for the whole test
    pub.sync(_graph(pub, tmp_path, "INSERT INTO stage.a SELECT email FROM raw.a;"), "a")
    assert _terms_of(client, f"raw.a.email@{world['domain']}") == {world["term"]}

    # a person removes the term (its assignment first) and creates it again: a new guid
    held = client.get_entity_by_unique("lineage_column", f"raw.a.email@{world['domain']}")
    assert held is not None
    rel = next(m["relationshipGuid"] for m in held["relationshipAttributes"]["meanings"])
    client._call(
        "test",
        "DELETE",
        f"/v2/glossary/terms/{world['term']}/assignedEntities",
        body=[{"guid": held["guid"], "relationshipGuid": rel}],
    )
    client._call("test", "DELETE", f"/v2/glossary/term/{world['term']}")
    world["term"] = _term(client, world["glossary_guid"])

    # the next job's column gets the term: the first attempt may meet the old guid; a retry (what
    # serve and consume do) must not
    graph = _graph(pub, tmp_path, "INSERT INTO stage.b SELECT email FROM raw.b;")
    try:
        pub.sync(graph.model_copy(deep=True), "b")
    except AtlasError:
        pub.sync(graph.model_copy(deep=True), "b")
    assert _terms_of(client, f"raw.b.email@{world['domain']}") == {world["term"]}
