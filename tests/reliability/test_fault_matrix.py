"""Fault matrix: a sync of a few hundred entities with one injected fault at every request position.

The starting state holds job0's graph A, another job (job1) of the same domain and a copy of A in
another domain. The faulted sync moves job0 to graph B (creates, updates and deletes). For each fault
kind and position:

* with retries, the sync succeeds and the emulator holds exactly B (nothing lost, nothing duplicated);
* without retries, the sync fails cleanly (an AtlasSyncError naming the failed call), and one more
  sync reaches exactly B;
* in every case, the other job's and the other domain's entities are byte-for-byte untouched.

Both sync paths run the matrix: the whole plan in memory, and the streaming sync (disk spool, plan
and apply chunk by chunk; docs/big-inputs.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import RetryPolicy
from atlas_sync.emulator import Emulator
from atlas_sync.errors import AtlasSyncError

from .helpers import assert_exact_state, client_for, fast_retry, graph_a, graph_b, snapshot

DOMAIN = "rel"
A = graph_a(200, job=0)
B = graph_b(A)
OTHER_JOB = graph_a(60, job=1)

# (id, inject_fault kwargs)
FAULTS = [
    ("http500", {"kind": "status", "status": 500}),
    ("http502", {"kind": "status", "status": 502}),
    ("http503", {"kind": "status", "status": 503}),
    ("http429-retry-after", {"kind": "status", "status": 429, "retry_after": 3}),
    ("reset", {"kind": "reset"}),
    ("read-timeout", {"kind": "timeout"}),
    ("lost-response", {"kind": "lost_response"}),
]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("baseline") / "atlas.db"
    emu = Emulator(path)
    client = client_for(emu, RetryPolicy.none())
    Publisher(client, domain=DOMAIN, batch_size=40).sync(A)
    Publisher(client, domain=DOMAIN, batch_size=40).sync(OTHER_JOB)
    Publisher(client, domain="other", batch_size=40).sync(A)
    emu.close()
    return path


@pytest.fixture()
def fresh(baseline: Path) -> Iterator[object]:
    """Makes in-memory emulators holding a copy of the baseline (no disk I/O per case)."""
    made: list[Emulator] = []

    def make() -> Emulator:
        emu = Emulator(None)
        with sqlite3.connect(baseline) as src:
            src.backup(emu.store.conn)
        emu._load_registry()  # pick up the copied typedefs
        made.append(emu)
        return emu

    yield make
    for emu in made:
        emu.close()


def _outside(row: dict) -> bool:
    return not row["qualified_name"].endswith("@" + DOMAIN) or row["attrs"].get("atlasSyncJob") == "job0001"


def _sync(emu: Emulator, retry: RetryPolicy, stream: bool = False) -> None:
    Publisher(client_for(emu, retry), domain=DOMAIN, batch_size=40, parallel=2).sync(B, stream=stream)


def _positions(fresh, stream: bool = False) -> int:
    emu = fresh()
    emu.clear_log()
    _sync(emu, RetryPolicy.none(), stream)
    assert_exact_state(emu, B, DOMAIN)
    return len(emu.request_log)


def test_the_scenario_creates_updates_and_deletes(fresh) -> None:
    emu = fresh()
    plan = Publisher(client_for(emu, RetryPolicy.none()), domain=DOMAIN, batch_size=40).plan(B)
    counts = plan.counts
    assert counts["create"] > 0 and counts["update"] > 0 and counts["delete"] > 0


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("fault", [f[1] for f in FAULTS], ids=[f[0] for f in FAULTS])
def test_one_fault_at_any_request_is_retried_to_the_exact_state(fresh, fault, stream) -> None:
    total = _positions(fresh, stream)
    assert total >= 8  # typedef check, search, reads, several write batches, deletes
    for at in range(1, total + 1):
        emu = fresh()
        before = snapshot(emu, _outside)
        emu.inject_fault(**fault, at=at)
        retry, waits = fast_retry()
        _sync(emu, retry, stream)
        assert emu.faults.faults[0].fired == 1, f"position {at}: the fault did not fire"
        assert_exact_state(emu, B, DOMAIN)
        assert snapshot(emu, _outside) == before, f"position {at}: entities outside the scope changed"
        if fault.get("retry_after"):
            assert waits == [3.0], f"position {at}: Retry-After not honoured ({waits})"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("fault", [f[1] for f in FAULTS], ids=[f[0] for f in FAULTS])
def test_without_retries_a_fault_fails_cleanly_and_the_next_sync_converges(fresh, fault, stream) -> None:
    total = _positions(fresh, stream)
    for at in range(1, total + 1):
        emu = fresh()
        before = snapshot(emu, _outside)
        emu.inject_fault(**fault, at=at)
        with pytest.raises(AtlasSyncError) as info:
            _sync(emu, RetryPolicy.none(), stream)
        message = str(info.value)
        assert "/api/atlas/" in message, f"position {at}: the error does not name the call: {message}"
        assert "Traceback" not in message
        assert snapshot(emu, _outside) == before, f"position {at}: entities outside the scope changed"
        emu.clear_faults()
        _sync(emu, RetryPolicy.none(), stream)
        assert_exact_state(emu, B, DOMAIN)
        assert snapshot(emu, _outside) == before
