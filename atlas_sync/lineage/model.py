"""The lineage model: what every reader produces and the renderer consumes.

A :class:`LineageGraph` holds datasets (with ordered columns), processes (with inputs, outputs,
attributes and an optional operator tree), column edges (direct and indirect dependencies, each with
an OpenLineage/Doris kind) and problems. ``to_document()`` gives the JSON document of the design
doc (``tables``, ``columns``, ``statements``, ``datasets``, ``processes``, ``problems``);
``from_document()`` reads it back (the ``graph`` reader).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import IO, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from atlas_sync.errors import InputError

DependencyKind = Literal[
    "IDENTITY",
    "TRANSFORMATION",
    "AGGREGATION",
    "JOIN",
    "FILTER",
    "GROUP_BY",
    "SORT",
    "WINDOW",
    "CONDITIONAL",
]
DIRECT_KINDS: frozenset[str] = frozenset({"IDENTITY", "TRANSFORMATION", "AGGREGATION"})
INDIRECT_KINDS: frozenset[str] = frozenset({"JOIN", "FILTER", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL"})
ALL_KINDS: tuple[str, ...] = (
    "IDENTITY",
    "TRANSFORMATION",
    "AGGREGATION",
    "JOIN",
    "FILTER",
    "GROUP_BY",
    "SORT",
    "WINDOW",
    "CONDITIONAL",
)

# Dataset kinds readers use. Free text is allowed for plugins; these are the ones profiles know.
DATASET_KINDS = (
    "table",
    "view",
    "file",
    "intermediate",
    "local",
    "topic",
    "query",
    # BI objects (lineage/bi.py): a BI tool's dataset (Superset dataset, LookML view or explore), a chart
    # (Superset chart, LookML dashboard element) and a dashboard
    "bi_dataset",
    "chart",
    "dashboard",
)
# Process kinds: one per job, one per SQL statement, one per Spark plan operator (pico), or the step
# into a BI object (table -> BI dataset -> chart -> dashboard).
PROCESS_KINDS = ("job", "statement", "operator", "bi")

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def quote_part(part: str) -> str:
    """Quote one part of a dotted name when it is not a plain identifier (design doc rule)."""
    if part == "*" or _PLAIN.match(part):
        return part
    return '"' + part.replace('"', '""') + '"'


def dotted(*parts: str) -> str:
    """Join name parts with dots, quoting any part that is not a plain identifier."""
    return ".".join(quote_part(p) for p in parts if p != "")


def split_dotted(name: str) -> list[str]:
    """Inverse of :func:`dotted`: split on dots outside double quotes."""
    parts: list[str] = []
    buf: list[str] = []
    i, n = 0, len(name)
    quoted = False
    while i < n:
        ch = name[i]
        if quoted:
            if ch == '"':
                if i + 1 < n and name[i + 1] == '"':
                    buf.append('"')
                    i += 2
                    continue
                quoted = False
            else:
                buf.append(ch)
        elif ch == '"':
            quoted = True
        elif ch == ".":
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


_M = TypeVar("_M", bound=_Model)


class Classification(_Model):
    """An Atlas classification to attach: its type name, attribute values and whether Atlas propagates
    it along lineage (``None``: Atlas's default, which is to propagate)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    attributes: dict[str, Any] = Field(default_factory=dict)
    propagate: bool | None = None
    # Only in what `show` reads back from Atlas: a copy Atlas propagated from another entity. Never
    # written out (documents, spools) and never published: the renderer sends name, attributes, propagate.
    propagated: bool = Field(default=False, exclude=True)

    def __hash__(self) -> int:
        return hash((self.name, json.dumps(self.attributes, sort_keys=True, default=str), self.propagate))


class Column(_Model):
    name: str
    type: str | None = None
    description: str | None = None
    # Metadata (as on datasets and processes): what the input states, then what metadata rules add.
    # Tuples and None, not lists and dicts: a big input has millions of columns, most with none of it,
    # and an empty tuple is shared (six empty lists a column cost ~350 MB per million columns, and the
    # garbage collector's time to walk them); set by assignment (merge_metadata, rules).
    owners: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    classifications: tuple[Classification, ...] = ()
    terms: tuple[str, ...] = ()
    business: dict[str, dict[str, Any]] | None = None
    labels: tuple[str, ...] = ()
    # what metadata rules with ``foreign = true`` add (render.metadata's document), for when the column
    # is another tool's (a Hive hook's, under the atlas profile): only those go on it
    foreign_metadata: dict[str, Any] | None = None

    @classmethod
    def unchecked(cls, name: str, type: str | None = None, description: str | None = None) -> Column:
        """A column built without validation, for readers that make hundreds of thousands."""
        return cls.model_construct(_COLUMN_FIELDS, name=name, type=type, description=description)


# the fields a reader states of a column (``Column.unchecked``: metadata comes empty, rules add it)
_COLUMN_FIELDS = {"name", "type", "description"}


class Dataset(_Model):
    """A table, view, file or intermediate result. ``id`` is unique within a graph."""

    id: str
    namespace: str = ""
    name: str
    kind: str = "table"
    columns: list[Column] = Field(default_factory=list)
    facets: dict[str, Any] = Field(default_factory=dict)
    # Documentation the input carries (dbt descriptions, tags, meta owners); optional for every reader.
    description: str | None = None
    owners: list[str] = Field(default_factory=list)
    # Tags the input names (dbt tags, OpenLineage tags facets): rules match them, labels publish them.
    tags: list[str] = Field(default_factory=list)
    # Atlas classifications, glossary terms (``term@glossary``), business metadata
    # (``{"bm": {"attr": value}}``) and user labels: from metadata rules (lineage/rules.py).
    classifications: list[Classification] = Field(default_factory=list)
    terms: list[str] = Field(default_factory=list)
    business: dict[str, dict[str, Any]] = Field(default_factory=dict)
    labels: list[str] = Field(default_factory=list)
    # what metadata rules with ``foreign = true`` add, for when the dataset is another tool's (Column)
    foreign_metadata: dict[str, Any] | None = None

    @field_validator("columns", mode="before")
    @classmethod
    def _columns_from_names(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [{"name": c} if isinstance(c, str) else c for c in v]
        return v

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def has_column(self, name: str) -> bool:
        return any(c.name == name for c in self.columns)


class Process(_Model):
    """A job, a statement or (pico profile) one Spark plan operator."""

    id: str
    name: str
    kind: str = "job"
    inputs: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)
    description: str | None = None
    owners: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    classifications: list[Classification] = Field(default_factory=list)
    terms: list[str] = Field(default_factory=list)
    business: dict[str, dict[str, Any]] = Field(default_factory=dict)
    labels: list[str] = Field(default_factory=list)
    # Operator trees (Spark plans): the operator name ("Project", "Filter", ...), the seed's level
    # expression ("1_0", "2_0", ...), and parent/children process ids.
    operator: str | None = None
    level: str | None = None
    parent: str | None = None
    children: list[str] = Field(default_factory=list)


class ColumnRef(_Model):
    """A column of a dataset; ``column=None`` stands for the whole dataset (``db.t.*``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: str
    column: str | None = None

    def __str__(self) -> str:
        return self.dataset + "." + (quote_part(self.column) if self.column is not None else "*")


class ColumnEdge(_Model):
    """A dependency of ``target`` on ``source``: direct (IDENTITY/TRANSFORMATION/AGGREGATION) or
    indirect (JOIN/FILTER/GROUP_BY/SORT/WINDOW/CONDITIONAL, often aimed at the whole target)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: ColumnRef
    target: ColumnRef
    kind: DependencyKind
    expression: str | None = None
    process: str | None = None

    @property
    def is_direct(self) -> bool:
        return self.kind in DIRECT_KINDS


class Problem(_Model):
    """Something a reader could not resolve. Warnings keep the graph usable; errors block publishing."""

    message: str
    severity: Literal["warning", "error"] = "warning"
    code: str | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None
    statement: int | None = None

    def __str__(self) -> str:
        loc = ":".join(
            str(x)
            for x in (
                self.file,
                f"statement {self.statement}" if self.statement is not None else None,
                f"line {self.line}" if self.line is not None else None,
            )
            if x is not None
        )
        return f"{loc}: {self.message}" if loc else self.message


_Described = TypeVar("_Described", "Dataset", "Column", "Process")


def merge_metadata(into: _Described, other: _Described) -> None:
    """What ``other`` states about the same dataset, column or process, added to ``into``: the first
    description wins, lists are unions in first-seen order, business attributes merge (``into`` wins)."""
    if not into.description and other.description:
        into.description = other.description
    for name in ("owners", "tags", "terms", "labels", "classifications"):
        add_metadata(into, name, getattr(other, name))
    if other.business:
        merge_business(into, other.business)


def add_metadata(item: Dataset | Column | Process, name: str, values: Iterable[Any]) -> bool:
    """Add ``values`` not there yet to the list (tuple, on a column) ``name`` of ``item``; whether any was."""
    have = getattr(item, name)
    new = [x for x in dict.fromkeys(values) if x not in have]
    if new:
        setattr(item, name, (tuple if isinstance(have, tuple) else list)([*have, *new]))
    return bool(new)


def merge_business(item: Dataset | Column | Process, business: Mapping[str, Mapping[str, Any]]) -> bool:
    """Business attributes added to ``item``'s (those it has win); whether any was."""
    have = item.business or {}
    merged = {**have, **{bm: {**attrs, **have.get(bm, {})} for bm, attrs in business.items()}}
    if merged != have:
        item.business = merged
        return True
    return False


class LineageGraph(_Model):
    """The lineage read from one input (or merged from several)."""

    datasets: list[Dataset] = Field(default_factory=list)
    processes: list[Process] = Field(default_factory=list)
    edges: list[ColumnEdge] = Field(default_factory=list)
    problems: list[Problem] = Field(default_factory=list)
    # Per-statement documents (multi-statement SQL); free-form dicts in the document's shape.
    statements: list[dict[str, Any]] = Field(default_factory=list)
    # The job scope a reader suggests (Spark app name, OpenLineage job, file stem, ...).
    job: str | None = None
    # True when ``job`` is only the input file's name (the input names no job): it is not part of any
    # process's identity, so a sync under another job names the processes under that job instead
    # (:func:`process_id_under`): renaming the file, or ``--job``, renames nothing.
    job_from_name: bool = False
    # True when each process is a job the input names (an OpenLineage job, ``<namespace>/<name>``): its
    # id is its name under whatever job a sync publishes it (:func:`process_local_name`), and a sync
    # without a job publishes each under its own (:func:`split_process_jobs`), as ``openlineage serve`` does.
    process_jobs: bool = False
    source: str | None = None
    # True when the graph is only part of its job's lineage (a dbt run of some models): a sync of it
    # should create and update, and delete nothing it lacks.
    partial: bool = False

    @model_validator(mode="after")
    def _unique_ids(self) -> LineageGraph:
        for label, items in (("dataset", self.datasets), ("process", self.processes)):
            seen: set[str] = set()
            for item in items:
                if item.id in seen:
                    raise ValueError(f"duplicate {label} id {item.id!r}")
                seen.add(item.id)
        return self

    # ----------------------------------------------------------------- lookups and building
    # Lookup indexes, rebuilt whenever a list was changed directly (readers may append to them).
    def _index(self, name: str, items: list[Any], key: Any) -> dict[Any, Any]:
        cached = self.__dict__.get("_idx_" + name)
        if cached is None or cached[0] != len(items) or (items and cached[2] is not items[-1]):
            built = {key(x): x for x in items}
            cached = (len(items), built, items[-1] if items else None)
            object.__setattr__(self, "_idx_" + name, cached)
        return cached[1]

    def _appended(self, name: str, items: list[Any], key: Any) -> None:
        """Record the item just appended to ``items`` in its index (no rebuild)."""
        cached = self.__dict__.get("_idx_" + name)
        if cached is not None and cached[0] == len(items) - 1:
            cached[1][key(items[-1])] = items[-1]
            object.__setattr__(self, "_idx_" + name, (len(items), cached[1], items[-1]))

    def dataset(self, dataset_id: str) -> Dataset | None:
        return self._index("datasets", self.datasets, lambda d: d.id).get(dataset_id)

    def process(self, process_id: str) -> Process | None:
        return self._index("processes", self.processes, lambda p: p.id).get(process_id)

    def add_dataset(self, dataset: Dataset) -> Dataset:
        """Add a dataset, or merge its columns into the one with the same id; returns the stored one."""
        existing = self.dataset(dataset.id)
        if existing is None:
            self.datasets.append(dataset)
            self._appended("datasets", self.datasets, lambda d: d.id)
            return dataset
        by_name = {c.name: c for c in existing.columns}
        for col in dataset.columns:
            have = by_name.get(col.name)
            if have is None:
                existing.columns.append(col)
                by_name[col.name] = col
            else:
                merge_metadata(have, col)
        merge_metadata(existing, dataset)
        return existing

    def add_process(self, process: Process) -> Process:
        if self.process(process.id) is not None:
            raise ValueError(f"duplicate process id {process.id!r}")
        self.processes.append(process)
        self._appended("processes", self.processes, lambda p: p.id)
        return process

    def rename_processes(self, ids: Mapping[str, str]) -> None:
        """Give the processes in ``ids`` their new id (and name, when it was the id), and their column
        edges with them."""
        if not ids:
            return
        self.processes = [
            p.model_copy(update={"id": ids[p.id], "name": ids[p.id] if p.name == p.id else p.name})
            if p.id in ids
            else p
            for p in self.processes
        ]
        self.edges = [
            e.model_copy(update={"process": ids[e.process]})
            if e.process is not None and e.process in ids
            else e
            for e in self.edges
        ]
        for name in ("processes", "edges"):  # the lookup indexes hold the old ids
            self.__dict__.pop("_idx_" + name, None)

    def add_edge(self, edge: ColumnEdge) -> None:
        """Add a column edge unless the graph already has it (edges are a set, kept in order)."""
        if self._index("edges", self.edges, lambda e: e).get(edge) is None:
            self.edges.append(edge)
            self._appended("edges", self.edges, lambda e: e)

    def problem(self, message: str, **kw: Any) -> None:
        self.problems.append(Problem(message=message, **kw))

    @property
    def has_errors(self) -> bool:
        return any(p.severity == "error" for p in self.problems)

    def check(self) -> list[str]:
        """Dangling references (process inputs/outputs, edge ends, edge process). Empty when sound."""
        ids = {d.id for d in self.datasets}
        pids = {p.id for p in self.processes}
        out: list[str] = []
        for p in self.processes:
            out.extend(process_dangling(p, ids))
        for e in self.edges:
            out.extend(edge_dangling(e, ids, pids))
        return out

    def edge_processes(self) -> Iterator[tuple[ColumnEdge, Process | None]]:
        """Each column edge with the process it belongs to: its ``process``, else the graph's only
        process, else the first process writing its target (as the renderer assigns it); None when
        none does."""
        single = self.processes[0] if len(self.processes) == 1 else None
        producers: dict[str, Process] = {}
        for p in self.processes:
            for o in p.outputs:
                producers.setdefault(o, p)
        for e in self.edges:
            if e.process is not None:
                yield e, self.process(e.process)
            else:
                yield e, single or producers.get(e.target.dataset)

    def missing_edge_inputs(self) -> list[tuple[str, str]]:
        """The model's invariant, as (process id, dataset id) pairs that break it: every column edge's
        source dataset is an input of its process (:meth:`edge_processes`; a MERGE's or UPDATE's target
        that the statement reads is an input as well as an output). Empty when it holds."""
        # (one pass of plain lookups: every sync runs it over every edge)
        inputs = {p.id: set(p.inputs) for p in self.processes}
        single = self.processes[0].id if len(self.processes) == 1 else None
        producers: dict[str, str] = {}
        for p in self.processes:
            for o in p.outputs:
                producers.setdefault(o, p.id)
        out: dict[tuple[str, str], None] = {}
        for e in self.edges:
            pid = e.process if e.process is not None else single or producers.get(e.target.dataset)
            have = inputs.get(pid) if pid is not None else None
            if have is not None and e.source.dataset not in have:
                out[(pid, e.source.dataset)] = None  # type: ignore[index]
        return list(out)

    def add_edge_inputs(self) -> int:
        """Make the invariant of :meth:`missing_edge_inputs` hold: each column edge's source dataset is
        added to its process's inputs (after those it has, in edge order); returns how many were added.
        Every reader's graph passes here (:mod:`atlas_sync.lineage.registry`)."""
        missing = self.missing_edge_inputs()
        for pid, dataset_id in missing:
            p = self.process(pid)
            if p is not None:
                p.inputs.append(dataset_id)
        return len(missing)

    def merge(self, other: LineageGraph) -> LineageGraph:
        """A new graph with both graphs' content (datasets merged by id; process ids must differ)."""
        return self.model_copy(deep=True).merge_into(other)

    def merge_into(self, other: LineageGraph) -> LineageGraph:
        """:meth:`merge` into this graph (returned): no copy of what it holds, so folding k graphs
        one by one stays linear (``merge`` copies the growing graph each time)."""
        g = self
        for d in other.datasets:
            g.add_dataset(d.model_copy(deep=True))
        for p in other.processes:
            g.add_process(p.model_copy(deep=True))
        for e in other.edges:
            g.add_edge(e)
        g.problems.extend(other.problems)
        g.statements.extend(other.statements)
        if not g.job:
            g.job, g.job_from_name = other.job, other.job_from_name
        g.process_jobs = g.process_jobs or other.process_jobs
        g.partial = g.partial or other.partial
        return g

    # ----------------------------------------------------------------- the summary document
    def end_to_end_tables(self) -> dict[str, list[str]]:
        """Tables read and written end to end, processes taken in order (see :func:`summary_tables`)."""
        return self._summary_tables([_process_tuple(p) for p in self.processes])

    def _summary_tables(self, processes: Sequence[ProcessTuple]) -> dict[str, list[str]]:
        reads = statement_reads(self.statements) if not processes else None
        return summary_tables(((d.id, d.kind) for d in self.datasets), processes, reads)

    def end_to_end_edges(self) -> list[ColumnEdge]:
        """Column edges from end-to-end sources to end-to-end targets, composed through intermediates
        (see :func:`summary_edges`)."""
        processes = [_process_tuple(p) for p in self.processes]
        tables = self._summary_tables(processes)
        return [
            ColumnEdge(
                source=ColumnRef(dataset=s[0], column=s[1]),
                target=ColumnRef(dataset=t[0], column=t[1]),
                kind=kind,  # type: ignore[arg-type]
                expression=expr,
            )
            for s, t, kind, expr in summary_edges(tables, processes, (_edge_tuple(e) for e in self.edges))
        ]

    def to_document(self) -> dict[str, Any]:
        """The JSON document of the design doc."""
        processes = [_process_tuple(p) for p in self.processes]
        tables = self._summary_tables(processes)
        return {
            "tables": tables,
            "columns": list(summary_columns(tables, processes, (_edge_tuple(e) for e in self.edges))),
            "statements": self.statements,
            "datasets": [
                d.model_dump(exclude_defaults=True) | {"id": d.id, "name": d.name} for d in self.datasets
            ],
            "processes": [
                p.model_dump(exclude_defaults=True) | {"id": p.id, "name": p.name} for p in self.processes
            ],
            "edges": [_edge_doc(e) for e in self.edges],
            "problems": [p.model_dump(exclude_none=True) for p in self.problems],
            **({"job": self.job} if self.job else {}),
            **naming_document(self),
        }

    @classmethod
    def from_document(cls, doc: Any, *, file: str | None = None) -> LineageGraph:
        """Read the document back. ``edges`` (all edges) wins over ``columns`` (end-to-end summary).

        The ``graph`` reader's ``read_chunks`` checks a document piece by piece with the same helpers
        (:func:`document_list`, :func:`edge_from_document`, ...) and reports the same first error."""
        if not isinstance(doc, dict):
            raise InputError("a lineage document must be a JSON object", file=file, path="$")
        datasets = [
            validate_item(Dataset, d, file=file, where=f"$.datasets[{i}]")
            for i, d in enumerate(document_list(doc.get("datasets"), "datasets", file))
        ]
        processes = [
            validate_item(Process, p, file=file, where=f"$.processes[{i}]")
            for i, p in enumerate(document_list(doc.get("processes"), "processes", file))
        ]
        problems = [
            validate_item(Problem, p, file=file, where=f"$.problems[{i}]")
            for i, p in enumerate(document_list(doc.get("problems"), "problems", file))
        ]
        for problem in problems:  # a problem read from a file is reported in that file
            if problem.file is None:
                problem.file = file
        ids = {d.id for d in datasets}
        key = edges_key(doc.get("edges"))
        edges = [
            edge_from_document(e, ids, file=file, where=f"$.{key}[{i}]")
            for i, e in enumerate(document_list(doc.get(key), key, file))
        ]
        statements = document_list(doc.get("statements"), "statements", file)
        naming = naming_from_document(doc, file)
        try:
            g = cls(
                datasets=datasets,
                processes=processes,
                edges=edges,
                problems=problems,
                statements=statements,
                job=doc.get("job"),
                job_from_name=naming["job_from_name"],
                process_jobs=naming["process_jobs"],
            )
        except ValueError as exc:
            raise InputError(first_error(exc), file=file) from None
        dangling = g.check()
        if dangling:
            raise InputError(dangling[0], file=file)
        return g


def process_id_under(process_id: str, graph: LineageGraph, job: str) -> str:
    """The id of ``graph``'s process as a sync under ``job`` names it.

    A reader names a process after the job it suggests (``<job>``, ``<job>:<target>:<digest>``); when
    that job is only the file's name (``graph.job_from_name``), the sync's job takes its place, so the
    process's name depends on the process and the sync's job, never on what the file is called.
    """
    old = graph.job
    if not graph.job_from_name or not old or old == job:
        return process_id
    if process_id == old:
        return job
    if process_id.startswith(old + ":"):
        return job + process_id[len(old) :]
    return process_id


_JOB_NAMED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):")


