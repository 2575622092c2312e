"""registry.read_chunks: chunked readers give their chunks, any other reader its one graph."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import Dataset, LineageGraph

DATA = Path(__file__).parents[1] / "data"


class _Whole:
    name = "whole"
    extensions = (".whole",)
    description = "a reader without read_chunks"
    calls = 0

    def read(self, paths, **options):
        type(self).calls += 1
        return LineageGraph(datasets=[Dataset(id=p, name=p) for p in paths], job=options.get("job"))


def _plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fake_whole_mod", type(sys)("fake_whole_mod"))
    sys.modules["fake_whole_mod"].READER = _Whole()  # type: ignore[attr-defined]
    eps = [EntryPoint("whole", "fake_whole_mod:READER", "atlas_sync.readers")]
    monkeypatch.setattr(registry, "entry_points", lambda group: eps if group == "atlas_sync.readers" else [])


def test_a_reader_without_read_chunks_is_read_once_as_the_only_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    _plugin(monkeypatch)
    _Whole.calls = 0
    it = registry.read_chunks("whole", ["a", "b"], job="j", chunk_statements=1)
    assert _Whole.calls == 0  # reading starts on the first next()
    [graph] = list(it)
    assert [d.id for d in graph.datasets] == ["a", "b"] and graph.job == "j"
    assert not registry.can_chunk(registry.get("whole"))


def test_an_unknown_reader_is_an_error_at_the_call() -> None:
    with pytest.raises(InputError, match="unknown reader"):
        registry.read_chunks("no-such-reader", ["x"])


def test_auto_picks_the_query_log_reader_and_its_chunks(tmp_path: Path) -> None:
    path = tmp_path / "q.querylog.csv"
    path.write_text(
        "query_text\n" + "".join(f'"INSERT INTO t{i} SELECT a FROM s"\n' for i in range(5)), encoding="utf-8"
    )
    chunks = list(registry.read_chunks("auto", [str(path)], workers=1, chunk_statements=2))
    assert [len(c.processes) for c in chunks] == [2, 2, 1]
    assert registry.can_chunk(registry.get("query-log"))


def test_a_whole_reader_chunk_equals_its_read() -> None:
    path = str(DATA / "openlineage" / "postgres_runs.jsonl")
    [graph] = list(registry.read_chunks("openlineage", [path]))
    assert graph.to_document() == registry.read("openlineage", [path]).to_document()
