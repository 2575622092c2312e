"""A bounded FIFO of events that takes a whole request or none of it, and can be spooled to disk."""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class EventQueue:
    """Thread-safe bounded queue. ``offer`` adds all of a request's events, or none when full."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("queue size must be at least 1")
        self.maxsize = maxsize
        self._items: deque[dict[str, Any]] = deque()
        self._cond = threading.Condition()

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def offer(self, events: list[dict[str, Any]]) -> bool:
        with self._cond:
            if len(self._items) + len(events) > self.maxsize:
                return False
            self._items.extend(events)
            self._cond.notify()
            return True

    def put_front(self, events: list[dict[str, Any]]) -> None:
        """Give back events taken but not synced (ignores the bound: they were already accepted)."""
        with self._cond:
            self._items.extendleft(reversed(events))
            self._cond.notify()

    def take(self, max_items: int, timeout: float, linger: float) -> list[dict[str, Any]]:
        """Wait up to ``timeout`` for an event, then up to ``linger`` more to fill a batch."""
        import time

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

    def drain_all(self) -> list[dict[str, Any]]:
        with self._cond:
            items = list(self._items)
            self._items.clear()
            return items


def write_spool(path: Path, events: Iterable[dict[str, Any]]) -> int:
    """Append events to a JSON-lines spool file (fsync'd); returns how many were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "a", encoding="utf-8") as fh:
        for e in events:
            fh.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
        fh.flush()
        os.fsync(fh.fileno())
    return n


def read_spool(path: Path) -> list[dict[str, Any]]:
    """Events left by an earlier run (bad lines are skipped: they were validated when accepted)."""
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(item, dict):
                out.append(item)
    return out
