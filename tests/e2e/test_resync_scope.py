"""A re-sync lists the job's own entities by its whole key, and teardown, show and saved plans list
the domain by the key's first part (``atlasSyncKey``: the domain's key, then the job's), on Atlas's
index, not by name.

Atlas runs a search for a value with ``@`` in memory over every entity of the types, so listing by the
``@domain`` suffix of qualifiedNames costs as much as every domain together (docs/resync.md). Every
entity the lineage profile writes carries the key. These run over HTTP against the emulator and, when
``ATLAS_URL`` names one (CI's real-Atlas step), against a real Atlas.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from resync_support import DOC, TOTAL, entity, graph, resync

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator import Emulator
from atlas_sync.emulator.http import serve
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.actual import iter_job, list_scope
from atlas_sync.reconcile.bookkeeping import Bookkeeping, entity_key, job_key, scope_key
from atlas_sync.render.profile import load_profile

KEY = "atlasSyncKey"
# the lineage profile under other type names: runs on an Atlas that holds an earlier build's lineage types
KEYED = Path(__file__).resolve().parents[1] / "data" / "profiles" / "keyed"
BOOKKEEPING = Bookkeeping.of(load_profile("lineage").bookkeeping)


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
    """How entities were listed: 'job' by the job's whole key, 'key' by the domain's key (the key's
    first part), 'name' by the qualifiedName suffix, 'owner' by the owner's name (the settle's
    searches of other jobs' recent copies, an AND of more, are none of those)."""
    kinds = set()
    for f in searches:
        crit = f.get("criterion", [f])
        if f.get("attributeName") == KEY and f.get("operator") == "eq":
            kinds.add("job")
        elif f.get("attributeName") == KEY and f.get("operator") == "startsWith":
            kinds.add("key")
        elif any(c.get("attributeName") == "atlasSyncJob" for c in crit):
            kinds.add("owner")
        elif any(c.get("attributeName") == "qualifiedName" and c.get("operator") == "endsWith" for c in crit):
            kinds.add("name")
    return kinds


def test_the_keys_are_letters_and_digits_and_one_per_domain_and_job() -> None:
    # '@' and other query characters keep Atlas's search off its index
    assert re.fullmatch(r"[a-z0-9]+", scope_key("sales@eu-west/1"))
    assert scope_key("sales") == scope_key("sales")
    assert scope_key("sales") != scope_key("sales2")
    assert re.fullmatch(r"[a-z0-9]+", job_key("sales", "etl.sql:orders"))
    assert job_key("sales", "a") != job_key("sales", "b") != job_key("sales2", "b")
    assert job_key("a", "b\0c") != job_key("a\0b", "c")  # the parts cannot be shifted
    assert re.fullmatch(r"d[0-9a-f]{20}j[0-9a-f]{20}", entity_key("sales@eu-west/1", "etl.sql:orders"))


def test_every_written_entity_carries_one_key_of_its_domain_and_job(
    client: AtlasClient, domains: list[str]
) -> None:
    domain = new_domain(domains)
    Publisher(client, domain=domain).sync(graph())
    for t, qn in (("lineage_dataset", f"raw.orders@{domain}"), ("lineage_process", f"nightly:rev@{domain}")):
        attrs = entity(client, t, qn)["attributes"]
        assert attrs[KEY] == scope_key(domain) + job_key(domain, "nightly")
        assert attrs["atlasSyncJob"] == "nightly"
        assert not {"atlasSyncScope", "atlasSyncJobKey"} & set(attrs)


def test_the_key_prefix_lists_a_domain_and_the_whole_key_a_job_and_nothing_of_another_domain(
    client: AtlasClient,
) -> None:
    run = uuid.uuid4().hex[:8]
    domain, other = f"bookkeeping-a{run}", f"bookkeeping-b{run}"
    assert not entity_key(other, "nightly").startswith(scope_key(domain))
    profile = load_profile(KEYED)
    roots = profile.root_types()
    hourly = {
        "datasets": [DOC["datasets"][0], {"id": "raw.hout", "namespace": "raw", "name": "hout"}],
        "processes": [{"id": "h", "name": "h", "inputs": ["raw.orders"], "outputs": ["raw.hout"]}],
    }
    try:
        Publisher(client, profile=profile, domain=domain).sync(graph())
        Publisher(client, profile=profile, domain=domain).sync(graph(hourly), job="hourly")
        Publisher(client, profile=profile, domain=other).sync(graph())
        listed = list_scope(client, roots, domain, bookkeeping=BOOKKEEPING)
        assert len(listed) == TOTAL + 2  # (hourly's dataset and process)
        assert all(qn.endswith("@" + domain) for _, qn in listed)
        assert {h.owner for h in listed.values()} == {"nightly", "hourly"}
        nightly = {h.key for h in iter_job(client, roots, domain, "nightly", bookkeeping=BOOKKEEPING)}
        assert nightly == {k for k, h in listed.items() if h.owner == "nightly"}
        assert {h.key for h in iter_job(client, roots, domain, "hourly", bookkeeping=BOOKKEEPING)} == {
            ("bkkeyed_dataset", f"raw.hout@{domain}"),
            ("bkkeyed_process", f"hourly:h@{domain}"),
        }
        assert len(list_scope(client, roots, other, bookkeeping=BOOKKEEPING)) == TOTAL
    finally:
        for name in (domain, other):
            Publisher(client, profile=profile, domain=name).teardown(purge=True)


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
    # the domain held nothing (one search by its key): no entity read by name
    assert listed_by(searches) >= {"job", "key"}
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


def test_a_refresh_lists_what_the_job_owns_by_its_key(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    # a full compare trusts no digest, and lists the job as any sync does
    domain = new_domain(domains)
    Publisher(client, domain=domain).sync(graph())
    searches.clear()
    assert resync(client, domain, refresh=True).plan.counts["unchanged"] == TOTAL
    assert listed_by(searches) == {"job"}


def test_teardown_and_saved_plans_list_the_domain_by_its_key(
    client: AtlasClient, domains: list[str], searches: list[dict[str, Any]]
) -> None:
    domain = new_domain(domains)
    pub = Publisher(client, domain=domain)
    pub.sync(graph())
    doc = {**DOC, "datasets": [dict(d) for d in DOC["datasets"]]}
    doc["datasets"][0]["kind"] = "view"
    plan = pub.plan(graph(doc), stream=False)
    searches.clear()
    assert pub.apply(plan).updated == 1  # the saved plan is checked against a listing by key
    assert listed_by(searches) == {"key"}
    searches.clear()
    assert pub.teardown().deleted == TOTAL
    assert listed_by(searches) == {"key"}


def test_a_first_sync_that_registers_the_types_reads_no_entity() -> None:
    # a server without the profile's types holds none of its entities: nothing to look up by name,
    # whatever the input's size (before: one lookup by unique attribute per name, 6 MB for N = 1,000)
    emu = Emulator()
    server = serve(emu)
    try:
        client = AtlasClient(server.url, auth=("admin", "admin"))
        first = Publisher(client, domain="fresh").sync(_wide("nightly"))
        assert first.plan.counts["create"] == 1150
        assert client.stats["entity_read"].requests <= 1  # (the job's receipt, which the sync writes)
    finally:
        server.shutdown()
        emu.close()
