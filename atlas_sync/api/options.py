"""What a plan or sync is asked to do (one frozen value), and the checks of its input and job."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from atlas_sync.errors import AtlasSyncError, InputError
from atlas_sync.lineage.model import LineageGraph, Problem
from atlas_sync.wording import counted

# A sync of a graph bigger than this (datasets + columns + processes + column edges) plans and
# applies through a disk spool.
STREAM_MIN_ENTITIES = 50_000

Progress = Callable[[int, int], None]

_JOB_RE = re.compile(r"^[^@\s][^@]*$")


@dataclass(frozen=True)
class SyncOptions:
    """Options of :meth:`Publisher.plan` / :meth:`Publisher.sync` and their ``_chunks`` forms (a plan
    takes the first six). Given as keywords (``pub.sync(graph, force=True)``) or as a value
    (``pub.sync(graph, options=SyncOptions(force=True))``)."""

    allow_delete: bool = True  # False: never delete (--no-delete)
    force: bool = False  # delete more than max_delete_percent of the domain's entities
    stream: bool | None = None  # where entities wait: False memory, True a temporary file, None by size
    on_read: Callable[[list[Problem]], None] | None = None  # the input's problems, once it has been read
    refresh: bool = False  # compare every entity in full, not only those whose stored digest differs
    allow_empty: bool = False  # an input that produced nothing deletes the job's entities (--allow-empty)
    purge: bool = False  # hard-delete what is deleted
    ensure_typedefs: bool = True  # register the profile's typedefs first
    allow_partial: bool = False  # publish what could be read from an input with errors (never deletes)
    progress: Progress | None = None  # update(done, total) while applying
    parallel: int | None = None  # write batches in flight at most (default: the publisher's ``parallel``)

    @classmethod
    def of(cls, options: SyncOptions | None, changes: dict[str, Any]) -> SyncOptions:
        """``options`` (or the defaults) with ``changes`` (keyword options; an unknown one is a TypeError)."""
        return dataclasses.replace(options or cls(), **changes)

    def streamed(self, graph: LineageGraph) -> SyncOptions:
        """These options with ``stream`` decided for one graph: a file spool past ``STREAM_MIN_ENTITIES``."""
        if self.stream is None:
            return dataclasses.replace(self, stream=graph_size(graph) > STREAM_MIN_ENTITIES)
        return self


# What a teardown of a job runs: the sync of the job to nothing.
EMPTY = SyncOptions(allow_empty=True, force=True, stream=False, ensure_typedefs=False)


def graph_size(graph: LineageGraph) -> int:
    """About the number of entities ``graph`` renders to, without rendering it."""
    return (
        len(graph.datasets)
        + sum(len(d.columns) for d in graph.datasets)
        + len(graph.processes)
        + len(graph.edges)
    )


def check_input(
    problems: list[Problem], has_content: bool, allow_partial: bool, *, shown: bool = False
) -> None:
    """Refuse an input with errors (nothing is published), unless ``allow_partial`` and it has
    content. ``shown``: the caller has shown the errors (the CLI): the message counts them."""
    errors = [p for p in problems if p.severity == "error"]
    if not errors or (allow_partial and has_content):
        return
    if shown:
        raise InputError(
            f"{counted(len(errors), 'error')} in the input; nothing was published",
            hint="fix the input (see the errors above); a batch that fails validation is never published",
        )
    raise InputError(
        f"the input has {counted(len(errors), 'error')}; nothing was published. First: {errors[0]}",
        hint="fix the input"
        + ("" if not has_content else ", or publish the rest with allow_partial (--allow-partial)"),
    )


def check_job(job: str) -> str:
    if not _JOB_RE.match(job):
        raise AtlasSyncError(f"invalid job name {job!r}", hint="a job name is non-empty and has no '@'")
    return job
