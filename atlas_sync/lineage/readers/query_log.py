"""The ``query-log`` reader: lineage from a database query log exported as CSV.

The CSV has OpenMetadata's ``queryLogFilePath`` columns: ``query_text`` (required), ``user_name``,
``start_time``, ``end_time``, ``database_name``, ``schema_name``, ``duration``. Only lineage-bearing
statements are kept (CTAS, INSERT ... SELECT, UPDATE, MERGE, CREATE VIEW, SELECT INTO, COPY);
identical statements (same text up to whitespace, same database/schema) are parsed once and become
one process that counts its runs. Parsing runs in chunks on a process pool (all cores by default)
with a per-statement timeout, so one pathological query cannot stall the run; every failure is kept
as a warning problem and, with ``report=PATH``, written to a JSON report (statement, error).

Options: ``dialect``, ``schema``, ``default_schema`` (for rows without ``schema_name``), ``job``,
``workers`` (default: CPU count), ``timeout`` (seconds per statement, default 10), ``chunk_size``
(default 200), ``report`` (path), ``progress`` (default: on from 1000 distinct statements),
``reporter`` (an :class:`atlas_sync.progress.Reporter`; default plain lines on stderr; the CLI's
draws a bar on a terminal).

``read_chunks`` gives the same lineage as a sequence of graphs of ``chunk_statements`` distinct
statements each (default 5000), so a consumer never holds the whole log's lineage at once.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Generator, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.inputs import file_job, read_text
from atlas_sync.lineage.model import LineageGraph, Problem
from atlas_sync.lineage.readers import audit_log
from atlas_sync.lineage.readers.options import positive_int
from atlas_sync.lineage.readers.sql import load_schema_option
from atlas_sync.lineage.sql.analyze import Context, StatementLineage
from atlas_sync.lineage.sql.build import GraphIndex, add_statement
from atlas_sync.lineage.sql.dialects import resolve_dialect
from atlas_sync.lineage.sql.naming import fingerprint
from atlas_sync.lineage.sql.schema import SchemaStore
from atlas_sync.lineage.sql.script import analyze_sql
from atlas_sync.progress import Reporter
from atlas_sync.progress import report as progress_report

AUDIT = "\x00audit"  # marks rows of a Doris audit-log export
COLUMNS = ("query_text", "user_name", "start_time", "end_time", "database_name", "schema_name", "duration")
DEFAULT_TIMEOUT = 10.0
DEFAULT_CHUNK = 200
DEFAULT_CHUNK_STATEMENTS = 5000
PROGRESS_MIN_STATEMENTS = 1000
# Cheap text test before parsing: statements that may write somewhere (as OpenMetadata's filters).
_CANDIDATE = re.compile(
    r"\b(insert|merge|update|delete|copy|replace\s+into|create\b.*\b(table|view)\b.*\b(as|select|like|clone)\b"
    r"|select\b.*\binto\b)\b",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(slots=True)
class Entry:
    """One distinct statement of the log and the runs it stands for."""

    key: str
    text: str
    default_schema: str | None
    database: str | None
    schema: str | None
    first_row: int
    file: str | None = None
    count: int = 0
    users: list[str] = field(default_factory=list)
    first_start: str | None = None
    last_start: str | None = None
    total_duration: float = 0.0
    mviews: list[str] = field(default_factory=list)  # Doris chosen_m_views: MVs the query used


class _Timeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


# Per worker process: the schema store is built once and reused for every statement.
_WORKER_STATE: dict[str, Any] = {}


def _store(dialect: str, schema: dict[str, list[str]] | None) -> SchemaStore:
    if _WORKER_STATE.get("args") != (dialect, schema) or "store" not in _WORKER_STATE:
        _WORKER_STATE["store"] = SchemaStore(schema, dialect=dialect)
        _WORKER_STATE["args"] = (dialect, schema)
    store: SchemaStore = _WORKER_STATE["store"]
    return store


def parse_chunk(
    items: list[tuple[int, str, str | None]],
    dialect: str,
    schema: dict[str, list[str]] | None,
    timeout: float,
) -> list[tuple[int, list[StatementLineage] | None, str | None]]:
    """Analyse statements one by one: (item id, results or None, error or None). Runs in a worker."""
    store = _store(dialect, schema)
    use_alarm = (
        timeout > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )
    old = signal.signal(signal.SIGALRM, _on_alarm) if use_alarm else None
    out: list[tuple[int, list[StatementLineage] | None, str | None]] = []
    try:
        for item_id, text, default_schema in items:
            ctx = Context.create(dialect, store, default_schema)
            ctx.learn = False  # log entries are independent: one must not change another's schema
            try:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, timeout)
                try:
                    results = analyze_sql(text, dialect=dialect, context=ctx)
                finally:
                    if use_alarm:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                out.append((item_id, results, None))
            except _Timeout:
                out.append((item_id, None, f"timed out after {timeout:g} s"))
            except RecursionError:
                out.append((item_id, None, "statement nested too deeply to analyse"))
            except Exception as exc:  # noqa: BLE001 - one statement must never stop the log
                out.append((item_id, None, f"internal error: {type(exc).__name__}: {exc}"))
    finally:
        if use_alarm and old is not None:
            signal.signal(signal.SIGALRM, old)
    return out


def read_log(path: str) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a query-log CSV with the line each starts on; the header must name ``query_text``."""
    text = read_text(path)
    file = None if path == "-" else path
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    # strict: an unclosed quote is an error, not a query that swallows the rest of the file.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("empty query log", file=file) from None
    except csv.Error as exc:
        raise InputError(f"invalid CSV: {exc}", file=file, line=1) from None
    names = [h.strip().lower() for h in header]
    audit = audit_log.is_audit_header(names)
    if "query_text" not in names and not audit:
        raise InputError(
            "the query log has no query_text column",
            file=file,
            line=1,
            hint="expected a CSV header with " + ", ".join(COLUMNS) + " (or a Doris audit_log export)",
        )
    start = 2
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"invalid CSV: {exc}", file=file, line=reader.line_num) from None
        line = start
        start = reader.line_num + 1
        if not row or all(not c.strip() for c in row):
            continue
        fields = {names[i]: row[i] for i in range(min(len(names), len(row)))}
        if audit:
            marked = audit_row(fields)
            if marked is None:
                continue  # failed or internal
            fields = marked
        yield line, fields


