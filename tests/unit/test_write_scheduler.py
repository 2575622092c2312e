"""The conflict-free write scheduler shared by `apply` and `sync` (atlas_sync.reconcile.apply).

Batches are plain objects here and their work is a function that waits on an event: no client, no
timing. What is checked is which batches have started while others are still running. Every wait
has a deadline (a failure, not a hang).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from atlas_sync.reconcile.apply import BatchOutcome, WriteBatch, WriteScheduler
from atlas_sync.reconcile.plan import PlanItem
from atlas_sync.render.renderer import DesiredEntity

DS = "lineage_dataset"
DEADLINE = 30.0  # seconds; only reached when something is wrong
COL = "lineage_column"


def _batch(name: str, refs: dict[str, tuple[str, str]] | None = None) -> WriteBatch:
    """A batch creating the dataset ``name``, whose entity refers to ``refs``."""
    item = PlanItem("create", DS, name)
    entity = DesiredEntity(DS, name, {"qualifiedName": name}, refs=dict(refs or {}))
    return WriteBatch([item], {item.key: entity})


class Recorder:
    """Runs each batch's work on the scheduler's worker threads; a batch named in ``hold`` waits until
    released. Records starts, ends and folded results in order."""

    def __init__(self, *hold: str, fail: str | None = None) -> None:
        self.lock = threading.Condition()  # notified on every start, end and fold
        self.events: list[str] = []
        self.gates = {name: threading.Event() for name in hold}
        self.fail = fail
        self.folded: list[str] = []
        self.prepared: list[str] = []  # batches the scheduler started, in order
        self.prepared_on: set[int] = set()

    def prepare(self, batch: WriteBatch, _flight: object) -> Callable[[], BatchOutcome]:
        self.prepared_on.add(threading.get_ident())
        name = batch.items[0].qualified_name
        with self.lock:
            self.prepared.append(name)
            self.lock.notify_all()

        def work() -> BatchOutcome:
            with self.lock:
                self.events.append(f"start {name}")
                self.lock.notify_all()
            gate = self.gates.get(name)
            if gate is not None:
                assert gate.wait(DEADLINE), f"{name} never released"
            with self.lock:
                self.events.append(f"end {name}")
                self.lock.notify_all()
            if name == self.fail:
                raise RuntimeError(f"{name} failed")
            return BatchOutcome({(DS, name): f"guid-{name}"}, 1)

        return work

    def finished(self, batch: WriteBatch, outcome: BatchOutcome) -> None:
        self.folded.append(batch.items[0].qualified_name)

    def started(self) -> list[str]:
        with self.lock:
            return list(self.prepared)

    def wait_until(self, condition: Callable[[], bool]) -> None:
        """Block until ``condition()`` holds after a start or an end; fail after the deadline."""
        with self.lock:
            assert self.lock.wait_for(condition, DEADLINE), self.events

    def release(self, name: str) -> None:
        self.gates[name].set()


def test_a_batch_referring_to_an_entity_of_an_earlier_running_batch_waits_for_it() -> None:
    rec = Recorder("a")
    with WriteScheduler(4, rec.prepare, rec.finished) as s:
        s.submit(_batch("a"))  # creates a; held open
        s.submit(_batch("b", {"source": (DS, "a")}))  # refers to a: must wait for a to be committed
        s.submit(_batch("c"))  # touches nothing of a or b: may run now
        s.submit(_batch("d", {"source": (DS, "b")}))  # refers to b, which has not even started
        assert rec.started() == ["a", "c"], rec.events
        rec.release("a")
        s.close()
    ev = rec.events
    assert ev.index("start b") > ev.index("end a")
    assert ev.index("start d") > ev.index("end b")
    assert sorted(rec.folded) == ["a", "b", "c", "d"]
    assert rec.prepared_on == {threading.get_ident()}, "prepare must run on the calling thread"


def test_independent_batches_run_at_once_but_never_more_than_parallel() -> None:
    rec = Recorder("a", "b", "c")
    done = threading.Event()

    def submit_all() -> None:
        with WriteScheduler(2, rec.prepare, rec.finished) as s:
            for name in "abc":
                s.submit(_batch(name))
            s.close()
        done.set()

    t = threading.Thread(target=submit_all)
    t.start()
    # the third submit waits (3 batches held > 2); both a and b are running meanwhile
    rec.wait_until(lambda: "start a" in rec.events and "start b" in rec.events)
    assert rec.started() == ["a", "b"]
    assert not done.is_set()
    rec.release("a")
    rec.release("b")
    rec.release("c")
    t.join(DEADLINE)
    assert done.is_set() and rec.started() == ["a", "b", "c"]


def test_the_first_error_stops_new_batches_lets_running_ones_end_and_is_raised() -> None:
    rec = Recorder("a", fail="a")
    s = WriteScheduler(2, rec.prepare, rec.finished)
    s.submit(_batch("a"))
    s.submit(_batch("b", {"source": (DS, "a")}))  # waits for a, which fails
    rec.release("a")
    with pytest.raises(RuntimeError, match="a failed"):
        s.close()
    assert rec.started() == ["a"], "nothing may start after the failed batch"
    assert rec.folded == []


def test_a_batch_in_flight_when_another_fails_is_folded_in() -> None:
    rec = Recorder("a", "b", fail="b")
    s = WriteScheduler(2, rec.prepare, rec.finished)
    s.submit(_batch("a"))
    s.submit(_batch("b"))
    rec.release("b")  # b fails while a still runs
    rec.wait_until(lambda: "end b" in rec.events)
    # a ends only once the scheduler has taken in b's failure (inside the submit below): the
    # scheduler has no hook for that, so a watcher looks at its error, with a deadline
    release_a = threading.Thread(target=_release_when_failed, args=(s, rec, "a"))
    release_a.start()
    with pytest.raises(RuntimeError, match="b failed"):
        s.submit(_batch("c"))
    release_a.join(DEADLINE)
    assert rec.folded == ["a"], "the batch in flight ends and its result is kept"
    assert "c" not in rec.started()


def _release_when_failed(scheduler: WriteScheduler, rec: Recorder, name: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while scheduler.error is None and time.monotonic() < deadline:
        threading.Event().wait(0.001)
    rec.release(name)


def test_one_at_a_time_runs_in_the_calling_thread() -> None:
    rec = Recorder()
    seen: list[int] = []
    s = WriteScheduler(1, rec.prepare, lambda b, o: seen.append(threading.get_ident()))
    s.submit(_batch("a"))
    s.submit(_batch("b", {"source": (DS, "a")}))
    s.close()
    assert rec.started() == ["a", "b"] and seen == [threading.get_ident()] * 2
