"""A LookML project -> the BI lineage model (lineage/bi.py).

* A **view** is a BI dataset ``lookml:bi_dataset:<project>.<view>`` whose fields are its dimensions,
  dimension groups and measures. It reads ``sql_table_name`` (else a table named as the view), or its
  ``derived_table: sql`` through the SQL reader (``${other.SQL_TABLE_NAME}`` is the other view: view ->
  view lineage), or a native derived table's ``explore_source`` when that explore is in the project. A
  field's SQL (``${TABLE}.col``, ``${other_field}``) gives its column edges: the view is analysed as
  ``SELECT <field SQL> AS <field> FROM <table or (derived sql)> AS "TABLE"``.
* An **explore** is a BI dataset ``lookml:bi_dataset:<project>.<model>.<explore>`` reading its base view
  and joined views; its fields are ``<alias>.<field>``, and ``sql_on`` gives JOIN edges.
* A **dashboard element** (``.dashboard.lookml``) is a chart ``lookml:chart:<project>.<dashboard>.<element>``
  fed by its explore, one field per ``fields`` entry; the **dashboard** holds its elements.

Tables are named through the model's connection: the connection map (``-o connection_map=FILE``:
connection name -> namespace) puts the namespace in front of ``schema.table``; a connection the map does
not name keeps the tables as the SQL names them (one warning per connection).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sqlglot import exp

from atlas_sync.lineage.bi import BI_DATASET, CHART, BiBuilder, FieldEdge, bi_id
from atlas_sync.lineage.lookml.project import Project, render_liquid
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage.naming import NamespaceMap
from atlas_sync.lineage.sql.analyze import Context
from atlas_sync.lineage.sql.schema import SchemaStore
from atlas_sync.lineage.sql.script import analyze_sql

TOOL = "lookml"
_TARGET = "atlas_sync_lookml_view"
_ALIAS = "lkml_table"
_REF = re.compile(r"\$\{\s*([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?\s*\}")
_PLACEHOLDER = "atlas_sync_lookml_view__"
_TABLE_COLUMN = re.compile(r"\$\{\s*TABLE\s*\}\.([A-Za-z_][A-Za-z0-9_]*)")
# a measure's type -> the SQL Looker wraps its sql in
_AGGREGATES = {
    "sum": "SUM({})",
    "sum_distinct": "SUM(DISTINCT {})",
    "average": "AVG({})",
    "average_distinct": "AVG(DISTINCT {})",
    "count": "COUNT({})",
    "count_distinct": "COUNT(DISTINCT {})",
    "max": "MAX({})",
    "min": "MIN({})",
    "median": "MEDIAN({})",
    "median_distinct": "MEDIAN({})",
    "percentile": "MEDIAN({})",
    "list": "MAX({})",
}


class LookmlGraph:
    def __init__(
        self,
        project: Project,
        *,
        job: str,
        connection_map: NamespaceMap,
        dialect: str = "",
        default_schema: str | None = None,
        user_attributes: Mapping[str, str] | None = None,
    ) -> None:
        self.p = project
        self.b = BiBuilder(TOOL, job)
        self.cmap = connection_map
        self.dialect = dialect
        self.default_schema = default_schema
        self.user_attributes = dict(user_attributes or {})
        self._warned_connections: set[str] = set()
        self._view_connection = self._connections()
        self._views_done: set[str] = set()
        # view -> its fields (dimension groups also as <group>_<timeframe>)
        self._fields: dict[str, list[str]] = {}

    @property
    def graph(self) -> LineageGraph:
        return self.b.graph

    def view_id(self, view: str) -> str:
        return bi_id(TOOL, BI_DATASET, f"{self.p.name}.{view}")

    def explore_id(self, model: str, explore: str) -> str:
        return bi_id(TOOL, BI_DATASET, f"{self.p.name}.{model}.{explore}")

    def build(self) -> LineageGraph:
        for err_file, message, line in self.p.errors:
            self.b.graph.problem(message, code="lookml-invalid", file=err_file, line=line, severity="error")
        for warn_file, warning in self.p.warnings:
            self.b.warn(warning, code="lookml-project", file=warn_file)
        for view in self.p.views:
            if not self.p.views[view].get("extension"):
                self._view(view, frozenset())
        for model in self.p.models.values():
            for explore in model.explores:
                self._explore(model.name, explore)
        for dash, file in self.p.dashboards:
            self._dashboard(dash, file)
        return self.b.graph

    # ------------------------------------------------------------------ connections
    def _connections(self) -> dict[str, str | None]:
        """The connection of each view: that of the first model whose explores use it."""
        out: dict[str, str | None] = {}
        for model in self.p.models.values():
            for e in model.explores:
                used = [str(e.get("from") or e.get("view_name") or e["name"])]
                used += [
                    str(j.get("from") or j.get("name")) for j in e.get("joins") or [] if isinstance(j, dict)
                ]
                for v in used:
                    out.setdefault(v, model.connection)
        conns = {m.connection for m in self.p.models.values() if m.connection}
        only = next(iter(conns)) if len(conns) == 1 else None
        for v in self.p.views:
            out.setdefault(v, only)
        return out

    def _prefix(self, connection: str | None) -> str | None:
        if not connection:
            return None
        mapped = self.cmap.lookup(connection)
        if mapped is None and connection not in self._warned_connections:
            self._warned_connections.add(connection)
            self.b.warn(
                f"LookML connection {connection!r} is not in the connection map: its tables keep the names "
                "the SQL gives them (map it to the namespace the other readers use, -o connection_map=FILE)",
                code="lookml-unmapped-connection",
            )
        return mapped

    # ------------------------------------------------------------------ views
    def _render(self, text: str, where: str, file: str | None, **names: str) -> str:
        r = render_liquid(text, constants=self.p.constants, names=names, user_attributes=self.user_attributes)
        for c in r.unknown_constants:
            self.b.warn(
                f"{where}: constant @{{{c}}} is not in the manifest", code="lookml-constant", file=file
            )
        for note in dict.fromkeys(r.notes):
            self.b.warn(f"{where}: {note}", code="lookml-liquid", file=file)
        return r.text

    def _field_sql(self, view: dict[str, Any]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for key in ("dimensions", "dimension_groups", "measures"):
            for f in view.get(key) or []:
                if not isinstance(f, dict) or not f.get("name"):
                    continue
                sql = f.get("sql")
                if key == "measures" and not sql:
                    # count and friends without sql: no field of the table
                    out[str(f["name"])] = None
                    continue
                text = str(sql) if sql else "${TABLE}." + str(f["name"])
                agg = _AGGREGATES.get(str(f.get("type") or "")) if key == "measures" else None
                out[str(f["name"])] = agg.format(text) if agg else text
        return out

    def _expand(self, sql: str, fields: Mapping[str, str | None], depth: int = 0) -> str:
        """``${TABLE}`` -> the view's alias, ``${field}`` -> that field's SQL (recursively)."""

        def sub(m: re.Match[str]) -> str:
            a, b = m.group(1), m.group(2)
            if b is None and a == "TABLE":
                return _ALIAS
            if b is None and a in fields and fields[a] is not None and depth < 10:
                return "(" + self._expand(str(fields[a]), fields, depth + 1) + ")"
            return "NULL"

        return _REF.sub(sub, sql)

    def _view(self, name: str, stack: frozenset[str]) -> str | None:
        """The BI dataset of view ``name`` (built once); None when there is no such view."""
        vid = self.view_id(name)
        if name in self._views_done:
            return vid
        view = self.p.views.get(name)
        if view is None or name in stack:
            return None
        self._views_done.add(name)
        file = self.p.view_files.get(name)
        where = f"view {name!r}"
        fields = self._field_sql(view)
        groups = {
            str(g["name"]): [str(t) for t in g.get("timeframes") or []]
            for g in view.get("dimension_groups") or []
            if isinstance(g, dict) and g.get("name")
        }
        self._fields[name] = list(fields) + [f"{g}_{t}" for g, ts in groups.items() for t in ts]
        target = self.b.bi_object(
            BI_DATASET,
            f"{self.p.name}.{name}",
            name,
            columns=list(fields),
            description=view.get("description"),
            facets={"objectType": "view"},
        )
        connection = self._view_connection.get(name)
        prefix = self._prefix(connection)
        derived = view.get("derived_table") if isinstance(view.get("derived_table"), dict) else None
        if derived and derived.get("explore_source"):
            self._native_derived(name, target.id, derived["explore_source"], file, stack)
            return vid
        view_inputs: dict[str, str] = {}  # placeholder table -> view dataset id
        if derived and derived.get("sql"):
            sql = self._render(str(derived["sql"]), where, file, view=name)

            def view_ref(m: re.Match[str]) -> str:
                a, b = m.group(1), m.group(2)
                if b == "SQL_TABLE_NAME":
                    other = self.p.views.get(a)
                    if other is not None and not other.get("derived_table") and other.get("sql_table_name"):
                        return self._render(
                            str(other["sql_table_name"]), f"view {a!r}", self.p.view_files.get(a)
                        ).strip()
                    if self._view(a, stack | {name}) is not None:
                        ph = _PLACEHOLDER + a
                        view_inputs[ph] = self.view_id(a)
                        return ph
                return "NULL"

            source = "(" + _REF.sub(view_ref, sql).strip().rstrip(";") + f") AS {_ALIAS}"
            query_text = sql
        else:
            table = str(view.get("sql_table_name") or name)
            table = self._render(table, where, file, view=name).strip().rstrip(";")
            source = f"{table} AS {_ALIAS}"
            query_text = None
        exprs = [
            (f, self._expand(self._render(s, where, file, view=name), fields)) for f, s in fields.items() if s
        ]
        edges, reads, why = self._analyse(source, exprs, prefix)
        if why:
            self.b.warn(f"{where}: {why}", code="lookml-unparsed-sql", file=file)
        inputs: list[str] = []
        renamed: dict[str, str] = {}
        for ident, namespace, tname in reads:
            if tname in view_inputs:
                renamed[ident] = view_inputs[tname]
                inputs.append(view_inputs[tname])
                continue
            self.b.table(ident, namespace=namespace, name=tname, connection=connection)
            inputs.append(ident)
        edges = [(renamed.get(s, s), sc, tc, k, x) for s, sc, tc, k, x in edges]
        self.b.feed(target, inputs, edges=edges, query_text=query_text, source_file=file)
        return vid

    def _native_derived(
        self, name: str, vid: str, source: Any, file: str | None, stack: frozenset[str]
    ) -> None:
        explore = str(source.get("name") or "") if isinstance(source, dict) else ""
        found = [(m.name, e) for m in self.p.models.values() for e in m.explores if e.get("name") == explore]
        if len(found) != 1:
            self.b.warn(
                f"view {name!r}: its native derived table's explore {explore!r} is "
                + ("not in the project" if not found else "in several models")
                + ": no upstream lineage",
                code="lookml-unresolved",
                file=file,
            )
            return
        model, e = found[0]
        eid = self._explore(model, e, stack | {name})
        if eid is None:
            return
        edges: list[FieldEdge] = []
        for col in source.get("columns") or []:
            if isinstance(col, dict) and col.get("name"):
                fld = str(col.get("field") or f"{e['name']}.{col['name']}")
                edges.append((eid, fld, str(col["name"]), "IDENTITY", None))
        # the view's own fields over the derived table's columns (${TABLE}.column)
        columns = {c for _e, _f, c, _k, _x in edges if c}
        by_column = {c: f for _e, f, c, _k, _x in edges if c and f}
        for fname, sql in self._field_sql(self.p.views[name]).items():
            if fname in columns or not sql:
                continue
            for b in _TABLE_COLUMN.findall(sql):
                if b in by_column:
                    plain = sql.strip() == "${TABLE}." + b
                    kind = (
                        "IDENTITY" if plain else ("AGGREGATION" if _is_aggregate(sql) else "TRANSFORMATION")
                    )
                    edges.append((eid, by_column[b], fname, kind, None if plain else sql))
        ds = self.b.graph.dataset(vid)
        assert ds is not None
        self.b.feed(ds, [eid], edges=edges, source_file=file)

    def _analyse(
        self, source: str, exprs: list[tuple[str, str]], prefix: str | None
    ) -> tuple[list[FieldEdge], list[tuple[str, str, str]], str | None]:
        default = ".".join(p for p in (prefix, self.default_schema) if p) or None
        if prefix and not self.default_schema:
            default = None  # a catalog without a schema: qualified names get it below
        q = self.dialect or None
        items = [f"{e} AS {exp.to_identifier(n, quoted=True).sql(dialect=q)}" for n, e in exprs] or ["*"]
        why = None
        for select in (f"SELECT {', '.join(items)} FROM {source}", f"SELECT * FROM {source}"):
            ctx = Context.create(self.dialect, SchemaStore(None, dialect=self.dialect), default)
            if prefix and not self.default_schema:
                ctx.catalog = prefix
            results = [
                r for r in analyze_sql(f"CREATE VIEW {_TARGET} AS {select}", context=ctx) if r.type != "EMPTY"
            ]
            if len(results) != 1 or results[0].error or not results[0].writes:
                err = next((p for r in results for p in r.problems if p.get("severity") == "error"), None)
                why = why or f"its SQL does not parse ({err['message'] if err else 'no lineage'})"
                continue
            st = results[0]
            out_id = st.writes[0].id
            reads = [(r.id, r.namespace, r.name) for r in st.reads if r.id != out_id]
            edges: list[FieldEdge] = [
                (e.source, e.source_column, e.target_column, e.kind, e.expression)
                for e in st.edges
                if e.target == out_id and e.source != out_id
            ]
            if why:
                why += " (its fields' lineage is left out)"
            return edges, reads, why
        return [], [], why

    # ------------------------------------------------------------------ explores
    def _explore(self, model: str, e: dict[str, Any], stack: frozenset[str] = frozenset()) -> str | None:
        eid = self.explore_id(model, str(e["name"]))
        if self.b.graph.dataset(eid) is not None:
            return eid
        file = self.p.models[model].file
        base_alias = str(e.get("view_name") or e["name"])
        aliases = {base_alias: str(e.get("from") or base_alias)}
        joins = [j for j in e.get("joins") or [] if isinstance(j, dict) and j.get("name")]
        for j in joins:
            aliases[str(j["name"])] = str(j.get("from") or j["name"])
        target = self.b.bi_object(
            BI_DATASET,
            f"{self.p.name}.{model}.{e['name']}",
            str(e.get("label") or e["name"]),
            namespace=model,
            description=e.get("description"),
            facets={"objectType": "explore"},
        )
        inputs: list[str] = []
        edges: list[FieldEdge] = []
        for alias, view in aliases.items():
            vid = self._view(view, stack)
            if vid is None:
                self.b.warn(
                    f"explore {model}.{e['name']}: view {view!r} is not in the project",
                    code="lookml-unresolved",
                    file=file,
                )
                continue
            inputs.append(vid)
            for f in self._field_sql(self.p.views[view]):
                edges.append((vid, f, f"{alias}.{f}", "IDENTITY", None))
        for j in joins:
            for a, f in _REF.findall(str(j.get("sql_on") or "")):
                if f and a in aliases and aliases[a] in self.p.views:
                    edges.append((self.view_id(aliases[a]), f, None, "JOIN", str(j.get("sql_on")).strip()))
        self.b.feed(target, inputs, edges=edges, source_file=file)
        return eid

    def _explore_field(self, eid: str, field: str) -> str | None:
        ds = self.b.graph.dataset(eid)
        if ds is None:
            return None
        if ds.has_column(field):
            return field
        alias, _, name = field.partition(".")
        for c in ds.column_names():
            a, _, g = c.partition(".")
            if a == alias and name.startswith(g + "_"):
                return c  # a dimension group's timeframe (created_date -> created)
        return None

    # ------------------------------------------------------------------ dashboards
    def _dashboard(self, dash: dict[str, Any], file: str) -> None:
        dname = str(dash["dashboard"])
        charts: list[str] = []
        elements = dash.get("elements")
        for el in elements if isinstance(elements, list) else []:
            if not isinstance(el, dict) or not el.get("name") or el.get("type") in ("text", "button"):
                continue
            key = f"{self.p.name}.{dname}.{el['name']}"
            chart = self.b.bi_object(
                CHART,
                key,
                str(el.get("title") or el["name"]),
                facets={"chartType": str(el.get("type") or "") or None},
            )
            charts.append(chart.id)
            model, explore = el.get("model"), el.get("explore")
            eid = self.explore_id(str(model), str(explore))
            if not model or not explore or self.b.graph.dataset(eid) is None:
                self.b.warn(
                    f"dashboard {dname!r} element {el['name']!r}: explore {model}.{explore} is not in the project: no lineage",
                    code="lookml-unresolved",
                    file=file,
                )
                continue
            edges: list[FieldEdge] = []
            fields = el.get("fields")
            for f in fields if isinstance(fields, list) else []:
                src = self._explore_field(eid, str(f))
                if src is not None:
                    edges.append((eid, src, str(f), "IDENTITY", None))
            self.b.feed(chart, [eid], edges=edges, source_file=file)
        self.b.dashboard(
            f"{self.p.name}.{dname}",
            str(dash.get("title") or dname),
            charts,
            description=dash.get("description"),
            source_file=file,
        )


def _is_aggregate(sql: str) -> bool:
    return any(sql.startswith(a.split("(")[0] + "(") for a in _AGGREGATES.values())
