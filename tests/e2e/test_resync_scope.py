"""A re-sync lists the job's own entities by its key (``atlasSyncJobKey``), and teardown, show and
saved plans list the domain by its key (``atlasSyncScope``), on Atlas's index, not by name.

Atlas runs a search for a value with ``@`` in memory over every entity of the types, so listing by the
``@domain`` suffix of qualifiedNames costs as much as every domain together (docs/resync.md). Every
entity the lineage profile writes carries the domain's key; a re-sync lists by it once no entity of the
domain lacks it. These run over HTTP against the emulator and, when ``ATLAS_URL`` names one (CI's
real-Atlas step), against a real Atlas.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from resync_support import DOC, TOTAL, entity, graph, resync

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.actual import job_key, scope_key
from atlas_sync.render.profile import load_profile

KEY = "atlasSyncScope"
JOB_KEY = "atlasSyncJobKey"
# the profile as an atlas-sync before domain keys had it: its entities carry no key
KEYLESS = dataclasses.replace(load_profile("lineage"), scope_attribute=None, job_key_attribute=None)


@pytest.fixture
def domains(client: AtlasClient) -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        Publisher(client, domain=name).teardown(purge=True)


def new_domain(domains: list[str]) -> str:
    domains.append("ds" + uuid.uuid4().hex[:10])
    return domains[-1]


@pytest.fixture
def searches(client: AtlasClient, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The entity filters of every basic search the client makes (the client itself is real)."""
    seen: list[dict[str, Any]] = []
    real = client.search_basic

    def spy(type_name: str, **kw: Any) -> Any:
        seen.append(kw.get("entity_filters") or {})
        return real(type_name, **kw)

    monkeypatch.setattr(client, "search_basic", spy)
    return seen


def listed_by(searches: list[dict[str, Any]]) -> set[str]:
    """How entities were listed: 'job' by the job's key, 'key' by the domain's key, 'name' by the
    qualifiedName suffix, 'probe' for the domain's check for keyless entities, 'owner' for a job's
    listing of what it owns without keys."""
    kinds = set()
    for f in searches:
        crit = f.get("criterion", [])
        if f.get("attributeName") == JOB_KEY and f.get("operator") == "eq":
            kinds.add("job")
        elif f.get("attributeName") == KEY and f.get("operator") == "eq":
            kinds.add("key")
        elif f.get("attributeName") == "qualifiedName" and f.get("operator") == "endsWith":
            kinds.add("name")
        elif any(c.get("attributeName") == "atlasSyncJob" for c in crit):
            kinds.add("owner")
        elif any(c.get("attributeName") == KEY and c.get("operator") == "isNull" for c in crit):
            kinds.add("probe")
    return kinds


def test_the_keys_are_letters_and_digits_and_one_per_domain_and_job() -> None:
    # '@' and other query characters keep Atlas's search off its index
    assert re.fullmatch(r"[a-z0-9]+", scope_key("sales@eu-west/1"))
    assert scope_key("sales") == scope_key("sales")
    assert scope_key("sales") != scope_key("sales2")
    assert re.fullmatch(r"[a-z0-9]+", job_key("sales", "etl.sql:orders"))
    assert job_key("sales", "a") != job_key("sales", "b") != job_key("sales2", "b")
    assert job_key("a", "b\0c") != job_key("a\0b", "c")  # the parts cannot be shifted


def test_every_written_entity_carries_its_domains_and_jobs_keys(
    client: AtlasClient, domains: list[str]
) -> None:
    domain = new_domain(domains)
    Publisher(client, domain=domain).sync(graph())
    for t, qn in (("lineage_dataset", f"raw.orders@{domain}"), ("lineage_process", f"nightly:rev@{domain}")):
        attrs = entity(client, t, qn)["attributes"]
        assert attrs[KEY] == scope_key(domain)
        assert attrs[JOB_KEY] == job_key(domain, "nightly")


