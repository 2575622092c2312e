"""The ``graph`` reader's ``read_chunks``: big lineage documents streamed in bounded chunks.

The reference is ``read()`` (``json.loads`` + ``LineageGraph.from_document``, checked by the model
tests): chunks must keep the contract of ``registry.read_chunks`` and merge back to what ``read()``
gives, report the same first error for a bad document, and never hold the whole document.
"""

from __future__ import annotations

import gc
import io
import json
import sys
import tracemalloc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import Dataset, LineageGraph, Process
from atlas_sync.lineage.readers import graph as graph_reader
from atlas_sync.lineage.readers.graph import READER

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "bench"))

from issue_workload import issue_graph  # noqa: E402
from workload import job_graph, shape_for_entities  # noqa: E402


@pytest.fixture(autouse=True, params=["whole", "stream"])
def parse(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every behaviour holds both for documents parsed whole (at most ``WHOLE_PARSE_BYTES``, as
    these test documents are) and for documents parsed as a stream (bigger ones)."""
    if request.param == "stream":
        monkeypatch.setattr(graph_reader, "WHOLE_PARSE_BYTES", -1)
    return str(request.param)


def streamed_only(parse: str) -> None:
    if parse == "whole":
        pytest.skip("a document parsed whole is held whole (at most WHOLE_PARSE_BYTES): streamed only")


WHOLE_PARSE_BYTES = graph_reader.WHOLE_PARSE_BYTES  # (the module's, before the fixture changes it)


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return str(path)


def merged(chunks: list[LineageGraph]) -> LineageGraph:
    out = chunks[0].model_copy(deep=True)
    for c in chunks[1:]:
        out = out.merge_into(c)
    return out


def canonical(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with its datasets and edges (and so the derived summary) in a fixed order:
    chunks give datasets and edges in the order their processes need them."""
    out = dict(doc)
    for key in ("datasets", "edges", "columns"):
        out[key] = sorted(doc[key], key=lambda x: json.dumps(x, sort_keys=True))
    return out


def assert_contract(chunks: list[LineageGraph], whole: LineageGraph, n: int) -> None:
    assert chunks, "no chunk"
    for i, c in enumerate(chunks):
        assert len(c.processes) <= n
        assert c.check() == [], f"chunk {i} refers to what it does not hold"
        pids = {p.id for p in c.processes}
        outputs = [o for p in c.processes for o in p.outputs]
        for e in c.edges:  # an edge without a process goes with the first process writing its target
            assert e.process in pids or (e.process is None and (e.target.dataset in outputs or not pids))
        assert c.job == whole.job
        assert c.source == whole.source
    assert [p.id for c in chunks for p in c.processes] == [p.id for p in whole.processes]
    assert [p for c in chunks for p in c.processes] == whole.processes
    assert [p for c in chunks for p in c.problems] == whole.problems
    assert [s for c in chunks for s in c.statements] == whole.statements
    assert canonical(merged(chunks).to_document()) == canonical(whole.to_document())


# --------------------------------------------------------------------------- documents
def odd_document() -> dict[str, Any]:
    """Keys in an unusual order (edges first, datasets last), unused datasets, an edge without a
    process, edges out of process order, problems and statements, facets and operator trees."""
    datasets = [
        {"id": f"db.t{i}", "name": f"t{i}", "columns": [{"name": "a", "type": "int"}, "b"]} for i in range(12)
    ]
    datasets.append({"id": "db.unused", "name": "unused", "kind": "view", "facets": {"x": [1, 2.5, None]}})
    processes = [
        {
            "id": f"p{i}",
            "name": f"step {i}",
            "kind": "operator",
            "inputs": [f"db.t{i}"],
            "outputs": [f"db.t{i + 1}"],
            "attributes": {"q": "é ✓", "n": i},
            "operator": "Project",
            "children": [f"p{i + 1}"] if i < 9 else [],
        }
        for i in range(10)
    ]
    edges = [
        {"source": f"db.t{i}.a", "target": f"db.t{i + 1}.b", "kind": "TRANSFORMATION", "process": f"p{i}"}
        for i in reversed(range(10))
    ]
    edges.insert(3, {"source": "db.t10.*", "target": "db.t11.a", "kind": "FILTER"})  # no writer of t11
    edges.insert(5, {"source": "db.t2.a", "target": "db.t3.b", "kind": "IDENTITY"})  # p2 writes t3
    edges.append({"source": {"dataset": "db.t0", "column": "b"}, "target": "db.t1.a", "process": "p0"})
    return {
        "edges": edges,
        "problems": [{"message": f"warning {i}", "line": i} for i in range(7)],
        "processes": processes,
        "statements": [{"index": i, "sql": f"SELECT {i}"} for i in range(5)],
        "job": "odd",
        "tables": {"read": ["ignored"], "write": []},
        "datasets": datasets,
    }


def other_readers_documents() -> Iterator[Any]:
    """Graph documents written from other readers' test inputs (operators, intermediates, facets)."""
    for reader, rel in (
        ("spark-plan", "spark/spark-plan-to-atlas.logical.txt"),
        ("openlineage", "openlineage/spark_complete.json"),
        ("openlineage", "openlineage/postgres_runs.jsonl"),
        ("seatunnel", "seatunnel/two_jdbc_sources.conf"),
        ("seatunnel", "seatunnel/sql_transform.conf"),
    ):
        yield pytest.param(reader, DATA / rel, id=rel)


@pytest.mark.parametrize(("processes", "n"), [(1, 1), (40, 7), (120, 120), (121, 120), (300, 1)])
def test_chunks_of_the_issue_workload_keep_the_contract_and_merge_to_the_whole_read(tmp_path, processes, n):
    path = write(tmp_path / "issue.lineage.json", issue_graph(processes, seed=processes).to_document())
    whole = READER.read([path])
    chunks = list(READER.read_chunks([path], chunk_processes=n))
    assert len(chunks) == -(-processes // n)
    assert_contract(chunks, whole, n)


def test_a_document_within_one_chunk_is_exactly_the_whole_read(tmp_path):
    path = write(tmp_path / "x.lineage.json", odd_document())
    chunks = list(READER.read_chunks([path]))
    assert len(chunks) == 1
    assert chunks[0] == READER.read([path])
    assert chunks[0].to_document() == READER.read([path]).to_document()


@pytest.mark.parametrize("n", [1, 3, 4, 9])
def test_keys_in_any_order_unused_datasets_and_edges_without_a_process(tmp_path, n):
    path = write(tmp_path / "odd.lineage.json", odd_document())
    whole = READER.read([path])
    chunks = list(READER.read_chunks([path], chunk_processes=n))
    assert_contract(chunks, whole, n)
    # the edge no process can own: alone in a last chunk without processes (when there are several)
    last = chunks[-1]
    assert last.processes == [] and [str(e.target) for e in last.edges] == ["db.t11.a"]
    assert "db.unused" in {d.id for d in chunks[-2].datasets}
    assert all("db.unused" not in {d.id for d in c.datasets} for c in chunks[:-2])
    # the edge without a process is with p2, which writes its target
    (home,) = [c for c in chunks if any(e.process is None and str(e.target) == "db.t3.b" for e in c.edges)]
    assert "p2" in {p.id for p in home.processes}
    # problems and statements spread as documented: chunk k carries k*n .. (k+1)*n - 1, the last the rest
    assert [len(c.problems) for c in chunks[:-1]] == [
        min(n, max(0, 7 - k * n)) for k in range(len(chunks) - 1)
    ]
    assert sum(len(c.problems) for c in chunks) == 7


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_workload_job_graphs_merge_to_the_whole_read(tmp_path, seed):
    g = job_graph(shape_for_entities(3000, seed=seed), 0)
    path = write(tmp_path / "job.lineage.json", g.to_document())
    whole = READER.read([path])
    assert_contract(list(READER.read_chunks([path], chunk_processes=5)), whole, 5)


@pytest.mark.parametrize(("reader", "source"), list(other_readers_documents()))
def test_documents_of_other_readers_inputs_merge_to_the_whole_read(tmp_path, reader, source):
    doc = registry.read(reader, [str(source)]).to_document()
    path = write(tmp_path / "other.lineage.json", doc)
    whole = READER.read([path])
    for n in (1, 2):
        assert_contract(list(READER.read_chunks([path], chunk_processes=n)), whole, n)


def test_the_valid_graph_inputs_of_the_bad_corpus_read_the_same(tmp_path):
    path = str(DATA / "bad" / "graph" / "error-problems-only.lineage.json")
    assert list(READER.read_chunks([path], chunk_processes=1)) == [READER.read([path])]


def two_jobs(tmp_path: Path) -> tuple[str, str]:
    """Two documents of 30 and 20 processes with no process id in common (jobs "first", "second")."""
    a = issue_graph(30, seed=1, job="first")
    b = issue_graph(20, seed=2, job="second")
    for p in b.processes:
        p.id = "b-" + p.id
    b.edges = [e.model_copy(update={"process": "b-" + (e.process or "")}) for e in b.edges]
    return write(tmp_path / "a.lineage.json", a.to_document()), write(
        tmp_path / "b.lineage.json", b.to_document()
    )


def test_several_files_merge_as_the_whole_read_and_a_shared_process_id_is_refused(tmp_path):
    pa, pb = two_jobs(tmp_path)
    whole = READER.read([pa, pb])
    assert whole.job == "first"
    one = list(READER.read_chunks([pa, pb], chunk_processes=50))
    assert one == [whole]  # 50 processes in all: one chunk, as read() gives it
    assert_contract(list(READER.read_chunks([pa, pb], chunk_processes=7)), whole, 7)
    pc = write(tmp_path / "c.lineage.json", issue_graph(5, seed=3).to_document())  # p0..p4 again
    for fn in (lambda: READER.read([pa, pc]), lambda: list(READER.read_chunks([pa, pc]))):
        with pytest.raises(InputError) as exc:
            fn()
        assert exc.value.file == pc and "duplicate process id 'p0'" in str(exc.value)


def test_stdin(tmp_path, monkeypatch):
    doc = issue_graph(25).to_document()
    raw = json.dumps(doc).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    chunks = list(READER.read_chunks(["-"], chunk_processes=10))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    whole = READER.read(["-"])
    assert whole.job == "bench"
    assert_contract(chunks, whole, 10)


def test_a_pipe_named_by_path_is_read_like_a_file(tmp_path):
    import os
    import threading

    doc = issue_graph(25).to_document()
    raw = json.dumps(doc).encode()
    fifo = tmp_path / "lineage.fifo"
    os.mkfifo(fifo)

    def through_the_pipe(read: Any) -> Any:
        writer = threading.Thread(target=lambda: fifo.write_bytes(raw))
        writer.start()
        try:
            return read()
        finally:
            writer.join(timeout=10)

    chunks = through_the_pipe(lambda: list(READER.read_chunks([str(fifo)], chunk_processes=10)))
    whole = through_the_pipe(lambda: READER.read([str(fifo)]))
    assert len(whole.processes) == 25
    assert_contract(chunks, whole, 10)


@pytest.mark.parametrize("value", [0, -3, "x", "1.5"])
def test_chunk_processes_must_be_a_positive_integer(tmp_path, value):
    path = write(tmp_path / "x.lineage.json", odd_document())
    with pytest.raises(InputError, match="chunk_processes must be a positive integer"):
        READER.read_chunks([path], chunk_processes=value)


def test_chunk_processes_from_the_command_line_is_text(tmp_path):
    path = write(tmp_path / "x.lineage.json", odd_document())
    assert [len(c.processes) for c in registry.read_chunks("graph", [path], chunk_processes="4")] == [
        4,
        4,
        2,
        0,
    ]


# --------------------------------------------------------------------------- errors
def errors_of(path: str, n: int = 100) -> tuple[str, str]:
    """(read()'s error, read_chunks()'s error); the chunks must fail before the first is given."""
    with pytest.raises(InputError) as whole:
        READER.read([path])
    chunks = READER.read_chunks([path], chunk_processes=n)
    with pytest.raises(InputError) as streamed:
        next(chunks)
    return str(whole.value), str(streamed.value)


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (DATA / "bad" / "graph").iterdir() if "problems-only" not in p.name)
)
def test_the_bad_corpus_gives_the_whole_reads_error(name):
    whole, streamed = errors_of(str(DATA / "bad" / "graph" / name))
    if name == "truncated.lineage.json":  # the parsers word a syntax error differently; same place
        assert whole.split("invalid JSON")[0] == streamed.split("invalid JSON")[0]
        assert "line 1, column 41" in streamed
    else:
        assert streamed == whole


