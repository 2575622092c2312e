"""The ``graph`` reader: loads the lineage JSON document (see ``LineageGraph.to_document``).

``read`` loads each document whole. ``read_chunks`` (what ``atlas-sync sync`` uses) parses it as a
stream of JSON events (ijson), spools the items of its lists to a temporary SQLite file (so the order
of the document's keys does not matter), checks them as ``read`` would, and then gives the lineage as
graphs of at most ``chunk_processes`` processes (default 5000) with their column edges and the
datasets they refer to: a document of 100,000 processes is never held in memory whole. Documents of
at most ``WHOLE_PARSE_BYTES`` (4 MiB) in all are parsed whole instead (json's C parser, far cheaper
than the stream's events): with at most ``chunk_processes`` processes they are ``read()``'s graph,
else their items are spooled as the stream's are. The contract is
:func:`atlas_sync.lineage.registry.read_chunks`'s; in particular:

* an edge without a process is in the chunk of the first process writing its target (the process
  the renderer gives it); one whose target no process writes is in an extra last chunk without
  processes (the renderer drops it, as from the whole graph); datasets nothing refers to are in the
  last chunk with processes; chunk ``k`` carries problems and statements ``k * chunk_processes`` up
  to the next chunk's first, the last chunk the rest;
* an input with at most ``chunk_processes`` processes in all is one chunk, equal to ``read()``;
  merging the chunks of a bigger one gives ``read()``'s datasets, processes, edges, problems and
  statements, datasets and edges ordered by the chunk that first needs them rather than by their
  place in the document;
* every check of ``read`` runs on every file before the first chunk is given, with the same first
  error (file and item); a JSON syntax error names the line and column of the byte the parser
  stopped at, with the parser's own words.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import shutil
import sqlite3
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from atlas_sync import fastjson
from atlas_sync.errors import InputError
from atlas_sync.inputs import load_json, open_binary, read_text
from atlas_sync.lineage.model import (
    NAMING_KEYS,
    ColumnEdge,
    Dataset,
    LineageGraph,
    Problem,
    Process,
    edge_dangling,
    edge_from_document,
    edges_key,
    first_error,
    naming_from_document,
    process_dangling,
    validate_item,
)
from atlas_sync.lineage.readers.options import positive_int

#: Processes per chunk of ``read_chunks`` (option ``chunk_processes``).
DEFAULT_CHUNK_PROCESSES = 5000
# The document's lists that are spooled; other top-level keys are skipped (``tables``) or kept
# (``job``) as ``from_document`` reads them.
_LISTS = ("datasets", "processes", "edges", "columns", "problems", "statements")
#: Documents of at most this many bytes are parsed whole (``json``, in C: a tenth of the stream's
#: cost) and their items spooled and checked as the stream's are; one the whole parse refuses is
#: parsed again as a stream, for the stream's error. Memory: about 7 times the document's size.
WHOLE_PARSE_BYTES = 4 << 20
_BUF = 1 << 16
_BOM = b"\xef\xbb\xbf"


class GraphReader:
    name = "graph"
    extensions = (".lineage.json",)
    description = (
        "atlas-sync's own lineage JSON document (the output of `atlas-sync lineage ... --format json`); "
        "big documents are read in chunks of -o chunk_processes=5000 processes"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        return path.endswith(".lineage.json")

    def read(self, paths: Sequence[str], **options: Any) -> LineageGraph:
        return _whole_graph(((p, load_json(p)) for p in paths), paths[0] if paths else None)

    def read_chunks(
        self, paths: Sequence[str], *, chunk_processes: Any = None, **options: Any
    ) -> Iterator[LineageGraph]:
        """The documents' lineage as graphs of at most ``chunk_processes`` processes (see the module
        docstring); every file is parsed and checked before the first graph is given."""
        n = positive_int(chunk_processes, DEFAULT_CHUNK_PROCESSES, "chunk_processes")
        return Chunks(list(paths), n)


class Chunks(Iterator[LineageGraph]):
    """The graphs :meth:`GraphReader.read_chunks` gives. Once one was given, :attr:`more` says whether
    another follows (None before the first): a consumer deciding whether to stream need not build
    the next one (~85 MB of models at 5,000 processes) while it holds this one."""

    def __init__(self, paths: list[str], n: int) -> None:
        self.more: bool | None = None
        self._graphs = _chunks(paths, n, self)

    def __next__(self) -> LineageGraph:
        return next(self._graphs)


def _whole_graph(documents: Iterable[tuple[str, Any]], first: str | None) -> LineageGraph:
    """The documents (path, parsed JSON; taken one by one) as one graph: ``read()``'s."""
    graph: LineageGraph | None = None
    for p, doc in documents:
        g = LineageGraph.from_document(doc, file=p)
        graph = g if graph is None else _merge(graph, g, p)
    graph = graph or LineageGraph()
    if graph.job is None and first is not None and first != "-":
        graph.job, graph.job_from_name = _stem(first), True
    return graph


