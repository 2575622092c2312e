"""What each SeaTunnel connector reads or writes: connector knowledge kept as data.

Taken from SeaTunnel's connector documentation (``docs/en/connector-v2/source/*.md`` and
``sink/*.md`` of apache/seatunnel) and its plugin list (``plugin-mapping.properties``). One
:class:`Naming` per connector and role says which options name the datasets; :func:`name_datasets`
applies the general rules:

* ``forms``: options joined outermost first (``database`` + ``table``), each value may itself be
  dotted; an outer part is not repeated when the inner value already starts with it
  (``database = "dw"``, ``table = "dw.orders"``). The last option of a form is the dataset's own
  name: the form applies only when it (or its default) is set.
* ``names``: options holding a list (or a comma-separated string) of full names, each a dataset
  (CDC ``table-names``); ``scope`` prefixes names given with fewer parts.
* ``multi``: list options whose entries are the connector's own options for one table
  (``table_list``, ``tables_configs``, ``index_list``); each entry is named like the flat options,
  falling back to the outer ones.
* ``query``: an option holding a SQL query; its tables are read (sources) or written (a sink's
  ``INSERT``), qualified by ``scope`` or the JDBC URL's database.
* ``defaults``: documented defaults, used only when nothing explicit names the dataset (the JDBC sink's
  ``table`` defaults to ``${table_name}``, the upstream table).
* ``wildcard``: options that, without names, mean "every table of these databases" (no dataset can be
  named); ``pattern``: an option making the name a regular expression (no dataset either).

Sink options are first resolved per upstream table: ``${database_name}``, ``${schema_name}``,
``${table_name}``, ``${schema_full_name}``, ``${table_full_name}`` (and ``${name:default}``), as
SeaTunnel's ``TablePlaceholderProcessor`` does. Test-only connectors (data generators, assertion and
console sinks) and notification sinks name no dataset (kind ``none``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.lineage.model import split_dotted

# Dataset kinds this module produces (free-text kinds of the lineage model).
TABLE, FILE, TOPIC, QUEUE, INDEX, COLLECTION, ENDPOINT, KEY, GRAPH = (
    "table",
    "file",
    "topic",
    "queue",
    "index",
    "collection",
    "endpoint",
    "key",
    "graph",
)
NONE = "none"  # names no external dataset


@dataclass(frozen=True)
class Naming:
    """How one connector's options name the datasets it reads (source) or writes (sink)."""

    kind: str
    forms: tuple[tuple[str, ...], ...] = ()
    names: tuple[str, ...] = ()
    multi: tuple[str, ...] = ()
    query: str | None = None
    scope: str | None = None
    url_database: bool = False
    defaults: Mapping[str, str] = field(default_factory=dict)
    wildcard: tuple[str, ...] = ()
    pattern: str | None = None
    affixes: tuple[str, str] | None = None  # options adding a prefix / suffix to the table name
    base: tuple[str, ...] = ()  # file connectors: options holding the URI the path is under
    scheme: str = ""  # file connectors: prefix otherwise (``{host}`` is filled from the options)
    note: str = ""  # what a connector naming no dataset gives instead (docs)


@dataclass(frozen=True)
class Connector:
    name: str
    source: Naming | None = None
    sink: Naming | None = None
    test_only: bool = False


def _file(scheme: str, *, multi: bool = False) -> Naming:
    return Naming(
        FILE,
        forms=(("path",),),
        multi=("tables_configs",) if multi else (),
        base=("bucket", "fs.defaultFS"),
        scheme=scheme,
    )