BIG = 1500  # processes: 15 chunks of 100


def big_document() -> dict[str, Any]:
    return issue_graph(BIG, seed=5).to_document()


def _late(doc: dict[str, Any], key: str, change: Any) -> dict[str, Any]:
    items = doc[key]
    items[-1] = change(items[-1])
    return doc


LATE = {
    "bad dataset": lambda d: _late(d, "datasets", lambda x: x | {"columns": 5}),
    "unknown field": lambda d: _late(d, "processes", lambda x: x | {"colour": "red"}),
    "bad problem": lambda d: (
        d | {"problems": [{"message": "ok"}] * 50 + [{"severity": "fatal", "message": "x"}]}
    ),
    "bad edge kind": lambda d: _late(d, "edges", lambda x: x | {"kind": "TELEPATHY"}),
    "edge to nowhere": lambda d: _late(d, "edges", lambda x: x | {"target": "nowhere.t.c"}),
    "edge of an unknown process": lambda d: _late(d, "edges", lambda x: x | {"process": "p-none"}),
    "unknown input": lambda d: _late(d, "processes", lambda x: x | {"inputs": ["raw.nope"]}),
    "duplicate dataset": lambda d: d | {"datasets": d["datasets"] + [d["datasets"][7]]},
    "duplicate process": lambda d: d | {"processes": d["processes"] + [d["processes"][0]]},
    "statement not an object": lambda d: d | {"statements": [{}] * 9 + [3]},
    "job not text": lambda d: d | {"job": ["x"]},
    "datasets not a list": lambda d: d | {"datasets": {"a": 1}},
    "edges and processes bad": lambda d: _late(
        _late(d, "edges", lambda x: x | {"kind": "TELEPATHY"}), "processes", lambda x: x | {"colour": 1}
    ),
}