def dataset_id_under(dataset_id: str, graph: LineageGraph, job: str) -> str:
    """The id of ``graph``'s dataset as a sync under ``job`` names it: a dataset the reader named after
    a job that is only the file's name (a Spark plan's ``unknown:<job>/source``, ``result:<job>/result``,
    ``local:<job>/rows``: ``<namespace>:<job>/...``) is named after the sync's job instead, as its
    processes are (:func:`process_id_under`)."""
    old = graph.job
    if not graph.job_from_name or not old or old == job:
        return dataset_id
    m = _JOB_NAMED.match(dataset_id)
    if m is not None and dataset_id.startswith(old + "/", m.end()):
        return dataset_id[: m.end()] + job + dataset_id[m.end() + len(old) :]
    return dataset_id


def dataset_named_under(dataset: Dataset, graph: LineageGraph, job: str) -> tuple[str, str]:
    """The id and name of ``dataset`` as a sync under ``job`` names it (:func:`dataset_id_under`)."""
    new = dataset_id_under(dataset.id, graph, job)
    if new == dataset.id:
        return dataset.id, dataset.name
    old = graph.job or ""
    name = job + dataset.name[len(old) :] if dataset.name.startswith(old + "/") else dataset.name
    return new, name


def process_local_name(process_id: str, graph: LineageGraph, job: str) -> str:
    """The process's qualified name without ``@<domain>`` in a sync under ``job``: a job the input names
    (``graph.process_jobs``) is its id; a process the reader named after the job (``<job>``,
    ``<job>:...``, see :func:`process_id_under`) keeps that name; any other is ``<job>:<process id>``.
    So a name depends on the process (and the job it is published under), never on the other processes
    of the input, the file's name or the files' order."""
    if graph.process_jobs:
        return process_id
    pid = process_id_under(process_id, graph, job)
    return pid if pid == job or pid.startswith(job + ":") else f"{job}:{pid}"


