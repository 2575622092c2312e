"""Write batches packed when they can start (atlas_sync.reconcile.packing).

A real :class:`WriteScheduler` runs the batches; each batch's work waits on a gate the test opens, or
ends at once. What is checked is which items went in which batch, and what ran beside what.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from atlas_sync.reconcile.apply import BatchOutcome, WriteBatch, WriteScheduler
from atlas_sync.reconcile.packing import BatchPacker
from atlas_sync.reconcile.plan import PlanItem
from atlas_sync.render.renderer import DesiredEntity

COL = "lineage_column"


def _item(name: str, *reads: str, type_name: str = COL) -> tuple[PlanItem, DesiredEntity]:
    """An item creating the column ``name``, which refers to the columns ``reads``."""
    item = PlanItem("create", type_name, name)
    refs = {"inputs": [(COL, r) for r in reads]}
    return item, DesiredEntity(type_name, name, {"qualifiedName": name}, refs=refs)


class Runs:
    """The scheduler's work: records each batch's items when it starts and ends; ``hold`` keeps the
    batch holding that item open until :meth:`release`."""

    def __init__(self, *hold: str) -> None:
        self.lock = threading.Lock()
        self.gates = {name: threading.Event() for name in hold}
        self.started: list[list[str]] = []
        self.ended: list[list[str]] = []
        self.beside: list[tuple[list[str], list[list[str]]]] = []  # a batch, and those running as it began
        self.running: list[list[str]] = []

    def prepare(self, batch: WriteBatch, _flight: object) -> Callable[[], BatchOutcome]:
        names = [it.qualified_name for it in batch.items]
        with self.lock:
            self.started.append(names)
            self.beside.append((names, [list(r) for r in self.running]))
            self.running.append(names)

        def work() -> BatchOutcome:
            for name in names:
                gate = self.gates.get(name)
                if gate is not None:
                    assert gate.wait(30), f"{name} never released"
            with self.lock:
                self.ended.append(names)
                self.running.remove(names)
            return BatchOutcome({}, 1)

        return work

    def release(self, name: str) -> None:
        self.gates[name].set()


def test_a_batch_beside_one_in_flight_takes_only_items_that_touch_nothing_it_touches() -> None:
    runs = Runs("a1")
    with WriteScheduler(2, runs.prepare, lambda b, o: None) as s:
        packer = BatchPacker(s, 2)
        packer.add(*_item("a1", "s.c0"))
        packer.add(*_item("a2", "s.c1"))  # a full batch, nothing in flight: it starts, held open
        packer.add(*_item("b1", "s.c0"))  # reads what a1 reads: must not run beside it
        packer.add(*_item("c1", "t.c0"))
        packer.add(*_item("c2", "t.c1"))
        assert runs.started == [["a1", "a2"], ["c1", "c2"]]
        runs.release("a1")
        packer.flush()
        s.close()
    assert runs.started[-1] == ["b1"]
    assert sorted(n for batch in runs.started for n in batch) == ["a1", "a2", "b1", "c1", "c2"]


def test_what_refers_to_an_entity_of_an_item_passed_over_waits_for_it() -> None:
    runs = Runs("a1")
    with WriteScheduler(2, runs.prepare, lambda b, o: None) as s:
        packer = BatchPacker(s, 2, hold=8)
        packer.add(*_item("a1", "s.c0"))
        packer.add(*_item("a2", "s.c1"))
        # x is passed over (it reads s.c0, which a1 holds); y refers to x: it may not go before x
        packer.add(*_item("x", "s.c0"))
        packer.add(*_item("y", "x"))  # (a column reading a column: only keys matter here)
        packer.add(*_item("z1", "u.c0"))
        packer.add(*_item("z2", "u.c1"))
        assert runs.started == [["a1", "a2"], ["z1", "z2"]]
        runs.release("a1")
        packer.flush()
        s.close()
    order = [n for batch in runs.started for n in batch]
    assert order.index("x") < order.index("y")
    x_batch = next(b for b in runs.started if "x" in b)
    y_batch = next(b for b in runs.started if "y" in b)
    assert x_batch is y_batch or runs.ended.index(x_batch) < runs.started.index(y_batch)


def test_add_waits_once_as_many_items_as_it_may_hold_are_waiting() -> None:
    runs = Runs("a1")
    added = threading.Event()
    with WriteScheduler(2, runs.prepare, lambda b, o: None) as s:
        packer = BatchPacker(s, 2, hold=4)
        packer.add(*_item("a1", "s.c0"))
        packer.add(*_item("a2", "s.c1"))
        for i in range(3):  # all read s.c0: none may start beside a1
            packer.add(*_item(f"b{i}", "s.c0"))
        assert len(packer) == 3

        def fourth() -> None:
            packer.add(*_item("b3", "s.c0"))
            added.set()

        t = threading.Thread(target=fourth)
        t.start()
        assert not added.wait(0.2), "the fifth item waiting must wait for the batch in flight"
        runs.release("a1")
        t.join(30)
        assert added.is_set() and len(packer) <= 4
        packer.flush()
        s.close()
    assert sorted(n for batch in runs.started for n in batch) == ["a1", "a2", "b0", "b1", "b2", "b3"]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(1, 60),
    shared=st.integers(1, 12),
    size=st.integers(1, 7),
    parallel=st.integers(1, 3),
)
def test_every_item_is_sent_once_in_full_batches_never_beside_what_it_touches_nor_before_what_it_needs(
    seed: int, count: int, shared: int, size: int, parallel: int
) -> None:
    rng = random.Random(seed)
    items = []
    for i in range(count):
        reads = [f"s.c{rng.randrange(shared)}" for _ in range(rng.randint(0, 2))]
        if i and rng.random() < 0.3:
            reads.append(f"e{rng.randrange(i)}")  # refers to an earlier item's entity
        items.append(_item(f"e{i}", *reads))
    runs = Runs()
    with WriteScheduler(parallel, runs.prepare, lambda b, o: None) as s:
        packer = BatchPacker(s, size)
        for it in items:
            packer.add(*it)
        packer.flush()
        s.close()
    sent = [n for batch in runs.started for n in batch]
    assert sorted(sent) == sorted(f"e{i}" for i in range(count))
    assert all(len(b) == size for b in runs.started[:-parallel]), "only the last batches may be short"
    assert len(runs.started) <= -(-count // size) + parallel - 1
    touched = {it.qualified_name: {k[1] for k in e.refs["inputs"]} | {it.qualified_name} for it, e in items}
    for batch, others in runs.beside:
        mine = set().union(*(touched[n] for n in batch))
        for other in others:
            assert mine.isdisjoint(set().union(*(touched[n] for n in other)))
    where = {n: k for k, batch in enumerate(runs.started) for n in batch}
    for it, e in items:
        for _, ref in e.refs["inputs"]:
            if ref in where:
                assert where[ref] <= where[it.qualified_name], f"{it.qualified_name} went before {ref}"
