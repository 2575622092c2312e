"""Paging through a basic search result costs work linear in the result: page k neither counts the
whole result again nor skips k pages (counted in SQLite virtual-machine steps, not timed)."""

from __future__ import annotations

import json

from atlas_sync.emulator import Emulator

SEARCH = "/api/atlas/v2/search/basic"
AUTH = {"Authorization": "Basic YWRtaW46YWRtaW4="}  # admin:admin


def _counting(emu: Emulator) -> list[int]:
    """From now on, ``[steps]``: SQLite virtual-machine steps of the emulator's database, in hundreds."""
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    emu.store.conn.set_progress_handler(tick, 100)
    return steps


def _page_through(n: int, limit: int = 20) -> tuple[int, int]:
    emu = Emulator()
    entities = [
        {"typeName": "DataSet", "attributes": {"qualifiedName": f"t{i}@d", "name": f"t{i}"}} for i in range(n)
    ]
    resp = emu.handle("POST", "/api/atlas/v2/entity/bulk", {}, AUTH, json.dumps({"entities": entities}))
    assert resp.status == 200
    steps = _counting(emu)
    seen = 0
    offset = 0
    while True:
        body = {
            "typeName": "DataSet",
            "excludeDeletedEntities": True,
            "limit": limit,
            "offset": offset,
            "entityFilters": {
                "attributeName": "qualifiedName",
                "operator": "endsWith",
                "attributeValue": "@d",
            },
        }
        page = json.loads(emu.handle("POST", SEARCH, {}, AUTH, json.dumps(body)).body)
        got = page.get("entities") or []
        assert page["approximateCount"] == n
        seen += len(got)
        offset += len(got)
        if len(got) < limit:
            break
    emu.close()
    assert seen == n
    return steps[0], seen


def test_paging_through_twice_the_entities_is_about_twice_the_work() -> None:
    small, _ = _page_through(400)
    big, _ = _page_through(800)
    assert big / small < 2.6, (small, big)


def _write(emu: Emulator, entities: list[dict]) -> None:
    """Write ``entities`` in bulk requests of 5,000."""
    for lo in range(0, len(entities), 5000):
        body = json.dumps({"entities": entities[lo : lo + 5000]})
        assert emu.handle("POST", "/api/atlas/v2/entity/bulk", {}, AUTH, body).status == 200


def _searched_twice(emu: Emulator, body: dict, *, analyze: bool = False) -> tuple[dict, dict, int]:
    """The first answer (it makes the indexes), the second, and the VM steps of the second
    (``analyze``: with statistics of the data as it is, between them)."""
    first = json.loads(emu.handle("POST", SEARCH, {}, AUTH, json.dumps(body)).body)
    if analyze:
        emu.store.analyze()
    steps = _counting(emu)
    again = json.loads(emu.handle("POST", SEARCH, {}, AUTH, json.dumps(body)).body)
    emu.close()
    return first, again, steps[0]


def _selective_search_steps(n: int) -> int:
    """VM steps of a search AND-ing a value every entity holds (a big domain's key) with a name
    two entities hold, after ``n`` entities were written."""
    emu = Emulator()
    _write(
        emu,
        [
            {
                "typeName": "DataSet",
                "attributes": {"qualifiedName": f"t{i}@d", "name": f"t{i}", "owner": "team"},
            }
            for i in range(n)
        ],
    )
    body = {
        "typeName": "DataSet",
        "excludeDeletedEntities": True,
        "limit": 100,
        "entityFilters": {
            "condition": "AND",
            "criterion": [
                {"attributeName": "owner", "operator": "eq", "attributeValue": "team"},
                {
                    "condition": "OR",
                    "criterion": [
                        {"attributeName": "name", "operator": "eq", "attributeValue": "t7"},
                        {"attributeName": "name", "operator": "eq", "attributeValue": "t8"},
                    ],
                },
            ],
        },
    }
    first, again, steps = _searched_twice(emu, body)
    assert first["approximateCount"] == 2
    assert {e["attributes"]["qualifiedName"] for e in again["entities"]} == {"t7@d", "t8@d"}
    return steps


def test_a_search_and_ing_a_common_value_with_a_few_names_costs_what_the_names_find() -> None:
    # as Atlas's index weighs its terms; SQLite's planner needs its statistics for it (ANALYZE)
    small = _selective_search_steps(12_000)
    big = _selective_search_steps(24_000)
    assert big / small < 1.3, (small, big)


def _skewed_search_steps(n: int) -> int:
    """VM steps of a search AND-ing a domain key ``n`` entities hold with a job name none holds, where
    the job attribute has fewer distinct values than the domain key (SQLite's averages then favour
    the domain key's index): a new job's look for what it owns in a freshly built big domain."""
    emu = Emulator()
    typedef = {
        "entityDefs": [
            {
                "name": "skewed_ds",
                "superTypes": ["DataSet"],
                "attributeDefs": [
                    {"name": k, "typeName": "string", "isOptional": True, "isIndexable": True}
                    for k in ("scopeKey", "jobName")
                ],
            }
        ]
    }
    assert emu.handle("POST", "/api/atlas/v2/types/typedefs", {}, AUTH, json.dumps(typedef)).status == 200
    spread = [("big", "bulk")] * n + [("small", "bulk")] * (n // 10) + [("empty", "other")]
    _write(
        emu,
        [
            {
                "typeName": "skewed_ds",
                "attributes": {"qualifiedName": f"t{i}@d", "name": f"t{i}", "scopeKey": s, "jobName": j},
            }
            for i, (s, j) in enumerate(spread)
        ],
    )
    body = {
        "typeName": "skewed_ds",
        "excludeDeletedEntities": True,
        "limit": 100,
        "entityFilters": {
            "condition": "AND",
            "criterion": [
                {"attributeName": "scopeKey", "operator": "eq", "attributeValue": "big"},
                {"attributeName": "jobName", "operator": "eq", "attributeValue": "new-job"},
            ],
        },
    }
    first, again, steps = _searched_twice(emu, body, analyze=True)
    assert first["approximateCount"] == 0
    assert again["approximateCount"] == 0
    return steps


def test_an_and_of_equalities_walks_the_index_of_the_rarest_value_whatever_the_averages() -> None:
    small = _skewed_search_steps(12_000)
    big = _skewed_search_steps(24_000)
    assert big / small < 1.3, (small, big)