def split_process_jobs(graph: LineageGraph) -> list[LineageGraph]:
    """One graph per process of a graph whose processes are jobs of their own (``process_jobs``), each
    with the datasets its process and edges use and ``job`` = the process's id; the datasets no process
    uses and the problems go with the first."""
    used: set[str] = set()
    parts: list[LineageGraph] = []
    by_process: dict[str | None, list[ColumnEdge]] = {}
    for e in graph.edges:
        by_process.setdefault(e.process, []).append(e)
    for p in graph.processes:
        edges = by_process.get(p.id, [])
        ids = dict.fromkeys(
            [*p.inputs, *p.outputs, *(r.dataset for e in edges for r in (e.source, e.target))]
        )
        used.update(ids)
        parts.append(
            LineageGraph(
                datasets=[d for d in (graph.dataset(i) for i in ids) if d is not None],
                processes=[p],
                edges=edges,
                job=p.id,
                process_jobs=True,
                source=graph.source,
                partial=graph.partial,
            )
        )
    if parts:
        parts[0].datasets.extend(d for d in graph.datasets if d.id not in used)
        parts[0].problems = list(graph.problems)
        parts[0].statements = list(graph.statements)
    return parts


# What names the processes (process_local_name) besides ``job``: in the document when true.
NAMING_KEYS = ("job_from_name", "process_jobs")


