"""Power BI semantic models and reports -> the BI lineage model (lineage/bi.py, docs/bi.md).

* A model's **table** is a BI dataset ``powerbi:bi_dataset:<model>.<table>``; its fields are its columns
  and measures. Its partition's M expression is resolved to warehouse tables (mresolve.py); a column's
  ``sourceColumn`` gives its column edge, a native query's SQL goes through the SQL reader with the
  connector's dialect. Measures and calculated columns get edges from the columns their DAX names
  directly (``'Table'[Column]``, ``Table[Column]``, ``[Measure]``).
* A report's **visual** is a chart ``powerbi:chart:<report>.<page>.<visual>`` of the fields its
  ``queryState`` projects; a **page** is a dashboard ``powerbi:dashboard:<report>.<page>``.
"""

from __future__ import annotations

import re
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.bi import BI_DATASET, CHART, BiBuilder, FieldEdge, bi_id
from atlas_sync.lineage.bisql import QueryLineage, query_lineage, table_sql
from atlas_sync.lineage.model import Column, LineageGraph
from atlas_sync.lineage.openlineage.naming import NamespaceMap
from atlas_sync.lineage.powerbi.content import PbiContent, PbiModel, PbiReport, PbiTable
from atlas_sync.lineage.powerbi.mparse import MSyntaxError, parse
from atlas_sync.lineage.powerbi.mresolve import DIALECTS, Native, Resolver, TableRef, Tables, Unresolved
from atlas_sync.lineage.sql.dialects import resolve_dialect

TOOL = "powerbi"
_SCHEME = {"sqlserver": "mssql", "postgres": "postgresql"}
_DAX_STRING = re.compile(r'"(?:[^"]|"")*"')
_DAX_COMMENT = re.compile(r"//[^\n]*|--[^\n]*|/\*.*?\*/", re.S)
_DAX_REF = re.compile(r"(?:'((?:[^']|'')+)'|([A-Za-z_][A-Za-z0-9_]*))?\[([^\[\]]+)\]")
_DAX_AGG = re.compile(
    r"\b(SUM|SUMX|AVERAGE|AVERAGEX|COUNT|COUNTA|COUNTX|COUNTROWS|DISTINCTCOUNT|MIN|MINX|MAX|MAXX|MEDIAN|"
    r"MEDIANX|PERCENTILE\.INC|PERCENTILE\.EXC|STDEV\.S|STDEV\.P|VAR\.S|VAR\.P)\s*\(",
    re.I,
)


def _dialect(connector: str) -> str:
    try:
        return resolve_dialect(DIALECTS.get(connector, "")) if DIALECTS.get(connector) else ""
    except InputError:
        return ""


