"""The CLI's progress reporter: a bar on a terminal, plain lines in pipes, nothing with --quiet."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from atlas_sync.progress import Update, plain_lines, silent


@contextmanager
def _bar(label: str) -> Iterator[Update]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    # On stderr, like the plain lines: stdout carries results and may be redirected.
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        transient=True,
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task(label, total=None, rate="")
        start = time.monotonic()

        def update(done: int, total: int) -> None:
            rate = done / max(time.monotonic() - start, 1e-6)
            bar.update(task, completed=done, total=total, rate=f"{rate:.0f}/s")

        yield update


def reporter(label: str) -> AbstractContextManager[Update]:
    """The reporter the CLI passes to readers and apply (:class:`atlas_sync.progress.Reporter`)."""
    return _bar(label) if sys.stderr.isatty() else plain_lines(label)


def progress(label: str, *, quiet: bool = False) -> AbstractContextManager[Update]:
    """Yields ``update(done, total)`` for one CLI operation."""
    return silent(label) if quiet else reporter(label)
