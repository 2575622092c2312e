"""An input read for a plan or sync: whole, or as chunks that stream through the spool."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph

if TYPE_CHECKING:
    from atlas_sync.api import Publisher

# What a sync publishes by default, per reader: OpenLineage jobs are published from completed runs
# (RUNNING/START only when asked, e.g. ``-o event_types=COMPLETE,RUNNING``).
SYNC_READER_DEFAULTS: dict[str, dict[str, Any]] = {"openlineage": {"event_types": ["COMPLETE"]}}


@dataclass
class Input:
    """An input as :func:`open_input` read it: whole (``graph``) or as chunks (``chunks``, streamed
    through a spool file); ``partial``: part of its job's lineage (a dbt selection or run), which a
    sync never deletes from."""

    graph: LineageGraph | None
    chunks: Iterator[LineageGraph] | None
    partial: bool


def reader_options(
    pub: Publisher, reader: str, paths: Sequence[str], options: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The reader (``auto``: detected from the first path) and its options: the profile's reader
    options and the sync's defaults under those given (``None``: not given)."""
    name = registry.detect(paths[0]).name if reader == "auto" else reader
    # the profile's defaults go to the readers that take them (Spark's mode); the caller's are checked
    defaults = {**pub.profile.reader_options, **SYNC_READER_DEFAULTS.get(name, {})}
    taken = registry.accepted(registry.get(name), defaults)
    return name, {
        **{k: defaults[k] for k in taken},
        **{k: v for k, v in options.items() if v is not None},
    }


def open_input(
    pub: Publisher, reader: str, paths: Sequence[str], stream: bool | None, options: dict[str, Any]
) -> Input:
    """Read ``paths`` for a plan or sync: whole when ``stream`` is False; else as chunks, streamed
    when asked (``stream``), or when the reader gives more than one chunk (or says more follow);
    one chunk and ``stream`` None: whole."""
    if stream is False:
        graph = pub.read(reader, paths, **options)
        return Input(graph, None, graph.partial)
    chunks = pub.read_chunks(reader, paths, **options)
    first = next(chunks, None)
    if first is None:
        raise InputError("the reader gave no lineage", file=paths[0] if paths else None)
    if getattr(chunks, "more", None):  # the reader says another follows: stream, holding one chunk
        return Input(None, _resumed([first], chunks), first.partial)
    second = next(chunks, None)
    if second is None and not stream:
        return Input(first, None, first.partial)
    return Input(None, _resumed([first] if second is None else [first, second], chunks), first.partial)


def _resumed(read: list[LineageGraph], rest: Iterator[LineageGraph]) -> Iterator[LineageGraph]:
    """The chunks already read, then the rest; none held here once handed over (a chunk of 5,000
    processes is ~85 MB of models: the list would hold two until the end)."""
    while read:
        yield read.pop(0)
    yield from rest
