"""Reader registry: built-in readers plus plugins from the ``atlas_sync.readers`` entry-point group.

A reader has a ``name``, the file ``extensions`` it accepts, a one-line ``description``, an optional
``sniff(path, head)`` used by ``--from auto``, and ``read(paths, **options) -> LineageGraph``.
Readers raise :class:`atlas_sync.errors.InputError` for bad input (naming file and place) and record
what they could not resolve as ``graph.problems``. A reader of big inputs may also have
``read_chunks(paths, **options)``, giving its lineage as a sequence of graphs (see :func:`read_chunks`).

The options a reader takes are declared: the built-ins' in ``reader_options.BUILTIN_OPTIONS``, a
plugin's as its ``options`` attribute (:class:`ReaderOption` values); :func:`read` and
:func:`read_chunks` refuse any other name (a typo in ``-o conection_map=`` would else quietly change
names). A plugin that declares none is given every option unchecked.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.reader_options import BUILTIN_OPTIONS, COMMON, ReaderOption


@runtime_checkable
class Reader(Protocol):
    name: str
    extensions: tuple[str, ...]
    description: str

    def read(self, paths: Sequence[str], **options: Any) -> LineageGraph: ...


# name -> "module:attribute" of the built-in readers; imported lazily so one reader's import cost
# (sqlglot, pyhocon) is not paid by the others.
BUILTIN: dict[str, str] = {
    "graph": "atlas_sync.lineage.readers.graph:READER",
    "spark-plan": "atlas_sync.lineage.readers.spark_plan:TEXT_READER",
    "spark-json": "atlas_sync.lineage.readers.spark_plan:JSON_READER",
    "sql": "atlas_sync.lineage.readers.sql:READER",
    "query-log": "atlas_sync.lineage.readers.query_log:READER",
    "hive-lineage": "atlas_sync.lineage.readers.hive_lineage:READER",
    "openlineage": "atlas_sync.lineage.readers.openlineage:READER",
    "seatunnel": "atlas_sync.lineage.readers.seatunnel:SEATUNNEL_READER",
    "whaletunnel": "atlas_sync.lineage.readers.seatunnel:WHALETUNNEL_READER",
    "dbt": "atlas_sync.lineage.readers.dbt:READER",
    "database": "atlas_sync.lineage.readers.database:READER",
    "superset": "atlas_sync.lineage.readers.superset:READER",
    "lookml": "atlas_sync.lineage.readers.lookml:READER",
    "tableau": "atlas_sync.lineage.readers.tableau:READER",
    "powerbi": "atlas_sync.lineage.readers.powerbi:READER",
}


def _load(spec: str) -> Reader:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def available() -> dict[str, Reader]:
    """Every reader that can be loaded, built-ins first, then plugins (a plugin may not shadow a built-in)."""
    out: dict[str, Reader] = {}
    for name, spec in BUILTIN.items():
        try:
            out[name] = _load(spec)
        except (ImportError, AttributeError):
            continue  # not built yet / optional dependency missing
    for ep in entry_points(group="atlas_sync.readers"):
        if ep.name in out:
            continue
        try:
            reader = ep.load()
        except Exception:  # noqa: BLE001 - a broken plugin must not break the CLI
            continue
        out[ep.name] = reader() if isinstance(reader, type) else reader
    return out


def get(name: str) -> Reader:
    if name in BUILTIN:  # import only the reader asked for
        try:
            return _load(BUILTIN[name])
        except (ImportError, AttributeError):
            pass
    readers = available()
    if name not in readers:
        raise InputError(
            f"unknown reader {name!r}",
            hint="available readers: "
            + ", ".join(sorted(readers))
            + " (see `atlas-sync lineage --list-readers`)",
        )
    return readers[name]


def needs_files(name: str) -> bool:
    """Whether the reader ``name`` reads files (the ``database`` reader reads a connection); a
    reader says so with ``needs_files = False``."""
    if name == "auto":
        return True
    return bool(getattr(get(name), "needs_files", True))


def detect(path: str) -> Reader:
    """Pick a reader for ``--from auto``: a reader's ``sniff`` first, then the file extension."""
    readers = available()
    head = b""
    if path == "-":
        head = _peek_stdin()
    elif not os.path.isdir(path):  # a folder (dbt's target/) is sniffed by its path
        try:
            with open(path, "rb") as fh:
                head = fh.read(4096)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    for reader in readers.values():
        sniff = getattr(reader, "sniff", None)
        try:
            if sniff is not None and sniff(path, head):
                return reader
        except Exception:  # noqa: BLE001 - a plugin's faulty sniff must not stop detection
            continue
    lower = path.lower()
    for reader in readers.values():
        if any(lower.endswith(ext) for ext in reader.extensions):
            return reader
    if os.path.isdir(path):
        raise InputError(
            "cannot tell which reader fits this folder",
            file=path,
            hint="the readers that take a folder: dbt (a target/ holding manifest.json), lookml (a project "
            "of .lkml files), superset (an unzipped export with metadata.yaml); else name a reader with "
            "--from (see --list-readers)",
        )
    if not head:
        if path == "-":
            raise InputError("stdin is empty: no lineage to read")
        raise InputError("empty file: no lineage to read", file=path)
    raise InputError(
        "cannot tell which reader fits this file", file=path, hint="name one with --from (see --list-readers)"
    )


def _peek_stdin(size: int = 4096) -> bytes:
    """Stdin's first bytes, left in place for the reader that reads it next."""
    stream = getattr(sys.stdin, "buffer", None)
    try:
        if stream is not None and hasattr(stream, "peek"):
            return bytes(stream.peek(size)[:size])
        if stream is not None and stream.seekable():  # a file redirected in, or a test's buffer
            at = stream.tell()
            head = bytes(stream.read(size))
            stream.seek(at)
            return head
    except (OSError, ValueError):
        pass
    return b""