@pytest.mark.parametrize("case", sorted(LATE))
def test_a_bad_item_late_in_a_big_document_is_the_whole_reads_error_before_any_chunk(tmp_path, case):
    path = write(tmp_path / "big.lineage.json", LATE[case](big_document()))
    whole, streamed = errors_of(path)
    assert streamed == whole
    assert "big.lineage.json" in streamed


def test_the_error_names_the_late_item(tmp_path):
    doc = _late(big_document(), "datasets", lambda x: x | {"columns": 5})
    _, streamed = errors_of(write(tmp_path / "big.lineage.json", doc))
    assert f"$.datasets[{len(doc['datasets']) - 1}]: columns: Input should be a valid list" in streamed
    doc = _late(big_document(), "edges", lambda x: x | {"kind": "TELEPATHY"})
    _, streamed = errors_of(write(tmp_path / "big.lineage.json", doc))
    assert f"$.edges[{len(doc['edges']) - 1}]: unknown dependency kind 'TELEPATHY'" in streamed


def test_a_syntax_error_late_in_a_big_document_names_its_line(tmp_path):
    text = json.dumps(big_document(), indent=2)
    lines = text.splitlines()
    at = max(i for i, line in enumerate(lines[:-40]) if '"source"' in line)
    lines[at] = lines[at].replace('"', "", 1)  # an unquoted key, late in the edges
    path = tmp_path / "big.lineage.json"
    path.write_text("\n".join(lines), encoding="utf-8")
    whole, streamed = errors_of(str(path))
    assert f"line {at + 1}," in whole
    assert f"big.lineage.json: line {at + 1}," in streamed and "invalid JSON" in streamed


