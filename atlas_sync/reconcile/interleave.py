"""Several paged listings read at once, their items yielded as they arrive.

A real Atlas before 2.2 takes one type name per basic search, so a listing over the profile's root
types is one search per type; the server answers several at once faster than one after another
(Atlas 2.1.0 on two cores: a job of 12,500 entities listed in 1.6 s instead of 2.5 s). Memory stays
bounded: at most ``buffer`` items wait between the readers and the consumer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

_DONE = object()


class _Failed:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


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
    items: queue.Queue[Any] = queue.Queue(maxsize=buffer)
    stop = threading.Event()
    todo: queue.SimpleQueue[Callable[[], Iterable[Any]]] = queue.SimpleQueue()
    for source in sources:
        todo.put(source)

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            while not stop.is_set():
                try:
                    source = todo.get_nowait()
                except queue.Empty:
                    return
                for item in source():
                    if not put(item):
                        return
        except BaseException as exc:  # noqa: BLE001 - raised on the consumer's thread
            put(_Failed(exc))
        finally:
            put(_DONE)

    threads = [
        threading.Thread(target=read, name=f"atlas-sync-list-{i}", daemon=True)
        for i in range(min(workers, len(sources)))
    ]
    for t in threads:
        t.start()
    running = len(threads)
    try:
        while running:
            item = items.get()
            if item is _DONE:
                running -= 1
            elif isinstance(item, _Failed):
                raise item.exc
            else:
                yield item
    finally:
        stop.set()
        for t in threads:
            t.join()
