"""Progress for long operations: a bar on a terminal, plain lines in pipes, nothing with --quiet."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click


@contextmanager
def progress(label: str, *, quiet: bool = False) -> Iterator[Callable[[int, int], None]]:
    """Yields ``update(done, total)``."""
    if quiet:
        yield lambda done, total: None
        return
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        # On stderr, like the plain lines: stdout carries results and may be redirected.
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            transient=True,
            console=Console(stderr=True),
        ) as bar:
            task = bar.add_task(label, total=None, rate="")
            start = time.monotonic()

            def update(done: int, total: int) -> None:
                rate = done / max(time.monotonic() - start, 1e-6)
                bar.update(task, completed=done, total=total, rate=f"{rate:.0f}/s")

            yield update
        return
    start = time.monotonic()
    last = [0.0]

    def plain(done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= 2.0:
            last[0] = now
            rate = done / max(now - start, 1e-6)
            click.echo(f"{label}: {done}/{total} ({rate:.0f}/s)", err=True)

    yield plain
