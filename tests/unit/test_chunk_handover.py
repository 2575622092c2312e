"""A streamed sync holds one chunk at a time: the one before is freed before the next one is read.

A chunk of the graph reader's default 5,000 processes is ~85 MB of models; holding the previous one
while the next is built (a loop variable, a generator's local, a list of chunks peeked at) doubled
the reader's part of a big sync's peak memory.
"""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from atlas_sync.api import Publisher
from atlas_sync.api.inputs import _resumed
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import LineageGraph

RULES = """
[[rules]]
datasets = ["raw.*"]
owners = ["data-stewards"]
"""


def chunk(i: int) -> LineageGraph:
    graph = LineageGraph.from_document(
        {
            "datasets": [
                {"id": f"raw.t{i}", "namespace": "raw", "name": f"t{i}"},
                {"id": f"mart.t{i}", "namespace": "mart", "name": f"t{i}"},
            ],
            "processes": [
                {"id": f"p{i}", "name": f"p{i}", "inputs": [f"raw.t{i}"], "outputs": [f"mart.t{i}"]}
            ],
        }
    )
    graph.job = "nightly"
    return graph


def watched(n: int, alive: list[int]) -> Iterator[LineageGraph]:
    """``n`` chunks; before building each, records how many of those given before are still alive."""
    given: list[weakref.ref[LineageGraph]] = []
    for i in range(n):
        alive.append(sum(r() is not None for r in given))
        c = chunk(i)
        given.append(weakref.ref(c))
        yield c
        del c


@pytest.fixture(autouse=True)
def no_collector() -> Iterator[None]:
    """As the CLI runs: what a reference cycle keeps is not freed (so this sees what is held)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("with_rules", [False, True], ids=["plain", "metadata-rules"])
def test_a_streamed_sync_frees_each_chunk_before_reading_the_next(tmp_path: Path, with_rules: bool) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES, encoding="utf-8")
    pub = Publisher(
        embedded_client(emulator=Emulator(None)),
        profile="lineage",
        domain="demo",
        metadata_rules=rules if with_rules else None,
    )
    alive: list[int] = []
    result = pub.sync_chunks(watched(4, alive), job="nightly")
    assert result.plan.counts["create"] > 0
    assert alive == [0, 0, 0, 0]


def test_chunks_peeked_at_are_not_held_once_handed_over() -> None:
    alive: list[int] = []
    chunks = watched(4, alive)
    for c in _resumed([next(chunks), next(chunks)], chunks):  # (the API reads two, to decide to stream)
        del c
    assert alive == [0, 1, 0, 0]  # (the first is held while the second is read: both were asked for)


def test_the_cli_streams_without_reading_ahead_when_the_reader_says_more_follow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from atlas_sync.cli.sync import Target, _read_maybe_chunks
    from atlas_sync.lineage.readers import graph as graph_reader

    doc = {
        "datasets": [{"id": f"t{i}", "namespace": "raw", "name": f"t{i}"} for i in range(10)],
        "processes": [
            {"id": f"p{i}", "name": f"p{i}", "inputs": [f"t{i}"], "outputs": [f"t{i + 1}"]} for i in range(9)
        ],
    }
    path = tmp_path / "nine.lineage.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setattr(graph_reader, "DEFAULT_CHUNK_PROCESSES", 3)
    built: list[int] = []
    real_next = graph_reader.Chunks.__next__
    monkeypatch.setattr(graph_reader.Chunks, "__next__", lambda self: built.append(1) or real_next(self))
    pub = Publisher(embedded_client(emulator=Emulator(None)), profile="lineage", domain="demo")
    graph, chunks = _read_maybe_chunks(pub, Target(files=(str(path),), reader="graph"), None)
    assert graph is None and len(built) == 1  # streaming, decided without building the second chunk
    assert [len(c.processes) for c in chunks] == [3, 3, 3]
