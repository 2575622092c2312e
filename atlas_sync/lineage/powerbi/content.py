"""Power BI files -> their semantic models and reports (docs/bi.md).

* a **PBIP** project: ``<Name>.SemanticModel/definition/**/*.tmdl`` (TMDL; ``model.bim`` TMSL JSON in
  older projects) and ``<Name>.Report/definition/pages/<page>/visuals/<visual>/visual.json`` (PBIR);
* a **.pbit** template: a zip whose ``DataModelSchema`` is the model as TMSL JSON (UTF-16 LE).

A file that does not parse is an error naming it (and its line): nothing of that model or report is
read; the other files still are.
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.lineage.powerbi.mparse import section_members
from atlas_sync.lineage.powerbi.tmdl import TmdlError, parse_tmdl


@dataclass
class PbiColumn:
    name: str
    source_column: str | None = None
    expression: str | None = None  # DAX of a calculated column


@dataclass
class PbiTable:
    name: str
    file: str
    columns: list[PbiColumn] = field(default_factory=list)
    measures: list[tuple[str, str]] = field(default_factory=list)
    # (name, kind, source, mode) of each partition
    partitions: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    # a legacy query partition's data source (a .pbix's provider data source): (server, database)
    sql_sources: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    # the Power Query query of the table's name in the file's DataMashup (M): where its source is named
    # when the data source's connection string is stored encrypted
    mashup: str | None = None


@dataclass
class PbiModel:
    name: str
    path: str
    tables: dict[str, PbiTable] = field(default_factory=dict)
    expressions: dict[str, str] = field(default_factory=dict)  # shared expressions and parameters (M)
    expression_files: dict[str, str] = field(default_factory=dict)


@dataclass
class PbiField:
    entity: str
    prop: str
    label: str
    aggregated: bool


@dataclass
class PbiVisual:
    key: str
    visual_type: str
    fields: list[PbiField]
    title: str | None = None


@dataclass
class PbiPage:
    key: str
    name: str
    visuals: list[PbiVisual] = field(default_factory=list)


@dataclass
class PbiReport:
    name: str
    path: str
    model: str | None  # the model's name when the report reads one by path
    live: str | None = None  # the connection of a live-connection report
    pages: list[PbiPage] = field(default_factory=list)


@dataclass
class PbiContent:
    models: list[PbiModel] = field(default_factory=list)
    reports: list[PbiReport] = field(default_factory=list)
    errors: list[tuple[str, str, int | None]] = field(default_factory=list)


def _stem(path: str) -> str:
    base = os.path.basename(os.path.normpath(path))
    return base.rsplit(".", 1)[0] if "." in base else base


def is_powerbi(path: str) -> bool:
    p = os.path.normpath(path)
    if p.lower().endswith((".pbit", ".pbix", ".pbip", ".semanticmodel", ".report")):
        return True
    if os.path.isdir(p):
        try:
            return any(n.endswith((".SemanticModel", ".Report", ".pbip")) for n in os.listdir(p))
        except OSError:
            return False
    return False


def load_content(paths: list[str]) -> PbiContent:
    out = PbiContent()
    for path in paths:
        p = os.path.normpath(path)
        if p.lower().endswith(".pbip"):
            p = os.path.dirname(p) or "."
        if p.lower().endswith(".pbit"):
            _pbit(p, out)
        elif p.lower().endswith(".pbix"):
            _pbix(p, out)
        elif p.endswith(".SemanticModel"):
            _model_folder(p, out)
        elif p.endswith(".Report"):
            _report_folder(p, out)
        elif os.path.isdir(p):
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames.sort()
                for d in list(dirnames):
                    if d.endswith(".SemanticModel"):
                        _model_folder(os.path.join(dirpath, d), out)
                    elif d.endswith(".Report"):
                        _report_folder(os.path.join(dirpath, d), out)
                dirnames[:] = [d for d in dirnames if not d.endswith((".SemanticModel", ".Report"))]
                for f in sorted(filenames):
                    if f.lower().endswith(".pbit"):
                        _pbit(os.path.join(dirpath, f), out)
                    elif f.lower().endswith(".pbix"):
                        _pbix(os.path.join(dirpath, f), out)
        else:
            out.errors.append((path, "not a Power BI project folder, .SemanticModel, .Report or .pbit", None))
    return out


# ---------------------------------------------------------------------------- models
def _model_folder(folder: str, out: PbiContent) -> None:
    model = PbiModel(name=_stem(folder), path=folder)
    definition = os.path.join(folder, "definition")
    bim = os.path.join(folder, "model.bim")
    if os.path.isdir(definition):
        files = sorted(
            os.path.join(d, f) for d, _s, fs in os.walk(definition) for f in fs if f.endswith(".tmdl")
        )
        for f in files:
            try:
                with open(f, encoding="utf-8-sig") as fh:
                    nodes = parse_tmdl(fh.read())
            except TmdlError as exc:
                out.errors.append((f, f"TMDL does not parse: {exc.message}", exc.line))
                return  # nothing of a model with a file that does not parse
            except (OSError, UnicodeDecodeError) as exc:
                out.errors.append((f, f"cannot read: {exc}", None))
                return
            for node in nodes:
                if node.keyword == "expression" and node.value is not None:
                    model.expressions[node.name] = node.value
                    model.expression_files[node.name] = f
                elif node.keyword == "table":
                    t = PbiTable(node.name, f)
                    for c in node.children:
                        if c.keyword == "column":
                            t.columns.append(PbiColumn(c.name, c.props.get("sourceColumn"), c.value or None))
                        elif c.keyword == "measure":
                            t.measures.append((c.name, c.value or ""))
                        elif c.keyword == "partition":
                            src = (
                                c.props.get("source")
                                or c.props.get("expression")
                                or c.props.get("query")
                                or ""
                            )
                            kind = (c.value or "").strip()
                            t.partitions.append(
                                (c.name, "sql" if kind == "query" else kind, src, c.props.get("mode"))
                            )
                    model.tables[t.name] = t
    elif os.path.isfile(bim):
        try:
            with open(bim, encoding="utf-8-sig") as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as exc:
            out.errors.append((bim, f"not readable JSON: {exc}", None))
            return
        _tmsl(doc, model, bim)
    else:
        out.errors.append((folder, "a .SemanticModel without definition/ (TMDL) or model.bim", None))
        return
    out.models.append(model)


def _text(value: Any) -> str:
    return "\n".join(str(v) for v in value) if isinstance(value, list) else str(value or "")


def _tmsl(doc: Any, model: PbiModel, file: str) -> None:
    """A TMSL model (``model.bim``, a .pbit's ``DataModelSchema``)."""
    m = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(m, dict):
        return
    for e in m.get("expressions") or []:
        if isinstance(e, dict) and e.get("name"):
            model.expressions[str(e["name"])] = _text(e.get("expression"))
            model.expression_files[str(e["name"])] = file
    sources: dict[str, tuple[str, str | None]] = {}
    for d in m.get("dataSources") or []:
        if isinstance(d, dict) and d.get("name"):
            found = {k.lower(): v.strip() for k, v in _CONN.findall(str(d.get("connectionString") or ""))}
            sources[str(d["name"])] = (
                found.get("data source") or found.get("server") or "",
                found.get("initial catalog") or found.get("database"),
            )
    for tdoc in m.get("tables") or []:
        if not isinstance(tdoc, dict) or not tdoc.get("name"):
            continue
        t = PbiTable(str(tdoc["name"]), file)
        for c in tdoc.get("columns") or []:
            if isinstance(c, dict) and c.get("name") and c.get("type") != "rowNumber":
                expr = _text(c.get("expression")) if c.get("type") == "calculated" else None
                t.columns.append(PbiColumn(str(c["name"]), c.get("sourceColumn"), expr))
        for ms in tdoc.get("measures") or []:
            if isinstance(ms, dict) and ms.get("name"):
                t.measures.append((str(ms["name"]), _text(ms.get("expression"))))
        for p in tdoc.get("partitions") or []:
            src = p.get("source") if isinstance(p, dict) else None
            if isinstance(src, dict) and src.get("type") == "query":
                # a legacy query partition: SQL on a provider data source of the model
                pname = str(p.get("name") or t.name)
                t.partitions.append((pname, "sql", _text(src.get("query")), p.get("mode")))
                t.sql_sources[pname] = sources.get(str(src.get("dataSource") or ""), ("", None))
            elif isinstance(src, dict):
                t.partitions.append(
                    (
                        str(p.get("name") or t.name),
                        str(src.get("type") or "m"),
                        _text(src.get("expression")),
                        p.get("mode"),
                    )
                )
        model.tables[t.name] = t


def _pbit(path: str, out: PbiContent) -> None:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if "DataModelSchema" not in names:
                out.errors.append(
                    (path, "the .pbit holds no DataModelSchema (a live-connection template)", None)
                )
                return
            raw = zf.read("DataModelSchema")
            layout = _layout(zf, path, out) if "Report/Layout" in names else None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        out.errors.append((path, f"not a readable .pbit (corrupt or truncated zip: {exc})", None))
        return
    try:
        doc = json.loads(raw.decode("utf-16-le").lstrip("\ufeff"))
    except (UnicodeDecodeError, ValueError) as exc:
        out.errors.append((path, f"its DataModelSchema is not UTF-16 JSON: {exc}", None))
        return
    model = PbiModel(name=_stem(path), path=path)
    _tmsl(doc, model, path)
    out.models.append(model)
    if layout is not None:
        out.reports.append(_legacy_layout(layout, model.name, path))


def _layout(zf: zipfile.ZipFile, path: str, out: PbiContent) -> Any:
    try:
        return json.loads(zf.read("Report/Layout").decode("utf-16-le").lstrip("\ufeff"))
    except KeyError:
        return None
    except (UnicodeDecodeError, ValueError) as exc:
        out.errors.append((path, f"its Report/Layout is not UTF-16 JSON: {exc}", None))
        return None


_CONN = re.compile(r"(?i)(?:^|;)\s*(data source|server|initial catalog|database)\s*=\s*([^;]*)")


def _pbix(path: str, out: PbiContent) -> None:
    """A .pbix through ``pbixray`` (its model: tables, partitions, columns, measures; its report layout).
    A live-connection .pbix has no model: the report is read, naming the tables of the model it uses."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            layout = _layout(zf, path, out) if "Report/Layout" in names else None
            connections = zf.read("Connections") if "Connections" in names else b""
            mashup = _mashup_queries(zf.read("DataMashup")) if "DataMashup" in names else {}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        out.errors.append((path, f"not a readable .pbix (corrupt or truncated zip: {exc})", None))
        return
    stem = _stem(path)
    if "DataModel" not in names:
        if layout is None:
            out.errors.append((path, "the .pbix holds neither a model nor a report layout", None))
            return
        report = _legacy_layout(layout, stem, path)
        report.live = "the .pbix holds no model" + _live_source(connections)
        out.reports.append(report)
        return
    try:
        from pbixray import PBIXRay  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        out.errors.append((path, ".pbix files need pbixray: pip install 'atlas-sync[pbix]'", None))
        return
    try:
        px = PBIXRay(path)
        partitions = _records(px.tmschema_partitions)
        columns = _records(px.tmschema_columns)
        measures = _records(px.dax_measures)
        sources = {r.get("ID"): r for r in _records(px.tmschema_datasources)}
        queries = _records(px.power_query)
        params = _records(px.m_parameters)
    except Exception as exc:  # noqa: BLE001 - pbixray raises many kinds on a damaged file
        out.errors.append((path, f"not a readable .pbix ({type(exc).__name__}: {exc})", None))
        return
    model = PbiModel(name=stem, path=path)
    for q in params:
        if q.get("ParameterName"):
            model.expressions[str(q["ParameterName"])] = str(q.get("Expression") or "")
    internal = ("H$", "R$", "U$", "LocalDateTable_", "DateTableTemplate_")
    for r in partitions:
        tname = str(r.get("TableName") or "")
        if not tname or tname.startswith(internal):
            continue
        t = model.tables.setdefault(tname, PbiTable(tname, path))
        text = str(r.get("QueryDefinition") or "")
        kind = {1: "sql", 2: "calculated", 4: "m", 5: "entity"}.get(int(r.get("Type") or 0), "other")
        pname = str(r.get("Name") or tname)
        t.partitions.append((pname, kind, text, None))
        if kind == "sql":
            conn = str((sources.get(r.get("DataSourceID")) or {}).get("ConnectionString") or "")
            found = {k.lower(): v.strip() for k, v in _CONN.findall(conn)}
            server = found.get("data source") or found.get("server") or ""
            t.sql_sources[pname] = (server, found.get("initial catalog") or found.get("database"))
    for q in queries:  # the mashup's other queries: shared expressions the partitions may name
        n = str(q.get("TableName") or "")
        if n and n not in model.tables and n not in model.expressions:
            model.expressions[n] = str(q.get("Expression") or "")
    for n, text in mashup.items():  # the DataMashup part itself (older files: pbixray gives no query)
        if n in model.tables:
            model.tables[n].mashup = text
        elif n not in model.expressions:
            model.expressions[n] = text
    for c in columns:
        tname = str(c.get("TableName") or "")
        if tname in model.tables and c.get("Name") and int(c.get("Type") or 0) in (1, 2):
            expr = str(c.get("Expression") or "") if int(c.get("Type") or 0) == 2 else None
            src = c.get("SourceColumn") if isinstance(c.get("SourceColumn"), str) else None
            model.tables[tname].columns.append(PbiColumn(str(c["Name"]), src, expr))
    for m in measures:
        tname = str(m.get("TableName") or "")
        if tname in model.tables and m.get("Name"):
            model.tables[tname].measures.append((str(m["Name"]), str(m.get("Expression") or "")))
    out.models.append(model)
    if layout is not None:
        out.reports.append(_legacy_layout(layout, model.name, path))


def _mashup_queries(raw: bytes) -> dict[str, str]:
    """The queries of a .pbix's ``DataMashup`` part ([MS-QDEFF]: a version, the length of the package
    parts, then the package parts, a zip holding ``Formulas/Section1.m``): name -> M expression. A part
    that does not read so gives nothing (the model's own partitions are still read)."""
    if len(raw) < 8:
        return {}
    size = int.from_bytes(raw[4:8], "little")
    try:
        with zipfile.ZipFile(io.BytesIO(raw[8 : 8 + size])) as zf:
            section = zf.read("Formulas/Section1.m").decode("utf-8-sig")
    except (zipfile.BadZipFile, KeyError, EOFError, OSError, UnicodeDecodeError):
        return {}
    return section_members(section)


def _live_source(raw: bytes) -> str:
    """What a live-connection .pbix's ``Connections`` part names: the server and database its report is
    live on (``Data Source=...;Initial Catalog=...``), said in the warning."""
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        return ""
    said = []
    for c in doc.get("Connections") or [] if isinstance(doc, dict) else []:
        if not isinstance(c, dict):
            continue
        found = {k.lower(): v.strip() for k, v in _CONN.findall(str(c.get("ConnectionString") or ""))}
        server = found.get("data source") or found.get("server")
        if server:
            db = found.get("initial catalog") or found.get("database")
            kind = str(c.get("ConnectionType") or "")
            said.append(
                f"server '{server}'" + (f" database '{db}'" if db else "") + (f" ({kind})" if kind else "")
            )
    return f"; it is live on {', '.join(said)}" if said else ""


def _records(frame: Any) -> list[dict[str, Any]]:
    """A pbixray DataFrame as plain records (NaN as None)."""
    if frame is None or not len(frame):
        return []
    rows = frame.to_dict("records")
    return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in rows]


