"""Tableau workbooks and data sources -> the BI lineage model (lineage/bi.py, docs/bi.md).

* A **data source** is a BI dataset: ``tableau:bi_dataset:<workbook>.<data source name>`` in a workbook,
  ``tableau:bi_dataset:<file stem>`` for a published data source (``.tds`` / ``.tdsx``). It reads the
  tables of its relations (``table``, joins, unions, the object graph's relations), custom SQL
  (``type="text"``) through the SQL reader with its connection's dialect; its fields (``<column>``,
  metadata records) get column edges from the table columns they map to, calculated fields from the
  fields their formula names. A workbook's data source that is a published one (``sqlproxy``) reads the
  published data source of that name when it is given too.
* A **worksheet** is a chart ``tableau:chart:<workbook>.<sheet>`` fed by its data sources, one column per
  field it uses (``<datasource-dependencies>``, ``[ds].[field]`` references).
* A **dashboard** ``tableau:dashboard:<workbook>.<dashboard>`` holds the worksheets of its zones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

from atlas_sync.errors import InputError
from atlas_sync.lineage.bi import BI_DATASET, CHART, BiBuilder, FieldEdge, bi_id
from atlas_sync.lineage.bisql import QueryLineage, query_lineage, table_sql
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage.naming import NamespaceMap
from atlas_sync.lineage.sql.dialects import resolve_dialect
from atlas_sync.lineage.tableau.document import TableauDoc

TOOL = "tableau"
# Tableau connection class -> the SQL reader's dialect
_DIALECT = {
    "postgres": "postgres",
    "sqlserver": "tsql",
    "azure_sql_dw": "tsql",
    "azure_sqldb": "tsql",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "redshift": "redshift",
    "oracle": "oracle",
    "mysql": "mysql",
    "databricks": "databricks",
    "teradata": "teradata",
    "presto": "trino",
    "trino": "trino",
    "athena": "athena",
    "hive": "hive",
    "hortonworkshadoophive": "hive",
    "cloudera": "hive",
    "spark": "spark",
    "duckdb": "duckdb",
    "sqlite": "sqlite",
}
# Tableau connection class -> the scheme of the connection facet (the atlas profile picks table types by it)
_SCHEME = {"postgres": "postgresql", "sqlserver": "mssql", "azure_sqldb": "mssql", "azure_sql_dw": "mssql"}
# connections to files and extracts: no warehouse table behind them
_FILE_CLASSES = {"hyper", "dataengine", "excel-direct", "excel", "textscan", "csv", "json", "ogrdirect"}
_PROXY = "sqlproxy"
_AGG = re.compile(r"\b(SUM|AVG|COUNT|COUNTD|MIN|MAX|MEDIAN|ATTR|STDEV|STDEVP|VAR|VARP|PERCENTILE)\s*\(", re.I)
_REF = re.compile(r"\[([^\[\]]+)\]")
_DS_FIELD = re.compile(r"\[([^\[\]]+)\]\.\[([^\[\]]+)\]")
_AGG_DERIVATIONS = {"sum", "avg", "count", "countd", "min", "max", "median", "attr", "stdev", "var"}


def _bare(name: str | None) -> str:
    """``[amount]`` -> ``amount``."""
    n = (name or "").strip()
    return n[1:-1] if n.startswith("[") and n.endswith("]") else n


def _parts(table: str) -> list[str]:
    """``[main_marts].[fct_orders]`` -> ``["main_marts", "fct_orders"]``."""
    found = re.findall(r"\[((?:[^\]]|\]\])*)\]", table)
    return [f.replace("]]", "]") for f in found] if found else [p for p in table.split(".") if p]


def _stable(el: ET.Element, name: str) -> str:
    """A sheet's or dashboard's key: its ``<simple-id uuid>`` (Tableau 2019.1+; a renamed sheet keeps
    it), else its name."""
    sid = el.find("simple-id")
    uuid = (sid.get("uuid") or "").strip("{}").lower() if sid is not None else ""
    return uuid or name


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass
class _Conn:
    cls: str
    server: str
    dbname: str
    schema: str
    prefix: str | None
    dialect: str

    @property
    def facet(self) -> str | None:
        if not self.cls or self.cls in _FILE_CLASSES:
            return None
        return f"{_SCHEME.get(self.cls, self.cls)}://{self.server}"


@dataclass
class _Leaf:
    name: str  # the relation's name (fields map to it as [name])
    kind: str  # table | text
    text: str  # the table's name or the custom SQL
    conn: _Conn | None
    remote: list[str] = field(default_factory=list)  # remote columns fields read from it


class TableauGraph:
    def __init__(self, docs: list[TableauDoc], *, job: str, connection_map: NamespaceMap) -> None:
        self.docs = docs
        self.b = BiBuilder(TOOL, job)
        self.cmap = connection_map
        self._warned: set[str] = set()
        # published data sources given as files: normalised name -> BI dataset id
        self._published: dict[str, str] = {}

    @property
    def graph(self) -> LineageGraph:
        return self.b.graph

    def build(self) -> LineageGraph:
        for doc in self.docs:
            if not doc.is_workbook:
                key = doc.root.get("formatted-name") or doc.root.get("caption") or doc.stem
                for n in {doc.stem, key, doc.root.get("caption") or ""} - {""}:
                    self._published[_norm(n)] = bi_id(TOOL, BI_DATASET, doc.stem)
        # published data sources first: a workbook's data source reads them
        for doc in self.docs:
            if not doc.is_workbook:
                self._datasource(doc.root, doc.stem, doc, published=True)
        for doc in self.docs:
            if doc.is_workbook:
                self._workbook(doc)
        return self.b.graph

    # ------------------------------------------------------------------ connections
    def _conn(self, el: ET.Element | None, doc: TableauDoc) -> _Conn | None:
        if el is None:
            return None
        cls = (el.get("class") or "").lower()
        server = el.get("server") or ""
        dbname = el.get("dbname") or el.get("project") or el.get("CATALOG") or ""
        schema = el.get("schema") or el.get("dataset") or ""
        prefix = None
        if cls not in _FILE_CLASSES and cls != _PROXY:
            keys = [k for k in (f"{server}/{dbname}" if server else "", dbname, server) if k]
            prefix = next((m for m in (self.cmap.lookup(k) for k in keys) if m is not None), None)
            label = f"{server}/{dbname}" if server else dbname
            if prefix is None and label and label not in self._warned:
                self._warned.add(label)
                self.b.warn(
                    f"Tableau connection {label!r} ({cls}) is not in the connection map: its tables keep the "
                    "names the SQL gives them (map it to the namespace the other readers use, "
                    "-o connection_map=FILE)",
                    code="tableau-unmapped-connection",
                    file=doc.path,
                )
        try:
            dialect = resolve_dialect(_DIALECT.get(cls, "")) if _DIALECT.get(cls) else ""
        except InputError:
            dialect = ""
        return _Conn(cls=cls, server=server, dbname=dbname, schema=schema, prefix=prefix, dialect=dialect)

    # ------------------------------------------------------------------ data sources
    def _datasource(
        self, ds: ET.Element, key: str, doc: TableauDoc, *, published: bool = False
    ) -> str | None:
        name = ds.get("name") or key
        caption = ds.get("caption") or ds.get("formatted-name") or name
        if name == "Parameters":
            return None
        where = f"data source {caption!r}"
        conn_el = ds.find("connection")
        extract = ds.find("extract")
        has_extract = extract is not None and extract.get("enabled", "true") != "false"
        facets = {"objectType": "published data source" if published else "data source"}
        if has_extract:
            facets["extract"] = "true"
        fields = self._fields(ds)
        target = self.b.bi_object(
            BI_DATASET, key, caption, namespace=doc.stem, columns=list(fields), facets=facets
        )
        if conn_el is None:
            self.b.warn(
                f"{where}: no connection: no upstream lineage", code="tableau-unresolved", file=doc.path
            )
            return target.id
        cls = (conn_el.get("class") or "").lower()
        if cls == _PROXY:
            return self._proxy(ds, conn_el, target.id, fields, where, doc)
        named: dict[str, _Conn | None] = {}
        for nc in conn_el.iter("named-connection"):
            named[nc.get("name") or ""] = self._conn(nc.find("connection"), doc)
        own = self._conn(conn_el, doc) if cls != "federated" else None
        leaves: dict[str, _Leaf] = {}
        unions: dict[str, list[str]] = {}
        joins: list[tuple[str, str, str]] = []  # (relation, remote column, clause) a join's clause names
        relations = [r for r in conn_el.findall("relation")] + [
            r for obj in ds.iter("object") for r in obj.iter("relation")
        ]
        for rel in relations:
            self._leaves(rel, named, own, leaves, unions, where, doc, joins)
        if not leaves and has_extract:
            self.b.warn(
                f"{where}: reads only its extract: no warehouse table", code="tableau-extract", file=doc.path
            )
            return target.id
        if not leaves:
            self.b.warn(
                f"{where}: no table or query among its relations: no upstream lineage",
                code="tableau-unresolved",
                file=doc.path,
            )
            return target.id
        # field -> (relation, remote column)
        mapping = self._mapping(ds, fields, leaves, unions)
        pairs_read = [p for pairs in mapping.values() for p in pairs] + [(r, c) for r, c, _ in joins]
        for rel_name, remote in pairs_read:
            if rel_name in leaves and remote not in leaves[rel_name].remote:
                leaves[rel_name].remote.append(remote)
        inputs: list[str] = []
        said = False
        lineage: dict[str, QueryLineage] = {}
        for leaf in leaves.values():
            if leaf.conn is not None and leaf.conn.cls in _FILE_CLASSES:
                self.b.warn(
                    f"{where}: relation {leaf.name!r} reads a file or extract ({leaf.conn.cls}"
                    + (f" {leaf.conn.dbname}" if leaf.conn.dbname else "")
                    + "): no warehouse table",
                    code="tableau-extract",
                    file=doc.path,
                )
                said = True
                continue
            ql = self._leaf_lineage(leaf)
            if ql.error:
                self.b.warn(
                    f"{where}: relation {leaf.name!r}: {ql.error}: no upstream table",
                    code="tableau-unparsed-sql",
                    file=doc.path,
                )
                said = True
                continue
            lineage[leaf.name] = ql
            for ident, namespace, tname in ql.reads:
                self.b.table(
                    ident, namespace=namespace, name=tname, connection=leaf.conn.facet if leaf.conn else None
                )
                inputs.append(ident)
        edges: list[FieldEdge] = []
        for fld, pairs in mapping.items():
            for rel_name, remote in pairs:
                leaf_ql = lineage.get(rel_name)
                for src, scol, kind, expr in leaf_ql.columns.get(remote.lower(), []) if leaf_ql else []:
                    edges.append((src, scol, fld, kind, expr))
        base = {f: [e for e in edges if e[2] == f] for f in fields}
        for fld, formula in fields.items():
            if formula is None:
                continue
            agg = bool(_AGG.search(formula))
            for ref in self._refs(formula, fields, base):
                for src, scol, _t, _k, _x in base.get(ref, []):
                    edges.append((src, scol, fld, "AGGREGATION" if agg else "TRANSFORMATION", formula))
        for ql in lineage.values():
            for src, scol, kind, expr in ql.rows:
                edges.append((src, scol, None, kind, expr))
        for rel_name, remote, clause in joins:  # a join's clause: the columns it joins on, as SQL's JOIN
            leaf_ql = lineage.get(rel_name)
            for src, scol, _kind, _expr in leaf_ql.columns.get(remote.lower(), []) if leaf_ql else []:
                edges.append((src, scol, None, "JOIN", clause))
        query = "\n;\n".join(leaf.text for leaf in leaves.values() if leaf.kind == "text") or None
        self.b.feed(target, inputs, edges=edges, query_text=query, source_file=doc.path)
        if not inputs and leaves and not said:
            self.b.warn(
                f"{where}: no table of its relations could be resolved",
                code="tableau-unresolved",
                file=doc.path,
            )
        return target.id

    def _proxy(
        self,
        ds: ET.Element,
        conn_el: ET.Element,
        target: str,
        fields: dict[str, str | None],
        where: str,
        doc: TableauDoc,
    ) -> str:
        """A workbook's data source that is a published one: joined by name to the given .tds."""
        repo = ds.find("repository-location")
        names = [
            conn_el.get("dbname") or "",
            repo.get("id") if repo is not None else "",
            ds.get("caption") or "",
        ]
        found = next((self._published[_norm(n)] for n in names if n and _norm(n) in self._published), None)
        if found is None:
            self.b.warn(
                f"{where}: published data source {names[0] or names[2]!r} is not among the files read: "
                "no upstream lineage (give its .tds / .tdsx too)",
                code="tableau-unresolved",
                file=doc.path,
            )
            return target
        pub = self.b.graph.dataset(found)
        pub_cols = set(pub.column_names()) if pub else set(fields)
        edges: list[FieldEdge] = [(found, f, f, "IDENTITY", None) for f in fields if f in pub_cols]
        ds_obj = self.b.graph.dataset(target)
        assert ds_obj is not None
        self.b.feed(ds_obj, [found], edges=edges, source_file=doc.path)
        return target

    def _leaves(
        self,
        rel: ET.Element,
        named: dict[str, _Conn | None],
        own: _Conn | None,
        out: dict[str, _Leaf],
        unions: dict[str, list[str]],
        where: str,
        doc: TableauDoc,
        joins: list[tuple[str, str, str]],
    ) -> None:
        kind = rel.get("type") or ""
        conn = named.get(rel.get("connection") or "", own) if rel.get("connection") else own
        if conn is None and len(named) == 1:
            conn = next(iter(named.values()))
        name = rel.get("name") or ""
        if kind == "table" and rel.get("table"):
            out.setdefault(name, _Leaf(name, "table", rel.get("table") or "", conn))
        elif kind == "text":
            out.setdefault(name, _Leaf(name, "text", (rel.text or "").strip(), conn))
        elif kind in ("join", "union", "collection"):
            children = rel.findall("relation")
            if kind == "union" and name:
                unions[name] = [c.get("name") or "" for c in children]
            for clause in rel.findall("clause"):
                operands = [e.get("op") or "" for e in clause.iter("expression")]
                refs = [m for m in (_DS_FIELD.fullmatch(o.strip()) for o in operands) if m]
                sep = f" {operands[0]} " if len(refs) == 2 else ", "  # op='=' of its two operands
                text = sep.join(m.group(0) for m in refs)
                joins += [(m.group(1), m.group(2), text) for m in refs]
            for child in children:
                self._leaves(child, named, own, out, unions, where, doc, joins)
        elif kind:
            self.b.warn(
                f"{where}: relation {name!r} of type {kind!r} is not read: its lineage is left out",
                code="tableau-unresolved",
                file=doc.path,
            )

    def _leaf_lineage(self, leaf: _Leaf) -> QueryLineage:
        conn = leaf.conn
        dialect = conn.dialect if conn else ""
        prefix = conn.prefix if conn else None
        if leaf.kind == "text":
            sql = leaf.text
        else:
            parts = _parts(leaf.text)
            sql = table_sql(parts, leaf.remote, dialect)
        schema = conn.schema if conn and conn.schema else None
        if conn and not schema and conn.cls in ("mysql", "mariadb") and conn.dbname:
            schema = conn.dbname  # MySQL's database is the schema of a one-part table name
        return query_lineage(sql, dialect, prefix, schema)

    @staticmethod
    def _fields(ds: ET.Element) -> dict[str, str | None]:
        """The data source's fields (local names) -> their formula (None: a field of a table)."""
        out: dict[str, str | None] = {}
        for rec in ds.iter("metadata-record"):
            if rec.get("class") == "column":
                local = _bare(rec.findtext("local-name"))
                if local:
                    out.setdefault(local, None)
        for m in ds.iter("map"):
            if _bare(m.get("key")):
                out.setdefault(_bare(m.get("key")), None)
        for col in ds.findall("column"):
            n = _bare(col.get("name"))
            if not n or n.startswith(":") or n == "Number of Records":
                continue
            calc = col.find("calculation")
            formula = calc.get("formula") if calc is not None else None
            out[n] = formula if formula else out.get(n)
        return out

    @staticmethod
    def _mapping(
        ds: ET.Element, fields: dict[str, str | None], leaves: dict[str, _Leaf], unions: dict[str, list[str]]
    ) -> dict[str, list[tuple[str, str]]]:
        """Each field -> the (leaf relation, remote column) pairs it reads (a union's: each part's)."""

        def at(parent: str, remote: str) -> list[tuple[str, str]]:
            names = [n for n in unions.get(parent, [parent]) if n in leaves]
            return [(n, remote) for n in names]

        out: dict[str, list[tuple[str, str]]] = {}
        for rec in ds.iter("metadata-record"):
            if rec.get("class") != "column":
                continue
            local, parent = _bare(rec.findtext("local-name")), _bare(rec.findtext("parent-name"))
            remote = rec.findtext("remote-name") or local
            if local and at(parent, remote):
                out[local] = at(parent, remote)
        for m in ds.iter("map"):
            key, value = _bare(m.get("key")), m.get("value") or ""
            found = _DS_FIELD.fullmatch(value.strip())
            if key and found and at(found.group(1), found.group(2)):
                out.setdefault(key, at(found.group(1), found.group(2)))
        if len(leaves) == 1:
            only = next(iter(leaves))
            for f, formula in fields.items():
                if formula is None:
                    out.setdefault(f, [(only, f)])
        return out

    @staticmethod
    def _refs(
        formula: str, fields: dict[str, str | None], base: dict[str, list[FieldEdge]], depth: int = 0
    ) -> list[str]:
        """The table fields a formula names, through other calculated fields."""
        out: list[str] = []
        for ref in _REF.findall(formula):
            if ref in fields and fields[ref] is not None and depth < 10:
                out += TableauGraph._refs(str(fields[ref]), fields, base, depth + 1)
            elif ref in fields:
                out.append(ref)
        return list(dict.fromkeys(out))

    # ------------------------------------------------------------------ workbooks
    def _workbook(self, doc: TableauDoc) -> None:
        wb = doc.stem
        ds_ids: dict[str, str] = {}
        for ds in doc.root.findall("datasources/datasource"):
            name = ds.get("name") or ""
            did = self._datasource(ds, f"{wb}.{name}", doc)
            if did is not None:
                ds_ids[name] = did
        sheets: dict[str, str] = {}
        for ws in doc.root.findall("worksheets/worksheet"):
            sname = ws.get("name") or ""
            chart = self.b.bi_object(
                CHART, f"{wb}.{_stable(ws, sname)}", sname, namespace=wb, facets={"objectType": "worksheet"}
            )
            sheets[sname] = chart.id
            used: dict[str, dict[str, str]] = {}  # ds name -> field -> dependency kind
            for dep in ws.iter("datasource-dependencies"):
                dsn = dep.get("datasource") or ""
                inst: dict[str, bool] = {}  # field -> aggregated by any of its instances (Sum, then None)
                for ci in dep.findall("column-instance"):
                    f = _bare(ci.get("column"))
                    inst[f] = inst.get(f, False) or (ci.get("derivation") or "").lower() in _AGG_DERIVATIONS
                for col in dep.findall("column"):
                    f = _bare(col.get("name"))
                    used.setdefault(dsn, {})[f] = "AGGREGATION" if inst.get(f) else "IDENTITY"
                for f, agg in inst.items():
                    used.setdefault(dsn, {}).setdefault(f, "AGGREGATION" if agg else "IDENTITY")
            for view_ds in ws.iter("datasource"):
                if view_ds.get("name"):
                    used.setdefault(view_ds.get("name") or "", {})
            for text in (ws.findtext(".//rows") or "", ws.findtext(".//cols") or ""):
                for dsn, inner in _DS_FIELD.findall(text):
                    parts = inner.split(":")
                    f = parts[1] if len(parts) >= 3 else inner
                    agg = len(parts) >= 3 and parts[0].lower() in _AGG_DERIVATIONS
                    if agg or f not in used.get(dsn, {}):
                        used.setdefault(dsn, {})[f] = "AGGREGATION" if agg else "IDENTITY"
            inputs: list[str] = []
            edges: list[FieldEdge] = []
            captions = {
                d.get("name") or "": d.get("caption") or d.get("name") or ""
                for d in doc.root.findall("datasources/datasource")
            }
            for dsn, flds in used.items():
                if dsn == "Parameters":
                    continue
                did = ds_ids.get(dsn)
                if did is None:
                    self.b.warn(
                        f"worksheet {sname!r}: data source {dsn!r} is not in the workbook: no lineage",
                        code="tableau-unresolved",
                        file=doc.path,
                    )
                    continue
                inputs.append(did)
                ds_obj = self.b.graph.dataset(did)
                for f, kind in flds.items():
                    if ds_obj is not None and ds_obj.has_column(f):
                        edges.append((did, f, f, kind, None))
                if not self._reaches_table(did):
                    self.b.warn(
                        f"worksheet {sname!r}: its data source {captions.get(dsn, dsn)!r} reads no resolved table: it keeps its "
                        "edge to the data source",
                        code="tableau-unresolved",
                        file=doc.path,
                    )
            self.b.feed(chart, inputs, edges=edges, source_file=doc.path)
        for dash in doc.root.findall("dashboards/dashboard"):
            dname = dash.get("name") or ""
            charts = [
                sheets[z.get("name") or ""] for z in dash.iter("zone") if (z.get("name") or "") in sheets
            ]
            self.b.dashboard(
                f"{wb}.{_stable(dash, dname)}", dname, charts, namespace=wb, source_file=doc.path
            )

    def _reaches_table(self, did: str, depth: int = 0) -> bool:
        proc = self.b.graph.process(did)
        if proc is None or depth > 3:
            return False
        for i in proc.inputs:
            ds = self.b.graph.dataset(i)
            if ds is not None and (ds.kind != BI_DATASET or self._reaches_table(i, depth + 1)):
                return True
        return False
