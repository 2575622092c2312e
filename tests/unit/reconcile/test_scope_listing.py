"""How ``iter_scope`` lists a domain with a scope key: by key, and by name too when the domain holds
keyless entities or the server refuses the check (a listing by name is never wrong, only slower).

The server side (Atlas's and the emulator's answers) is covered by tests/e2e/test_resync_scope.py;
here a small fake answers by the filter it is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from atlas_sync.atlas.errors import BadRequestError
from atlas_sync.reconcile.actual import iter_scope, scope_key

KEY = "atlasSyncScope"


class Fake:
    """Entities as (type, qualifiedName, key or None); basic search by eq / endsWith / isNull AND endsWith."""

    def __init__(self, entities: list[tuple[str, str, str | None]], *, refuse_is_null: bool = False) -> None:
        self.entities = entities
        self.refuse_is_null = refuse_is_null
        self.asked: list[str] = []

    def search_basic(self, type_name: str, **kw: Any) -> Iterator[dict[str, Any]]:
        f = kw["entity_filters"]
        parts = f.get("criterion", [f])
        ops = [p["operator"] for p in parts]
        self.asked.append("+".join(ops))
        if "isNull" in ops and self.refuse_is_null:
            raise BadRequestError("unknown operator", status=400, error_code="ATLAS-400-00-001")
        for i, (t, qn, key) in enumerate(self.entities):
            if t not in type_name.split(",") or not all(self._match(p, qn, key) for p in parts):
                continue
            yield {"guid": f"g{i}", "typeName": t, "status": "ACTIVE", "attributes": {"qualifiedName": qn}}

    def get_entities(self, guids: list[str], **kw: Any) -> list[dict[str, Any]]:
        raise AssertionError("a listing reads no entity")

    @staticmethod
    def _match(p: dict[str, Any], qn: str, key: str | None) -> bool:
        if p["operator"] == "eq":
            return key == p["attributeValue"]
        if p["operator"] == "endsWith":
            return qn.endswith(p["attributeValue"])
        return key is None  # isNull


def listed(fake: Fake, domain: str = "sales") -> list[str]:
    return sorted({h.qualified_name for h in iter_scope(fake, ["t"], domain, scope_attribute=KEY)})


def test_a_keyed_domain_is_listed_by_key_only() -> None:
    fake = Fake([("t", "a@sales", scope_key("sales")), ("t", "b@other", None)])
    assert listed(fake) == ["a@sales"]
    assert sorted(fake.asked) == ["eq", "isNull+endsWith"]


def test_a_keyless_entity_of_the_domain_adds_the_listing_by_name() -> None:
    fake = Fake([("t", "a@sales", scope_key("sales")), ("t", "old@sales", None)])
    assert listed(fake) == ["a@sales", "old@sales"]
    assert sorted(fake.asked) == ["endsWith", "eq", "isNull+endsWith"]


def test_a_server_refusing_the_check_gets_the_listing_by_name() -> None:
    fake = Fake([("t", "a@sales", scope_key("sales")), ("t", "old@sales", None)], refuse_is_null=True)
    assert listed(fake) == ["a@sales", "old@sales"]
    assert "endsWith" in fake.asked


def test_the_key_listing_is_rechecked_against_the_domain_name() -> None:
    # two domains whose keys collide (or an index matching loosely) never mix
    fake = Fake([("t", "a@sales", scope_key("sales")), ("t", "x@other", scope_key("sales"))])
    assert listed(fake) == ["a@sales"]
