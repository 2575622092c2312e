"""No stage between the input file and the last request grows faster than the input.

For each reader, an input of n and of 2n units (processes, statements, events, plan branches, jobs)
is read, rendered, planned and applied against the in-process emulator, planned again unchanged
and then deleted. Each stage's work is counted, not timed: Python and builtin calls (``cProfile``'s
call counts, deterministic) plus SQLite virtual-machine steps in the emulator (a progress handler,
since SQLite work makes no Python calls). Doubling the input may at most double a stage's count,
with a margin for fixed costs and n log n sorts: a quadratic step (e.g. every column reference
scanning every dataset id) makes the ratio approach 4.
"""

from __future__ import annotations

import cProfile
import csv
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.render.renderer import render

RATIO = 2.6
SQLITE_STEP = 100  # VM instructions per progress-handler call


# ----------------------------------------------------------------------------- inputs of size n
# Process i reads 1-3 datasets of 4 columns (shared between processes) and writes one of 4 columns.


def _reads(i: int) -> list[int]:
    return [(i * 7 + k * 13) % max(1, i // 2 + 3) for k in range(1 + i % 3)]


def graph_doc(path: Path, n: int) -> list[str]:
    cols = ["c0", "c1", "c2", "c3"]
    ids = [f"raw.s{j}" for j in range(n // 2 + 3)] + [f"mart.t{i}" for i in range(n)]
    datasets = [
        {"id": d, "name": d.split(".")[1], "namespace": d.split(".")[0], "columns": cols} for d in ids
    ]
    processes, edges = [], []
    for i in range(n):
        srcs = [f"raw.s{j}" for j in dict.fromkeys(_reads(i))]
        processes.append({"id": f"p{i}", "name": f"p{i}", "inputs": srcs, "outputs": [f"mart.t{i}"]})
        for c, col in enumerate(cols):
            src = srcs[c % len(srcs)]
            edges.append({"source": f"{src}.{col}", "target": f"mart.t{i}.{col}", "process": f"p{i}"})
    doc = {"datasets": datasets, "processes": processes, "edges": edges}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return [str(path)]


def _insert(i: int) -> str:
    srcs = list(dict.fromkeys(_reads(i)))
    cols = ", ".join(f"s{srcs[c % len(srcs)]}.c{c}" for c in range(4))
    joins = " ".join(f"JOIN raw.s{j} s{j} ON s{srcs[0]}.c0 = s{j}.c0" for j in srcs[1:])
    return f"INSERT INTO mart.t{i} SELECT {cols} FROM raw.s{srcs[0]} s{srcs[0]} {joins}"


def sql_script(path: Path, n: int) -> list[str]:
    path.write_text("".join(_insert(i) + ";\n" for i in range(n)), encoding="utf-8")
    return [str(path)]


def query_log(path: Path, n: int) -> list[str]:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["query_text", "user_name"])
        for i in range(n):
            w.writerow([_insert(i), "etl"])
    return [str(path)]


def openlineage(path: Path, n: int) -> list[str]:
    ns = "postgres://db:5432"

    def ds(name: str, lineage: dict[str, Any] | None = None) -> dict[str, Any]:
        facets: dict[str, Any] = {"schema": {"fields": [{"name": f"c{c}", "type": "int"} for c in range(4)]}}
        if lineage:
            facets["columnLineage"] = {"fields": lineage}
        return {"namespace": ns, "name": name, "facets": facets}

    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            srcs = [f"shop.raw.s{j}" for j in dict.fromkeys(_reads(i))]
            fields = {
                f"c{c}": {"inputFields": [{"namespace": ns, "name": srcs[c % len(srcs)], "field": f"c{c}"}]}
                for c in range(4)
            }
            event = {
                "eventType": "COMPLETE",
                "eventTime": "2026-11-30T06:00:12.000Z",
                "producer": "https://example.com/test",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                "run": {"runId": f"0193f5d2-7c1e-7b7a-9c55-{i:012d}"},
                "job": {"namespace": "etl", "name": f"job{i}"},
                "inputs": [ds(s) for s in srcs],
                "outputs": [ds(f"shop.mart.t{i}", fields)],
            }
            fh.write(json.dumps(event) + "\n")
    return [str(path)]


def spark_plan(path: Path, n: int) -> list[str]:
    def branch(k: int, first: str, rest: str) -> str:
        ids = [f"c{i}#{10 * k + i}" for i in range(4)]
        outs = [f"(c{i}#{10 * k + i} + 1) AS o{i}#{10 * k + 5 + i}" for i in range(4)]
        return f"{first} Project [{', '.join(outs)}]\n{rest}+- Relation db.t{k}[{','.join(ids)}] parquet\n"

    text = "Union false, false\n" + "".join(branch(k, ":-", ":  ") for k in range(n - 1))
    path.write_text(text + branch(n - 1, "+-", "   "), encoding="utf-8")
    return [str(path)]


def seatunnel(path: Path, n: int) -> list[str]:
    path.mkdir()
    out = []
    for i in range(n):
        src = _reads(i)[0]
        conf = path / f"job{i}.conf"
        conf.write_text(
            'env { job.mode = "BATCH" }\n'
            f'source {{ Jdbc {{ url = "jdbc:mysql://m:3306/raw", table_path = "raw.s{src}", '
            'plugin_output = "a", schema { fields { c0 = int, c1 = int, c2 = int, c3 = int } } } }\n'
            'sink { Jdbc { plugin_input = "a", url = "jdbc:postgresql://pg:5432/dw", '
            f'database = "dw", table = "mart.t{i}", generate_sink_sql = true }} }}\n',
            encoding="utf-8",
        )
        out.append(str(conf))
    return out


def hive_lineage(path: Path, n: int) -> list[str]:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            srcs = list(dict.fromkeys(_reads(i)))
            vertices = [{"id": c, "vertexType": "COLUMN", "vertexId": f"mart.t{i}.c{c}"} for c in range(4)]
            edges = []
            for c in range(4):
                vertices.append(
                    {"id": 4 + c, "vertexType": "COLUMN", "vertexId": f"raw.s{srcs[c % len(srcs)]}.c{c}"}
                )
                edges.append({"sources": [4 + c], "targets": [c], "edgeType": "PROJECTION"})
            doc = {"version": "1.0", "user": "etl", "queryText": _insert(i), "hash": f"h{i}"}
            fh.write(json.dumps({**doc, "edges": edges, "vertices": vertices}) + "\n")
    return [str(path)]


READERS: dict[str, tuple[str, Callable[[Path, int], list[str]], int]] = {
    # reader: (file name, writer, n)
    "graph": ("g.json", graph_doc, 60),
    "sql": ("etl.sql", sql_script, 40),
    "query-log": ("log.csv", query_log, 40),
    "openlineage": ("events.ol.jsonl", openlineage, 60),
    "spark-plan": ("plan.txt", spark_plan, 60),
    "seatunnel": ("jobs", seatunnel, 30),
    "hive-lineage": ("hive.lineage.log", hive_lineage, 60),
}


# ----------------------------------------------------------------------------- counting


class Counter:
    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.steps = 0

    def _tick(self) -> int:
        self.steps += 1
        return 0

    @contextmanager
    def count(self, out: dict[str, tuple[int, int]], stage: str) -> Iterator[None]:
        self.steps = 0
        conn = self.emu.store.conn
        conn.set_progress_handler(self._tick, SQLITE_STEP)
        prof = cProfile.Profile()
        prof.enable()
        try:
            yield
        finally:
            prof.disable()
            conn.set_progress_handler(None, 0)
        calls = sum(s.callcount for s in prof.getstats())
        out[stage] = (calls, self.steps * SQLITE_STEP)


def stage_counts(reader: str, tmp: Path, n: int) -> dict[str, tuple[int, int]]:
    name, write, _ = READERS[reader]
    paths = write(tmp / name, n)
    emu = Emulator()
    client = embedded_client(emulator=emu)
    pub = Publisher(client, profile="lineage", domain="scale", parallel=1, batch_size=100)
    pub.max_delete_percent = 100.0
    pub.ensure_typedefs()
    counter = Counter(emu)
    out: dict[str, tuple[int, int]] = {}
    try:
        with counter.count(out, "read"):
            graph = pub.read(reader, paths)
        assert len(graph.datasets) >= n and not graph.has_errors, graph.problems[:3]
        with counter.count(out, "render"):
            desired = render(graph, pub.profile, domain="scale", job="j")
        with counter.count(out, "plan (empty domain)"):
            plan = pub.plan(graph, "j")
        assert plan.counts["create"] == len(desired)
        with counter.count(out, "apply (creates)"):
            pub.apply(plan, check=False)
        with counter.count(out, "plan (unchanged)"):
            again = pub.plan(graph, "j")
        assert not again.has_changes
        with counter.count(out, "delete all"):
            gone = pub.plan(LineageGraph(datasets=graph.datasets[:1]), "j", force=True)
            pub.apply(gone, check=False)
        assert gone.counts["delete"] > len(desired) // 2
    finally:
        emu.close()
    return out


@pytest.mark.parametrize("reader", list(READERS))
def test_doubling_the_input_at_most_doubles_the_work_of_every_stage(reader: str, tmp_path: Path) -> None:
    n = READERS[reader][2]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    small = stage_counts(reader, tmp_path / "a", n)
    big = stage_counts(reader, tmp_path / "b", 2 * n)
    ratios = {}
    for stage, (calls, steps) in small.items():
        big_calls, big_steps = big[stage]
        ratios[stage] = (round(big_calls / calls, 2), round(big_steps / steps, 2) if steps > 10_000 else None)
    bad = {s: r for s, r in ratios.items() if r[0] > RATIO or (r[1] is not None and r[1] > RATIO)}
    assert not bad, f"{reader}: stages whose work grew more than {RATIO}x for 2x input: {bad} (all: {ratios})"
