"""Streaming sync (issue 9, resource bounds): chunk by chunk through a disk spool, same result as a whole sync.

The reference is the whole-graph sync (``Publisher.sync(stream=False)``), which the other e2e tests
check against hand-derived expectations; here every streamed run must leave the emulator in exactly
the state a whole sync leaves it in (entities, attribute values, ACTIVE relationships), for several
readers and chunk sizes, and follow the same safety rules: nothing written when the input fails late,
fail-safes decided before the first write, a second run writes nothing.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator import Emulator
from atlas_sync.errors import InputError
from atlas_sync.factory import embedded_client
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph, Problem, Process
from atlas_sync.reconcile import PlanRefused
from atlas_sync.reconcile.stream import chunks_of
from atlas_sync.render.renderer import RenderError

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = "s"
sys.path.insert(0, str(ROOT / "bench"))

from workload import change_fraction, job_graph, shape_for_entities  # noqa: E402


def graph_a(entities: int) -> LineageGraph:
    """A seeded job graph of about ``entities`` entities (bench/workload.py)."""
    return job_graph(shape_for_entities(entities, seed=7), 0)


def graph_b(a: LineageGraph) -> LineageGraph:
    """``a`` with 30% of column types changed (updates) and its last process dropped (deletes)."""
    b, _ = change_fraction(a, 0.3, seed=3)
    last = b.processes[-1]
    b.processes = b.processes[:-1]
    b.datasets = [d for d in b.datasets if d.id not in set(last.outputs)]
    b.edges = [e for e in b.edges if e.process != last.id]
    return b


def publisher(emu: Emulator, profile: str = "lineage", batch_size: int = 500) -> Publisher:
    return Publisher(embedded_client(emulator=emu), profile=profile, domain=DOMAIN, batch_size=batch_size)


def state(emu: Emulator) -> tuple[dict[tuple[str, str], dict[str, Any]], set[tuple[str, Any, Any]]]:
    """ACTIVE entities of the domain (attributes as stored) and ACTIVE relationships between them,
    with guids replaced by (type, qualifiedName) so two emulators compare."""
    conn = emu.store.conn
    keys = {r["guid"]: (r["type_name"], r["qualified_name"]) for r in conn.execute("SELECT * FROM entities")}
    ents = {
        (r["type_name"], r["qualified_name"]): json.loads(r["attrs"])
        for r in conn.execute("SELECT * FROM entities WHERE status = 'ACTIVE'")
        if (r["qualified_name"] or "").endswith("@" + DOMAIN)
    }
    rels = {
        (r["type_name"], keys.get(r["end1"]), keys.get(r["end2"]))
        for r in conn.execute("SELECT * FROM relationships WHERE status = 'ACTIVE'")
    }
    return ents, rels


def writes(emu: Emulator) -> list[str]:
    """Requests that change something (a basic search is a POST that reads)."""
    return [
        f"{r.method} {r.path}"
        for r in emu.request_log
        if r.method in ("POST", "PUT", "DELETE") and "/search/" not in r.path
    ]


def whole_and_streamed(
    graphs: list[LineageGraph], per_chunk: int, profile: str = "lineage", batch_size: int = 500
) -> tuple[Emulator, Emulator]:
    """Sync each graph in turn, whole into one emulator and streamed into another."""
    whole, streamed = Emulator(None), Emulator(None)
    for g in graphs:
        publisher(whole, profile, batch_size).sync(g.model_copy(deep=True), stream=False)
        publisher(streamed, profile, batch_size).sync_chunks(chunks_of(g.model_copy(deep=True), per_chunk))
    return whole, streamed


def read(reader: str, path: Path, **options: Any) -> LineageGraph:
    return registry.read(reader, [str(path)], **options)


# ---------------------------------------------------------------------------- same result as a whole sync
@pytest.mark.parametrize("per_chunk", [1, 3, 1000])
def test_streamed_sync_of_a_workload_equals_the_whole_sync(per_chunk: int) -> None:
    whole, streamed = whole_and_streamed([graph_a(300)], per_chunk)
    assert state(streamed) == state(whole)
    assert len(state(whole)[0]) > 250


def test_a_big_chunk_is_rendered_in_parts_with_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    import atlas_sync.reconcile.stream as stream

    monkeypatch.setattr(stream, "RENDER_PROCESSES", 2)
    g = graph_a(300)
    assert len(g.processes) > 4
    whole, streamed = whole_and_streamed([g], len(g.processes))  # one reader chunk, rendered 2 at a time
    assert state(streamed) == state(whole)


@pytest.mark.parametrize(
    ("reader", "path", "profile", "options"),
    [
        ("sql", ROOT / "examples/sql/etl.sql", "lineage", {"dialect": "spark"}),
        ("spark-plan", ROOT / "examples/spark-cars/cars.plan.txt", "pico", {}),
        ("spark-plan", ROOT / "examples/spark-cars/cars.plan.txt", "lineage", {}),
        ("openlineage", ROOT / "examples/openlineage/daily_revenue.ol.json", "lineage", {}),
        ("seatunnel", ROOT / "examples/seatunnel/orders_to_dw.conf", "lineage", {}),
    ],
)
def test_streamed_sync_of_each_example_equals_the_whole_sync(
    reader: str, path: Path, profile: str, options: dict[str, Any]
) -> None:
    g = read(reader, path, **options)
    whole, streamed = whole_and_streamed([g], 1, profile)
    assert state(streamed) == state(whole)
    assert state(whole)[0]


def test_streamed_updates_creates_and_deletes_match_the_whole_sync() -> None:
    a = graph_a(300)
    b = graph_b(a)
    whole, streamed = whole_and_streamed([a, b], 2)
    assert state(streamed) == state(whole)
    # the second graph really dropped entities of the first
    only_a, _ = whole_and_streamed([a], 1000)
    assert set(state(only_a)[0]) - set(state(whole)[0])


def test_columns_a_dataset_gets_from_different_chunks_render_as_in_the_whole_graph() -> None:
    # raw.t is read with column a by one process and with column b by another: in the whole graph
    # the dataset has columns [a, b] (positions 0 and 1); chunk by chunk each process sees only one.
    doc = {
        "datasets": [
            {"id": "raw.t", "namespace": "raw", "name": "t", "columns": ["a"]},
            {"id": "m.x", "namespace": "m", "name": "x", "columns": ["a"]},
            {"id": "m.y", "namespace": "m", "name": "y", "columns": ["b"]},
        ],
        "processes": [
            {"id": "p1", "name": "p1", "inputs": ["raw.t"], "outputs": ["m.x"]},
            {"id": "p2", "name": "p2", "inputs": ["raw.t"], "outputs": ["m.y"]},
        ],
        "edges": [
            {"source": "raw.t.a", "target": "m.x.a", "kind": "IDENTITY", "process": "p1"},
            {"source": "raw.t.b", "target": "m.y.b", "kind": "IDENTITY", "process": "p2"},
        ],
    }
    g = LineageGraph.from_document(doc)
    g.job = "cols"
    # chunk 2 lists raw.t with column b only, as a reader that chunks would
    c1, c2 = list(chunks_of(g, 1))
    c2.datasets = [
        d
        if d.id != "raw.t"
        else d.model_copy(update={"columns": [d.columns[0].model_copy(update={"name": "b"})]})
        for d in c2.datasets
    ]
    whole, streamed = Emulator(None), Emulator(None)
    publisher(whole).sync(g, stream=False)
    publisher(streamed).sync_chunks([c1, c2])
    assert state(streamed) == state(whole)
    positions = {k[1]: v["position"] for k, v in state(streamed)[0].items() if k[0] == "lineage_column"}
    assert positions["raw.t.a@s"] == 0 and positions["raw.t.b@s"] == 1


def test_a_table_a_later_chunk_creates_as_a_view_is_published_as_a_view(tmp_path: Path) -> None:
    # Statement 1 reads raw.v (a table, as far as it knows); statement 3 creates raw.v as a view.
    log = tmp_path / "views.querylog.csv"
    log.write_text(
        "query_text\n"
        '"INSERT INTO m.a SELECT x FROM raw.v"\n'
        '"INSERT INTO m.b SELECT y FROM raw.s"\n'
        '"CREATE VIEW raw.v AS SELECT x FROM raw.s"\n',
        encoding="utf-8",
    )
    g = registry.read("query-log", [str(log)], workers=1)
    assert g.dataset("raw.v") is not None and g.dataset("raw.v").kind == "view"
    whole, streamed = Emulator(None), Emulator(None)
    publisher(whole).sync(g, stream=False)
    publisher(streamed).sync_chunks(
        registry.read_chunks("query-log", [str(log)], workers=1, chunk_statements=1)
    )
    assert state(streamed) == state(whole)
    assert state(streamed)[0][("lineage_dataset", "raw.v@s")]["kind"] == "view"


def test_a_single_process_keeps_its_job_name_when_streamed() -> None:
    # One process in the whole input: named <job>@domain (lineage profile rule), in any chunking.
    g = read("spark-plan", ROOT / "examples/spark-cars/cars.plan.txt")
    assert len(g.processes) == 1
    emu = Emulator(None)
    publisher(emu).sync_chunks(chunks_of(g, 1))
    assert ("lineage_process", f"{g.job}@{DOMAIN}") in state(emu)[0]


def test_publisher_sync_streams_when_asked() -> None:
    whole, streamed = Emulator(None), Emulator(None)
    publisher(whole).sync(graph_a(200), stream=False)
    result = publisher(streamed).sync(graph_a(200), stream=True)
    assert state(streamed) == state(whole)
    assert result.plan.counts["create"] == len(state(whole)[0])


def test_publisher_sync_streams_big_graphs_by_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    import atlas_sync.api.options as api
    import atlas_sync.reconcile.stream as stream

    spools: list[bool] = []  # memory? for every spool opened

    class Spool(stream.Spool):
        def __init__(self, directory: str | None = None, *, memory: bool = False) -> None:
            spools.append(memory)
            super().__init__(directory, memory=memory)

    monkeypatch.setattr(stream, "Spool", Spool)
    g = graph_a(200)
    small = publisher(Emulator(None)).sync(g.model_copy(deep=True))
    assert spools == [True] and small.plan.omitted == 0
    monkeypatch.setattr(api, "STREAM_MIN_ENTITIES", 50)
    whole, streamed = Emulator(None), Emulator(None)
    publisher(whole).sync(g.model_copy(deep=True), stream=False)
    publisher(streamed).sync(g.model_copy(deep=True))
    assert spools == [True, True, False]
    assert state(streamed) == state(whole)


# ---------------------------------------------------------------------------- idempotence and request counts
def test_a_second_streamed_run_writes_nothing() -> None:
    emu = Emulator(None)
    publisher(emu).sync_chunks(chunks_of(graph_a(300), 5))
    emu.clear_log()
    result = publisher(emu).sync_chunks(chunks_of(graph_a(300), 5))
    assert writes(emu) == []
    assert result.applied is None
    assert result.plan.counts["unchanged"] == len(state(emu)[0])
    assert result.plan.counts["create"] == result.plan.counts["update"] == 0


def test_changed_entities_go_in_full_batches_across_chunks() -> None:
    # 30% of columns change type (graph_b without its deletes and creates): the updates spread over
    # many chunks, but writes are batched across them: ceil(changed / batch size) write requests.
    a = graph_a(600)
    b, _ = change_fraction(a, 0.3, seed=3)
    emu = Emulator(None)
    publisher(emu, batch_size=50).sync(a, stream=False)
    emu.clear_log()
    result = publisher(emu, batch_size=50).sync_chunks(chunks_of(b, 3), allow_delete=False)
    changed = result.plan.counts["update"] + result.plan.counts["create"]
    assert changed > 100
    posts = [w for w in writes(emu) if w.startswith("POST") and "/entity/bulk" in w]
    assert len(posts) == math.ceil(changed / 50)


# ---------------------------------------------------------------------------- nothing written when the input fails
def _failing_late(g: LineageGraph, failure: Exception | Problem) -> Any:
    chunks = list(chunks_of(g, 2))
    yield from chunks[:-1]
    if isinstance(failure, Exception):
        raise failure
    last = chunks[-1]
    last.problems.append(failure)
    yield last


def test_an_error_in_the_last_chunk_publishes_nothing_not_even_typedefs() -> None:
    emu = Emulator(None)
    with pytest.raises(InputError, match="nothing was published"):
        publisher(emu).sync_chunks(
            _failing_late(graph_a(200), Problem(message="bad statement", severity="error", line=900))
        )
    assert writes(emu) == []


def test_a_reader_failing_after_some_chunks_publishes_nothing() -> None:
    emu = Emulator(None)
    with pytest.raises(InputError, match="row 90000"):
        publisher(emu).sync_chunks(_failing_late(graph_a(200), InputError("invalid CSV at row 90000")))
    assert writes(emu) == []


def test_allow_partial_publishes_what_was_read_and_deletes_nothing() -> None:
    emu = Emulator(None)
    a = graph_a(200)
    publisher(emu).sync(a, stream=False)
    emu.clear_log()
    smaller = a.model_copy(deep=True)
    smaller.processes = smaller.processes[:-1]
    smaller.problems.append(Problem(message="one statement failed", severity="error"))
    result = publisher(emu).sync_chunks(chunks_of(smaller, 2), allow_partial=True)
    assert result.plan.counts["delete"] == 0
    assert any("input had errors" in w for w in result.plan.warnings)


def test_a_name_collision_between_chunks_is_refused_before_any_write() -> None:
    # lineage profile naming: process "x" of job "j" renders to j:x@s, and so does process "j:x"
    # (an id that already starts with "<job>:" is kept as is): two nodes, one name, in two chunks.
    c1 = LineageGraph(job="j", processes=[Process(id="x", name="first")])
    c2 = LineageGraph(job="j", processes=[Process(id="j:x", name="second")])
    whole = c1.merge(c2)
    with pytest.raises(RenderError, match="collision"):
        publisher(Emulator(None)).sync(whole, stream=False)
    emu = Emulator(None)
    with pytest.raises(RenderError, match="collision: process 'x' and process 'j:x'"):
        publisher(emu).sync_chunks([c1, c2])
    assert writes(emu) == []


def test_the_delete_fail_safe_refuses_before_any_write() -> None:
    emu = Emulator(None)
    a = graph_a(300)
    publisher(emu).sync(a, stream=False)
    before = state(emu)
    emu.clear_log()
    # keep one process and only what it uses: most of the job's entities would go
    first = a.processes[0]
    used = {*first.inputs, *first.outputs}
    tiny = LineageGraph(job=a.job, source=a.source)
    for d in a.datasets:
        if d.id in used:
            tiny.add_dataset(d)
    tiny.add_process(first)
    for e in a.edges:
        if e.process == first.id:
            tiny.add_edge(e)
    with pytest.raises(PlanRefused, match="max-delete-percent"):
        publisher(emu).plan(tiny)  # the whole plan refuses too
    with pytest.raises(PlanRefused, match="max-delete-percent"):
        publisher(emu).sync_chunks(chunks_of(tiny, 1))
    assert writes(emu) == []
    assert state(emu) == before


def test_another_jobs_process_is_refused_before_any_write() -> None:
    emu = Emulator(None)
    g = graph_a(100)
    publisher(emu).sync(g, stream=False)
    before = state(emu)
    emu.clear_log()
    # A graph whose only process is named like one of g's (job "<g.job>:<id>", process id equal to the
    # job: rendered as <g.job>:<id>@s), published under that other job name.
    first = g.processes[0]
    intruder = LineageGraph(job=f"{g.job}:{first.id}")
    for ds in (*first.inputs, *first.outputs):
        d = g.dataset(ds)
        assert d is not None
        intruder.add_dataset(d.model_copy(deep=True))
    intruder.add_process(first.model_copy(update={"id": intruder.job}))
    with pytest.raises(PlanRefused, match=f"belongs to job '{g.job}'"):
        publisher(emu).sync_chunks([intruder])
    assert writes(emu) == []
    assert state(emu) == before


def test_a_dataset_another_job_still_reads_is_kept_as_in_the_whole_sync() -> None:
    def doc(job: str, outputs: list[str]) -> LineageGraph:
        g = LineageGraph.from_document(
            {
                "datasets": [
                    {"id": "raw.src", "namespace": "raw", "name": "src", "columns": ["a"]},
                    *({"id": o, "namespace": "m", "name": o[2:], "columns": ["a"]} for o in outputs),
                ],
                "processes": [
                    {"id": f"to_{o[2:]}", "name": o, "inputs": ["raw.src"], "outputs": [o]} for o in outputs
                ],
            }
        )
        g.job = job
        return g

    results = []
    for stream in (False, True):
        emu = Emulator(None)
        pub = publisher(emu)
        pub.sync(doc("a", ["m.x", "m.y"]), stream=False)  # job a creates raw.src, m.x, m.y
        reader = LineageGraph.from_document(
            {
                "datasets": [
                    {"id": "m.x", "namespace": "m", "name": "x", "columns": ["a"]},
                    {"id": "m.z", "namespace": "m", "name": "z", "columns": ["a"]},
                ],
                "processes": [{"id": "z", "name": "z", "inputs": ["m.x"], "outputs": ["m.z"]}],
            }
        )
        reader.job = "b"
        pub.sync(reader, stream=False)  # job b reads m.x (owned by a)
        later = doc("a", ["m.y"])  # job a no longer writes m.x
        if stream:
            pub.sync_chunks(chunks_of(later, 1), force=True)
        else:
            pub.sync(later, stream=False, force=True)
        results.append(state(emu))
        assert ("lineage_dataset", "m.x@s") in state(emu)[0], f"stream={stream}"  # b reads it
    assert results[0] == results[1]


# ---------------------------------------------------------------------------- the CLI
def _query_log(path: Path) -> None:
    """40 rows of INSERT ... SELECT into 12 targets from 4 sources, plus a SELECT that writes nothing.
    Statements differing only in literals are runs of one statement: 12 distinct statements."""
    rows = ["query_text,user_name,start_time"]
    for i in range(30):
        rows.append(
            f'"INSERT INTO mart.t{i % 12} SELECT a, b + {i} AS c FROM raw.s{i % 4} WHERE x > 1",etl,t'
        )
    rows += ['"INSERT INTO mart.t0 SELECT a, b + 0 AS c FROM raw.s0 WHERE x > 7",etl,t'] * 9
    rows.append('"SELECT 1",etl,t')
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _cli(args: list[str], data: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    env["ATLAS_SYNC_DATA_DIR"] = str(data)
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_sync_of_a_query_log_in_chunks_equals_the_whole_sync(tmp_path: Path) -> None:
    log = tmp_path / "etl.querylog.csv"
    _query_log(log)
    whole = _cli(["sync", "-d", DOMAIN, str(log), "--no-stream", "--json"], tmp_path / "whole")
    streamed = _cli(
        ["sync", "-d", DOMAIN, str(log), "-o", "chunk_statements=4", "--json"], tmp_path / "streamed"
    )
    assert whole.returncode == 0, whole.stderr
    assert streamed.returncode == 0, streamed.stderr
    assert json.loads(streamed.stdout)["plan"] == json.loads(whole.stdout)["plan"]
    a, b = (Emulator(tmp_path / d / "atlas.db") for d in ("whole", "streamed"))
    assert state(b) == state(a)
    # 12 targets + 4 sources; 12 distinct statements (i and i + 12 differ only in a literal)
    ents = state(a)[0]
    assert sum(1 for k in ents if k[0] == "lineage_dataset") == 16
    assert sum(1 for k in ents if k[0] == "lineage_process") == 12
    again = _cli(
        ["sync", "-d", DOMAIN, str(log), "-o", "chunk_statements=4", "--json"], tmp_path / "streamed"
    )
    assert json.loads(again.stdout)["applied"] is None


def test_cli_streamed_sync_with_a_bad_row_late_in_the_log_publishes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "etl.querylog.csv"
    _query_log(log)
    with log.open("a", encoding="utf-8") as fh:
        fh.write('"INSERT INTO mart.broken SELECT a FROM raw.s0,etl,t\n')  # unclosed quote at the end
    res = _cli(["sync", "-d", DOMAIN, str(log), "-o", "chunk_statements=4"], tmp_path / "data")
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    assert "etl.querylog.csv" in res.stderr and "line 42" in res.stderr
    emu = Emulator(tmp_path / "data" / "atlas.db")
    assert state(emu)[0] == {}
    assert (
        emu.store.conn.execute("SELECT count(*) FROM typedefs").fetchone()[0]
        == Emulator(None).store.conn.execute("SELECT count(*) FROM typedefs").fetchone()[0]
    )


def test_cli_plan_of_a_query_log_in_chunks_counts_as_the_whole_plan_and_writes_nothing(
    tmp_path: Path,
) -> None:
    log = tmp_path / "etl.querylog.csv"
    _query_log(log)
    data = tmp_path / "data"
    assert _cli(["typedefs", "apply", "--profile", "lineage"], data).returncode == 0
    whole = _cli(["plan", "-d", DOMAIN, str(log), "--no-stream", "--json"], data)
    streamed = _cli(["plan", "-d", DOMAIN, str(log), "-o", "chunk_statements=4", "--json"], data)
    assert whole.returncode == 0 and streamed.returncode == 0, streamed.stderr
    assert json.loads(streamed.stdout)["summary"] == json.loads(whole.stdout)["summary"]
    assert json.loads(streamed.stdout)["summary"]["create"] > 0
    assert state(Emulator(data / "atlas.db"))[0] == {}
    # after a sync the streamed plan finds nothing to do
    assert _cli(["sync", "-d", DOMAIN, str(log), "-q"], data).returncode == 0
    again = _cli(["plan", "-d", DOMAIN, str(log), "-o", "chunk_statements=4", "--detailed-exitcode"], data)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 to create, 0 to update, 0 to delete" in again.stdout


def test_cli_plan_out_reads_whole_and_refuses_stream(tmp_path: Path) -> None:
    log = tmp_path / "etl.querylog.csv"
    _query_log(log)
    data = tmp_path / "data"
    out = tmp_path / "plan.json"
    saved = _cli(["plan", "-d", DOMAIN, str(log), "-o", "chunk_statements=4", "--out", str(out)], data)
    assert saved.returncode == 0, saved.stderr
    assert json.loads(out.read_text())["summary"]["create"] > 0
    refused = _cli(["plan", "-d", DOMAIN, str(log), "--stream", "--out", str(out)], data)
    assert refused.returncode == 2 and "cannot be saved" in refused.stderr


# ---------------------------------------------------------------------------- one process over many datasets
def _spy_render(monkeypatch: pytest.MonkeyPatch) -> list[LineageGraph]:
    """Record the graph of every ``render`` call the streaming sync makes."""
    import atlas_sync.reconcile.stream as stream

    calls: list[LineageGraph] = []
    real = stream.render

    def spy(graph: LineageGraph, *args: Any, **kwargs: Any) -> Any:
        calls.append(graph)
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(stream, "render", spy)
    return calls


def _streamed_half(calls: list[LineageGraph]) -> list[LineageGraph]:
    """The render calls of the streamed run of :func:`whole_and_streamed`: both runs go through the one
    sync path (memory spool, then file spool), so they render in the same parts."""
    half = len(calls) // 2
    shape = [(len(c.datasets), len(c.processes), len(c.edges)) for c in calls]
    assert shape[:half] == shape[half:]
    return calls[half:]


def _one_target_column(edges: list[Any]) -> bool:
    return len({(e.process, e.target.dataset, e.target.column) for e in edges}) == 1


def test_a_spark_plan_of_one_process_over_many_datasets_renders_in_bounded_parts_with_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resource_bounds import spark_plan

    import atlas_sync.reconcile.stream as stream

    plan = tmp_path / "union.plan.txt"
    branches = spark_plan(plan, 0.02)  # a Union of `branches` projections of 20 columns, one relation each
    g = read("spark-plan", plan)
    assert len(g.processes) == 1 and branches > 10
    monkeypatch.setattr(stream, "RENDER_DATASETS", 4)
    monkeypatch.setattr(stream, "RENDER_EDGES", 10)
    calls = _spy_render(monkeypatch)
    whole, streamed = whole_and_streamed([g], 1)
    assert state(streamed) == state(whole)
    # the input: output column o<i> is computed from column c<i> of every branch's relation
    ents, rels = state(whole)
    lineage = sorted(k for k in ents if k[0] == "lineage_column_lineage")
    assert len(lineage) == 20
    for i in range(20):
        key = next(k for k in lineage if k[1].endswith(f".o{i}@{DOMAIN}"))
        inputs = {r[2] for r in rels if r[0] == "dataset_process_inputs" and r[1] == key}
        assert inputs == {("lineage_column", f"db.t{j}.c{i}@{DOMAIN}") for j in range(branches)}
    assert sum(1 for k in ents if k[0] == "lineage_dataset") == branches + 1
    # bounded: datasets a few at a time; processes and edges with no dataset entity, one target column
    # (more than RENDER_EDGES edges) per part
    calls = _streamed_half(calls)
    assert max(len(c.datasets) for c in calls) <= 4
    with_edges = [c for c in calls if c.edges]
    assert len(with_edges) == 20
    assert all(not c.datasets and _one_target_column(c.edges) for c in with_edges)


def test_small_target_columns_of_one_process_are_packed_into_parts_with_the_same_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import atlas_sync.reconcile.stream as stream

    # one process reads t0..t5 (columns a, b) into out: out.x<i> = t<i>.a + t<i>.b, 2 edges per target
    # column, and a FILTER on t0.a for the whole of out (dataset-level target)
    n = 6
    doc = {
        "datasets": [
            {"id": f"raw.t{i}", "namespace": "raw", "name": f"t{i}", "columns": ["a", "b"]} for i in range(n)
        ]
        + [{"id": "m.out", "namespace": "m", "name": "out", "columns": [f"x{i}" for i in range(n)]}],
        "processes": [
            {"id": "p", "name": "p", "inputs": [f"raw.t{i}" for i in range(n)], "outputs": ["m.out"]}
        ],
        "edges": [
            {"source": f"raw.t{i}.{c}", "target": f"m.out.x{i}", "kind": "TRANSFORMATION", "process": "p"}
            for i in range(n)
            for c in ("a", "b")
        ]
        + [{"source": "raw.t0.a", "target": "m.out.*", "kind": "FILTER", "process": "p"}],
    }
    g = LineageGraph.from_document(doc)
    g.job = "packed"
    monkeypatch.setattr(stream, "RENDER_DATASETS", 2)
    monkeypatch.setattr(stream, "RENDER_EDGES", 5)
    calls = _spy_render(monkeypatch)
    whole, streamed = whole_and_streamed([g], 1)
    assert state(streamed) == state(whole)
    ents = state(whole)[0]
    assert sum(1 for k in ents if k[0] == "lineage_column_lineage") == n + 1
    # 13 edges in target groups of 2, 2, 2, 2, 2, 2 and 1, packed while a part stays within 5 edges
    parts = [c for c in _streamed_half(calls) if c.edges]
    assert [len(c.edges) for c in parts] == [2 + 2, 2 + 2, 2 + 2 + 1]
    assert all(len(c.processes) == 1 for c in parts)


def test_entities_with_many_references_are_read_back_in_small_groups_and_a_rerun_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resource_bounds import spark_plan

    import atlas_sync.reconcile.spool as spool

    plan = tmp_path / "union.plan.txt"
    branches = spark_plan(plan, 0.02)
    g = read("spark-plan", plan)
    emu = Emulator(None)
    publisher(emu).sync_chunks(chunks_of(g.model_copy(deep=True), 1))
    # every read-back group holds one entity: as many bulk reads as desired entities (each one GET
    # of a single guid), and the re-run still finds everything unchanged (``refresh``: every entity is
    # read back, not only those whose stored digest differs)
    monkeypatch.setattr(spool, "READ_BYTES", 1)
    reads: list[int] = []
    real = AtlasClient.get_entities

    def spy(self: AtlasClient, guids: list[str], *args: Any, **kwargs: Any) -> Any:
        reads.append(len(guids))
        return real(self, guids, *args, **kwargs)

    monkeypatch.setattr(AtlasClient, "get_entities", spy)
    emu.clear_log()
    again = publisher(emu).sync_chunks(chunks_of(g.model_copy(deep=True), 1), refresh=True)
    assert writes(emu) == []
    entities = len(state(emu)[0])
    assert again.plan.counts == {"create": 0, "update": 0, "delete": 0, "unchanged": entities}
    assert branches > 10 and max(reads) == 1 and len(reads) >= entities


def test_the_spool_file_has_no_name_while_the_sync_runs(tmp_path: Path) -> None:
    # a sync killed with SIGKILL must not leave its spool (up to the rendered input's size) behind
    from atlas_sync.reconcile.stream import StreamSync

    pub = publisher(Emulator(None))
    with StreamSync(pub.client, pub.profile, DOMAIN, spool_dir=str(tmp_path)) as s:
        s.add_chunk(graph_a(100))
        s.render("job0")
        assert list(tmp_path.iterdir()) == []
        assert s.spool.desired_count() > 0  # still usable
    assert list(tmp_path.iterdir()) == []