def _stem(path: str) -> str:
    return Path(path).name.split(".")[0]


def _merge(graph: LineageGraph, other: LineageGraph, file: str) -> LineageGraph:
    try:
        return graph.merge_into(other)
    except ValueError as exc:  # a process id that an earlier file has too
        raise InputError(str(exc), file=file) from None


# --------------------------------------------------------------------------- the byte source
class _Source:
    """A document's bytes for ijson: UTF-8 checked as they are read (the error ``read_text`` gives),
    a leading BOM and an empty file refused as ``load_json`` refuses them, the offset counted so a
    syntax error can be placed. Stdin (and a pipe named by path) is copied to an unnamed temporary
    file first."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fh: IO[bytes]
        if path == "-":
            self.fh = self._copied(sys.stdin.buffer)
        else:
            self.fh = open_binary(path)
            if not self.fh.seekable():  # a pipe named by path: /dev/stdin, <(...), a FIFO
                with self.fh as pipe:
                    self.fh = self._copied(pipe)
        self.rewind()

    @staticmethod
    def _copied(stream: IO[bytes]) -> IO[bytes]:
        out = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        shutil.copyfileobj(stream, out, _BUF)
        out.seek(0)
        return out

    def rewind(self, slow_from: int | None = None) -> None:
        """Back to the start; from byte ``slow_from`` on, hand out one byte per read."""
        self.fh.seek(0)
        self.pos = 0
        self.eof = False
        self.content = False  # a non-blank byte was read
        self.slow_from = slow_from
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson's probe for bytes or text
            return b""
        if size is None or size < 0:
            size = _BUF
        if self.slow_from is not None:
            size = 1 if self.pos >= self.slow_from else min(size, self.slow_from - self.pos)
        data = self.fh.read(size)
        if self.pos == 0 and data[:1] == _BOM[:1]:
            data += self.fh.read(max(0, len(_BOM) - len(data)))
            if data.startswith(_BOM):
                raise InputError(
                    "invalid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig)",
                    file=self.path,
                    line=1,
                    column=1,
                )
        pending = len(self._decoder.getstate()[0])
        try:
            self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise InputError(
                f"not UTF-8 text (byte {self.pos - pending + exc.start})", file=self.path
            ) from None
        if not self.content and data.strip():
            self.content = True
        if not data:
            self.eof = True
            if not self.content:
                raise InputError("empty file", file=self.path)
        self.pos += len(data)
        return data

    def place(self, offset: int) -> tuple[int, int]:
        """(line, column) of byte ``offset``, both from 1, the column in characters."""
        self.fh.seek(0)
        line, start, done = 1, 0, 0
        while done < offset:
            block = self.fh.read(min(_BUF, offset - done))
            if not block:
                break
            nl = block.count(b"\n")
            if nl:
                line += nl
                start = done + block.rfind(b"\n") + 1
            done += len(block)
        self.fh.seek(start)
        col = len(self.fh.read(max(0, offset - start)).decode("utf-8", "replace")) + 1
        return line, col

    def check_rest(self) -> None:
        """Read to the end (for the UTF-8 check, which ``read_text`` puts before any JSON error)."""
        self.slow_from = None
        while self.read(_BUF):
            pass

    def close(self) -> None:
        self.fh.close()


def _events(source: _Source) -> Iterator[tuple[str, Any]]:
    """(event, value) pairs of the document; a syntax error raised as an InputError naming its place."""
    import ijson  # the C backend (yajl2_c) ships in ijson's wheels

    try:
        yield from ijson.basic_parse(source, use_float=True, buf_size=_BUF)
    except ijson.JSONError as exc:
        raise _syntax_error(source, exc) from None


def _syntax_error(source: _Source, exc: Exception) -> InputError:
    """The error for a JSON syntax error: parse again, one byte at a time from the block the parser
    stopped in, to find the byte it stopped at."""
    import ijson

    words = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid JSON"
    for prefix in ("parse error: ", "lexical error: "):
        words = words.removeprefix(prefix)
    stopped = source.pos
    source.rewind(slow_from=max(0, stopped - _BUF))
    try:
        for _ in ijson.basic_parse(source, buf_size=_BUF):
            pass
        offset = stopped
    except ijson.JSONError:
        offset = source.pos if source.eof else max(0, source.pos - 1)
    source.check_rest()
    line, column = source.place(offset)
    return InputError(f"invalid JSON: {words.rstrip('.')}", file=source.path, line=line, column=column)


_START = {"start_map", "start_array"}
_END = {"end_map", "end_array"}


def _value(events: Iterator[tuple[str, Any]], event: str, value: Any) -> Any:
    """The JSON value that starts with (event, value), built from the events."""
    if event not in _START:
        return value
    from ijson.common import ObjectBuilder

    builder = ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for ev, val in events:
        builder.event(ev, val)
        if ev in _START:
            depth += 1
        elif ev in _END:
            depth -= 1
            if depth == 0:
                break
    return builder.value


def _skip(events: Iterator[tuple[str, Any]], event: str) -> None:
    if event not in _START:
        return
    depth = 1
    for ev, _val in events:
        if ev in _START:
            depth += 1
        elif ev in _END:
            depth -= 1
            if depth == 0:
                return


# --------------------------------------------------------------------------- the spool
class _Spool:
    """A temporary SQLite file holding the documents' items; it has no name on disk while open."""

    def __init__(self) -> None:
        fd, path = tempfile.mkstemp(prefix="atlas-sync-graph-", suffix=".sqlite")
        os.close(fd)
        self.db = sqlite3.connect(path)
        self.db.executescript(
            """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            PRAGMA temp_store = FILE;
            PRAGMA cache_size = -16000;
            CREATE TABLE dataset (file INTEGER NOT NULL, idx INTEGER NOT NULL, id TEXT NOT NULL,
                doc TEXT NOT NULL, used INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (file, idx));
            CREATE INDEX dataset_id ON dataset (file, id);
            CREATE TABLE process (file INTEGER NOT NULL, ord INTEGER NOT NULL, id TEXT NOT NULL,
                doc TEXT NOT NULL, refs TEXT NOT NULL, PRIMARY KEY (file, ord));
            CREATE INDEX process_id ON process (id, file);
            CREATE TABLE raw_edge (file INTEGER NOT NULL, key TEXT NOT NULL, idx INTEGER NOT NULL,
                doc TEXT NOT NULL, PRIMARY KEY (file, key, idx));
            CREATE TABLE output (file INTEGER NOT NULL, ds TEXT NOT NULL, ord INTEGER NOT NULL);
            CREATE INDEX output_ds ON output (file, ds, ord);
            -- producer: for an edge without a process, the first process writing its target
            CREATE TABLE edge (file INTEGER NOT NULL, idx INTEGER NOT NULL, pid TEXT,
                doc TEXT NOT NULL, producer INTEGER, PRIMARY KEY (file, idx));
            CREATE INDEX edge_pid ON edge (file, pid);
            CREATE INDEX edge_producer ON edge (file, producer) WHERE pid IS NULL;
            CREATE TABLE item (file INTEGER NOT NULL, key TEXT NOT NULL, idx INTEGER NOT NULL,
                doc TEXT NOT NULL, PRIMARY KEY (file, key, idx));
            """
        )
        with contextlib.suppress(OSError):  # the open connection keeps the file (POSIX)
            os.unlink(path)
        self.path = path

    def close(self) -> None:
        self.db.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)