_GENERATOR = Naming(
    NONE,
    note="test data generator: no dataset; its `schema` fields flow on as the job's fields, "
    "and its `schema.table` (or `tables_configs`) names the upstream table for sink placeholders",
)
_TEST_SINK = Naming(NONE, note="test/debug sink: prints or checks rows, no dataset")
_NOTIFY = Naming(NONE, note="notification sink: sends messages, no dataset")
_SOCKET = Naming(NONE, note="raw text over a TCP socket (testing): no dataset")
_HTTP = Naming(ENDPOINT, forms=(("url",),))
_JDBC_SOURCE = Naming(
    TABLE, forms=(("table_path",),), multi=("table_list",), query="query", url_database=True
)
_JDBC_SINK = Naming(
    TABLE,
    forms=(("database", "table"),),
    query="query",
    url_database=True,
    defaults={"table": "${table_name}"},
    affixes=("tablePrefix", "tableSuffix"),
)
_CDC = Naming(TABLE, names=("table-names",), wildcard=("database-names", "schema-names"))
_DB_TABLE = Naming(TABLE, forms=(("database", "table"),), multi=("table_list",))


CONNECTORS: tuple[Connector, ...] = (
    # Relational databases (Jdbc covers the MySQL, PostgreSQL, Oracle, SQL Server, DB2, ... pages)
    Connector("Jdbc", source=_JDBC_SOURCE, sink=_JDBC_SINK),
    Connector("MySQL-CDC", source=_CDC),
    Connector("Postgres-CDC", source=_CDC),
    Connector("SqlServer-CDC", source=_CDC),
    Connector("Oracle-CDC", source=_CDC),
    Connector("Opengauss-CDC", source=_CDC),
    Connector("TiDB-CDC", source=Naming(TABLE, forms=(("database-name", "table-name"),))),
    Connector(
        "MongoDB-CDC",
        source=Naming(COLLECTION, names=("collection",), scope="database", wildcard=("database",)),
    ),
    # Warehouses, lakes and catalogs
    Connector("Hive", source=Naming(TABLE, forms=(("table_name",),), multi=("table_list",)),
              sink=Naming(TABLE, forms=(("table_name",),))),
    Connector("Iceberg", source=Naming(TABLE, forms=(("namespace", "table"),), multi=("table_list",),
                                       defaults={"namespace": "default"}),
              sink=Naming(TABLE, forms=(("namespace", "table"),),
                          defaults={"namespace": "default", "table": "${table_name}"})),
    Connector("Paimon", source=_DB_TABLE,
              sink=Naming(TABLE, forms=(("database", "table"),), defaults={"table": "${table_name}"})),
    Connector("hudi", sink=Naming(TABLE, forms=(("database", "table_name"),), multi=("table_list",),
                                  defaults={"database": "default"})),
    Connector("Doris", source=_DB_TABLE,
              sink=Naming(TABLE, forms=(("table.identifier",), ("database", "table")),
                          defaults={"database": "${database_name}", "table": "${table_name}"})),
    Connector("StarRocks", source=_DB_TABLE,
              sink=Naming(TABLE, forms=(("database", "table"),), defaults={"table": "${table_name}"})),
    Connector("SelectDBCloud", sink=Naming(TABLE, forms=(("table.identifier",),))),
    Connector("Clickhouse", source=Naming(TABLE, query="sql", scope="database"),
              sink=Naming(TABLE, forms=(("database", "table"),))),
    Connector("ClickhouseFile", sink=Naming(TABLE, forms=(("database", "table"),))),
    Connector("Maxcompute", source=Naming(TABLE, forms=(("project", "table_name"),)),
              sink=Naming(TABLE, forms=(("project", "table_name"),))),
    Connector("S3Redshift", sink=_file("s3://")),
    Connector("Druid", sink=Naming(TABLE, forms=(("datasource",),))),
    # Wide-column, key-value and time-series stores
    Connector("Kudu", source=Naming(TABLE, forms=(("table_name",),), multi=("table_list",)),
              sink=Naming(TABLE, forms=(("table_name",),), multi=("table_list",),
                          defaults={"table_name": "${table_full_name}"})),
    Connector("Hbase", source=Naming(TABLE, forms=(("table",),)), sink=Naming(TABLE, forms=(("table",),))),
    Connector("Cassandra", source=Naming(TABLE, query="cql", scope="keyspace"),
              sink=Naming(TABLE, forms=(("keyspace", "table"),))),
    Connector("Tablestore", source=Naming(TABLE, forms=(("instance_name", "table"),)),
              sink=Naming(TABLE, forms=(("instance_name", "table"),))),
    Connector("AmazonDynamodb", source=Naming(TABLE, forms=(("table",),)),
              sink=Naming(TABLE, forms=(("table",),))),
    Connector("Redis", source=Naming(KEY, forms=(("db_num", "keys"),), defaults={"db_num": "0"}),
              sink=Naming(KEY, forms=(("db_num", "key"),), defaults={"db_num": "0"})),
    Connector("InfluxDB", source=Naming(TABLE, query="sql", scope="database"),
              sink=Naming(TABLE, forms=(("database", "measurement"),),
                          defaults={"measurement": "${table_full_name}"})),
    Connector("TDengine", source=Naming(TABLE, forms=(("database", "stable"),)),
              sink=Naming(TABLE, forms=(("database", "stable"),))),
    Connector("IoTDB", source=Naming(TABLE, query="sql"), sink=Naming(TABLE, forms=(("storage_group",),))),
    Connector("OpenMldb", source=Naming(TABLE, query="sql", scope="database")),
    Connector("Neo4j", source=Naming(GRAPH, forms=(("database",),)), sink=Naming(GRAPH, forms=(("database",),))),
    Connector("GoogleSheets", source=Naming(TABLE, forms=(("sheet_id", "sheet_name"),))),
    # Document stores, search and vector databases
    Connector("MongoDB", source=Naming(COLLECTION, forms=(("database", "collection"),)),
              sink=Naming(COLLECTION, forms=(("database", "collection"),))),
    Connector("Elasticsearch", source=Naming(INDEX, forms=(("index",),), multi=("index_list",)),
              sink=Naming(INDEX, forms=(("index",),))),
    Connector("Easysearch", source=Naming(INDEX, forms=(("index",),)), sink=Naming(INDEX, forms=(("index",),))),
    Connector("Typesense", source=Naming(COLLECTION, forms=(("collection",),)),
              sink=Naming(COLLECTION, forms=(("collection",),))),
    Connector("Milvus", source=Naming(COLLECTION, forms=(("database", "collection"),),
                                      defaults={"database": "default"}, wildcard=("database",)),
              sink=Naming(COLLECTION, forms=(("database", "collection"),),
                          defaults={"database": "${database_name}", "collection": "${table_name}"})),
    Connector("Qdrant", source=Naming(COLLECTION, forms=(("collection_name",),)),
              sink=Naming(COLLECTION, forms=(("collection_name",),))),
    Connector("GoogleFirestore", sink=Naming(COLLECTION, forms=(("project_id", "collection"),))),
    # Queues and logs
    Connector("Kafka", source=Naming(TOPIC, forms=(("topic",),), multi=("table_list",), pattern="pattern"),
              sink=Naming(TOPIC, forms=(("topic",),))),
    Connector("Pulsar", source=Naming(TOPIC, forms=(("topic",),), pattern="topic-pattern"),
              sink=Naming(TOPIC, forms=(("topic",),))),
    Connector("Rocketmq", source=Naming(TOPIC, forms=(("topics",),)), sink=Naming(TOPIC, forms=(("topic",),))),
    Connector("RabbitMQ", source=Naming(QUEUE, forms=(("queue_name",),)),
              sink=Naming(QUEUE, forms=(("queue_name",),))),
    Connector("ActiveMQ", sink=Naming(QUEUE, forms=(("queue_name",),))),
    Connector("AmazonSqs", source=Naming(QUEUE, forms=(("url",),)), sink=Naming(QUEUE, forms=(("url",),))),
    Connector("DataHub", sink=Naming(TOPIC, forms=(("project", "topic"),))),
    Connector("Sls", source=Naming(TOPIC, forms=(("project", "logstore"),)),
              sink=Naming(TOPIC, forms=(("project", "logstore"),))),
    # Files
    Connector("LocalFile", source=_file("file://", multi=True), sink=_file("file://")),
    Connector("HdfsFile", source=_file("hdfs://", multi=True), sink=_file("hdfs://")),
    Connector("S3File", source=_file("s3a://", multi=True), sink=_file("s3a://")),
    Connector("OssFile", source=_file("oss://", multi=True), sink=_file("oss://")),
    Connector("OssJindoFile", source=_file("oss://", multi=True), sink=_file("oss://")),
    Connector("CosFile", source=_file("cosn://", multi=True), sink=_file("cosn://")),
    Connector("ObsFile", source=_file("obs://", multi=True), sink=_file("obs://")),
    Connector("FtpFile", source=_file("ftp://{host}", multi=True), sink=_file("ftp://{host}")),
    Connector("SftpFile", source=_file("sftp://{host}", multi=True), sink=_file("sftp://{host}")),
    # HTTP APIs (the dataset is the endpoint)
    Connector("Http", source=_HTTP, sink=_HTTP),
    *(
        Connector(n, source=_HTTP)
        for n in ("MyHours", "Lemlist", "Klaviyo", "OneSignal", "Jira", "Gitlab", "Github", "Notion",
                  "Persistiq", "Web3j")
    ),
    # Messages, tests
    *(Connector(n, sink=_NOTIFY) for n in ("DingTalk", "Feishu", "Slack", "EmailSink", "Sentry")),
    Connector("Socket", source=_SOCKET, sink=_SOCKET, test_only=True),
    Connector("FakeSource", source=_GENERATOR, test_only=True),
    Connector("Console", sink=_TEST_SINK, test_only=True),
    Connector("Assert", sink=_TEST_SINK, test_only=True),
)  # fmt: skip


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


