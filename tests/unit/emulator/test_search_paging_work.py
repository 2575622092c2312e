"""Paging through a basic search result costs work linear in the result: page k neither counts the
whole result again nor skips k pages (counted in SQLite virtual-machine steps, not timed)."""

from __future__ import annotations

import json

from atlas_sync.emulator import Emulator

SEARCH = "/api/atlas/v2/search/basic"
AUTH = {"Authorization": "Basic YWRtaW46YWRtaW4="}  # admin:admin


def _page_through(n: int, limit: int = 20) -> tuple[int, int]:
    emu = Emulator()
    entities = [
        {"typeName": "DataSet", "attributes": {"qualifiedName": f"t{i}@d", "name": f"t{i}"}} for i in range(n)
    ]
    resp = emu.handle("POST", "/api/atlas/v2/entity/bulk", {}, AUTH, json.dumps({"entities": entities}))
    assert resp.status == 200
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    emu.store.conn.set_progress_handler(tick, 100)
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
    return steps, seen


def test_paging_through_twice_the_entities_is_about_twice_the_work() -> None:
    small, _ = _page_through(400)
    big, _ = _page_through(800)
    assert big / small < 2.6, (small, big)