@dataclass
class _File:
    """What the first pass learnt about one document."""

    no: int
    path: str
    job: Any = None
    naming: dict[str, Any] = field(default_factory=dict)  # job_from_name, process_jobs (model.NAMING_KEYS)
    kinds: dict[str, str] = field(default_factory=dict)  # list key -> "list" | "null" | "empty" | "other"
    errors: dict[str, InputError] = field(default_factory=dict)  # list key -> its first error
    counts: dict[str, int] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    pids: set[str] = field(default_factory=set)
    duplicate: dict[str, str] = field(default_factory=dict)  # "dataset"/"process" -> first repeated id


def _chunks(paths: list[str], n: int, out: Chunks) -> Iterator[LineageGraph]:
    """The graphs, ``out.more`` set before each is given."""
    if not paths:
        return
    docs = _whole_documents(paths)
    if docs is not None and sum(_count(doc.get("processes")) for doc in docs) <= n:
        out.more = False
        yield _whole_graph(zip(paths, docs, strict=True), paths[0])  # read()'s graph, checks and errors
        return
    spool = _Spool()
    try:
        files = []
        for no, path in enumerate(paths):
            f = _File(no, path)
            _spool_file(spool, f, docs[no] if docs is not None else _whole(path))
            _check_file(spool, f)
            files.append(f)
        named = next((f for f in files if f.job is not None), None)
        job = named.job if named is not None else None
        naming = {
            "job_from_name": bool(named.naming.get("job_from_name")) if named is not None else False,
            "process_jobs": any(f.naming.get("process_jobs") for f in files),
        }
        if job is None and paths[0] != "-":
            job, naming["job_from_name"] = _stem(paths[0]), True
        total = sum(f.counts.get("processes", 0) for f in files)
        if total <= n:  # one graph, as read() gives it
            graph: LineageGraph | None = None
            for f in files:
                for g in _file_chunks(spool, f, n, job, whole=True, naming=naming):
                    graph = g if graph is None else _merge(graph, g, f.path)
            if graph is not None:
                graph.job, graph.job_from_name = job, naming["job_from_name"]
                out.more = False
                yield graph
            return
        for f in files:
            yield from _file_chunks(
                spool, f, n, job, whole=False, out=out, last=f is files[-1], naming=naming
            )
    finally:
        spool.close()