def test_bad_utf8_late_in_a_big_document_is_the_whole_reads_error(tmp_path):
    raw = json.dumps(big_document(), indent=2).encode()
    pos = raw.rindex(b"step ")
    path = tmp_path / "big.lineage.json"
    path.write_bytes(raw[:pos] + b"\xe9" + raw[pos + 1 :])
    whole, streamed = errors_of(str(path))
    assert streamed == whole and f"byte {pos}" in streamed


def test_truncated_big_document(tmp_path):
    raw = json.dumps(big_document(), indent=2)
    path = tmp_path / "big.lineage.json"
    path.write_text(raw[: len(raw) - 500], encoding="utf-8")
    whole, streamed = errors_of(str(path))
    assert "invalid JSON" in streamed and f"line {raw[: len(raw) - 500].count(chr(10)) + 1}," in streamed


# --------------------------------------------------------------------------- bounded memory
class Live:
    """Counts the Process and Dataset objects alive, and the most seen at once."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    def track(self, obj: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        weakref.finalize(obj, self._gone)
        return obj

    def _gone(self) -> None:
        self.now -= 1


def test_the_reader_never_holds_more_than_a_chunk_of_processes(tmp_path, monkeypatch, parse):
    streamed_only(parse)
    path = write(tmp_path / "big.lineage.json", big_document())
    live = Live()
    for cls in (Process, Dataset):
        for name in ("model_validate", "model_validate_json"):
            original = getattr(cls, name)

            def spy(*a: Any, _original: Any = original, **kw: Any) -> Any:
                return live.track(_original(*a, **kw))

            monkeypatch.setattr(cls, name, spy)

    def whole_load(*_a: Any, **_kw: Any) -> Any:
        raise AssertionError("the whole document was loaded")

    monkeypatch.setattr(graph_reader, "load_json", whole_load)
    monkeypatch.setattr(LineageGraph, "from_document", whole_load)
    sizes = []
    for chunk in READER.read_chunks([path], chunk_processes=100):
        sizes.append(len(chunk.processes))
        del chunk
        gc.collect()
    assert sizes == [100] * 15
    # one chunk's processes and the datasets they refer to (at most 4 per process), never two chunks
    assert 0 < live.most <= 100 + 100 * 4, live.most
    assert live.most < BIG


def test_reading_in_chunks_peaks_at_a_fraction_of_the_whole_read(tmp_path, parse):
    streamed_only(parse)
    path = write(tmp_path / "big.lineage.json", big_document())

    def peak(fn: Any) -> int:
        gc.collect()
        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    def consume() -> None:
        for chunk in READER.read_chunks([path], chunk_processes=100):
            del chunk

    whole, chunked = peak(lambda: READER.read([path])), peak(consume)
    assert chunked * 4 < whole, (chunked, whole)


# --------------------------------------------------------------------------- parsed whole
def test_a_small_document_is_parsed_whole_and_never_streamed(tmp_path, monkeypatch, parse):
    def no_stream(*_a: Any, **_kw: Any) -> Any:
        raise AssertionError("the document was streamed")

    monkeypatch.setattr(graph_reader, "_events", no_stream)
    path = write(tmp_path / "odd.lineage.json", odd_document())
    if parse == "stream":
        with pytest.raises(AssertionError, match="streamed"):
            list(READER.read_chunks([path]))
        return
    assert list(READER.read_chunks([path])) == [READER.read([path])]
    # more processes than a chunk: its items are spooled from the whole parse, still not streamed
    assert_contract(list(READER.read_chunks([path], chunk_processes=3)), READER.read([path]), 3)


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("nan", b'{"datasets": [{"id": "a", "name": "a", "facets": {"x": NaN}}]}'),
        ("bom", b'\xef\xbb\xbf{"datasets": []}'),
        ("latin-1", b'{"datasets": [{"id": "caf\xe9", "name": "a"}]}'),
        ("truncated", b'{"datasets": [{"id": "a", "name": "a"}'),
        ("not an object", b"[1, 2]"),
    ],
)
def test_what_the_whole_parse_refuses_gets_the_streams_error(tmp_path, parse, name, raw):
    if parse == "stream":
        pytest.skip("compares the two ways itself")
    path = tmp_path / "bad.lineage.json"
    path.write_bytes(raw)
    errors = []
    for limit in (WHOLE_PARSE_BYTES, -1):  # parsed whole, then as a stream
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(graph_reader, "WHOLE_PARSE_BYTES", limit)
            with pytest.raises(InputError) as exc:
                list(READER.read_chunks([str(path)]))
        errors.append(str(exc.value))
    assert errors[0] == errors[1]
    assert str(path) in errors[0]


def test_documents_over_the_limit_together_are_each_parsed_whole_into_the_spool(tmp_path, monkeypatch, parse):
    first, second = two_jobs(tmp_path)
    size = Path(first).stat().st_size
    if parse == "whole":  # each one fits, the two together do not
        monkeypatch.setattr(graph_reader, "WHOLE_PARSE_BYTES", size + 10)
    events = []
    real = graph_reader._events
    monkeypatch.setattr(graph_reader, "_events", lambda src: events.append(src.path) or real(src))
    whole = READER.read([first, second])
    assert_contract(list(READER.read_chunks([first, second], chunk_processes=100)), whole, 100)
    assert events == ([] if parse == "whole" else [first, second])


def test_an_empty_job_name_is_kept_as_the_whole_read_keeps_it(tmp_path, parse):
    path = write(tmp_path / "named.lineage.json", issue_graph(3, seed=4).to_document() | {"job": ""})
    assert READER.read([path]).job == ""
    assert list(READER.read_chunks([path])) == [READER.read([path])]


def test_a_lone_surrogate_escape_reads_as_the_stream_reads_it(tmp_path, parse):
    # (UTF-8 cannot carry one: parsed whole it reached the request body and failed there)
    path = tmp_path / "odd.lineage.json"
    path.write_bytes(b'{"datasets": [{"id": "a", "namespace": "n", "name": "t\\ud800x"}], "processes": []}')
    read = []
    for limit in (WHOLE_PARSE_BYTES, -1):  # parsed whole (refused, so streamed), then streamed
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(graph_reader, "WHOLE_PARSE_BYTES", limit)
            read.append([d.name for c in READER.read_chunks([str(path)]) for d in c.datasets])
    assert read[0] == read[1]
    assert read[0][0].encode()  # something UTF-8 carries


def mores(paths: list[str], n: int) -> tuple[list[bool | None], int]:
    """``more`` after each chunk given, and how many chunks there were."""
    chunks = READER.read_chunks(paths, chunk_processes=n)
    seen = []
    count = 0
    for _ in chunks:
        seen.append(chunks.more)
        count += 1
    return seen, count


@pytest.mark.parametrize(
    ("case", "n"),
    [("odd", 1), ("odd", 3), ("odd", 100), ("issue", 7), ("issue", 40), ("two files", 7), ("two files", 30)],
)
def test_more_says_whether_another_chunk_follows(tmp_path, case, n):
    if case == "odd":  # (its last chunk holds only the edge no process owns)
        paths = [write(tmp_path / "odd.lineage.json", odd_document())]
    elif case == "issue":
        paths = [write(tmp_path / "issue.lineage.json", issue_graph(40, seed=40).to_document())]
    else:
        paths = list(two_jobs(tmp_path))
    seen, count = mores(paths, n)
    assert seen == [True] * (count - 1) + [False]


def test_more_is_unknown_before_the_first_chunk(tmp_path):
    path = write(tmp_path / "issue.lineage.json", issue_graph(3, seed=3).to_document())
    assert READER.read_chunks([path]).more is None
