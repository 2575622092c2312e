"""Parallel writes as a real Atlas (JanusGraph/BerkeleyJE) takes them.

The emulator's contention mode answers an entity write that touches entities of another write in
flight with the 500 Atlas gives on a lock timeout. Applying a plan in parallel must never cause one (batches that
touch the same entities never run at once), and after a contention signal it must write one batch at
a time, the failed batch's retry alone.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from typing import Any

import pytest
import requests

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.atlas.retry import signals_contention
from atlas_sync.emulator import Emulator
from atlas_sync.emulator.http import serve
from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.receipt import RECEIPT_TYPE

from .helpers import assert_exact_state, client_for, expected_keys, fast_retry, graph_a, issue_graph, rows

BULK = "/api/atlas/v2/entity/bulk"
COLUMN_LINEAGE = re.compile(rb'"typeName":\s*"lineage_column_lineage"')
GENERIC_500 = "There was an error processing your request. It has been logged (ID 0123456789abcdef)."


class WriteLog:
    """Start/end times and statuses of the entity writes an emulator answers, and the most in flight."""

    def __init__(self, emu: Emulator) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[float, float, int]] = []
        self.lineage_calls: list[tuple[float, float]] = []  # writes of column-lineage entities
        self.in_flight = 0
        self.most = 0
        inner = emu.handle

        def handle(method: str, path: str, *args: Any, **kw: Any) -> Any:
            body = kw.get("body", args[2] if len(args) > 2 else b"")  # (query, headers, body)
            if not (method == "POST" and path.endswith("/v2/entity/bulk")) or _receipt_only(body):
                # (the job's receipt alone, reconcile.receipt: not one of the sync's batches)
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
                    if COLUMN_LINEAGE.search(body if isinstance(body, bytes) else b""):
                        self.lineage_calls.append(self.calls[-1][:2])

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
    pub.apply(pub.plan(graph, "j"))
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


# ---------------------------------------------------------------- sync over HTTP, batches in parallel


def _http_publisher(url: str, parallel: int, batch_size: int = 100, retries: int = 5) -> Publisher:
    retry, _ = fast_retry(retries)
    client = AtlasClient(url, auth=("admin", "admin"), retry=retry, batch_size=batch_size, timeout=(5, 30))
    return Publisher(client, domain="c", parallel=parallel, batch_size=batch_size)


def _stored(emu: Emulator) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str, str]]]:
    """What the emulator holds for domain c, guids replaced by qualified names: entities (type, name,
    attributes) and relationships (type, end 1, end 2, status)."""
    qn = {r["guid"]: r["qualified_name"] for r in rows(emu)}

    def norm(v: Any) -> Any:
        if isinstance(v, dict):
            if "guid" in v:
                return ["ref", qn.get(v["guid"], v["guid"])]
            return {k: norm(x) for k, x in sorted(v.items())}
        if isinstance(v, list):
            return sorted((norm(x) for x in v), key=json.dumps)
        return v

    entities = {
        (r["type_name"], r["qualified_name"], json.dumps(norm(r["attrs"]), sort_keys=True))
        for r in rows(emu, "c")
        if r["status"] == "ACTIVE"
    }
    rels = {
        (r[0], qn.get(r[1], r[1]), qn.get(r[2], r[2]), r[3])
        for r in emu.store.conn.execute("SELECT type_name, end1, end2, status FROM relationships")
    }
    return entities, rels


def _receipt_only(body: Any) -> bool:
    """Whether a bulk write holds the job's receipt and nothing else (it rides with the first batch)."""
    try:
        entities = json.loads(body).get("entities") or []
    except (TypeError, ValueError):
        return False
    return bool(entities) and all(e.get("typeName") == RECEIPT_TYPE for e in entities)


def _sync_over_http(graph: LineageGraph, parallel: int) -> tuple[Any, WriteLog, Any, Emulator]:
    emu = Emulator()
    contention = emu.set_contention(hold_ms=10)
    log = WriteLog(emu)
    server = serve(emu)
    try:
        pub = _http_publisher(server.url, parallel)
        pub.ensure_typedefs()
        result = pub.sync(graph, "j")
    finally:
        server.shutdown()
    return result, log, contention, emu


def test_a_sync_at_parallel_2_over_http_writes_exactly_what_parallel_1_writes_without_lock_timeouts() -> None:
    graph = issue_graph(200, job="j")  # 2,500 entities; processes of many batches read the same datasets
    one, log1, c1, emu1 = _sync_over_http(graph, parallel=1)
    two, log2, c2, emu2 = _sync_over_http(graph, parallel=2)
    try:
        assert c1 is not None and c2 is not None
        assert (c1.collisions, c2.collisions) == (0, 0)
        assert all(status == 200 for _, _, status in log1.calls + log2.calls), "no failed write request"
        assert log1.most == 1 and log2.most == 2, "parallel 2 must have run two batches at once"
        # column lineages of many processes read the same source columns: batches are packed so two
        # run at once all the same (reconcile.packing), where runs of 100 in order would go one by one
        cl = sorted(log2.lineage_calls)
        assert len(cl) >= 6
        assert any(b[0] < a[1] for a, b in zip(cl, cl[1:], strict=False)), (
            "column lineages went one at a time"
        )
        assert one.applied is not None and two.applied is not None
        assert (two.applied.created, two.applied.requests) == (one.applied.created, one.applied.requests)
        assert len(log2.calls) == len(log1.calls) == math.ceil(one.applied.created / 100)
        assert _stored(emu2) == _stored(emu1)
        assert_exact_state(emu2, graph, "c")
    finally:
        emu1.close()
        emu2.close()


def test_a_failed_batch_stops_a_parallel_sync_with_nothing_started_after_it_and_a_rerun_completes_it() -> (
    None
):
    graph = issue_graph(120, job="j")
    emu = Emulator()
    emu.set_contention(hold_ms=10)
    # the 6th entity write is refused (not retried): the sync stops there
    emu.inject_fault("status", at=6, status=400, path_prefix=BULK, method="POST")
    log = WriteLog(emu)
    server = serve(emu)
    try:
        pub = _http_publisher(server.url, parallel=2)
        pub.ensure_typedefs()
        with pytest.raises(AtlasSyncError):
            pub.sync(graph, "j")
        failed = [c for c in log.calls if c[2] == 400]
        assert len(failed) == 1
        # The server ends the failed write a moment before the client reads its answer: one batch may
        # start in that moment (the scheduler's own rule is checked in tests/unit/test_write_scheduler.py);
        # none after it, and the sync stops there.
        late = [c for c in log.calls if c[0] > failed[0][1]]
        assert len(late) <= 1, f"{len(late)} writes started after the failure"
        assert len(log.calls) <= 6 + 2, "the sync went on after the failure"  # + one in flight, + that one
        stored = {(r["type_name"], r["qualified_name"]) for r in rows(emu, "c")}
        written = {k for k in expected_keys(graph, "c") if k in stored}
        assert written, "the batches before the failure were applied"
        again = pub.sync(graph, "j")
        assert again.applied is not None
        assert again.applied.created == len(expected_keys(graph, "c")) - len(written), "nothing written twice"
        assert_exact_state(emu, graph, "c")
    finally:
        server.shutdown()
        emu.close()