_BY_KEY = {_key(c.name): c for c in CONNECTORS}
# Names SeaTunnel also accepts or its docs use for the same plugin.
_ALIASES = {"mysqlcdc": "MySQL-CDC", "postgrescdc": "Postgres-CDC", "postgresqlcdc": "Postgres-CDC",
            "email": "EmailSink", "selectdbcloud": "SelectDBCloud", "amazondynamodb": "AmazonDynamodb",
            "rocketmq": "Rocketmq", "datahub": "DataHub", "fake": "FakeSource"}  # fmt: skip


def connector(plugin: str) -> Connector | None:
    """The registry entry of a plugin name (case, ``-`` and ``_`` do not matter), or None."""
    key = _key(plugin)
    if key in _BY_KEY:
        return _BY_KEY[key]
    alias = _ALIASES.get(key)
    return _BY_KEY[_key(alias)] if alias else None


def naming_of(plugin: str, role: str) -> Naming | None:
    """The naming rule of ``plugin`` as a ``source`` or ``sink``; None when unknown."""
    c = connector(plugin)
    if c is None:
        return None
    return c.source if role == "source" else c.sink


# ------------------------------------------------------------------------------------- placeholders
_PLACEHOLDER = re.compile(
    r"\$\{(database_name|schema_name|table_name|schema_full_name|table_full_name)(?::([^}]*))?\}"
)


