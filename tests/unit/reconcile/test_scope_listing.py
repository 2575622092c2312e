"""How a domain and a job are listed by the one bookkeeping key (``d<domain hash>j<job hash>``): the
domain by the key's first part (``startsWith``), the job by the whole key (``=``), one search each,
and nothing by name (no probe for entities without the key).

The server side (Atlas's and the emulator's answers) is covered by tests/e2e/test_resync_scope.py;
here a small fake answers by the filter it is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from atlas_sync.reconcile.actual import iter_job, iter_scope
from atlas_sync.reconcile.bookkeeping import Bookkeeping, entity_key, job_key, scope_key
from atlas_sync.render.profile import BookkeepingNames

KEY = "atlasSyncKey"
BK = Bookkeeping.of(BookkeepingNames(key=KEY))


class Fake:
    """Entities as (type, qualifiedName, key or None); basic search by eq / startsWith / endsWith."""

    def __init__(self, entities: list[tuple[str, str, str | None]]) -> None:
        self.entities = entities
        self.asked: list[str] = []

    def search_basic(self, type_name: str, **kw: Any) -> Iterator[dict[str, Any]]:
        f = kw["entity_filters"]
        parts = f.get("criterion", [f])
        self.asked.append("+".join(p["operator"] for p in parts))
        for i, (t, qn, key) in enumerate(self.entities):
            if t not in type_name.split(",") or not all(self._match(p, qn, key) for p in parts):
                continue
            yield {"guid": f"g{i}", "typeName": t, "status": "ACTIVE", "attributes": {"qualifiedName": qn}}

    def get_entities(self, guids: list[str], **kw: Any) -> list[dict[str, Any]]:
        raise AssertionError("a listing reads no entity")

    @staticmethod
    def _match(p: dict[str, Any], qn: str, key: str | None) -> bool:
        value = p["attributeValue"]
        if p["attributeName"] == "qualifiedName":
            assert p["operator"] == "endsWith"
            return qn.endswith(value)
        assert p["attributeName"] == KEY
        if p["operator"] == "eq":
            return key == value
        assert p["operator"] == "startsWith"
        return key is not None and key.startswith(value)


def listed(fake: Fake, domain: str = "sales") -> list[str]:
    return sorted({h.qualified_name for h in iter_scope(fake, ["t"], domain, bookkeeping=BK)})


def test_the_key_starts_with_the_domains_key_then_the_jobs() -> None:
    assert entity_key("sales", "nightly") == scope_key("sales") + job_key("sales", "nightly")
    assert entity_key("sales", "nightly").isalnum()  # (no query character: Atlas answers it on its index)


def test_a_domain_is_listed_by_its_key_prefix_alone() -> None:
    fake = Fake(
        [
            ("t", "a@sales", entity_key("sales", "nightly")),
            ("t", "b@sales", entity_key("sales", "hourly")),
            ("t", "c@other", entity_key("other", "nightly")),
            ("t", "d@sales", None),  # (not atlas-sync's: no key)
        ]
    )
    assert listed(fake) == ["a@sales", "b@sales"]
    assert fake.asked == ["startsWith"]


def test_a_job_is_listed_by_its_whole_key() -> None:
    fake = Fake(
        [
            ("t", "a@sales", entity_key("sales", "nightly")),
            ("t", "b@sales", entity_key("sales", "hourly")),
            ("t", "c@other", entity_key("other", "nightly")),
        ]
    )
    found = [h.qualified_name for h in iter_job(fake, ["t"], "sales", "nightly", bookkeeping=BK)]
    assert found == ["a@sales"]
    assert fake.asked == ["eq"]


def test_the_key_listing_is_rechecked_against_the_domain_name() -> None:
    # two domains whose keys collide (or an index matching loosely) never mix
    fake = Fake([("t", "a@sales", entity_key("sales", "j")), ("t", "x@other", entity_key("sales", "j"))])
    assert listed(fake) == ["a@sales"]


def test_without_the_key_on_the_server_the_domain_is_listed_by_name() -> None:
    fake = Fake([("t", "a@sales", None), ("t", "b@other", None)])
    names = sorted(h.qualified_name for h in iter_scope(fake, ["t"], "sales", bookkeeping=Bookkeeping()))
    assert names == ["a@sales"]
    assert fake.asked == ["endsWith"]
