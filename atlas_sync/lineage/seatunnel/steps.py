"""Steps: the common shape SeaTunnel configs and WhaleTunnel exports are normalised into.

A :class:`Step` is one source, transform or sink plugin; a :class:`TableRef` is the connection
identity, database/schema and table a source reads or a sink writes. The graph builder
(:mod:`.build`) only sees steps and the links between them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.lineage.model import dotted, split_dotted
from atlas_sync.lineage.seatunnel.connectors import NONE, Naming, name_datasets, option

SOURCE, TRANSFORM, SINK = "SOURCE", "TRANSFORM", "SINK"
OPAQUE = ("topic", "queue", "endpoint", "key", "index")  # kinds named by one opaque string


@dataclass
class TableRef:
    """A table (or file, topic) a source reads or a sink writes."""

    parts: list[str]  # [database?, schema?, table], or [path] for files
    kind: str = "table"
    connection: str | None = None  # the connection identity (data source name, or from the URL)
    named_connection: bool = False  # an explicit data source name: part of the dataset id
    default_schema: str | None = None  # set when the agreed default schema was filled in
    declared: list[str] | None = None  # the table name its source declares (``schema.table``)

    def dataset_id(self, connection_map: Mapping[str, str]) -> str:
        if self.kind in ("file", "local"):
            return self.parts[-1] if self.kind == "file" else dotted(*self.parts)
        prefix = self.connection_prefix(connection_map)
        if self.kind in OPAQUE:
            # A topic, queue, index, endpoint or key is one name (dots and dashes included): kept as is.
            name = ".".join(self.parts)
            return f"{prefix}.{name}" if prefix else name
        return dotted(*([*split_dotted(prefix)] if prefix else []), *self.parts)

    def connection_prefix(self, connection_map: Mapping[str, str]) -> str:
        if self.connection is not None and self.connection in connection_map:
            return connection_map[self.connection]
        return self.connection if self.named_connection and self.connection else ""

    @property
    def label(self) -> str:
        return ".".join(self.parts)


@dataclass
class Step:
    """One plugin of a job, normalised."""

    id: str  # stable within the input: "source[0]:Jdbc" or a WhaleTunnel pluginId
    kind: str  # SOURCE | TRANSFORM | SINK
    plugin: str  # Jdbc, Hive, FieldRename, Sql, ...
    options: dict[str, Any] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)  # upstream step ids
    output_name: str | None = None  # plugin_output / result_table_name
    tables: list[TableRef] = field(default_factory=list)  # sources and sinks
    fields: list[str] | None = None  # declared fields, in order (None = not declared)
    field_types: dict[str, str] = field(default_factory=dict)
    query: str | None = None  # a source's query, a sink's statement, a Sql transform's query
    query_scope: list[str] = field(default_factory=list)  # database/keyspace of a source query's tables
    query_schemas: bool = False  # the scope is a database holding schemas: it prefixes `schema.table`
    naming: Naming | None = None  # the connector's naming rule (None: unknown connector, or WhaleTunnel)
    identities: list[list[str]] = field(default_factory=list)  # table names for sink placeholders
    problems: list[tuple[str, str]] = field(default_factory=list)  # (code, message) found reading options


# -------------------------------------------------------------------------------- connector options
_JDBC_URL = re.compile(r"^jdbc:(?P<type>[a-zA-Z0-9]+):(?P<rest>.*)$")


def connection_from_options(plugin: str, opts: Mapping[str, Any]) -> tuple[str | None, bool, str | None]:
    """(connection identity, whether it is a named data source, database from the URL)."""
    for key in ("datasource_name", "data_source_name", "dataSourceName", "datasource"):
        if isinstance(opts.get(key), str) and opts[key]:
            return opts[key], True, None
    url = opts.get("url") or opts.get("base-url") or opts.get("jdbc-url") or opts.get("uri")
    if isinstance(url, str) and url:
        m = _JDBC_URL.match(url)
        if m:
            rest = m.group("rest")
            if rest.startswith("//"):
                hostpart = rest[2:].split("/", 1)
                host = _no_userinfo(hostpart[0].split(";")[0])
                db = hostpart[1].split("?")[0].split(";")[0] if len(hostpart) > 1 else None
                if db and "=" in db:  # jdbc:teradata://host/DATABASE=x,DBS_PORT=1025
                    db = _param(db.replace(",", ";"), ("database",))
                db = db or _param(rest, ("databasename", "database"))  # SQL Server: ;databaseName=x
                return f"{m.group('type').lower()}://{host}", False, db or None
            # jdbc:oracle:thin:user/pass@host:1521/SERVICE (or @//host...), jdbc:sqlite:path ...
            at = _no_userinfo(rest.split("?")[0])
            if "@" in rest and "/" in at.lstrip("/"):
                host, _, service = at.lstrip("/").partition("/")
                return f"{m.group('type').lower()}://{host}", False, service or None
            return f"{m.group('type').lower()}:{at}", False, None
        scheme, sep, rest = url.split("?")[0].partition("://")
        return (f"{scheme}://{_no_userinfo(rest)}" if sep else _no_userinfo(scheme)), False, None
    for key, prefix in (
        ("metastore_uri", None),
        ("fenodes", "doris"),
        ("nodeUrls", "starrocks"),
        ("hosts", "elasticsearch"),
        ("bootstrap.servers", "kafka"),
        ("warehouse", None),
        ("client.service-url", None),
        ("name.srv.addr", "rocketmq"),
        ("kudu_masters", "kudu"),
        ("zookeeper_quorum", "hbase"),
        ("node_urls", "iotdb"),
        ("host", plugin.lower()),
    ):
        v = option(opts, key)
        if isinstance(v, list):
            v = ",".join(str(x) for x in v)
        if isinstance(v, str) and v:
            return (v if prefix is None else f"{prefix}://{_no_userinfo(v)}"), False, None
    return None, False, None


def _param(text: str, keys: tuple[str, ...]) -> str | None:
    """A ``;key=value`` parameter of a JDBC URL (case-insensitive key)."""
    for item in text.split(";"):
        k, sep, v = item.partition("=")
        if sep and k.strip().lower() in keys and v.strip():
            return v.strip()
    return None


def _no_userinfo(text: str) -> str:
    """Drop ``user:password@`` (and Oracle's ``thin:user/pass@``) before a host: credentials never
    go into names or facets."""
    return text.rpartition("@")[2]


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def tables_from_options(plugin: str, opts: Mapping[str, Any], output_name: str | None) -> list[TableRef]:
    """The tables named by a source's or sink's connector options (possibly several)."""
    conn, named, url_db = connection_from_options(plugin, opts)
    lower = plugin.lower()
    if lower in ("fakesource", "fake", "console", "assert") or lower.startswith("fake"):
        return []  # test connectors: no external dataset
    if "file" in lower or lower in ("hdfs", "s3", "oss", "ftp", "sftp", "cosfile"):
        path = opts.get("path") or opts.get("file_path")
        if isinstance(path, str) and path:
            base = ""
            for key in ("bucket", "fs.defaultFS", "defaultFS"):
                if isinstance(opts.get(key), str):
                    base = opts[key].rstrip("/")
                    break
            if not base and "://" not in path:
                base = {"s3file": "s3://", "hdfsfile": "hdfs://", "ossfile": "oss://"}.get(lower, "file://")
            full = path if "://" in path else f"{base}{'' if path.startswith('/') else '/'}{path}"
            return [TableRef(parts=[full], kind="file", connection=conn, named_connection=named)]
    if lower in ("kafka", "pulsar", "rocketmq"):
        topics = _as_list(opts.get("topic") or opts.get("topics"))
        topics = [t for x in topics for t in str(x).split(",") if t.strip()]
        return [
            TableRef(parts=[t.strip()], kind="topic", connection=conn, named_connection=named) for t in topics
        ]
    names: list[list[str]] = []
    for entry in _as_list(opts.get("table_list")):
        if isinstance(entry, Mapping) and isinstance(entry.get("table_path"), str):
            names.append(split_dotted(entry["table_path"]))
    for key in ("table_path", "table_name", "table-names", "table_names", "tables"):
        for v in _as_list(opts.get(key)):
            if isinstance(v, str) and v:
                names.append(split_dotted(v))
    if not names and isinstance(opts.get("table"), str) and opts["table"]:
        names.append(split_dotted(opts["table"]))
    db = opts.get("database") or opts.get("database_name") or url_db
    schema = opts.get("schema") or opts.get("schema_name")
    out: list[TableRef] = []
    for parts in names:
        if len(parts) == 1:
            parts = [p for p in (db, schema) if isinstance(p, str) and p] + parts
        elif len(parts) == 2 and isinstance(db, str) and db and parts[0] != db:
            parts = [db, *parts]  # database = "dw", table = "mart.orders" (PostgreSQL style)
        out.append(TableRef(parts=[str(p) for p in parts], connection=conn, named_connection=named))
    return out


def declared_fields(opts: Mapping[str, Any]) -> tuple[list[str] | None, dict[str, str]]:
    """Fields declared by ``schema { fields { a = int } }``, ``schema.columns``, ``columns`` or ``fields``."""
    schema = opts.get("schema")
    if isinstance(schema, Mapping):
        f = schema.get("fields")
        if isinstance(f, Mapping):
            return [str(k) for k in f], {str(k): str(v) for k, v in f.items() if not isinstance(v, Mapping)}
        cols = schema.get("columns")
        if isinstance(cols, list):
            names = [str(c["name"]) for c in cols if isinstance(c, Mapping) and "name" in c]
            types = {str(c["name"]): str(c["type"]) for c in cols if isinstance(c, Mapping) and "type" in c}
            return names, types
    for key in ("columns", "fields", "column", "tableFields"):
        v = opts.get(key)
        if isinstance(v, list) and v:
            names = [str(c["name"]) if isinstance(c, Mapping) and "name" in c else str(c) for c in v]
            types = {str(c["name"]): str(c["type"]) for c in v if isinstance(c, Mapping) and "type" in c}
            return names, types
    return None, {}


_NO_SCHEMAS = ("mysql", "mariadb", "tidb", "clickhouse", "doris", "starrocks", "hive", "sqlite", "gbase")


def registry_tables(plugin: str, naming: Naming, opts: Mapping[str, Any]) -> tuple[list[TableRef], list[str]]:
    """Datasets named by a known connector's options (see :mod:`.connectors`), and problems."""
    # An option naming the dataset (Druid's `datasource`) is not a connection name.
    used = {k for form in naming.forms for k in form}
    conn, named, url_db = connection_from_options(plugin, {k: v for k, v in opts.items() if k not in used})
    flat = no_schemas(opts)
    found = name_datasets(naming, opts, url_database=url_db)
    refs: list[TableRef] = []
    for (parts, kind), declared in zip(found.names, found.declared, strict=True):
        if flat and url_db and len(parts) == 3 and parts[0] == url_db:
            parts = parts[1:]  # MySQL-style: the URL's database and the table's are one level
        refs.append(
            TableRef(parts=parts, kind=kind, connection=conn, named_connection=named, declared=declared)
        )
    return refs, found.problems


def no_schemas(opts: Mapping[str, Any]) -> bool:
    url = str(opts.get("url") or opts.get("base-url") or "")
    return any(url.startswith(f"jdbc:{d}:") for d in _NO_SCHEMAS)


def registry_query(naming: Naming, opts: Mapping[str, Any]) -> tuple[str | None, list[str], bool]:
    """A source's SQL query, the database its unqualified tables are in, and whether that database
    holds schemas (so it also prefixes the query's ``schema.table``)."""
    if naming.kind == NONE or not naming.query:
        return None, [], False
    _conn, _named, url_db = connection_from_options("", opts)
    found = name_datasets(naming, opts, url_database=url_db)
    if not found.queries:
        return None, [], False
    query, scope = found.queries[0]
    # In a database with schemas (PostgreSQL, SQL Server, Oracle...) the URL's database holds the
    # query's `schema.table`; in MySQL-style ones `db.table` is already complete.
    return query, scope, bool(naming.url_database and url_db and scope == [url_db] and not no_schemas(opts))


def insert_target(query: str) -> tuple[list[str] | None, list[str] | None]:
    """(table parts, column list) of a sink's ``INSERT INTO t (a, b) VALUES (?, ?)``."""
    import sqlglot
    from sqlglot import exp

    tree = None
    for dialect in (None, "mysql", "tsql"):  # `quoted` / [quoted] names: sinks write to many databases
        try:
            text = re.sub(r"^\s*upsert\s+into\b", "INSERT INTO", query, flags=re.I)  # Phoenix
            tree = sqlglot.parse_one(text.replace("?", "NULL"), read=dialect)
            break
        except Exception:  # noqa: BLE001, S112 - the sink SQL is informative only
            continue
    if not isinstance(tree, exp.Insert):
        return None, None
    target = tree.this
    cols = None
    if isinstance(target, exp.Schema):
        cols = [c.name for c in target.expressions]
        target = target.this
    if isinstance(target, exp.Table):
        return [p for p in (target.catalog, target.db, target.name) if p], cols
    return None, cols


_DIALECTS = {
    "mysql": "mysql", "mariadb": "mysql", "tidb": "mysql", "oceanbase": "mysql", "postgresql": "postgres",
    "opengauss": "postgres", "kingbase8": "postgres", "redshift": "redshift", "oracle": "oracle",
    "sqlserver": "tsql", "jtds": "tsql", "db2": "postgres", "clickhouse": "clickhouse", "hive2": "hive",
    "snowflake": "snowflake", "vertica": "postgres", "sqlite": "sqlite", "dm": "oracle", "presto": "presto",
    "trino": "trino",
}  # fmt: skip


def dialect_of(plugin: str, opts: Mapping[str, Any]) -> str | None:
    """The SQL dialect of a source's query, from its JDBC URL (or the connector itself)."""
    url = str(opts.get("url") or opts.get("base-url") or "")
    m = _JDBC_URL.match(url)
    if m:
        return _DIALECTS.get(m.group("type").lower())
    return {"clickhouse": "clickhouse", "cassandra": None, "influxdb": None}.get(plugin.lower())