def has_placeholder(value: Any) -> bool:
    if isinstance(value, str):
        return bool(_PLACEHOLDER.search(value))
    if isinstance(value, Mapping):
        return any(has_placeholder(v) for v in value.values())
    if isinstance(value, list):
        return any(has_placeholder(v) for v in value)
    return False


def identifier(parts: Sequence[str]) -> dict[str, str | None]:
    """SeaTunnel's TableIdentifier of a name: ``db.schema.table``, ``db.table`` or ``table``."""
    p = list(parts)
    return {
        "database_name": p[-3] if len(p) >= 3 else (p[0] if len(p) == 2 else None),
        "schema_name": p[-2] if len(p) >= 3 else None,
        "table_name": p[-1] if p else None,
    }


def substitute(value: Any, ident: Mapping[str, str | None]) -> Any:
    """Resolve table placeholders in every string of ``value`` for one upstream table."""
    if isinstance(value, Mapping):
        return {k: substitute(v, ident) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, ident) for v in value]
    if not isinstance(value, str):
        return value
    db, schema, table = ident.get("database_name"), ident.get("schema_name"), ident.get("table_name")
    prefix = [x for x in (db, schema) if x]
    values = {
        "database_name": db,
        "schema_name": schema,
        "table_name": table,
        "schema_full_name": ".".join(prefix) or None,
        "table_full_name": ".".join([*prefix, table]) if table else None,
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)] or (m.group(2) or ""), value)


