"""Spark plan reader speed: the shared fixtures, a very deep plan and a very wide (megabyte-line) plan.

    .venv/bin/python bench/spark_reader.py [--depth 2000] [--width 46000] [--repeat 20] [--union-mb 5]

Prints wall time per read (text and JSON forms, job and operator modes) and peak memory; asserts nothing.
``--union-mb``: also a big Union plan (resource_bounds.py's generator): the text reader's peak
memory next to the memory the returned graph keeps (tracemalloc), and the wall time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.readers.spark_plan import JSON_READER, TEXT_READER

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "data" / "spark" / "fixtures"


def _time(fn: Callable[[], LineageGraph], repeat: int) -> tuple[float, LineageGraph]:
    times = []
    g = fn()
    for _ in range(repeat):
        t = time.perf_counter()
        g = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), g


def _peak(fn: Callable[[], LineageGraph]) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def _union_memory(mb: float) -> None:
    """Peak traced memory of reading a big Union plan next to what the returned graph keeps."""
    import gc
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from resource_bounds import spark_plan

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.plan.txt"
        spark_plan(path, mb)
        size = path.stat().st_size / 1e6
        t = time.perf_counter()
        g = TEXT_READER.read([str(path)], progress=False)
        wall = time.perf_counter() - t
        del g
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        g = TEXT_READER.read([str(path)], progress=False)
        gc.collect()
        kept, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"union plan {size:.1f} MB: {wall:.2f} s, {len(g.edges)} edges; peak {(peak - base) / 1e6:.0f} MB, "
            f"graph kept {(kept - base) / 1e6:.0f} MB (tracemalloc)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=2000)
    ap.add_argument("--width", type=int, default=46_000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--union-mb", type=float, default=0, help="also a Union plan of this size (MB)")
    args = ap.parse_args()
    if args.union_mb:
        _union_memory(args.union_mb)

    print(f"{'input':48} {'mode':9} {'median ms':>10} {'processes':>9} {'edges':>7}")
    for case in sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()):
        explain = str(FIXTURES / case / "explain.txt")
        for label, reader, name in (
            ("text", TEXT_READER, "analyzed.txt"),
            ("json", JSON_READER, "analyzed.json"),
        ):
            path = str(FIXTURES / case / name)
            for mode in ("job", "operator"):
                t, g = _time(
                    lambda p=path, m=mode, r=reader, x=explain: r.read([p], mode=m, explain=x), args.repeat
                )
                print(
                    f"{case + ' ' + label:48} {mode:9} {t * 1000:10.2f} {len(g.processes):9} {len(g.edges):7}"
                )

    with tempfile.TemporaryDirectory() as tmp:
        deep = Path(tmp) / "deep.txt"
        lines = ["Project [a#1 AS x#100000]"]
        for d in range(1, args.depth):
            lines.append("   " * (d - 1) + "+- Filter (a#1 > 1)")
        lines.append("   " * (args.depth - 1) + "+- LocalRelation [a#1, b#2]")
        deep.write_text("\n".join(lines) + "\n")
        for mode in ("job", "operator"):
            t, g = _time(lambda m=mode: TEXT_READER.read([str(deep)], mode=m), 2)
            print(
                f"{f'deep plan, {args.depth} levels':48} {mode:9} {t * 1000:10.2f} {len(g.processes):9} {len(g.edges):7}"
            )

        wide = Path(tmp) / "wide.txt"
        cols = ", ".join(f"column_number_{i}#{i}" for i in range(args.width))
        wide.write_text(f"Project [{cols}]\n+- LocalRelation [{cols}]\n")
        size = len(cols) / 1e6
        t, g = _time(lambda: TEXT_READER.read([str(wide)]), 2)
        print(
            f"{f'wide plan, {args.width} columns ({size:.1f} MB lines)':48} {'job':9} {t * 1000:10.2f} {len(g.processes):9} {len(g.edges):7}"
        )
        print(f"peak memory, wide plan: {_peak(lambda: TEXT_READER.read([str(wide)])):.0f} MB (tracemalloc)")
        print(
            f"peak memory, deep plan: {_peak(lambda: TEXT_READER.read([str(deep)], mode='operator')):.0f} MB"
        )


if __name__ == "__main__":
    main()