def naming_document(graph: LineageGraph) -> dict[str, bool]:
    """The document's ``job_from_name`` / ``process_jobs``, those that are true."""
    return {k: True for k in NAMING_KEYS if getattr(graph, k)}


def naming_from_document(doc: Mapping[str, Any], file: str | None) -> dict[str, bool]:
    """``job_from_name`` / ``process_jobs`` of a document (absent: false); anything but a boolean is an
    error at ``$.<key>``."""
    out: dict[str, bool] = {}
    for k in NAMING_KEYS:
        v = doc.get(k)
        if v is not None and not isinstance(v, bool):
            raise InputError(f"'{k}' must be true or false", file=file, path=f"$.{k}")
        out[k] = bool(v)
    return out


# ----------------------------------------------------------------- reading the document, piece by piece
def document_list(value: Any, key: str, file: str | None) -> list[Any]:
    """A top-level list of the document: absent, null or empty is ``[]``; anything else not a list
    is an error at ``$.key``."""
    if not value:
        return []
    if not isinstance(value, list):
        raise InputError(f"'{key}' must be a list", file=file, path=f"$.{key}")
    return value


def validate_item(model: type[_M], value: Any, *, file: str | None, where: str) -> _M:
    """One item of the document's ``datasets``, ``processes`` or ``problems``; an
    :class:`InputError` at ``where`` (its JSON path) naming the first invalid field."""
    try:
        return model.model_validate(value)
    except ValueError as exc:
        raise InputError(first_error(exc), file=file, path=where) from None