# ------------------------------------------------------------------------------------------ naming
_ROW_FIELD = re.compile(r"\$\{([^}:]+)\}")
_REGEX = re.compile(r"[\\^$*+?()\[\]|{}]")


@dataclass
class Named:
    """Datasets named by one connector's options, and why some could not be."""

    names: list[tuple[list[str], str]] = field(default_factory=list)  # (name parts, kind)
    declared: list[list[str] | None] = field(default_factory=list)  # each name's ``schema.table``
    queries: list[tuple[str, list[str]]] = field(default_factory=list)  # (SQL, scope parts)
    problems: list[str] = field(default_factory=list)


def option(opts: Mapping[str, Any], key: str) -> Any:
    """An option by its documented key: HOCON reads ``table.identifier = x`` as nested objects."""
    if key in opts:
        return opts[key]
    node: Any = opts
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _list(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [s.strip() for x in items if (t := _text(x)) for s in t.split(",") if s.strip()]


def join_names(outer: list[str], inner: list[str]) -> list[str]:
    """Prefix ``inner`` with ``outer`` unless it already starts with it."""
    if outer and inner[: len(outer)] == outer:
        return inner
    if outer and len(inner) > 1 and inner[0] == outer[-1]:
        return [*outer[:-1], *inner]
    return [*outer, *inner]


def _split(value: str, kind: str) -> list[str]:
    if kind in (FILE, ENDPOINT, QUEUE, KEY, TOPIC, INDEX):
        return [value]  # one name, dots included (Kafka's `orders.v1`)
    return split_dotted(value)


def name_datasets(
    naming: Naming, opts: Mapping[str, Any], *, url_database: str | None = None, _depth: int = 0
) -> Named:
    """The datasets ``opts`` name under ``naming`` (general rules; see the module doc)."""
    out = Named()
    if naming.kind == NONE:
        return out
    for key in naming.multi:
        entries = option(opts, key)
        if _depth == 0 and isinstance(entries, list) and any(isinstance(e, Mapping) for e in entries):
            outer = {k: v for k, v in opts.items() if k not in naming.multi}
            for e in entries:
                if isinstance(e, Mapping):
                    sub = name_datasets(naming, {**outer, **e}, url_database=url_database, _depth=1)
                    declared = upstream_table(e)
                    for parts, kind in sub.names:
                        if parts not in [n for n, _ in out.names]:
                            out.names.append((parts, kind))
                            out.declared.append(declared)
                    out.queries += sub.queries
                    out.problems += sub.problems
            return out
    flag = option(opts, naming.pattern) if naming.pattern else None
    if flag is True or str(flag).lower() == "true":
        value = next((_text(option(opts, f[-1])) for f in naming.forms if _text(option(opts, f[-1]))), None)
        out.problems.append(
            f"reads the {naming.kind}s matching the pattern {value!r}; no dataset can be named"
        )
        return out
    scope = (
        split_dotted(s) if naming.scope and (s := _text(option(opts, naming.scope))) and "," not in s else []
    )
    for key in naming.names:
        for value in _list(option(opts, key)):
            _add(out, naming, join_names(scope, _split(value, naming.kind)))
        if out.names or out.problems:
            return out
    if _forms(out, naming, opts, url_database, defaults=False):
        return out
    if naming.query:
        q = _text(option(opts, naming.query))
        if q is not None:
            where = scope or ([url_database] if naming.url_database and url_database else [])
            out.queries.append((q, where))
            return out
    if _forms(out, naming, opts, url_database, defaults=True):
        return out
    if isinstance(flag, str) and flag:
        out.problems.append(
            f"reads the {naming.kind}s matching the pattern {flag!r}; no dataset can be named"
        )
        return out
    for key in naming.wildcard:
        dbs = _list(option(opts, key))
        if dbs:
            out.problems.append(
                f"captures every table of {key} {', '.join(dbs)}; name them (e.g. "
                f"{', '.join(naming.names or tuple(f[-1] for f in naming.forms))}) to get datasets"
            )
            return out
    return out


def _forms(
    out: Named, naming: Naming, opts: Mapping[str, Any], url_db: str | None, *, defaults: bool
) -> bool:
    for form in naming.forms:
        *outer_keys, last = form
        value = _text(option(opts, last))
        if value is None and defaults:
            value = _text(naming.defaults.get(last))
        if value is None:
            continue
        if naming.kind == FILE:
            _add(out, naming, [_file_uri(naming, opts, value)])
            return True
        outer: list[str] = []
        for k in outer_keys:
            v = _text(option(opts, k))
            if v is None and naming.url_database and url_db:
                v = url_db
            if v is None:
                v = _text(naming.defaults.get(k))
            if v is not None:
                outer += split_dotted(v)
        if naming.url_database and url_db and not outer_keys:
            outer = [url_db]
        values = _list(value) if naming.kind in (TOPIC, QUEUE) else [value]
        for v in values:
            parts = join_names(outer, _split(v, naming.kind))
            if naming.affixes:
                pre, suf = (_text(option(opts, k)) or "" for k in naming.affixes)
                parts[-1] = f"{pre}{parts[-1]}{suf}"
            _add(out, naming, parts)
        return True
    return False


def _add(out: Named, naming: Naming, parts: list[str]) -> None:
    if has_placeholder(".".join(parts)):
        out.problems.append(f"{'.'.join(parts)!r} holds a placeholder no upstream table resolves")
    elif m := _ROW_FIELD.search(".".join(parts)):
        # Kafka's topic = "${field}": each row picks its own topic at run time.
        out.problems.append(
            f"{'.'.join(parts)!r} is taken from each row's field {m.group(1)!r} at run time; "
            "no dataset can be named"
        )
    elif naming.kind in (TOPIC, QUEUE, COLLECTION, INDEX, TABLE) and _REGEX.search(".".join(parts)):
        out.problems.append(f"{'.'.join(parts)!r} is a pattern; no dataset can be named")
    elif parts not in [n for n, _ in out.names]:
        out.names.append((parts, naming.kind))
        out.declared.append(None)


def _file_uri(naming: Naming, opts: Mapping[str, Any], path: str) -> str:
    if "://" in path:
        return path
    base = next((b.rstrip("/") for k in naming.base if (b := _text(option(opts, k)))), "")
    if not base:
        host = _text(option(opts, "host")) or "localhost"
        port = _text(option(opts, "port"))
        base = naming.scheme.replace("{host}", f"{host}:{port}" if port else host).rstrip("/")
        if base.endswith(":/") or base.endswith(":"):
            base = base.rstrip("/") + "//"
    if base.endswith("//"):
        return f"{base}{path}" if path.startswith("/") else f"{base}/{path}"
    return f"{base}{'' if path.startswith('/') else '/'}{path}"


def upstream_table(opts: Mapping[str, Any]) -> list[str] | None:
    """A schema-declared source's own table name (``schema { table = "db.t" }``), if any."""
    schema = option(opts, "schema")
    if isinstance(schema, Mapping):
        t = _text(schema.get("table"))
        if t:
            return split_dotted(t)
    t = _text(option(opts, "schema.table"))
    return split_dotted(t) if t else None


DEFAULT_TABLE = ["default", "default", "default"]  # SeaTunnel's TablePath.DEFAULT