def _legacy_layout(doc: Any, model: str, path: str) -> PbiReport:
    """The report of a .pbit (``Report/Layout``: sections and visual containers, whose ``config`` is a
    JSON text with the visual's ``prototypeQuery``)."""
    report = PbiReport(name=model, path=path, model=model)
    for si, sec in enumerate(doc.get("sections") or [] if isinstance(doc, dict) else []):
        if not isinstance(sec, dict):
            continue
        page = PbiPage(str(sec.get("name") or si), str(sec.get("displayName") or sec.get("name") or si))
        for vc in sec.get("visualContainers") or []:
            try:
                cfg = json.loads(vc.get("config") or "{}") if isinstance(vc, dict) else {}
            except ValueError:
                continue
            sv = cfg.get("singleVisual") if isinstance(cfg, dict) else None
            if not isinstance(sv, dict):
                continue
            pq = sv.get("prototypeQuery") or {}
            aliases = {f.get("Name"): f.get("Entity") for f in pq.get("From") or [] if isinstance(f, dict)}
            fields = []
            for sel in pq.get("Select") or []:
                if isinstance(sel, dict):
                    f = _field(sel, aliases)
                    if f:
                        fields.append(f)
            page.visuals.append(
                PbiVisual(str(cfg.get("name") or len(page.visuals)), str(sv.get("visualType") or ""), fields)
            )
        report.pages.append(page)
    return report


