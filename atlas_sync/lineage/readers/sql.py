"""The ``sql`` reader: table and column lineage of SQL scripts, parsed with sqlglot.

Options (keyword arguments of ``read``, flags of ``atlas-sync lineage sql``):

* ``dialect`` -- a sqlglot dialect (spark, hive, snowflake, tsql, ...) or a connection type
  (doris, greenplum, azuresql, ...); default: sqlglot's generic SQL;
* ``schema`` -- a JSON file (or a mapping) ``{"db.table": ["col", ...]}`` used to expand ``SELECT *``
  and to place unqualified columns;
* ``default_schema`` -- the database/schema of unqualified table names (``USE db`` in the script
  changes it for the statements that follow);
* ``job`` -- the job scope (default: the first file's stem).

Each lineage-bearing statement becomes one ``Process(kind="statement")`` with id ``<job>:<target>:<digest>``
whatever file holds it (see :mod:`atlas_sync.lineage.sql.naming`);
a procedure or function is one process, ``<job>:<routine name>``, its statements' lineage merged
(:mod:`atlas_sync.lineage.sql.procedural`); plain SELECTs contribute the tables they read;
errors are per statement (``Problem`` with severity ``error``) unless no statement could be read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.inputs import file_job, read_text
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.sql.analyze import Context
from atlas_sync.lineage.sql.build import GraphIndex, add_statement
from atlas_sync.lineage.sql.dialects import resolve_dialect
from atlas_sync.lineage.sql.naming import routine_process_id, statement_process_id
from atlas_sync.lineage.sql.schema import SchemaStore, load_schema_file, parse_schema
from atlas_sync.lineage.sql.script import analyze_sql


def load_schema_option(schema: Any) -> dict[str, list[str]] | None:
    """The ``schema`` option: None, a path to a JSON file, or a mapping already loaded."""
    if schema is None or schema == "":
        return None
    if isinstance(schema, Mapping):
        return parse_schema(schema)
    return load_schema_file(str(schema))


# Comments and blank space before the first statement.
_LEADING_COMMENTS = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)
# Words a script's first statement starts with, then blank or `;`, so Spark plan operators
# (`InsertIntoHiveTable`, `CreateViewCommand`) do not match.
_FIRST_KEYWORD = re.compile(
    r"(?:select|insert|create|with|merge|update|delete|alter|drop|use|set|replace|truncate|comment"
    r"|declare|begin|call|exec|execute|upsert|copy|load|explain)(?=\s|;|$)",
    re.I,
)


class SqlReader:
    name = "sql"
    extensions = (".sql", ".hql", ".ddl")
    description = "SQL scripts (sqlglot, many dialects): table and column lineage with dependency kinds"

    def sniff(self, path: str, head: bytes) -> bool:
        """Text whose first statement, past comments, starts with a SQL keyword (stdin has no
        extension to go by)."""
        text = head.decode("utf-8", "replace").lstrip("\ufeff")
        start = _LEADING_COMMENTS.match(text)
        return bool(_FIRST_KEYWORD.match(text, start.end() if start else 0))

    def read(
        self,
        paths: Sequence[str],
        *,
        dialect: str | None = None,
        schema: Any = None,
        default_schema: str | None = None,
        job: str | None = None,
        **_options: Any,
    ) -> LineageGraph:
        """Read SQL files (``-`` = stdin) into one graph; see the module docstring for the options."""
        if not paths:
            raise InputError("no SQL file given")
        sqlglot_dialect = resolve_dialect(dialect)
        store = SchemaStore(load_schema_option(schema), dialect=sqlglot_dialect)
        ctx = Context.create(sqlglot_dialect, store, default_schema)
        graph = LineageGraph(job=job or file_job(paths, "sql"), job_from_name=not job, source="sql")
        job_name = graph.job or "sql"
        total = failed = 0
        first_error: tuple[str, dict[str, Any]] | None = None
        index = GraphIndex(graph)
        taken: set[str] = set()
        for path in paths:
            text = read_text(path)
            file = None if path == "-" else path
            results = analyze_sql(text, dialect=sqlglot_dialect, context=ctx)
            for st in results:
                if st.type == "EMPTY":
                    continue
                total += 1
                if st.error:
                    failed += 1
                    if first_error is None:
                        first_error = (path, next(p for p in st.problems if p["severity"] == "error"))
                        first_error[1].setdefault("statement", st.index)
                # Named by what the statement does, not where it sits nor which file holds it:
                # edits elsewhere, renaming a file or giving the files in another order rename nothing.
                if st.routine:
                    pid = routine_process_id(job_name, st.routine, taken)
                else:
                    target = st.writes[0].id if st.writes else None
                    pid = statement_process_id(job_name, target, st.text, taken)
                add_statement(graph, st, process_id=pid, file=file, dialect=sqlglot_dialect, index=index)
        if total == 0:
            raise InputError("no SQL statement found", file=paths[0] if paths[0] != "-" else None)
        if failed == total and first_error is not None:
            path, err = first_error
            raise InputError(
                err["message"],
                file=None if path == "-" else path,
                line=err.get("line"),
                column=err.get("column"),
                statement=err.get("statement"),
                hint="check the SQL and the --dialect"
                + (f" (parsed as {sqlglot_dialect})" if sqlglot_dialect else ""),
            )
        graph.add_edge_inputs()  # a MERGE's or UPDATE's target that the statement reads is an input
        return graph


READER = SqlReader()