def edges_key(edges: Any) -> str:
    """Which list holds the document's column edges: ``edges`` (all edges) when present and not
    null, else ``columns`` (the end-to-end summary)."""
    return "edges" if edges is not None else "columns"


def edge_from_document(e: Any, dataset_ids: Collection[str], *, file: str | None, where: str) -> ColumnEdge:
    """One item of the document's ``edges`` (or ``columns``), its ends resolved against the
    document's dataset ids; an :class:`InputError` at ``where`` (its JSON path) when it is bad."""
    if not isinstance(e, dict) or "source" not in e or "target" not in e:
        raise InputError("a column edge needs 'source' and 'target'", file=file, path=where)
    kind = e.get("kind", "IDENTITY")
    if kind not in ALL_KINDS:
        raise InputError(
            f"unknown dependency kind {kind!r} (one of {', '.join(ALL_KINDS)})", file=file, path=where
        )
    try:
        return ColumnEdge(
            source=parse_column_ref(e["source"], dataset_ids),
            target=parse_column_ref(e["target"], dataset_ids),
            kind=kind,
            expression=e.get("expression"),
            process=e.get("process"),
        )
    except ValueError as exc:
        raise InputError(str(exc), file=file, path=where) from None


def process_dangling(p: Process, dataset_ids: Collection[str]) -> list[str]:
    """The process's inputs and outputs that name no dataset (as :meth:`LineageGraph.check` words them)."""
    return [
        f"process {p.id!r} refers to unknown dataset {ref!r}"
        for ref in (*p.inputs, *p.outputs)
        if ref not in dataset_ids
    ]