# ---------------------------------------------------------------------------- reports (PBIR)
def _field(proj: dict[str, Any], aliases: dict[Any, Any] | None = None) -> PbiField | None:
    """A projection's field (``Column``, ``Measure``, ``Aggregation`` of a column, ``HierarchyLevel``)."""
    f = proj.get("field") if "field" in proj else proj
    if not isinstance(f, dict):
        return None
    aggregated = False
    if "Aggregation" in f and isinstance(f["Aggregation"], dict):
        aggregated = True
        f = f["Aggregation"].get("Expression") or {}
    for kind in ("Column", "Measure", "HierarchyLevel"):
        node = f.get(kind) if isinstance(f, dict) else None
        if not isinstance(node, dict):
            continue
        expr = node.get("Expression") or {}
        if kind == "HierarchyLevel":
            hier = (expr.get("Hierarchy") or {}) if isinstance(expr, dict) else {}
            expr = hier.get("Expression") or {}
            prop = node.get("Level")
        else:
            prop = node.get("Property")
        ref = expr.get("SourceRef") if isinstance(expr, dict) else None
        if not isinstance(ref, dict) or not prop:
            return None
        entity = ref.get("Entity") or (aliases or {}).get(ref.get("Source"))
        if not entity:
            return None
        label = str(proj.get("queryRef") or proj.get("Name") or f"{entity}.{prop}")
        return PbiField(str(entity), str(prop), label, aggregated or kind == "Measure" and False)
    return None


