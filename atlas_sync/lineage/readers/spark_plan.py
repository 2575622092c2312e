"""Readers of Spark logical plans: ``spark-plan`` (the printed tree / explain output) and ``spark-json``
(``plan.toJSON()``). Both build the same operator tree and the same lineage graph.

Options (keyword arguments of ``read``; unknown ones are ignored):

- ``mode``: ``"job"`` (default; one process per plan, column lineage - the ``lineage`` profile) or
  ``"operator"`` (one process per operator with intermediate datasets - the ``pico`` profile);
- ``path``: source path(s) for file relations whose path the plan does not print (str or list, in plan order);
- ``explain``: an ``explain(extended=True)`` output whose physical plan gives file paths
  (``Location: InMemoryFileIndex[...]``) and whose analyzed plan fills names the JSON form lost;
- ``job``: the job name (default: the file's stem, or its folder's name for generic stems);
- ``section``: which explain section to read (``analyzed`` by default, ``optimized``, ``parsed``);
- ``progress``: progress while a big text plan is parsed (default: from 10,000 lines on), shown by
  ``reporter`` (an :class:`atlas_sync.progress.Reporter`; default plain lines on stderr).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.inputs import load_json, read_text
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.spark.build import build_graph
from atlas_sync.lineage.spark.plan import PlanNode
from atlas_sync.lineage.spark.stream import build_graph_streaming
from atlas_sync.lineage.spark.text import ScanInfo, TextDocument, parse_text, tree_source
from atlas_sync.progress import report

_GENERIC_STEMS = {
    "analyzed",
    "logical",
    "optimized",
    "explain",
    "plan",
    "parsed",
    "physical",
    "query",
    "spark-plan",
    "spark",
    "plan-text",
}


def job_name(path: str) -> str:
    """A sensible job name from a file name: its stem, or the folder name when the stem is generic."""
    if path == "-":
        return "spark-plan"
    p = Path(path)
    stem = p.name.split(".")[0] or "spark-plan"
    if stem.lower() in _GENERIC_STEMS and p.parent.name not in ("", "."):
        return p.resolve().parent.name if p.parent.name in ("..",) else p.parent.name
    return stem


def _paths_option(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


PROGRESS_MIN_LINES = 10_000


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a big tree is built: it only allocates, and with
    millions of live objects every full collection re-scans them all (about 40% of the time of a
    15 MB plan). Cycles made meanwhile are collected once it runs again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _quiet(value: Any, lines: int) -> bool:
    """No progress for small plans unless asked; ``progress=false`` (also as text from ``-o``) is off."""
    if value is None:
        return lines < PROGRESS_MIN_LINES
    if isinstance(value, str):
        return value.strip().lower() in ("", "0", "false", "no", "off")
    return not value


def _explain(options: dict[str, Any]) -> TextDocument | None:
    explain = options.get("explain")
    if not explain:
        return None
    return parse_text(read_text(str(explain)), file=str(explain))


# datasets a plan does not name: named after the job (or file), so they give a process no identity
NAMELESS_PREFIXES = ("unknown:", "result:", "local:")


def name_by_target(graphs: Sequence[LineageGraph], prefix: str) -> None:
    """Name each plan of several files that writes a named dataset ``<prefix><target>`` (``:2``, ...
    for further plans writing it, in the order of their content), whatever the files are called and
    whichever order they come in; any other plan keeps its name after its file (or place)."""
    writers = [
        (p.outputs[0], p.attributes.get("queryText") or "", tuple(p.inputs), gi, p.id)
        for gi, g in enumerate(graphs)
        for p in g.processes
        if p.attributes.get("operation")
        and len(p.outputs) == 1
        and not p.outputs[0].startswith(NAMELESS_PREFIXES)
    ]
    renamed = {(gi, pid) for *_, gi, pid in writers}
    taken = {p.id for gi, g in enumerate(graphs) for p in g.processes if (gi, p.id) not in renamed}
    new_ids: list[dict[str, str]] = [{} for _ in graphs]
    # sorted by target, then content (the plan's text, its inputs): not by file name or order
    for target, _, _, gi, pid in sorted(writers, key=lambda w: w[:3]):
        new = base = prefix + target
        n = 1
        while new in taken:
            n += 1
            new = f"{base}:{n}"
        taken.add(new)
        new_ids[gi][pid] = new
    for g, ids in zip(graphs, new_ids, strict=True):
        g.rename_processes(ids)


class _SparkReader:
    extensions: tuple[str, ...] = ()
    name = ""
    description = ""

    def _plans(self, path: str, options: dict[str, Any]) -> tuple[list[PlanNode], dict[int, ScanInfo]]:
        raise NotImplementedError

    def _graph(
        self, path: str, options: dict[str, Any], mode: str, job: str, paths: list[str]
    ) -> LineageGraph:
        """The graph of one file: its plans parsed whole, then built."""
        plans, scans = self._plans(path, options)
        g = build_graph(plans, mode=mode, job=job, file=path, scans=scans, paths=paths)
        del plans, scans
        return g

    def read(self, paths: Sequence[str], **options: Any) -> LineageGraph:
        if not paths:
            raise InputError("no input file given")
        mode = str(options.get("mode") or "job")
        if mode not in ("job", "operator"):
            raise InputError(
                f"unknown mode {mode!r}", hint="use mode 'job' (lineage profile) or 'operator' (pico)"
            )
        if mode == "operator" and len(paths) > 1:
            raise InputError(
                "operator mode takes one plan file at a time",
                file=paths[1],
                hint="run one sync per plan (their level names would collide)",
            )
        job_opt = options.get("job")
        graphs: list[LineageGraph] = []
        seen: dict[str, str] = {}
        for i, path in enumerate(paths, start=1):
            job = str(job_opt) if job_opt else job_name(path)
            # several files of one named job: one process per file, <job>:<n>
            base = f"{job}:{i}" if job_opt and len(paths) > 1 else job
            paths_opt = _paths_option(options.get("path"))
            with gc_paused():
                g = self._graph(path, options, mode, base, paths_opt)
            if base in seen:
                raise InputError(
                    f"{seen[base]} and this file both give the job name {job!r}",
                    file=path,
                    hint="give the files distinct names, or name the job with the job option",
                )
            seen[base] = path
            g.job = job
            # one plan file whose job is only its name: the sync's job names its process instead
            g.job_from_name = not job_opt and len(paths) == 1
            graphs.append(g)
        if len(graphs) > 1:
            name_by_target(graphs, f"{job_opt}:" if job_opt else "")
        graph = graphs[0]
        for g in graphs[1:]:
            graph.merge_into(g)
        if not job_opt and len(seen) > 1:  # (several jobs: the first by name, whatever the files' order)
            graph.job = min(seen)
        return graph


class SparkPlanTextReader(_SparkReader):
    name = "spark-plan"
    extensions = (".plan", ".plan.txt", ".logical.txt", ".analyzed.txt")
    description = (
        "Spark logical plan text (df.queryExecution.analyzed / logical, or explain(extended=True) output)"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        text = head.decode("utf-8", "replace")
        if "== Analyzed Logical Plan ==" in text or "== Parsed Logical Plan ==" in text:
            return True
        first = text.lstrip().split("\n", 1)
        return len(first) > 1 and (first[1].startswith("+- ") or first[1].startswith(":- ")) and "#" in text

    def _graph(
        self, path: str, options: dict[str, Any], mode: str, job: str, paths: list[str]
    ) -> LineageGraph:
        # lineage computed while the tree is read, each finished subtree dropped (stream.py)
        text = read_text(path)
        # Progress on stderr (plain lines, a bar on a terminal) while a big tree is parsed: by default
        # from PROGRESS_MIN_LINES lines on; progress=true for any size, progress=false never.
        src = tree_source(text, file=path, section=options.get("section"))
        scans = dict(src.scans)
        extra = _explain(options)
        if extra is not None:
            for k, v in extra.scans.items():
                scans.setdefault(k, v)
        quiet = _quiet(options.get("progress"), text.count("\n") + 1)
        with report("spark-plan lines", quiet=quiet, reporter=options.get("reporter")) as update:
            return build_graph_streaming(
                src, job=job, file=path, scans=scans, paths=paths, progress=update, mode=mode
            )


class SparkPlanJsonReader(_SparkReader):
    name = "spark-json"
    extensions = (".plan.json",)
    description = "Spark logical plan JSON (plan.toJSON(), Spark 3.x and 4.x)"

    def sniff(self, path: str, head: bytes) -> bool:
        text = head.decode("utf-8", "replace").lstrip()
        return text.startswith("[") and '"num-children"' in text and "org.apache.spark.sql" in text

    def _plans(self, path: str, options: dict[str, Any]) -> tuple[list[PlanNode], dict[int, ScanInfo]]:
        from atlas_sync.lineage.spark.jsonplan import enrich_from_text, parse_json_plans

        plans = parse_json_plans(load_json(path), file=path)
        extra = _explain(options)
        scans: dict[int, ScanInfo] = {}
        if extra is not None:
            scans = dict(extra.scans)
            enrich_from_text(plans, extra.plans)
        return plans, scans


TEXT_READER = SparkPlanTextReader()
JSON_READER = SparkPlanJsonReader()
