"""The ``graph`` reader: loads the lineage JSON document (see ``LineageGraph.to_document``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from atlas_sync.inputs import load_json, read_text
from atlas_sync.lineage.model import LineageGraph


class GraphReader:
    name = "graph"
    extensions = (".lineage.json",)
    description = (
        "atlas-sync's own lineage JSON document (the output of `atlas-sync lineage ... --format json`)"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        return path.endswith(".lineage.json")

    def read(self, paths: Sequence[str], **options: Any) -> LineageGraph:
        graph = LineageGraph()
        for p in paths:
            g = LineageGraph.from_document(load_json(p), file=p)
            graph = graph.merge_into(g) if graph.datasets or graph.processes else g
        if graph.job is None and paths and paths[0] != "-":
            graph.job = Path(paths[0]).name.split(".")[0]
        return graph


READER = GraphReader()

__all__ = ["READER", "GraphReader", "load_json", "read_text"]  # read_text/load_json: for plugins, as before