def edge_dangling(e: ColumnEdge, dataset_ids: Collection[str], process_ids: Collection[str]) -> list[str]:
    """The edge's ends and process that name nothing (as :meth:`LineageGraph.check` words them)."""
    out = [
        f"column edge {e.source} -> {e.target} refers to unknown dataset {end.dataset!r}"
        for end in (e.source, e.target)
        if end.dataset not in dataset_ids
    ]
    if e.process is not None and e.process not in process_ids:
        out.append(f"column edge {e.source} -> {e.target} refers to unknown process {e.process!r}")
    return out


def parse_column_ref(value: Any, dataset_ids: Collection[str]) -> ColumnRef:
    """Resolve ``db.t.col`` / ``db.t.*`` (or ``{"dataset":..,"column":..}``) against known dataset ids.

    The longest dataset id that prefixes the name wins, so ``a.b.c`` with datasets ``a`` and ``a.b``
    is column ``c`` of ``a.b``. Pass a set: each dot of ``value`` is one membership test (a list
    makes every reference scan every dataset id).
    """
    if isinstance(value, dict):
        return ColumnRef.model_validate(value)
    if not isinstance(value, str):
        raise ValueError(f"a column reference must be a string, not {type(value).__name__}")
    best: str | None = None
    dot = value.rfind(".")
    while dot >= 0:
        if value[:dot] in dataset_ids:
            best = value[:dot]
            break
        dot = value.rfind(".", 0, dot)
    if best is None:
        raise ValueError(f"column {value!r} does not belong to any dataset of the document")
    rest = value[len(best) + 1 :]
    if rest == "*":
        return ColumnRef(dataset=best, column=None)
    parts = split_dotted(rest)
    return ColumnRef(dataset=best, column=".".join(parts))


_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}


def compose_kinds(outer: str, inner: str) -> str:
    """The kind of a dependency through another: an indirect kind stays (the outer first), else
    the strongest direct kind (AGGREGATION > TRANSFORMATION > IDENTITY)."""
    if outer in INDIRECT_KINDS:
        return outer
    if inner in INDIRECT_KINDS:
        return inner
    return outer if _RANK[outer] >= _RANK[inner] else inner


def _edge_doc(e: ColumnEdge) -> dict[str, Any]:
    d: dict[str, Any] = {"source": str(e.source), "target": str(e.target), "kind": e.kind}
    if e.expression is not None:
        d["expression"] = e.expression
    if e.process is not None:
        d["process"] = e.process
    return d


def _ordered(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def first_error(exc: ValueError) -> str:
    """The first error of a pydantic validation error as ``loc: message`` (else its first line)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            loc = ".".join(str(x) for x in first.get("loc", ()))
            return f"{loc}: {first.get('msg')}" if loc else str(first.get("msg"))
        except Exception:  # noqa: BLE001 - fall back to the plain message
            pass
    return str(exc).splitlines()[0]


# ----------------------------------------------------------------- streaming the document
# The document written piece by piece: the same bytes as ``json.dumps(graph.to_document(), indent=2,
# ensure_ascii=False)``, without building the whole document (or, for chunked reads, the whole graph)
# in memory. The end-to-end summary is computed from compact tuples instead of model objects.

#: A column reference as a tuple: (dataset id, column or None for the whole dataset).
RefTuple = tuple[str, str | None]
#: A column edge as a tuple: (source, target, kind, expression, process id).
EdgeTuple = tuple[RefTuple, RefTuple, str, str | None, str | None]
#: A process as the summary needs it: (id, input dataset ids, output dataset ids).
ProcessTuple = tuple[str, tuple[str, ...], tuple[str, ...]]

_ITEM_INDENT = "\n    "  # list items sit two levels deep in the document


def document_item(value: Any) -> str:
    """One item of a top-level list of the document, rendered at its depth (without the separator)."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", _ITEM_INDENT)


