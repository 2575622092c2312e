"""Superset objects -> the BI lineage model (lineage/bi.py).

* A **database** gives the SQL dialect (its SQLAlchemy URI's backend) and, through the connection map
  (``-o connection_map=FILE``: Superset database name -> namespace), the prefix of its tables' names, so
  ``main.orders`` of database ``Warehouse`` mapped to ``jaffle`` is ``jaffle.main.orders``, the dataset
  the dbt, SQL or OpenLineage reader publishes for that table. A database the map does not name keeps
  its tables as the SQL names them (one warning per database).
* A **dataset** reads its table (physical) or its SQL (virtual, through the SQL reader; Jinja rendered
  with placeholders, said in a warning); its columns, calculated columns and metrics get column edges
  from the SQL the dataset stands for: ``SELECT <expressions> FROM <table or (sql) AS virtual_table>``,
  as Superset itself queries it.
* A **chart** is fed by its dataset; its fields (metrics, group-bys, columns) by the dataset's fields.
  A chart whose dataset is missing, or whose dataset's table cannot be resolved, keeps what it has and
  gets a warning naming it and the reason.
* A **dashboard** holds the charts its layout places.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from atlas_sync.errors import InputError
from atlas_sync.lineage.bi import BI_DATASET, CHART, BiBuilder, FieldEdge, bi_id
from atlas_sync.lineage.model import LineageGraph, dotted, split_dotted
from atlas_sync.lineage.openlineage.naming import NamespaceMap
from atlas_sync.lineage.sql.analyze import Context
from atlas_sync.lineage.sql.dialects import resolve_dialect
from atlas_sync.lineage.sql.schema import SchemaStore
from atlas_sync.lineage.sql.script import analyze_sql
from atlas_sync.lineage.superset.content import SupersetContent, position_chart_uuids

TOOL = "superset"
_TARGET = "atlas_sync_bi_dataset"  # the view the dataset's SELECT is analysed as

# SQLAlchemy backends that are not a dialect name the SQL reader knows
_BACKEND_DIALECT = {
    "postgresql": "postgres",
    "mssql": "tsql",
    "awsathena": "athena",
    "databricks": "databricks",
    "hana": "",
    "db2": "",
    "ibm_db_sa": "",
    "gsheets": "",
    "shillelagh": "sqlite",
    "druid": "druid",
    "pinot": "",
    "elasticsearch": "",
    "crate": "postgres",
    "cockroachdb": "postgres",
    "kylin": "",
    "impala": "hive",
    "spark": "spark",
    "clickhousedb": "clickhouse",
}

# Chart params naming metrics and columns (Superset's control names across its visualisations)
_METRIC_KEYS = (
    "metrics",
    "metric",
    "metric_2",
    "percent_metrics",
    "timeseries_limit_metric",
    "secondary_metric",
    "size",
    "x",
    "y",
    "metrics_b",
    "sort_by_metric",
)
_COLUMN_KEYS = (
    "groupby",
    "groupbyColumns",
    "groupbyRows",
    "columns",
    "all_columns",
    "all_columns_x",
    "all_columns_y",
    "x_axis",
    "series",
    "entity",
    "granularity_sqla",
    "order_by_cols",
    "groupby_b",
    "dimension",
)

_JINJA_EXPR = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.DOTALL)
_JINJA_ELSE = re.compile(r"\{%-?\s*(?:else|elif\b.*?)\s*-?%\}.*?(?=\{%-?\s*endif\s*-?%\})", re.DOTALL)
_JINJA_TAG = re.compile(r"\{%.*?%\}", re.DOTALL)


def render_jinja(sql: str) -> tuple[str, bool]:
    """Superset's Jinja in a virtual dataset's SQL rendered with placeholders: expressions
    (``{{ from_dttm }}``, ``{{ filter_values('x') }}``) become ``NULL``, an ``if`` keeps its first branch,
    other tags and comments go. Returns the SQL and whether it had any Jinja."""
    if "{{" not in sql and "{%" not in sql and "{#" not in sql:
        return sql, False
    out = _JINJA_COMMENT.sub("", sql)
    out = _JINJA_ELSE.sub("", out)
    out = _JINJA_TAG.sub("", out)
    out = _JINJA_EXPR.sub("NULL", out)
    return out, True


def backend_of(uri: str | None) -> str:
    """The SQLAlchemy backend of a URI (``postgresql+psycopg2://...`` -> ``postgresql``); '' when none."""
    if not uri or "://" not in uri and ":" not in uri:
        return ""
    return uri.split(":", 1)[0].split("+", 1)[0].lower()


def dialect_of(uri: str | None) -> str:
    """The SQL reader's dialect for a database's SQLAlchemy URI ('' = generic SQL)."""
    backend = backend_of(uri)
    if backend in _BACKEND_DIALECT:
        return _BACKEND_DIALECT[backend]
    try:
        return resolve_dialect(backend) if backend else ""
    except InputError:
        return ""


def connection_of(uri: str | None) -> str | None:
    """``<backend>://<host[:port]>`` of a SQLAlchemy URI, without user or password (the ``atlas``
    profile's mapping picks the table type by its scheme)."""
    backend = backend_of(uri)
    if not backend or not uri:
        return None
    try:
        host = urlsplit(uri).hostname or ""
        port = urlsplit(uri).port
    except ValueError:
        host, port = "", None
    return f"{backend}://{host}{':' + str(port) if port else ''}"


def _label(value: Any) -> str | None:
    """The name a chart shows a metric or column under (a saved one's name, an adhoc one's label)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        label = value.get("label") or value.get("optionName")
        if isinstance(label, str) and label:
            return label
        col = value.get("column")
        if isinstance(col, dict) and value.get("aggregate"):
            return f"{value['aggregate']}({col.get('column_name')})"
        sql = value.get("sqlExpression")
        return sql if isinstance(sql, str) and sql else None
    return None


class SupersetGraph:
    """Builds one graph from :class:`SupersetContent` (see the module docs)."""

    def __init__(
        self,
        content: SupersetContent,
        *,
        job: str,
        connection_map: NamespaceMap,
        base_url: str | None = None,
    ) -> None:
        self.c = content
        self.b = BiBuilder(TOOL, job)
        self.cmap = connection_map
        self.base_url = base_url.rstrip("/") if base_url else None
        self._unmapped_warned: set[str] = set()
        # dataset uuid -> why its table could not be resolved (charts on it say so)
        self._unresolved: dict[str, str] = {}

    @property
    def graph(self) -> LineageGraph:
        return self.b.graph

    def build(self) -> LineageGraph:
        for where, message in self.c.unreadable:
            self.b.graph.problem(message, code="superset-unreadable", file=where, severity="error")
        for uuid, ds in self.c.datasets.items():
            self._dataset(uuid, ds)
        for uuid, chart in self.c.charts.items():
            self._chart(uuid, chart)
        for uuid, dash in self.c.dashboards.items():
            self._dashboard(uuid, dash)
        return self.b.graph

    # ------------------------------------------------------------------ databases and tables
    def _database(self, ds: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
        """(database name, namespace prefix or None when unmapped, SQLAlchemy URI) of a dataset."""
        db = self.c.databases.get(str(ds.get("database_uuid") or "")) or {}
        name = _text(db.get("database_name")) or _text(ds.get("database_name")) or ""
        mapped = self.cmap.lookup(name) if name else None
        if mapped is None and name and name not in self._unmapped_warned:
            self._unmapped_warned.add(name)
            self.b.warn(
                f"Superset database {name!r} is not in the connection map: its tables keep the names "
                "the SQL gives them (map it to the namespace the other readers use, -o connection_map=FILE)",
                code="superset-unmapped-database",
            )
        uri = db.get("sqlalchemy_uri")
        return name, mapped, uri if isinstance(uri, str) else None

    # ------------------------------------------------------------------ datasets
    def _dataset(self, uuid: str, ds: Mapping[str, Any]) -> None:
        origin = self.c.origin.get(uuid)
        name = _text(ds.get("table_name")) or uuid
        db_name, prefix, uri = self._database(ds)
        columns = [c for c in _items(ds.get("columns")) if isinstance(c, dict) and c.get("column_name")]
        metrics = [m for m in _items(ds.get("metrics")) if isinstance(m, dict) and m.get("metric_name")]
        fields = [str(c["column_name"]) for c in columns] + [str(m["metric_name"]) for m in metrics]
        facets: dict[str, Any] = {"objectType": "dataset", **({"database": db_name} if db_name else {})}
        if self.base_url and ds.get("id") is not None:
            facets["url"] = f"{self.base_url}/explore/?datasource_type=table&datasource_id={ds['id']}"
        target = self.b.bi_object(
            BI_DATASET,
            uuid,
            name,
            namespace=db_name,
            columns=fields,
            description=ds.get("description") if isinstance(ds.get("description"), str) else None,
            facets=facets,
        )
        dialect = dialect_of(uri)
        connection = connection_of(uri)
        schema = ds.get("schema") if isinstance(ds.get("schema"), str) and ds.get("schema") else None
        catalog = prefix if prefix is not None else _text(ds.get("catalog"))
        default = ".".join(p for p in (catalog, schema) if p) or None
        sql = ds.get("sql") if isinstance(ds.get("sql"), str) and str(ds.get("sql")).strip() else None
        if sql is not None:
            sql, templated = render_jinja(sql)
            if templated:
                self.b.warn(
                    f"virtual dataset {name!r} ({uuid}): its SQL is a Jinja template, read with "
                    "placeholders (NULL for expressions, the first branch of each if): its lineage is "
                    "that SQL's",
                    code="superset-jinja",
                    file=origin,
                )
            source = quoted_source = f"({sql.strip().rstrip(';')}) AS virtual_table"
        else:
            parts = [p for p in (catalog, schema, name) if p]
            source = ".".join(_source_ident(p, dialect) for p in parts)
            quoted_source = ".".join(_quote(p, dialect) for p in parts)
        exprs = [(str(c["column_name"]), c.get("expression") or None) for c in columns]
        exprs += [(str(m["metric_name"]), m.get("expression") or None) for m in metrics]
        edges, reads, why = self._analyse((source, quoted_source), exprs, dialect, default)
        # the SQL reader may fold an output name (Snowflake's "ORDER_ID" is order_id): the field's own name
        by_folded = {f.lower(): f for f in fields}
        edges = [
            (src, sc, tc if tc is None or tc in by_folded.values() else by_folded.get(tc.lower(), tc), k, x)
            for src, sc, tc, k, x in edges
        ]
        if why is not None and sql is None:
            # the physical table is known even when an expression does not parse
            parts = [p for p in (catalog, schema, name) if p]
            reads = [(dotted(*parts), dotted(*parts[:-1]), parts[-1])]
        if why is not None:
            self.b.warn(
                f"dataset {name!r} ({uuid}): {why}" + ("" if reads else ": no upstream table"),
                code="superset-unparsed-sql",
                file=origin,
            )
        if not reads:
            self._unresolved[uuid] = why or "its SQL reads no table"
        ids = []
        for ident, namespace, tname in reads:
            self.b.table(ident, namespace=namespace, name=tname, connection=connection)
            ids.append(ident)
        self.b.feed(target, ids, edges=edges, query_text=sql or f"SELECT * FROM {source}", source_file=origin)

    def _analyse(
        self,
        sources: tuple[str, str],
        exprs: list[tuple[str, str | None]],
        dialect: str,
        default: str | None,
    ) -> tuple[list[FieldEdge], list[tuple[str, str, str]], str | None]:
        """Column edges into the dataset's fields and the tables read, from ``SELECT <exprs> FROM source``:
        plain names unquoted (as other SQL names them), then all quoted (a plain name may be a reserved
        word), then ``SELECT *``; with a reason when the first does not parse."""
        selects = []
        for source, ident in ((sources[0], _source_ident), (sources[1], _quote)):
            items = [
                f"{expr if expr else ident(name, dialect)} AS {_quote(name, dialect)}" for name, expr in exprs
            ]
            selects.append(f"SELECT {', '.join(items or ['*'])} FROM {source}")
        selects.append(f"SELECT * FROM {sources[0]}")
        why: str | None = None
        for select in dict.fromkeys(selects):
            result = self._lineage(select, dialect, default)
            if isinstance(result, str):
                why = why or result
                continue
            if why is not None and select == selects[-1] and exprs:
                why = f"{why} (its fields' lineage is left out)"
            elif why is not None:
                why = None  # the quoted form read it all
            return (*result, why)
        return [], [], why

    def _lineage(
        self, select: str, dialect: str, default: str | None
    ) -> tuple[list[FieldEdge], list[tuple[str, str, str]]] | str:
        ctx = Context.create(dialect, SchemaStore(None, dialect=dialect), default)
        target = _quote(_TARGET, dialect)
        results = [
            r for r in analyze_sql(f"CREATE VIEW {target} AS {select}", context=ctx) if r.type != "EMPTY"
        ]
        if len(results) != 1:
            return "its SQL is not one SELECT"
        st = results[0]
        if st.error or not st.writes:
            err = next((p for p in st.problems if p.get("severity") == "error"), None)
            return f"its SQL does not parse ({err['message'] if err else 'no lineage'})"
        out_id = st.writes[0].id
        reads = [(r.id, r.namespace, r.name) for r in st.reads if r.id != out_id]
        edges: list[FieldEdge] = [
            (e.source, e.source_column, e.target_column, e.kind, e.expression)
            for e in st.edges
            if e.target == out_id and e.source != out_id
        ]
        return edges, reads

    # ------------------------------------------------------------------ charts
    def _chart(self, uuid: str, chart: Mapping[str, Any]) -> None:
        origin = self.c.origin.get(uuid)
        name = _text(chart.get("slice_name")) or uuid
        params = chart.get("params")
        if isinstance(params, str):
            import json

            try:
                params = json.loads(params)
            except ValueError:
                params = {}
        params = params if isinstance(params, dict) else {}
        facets: dict[str, Any] = (
            {"chartType": _text(chart.get("viz_type"))} if _text(chart.get("viz_type")) else {}
        )
        if self.base_url and chart.get("id") is not None:
            facets["url"] = f"{self.base_url}/explore/?slice_id={chart['id']}"
        target = self.b.bi_object(
            CHART,
            uuid,
            name,
            description=chart.get("description") if isinstance(chart.get("description"), str) else None,
            facets=facets,
        )
        ds_uuid = str(chart.get("dataset_uuid") or "")
        dataset = self.c.datasets.get(ds_uuid)
        if dataset is None:
            self.b.warn(
                f"chart {name!r} ({uuid}): its dataset "
                + (f"{ds_uuid} is not in the input" if ds_uuid else "is not named")
                + ": no lineage",
                code="superset-chart-unresolved",
                file=origin,
            )
            return
        ds_id = bi_id(TOOL, BI_DATASET, ds_uuid)
        have = {c.name for c in self.b.graph.dataset(ds_id).columns}  # type: ignore[union-attr]
        edges: list[FieldEdge] = []
        for key in _METRIC_KEYS:
            for m in _as_list(params.get(key)):
                edges.extend(_metric_edges(ds_id, m, have))
        for key in _COLUMN_KEYS:
            for col in _as_list(params.get(key)):
                edges.extend(_column_edges(ds_id, col, have))
        self.b.feed(target, [ds_id], edges=edges, source_file=origin)
        if ds_uuid in self._unresolved:
            self.b.warn(
                f"chart {name!r} ({uuid}): the table of its dataset "
                f"{dataset.get('table_name')!r} cannot be resolved ({self._unresolved[ds_uuid]}): "
                "its lineage stops at the dataset",
                code="superset-chart-unresolved",
                file=origin,
            )

    # ------------------------------------------------------------------ dashboards
    def _dashboard(self, uuid: str, dash: Mapping[str, Any]) -> None:
        origin = self.c.origin.get(uuid)
        name = _text(dash.get("dashboard_title")) or uuid
        uuids = [str(u) for u in _items(dash.get("chart_uuids"))] or position_chart_uuids(
            dash.get("position")
        )
        charts = []
        for c in uuids:
            if c in self.c.charts:
                charts.append(bi_id(TOOL, CHART, c))
            else:
                self.b.warn(
                    f"dashboard {name!r} ({uuid}): chart {c} is not in the input",
                    code="superset-missing-chart",
                )
        facets: dict[str, Any] = {}
        if self.base_url and dash.get("id") is not None:
            facets["url"] = f"{self.base_url}/superset/dashboard/{dash['id']}/"
        self.b.dashboard(
            uuid,
            name,
            charts,
            description=dash.get("description") if isinstance(dash.get("description"), str) else None,
            facets=facets,
            source_file=origin,
        )


def _quote(name: str, dialect: str) -> str:
    return exp.to_identifier(name, quoted=True).sql(dialect=dialect or None)


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _source_ident(name: str, dialect: str) -> str:
    """A table part or column as the SQL reads it: a plain name unquoted, so the SQL reader folds it as
    it folds the same name in any SQL (``ORDERS`` on Snowflake is ``orders``, as dbt's and the SQL
    reader's names are); another name quoted, kept as it is."""
    return name if _PLAIN.match(name) else _quote(name, dialect)


def _text(value: Any) -> str | None:
    """A name the export holds as text (a number is taken as its text; anything else is no name)."""
    return (
        str(value)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and value != ""
        else None
    )


def _items(value: Any) -> list[Any]:
    """A list the export holds, or nothing (a hand-edited file may hold anything there)."""
    return value if isinstance(value, list) else []


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _metric_edges(ds_id: str, metric: Any, have: set[str]) -> Iterable[FieldEdge]:
    label = _label(metric)
    if label is None:
        return []
    if isinstance(metric, str):  # a saved metric of the dataset (or a column, for x/y/size controls)
        return [(ds_id, metric, metric, "IDENTITY", None)] if metric in have else []
    if not isinstance(metric, dict):
        return []
    col = metric.get("column")
    if metric.get("expressionType") == "SIMPLE" and isinstance(col, dict):
        cname = col.get("column_name")
        if isinstance(cname, str) and cname in have:
            return [(ds_id, cname, label, "AGGREGATION", label)]
        return []
    return _expression_edges(ds_id, metric.get("sqlExpression"), label, have, "AGGREGATION")


def _column_edges(ds_id: str, col: Any, have: set[str]) -> Iterable[FieldEdge]:
    if isinstance(col, str):
        return [(ds_id, col, col, "IDENTITY", None)] if col in have else []
    if isinstance(col, dict):
        label = _label(col)
        if label is None:
            return []
        return _expression_edges(ds_id, col.get("sqlExpression"), label, have, "TRANSFORMATION")
    return []


def _expression_edges(ds_id: str, sql: Any, label: str, have: set[str], kind: str) -> list[FieldEdge]:
    """Edges from the dataset fields an adhoc SQL expression names (by name, as Superset resolves them)."""
    if not isinstance(sql, str) or not sql.strip():
        return []
    try:
        tree = parse_one(sql)
    except (SqlglotError, ValueError):
        return []
    names = {c.name for c in tree.find_all(exp.Column)}
    return [(ds_id, n, label, kind, sql) for n in sorted(names) if n in have]


__all__ = ["SupersetGraph", "backend_of", "connection_of", "dialect_of", "render_jinja", "split_dotted"]