def _whole_documents(paths: list[str]) -> list[dict[str, Any]] | None:
    """Every document parsed whole (:func:`_whole`) when together they hold at most
    ``WHOLE_PARSE_BYTES``, else None."""
    size = 0
    for path in paths:
        try:
            size += os.stat(path).st_size if path != "-" else WHOLE_PARSE_BYTES + 1
        except OSError:
            return None
    if size > WHOLE_PARSE_BYTES:
        return None
    docs = []
    for path in paths:
        doc = _whole(path)
        if doc is None:
            return None
        docs.append(doc)
    return docs


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def _spool_file(spool: _Spool, f: _File, doc: dict[str, Any] | None) -> None:
    """First pass: parse the document once (or take ``doc``, the document parsed whole), spooling its
    lists' items and validating them."""
    if doc is not None:
        for name, whole in doc.items():
            if name in _LISTS:
                _spool_list(spool, f, name, whole)
            elif name == "job":
                f.job = whole
            elif name in NAMING_KEYS:
                f.naming[name] = whole
        spool.db.commit()
        return
    source = _Source(f.path)
    try:
        events = _events(source)
        first = next(events, None)
        if first is None or first[0] != "start_map":
            for _ in events:  # a syntax or UTF-8 error later in the file comes first, as in read()
                pass
            raise InputError("a lineage document must be a JSON object", file=f.path, path="$")
        key = None
        for event, value in events:
            if event == "map_key":
                key = value
                continue
            if event == "end_map":
                break
            assert key is not None
            if key in _LISTS:
                items = _list_items(events) if event == "start_array" else _value(events, event, value)
                _spool_list(spool, f, key, items)
            elif key == "job":
                f.job = _value(events, event, value)
            elif key in NAMING_KEYS:
                f.naming[key] = _value(events, event, value)
            else:
                _skip(events, event)
        for _ in events:  # trailing garbage is an error, as in read()
            pass
        spool.db.commit()
    except RecursionError:
        raise InputError("JSON nested too deeply", file=f.path) from None
    finally:
        source.close()


