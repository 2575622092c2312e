"""Example atlas-sync reader plugin: column mappings from a CSV file.

The file has a header ``source,target,kind,expression`` and one row per column mapping::

    source,target,kind,expression
    raw.orders.amount,mart.revenue.total,AGGREGATION,sum(amount)
    raw.orders.region,mart.revenue.region,IDENTITY,

``source`` and ``target`` are ``table.column`` (the table may be dotted: ``db.schema.table.col``);
``kind`` is one of the dependency kinds (default IDENTITY). All rows form one job named after the
file. Bad rows raise ``InputError`` naming the file and line, as every reader must.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.inputs import read_text
from atlas_sync.lineage.model import (
    ALL_KINDS,
    ColumnEdge,
    ColumnRef,
    Dataset,
    LineageGraph,
    Process,
    dotted,
    split_dotted,
)


class CsvMappingReader:
    """A reader object: ``name``, ``extensions``, ``description``, ``sniff`` and ``read``."""

    name = "csv-mapping"
    extensions = (".mapping.csv",)
    description = "column mappings kept in a CSV file (example plugin)"

    def sniff(self, path: str, head: bytes) -> bool:
        # Claim only files that look like ours: the header line names our columns.
        first = head.split(b"\n", 1)[0].strip().lower()
        return first.startswith(b"source,target")

    def read(self, paths: Sequence[str], **options: Any) -> LineageGraph:
        # Unknown options (the CLI passes every reader's flags) are accepted and ignored.
        job = options.get("job") or ("stdin" if paths[0] == "-" else Path(paths[0]).name.split(".")[0])
        graph = LineageGraph(job=job, source="csv-mapping")
        process = graph.add_process(Process(id=job, name=job, kind="job"))
        for path in paths:
            rows = csv.DictReader(io.StringIO(read_text(path)))
            if not rows.fieldnames or not {"source", "target"} <= set(rows.fieldnames):
                raise InputError("the header must name 'source' and 'target' columns", file=path, line=1)
            for row in rows:
                line = rows.line_num
                kind = (row.get("kind") or "IDENTITY").strip().upper()
                if kind not in ALL_KINDS:
                    raise InputError(f"unknown kind {kind!r}", file=path, line=line)
                refs = []
                for side in ("source", "target"):
                    parts = split_dotted((row.get(side) or "").strip())
                    if len(parts) < 2 or not all(parts):
                        raise InputError(f"{side} must be table.column", file=path, line=line)
                    table = dotted(*parts[:-1])
                    graph.add_dataset(
                        Dataset(
                            id=table,
                            namespace=dotted(*parts[:-2]),
                            name=parts[-2],
                            columns=[{"name": parts[-1]}],  # type: ignore[list-item]
                        )
                    )
                    refs.append(ColumnRef(dataset=table, column=parts[-1]))
                    bucket = process.inputs if side == "source" else process.outputs
                    if table not in bucket:
                        bucket.append(table)
                graph.add_edge(
                    ColumnEdge(
                        source=refs[0],
                        target=refs[1],
                        kind=kind,  # type: ignore[arg-type]
                        expression=(row.get("expression") or "").strip() or None,
                        process=process.id,
                    )
                )
        return graph


# The entry point names this object; a class would work too (the registry instantiates it).
READER = CsvMappingReader()
