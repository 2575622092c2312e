#!/usr/bin/env python3
"""Layout + SVG/HTML rendering time of lineage pictures for growing random graphs.

    .venv/bin/python bench/pictures_layout.py [SIZES...]     # default: 200 1000 3000 datasets

Each graph has N datasets and N/2 processes, each process reading two earlier datasets and
writing a later one (so long edges and crossings occur). Prints one line per size.
"""

from __future__ import annotations

import random
import sys
import time

from atlas_sync.lineage.model import Dataset, LineageGraph, Process
from atlas_sync.view import pictures


def graph(n: int, seed: int = 1) -> LineageGraph:
    rnd = random.Random(seed)
    g = LineageGraph(job=f"random-{n}")
    for i in range(n):
        g.add_dataset(Dataset(id=f"t{i}", name=f"db.table_{i}", columns=["id", "value"]))
    for j in range(n // 2):
        out = rnd.randrange(n // 4, n)
        ins = sorted({f"t{rnd.randrange(0, out)}" for _ in range(2)})
        g.add_process(Process(id=f"p{j}", name=f"job_{j}", inputs=ins, outputs=[f"t{out}"]))
    return g


def main(sizes: list[int]) -> None:
    print(
        f"{'datasets':>8} {'processes':>9} {'nodes+dummies':>13} {'layout s':>8} {'html s':>7} {'html MB':>7}"
    )
    for n in sizes:
        g = graph(n)
        t0 = time.perf_counter()
        scene = pictures.layout(g)
        t1 = time.perf_counter()
        page = pictures.render(g, "html")
        t2 = time.perf_counter()
        print(
            f"{n:>8} {len(g.processes):>9} {len(scene.nodes):>13} {t1 - t0:>8.2f} {t2 - t1:>7.2f} "
            f"{len(page) / 1e6:>7.2f}"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [200, 1000, 3000])