def _whole(path: str) -> dict[str, Any] | None:
    """The document parsed whole when it is a regular file of at most ``WHOLE_PARSE_BYTES`` that is
    a JSON object as the stream would take it (UTF-8 without BOM, no NaN or Infinity), else None."""
    if path == "-":
        return None
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > WHOLE_PARSE_BYTES:
            return None
        with open(path, "rb") as fh:
            raw = fh.read(WHOLE_PARSE_BYTES + 1)
        doc = fastjson.loads_strict(raw)  # (refuses a BOM too)
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _list_items(events: Iterator[tuple[str, Any]]) -> Iterator[Any]:
    """The items of the array whose ``start_array`` was just read, each built from its events."""
    for ev, val in events:
        if ev == "end_array":
            return
        yield _value(events, ev, val)


def _spool_list(spool: _Spool, f: _File, key: str, value: Any) -> None:
    """Spool one of the document's lists: ``value`` is the list (or an iterator of its items, from the
    stream), or whatever other value the key has."""
    db = spool.db
    if key in f.kinds:  # a key given twice: the last one counts, as with json.loads
        _forget(spool, f, key)
    if not isinstance(value, (list, Iterator)):
        f.kinds[key] = "null" if value is None else "other" if value else "empty"
        return
    f.kinds[key] = "list"
    i = 0
    for item in value:
        if key == "datasets":
            _dataset(db, f, i, item)
        elif key == "processes":
            _process(db, f, i, item)
        elif key == "problems":
            _problem(db, f, i, item)
        elif key == "statements":
            if not isinstance(item, dict) and key not in f.errors:
                f.errors[key] = InputError(_statement_error(i, item), file=f.path)
            db.execute("INSERT INTO item VALUES (?, ?, ?, ?)", (f.no, key, i, fastjson.dumps_text(item)))
        else:  # edges / columns: resolved once every dataset id is known
            db.execute("INSERT INTO raw_edge VALUES (?, ?, ?, ?)", (f.no, key, i, fastjson.dumps_text(item)))
        i += 1
    f.counts[key] = i


def _forget(spool: _Spool, f: _File, key: str) -> None:
    db = spool.db
    f.errors.pop(key, None)
    f.counts.pop(key, None)
    if key == "datasets":
        db.execute("DELETE FROM dataset WHERE file = ?", (f.no,))
        f.ids.clear()
        f.duplicate.pop("dataset", None)
    elif key == "processes":
        db.execute("DELETE FROM process WHERE file = ?", (f.no,))
        db.execute("DELETE FROM output WHERE file = ?", (f.no,))
        f.pids.clear()
        f.duplicate.pop("process", None)
    elif key in ("edges", "columns"):
        db.execute("DELETE FROM raw_edge WHERE file = ? AND key = ?", (f.no, key))
    else:
        db.execute("DELETE FROM item WHERE file = ? AND key = ?", (f.no, key))


def _dataset(db: sqlite3.Connection, f: _File, i: int, item: Any) -> None:
    if "datasets" in f.errors:
        return
    try:
        d = validate_item(Dataset, item, file=f.path, where=f"$.datasets[{i}]")
    except InputError as exc:
        f.errors["datasets"] = exc
        return
    if d.id in f.ids:
        f.duplicate.setdefault("dataset", d.id)
    f.ids.add(d.id)
    db.execute(
        "INSERT INTO dataset (file, idx, id, doc) VALUES (?, ?, ?, ?)",
        (f.no, i, d.id, d.model_dump_json(exclude_unset=True)),
    )


def _process(db: sqlite3.Connection, f: _File, i: int, item: Any) -> None:
    if "processes" in f.errors:
        return
    try:
        p = validate_item(Process, item, file=f.path, where=f"$.processes[{i}]")
    except InputError as exc:
        f.errors["processes"] = exc
        return
    if p.id in f.pids:
        f.duplicate.setdefault("process", p.id)
    f.pids.add(p.id)
    db.execute(
        "INSERT INTO process VALUES (?, ?, ?, ?, ?)",
        (f.no, i, p.id, p.model_dump_json(exclude_unset=True), json.dumps([*p.inputs, *p.outputs])),
    )
    db.executemany("INSERT INTO output VALUES (?, ?, ?)", [(f.no, o, i) for o in p.outputs])


