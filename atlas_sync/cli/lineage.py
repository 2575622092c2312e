"""``atlas-sync lineage READER FILE...``: read lineage and print it, without touching Atlas."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

import click

from atlas_sync.cli.common import echo_json, write_out
from atlas_sync.cli.progress import reporter as progress_reporter
from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import (
    Column,
    Dataset,
    EdgeTuple,
    LineageGraph,
    Problem,
    ProcessTuple,
    RefTuple,
    SpooledItems,
    edge_document,
    statement_reads,
    summary_columns,
    summary_tables,
    write_document,
    write_graph_document,
)

FORMATS = ("json", "text", "dot", "svg", "html")


def _kv(values: tuple[str, ...], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        key, sep, val = v.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {v!r}", param_hint=flag)
        out[key.strip()] = val
    return out


def reader_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Flags passed to readers as keyword options (each reader uses the ones it knows)."""
    opts = [
        click.option(
            "--dialect",
            metavar="NAME",
            help="SQL dialect (sqlglot names: spark, hive, mysql, postgres, "
            "snowflake, bigquery, tsql, trino, ...; also doris, greenplum, azuresql, ...)",
        ),
        click.option(
            "--schema",
            "schema",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help='SQL: table schemas {"db.table": [columns]} for star expansion',
        ),
        click.option(
            "--default-schema", metavar="NAME", help="SQL: database/schema for unqualified table names"
        ),
        click.option(
            "--mode",
            type=click.Choice(["job", "operator"]),
            help="Spark plans: one process per job (lineage profile) or per operator (pico profile) "
            "[default: the profile's]",
        ),
        click.option(
            "--source-path", "path", metavar="PATH", help="Spark plans: path of file relations without one"
        ),
        click.option(
            "--explain",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help="Spark plans: explain(extended=True) output holding file locations",
        ),
        click.option(
            "--namespace-map",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help="OpenLineage: TOML/JSON map of dataset namespaces to metadata namespaces",
        ),
        click.option(
            "--strict",
            is_flag=True,
            default=None,
            help="OpenLineage: reject a whole event for one malformed facet "
            "[default: drop that facet with a warning]",
        ),
        click.option(
            "--var",
            "variables",
            multiple=True,
            metavar="KEY=VALUE",
            help="SeaTunnel: variable for ${KEY} substitution (repeatable; like seatunnel -i)",
        ),
        click.option(
            "--select",
            "select",
            multiple=True,
            metavar="SPEC",
            help="dbt: only these nodes (dbt selection: name, tag:T, path:P, source:S, +name, name+; "
            "repeatable; a part of the project, so nothing is deleted); superset: only these dashboards "
            "(title, id or uuid)",
        ),
        click.option(
            "--run-results",
            "run_results",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help="dbt: only the nodes that ran in this run_results.json (nothing is deleted)",
        ),
        click.option(
            "--db-url",
            metavar="URL",
            help="database: the connection, as SQLAlchemy spells it (postgresql://USER@HOST:PORT/DB, "
            "mysql://USER@HOST:PORT/DB for MySQL, MariaDB, Doris); no password in it",
        ),
        click.option(
            "--db-password-file",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help="database: file holding the password (first line) [env ATLAS_SYNC_DB_PASSWORD_FILE; "
            "or the driver's own, e.g. PGPASSWORD, MYSQL_PWD]",
        ),
        click.option(
            "--superset-url",
            metavar="URL",
            help="superset: read a live Superset's dashboards, charts and datasets (no input file); user "
            "and password from SUPERSET_USERNAME and SUPERSET_PASSWORD_FILE or SUPERSET_PASSWORD",
        ),
        click.option(
            "-o",
            "--option",
            "extra",
            multiple=True,
            metavar="KEY=VALUE",
            help="any other reader option (repeatable; an option the reader does not take is an error; "
            "`atlas-sync lineage --list-options READER` lists them)",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def collect_reader_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the reader flags from a command's kwargs into the reader's keyword options."""
    out: dict[str, Any] = {}
    names = ("dialect", "schema", "default_schema", "mode", "path", "explain", "namespace_map", "strict")
    for name in (*names, "db_url", "db_password_file", "superset_url"):
        v = kwargs.pop(name, None)
        if v is not None:
            out[name] = v
    select = kwargs.pop("select", ()) or ()
    if select:
        out["select"] = list(select)
    run_results = kwargs.pop("run_results", None)
    if run_results is not None:
        out["run_results"] = run_results
    variables = kwargs.pop("variables", ()) or ()
    if variables:
        out["variables"] = _kv(tuple(variables), "--var")
    extra = kwargs.pop("extra", ()) or ()
    out.update(_kv(tuple(extra), "--option"))
    out["reporter"] = progress_reporter  # a bar on a terminal, plain lines otherwise
    return out


def list_readers_text(width: int | None = None) -> str:
    """The readers as a table (name, extensions, description), each column wrapped within its own
    width so the columns stay aligned; ``width``: the terminal's by default."""
    readers = registry.available()
    width = width or shutil.get_terminal_size((100, 24)).columns
    name_w = max(len(n) for n in readers)
    ext_w = 28
    desc_w = max(30, width - name_w - ext_w - 2)
    lines = []
    for name, reader in readers.items():
        exts = textwrap.wrap(", ".join(reader.extensions) or "-", ext_w, break_on_hyphens=False)
        desc = textwrap.wrap(reader.description, desc_w) or [""]
        for i in range(max(len(exts), len(desc))):
            cells = (
                name if i == 0 else "",
                exts[i] if i < len(exts) else "",
                desc[i] if i < len(desc) else "",
            )
            lines.append(f"{cells[0]:<{name_w}} {cells[1]:<{ext_w}} {cells[2]}".rstrip())
    return "\n".join(lines)


def reader_options_text(name: str | None = None) -> str:
    """Each reader's options (``-o NAME=VALUE``): name, type and help, a block per reader (``name``:
    that reader's only); a plugin that declares none says so."""
    readers = {name: registry.get(name)} if name else registry.available()
    blocks = []
    for rname, reader in readers.items():
        declared = registry.options_of(reader)
        if declared is None:
            blocks.append(f"{rname}\n  (declares no options: any -o is passed to it unchecked)")
            continue
        width = max(len(o.name) for o in declared)
        lines = [rname] + [f"  {o.name:<{width}}  {o.type:<6}  {o.help}" for o in declared]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def render_graph(graph: LineageGraph, fmt: str, *, columns: bool = False) -> str:
    if fmt == "json":
        return json.dumps(graph.to_document(), indent=2, ensure_ascii=False)
    if fmt == "text":
        from atlas_sync.view.text import graph_text

        return graph_text(graph)
    try:
        pictures = importlib.import_module("atlas_sync.view.pictures")
    except ImportError:
        raise InputError(f"--format {fmt} is not available in this build") from None
    return str(pictures.render(graph, fmt, columns=columns))


_COLUMN_METADATA = ("owners", "tags", "classifications", "terms", "business", "labels")
_DATASET_METADATA = ("description", *_COLUMN_METADATA)


class _Dataset:
    """A dataset merged over chunks, without the model objects' overhead (one per table of a log)."""

    __slots__ = ("id", "namespace", "name", "kind", "columns", "typed", "facets", "docs")

    def __init__(self, d: Dataset) -> None:
        self.id = sys.intern(d.id)
        self.namespace = sys.intern(d.namespace)  # shared by the tables of one schema
        self.name = d.name
        self.kind = d.kind
        self.columns: tuple[str, ...] = ()
        # Columns with a type or description, by name (most columns of a log have neither).
        self.typed: dict[str, Column] | None = None
        self.facets = d.facets or None
        # description, owners, tags, ...: the first chunk's, as LineageGraph.add_dataset keeps them
        docs = {k: getattr(d, k) for k in _DATASET_METADATA if getattr(d, k)}
        self.docs = docs or None
        self.merge(d)

    def merge(self, d: Dataset) -> None:
        have = set(self.columns)
        added: list[str] = []
        for c in d.columns:
            if c.name in have:
                continue
            have.add(c.name)
            added.append(c.name)
            if (
                c.type is not None
                or c.description is not None
                or any(getattr(c, k) for k in _COLUMN_METADATA)
            ):
                self.typed = self.typed or {}
                self.typed[c.name] = c
        if added:
            self.columns += tuple(added)
        # A later chunk may tell that a table read earlier is a view (as the readers refine it).
        if self.kind == "table" and d.kind in ("view", "intermediate"):
            self.kind = d.kind

    def document(self) -> dict[str, Any]:
        typed = self.typed or {}
        # every field given: model_construct would inspect each default factory (slow)
        fields: dict[str, Any] = {
            "description": None,
            "owners": [],
            "tags": [],
            "classifications": [],
            "terms": [],
            "business": {},
            "labels": [],
            **(self.docs or {}),
        }
        d = Dataset.model_construct(
            None,
            id=self.id,
            namespace=self.namespace,
            name=self.name,
            kind=self.kind,
            columns=[typed.get(n) or Column.unchecked(n) for n in self.columns],
            facets=self.facets or {},
            **fields,
        )
        return d.model_dump(exclude_defaults=True) | {"id": self.id, "name": self.name}


class ChunkedDocument:
    """The lineage document built from a reader's chunks (:func:`registry.read_chunks`): datasets are
    merged in memory, statements, processes, edges and problems are rendered into temporary files as
    they come, and the end-to-end summary is computed from compact tuples at the end."""

    def __init__(self) -> None:
        self.datasets: dict[str, _Dataset] = {}
        self.processes: list[ProcessTuple] = []
        self.edges: list[EdgeTuple] = []
        self.errors: list[Problem] = []
        self.job: str | None = None
        self.job_from_name = self.process_jobs = False  # (LineageGraph's: what names the processes)
        self._refs: dict[RefTuple, RefTuple] = {}
        self._unowned: set[EdgeTuple] = set()  # edges without a process: deduplicated across chunks
        self.statements = SpooledItems()
        self.statement_reads: set[str] | None = None  # what the statements read (None: no statements)
        self.process_items = SpooledItems()
        self.edge_items = SpooledItems()
        self.problems = SpooledItems()

    def _ref(self, dataset: str, column: str | None) -> RefTuple:
        """One shared tuple per column, made of the stored dataset id (edges share their ends)."""
        key = (self._id(dataset), column)
        return self._refs.setdefault(key, key)

    def _id(self, dataset: str) -> str:
        known = self.datasets.get(dataset)
        return known.id if known else sys.intern(dataset)

    def add(self, chunk: LineageGraph) -> None:
        """Take one chunk in (chunks in input order)."""
        if not self.job:
            self.job, self.job_from_name = chunk.job, chunk.job_from_name
        self.process_jobs = self.process_jobs or chunk.process_jobs
        for d in chunk.datasets:
            have = self.datasets.get(d.id)
            if have is None:
                self.datasets[d.id] = _Dataset(d)
            else:
                have.merge(d)
        pids: dict[str, str] = {}
        for p in chunk.processes:
            pid = sys.intern(p.id)
            pids[pid] = pid
            self.processes.append(
                (pid, tuple(self._id(x) for x in p.inputs), tuple(self._id(x) for x in p.outputs))
            )
            self.process_items.add(p.model_dump(exclude_defaults=True) | {"id": p.id, "name": p.name})
        for e in chunk.edges:
            t: EdgeTuple = (
                self._ref(e.source.dataset, e.source.column),
                self._ref(e.target.dataset, e.target.column),
                e.kind,
                e.expression,
                pids.get(e.process, e.process) if e.process is not None else None,
            )
            if e.process is None:
                if t in self._unowned:
                    continue
                self._unowned.add(t)
            self.edges.append(t)
            self.edge_items.add(edge_document(e))
        for s in chunk.statements:
            self.statements.add(s)
            reads = statement_reads([s])
            if reads is not None:
                if self.statement_reads is None:
                    self.statement_reads = set()
                self.statement_reads.update(reads)
        for problem in chunk.problems:
            self.problems.add(problem.model_dump(exclude_none=True))
            if problem.severity == "error":
                self.errors.append(problem)

    def write(self, out: IO[str], job: str | None = None) -> None:
        """Write the document (what ``json.dumps(graph.to_document(), indent=2)`` gives for the merged
        graph) to ``out``, without a trailing newline."""
        reads = self.statement_reads if not self.processes else None
        tables = summary_tables(((d.id, d.kind) for d in self.datasets.values()), self.processes, reads)
        columns = summary_columns(tables, self.processes, self.edges)
        # The summary holds the edges from here on; the lookups are not needed any more.
        self.edges, self._refs, self._unowned = [], {}, set()
        write_document(
            out,
            tables=tables,
            columns=columns,
            statements=self.statements,
            datasets=(d.document() for d in self.datasets.values()),
            processes=self.process_items,
            edges=self.edge_items,
            problems=self.problems,
            job=job or self.job,
            naming={
                k: True
                for k, v in (
                    ("job_from_name", self.job_from_name and not job),
                    ("process_jobs", self.process_jobs),
                )
                if v
            },
        )

    def close(self) -> None:
        for spool in (self.statements, self.process_items, self.edge_items, self.problems):
            spool.close()


class _Echo:
    """A text sink for stdout: pieces are collected and passed to click.echo about 1 MB at a time."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        if self._size >= 1 << 20:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self._parts:
            click.echo("".join(self._parts), nl=False)
            self._parts, self._size = [], 0


@contextmanager
def _output(out: str | None) -> Iterator[IO[str]]:
    if not out:
        sink = _Echo()
        yield sink  # type: ignore[misc]
        sink.flush()
        return
    try:
        fh = open(out, "w", encoding="utf-8")  # noqa: SIM115 - closed below, errors named
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", file=out) from None
    with fh:
        yield fh


def write_json(
    reader: str, files: list[str], options: dict[str, Any], out: str | None, job: str | None
) -> list[Problem]:
    """``--format json``: write the document to ``out`` (or stdout) without holding it whole; a reader
    with ``read_chunks`` is consumed chunk by chunk. Returns the error problems."""
    if registry.can_chunk(registry.get(reader)):
        doc = ChunkedDocument()
        try:
            for chunk in registry.read_chunks(reader, files, **options):
                doc.add(chunk)
            with _output(out) as fh:
                doc.write(fh, job)
                fh.write("\n")
        finally:
            doc.close()
        return doc.errors
    graph = registry.read(reader, files, **options)
    if job:
        graph.job = job
    with _output(out) as fh:
        write_graph_document(graph, fh)
        fh.write("\n")
    return [p for p in graph.problems if p.severity == "error"]


_HELP = f"""Read lineage with READER from FILE... (or - for stdin) and print it. Nothing is sent to Atlas.

    READER is a built-in reader ({", ".join(registry.BUILTIN)}), a plugin's (`--list-readers` lists
    them all) or `auto` to pick by file content and extension; `database` reads a connection (--db-url),
    not files. Exit code 1 on bad input, with the file and place named.

    \b
    Examples:
      atlas-sync lineage sql --dialect spark etl.sql --format text
      atlas-sync lineage spark-plan plan.txt --mode operator --format text
      atlas-sync lineage openlineage events.jsonl
      atlas-sync lineage auto etl.sql --format html --columns --out etl.html
      atlas-sync lineage database --db-url postgresql://etl@db:5432/shop --format text
      atlas-sync lineage database --db-url mysql://etl@doris-fe:9030/shop -o history=doris_audit_log
    """


@click.command("lineage", context_settings={"show_default": True}, help=_HELP)
@click.argument("reader", required=False)
@click.argument("files", nargs=-1)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="json",
    help="json: the lineage document; text: operator tree or process blocks; dot: Graphviz source; "
    "svg/html: a picture drawn without Graphviz (html: hover highlight, zoom)",
)
@click.option("--out", type=click.Path(dir_okay=False, writable=True), help="write to FILE instead of stdout")
@click.option("--job", metavar="JOB", help="job name recorded in the graph [default: derived from the input]")
@click.option("--list-readers", is_flag=True, help="list the readers (built-in and plugins) and exit")
@click.option(
    "--list-options",
    is_flag=True,
    help="list each reader's options (-o NAME=VALUE; only READER's when given) and exit",
)
@click.option(
    "--columns", is_flag=True, help="dot/svg/html: draw the columns and the column lineage between them"
)
@reader_options
def lineage_cmd(
    reader: str | None,
    files: tuple[str, ...],
    fmt: str,
    out: str | None,
    job: str | None,
    list_readers: bool,
    list_options: bool,
    columns: bool,
    **kwargs: Any,
) -> None:
    """Print the lineage READER reads from FILES (the help is ``_HELP``: its reader list is the registry's)."""
    if list_readers:
        click.echo(list_readers_text())
        return
    if list_options:
        click.echo(reader_options_text(None if reader in (None, "auto") else reader))
        return
    if not reader or (not files and registry.needs_files(reader)):
        raise click.UsageError("give a READER and at least one FILE (or --list-readers)")
    options = collect_reader_options(kwargs)
    if job:
        options["job"] = job
    if reader == "auto":
        picked = registry.detect(files[0])
        click.echo(f"reader: {picked.name} (picked by --from auto)", err=True)
        reader = picked.name
    if fmt == "json":
        errors = write_json(reader, list(files), options, out, job)
        for p in errors:
            click.echo(f"error: {p}", err=True)
        if errors:
            raise SystemExit(1)
        return
    graph = registry.read(reader, list(files), **options)
    if job:
        graph.job = job
    text = render_graph(graph, fmt, columns=columns)
    if out:
        write_out(out, text + ("\n" if not text.endswith("\n") else ""))
    else:
        click.echo(text)
    for p in graph.problems:
        if p.severity == "error":
            click.echo(f"error: {p}", err=True)
    if graph.has_errors:
        raise SystemExit(1)


def print_json(data: Any) -> None:
    echo_json(data)


COMMANDS = [lineage_cmd]