def options_of(reader: Reader) -> tuple[ReaderOption, ...] | None:
    """The options ``reader`` takes (then those atlas-sync gives every reader); ``None``: a plugin
    that declares none (not checked)."""
    builtin = BUILTIN_OPTIONS.get(reader.name) if _is_builtin(reader) else None
    declared = builtin if builtin is not None else getattr(reader, "options", None)
    if declared is None:
        return None
    common = {c.name for c in COMMON}
    return (*(o for o in declared if o.name not in common), *COMMON)


def _is_builtin(reader: Reader) -> bool:
    spec = BUILTIN.get(reader.name)
    return spec is not None and type(reader).__module__ == spec.partition(":")[0]


def accepted(reader: Reader, names: Iterable[str]) -> list[str]:
    """Of ``names``, those ``reader`` takes (every one, for a plugin that declares none): for defaults
    meant for the readers that use them (a profile's ``reader_options``)."""
    declared = options_of(reader)
    if declared is None:
        return list(names)
    known = {o.name for o in declared}
    return [n for n in names if n in known]


def check_options(reader: Reader, names: Iterable[str]) -> None:
    """Raise :class:`InputError` naming the first of ``names`` that ``reader`` does not take, with
    the closest name it does take and the list of its options."""
    declared = options_of(reader)
    if declared is None:
        return
    known = [o.name for o in declared]
    for name in names:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        guess = f" (did you mean {close[0]}?)" if close else ""
        raise InputError(
            f"reader {reader.name!r} has no option {name!r}{guess}",
            hint=f"its options: {', '.join(known)} (see `atlas-sync lineage --list-options {reader.name}`)",
        )


def read(name: str, paths: Sequence[str], **options: Any) -> LineageGraph:
    """Read ``paths`` with the reader ``name`` (``auto`` picks one per the first file); an option the
    reader does not take is refused (:func:`check_options`)."""
    reader = detect(paths[0]) if name == "auto" else get(name)
    check_options(reader, options)
    return _sound(reader.read(paths, **options))


def read_chunks(name: str, paths: Sequence[str], **options: Any) -> Iterator[LineageGraph]:
    """Read ``paths`` as a sequence of self-contained graphs (``auto`` picks the reader per the first file).

    A reader with ``read_chunks(paths, **options)`` gives several graphs; any other reader's
    ``read(paths, **options)`` is yielded as the only one. Every chunk sequence keeps this contract:

    * chunks come in input order; every process is in exactly one chunk, and every edge is in the
      chunk of its process (``edge.process`` is that process's id);
    * a chunk holds every dataset its processes and edges refer to, with the columns and facets known
      from that chunk's own input; a dataset may be in several chunks. Merging all chunks in order with
      :meth:`LineageGraph.merge` gives the graph ``read()`` gives (equal ``to_document()``), except
      that a later chunk may refine a dataset's ``kind`` from ``table`` to ``view``/``intermediate``
      (a table read before a later statement creates it as a view), which ``merge`` does not carry
      over: a consumer that merges datasets itself should apply that refinement; and the ``graph``
      reader's merged chunks list datasets and edges in the order the chunks need them (a dataset
      with the first chunk that refers to it, unused ones in the last chunk), which may differ from
      the document's order;
    * ``job`` and ``source`` are the same on every chunk; problems are in the chunk where they were
      found; input-wide items (the query log's "QUERY LOG SUMMARY" statement) are in the last chunk;
    * input-wide failures (nothing could be analysed, a CSV error on a late row) are raised as
      :class:`InputError` by the iterator, possibly after earlier chunks were yielded, so a consumer
      must not publish anything before the iterator is exhausted;
    * option ``chunk_statements`` (int, default 5000): distinct statements per chunk for the
      ``query-log`` reader; option ``chunk_processes`` (int, default 5000): processes per chunk for
      the ``graph`` reader (another reader refuses them, as any option it does not take);
    * the iterator may have an attribute ``more`` (the ``graph`` reader's has): once a chunk was
      given, whether another follows, so a consumer deciding whether to stream need not build the
      next chunk while it holds this one.

    The reader is looked up at once (an unknown name raises here); reading starts on the first ``next``.
    """
    reader = detect(paths[0]) if name == "auto" else get(name)
    check_options(reader, options)
    chunked = getattr(reader, "read_chunks", None)
    if callable(chunked):
        return _SoundChunks(iter(chunked(paths, **options)))
    return _whole(reader, paths, options)


def _whole(reader: Reader, paths: Sequence[str], options: dict[str, Any]) -> Iterator[LineageGraph]:
    yield _sound(reader.read(paths, **options))


def _sound(graph: LineageGraph) -> LineageGraph:
    """``graph`` with the model's invariants made to hold, whichever reader (or plugin) made it: every
    column edge's source dataset is an input of its process (:meth:`LineageGraph.add_edge_inputs`)."""
    graph.add_edge_inputs()
    return graph


class _SoundChunks:
    """A reader's chunks, each made :func:`_sound` (a chunk holds its edges' processes); keeps the
    iterator's ``more`` (see :func:`read_chunks`)."""

    def __init__(self, chunks: Iterator[LineageGraph]) -> None:
        self._chunks = chunks

    def __iter__(self) -> _SoundChunks:
        return self

    def __next__(self) -> LineageGraph:
        return _sound(next(self._chunks))

    @property
    def more(self) -> bool | None:
        return getattr(self._chunks, "more", None)

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()


def can_chunk(reader: Reader) -> bool:
    """Whether ``reader`` gives its lineage in chunks (has ``read_chunks``)."""
    return callable(getattr(reader, "read_chunks", None))
