"""What a test sees of a feed's reader threads: whether each waits for room in a full buffer.

Observed in the threads' current frames, so a test asserts "the readers stopped because the buffer is
full" on a condition instead of sleeping for a while and hoping they would have run ahead by then.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable


def waiting_for_room(threads: list[threading.Thread]) -> bool:
    """Every one of ``threads`` is alive and inside ``Feed._put`` with the feed's buffer full."""
    frames = sys._current_frames()
    for t in threads:
        f = frames.get(t.ident) if t.ident is not None else None
        while f is not None and f.f_code.co_name != "_put":
            f = f.f_back
        if f is None or not f.f_locals["self"]._items.full():
            return False
    return bool(threads)


def readers(prefix: str) -> list[threading.Thread]:
    """The live threads whose names start with ``prefix`` (a feed's readers)."""
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def until(cond: Callable[[], bool], seconds: float = 10.0) -> None:
    """Poll ``cond`` until it holds; fail after ``seconds`` (a deadline, not a synchronisation)."""
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.005)