class PowerBiGraph:
    def __init__(self, content: PbiContent, *, job: str, connection_map: NamespaceMap) -> None:
        self.c = content
        self.b = BiBuilder(TOOL, job)
        self.cmap = connection_map
        self._warned: set[str] = set()
        self._names_of: tuple[Any, dict[str, str], dict[str, dict[str, str]]] = (None, {}, {})

    @property
    def graph(self) -> LineageGraph:
        return self.b.graph

    def build(self) -> LineageGraph:
        for model in self.c.models:
            self._model(model)
        models = {m.name: m for m in self.c.models}
        for report in self.c.reports:
            self._report(report, models.get(report.model or ""))
        return self.b.graph

    # ------------------------------------------------------------------ naming
    def _prefix(self, server: str, database: str | None, connector: str, file: str) -> str | None:
        keys = [
            k for k in (f"{server}/{database}" if server and database else "", database or "", server) if k
        ]
        found = next((m for m in (self.cmap.lookup(k) for k in keys) if m is not None), None)
        label = keys[0] if keys else f"{connector} source of unknown server"
        if found is None and label not in self._warned:
            self._warned.add(label)
            self.b.warn(
                f"Power BI source {label!r} ({connector}) is not in the connection map: its tables keep the "
                "names the SQL gives them (map it to the namespace the other readers use, -o connection_map=FILE)",
                code="powerbi-unmapped-connection",
                file=file,
            )
        return found

    def _table_lineage(self, ref: TableRef, columns: list[str], file: str) -> QueryLineage:
        prefix = self._prefix(ref.server, ref.database, ref.connector, file)
        parts = [p for p in (ref.schema, ref.table) if p]
        return query_lineage(
            table_sql(parts, columns, _dialect(ref.connector)), _dialect(ref.connector), prefix
        )

    def _native_lineage(self, n: Native, file: str) -> QueryLineage:
        prefix = self._prefix(n.server, n.database, n.connector, file)
        return query_lineage(n.sql, _dialect(n.connector), prefix)

    # ------------------------------------------------------------------ models
    def table_id(self, model: str, table: str) -> str:
        return bi_id(TOOL, BI_DATASET, f"{model}.{table}")

    def _model(self, model: PbiModel) -> None:
        globals_: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for name, text in model.expressions.items():
            try:
                globals_[name] = parse(text)
            except MSyntaxError as exc:
                errors[name] = str(exc)
        resolver = Resolver(globals_, broken=errors)
        base: dict[str, dict[str, list[FieldEdge]]] = {}  # table -> field -> edges into it
        read: dict[str, tuple[list[str], list[FieldEdge], list[str]]] = {}
        for t in model.tables.values():
            read[t.name] = self._table(model, t, resolver)
            base[t.name] = {}
            for e in read[t.name][1]:
                if e[2] is not None:
                    base[t.name].setdefault(e[2], []).append(e)
        # one process per table: its warehouse tables, then what its DAX names
        for t in model.tables.values():
            inputs, edges, queries = read[t.name]
            more_inputs, more_edges = self._dax(model, t, base)
            ds = self.b.graph.dataset(self.table_id(model.name, t.name))
            assert ds is not None
            self.b.feed(
                ds,
                inputs + more_inputs,
                edges=edges + more_edges,
                query_text="\n;\n".join(queries) or None,
                source_file=t.file,
            )

    def _table(
        self, model: PbiModel, t: PbiTable, resolver: Resolver
    ) -> tuple[list[str], list[FieldEdge], list[str]]:
        """The table's BI dataset, and the warehouse tables it reads: (inputs, column edges, native SQL)."""
        fields = [c.name for c in t.columns] + [m for m, _ in t.measures]
        self.b.bi_object(
            BI_DATASET,
            f"{model.name}.{t.name}",
            t.name,
            namespace=model.name,
            columns=fields,
            facets={
                "objectType": "table",
                **({"mode": t.partitions[0][3]} if t.partitions and t.partitions[0][3] else {}),
            },
        )
        where = f"table {t.name!r}"
        inputs: list[str] = []
        edges: list[FieldEdge] = []
        queries: list[str] = []
        for pname, kind, source, _mode in t.partitions:
            if kind == "sql":  # a legacy query partition: SQL on its provider data source
                server, database = t.sql_sources.get(pname, ("", None))
                if not server and t.mashup:  # the connection string is encrypted: the table's query names it
                    server, database = self._mashup_source(t.mashup, resolver) or (server, database)
                self._resolved(
                    t,
                    Tables(natives=[Native("sqlserver", server, database, source)]),
                    inputs,
                    edges,
                    queries,
                    where,
                )
                continue
            if kind.lower() not in ("m", "query", ""):
                self.b.warn(
                    f"{where}: partition {pname!r} is of kind {kind!r} ({'DAX, not read' if kind == 'calculated' else 'not read'}): no upstream table",
                    code="powerbi-unresolved",
                    file=t.file,
                )
                continue
            try:
                node = parse(source)
            except MSyntaxError as exc:
                self.b.warn(
                    f"{where}: its M expression does not parse: {exc}", code="powerbi-m-syntax", file=t.file
                )
                continue
            result = resolver.resolve(node)
            if isinstance(result, Unresolved):
                step = f" step {result.step!r}:" if result.step else ""
                self.b.warn(
                    f"{where}:{step} {result.reason}: no upstream table",
                    code="powerbi-unresolved",
                    file=t.file,
                )
                continue
            self._resolved(t, result, inputs, edges, queries, where)
        return inputs, edges, queries

    @staticmethod
    def _mashup_source(m: str, resolver: Resolver) -> tuple[str, str | None] | None:
        """The SQL Server and database a table's Power Query query reads (one of them, else None)."""
        try:
            result = resolver.resolve(parse(m))
        except MSyntaxError:
            return None
        if not isinstance(result, Tables):
            return None
        found = {(r.server, r.database) for r in result.tables if r.connector == "sqlserver"}
        found |= {(n.server, n.database) for n in result.natives if n.connector == "sqlserver"}
        return found.pop() if len(found) == 1 else None

    def _resolved(
        self,
        t: PbiTable,
        result: Tables,
        inputs: list[str],
        edges: list[FieldEdge],
        queries: list[str],
        where: str,
    ) -> None:
        # each column -> the part of a join it comes from (the first table, or an expanded joined one)
        # and its name there; a join's key columns give JOIN edges (no field)
        wanted: dict[int, tuple[Tables, dict[str, list[str]]]] = {id(p): (p, {}) for p in result.parts()}
        for c in t.columns:
            if c.source_column:
                part, name = result.source(c.source_column)
                wanted.setdefault(id(part), (part, {}))[1].setdefault(name, []).append(c.name)
        for kt, kc in result.keys:
            part, name = kt.source(kc)
            wanted.setdefault(id(part), (part, {}))[1].setdefault(name, [])
        # a step the reader does not follow column by column (Table.Join, an expand it cannot place)
        # makes the whole table's lineage table level
        for part, cols in wanted.values():
            self._part(t, part, result.exact and part.exact, cols, inputs, edges, queries, where)
        if any(not (result.exact and p.exact) and p.tables for p, _ in wanted.values()):
            self.b.warn(
                f"{where}: its M expression joins tables (Table.Join / AddJoinColumn, or a NestedJoin whose "
                "columns are not named): table-level lineage only",
                code="powerbi-join",
                file=t.file,
            )

    def _part(
        self,
        t: PbiTable,
        part: Tables,
        exact: bool,
        cols: dict[str, list[str]],
        inputs: list[str],
        edges: list[FieldEdge],
        queries: list[str],
        where: str,
    ) -> None:
        """The lineage of one part (no join in it): ``cols``: its column -> the table's fields from it."""
        lineages: list[tuple[QueryLineage, str]] = []
        for ref in part.tables:
            lineages.append(
                (
                    self._table_lineage(ref, list(cols) if exact else [], t.file),
                    _SCHEME.get(ref.connector, ref.connector) + "://" + ref.server,
                )
            )
        for n in part.natives:
            queries.append(n.sql)
            lineages.append(
                (self._native_lineage(n, t.file), _SCHEME.get(n.connector, n.connector) + "://" + n.server)
            )
        for ql, conn in lineages:
            if ql.error:
                self.b.warn(
                    f"{where}: {ql.error}: no upstream table", code="powerbi-unparsed-sql", file=t.file
                )
                continue
            for ident, namespace, tname in ql.reads:
                self.b.table(ident, namespace=namespace, name=tname, connection=conn)
                inputs.append(ident)
            for name, fields in cols.items() if exact or part.natives else []:
                for src, scol, kind, expr in ql.columns.get(name.lower(), []):
                    for f in fields:
                        edges.append((src, scol, f, kind, expr))
                    if not fields:
                        edges.append((src, scol, None, "JOIN", None))
            for src, scol, kind, expr in ql.rows:
                edges.append((src, scol, None, kind, expr))

    def _names(self, model: PbiModel) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """The model's table names and each table's field names by their lower case (once per model)."""
        if self._names_of[0] is not model:
            fields = {
                n: {f.lower(): f for f in [c.name for c in tt.columns] + [m for m, _ in tt.measures]}
                for n, tt in model.tables.items()
            }
            self._names_of = (model, {n.lower(): n for n in model.tables}, fields)
        return self._names_of[1], self._names_of[2]

    def _dax(
        self, model: PbiModel, t: PbiTable, base: dict[str, dict[str, list[FieldEdge]]]
    ) -> tuple[list[str], list[FieldEdge]]:
        """Calculated columns and measures: edges from the columns their DAX names directly (and the
        other tables' BI datasets they read)."""
        formulas = {c.name: c.expression for c in t.columns if c.expression} | {m: e for m, e in t.measures}
        measures = {m for m, _ in t.measures}
        if not formulas:
            return [], []
        inputs: list[str] = []
        extra: list[FieldEdge] = []

        # DAX names are case-insensitive: 'orders'[AMOUNT] is Orders[Amount]
        tables_l, fields_l = self._names(model)

        def refs(text: str, depth: int = 0) -> list[tuple[str, str]]:
            clean = _DAX_COMMENT.sub(" ", _DAX_STRING.sub('""', text))
            out: list[tuple[str, str]] = []
            for quoted, plain, col in _DAX_REF.findall(clean):
                named = quoted.replace("''", "'") if quoted else plain
                if named:
                    table = tables_l.get(named.lower(), named)
                elif col.lower() in fields_l[t.name]:
                    table = t.name
                else:  # [Measure] of another table
                    table = next((n for n, fs in fields_l.items() if col.lower() in fs), t.name)
                col = fields_l.get(table, {}).get(col.lower(), col)
                if table == t.name and col in formulas and depth < 10:
                    out += refs(str(formulas[col]), depth + 1)
                else:
                    out.append((table, col))
            return out

        for fld, dax in formulas.items():
            kind = "AGGREGATION" if fld in measures and _DAX_AGG.search(dax or "") else "TRANSFORMATION"
            for table, col in dict.fromkeys(refs(str(dax))):
                if table == t.name:
                    for src, scol, _t, _k, _x in base.get(table, {}).get(col, []):
                        extra.append((src, scol, fld, kind, dax))
                elif table in model.tables:
                    other = self.table_id(model.name, table)
                    inputs.append(other)
                    extra.append((other, col, fld, kind, dax))
        return inputs, extra

    # ------------------------------------------------------------------ reports
    def _report(self, report: PbiReport, model: PbiModel | None) -> None:
        model_name = report.model or report.name
        if report.live:
            self.b.warn(
                f"report {report.name!r} is a live connection ({report.live}): its model is not in the files; "
                "its visuals name the tables of that model",
                code="powerbi-live-connection",
                file=report.path,
            )
        elif model is None:
            self.b.warn(
                f"report {report.name!r}: its model {report.model!r} is not among the files read",
                code="powerbi-unresolved",
                file=report.path,
            )
        for page in report.pages:
            charts: list[str] = []
            for v in page.visuals:
                if not v.fields:
                    continue  # a text box, image, shape: no chart
                chart = self.b.bi_object(
                    CHART,
                    f"{report.name}.{page.key}.{v.key}",
                    f"{page.name} / {v.visual_type} {v.key}",
                    namespace=report.name,
                    facets={"chartType": v.visual_type or None, "objectType": "visual"},
                )
                charts.append(chart.id)
                inputs: list[str] = []
                edges: list[FieldEdge] = []
                for f in v.fields:
                    src = self.table_id(model_name, f.entity)
                    known = self.b.graph.dataset(src)
                    if known is not None and model is None and not known.has_column(f.prop):
                        known.columns.append(Column(name=f.prop))  # a table known only by what visuals name
                    if known is None:
                        if model is not None:
                            self.b.warn(
                                f"report {report.name!r} visual {v.key!r}: table {f.entity!r} is not in model {model.name!r}",
                                code="powerbi-unresolved",
                                file=report.path,
                            )
                        self.b.bi_object(
                            BI_DATASET,
                            f"{model_name}.{f.entity}",
                            f.entity,
                            namespace=model_name,
                            columns=[f.prop],
                            facets={"objectType": "table"},
                        )
                    inputs.append(src)
                    edges.append((src, f.prop, f.label, "AGGREGATION" if f.aggregated else "IDENTITY", None))
                self.b.feed(chart, inputs, edges=edges, source_file=report.path)
            self.b.dashboard(
                f"{report.name}.{page.key}", page.name, charts, namespace=report.name, source_file=report.path
            )
