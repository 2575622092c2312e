"""Progress of long operations, reported through a small protocol the caller implements.

The layers that do the work (readers, apply) call ``update(done, total)``; how it is shown is the
caller's choice: the CLI passes a reporter that draws a bar on a terminal, the Python API may pass
its own or none. ``plain_lines`` (throttled lines on stderr) is the default where no reporter is given.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol, TextIO

Update = Callable[[int, int], None]
"""``update(done, total)``: called as work advances."""


class Reporter(Protocol):
    """``reporter(label)`` opens a progress display for one operation and yields its ``update``."""

    def __call__(self, label: str) -> AbstractContextManager[Update]: ...


def _ignore(done: int, total: int) -> None:
    return None


@contextmanager
def silent(label: str) -> Iterator[Update]:
    """A reporter that shows nothing."""
    yield _ignore


@contextmanager
def plain_lines(label: str, *, stream: TextIO | None = None, every: float = 2.0) -> Iterator[Update]:
    """A reporter printing ``label: done/total (rate/s, ETA)`` lines, at most one per ``every`` seconds
    (and the last one), on ``stream`` (stderr by default: stdout carries results)."""
    out = stream if stream is not None else sys.stderr
    start = time.monotonic()
    last = 0.0

    def update(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if done == total or now - last >= every:
            last = now
            rate = done / max(now - start, 1e-6)
            print(f"{label}: {done}/{total} ({rate:.0f}/s{eta(done, total, rate)})", file=out, flush=True)

    yield update


def eta(done: int, total: int, rate: float) -> str:
    """``", ETA 1m05s"`` while work remains and a rate is known, else ``""``."""
    if done <= 0 or done >= total or rate <= 0:
        return ""
    left = round((total - done) / rate)
    return f", ETA {left // 60}m{left % 60:02d}s" if left >= 60 else f", ETA {left}s"


def report(label: str, *, quiet: bool, reporter: Reporter | None = None) -> AbstractContextManager[Update]:
    """The display for one operation: nothing when ``quiet``, else ``reporter`` (default plain lines)."""
    if quiet:
        return silent(label)
    return (reporter or plain_lines)(label)


__all__ = ["Reporter", "Update", "eta", "plain_lines", "report", "silent"]