def _problem(db: sqlite3.Connection, f: _File, i: int, item: Any) -> None:
    if "problems" in f.errors:
        return
    try:
        p = validate_item(Problem, item, file=f.path, where=f"$.problems[{i}]")
    except InputError as exc:
        f.errors["problems"] = exc
        return
    if p.file is None:  # a problem read from a file is reported in that file
        p.file = f.path
    db.execute("INSERT INTO item VALUES (?, ?, ?, ?)", (f.no, "problems", i, p.model_dump_json()))


def _statement_error(i: int, item: Any) -> str:
    """The message ``LineageGraph(statements=...)`` gives for a statement that is not an object."""
    try:
        LineageGraph(statements=[*([{}] * i), item])
    except ValueError as exc:
        return first_error(exc)
    return f"statements.{i}: not an object"  # pragma: no cover - the model refuses every non-object


def _field_error(**fields: Any) -> str | None:
    try:
        LineageGraph(**fields)
    except ValueError as exc:
        return first_error(exc)
    return None


def _check_file(spool: _Spool, f: _File) -> None:
    """The checks of ``LineageGraph.from_document``, in its order, so the first error is the same."""
    db = spool.db
    for key in ("datasets", "processes", "problems"):
        if f.kinds.get(key) == "other":
            raise InputError(f"'{key}' must be a list", file=f.path, path=f"$.{key}")
        if key in f.errors:
            raise f.errors[key]
    key = edges_key(None if f.kinds.get("edges", "null") == "null" else True)
    if f.kinds.get(key) == "other":
        raise InputError(f"'{key}' must be a list", file=f.path, path=f"$.{key}")
    dangling_edge: str | None = None
    resolved = 0
    rows = db.execute("SELECT idx, doc FROM raw_edge WHERE file = ? AND key = ? ORDER BY idx", (f.no, key))
    while batch := rows.fetchmany(2000):
        out = []
        for idx, doc in batch:
            e = edge_from_document(fastjson.loads(doc), f.ids, file=f.path, where=f"$.{key}[{idx}]")
            if dangling_edge is None and (bad := edge_dangling(e, f.ids, f.pids)):
                dangling_edge = bad[0]
            producer = None
            if e.process is None:  # rendered against the first process writing its target
                producer = db.execute(
                    "SELECT min(ord) FROM output WHERE file = ? AND ds = ?", (f.no, e.target.dataset)
                ).fetchone()[0]
            out.append((f.no, idx, e.process, e.model_dump_json(exclude_unset=True), producer))
        db.executemany("INSERT INTO edge VALUES (?, ?, ?, ?, ?)", out)
        resolved += len(out)
    db.execute("DELETE FROM raw_edge WHERE file = ?", (f.no,))
    f.counts["edges"] = resolved
    if f.kinds.get("statements") == "other":
        raise InputError("'statements' must be a list", file=f.path, path="$.statements")
    if "statements" in f.errors:
        raise f.errors["statements"]
    if f.job is not None and (msg := _field_error(job=f.job)):
        raise InputError(msg, file=f.path)
    naming_from_document(f.naming, f.path)  # (a bad value is an error at its key)
    for label, key, cls in (("dataset", "datasets", Dataset), ("process", "processes", Process)):
        if label in f.duplicate:
            i = f.duplicate[label]
            msg = _field_error(**{key: [cls(id=i, name=i), cls(id=i, name=i)]})
            raise InputError(msg or f"duplicate {label} id {i!r}", file=f.path)
    for pid, refs in db.execute("SELECT id, refs FROM process WHERE file = ? ORDER BY ord", (f.no,)):
        if bad := process_dangling(Process(id=pid, name=pid, inputs=json.loads(refs)), f.ids):
            raise InputError(bad[0], file=f.path)
    if dangling_edge is not None:
        raise InputError(dangling_edge, file=f.path)
    if f.no:  # a process id that an earlier file has too (read() refuses it when merging)
        row = db.execute(
            "SELECT p.id FROM process p WHERE p.file = ? AND EXISTS "
            "(SELECT 1 FROM process q WHERE q.id = p.id AND q.file < p.file) ORDER BY p.ord LIMIT 1",
            (f.no,),
        ).fetchone()
        if row is not None:
            raise InputError(f"duplicate process id {row[0]!r}", file=f.path)
    f.ids.clear()
    f.pids.clear()
    db.commit()


