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


class Phases:
    """Progress of operations run one after the other by one API call (a rebuild's teardown, then
    its sync): each phase's display opens at its first update and closes the one before, so one
    live bar is shown at a time."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self._label: str | None = None
        self._open: AbstractContextManager[Update] | None = None
        self._update: Update | None = None

    def __enter__(self) -> Phases:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        if self._open is not None:
            self._open.__exit__(None, None, None)
            self._open = self._update = None

    def of(self, label: str) -> Update:
        """The ``update(done, total)`` of phase ``label``."""

        def update(done: int, total: int) -> None:
            if self._label != label:
                self._close()
                self._label, self._open = label, progress(label, quiet=self.quiet)
                self._update = self._open.__enter__()
            assert self._update is not None
            self._update(done, total)

        return update
