"""Rendering cost per entity (µs of CPU), on the issue-15 workload shape: N processes, each reading
1-3 datasets of 4 columns with 4 column edges, rendered with the ``lineage`` profile.

    python bench/render_speed.py --processes 1000 [--repeat 3] [--profile]

Prints entities, best-of-``repeat`` process CPU seconds and µs per entity. Not a test.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from issue_workload import issue_graph  # noqa: E402

from atlas_sync.render.profile import load_profile  # noqa: E402
from atlas_sync.render.renderer import render  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="print the top of a cProfile instead")
    args = ap.parse_args(argv)
    graph = issue_graph(args.processes)
    profile = load_profile("lineage")
    render(graph, profile, domain="bench", job="j")  # warm up: compile templates, read typedefs
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        render(graph, profile, domain="bench", job="j")
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(20)
        return 0
    best = float("inf")
    n = 0
    for _ in range(args.repeat):
        t0 = time.process_time()
        state = render(graph, profile, domain="bench", job="j")
        best = min(best, time.process_time() - t0)
        n = len(state)
    print(f"processes={args.processes} entities={n} cpu_s={best:.3f} us_per_entity={best / n * 1e6:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
