"""Turn what Atlas holds back into lineage a person reads: columns inside their datasets, column
lineage as column edges, names without the ``@domain`` suffix every entity of a domain shares.

Atlas stores a column as an entity of its own (``tab3.name@etl``) and column lineage as a process
whose inputs are columns. :func:`fold_columns` recognises both by shape, not by type name, so it
works for any profile that names columns ``<dataset qualified name>.<column>``.
"""

from __future__ import annotations

from atlas_sync.lineage.model import (
    ALL_KINDS,
    Column,
    ColumnEdge,
    ColumnRef,
    Dataset,
    LineageGraph,
    Process,
    split_dotted,
)


def _strip(name: str, suffix: str) -> str:
    return name[: -len(suffix)] if suffix and name.endswith(suffix) else name


def _column_of(ds: Dataset, datasets: dict[str, Dataset]) -> tuple[str, str] | None:
    """(parent dataset id, column name) when ``ds`` is a column entity of another dataset."""
    i = len(ds.id)
    while (i := ds.id.rfind(".", 0, i)) > 0:
        parent = datasets.get(ds.id[:i])
        if parent is not None and parent.kind != ds.kind:
            rest = ds.id[i + 1 :]
            return parent.id, split_dotted(rest)[0] if rest.startswith('"') else rest
    return None


def _kind(p: Process) -> str:
    tail = p.id.rsplit(":", 1)[-1]
    if tail in ALL_KINDS:
        return tail
    declared = str(p.attributes.get("dependencyType") or "").upper()
    return declared if declared in ALL_KINDS else "TRANSFORMATION"


def _whole_dataset_target(p: Process, datasets: dict[str, Dataset]) -> str | None:
    """The dataset of an indirect dependency on a whole dataset (``<process>:<dataset>.*:<KIND>``):
    its outputs are the columns the statement writes there, or none, so the name tells the dataset."""
    head, sep, kind = p.id.rpartition(".*:")
    if not sep or kind not in ALL_KINDS:
        return None
    i = -1
    while (i := head.find(":", i + 1)) >= 0:
        if head[i + 1 :] in datasets:
            return head[i + 1 :]
    return None


def fold_columns(graph: LineageGraph, domain: str | None = None) -> LineageGraph:
    """A copy of ``graph`` with column entities folded into their datasets and column-lineage
    processes turned into column edges; ids lose their ``@domain`` suffix."""
    suffix = f"@{domain}" if domain else ""
    datasets: dict[str, Dataset] = {}
    for d in graph.datasets:
        new_id = _strip(d.id, suffix)
        name = _strip(d.name, suffix)
        datasets[new_id] = d.model_copy(update={"id": new_id, "name": name, "columns": list(d.columns)})
    procs = [
        p.model_copy(
            update={
                "id": _strip(p.id, suffix),
                "name": _strip(p.name, suffix),
                "inputs": [_strip(x, suffix) for x in p.inputs],
                "outputs": [_strip(x, suffix) for x in p.outputs],
                "parent": _strip(p.parent, suffix) if p.parent else None,
                "children": [_strip(x, suffix) for x in p.children],
            }
        )
        for p in graph.processes
    ]

    columns: dict[str, tuple[str, str]] = {}
    for d in datasets.values():
        found = _column_of(d, datasets)
        if found is not None:
            columns[d.id] = found
    for cid, (parent, col) in columns.items():
        if not datasets[parent].has_column(col):
            column = Column(name=col)
            entity = datasets[cid]
            if entity.classifications or entity.terms:  # what Atlas holds on the column entity
                column.classifications = tuple(entity.classifications)
                column.terms = tuple(entity.terms)
            datasets[parent].columns.append(column)

    out = LineageGraph(job=graph.job, source=graph.source, problems=list(graph.problems))
    for d in datasets.values():
        if d.id not in columns:
            out.add_dataset(d)
    edges = list(graph.edges)
    for p in procs:
        if p.inputs and all(i in columns for i in p.inputs):
            kind = _kind(p)
            whole = _whole_dataset_target(p, datasets)
            for i in p.inputs:
                src = ColumnRef(dataset=columns[i][0], column=columns[i][1])
                if whole is not None:
                    edges.append(
                        ColumnEdge(source=src, target=ColumnRef(dataset=whole, column=None), kind=kind)  # type: ignore[arg-type]
                    )
                    continue
                for o in p.outputs:
                    tgt = (
                        ColumnRef(dataset=columns[o][0], column=columns[o][1])
                        if o in columns
                        else ColumnRef(dataset=o, column=None)
                    )
                    edges.append(ColumnEdge(source=src, target=tgt, kind=kind))  # type: ignore[arg-type]
            continue
        p.inputs = [i for i in p.inputs if i not in columns]
        p.outputs = [o for o in p.outputs if o not in columns]
        out.add_process(p)
    for e in edges:
        out.add_edge(e)
    return out
