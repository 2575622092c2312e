"""Concurrency in one place: the bound on requests in flight against Atlas, and iterating on threads.

:class:`InFlight` is held by the client (:class:`~atlas_sync.atlas.AtlasClient`): every request, read or
write, from whichever thread, takes a slot for as long as it is on the wire (not while it waits to be
retried), so however many threads the layers above start, Atlas sees at most ``limit`` requests at once
(``--parallel``). :class:`Feed` runs paged listings on threads and hands their items to the caller's
thread through a bounded queue (the domain's listing while the input renders, one search per type at
once on servers that take one type per search).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class InFlight:
    """At most ``limit`` requests in flight at once, across threads (``None``: no bound). ``peak`` is the
    most there ever were; ``waiting`` how many wait for a slot now."""

    def __init__(self, limit: int | None = None) -> None:
        self._cond = threading.Condition()
        self.limit = limit if limit is None else max(1, limit)
        self.now = 0
        self.waiting = 0
        self.peak = 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the slots (wait for one) while the body runs."""
        with self._cond:
            self.waiting += 1
            self._cond.notify_all()
            while self.limit is not None and self.now >= self.limit:
                self._cond.wait()
            self.waiting -= 1
            self.now += 1
            self.peak = max(self.peak, self.now)
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self.now -= 1
                self._cond.notify_all()

    def wait_until(self, predicate: Callable[[InFlight], bool], timeout: float | None = None) -> bool:
        """Wait until ``predicate(self)`` holds (checked at every change of the counts); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self), timeout)


_DONE = object()


class _Failed:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class Feed(Generic[T]):
    """The items of every ``sources[i]()``, each source read on a daemon thread (at most ``workers``
    threads), handed over by :meth:`items` on the caller's thread in the order they arrive. At most
    ``buffer`` items wait between the readers and the caller, so memory stays bounded. The first error of
    a source is raised by :meth:`items`; :meth:`close` stops the readers after the item each is on."""

    def __init__(
        self,
        sources: Sequence[Callable[[], Iterable[T]]],
        *,
        workers: int = 1,
        buffer: int = 1000,
        name: str = "atlas-sync-feed",
    ) -> None:
        self._items: queue.Queue[object] = queue.Queue(maxsize=max(1, buffer))
        self._stop = threading.Event()
        self._todo: queue.SimpleQueue[Callable[[], Iterable[T]]] = queue.SimpleQueue()
        for source in sources:
            self._todo.put(source)
        n = min(max(1, workers), len(sources))
        self._running = n
        self._threads = [
            threading.Thread(target=self._read, name=name if n == 1 else f"{name}-{i}", daemon=True)
            for i in range(n)
        ]
        for t in self._threads:
            t.start()

    @property
    def done(self) -> bool:
        """Every source was read to its end (or one failed)."""
        return self._running == 0

    def _put(self, item: object) -> bool:
        # (a reader blocked on a full queue looks at the stop flag now and then)
        while not self._stop.is_set():
            try:
                self._items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _read(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    source = self._todo.get_nowait()
                except queue.Empty:
                    return
                for item in source():
                    if not self._put(item):
                        return
        except BaseException as exc:  # noqa: BLE001 - raised on the caller's thread
            self._put(_Failed(exc))
        finally:
            self._put(_DONE)

    def items(self, *, wait: bool = True) -> Iterator[T]:
        """The items read so far and, with ``wait``, the rest until every source is done."""
        while self._running:
            try:
                item = self._items.get(block=wait)
            except queue.Empty:
                return
            if item is _DONE:
                self._running -= 1
            elif isinstance(item, _Failed):
                self._running = 0
                self._stop.set()
                raise item.exc
            else:
                yield cast(T, item)

    def close(self, *, join: bool = True) -> None:
        """Stop the readers (each after the item it is on); with ``join``, wait until they have."""
        self._stop.set()
        if join:
            for t in self._threads:
                t.join()


__all__ = ["Feed", "InFlight"]
