"""Parallel writes as a real Atlas (JanusGraph/BerkeleyJE) takes them.

The emulator's contention mode answers an entity write that touches entities of another write in
flight with the 500 Atlas gives on a lock timeout. Applying a plan in parallel must never cause one (batches that
touch the same entities never run at once), and after a contention signal it must write one batch at
a time, the failed batch's retry alone.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import requests

from atlas_sync.api import Publisher
from atlas_sync.atlas.retry import signals_contention
from atlas_sync.emulator import Emulator
from atlas_sync.emulator.http import serve

from .helpers import assert_exact_state, client_for, fast_retry, graph_a

BULK = "/api/atlas/v2/entity/bulk"
GENERIC_500 = "There was an error processing your request. It has been logged (ID 0123456789abcdef)."


class WriteLog:
    """Start/end times and statuses of the entity writes an emulator answers, and the most in flight."""

    def __init__(self, emu: Emulator) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[float, float, int]] = []
        self.in_flight = 0
        self.most = 0
        inner = emu.handle

        def handle(method: str, path: str, *args: Any, **kw: Any) -> Any:
            if not (method == "POST" and path.endswith("/v2/entity/bulk")):
                return inner(method, path, *args, **kw)
            with self.lock:
                self.in_flight += 1
                self.most = max(self.most, self.in_flight)
            start = time.monotonic()
            status = 0
            try:
                resp = inner(method, path, *args, **kw)
                status = resp.status
                return resp
            finally:
                with self.lock:
                    self.in_flight -= 1
                    self.calls.append((start, time.monotonic(), status))

        emu.handle = handle  # type: ignore[method-assign]


def _publisher(emu: Emulator, parallel: int, retries: int = 5) -> Publisher:
    retry, _ = fast_retry(retries)
    return Publisher(client_for(emu, retry, batch_size=40), domain="c", parallel=parallel, batch_size=40)


def _dataset(name: str, **extra: Any) -> dict[str, Any]:
    return {"typeName": "DataSet", "attributes": {"qualifiedName": f"{name}@c", "name": name, **extra}}


def test_the_emulator_answers_overlapping_writes_with_atlas_lock_timeout_500() -> None:
    emu = Emulator()
    emu.set_contention(hold_ms=400)
    server = serve(emu)
    try:
        post = lambda body: requests.post(  # noqa: E731
            server.url + BULK, json=body, auth=("admin", "admin"), timeout=10
        )
        first: list[requests.Response] = []
        t = threading.Thread(target=lambda: first.append(post({"entities": [_dataset("x")]})))
        t.start()
        time.sleep(0.15)
        proc = {
            "typeName": "Process",
            "attributes": {
                "qualifiedName": "p@c",
                "name": "p",
                "inputs": [{"typeName": "DataSet", "uniqueAttributes": {"qualifiedName": "x@c"}}],
            },
        }
        clash = post({"entities": [proc]})
        other = post({"entities": [_dataset("y")]})
        t.join()
        assert first[0].status_code == 200
        assert clash.status_code == 500
        assert clash.text.startswith("There was an error processing your request")
        assert other.status_code == 200  # disjoint writes go through meanwhile
        names = {r[0] for r in emu.store.conn.execute("SELECT qualified_name FROM entities")}
        assert "p@c" not in names and {"x@c", "y@c"} <= names
        assert emu.contention is not None and emu.contention.collisions == 1
    finally:
        server.shutdown()
        emu.close()


def test_a_parallel_apply_never_writes_batches_that_touch_the_same_entities_at_once() -> None:
    emu = Emulator()
    contention = emu.set_contention(hold_ms=15)
    log = WriteLog(emu)
    graph = graph_a(1500)  # processes of several batches read the same raw datasets
    pub = _publisher(emu, parallel=4)
    pub.ensure_typedefs()
    pub.apply(pub.plan(graph, "j"))  # `apply` runs batches in parallel (`sync` writes one at a time)
    assert contention is not None and contention.collisions == 0
    assert log.most >= 2, "the sync should have run independent batches in parallel"
    assert all(status == 200 for _, _, status in log.calls)
    assert_exact_state(emu, graph.model_copy(update={"job": "j"}), "c")
    emu.close()


@pytest.mark.parametrize("status", [503, 500])
def test_after_a_contention_signal_batches_go_one_at_a_time(status: int) -> None:
    emu = Emulator()
    emu.set_contention(hold_ms=15)
    # the third entity write fails as a lock timeout would (500 with Atlas's generic body) or busy (503)
    emu.inject_fault("status", at=3, status=status, path_prefix=BULK, method="POST")
    log = WriteLog(emu)
    graph = graph_a(1500)
    pub = _publisher(emu, parallel=4)
    pub.ensure_typedefs()
    pub.apply(pub.plan(graph, "j"))
    failed = [c for c in log.calls if c[2] == status]
    assert len(failed) == 1
    after = sorted(c for c in log.calls if c[0] >= failed[0][1])
    assert len(after) >= 3
    for (_, end, _), (start, _, _) in zip(after, after[1:], strict=False):
        assert start >= end, "after the contention signal no two writes overlap"
    assert_exact_state(emu, graph.model_copy(update={"job": "j"}), "c")
    emu.close()


def test_contention_signals() -> None:
    assert signals_contention(None, "read timed out")
    assert signals_contention(503, "")
    assert signals_contention(500, GENERIC_500)
    assert signals_contention(500, '{"errorMessage": "Could not commit transaction due to exception"}')
    assert not signals_contention(500, '{"errorCode": "ATLAS-500-00-011", "errorMessage": "bad value"}')
    assert not signals_contention(400, "lock")
    assert not signals_contention(404, "")
