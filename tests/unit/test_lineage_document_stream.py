"""The lineage document written piece by piece (and, for chunked readers, from chunks) is byte for
byte what ``json.dumps(graph.to_document(), indent=2, ensure_ascii=False)`` gives."""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterable
from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas_sync.cli.lineage import ChunkedDocument, lineage_cmd
from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import (
    Column,
    ColumnEdge,
    ColumnRef,
    Dataset,
    LineageGraph,
    Problem,
    Process,
    write_graph_document,
)

ROOT = Path(__file__).parents[2]
INPUT_DIRS = [
    ROOT / "examples",
    ROOT / "tests" / "data" / "spark",
    ROOT / "tests" / "data" / "openlineage",
    ROOT / "tests" / "data" / "seatunnel",
    ROOT / "tests" / "data" / "seeds",
]
SKIP_SUFFIXES = (".md", ".py", ".txt.gz", ".toml", ".cfg")


def expected(graph: LineageGraph) -> str:
    return json.dumps(graph.to_document(), indent=2, ensure_ascii=False)


def streamed(graph: LineageGraph) -> str:
    buf = io.StringIO()
    write_graph_document(graph, buf)
    return buf.getvalue()


def _inputs() -> list[tuple[str, str]]:
    """(reader, file) for every example and fixture some reader reads without error."""
    out = []
    for base in INPUT_DIRS:
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if not path.is_file() or path.name.endswith(SKIP_SUFFIXES) or "egg-info" in path.parts:
                continue
            try:
                reader = registry.detect(str(path))
                reader.read([str(path)])
            except InputError:
                continue
            out.append((reader.name, str(path)))
    return out


INPUTS = _inputs()


def test_the_inputs_cover_the_readers() -> None:
    names = {name for name, _ in INPUTS}
    assert {
        "spark-plan",
        "spark-json",
        "sql",
        "hive-lineage",
        "openlineage",
        "seatunnel",
        "whaletunnel",
    } <= names


@pytest.mark.parametrize(("reader", "path"), INPUTS, ids=[Path(p).name for _, p in INPUTS])
def test_streamed_document_equals_json_dumps_on_every_example(reader: str, path: str) -> None:
    graph = registry.read(reader, [path])
    assert streamed(graph) == expected(graph)
    if reader in ("spark-plan", "spark-json"):  # the operator trees (pico profile) too
        graph = registry.read(reader, [path], mode="operator")
        assert streamed(graph) == expected(graph)


def test_streamed_document_of_a_graph_document_equals_json_dumps(tmp_path: Path) -> None:
    reader, path = next((r, p) for r, p in INPUTS if r == "sql")
    doc = tmp_path / "x.lineage.json"
    doc.write_text(expected(registry.read(reader, [path])), encoding="utf-8")
    graph = registry.read("graph", [str(doc)])
    assert streamed(graph) == expected(graph)


def test_special_values_and_empty_sections_are_rendered_as_json_dumps_does() -> None:
    empty = LineageGraph()
    assert streamed(empty) == expected(empty)
    g = LineageGraph(
        job='jöb "quoted"\nline',
        datasets=[
            Dataset(id="a", name="a", columns=[Column(name="x", type="int", description="ünïcode ☃")]),
            Dataset(id='b."c d"', namespace="b", name="c d", kind="view", facets={"k": [1, 2.5, None, {}]}),
        ],
        processes=[Process(id="p", name="p", inputs=["a"], outputs=['b."c d"'], attributes={"q": "a\tb"})],
        edges=[
            ColumnEdge(
                source=ColumnRef(dataset="a", column="x"),
                target=ColumnRef(dataset='b."c d"', column="y.z"),
                kind="TRANSFORMATION",
                expression="x || '\\u00e9'",
                process="p",
            )
        ],
        problems=[Problem(message="€ warning", line=3)],
        statements=[{"type": "X", "nested": {"list": [], "dict": {}}}],
    )
    assert streamed(g) == expected(g)


# ----------------------------------------------------------------- chunked query logs

HEADER = ["query_text", "user_name", "start_time", "end_time", "database_name", "schema_name", "duration"]


