"""Concurrent requests from many threads are serialised safely (one writer at a time)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from atlas_sync.emulator import Emulator

from .helpers import call, dataset


def test_parallel_bulk_creates_lose_nothing(typed_emulator: Emulator) -> None:
    def create(worker: int) -> list[str]:
        entities = [dataset(f"w{worker}_{i}", f"-{i + 1}") for i in range(20)]
        status, body = call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": entities})
        assert status == 200, body
        return list(body["guidAssignments"].values())

    with ThreadPoolExecutor(max_workers=8) as pool:
        guids = [g for chunk in pool.map(create, range(16)) for g in chunk]
    assert len(set(guids)) == 16 * 20
    status, body = call(
        typed_emulator,
        "POST",
        "/v2/search/basic",
        {"typeName": "u_ds", "limit": 1000, "excludeDeletedEntities": True},
    )
    assert status == 200 and len(body["entities"]) == 320


def test_parallel_upserts_of_the_same_entity_create_it_once(typed_emulator: Emulator) -> None:
    def upsert(i: int) -> str:
        status, body = call(
            typed_emulator,
            "POST",
            "/v2/entity/bulk",
            {"entities": [dataset("shared", "-1", description=str(i))]},
        )
        assert status == 200, body
        return str(body["guidAssignments"]["-1"])

    with ThreadPoolExecutor(max_workers=8) as pool:
        guids = set(pool.map(upsert, range(40)))
    assert len(guids) == 1


def test_parallel_reads_and_writes_mix(typed_emulator: Emulator) -> None:
    status, body = call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": [dataset("r", "-1")]})
    guid = body["guidAssignments"]["-1"]

    def work(i: int) -> int:
        if i % 2:
            return call(typed_emulator, "GET", f"/v2/entity/guid/{guid}")[0]
        return call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": [dataset(f"m{i}", "-1")]})[0]

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert set(pool.map(work, range(60))) == {200}
