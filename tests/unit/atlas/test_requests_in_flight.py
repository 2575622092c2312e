"""One bound on the requests in flight against Atlas, reads and writes of every thread alike, set by
``--parallel`` (``Settings.parallel``). Counted with a transport that holds every request until released:
no sleeps, no timings."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from atlas_sync.config import Settings
from atlas_sync.emulator import Emulator
from atlas_sync.emulator.adapter import EmulatorAdapter
from atlas_sync.factory import EMBEDDED_URL, client_from_settings, embedded_client

WAIT = 60  # s: a safety net against a hang, never reached when the code is right


class Held(requests.adapters.BaseAdapter):
    """The emulator behind a gate: counts the requests that reached it and are not answered yet, and
    answers them only once ``release`` is set."""

    def __init__(self, emulator: Emulator) -> None:
        super().__init__()
        self.inner = EmulatorAdapter(emulator)
        self.cond = threading.Condition()
        self.release = threading.Event()
        self.now = self.peak = self.seen = 0

    def send(self, request: Any, **kw: Any) -> Any:  # type: ignore[override]
        with self.cond:
            self.now += 1
            self.seen += 1
            self.peak = max(self.peak, self.now)
            self.cond.notify_all()
        try:
            self.release.wait(WAIT)
            return self.inner.send(request, **kw)
        finally:
            with self.cond:
                self.now -= 1

    def close(self) -> None:
        pass


def dataset(i: int) -> dict[str, Any]:
    return {"typeName": "DataSet", "guid": "-1", "attributes": {"qualifiedName": f"d{i}@t", "name": f"d{i}"}}


@pytest.mark.parametrize("bound", [1, 2])
def test_reads_and_writes_of_many_threads_never_exceed_the_bound(bound: int) -> None:
    emu = Emulator(None)
    client = embedded_client(emulator=emu, max_in_flight=bound)
    held = Held(emu)
    client.session.mount(EMBEDDED_URL, held)
    calls: list[Callable[[], object]] = []
    for i in range(3):
        calls.append(lambda i=i: client.upsert_entities([dataset(i)]))  # type: ignore[misc]
        calls.append(lambda i=i: client.get_entity_by_unique("DataSet", f"d{i}@t"))  # type: ignore[misc]
        calls.append(lambda: list(client.search_basic("DataSet")))
    errors: list[BaseException] = []

    def run(call: Callable[[], object]) -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - failed below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,)) for c in calls]
    for t in threads:
        t.start()
    try:
        # every thread's request is either at the server or waiting for a slot...
        with held.cond:
            assert held.cond.wait_for(lambda: held.now == bound, WAIT)
        assert client.in_flight.wait_until(lambda g: g.waiting == len(calls) - bound, WAIT)
        # ...and no more than the bound reached the server
        assert held.now == bound and held.seen == bound
    finally:
        held.release.set()
        for t in threads:
            t.join(WAIT)
    assert not errors
    assert held.seen == len(calls) and held.peak == bound and client.in_flight.peak == bound
    assert client.stats["entity_write"].requests == 3


def test_a_request_waiting_to_be_retried_holds_no_slot() -> None:
    client = embedded_client(None, max_in_flight=1)
    slept: list[int] = []
    client.retry.sleep = lambda seconds: slept.append(client.in_flight.now)  # type: ignore[method-assign]
    client.emulator.inject_fault(
        "status", at=1, status=503, path_prefix="/api/atlas/v2/types/typedefs/headers"
    )
    assert client.get_typedef_headers()
    assert slept == [0]  # during the back-off nothing was in flight


def test_parallel_in_the_settings_bounds_the_clients_requests(tmp_path: Path) -> None:
    assert client_from_settings(Settings(data_dir=tmp_path, parallel=3)).in_flight.limit == 3
    url = Settings(url="http://atlas:21000", password="pw", parallel=5)
    assert client_from_settings(url).in_flight.limit == 5
    assert client_from_settings(Settings(data_dir=tmp_path)).in_flight.limit == 2  # the default