def audit_row(fields: dict[str, str]) -> dict[str, str] | None:
    """A Doris audit-log row (an export's, or the ``database`` reader's live one) as this reader's
    row: query-log column names, marked as an audit row; None for a failed or internal statement."""
    normalized = audit_log.normalize(fields)
    return None if normalized is None else {**normalized, AUDIT: "1"}


def _file_rows(paths: Sequence[str]) -> Iterator[tuple[str | None, int, dict[str, str]]]:
    for path in paths:
        for line, row in read_log(path):
            yield (None if path == "-" else path), line, row


def _truthy(value: Any) -> bool:
    """Options may arrive as text from ``-o progress=false``."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false", "no", "off")
    return bool(value)


def _float(value: str | None) -> float:
    try:
        return float(value) if value not in (None, "") else 0.0
    except ValueError:
        return 0.0


class QueryLogReader:
    name = "query-log"
    extensions = (".querylog.csv", ".query_log.csv")
    description = "query logs as CSV (OpenMetadata queryLogFilePath columns), parsed in parallel"

    def sniff(self, path: str, head: bytes) -> bool:
        first = head.split(b"\n", 1)[0].lower()
        audit = b"stmt" in first and b"queried_tables_and_views" in first  # a Doris audit_log export
        return (b"query_text" in first or audit) and path.lower().endswith(".csv")

    def read(self, paths: Sequence[str], **options: Any) -> LineageGraph:
        """Read query-log CSV files into one graph; see the module docstring for the options."""
        options.pop("chunk_statements", None)
        return next(self._run(paths, None, **options))

    def read_rows(
        self, rows: Iterable[tuple[str | None, int, dict[str, str]]], **options: Any
    ) -> LineageGraph:
        """The lineage of query-log rows that come from elsewhere (the ``database`` reader's query
        history): ``(file or None, row number, {column: value})`` with the CSV's column names, plus
        an optional ``runs`` (how many times the statement ran). Options as for ``read``."""
        options.pop("chunk_statements", None)
        return next(self._run([], None, rows=rows, **options))

    def read_chunks(
        self, paths: Sequence[str], *, chunk_statements: Any = None, **options: Any
    ) -> Iterator[LineageGraph]:
        """Read query-log CSV files as self-contained graphs of ``chunk_statements`` (default 5000)
        distinct statements each, in log order (the contract of
        :func:`atlas_sync.lineage.registry.read_chunks`). The summary statement is in the last chunk;
        "none could be analysed" is raised after the other chunks were yielded."""
        n = positive_int(chunk_statements, DEFAULT_CHUNK_STATEMENTS, "chunk_statements")
        return self._run(paths, n, **options)

    def _run(
        self,
        paths: Sequence[str],
        per_chunk: int | None,
        *,
        rows: Iterable[tuple[str | None, int, dict[str, str]]] | None = None,
        dialect: str | None = None,
        schema: Any = None,
        default_schema: str | None = None,
        job: str | None = None,
        workers: int | None = None,
        timeout: float | None = None,
        chunk_size: int | None = None,
        report: str | None = None,
        progress: bool | None = None,
        reporter: Reporter | None = None,
        **_options: Any,
    ) -> Iterator[LineageGraph]:
        """The reader's core: graphs of ``per_chunk`` distinct statements each (``None``: one graph)."""
        if not paths and rows is None:
            raise InputError("no query log given")
        source = (None if paths[0] == "-" else paths[0]) if paths else None
        sqlglot_dialect = resolve_dialect(dialect)
        schema_map = load_schema_option(schema)
        timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
        chunk = max(1, int(chunk_size or DEFAULT_CHUNK))
        workers = max(1, int(workers or os.cpu_count() or 1))
        job_name = job or (file_job(paths) if paths else "query-log")

        entries: dict[str, Entry] = {}
        n_rows = skipped = 0
        reads = audit_log.ReadLineage()  # Doris audit log: read-only queries, per user
        seen_audit = False
        for file, line, row in _file_rows(paths) if rows is None else rows:
            n_rows += 1
            text = (row.get("query_text") or "").strip()
            audit = row.get(AUDIT) == "1"
            seen_audit = seen_audit or audit
            if not text or not _CANDIDATE.search(text):
                if not (audit and reads.add(row)):
                    skipped += 1
                continue
            database = (row.get("database_name") or "").strip() or None
            schema_name = (row.get("schema_name") or "").strip() or None
            qualified = f"{database}.{schema_name}" if audit and database and schema_name else schema_name
            key = "\x1f".join((database or "", schema_name or "", fingerprint(text)))
            e = entries.get(key)
            if e is None:
                e = entries[key] = Entry(
                    key=key,
                    text=text,
                    default_schema=qualified or default_schema,
                    database=database,
                    schema=schema_name,
                    first_row=line,
                    file=file,
                )
            e.count += int(_float(row.get("runs")) or 1)
            user = (row.get("user_name") or "").strip()
            if user and user not in e.users and len(e.users) < 50:
                e.users.append(user)
            started = (row.get("start_time") or "").strip() or None
            if started:
                e.first_start = min(e.first_start or started, started)
                e.last_start = max(e.last_start or started, started)
            e.total_duration += _float(row.get("duration"))
            if audit:
                e.mviews += [v for v in audit_log.names(row.get("chosen_m_views")) if v not in e.mviews]

        if seen_audit and dialect is None:
            sqlglot_dialect = resolve_dialect("doris")
        if n_rows == 0:
            raise InputError(
                "the query log has no rows",
                file=source,
                hint="expected a CSV header and one row per query",
            )
        # Entries are dropped from this list once their process is built (a chunk holds the text).
        ordered: list[Entry | None] = list(entries.values())
        total = len(ordered)
        # The dedup keys were only needed while counting runs; the process ids use their digests.
        for e in entries.values():
            e.key = hashlib.sha1(e.key.encode("utf-8")).hexdigest()[:12]
        entries.clear()
        # Progress by default only for logs big enough to take a while.
        quiet = total < PROGRESS_MIN_STATEMENTS if progress is None else not _truthy(progress)

        # Failures are kept whole only for the report; otherwise their count and the first one.
        failures: list[dict[str, Any]] = []
        n_failures = 0
        first_failure: dict[str, Any] | None = None

        def failed(e: Entry, statement: str, error: str | None) -> None:
            nonlocal n_failures, first_failure
            item = {"file": e.file, "row": e.first_row, "statement": statement, "error": error}
            n_failures += 1
            if first_failure is None:
                first_failure = item
            if report:
                failures.append(item)

        def new_graph() -> tuple[LineageGraph, GraphIndex]:
            # (every chunk says so: a job taken from the file's name is no process's identity)
            g = LineageGraph(job=job_name, job_from_name=not job and bool(paths), source="query-log")
            return g, GraphIndex(g)

        kept = in_chunk = 0
        graph, index = new_graph()
        base = job_name or "query-log"
        # Results arrive in log order and are added to the graph at once, so only a few chunks of
        # parse results are alive at a time: memory follows the graph, not the parse state.
        outcomes = self._parse_all(
            ordered, sqlglot_dialect, schema_map, timeout, chunk, workers, quiet, reporter
        )
        try:
            for i, results, error in outcomes:
                e = ordered[i]
                ordered[i] = None
                assert e is not None
                kept += self._add_entry(graph, index, e, results, error, base, sqlglot_dialect, failed)
                e = results = None  # not kept alive while the consumer holds the chunk
                in_chunk += 1
                # The last chunk is yielded after the loop, with the summary.
                if per_chunk is not None and in_chunk >= per_chunk and i + 1 < total:
                    graph.add_edge_inputs()  # (as the SQL reader: a target it reads is an input)
                    yield graph
                    graph, index = new_graph()
                    in_chunk = 0
        finally:
            outcomes.close()  # an abandoned iteration shuts the worker pool down
        if reads.users:
            kept += reads.add_to(index, base)
        summary = {
            "rows": n_rows,
            "skipped_not_lineage": skipped,
            "distinct_statements": total,
            "processes": kept,
            "failures": n_failures,
        }
        graph.statements.append({"type": "QUERY LOG SUMMARY", **summary})
        if report:
            self._write_report(report, summary, failures)
        if n_rows and total and n_failures == total and kept == 0 and first_failure is not None:
            raise InputError(
                f"none of the {total} lineage-bearing statements could be analysed "
                f"(first: {first_failure['error']})",
                file=source,
                line=first_failure["row"],
                hint="check --dialect" + (f"; failures are listed in {report}" if report else ""),
            )
        graph.add_edge_inputs()
        yield graph

    @staticmethod
    def _add_entry(
        graph: LineageGraph,
        index: GraphIndex,
        e: Entry,
        results: list[StatementLineage] | None,
        error: str | None,
        base: str,
        dialect: str,
        failed: Any,
    ) -> int:
        """Add one distinct statement's parse outcome to ``graph``; returns the processes added."""
        if error is not None or results is None:
            failed(e, e.text, error)
            graph.problems.append(
                Problem(
                    message=f"not analysed: {error}",
                    severity="warning",
                    code="sql-timeout" if error and "timed out" in error else "sql-failed",
                    line=e.first_row,
                    file=e.file,
                )
            )
            return 0
        kept = 0
        digest = e.key
        for st in results:
            if st.error:
                msg = next((p["message"] for p in st.problems if p["severity"] == "error"), "error")
                failed(e, st.text, msg)
                graph.problems.append(
                    Problem(message=msg, severity="warning", code="sql-parse", line=e.first_row, file=e.file)
                )
                continue
            if not st.lineage_bearing or st.type == "INSERT VALUES" or not (st.reads or st.edges):
                continue  # a write of literal values (INSERT ... VALUES, UPDATE t SET x = 1): no lineage
            pid = f"{base}:{digest}" if st.index == 1 else f"{base}:{digest}:{st.index}"
            attrs: dict[str, Any] = {"runs": e.count, "firstRow": e.first_row}
            if e.users:
                attrs["users"] = e.users
            if e.database:
                attrs["databaseName"] = e.database
            if e.schema:
                attrs["schemaName"] = e.schema
            if e.first_start:
                attrs["firstStartTime"] = e.first_start
                attrs["lastStartTime"] = e.last_start
            if e.total_duration:
                attrs["totalDuration"] = e.total_duration
            # Warnings keep the log row, not the statement's line inside the query text.
            st.line = e.first_row
            for p in st.problems:
                p["line"] = e.first_row
                p.pop("column", None)
            process = add_statement(
                graph,
                st,
                process_id=pid,
                file=e.file,
                dialect=dialect,
                attributes=attrs,
                statement_doc=False,
                index=index,
            )
            if process is not None and e.mviews:
                audit_log.add_views(index, process, e.mviews)
            kept += 1
        return kept

    # ------------------------------------------------------------------ parallel parsing
    @staticmethod
    def _parse_all(
        entries: list[Entry | None],
        dialect: str,
        schema: dict[str, list[str]] | None,
        timeout: float,
        chunk: int,
        workers: int,
        quiet: bool,
        reporter: Reporter | None = None,
    ) -> Generator[tuple[int, list[StatementLineage] | None, str | None], None, None]:
        """(entry index, results or None, error or None) for every entry, in entry order.

        Chunks are made and submitted lazily and at most ``2 * workers`` are in flight; results that
        arrive ahead of an earlier, slower chunk wait in a buffer, and no new chunk is submitted while
        that buffer is large, so the parse state held at any time is bounded by a few chunks."""
        total = len(entries)

        def chunks() -> Iterator[list[tuple[int, str, str | None]]]:
            # Entries are submitted before their results are consumed (and dropped by the caller).
            for lo in range(0, total, chunk):
                items = []
                for i in range(lo, min(lo + chunk, total)):
                    e = entries[i]
                    assert e is not None
                    items.append((i, e.text, e.default_schema))
                e = None  # the caller drops consumed entries; this generator must not keep one
                yield items

        with progress_report("query-log statements", quiet=quiet, reporter=reporter) as update:
            if workers == 1 or total <= chunk:
                for c in chunks():
                    yield from parse_chunk(c, dialect, schema, timeout)
                    update(c[-1][0] + 1, total)
                return
            ready: dict[int, tuple[list[StatementLineage] | None, str | None]] = {}
            next_id = 0
            max_ahead = 4 * workers * chunk
            # Chunk deadline: every statement may take the full timeout, plus start-up slack.
            deadline = chunk * timeout + 60 if timeout > 0 else None
            todo = chunks()
            exhausted = False
            with ProcessPoolExecutor(max_workers=min(workers, -(-total // chunk))) as pool:
                pending: dict[Future[Any], tuple[list[tuple[int, str, str | None]], float]] = {}
                while not exhausted or pending:
                    while not exhausted and len(pending) < workers * 2 and len(ready) < max_ahead:
                        try:
                            c = next(todo)
                        except StopIteration:
                            exhausted = True
                            break
                        pending[pool.submit(parse_chunk, c, dialect, schema, timeout)] = (c, time.monotonic())
                    done, _ = wait(list(pending), timeout=1.0, return_when=FIRST_COMPLETED)
                    for fut in done:
                        c, _t = pending.pop(fut)
                        try:
                            for item_id, results, error in fut.result():
                                ready[item_id] = (results, error)
                        except Exception as exc:  # noqa: BLE001 - a dead worker fails its chunk only
                            for item_id, _text, _s in c:
                                ready[item_id] = (None, f"worker failed: {type(exc).__name__}")
                    if deadline is not None:
                        now = time.monotonic()
                        for fut, (c, t0) in list(pending.items()):
                            if now - t0 > deadline and fut.cancel():
                                pending.pop(fut)
                                for item_id, _text, _s in c:
                                    ready[item_id] = (None, "chunk timed out")
                    while next_id in ready:
                        results, error = ready.pop(next_id)
                        yield next_id, results, error
                        next_id += 1
                    update(next_id, total)
            while next_id < total:  # not reached unless a chunk vanished; keep every entry accounted
                results, error = ready.pop(next_id, (None, "not parsed"))
                yield next_id, results, error
                next_id += 1

    @staticmethod
    def _write_report(path: str, summary: dict[str, Any], failures: list[dict[str, Any]]) -> None:
        try:
            Path(path).write_text(
                json.dumps({"summary": summary, "failures": failures}, indent=2, ensure_ascii=False) + "\n",
                encoding="utf-8",
            )
        except OSError as exc:
            raise InputError(f"cannot write the report: {exc.strerror}", file=path) from None


READER = QueryLogReader()
