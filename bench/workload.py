"""Seeded synthetic lineage workloads for benchmarks and reliability tests.

A workload is a set of jobs; each job has ``processes_per_job`` processes; each process reads
``inputs_per_process`` datasets (the job's raw sources or earlier outputs of the same job) and writes
``outputs_per_process`` new datasets; every dataset has ``columns_per_dataset`` columns and every
output column depends on ``edges_per_column`` input columns (direct edges, IDENTITY / TRANSFORMATION /
AGGREGATION). The same seed always gives the same graphs.

With the ``lineage`` profile one job renders to (derived from its rules, see docs/profiles.md):
``datasets * (1 + columns)`` dataset + column entities, one process entity per process, and one
column-lineage entity per output column. :func:`entity_count` computes that number and
:func:`shape_for_entities` picks a shape for a target total.

Usage::

    python bench/workload.py --entities 10000 --out /tmp/w.json   # one graph document per job
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import asdict, dataclass, replace

from atlas_sync.lineage.model import (
    Column,
    ColumnEdge,
    ColumnRef,
    Dataset,
    DependencyKind,
    LineageGraph,
    Process,
)

DIRECT_KINDS: tuple[DependencyKind, ...] = ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
TYPES = ("string", "bigint", "double", "date", "timestamp", "decimal(18,2)")


@dataclass(frozen=True)
class Shape:
    """The size and shape of a workload."""

    jobs: int = 1
    processes_per_job: int = 10
    inputs_per_process: int = 2
    outputs_per_process: int = 1
    columns_per_dataset: int = 5
    edges_per_column: int = 2
    raw_sources_per_job: int = 4
    seed: int = 0

    @property
    def datasets_per_job(self) -> int:
        return self.raw_sources_per_job + self.processes_per_job * self.outputs_per_process


def entity_count(shape: Shape) -> int:
    """Entities the ``lineage`` profile renders for the whole workload (all jobs)."""
    per_job = (
        shape.datasets_per_job * (1 + shape.columns_per_dataset)
        + shape.processes_per_job
        + shape.processes_per_job * shape.outputs_per_process * shape.columns_per_dataset
    )
    return shape.jobs * per_job


def shape_for_entities(total: int, *, jobs: int = 1, seed: int = 0, **kw: int) -> Shape:
    """A shape with about ``total`` entities (never fewer), spread over ``jobs`` jobs."""
    base = Shape(jobs=jobs, processes_per_job=1, seed=seed, **kw)
    c, o = base.columns_per_dataset, base.outputs_per_process
    per_process = o * (1 + c) + 1 + o * c
    fixed = base.raw_sources_per_job * (1 + c)
    per_job = math.ceil(total / jobs)
    procs = max(1, math.ceil((per_job - fixed) / per_process))
    return replace(base, processes_per_job=procs)


def job_graph(shape: Shape, job_index: int) -> LineageGraph:
    """The graph of one job (deterministic in ``shape.seed`` and ``job_index``).

    Built from plain lists: ``LineageGraph.add_edge``/``add_dataset`` scan the lists they append to,
    which makes building a 10k-entity graph with them take over a minute.
    """
    rng = random.Random(f"{shape.seed}:{job_index}")
    job = f"job{job_index:04d}"
    datasets: list[Dataset] = []
    processes: list[Process] = []
    edges: list[ColumnEdge] = []

    def new_dataset(ds_id: str, ns: str) -> Dataset:
        cols = [Column(name=f"c{i}", type=rng.choice(TYPES)) for i in range(shape.columns_per_dataset)]
        d = Dataset(id=ds_id, namespace=ns, name=ds_id.split(".", 1)[1], columns=cols)
        datasets.append(d)
        return d

    available = [
        new_dataset(f"raw_{job_index}.src{i}", f"raw_{job_index}") for i in range(shape.raw_sources_per_job)
    ]
    for p in range(shape.processes_per_job):
        k = min(shape.inputs_per_process, len(available))
        inputs = rng.sample(available, k)
        outputs = [
            new_dataset(f"mart_{job_index}.t{p}_{o}", f"mart_{job_index}")
            for o in range(shape.outputs_per_process)
        ]
        pid = f"p{p}"
        processes.append(
            Process(
                id=pid,
                name=f"{job} step {p}",
                inputs=[d.id for d in inputs],
                outputs=[d.id for d in outputs],
                attributes={"queryText": f"INSERT INTO {outputs[0].id} SELECT ... -- {p}"},
            )
        )
        in_cols = [(d.id, c.name) for d in inputs for c in d.columns]
        for out in outputs:
            for col in out.columns:
                # sampling without replacement: no duplicate edge within a target column
                for src_ds, src_col in rng.sample(in_cols, min(shape.edges_per_column, len(in_cols))):
                    edges.append(
                        ColumnEdge(
                            source=ColumnRef(dataset=src_ds, column=src_col),
                            target=ColumnRef(dataset=out.id, column=col.name),
                            kind=rng.choice(DIRECT_KINDS),
                            process=pid,
                        )
                    )
        available.extend(outputs)
    return LineageGraph(
        datasets=datasets, processes=processes, edges=edges, job=job, source=f"workload seed={shape.seed}"
    )


def workload(shape: Shape) -> list[LineageGraph]:
    """One graph per job."""
    return [job_graph(shape, j) for j in range(shape.jobs)]


def change_fraction(graph: LineageGraph, fraction: float, *, seed: int = 1) -> tuple[LineageGraph, int]:
    """A copy of ``graph`` with the data type of ``ceil(fraction * entities)`` columns changed.

    Each changed column is exactly one entity update (its ``dataType``) under the ``lineage`` profile.
    Returns the new graph and the number of columns changed.
    """
    rng = random.Random(seed)
    out = graph.model_copy(deep=True)
    columns = [(d, c) for d in out.datasets for c in d.columns]
    targets = {(e.process, e.target) for e in out.edges}
    total = len(out.datasets) + len(columns) + len(out.processes) + len(targets)
    n = min(len(columns), max(1, math.ceil(total * fraction)))
    for _, col in rng.sample(columns, n):
        col.type = "changed_" + (col.type or "x")
    return out, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=1000, help="target entity count (lineage profile)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write a JSON list of graph documents (default: print the shape)")
    args = ap.parse_args(argv)
    shape = shape_for_entities(args.entities, jobs=args.jobs, seed=args.seed)
    print(json.dumps(asdict(shape) | {"entities": entity_count(shape)}), file=sys.stderr)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump([g.to_document() for g in workload(shape)], fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
