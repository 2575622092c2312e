"""The background listing hands headers over on the taker's thread, bounded, and raises its errors there."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from feed_probe import until, waiting_for_room

from atlas_sync.reconcile import listing
from atlas_sync.reconcile.actual import ActualHeader
from atlas_sync.reconcile.listing import BackgroundListing, Row


def headers(n: int) -> Iterator[ActualHeader]:
    for i in range(n):
        yield ActualHeader(f"g{i}", "lineage_column", f"c{i}@d", "job", None)


def test_take_with_wait_hands_over_every_header_in_order_on_the_callers_thread() -> None:
    got: list[Row] = []
    threads: set[str] = set()

    def sink(rows: list[Row]) -> None:
        threads.add(threading.current_thread().name)
        got.extend(rows)

    bg = BackgroundListing(lambda: headers(2_500))
    bg.take(sink, wait=True)
    assert bg.done
    assert [r[2] for r in got] == [f"g{i}" for i in range(2_500)]
    assert got[0] == ("lineage_column", "c0@d", "g0", "job", None)
    assert threads == {threading.current_thread().name}


def test_an_error_of_the_listing_is_raised_by_take() -> None:
    def failing() -> Iterator[ActualHeader]:
        yield from headers(1_500)
        raise RuntimeError("search refused")

    got: list[Row] = []
    bg = BackgroundListing(failing)
    with pytest.raises(RuntimeError, match="search refused"):
        bg.take(got.extend, wait=True)
    assert len(got) == 1_000  # the full page before the failure; never a silent partial listing


def test_take_without_wait_returns_what_is_listed_so_far() -> None:
    gate = threading.Event()

    def gated() -> Iterator[ActualHeader]:
        yield from headers(listing.PAGE)
        gate.wait(10)
        yield from headers(5)

    bg = BackgroundListing(gated)
    until(lambda: bg._feed._items.qsize() > 0)
    got: list[Row] = []
    bg.take(got.extend, wait=False)
    assert len(got) == listing.PAGE and not bg.done
    gate.set()
    bg.take(got.extend, wait=True)
    assert len(got) == listing.PAGE + 5 and bg.done


def test_the_listing_waits_for_a_slow_taker_and_stops_when_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "AHEAD", 2)
    produced = 0
    started = threading.Event()

    def endless() -> Iterator[ActualHeader]:
        nonlocal produced
        started.set()
        while True:
            produced += 1
            yield ActualHeader("g", "t", "q", None, None)

    bg = BackgroundListing(endless)
    started.wait(10)
    # the reader stops at a full buffer: it waits there, having made at most a page more
    until(lambda: waiting_for_room(bg._feed._threads))
    assert produced <= 3 * listing.PAGE + 1
    bg.cancel()
    bg._feed._threads[0].join(5)
    assert not bg._feed._threads[0].is_alive()
