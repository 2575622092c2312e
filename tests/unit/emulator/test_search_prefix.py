"""``startsWith`` on an indexed string attribute, as Atlas's index answers it (a prefix query on Solr):
exactly the values that start with the prefix, at a cost that follows what it finds, not what the
type holds (counted in SQLite virtual-machine steps, not timed). How atlas-sync lists a domain by the
first part of its key (reconcile.bookkeeping)."""

from __future__ import annotations

from typing import Any

from atlas_sync.emulator import Emulator

from .helpers import call


def _emulator() -> Emulator:
    emu = Emulator()
    key = {
        "name": "k",
        "typeName": "string",
        "isOptional": True,
        "cardinality": "SINGLE",
        "isIndexable": True,
    }
    status, body = call(
        emu,
        "POST",
        "/v2/types/typedefs",
        {"entityDefs": [{"name": "kds", "superTypes": ["DataSet"], "attributeDefs": [key]}]},
    )
    assert status == 200, body
    return emu


def _create(emu: Emulator, keys: list[str | None], start: int = 0) -> None:
    entities = [
        {
            "typeName": "kds",
            "guid": str(-1 - i),
            "attributes": {"qualifiedName": f"e{start + i}@x", "name": "e", "k": k},
        }
        for i, k in enumerate(keys)
    ]
    status, body = call(emu, "POST", "/v2/entity/bulk", {"entities": entities})
    assert status == 200, body


def _prefix(emu: Emulator, prefix: str) -> list[str]:
    body: dict[str, Any] = {
        "typeName": "kds",
        "excludeDeletedEntities": True,
        "limit": 10000,
        "attributes": ["k"],
        "entityFilters": {"attributeName": "k", "operator": "startsWith", "attributeValue": prefix},
    }
    status, found = call(emu, "POST", "/v2/search/basic", body)
    assert status == 200, found
    return sorted(e["attributes"]["k"] for e in found.get("entities") or [])


def test_a_prefix_finds_exactly_the_values_that_start_with_it() -> None:
    emu = _emulator()
    try:
        _create(emu, ["dab", "dab1", "dabz", "da", "dac", "dAb", "xdab", "dab\U0010ffff", None])
        assert _prefix(emu, "dab") == ["dab", "dab1", "dabz", "dab\U0010ffff"]
        assert _prefix(emu, "dab\U0010ffff") == ["dab\U0010ffff"]
        assert _prefix(emu, "dz") == []
    finally:
        emu.close()


def _steps_for_a_small_domain_beside(other: int) -> int:
    emu = _emulator()
    try:
        _create(emu, ["d1j1", "d1j2", "d1j3"])
        _create(emu, [f"d2j{i}" for i in range(other)], start=10)
        _prefix(emu, "d1")  # (the index is made on first use, as Atlas has it from the start)
        steps = [0]

        def tick() -> int:
            steps[0] += 1
            return 0

        emu.store.conn.set_progress_handler(tick, 100)
        assert _prefix(emu, "d1") == ["d1j1", "d1j2", "d1j3"]
        emu.store.conn.set_progress_handler(None, 100)
        return steps[0]
    finally:
        emu.close()


def test_listing_a_domain_by_its_prefix_costs_what_it_finds_not_what_other_domains_hold() -> None:
    small, big = _steps_for_a_small_domain_beside(200), _steps_for_a_small_domain_beside(4000)
    assert big < small * 2, (small, big)  # 20 times the other domain: about the same work
