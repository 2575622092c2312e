"""What each built-in reader takes as options (``-o name=value``, or keywords of ``read``): one table,
which the registry checks every read against, so that an unknown name is an error, not a silent no-op."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReaderOption:
    """One option a reader takes: its ``name`` (``-o name=value``, or a keyword of ``read``), the
    ``type`` of value it wants (as help says it: ``text``, ``int``, ``bool``, ``file``, ``list``,
    ``map``), and a one-line ``help``."""

    name: str
    type: str
    help: str


def _o(name: str, type_: str, help_: str) -> ReaderOption:
    return ReaderOption(name, type_, help_)


# What atlas-sync gives every reader itself (a reader that has no use for one ignores it).
COMMON: tuple[ReaderOption, ...] = (
    _o("job", "text", "the job name recorded in the graph (sync's --job)"),
    _o("progress", "bool", "show progress while reading (readers with their own progress)"),
    _o("reporter", "object", "where progress goes (the CLI's bar; Python API only)"),
)

_DIALECT = _o("dialect", "text", "SQL dialect (sqlglot names: spark, postgres, tsql, ...)")
_DEFAULT_SCHEMA = _o("default_schema", "text", "database/schema of unqualified table names")
_SCHEMA = _o("schema", "file", 'table schemas {"db.table": [columns]} for star expansion')
_CONNECTION_MAP = _o(
    "connection_map", "map", "connection -> metadata namespace (the name other readers give the warehouse)"
)
_QUERY_LOG = (
    _o("workers", "int", "parallel parse processes (default: the CPU count)"),
    _o("timeout", "float", "seconds per statement (default 10)"),
    _o("chunk_size", "int", "statements per parse task (default 200)"),
    _o("report", "file", "write the statements that failed to this JSON report"),
)
_SPARK = (
    _o("mode", "text", "job: one process per job; operator: one per plan operator (pico profile)"),
    _o("path", "list", "path of file relations without one (comma list: one per file)"),
    _o("section", "text", "explain section to read: analyzed (default), optimized, parsed"),
    _o("explain", "file", "explain(extended=True) output holding file locations"),
)
_TUNNEL = (_CONNECTION_MAP, _DEFAULT_SCHEMA, _DIALECT)

# reader name -> its options (besides COMMON)
BUILTIN_OPTIONS: dict[str, tuple[ReaderOption, ...]] = {
    "graph": (_o("chunk_processes", "int", "processes per chunk of a streamed sync (default 5000)"),),
    "spark-plan": _SPARK,
    "spark-json": _SPARK,
    "sql": (_DIALECT, _SCHEMA, _DEFAULT_SCHEMA),
    "query-log": (
        _DIALECT,
        _SCHEMA,
        _DEFAULT_SCHEMA,
        *_QUERY_LOG,
        _o("chunk_statements", "int", "distinct statements per chunk of a streamed sync (default 5000)"),
    ),
    "hive-lineage": (),
    "openlineage": (
        _o("namespace_map", "map", "OpenLineage namespace -> metadata namespace (TOML/JSON file)"),
        _o("event_types", "list", "only these event types (e.g. COMPLETE,RUNNING; sync: COMPLETE)"),
        _o("prefer_symlinks", "bool", "name a dataset by its TABLE symlink (default true)"),
        _o("strict", "bool", "reject a whole event for one malformed facet (default: drop the facet)"),
        _o("lenient_events", "bool", "accept events without eventTime, runIds that are not UUIDs"),
    ),
    "seatunnel": (_o("variables", "map", "values of ${KEY} (like seatunnel -i KEY=VALUE)"), *_TUNNEL),
    "whaletunnel": _TUNNEL,
    "dbt": (
        _o("select", "list", "only these nodes (dbt selection: name, tag:T, path:P, +name, ...)"),
        _o("run_results", "file", "only the nodes that ran in this run_results.json"),
        _o("catalog", "file", "another catalog.json (false: none)"),
        _o("dialect", "text", "SQL dialect of the compiled SQL (default: the manifest's adapter)"),
    ),
    "database": (
        _o("db_url", "text", "the connection, as SQLAlchemy spells it (no password in it)"),
        _o("db_password_file", "file", "file holding the password (first line)"),
        _o("passes", "list", "views, procedures, queries (default: all)"),
        _o("schemas", "list", "only these schemas (comma list)"),
        _o("exclude_schemas", "list", "not these schemas (comma list)"),
        _o("query_template", "file", "the query history's SQL template"),
        _o("query_filters", "text", "SQL added to the history query's WHERE (AND ...)"),
        _o("query_limit", "int", "history statements read (default 1000)"),
        _o("query_window", "int", "hours of history read (default 24)"),
        _o("history", "text", "performance_schema or doris_audit_log (MySQL-protocol servers)"),
        _o("connect_timeout", "int", "seconds to connect (default 10)"),
        _DIALECT,
        *_QUERY_LOG,
    ),
    "superset": (
        _CONNECTION_MAP,
        _o("superset_url", "text", "read a live Superset's API instead of an export"),
        _o("select", "list", "only these dashboards (title, id or uuid)"),
        _o("page_size", "int", "API page size (default 100)"),
        _o("workers", "int", "parallel API reads (default 4)"),
    ),
    "lookml": (
        _CONNECTION_MAP,
        _DIALECT,
        _DEFAULT_SCHEMA,
        _o("user_attributes", "map", "values of {{ _user_attributes['name'] }} (k=v,k2=v2)"),
        _o("project", "text", "the project's name (default: the manifest's project_name)"),
    ),
    "tableau": (_CONNECTION_MAP,),
    "powerbi": (_CONNECTION_MAP,),
}