def test_a_resync_lists_the_jobs_own_entities_by_its_key_and_nothing_else(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    domain, other = new_domain(domains), new_domain(domains)
    Publisher(client, domain=other).sync(graph())
    Publisher(client, domain=domain).sync(graph())
    searches.clear()
    again = resync(client, domain)
    assert listed_by(searches) == {"job"}
    assert again.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": TOTAL}
    assert client.stats["entity_write"].requests == 0 and client.stats["entity_read"].requests == 0
    assert all(i.qualified_name.endswith("@" + domain) for i in again.plan.items)
    assert entity(client, "lineage_dataset", f"raw.orders@{other}")["status"] == "ACTIVE"


def test_entities_written_before_keys_are_found_by_owner_and_keyed_once(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    domain = new_domain(domains)
    old = {**DOC, "processes": [*DOC["processes"], {"id": "gone", "name": "gone", "inputs": ["raw.orders"]}]}
    Publisher(client, profile=KEYLESS, domain=domain).sync(graph(old))
    assert entity(client, "lineage_dataset", f"raw.orders@{domain}")["attributes"].get(KEY) is None
    searches.clear()
    first = resync(client, domain)  # the process "gone" is no longer in the input
    assert listed_by(searches) == {"job", "owner"}
    assert first.plan.counts == {"create": 0, "update": TOTAL, "delete": 1, "unchanged": 0}
    assert {c.attribute for i in first.plan.by_action("update") for c in i.changes} == {KEY}
    (deleted,) = first.plan.by_action("delete")
    assert deleted.qualified_name == f"nightly:gone@{domain}"  # found although it had no key
    assert first.applied is not None and first.applied.keyed == TOTAL
    assert entity(client, "lineage_column", f"raw.orders.id@{domain}")["attributes"][JOB_KEY] == job_key(
        domain, "nightly"
    )
    searches.clear()
    second = resync(client, domain)
    assert listed_by(searches) == {"job"}
    assert second.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": TOTAL}
    assert client.stats["entity_write"].requests == 0


def test_keyless_entities_of_another_domain_do_not_change_how_this_one_is_listed(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    keyed, keyless = new_domain(domains), new_domain(domains)
    Publisher(client, profile=KEYLESS, domain=keyless).sync(graph())
    Publisher(client, domain=keyed).sync(graph())
    searches.clear()
    assert resync(client, keyed).plan.counts["unchanged"] == TOTAL
    assert listed_by(searches) == {"job"}
    searches.clear()
    assert resync(client, keyless).plan.counts["update"] == TOTAL
    assert listed_by(searches) == {"job", "owner"}


def _wide(job: str) -> LineageGraph:
    """A job of 1,150 entities (100 tables of 10 columns, 50 processes): enough names to look up that
    a first sync checks whether its domain is empty."""
    datasets = [
        {"id": f"raw.t{i}", "namespace": "raw", "name": f"t{i}", "columns": [f"c{k}" for k in range(10)]}
        for i in range(100)
    ]
    processes = [
        {"id": f"p{i}", "name": f"p{i}", "inputs": [f"raw.t{i}"], "outputs": [f"raw.t{i + 50}"]}
        for i in range(50)
    ]
    g = LineageGraph.from_document({"datasets": datasets, "processes": processes, "edges": []})
    g.job = job
    return g


def test_a_first_sync_into_an_empty_domain_looks_nothing_up_and_a_new_job_beside_it_does(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    domain = new_domain(domains)
    Publisher(client, domain=domain).ensure_typedefs()
    searches.clear()
    client.stats.reset()
    first = Publisher(client, domain=domain).sync(_wide("nightly"))
    assert first.plan.counts["create"] == 1150
    # the domain held nothing (by its key, nor without it): no entity read by name
    assert listed_by(searches) >= {"job", "key", "probe"}
    assert client.stats["entity_read"].requests == 0
    # another job sharing the tables: the domain holds them now, so they are looked up, not made twice
    client.stats.reset()
    again = Publisher(client, domain=domain).sync(_wide("hourly"))
    assert again.plan.counts["create"] == 50  # its processes
    assert client.stats["entity_read"].requests > 0
    hits = client.search_basic(
        "lineage_dataset",
        entity_filters={
            "attributeName": "qualifiedName",
            "operator": "eq",
            "attributeValue": f"raw.t7@{domain}",
        },
    )
    assert len(list(hits)) == 1


def test_a_small_job_beside_nothing_looks_its_names_up_without_searching_the_domain(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    # a few lookups by name cost less than the two searches that tell the domain is empty
    domain = new_domain(domains)
    Publisher(client, domain=domain).ensure_typedefs()
    searches.clear()
    assert resync(client, domain).plan.counts["create"] == TOTAL
    assert "key" not in listed_by(searches)
    assert client.stats["entity_read"].requests > 0


def test_a_refresh_lists_what_the_job_owns_with_and_without_keys(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    # a full compare trusts nothing it wrote: not the digest, not the keys
    domain = new_domain(domains)
    Publisher(client, domain=domain).sync(graph())
    searches.clear()
    assert resync(client, domain, refresh=True).plan.counts["unchanged"] == TOTAL
    assert listed_by(searches) == {"job", "owner"}


def test_teardown_and_saved_plans_list_by_key_and_still_find_keyless_entities(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    keyed, keyless = new_domain(domains), new_domain(domains)
    pub = Publisher(client, domain=keyed)
    pub.sync(graph())
    doc = {**DOC, "datasets": [dict(d) for d in DOC["datasets"]]}
    doc["datasets"][0]["kind"] = "view"
    plan = pub.plan(graph(doc), stream=False)
    searches.clear()
    assert pub.apply(plan).updated == 1  # the saved plan is checked against a listing by key
    assert listed_by(searches) == {"probe", "key"}
    searches.clear()
    assert pub.teardown().deleted == TOTAL
    assert listed_by(searches) == {"probe", "key"}
    Publisher(client, profile=KEYLESS, domain=keyless).sync(graph())
    searches.clear()
    assert Publisher(client, domain=keyless).teardown().deleted == TOTAL  # keyless: found by name
    assert listed_by(searches) == {"probe", "key", "name"}