def _log(path: Path, texts: list[str]) -> str:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows([[t, "u", "2024-01-01", "", "", "", "1"] for t in texts])
    return str(path)


def _generated(n: int) -> list[str]:
    """Statements chaining through intermediates (so the end-to-end summary walks across chunks)."""
    out = []
    for i in range(n):
        if i % 29 == 3:
            out.append(f"INSERT INTO SELECT bad{i} FROM")
        elif i % 3 == 0:
            out.append(f"INSERT INTO stage.s{i % 10} SELECT a, b * {i} AS b FROM raw.r{i % 4} WHERE c > 1")
        elif i % 3 == 1:
            out.append(
                f"INSERT INTO mart.m{i % 8} SELECT s.a, sum(s.b) AS total FROM stage.s{(i - 1) % 10} s "
                f"JOIN raw.k ON s.a = raw.k.a GROUP BY s.a"
            )
        else:
            out.append(f"CREATE VIEW v.v{i} AS SELECT a, total FROM mart.m{i % 8} WHERE total > {i}")
    out.append("INSERT INTO mart.late SELECT a FROM v.v2")  # read of a view created much earlier
    out.append("INSERT INTO mart.z SELECT q FROM v.later")
    out.append("CREATE VIEW v.later AS SELECT q FROM raw.q")  # a table refined to a view in a later chunk
    return out


def _document_of(chunks: Iterable[LineageGraph]) -> str:
    doc = ChunkedDocument()
    try:
        for chunk in chunks:
            doc.add(chunk)
        buf = io.StringIO()
        doc.write(buf)
        return buf.getvalue()
    finally:
        doc.close()


def chunked_text(path: str, per_chunk: int, **options: object) -> str:
    return _document_of(registry.read_chunks("query-log", [path], chunk_statements=per_chunk, **options))


@pytest.mark.parametrize("per_chunk", [1, 7, 5000])
def test_a_document_from_chunks_equals_json_dumps_of_read(tmp_path: Path, per_chunk: int) -> None:
    path = _log(tmp_path / "gen.querylog.csv", _generated(120))
    whole = registry.read("query-log", [path], workers=1)
    assert chunked_text(path, per_chunk, workers=1) == expected(whole)