def _file_chunks(
    spool: _Spool,
    f: _File,
    n: int,
    job: str | None,
    whole: bool,
    out: Chunks | None = None,
    last: bool = True,
    naming: dict[str, bool] | None = None,
) -> Iterator[LineageGraph]:
    """Second pass: one document's graphs of at most ``n`` processes each (``whole``: the input is
    one graph, so this document gives exactly one; ``out.more``: whether another graph follows this
    one, in this document or, unless ``last``, in the next).

    An edge without a process goes with the first process writing its target (the process the
    renderer gives it); one whose target no process writes (the renderer drops it from a graph of
    several processes) goes, unless ``whole``, in a last graph without processes: in a graph of one
    process the renderer would give it to that process."""
    db = spool.db
    count = f.counts.get("processes", 0)
    chunks = max(1, -(-count // n))
    orphans = db.execute(
        "SELECT count(*) FROM edge WHERE file = ? AND pid IS NULL AND producer IS NULL", (f.no,)
    ).fetchone()[0]
    apart = bool(orphans) and not whole
    for k in range(chunks + apart):
        final = k == chunks - 1 + apart
        lo, hi = k * n, (k + 1) * n
        processes = [
            Process.model_validate_json(doc)
            for (doc,) in db.execute(
                "SELECT doc FROM process WHERE file = ? AND ord >= ? AND ord < ? ORDER BY ord", (f.no, lo, hi)
            )
        ]
        sql = (
            "SELECT e.idx, e.doc FROM process p JOIN edge e ON e.file = p.file AND e.pid = p.id "
            "WHERE p.file = ? AND p.ord >= ? AND p.ord < ? UNION ALL "
            "SELECT idx, doc FROM edge WHERE file = ? AND pid IS NULL AND producer >= ? AND producer < ?"
        )
        args: tuple[Any, ...] = (f.no, lo, hi, f.no, lo, hi)
        if final:
            sql += " UNION ALL SELECT idx, doc FROM edge WHERE file = ? AND pid IS NULL AND producer IS NULL"
            args += (f.no,)
        edges = [ColumnEdge.model_validate_json(doc) for _idx, doc in sorted(db.execute(sql, args))]
        wanted = dict.fromkeys(ref for p in processes for ref in (*p.inputs, *p.outputs))
        for e in edges:
            wanted.setdefault(e.source.dataset)
            wanted.setdefault(e.target.dataset)
        rows: list[tuple[int, str]] = []
        for ds in wanted:
            row = db.execute("SELECT idx, doc FROM dataset WHERE file = ? AND id = ?", (f.no, ds)).fetchone()
            rows.append(row)
        db.executemany("UPDATE dataset SET used = 1 WHERE file = ? AND idx = ?", [(f.no, r[0]) for r in rows])
        if k == chunks - 1:
            rows += db.execute("SELECT idx, doc FROM dataset WHERE file = ? AND used = 0", (f.no,)).fetchall()
        rows.sort()
        datasets = [Dataset.model_validate_json(doc) for _idx, doc in rows]
        del rows
        items: dict[str, list[Any]] = {}
        for key in ("problems", "statements"):
            q = "SELECT doc FROM item WHERE file = ? AND key = ? AND idx >= ?"
            q_args: tuple[Any, ...] = (f.no, key, lo)
            if not final:
                q += " AND idx < ?"
                q_args += (hi,)
            items[key] = [doc for (doc,) in db.execute(q + " ORDER BY idx", q_args)]
        graph = LineageGraph(
            datasets=datasets,
            processes=processes,
            edges=edges,
            problems=[Problem.model_validate_json(doc) for doc in items["problems"]],
            statements=[json.loads(doc) for doc in items["statements"]],
            job=job,
            job_from_name=bool((naming or {}).get("job_from_name")),
            process_jobs=bool((naming or {}).get("process_jobs")),
        )
        del datasets, processes, edges, items
        if out is not None:
            out.more = not (final and last)
        yield graph
        del graph  # the consumer's copy only: never two chunks at once


READER = GraphReader()

# read_text/load_json: for plugins, as before
__all__ = ["READER", "Chunks", "GraphReader", "load_json", "read_text"]