class SpooledItems:
    """Items of one list of the document, rendered and kept in a temporary file until written."""

    def __init__(self) -> None:
        self.count = 0
        # Lives as long as the spool (closed by close() or the with block), so no context manager.
        self._file: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115

    def add(self, value: Any) -> None:
        self._file.write(("," + _ITEM_INDENT if self.count else "") + document_item(value))
        self.count += 1

    def copy_to(self, out: IO[str]) -> None:
        self._file.flush()
        self._file.seek(0)
        shutil.copyfileobj(self._file, out, 1 << 20)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SpooledItems:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_document(
    out: IO[str],
    *,
    tables: dict[str, list[str]],
    columns: Iterable[Any] | SpooledItems,
    statements: Iterable[Any] | SpooledItems,
    datasets: Iterable[Any] | SpooledItems,
    processes: Iterable[Any] | SpooledItems,
    edges: Iterable[Any] | SpooledItems,
    problems: Iterable[Any] | SpooledItems,
    job: str | None = None,
    naming: Mapping[str, bool] | None = None,
) -> None:
    """Write the lineage document to ``out`` section by section (no trailing newline), byte for byte
    what ``json.dumps(doc, indent=2, ensure_ascii=False)`` gives for the same content. List sections
    are iterables of JSON values (rendered one at a time) or :class:`SpooledItems`."""
    out.write('{\n  "tables": ' + json.dumps(tables, indent=2, ensure_ascii=False).replace("\n", "\n  "))
    for key, items in (
        ("columns", columns),
        ("statements", statements),
        ("datasets", datasets),
        ("processes", processes),
        ("edges", edges),
        ("problems", problems),
    ):
        out.write(',\n  "' + key + '": ')
        if isinstance(items, SpooledItems):
            if items.count:
                out.write("[" + _ITEM_INDENT)
                items.copy_to(out)
                out.write("\n  ]")
            else:
                out.write("[]")
            continue
        n = 0
        for value in items:
            out.write(("," if n else "[") + _ITEM_INDENT + document_item(value))
            n += 1
        out.write("\n  ]" if n else "[]")
    if job:
        out.write(',\n  "job": ' + json.dumps(job, ensure_ascii=False))
    for k, v in (naming or {}).items():  # (naming_document's)
        out.write(f',\n  "{k}": ' + json.dumps(v))
    out.write("\n}")


def ref_text(ref: RefTuple) -> str:
    """``str(ColumnRef)`` of a reference tuple."""
    return ref[0] + "." + (quote_part(ref[1]) if ref[1] is not None else "*")


def summary_tables(
    datasets: Iterable[tuple[str, str]],
    processes: Sequence[ProcessTuple],
    statement_reads: Collection[str] | None = None,
) -> dict[str, list[str]]:
    """The document's ``tables`` from (dataset id, kind) pairs and process tuples: the tables read
    and written end to end, processes taken in order. A table written by one process and read by a
    later one is intermediate; one read before it is written is a source. Without processes the
    datasets are read, but those no statement reads when ``statement_reads`` is given (a table
    ``CREATE TABLE t (a int)`` only declares is not read)."""
    ds = list(datasets)
    intermediate = {i for i, kind in ds if kind == "intermediate"}
    if not processes:
        read = [i for i, _ in ds if i not in intermediate]
        if statement_reads is not None:
            read = [i for i in read if i in statement_reads]
        return {"read": read, "write": []}
    first_write = _first_writes(processes)
    last_read: dict[str, int] = {}
    for i, (_pid, ins, _outs) in enumerate(processes):
        for x in ins:
            last_read[x] = i
    r: dict[str, None] = {}  # insertion-ordered sets
    w: dict[str, None] = {}
    for i, (_pid, ins, outs) in enumerate(processes):
        for x in ins:
            # read before anything wrote it (the same process writing it counts as after)
            if x not in intermediate and first_write.get(x, i) >= i:
                r.setdefault(x)
        for o in outs:
            # written, and no later process reads it
            if o not in intermediate and last_read.get(o, -1) <= i:
                w.setdefault(o)
    return {"read": list(r), "write": list(w)}


def statement_reads(statements: Iterable[Any]) -> set[str] | None:
    """The tables the statement documents (a SQL reader's ``statements``) read; None without any."""
    reads: set[str] | None = None
    for st in statements:
        tables = st.get("tables") if isinstance(st, dict) else None
        if isinstance(tables, dict):
            reads = reads if reads is not None else set()
            reads.update(str(t) for t in tables.get("read") or ())
    return reads


def _first_writes(processes: Sequence[ProcessTuple]) -> dict[str, int]:
    """Dataset id -> position of the first process that writes it (processes run in list order)."""
    first: dict[str, int] = {}
    for i, (_pid, _ins, outs) in enumerate(processes):
        for o in outs:
            first.setdefault(o, i)
    return first


