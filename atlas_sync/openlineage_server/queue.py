"""The FIFO between request threads and the sync worker (bounded by the journal, not here), and
the JSON-lines file writer of the dead-letter file."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class EventQueue(Generic[T]):
    """Thread-safe FIFO; ``take`` waits for a first item, then briefly for more to fill a batch."""

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._cond = threading.Condition()
        self._fill = 1  # items a waiting taker needs before it wants to be woken

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def put(self, items: Iterable[T]) -> None:
        with self._cond:
            before = len(self._items)
            self._items.extend(items)
            # a lingering taker is woken once its batch is full, not by every put (each wake-up
            # would take the GIL from the request path)
            if before < self._fill <= len(self._items):
                self._cond.notify()

    def take(self, max_items: int, timeout: float, linger: float) -> list[T]:
        """Wait up to ``timeout`` for an item, then up to ``linger`` more to fill a batch."""
        with self._cond:
            if not self._items:
                self._fill = 1
                self._cond.wait(timeout)
            if not self._items:
                return []
            if linger > 0 and len(self._items) < max_items:
                deadline = time.monotonic() + linger
                self._fill = max_items
                while len(self._items) < max_items:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                self._fill = 1
            n = min(max_items, len(self._items))
            return [self._items.popleft() for _ in range(n)]

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()


def write_spool(path: Path, events: Iterable[dict[str, Any]]) -> int:
    """Append events to a JSON-lines file, fsync'd (the dead-letter file); returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "a", encoding="utf-8") as fh:
        for e in events:
            fh.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
        fh.flush()
        os.fsync(fh.fileno())
    return n