def _report_folder(folder: str, out: PbiContent) -> None:
    pbir = os.path.join(folder, "definition.pbir")
    model: str | None = None
    live: str | None = None
    try:
        with open(pbir, encoding="utf-8-sig") as fh:
            ref = (json.load(fh) or {}).get("datasetReference") or {}
        by_path = (ref.get("byPath") or {}).get("path")
        if by_path:
            model = _stem(by_path)
        elif ref.get("byConnection"):
            conn = ref["byConnection"]
            live = str(
                conn.get("connectionString") or conn.get("pbiModelDatabaseName") or "a published model"
            )
    except FileNotFoundError:
        out.errors.append((folder, "a .Report without definition.pbir", None))
        return
    except (OSError, ValueError, AttributeError) as exc:
        out.errors.append((pbir, f"not readable JSON: {exc}", None))
        return
    report = PbiReport(name=_stem(folder), path=folder, model=model, live=live)
    pages_dir = os.path.join(folder, "definition", "pages")
    for page_key in sorted(os.listdir(pages_dir)) if os.path.isdir(pages_dir) else []:
        pdir = os.path.join(pages_dir, page_key)
        if not os.path.isdir(pdir):
            continue
        try:
            with open(os.path.join(pdir, "page.json"), encoding="utf-8-sig") as fh:
                pdoc = json.load(fh)
        except (OSError, ValueError) as exc:
            out.errors.append((os.path.join(pdir, "page.json"), f"not readable JSON: {exc}", None))
            return
        page = PbiPage(str(pdoc.get("name") or page_key), str(pdoc.get("displayName") or page_key))
        vdir = os.path.join(pdir, "visuals")
        for vkey in sorted(os.listdir(vdir)) if os.path.isdir(vdir) else []:
            vfile = os.path.join(vdir, vkey, "visual.json")
            if not os.path.isfile(vfile):
                continue
            try:
                with open(vfile, encoding="utf-8-sig") as fh:
                    vdoc = json.load(fh)
            except (OSError, ValueError) as exc:
                out.errors.append((vfile, f"not readable JSON: {exc}", None))
                return
            visual = vdoc.get("visual") if isinstance(vdoc, dict) else None
            if not isinstance(visual, dict):
                continue  # a group of visuals
            state = ((visual.get("query") or {}).get("queryState")) or {}
            fields = []
            for role in state.values() if isinstance(state, dict) else []:
                for proj in (role or {}).get("projections") or []:
                    f = _field(proj) if isinstance(proj, dict) else None
                    if f:
                        fields.append(f)
            page.visuals.append(
                PbiVisual(str(vdoc.get("name") or vkey), str(visual.get("visualType") or ""), fields)
            )
        report.pages.append(page)
    out.reports.append(report)
