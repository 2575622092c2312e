"""The workload of issue 15: N processes, each reading 1-3 datasets of 4 columns (shared between
processes) and writing one dataset of 4 columns, with 4 column edges (one per output column).

With the ``lineage`` profile that is datasets + their columns + processes + one column-lineage
entity per output column: about 12.3 entities per process. Deterministic in ``seed``.
"""

from __future__ import annotations

import random

from atlas_sync.lineage.model import Column, ColumnEdge, ColumnRef, Dataset, LineageGraph, Process

TYPES = ("string", "bigint", "double", "date")
COLUMNS = 4


def source_count(processes: int) -> int:
    """The shared source datasets the processes read from."""
    return max(3, processes // 2)


def entity_count(processes: int) -> int:
    """Entities under the ``lineage`` profile, by its rules (docs/profiles.md): every dataset and its
    4 columns, every process, one column-lineage entity per output column."""
    datasets = source_count(processes) + processes
    return datasets * (1 + COLUMNS) + processes * (1 + COLUMNS)


def issue_graph(processes: int, *, seed: int = 0, job: str = "bench") -> LineageGraph:
    rng = random.Random(seed)
    datasets: list[Dataset] = []
    procs: list[Process] = []
    edges: list[ColumnEdge] = []

    def dataset(ds_id: str) -> Dataset:
        ns, name = ds_id.split(".", 1)
        cols = [Column(name=f"c{i}", type=rng.choice(TYPES)) for i in range(COLUMNS)]
        d = Dataset(id=ds_id, namespace=ns, name=name, columns=cols)
        datasets.append(d)
        return d

    sources = [dataset(f"raw.s{i}") for i in range(source_count(processes))]
    for p in range(processes):
        reads = rng.sample(sources, rng.randint(1, 3))
        out = dataset(f"mart.t{p}")
        procs.append(
            Process(
                id=f"p{p}",
                name=f"step {p}",
                inputs=[d.id for d in reads],
                outputs=[out.id],
                attributes={"queryText": f"INSERT INTO {out.id} SELECT ... -- {p}"},
            )
        )
        for i, col in enumerate(out.columns):
            src = reads[i % len(reads)]
            edges.append(
                ColumnEdge(
                    source=ColumnRef(dataset=src.id, column=src.columns[i].name),
                    target=ColumnRef(dataset=out.id, column=col.name),
                    kind="IDENTITY",
                    process=f"p{p}",
                )
            )
    return LineageGraph(datasets=datasets, processes=procs, edges=edges, job=job)