def test_the_command_writes_the_same_bytes_with_and_without_chunks(tmp_path: Path) -> None:
    path = _log(tmp_path / "gen.querylog.csv", _generated(40))
    whole = registry.read("query-log", [path], workers=1)
    out = tmp_path / "out.json"
    runner = CliRunner()
    args = ["query-log", path, "-o", "workers=1", "-o", "chunk_statements=3"]
    result = runner.invoke(lineage_cmd, [*args, "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0
    assert out.read_text(encoding="utf-8") == expected(whole) + "\n"
    result = runner.invoke(lineage_cmd, args, catch_exceptions=False)
    assert result.stdout == expected(whole) + "\n"


@pytest.mark.parametrize("reader", ["sql", "openlineage", "seatunnel", "spark-plan", "hive-lineage"])
def test_the_command_writes_json_dumps_bytes_for_other_readers(reader: str) -> None:
    path = next(p for r, p in INPUTS if r == reader)
    result = CliRunner().invoke(lineage_cmd, [reader, path], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout == expected(registry.read(reader, [path])) + "\n"


def test_the_job_flag_names_the_job_of_a_chunked_document(tmp_path: Path) -> None:
    path = _log(tmp_path / "gen.querylog.csv", _generated(10))
    result = CliRunner().invoke(lineage_cmd, ["query-log", path, "--job", "nightly", "-o", "workers=1"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["job"] == "nightly"
    assert all(p["id"].startswith("nightly:") for p in json.loads(result.stdout)["processes"])


def test_an_unwritable_out_path_is_an_input_error(tmp_path: Path) -> None:
    path = _log(tmp_path / "gen.querylog.csv", _generated(4))
    with pytest.raises(InputError, match="cannot write"):
        CliRunner().invoke(
            lineage_cmd,
            ["query-log", path, "-o", "workers=1", "--out", str(tmp_path / "no" / "such" / "dir.json")],
            catch_exceptions=False,
            standalone_mode=False,
        )


def test_a_failing_chunked_read_writes_no_output(tmp_path: Path) -> None:
    path = _log(tmp_path / "bad.querylog.csv", ["INSERT INTO SELECT x FROM", "INSERT INTO SELECT y FROM"])
    out = tmp_path / "out.json"
    with pytest.raises(InputError, match="none of the 2"):
        CliRunner().invoke(
            lineage_cmd,
            ["query-log", path, "-o", "workers=1", "-o", "chunk_statements=1", "--out", str(out)],
            catch_exceptions=False,
            standalone_mode=False,
        )
    assert not out.exists()


# ----------------------------------------------------------------- the summary from tuples


def _random_graph(rng: random.Random) -> LineageGraph:
    """Processes over a few tables (some intermediate, some written twice, cycles allowed), with
    direct and indirect column edges, some on the whole dataset and some without a process."""
    names = [f"t{i}" for i in range(rng.randint(1, 7))]
    g = LineageGraph(
        datasets=[
            Dataset(
                id=n,
                name=n,
                kind=rng.choice(["table", "table", "intermediate", "view"]),
                columns=[Column(name="a"), Column(name="b")],
            )
            for n in names
        ]
    )
    kinds = ["IDENTITY", "TRANSFORMATION", "AGGREGATION", "JOIN", "FILTER", "SORT"]
    for i in range(rng.randint(0, 6)):
        ins = rng.sample(names, rng.randint(1, len(names)))
        outs = rng.sample(names, 1)
        g.add_process(Process(id=f"p{i}", name=f"p{i}", inputs=ins, outputs=outs))
        for _ in range(rng.randint(0, 6)):
            g.add_edge(
                ColumnEdge(
                    source=ColumnRef(dataset=rng.choice(ins), column=rng.choice(["a", "b"])),
                    target=ColumnRef(dataset=outs[0], column=rng.choice(["a", "b", None])),
                    kind=rng.choice(kinds),  # type: ignore[arg-type]
                    expression=rng.choice([None, "f(x)", f"e{i}"]),
                    process=rng.choice([f"p{i}", f"p{i}", None]),
                )
            )
    return g


def test_the_summary_from_tuples_equals_the_graph_methods_on_random_graphs() -> None:
    rng = random.Random(20261130)
    for _ in range(400):
        g = _random_graph(rng)
        assert streamed(g) == expected(g)


def _one_chunk(graph: LineageGraph) -> str:
    return _document_of([graph])


@pytest.mark.parametrize(("reader", "path"), INPUTS, ids=[Path(p).name for _, p in INPUTS])
def test_a_whole_graph_as_one_chunk_gives_json_dumps_bytes(reader: str, path: str) -> None:
    graph = registry.read(reader, [path])
    assert _one_chunk(graph) == expected(graph)


def test_chunks_sharing_a_dataset_merge_its_typed_columns_and_facets_as_merge_does() -> None:
    def chunk(i: int, cols: list[Column], facets: dict[str, object]) -> LineageGraph:
        return LineageGraph(
            job="j",
            datasets=[
                Dataset(id="s", name="s", columns=cols, facets=facets),
                Dataset(id=f"t{i}", name=f"t{i}", columns=[Column(name="a")]),
            ],
            processes=[Process(id=f"p{i}", name=f"p{i}", inputs=["s"], outputs=[f"t{i}"])],
            edges=[
                ColumnEdge(
                    source=ColumnRef(dataset="s", column=cols[0].name),
                    target=ColumnRef(dataset=f"t{i}", column="a"),
                    kind="IDENTITY",
                    process=f"p{i}",
                )
            ],
        )

    chunks = [
        chunk(0, [Column(name="x", type="int")], {"schema": {"v": 1}}),
        chunk(1, [Column(name="y", description="why"), Column(name="x", type="bigint")], {"other": 2}),
        chunk(2, [Column(name="z")], {}),
    ]
    doc = ChunkedDocument()
    for c in chunks:
        doc.add(c)
    buf = io.StringIO()
    doc.write(buf)
    doc.close()
    assert buf.getvalue() == expected(chunks[0].merge(chunks[1]).merge(chunks[2]))
