"""interleave: several listings read at once (one search per type on Atlas before 2.2)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator

import pytest
from feed_probe import readers, until, waiting_for_room

from atlas_sync.reconcile.interleave import interleave


def test_every_item_of_every_source_is_given_once() -> None:
    sources = [lambda: iter(range(0, 1000)), lambda: iter(range(1000, 1500)), lambda: iter([])]
    assert sorted(interleave(sources, workers=2, buffer=7)) == list(range(1500))


def test_the_sources_are_read_at_the_same_time() -> None:
    # each source waits until both have started: read one after the other, the barrier breaks
    barrier = threading.Barrier(2, timeout=5)

    def source(tag: str) -> Iterator[str]:
        barrier.wait()
        yield tag

    assert sorted(interleave([lambda: source("a"), lambda: source("b")], workers=2)) == ["a", "b"]


def test_a_source_s_error_is_raised_to_the_consumer() -> None:
    def failing() -> Iterator[int]:
        yield 1
        raise ValueError("page 2 refused")

    with pytest.raises(ValueError, match="page 2 refused"):
        list(interleave([failing, lambda: iter(range(10))], workers=2))


def test_closing_early_stops_the_readers() -> None:
    made = itertools.count()

    def endless() -> Iterator[int]:
        while True:
            yield next(made)

    it = interleave([endless, endless], workers=2, buffer=10)
    assert next(it) is not None
    it.close()  # returns only once both readers have stopped
    assert not readers("atlas-sync-list")
    seen = next(made)
    assert next(made) == seen + 1  # nothing read meanwhile


def test_at_most_buffer_items_wait_for_a_slow_consumer() -> None:
    made = itertools.count()

    def many() -> Iterator[int]:
        for _ in range(10_000):
            yield next(made)

    it = interleave([many, many], workers=2, buffer=50)
    next(it)
    until(lambda: waiting_for_room(readers("atlas-sync-list")))
    # one taken, at most 50 queued, and one held by each reader waiting to queue it
    assert next(made) <= 1 + 50 + 2
    it.close()


def test_one_source_is_read_on_the_consumer_s_thread() -> None:
    names: list[str] = []

    def source() -> Iterator[int]:
        names.append(threading.current_thread().name)
        yield 1

    assert list(interleave([source])) == [1]
    assert names == [threading.current_thread().name]
