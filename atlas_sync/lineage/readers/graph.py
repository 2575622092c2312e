"""The ``graph`` reader: loads the lineage JSON document (see ``LineageGraph.to_document``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph


def read_text(path: str) -> str:
    """Read a UTF-8 text input (``-`` = stdin) with errors that name the file."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", file=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", file=path) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None


def load_json(path: str) -> Any:
    text = read_text(path)
    if not text.strip():
        raise InputError("empty file", file=path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", file=path) from None


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
            graph = graph.merge(g) if graph.datasets or graph.processes else g
        if graph.job is None and paths and paths[0] != "-":
            graph.job = Path(paths[0]).name.split(".")[0]
        return graph


READER = GraphReader()
