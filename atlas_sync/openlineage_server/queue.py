"""The FIFO between request threads and the sync worker (bounded by the journal, not here)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class EventQueue(Generic[T]):
    """Thread-safe FIFO; ``take`` waits for a first item, then briefly for more to fill a batch."""

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._cond = threading.Condition()

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def put(self, items: Iterable[T]) -> None:
        with self._cond:
            self._items.extend(items)
            self._cond.notify()

    def take(self, max_items: int, timeout: float, linger: float) -> list[T]:
        """Wait up to ``timeout`` for an item, then up to ``linger`` more to fill a batch."""
        with self._cond:
            if not self._items:
                self._cond.wait(timeout)
            if not self._items:
                return []
            if linger > 0 and len(self._items) < max_items:
                deadline = time.monotonic() + linger
                while len(self._items) < max_items:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
            n = min(max_items, len(self._items))
            return [self._items.popleft() for _ in range(n)]

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()