#: An end-to-end column dependency: (source, target, kind, expression).
SummaryEdge = tuple[RefTuple, RefTuple, str, str | None]


def summary_edges(
    tables: dict[str, list[str]], processes: Sequence[ProcessTuple], edges: Iterable[EdgeTuple]
) -> Iterator[SummaryEdge]:
    """Column dependencies from end-to-end sources (``tables["read"]``) to end-to-end targets
    (``tables["write"]``), composed through intermediates, from tuples: a fraction of the memory of
    model objects, and found one target column at a time (a big log's summary is never held whole).

    Composition keeps the strongest direct kind (AGGREGATION > TRANSFORMATION > IDENTITY); a path
    through an indirect dependency stays indirect with the first indirect kind met.
    """
    sources, targets = set(tables["read"]), set(tables["write"])
    by_target: dict[RefTuple, list[EdgeTuple]] = {}
    for e in edges:
        by_target.setdefault(e[1], []).append(e)
    del edges  # the caller may drop its list: the index holds every edge
    result: list[SummaryEdge] = []
    seen: set[tuple[RefTuple, RefTuple, str]] = set()
    order = {pid: i for i, (pid, _ins, _outs) in enumerate(processes)}
    first_write = _first_writes(processes)

    def position(e: EdgeTuple) -> int | None:
        return order.get(e[4]) if e[4] is not None else None

    def visit(
        target: RefTuple, e: EdgeTuple, kind: str, expr: str | None, depth: int, stack: frozenset[RefTuple]
    ) -> None:
        at = position(e)
        source = e[0]
        # The source as the process saw it: its original content unless a process before this
        # one wrote it (then it is an intermediate result to walk through).
        original = at is None or first_write.get(source[0], at) >= at
        if source[0] in sources and original:
            key = (source, target, kind)
            if key not in seen:
                seen.add(key)
                result.append((source, target, kind, expr))
        elif source not in stack and depth < 64:
            walk(target, source, kind, expr, depth + 1, stack | {source}, at)

    def walk(
        target: RefTuple,
        node: RefTuple,
        kind: str,
        expr: str | None,
        depth: int,
        stack: frozenset[RefTuple],
        before: int | None = None,
    ) -> None:
        def earlier(e: EdgeTuple) -> bool:
            at = position(e)
            return before is None or at is None or at < before

        for e in by_target.get(node, []):
            if earlier(e):
                visit(target, e, compose_kinds(kind, e[2]), e[3] if depth == 0 else expr, depth, stack)
        if depth == 0 or node[1] is None:
            return
        # Row-level dependencies of an intermediate (FILTER, JOIN, ... on the whole dataset) decide
        # which rows reach the target at all: they apply to the whole target and keep their kind.
        whole = (target[0], None)
        for e in by_target.get((node[0], None), []):
            if not earlier(e):
                continue
            if e[2] in INDIRECT_KINDS:
                visit(whole, e, e[2], e[3], depth, stack)
            else:
                visit(target, e, compose_kinds(kind, e[2]), expr, depth, stack)

    for t in sorted({t for t in by_target if t[0] in targets}, key=ref_text):
        walk(t, t, "IDENTITY", None, 0, frozenset({t}))
        yield from result
        result.clear()


def summary_columns(
    tables: dict[str, list[str]], processes: Sequence[ProcessTuple], edges: Iterable[EdgeTuple]
) -> Iterator[dict[str, Any]]:
    """The document's ``columns`` from tuples: :func:`summary_edges`, rendered one at a time."""
    for source, target, kind, expr in summary_edges(tables, processes, edges):
        doc: dict[str, Any] = {"source": ref_text(source), "target": ref_text(target), "kind": kind}
        if expr is not None:
            doc["expression"] = expr
        yield doc


def edge_document(e: ColumnEdge) -> dict[str, Any]:
    """One item of the document's ``edges``."""
    return _edge_doc(e)


def _process_tuple(p: Process) -> ProcessTuple:
    return (p.id, tuple(p.inputs), tuple(p.outputs))


def _edge_tuple(e: ColumnEdge) -> EdgeTuple:
    return (
        (e.source.dataset, e.source.column),
        (e.target.dataset, e.target.column),
        e.kind,
        e.expression,
        e.process,
    )


def write_graph_document(graph: LineageGraph, out: IO[str]) -> None:
    """Write ``graph.to_document()`` to ``out`` as ``json.dumps(..., indent=2, ensure_ascii=False)``
    would, one item at a time (no trailing newline)."""
    processes = [_process_tuple(p) for p in graph.processes]
    tables = graph._summary_tables(processes)
    columns = summary_columns(tables, processes, (_edge_tuple(e) for e in graph.edges))
    write_document(
        out,
        tables=tables,
        columns=columns,
        statements=graph.statements,
        datasets=(d.model_dump(exclude_defaults=True) | {"id": d.id, "name": d.name} for d in graph.datasets),
        processes=(
            p.model_dump(exclude_defaults=True) | {"id": p.id, "name": p.name} for p in graph.processes
        ),
        edges=(_edge_doc(e) for e in graph.edges),
        problems=(p.model_dump(exclude_none=True) for p in graph.problems),
        job=graph.job,
        naming=naming_document(graph),
    )
