"""Several paged listings read at once, their items yielded as they arrive.

A real Atlas before 2.2 takes one type name per basic search, so a listing over the profile's root
types is one search per type; the server answers several at once faster than one after another
(Atlas 2.1.0 on two cores: a job of 12,500 entities listed in 1.6 s instead of 2.5 s). Memory stays
bounded: at most ``buffer`` items wait between the readers and the consumer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from atlas_sync.atlas.concurrency import Feed


def interleave(
    sources: list[Callable[[], Iterable[Any]]], *, workers: int = 4, buffer: int = 20_000
) -> Iterator[Any]:
    """The items of every ``sources[i]()``, each source read on a thread of its own (at most
    ``workers`` at a time), in the order they arrive. The first error of a source is raised here;
    closing the iterator early stops the readers after the page each is on."""
    if len(sources) <= 1 or workers <= 1:
        for source in sources:
            yield from source()
        return
    feed = Feed(sources, workers=workers, buffer=buffer, name="atlas-sync-list")
    try:
        yield from feed.items()
    finally:
        feed.close()
